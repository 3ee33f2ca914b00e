-- Scaled numerics: numeric(p, s) columns with p <= 38 reach VecAgg's sum and
-- avg, and numeric comparisons in quals, as integers scaled by 10^s, with
-- +, -, * and negation as integer kernels. Results must be PostgreSQL's to
-- the display scale; values that do not fit (NaN, products past int8) send
-- their batch to PostgreSQL's evaluator. Uses vecagg's helpers.
\set SHOW_CONTEXT never
SET search_path = public;

-- A lineitem-shaped table: numeric(15,2) money columns, char(1) flags.
CREATE TABLE vli (id int, qty numeric(15,2), price numeric(15,2), disc numeric(15,2), tax numeric(15,2),
                  flag char(1), status char(1), ship date, k int, big numeric(18,0), wide numeric(20,2), u numeric);
INSERT INTO vli SELECT g,
  CASE WHEN g % 97 = 0 THEN NULL ELSE 1 + g % 50 END,
  CASE WHEN g % 89 = 0 THEN NULL ELSE round((900 + (g * 7919) % 104000) / 1.0 + (g % 100) / 100.0, 2) END,
  CASE WHEN g % 83 = 0 THEN NULL ELSE (g % 11) / 100.0 END,
  (g % 9) / 100.0,
  CASE g % 3 WHEN 0 THEN 'A' WHEN 1 THEN 'N' ELSE 'R' END,
  CASE WHEN g % 2 = 0 THEN 'F' ELSE 'O' END,
  date '1992-01-01' + g % 2500,
  g % 7 - 3,
  CASE WHEN g % 5 = 0 THEN -900000000000000000 + g ELSE g::bigint * 1000003 END,
  g * 1.25,
  g / 8.0
FROM generate_series(1, 6000) g;
ANALYZE vli;

-- TPC-H Q1's shape: every argument a scaled-integer kernel.
SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT flag, status, sum(qty), sum(price), sum(price * (1 - disc)), sum(price * (1 - disc) * (1 + tax)),
       avg(qty), avg(price), avg(disc), count(*)
FROM vli WHERE ship <= date '1998-12-01' - interval '90' day GROUP BY flag, status;
RESET vexec.mode;
SELECT agg_same($$SELECT flag, status, sum(qty), sum(price), sum(price * (1 - disc)),
  sum(price * (1 - disc) * (1 + tax)), avg(qty), avg(price), avg(disc), count(*)
  FROM vli WHERE ship <= date '1998-12-01' - interval '90' day GROUP BY flag, status$$);
SELECT agg_same($$SELECT sum(qty), sum(price * (1 - disc)), avg(price * (1 - disc) * (1 + tax)), count(qty) FROM vli$$);

-- TPC-H Q6's shape: numeric comparisons in the quals are kernels too.
SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE) SELECT sum(price * disc) FROM vli
  WHERE ship >= date '1994-01-01' AND disc BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND qty < 24;
RESET vexec.mode;
SELECT agg_same($$SELECT sum(price * disc), count(*) FROM vli
  WHERE ship >= date '1994-01-01' AND disc BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND qty < 24$$);
SELECT agg_same($$SELECT count(*) FROM vli WHERE price = 7919.01 OR price <> price OR -qty > -2 OR qty * 2 >= 99.5$$);
SELECT agg_same($$SELECT count(*) FROM vli WHERE disc IS DISTINCT FROM 0.05 AND price + 0.005 > 50000$$);

-- Scales: constants at their own display scale (1.5, 0.001, -2), integers
-- at scale 0, + and - at the larger scale, * adding them, negation.
SELECT agg_same($$SELECT k, sum(qty + 1.5), sum(disc - 0.001), sum(-price), sum(k * price), sum(k::numeric - qty),
  avg(qty * -2), sum(price * 0), sum(disc * disc * disc) FROM vli GROUP BY k$$);
SELECT agg_same($$SELECT sum(big), avg(big), sum(big + 1), sum(qty * 1000000000000) FROM vli$$);

-- Values that do not fit an int8 at their scale: a product past int8, a sum
-- whose scaling overflows, unconstrained numeric (wide, numeric(20,2), is read
-- scaled: its values fit).
SELECT agg_same($$SELECT sum(big * 20), sum(big * big), sum(big + 0.5), avg(big * qty) FROM vli$$);
SELECT agg_same($$SELECT k, sum(big * big) FROM vli GROUP BY k$$);
SELECT agg_same($$SELECT sum(wide), sum(wide * 2), sum(u), sum(u * 2), avg(u + qty) FROM vli$$);
SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE) SELECT sum(wide * 2), sum(u * 2), sum(qty * 2) FROM vli;
RESET vexec.mode;

-- Past 18 digits (numeric(p, s) with p <= 38) columns are read as scaled
-- integers of 128 bits: every value of such a column fits, up to the 38
-- digits of rows 3000, 3005 and 3500. Sums pass the int128 too (rows 3000
-- and 3005 share a group). A product past the int128 (w * x from row 2500
-- on, in two batches) sends its batch to PostgreSQL's evaluator.
CREATE TABLE vwide (id int, k int, w numeric(38,4), x numeric(30,0));
INSERT INTO vwide SELECT g, g % 5,
  CASE WHEN g % 101 = 0 THEN NULL WHEN g = 2500 THEN 1234567890123456789012345678.9012
       WHEN g IN (3000, 3005) THEN 9999999999999999999999999999999999.9999
       WHEN g = 3500 THEN -9999999999999999999999999999999999.9999 ELSE g * 1.0001 END,
  CASE WHEN g = 4000 THEN -999999999999999999999999999999 ELSE g::numeric * 1000000000000000 END
FROM generate_series(1, 6000) g;
ANALYZE vwide;
CREATE FUNCTION row_mode_batches(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; r text := '';
BEGIN
  PERFORM set_config('vexec.mode', 'force', true);
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    IF ln ~ 'Row-Mode Batches|^ *Batches' THEN r := r || trim(ln) || '; '; END IF;
  END LOOP;
  RETURN r;
END $$;
SELECT row_mode_batches($$SELECT sum(w), avg(x), sum(w + x), sum(-w), count(*) FROM vwide$$);
SELECT row_mode_batches($$SELECT sum(w * x) FROM vwide$$);
-- numeric(p, s) coercions of the wide values: within 38 digits, into 18
-- (x at row 4000 does not fit: "numeric field overflow", at off's row),
-- and into 19 and 38 digits where every value fits.
SELECT agg_same($$SELECT sum((w - 0.5)::numeric(38,2)), sum((w + x)::numeric(38,1)), sum(x::numeric(30,0)) FROM vwide$$);
SELECT agg_same($$SELECT sum(x::numeric(18,0)) FROM vwide$$);
SELECT agg_same($$SELECT sum(x::numeric(19,0)), sum((x * 0.5)::numeric(38,0)) FROM vwide WHERE id < 4000$$);
SELECT row_mode_batches($$SELECT sum((w + x)::numeric(38,1)), sum(x::numeric(19,0)) FROM vwide WHERE id < 4000$$);
SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE) SELECT k, sum(w), avg(x * 2), sum(w - 0.5) FROM vwide WHERE w > 10.5 GROUP BY k;
RESET vexec.mode;
SELECT agg_same($$SELECT sum(w), avg(w), sum(x), avg(x), sum(w * 2), sum(x + 1), sum(-w), count(*) FROM vwide$$);
SELECT agg_same($$SELECT k, sum(w), avg(x * 2), sum(w - 0.5), sum(w * x) FROM vwide GROUP BY k$$);
SELECT agg_same($$SELECT count(*), sum(w) FROM vwide WHERE w > 3000.5 AND x < 5000000000000000000$$);
SELECT agg_same($$SELECT count(*) FROM vwide WHERE w > 100000000000000000000 OR x = -999999999999999999999999999999$$);
SELECT agg_same($$SELECT sum(w) FROM vwide WHERE id <> 2500 AND id <> 4000$$);
SET work_mem = '64kB';
SELECT agg_same($$SELECT id % 3000, sum(w), avg(x), count(*) FROM vwide GROUP BY 1$$);
RESET work_mem;
DROP TABLE vwide;

-- NaN is a numeric(15,2) value too: its batch goes to PostgreSQL's evaluator.
CREATE TABLE vnan (LIKE vli);
INSERT INTO vnan SELECT * FROM vli WHERE id <= 3000;
UPDATE vnan SET price = 'NaN' WHERE id = 1500;
SELECT agg_same($$SELECT flag, sum(price), avg(price * (1 - disc)), count(*) FROM vnan GROUP BY flag$$);
SELECT agg_same($$SELECT count(*), sum(qty) FROM vnan WHERE price > 100000$$);

-- A column both summed and compared by min/max stays numeric for both.
SELECT agg_same($$SELECT sum(price), min(price), max(price * 2), count(price) FROM vli$$);
-- sum with FILTER over a scaled argument; the FILTER stays a boolean column.
SELECT agg_same($$SELECT sum(qty) FILTER (WHERE k > 0), sum(price) FROM vli$$);

-- Spill: scaled arguments are written to the files as numerics.
SET work_mem = '64kB';
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT id % 3000, sum(price * disc), avg(qty) FROM vli GROUP BY 1$$) AS spilled;
RESET vexec.mode;
SELECT agg_same($$SELECT id % 3000, sum(price * disc), avg(qty), count(*) FROM vli GROUP BY 1$$);
SELECT agg_same($$SELECT id % 2999, sum(price), sum(big * big) FROM vnan GROUP BY 1$$);
RESET work_mem;

-- Errors inside a transition are unchanged: a numeric sum over a division
-- by zero raises it, whichever kernels run around it.
SELECT agg_same($$SELECT sum(price / (k + 3 - 3)) FROM vli$$);

-- numeric to integers (rounded half away from zero: 2.5 -> 3, -2.5 -> -3)
-- and numeric(p, s) coercions (rounded to s digits, widened exactly, "numeric
-- field overflow" past p digits) as scaled-integer kernels, in quals, group
-- keys and aggregate arguments; their errors at PostgreSQL's row.
CREATE TABLE vnc (id int, h numeric(6,1), q numeric(12,3));
INSERT INTO vnc SELECT g,
  CASE WHEN g % 13 = 0 THEN NULL ELSE (g % 41 - 20) / 2.0 END,
  CASE WHEN g % 17 = 0 THEN NULL ELSE round((g % 2001 - 1000) * 0.007, 3) END
FROM generate_series(1, 5000) g;
ANALYZE vnc;
SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE) SELECT sum(h::int), sum(q::numeric(8,1)), count(*) FROM vnc
  WHERE q::numeric(5,1) > 1.5 AND h::int2 < 4;
RESET vexec.mode;
SELECT agg_same($$SELECT sum(h::int), sum(h::int8), sum(h::int2), sum(q::numeric(8,1)), sum(q::numeric(10,5)),
  avg(h::numeric(4,0)), sum((q * h)::numeric(9,2)) FROM vnc$$);
SELECT agg_same($$SELECT h::int AS k, count(*), sum(q::numeric(6,2)), min(id) FROM vnc GROUP BY 1$$);
SELECT agg_same($$SELECT count(*), sum(id) FROM vnc WHERE q::numeric(5,1) > 1.5 AND h::int2 < 4$$);
SELECT agg_same($$SELECT count(*) FROM vnc WHERE q::numeric(4,2) = 3.5 OR h::int8 = -10$$);
SELECT agg_same($$SELECT sum((q * 100)::numeric(3,1)) FROM vnc$$);
SELECT agg_same($$SELECT sum((h * 10000)::int2) FROM vnc$$);
SELECT agg_same($$SELECT count(*) FROM vnc WHERE (h * 1000000000)::int4 > 0$$);
DROP TABLE vnc;

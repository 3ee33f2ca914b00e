-- Aggregates without a vector transition run their own transition and
-- final functions through fmgr inside VecAgg: user-defined aggregates
-- (SQL and PL/pgSQL functions, polymorphic, strict and not, with and
-- without an initial value, by-value and by-reference states) and built-in
-- ones with an SQL state (corr, regr_*, min/max of other types, bit_and).
-- Uses vecagg's agg_same and vecagg_hashed's vecagg_spilled.
\set SHOW_CONTEXT never
SET search_path = public;

CREATE TABLE vf (id int, k int, a int, b int8, x float8, y float8, t text COLLATE "C", c char(3),
                 iv interval, flags int);
INSERT INTO vf SELECT g,
  CASE WHEN g % 53 = 0 THEN NULL ELSE g % 7 END,
  CASE WHEN g % 11 = 0 THEN NULL ELSE (g * 7919) % 1000 - 500 END,
  g::int8 * 3,
  CASE WHEN g % 13 = 0 THEN NULL ELSE (g % 100) / 4.0 END,
  CASE WHEN g % 17 = 0 THEN NULL ELSE (g % 37) * 1.5 - g % 5 END,
  CASE WHEN g % 19 = 0 THEN NULL ELSE 's' || (g % 23) END,
  CASE WHEN g % 5 = 0 THEN NULL ELSE 'c' || (g % 9) END,
  make_interval(days => g % 40, mins => g % 61),
  (g * 37) % 256
FROM generate_series(1, 3000) g;
ANALYZE vf;

-- Strict, with an initial value, by-value state.
CREATE FUNCTION vf_add(int8, int4) RETURNS int8 LANGUAGE sql STRICT IMMUTABLE AS 'SELECT $1 + $2';
CREATE AGGREGATE vf_sum(int4) (sfunc = vf_add, stype = int8, initcond = '0');
-- Strict, polymorphic, no initial value: the first non-NULL input is the state.
CREATE FUNCTION vf_keep(anyelement, anyelement) RETURNS anyelement LANGUAGE sql STRICT IMMUTABLE AS 'SELECT $1';
CREATE AGGREGATE vf_first(anyelement) (sfunc = vf_keep, stype = anyelement);
-- Not strict: sees NULL inputs and a NULL initial state.
CREATE FUNCTION vf_nulls(int8, int4) RETURNS int8 LANGUAGE sql IMMUTABLE
  AS 'SELECT coalesce($1, 0) + CASE WHEN $2 IS NULL THEN 1 ELSE 0 END';
CREATE AGGREGATE vf_count_nulls(int4) (sfunc = vf_nulls, stype = int8);
-- By-reference text state in row order (PL/pgSQL), with a final function.
CREATE FUNCTION vf_cat(text, text) RETURNS text LANGUAGE plpgsql IMMUTABLE
  AS $$ BEGIN RETURN coalesce($1, '') || coalesce($2, '.') || ','; END $$;
CREATE FUNCTION vf_len(text) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT length($1)';
CREATE AGGREGATE vf_cat(text) (sfunc = vf_cat, stype = text);
CREATE AGGREGATE vf_cat_len(text) (sfunc = vf_cat, stype = text, finalfunc = vf_len);
-- An array state through built-in functions, two arguments.
CREATE FUNCTION vf_pair(int8[], int4, int8) RETURNS int8[] LANGUAGE sql IMMUTABLE
  AS 'SELECT ARRAY[$1[1] + coalesce($2, 0), $1[2] + coalesce($3, 0)]';
CREATE AGGREGATE vf_pairs(int4, int8) (sfunc = vf_pair, stype = int8[], initcond = '{0,0}');
-- A transition that raises on one value.
CREATE FUNCTION vf_boom(int8, int4) RETURNS int8 LANGUAGE plpgsql IMMUTABLE STRICT
  AS $$ BEGIN IF $2 = 313 THEN RAISE EXCEPTION 'boom at %', $2 USING ERRCODE = '22P06'; END IF; RETURN $1 + 1; END $$;
CREATE AGGREGATE vf_boom(int4) (sfunc = vf_boom, stype = int8, initcond = '0');

SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE) SELECT k, vf_sum(a), vf_first(t), count(*) FROM vf GROUP BY k;
EXPLAIN (VEXEC, COSTS OFF) SELECT vf_sum(a), vf_cat(t) FROM vf;
-- User-defined aggregates over C functions, with an internal state or an
-- SQL one: their functions get VecAgg's stand-in Agg node.
CREATE AGGREGATE vf_arr(anynonarray) (sfunc = array_agg_transfn, stype = internal, finalfunc = array_agg_finalfn,
  finalfunc_extra);
CREATE AGGREGATE int8_sum_c(int4) (sfunc = int4_sum, stype = int8);
EXPLAIN (VEXEC, COSTS OFF) SELECT vf_arr(a), int8_sum_c(a) FROM vf;
-- Refused: an ordered-set aggregate; a function that can raise over a
-- filtered input.
EXPLAIN (VEXEC, COSTS OFF) SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x), vf_arr(a) FROM vf;
EXPLAIN (VEXEC, COSTS OFF) SELECT vf_sum(a) FROM vf WHERE id > 5;
-- Arguments of fixed-length by-reference types go through fmgr too
-- (interval_larger; spill files hold their bytes).
EXPLAIN (VEXEC, COSTS OFF) SELECT max(iv) FROM vf;
RESET vexec.mode;
SELECT agg_same($$SELECT k, max(iv), min(iv), count(*) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT k, vf_arr(a), vf_arr(t), int8_sum_c(a) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT vf_arr(c), int8_sum_c(a) FROM vf$$);
-- DISTINCT aggregates through fmgr: each group's distinct argument rows,
-- fed in PostgreSQL's order (each argument ascending, NULLs last).
SELECT agg_same($$SELECT k, string_agg(DISTINCT t, ','), array_agg(DISTINCT a), count(*) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT string_agg(DISTINCT t, '|'), vf_arr(DISTINCT t), jsonb_agg(DISTINCT k), array_agg(DISTINCT flags) FROM vf$$);
-- Several arguments (distinct as a whole, ordered by each in turn); a libc
-- collation's order; FILTER; no rows.
CREATE TABLE vfd AS SELECT g % 4 AS k, 'v' || (g % 5) AS t, (ARRAY[',', ';', '|'])[1 + g % 3] AS sep
  FROM generate_series(1, 300) g;
SELECT agg_same($$SELECT k, vf_pairs(DISTINCT a, b) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT k, string_agg(DISTINCT t, sep), string_agg(DISTINCT sep, t) FROM vfd GROUP BY k$$);
DROP TABLE vfd;
SELECT agg_same($$SELECT k, string_agg(DISTINCT t COLLATE "en_US", ','), string_agg(DISTINCT t, ',') FILTER (WHERE a > 0) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT array_agg(DISTINCT a), string_agg(DISTINCT t, ',') FROM vf WHERE id < 0$$);
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT k, string_agg(DISTINCT t, ','), vf_pairs(DISTINCT a, b) FROM vf GROUP BY k;
-- Refused: over a type whose equal values can differ (numeric: 1.0 and
-- 1.00; which one PostgreSQL keeps depends on its sort).
EXPLAIN (VEXEC, COSTS OFF) SELECT array_agg(DISTINCT x::numeric) FROM vf;
-- numeric of a declared scale: every value of a numeric(p, s) column has
-- display scale s, so equal values are identical and which one
-- PostgreSQL's sort keeps cannot show; kept by value, fed in numeric order
-- (NaN last, NULLs after it). Unconstrained numeric stays refused (above).
CREATE TABLE vfnd (id int, k int, n numeric(10, 2), m numeric(6));
INSERT INTO vfnd SELECT g, g % 5,
  CASE WHEN g % 41 = 0 THEN NULL WHEN g % 97 = 0 THEN 'NaN' ELSE ((g * 7919) % 400 - 200) / 8.0 END,
  CASE WHEN g % 29 = 0 THEN NULL ELSE (g * 31) % 50 - 25 END
FROM generate_series(1, 2000) g;
ANALYZE vfnd;
EXPLAIN (VEXEC, COSTS OFF) SELECT k, sum(DISTINCT n), array_agg(DISTINCT m) FROM vfnd GROUP BY k;
EXPLAIN (VEXEC, COSTS OFF) SELECT array_agg(DISTINCT n * 2) FROM vfnd;
RESET vexec.mode;
SELECT agg_same($$SELECT k, sum(DISTINCT n), avg(DISTINCT n), min(DISTINCT n), max(DISTINCT n), count(DISTINCT n), count(*) FROM vfnd GROUP BY k$$);
SELECT agg_same($$SELECT k, array_agg(DISTINCT n), array_agg(DISTINCT m), jsonb_agg(DISTINCT m) FROM vfnd GROUP BY k$$);
SELECT agg_same($$SELECT array_agg(DISTINCT n), sum(DISTINCT m), avg(DISTINCT m), stddev(DISTINCT n) FROM vfnd$$);
SELECT agg_same($$SELECT array_agg(DISTINCT n) FROM vfnd WHERE k < 0$$);
SET work_mem = '64kB';
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT id % 700, sum(DISTINCT m), array_agg(DISTINCT n) FROM vfnd GROUP BY 1$$);
RESET vexec.mode;
SELECT agg_same($$SELECT id % 700, sum(DISTINCT m), array_agg(DISTINCT n) FROM vfnd GROUP BY 1$$);
RESET work_mem;
SET vexec.mode = force;
-- Spilled at 64kB: 1,500 groups, their distinct rows per partition.
SET work_mem = '64kB';
SELECT vecagg_spilled($$SELECT id % 1500, string_agg(DISTINCT t, ','), array_agg(DISTINCT a % 5) FROM vf GROUP BY 1$$);
RESET vexec.mode;
SELECT agg_same($$SELECT id % 1500, string_agg(DISTINCT t, ','), array_agg(DISTINCT a % 5) FROM vf GROUP BY 1$$);
RESET work_mem;
DROP TABLE vfnd;

-- DISTINCT over char(n): every value is padded to n characters, so equal
-- values are identical ('ab' and 'ab  ' are stored alike); fed in
-- bpcharcmp's order, trailing blanks aside (chr(1) sorts after a blank
-- byte-wise but after the end of the trimmed value here), in C and en_US.
-- A bpchar without a length keeps its blanks as given: refused.
CREATE TABLE vfch (id int, k int, c char(4) COLLATE "C", e char(3) COLLATE "en_US", b bpchar);
INSERT INTO vfch SELECT g, g % 4,
  CASE WHEN g % 23 = 0 THEN NULL
       ELSE (ARRAY['ab', 'ab  ', 'a', '', 'b', 'ab' || chr(1), 'Ab', 'é', 'éa', ' a'])[g % 10 + 1] END,
  CASE WHEN g % 19 = 0 THEN NULL ELSE (ARRAY['b', 'B', 'a', 'é', 'e', 'A', ''])[g % 7 + 1] END,
  (ARRAY['x', 'x ', 'y'])[g % 3 + 1]
FROM generate_series(1, 3000) g;
ANALYZE vfch;
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT k, string_agg(DISTINCT c, '|'), array_agg(DISTINCT e) FROM vfch GROUP BY k;
EXPLAIN (VEXEC, COSTS OFF) SELECT array_agg(DISTINCT b) FROM vfch;
RESET vexec.mode;
SELECT agg_same($$SELECT k, string_agg(DISTINCT c, '|'), array_agg(DISTINCT e), count(DISTINCT c) FROM vfch GROUP BY k$$);
SELECT agg_same($$SELECT string_agg(DISTINCT c, '|'), array_agg(DISTINCT c), string_agg(DISTINCT e, ',') FROM vfch$$);
SELECT agg_same($$SELECT k, array_agg(DISTINCT c COLLATE "en_US"), array_agg(DISTINCT e COLLATE "C") FROM vfch GROUP BY k$$);
SELECT agg_same($$SELECT string_agg(DISTINCT c, '|') FROM vfch WHERE k < 0$$);
SET work_mem = '64kB';
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT id % 900, string_agg(DISTINCT c, '|'), array_agg(DISTINCT e) FROM vfch GROUP BY 1$$);
RESET vexec.mode;
SELECT agg_same($$SELECT id % 900, string_agg(DISTINCT c, '|'), array_agg(DISTINCT e) FROM vfch GROUP BY 1$$);
RESET work_mem;
DROP TABLE vfch;

SELECT agg_same($$SELECT vf_sum(a), vf_first(t), vf_first(a), vf_count_nulls(a), vf_cat_len(t), vf_pairs(a, b) FROM vf$$);
SELECT agg_same($$SELECT k, vf_sum(a), vf_first(t), vf_first(c), vf_count_nulls(a), vf_cat(t), vf_pairs(a, b), count(*), sum(a) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT t, vf_cat(t), vf_first(x), min(c), max(c), bit_and(flags), bit_or(flags) FROM vf GROUP BY t$$);

-- Built-in aggregates with an internal state (string_agg, array_agg,
-- json(b)_agg, jsonb_object_agg) get an aggregate memory context of their
-- own: values in row order per group, NULLs as each function treats them.
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT k, string_agg(t, ','), array_agg(a) FROM vf GROUP BY k;
RESET vexec.mode;
SELECT agg_same($$SELECT k, string_agg(t, ','), array_agg(a), count(*) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT string_agg(t, '-'), array_agg(t), json_agg(a), jsonb_agg(x), json_agg_strict(t), jsonb_agg_strict(a) FROM vf WHERE true$$);
SELECT agg_same($$SELECT k, string_agg(convert_to(t, 'UTF8'), '\x00'::bytea), array_agg(iv) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT k, jsonb_object_agg(id, t) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT k, jsonb_object_agg_strict(id, t), jsonb_object_agg_unique(b, a) FROM vf GROUP BY k$$);
-- (array_agg of arrays over a computed argument can raise: PostgreSQL's Agg)
SELECT agg_same($$SELECT a % 3, array_agg(ARRAY[id, k]) FROM vf GROUP BY 1$$);
-- Their errors: the same, at the same row.
SELECT agg_same($$SELECT k, jsonb_object_agg(t, a) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT k, jsonb_object_agg_unique(flags, a) FROM vf GROUP BY k$$);
CREATE TABLE vfa AS SELECT g AS id, ARRAY[[g]] AS arr FROM generate_series(1, 3000) g;
SELECT agg_same($$SELECT id % 3, array_agg(arr) FROM vfa GROUP BY 1$$);
INSERT INTO vfa VALUES (3001, ARRAY[[1], [2]]);
SELECT agg_same($$SELECT id % 3, array_agg(arr) FROM vfa GROUP BY 1$$);
DROP TABLE vfa;
-- Variance and standard deviation of integers and numerics (numeric
-- results, internal states of int2/int4/int8_accum and numeric_accum).
CREATE TABLE vfn AS SELECT id, k, a::int2 AS s, a, b, (x * 3)::numeric(12, 3) AS n FROM vf;
SELECT agg_same($$SELECT k, var_pop(s), var_samp(a), stddev_pop(b), stddev_samp(n), variance(n), stddev(a) FROM vfn GROUP BY k$$);
SELECT agg_same($$SELECT var_pop(a), var_samp(s), stddev(b), variance(n) FROM vfn$$);
SELECT agg_same($$SELECT id, variance(a), stddev(s), var_pop(b) FROM vfn WHERE id < 3 GROUP BY id$$);
DROP TABLE vfn;
-- No input: NULL.
SELECT agg_same($$SELECT string_agg(t, ','), array_agg(a) FROM vf WHERE id < 0$$);
-- Past work_mem: many groups spill, and each partition's states start
-- afresh; values stay in row order per group (enable_sort = off keeps mode
-- off on HashAggregate, whose order is the same; a sort would reorder them).
SET enable_sort = off;
SET work_mem = '64kB';
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT id % 1500, string_agg(t, ','), array_agg(id) FROM vf GROUP BY 1$$);
RESET vexec.mode;
SELECT agg_same($$SELECT id % 1500, string_agg(t, ','), array_agg(id), jsonb_agg(a) FROM vf GROUP BY 1$$);
RESET work_mem;
RESET enable_sort;
-- More built-in aggregates with an internal state: json_object_agg and its
-- variants, sum/avg of interval, range_agg of ranges and multiranges; and
-- range_intersect_agg (an SQL state, C functions that insist on an Agg node).
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT k, json_object_agg(id, t), sum(iv), avg(iv) FROM vf GROUP BY k;
-- (range_agg and range_intersect_agg raise no error: over computed ranges too)
EXPLAIN (VEXEC, COSTS OFF) SELECT k, range_agg(int4range(a, a + 10)), range_intersect_agg(int4range(a, a + 600))
  FROM vf GROUP BY k;
RESET vexec.mode;
SET enable_sort = off;
SELECT agg_same($$SELECT k, json_object_agg(id, t), json_object_agg_strict(id, t), json_object_agg_unique(id, a),
  json_object_agg_unique_strict(id, a) FROM vf GROUP BY k$$);
RESET enable_sort;
-- (a duplicate key; a NULL key: the same errors)
SELECT agg_same($$SELECT json_object_agg_unique(k, a) FROM vf$$);
SELECT agg_same($$SELECT json_object_agg(t, a) FROM vf$$);
SELECT agg_same($$SELECT k, sum(iv), avg(iv) FROM vf GROUP BY k$$);
SELECT agg_same($$SELECT sum(iv), avg(iv), count(iv) FROM vf$$);
SELECT agg_same($$SELECT k, range_agg(int4range(a / 10 * 10, a / 10 * 10 + 3)),
  range_intersect_agg(int4range(a % 50 - 100, a % 50 + 100)),
  range_agg(int4multirange(int4range(a / 20 * 20, a / 20 * 20 + 5), int4range(a / 20 * 20 + 7, a / 20 * 20 + 9))),
  range_intersect_agg(int4multirange(int4range(a % 40 - 90, a % 40 + 90), int4range(200, 300 + a % 7)))
  FROM vf WHERE a IS NOT NULL GROUP BY k$$);
-- (interval out of range)
CREATE TABLE vf_long AS SELECT g AS id, interval '170000000 years' AS iv FROM generate_series(1, 3) g;
SELECT agg_same($$SELECT sum(iv) FROM vf_long$$);
SELECT agg_same($$SELECT id % 2, avg(iv) FROM vf_long GROUP BY 1$$);
DROP TABLE vf_long;
-- Rescans: each run builds its states again.
SELECT agg_same($$SELECT x, (SELECT string_agg(t, '') FROM vf WHERE id < x * 10 AND k = 1) FROM generate_series(1, 3) x$$);

-- (vf_cat(c) reads c::text, a computed argument: an fmgr function over it is refused)
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT vf_cat(c) FROM vf;
RESET vexec.mode;
SELECT agg_same($$SELECT k, round(corr(y, x)::numeric, 10), regr_count(y, x), round(regr_slope(y, x)::numeric, 10),
  round(covar_pop(y, x)::numeric, 8) FROM vf GROUP BY k$$);
-- Empty input: the initial value, or NULL.
CREATE TABLE vf_empty (LIKE vf);
SELECT agg_same($$SELECT vf_sum(a), vf_first(t), vf_count_nulls(a), vf_cat(t), vf_pairs(a, b) FROM vf_empty$$);
SELECT agg_same($$SELECT sum(iv), avg(iv), json_object_agg(id, t) FROM vf_empty$$);
SELECT agg_same($$SELECT range_agg(int4range(a, a + 10)), range_intersect_agg(int4range(a, a + 1200)) FROM vf_empty$$);
SELECT agg_same($$SELECT k, vf_sum(a) FROM vf_empty GROUP BY k$$);
-- An error inside a transition: the same error.
SELECT agg_same($$SELECT k, vf_boom(a) FROM vf GROUP BY k$$);
-- Spill at 64kB: fmgr states stay in memory, spilled rows keep their arguments.
SET work_mem = '64kB';
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT id % 1500, vf_cat(t), vf_sum(a), vf_pairs(a, b) FROM vf GROUP BY 1$$) AS spilled;
RESET vexec.mode;
-- Rows reach a group in input order, as in PostgreSQL's spilling
-- HashAggregate (enable_sort off keeps PostgreSQL from sorting, which
-- would change the order the order-dependent vf_cat and vf_first see).
SET enable_sort = off;
SELECT agg_same($$SELECT id % 1500, vf_cat(t), vf_sum(a), vf_pairs(a, b), vf_first(c) FROM vf GROUP BY 1$$);
RESET enable_sort;
RESET work_mem;
-- Parallel: a Partial VecAgg runs the transitions, the Finalize combines
-- the partial states with the aggregate's combine function under the
-- transition's rules (strict: NULL states skipped, the first one taken as
-- the state). SQL states travel as their bytes (by value, fixed-length
-- interval, varlena text), internal ones through the aggregate's
-- serialization functions. Uses vecagg_parallel's par_same.
CREATE FUNCTION vf_plus(int8, int8) RETURNS int8 LANGUAGE sql STRICT IMMUTABLE PARALLEL SAFE AS 'SELECT $1 + $2';
CREATE FUNCTION vf_add_p(int8, int4) RETURNS int8 LANGUAGE sql STRICT IMMUTABLE PARALLEL SAFE AS 'SELECT $1 + $2';
CREATE AGGREGATE vf_psum(int4) (sfunc = vf_add_p, stype = int8, initcond = '0', combinefunc = vf_plus,
  parallel = safe);
CREATE AGGREGATE vf_psum_nc(int4) (sfunc = vf_add_p, stype = int8, initcond = '0', parallel = safe);
CREATE FUNCTION vf_longer(text, text) RETURNS text LANGUAGE sql STRICT IMMUTABLE PARALLEL SAFE
  AS 'SELECT CASE WHEN (length($2), $2) > (length($1), $1) THEN $2 ELSE $1 END';
CREATE AGGREGATE vf_longest(text) (sfunc = vf_longer, stype = text, combinefunc = vf_longer, parallel = safe);
CREATE FUNCTION vf_nulls_p(int8, int4) RETURNS int8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS 'SELECT coalesce($1, 0) + CASE WHEN $2 IS NULL THEN 1 ELSE 0 END';
CREATE FUNCTION vf_plus_nulls(int8, int8) RETURNS int8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS 'SELECT coalesce($1, 0) + coalesce($2, 0)';
CREATE AGGREGATE vf_pcount_nulls(int4) (sfunc = vf_nulls_p, stype = int8, combinefunc = vf_plus_nulls,
  parallel = safe);
CREATE FUNCTION vf_boom_p(int8, int4) RETURNS int8 LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ BEGIN IF $2 = 313 THEN RAISE EXCEPTION 'boom at %', $2 USING ERRCODE = '22P06'; END IF; RETURN $1 + 1; END $$;
CREATE AGGREGATE vf_pboom(int4) (sfunc = vf_boom_p, stype = int8, initcond = '0', combinefunc = vf_plus,
  parallel = safe);
-- zt: NULL but in group k = 0, so the other groups' strict states stay NULL.
CREATE TABLE vfp AS SELECT *, (a / 7.0)::numeric(10, 3) AS n,
  CASE WHEN id % 7 = 0 THEN 'z' || id END AS zt FROM vf;
ANALYZE vfp;
CREATE TABLE vfp_empty (LIKE vfp);

SET vexec.mode = force;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF, VERBOSE) SELECT k, vf_psum(a), string_agg(t, ',') FROM vfp GROUP BY k;
EXPLAIN (VEXEC, COSTS OFF) SELECT k, vf_psum(a), var_pop(a), count(*) FROM vfp GROUP BY k;
-- Refused for parallel, with the reason (the serial VecAgg stays): no
-- combine function; an internal state without one.
EXPLAIN (VEXEC, COSTS OFF) SELECT k, vf_psum_nc(a) FROM vfp GROUP BY k;
EXPLAIN (VEXEC, COSTS OFF) SELECT k, jsonb_agg(a) FROM vfp GROUP BY k;
RESET ALL;
SET search_path = public;
-- SQL states: user-defined (strict with and without an initial value, not
-- strict), bit_and/bit_or/bit_xor, min/max of interval and char(3), regr_count.
SELECT par_same($$SELECT k, vf_psum(a), vf_longest(t), vf_longest(zt), vf_pcount_nulls(a), bit_and(flags),
  bit_or(a), bit_xor(b), min(iv), max(iv), min(c), max(c), regr_count(y, x) FROM vfp GROUP BY k$$);
SELECT par_same($$SELECT vf_psum(a), vf_longest(t), vf_longest(zt), vf_pcount_nulls(a), bit_and(flags), min(iv),
  max(c), regr_count(y, x) FROM vfp$$);
-- corr and the like combine in another order than one process adds them: rounded.
SELECT par_same($$SELECT k, round(corr(y, x)::numeric, 10), round(regr_slope(y, x)::numeric, 10),
  round(covar_pop(y, x)::numeric, 8) FROM vfp GROUP BY k$$);
-- Internal states: variance and stddev of int4 (128-bit), int8 and numeric;
-- string_agg and array_agg (whose order differs between plans: lengths, and
-- groups of equal values).
SELECT par_same($$SELECT k, var_pop(a), stddev(b), variance(n), stddev_samp(n), var_samp(a) FROM vfp GROUP BY k$$);
SELECT par_same($$SELECT var_pop(a), stddev(b), variance(n) FROM vfp$$);
SELECT par_same($$SELECT k, sum(iv), avg(iv) FROM vfp GROUP BY k$$);
SELECT par_same($$SELECT k, range_intersect_agg(int4range(a % 50 - 100, a % 50 + 100)),
  range_intersect_agg(int4multirange(int4range(a % 40 - 90, a % 40 + 90))) FROM vfp WHERE a IS NOT NULL GROUP BY k$$);
SELECT par_same($$SELECT k, length(string_agg(t, ',')), cardinality(array_agg(a)), length(string_agg(zt, ',')),
  cardinality(array_agg(zt)) FROM vfp GROUP BY k$$);
SELECT par_same($$SELECT t, string_agg(t, '/'), array_agg(t), cardinality(array_agg(id)) FROM vfp GROUP BY t$$);
-- Empty input: the initial value or NULL.
SELECT par_same($$SELECT vf_psum(a), vf_longest(t), var_pop(a), string_agg(t, ','), array_agg(a) FROM vfp_empty$$);
-- An error inside a transition (in a worker or the leader): the same error.
SELECT par_same($$SELECT k, vf_pboom(a) FROM vfp GROUP BY k$$);
-- Both halves spill at 64kB (five rows per row of vfp, so that the
-- parallel plan is the cheaper one).
CREATE TABLE vfp5 AS SELECT vfp.* FROM vfp, generate_series(1, 5);
ANALYZE vfp5;
SET work_mem = '64kB';
SELECT par_same($$SELECT id % 1500, vf_psum(a), vf_longest(t), var_pop(a), length(string_agg(t, ','))
  FROM vfp5 GROUP BY 1$$);
SET vexec.mode = force;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT line FROM vexec_plan_lines($$SELECT id % 1500, vf_psum(a), vf_longest(t), var_pop(a),
  length(string_agg(t, ',')) FROM vfp5 GROUP BY 1$$) line WHERE line LIKE '%Vec Aggregate%';
SELECT vecagg_spilled($$SELECT id % 1500, vf_psum(a), vf_longest(t), var_pop(a), length(string_agg(t, ','))
  FROM vfp5 GROUP BY 1$$) AS spilled;
RESET ALL;
SET search_path = public;
DROP TABLE vfp5;
DROP TABLE vfp, vfp_empty;
DROP TABLE vf, vf_empty;
-- An aggregate of no argument (agg(*)): the state function alone.
CREATE FUNCTION vf_tick(int8) RETURNS int8 LANGUAGE sql IMMUTABLE AS 'SELECT coalesce($1, 0) + 1';
CREATE AGGREGATE vf_ticks(*) (sfunc = vf_tick, stype = int8);
CREATE AGGREGATE vf_ticks_c(*) (sfunc = int8inc, stype = int8, initcond = '0');
CREATE TABLE vf_star AS SELECT g AS k FROM generate_series(1, 2500) g;
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT vf_ticks(*), vf_ticks_c(*) FROM vf_star;
RESET vexec.mode;
SELECT agg_same($$SELECT vf_ticks(*), count(*) FROM vf_star$$);
SELECT agg_same($$SELECT k % 3, vf_ticks(*) FROM vf_star GROUP BY 1$$);
SELECT agg_same($$SELECT vf_ticks_c(*) FROM vf_star$$);
DROP TABLE vf_star;

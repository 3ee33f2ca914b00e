-- VecAgg (plain aggregation): in force mode every query gives exactly what
-- mode off gives, the same rows or the same error. agg_same(q), from
-- helpers.sql, runs q in both modes and shows force's vexec nodes.
\set SHOW_CONTEXT never
SET search_path = public;

CREATE FUNCTION vexec_plan_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP RETURN NEXT ln; END LOOP; END $$;

CREATE TABLE va (id int, a int, b bigint, s smallint, f float8, r real, d date,
                 ts timestamp, t text COLLATE "C", u text, bo bool, n numeric(10,2));
INSERT INTO va SELECT g,
  CASE WHEN g % 17 = 0 THEN NULL WHEN g = 5 THEN 2147483647 WHEN g = 6 THEN -2147483648
       ELSE (g * 7919) % 20001 - 10000 END,
  CASE WHEN g % 13 = 0 THEN NULL WHEN g = 7 THEN 9223372036854775807 WHEN g = 8 THEN 9223372036854775806
       ELSE g::bigint * 1000003 END,
  CASE WHEN g % 11 = 0 THEN NULL WHEN g = 9 THEN 32767 WHEN g = 10 THEN -32768 ELSE g % 2000 - 1000 END,
  CASE WHEN g % 19 = 0 THEN NULL WHEN g = 103 THEN '-0' ELSE g / 7.0 - 200 END,
  CASE WHEN g % 37 = 0 THEN NULL WHEN g = 109 THEN '-0' ELSE g / 3.0 - 400 END,
  CASE WHEN g % 23 = 0 THEN NULL WHEN g = 15 THEN 'infinity' WHEN g = 16 THEN '-infinity'
       ELSE date '2000-01-01' + (g % 3000 - 1500) END,
  CASE WHEN g % 41 = 0 THEN NULL ELSE timestamp '2001-02-03 04:05:06' + g * interval '7 hours' END,
  CASE WHEN g % 29 = 0 THEN NULL WHEN g % 31 = 0 THEN '' ELSE 'str' || (g % 97) || CASE WHEN g % 5 = 0 THEN 'é' ELSE '' END END,
  CASE WHEN g % 29 = 0 THEN NULL ELSE 'U' || (g % 89) END,
  CASE g % 3 WHEN 0 THEN NULL WHEN 1 THEN true ELSE false END,
  CASE WHEN g % 7 = 0 THEN NULL ELSE g / 8.0 END
FROM generate_series(1, 3000) g;
-- Long values, stored compressed or out of line (TOAST).
INSERT INTO va (id, t) SELECT 3000 + g, repeat('zz' || g, 5000) FROM generate_series(1, 3) g;
ANALYZE va;
-- Special floats live in their own table (they make every float result NaN).
CREATE TABLE vfs (f float8, r real);
INSERT INTO vfs VALUES (1, 1), ('NaN', 'NaN'), (-3, -3), ('Infinity', 'Infinity'), (NULL, NULL);

-- The plan: a Vec Aggregate over a Vec Seq Scan in force mode.
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT count(*), sum(a) FROM va WHERE a > 0;
EXPLAIN (COSTS OFF, VERBOSE) SELECT count(*), sum(a) + 1, avg(s * 2) FROM va HAVING min(t) > 'a';
RESET vexec.mode;

-- Every vector transition, over NULLs and extreme values.
SELECT agg_same($$SELECT count(*), count(a), count(t), count(n) FROM va$$);
SELECT agg_same($$SELECT sum(a), sum(s), sum(b), avg(a), avg(s), avg(b) FROM va$$);
SELECT agg_same($$SELECT min(a), max(a), min(b), max(b), min(s), max(s) FROM va$$);
SELECT agg_same($$SELECT min(d), max(d), min(ts), max(ts) FROM va$$);
SELECT agg_same($$SELECT sum(f), avg(f), var_pop(f), var_samp(f), variance(f) FROM va$$);
SELECT agg_same($$SELECT stddev(f), stddev_pop(f), stddev_samp(f), min(f), max(f) FROM va$$);
SELECT agg_same($$SELECT sum(r), avg(r), stddev(r), min(r), max(r) FROM va$$);
SELECT agg_same($$SELECT min(t), left(max(t), 10), bool_and(bo), bool_or(bo), every(bo) FROM va$$);
SELECT agg_same($$SELECT sum(f), avg(f), variance(f), min(f), max(f), sum(r), min(r), max(r) FROM vfs$$);
-- -0 and 0: min/max keep the later of equal values, as float8smaller does.
CREATE TABLE vz (f float8);
INSERT INTO vz VALUES ('-0'), (0), ('-0');
SELECT agg_same($$SELECT min(f)::text, max(f)::text, sum(f)::text FROM vz$$);
-- Empty input and NULL-only input: one row, count 0, the rest NULL.
SELECT agg_same($$SELECT count(*), count(a), sum(a), avg(b), min(t), max(f), bool_and(bo) FROM va WHERE id < 0$$);
SELECT agg_same($$SELECT count(a), sum(a), min(a), avg(a) FROM va WHERE a IS NULL$$);
-- int8 sums past the int8 range widen (numeric result), as PostgreSQL's do.
SELECT agg_same($$SELECT sum(b), avg(b) FROM va WHERE b > 9000000000000000000$$);
-- Filters, arguments that are expressions, expressions over aggregates, HAVING.
SELECT agg_same($$SELECT count(*), sum(a) + 1, max(b) - min(b) FROM va WHERE d > date '2000-06-01'$$);
SELECT agg_same($$SELECT sum(a * 2), avg(s + 1), max(length(t)), count(a % 3) FROM va WHERE id > 10 AND id < 2000$$);
SELECT agg_same($$SELECT count(*) FROM va HAVING count(*) > 10$$);
SELECT agg_same($$SELECT count(*) FROM va HAVING count(*) > 100000$$);
SELECT agg_same($$SELECT sum(a), count(*) FROM va HAVING sum(a) IS NOT NULL AND min(t) < 'm'$$);
SELECT agg_same($$SELECT 42, count(*) * 2 FROM va WHERE t LIKE 'str1%'$$);
-- Text min/max read detoasted values; varchar goes through min(text).
SELECT agg_same($$SELECT length(max(t)), left(max(t), 8), min(t) FROM va WHERE id > 2990$$);
SELECT agg_same($$SELECT min(t::varchar(3)), left(max(t::varchar), 10) FROM va$$);
-- Errors: an argument's error is PostgreSQL's; float overflow in a transition.
SELECT agg_same($$SELECT sum(100 / (a % 7)) FROM va$$);
SELECT agg_same($$SELECT sum(a + 2147483000) FROM va$$);
CREATE TABLE vo (f float8, r real);
INSERT INTO vo VALUES (1e308, 3e38), (1e308, 3e38);
SELECT agg_same($$SELECT sum(f) FROM vo$$);
SELECT agg_same($$SELECT avg(f) FROM vo$$);
SELECT agg_same($$SELECT sum(r) FROM vo$$);
SELECT agg_same($$SELECT variance(r) FROM vo$$);
-- Batch boundaries and the kernel-free baseline.
SET vexec.debug_batch_size = 7;
SELECT agg_same($$SELECT count(*), sum(a), min(t), max(f), avg(s) FROM va WHERE id % 3 = 0$$);
RESET vexec.debug_batch_size;
SET vexec.debug_force_fallback = on;
SELECT agg_same($$SELECT count(*), sum(a - 1), min(t), max(f), avg(s) FROM va WHERE a > 0$$);
RESET vexec.debug_force_fallback;
-- Rescans: a correlated subquery reruns the VecAgg with a new parameter.
SELECT agg_same($$SELECT x, (SELECT count(*) FROM va WHERE a > x * 1000) FROM generate_series(1, 4) x$$);
SELECT agg_same($$SELECT x, (SELECT sum(a) FROM va WHERE id <= x) FROM generate_series(0, 3) x$$);
-- Prepared statements, custom and generic plans.
SET vexec.mode = force;
PREPARE p(int) AS SELECT count(*), sum(a), max(t) FROM va WHERE a > $1;
EXECUTE p(0);
SET plan_cache_mode = force_generic_plan;
EXECUTE p(5000);
RESET plan_cache_mode;
RESET vexec.mode;
SET vexec.mode = off;
EXECUTE p(5000);
RESET vexec.mode;
DEALLOCATE p;
-- With parallel workers allowed: Partial VecAggs in the workers, a Finalize in the leader.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT agg_same($$SELECT count(*), sum(b), min(t) FROM va$$);
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- Cancel mid-aggregation: a clean error, the session goes on.
SET vexec.mode = force;
SET statement_timeout = '200ms';
SELECT sum(CASE WHEN pg_sleep(0.01) IS NULL THEN a END) FROM va;
RESET statement_timeout;
SELECT count(*) FROM va;
RESET vexec.mode;

-- Not vectorized (yet): each with its reason, and the answer is PostgreSQL's.
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(DISTINCT a) FROM va;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*) FILTER (WHERE a > 0) FROM va;
EXPLAIN (VEXEC, COSTS OFF) SELECT string_agg(t, ',' ORDER BY t) FROM va;
EXPLAIN (VEXEC, COSTS OFF) SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f) FROM va;
EXPLAIN (VEXEC, COSTS OFF) SELECT sum(n), avg(n) FROM va;
EXPLAIN (VEXEC, COSTS OFF) SELECT min(u) FROM va;
EXPLAIN (VEXEC, COSTS OFF) SELECT sum(f) FROM va WHERE a > 0;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*) FROM va GROUP BY ROLLUP (s);
-- (but a user-defined aggregate over a C function runs through fmgr)
CREATE AGGREGATE my_sum(int) (sfunc = int4pl, stype = int);
EXPLAIN (VEXEC, COSTS OFF) SELECT my_sum(a) FROM va;
SET vexec.enable_agg = off;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*) FROM va;
RESET vexec.enable_agg;
RESET vexec.mode;
SELECT agg_same($$SELECT count(DISTINCT a), sum(n), avg(n), my_sum(s), min(u) FROM va$$);
SELECT agg_same($$SELECT sum(f) FROM va WHERE a > 0$$);
-- explain mode: costed and reported, never chosen.
SET vexec.mode = explain;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*), sum(a) FROM va;
RESET vexec.mode;
DROP AGGREGATE my_sum(int);
-- Grouping sets whose keys PostgreSQL wraps in placeholders: refused, no error.
SELECT agg_same($$SELECT a, b, grouping(a, b), sum(v), count(*) FROM (VALUES (1, 1, 10), (1, 2, 11), (2, 3, 12)) g(a, b, v) GROUP BY ROLLUP (a, b)$$);
-- Force mode: an aggregate over an index scan keeps competing (as index
-- scans do against VecScan), so a point lookup stays an index lookup.
CREATE INDEX va_id ON va (id);
SET vexec.mode = force;
SELECT * FROM (SELECT count(*) FILTER (WHERE ln ~ 'Index|Vec') AS lookups, bool_or(ln ~ 'Vec Seq Scan') AS vector_scan
  FROM vexec_plan_lines($$SELECT count(*) FROM va WHERE id = 5$$) ln) x;
RESET vexec.mode;
DROP INDEX va_id;

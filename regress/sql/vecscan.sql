-- VecScan: in force mode every query must give exactly what mode off gives:
-- the same rows, or the same error (SQLSTATE and message). same(q), from
-- helpers.sql, runs q in both modes and says so, with force's vexec nodes.
\set SHOW_CONTEXT never
-- (The test role is named vexec, like the extension's schema: keep objects in public.)
SET search_path = public;

-- The scan nodes of a plan (other lines differ between PostgreSQL versions).
CREATE FUNCTION scans(q text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF ln ~ 'Scan' THEN RETURN NEXT ln; END IF;
  END LOOP;
END $fn$;

CREATE TABLE vs (id int, a int, b bigint, s smallint, f float8, r real, d date,
                 ts timestamp, tz timestamptz, t text, v varchar(20), c char(5), bo bool);
INSERT INTO vs SELECT g,
  CASE WHEN g % 17 = 0 THEN NULL WHEN g = 5 THEN 2147483647 WHEN g = 6 THEN -2147483648
       ELSE (g * 7919) % 20001 - 10000 END,
  CASE WHEN g % 13 = 0 THEN NULL WHEN g = 7 THEN 9223372036854775807 WHEN g = 8 THEN -9223372036854775808
       ELSE g::bigint * 1000003 END,
  CASE WHEN g % 11 = 0 THEN NULL WHEN g = 9 THEN 32767 WHEN g = 10 THEN -32768 ELSE g % 2000 - 1000 END,
  CASE WHEN g % 19 = 0 THEN NULL WHEN g % 101 = 0 THEN 'NaN' WHEN g % 103 = 0 THEN '-0'
       WHEN g = 12 THEN 'Infinity' WHEN g = 14 THEN '-Infinity' ELSE g / 7.0 - 200 END,
  CASE WHEN g % 37 = 0 THEN NULL WHEN g % 107 = 0 THEN 'NaN' WHEN g % 109 = 0 THEN '-0'
       ELSE g / 3.0 - 400 END,
  CASE WHEN g % 23 = 0 THEN NULL WHEN g = 15 THEN 'infinity' WHEN g = 16 THEN '-infinity'
       ELSE date '2000-01-01' + (g % 3000 - 1500) END,
  CASE WHEN g % 41 = 0 THEN NULL WHEN g = 18 THEN 'infinity' WHEN g = 19 THEN '-infinity'
       ELSE timestamp '2001-02-03 04:05:06' + g * interval '7 hours' END,
  CASE WHEN g % 43 = 0 THEN NULL ELSE timestamptz '2001-02-03 04:05:06+00' + g * interval '5 hours' END,
  CASE WHEN g % 29 = 0 THEN NULL WHEN g % 31 = 0 THEN '' ELSE 'str' || (g % 97) || CASE WHEN g % 5 = 0 THEN 'é' ELSE '' END END,
  CASE WHEN g % 47 = 0 THEN NULL ELSE 'v' || (g % 50) END,
  CASE WHEN g % 53 = 0 THEN NULL WHEN g % 7 = 0 THEN 'ab' ELSE 'c' || (g % 9) END,
  CASE g % 3 WHEN 0 THEN NULL WHEN 1 THEN true ELSE false END
FROM generate_series(1, 3000) g;
ANALYZE vs;

-- The plan: a Vec Seq Scan in force mode, a Seq Scan in off mode.
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT id FROM vs WHERE a > 0 AND d < '2001-01-01';
RESET vexec.mode;
EXPLAIN (COSTS OFF) SELECT id FROM vs WHERE a > 0 AND d < '2001-01-01';

-- Integer comparisons, all widths and across widths, with NULLs and extremes.
SELECT same($$SELECT id FROM vs WHERE a > 0$$);
SELECT same($$SELECT id FROM vs WHERE a <= -2147483648 OR a >= 2147483647$$);
SELECT same($$SELECT id FROM vs WHERE b <> 2000006 AND b < 3000000000$$);
SELECT same($$SELECT id FROM vs WHERE s = 32767 OR s = -32768 OR s IS NULL$$);
SELECT same($$SELECT id FROM vs WHERE a < b AND s > a$$);
SELECT same($$SELECT id FROM vs WHERE s::int8 >= a::int2$$);
-- Integer arithmetic: overflow and division by zero are PostgreSQL's errors.
SELECT same($$SELECT id, a + 1, a - s, b * 2, a / 3, a % 7, -a FROM vs WHERE id > 20$$);
SELECT same($$SELECT a + 1 FROM vs$$);
SELECT same($$SELECT -a FROM vs$$);
SELECT same($$SELECT b * 2 FROM vs$$);
SELECT same($$SELECT s * s FROM vs$$);
SELECT same($$SELECT a / (s - s) FROM vs WHERE id > 3$$);
SELECT same($$SELECT a % 0 FROM vs$$);
SELECT same($$SELECT id FROM vs WHERE a / 0 > 1 AND id < 0$$);
SELECT same($$SELECT (-2147483648)::int / -1 FROM vs$$);
SELECT same($$SELECT id FROM vs WHERE a::int2 > 0$$);
SELECT same($$SELECT b::int4 FROM vs$$);
-- Floats: NaN equals NaN and sorts last, -0 = 0, infinities, overflow.
SELECT same($$SELECT id FROM vs WHERE f = 'NaN'$$);
SELECT same($$SELECT id FROM vs WHERE f > 1e300$$);
SELECT same($$SELECT id FROM vs WHERE f = 0$$);
SELECT same($$SELECT id FROM vs WHERE r = '-0' OR r <> r$$);
SELECT same($$SELECT id FROM vs WHERE f < r$$);
SELECT same($$SELECT f * 2, f + r, f / 3, -f FROM vs WHERE id % 5 = 0$$);
SELECT same($$SELECT f * 1e308 FROM vs$$);
SELECT same($$SELECT f / 0 FROM vs$$);
SELECT same($$SELECT f / 0 FROM vs WHERE f = 'NaN'$$);
SELECT same($$SELECT f::int4, r::int8, a::float8, b::float4, s::real FROM vs WHERE id > 20$$);
SELECT same($$SELECT f::int4 FROM vs$$);
SELECT same($$SELECT (f * 1e-320)::float4 FROM vs WHERE id > 20$$);
-- Dates and timestamps, with infinities.
SELECT same($$SELECT id FROM vs WHERE d >= '2001-01-01' AND d < '2002-01-01'$$);
SELECT same($$SELECT id FROM vs WHERE d = 'infinity' OR d = '-infinity'$$);
SELECT same($$SELECT d + 30, d - 7, d - date '2000-01-01' FROM vs WHERE id > 20$$);
SELECT same($$SELECT d - date '2000-01-01' FROM vs$$);
SELECT same($$SELECT d + 2147483000 FROM vs$$);
SELECT same($$SELECT id FROM vs WHERE ts > '2001-06-01' AND tz < '2001-09-01 00:00+00'$$);
SELECT same($$SELECT id FROM vs WHERE ts = 'infinity'$$);
-- date against timestamp: days to microseconds; a date past the timestamp
-- range compares above every finite timestamp and below infinity.
SELECT same($$SELECT id FROM vs WHERE d <= date '2001-12-01' - interval '90' day$$);
SELECT same($$SELECT id FROM vs WHERE ts > d AND d <> ts AND ts >= d$$);
SELECT same($$SELECT id, d::timestamp = ts, d < timestamp 'infinity', timestamp '-infinity' < d FROM vs WHERE id > 10$$);
CREATE TABLE vdt (d date, t timestamp);
INSERT INTO vdt SELECT d, t FROM (VALUES (date '5874897-12-31'), (date '294276-12-31'), (date '294277-01-01'),
  ('infinity'), ('-infinity'), (NULL), ('2000-01-01')) x(d),
  (VALUES (timestamp 'infinity'), (timestamp '294276-12-31 23:59:59'), (timestamp '-infinity'), (NULL),
  ('2000-01-01 00:00:00'), ('1999-12-31 23:59:59.999999')) y(t);
SELECT same($$SELECT d, t, d > t, d <= t, t = d, t <> d, t >= d FROM vdt$$);
SELECT same($$SELECT d, t FROM vdt WHERE d < t OR t < d$$);
SELECT same($$SELECT d::timestamp FROM vdt WHERE d < '294277-01-01' OR d = 'infinity'$$);
SELECT same($$SELECT d::timestamp FROM vdt$$);
-- Booleans and three-valued logic.
SELECT same($$SELECT id FROM vs WHERE bo$$);
SELECT same($$SELECT id FROM vs WHERE NOT bo$$);
SELECT same($$SELECT id, bo AND a > 0, bo OR a > 0, NOT bo FROM vs$$);
SELECT same($$SELECT id FROM vs WHERE bo IS TRUE OR bo IS UNKNOWN$$);
SELECT same($$SELECT id FROM vs WHERE bo IS NOT FALSE AND (a > 5000 OR s < -900)$$);
SELECT same($$SELECT id FROM vs WHERE a IS NULL OR b IS NOT NULL AND f IS NULL$$);
SELECT same($$SELECT id FROM vs WHERE a IS DISTINCT FROM s$$);
SELECT same($$SELECT id FROM vs WHERE a IS NOT DISTINCT FROM NULL$$);
-- Text under C and deterministic collations: equality, LIKE, lengths.
SELECT same($$SELECT id FROM vs WHERE t = 'str5é'$$);
SELECT same($$SELECT id FROM vs WHERE t <> '' AND v = 'v7'$$);
SELECT same($$SELECT id FROM vs WHERE t LIKE 'str1%'$$);
SELECT same($$SELECT id FROM vs WHERE t LIKE '%5é'$$);
SELECT same($$SELECT id FROM vs WHERE t LIKE '%r2%' AND t NOT LIKE '%é'$$);
SELECT same($$SELECT id FROM vs WHERE t LIKE 's_r__'$$);
SELECT same($$SELECT id FROM vs WHERE t LIKE '%\_%' OR t LIKE '_'$$);
SELECT same($$SELECT id FROM vs WHERE t LIKE 'str1\'$$);
SELECT same($$SELECT length(t), char_length(t), octet_length(t), length(c), octet_length(c) FROM vs$$);
SELECT same($$SELECT id FROM vs WHERE c = 'ab' OR c = 'c1   '$$);
SELECT same($$SELECT id FROM vs WHERE c < 'c3' COLLATE "C"$$);
SELECT same($$SELECT id FROM vs WHERE t > 'str5' COLLATE "C"$$);
SELECT same($$SELECT id FROM vs WHERE v LIKE 'v1_'$$);
-- IN lists and = ANY / <> ALL, with NULLs in the list and empty lists.
SELECT same($$SELECT id FROM vs WHERE a IN (1, 2, -9000, 2147483647)$$);
SELECT same($$SELECT id FROM vs WHERE s NOT IN (1, 2, 3) OR s IS NULL$$);
SELECT same($$SELECT id, a = ANY('{1,NULL,5}'::int[]) FROM vs$$);
SELECT same($$SELECT id, a <> ALL('{1,NULL,5}'::int[]) FROM vs$$);
SELECT same($$SELECT id, a = ANY('{}'::int[]), a <> ALL('{}'::int[]) FROM vs$$);
SELECT same($$SELECT id FROM vs WHERE t IN ('str1', 'str2é', 'nope')$$);
SELECT same($$SELECT id FROM vs WHERE c IN ('ab', 'c2')$$);
SELECT same($$SELECT id FROM vs WHERE f IN ('NaN', 1, 2)$$);
SELECT same($$SELECT id FROM vs WHERE d IN ('2000-01-01', 'infinity')$$);
SELECT same($$SELECT id FROM vs WHERE b = ANY(ARRAY[1000003, 2000006]::int8[])$$);
-- CASE and COALESCE evaluate only what PostgreSQL evaluates.
SELECT same($$SELECT CASE WHEN s = 0 THEN 0 ELSE 1000 / s END FROM vs$$);
SELECT same($$SELECT CASE WHEN a > 0 THEN a WHEN a < 0 THEN -a END FROM vs$$);
SELECT same($$SELECT id FROM vs WHERE CASE WHEN s <> 0 THEN 100 / s > 1 ELSE false END$$);
SELECT same($$SELECT COALESCE(a, s, -1), COALESCE(NULL::int, a / 1) FROM vs$$);
SELECT same($$SELECT COALESCE(a, 1 / (s - s)) FROM vs$$);
SELECT same($$SELECT id FROM vs WHERE a <> 0 AND 100000 / a > 20$$);
SELECT same($$SELECT id FROM vs WHERE a = 0 OR 100000 / a > 20$$);
-- Expressions without kernels run through PostgreSQL's evaluator, whole.
SELECT same($$SELECT upper(t), t || v, abs(a), round(f::numeric, 2) FROM vs WHERE id % 3 = 0$$);
SELECT same($$SELECT id FROM vs WHERE upper(t) = 'STR5É' AND a > -5000$$);
SELECT same($$SELECT id FROM vs WHERE t ~ '^str1[0-9]$'$$);
SELECT same($$SELECT id, ctid = '(0,1)', tableoid = 'vs'::regclass FROM vs WHERE id < 50$$);
-- Errors: the first error PostgreSQL meets, whichever evaluator sees it.
SELECT same($$SELECT a * 1000000, (CASE WHEN id = 600 THEN 'x' ELSE '1' END)::int FROM vs$$);
SELECT same($$SELECT (CASE WHEN id = 600 THEN 'x' ELSE '1' END)::int, a * 1000000 FROM vs$$);
SELECT same($$SELECT id FROM vs WHERE (CASE WHEN id = 900 THEN 'y' ELSE '1' END)::int > 0 AND a * 100000 > 0$$);
SELECT same($$SELECT id FROM vs WHERE a * 100000 > 0 AND (CASE WHEN id = 900 THEN 'y' ELSE '1' END)::int > 0$$);
SELECT same($$SELECT id FROM vs WHERE id > 2990 AND (CASE WHEN id = 100 THEN 'z' ELSE '1' END)::int > 0$$);
SELECT same($$SELECT id FROM vs WHERE (CASE WHEN id = 100 THEN 'z' ELSE '1' END)::int > 0 AND id > 2990$$);

-- Batch boundaries: 7-row batches, and tables of 1023, 1024, 1025 and 0 rows.
SET vexec.debug_batch_size = 7;
SELECT same($$SELECT id, a + 1 FROM vs WHERE a > 0 AND t LIKE 'str%'$$);
SELECT same($$SELECT id FROM vs WHERE (CASE WHEN id = 600 THEN 'x' ELSE '1' END)::int > 0 AND a * 100000 > 0$$);
RESET vexec.debug_batch_size;
CREATE TABLE b1023 AS SELECT g AS x FROM generate_series(1, 1023) g;
CREATE TABLE b1024 AS SELECT g AS x FROM generate_series(1, 1024) g;
CREATE TABLE b1025 AS SELECT g AS x FROM generate_series(1, 1025) g;
CREATE TABLE b0 (x int);
SELECT same($$SELECT x FROM b1023 WHERE x % 2 = 1$$), same($$SELECT x FROM b1024$$),
       same($$SELECT x FROM b1025 WHERE x > 1023$$), same($$SELECT x FROM b0$$);
SELECT same($$SELECT sum(x) FROM b1025 WHERE x <> 512$$);

-- Deleted and updated rows (HOT and not), TOAST, columns added with defaults.
CREATE TABLE mv (id int PRIMARY KEY, n int, t text);
INSERT INTO mv SELECT g, g, repeat('x', g % 10) FROM generate_series(1, 5000) g;
DELETE FROM mv WHERE id % 4 = 0;
UPDATE mv SET n = -n WHERE id % 5 = 0;
UPDATE mv SET id = id + 100000 WHERE id % 7 = 0;
INSERT INTO mv VALUES (999999, 1, repeat('long text ', 5000)), (999998, 2, repeat(md5('a'), 400));
ALTER TABLE mv ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO mv VALUES (999997, 3, repeat(md5('b'), 300));
ALTER TABLE mv ADD COLUMN extra int DEFAULT 42, ADD COLUMN note text DEFAULT 'old';
INSERT INTO mv VALUES (999996, 4, 'new', 7, 'new');
SELECT same($$SELECT id, n, length(t) FROM mv WHERE n < 0 OR id > 100000$$);
SELECT same($$SELECT id FROM mv WHERE t LIKE '%text long%' OR length(t) > 1000$$);
SELECT same($$SELECT id, extra, note FROM mv WHERE extra = 42 AND note = 'old' AND id < 20$$);
SELECT same($$SELECT id, extra FROM mv WHERE extra <> 42 OR note <> 'old'$$);
SELECT same($$SELECT count(*) FROM mv$$);

-- Columns behind variable-length ones, walked attribute by attribute over a
-- page's tuples: values with 1-byte and 4-byte headers (the latter aligned:
-- t2 and t3 follow values of odd length), compressed inline and TOASTed
-- values before int8, int2, float8, date and bool columns, a dropped column,
-- NULLs in some rows (one tuple at a time), the columns read in the quals
-- (every row) or only for rows that pass.
CREATE TABLE vw (a int, t1 text, t2 varchar, b int8, c int2, gone int, d float8, s bool, t3 text, e date, f bool);
ALTER TABLE vw ALTER COLUMN t1 SET STORAGE EXTENDED;
INSERT INTO vw SELECT g,
  CASE g % 5 WHEN 0 THEN 'x' WHEN 1 THEN repeat('y', 201) WHEN 2 THEN repeat('z', 5001)
             WHEN 3 THEN (SELECT string_agg(md5((g * 1000 + i)::text), '') FROM generate_series(1, 80) i) ELSE '' END,
  repeat('v', g % 131), g::int8 * 1000003, (g % 30000)::int2, g, g / 7.0, g % 2 = 0,
  CASE WHEN g % 2 = 0 THEN repeat('w', 300) ELSE 'w' END,
  date '2020-01-01' + g % 400, g % 3 = 0
FROM generate_series(1, 4000) g;
ALTER TABLE vw DROP COLUMN gone;
INSERT INTO vw SELECT g, 'after drop', 'v', g, 1, 0.5, true, NULL, date '2021-01-01', NULL FROM generate_series(4001, 4100) g;
UPDATE vw SET t2 = NULL WHERE a % 97 = 0;
SELECT same($$SELECT sum(b), sum(c), sum(d), count(e), max(e), count(*) FILTER (WHERE f) FROM vw$$);
SELECT same($$SELECT a, b, c, d, e, f, length(t3) FROM vw WHERE e > date '2020-06-01' AND c > 100$$);
SELECT same($$SELECT a, length(t1), t2, d FROM vw WHERE b % 7 = 0$$);
SELECT same($$SELECT count(*) FROM vw WHERE f AND e < date '2020-03-01' AND d > 10$$);
SELECT same($$SELECT md5(t3), e FROM vw WHERE s AND c > 50$$);
SET vexec.debug_batch_size = 7;
SELECT same($$SELECT sum(b), sum(c), sum(d), max(e) FROM vw WHERE a % 3 <> 1$$);
RESET vexec.debug_batch_size;

-- Volatile functions: called as often as, and in the order that, off calls them.
CREATE TABLE calls (n serial, v int);
CREATE FUNCTION note(x int) RETURNS int VOLATILE LANGUAGE plpgsql AS $$
BEGIN INSERT INTO calls (v) VALUES (x); RETURN x; END $$;
SET vexec.mode = off;
SELECT count(*) FROM vs WHERE a > 5000 AND note(id) % 2 = 0 AND s > 0;
SELECT array_agg(v ORDER BY n) AS off_calls INTO TEMP off_calls FROM calls;
TRUNCATE calls;
SET vexec.mode = force;
SELECT count(*) FROM vs WHERE a > 5000 AND note(id) % 2 = 0 AND s > 0;
SELECT (SELECT off_calls FROM off_calls) = array_agg(v ORDER BY n) AS same_calls, count(*) AS calls FROM calls;
TRUNCATE calls;
SELECT sum(note(id)) FROM vs WHERE id % 100 = 0;
SELECT array_agg(v ORDER BY n) FROM calls;
RESET vexec.mode;

-- Collations: C, libc, ICU and nondeterministic; only exact kernels are used.
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT same($$SELECT id FROM vs WHERE t = 'STR5é' COLLATE ci$$);
SELECT same($$SELECT id FROM vs WHERE t < 'str3' COLLATE "en_US"$$);
SELECT same($$SELECT id FROM vs WHERE t < 'str3' COLLATE "und-x-icu"$$);
SELECT same($$SELECT id FROM vs WHERE t = 'str3' COLLATE "und-x-icu"$$);
SELECT same($$SELECT id FROM vs WHERE t LIKE 'STR1%' COLLATE ci$$);

-- Prepared statements, custom and generic plans, with parameters.
SET vexec.mode = force;
PREPARE p(int, text) AS SELECT count(*) FROM vs WHERE a > $1 AND t LIKE $2;
EXECUTE p(0, 'str1%'); EXECUTE p(100, 'str2%'); EXECUTE p(-100, '%é');
EXECUTE p(0, 'str1%'); EXECUTE p(100, 'str2%'); EXECUTE p(-100, '%é');
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE p(0, 'x');
RESET plan_cache_mode;
SET vexec.mode = off;
EXECUTE p(0, 'str1%'); EXECUTE p(100, 'str2%'); EXECUTE p(-100, '%é');
DEALLOCATE p;

-- Rescans: under a nested loop and in a correlated subquery (a parameter).
CREATE TABLE small AS SELECT g * 2000 - 9000 AS x FROM generate_series(1, 8) g;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;
SELECT same($$SELECT small.x, vs.id FROM small JOIN vs ON vs.a BETWEEN small.x AND small.x + 3$$);
SELECT same($$SELECT x, (SELECT count(*) FROM vs WHERE vs.a < small.x AND vs.s > 0) FROM small$$);
SET vexec.mode = force;
SELECT scans($$SELECT x, (SELECT count(*) FROM vs WHERE vs.a < small.x) FROM small$$);
RESET vexec.mode;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_material;

-- Parallel workers: a Parallel Vec Seq Scan under Gather.
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT id FROM vs WHERE a > 0;
RESET vexec.mode;
SELECT same($$SELECT id, a * 2 FROM vs WHERE a > 0 AND t LIKE '%é'$$);
SELECT same($$SELECT count(*), sum(b) FROM vs WHERE s > 0$$);
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- Row-level security and security-barrier views.
CREATE ROLE vexec_reader;
GRANT USAGE ON SCHEMA public TO vexec_reader;
CREATE TABLE secret (id int, owner text, val int);
INSERT INTO secret SELECT g, CASE WHEN g % 3 = 0 THEN 'vexec_reader' ELSE 'other' END, g FROM generate_series(1, 3000) g;
ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY mine ON secret USING (owner = current_user);
GRANT SELECT ON secret TO vexec_reader;
GRANT EXECUTE ON FUNCTION same(text) TO vexec_reader;
CREATE FUNCTION leak(int) RETURNS bool LANGUAGE plpgsql COST 0.0001 AS $$
BEGIN RAISE NOTICE 'saw %', $1; RETURN true; END $$;
GRANT EXECUTE ON FUNCTION leak(int) TO vexec_reader;
SET ROLE vexec_reader;
SELECT same($$SELECT id FROM secret WHERE val > 2990$$);
SET vexec.mode = force;
SELECT id FROM secret WHERE val > 2990 AND leak(val);
RESET vexec.mode;
RESET ROLE;
CREATE VIEW sb WITH (security_barrier) AS SELECT id, val FROM secret WHERE val % 1000 = 0;
SET vexec.mode = force;
SELECT * FROM sb WHERE leak(val);
RESET vexec.mode;

-- Other table access methods are read through slots (forced here for heap).
SET vexec.debug_slot_source = on;
SELECT same($$SELECT id, a + 1, t FROM vs WHERE a > 0 AND t LIKE 'str1%'$$);
SELECT same($$SELECT id, n, t, extra FROM mv WHERE length(t) > 100 OR extra <> 42$$);
SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE, ANALYZE, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT id FROM vs WHERE a > 9990;
RESET vexec.mode;
RESET vexec.debug_slot_source;

-- EXPLAIN without ANALYZE, with VERBOSE.
SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE) SELECT id, a + 1, upper(t) FROM vs WHERE a > 0 AND t ~ 'x';
RESET vexec.mode;

DROP VIEW sb;
DROP TABLE secret;
DROP FUNCTION leak(int);
REVOKE EXECUTE ON FUNCTION same(text) FROM vexec_reader;
REVOKE USAGE ON SCHEMA public FROM vexec_reader;
DROP ROLE vexec_reader;

-- Few buffer pins left (temporary tables use the session's local buffers,
-- here 100, and cursors hold 90 of them), and 50 pages without a visible row
-- at the start: batches end early, empty pages are skipped, no row is lost.
\c
SET search_path = public;
SET temp_buffers = 100;
CREATE TEMP TABLE few_pins AS SELECT g AS a, repeat('x', 400) AS t FROM generate_series(1, 20000) g;
DELETE FROM few_pins WHERE a <= 900;
ANALYZE few_pins;
BEGIN;
DO $$
BEGIN
  FOR i IN 0..89 LOOP
    EXECUTE format('DECLARE c_%s CURSOR FOR SELECT ctid FROM few_pins WHERE ctid >= ''(%s,1)''::tid', i, i);
    EXECUTE format('FETCH NEXT FROM c_%s', i);
  END LOOP;
END $$;
SELECT same($$SELECT a, length(t) FROM few_pins WHERE a % 3 = 0$$);
SELECT same($$SELECT count(*), sum(a) FROM few_pins$$);
COMMIT;

-- Inheritance: the parent's rows and its children's, each table scanned by
-- its own scan under an Append (a vector scan of the parent alone would miss
-- the children).
CREATE TABLE vparent (a int, t text);
CREATE TABLE vchild (b int) INHERITS (vparent);
INSERT INTO vparent SELECT g, 'p' || g FROM generate_series(1, 300) g;
INSERT INTO vchild SELECT g, 'c' || g, g FROM generate_series(1, 3000) g;
ANALYZE vparent, vchild;
SELECT same($$SELECT count(*), sum(a) FROM vparent$$);
SELECT same($$SELECT a, t FROM vparent WHERE a % 100 = 7$$);
SELECT same($$SELECT a, t FROM ONLY vparent WHERE a % 10 = 7$$);
SET vexec.mode = force;
SELECT * FROM scans($$SELECT count(*) FROM vparent WHERE a > 5$$);
RESET vexec.mode;
DROP TABLE vchild, vparent;

-- UPDATE of an inheritance tree or a partitioned table: the members are
-- result relations (no vector scan of them), while the subquery's table is
-- scanned by a vector scan. (A MULTIEXPR subplan in a member's scan crashed.)
CREATE TABLE vint (f1 int);
INSERT INTO vint VALUES (0), (123456), (-123456);
CREATE TABLE vupd (f1 int, f2 name) PARTITION BY RANGE (f1);
CREATE TABLE vupd1 PARTITION OF vupd FOR VALUES FROM (1) TO (5);
CREATE TABLE vupd2 PARTITION OF vupd FOR VALUES FROM (5) TO (100);
INSERT INTO vupd SELECT x, x::text FROM generate_series(1, 10) x;
SET vexec.mode = force;
SELECT * FROM scans($$UPDATE vupd i SET (f1, f2) = (SELECT i.f1, i.f2 || '-' FROM vint LIMIT 1)$$);
UPDATE vupd i SET (f1, f2) = (SELECT i.f1, i.f2 || '-' FROM vint LIMIT 1);
UPDATE vupd i SET (f1, f2) = (SELECT i.f1, i.f2 || '-' FROM vint LIMIT 1);
SELECT * FROM vupd ORDER BY f1;
CREATE TABLE vinh (f1 int, f2 name);
CREATE TABLE vinhc (f2 name, f1 int);
ALTER TABLE vinhc INHERIT vinh;
INSERT INTO vinh SELECT x, x::text FROM generate_series(1, 5) x;
INSERT INTO vinhc SELECT x::text, x FROM generate_series(6, 10) x;
UPDATE vinh i SET (f1, f2) = (SELECT i.f1, i.f2 || '-' FROM vint LIMIT 1);
SELECT * FROM vinh ORDER BY f1;
RESET vexec.mode;
DROP TABLE vupd, vinh CASCADE;
DROP TABLE vint;

-- A correlated scalar subquery in the target list (PostgreSQL's subselect
-- test, orders_view), evaluated by the vector scan's fallback: a SubPlan's
-- text result points into a tuple its next evaluation frees, so each row's
-- result is copied.
CREATE TABLE vorders (approver_ref integer, po_ref integer, ordercanceled boolean);
INSERT INTO vorders VALUES (1, 1, false), (66, 5, false), (66, 6, false), (66, 7, false), (66, 1, true),
  (66, 8, false), (66, 1, false), (77, 1, false), (1, 1, false), (66, 1, false), (1, 1, false);
SELECT same($$SELECT *, (SELECT CASE WHEN o.approver_ref = 1 THEN '---' ELSE 'Approved' END) FROM vorders o$$);
SELECT same($$SELECT *, (SELECT CASE WHEN o.po_ref = 1 THEN (SELECT CASE WHEN o.approver_ref = 1 THEN 'a' ELSE 'b' END) ELSE 'c' END) FROM vorders o$$);
SELECT same($$SELECT * FROM vorders o WHERE (SELECT CASE WHEN o.approver_ref = 1 THEN 1 ELSE 2 END) = 2$$);
SELECT same($$SELECT *, (SELECT CASE WHEN o.approver_ref = 1 THEN '---' ELSE 'Approved' END) AS approved,
  (SELECT CASE WHEN o.ordercanceled THEN 'Canceled' ELSE
     (SELECT CASE WHEN o.po_ref = 1 THEN (SELECT CASE WHEN o.approver_ref = 1 THEN '---' ELSE 'Approved' END) ELSE 'PO' END)
   END) AS status FROM vorders o$$);
-- The same query unwrapped (same() wraps it in an aggregate, and PostgreSQL
-- then evaluates the subqueries above the scan): the scan evaluates them.
SET vexec.mode = force;
SELECT scans($$SELECT *, (SELECT CASE WHEN o.approver_ref = 1 THEN '---' ELSE 'Approved' END) FROM vorders o$$);
SELECT *, (SELECT CASE WHEN o.approver_ref = 1 THEN '---' ELSE 'Approved' END) AS approved,
  (SELECT CASE WHEN o.ordercanceled THEN 'Canceled' ELSE
     (SELECT CASE WHEN o.po_ref = 1 THEN (SELECT CASE WHEN o.approver_ref = 1 THEN '---' ELSE 'Approved' END) ELSE 'PO' END)
   END) AS status FROM vorders o;
RESET vexec.mode;
DROP TABLE vorders;

-- Full batches without NULLs go through the kernels' one-loop paths (and
-- subexpressions a batch computes once): errors are still PostgreSQL's, at
-- PostgreSQL's row, here in the second and later batches.
CREATE TABLE vdense (id int NOT NULL, a int NOT NULL, b bigint NOT NULL, s smallint NOT NULL, f float8 NOT NULL);
INSERT INTO vdense SELECT g, g * 1000, g::bigint * 3000000000, g % 30000, g * 1e300 FROM generate_series(1, 5000) g;
ANALYZE vdense;
SELECT same($$SELECT sum(a + 1), sum(a - 7), sum(s + 1), sum(s * 2), sum(b + s), sum(f + a) FROM vdense$$);
SELECT same($$SELECT a + 1, s + 1, b - a, a::int8, s::float8, a::float4, f * 2 FROM vdense WHERE id % 7 = 0$$);
SELECT same($$SELECT a * 1000 FROM vdense$$);
SELECT same($$SELECT id FROM vdense WHERE a * 1000 > 0$$);
SELECT same($$SELECT s + 2147483000 FROM vdense$$);
SELECT same($$SELECT (a::int8 * 2)::int4, (a::int8 * 1000)::int4 FROM vdense WHERE id < 2100$$);
SELECT same($$SELECT (a::int8 * 1000)::int4 FROM vdense$$);
SELECT same($$SELECT a::int2 FROM vdense WHERE id > 20$$);
SELECT same($$SELECT (a - 5000000)::int2 FROM vdense WHERE id > 4990$$);
SELECT same($$SELECT f * 1e5 FROM vdense$$);
SELECT same($$SELECT f / 1e300, f - f, f / f FROM vdense$$);
-- Repeated subexpressions, also under a CASE that computes them for fewer rows.
SELECT same($$SELECT sum(s + 1), sum(s + 1), sum((s + 1) * 2), avg(s::int8 + a), avg(s::int8 + a) FROM vdense$$);
SELECT same($$SELECT a + 1, a + 1, (a + 1) * 3 FROM vdense WHERE id % 1000 = 0$$);
SELECT same($$SELECT CASE WHEN id % 2 = 0 THEN a * 1000 ELSE 0 END, a * 1000 FROM vdense WHERE id < 2000$$);
SELECT same($$SELECT CASE WHEN id > 6000 THEN a * 1000 END, CASE WHEN id > 6000 THEN a * 1000 END FROM vdense$$);
SELECT same($$SELECT x.a + 1, x.a + 1, (x.a + 1) * 2, y.s + 1 FROM vdense x JOIN vdense y USING (id) WHERE x.id % 500 = 0$$);
DROP TABLE vdense;

-- Hashed VecAgg (GROUP BY): in force mode every query gives exactly what
-- mode off gives. Uses vecagg's helpers (agg_same, vexec_plan_lines) and its
-- table va.
\set SHOW_CONTEXT never
SET search_path = public;

-- Whether EXPLAIN ANALYZE of q shows a VecAgg that wrote temporary files.
CREATE FUNCTION vecagg_spilled(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; vec bool := false; spilled bool := false;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    vec := vec OR ln LIKE '%Vec Aggregate%';
    spilled := spilled OR ln LIKE '%Spill Files:%';
  END LOOP;
  RETURN CASE WHEN NOT vec THEN 'no VecAgg' WHEN spilled THEN 'VecAgg spilled' ELSE 'VecAgg in memory' END;
END $$;

-- Whether a VecAgg's peak memory (EXPLAIN ANALYZE) stayed within hash_mem.
CREATE FUNCTION vecagg_within_hash_mem(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; peak bigint; budget bigint;
BEGIN
  budget := (SELECT setting::bigint FROM pg_settings WHERE name = 'work_mem')
            * current_setting('hash_mem_multiplier')::float8;
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln LIKE '%Peak Memory:%' THEN
      peak := greatest(coalesce(peak, 0), substring(ln FROM 'Peak Memory: (\d+) kB')::bigint);
    END IF;
  END LOOP;
  RETURN CASE WHEN peak IS NULL THEN 'no peak shown' WHEN peak <= budget THEN 'within hash_mem'
              ELSE format('%s kB, over hash_mem (%s kB)', peak, budget) END;
END $$;

CREATE TABLE vk (id int, c char(4), vc varchar(10), by bytea, tm time, tz timestamptz, o oid, f4 real, f8 float8);
INSERT INTO vk SELECT g,
  CASE WHEN g % 9 = 0 THEN NULL WHEN g % 2 = 0 THEN 'ab' ELSE 'ab  ' END,
  CASE WHEN g % 8 = 0 THEN NULL ELSE 'v' || (g % 6) END,
  CASE WHEN g % 7 = 0 THEN NULL ELSE decode(to_hex(g % 5), 'escape') END,
  CASE WHEN g % 6 = 0 THEN NULL ELSE time '10:00' + (g % 4) * interval '1 minute' END,
  CASE WHEN g % 5 = 0 THEN NULL ELSE timestamptz '2020-01-01 00:00+00' + (g % 3) * interval '1 day' END,
  (g % 4 + 4294967290)::oid,
  CASE g % 5 WHEN 0 THEN 'NaN'::real WHEN 1 THEN '-0'::real WHEN 2 THEN 0 WHEN 3 THEN -'NaN'::real ELSE NULL END,
  CASE g % 6 WHEN 0 THEN 'NaN'::float8 WHEN 1 THEN '-0'::float8 WHEN 2 THEN 0 WHEN 3 THEN 'Infinity' WHEN 4 THEN 1.5 ELSE NULL END
FROM generate_series(1, 2000) g;
ANALYZE vk;

-- The plan: a hashed Vec Aggregate over a Vec Seq Scan in force mode.
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT s, count(*) FROM va GROUP BY s;
EXPLAIN (COSTS OFF, VERBOSE) SELECT a % 10 + 1, t, sum(b) FROM va WHERE id > 5 GROUP BY a % 10, t HAVING count(*) > 1;
EXPLAIN (VEXEC, COSTS OFF) SELECT d, max(ts) FROM va GROUP BY d;
-- enable_hashagg = off disables a hashed VecAgg as it disables HashAggregate.
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT s, count(*) FROM va GROUP BY s;
RESET enable_hashagg;
RESET vexec.mode;

-- Every key type, NULL keys grouped together, every vector transition.
SELECT agg_same($$SELECT s, count(*), count(a), sum(a), sum(b), avg(s), min(t), max(d) FROM va GROUP BY s$$);
SELECT agg_same($$SELECT a, b, count(*) FROM va GROUP BY a, b$$);
SELECT agg_same($$SELECT d, ts, bo, count(*), min(f), max(r), sum(f), avg(r) FROM va GROUP BY d, ts, bo$$);
SELECT agg_same($$SELECT t, count(*), min(a), max(b), bool_and(bo), bool_or(bo) FROM va GROUP BY t$$);
SELECT agg_same($$SELECT u, count(*), stddev(f), variance(r), var_pop(f) FROM va GROUP BY u$$);
SELECT agg_same($$SELECT c, vc, by, count(*) FROM vk GROUP BY c, vc, by$$);
SELECT agg_same($$SELECT tm, tz, o, count(*), sum(id) FROM vk GROUP BY tm, tz, o$$);
-- uuid keys: their 16 bytes (NULLs grouped together), and count(DISTINCT uuid).
SELECT agg_same($$SELECT md5(t)::uuid AS h, count(*), count(DISTINCT md5((a % 7)::text)::uuid) FROM va GROUP BY 1$$);
SELECT agg_same($$SELECT count(DISTINCT md5(t)::uuid) FROM va$$);
-- Float keys: -0 and 0 are one group, every NaN is one group.
SELECT agg_same($$SELECT f4, count(*) FROM vk GROUP BY f4$$);
SELECT agg_same($$SELECT f8, count(*), min(f4), max(f4) FROM vk GROUP BY f8$$);
SELECT agg_same($$SELECT f4::text, f8::text, count(*) FROM vk GROUP BY f4, f8$$);
-- Keys and outputs that are expressions, HAVING on keys and aggregates.
SELECT agg_same($$SELECT a % 10, count(*), sum(a) FROM va GROUP BY a % 10$$);
SELECT agg_same($$SELECT a % 10 + 1, upper(t), count(*) FROM va GROUP BY a % 10, t$$);
SELECT agg_same($$SELECT length(t), count(*) FROM va WHERE id < 2500 GROUP BY 1 HAVING count(*) > 20$$);
SELECT agg_same($$SELECT s, sum(a) FROM va GROUP BY s HAVING s > 990 OR sum(a) IS NULL$$);
SELECT agg_same($$SELECT t, count(*) AS c FROM va GROUP BY t ORDER BY c DESC, t LIMIT 10$$);
SELECT agg_same($$SELECT date_part('hour', ts), date_trunc('month', ts), count(*) FROM va GROUP BY 1, 2$$);
-- count(DISTINCT x), by the group table's equality (NaN, -0, bpchar blanks).
SELECT agg_same($$SELECT count(DISTINCT a), count(DISTINCT t), count(DISTINCT f), count(DISTINCT bo) FROM va$$);
SELECT agg_same($$SELECT s % 7, count(DISTINCT a), count(DISTINCT u), count(*) FROM va GROUP BY 1$$);
SELECT agg_same($$SELECT count(DISTINCT f4), count(DISTINCT f8), count(DISTINCT c), count(DISTINCT by) FROM vk$$);
SELECT agg_same($$SELECT vc, count(DISTINCT f4), count(DISTINCT c), count(DISTINCT tz) FROM vk GROUP BY vc$$);
SELECT agg_same($$SELECT count(DISTINCT a) FROM va WHERE id < 0$$);
-- Other DISTINCT aggregates whose result does not depend on the order of
-- the distinct values: sum/avg of integers, min/max of integer-like values
-- and dates/timestamps, bool_and/bool_or (int8 sums past int8, NULLs, empty input).
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT s % 7, sum(DISTINCT a), avg(DISTINCT b), min(DISTINCT d), bool_or(DISTINCT bo)
  FROM va GROUP BY 1;
RESET vexec.mode;
SELECT agg_same($$SELECT sum(DISTINCT a), sum(DISTINCT s), sum(DISTINCT b), avg(DISTINCT a), avg(DISTINCT s),
  avg(DISTINCT b), min(DISTINCT d), max(DISTINCT ts), bool_and(DISTINCT bo), every(DISTINCT bo), bool_or(DISTINCT bo),
  sum(a), count(DISTINCT a) FROM va$$);
SELECT agg_same($$SELECT s % 7, sum(DISTINCT a % 100), avg(DISTINCT a % 100), sum(DISTINCT b % 1000), max(DISTINCT d),
  min(DISTINCT s), bool_or(DISTINCT bo), count(DISTINCT a % 100) FROM va GROUP BY 1$$);
SELECT agg_same($$SELECT sum(DISTINCT a), avg(DISTINCT b), min(DISTINCT d) FROM va WHERE id < 0$$);
SELECT agg_same($$SELECT s, sum(DISTINCT a) FILTER (WHERE a > 0), avg(DISTINCT b) FILTER (WHERE id % 3 = 0) FROM va GROUP BY s$$);
-- (no partial state: the serial VecAgg stays in parallel plans)
SET vexec.mode = force;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (VEXEC, COSTS OFF) SELECT sum(DISTINCT a) FROM va;
RESET ALL;
SET search_path = public;
-- FILTER: only rows where it is true count; the FILTER is computed by the scan.
SELECT agg_same($$SELECT count(*) FILTER (WHERE a > 0), sum(a) FILTER (WHERE t LIKE 'str1%'), min(t) FILTER (WHERE bo), count(DISTINCT s) FILTER (WHERE s > 0) FROM va$$);
SELECT agg_same($$SELECT s % 5, count(*) FILTER (WHERE bo), avg(b) FILTER (WHERE a IS NULL), max(d) FILTER (WHERE NOT bo), count(*) FROM va GROUP BY 1$$);
SELECT agg_same($$SELECT count(*) FILTER (WHERE 100 / (a % 7) > 1) FROM va$$);
SELECT agg_same($$SELECT sum(f) FILTER (WHERE a > 0) FROM va$$);
-- numeric sum/avg: exact, at the largest display scale, NaN and infinities
-- as PostgreSQL counts them, values past 38 digits and sums past an int128.
CREATE TABLE vn (g int, x numeric, p numeric(38, 0), q numeric(19, 4));
INSERT INTO vn SELECT i % 4, (i * 37 % 1000) / power(10, i % 5)::numeric,
  9 * power(10::numeric, 37) - i, 123456789012345.6789 * (CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END)
FROM generate_series(1, 400) i;
INSERT INTO vn VALUES (5, 'NaN', NULL, NULL), (5, 1, NULL, NULL), (6, 'Infinity', NULL, NULL), (6, 2.5, NULL, NULL),
  (7, 'Infinity', NULL, NULL), (7, '-Infinity', NULL, NULL), (8, '-Infinity', NULL, NULL),
  (9, 1e40, NULL, NULL), (9, -1e40, NULL, NULL), (9, 0.000001, NULL, NULL), (10, 1e-30, NULL, NULL),
  (11, NULL, NULL, NULL), (12, 1.0, NULL, NULL), (12, 1.00, NULL, NULL), (12, 0.999, NULL, NULL),
  (13, 2.00, NULL, NULL), (13, 2.0, NULL, NULL);
SELECT agg_same($$SELECT g, sum(x), avg(x), sum(p), avg(p), sum(q), avg(q), count(*) FROM vn GROUP BY g$$);
SELECT agg_same($$SELECT sum(x), avg(x), sum(p), avg(q) FROM vn WHERE g < 4$$);
SELECT agg_same($$SELECT sum(x), avg(x) FROM vn$$);
SELECT agg_same($$SELECT s % 4, sum(n), avg(n), sum(n * 2.5), avg(n / 3) FROM va GROUP BY 1$$);
SELECT agg_same($$SELECT sum(n), avg(n) FROM va WHERE id < 0$$);
-- numeric min/max: by value, the later of equal values (1.0 / 1.00), NaN above all.
SELECT agg_same($$SELECT g, min(x), max(x), min(p), max(q) FROM vn GROUP BY g$$);
SELECT agg_same($$SELECT min(x), max(x), min(n), max(n) FROM vn, (SELECT min(n) n FROM va) m WHERE g < 5$$);
SELECT agg_same($$SELECT s % 3, min(n)::text, max(n * 10)::text FROM va GROUP BY 1$$);
-- Empty input gives no group; one NULL key is one group.
SELECT agg_same($$SELECT s, count(*), sum(a) FROM va WHERE id < 0 GROUP BY s$$);
SELECT agg_same($$SELECT a, count(*), sum(a) FROM va WHERE a IS NULL GROUP BY a$$);
-- Long (TOASTed) text keys.
SELECT agg_same($$SELECT length(t), left(t, 6), count(*) FROM va WHERE id > 2990 GROUP BY t$$);
-- Errors: in a key expression, in an argument, in a transition.
SELECT agg_same($$SELECT 100 / (a % 7), count(*) FROM va GROUP BY 1$$);
SELECT agg_same($$SELECT s, sum(a + 2147483000) FROM va GROUP BY s$$);
SELECT agg_same($$SELECT f, sum(f) FROM vo GROUP BY f$$);
-- Batch boundaries, and every expression through PostgreSQL's evaluator.
SET vexec.debug_batch_size = 7;
SELECT agg_same($$SELECT a % 5, t, count(*), sum(b) FROM va WHERE id % 3 = 0 GROUP BY 1, 2$$);
RESET vexec.debug_batch_size;
SET vexec.debug_force_fallback = on;
SELECT agg_same($$SELECT a % 5, lower(t), count(*), sum(b) FROM va WHERE a > 0 GROUP BY 1, 2$$);
RESET vexec.debug_force_fallback;

-- Past hash_mem the group table spills to temporary files, recursively.
CREATE TABLE vbig AS SELECT g AS id, (g * 7919) % 60000 AS k, 'key' || ((g * 31) % 40000) AS tk, g % 100 AS v
  FROM generate_series(1, 200000) g;
ANALYZE vbig;
SET work_mem = '64kB';
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT k, count(*), sum(v) FROM vbig GROUP BY k$$);
-- The table and its states grow within hash_mem (room reserved before each
-- batch), not past it and then spill.
SELECT vecagg_within_hash_mem($$SELECT k, count(*), sum(v) FROM vbig GROUP BY k$$);
SELECT vecagg_within_hash_mem($$SELECT tk, count(*), avg(v), max(id) FROM vbig GROUP BY tk$$);
SET work_mem = '1MB';
SELECT vecagg_within_hash_mem($$SELECT k, tk, count(*), sum(v), min(id) FROM vbig GROUP BY k, tk$$);
-- Across budgets, wherever the group index's power-of-two growth falls
-- relative to hash_mem (it once overran it by up to 5%).
CREATE FUNCTION vecagg_within_hash_mem_at(q text, sizes text[]) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE s text;
BEGIN
  FOREACH s IN ARRAY sizes LOOP
    PERFORM set_config('work_mem', s, true);
    RETURN NEXT s || ': ' || vecagg_within_hash_mem(q);
  END LOOP;
END $$;
SELECT vecagg_within_hash_mem_at($$SELECT k, count(*), sum(v), avg(v) FROM vbig GROUP BY k$$,
  '{96kB,160kB,256kB,384kB,512kB,640kB,768kB,1MB,1200kB,1500kB,2MB}');
SELECT vecagg_within_hash_mem_at($$SELECT id, count(*) FROM vbig GROUP BY id$$,
  '{200kB,400kB,600kB,800kB,1MB,1300kB,1700kB,2MB,2500kB,3MB,4MB}');
SET work_mem = '64kB';
RESET vexec.mode;
SELECT agg_same($$SELECT k, count(*), sum(v), min(tk COLLATE "C"), max(id) FROM vbig GROUP BY k$$);
SELECT agg_same($$SELECT tk, count(*), avg(v), count(k) FROM vbig GROUP BY tk$$);
SELECT agg_same($$SELECT k % 1000, tk, count(*) FROM vbig GROUP BY 1, 2 HAVING count(*) > 1$$);
-- Two integer keys (the pair index), NULLs in either (the general table),
-- spilled.
SELECT agg_same($$SELECT nullif(k % 3000, 7), nullif(v, 3), count(*), sum(id) FROM vbig GROUP BY 1, 2$$);
SELECT agg_same($$SELECT k, sum(100 / (v - 99)) FROM vbig GROUP BY k$$);
SELECT agg_same($$SELECT k % 100, count(DISTINCT tk), count(DISTINCT v) FROM vbig GROUP BY 1$$);
-- DISTINCT sums spill with their groups (each group's distinct values go
-- to its partition with it).
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT id % 2000, sum(DISTINCT k % 97), avg(DISTINCT k % 97) FROM vbig GROUP BY 1$$);
RESET vexec.mode;
SELECT agg_same($$SELECT id % 2000, sum(DISTINCT k % 97), avg(DISTINCT k % 97), count(DISTINCT k % 97), max(DISTINCT id), count(*)
  FROM vbig GROUP BY 1$$);
SELECT agg_same($$SELECT k, count(*) FILTER (WHERE v > 50), sum(v) FILTER (WHERE tk LIKE 'key1%') FROM vbig GROUP BY k$$);
-- uuid keys and interval arguments (fixed-length values by reference) in
-- the spill files.
CREATE TABLE vuu AS SELECT g AS id,
  CASE WHEN g % 97 = 0 THEN NULL ELSE md5((g % 30000)::text)::uuid END AS u,
  CASE WHEN g % 89 = 0 THEN NULL ELSE make_interval(days => g % 400, mins => g % 61) END AS iv
  FROM generate_series(1, 100000) g;
ANALYZE vuu;
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT u, count(*), max(iv), min(iv) FROM vuu GROUP BY u$$);
RESET vexec.mode;
SELECT agg_same($$SELECT u, count(*), max(iv), min(iv) FROM vuu GROUP BY u$$);
SELECT agg_same($$SELECT id % 50, count(DISTINCT u), max(iv) FROM vuu GROUP BY 1$$);
-- interval keys by their span ('1 mon' = '30 days'), spilling; each group
-- shows its first value (enable_sort = off: mode off's HashAggregate too).
SET enable_sort = off;
SELECT agg_same($$SELECT iv, count(*), min(id) FROM vuu GROUP BY iv$$);
SELECT agg_same($$SELECT CASE WHEN id % 2 = 0 THEN make_interval(months => id % 4) ELSE make_interval(days => 30 * (id % 4)) END AS h, count(*), count(DISTINCT iv) FROM vuu GROUP BY 1$$);
RESET enable_sort;
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT iv, count(*) FROM vuu GROUP BY iv$$);
SELECT h, count(*) FROM (VALUES (interval '1 mon'), ('30 days'), ('720 hours'), ('1 day'), ('24 hours'), (NULL)) v(h) GROUP BY h ORDER BY 2, 1;
RESET vexec.mode;
RESET work_mem;
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT k, count(*), sum(v) FROM vbig GROUP BY k$$);
RESET vexec.mode;

-- Rescans: a correlated subquery reruns the VecAgg (in memory and spilling).
SELECT agg_same($$SELECT x, (SELECT max(c) FROM (SELECT a % 5, count(*) c FROM va WHERE id < x * 100 GROUP BY 1) s) FROM generate_series(1, 3) x$$);
SET work_mem = '64kB';
SELECT agg_same($$SELECT x, (SELECT count(*) FROM (SELECT k FROM vbig WHERE v < x GROUP BY k) s) FROM generate_series(1, 3) x$$);
RESET work_mem;
-- Prepared statements, custom and generic plans.
SET vexec.mode = force;
PREPARE ph(int) AS SELECT s % 3, count(*), max(t) FROM va WHERE a > $1 GROUP BY 1 ORDER BY 1;
EXECUTE ph(0);
SET plan_cache_mode = force_generic_plan;
EXECUTE ph(5000);
RESET plan_cache_mode;
DEALLOCATE ph;
-- Cancel while spilling: a clean error, no temporary file left behind.
SET work_mem = '64kB';
SET statement_timeout = '300ms';
SELECT k, min(CASE WHEN id < 150000 OR pg_sleep(0.01) IS NULL THEN v END) FROM vbig GROUP BY k;
RESET statement_timeout;
RESET work_mem;
SELECT count(*) AS temp_files_left FROM pg_ls_tmpdir();
SELECT count(*) FROM (SELECT k FROM vbig GROUP BY k) s;
RESET vexec.mode;

-- Not vectorized: each with its reason, and the answer is PostgreSQL's.
CREATE TABLE vpk (id int PRIMARY KEY, a int);
INSERT INTO vpk SELECT g, g % 3 FROM generate_series(1, 100) g;
CREATE COLLATION vexec_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE vci (t text COLLATE vexec_ci);
INSERT INTO vci VALUES ('a'), ('A'), ('b');
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT ROW(a % 3) AS h, count(*) FROM va GROUP BY 1;
CREATE TYPE vh_pair AS (a int, b int[]);
EXPLAIN (VEXEC, COSTS OFF) SELECT ROW(a % 3, '{1}')::vh_pair AS h, count(*) FROM va GROUP BY 1;
EXPLAIN (VEXEC, COSTS OFF) SELECT s, min(u) FROM va GROUP BY s;
EXPLAIN (VEXEC, COSTS OFF) SELECT id, a, count(*) FROM vpk GROUP BY id;
EXPLAIN (VEXEC, COSTS OFF) SELECT t, count(*) FROM vci GROUP BY t;
EXPLAIN (VEXEC, COSTS OFF) SELECT 1 AS one, count(*) FROM va GROUP BY one;
EXPLAIN (VEXEC, COSTS OFF) SELECT s, sum(DISTINCT f) FROM va GROUP BY s;
-- (string_agg(DISTINCT) runs through fmgr: see vecagg_fmgr)
EXPLAIN (VEXEC, COSTS OFF) SELECT s, string_agg(DISTINCT t, ',') FROM va GROUP BY s;
EXPLAIN (VEXEC, COSTS OFF) SELECT sum(100 / a) FILTER (WHERE a <> 0) FROM va;
RESET vexec.mode;
SELECT agg_same($$SELECT n, count(*) FROM va GROUP BY n$$);
SELECT agg_same($$SELECT sum(100 / a) FILTER (WHERE a <> 0), count(*) FROM va$$);
SELECT agg_same($$SELECT id, a, count(*) FROM vpk GROUP BY id$$);
-- Columns the primary key determines are grouped on too (the same groups),
-- also from HAVING and over a join.
SELECT agg_same($$SELECT id, a * 2, count(*) FROM vpk GROUP BY id HAVING a > 0$$);
SELECT agg_same($$SELECT vpk.id, vpk.a, count(va.id), sum(va.a) FROM vpk JOIN va ON va.a = vpk.id GROUP BY vpk.id$$);
SELECT agg_same($$SELECT lower(t), count(*) FROM vci GROUP BY t$$);
-- text min/max under libc, ICU and nondeterministic collations: the
-- collation's order, and of strings it orders equal the later one.
SELECT agg_same($$SELECT s % 5, min(u), max(u), min(t COLLATE "en_US"), max(t COLLATE "und-x-icu"), count(*) FROM va GROUP BY 1$$);
SELECT agg_same($$SELECT min(t), max(t), min(t COLLATE "C"), max(t COLLATE "C") FROM vci$$);
INSERT INTO vci VALUES ('B'), ('a');
SELECT agg_same($$SELECT min(t), max(t), min(t::text COLLATE "en_US"), count(*) FROM vci$$);
SELECT agg_same($$SELECT 1 AS one, count(*) FROM va WHERE id < 0 GROUP BY one$$);

-- Keys under a nondeterministic collation (case-blind here): grouped by
-- the collation's equality through their sort keys, each group showing the
-- first value met, as HashAggregate shows it (enable_sort = off keeps mode
-- off on HashAggregate, so that both show the same value).
CREATE TABLE vnd (id int, t text COLLATE vexec_ci, v varchar(20) COLLATE vexec_ci, n int);
INSERT INTO vnd SELECT g,
  CASE WHEN g % 13 = 0 THEN NULL
       ELSE (ARRAY['Foo', 'foo', 'FOO', 'bar', 'Bär', 'BAR', 'bär', ''])[1 + g % 8] || (g % 3)::text END,
  (ARRAY['x', 'X', 'y'])[1 + g % 3], g % 4
FROM generate_series(1, 3000) g;
SET enable_sort = off;
SELECT agg_same($$SELECT t, count(*), sum(n) FROM vnd GROUP BY t$$);
SELECT agg_same($$SELECT v, t, n, count(*) FROM vnd GROUP BY v, t, n$$);
SELECT agg_same($$SELECT t, count(*) FROM vnd WHERE id > 1500 GROUP BY t$$);
SELECT agg_same($$SELECT upper(t), count(DISTINCT v) FROM vnd GROUP BY t$$);
-- bpchar too, its trailing blanks ignored ('AB ' = 'ab').
CREATE TABLE vndc (c char(4) COLLATE vexec_ci, n int);
INSERT INTO vndc SELECT (ARRAY['ab', 'AB ', 'Ab', 'b', 'B  ', NULL, 'a b'])[1 + g % 7], g FROM generate_series(1, 700) g;
SELECT agg_same($$SELECT c, count(*), sum(n) FROM vndc GROUP BY c$$);
RESET enable_sort;
SELECT agg_same($$SELECT count(DISTINCT c), count(DISTINCT c::text) FROM vndc$$);
SELECT agg_same($$SELECT count(DISTINCT t), count(DISTINCT v), count(DISTINCT t COLLATE "C") FROM vnd$$);
SELECT agg_same($$SELECT n, count(DISTINCT t) FROM vnd GROUP BY n$$);
SELECT agg_same($$SELECT lower(t), count(*) FROM vnd GROUP BY t HAVING count(*) > 300$$);
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT t, count(*) FROM vnd GROUP BY t;
SELECT t, count(*) FROM vnd WHERE id BETWEEN 1 AND 24 GROUP BY t ORDER BY 2, 1;
-- Past work_mem: 20,000 groups of case variants spill and come back whole.
-- Rows g, g + 20000 and g + 40000 share a key, upper case first (lower
-- first for the key of 0, first met at g = 20000).
CREATE TABLE vndbig AS
  SELECT CASE WHEN (g / 20000) % 2 = 0 THEN upper(md5((g % 20000)::text)) ELSE md5((g % 20000)::text) END COLLATE vexec_ci AS k, g
  FROM generate_series(1, 60000) g;
ANALYZE vndbig;
SET work_mem = '64kB';
SELECT vecagg_spilled($$SELECT k, count(*) FROM vndbig GROUP BY k$$);
SELECT upper(k) = k COLLATE "C" AS first_is_upper, count(*) AS groups, sum(c) AS rows, min(c), max(c)
FROM (SELECT k, count(*) AS c FROM vndbig GROUP BY k) s GROUP BY 1 ORDER BY 1;
RESET work_mem;
RESET vexec.mode;
SELECT agg_same($$SELECT count(*) FROM (SELECT k FROM vndbig GROUP BY k) s$$);
-- Over a row input: a join no VecHashJoin does (a range join, an index
-- nested loop) and a function scan; auto mode takes it where it is
-- estimated cheaper, and it gives PostgreSQL's rows and errors.
CREATE TABLE vra AS SELECT g AS id, g % 50 AS k, g * 10 AS lo, g * 10 + 25 AS hi FROM generate_series(1, 2000) g;
CREATE TABLE vrb AS SELECT g AS x, (g % 97)::numeric / 4 AS n FROM generate_series(1, 20000) g;
CREATE INDEX ON vrb (x);
ANALYZE vra, vrb;
SET vexec.mode = auto;
EXPLAIN (COSTS OFF) SELECT a.k, count(*), sum(b.n) FROM vra a JOIN vrb b ON b.x BETWEEN a.lo AND a.hi GROUP BY a.k;
EXPLAIN (COSTS OFF) SELECT g % 10, count(*), sum(g) FROM generate_series(1, 50000) g GROUP BY 1;
RESET vexec.mode;
SELECT agg_same($$SELECT a.k, count(*), sum(b.n), avg(b.x) FROM vra a JOIN vrb b ON b.x BETWEEN a.lo AND a.hi GROUP BY a.k$$);
SELECT agg_same($$SELECT count(*), sum(b.n), max(a.id) FROM vra a JOIN vrb b ON b.x BETWEEN a.lo AND a.hi$$);
SELECT agg_same($$SELECT g % 10, count(*), sum(g) FROM generate_series(1, 50000) g GROUP BY 1$$);
SELECT agg_same($$SELECT a.k, sum(100 / (b.x - 15000)) FROM vra a JOIN vrb b ON b.x BETWEEN a.lo AND a.hi GROUP BY a.k$$);
-- Rescanned with new parameters (a correlated subquery): each rescan
-- aggregates the rows of its own index scan.
SELECT agg_same($$SELECT a.id, (SELECT sum(b.n) FROM vrb b WHERE b.x BETWEEN a.lo AND a.hi
  GROUP BY b.x % 2 ORDER BY 1 LIMIT 1) FROM vra a WHERE a.id % 100 = 0$$);
-- Small inputs stay PostgreSQL's outside force mode (vexec.min_rows).
SET vexec.mode = auto;
EXPLAIN (VEXEC, COSTS OFF) SELECT k, count(*) FROM vra WHERE id < 100 GROUP BY k;
RESET vexec.mode;
DROP TABLE vra, vrb;
DROP TABLE vk, vbig, vuu, vpk, vci, vn, vnd, vndbig, vndc;
DROP COLLATION vexec_ci;
DROP TYPE vh_pair;

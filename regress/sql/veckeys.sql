-- Arrays, ranges, multiranges, jsonb and composite types as group keys, count(DISTINCT)
-- arguments and hash join keys: compared through a canonical encoding
-- (array_eq: dimensions, lower bounds, NULL elements equal; range_eq:
-- emptiness, bounds and their inclusiveness; multirange_eq: each range as
-- range_eq; jsonb_eq: structure, object pairs, numbers by value), each
-- element or bound by its type's equality. Uses agg_same (vecagg) and
-- join_same/join_spilled (vecjoin).
\set SHOW_CONTEXT never
SET search_path = public;
-- (Force mode disables hash joins only: keep the others out of the joins.)
SET enable_nestloop = off;
SET enable_mergejoin = off;

CREATE TYPE float8range AS RANGE (subtype = float8, subtype_diff = float8mi);
CREATE TABLE vk (id int, ia int[], ta text[] COLLATE "C", na numeric[], fa float8[], ua uuid[],
                 ca bpchar[], iva interval[], ma int[], r int4range, nr numrange, tr tsrange,
                 dr daterange, fr float8range);
INSERT INTO vk SELECT g,
  CASE WHEN g % 11 = 0 THEN NULL WHEN g % 7 = 0 THEN '{}' WHEN g % 5 = 0 THEN ARRAY[g % 3, NULL]
       WHEN g % 13 = 0 THEN '[0:1]={1,2}'::int[] ELSE ARRAY[g % 3, g % 4] END,
  CASE WHEN g % 9 = 0 THEN NULL ELSE ARRAY['x' || g % 4, repeat('y', g % 3), CASE WHEN g % 4 = 0 THEN NULL ELSE 'é' END] END,
  -- 1 = 1.0 = 1.00: equal elements whatever their display scale.
  ARRAY[round((g % 3)::numeric, g % 3), 2.5],
  ARRAY[(ARRAY['-0', '0', 'NaN', '1.5', '-Infinity']::float8[])[1 + g % 5]],
  ARRAY[md5((g % 4)::text)::uuid],
  -- bpchar elements compare without trailing blanks.
  ARRAY[(ARRAY['ab', 'ab  ', 'b'])[1 + g % 3]::bpchar],
  -- '1 day' = '24 hours'.
  ARRAY[(ARRAY[interval '1 day', interval '24 hours', interval '1 month'])[1 + g % 3]],
  -- Two dimensions.
  ARRAY[[g % 2, 1], [2, g % 3]],
  -- int4range is canonical ([a,b)); empty when g % 3 = 0.
  CASE WHEN g % 17 = 0 THEN NULL ELSE int4range(g % 5, g % 5 + g % 3) END,
  -- numrange: bounds by value, inclusiveness counts, infinite bounds.
  CASE g % 6 WHEN 0 THEN numrange(round((g % 4)::numeric, g % 3), 5, '[)')
             WHEN 1 THEN numrange(round((g % 4)::numeric, 2), 5, '[)')
             WHEN 2 THEN numrange(round((g % 4)::numeric, 1), 5, '[]')
             WHEN 3 THEN numrange(NULL, g % 2)
             WHEN 4 THEN 'empty'::numrange
             ELSE numrange(1.0, NULL, '()') END,
  tsrange(timestamp '2020-01-01' + (g % 3) * interval '1 day', CASE WHEN g % 2 = 0 THEN NULL ELSE timestamp '2021-01-01' END),
  daterange(date '2020-01-01' + g % 4, date '2020-01-10', CASE WHEN g % 2 = 0 THEN '[]' ELSE '[)' END),
  -- float8 bounds: -0 = 0.
  float8range(CASE WHEN g % 2 = 0 THEN '-0'::float8 ELSE 0 END, g % 3)
FROM generate_series(1, 3000) g;
ANALYZE vk;

-- HashAggregate (mode off, sorts disabled) and VecAgg meet groups in the same
-- order and show each group's first value.
SET enable_sort = off;
SELECT agg_same($$SELECT ia, count(*), sum(id) FROM vk GROUP BY ia$$);
SELECT agg_same($$SELECT ta, count(*) FROM vk GROUP BY ta$$);
SELECT agg_same($$SELECT na, fa, count(*) FROM vk GROUP BY na, fa$$);
SELECT agg_same($$SELECT ua, ca, iva, count(*) FROM vk GROUP BY ua, ca, iva$$);
SELECT agg_same($$SELECT ma, id % 3, count(*) FROM vk GROUP BY ma, id % 3$$);
SELECT agg_same($$SELECT r, count(*), min(id) FROM vk GROUP BY r$$);
SELECT agg_same($$SELECT nr, count(*) FROM vk GROUP BY nr$$);
SELECT agg_same($$SELECT tr, dr, fr, count(*) FROM vk GROUP BY tr, dr, fr$$);
-- Keys computed per batch (PostgreSQL's evaluator builds the arrays).
SELECT agg_same($$SELECT ARRAY[id % 3, id % 2] AS k, count(*) FROM vk GROUP BY 1$$);
SELECT agg_same($$SELECT int4range(id % 4, 10) AS k, count(*) FROM vk WHERE id > 100 GROUP BY 1$$);
SELECT agg_same($$SELECT ia, count(*) FROM vk GROUP BY ia HAVING count(*) > 300$$);
RESET enable_sort;
SELECT agg_same($$SELECT count(DISTINCT ia), count(DISTINCT na), count(DISTINCT nr), count(DISTINCT r) FROM vk$$);
SELECT agg_same($$SELECT id % 4, count(DISTINCT fa), count(DISTINCT iva), count(DISTINCT ma) FROM vk GROUP BY 1$$);

SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT ia, count(*) FROM vk GROUP BY ia;
EXPLAIN (COSTS OFF) SELECT nr, count(DISTINCT ta) FROM vk GROUP BY nr;
-- Not vectorized, with the reason: elements under a nondeterministic
-- collation, element types without a vector key, anonymous records.
CREATE COLLATION vk_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
EXPLAIN (VEXEC, COSTS OFF) SELECT ARRAY[ta[1] COLLATE vk_ci] AS k, count(*) FROM vk GROUP BY 1;
EXPLAIN (VEXEC, COSTS OFF) SELECT ARRAY[to_jsonb(id % 3)] AS k, count(*) FROM vk GROUP BY 1;
EXPLAIN (VEXEC, COSTS OFF) SELECT ROW(id % 3, 'x') AS k, count(*) FROM vk GROUP BY 1;
RESET vexec.mode;
SELECT agg_same($$SELECT ARRAY[ta[1] COLLATE vk_ci] AS k, count(*) FROM vk GROUP BY 1$$);

-- jsonb keys: objects by their pairs (written in any order), numbers by
-- value (1 = 1.0 = 1.00), a raw scalar unequal to the one-element array,
-- strings by bytes, nesting, an object of 40 pairs (past the stride at
-- which entries store offsets); multirange keys: each range as range_eq,
-- numeric bounds by value, the empty multirange.
CREATE TABLE vkj AS SELECT g AS id,
  CASE g % 8
    WHEN 0 THEN NULL
    WHEN 1 THEN jsonb_build_object('a', round((g % 3)::numeric, (g / 8) % 3), 'b', ARRAY[(g / 8) % 2])
    WHEN 2 THEN jsonb_build_object('b', ARRAY[(g / 8) % 2], 'a', (g % 3)::numeric)
    WHEN 3 THEN to_jsonb(g % 3)
    WHEN 4 THEN jsonb_build_array(g % 3)
    WHEN 5 THEN ('{"x": "' || repeat('y', g % 3) || '", "n": null, "t": ' || (g % 2 = 0) || '}')::jsonb
    WHEN 6 THEN jsonb_build_object('k', jsonb_build_object('deep', jsonb_build_array(g % 2, true, 'x', '{}'::jsonb, '[]'::jsonb)))
    ELSE (SELECT jsonb_object_agg('k' || i, i % (1 + g % 2)) FROM generate_series(1, 40) i)
  END AS j,
  CASE WHEN g % 9 = 0 THEN NULL WHEN g % 9 = 1 THEN '{}'::int4multirange
       ELSE int4multirange(int4range(g % 4, g % 4 + 2), int4range(10 + g % 3, 20), int4range(30, NULL)) END AS m,
  nummultirange(numrange(round((g % 2)::numeric, g % 3), 5), numrange(7, NULL)) AS nm
FROM generate_series(1, 3000) g;
ANALYZE vkj;
SET enable_sort = off;
SELECT agg_same($$SELECT j, count(*), min(id) FROM vkj GROUP BY j$$);
SELECT agg_same($$SELECT m, nm, count(*), max(id) FROM vkj GROUP BY m, nm$$);
SELECT agg_same($$SELECT j -> 'k' AS k, count(*) FROM vkj GROUP BY 1$$);
RESET enable_sort;
SELECT agg_same($$SELECT count(DISTINCT j), count(DISTINCT m), count(DISTINCT nm) FROM vkj$$);
SELECT agg_same($$SELECT id % 3, count(DISTINCT j) FROM vkj GROUP BY 1$$);
SELECT join_same($$SELECT a.id, b.id FROM vkj a JOIN vkj b ON a.j = b.j AND a.nm = b.nm WHERE a.id < 200$$);
SELECT join_same($$SELECT a.id, b.id FROM vkj a LEFT JOIN vkj b ON a.m = b.m AND b.id < 100 WHERE a.id < 300$$);
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT j, count(*) FROM vkj GROUP BY j;
EXPLAIN (COSTS OFF) SELECT count(*) FROM vkj a JOIN vkj b ON a.m = b.m;
RESET vexec.mode;

-- By-value types whose btree class declares equality of images
-- (equalimage): enums, "char", pg_lsn compare as integers.
CREATE TYPE vk_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE vkv AS SELECT g AS id,
  CASE WHEN g % 10 = 0 THEN NULL ELSE (enum_range(NULL::vk_mood))[1 + g % 3] END AS mo,
  chr(65 + g % 4)::"char" AS ch, ('0/' || to_hex(g % 6))::pg_lsn AS l
  FROM generate_series(1, 2000) g;
ANALYZE vkv;
SET enable_sort = off;
SELECT agg_same($$SELECT mo, ch, count(*) FROM vkv GROUP BY mo, ch$$);
SELECT agg_same($$SELECT l - '0/0'::pg_lsn AS lpos, mo, count(*), min(id) FROM vkv GROUP BY l, mo$$);
SELECT agg_same($$SELECT ARRAY[mo, 'ok'] AS k, count(DISTINCT ch) FROM vkv GROUP BY 1$$);
RESET enable_sort;
SELECT join_same($$SELECT a.id, b.id FROM vkv a JOIN vkv b ON a.mo = b.mo AND a.ch = b.ch WHERE a.id < 100$$);

-- Past work_mem: 20,000 groups of arrays spill and come back whole (rows
-- g and g + 20000 share a key).
CREATE TABLE vkbig AS SELECT g AS id, ARRAY[g % 20000, (g % 20000) / 7] AS a,
  int4range(g % 20000, g % 20000 + 3) AS r,
  jsonb_build_object('g', g % 20000, 's', 'v' || (g % 20000) % 7) AS j FROM generate_series(1, 40000) g;
ANALYZE vkbig;
SET work_mem = '64kB';
SET vexec.mode = force;
SELECT vecagg_spilled($$SELECT a, count(*) FROM vkbig GROUP BY a$$);
SELECT vecagg_spilled($$SELECT r, count(*) FROM vkbig GROUP BY r$$);
SELECT vecagg_spilled($$SELECT j, count(*) FROM vkbig GROUP BY j$$);
RESET vexec.mode;
SELECT agg_same($$SELECT count(*), sum(c), min(c), max(c) FROM (SELECT a, count(*) AS c FROM vkbig GROUP BY a) s$$);
SELECT agg_same($$SELECT count(*), sum(c), min(c), max(c) FROM (SELECT r, count(*) AS c FROM vkbig GROUP BY r) s$$);
SELECT agg_same($$SELECT count(*), sum(c), min(c), max(c) FROM (SELECT j, count(*) AS c FROM vkbig GROUP BY j) s$$);

-- Hash joins on array and range keys, in memory and partitioned.
SELECT join_spilled($$SELECT a.id, b.id FROM vkbig a JOIN vkbig b ON a.a = b.a$$);
SELECT join_same($$SELECT a.id, b.id FROM vkbig a JOIN vkbig b ON a.a = b.a$$);
SELECT join_same($$SELECT a.id, b.id FROM vkbig a JOIN vkbig b ON a.r = b.r AND a.id <> b.id$$);
SELECT join_spilled($$SELECT a.id, b.id FROM vkbig a JOIN vkbig b ON a.j = b.j$$);
SELECT join_same($$SELECT a.id, b.id FROM vkbig a JOIN vkbig b ON a.j = b.j$$);
RESET work_mem;
SELECT join_same($$SELECT a.id, b.id FROM vk a JOIN vk b ON a.na = b.na AND a.nr = b.nr WHERE a.id < 300$$);
SELECT join_same($$SELECT a.id, b.id FROM vk a LEFT JOIN vk b ON a.ia = b.ia AND a.fa = b.fa WHERE a.id < 300$$);
SELECT join_same($$SELECT a.id, b.id FROM vk a FULL JOIN vk b ON a.tr = b.tr AND a.ca = b.ca AND a.id < b.id AND b.id < 40$$);
SELECT join_same($$SELECT a.id FROM vk a WHERE EXISTS (SELECT FROM vk b WHERE b.iva = a.iva AND b.dr = a.dr AND b.id <> a.id)$$);
SELECT join_same($$SELECT a.id FROM vk a WHERE NOT EXISTS (SELECT FROM vk b WHERE b.ma = a.ma AND b.id > a.id)$$);
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT count(*) FROM vk a JOIN vk b ON a.nr = b.nr;
RESET vexec.mode;
-- Composite keys (record_eq): field by field with each type's equality
-- (numeric by value, -0 = 0, bpchar without trailing blanks, text by
-- bytes), NULL fields equal to each other, attributes added to the type
-- after a value was written read as NULL, dropped ones stepped over;
-- compressed fields (a row built from a compressed column keeps it
-- compressed) read decompressed.
CREATE TYPE vk_rec AS (n numeric, f float8, c char(4), t text, d date);
CREATE TYPE vk_big AS (k int, b text);
CREATE TABLE vkr (id int, r vk_rec, big text);
INSERT INTO vkr SELECT g,
  CASE WHEN g % 17 = 0 THEN NULL
       ELSE ROW(round((g % 3)::numeric, (g / 3) % 3), (ARRAY['-0', '0', '1.5'])[1 + (g / 2) % 3]::float8,
                (ARRAY['ab', 'ab  ', NULL])[1 + (g / 5) % 3], 'x' || g % 2, date '2020-01-01' + g % 2)::vk_rec END,
  repeat('z', 3000 + g % 2)
FROM generate_series(1, 3000) g;
ALTER TYPE vk_rec ADD ATTRIBUTE e int;
INSERT INTO vkr SELECT g, ROW(1.0, 0, 'ab', 'x0', date '2020-01-01', CASE WHEN g % 2 = 0 THEN NULL ELSE 1 END)::vk_rec, 'y'
FROM generate_series(3001, 3100) g;
ALTER TYPE vk_rec DROP ATTRIBUTE f;
ANALYZE vkr;
SET enable_sort = off;
SELECT agg_same($$SELECT r, count(*), min(id) FROM vkr GROUP BY r$$);
SELECT agg_same($$SELECT (r).e, r, count(*) FROM vkr WHERE id > 2900 GROUP BY r$$);
SELECT agg_same($$SELECT (k).k, length((k).b), c, m FROM (SELECT ROW(id % 3, big)::vk_big AS k, count(*) AS c, max(id) AS m FROM vkr GROUP BY 1) s$$);
RESET enable_sort;
SELECT agg_same($$SELECT count(DISTINCT r), count(DISTINCT ROW(id % 4, big)::vk_big) FROM vkr$$);
-- count(DISTINCT (a, b)): an anonymous record, whose fields the ROW names.
SELECT agg_same($$SELECT count(DISTINCT (id % 5, (r).t)), count(DISTINCT ((r).n, (r).c, NULL::int)) FROM vkr$$);
SELECT agg_same($$SELECT id % 3, count(DISTINCT ((r).n, id % 7)), count(DISTINCT ROW(big)) FROM vkr GROUP BY 1$$);
SELECT join_same($$SELECT a.id, b.id FROM vkr a JOIN vkr b ON a.r = b.r WHERE a.id % 10 = 0$$);
SELECT join_same($$SELECT a.id, b.id FROM vkr a LEFT JOIN vkr b ON a.r = b.r AND b.id < 50 WHERE a.id < 300$$);
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT r, count(*) FROM vkr GROUP BY r;
EXPLAIN (COSTS OFF) SELECT count(*) FROM vkr a JOIN vkr b ON a.r = b.r;
-- Not vectorized: a field without a vector key.
CREATE TYPE vk_jrec AS (j jsonb, i int);
EXPLAIN (VEXEC, COSTS OFF) SELECT ROW(to_jsonb(id), 1)::vk_jrec AS k, count(*) FROM vkr GROUP BY 1;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(DISTINCT (id, to_jsonb(id))) FROM vkr;
-- Past work_mem: 20,000 composite groups spill and come back whole.
SET work_mem = '64kB';
SELECT vecagg_spilled($$SELECT ROW(id % 20000, 'v' || id % 20000 / 7)::vk_big AS k, count(*) FROM vkbig GROUP BY 1$$);
SELECT agg_same($$SELECT count(*), sum(c), min(c), max(c), count(DISTINCT (k).b) FROM (SELECT ROW(id % 20000, 'v' || id % 20000 / 7)::vk_big AS k, count(*) AS c FROM vkbig GROUP BY 1) s$$);
RESET work_mem;
RESET vexec.mode;
DROP TABLE vkr;
DROP TYPE vk_rec, vk_big, vk_jrec;
RESET enable_nestloop;
RESET enable_mergejoin;
DROP TABLE vk, vkbig, vkv, vkj;
DROP TYPE vk_mood, float8range;
DROP COLLATION vk_ci;

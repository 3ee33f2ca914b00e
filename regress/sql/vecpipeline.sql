-- Vector pipelines: VecAgg and VecSort over VecHashJoin, and joins over
-- joins, with batches between the vector nodes. In force mode every query
-- returns exactly what mode off returns (or the same error).
\set SHOW_CONTEXT never
SET search_path = public;
SET enable_nestloop = off;
SET enable_mergejoin = off;

-- pipe_same(q, ordered) is in helpers.sql. pipe_plan(q): q's plan in force mode.
CREATE FUNCTION pipe_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('vexec.mode', 'force', true);
  RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END $$;

CREATE TABLE po (id int, k int, g int, s text COLLATE "C", n numeric(12,2), f float8);
INSERT INTO po SELECT i,
  CASE WHEN i % 10 = 0 THEN NULL ELSE i % 300 END,
  i % 7,
  CASE WHEN i % 11 = 0 THEN NULL ELSE 'g' || (i % 13) END,
  CASE WHEN i % 9 = 0 THEN NULL ELSE (i % 1000) / 8.0 END,
  i / 3.0
FROM generate_series(1, 6000) i;
CREATE TABLE pi (id int, k bigint, h int, t text, n numeric(10,3));
INSERT INTO pi SELECT i,
  CASE WHEN i % 7 = 0 THEN NULL ELSE i % 400 END,
  i % 5,
  CASE WHEN i % 6 = 0 THEN NULL ELSE 't' || (i % 17) END,
  (i % 77) / 3.0
FROM generate_series(1, 3000) i;
CREATE TABLE pz (id int, h int, name text);
INSERT INTO pz SELECT i, i, 'h' || i FROM generate_series(0, 4) i;
ANALYZE po;
ANALYZE pi;
ANALYZE pz;

-- Plans: the aggregate reads the join's batches; the join computes the
-- keys and arguments (a numeric product as scaled integers by kernel).
SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT po.g, sum(po.n * pi.n), count(*) FROM po JOIN pi ON po.k = pi.k GROUP BY po.g;
EXPLAIN (COSTS OFF)
SELECT po.s, pi.t, count(*) FROM po JOIN pi ON po.k = pi.k GROUP BY po.s, pi.t ORDER BY 3 DESC, 1, 2 LIMIT 5;
EXPLAIN (COSTS OFF)
SELECT po.id, pi.id FROM po JOIN pi ON po.k = pi.k ORDER BY po.id, pi.id LIMIT 10;
-- A float aggregate over a join stays PostgreSQL's (its errors could come
-- ahead of the join's).
EXPLAIN (VEXEC, COSTS OFF) SELECT sum(po.f) FROM po JOIN pi ON po.k = pi.k;
RESET vexec.mode;

-- Aggregates over every join type, keys from either side (NULL-extended
-- rows group under NULL), computed keys and arguments.
SELECT pipe_same($$SELECT po.g, count(*), sum(pi.id), min(pi.t), max(po.s) FROM po JOIN pi ON po.k = pi.k GROUP BY po.g$$);
SELECT pipe_same($$SELECT pi.h, count(*), count(pi.id), sum(po.n), avg(pi.n) FROM po LEFT JOIN pi ON po.k = pi.k GROUP BY pi.h$$);
SELECT pipe_same($$SELECT po.g, pi.h, count(*), sum(po.id + pi.id) FROM po RIGHT JOIN pi ON po.k = pi.k GROUP BY po.g, pi.h$$);
SELECT pipe_same($$SELECT coalesce(po.g, -1), count(*), count(DISTINCT pi.t), sum(pi.n * 2) FROM po FULL JOIN pi ON po.k = pi.k GROUP BY 1$$);
SELECT pipe_same($$SELECT po.g, count(*), sum(po.n) FROM po WHERE EXISTS (SELECT FROM pi WHERE pi.k = po.k) GROUP BY po.g$$);
SELECT pipe_same($$SELECT po.s, count(*) FROM po WHERE NOT EXISTS (SELECT FROM pi WHERE pi.k = po.k) GROUP BY po.s$$);
SELECT pipe_same($$SELECT upper(pi.t), po.g + 1, sum(po.n * (1 - pi.n)), avg(po.id) FROM po JOIN pi ON po.k = pi.k GROUP BY 1, 2$$);
SELECT pipe_same($$SELECT count(*), sum(po.n - pi.n), min(po.id * pi.h), max(length(pi.t)) FROM po JOIN pi ON po.k = pi.k$$);
SELECT pipe_same($$SELECT pi.h, count(*) FILTER (WHERE po.n > 50), sum(po.n) FILTER (WHERE pi.t < 't5') FROM po JOIN pi ON po.k = pi.k GROUP BY pi.h HAVING count(*) > 10$$);
-- A join filter: the join's quals run per row and its targets right after.
SELECT pipe_same($$SELECT po.g, count(*), sum(po.n * pi.n) FROM po JOIN pi ON po.k = pi.k AND po.id < pi.id * 2 GROUP BY po.g$$);
SELECT pipe_same($$SELECT pi.h, count(*), sum(po.id) FROM po LEFT JOIN pi ON po.k = pi.k WHERE pi.id IS NULL OR pi.h < 3 GROUP BY pi.h$$);
-- Joins over joins (batches between them) under an aggregate.
SELECT pipe_same($$SELECT pz.name, count(*), sum(po.n) FROM po JOIN pi ON po.k = pi.k JOIN pz ON pz.h = pi.h GROUP BY pz.name$$);
SELECT pipe_same($$SELECT pz.name, po.g, count(*) FROM po LEFT JOIN pi ON po.k = pi.k LEFT JOIN pz ON pz.h = pi.h AND pz.id < 3 GROUP BY 1, 2$$);
SELECT pipe_same($$SELECT a.id, b.id, c.id FROM po a JOIN pi b ON a.k = b.k JOIN po c ON c.k = b.h WHERE a.id < 400$$);

-- Errors in a computed argument: PostgreSQL's error (row mode), with and
-- without a join filter before it.
SELECT pipe_same($$SELECT sum(po.id * 1000000) FROM po JOIN pi ON po.k = pi.k$$);
SELECT pipe_same($$SELECT sum(po.id * 1000000) FROM po JOIN pi ON po.k = pi.k AND pi.id > 2990$$);
SELECT pipe_same($$SELECT sum(po.id * 1000000) FROM po JOIN pi ON po.k = pi.k AND 1 / (pi.id - 2999) > 0$$);
SELECT pipe_same($$SELECT count(*), sum(1 / (pi.h - 2)) FROM po JOIN pi ON po.k = pi.k$$);
SELECT pipe_same($$SELECT count(*), sum(1 / (pi.h - 2)) FILTER (WHERE pi.h <> 2) FROM po JOIN pi ON po.k = pi.k$$);
-- A volatile argument is evaluated once per joined row, in order.
CREATE SEQUENCE pseq;
SELECT pipe_same($$SELECT count(*), sum(nextval('pseq') * 0) FROM po JOIN pi ON po.k = pi.k$$);
SELECT setval('pseq', 1, false);
SET vexec.mode = force;
SELECT count(*), sum(nextval('pseq') * 0) FROM po JOIN pi ON po.k = pi.k;
SELECT currval('pseq');
RESET vexec.mode;

-- Group keys PostgreSQL leaves out of its keys (a primary key determines
-- them) are still output.
CREATE TABLE pk (id int PRIMARY KEY, name text, born date);
INSERT INTO pk SELECT i, 'name' || i, date '2000-01-01' + i FROM generate_series(0, 6) i;
ANALYZE pk;
SELECT pipe_same($$SELECT pk.id, pk.name, pk.born, count(*), sum(po.n) FROM pk JOIN po ON po.g = pk.id GROUP BY pk.id, pk.name, pk.born$$);
-- numeric group keys: by value, the first value met kept (as HashAggregate
-- keeps it); extract() gives numerics (TPC-H Q7, Q8, Q9).
CREATE TABLE pnum (id int, n numeric);
INSERT INTO pnum VALUES (1, 1.0), (2, 1.00), (3, 1), (4, 2.50), (5, 2.5), (6, 'NaN'), (7, 'NaN'), (8, -0.0),
  (9, 0), (10, NULL), (11, 1e30), (12, 1000000000000000000000000000000.000), (13, 1.000000000000000000000000001),
  (14, 'Infinity'), (15, '-Infinity'), (16, -2.5), (17, NULL), (18, 0.00000);
ANALYZE pnum;
SET enable_sort = off;
SELECT pipe_same($$SELECT n::text, count(*), sum(id) FROM pnum GROUP BY n$$);
-- (Which of the equal values a sorted aggregate meets first is its sort's
-- business: the key is shown at one scale.)
SELECT pipe_same($$SELECT round(a.n, 3), count(*), count(DISTINCT b.n) FROM pnum a JOIN pnum b ON a.n = b.n GROUP BY a.n$$);
RESET enable_sort;
SELECT pipe_same($$SELECT extract(year FROM pk.born + po.id) AS y, count(*), sum(po.n) FROM po JOIN pk ON po.g = pk.id GROUP BY 1$$);
SELECT pipe_same($$SELECT round(po.n / 7, 1), count(*) FROM po GROUP BY 1$$);

-- Sorts over joins, LIMIT and WITH TIES, in order.
SELECT pipe_same($$SELECT po.id, pi.id, pi.t FROM po JOIN pi ON po.k = pi.k ORDER BY po.id, pi.id LIMIT 25$$, true);
SELECT pipe_same($$SELECT po.s, pi.id FROM po LEFT JOIN pi ON po.k = pi.k ORDER BY po.s DESC NULLS LAST, pi.id NULLS FIRST, po.id$$, true);
SELECT pipe_same($$SELECT po.g, pi.h FROM po JOIN pi ON po.k = pi.k ORDER BY po.g, pi.h FETCH FIRST 3 ROWS WITH TIES$$, true);
SELECT pipe_same($$SELECT po.id + pi.id AS x FROM po JOIN pi ON po.k = pi.k ORDER BY x DESC, po.id LIMIT 7 OFFSET 3$$, true);
SELECT pipe_same($$SELECT po.g, count(*), sum(pi.n) FROM po JOIN pi ON po.k = pi.k GROUP BY po.g ORDER BY 3 DESC$$, true);

-- Past hash_mem: the join and the aggregate over it spill.
CREATE FUNCTION pipe_spills(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; j bool := false; a bool := false;
BEGIN
  PERFORM set_config('vexec.mode', 'force', true);
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    j := j OR ln LIKE '%Partitions:%';
    a := a OR ln LIKE '%Spill Files:%';
  END LOOP;
  PERFORM set_config('vexec.mode', 'off', true);
  RETURN format('join partitioned: %s, aggregate spilled: %s', j, a);
END $$;
SET work_mem = '64kB';
SELECT pipe_spills($$SELECT a.s, b.id, count(*), max(b.s) FROM po a JOIN po b ON a.k = b.k GROUP BY 1, 2$$);
SELECT pipe_same($$SELECT a.id % 500, count(*), sum(b.n) FROM po a JOIN po b ON a.k = b.k GROUP BY 1$$);
SELECT pipe_same($$SELECT a.s, b.id, count(*), max(b.s) FROM po a JOIN po b ON a.k = b.k GROUP BY 1, 2$$);
RESET work_mem;

-- Parallel: each participant probes its share of the outer side against a
-- table of the whole inner side it builds itself (inner, left, semi and anti
-- joins); an aggregate over such a join is partial per participant and
-- finalized above the Gather. Right and full joins stay serial.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT po.g, count(*), sum(po.n * pi.n) FROM po JOIN pi ON po.k = pi.k GROUP BY po.g;
EXPLAIN (COSTS OFF) SELECT po.id, pi.id FROM po LEFT JOIN pi ON po.k = pi.k;
RESET vexec.mode;
SELECT pipe_same($$SELECT po.g, count(*), sum(po.n * pi.n), min(pi.t) FROM po JOIN pi ON po.k = pi.k GROUP BY po.g$$);
SELECT pipe_same($$SELECT count(*), sum(po.id), count(pi.id) FROM po LEFT JOIN pi ON po.k = pi.k$$);
SELECT pipe_same($$SELECT po.id, pi.id, pi.t FROM po LEFT JOIN pi ON po.k = pi.k AND pi.h < 3$$);
SELECT pipe_same($$SELECT po.s, count(*) FROM po WHERE EXISTS (SELECT FROM pi WHERE pi.k = po.k) GROUP BY po.s$$);
SELECT pipe_same($$SELECT po.id FROM po WHERE NOT EXISTS (SELECT FROM pi WHERE pi.k = po.k)$$);
SELECT pipe_same($$SELECT pz.name, count(*) FROM po JOIN pi ON po.k = pi.k JOIN pz ON pz.h = pi.h GROUP BY pz.name$$);
SELECT pipe_same($$SELECT po.id, pi.id FROM po FULL JOIN pi ON po.k = pi.k$$);

-- Parallel, shared build (a parallel-aware join over a partial inner side):
-- each participant writes its share of the inner side to a shared file
-- set, then reads every share into a table of its own. Inner, left, semi
-- and anti joins; two shared builds in one plan; past hash_mem (each
-- participant partitions); a Gather run again (the shared state is set up
-- anew); no worker at all (the leader alone). enable_parallel_hash off
-- leaves the non-shared build.
CREATE TABLE so AS SELECT i AS id, CASE WHEN i % 13 = 0 THEN NULL ELSE i % 20000 END AS k,
  i % 5 AS h, 'o' || (i % 9) AS t FROM generate_series(1, 60000) i;
CREATE TABLE si AS SELECT i AS id, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7) % 25000 END::bigint AS k,
  i % 3 AS g, (i % 100) / 4.0 AS n, 's' || (i % 31) AS t FROM generate_series(1, 40000) i;
ANALYZE so;
ANALYZE si;
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT count(*), sum(si.n) FROM so JOIN si ON so.k = si.k;
EXPLAIN (COSTS OFF) SELECT so.h, count(*) FROM so LEFT JOIN si ON so.k = si.k GROUP BY so.h;
EXPLAIN (COSTS OFF) SELECT count(*) FROM so WHERE EXISTS (SELECT FROM si WHERE si.k = so.k AND si.g = 1);
EXPLAIN (COSTS OFF) SELECT count(*) FROM so WHERE NOT EXISTS (SELECT FROM si WHERE si.k = so.k);
EXPLAIN (COSTS OFF) SELECT pz.name, count(*) FROM po JOIN pi ON po.k = pi.k JOIN pz ON pz.h = pi.h GROUP BY pz.name;
EXPLAIN (COSTS OFF)
SELECT so.h, count(*), sum(s2.n) FROM so JOIN si ON so.k = si.k JOIN si s2 ON s2.id = so.id GROUP BY so.h;
-- (The SubPlan's line left out: PostgreSQL 18 and 19 name it differently.)
SELECT p AS "QUERY PLAN" FROM pipe_plan($$SELECT pz.h, (SELECT count(*) FROM (SELECT so.id, si.g
  FROM so JOIN si ON so.k = si.k OFFSET 0) j WHERE j.g <= pz.h) FROM pz$$) p WHERE p NOT LIKE '%SubPlan%';
SET enable_parallel_hash = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(si.n) FROM so JOIN si ON so.k = si.k;
RESET enable_parallel_hash;
RESET vexec.mode;
SELECT pipe_same($$SELECT so.h, count(*), sum(si.n), min(si.t), max(so.t) FROM so JOIN si ON so.k = si.k GROUP BY so.h$$);
SELECT pipe_same($$SELECT so.id, si.id, si.t FROM so LEFT JOIN si ON so.k = si.k AND si.g < 2$$);
SELECT pipe_same($$SELECT so.t, count(*) FROM so WHERE EXISTS (SELECT FROM si WHERE si.k = so.k AND si.g = 1) GROUP BY so.t$$);
SELECT pipe_same($$SELECT so.id FROM so WHERE NOT EXISTS (SELECT FROM si WHERE si.k = so.k)$$);
SELECT pipe_same($$SELECT pz.name, count(*) FROM po JOIN pi ON po.k = pi.k JOIN pz ON pz.h = pi.h GROUP BY pz.name$$);
SELECT pipe_same($$SELECT so.h, count(*), sum(s2.n) FROM so JOIN si ON so.k = si.k JOIN si s2 ON s2.id = so.id GROUP BY so.h$$);
SELECT pipe_same($$SELECT pz.h, (SELECT count(*) FROM (SELECT so.id, si.g FROM so JOIN si ON so.k = si.k OFFSET 0) j WHERE j.g <= pz.h) FROM pz$$);
-- Under a Parallel Append each shared build has the processes that run
-- its branch.
-- (Which side each branch builds differs between PostgreSQL 18 and 19:
-- counted, not shown.)
SELECT bool_or(p LIKE '%Parallel Append%') AS parallel_append,
       count(*) FILTER (WHERE p LIKE '%Build: shared%') AS shared_builds
FROM pipe_plan($$SELECT count(*), sum(x) FROM (SELECT si.n AS x FROM so JOIN si ON so.k = si.k
  UNION ALL SELECT si.n FROM so JOIN si ON so.id = si.k) u$$) p;
SELECT pipe_same($$SELECT count(*), sum(x) FROM (SELECT si.n AS x FROM so JOIN si ON so.k = si.k
  UNION ALL SELECT si.n FROM so JOIN si ON so.id = si.k) u$$);
-- An error while the shares are written (in whichever process meets the
-- row) ends the query with it; the others stop waiting.
SELECT pipe_same($$SELECT count(*), sum(s.x) FROM so JOIN (SELECT k, 1 / (id - 20000) AS x FROM si) s ON so.k = s.k$$);
SET work_mem = '64kB';
SELECT pipe_spills($$SELECT so.h, count(*), sum(si.n), min(si.t) FROM so JOIN si ON so.k = si.k GROUP BY so.h$$);
SELECT pipe_same($$SELECT so.h, count(*), sum(si.n), min(si.t) FROM so JOIN si ON so.k = si.k GROUP BY so.h$$);
SELECT pipe_same($$SELECT so.id, si.id FROM so LEFT JOIN si ON so.k = si.k$$);
RESET work_mem;
SET max_parallel_workers = 0;
SELECT pipe_same($$SELECT so.h, count(*), sum(si.n) FROM so JOIN si ON so.k = si.k GROUP BY so.h$$);
RESET max_parallel_workers;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- Rescans: an aggregate over a join in a correlated subquery.
SELECT pipe_same($$SELECT pz.h, (SELECT count(*) FROM po JOIN pi ON po.k = pi.k WHERE pi.h = pz.h) FROM pz$$);
SELECT pipe_same($$SELECT pz.h, (SELECT sum(po.n) FROM po JOIN pi ON po.k = pi.k WHERE po.g = pz.id) FROM pz$$);

-- Batches from VecAgg to its vector parents: VecSort and VecHashJoin read
-- the groups as columns; HAVING and computed outputs are evaluated per
-- group by PostgreSQL as the batch is filled.
SET vexec.mode = force;
EXPLAIN (COSTS OFF, VERBOSE) SELECT po.s, count(*) AS c, sum(po.n) FROM po GROUP BY po.s ORDER BY c DESC, po.s;
EXPLAIN (COSTS OFF, VERBOSE) SELECT po.s, count(*) AS c FROM po GROUP BY po.s HAVING count(*) > 1 ORDER BY c DESC, po.s;
EXPLAIN (COSTS OFF) SELECT a.k, a.c, pi.id FROM (SELECT k, count(*) AS c FROM po GROUP BY k) a JOIN pi ON pi.k = a.k;
EXPLAIN (COSTS OFF, VERBOSE) SELECT po.s, count(*) * 2 AS c2, sum(po.n) / count(*) AS av FROM po GROUP BY po.s
HAVING count(*) > 1 ORDER BY c2 DESC, po.s;
RESET vexec.mode;
SELECT pipe_same($$SELECT po.s, count(*) AS c, sum(po.n), max(po.f), min(po.s) FROM po GROUP BY po.s ORDER BY c DESC, po.s$$, true);
-- More groups than a batch holds, NULL keys, plain aggregates.
SELECT pipe_same($$SELECT po.id % 3000 AS k, po.s, count(*), sum(po.n), avg(po.f) FROM po GROUP BY 1, 2 ORDER BY 4 DESC NULLS FIRST, 1, 2$$, true);
SELECT pipe_same($$SELECT po.k, count(*), sum(po.id) FROM po GROUP BY po.k ORDER BY po.k NULLS FIRST LIMIT 1100$$, true);
SELECT pipe_same($$SELECT count(*), sum(po.n), max(po.s) FROM po ORDER BY 1$$, true);
SELECT pipe_same($$SELECT count(*), sum(po.n) FROM po WHERE po.id < 0 ORDER BY 1$$, true);
SELECT pipe_same($$SELECT po.s, count(*) AS c FROM po GROUP BY po.s HAVING count(*) > 400 ORDER BY c, po.s$$, true);
SELECT pipe_same($$SELECT a.k, a.c, pi.id FROM (SELECT k, count(*) AS c FROM po GROUP BY k) a JOIN pi ON pi.k = a.k$$);
SELECT pipe_same($$SELECT a.k, a.c, pi.id FROM pi LEFT JOIN (SELECT k, count(*) AS c, max(s) AS m FROM po GROUP BY k) a ON pi.k = a.k$$);
-- Computed outputs and HAVING, in batches: to a sort, a join, a plain
-- aggregate whose HAVING fails (no row), an error in an output (the same).
SELECT pipe_same($$SELECT po.s, count(*) * 2 AS c2, sum(po.n) / count(*) AS av, upper(po.s) FROM po GROUP BY po.s
  HAVING count(*) > 1 ORDER BY c2 DESC, po.s$$, true);
SELECT pipe_same($$SELECT po.id % 3000 AS k, count(*) + 1, max(po.f) - min(po.f) FROM po GROUP BY 1
  HAVING sum(po.n) > 100 ORDER BY 3 DESC NULLS FIRST, 1$$, true);
SELECT pipe_same($$SELECT a.k, a.c2, pi.id FROM (SELECT k, count(*) * 2 AS c2 FROM po GROUP BY k HAVING count(*) > 5) a
  JOIN pi ON pi.k = a.k$$);
SELECT pipe_same($$SELECT count(*) + 1 FROM po HAVING count(*) < 0 ORDER BY 1$$, true);
SELECT pipe_same($$SELECT count(*) + 1, sum(po.n) * 2 FROM po HAVING count(*) > 0 ORDER BY 1$$, true);
SELECT pipe_same($$SELECT po.s, 1 / (count(*) - count(*)) FROM po GROUP BY po.s ORDER BY 2$$, true);
-- Spilled partitions: a batch ends where a partition ends (the next one
-- restarts the fmgr aggregates whose by-reference results it holds).
SET work_mem = '64kB';
SELECT pipe_spills($$SELECT po.id, count(*), max(make_interval(days => po.id % 97)) FROM po GROUP BY po.id ORDER BY 3 DESC, 1$$);
SELECT pipe_same($$SELECT po.id, count(*), max(make_interval(days => po.id % 97)), min(po.s) FROM po GROUP BY po.id ORDER BY 3 DESC, 1$$, true);
SELECT pipe_same($$SELECT a.id, a.m, pi.t FROM (SELECT id, max(make_interval(days => id % 97)) AS m FROM po GROUP BY id) a JOIN pi ON pi.id = a.id$$);
-- HAVING that no group of some partitions passes: the batch goes on into
-- the next partition.
SELECT pipe_same($$SELECT po.id, count(*), max(make_interval(days => po.id % 97)) FROM po GROUP BY po.id
  HAVING max(po.id) % 1000 = 7 ORDER BY 3 DESC, 1$$, true);
RESET work_mem;
-- Rescans: a sort over an aggregate in a correlated subquery.
SELECT pipe_same($$SELECT pz.h, (SELECT s.c FROM (SELECT po.s, count(*) AS c FROM po WHERE po.g = pz.h GROUP BY po.s ORDER BY c DESC, po.s LIMIT 1) s) FROM pz$$);

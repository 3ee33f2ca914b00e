-- EXPLAIN (VEXEC) for VecScan: chosen, not chosen and every reason it is
-- not possible.
SET search_path = public;
CREATE TABLE ve (id int PRIMARY KEY, a int, t text);
INSERT INTO ve SELECT g, g % 100, 'x' || g FROM generate_series(1, 20000) g;
ANALYZE ve;
CREATE TABLE tiny (x int);
INSERT INTO tiny VALUES (1), (2);
ANALYZE tiny;

-- explain mode: costed, reported, never chosen.
SET vexec.mode = explain;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*) FROM ve WHERE a > 5 AND t LIKE 'x1%';
-- With costs, the row and vector costs are shown (their values depend on
-- the machine's settings; only their presence is checked).
CREATE FUNCTION vexec_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN FOR ln IN EXECUTE 'EXPLAIN (VEXEC) ' || q LOOP RETURN NEXT ln; END LOOP; END $$;
SELECT ln ~ '^ +cost: row [0-9.]+, vector [0-9.]+$' AS has_costs FROM vexec_lines('SELECT count(*) FROM ve WHERE a > 5') ln
WHERE ln ~ 'cost:';

-- auto: the cheaper plan wins; the vector scan of a big table, an index
-- scan for a point lookup.
SET vexec.mode = auto;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*) FROM ve WHERE a > 5;
EXPLAIN (VEXEC, COSTS OFF) SELECT * FROM ve WHERE id = 5;
-- auto: a vector scan replaces an index scan only when cheaper by
-- vexec.index_margin (its estimate is raised by that fraction, short of the
-- sequential scan's): a range of a third of the table.
SET vexec.index_margin = 0;
EXPLAIN (COSTS OFF) SELECT sum(a) FROM ve WHERE id <= 7000;
SET vexec.index_margin = 100;
EXPLAIN (COSTS OFF) SELECT sum(a) FROM ve WHERE id <= 7000;
-- ... and still always beats the sequential scan.
EXPLAIN (COSTS OFF) SELECT id FROM ve WHERE a > 5;
RESET vexec.index_margin;
-- force: sequential scans are replaced; an index scan may still be cheaper.
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF) SELECT * FROM ve WHERE id = 5;
EXPLAIN (VEXEC, COSTS OFF) SELECT * FROM tiny;

-- Not possible, with the reason.
SET vexec.mode = auto;
EXPLAIN (VEXEC, COSTS OFF) SELECT * FROM tiny;
SET vexec.enable_scan = off;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*) FROM ve WHERE a > 5;
RESET vexec.enable_scan;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*) FROM ve TABLESAMPLE system (50) REPEATABLE (1);
EXPLAIN (VEXEC, COSTS OFF) SELECT id FROM ve WHERE a = 1 FOR UPDATE;
EXPLAIN (VEXEC, COSTS OFF) UPDATE ve SET t = 'y' WHERE a = 1;
EXPLAIN (VEXEC, COSTS OFF) DELETE FROM ve WHERE a = 1;
EXPLAIN (VEXEC, COSTS OFF) SELECT xmin, id FROM ve WHERE a = 1;
EXPLAIN (VEXEC, COSTS OFF) SELECT ve FROM ve WHERE a = 1;
EXPLAIN (VEXEC, COSTS OFF) SELECT ctid, tableoid::regclass, id FROM ve WHERE a = 1;
EXPLAIN (VEXEC, COSTS OFF) DECLARE c CURSOR FOR SELECT id FROM ve WHERE a = 1;
CREATE SEQUENCE vseq;
EXPLAIN (VEXEC, COSTS OFF) SELECT * FROM vseq;
-- enable_seqscan = off disables the vector scan as it disables Seq Scan.
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*) FROM ve WHERE a > 5;
RESET enable_seqscan; RESET enable_indexscan; RESET enable_bitmapscan;

-- Parallel alternatives are reported with their workers.
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET vexec.mode = force;
SET vexec.enable_agg = off;  -- (a plain VecAgg over a serial scan would win)
EXPLAIN (VEXEC, COSTS OFF) SELECT count(*) FROM ve WHERE a > 5;
RESET vexec.enable_agg;
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- The structured formats carry the same facts.
EXPLAIN (VEXEC, COSTS OFF, FORMAT JSON) SELECT count(*) FROM ve WHERE a > 5;
RESET vexec.mode;
DROP FUNCTION vexec_lines(text);
DROP SEQUENCE vseq;
DROP TABLE ve, tiny;

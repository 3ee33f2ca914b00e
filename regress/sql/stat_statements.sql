-- pg_stat_statements with vector plans (issue 50): a statement has the same
-- queryid in every vexec mode (vexec plans; it never rewrites the query),
-- and its counters are the ones its row plan gives: rows, the shared
-- buffers the scan touches and the temp blocks of a spilling aggregate
-- (vexec spills to PostgreSQL's BufFile, which counts them). An INSERT
-- written by VecInsert differs where it should: one WAL record (and one
-- buffer access) for a page's worth of rows, where ModifyTable has one per row.
SET search_path = public;
CREATE EXTENSION pg_stat_statements;
SET max_parallel_workers_per_gather = 0;
SET vexec.min_rows = 0;
CREATE TABLE ss (id int, k int, v int);
INSERT INTO ss SELECT g, g % 10, g FROM generate_series(1, 50000) g;
ANALYZE ss;
CREATE TABLE ss_out (k int, total bigint);
CREATE TABLE ss_counters (mode text, stmt text, queryid bigint, calls bigint, rows bigint,
                          blks bigint, temp_read bigint, temp_written bigint, wal_records bigint);

-- Runs each statement once in `mode` after a reset, then keeps its counters.
CREATE FUNCTION ss_run(mode text) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM set_config('vexec.mode', mode, false);
  TRUNCATE ss_out;
  PERFORM pg_stat_statements_reset();
END $fn$;
CREATE FUNCTION ss_keep(mode text) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO ss_counters
  SELECT mode, CASE WHEN query LIKE 'INSERT%' THEN 'insert' WHEN query LIKE '%GROUP BY id%' THEN 'spill'
                    ELSE 'agg' END,
         queryid, calls, rows, shared_blks_hit + shared_blks_read, temp_blks_read, temp_blks_written,
         wal_records
  FROM pg_stat_statements WHERE query ~ '^(SELECT|INSERT).* ss( |$)';
END $fn$;

-- The three statements (answers shown once per mode) ...
SELECT k, sum(v) FROM ss GROUP BY k ORDER BY k LIMIT 3;  -- warm the cache

SELECT ss_run('off');
SELECT k, sum(v) FROM ss GROUP BY k ORDER BY k LIMIT 3;
INSERT INTO ss_out SELECT k, sum(v) FROM ss GROUP BY k;
SET work_mem = '64kB';
SELECT count(*), sum(s) FROM (SELECT id, sum(v) AS s FROM ss GROUP BY id) g;
RESET work_mem;
SELECT ss_keep('off');

SELECT ss_run('auto');
SELECT k, sum(v) FROM ss GROUP BY k ORDER BY k LIMIT 3;
INSERT INTO ss_out SELECT k, sum(v) FROM ss GROUP BY k;
SET work_mem = '64kB';
SELECT count(*), sum(s) FROM (SELECT id, sum(v) AS s FROM ss GROUP BY id) g;
RESET work_mem;
SELECT ss_keep('auto');

SELECT ss_run('force');
SELECT k, sum(v) FROM ss GROUP BY k ORDER BY k LIMIT 3;
INSERT INTO ss_out SELECT k, sum(v) FROM ss GROUP BY k;
SET work_mem = '64kB';
SELECT count(*), sum(s) FROM (SELECT id, sum(v) AS s FROM ss GROUP BY id) g;
RESET work_mem;
SELECT ss_keep('force');
RESET vexec.mode;

-- ... with vector plans in force (and auto).
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT k, sum(v) FROM ss GROUP BY k ORDER BY k LIMIT 3;
EXPLAIN (COSTS OFF) INSERT INTO ss_out SELECT k, sum(v) FROM ss GROUP BY k;
SET work_mem = '64kB';
EXPLAIN (COSTS OFF) SELECT count(*), sum(s) FROM (SELECT id, sum(v) AS s FROM ss GROUP BY id) g;
RESET work_mem;
RESET vexec.mode;

-- One queryid a statement whatever the mode; every counter as in off.
SELECT stmt, count(*) AS modes, count(DISTINCT queryid) AS queryids, sum(calls) AS calls
FROM ss_counters GROUP BY stmt ORDER BY stmt;
SELECT c.mode, c.stmt, c.rows = o.rows AS same_rows, c.blks = o.blks AS same_blocks,
       c.wal_records = o.wal_records AS same_wal_records,
       c.temp_written > 0 AND c.temp_read > 0 AS spilled
FROM ss_counters c JOIN ss_counters o ON o.stmt = c.stmt AND o.mode = 'off'
ORDER BY c.stmt, c.mode;
-- The figures themselves: rows, the table's pages, one WAL record for the
-- ten rows VecInsert wrote.
SELECT stmt, rows, blks, blks = (SELECT relpages FROM pg_class WHERE relname = 'ss') AS blks_are_pages,
       wal_records
FROM ss_counters WHERE mode = 'force' ORDER BY stmt;

DROP TABLE ss, ss_out, ss_counters;
DROP FUNCTION ss_run, ss_keep;
DROP EXTENSION pg_stat_statements;

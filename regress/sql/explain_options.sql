-- EXPLAIN's options on vector plans (issue 50): GENERIC_PLAN, SETTINGS
-- (vexec's settings carry GUC_EXPLAIN), MEMORY, SERIALIZE, WAL, SUMMARY,
-- BUFFERS, and EXPLAIN (VEXEC) in every format. Figures that vary from run
-- to run (times, memory, costs) are masked.
SET search_path = public;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE eo (id int, k int, v int);
INSERT INTO eo SELECT g, g % 10, g FROM generate_series(1, 20000) g;
ANALYZE eo;
SELECT count(*) FROM eo;  -- cached: the buffers below are hits

-- EXPLAIN's lines with times, memory sizes and costs masked.
CREATE FUNCTION explain_masked(q text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN ' || q LOOP
    ln := regexp_replace(ln, '[0-9]+\.[0-9]+ ms', 'N ms', 'g');
    ln := regexp_replace(ln, '(used|allocated)=[0-9]+kB', '\1=NkB', 'g');
    ln := regexp_replace(ln, 'output=[0-9]+kB', 'output=NkB', 'g');
    ln := regexp_replace(ln, 'bytes=[0-9]+', 'bytes=N', 'g');
    -- A page can be dirtied or written back by chance (hint bits, eviction).
    ln := regexp_replace(ln, ' (dirtied|written)=[0-9]+', '', 'g');
    ln := regexp_replace(ln, '(Cost|Startup Cost|Total Cost|Row Cost|Vector Cost|Row-Cost|Vector-Cost)(": |: |>)[0-9.]+', '\1\2N', 'g');
    ln := regexp_replace(ln, 'cost=[0-9.]+\.\.[0-9.]+', 'cost=N..N', 'g');
    ln := regexp_replace(ln, 'cost: row [0-9.]+, vector [0-9.]+', 'cost: row N, vector N', 'g');
    RETURN NEXT ln;
  END LOOP;
END $fn$;

SET vexec.mode = force;
-- A generic plan of a statement with parameters.
SELECT explain_masked('(GENERIC_PLAN, COSTS OFF) SELECT k, sum(v) FROM eo WHERE id > $1 GROUP BY k');
-- SETTINGS lists vexec's settings that differ from their defaults.
SET vexec.min_rows = 5;
SELECT explain_masked('(SETTINGS, COSTS OFF) SELECT k, sum(v) FROM eo GROUP BY k');
RESET vexec.min_rows;
SELECT explain_masked('(MEMORY, COSTS OFF) SELECT k, sum(v) FROM eo GROUP BY k');
SELECT explain_masked('(ANALYZE, SERIALIZE, SUMMARY, BUFFERS, COSTS OFF, TIMING OFF) SELECT k, sum(v) FROM eo GROUP BY k');
-- WAL of a statement a vector plan feeds.
CREATE TABLE eo_out (k int, s bigint);
SELECT explain_masked('(ANALYZE, WAL, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) INSERT INTO eo_out SELECT k, sum(v) FROM eo GROUP BY k');
-- EXPLAIN (VEXEC) in every format, with the other options.
SELECT explain_masked('(VEXEC, COSTS OFF) SELECT k, sum(v) FROM eo GROUP BY k');
SELECT explain_masked('(VEXEC, VERBOSE, FORMAT JSON) SELECT k, sum(v) FROM eo GROUP BY k');
SELECT explain_masked('(VEXEC, FORMAT YAML) SELECT k, sum(v) FROM eo GROUP BY k');
SELECT explain_masked('(VEXEC, FORMAT XML) SELECT k, sum(v) FROM eo GROUP BY k');
SELECT explain_masked('(VEXEC, ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF, FORMAT JSON) SELECT k, sum(v) FROM eo GROUP BY k');
SELECT explain_masked('(VEXEC, GENERIC_PLAN, SETTINGS, FORMAT YAML) SELECT k, sum(v) FROM eo WHERE id > $1 GROUP BY k');
RESET vexec.mode;
DROP TABLE eo, eo_out;
DROP FUNCTION explain_masked;

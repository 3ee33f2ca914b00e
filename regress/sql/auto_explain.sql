-- auto_explain with vector plans (issue 50): the logged plans show vector
-- nodes with their ANALYZE counters and buffers, as EXPLAIN does, in text
-- and JSON, for nested statements too; on 19, with
-- auto_explain.log_extension_options = 'vexec', vexec's report as well (18
-- has no such setting: auto_explain_1.out). The tools schedule preloads
-- auto_explain and keeps the server log in a file (logging_collector); the
-- plans are read back from it, durations and costs masked.
SET search_path = public;
SET max_parallel_workers_per_gather = 0;
SET vexec.mode = force;
CREATE TABLE ae (id int, k int, v int);
INSERT INTO ae SELECT g, g % 10, g FROM generate_series(1, 20000) g;
ANALYZE ae;
SELECT count(*) FROM ae;  -- cached: the buffers below are hits

-- A marker in the server log before the statements whose plans we want.
CREATE FUNCTION log_marker(name text) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN RAISE LOG 'auto_explain test: begin %', name; END $fn$;
-- The plans auto_explain logged since the marker for statements matching
-- `pattern`, one line each, with durations, costs and planning figures masked.
CREATE FUNCTION logged_plans(name text, pattern text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE log text; tries int := 0; entry text; ln text;
BEGIN
  RAISE LOG 'auto_explain test: end %', name;
  LOOP  -- the logging collector writes the file a moment later
    log := pg_read_file(pg_current_logfile());
    EXIT WHEN position('auto_explain test: end ' || name IN log) > 0 OR tries > 200;
    PERFORM pg_sleep(0.05);
    tries := tries + 1;
  END LOOP;
  log := substr(log, position('auto_explain test: begin ' || name IN log));
  log := left(log, position('auto_explain test: end ' || name IN log) - 1);
  FOREACH entry IN ARRAY regexp_split_to_array(log, E'\n(?=LOG:  )') LOOP
    CONTINUE WHEN entry !~ '^LOG:  duration: ' OR entry !~ pattern;
    FOREACH ln IN ARRAY regexp_split_to_array(entry, E'\n') LOOP
      ln := regexp_replace(ln, 'duration: [0-9.]+ ms', 'duration: N ms');
      ln := regexp_replace(ln, 'cost=[0-9.]+\.\.[0-9.]+', 'cost=N..N');
      ln := regexp_replace(ln, '"(Startup|Total) Cost": [0-9.]+', '"\1 Cost": N');
      ln := regexp_replace(ln, 'cost: row [0-9.]+, vector [0-9.]+', 'cost: row N, vector N');
      CONTINUE WHEN ln ~ '^CONTEXT:|^\s*PL/pgSQL function|^STATEMENT:';
      RETURN NEXT ln;
    END LOOP;
  END LOOP;
END $fn$;

SET auto_explain.log_min_duration = 0;
SET auto_explain.log_analyze = on;
SET auto_explain.log_timing = off;
SET auto_explain.log_buffers = on;

-- Text.
SELECT log_marker('text');
SELECT k, sum(v) FROM ae GROUP BY k ORDER BY k LIMIT 2;
SELECT logged_plans('text', 'FROM ae GROUP BY k');

-- JSON.
SET auto_explain.log_format = json;
SET auto_explain.log_buffers = off;
SELECT log_marker('json');
SELECT k, sum(v) FROM ae GROUP BY k ORDER BY k LIMIT 2;
SELECT logged_plans('json', 'FROM ae GROUP BY k');
RESET auto_explain.log_format;
RESET auto_explain.log_buffers;
SET auto_explain.log_buffers = on;

-- A nested statement (inside a function) is logged with
-- log_nested_statements, and only then.
CREATE FUNCTION ae_groups() RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE n bigint;
BEGIN SELECT count(*) INTO n FROM (SELECT k, max(v) FROM ae GROUP BY k) g; RETURN n; END $fn$;
SELECT log_marker('not nested');
SELECT ae_groups();
SELECT logged_plans('not nested', 'max\(v\)');
SET auto_explain.log_nested_statements = on;
SELECT log_marker('nested');
SELECT ae_groups();
SELECT logged_plans('nested', 'max\(v\)');
RESET auto_explain.log_nested_statements;

-- vexec's report (PostgreSQL 19).
DO $$ BEGIN
  IF current_setting('server_version_num')::int >= 190000 THEN
    PERFORM set_config('auto_explain.log_extension_options', 'vexec', false);
  END IF;
END $$;
SELECT log_marker('vexec');
SELECT k, sum(v) FROM ae GROUP BY k ORDER BY k LIMIT 2;
SELECT logged_plans('vexec', 'FROM ae GROUP BY k');

RESET auto_explain.log_min_duration;
DROP TABLE ae;
DROP FUNCTION log_marker, logged_plans, ae_groups;

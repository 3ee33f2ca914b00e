-- EXPLAIN (VEXEC): registered through the extension EXPLAIN option API.
CREATE TABLE vt (a int, b text, d numeric);
INSERT INTO vt SELECT g, 'b' || (g % 10), g / 7.0 FROM generate_series(1, 1000) g;
ANALYZE vt;

-- Mode off (the default): nothing is considered.
EXPLAIN (VEXEC, COSTS OFF) SELECT b, count(*), sum(d) FROM vt WHERE a > 10 GROUP BY b ORDER BY b;
EXPLAIN (VEXEC, COSTS OFF, FORMAT JSON) SELECT * FROM vt WHERE a > 10;
EXPLAIN (VEXEC, COSTS OFF, FORMAT YAML) SELECT * FROM vt WHERE a > 10;
EXPLAIN (VEXEC, COSTS OFF, FORMAT XML) SELECT * FROM vt WHERE a > 10;

-- Without the option, or with it false, nothing of vexec's is printed.
EXPLAIN (COSTS OFF) SELECT * FROM vt WHERE a > 10;
EXPLAIN (VEXEC false, COSTS OFF) SELECT * FROM vt WHERE a > 10;
EXPLAIN (VEXEC on, COSTS OFF) SELECT * FROM vt WHERE a > 10;

-- A non-boolean value is PostgreSQL's own error.
\set VERBOSITY terse
EXPLAIN (VEXEC 'sometimes') SELECT 1;
\echo :LAST_ERROR_SQLSTATE
-- An unknown option is still an unknown option.
EXPLAIN (VEXECUTE) SELECT 1;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default

-- The other modes print the mode and format the statement was planned with.
SET vexec.mode = explain;
EXPLAIN (VEXEC, COSTS OFF) SELECT * FROM vt WHERE a > 10;
SET vexec.mode = auto;
EXPLAIN (VEXEC, COSTS OFF, FORMAT JSON) SELECT * FROM vt WHERE a > 10;
SET vexec.mode = force;
EXPLAIN (VEXEC, COSTS OFF, FORMAT YAML) SELECT * FROM vt WHERE a > 10;

-- With ANALYZE, and for statements of several kinds.
EXPLAIN (VEXEC, ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT count(*) FROM vt;
EXPLAIN (VEXEC, COSTS OFF) INSERT INTO vt SELECT * FROM vt WHERE a < 0;
EXPLAIN (VEXEC, COSTS OFF) SELECT a FROM vt WHERE b = 'b1' UNION ALL SELECT a FROM vt WHERE a < 3;

-- A cached generic plan reports the mode it was planned in; changing
-- vexec.mode invalidates it, so the next execution is planned anew.
CREATE FUNCTION explain_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (VEXEC, COSTS OFF) ' || q LOOP RETURN NEXT ln; END LOOP;
END $$;
RESET vexec.mode;
SET plan_cache_mode = force_generic_plan;
PREPARE p(int) AS SELECT * FROM vt WHERE a > $1;
EXECUTE p(995);
EXPLAIN (VEXEC, COSTS OFF) EXECUTE p(995);
SET vexec.mode = explain;
-- Planned anew in explain mode. PostgreSQL 19 keeps the report in the plan,
-- so it follows the cached plan; PostgreSQL 18 has nowhere to keep it, and
-- EXPLAIN EXECUTE of a cached plan prints no alternatives there.
SELECT CASE WHEN current_setting('server_version_num')::int >= 190000
            THEN bool_or(l = 'Vexec: mode explain, format postgres')
            ELSE bool_or(l = 'Vexec: no vector alternatives were considered') END AS as_expected
FROM explain_lines('EXECUTE p(995)') l;
RESET vexec.mode;
EXPLAIN (VEXEC, COSTS OFF) EXECUTE p(995);
DEALLOCATE p;
-- Alternatives are recorded only while an EXPLAIN with VEXEC on plans the
-- statement. A generic plan EXECUTE made has the summary only (on
-- PostgreSQL 18, no report at all); a custom plan that EXPLAIN (VEXEC)
-- EXECUTE makes itself lists them; an EXPLAIN (VEXEC) that fails in
-- planning leaves the next plans unrecorded.
SET vexec.mode = force;
PREPARE q(int) AS SELECT * FROM vt WHERE a > $1;
EXECUTE q(999);
SELECT CASE WHEN current_setting('server_version_num')::int >= 190000
            THEN bool_or(l = 'Vexec: mode force, format postgres')
                 AND bool_or(l = '  alternatives not recorded: the plan was made outside EXPLAIN (VEXEC)')
            ELSE bool_or(l = 'Vexec: no vector alternatives were considered') END AS summary_only,
       bool_or(l LIKE '  VecScan on vt%') AS alternatives_listed
FROM explain_lines('EXECUTE q(999)') l;
EXPLAIN (VEXEC false, COSTS OFF) EXECUTE q(999);
SET plan_cache_mode = force_custom_plan;
-- (PostgreSQL 18 keeps reports by plan address, and the plan cache hands
-- EXPLAIN EXECUTE a copy: no report there.)
SELECT bool_or(l = '  VecScan on vt: chosen')
       = (current_setting('server_version_num')::int >= 190000) AS as_expected
FROM explain_lines('EXECUTE q(999)') l;
EXPLAIN (VEXEC, COSTS OFF) SELECT 1 / 0 FROM vt;
SET plan_cache_mode = force_generic_plan;
PREPARE r(int) AS SELECT * FROM vt WHERE a > $1;
EXECUTE r(999);
SELECT bool_or(l LIKE '  VecScan on vt%') AS alternatives_listed
FROM explain_lines('EXECUTE r(999)') l;
DEALLOCATE q;
DEALLOCATE r;
RESET vexec.mode;
RESET plan_cache_mode;
DROP FUNCTION explain_lines(text);
DROP TABLE vt;

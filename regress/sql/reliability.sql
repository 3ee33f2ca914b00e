-- Plans any user can reach that once crashed the server or changed an
-- answer (issue 40), run as an unprivileged role in modes off, auto and
-- force:
--   * VecAgg over a row input (a Seq Scan, an Index Scan, a CTE Scan, a
--     gating Result) with numeric sums: the parent asked its child to compute
--     scaled numerics through a VecScan's state it did not have;
--   * pseudoconstant ("gating") quals above a VecHashJoin, a VecAgg, a
--     VecSort and a VecScan: PostgreSQL runs them once in a Result's One-Time
--     Filter, never per row (a per-row filter scans both join inputs and can
--     raise errors PostgreSQL never raises).
\set SHOW_CONTEXT never
SET search_path = public;

-- modes_same(q) (helpers.sql): q's rows (as a sorted multiset) or error in
-- mode off, then whether auto and force give the same, with their vexec nodes.
-- plan_of(q, mode): the plan's node lines without costs.
CREATE FUNCTION plan_of(q text, m text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE ln text;
BEGIN
  PERFORM set_config('vexec.mode', m, true);
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP RETURN NEXT ln; END LOOP;
  PERFORM set_config('vexec.mode', 'off', true);
END $fn$;

CREATE TABLE tn (id int PRIMARY KEY, k int, n numeric(12,2));
INSERT INTO tn SELECT g, g % 100, g / 100.0 FROM generate_series(1, 300000) g;
CREATE TABLE ty (k int, y numeric(7,2));
INSERT INTO ty SELECT g % 50, g / 7.0 FROM generate_series(1, 200000) g;
CREATE TABLE dim AS SELECT g AS id, g % 1000 AS cat FROM generate_series(0, 199999) g;
VACUUM ANALYZE tn;
VACUUM ANALYZE ty;
VACUUM ANALYZE dim;

CREATE ROLE vexec_user;
GRANT SELECT ON tn, ty, dim TO vexec_user;
GRANT CREATE ON SCHEMA public TO vexec_user;
SET SESSION AUTHORIZATION vexec_user;
SET max_parallel_workers_per_gather = 0;

-- VecAgg over row inputs with numeric sums: an index scan (auto picks it),
-- a materialized CTE, a scan VecScan refuses (system column, whole-row
-- reference), and a plain Seq Scan (VecScan disabled).
SELECT modes_same($$SELECT k, sum(n) FROM tn WHERE id < 20000 GROUP BY k$$);
SELECT modes_same($$SELECT k, sum(n), avg(n), count(n) FROM tn WHERE id < 20000 GROUP BY k$$);
SELECT modes_same($$WITH r AS MATERIALIZED (SELECT k, y FROM ty) SELECT k, sum(y) FROM r GROUP BY k$$);
SELECT modes_same($$SELECT sum(n) FROM tn WHERE xmin <> '0'::xid$$);
SELECT modes_same($$SELECT avg(n) FROM tn t WHERE t IS NOT NULL$$);
SET vexec.enable_scan = off;
SELECT modes_same($$SELECT sum(n), avg(n * 2) FROM tn$$);
SELECT modes_same($$SELECT k, sum(n + 1) FROM tn GROUP BY k$$);
RESET vexec.enable_scan;
-- The plans: a VecAgg whose input is a row node.
SELECT * FROM plan_of($$SELECT k, sum(n) FROM tn WHERE id < 20000 GROUP BY k$$, 'auto');
SELECT * FROM plan_of($$SELECT sum(n) FROM tn WHERE xmin <> '0'::xid$$, 'force');

-- Gating quals. my.flag is off, so PostgreSQL scans nothing and the
-- division by zero in the other qual is never evaluated.
SET my.flag = 'off';
SELECT modes_same($$SELECT count(*) FROM dim b JOIN dim d ON b.id = d.id
  WHERE current_setting('my.flag') = 'on' AND d.cat / (d.cat - 5) > 0$$);
SELECT modes_same($$SELECT b.cat, count(*) FROM dim b LEFT JOIN dim d ON b.id = d.id + 1
  WHERE current_setting('my.flag') = 'on' GROUP BY b.cat$$);
SELECT modes_same($$SELECT count(*) FROM dim b WHERE EXISTS (SELECT FROM dim d WHERE d.id = b.id
  AND current_setting('my.flag') = 'on')$$);
SELECT modes_same($$SELECT cat, sum(id) FROM dim WHERE current_setting('my.flag') = 'on' AND cat / (cat - 5) > 0 GROUP BY cat$$);
SELECT modes_same($$SELECT id FROM dim WHERE current_setting('my.flag') = 'on' ORDER BY cat, id LIMIT 5$$);
-- A join's gate, a scan's gate: a Result's One-Time Filter, as in mode off.
SELECT * FROM plan_of($$SELECT count(*) FROM dim b JOIN dim d ON b.id = d.id
  WHERE current_setting('my.flag') = 'on' AND d.cat / (d.cat - 5) > 0$$, 'off');
SELECT * FROM plan_of($$SELECT count(*) FROM dim b JOIN dim d ON b.id = d.id
  WHERE current_setting('my.flag') = 'on' AND d.cat / (d.cat - 5) > 0$$, 'force');
SELECT * FROM plan_of($$SELECT cat, sum(id) FROM dim WHERE current_setting('my.flag') = 'on' GROUP BY cat$$, 'force');
-- The gate open: the same rows as off, and now the division error.
SET my.flag = 'on';
SELECT modes_same($$SELECT count(*) FROM dim b JOIN dim d ON b.id = d.id
  WHERE current_setting('my.flag') = 'on' AND d.cat > 990$$);
SELECT modes_same($$SELECT count(*) FROM dim b JOIN dim d ON b.id = d.id
  WHERE current_setting('my.flag') = 'on' AND d.cat / (d.cat - 5) > 0$$);
SELECT modes_same($$SELECT cat, sum(id) FROM dim WHERE current_setting('my.flag') = 'on' AND cat < 3 GROUP BY cat$$);
-- A gate over a VecAgg's input: the VecAgg reads the Result's rows.
SELECT modes_same($$SELECT k, sum(n) FROM tn WHERE current_setting('my.flag') = 'on' AND k < 3 GROUP BY k$$);
RESET my.flag;

-- Debug settings are for superusers.
SET vexec.debug_require_vector = on;
SET vexec.debug_batch_size = 7;
SET vexec.debug_force_fallback = on;

RESET SESSION AUTHORIZATION;
DROP TABLE tn, ty, dim;
REVOKE CREATE ON SCHEMA public FROM vexec_user;
DROP ROLE vexec_user;

-- pg_hint_plan and vector paths (issue 50). A vector scan is a sequential
-- scan and VecHashJoin a hash join: each is disabled wherever a hint
-- disables PostgreSQL's own (plan/enabled.rs), so the plan a hint asks for
-- holds in auto; in force too, where the hint wins over force's preference
-- (force only disables the row nodes vexec replaces). The main schedule
-- LOADs pg_hint_plan (its hooks run around vexec's), the tools schedule
-- preloads it before vexec (vexec's run around its): the same output.
-- PostgreSQL 18 differs (hints_1.out): pg_hint_plan 1.8 rebuilds a hinted
-- relation's paths without vexec's, so that relation is read by
-- PostgreSQL's own scan (docs/tools.md).
SET search_path = public;
LOAD 'pg_hint_plan';
SET max_parallel_workers_per_gather = 2;

CREATE TABLE ha (id int, k int, v int);
INSERT INTO ha SELECT g, g % 10, g FROM generate_series(1, 200000) g;
CREATE INDEX ha_id_idx ON ha (id);
CREATE TABLE hb (id int, w int);
INSERT INTO hb SELECT g, g % 100 FROM generate_series(1, 200000, 2) g;
CREATE INDEX hb_id_idx ON hb (id);
-- (Samples as large as the tables: the same statistics every run.)
ALTER TABLE ha ALTER COLUMN id SET STATISTICS 1000;
ALTER TABLE hb ALTER COLUMN id SET STATISTICS 1000;
ANALYZE ha, hb;

-- The node lines of q's plan under `hint` in each vexec mode.
CREATE FUNCTION hinted(hint text, q text, modes text[] DEFAULT ARRAY['off', 'auto', 'force'])
RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE m text; ln text;
BEGIN
  FOREACH m IN ARRAY modes LOOP
    PERFORM set_config('vexec.mode', m, true);
    RETURN NEXT m || ':';
    FOR ln IN EXECUTE format('%s EXPLAIN (COSTS OFF) %s',
                             CASE WHEN hint <> '' THEN '/*+ ' || hint || ' */' END, q) LOOP
      IF ln !~ '^\s*(->\s*)?[A-Z][A-Za-z ]*:' THEN
        RETURN NEXT '  ' || ln;
      END IF;
    END LOOP;
  END LOOP;
END $fn$;

-- Scan hints. Unhinted, the aggregate is vector in auto and force.
SELECT hinted('', 'SELECT k, sum(v) FROM ha WHERE id > 1000 GROUP BY k');
-- The issue's case: the index scan the hint names, in every mode.
SELECT hinted('IndexScan(ha ha_id_idx)', 'SELECT k, sum(v) FROM ha WHERE id > 1000 GROUP BY k');
SELECT hinted('NoSeqScan(ha)', 'SELECT k, sum(v) FROM ha WHERE id > 1000 GROUP BY k');
SELECT hinted('BitmapScan(ha)', 'SELECT k, sum(v) FROM ha WHERE id > 1000 GROUP BY k');
SELECT hinted('IndexOnlyScan(ha)', 'SELECT count(id) FROM ha WHERE id > 1000');
-- An index scan that is PostgreSQL's choice anyway: a vector aggregate may
-- read it, a vector scan must not replace it.
SELECT hinted('IndexScan(ha)', 'SELECT k, sum(v) FROM ha WHERE id > 150000 GROUP BY k');
-- SeqScan: a vector scan is a sequential scan, so it may serve (19).
SELECT hinted('SeqScan(ha)', 'SELECT k, sum(v) FROM ha WHERE id > 1000 GROUP BY k');

-- Join hints. A HashJoin hint allows VecHashJoin (a hash join); the others
-- disable it.
SELECT hinted('', 'SELECT count(*) FROM ha JOIN hb USING (id)');
SELECT hinted('HashJoin(ha hb)', 'SELECT count(*) FROM ha JOIN hb USING (id)');
SELECT hinted('NoHashJoin(ha hb)', 'SELECT count(*) FROM ha JOIN hb USING (id)');
SELECT hinted('NestLoop(ha hb)', 'SELECT count(*) FROM ha JOIN hb USING (id)');
SELECT hinted('MergeJoin(ha hb)', 'SELECT count(*) FROM ha JOIN hb USING (id)');
-- Leading fixes the order (the first relation is the outer, probing side).
SELECT hinted('Leading((hb ha)) HashJoin(ha hb)', 'SELECT count(*) FROM ha JOIN hb USING (id)');
SELECT hinted('Leading((ha hb)) HashJoin(ha hb)', 'SELECT count(*) FROM ha JOIN hb USING (id)');
-- Rows: the corrected estimate is the one vector paths are costed on (here
-- it makes sorting the few joined rows cheap in auto, as in off).
SELECT hinted('Rows(ha hb #10)', 'SELECT hb.w, count(*) FROM ha JOIN hb USING (id) GROUP BY hb.w');

-- Parallel: workers as the hint says, none with 0. (On 18 force's vector
-- aggregate wins over the hint: see hints_1.out.)
SELECT hinted('Parallel(ha 2 hard)', 'SELECT k, sum(v) FROM ha GROUP BY k');
SELECT hinted('Parallel(ha 0 hard)', 'SELECT k, sum(v) FROM ha GROUP BY k');

-- Set() of vexec's own settings.
SELECT hinted('Set(vexec.mode off)', 'SELECT k, sum(v) FROM ha GROUP BY k', ARRAY['auto', 'force']);
SELECT hinted('Set(vexec.enable_agg off)', 'SELECT k, sum(v) FROM ha GROUP BY k', ARRAY['auto', 'force']);
SELECT hinted('Set(vexec.enable_scan off)', 'SELECT k, sum(v) FROM ha GROUP BY k', ARRAY['auto', 'force']);
SELECT hinted('Set(vexec.enable_hashjoin off)', 'SELECT count(*) FROM ha JOIN hb USING (id)', ARRAY['auto', 'force']);

-- EXPLAIN (VEXEC) says why the vector scan lost.
SET vexec.mode = auto;
/*+ IndexScan(ha ha_id_idx) */ EXPLAIN (VEXEC, COSTS OFF) SELECT k, sum(v) FROM ha WHERE id > 1000 GROUP BY k;
RESET vexec.mode;

-- Hinted answers are the same in every mode (the hint heads the statement
-- that wraps q, as pg_hint_plan wants it).
CREATE FUNCTION hinted_answers(hint text, q text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE m text; r text;
BEGIN
  FOREACH m IN ARRAY ARRAY['off', 'auto', 'force'] LOOP
    PERFORM set_config('vexec.mode', m, true);
    EXECUTE format('/*+ %s */ SELECT count(*) || '' rows, md5 '' || left(md5(string_agg(x::text, '','' ORDER BY x::text)), 12) FROM (%s) x',
                   hint, q) INTO r;
    RETURN NEXT m || ': ' || r;
  END LOOP;
END $fn$;
SELECT hinted_answers('IndexScan(ha ha_id_idx) NestLoop(ha hb)',
  'SELECT hb.w, count(*), sum(ha.v) FROM ha JOIN hb USING (id) WHERE ha.id > 1000 GROUP BY hb.w');
SELECT hinted_answers('Leading((hb ha)) HashJoin(ha hb) Parallel(ha 2 hard)',
  'SELECT hb.w, count(*), sum(ha.v) FROM ha JOIN hb USING (id) GROUP BY hb.w');
DROP TABLE ha, hb;
DROP FUNCTION hinted, hinted_answers;

-- The arrow batch layout (vexec.batch_format = arrow and the per-type
-- layout settings): every answer equals PostgreSQL's, whichever columns a
-- batch holds in which layout, and EXPLAIN (ANALYZE, VERBOSE) counts the
-- arrow columns and the conversions back.
SET search_path = public;
SET vexec.min_rows = 0;

-- Every type with an arrow form, its edges: infinities, timestamps past
-- the Unix-epoch int64 (294247 AD on), numeric NaN, 38 digits, NULLs;
-- strings empty, of 12 and 13 bytes (inline views and not), non-ASCII,
-- padded (bpchar), binary, compressed and external (TOASTed: their batch
-- keeps the postgres layout).
CREATE TABLE lay (id int, b bool, d date, ts timestamp, tz timestamptz,
                  n numeric(12,2), w numeric(38,4), u numeric, t text,
                  v varchar(20), c char(8), y bytea, big text);
INSERT INTO lay SELECT g,
  CASE WHEN g % 7 = 0 THEN NULL ELSE g % 3 = 0 END,
  CASE WHEN g % 11 = 0 THEN NULL WHEN g = 5 THEN 'infinity' WHEN g = 6 THEN '-infinity'
       ELSE date '1969-12-25' + g * 17 END,
  CASE WHEN g = 8 THEN 'infinity' WHEN g = 9 THEN '-infinity' WHEN g = 4001 THEN '294270-01-01'
       WHEN g % 13 = 0 THEN NULL ELSE timestamp '1969-12-31 23:00' + g * interval '77 minutes' END,
  timestamptz '2000-01-01 00:00+00' - g * interval '1 minute 1 second',
  CASE WHEN g = 3001 THEN 'NaN' WHEN g % 17 = 0 THEN NULL ELSE g * 1.25 - 2500 END,
  CASE WHEN g = 2 THEN 9999999999999999999999999999999999.9999 ELSE g * 1234567.8901 END,
  g / 7.0, 'x' || g,
  CASE WHEN g % 19 = 0 THEN NULL WHEN g % 5 = 0 THEN '' WHEN g % 5 = 1 THEN 'twelve bytes'
       WHEN g % 5 = 2 THEN 'thirteen byte' || (g % 3) ELSE 'väl ' || (g % 41) END,
  CASE WHEN g % 23 = 0 THEN NULL ELSE 'c' || (g % 37) END,
  CASE WHEN g % 29 = 0 THEN NULL ELSE decode(lpad(to_hex(g % 300), 4, '0') || '00ff', 'hex') END,
  CASE WHEN g % 997 = 0 THEN repeat('compressible ', 400)
       WHEN g % 1499 = 0 THEN (SELECT string_agg(md5(g::text || i), '') FROM generate_series(1, 300) i)
       ELSE 'small ' || (g % 10) END
FROM generate_series(1, 6000) g;
ANALYZE lay;

-- off (PostgreSQL) against force in the postgres layout, the arrow layout,
-- each type alone in it, and random layouts per column and batch.
CREATE FUNCTION layouts_same(q text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  runs text[] := ARRAY['off', 'force', 'force arrow', 'force bool', 'force temporal', 'force numeric',
                       'force view', 'force offsets', 'force random 1', 'force random 2', 'force random 3'];
  run text; h text; h_off text; e text; e_off text; out text := '';
BEGIN
  FOREACH run IN ARRAY runs LOOP
    PERFORM set_config('vexec.mode', split_part(run, ' ', 1), true);
    PERFORM set_config('vexec.batch_format', CASE WHEN run = 'force arrow' THEN 'arrow' ELSE 'postgres' END, true);
    PERFORM set_config('vexec.bool_layout', CASE WHEN run = 'force bool' THEN 'bit' ELSE 'auto' END, true);
    PERFORM set_config('vexec.temporal_layout', CASE WHEN run = 'force temporal' THEN 'unix' ELSE 'auto' END, true);
    PERFORM set_config('vexec.numeric_layout', CASE WHEN run = 'force numeric' THEN 'decimal128' ELSE 'auto' END, true);
    PERFORM set_config('vexec.varlena_layout', CASE WHEN run IN ('force view', 'force offsets') THEN split_part(run, ' ', 2) ELSE 'auto' END, true);
    PERFORM set_config('vexec.debug_random_layout', coalesce(nullif(split_part(run, ' ', 3), ''), '0'), true);
    h := NULL; e := NULL;
    BEGIN
      EXECUTE format('SELECT count(*) || '' rows, md5 '' || left(md5(coalesce(string_agg(x::text, E''\n'' ORDER BY x::text), '''')), 12) FROM (%s) x', q) INTO h;
    EXCEPTION WHEN OTHERS THEN e := SQLSTATE || ': ' || SQLERRM; END;
    IF run = 'off' THEN
      h_off := h; e_off := e; out := coalesce('error ' || e, h);
    ELSIF h IS DISTINCT FROM h_off OR e IS DISTINCT FROM e_off THEN
      out := out || format('; %s DIFFERENT: %s', run, coalesce('error ' || e, h));
    END IF;
  END LOOP;
  RETURN out || '; every layout same';
END $fn$;

SET vexec.debug_batch_size = 100;  -- 60 batches: NaN and the far timestamp in one each
SELECT layouts_same('SELECT * FROM lay WHERE b');
SELECT layouts_same('SELECT id, d, ts FROM lay WHERE d >= date ''1970-01-01'' AND d < ''infinity''');
SELECT layouts_same('SELECT id FROM lay WHERE d > ''-infinity'' AND d <= date ''1975-06-01''');
SELECT layouts_same('SELECT id FROM lay WHERE d = ''infinity'' OR d = ''-infinity''');
SELECT layouts_same('SELECT id, ts FROM lay WHERE ts < timestamp ''1970-01-02''');
SELECT layouts_same('SELECT id, ts FROM lay WHERE ts >= timestamp ''1970-03-01'' AND ts < ''infinity''');
SELECT layouts_same('SELECT id FROM lay WHERE ts > timestamp ''294250-01-01''');  -- constant past the Unix range
SELECT layouts_same('SELECT id FROM lay WHERE tz BETWEEN timestamptz ''1999-12-30 00:00+00'' AND ''1999-12-31 12:00+00''');
SELECT layouts_same('SELECT id, n FROM lay WHERE n > 0 AND n < 100');
SELECT layouts_same('SELECT id, w FROM lay WHERE w > 1000000000');
SELECT layouts_same('SELECT d - date ''2000-01-01'', extract(year FROM d), b IS TRUE, n * 2, n + w FROM lay WHERE id % 5 = 0 AND d < ''infinity'' AND d > ''-infinity''');
SELECT layouts_same('SELECT count(*), count(b), sum(n), sum(w), avg(n), min(d), max(d), min(ts), max(ts), max(tz) FROM lay');
SELECT layouts_same('SELECT sum(n), sum(w), count(*) FROM lay WHERE id <> 3001');
SELECT layouts_same('SELECT b, count(*), sum(n) FROM lay GROUP BY b');
SELECT layouts_same('SELECT d, count(*), min(ts), sum(w) FROM lay GROUP BY d');
SELECT layouts_same('SELECT date_trunc(''month'', ts) m, count(*) FROM lay WHERE ts < ''infinity'' AND ts > ''-infinity'' AND id <> 4001 GROUP BY 1');
SELECT layouts_same('SELECT id, d, ts, n FROM lay ORDER BY d, ts, id LIMIT 50');
SELECT layouts_same('SELECT id, b, d, n FROM lay ORDER BY n DESC NULLS LAST, id LIMIT 30');
SELECT layouts_same('SELECT a.id, a.d, b.ts, b.n FROM lay a JOIN lay b ON a.d = b.d WHERE a.id % 3 = 0');
SELECT layouts_same('SELECT a.id, b.b, b.w FROM lay a JOIN lay b ON a.id = b.id + 1 WHERE a.b');
SELECT layouts_same('SELECT id, u, t FROM lay WHERE u > 800');  -- unconstrained numeric: no arrow form
-- Strings: equality with short and long constants, ranges, IN, LIKE,
-- lengths, column against column, bpchar padding, bytea, TOASTed values,
-- and the nodes above the scan (GROUP BY, ORDER BY, join keys).
SELECT layouts_same('SELECT id, v FROM lay WHERE v = ''twelve bytes''');
SELECT layouts_same('SELECT id FROM lay WHERE v = ''thirteen byte1'' OR v <> ''väl 3''');
SELECT layouts_same('SELECT id, v FROM lay WHERE v > ''thirteen'' AND v < ''väl 2'' COLLATE "C"');
SELECT layouts_same('SELECT id FROM lay WHERE v IN (''twelve bytes'', ''väl 7'', '''')');
SELECT layouts_same('SELECT id, v FROM lay WHERE v LIKE ''th%1'' OR v LIKE ''%l 1%'' OR v NOT LIKE ''_%''');
SELECT layouts_same('SELECT length(v), octet_length(v), char_length(c), octet_length(c), length(y), id FROM lay WHERE id % 7 = 1');
SELECT layouts_same('SELECT id FROM lay WHERE t > v COLLATE "C" AND v IS DISTINCT FROM ''x'' || id % 3');
SELECT layouts_same('SELECT id, c FROM lay WHERE c = ''c5'' OR c = ''c5   ''::char(8)');
SELECT layouts_same('SELECT id, y FROM lay WHERE y = ''\x002a00ff''::bytea OR y > ''\x0120''::bytea');
SELECT layouts_same('SELECT id, length(big) FROM lay WHERE big LIKE ''%compressible%'' OR big LIKE ''a%'' OR length(big) > 100');
SELECT layouts_same('SELECT id FROM lay WHERE big = ''small 3''');
SELECT layouts_same('SELECT v, count(*), min(c), max(t) FROM lay WHERE v <> ''twelve bytes'' GROUP BY v');
SELECT layouts_same('SELECT id, v, c FROM lay WHERE v LIKE ''%e%'' ORDER BY v, c, id LIMIT 40');
SELECT layouts_same('SELECT a.id, b.id, a.v FROM lay a JOIN lay b ON a.v = b.v || '''' WHERE a.c = ''c1'' AND b.c = ''c2'' AND b.v LIKE ''t%''');
RESET vexec.debug_batch_size;

-- What EXPLAIN says: the layout, the columns the scan put in it, and the
-- conversions for kernels (date - date) and for the nodes above the scan.
-- (Pages Pinned Directly depends on where shared buffers put the pages: left out.)
CREATE FUNCTION explain_layout(q text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    CONTINUE WHEN ln ~ 'Pages Pinned Directly';
    RETURN NEXT ln;
  END LOOP;
END $fn$;
SET vexec.mode = force;
SET vexec.batch_format = arrow;
SELECT explain_layout($$SELECT count(*), sum(n) FROM lay WHERE d > date '1970-01-10' AND b AND id <> 3001$$);
SELECT explain_layout($$SELECT d, count(*) FROM lay WHERE d BETWEEN date '1970-01-01' AND date '1990-01-01'
  AND d - date '2000-01-01' < -100 GROUP BY d ORDER BY d LIMIT 1$$);
-- A batch whose value has no arrow form keeps the postgres layout (the NaN's
-- and the far timestamp's batches): fewer arrow columns, same answers.
SET vexec.debug_batch_size = 1000;
SELECT explain_layout($$SELECT count(*) FROM lay WHERE n > 0 AND ts > timestamp '1970-01-01'$$);
-- Strings: views read in place by LIKE and equality; the TOASTed values'
-- batches stay in the postgres layout.
SELECT explain_layout($$SELECT count(*) FROM lay WHERE v LIKE '%e%' AND big <> 'small 1'$$);
SELECT explain_layout($$SELECT v, count(*) FROM lay WHERE v <> '' GROUP BY v ORDER BY v LIMIT 1$$);
RESET vexec.debug_batch_size;
-- Each type alone.
SET vexec.batch_format = postgres;
SET vexec.temporal_layout = unix;
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM lay WHERE d > date '1970-01-10' AND ts < timestamp '2100-01-01';
RESET vexec.temporal_layout;
SET vexec.bool_layout = bit;
SET vexec.numeric_layout = decimal128;
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM lay WHERE b AND n > 0 AND d > date '1970-01-10';
SET vexec.varlena_layout = offsets;
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM lay WHERE v LIKE 'th%' AND c = 'c5';
RESET vexec.varlena_layout;
-- byte/varlena/datum override arrow's choice.
SET vexec.batch_format = arrow;
SET vexec.bool_layout = byte;
SET vexec.numeric_layout = varlena;
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM lay WHERE b AND n > 0 AND d > date '1970-01-10';
SET vexec.varlena_layout = datum;
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM lay WHERE v LIKE 'th%' AND c = 'c5';
RESET vexec.varlena_layout;
-- Columns no kernel reads stay as they were read (a kernel would convert them back).
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM lay WHERE id > 0;
RESET vexec.bool_layout;
RESET vexec.numeric_layout;
RESET vexec.batch_format;
-- The random layout is a superuser's debug setting.
CREATE ROLE lay_user;
SET ROLE lay_user;
SET vexec.debug_random_layout = 1;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE lay_user;
RESET vexec.mode;
DROP FUNCTION layouts_same(text);
DROP FUNCTION explain_layout(text);
DROP TABLE lay;

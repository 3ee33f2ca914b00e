-- The helpers every vexec regression file uses, defined once (this file runs
-- first in the schedule; pg_regress keeps one database for the whole run).
--
-- compare_modes(q, modes, answer, ordered, parallel) runs q with vexec.mode
-- off, then in each of `modes`, and returns
--   <off's answer or error>; <mode> same (<vexec nodes of its plan>); ...
-- or "<mode> DIFFERENT: <its answer>" where a mode disagrees. The answer is
-- q's rows as a multiset (sorted unless `ordered`), shown as
--   'rows'  the rows themselves (first 400 characters) and their count,
--   'md5'   the count and an md5 of the rows,
--   'count' the count only (for answers that differ between PostgreSQL
--           versions, such as float sums: modes still compare every row).
-- An error compares by SQLSTATE and message. With `parallel`, off runs with
-- no workers and the other modes with parallel plans made cheap.
\set SHOW_CONTEXT never
SET search_path = public;

CREATE FUNCTION compare_modes(q text, modes text[] DEFAULT ARRAY['force'],
                              answer text DEFAULT 'rows', ordered bool DEFAULT false,
                              parallel bool DEFAULT false)
RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  rows_text text := CASE WHEN ordered THEN 'string_agg(x::text, E''\n'')'
                         ELSE 'string_agg(x::text, E''\n'' ORDER BY x::text)' END;
  -- The display and an md5 of every row: modes compare on the md5.
  wrapped text := format('SELECT %s, md5(coalesce(%s, '''')) FROM (%s) x',
    CASE answer
      WHEN 'rows' THEN format('coalesce(left(%s, 400) || E''\n'', '''') || count(*) || '' rows''', rows_text)
      WHEN 'md5' THEN format('count(*) || '' rows, md5 '' || left(md5(coalesce(%s, '''')), 12)', rows_text)
      ELSE 'count(*) || '' rows''' END,
    rows_text, q);
  m text; r text; h text; e text; r_off text; h_off text; e_off text; plan text; nodes text; out text;
BEGIN
  IF answer NOT IN ('rows', 'md5', 'count') THEN
    RAISE EXCEPTION 'compare_modes: answer must be rows, md5 or count, not %', answer;
  END IF;
  FOREACH m IN ARRAY ARRAY['off'] || modes LOOP
    PERFORM set_config('vexec.mode', m, true);
    IF parallel THEN
      PERFORM set_config('max_parallel_workers_per_gather', CASE WHEN m = 'off' THEN '0' ELSE '2' END, true);
      PERFORM set_config('parallel_setup_cost', '0', true);
      PERFORM set_config('parallel_tuple_cost', '0', true);
      PERFORM set_config('min_parallel_table_scan_size', '0', true);
    END IF;
    r := NULL; h := NULL; e := NULL;
    BEGIN EXECUTE wrapped INTO r, h;
    EXCEPTION WHEN OTHERS THEN e := SQLSTATE || ': ' || SQLERRM; END;
    IF m = 'off' THEN
      r_off := r; h_off := h; e_off := e;
      out := coalesce('error ' || e, r);
      CONTINUE;
    END IF;
    BEGIN
      EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || q INTO plan;
      SELECT coalesce(string_agg(DISTINCT n[1], ', '), 'no vexec node') INTO nodes
        FROM regexp_matches(plan, '"Custom Plan Provider": "(\w+)"', 'g') n;
    EXCEPTION WHEN OTHERS THEN nodes := 'planning failed: ' || SQLERRM; END;
    IF h IS NOT DISTINCT FROM h_off AND e IS NOT DISTINCT FROM e_off THEN
      out := out || format('; %s same (%s)', m, nodes);
    ELSE
      out := out || format('; %s DIFFERENT: %s (%s)', m, coalesce('error ' || e, r), nodes);
    END IF;
  END LOOP;
  PERFORM set_config('vexec.mode', 'off', true);
  RETURN out;
END $fn$;

-- The short forms the files use.
CREATE FUNCTION same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT compare_modes(q, answer => 'count') $$;
CREATE FUNCTION agg_same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT compare_modes(q) $$;
CREATE FUNCTION par_same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT compare_modes(q, parallel => true) $$;
CREATE FUNCTION join_same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT compare_modes(q, answer => 'md5') $$;
CREATE FUNCTION pipe_same(q text, ordered bool DEFAULT false) RETURNS text LANGUAGE sql
  AS $$ SELECT compare_modes(q, answer => 'md5', ordered => ordered) $$;
CREATE FUNCTION modes_same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT compare_modes(q, ARRAY['auto', 'force']) $$;

-- A query the helpers run must not leak its settings into the next test.
SELECT compare_modes('SELECT 1 AS one'),
       compare_modes('SELECT 1/0', answer => 'md5'),
       current_setting('vexec.mode') AS mode_after;
SELECT compare_modes('SELECT 1', answer => 'nonsense');

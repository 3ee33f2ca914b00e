-- VecSort: ORDER BY over vector nodes. In force mode every query returns
-- exactly the rows, in exactly the order, that mode off returns (queries
-- order by a unique last key where ties would leave the order open).
\set SHOW_CONTEXT never
SET search_path = public;

-- ordered: compare the rows in output order; otherwise as a set.
CREATE FUNCTION sort_same(q text, ordered bool DEFAULT true) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  r_off text; r_force text; e_off text; e_force text; plan text; vec text;
  wrapped text := CASE WHEN ordered
    THEN format('SELECT string_agg(x::text, E''\n'') || E''\n'' || count(*) FROM (%s) x', q)
    ELSE format('SELECT string_agg(x::text, E''\n'' ORDER BY x::text) || E''\n'' || count(*) FROM (%s) x', q) END;
BEGIN
  PERFORM set_config('vexec.mode', 'off', true);
  BEGIN EXECUTE wrapped INTO r_off;
  EXCEPTION WHEN OTHERS THEN e_off := SQLSTATE || ': ' || SQLERRM; END;
  PERFORM set_config('vexec.mode', 'force', true);
  BEGIN EXECUTE wrapped INTO r_force;
  EXCEPTION WHEN OTHERS THEN e_force := SQLSTATE || ': ' || SQLERRM; END;
  BEGIN EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || q INTO plan;
  EXCEPTION WHEN OTHERS THEN plan := 'planning failed'; END;
  vec := CASE WHEN plan LIKE '%"Custom Plan Provider": "VecSort"%' THEN 'VecSort'
              WHEN plan = 'planning failed' THEN 'error while planning' ELSE 'row Sort' END;
  PERFORM set_config('vexec.mode', 'off', true);
  IF e_off IS NOT NULL OR e_force IS NOT NULL THEN
    RETURN CASE WHEN e_off IS NOT DISTINCT FROM e_force THEN 'same error ' || e_off
                ELSE format('DIFFERENT: off %s / force %s', coalesce(e_off, 'rows'), coalesce(e_force, 'rows')) END
           || ' (' || vec || ')';
  END IF;
  RETURN CASE WHEN r_off IS NOT DISTINCT FROM r_force
              THEN 'same ' || coalesce(split_part(r_off, E'\n', -1), '0') || ' rows'
              ELSE format('DIFFERENT: off [%s] / force [%s]', left(r_off, 300), left(r_force, 300)) END
         || ' (' || vec || ')';
END $fn$;

-- The first rows of q in force mode (a short look at what is compared).
CREATE FUNCTION sort_head(q text, n int DEFAULT 3) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('vexec.mode', 'force', true);
  RETURN QUERY EXECUTE format('SELECT x::text FROM (%s) x LIMIT %s', q, n);
  PERFORM set_config('vexec.mode', 'off', true);
END $$;

-- Whether EXPLAIN ANALYZE of q shows a VecSort, and which sort method it used.
CREATE FUNCTION sort_method(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; m text := 'no VecSort';
BEGIN
  PERFORM set_config('vexec.mode', 'force', true);
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln LIKE '%Sort Method:%' AND m <> 'no VecSort' THEN m := trim(split_part(ln, ':', 2)); END IF;
    IF ln LIKE '%Vec Sort%' THEN m := 'VecSort'; END IF;
  END LOOP;
  PERFORM set_config('vexec.mode', 'off', true);
  RETURN m;
END $$;

CREATE TABLE vso (id int, a int, b bigint, s smallint, f float8, r real, d date, ts timestamp,
                 tz timestamptz, tm time, bo bool, t text COLLATE "C", u text, vc varchar(12),
                 c char(4), n numeric(10,2), iv interval, o oid, by bytea, uu uuid);
INSERT INTO vso SELECT g,
  CASE WHEN g % 17 = 0 THEN NULL WHEN g = 5 THEN 2147483647 WHEN g = 6 THEN -2147483648 ELSE (g * 7919) % 2001 - 1000 END,
  CASE WHEN g % 13 = 0 THEN NULL WHEN g = 7 THEN 9223372036854775807 WHEN g = 8 THEN -9223372036854775808 ELSE (g * 104729) % 100003 END,
  CASE WHEN g % 11 = 0 THEN NULL WHEN g = 9 THEN 32767 WHEN g = 10 THEN -32768 ELSE g % 200 - 100 END,
  CASE WHEN g % 19 = 0 THEN NULL WHEN g % 101 = 1 THEN 'NaN' WHEN g = 103 THEN '-0' WHEN g = 104 THEN '0'
       WHEN g = 105 THEN 'infinity' WHEN g = 106 THEN '-infinity' ELSE (g % 300) / 7.0 - 20 END,
  CASE WHEN g % 37 = 0 THEN NULL WHEN g % 97 = 1 THEN 'NaN' WHEN g = 109 THEN '-0' ELSE (g % 500) / 3.0 - 80 END,
  CASE WHEN g % 23 = 0 THEN NULL WHEN g = 15 THEN 'infinity' WHEN g = 16 THEN '-infinity' ELSE date '2000-01-01' + (g % 900 - 450) END,
  CASE WHEN g % 41 = 0 THEN NULL WHEN g = 21 THEN 'infinity' ELSE timestamp '2001-02-03 04:05:06' + (g % 700) * interval '7 hours' END,
  CASE WHEN g % 43 = 0 THEN NULL ELSE timestamptz '2020-01-01 00:00+00' + (g % 50) * interval '1 day' END,
  CASE WHEN g % 6 = 0 THEN NULL ELSE time '10:00' + (g % 40) * interval '1 minute' END,
  CASE g % 3 WHEN 0 THEN NULL WHEN 1 THEN true ELSE false END,
  CASE WHEN g % 29 = 0 THEN NULL WHEN g % 31 = 0 THEN '' ELSE 'str' || (g % 97) || CASE WHEN g % 5 = 0 THEN 'é' ELSE '' END END,
  CASE WHEN g % 29 = 0 THEN NULL ELSE CASE g % 4 WHEN 0 THEN 'b' WHEN 1 THEN 'B' WHEN 2 THEN 'a' ELSE 'Ä' END || (g % 53) END,
  CASE WHEN g % 8 = 0 THEN NULL ELSE 'v' || (g % 60) END,
  CASE WHEN g % 9 = 0 THEN NULL WHEN g % 2 = 0 THEN 'ab' ELSE 'ab ' || (g % 3) END,
  CASE WHEN g % 7 = 0 THEN NULL ELSE (g % 400) / 8.0 - 20 END,
  CASE WHEN g % 5 = 0 THEN NULL ELSE (g % 30) * interval '1 hour' - interval '1 day' END,
  (g % 4 + 4294967290)::oid,
  CASE WHEN g % 7 = 0 THEN NULL ELSE decode(to_hex(g % 300), 'escape') END,
  CASE WHEN g % 10 = 0 THEN NULL ELSE md5((g % 250)::text)::uuid END
FROM generate_series(1, 3000) g;
-- Long values, stored compressed or out of line (TOAST), as keys and not.
INSERT INTO vso (id, a, t, u) SELECT 3000 + g, g, repeat('zz' || g, 5000), repeat(md5(g::text), 300) FROM generate_series(1, 3) g;
ANALYZE vso;

-- The plans: a Vec Sort over a Vec Seq Scan, over a Vec Aggregate, with a
-- top-N bound from LIMIT/OFFSET; the keys as PostgreSQL's Sort shows them.
SET vexec.mode = force;
EXPLAIN (COSTS OFF) SELECT id, a FROM vso ORDER BY a DESC, id;
EXPLAIN (COSTS OFF, VERBOSE) SELECT id, t FROM vso WHERE a > 0 ORDER BY t NULLS FIRST, f DESC NULLS LAST, id LIMIT 5 OFFSET 2;
EXPLAIN (COSTS OFF) SELECT bo, count(*) FROM vso GROUP BY bo ORDER BY count(*) DESC, bo;
EXPLAIN (COSTS OFF) SELECT id FROM vso ORDER BY u COLLATE "C", n USING >, id;
EXPLAIN (VEXEC, COSTS OFF) SELECT id, a FROM vso ORDER BY a, id LIMIT 3;
-- Refusals: vexec.enable_sort off; an input without a vector path.
SET vexec.enable_sort = off;
EXPLAIN (VEXEC, COSTS OFF) SELECT id, a FROM vso ORDER BY a, id;
RESET vexec.enable_sort;
EXPLAIN (VEXEC, COSTS OFF) SELECT * FROM (VALUES (2), (1)) v(x) ORDER BY x;
-- enable_sort = off counts a VecSort as a disabled node, as it counts a
-- Sort: with both disabled they compete on cost.
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT id, a FROM vso ORDER BY a, id;
RESET enable_sort;
RESET vexec.mode;

SELECT sort_head($$SELECT id, f FROM vso ORDER BY f DESC, id$$, 4);
SELECT sort_head($$SELECT id, u FROM vso ORDER BY u NULLS FIRST, id$$, 4);

-- Every key type in both directions and both NULL orders.
SELECT sort_same($$SELECT id, a FROM vso ORDER BY a, id$$);
SELECT sort_same($$SELECT id, a FROM vso ORDER BY a DESC NULLS LAST, id DESC$$);
SELECT sort_same($$SELECT id, b, s FROM vso ORDER BY b NULLS FIRST, s DESC, id$$);
SELECT sort_same($$SELECT id, s FROM vso ORDER BY s DESC NULLS FIRST, id$$);
SELECT sort_same($$SELECT id, f FROM vso ORDER BY f, id$$);
SELECT sort_same($$SELECT id, f FROM vso ORDER BY f DESC, id$$);
SELECT sort_same($$SELECT id, r FROM vso ORDER BY r NULLS FIRST, id DESC$$);
SELECT sort_same($$SELECT id, d, ts FROM vso ORDER BY d DESC, ts, id$$);
SELECT sort_same($$SELECT id, tz, tm FROM vso ORDER BY tz NULLS FIRST, tm DESC, id$$);
SELECT sort_same($$SELECT id, bo FROM vso ORDER BY bo DESC, id$$);
SELECT sort_same($$SELECT id, left(t, 20) FROM vso ORDER BY t, id$$);
SELECT sort_same($$SELECT id, left(t, 20) FROM vso ORDER BY t DESC NULLS LAST, id$$);
SELECT sort_same($$SELECT id, left(u, 20) FROM vso ORDER BY u, id$$);
SELECT sort_same($$SELECT id, left(u, 20) FROM vso ORDER BY u COLLATE "C" DESC, id$$);
SELECT sort_same($$SELECT id, vc, c FROM vso ORDER BY vc, c DESC, id$$);
SELECT sort_same($$SELECT id, n, iv FROM vso ORDER BY n DESC, iv, id$$);
SELECT sort_same($$SELECT id, o, by, uu FROM vso ORDER BY o DESC, by, uu NULLS FIRST, id$$);
-- Keys that are expressions, keys not in the output, USING operators.
SELECT sort_same($$SELECT id FROM vso ORDER BY a % 10, upper(u), id$$);
SELECT sort_same($$SELECT id, a FROM vso WHERE a BETWEEN -100 AND 100 ORDER BY abs(a), a USING >, id USING <$$);
SELECT sort_same($$SELECT id, length(t) FROM vso ORDER BY length(t) DESC, id$$);
-- The same key twice, a constant key, a key equal to a constant.
SELECT sort_same($$SELECT id, a FROM vso WHERE s = 5 ORDER BY s, a, a DESC, 1 + 1, id$$);

-- LIMIT and OFFSET: a top-N sort with its bound; WITH TIES.
SELECT sort_same($$SELECT id, a FROM vso ORDER BY a, id LIMIT 10$$);
SELECT sort_same($$SELECT id, f FROM vso ORDER BY f DESC NULLS LAST, id LIMIT 7 OFFSET 5$$);
SELECT sort_same($$SELECT id, u FROM vso ORDER BY u, id OFFSET 2990$$);
SELECT sort_same($$SELECT id, bo FROM vso ORDER BY bo FETCH FIRST 3 ROWS WITH TIES$$, false);
SELECT sort_same($$SELECT id, s FROM vso ORDER BY s DESC FETCH FIRST 5 ROWS WITH TIES$$, false);
SELECT sort_same($$SELECT id, a FROM vso ORDER BY a, id LIMIT 0$$);
SELECT sort_same($$SELECT id FROM vso WHERE false ORDER BY a, id$$);
-- Past a few thousand rows the top-N sort cuts back to its bound (and ties).
CREATE TABLE vso_big AS SELECT g AS id, g % 7 AS k, (g * 7919) % 100000 AS v, 'w' || (g % 1000) AS w,
  CASE WHEN g % 11 = 0 THEN NULL ELSE g % 500 END AS nk
  FROM generate_series(1, 30000) g;
ANALYZE vso_big;
SELECT sort_method($$SELECT * FROM vso_big ORDER BY v DESC, id LIMIT 5$$);
SELECT sort_same($$SELECT * FROM vso_big ORDER BY v DESC, id LIMIT 5$$);
SELECT sort_same($$SELECT * FROM vso_big ORDER BY w, id LIMIT 5$$);
SELECT sort_same($$SELECT id, k FROM vso_big ORDER BY k FETCH FIRST 2 ROWS WITH TIES$$, false);
-- After a cut, rows sorting after the last kept row are dropped on arrival
-- (compared by the keys' own comparators, NULLs placed as the keys say).
SELECT sort_same($$SELECT id, nk FROM vso_big ORDER BY nk NULLS FIRST, id LIMIT 7$$);
SELECT sort_same($$SELECT id, nk, w FROM vso_big ORDER BY nk DESC, w DESC, id LIMIT 12$$);
SELECT sort_same($$SELECT id, nk, w FROM vso_big ORDER BY w DESC NULLS LAST, nk NULLS FIRST, id LIMIT 30$$);
SELECT sort_same($$SELECT id, nk FROM vso_big ORDER BY nk DESC NULLS LAST FETCH FIRST 100 ROWS WITH TIES$$, false);
SELECT sort_same($$SELECT id, k FROM vso_big ORDER BY k DESC, w, id LIMIT 9000$$);
-- Set-returning functions after the sort: no bound.
SELECT sort_same($$SELECT id, generate_series(1, a % 3) FROM vso WHERE a IS NOT NULL ORDER BY a, id LIMIT 8$$);

-- Over a VecAgg (rows from the aggregate).
SELECT sort_same($$SELECT bo, count(*), sum(a) FROM vso GROUP BY bo ORDER BY count(*) DESC, bo$$);
SELECT sort_same($$SELECT t, count(*) AS c FROM vso GROUP BY t ORDER BY c DESC, t LIMIT 10$$);
SELECT sort_same($$SELECT a % 7, max(f), min(u) FROM vso GROUP BY 1 ORDER BY 2 DESC NULLS LAST, 1$$);
SELECT sort_same($$SELECT count(*) FROM vso ORDER BY 1$$);
-- Top-N over many groups: cuts and early drops on rows from the aggregate.
SELECT sort_same($$SELECT v % 20011 AS g, count(*), max(w) FROM vso_big GROUP BY 1 ORDER BY 2 DESC, 3 DESC, 1 LIMIT 6$$);
SELECT sort_same($$SELECT w, nk, count(*) FROM vso_big GROUP BY w, nk ORDER BY nk NULLS FIRST, w LIMIT 15$$);

-- Past work_mem the rows go to PostgreSQL's tuplesort (spill to disk).
SET work_mem = '64kB';
SELECT sort_method($$SELECT * FROM vso ORDER BY d DESC, u, id$$);
SELECT sort_same($$SELECT * FROM vso ORDER BY d DESC, u, id$$);
SELECT sort_same($$SELECT * FROM vso_big ORDER BY w DESC, k, id$$);
SELECT sort_same($$SELECT k, w, count(*) FROM vso_big GROUP BY k, w ORDER BY w, k$$);
SELECT sort_same($$SELECT * FROM vso_big ORDER BY v, id LIMIT 20000$$);
RESET work_mem;

-- Errors raised by the input (computed sort keys) are PostgreSQL's.
SELECT sort_same($$SELECT id, 10 / (a - a) FROM vso ORDER BY 2, id$$);
SELECT sort_same($$SELECT id FROM vso ORDER BY (a::int2), id$$);

-- Rescans: under a correlated subquery (parameters change) and under a
-- nested loop without materialization (they do not).
SELECT sort_same($$SELECT id, (SELECT v FROM vso_big b WHERE b.k = vso.s % 7 ORDER BY v DESC, id LIMIT 1) FROM vso WHERE id < 40 ORDER BY id$$);
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT sort_same($$SELECT x, s.* FROM (VALUES (1), (2), (3)) v(x), (SELECT id, a FROM vso ORDER BY a DESC NULLS LAST, id LIMIT 4) s ORDER BY x, a DESC, id$$);
SELECT sort_same($$SELECT x, s.* FROM (VALUES (1), (2)) v(x), LATERAL (SELECT id, a FROM vso WHERE vso.a > x * 900 ORDER BY a, id LIMIT 3) s ORDER BY x, a$$);
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- Prepared statements: the bound is a parameter of a custom plan; a generic
-- plan sorts without one.
PREPARE top(int) AS SELECT id, a FROM vso ORDER BY a DESC NULLS LAST, id LIMIT $1;
SET vexec.mode = force;
SET plan_cache_mode = force_custom_plan;
EXPLAIN (COSTS OFF) EXECUTE top(3);
EXECUTE top(3);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE top(3);
EXECUTE top(3);
EXECUTE top(5);
RESET plan_cache_mode;
RESET vexec.mode;
EXECUTE top(5);
DEALLOCATE top;

-- The ranked path (every key through the server's comparator) gives the
-- same orders.
SET vexec.debug_force_fallback = on;
SELECT sort_same($$SELECT id, a, f FROM vso ORDER BY f DESC, a NULLS FIRST, id$$);
SELECT sort_same($$SELECT id, t FROM vso ORDER BY t, d, id LIMIT 50$$);
RESET vexec.debug_force_fallback;

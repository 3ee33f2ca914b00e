-- Auto mode on estimates PostgreSQL cannot trust (issue 49). A join whose
-- row estimate is clamped to one row, or that reads a CTE scan or a
-- subquery's output (no statistics), keeps PostgreSQL's shape in auto mode:
-- its VecHashJoin is costed no lower than PostgreSQL's own hash join of the
-- same inputs less 1%, so it replaces a hash join PostgreSQL would choose
-- and cannot move the plan onto another join order or method. EXPLAIN
-- (VEXEC) says so. Force mode is not affected.
SET search_path = public;
SET max_parallel_workers_per_gather = 0;
-- (Small tables: vector joins are considered whatever their size.)
SET vexec.min_rows = 0;

CREATE TABLE ut_sales (cat int, brand int, center int, yr int, mo int, amt numeric(10,2));
INSERT INTO ut_sales
SELECT g % 4, g / 4 % 6, g / 24 % 3, 1998 + g / 72 % 3, g / 216 % 12 + 1, (g % 1000) / 10.0
FROM generate_series(1, 60000) g;
ANALYZE ut_sales;

-- The join nodes and scanned relations of q's plan in mode m, top down,
-- vector nodes named as the row nodes they replace.
CREATE FUNCTION join_shape(q text, m text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE ln text;
BEGIN
  PERFORM set_config('vexec.mode', m, true);
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF ln ~ '(Join|Nested Loop|Scan on)' AND ln !~ '(Join Type|Cond|Filter):' THEN
      RETURN NEXT btrim(replace(regexp_replace(ln, '->', ''), 'Vec ', ''));
    END IF;
  END LOOP;
  PERFORM set_config('vexec.mode', 'off', true);
END $fn$;

-- The EXPLAIN (VEXEC) lines of q in mode m that mention untrusted estimates.
CREATE FUNCTION trust_lines(q text, m text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE ln text;
BEGIN
  PERFORM set_config('vexec.mode', m, true);
  FOR ln IN EXECUTE 'EXPLAIN (VEXEC, COSTS OFF) ' || q LOOP
    IF ln ~ 'estimates not trusted' THEN
      RETURN NEXT regexp_replace(btrim(ln), '\([0-9.]+\)|[0-9]+\.[0-9]+', 'N', 'g');
    END IF;
  END LOOP;
  PERFORM set_config('vexec.mode', 'off', true);
END $fn$;

-- TPC-DS q57's pattern: a CTE of monthly sums with a rank, joined to itself
-- on its group and rank +- 1 (every row of a group meets every other
-- before the rank filter; PostgreSQL estimates the self-join at one row).
\set q57 'WITH v1 AS (SELECT cat, brand, center, yr, mo, sum(amt) s, rank() OVER (PARTITION BY cat, brand, center ORDER BY yr, mo) rn FROM ut_sales GROUP BY cat, brand, center, yr, mo) SELECT v1.cat, v1.brand, v1.center, v1.yr, v1.mo, v1.s, lag.s AS psum, lead.s AS nsum FROM v1, v1 lag, v1 lead WHERE v1.cat = lag.cat AND v1.cat = lead.cat AND v1.brand = lag.brand AND v1.brand = lead.brand AND v1.center = lag.center AND v1.center = lead.center AND v1.rn = lag.rn + 1 AND v1.rn = lead.rn - 1 AND v1.yr = 1999'
SELECT modes_same(:'q57');
-- Auto joins in PostgreSQL's order, with PostgreSQL's methods.
SELECT (SELECT array_agg(l) FROM join_shape(:'q57', 'auto') l)
     = (SELECT array_agg(l) FROM join_shape(:'q57', 'off') l) AS auto_keeps_the_shape;
SELECT * FROM join_shape(:'q57', 'off');
SELECT DISTINCT * FROM trust_lines(:'q57', 'auto') ORDER BY 1;
-- Force mode is not bound by it.
SELECT count(*) AS force_notes FROM trust_lines(:'q57', 'force');

-- A subquery's output joined to a table: no statistics on the subquery's
-- columns. PostgreSQL hash-joins them; the VecHashJoin replaces that join,
-- costed as PostgreSQL's hash join of the same inputs less 1%.
\set qsub 'SELECT s.yr, sum(t.total) FROM ut_sales s, (SELECT cat, brand, center, sum(amt) total FROM ut_sales GROUP BY cat, brand, center) t WHERE t.cat = s.cat AND t.brand = s.brand AND t.center = s.center GROUP BY s.yr'
SELECT modes_same(:'qsub');
SELECT (SELECT array_agg(l) FROM join_shape(:'qsub', 'auto') l)
     = (SELECT array_agg(l) FROM join_shape(:'qsub', 'off') l) AS auto_keeps_the_shape;
SELECT * FROM join_shape(:'qsub', 'auto');
SELECT DISTINCT * FROM trust_lines(:'qsub', 'auto') ORDER BY 1;

-- Joins of tables with statistics are not affected: a VecHashJoin competes
-- on its own cost and no note is printed.
CREATE TABLE ut_item (brand int PRIMARY KEY, label text);
INSERT INTO ut_item SELECT g, 'brand ' || g FROM generate_series(0, 5) g;
ANALYZE ut_item;
\set qtab 'SELECT i.label, sum(s.amt) FROM ut_sales s JOIN ut_item i ON i.brand = s.brand GROUP BY i.label'
SELECT modes_same(:'qtab');
SELECT count(*) AS notes FROM trust_lines(:'qtab', 'auto');

RESET max_parallel_workers_per_gather;
RESET vexec.min_rows;
DROP FUNCTION join_shape(text, text), trust_lines(text, text);
DROP TABLE ut_sales, ut_item;

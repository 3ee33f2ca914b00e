-- vexec.index_fetch_cost: in auto and force modes a parameterized index
-- scan (the inner side of a nested loop) is charged per heap page it visits
-- on each loop, pages counted by the index's correlation. Off and explain
-- modes plan exactly as PostgreSQL does, whatever the setting.
SET search_path = public;
SET max_parallel_workers_per_gather = 0;
SET enable_bitmapscan = off;
SET effective_cache_size = '16GB';
-- nl_fact: 100,000 wide rows; `k` spreads each of its 1,000 values over the
-- whole table (uncorrelated), `c` keeps each of its values together.
CREATE TABLE nl_fact AS
  SELECT g AS id, (g::bigint * 7919 % 1000)::int AS k, g / 100 AS c, g % 97 AS v,
         repeat('x', 400) AS pad
  FROM generate_series(1, 100000) g;
CREATE INDEX nl_fact_k ON nl_fact (k);
CREATE INDEX nl_fact_c ON nl_fact (c);
CREATE TABLE nl_dim AS SELECT g AS k, 'd' || g AS name FROM generate_series(0, 999) g;
ANALYZE nl_fact, nl_dim;
SELECT attname, round(correlation::numeric, 1) AS correlation
FROM pg_stats WHERE tablename = 'nl_fact' AND attname IN ('k', 'c') ORDER BY attname;

CREATE FUNCTION join_kind(q text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE plan text;
BEGIN
  EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || q INTO plan;
  RETURN CASE WHEN plan LIKE '%"Custom Plan Provider": "VecHashJoin"%' THEN 'VecHashJoin'
              WHEN plan LIKE '%"Node Type": "Nested Loop"%' AND plan LIKE '%"Node Type": "Index Scan"%'
                THEN 'Nested Loop over Index Scan'
              ELSE 'other: ' || plan END;
END $fn$;

-- Five loops of 100 rows each: a page a row through `k`, a few pages a
-- loop through `c`.
\set qk 'SELECT d.name, sum(f.v) FROM nl_dim d JOIN nl_fact f ON f.k = d.k WHERE d.k < 5 GROUP BY d.name ORDER BY d.name'
\set qc 'SELECT d.name, sum(f.v) FROM nl_dim d JOIN nl_fact f ON f.c = d.k WHERE d.k < 5 GROUP BY d.name ORDER BY d.name'

SET vexec.mode = auto;
SET vexec.index_fetch_cost = 0;
SELECT join_kind(:'qk') AS k_uncharged, join_kind(:'qc') AS c_uncharged;
:qk;
-- Charged 20 a page: `k`'s 100 pages a loop outweigh a vector scan of the
-- table; `c`'s few pages a loop do not.
SET vexec.index_fetch_cost = 20;
SELECT join_kind(:'qk') AS k_charged, join_kind(:'qc') AS c_charged;
:qk;
SET vexec.mode = force;
SELECT join_kind(:'qk') AS k_force_charged;
SET vexec.index_fetch_cost = 0;
SELECT join_kind(:'qk') AS k_force_uncharged;
-- Off and explain: PostgreSQL's plan whatever the setting.
SET vexec.index_fetch_cost = 1000;
SET vexec.mode = off;
SELECT join_kind(:'qk') AS k_off;
SET vexec.mode = explain;
SELECT join_kind(:'qk') AS k_explain;
-- A composite index led by `c`: btcostestimate reports three quarters of
-- c's correlation for it, but c's rows still lie together, so the charge
-- reads the leading column's correlation and the lookup stays cheap.
DROP INDEX nl_fact_c;
CREATE INDEX nl_fact_c_id ON nl_fact (c, id);
SET vexec.mode = auto;
SET vexec.index_fetch_cost = 0;
SELECT join_kind(:'qc') AS c_composite_uncharged;
SET vexec.index_fetch_cost = 40;
SELECT join_kind(:'qc') AS c_composite_charged;
:qc;
-- The default, and its bounds.
RESET vexec.index_fetch_cost;
SHOW vexec.index_fetch_cost;
SET vexec.index_fetch_cost = -1;
RESET vexec.mode;
DROP FUNCTION join_kind(text);
DROP TABLE nl_fact, nl_dim;

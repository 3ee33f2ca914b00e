-- vexec's settings: names, defaults, bounds, bad values and their SQLSTATEs.
\set SHOW_CONTEXT never

SELECT name, setting, boot_val, vartype, context, min_val, max_val, enumvals
FROM pg_settings WHERE name LIKE 'vexec.%' ORDER BY name;

-- Every mode and batch format is accepted, case-insensitively as PostgreSQL does.
SET vexec.mode = explain; SHOW vexec.mode;
SET vexec.mode = 'AUTO'; SHOW vexec.mode;
SET vexec.mode = force; SHOW vexec.mode;
SET vexec.mode = off; SHOW vexec.mode;
SET vexec.batch_format = ARROW; SHOW vexec.batch_format;
SET vexec.batch_format = postgres; SHOW vexec.batch_format;
RESET vexec.batch_format; SHOW vexec.batch_format;
-- The per-type layouts.
SET vexec.bool_layout = bit; SET vexec.temporal_layout = unix; SET vexec.numeric_layout = decimal128; SET vexec.varlena_layout = offsets;
SHOW vexec.bool_layout; SHOW vexec.temporal_layout; SHOW vexec.numeric_layout; SHOW vexec.varlena_layout;
RESET vexec.bool_layout; RESET vexec.temporal_layout; RESET vexec.numeric_layout; RESET vexec.varlena_layout;

-- Bounds of vexec.min_rows.
SET vexec.min_rows = 0; SHOW vexec.min_rows;
SET vexec.min_rows = 2147483647; SHOW vexec.min_rows;
RESET vexec.min_rows;

-- Bad values: 22023 (invalid_parameter_value), as for PostgreSQL's own settings.
SET vexec.mode = sideways;
\echo :LAST_ERROR_SQLSTATE
SET vexec.mode = '';
\echo :LAST_ERROR_SQLSTATE
SET vexec.batch_format = parquet;
\echo :LAST_ERROR_SQLSTATE
SET vexec.varlena_layout = utf8;  -- Arrow's name for offsets is not one of ours
\echo :LAST_ERROR_SQLSTATE
SET vexec.temporal_layout = arrow;
\echo :LAST_ERROR_SQLSTATE
SET vexec.debug_random_layout = -1;
\echo :LAST_ERROR_SQLSTATE
SET vexec.min_rows = -1;
\echo :LAST_ERROR_SQLSTATE
SET vexec.min_rows = 2147483648;
\echo :LAST_ERROR_SQLSTATE
SET vexec.min_rows = 'many';
\echo :LAST_ERROR_SQLSTATE
SET vexec.enable_scan = maybe;
\echo :LAST_ERROR_SQLSTATE
SET vexec.tuple_cost_factor = -0.5;
\echo :LAST_ERROR_SQLSTATE
SET vexec.sort_cost_factor = 1001;
\echo :LAST_ERROR_SQLSTATE
SET vexec.kernel_cost_factor = cheap;
\echo :LAST_ERROR_SQLSTATE
-- A failed SET leaves the old value.
SHOW vexec.mode;

-- The prefix is reserved: no placeholder settings under vexec.
SET vexec.no_such_setting = 1;
\echo :LAST_ERROR_SQLSTATE
-- Unknown settings are 42704 (undefined_object).
SHOW vexec.no_such_setting;
\echo :LAST_ERROR_SQLSTATE
SELECT current_setting('vexec.no_such_setting');
\echo :LAST_ERROR_SQLSTATE
SELECT current_setting('vexec.no_such_setting', true) IS NULL AS missing_ok;

-- Switches take booleans in every spelling PostgreSQL accepts.
SET vexec.enable_scan = off; SET vexec.enable_agg = 0; SET vexec.enable_hashjoin = 'no'; SET vexec.enable_sort = false;
SELECT name, setting FROM pg_settings WHERE name LIKE 'vexec.enable%' ORDER BY name;
RESET ALL;
SELECT name, setting FROM pg_settings WHERE name LIKE 'vexec.enable%' ORDER BY name;

-- Settings are transactional like PostgreSQL's.
BEGIN;
SET LOCAL vexec.mode = force;
SHOW vexec.mode;
ROLLBACK;
SHOW vexec.mode;

-- Planner settings show in EXPLAIN (SETTINGS) when they differ from the default.
SET vexec.mode = auto;
SET vexec.min_rows = 5;
SET vexec.enable_sort = off;
EXPLAIN (SETTINGS, COSTS OFF) SELECT 1;
RESET ALL;
EXPLAIN (SETTINGS, COSTS OFF) SELECT 1;

-- The vector cost factors price vector paths against row paths in auto
-- mode: each, set high enough, hands its node's work back to PostgreSQL.
CREATE TABLE factor_t AS SELECT g AS a, g % 100 AS b FROM generate_series(1, 100000) g;
ANALYZE factor_t;
SET vexec.mode = auto;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT a FROM factor_t WHERE b < 90;
SET vexec.tuple_cost_factor = 5;   -- a tuple into a batch
EXPLAIN (COSTS OFF) SELECT a FROM factor_t WHERE b < 90;
RESET vexec.tuple_cost_factor;
SET vexec.kernel_cost_factor = 20;   -- kernels
EXPLAIN (COSTS OFF) SELECT a FROM factor_t WHERE b < 90;
RESET vexec.kernel_cost_factor;
SET vexec.output_cost_factor = 20;   -- rows handed to a row node (here the client)
EXPLAIN (COSTS OFF) SELECT a FROM factor_t WHERE b < 90;
RESET vexec.output_cost_factor;
EXPLAIN (COSTS OFF) SELECT b, count(*) FROM factor_t GROUP BY b;
SET vexec.group_key_cost_factor = 50;   -- hashing grouping keys
EXPLAIN (COSTS OFF) SELECT b, count(*) FROM factor_t GROUP BY b;
RESET vexec.group_key_cost_factor;
EXPLAIN (COSTS OFF) SELECT count(*) FROM factor_t x JOIN factor_t y ON x.a = y.b;
SET vexec.hash_key_cost_factor = 100;   -- hashing join keys
EXPLAIN (COSTS OFF) SELECT count(*) FROM factor_t x JOIN factor_t y ON x.a = y.b;
RESET vexec.hash_key_cost_factor;
EXPLAIN (COSTS OFF) SELECT a FROM factor_t WHERE b < 50 ORDER BY b, a;
SET vexec.sort_cost_factor = 5;   -- sorting
EXPLAIN (COSTS OFF) SELECT a FROM factor_t WHERE b < 50 ORDER BY b, a;
RESET ALL;
DROP TABLE factor_t;

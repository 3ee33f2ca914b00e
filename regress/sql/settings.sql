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

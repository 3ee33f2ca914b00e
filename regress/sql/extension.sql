-- CREATE EXTENSION vexec: schema, functions, update path.
CREATE EXTENSION vexec;

-- The control file puts every object in schema vexec.
SELECT e.extname, n.nspname AS schema, e.extrelocatable
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'vexec';

-- The library's version is the extension's version.
SELECT vexec.version() = extversion AS same_version
FROM pg_extension WHERE extname = 'vexec';
SELECT vexec.version() ~ '^\d+\.\d+\.\d+$' AS looks_like_semver;

-- Every member object of the extension, by kind and schema.
SELECT pg_describe_object(classid, objid, objsubid) AS member
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'vexec')
  AND deptype = 'e'
ORDER BY 1;

-- The install script's hand-written part (top-level sql/) is there.
SELECT obj_description('vexec'::regnamespace, 'pg_namespace') LIKE 'vexec: vectorized executor%' AS schema_comment,
       obj_description('vexec.version()'::regprocedure, 'pg_proc') LIKE 'version of the vexec library%' AS function_comment;

-- Updating to the installed version is a no-op with PostgreSQL's NOTICE.
ALTER EXTENSION vexec UPDATE;
-- An unknown target version is an error naming the missing path.
\set VERBOSITY terse
ALTER EXTENSION vexec UPDATE TO '999.0.0';
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default

-- The library stays loaded (it is preloaded) when the extension goes away,
-- and the extension comes back.
DROP EXTENSION vexec;
SELECT count(*) AS vexec_functions_left FROM pg_proc WHERE proname = 'version' AND pronamespace::regnamespace::text = 'vexec';
CREATE EXTENSION vexec;
SELECT vexec.version() IS NOT NULL AS back;

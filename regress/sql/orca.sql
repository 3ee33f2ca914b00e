-- ORCA through orca_bridge (docs/orca.md): vexec built with ORCA says so,
-- and ORCA's optimizer runs on one of ORCA's own minidumps (a superuser's
-- diagnosis tool: the file is the server's).
SELECT vexec.orca_available(), vexec.orca_version();

-- The minidump's expected plan, with ORCA's own cost model, exhaustive and
-- pruned search.
SELECT space_pruning, expected_plan, shape, total_cost > 0 AS costed, memo_groups > 0 AS searched
  FROM unnest(ARRAY[false, true]) AS space_pruning,
       vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/InEqualityJoin.mdp',
                                    space_pruning => space_pruning);

-- A plan vexec's vector factors change: ORCA's calibrated model joins the
-- two tables with an index nested loop, the vector model with a hash join.
SELECT cost_model, shape
  FROM unnest(ARRAY['gpdb', 'vector']) AS cost_model,
       vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/IndexNLJoin_Cast_NoMotion.mdp', cost_model);

-- The plan comes back as DXL too.
SELECT plan_dxl LIKE '<dxl:Plan %' AS is_dxl
  FROM vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/InEqualityJoin.mdp');

-- Errors: an unknown cost model, a missing file, a file that is not DXL,
-- and a role that is not a superuser.
SELECT * FROM vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/InEqualityJoin.mdp', 'fastest');
SELECT expected_plan FROM vexec.orca_optimize_minidump('/nonexistent/minidump.mdp');
SELECT expected_plan FROM vexec.orca_optimize_minidump('/opt/gporca-src/README.md');
-- (EXECUTE is revoked from PUBLIC; granted, the function still refuses.)
CREATE ROLE orca_not_superuser;
GRANT USAGE ON SCHEMA vexec TO orca_not_superuser;
SET ROLE orca_not_superuser;
SELECT expected_plan FROM vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/InEqualityJoin.mdp');
RESET ROLE;
GRANT EXECUTE ON FUNCTION vexec.orca_optimize_minidump(text, text, boolean) TO orca_not_superuser;
SET ROLE orca_not_superuser;
SELECT expected_plan FROM vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/InEqualityJoin.mdp');
RESET ROLE;
REVOKE ALL ON SCHEMA vexec FROM orca_not_superuser;
REVOKE ALL ON FUNCTION vexec.orca_optimize_minidump(text, text, boolean) FROM orca_not_superuser;
DROP ROLE orca_not_superuser;

-- ORCA keeps working after its errors.
SELECT expected_plan FROM vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/InEqualityJoin.mdp');

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

-- The vector model takes vexec's cost factors from the session's settings.
-- Set to neutral (every factor 1, no hand-off charge), it prices plans
-- exactly as ORCA's calibrated model; a dearer scan raises its cost; the
-- defaults come back with RESET.
CREATE TEMP TABLE orca_costs AS
SELECT cost_model, total_cost, shape
  FROM unnest(ARRAY['gpdb', 'vector']) AS cost_model,
       vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/IndexNLJoin_Cast_NoMotion.mdp', cost_model);
SET vexec.tuple_cost_factor = 1;
SET vexec.kernel_cost_factor = 1;
SET vexec.group_key_cost_factor = 1;
SET vexec.hash_key_cost_factor = 1;
SET vexec.sort_cost_factor = 1;
SET vexec.output_cost_factor = 0;
SELECT o.total_cost = g.total_cost AS same_cost, o.shape = g.shape AS same_plan, o.shape
  FROM vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/IndexNLJoin_Cast_NoMotion.mdp', 'vector') o,
       orca_costs g
 WHERE g.cost_model = 'gpdb';
RESET vexec.tuple_cost_factor;
RESET vexec.kernel_cost_factor;
RESET vexec.group_key_cost_factor;
RESET vexec.hash_key_cost_factor;
RESET vexec.sort_cost_factor;
RESET vexec.output_cost_factor;
SELECT o.total_cost = v.total_cost AS defaults_again
  FROM vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/IndexNLJoin_Cast_NoMotion.mdp', 'vector') o,
       orca_costs v
 WHERE v.cost_model = 'vector';
SET vexec.tuple_cost_factor = 0.9;
SELECT o.total_cost > v.total_cost AS dearer_scans
  FROM vexec.orca_optimize_minidump('/opt/gporca-src/data/dxl/minidump/IndexNLJoin_Cast_NoMotion.mdp', 'vector') o,
       orca_costs v
 WHERE v.cost_model = 'vector';
RESET vexec.tuple_cost_factor;
DROP TABLE orca_costs;

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

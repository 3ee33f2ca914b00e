//! ORCA from SQL, for diagnosis: whether this vexec library was built with
//! orca_bridge (feature `orca`; the dev root always builds it), ORCA's
//! version, and ORCA's optimizer on a minidump file of the server
//! (superuser). Using ORCA as the planner is not built yet (docs/orca.md).

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;

/// Whether this vexec library carries ORCA (orca_bridge).
#[pg_extern(immutable, parallel_safe)]
fn orca_available() -> bool {
    cfg!(feature = "orca")
}

/// The version of ORCA this vexec library carries; NULL without ORCA.
#[pg_extern(immutable, parallel_safe)]
fn orca_version() -> Option<&'static str> {
    #[cfg(feature = "orca")]
    return Some(orca_bridge::version());
    #[cfg(not(feature = "orca"))]
    None
}

/// expected_plan, total_cost, plan_rows, shape, optimize_ms, memo_groups, plan_dxl
type PlanRow = (Option<bool>, f64, f64, String, f64, i64, String);

/// ORCA's plan for the query of the minidump at `path` (a file on the
/// server), priced by `cost_model`: `minidump` (the dump's own model),
/// `gpdb` (ORCA's calibrated model) or `vector` (CCostModelVec with
/// vexec's kernels and the session's `vexec.*_cost_factor` settings). `expected_plan` says whether the plan is
/// the dump's expected one, as ORCA's test harness judges (NULL: the dump
/// has none).
#[pg_extern(volatile, parallel_restricted)]
fn orca_optimize_minidump(
    path: &str,
    cost_model: default!(&str, "'minidump'"),
    space_pruning: default!(bool, false),
) -> TableIterator<
    'static,
    (
        name!(expected_plan, Option<bool>),
        name!(total_cost, f64),
        name!(plan_rows, f64),
        name!(shape, String),
        name!(optimize_ms, f64),
        name!(memo_groups, i64),
        name!(plan_dxl, String),
    ),
> {
    // SAFETY: superuser() reads this backend's role; main thread.
    if !unsafe { pg_sys::superuser() } {
        error(
            PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
            "must be superuser to run ORCA on a server file".into(),
        );
    }
    if let Err(e) = std::fs::File::open(path) {
        error(PgSqlErrorCode::ERRCODE_UNDEFINED_FILE, format!("could not open file \"{path}\": {e}"));
    }
    TableIterator::once(optimize(path, cost_model, space_pruning))
}

#[cfg(feature = "orca")]
fn optimize(path: &str, cost_model: &str, space_pruning: bool) -> PlanRow {
    use orca_bridge::{CostModel, Options, SpaceCheck};
    let model = match cost_model {
        "minidump" => CostModel::Minidump,
        "gpdb" => CostModel::Gpdb,
        "vector" => CostModel::Vec {
            factors: crate::settings::cost_factors(),
            kernel_oids: orca_bridge::builtin_kernels(),
        },
        other => error(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("unknown cost model \"{other}\" (minidump, gpdb or vector)"),
        ),
    };
    // A cancel or a terminate reaches ORCA between its optimization jobs.
    // SAFETY: the two flags are the backend's own globals, valid for its
    // lifetime; ORCA only reads them, on this thread.
    unsafe {
        orca_bridge::set_abort_flags(
            std::ptr::addr_of!(pg_sys::QueryCancelPending).cast(),
            std::ptr::addr_of!(pg_sys::ProcDiePending).cast(),
        )
    };
    let result = orca_bridge::optimize_minidump(
        std::path::Path::new(path),
        &Options { cost_model: model, space_pruning },
    );
    let o = match result {
        Ok(o) => o,
        Err(e) => {
            // An abort ORCA took for a pending interrupt: let PostgreSQL
            // raise it (its SQLSTATE, its message).
            pg_sys::check_for_interrupts!();
            error(PgSqlErrorCode::ERRCODE_EXTERNAL_ROUTINE_EXCEPTION, format!("ORCA: {e}"))
        }
    };
    let plan = o.plan().unwrap_or_else(|e| {
        error(PgSqlErrorCode::ERRCODE_EXTERNAL_ROUTINE_EXCEPTION, format!("ORCA's plan: {e}"))
    });
    let space = if space_pruning { SpaceCheck::AtMost } else { SpaceCheck::Equal };
    let expected = o.expected_dxl.as_ref().map(|_| o.mismatch(space).is_none());
    (
        expected,
        plan.total_cost,
        plan.rows,
        plan.shape(),
        o.optimize_ms,
        o.search_stats().groups as i64,
        o.plan_dxl.clone(),
    )
}

#[cfg(not(feature = "orca"))]
fn optimize(_path: &str, _cost_model: &str, _space_pruning: bool) -> PlanRow {
    error(PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED, "this vexec library was built without ORCA".into())
}

fn error(code: PgSqlErrorCode, msg: String) -> ! {
    ErrorReport::new(code, msg, "vexec::orca").report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn orca_is_reported_as_built() {
        let available = Spi::get_one::<bool>("SELECT vexec.orca_available()").unwrap();
        assert_eq!(available, Some(cfg!(feature = "orca")));
        let version = Spi::get_one::<String>("SELECT vexec.orca_version()").unwrap();
        assert_eq!(version.is_some(), cfg!(feature = "orca"));
    }
}

//! vexec: a vectorized executor inside PostgreSQL's own planner.
//!
//! Layout (see docs/architecture.md and docs/design.md): `plan/` decides, costs and reports what is
//! vectorized; `exec/` holds the CustomScan executors; `expr/` compiles
//! PostgreSQL expressions to kernels; `source/` produces batches; `shim`
//! binds the C loops of csrc/. Batches and kernels (pure computation) live
//! in the `vexec_core` crate.

use pgrx::pg_sys;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;

mod arrow_api;
mod catalog;
mod egress;
mod exec;
mod expr;
mod ingest;
mod nodes;
mod orca;
mod packs;
mod pgutil;
mod plan;
/// `#[pg_guard]` on an extern block (the shim's declarations, shim.rs)
/// wraps each function in `crate::ffi::pg_guard_ffi_boundary`.
mod ffi {
    pub(crate) use pgrx::pg_sys::ffi::pg_guard_ffi_boundary;
}
pub mod settings;
mod shim;
mod source;

::pgrx::pg_module_magic!(name, version);

/// vexec installs planner and executor hooks, which only work for every
/// backend when the library is loaded by the postmaster.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: reads a postmaster-set flag during library load, on the main thread.
    if unsafe { !pg_sys::process_shared_preload_libraries_in_progress } {
        ErrorReport::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "vexec must be loaded via \"shared_preload_libraries\"",
            "_PG_init",
        )
        .set_hint("Add vexec to shared_preload_libraries in postgresql.conf and restart the server.")
        .report(PgLogLevel::ERROR);
    }
    settings::register();
    plan::explain::register();
    plan::report::install_hook();
    plan::hooks::install();
    exec::register();
    arrow_api::install();
    egress::batches::install();
    packs::register();
}

// The install script's hand-written part (top-level sql/), after every
// generated object.
extension_sql_file!("../../sql/vexec_comments.sql", name = "comments", finalize);

/// The version of the vexec library that is loaded (not necessarily that of
/// the extension's SQL objects, see pg_extension). The control file puts it
/// in schema `vexec`.
#[pg_extern(stable, parallel_safe)]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn version_matches_the_crate() {
        let v = Spi::get_one::<String>("SELECT vexec.version()").unwrap();
        assert_eq!(v.as_deref(), Some(env!("CARGO_PKG_VERSION")));
    }

    #[pg_test]
    fn settings_are_registered_with_their_defaults() {
        let mode = Spi::get_one::<String>("SELECT current_setting('vexec.mode')").unwrap();
        assert_eq!(mode.as_deref(), Some("off"));
        Spi::run("SET vexec.mode = force").unwrap();
        assert_eq!(crate::settings::MODE.get(), crate::settings::Mode::Force);
    }
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec!["shared_preload_libraries = 'vexec'"]
    }
}

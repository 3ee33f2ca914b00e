//! vexec_flight: an Arrow Flight SQL endpoint inside PostgreSQL
//! (docs/flight.md).
//!
//! Process model: PostgreSQL's API may be called only from a backend's main
//! thread. The listener (a background worker, `listener`) binds the port
//! and runs the gRPC server (`server`) on a helper thread that never calls
//! PostgreSQL; the helper hands every request that needs the server to the
//! main thread through a channel and a wake-up socket the main thread waits
//! on with its latch, so signals and postmaster death are handled as in any
//! PostgreSQL process. Each session's statements run in a server process
//! of its own (`session`), through vexec's Arrow API; `metadata` builds
//! the catalog answers arrow-flight has no builder for. What is decided
//! without the server (pg_hba.conf matching, the wire format, catalog SQL)
//! is `vexec_core::flight`.

use pgrx::bgworkers::{BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::pg_sys;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;

mod listener;
mod metadata;
/// `#[pg_guard]` on an extern block (session/mod.rs) wraps each function in
/// `crate::ffi::pg_guard_ffi_boundary`.
mod ffi {
    pub(crate) use pgrx::pg_sys::ffi::pg_guard_ffi_boundary;
}
mod server;
mod session;
mod settings;

::pgrx::pg_module_magic!(name, version);

/// Registers the settings and, when `vexec_flight.port` is set, the
/// listener; both need the postmaster, hence shared_preload_libraries.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: reads a postmaster-set flag during library load, on the main thread.
    if unsafe { !pg_sys::process_shared_preload_libraries_in_progress } {
        ErrorReport::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "vexec_flight must be loaded via \"shared_preload_libraries\"",
            "_PG_init",
        )
        .set_hint("Add vexec_flight to shared_preload_libraries in postgresql.conf and restart the server.")
        .report(PgLogLevel::ERROR);
    }
    settings::register();
    if settings::PORT.get() == 0 {
        return;
    }
    BackgroundWorkerBuilder::new("vexec_flight listener")
        .set_type("vexec_flight listener")
        .set_library("vexec_flight")
        .set_function("vexec_flight_listener_main")
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(Some(std::time::Duration::from_secs(5)))
        .load();
}

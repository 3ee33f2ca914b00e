//! vexec_flight's settings, all under `vexec_flight.`. The listener reads
//! them at its start (a restart applies a change, as for pgwire's
//! `listen_addresses` and `port`), but for the idle timeout, which a reload
//! changes.

use std::ffi::CString;

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

/// The TCP port of the Flight SQL endpoint; 0 (the default) leaves it off.
pub static PORT: GucSetting<i32> = GucSetting::<i32>::new(0);
/// Comma-separated addresses to listen on, as `listen_addresses`.
pub static LISTEN_ADDRESSES: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"localhost"));
/// The most Flight SQL sessions (logins with a live token) at once.
pub static MAX_SESSIONS: GucSetting<i32> = GucSetting::<i32>::new(64);
/// TLS: the server's certificate chain and private key (PEM files); unset,
/// the endpoint speaks plain HTTP/2.
pub static SSL_CERT_FILE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
pub static SSL_KEY_FILE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
/// Seconds a session's token stays valid without being used.
pub static SESSION_IDLE_TIMEOUT: GucSetting<i32> = GucSetting::<i32>::new(3600);
/// The largest gRPC message a client may send, in kB (an Arrow batch of an
/// upload is one message): a bigger one is refused (RESOURCE_EXHAUSTED).
pub static MAX_MESSAGE_SIZE: GucSetting<i32> = GucSetting::<i32>::new(64 * 1024);
/// The database the listener connects to, to read pg_hba.conf's rules and
/// the roles' secrets (both shared across databases).
pub static LISTENER_DATABASE: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"postgres"));

pub fn register() {
    GucRegistry::define_int_guc(
        c"vexec_flight.port",
        c"TCP port of the Arrow Flight SQL endpoint (0: off).",
        c"",
        &PORT,
        0,
        65535,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"vexec_flight.listen_addresses",
        c"Addresses the Arrow Flight SQL endpoint listens on (comma-separated; * for all).",
        c"",
        &LISTEN_ADDRESSES,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"vexec_flight.max_sessions",
        c"Most Arrow Flight SQL sessions at once.",
        c"",
        &MAX_SESSIONS,
        1,
        10_000,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"vexec_flight.ssl_cert_file",
        c"PEM file of the Arrow Flight SQL endpoint's TLS certificate chain (unset: no TLS).",
        c"",
        &SSL_CERT_FILE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"vexec_flight.ssl_key_file",
        c"PEM file of the Arrow Flight SQL endpoint's TLS private key.",
        c"",
        &SSL_KEY_FILE,
        GucContext::Postmaster,
        GucFlags::SUPERUSER_ONLY,
    );
    GucRegistry::define_int_guc(
        c"vexec_flight.session_idle_timeout",
        c"Seconds an Arrow Flight SQL session's token stays valid without being used.",
        c"",
        &SESSION_IDLE_TIMEOUT,
        1,
        i32::MAX,
        GucContext::Sighup,
        GucFlags::UNIT_S,
    );
    GucRegistry::define_int_guc(
        c"vexec_flight.max_message_size",
        c"Largest message an Arrow Flight SQL client may send (an Arrow batch of an upload is one).",
        c"",
        &MAX_MESSAGE_SIZE,
        64,
        1024 * 1024,
        GucContext::Postmaster,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_string_guc(
        c"vexec_flight.listener_database",
        c"Database the Arrow Flight SQL listener connects to (to read pg_hba.conf's rules and roles).",
        c"",
        &LISTENER_DATABASE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
}

/// A string setting's value ("" when unset).
pub fn string(s: &GucSetting<Option<CString>>) -> String {
    s.get().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default()
}

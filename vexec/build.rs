//! Builds the C shim (csrc/) against the server headers of the PostgreSQL
//! version the crate is built for (feature pg18 or pg19), found the way pgrx
//! finds them: PGRX_PG_CONFIG_PATH, else pgrx's config.toml.

use std::path::PathBuf;

use pgrx_pg_config::{PgConfig, Pgrx};

fn main() {
    println!("cargo:rerun-if-changed=csrc");
    println!("cargo:rerun-if-env-changed=PGRX_PG_CONFIG_PATH");
    let major = if std::env::var_os("CARGO_FEATURE_PG18").is_some() {
        18
    } else if std::env::var_os("CARGO_FEATURE_PG19").is_some() {
        19
    } else {
        panic!("vexec: enable feature pg18 or pg19");
    };
    let pg_config = match std::env::var_os("PGRX_PG_CONFIG_PATH") {
        Some(p) => PgConfig::new_with_defaults(PathBuf::from(p)),
        None => Pgrx::from_config()
            .and_then(|p| p.get(&format!("pg{major}")))
            .expect("vexec: no pg_config for this version (run cargo pgrx init)"),
    };
    let server = pg_config.includedir_server().expect("pg_config --includedir-server");
    cc::Build::new()
        .file("csrc/vexec_shim.c")
        .file("csrc/vexec_heap.c")
        .file("csrc/vexec_insert.c")
        .file("csrc/vexec_packs.c")
        .include(&server)
        .include("csrc")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-sign-compare")
        .flag_if_supported("-Wno-missing-field-initializers")
        .flag_if_supported("-fno-strict-aliasing")
        .flag_if_supported("-fwrapv")
        .opt_level(2)
        .compile("vexec_shim");
}

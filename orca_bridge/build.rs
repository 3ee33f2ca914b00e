//! Builds the C++ shim against an installed ORCA and generates the Rust
//! declarations of its C API with bindgen.
//!
//! ORCA is built from its source snapshot by `tools/devroot` (the `orca`
//! step) and installed in `/usr/local`; `ORCA_PREFIX` names another place.

use std::env;
use std::path::PathBuf;

fn main() {
    let prefix = PathBuf::from(env::var("ORCA_PREFIX").unwrap_or_else(|_| "/usr/local".into()));
    let include = prefix.join("include");
    let lib = prefix.join("lib");
    if !include.join("gpopt").is_dir() {
        panic!(
            "ORCA is not installed in {} (set ORCA_PREFIX, or run `tools/devroot setup`, whose \
             `orca` step builds it)",
            prefix.display()
        );
    }
    println!("cargo:rerun-if-env-changed=ORCA_PREFIX");
    println!("cargo:rerun-if-changed=csrc");

    cc::Build::new()
        .cpp(true)
        // ORCA's headers are C++98-era; C++14 is what it builds with here.
        .std("c++14")
        .include("csrc")
        // ORCA's headers as system headers: their warnings under today's
        // compilers are not ours to fix; the shim's own still show.
        .flag("-isystem")
        .flag(include.to_str().expect("ORCA_PREFIX is UTF-8"))
        .files(["csrc/shim.cpp", "csrc/cost_model_vec.cpp"])
        .compile("orca_bridge_shim");

    println!("cargo:rustc-link-search=native={}", lib.display());
    for name in ["gpopt", "naucrates", "gpdbcost", "gpos", "xerces-c"] {
        println!("cargo:rustc-link-lib=dylib={name}");
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
    // Outside the dynamic linker's paths, find ORCA's libraries by rpath.
    if prefix != std::path::Path::new("/usr/local") && prefix != std::path::Path::new("/usr") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    }

    let bindings = bindgen::Builder::default()
        .header("csrc/orca_bridge.h")
        .allowlist_function("orca_.*")
        .allowlist_type("Orca.*")
        .rustified_enum("OrcaCostModelKind")
        .formatter(bindgen::Formatter::None)
        .generate()
        .expect("bindgen failed on csrc/orca_bridge.h");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("bindings.rs");
    bindings.write_to_file(out).expect("writing the bindings");
}

//! The pure half of vexec_flight (the Arrow Flight SQL endpoint): what it
//! decides without the server, so plain `cargo test` covers it.

pub mod catalog;
pub mod hba;
pub mod ingest;
pub mod login;
pub mod wire;

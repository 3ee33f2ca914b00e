//! Kernel packs in a backend: the registry's declarations
//! (`vexec_core::packs`, rendezvous variable `vexec/kernels_v1`) bound to
//! the functions of the current database.
//!
//! Bindings are made on first use and kept per backend. They are remade
//! when any function changes (a syscache callback on pg_proc: CREATE, DROP
//! or ALTER EXTENSION, CREATE OR REPLACE FUNCTION) and when a pack's
//! extension row changed since the last transaction that looked (ALTER
//! EXTENSION ... UPDATE may leave the functions alone): the extension rows
//! are checked once per transaction, and only by a backend that has packs
//! and compiles a function vexec has no kernel of its own for.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_int, CStr, CString};

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::packs::{self, CatalogFunction, Pack};

use crate::shim;

/// A declared function bound to one of this database's functions.
#[derive(Debug, Clone)]
pub struct BoundFn {
    pub pack: String,
    /// `name(args)` (argument typnames).
    pub signature: String,
    /// The native kernel the pack named (0: none).
    pub native: u32,
}

impl BoundFn {
    /// `pack: name(args)`, as EXPLAIN (VERBOSE) shows it (`[native ...]`
    /// when a native kernel of vexec's decides the rows it can).
    pub fn label(&self) -> String {
        use vexec_core::packs::gserialized::Native;
        let native = match Native::from_id(self.native) {
            Some(Native::Box(_)) => " [native box]",
            Some(Native::DWithinPoints) => " [native points]",
            Some(Native::FalseIfDisjoint) => " [native disjoint boxes]",
            None => "",
        };
        format!("{}: {}{native}", self.pack, self.signature)
    }
}

/// The bindings of one database, and what they were made from.
struct Bindings {
    db: pg_sys::Oid,
    /// Packs registered when they were made (libraries only add packs).
    n_packs: usize,
    /// Each pack's extension name.
    extensions: Vec<String>,
    /// Per pack: its extension's (OID, version, row xmin), None if absent.
    stamps: Vec<Option<(pg_sys::Oid, String, pg_sys::TransactionId)>>,
    /// The local transaction that last checked the stamps.
    checked_in: u32,
    by_oid: HashMap<pg_sys::Oid, BoundFn>,
}

thread_local! {
    static BINDINGS: RefCell<Option<Bindings>> = const { RefCell::new(None) };
    /// A function changed since the bindings were made.
    static STALE: Cell<bool> = const { Cell::new(false) };
}

/// Listen for function changes (from `_PG_init`).
pub fn register() {
    // SAFETY: registers a backend-local invalidation callback during library load, on the main
    // thread.
    unsafe {
        pg_sys::CacheRegisterSyscacheCallback(
            pg_sys::SysCacheIdentifier::PROCOID as c_int,
            Some(proc_changed),
            pg_sys::Datum::from(0),
        )
    };
}

#[pg_guard]
unsafe extern "C-unwind" fn proc_changed(_arg: pg_sys::Datum, _cacheid: c_int, _hash: u32) {
    STALE.with(|s| s.set(true));
}

/// The registry (null: no pack registered in this process).
fn registry() -> *const std::ffi::c_void {
    // SAFETY: find_rendezvous_variable returns the process's slot for this name (created empty on
    // first use).
    unsafe { *pg_sys::find_rendezvous_variable(packs::RENDEZVOUS.as_ptr()) }
}

/// The current local transaction id.
fn local_xid() -> u32 {
    // SAFETY: MyProc is this backend's PGPROC, set for its lifetime.
    unsafe { (*pg_sys::MyProc).vxid.lxid }
}

/// The pack binding of function `funcid`, if a pack declares it.
pub fn lookup(funcid: pg_sys::Oid) -> Option<BoundFn> {
    with_bindings(|b| b.by_oid.get(&funcid).cloned()).flatten()
}

/// The functions kernel packs serve in this database: pack, function OID
/// and signature, by pack and OID.
#[pg_extern(stable, parallel_safe)]
fn pack_functions(
) -> TableIterator<'static, (name!(pack, String), name!(function, pg_sys::Oid), name!(signature, String))> {
    let mut all: Vec<_> = with_bindings(|b| {
        b.by_oid.iter().map(|(o, f)| (f.pack.clone(), *o, f.signature.clone())).collect::<Vec<_>>()
    })
    .unwrap_or_default();
    all.sort_by(|a, b| (&a.0, a.1.to_u32()).cmp(&(&b.0, b.1.to_u32())));
    TableIterator::new(all)
}

/// `f` of this database's current bindings (remade if stale); None when no
/// pack is registered.
fn with_bindings<T>(f: impl FnOnce(&Bindings) -> T) -> Option<T> {
    let reg = registry();
    // SAFETY: reg is the rendezvous variable's value: null or a registry of static declarations.
    let n_packs = unsafe { packs::registered_count(reg) };
    if n_packs == 0 {
        return None;
    }
    BINDINGS.with(|b| {
        let mut b = b.borrow_mut();
        // SAFETY: MyDatabaseId is set for the backend's lifetime once connected.
        let db = unsafe { pg_sys::MyDatabaseId };
        let fresh = match b.as_ref() {
            Some(cur) if cur.db == db && cur.n_packs == n_packs && !STALE.with(Cell::get) => {
                cur.checked_in == local_xid() || stamps(&cur.extensions) == cur.stamps
            }
            _ => false,
        };
        if fresh {
            b.as_mut().expect("checked above").checked_in = local_xid();
        } else {
            STALE.with(|s| s.set(false));
            // SAFETY: as for registered_count.
            let (packs, skipped) = unsafe { (packs::registered(reg), packs::mismatched(reg)) };
            if skipped > 0 {
                pgrx::warning!(
                    "vexec: {skipped} kernel pack(s) loaded in this server were built for another version of vexec and are ignored"
                );
            }
            *b = Some(bind_all(db, n_packs, &packs));
        }
        b.as_ref().map(f)
    })
}

/// Each pack's extension as installed now.
fn stamps(extensions: &[String]) -> Vec<Option<(pg_sys::Oid, String, pg_sys::TransactionId)>> {
    extensions
        .iter()
        .map(|e| {
            let name = CString::new(e.as_str()).ok()?;
            let (mut version, mut xmin) = (std::ptr::null_mut(), pg_sys::TransactionId::from(0));
            // SAFETY: a catalog scan on the backend's main thread; version is palloc'd or null.
            unsafe {
                let oid = shim::vx_extension_lookup(name.as_ptr(), &mut version, &mut xmin);
                if oid == pg_sys::InvalidOid {
                    return None;
                }
                let v = CStr::from_ptr(version).to_string_lossy().into_owned();
                pg_sys::pfree(version.cast());
                Some((oid, v, xmin))
            }
        })
        .collect()
}

fn bind_all(db: pg_sys::Oid, n_packs: usize, packs: &[Pack]) -> Bindings {
    let extensions: Vec<String> = packs.iter().map(|p| p.extension.clone()).collect();
    let stamps = stamps(&extensions);
    let mut by_oid = HashMap::new();
    for (i, (pack, stamp)) in packs.iter().zip(&stamps).enumerate() {
        let Some((ext, version, _)) = stamp else { continue };
        let members = members(*ext);
        for b in packs::bind(i, pack, version, &members) {
            by_oid.insert(
                pg_sys::Oid::from(b.oid),
                BoundFn { pack: pack.name.clone(), signature: b.signature, native: b.native },
            );
        }
    }
    Bindings { db, n_packs, extensions, stamps, checked_in: local_xid(), by_oid }
}

/// The functions of extension `ext`, as binding compares them.
fn members(ext: pg_sys::Oid) -> Vec<CatalogFunction> {
    // Catalog strings are palloc'd: in a context of their own, dropped here.
    let mut cxt = pgrx::PgMemoryContexts::new("vexec pack binding");
    // SAFETY: catalog scans on the backend's main thread; out has room for max OIDs; the strings
    // are copied out before the context goes.
    unsafe {
        cxt.switch_to(|_| {
            let mut oids = vec![pg_sys::InvalidOid; 256];
            let mut n = shim::vx_extension_functions(ext, oids.as_mut_ptr(), oids.len() as c_int) as usize;
            if n > oids.len() {
                oids.resize(n, pg_sys::InvalidOid);
                n = shim::vx_extension_functions(ext, oids.as_mut_ptr(), oids.len() as c_int) as usize;
            }
            let s = |p: *const std::ffi::c_char| CStr::from_ptr(p).to_string_lossy().into_owned();
            oids[..n.min(oids.len())]
                .iter()
                .filter_map(|&oid| {
                    let mut info: shim::VxProcInfo = std::mem::zeroed();
                    shim::vx_proc_info(oid, &mut info).then(|| CatalogFunction {
                        oid: oid.into(),
                        name: s(info.name),
                        args: s(info.args).split(',').filter(|a| !a.is_empty()).map(str::to_string).collect(),
                        prosrc: s(info.prosrc),
                        probin: (!info.probin.is_null()).then(|| s(info.probin)),
                        c_strict_scalar: info.c_strict_scalar,
                    })
                })
                .collect()
        })
    }
}

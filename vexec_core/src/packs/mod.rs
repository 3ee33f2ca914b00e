//! Kernel packs: other extensions' functions that vexec runs in batches.
//!
//! A pack (vexec_pgvector, vexec_postgis, or a third party's library) is a
//! preloaded library that declares functions of another extension by name,
//! argument types and C symbol. It registers its declarations in the
//! registry the rendezvous variable `vexec/kernels_v1` points to; whichever
//! library loads first (vexec or a pack) creates the registry, so the order
//! of `shared_preload_libraries` does not matter. vexec reads the registry
//! when it binds declarations to a database's functions ([`bind`]): by
//! extension membership, extension version range, name, argument types,
//! `prosrc` (the C symbol) and `probin` (the library), so a same-named user
//! function is never taken. A bound function runs through fmgr a batch's
//! rows at a time (`VExpr::Call`): its results are the extension's own.
//!
//! The ABI is `#[repr(C)]` and frozen as version 1; docs/packs.md gives it
//! in C for packs written in other languages.

use std::ffi::{c_char, CStr};

pub mod gserialized;

/// The rendezvous variable's name.
pub const RENDEZVOUS: &CStr = c"vexec/kernels_v1";

/// Marks a [`RegistryV1`] (and its version), so a stray pointer under the
/// rendezvous name is refused rather than read.
pub const REGISTRY_MAGIC: u64 = 0x7665_7865_634b_0001;

/// The layout of [`PackV1`] and [`FunctionV1`]: a tag, their sizes, and a
/// revision number bumped on any other change.
pub const PACK_ABI: u64 = 0x564b_0000_0000_0000
    | ((std::mem::size_of::<PackV1>() as u64) << 32)
    | ((std::mem::size_of::<FunctionV1>() as u64) << 16)
    | 2;

/// Packs one process can hold.
pub const MAX_PACKS: usize = 32;

/// One function of the extension a pack teaches vexec.
///
/// Contract: the function is STRICT, returns one value, and when it raises
/// an ERROR it holds no lock, buffer pin or other resource, and has not
/// held off interrupts (it computes on its arguments and pallocs). vexec
/// may then discard a data exception it raised in a batch and evaluate the
/// batch row by row, where PostgreSQL raises it again at its own row.
#[repr(C)]
pub struct FunctionV1 {
    /// SQL name (`l2_distance`).
    pub name: *const c_char,
    /// Argument types by `pg_type.typname`, comma-separated, no spaces
    /// (`vector,vector`; arrays as `_float8`).
    pub args: *const c_char,
    /// `pg_proc.prosrc`: the C symbol (`halfvec_l2_distance`).
    pub symbol: *const c_char,
    /// A native kernel of vexec's that gives this function's results
    /// exactly for the rows it can decide (0: none; the ids are
    /// [`gserialized::BoxPredicate`]'s); the other rows still call the
    /// function.
    pub native: u32,
}

/// A [`FunctionV1`] of string literals: `pack_function!("l2_distance",
/// "halfvec,halfvec", "halfvec_l2_distance")` (SQL name, argument typnames,
/// C symbol), for a pack's static table.
/// A fourth argument names a native kernel (`FunctionV1::native`).
#[macro_export]
macro_rules! pack_function {
    ($name:literal, $args:literal, $symbol:literal) => {
        $crate::pack_function!($name, $args, $symbol, 0)
    };
    ($name:literal, $args:literal, $symbol:literal, $native:expr) => {
        $crate::packs::FunctionV1 {
            name: concat!($name, "\0").as_ptr().cast(),
            args: concat!($args, "\0").as_ptr().cast(),
            symbol: concat!($symbol, "\0").as_ptr().cast(),
            native: $native as u32,
        }
    };
}

/// The `_PG_init` of a pack library built with pgrx: registers the pack
/// (a `static` [`PackV1`]) in this process's registry, or warns why it
/// could not. Expands in the pack's crate, which has pgrx.
#[macro_export]
macro_rules! pack_pg_init {
    ($pack:expr) => {
        #[::pgrx::pg_guard]
        pub extern "C-unwind" fn _PG_init() {
            // SAFETY: find_rendezvous_variable returns this process's slot for the registry, on
            // the main thread during library load; the pack is a static.
            let registered = unsafe {
                $crate::packs::register(
                    ::pgrx::pg_sys::find_rendezvous_variable($crate::packs::RENDEZVOUS.as_ptr()),
                    &$pack,
                )
            };
            if let Err(e) = registered {
                ::pgrx::pg_sys::panic::ErrorReport::new(
                    ::pgrx::PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!("{} could not register its kernel pack: {e:?}", env!("CARGO_PKG_NAME")),
                    "_PG_init",
                )
                .report(::pgrx::PgLogLevel::WARNING);
            }
        }
    };
}

/// A pack's declarations.
#[repr(C)]
pub struct PackV1 {
    /// [`PACK_ABI`]: the layout of this struct and of [`FunctionV1`] the
    /// pack was built with. vexec skips (with a warning) a pack whose
    /// layout is not its own, rather than read it.
    pub abi: u64,
    /// The pack (`vexec_pgvector`), as EXPLAIN names it.
    pub name: *const c_char,
    /// `pg_extension.extname` of the extension whose functions these are.
    pub extension: *const c_char,
    /// Extension versions the declarations hold for: at least `min_version`,
    /// below `max_version` (dot-separated numbers; see [`version_in_range`]).
    pub min_version: *const c_char,
    pub max_version: *const c_char,
    /// `pg_proc.probin` of the functions (`$libdir/vector`).
    pub module: *const c_char,
    pub functions: *const FunctionV1,
    pub n_functions: usize,
}

// SAFETY: the declarations are immutable statics of the pack's library
// (pointers to string literals), read only by the backend's main thread.
unsafe impl Sync for FunctionV1 {}
// SAFETY: as for FunctionV1.
unsafe impl Sync for PackV1 {}

/// What the rendezvous variable points to.
#[repr(C)]
pub struct RegistryV1 {
    pub magic: u64,
    pub n_packs: usize,
    pub packs: [*const PackV1; MAX_PACKS],
}

/// Why a pack could not register.
#[derive(Debug, PartialEq, Eq)]
pub enum RegisterError {
    /// The rendezvous variable points to something that is not a registry.
    NotARegistry,
    Full,
}

/// Register `pack` in the registry `slot` (the rendezvous variable's
/// value) points to, creating the registry if there is none yet.
///
/// # Safety
/// `slot` is the process's rendezvous variable for [`RENDEZVOUS`]; called on
/// the backend's main thread (in `_PG_init`).
pub unsafe fn register(slot: *mut *mut std::ffi::c_void, pack: &'static PackV1) -> Result<(), RegisterError> {
    // SAFETY: this function's contract: slot is the live rendezvous variable.
    unsafe {
        if (*slot).is_null() {
            // Lives as long as the process, like the libraries that fill it.
            let r = Box::new(RegistryV1 {
                magic: REGISTRY_MAGIC,
                n_packs: 0,
                packs: [std::ptr::null(); MAX_PACKS],
            });
            *slot = Box::into_raw(r).cast();
        }
        let r = &mut *(*slot as *mut RegistryV1);
        if r.magic != REGISTRY_MAGIC {
            return Err(RegisterError::NotARegistry);
        }
        if r.packs[..r.n_packs].iter().any(|&p| std::ptr::eq(p, pack)) {
            return Ok(());
        }
        if r.n_packs == MAX_PACKS {
            return Err(RegisterError::Full);
        }
        r.packs[r.n_packs] = pack;
        r.n_packs += 1;
        Ok(())
    }
}

/// A declared function, read out of the ABI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionDecl {
    pub name: String,
    pub args: Vec<String>,
    pub symbol: String,
    pub native: u32,
}

/// A pack's declarations, read out of the ABI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pack {
    pub name: String,
    pub extension: String,
    pub min_version: String,
    pub max_version: String,
    pub module: String,
    pub functions: Vec<FunctionDecl>,
}

/// The packs registered under `registry` (the rendezvous variable's value;
/// null: none).
///
/// # Safety
/// `registry` is null or the value [`register`] left in the rendezvous
/// variable, whose packs are live statics.
pub unsafe fn registered(registry: *const std::ffi::c_void) -> Vec<Pack> {
    if registry.is_null() {
        return Vec::new();
    }
    // SAFETY: this function's contract.
    unsafe {
        let r = &*(registry as *const RegistryV1);
        if r.magic != REGISTRY_MAGIC {
            return Vec::new();
        }
        let s = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        r.packs[..r.n_packs.min(MAX_PACKS)]
            .iter()
            .filter(|&&p| (*p).abi == PACK_ABI)
            .map(|&p| {
                let p = &*p;
                let decls = if p.functions.is_null() {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(p.functions, p.n_functions)
                };
                Pack {
                    name: s(p.name),
                    extension: s(p.extension),
                    min_version: s(p.min_version),
                    max_version: s(p.max_version),
                    module: s(p.module),
                    functions: decls
                        .iter()
                        .map(|f| FunctionDecl {
                            name: s(f.name),
                            args: s(f.args)
                                .split(',')
                                .filter(|a| !a.is_empty())
                                .map(str::to_string)
                                .collect(),
                            symbol: s(f.symbol),
                            native: f.native,
                        })
                        .collect(),
                }
            })
            .collect()
    }
}

/// How many packs are registered under `registry` (see [`registered`]).
///
/// # Safety
/// As for [`registered`].
pub unsafe fn registered_count(registry: *const std::ffi::c_void) -> usize {
    if registry.is_null() {
        return 0;
    }
    // SAFETY: this function's contract.
    let r = unsafe { &*(registry as *const RegistryV1) };
    if r.magic == REGISTRY_MAGIC {
        r.n_packs.min(MAX_PACKS)
    } else {
        0
    }
}

/// How many registered packs were built with another layout than this
/// crate's (skipped by [`registered`]).
///
/// # Safety
/// As for [`registered`].
pub unsafe fn mismatched(registry: *const std::ffi::c_void) -> usize {
    // SAFETY: this function's contract.
    unsafe {
        let n = registered_count(registry);
        if n == 0 {
            return 0;
        }
        let r = &*(registry as *const RegistryV1);
        r.packs[..n].iter().filter(|&&p| (*p).abi != PACK_ABI).count()
    }
}

/// The numeric components of a version (`0.8.7` -> [0, 8, 7]); a component
/// ends at its first non-digit (`3.7.0dev` -> [3, 7, 0]).
fn components(v: &str) -> Vec<u64> {
    v.split('.')
        .map(|c| c.chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap_or(0))
        .collect()
}

/// Whether `version` is at least `min` and below `max` (missing components
/// count as 0; an empty bound is no bound).
pub fn version_in_range(version: &str, min: &str, max: &str) -> bool {
    let cmp = |a: &str, b: &str| {
        let (mut a, mut b) = (components(a), components(b));
        let n = a.len().max(b.len());
        a.resize(n, 0);
        b.resize(n, 0);
        a.cmp(&b)
    };
    (min.is_empty() || cmp(version, min).is_ge()) && (max.is_empty() || cmp(version, max).is_lt())
}

/// A function of an installed extension, as the catalog has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogFunction {
    pub oid: u32,
    pub name: String,
    /// Argument types by typname.
    pub args: Vec<String>,
    pub prosrc: String,
    /// None for functions that are not in a loadable library.
    pub probin: Option<String>,
    /// A C function (prolang), STRICT, not a set-returning one.
    pub c_strict_scalar: bool,
}

/// A declaration bound to an installed function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub oid: u32,
    /// Index into the packs given to [`bind`].
    pub pack: usize,
    /// `name(args)` as EXPLAIN shows it.
    pub signature: String,
    /// The declaration's native kernel (0: none).
    pub native: u32,
}

/// Bind the declarations of `pack` (index `pack_index`) to the members of
/// its extension, installed at `version`: a member is taken only when its
/// name, argument types, C symbol and library all match a declaration and
/// it is a strict scalar C function.
pub fn bind(pack_index: usize, pack: &Pack, version: &str, members: &[CatalogFunction]) -> Vec<Bound> {
    if !version_in_range(version, &pack.min_version, &pack.max_version) {
        return Vec::new();
    }
    members
        .iter()
        .filter(|f| f.c_strict_scalar && f.probin.as_deref() == Some(pack.module.as_str()))
        .filter_map(|f| {
            let d = pack
                .functions
                .iter()
                .find(|d| d.name == f.name && d.args == f.args && d.symbol == f.prosrc)?;
            Some(Bound {
                oid: f.oid,
                pack: pack_index,
                signature: format!("{}({})", f.name, f.args.join(",")),
                native: d.native,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack() -> Pack {
        Pack {
            name: "p".into(),
            extension: "vector".into(),
            min_version: "0.7.0".into(),
            max_version: "0.9".into(),
            module: "$libdir/vector".into(),
            functions: vec![FunctionDecl {
                name: "l2_distance".into(),
                args: vec!["halfvec".into(), "halfvec".into()],
                symbol: "halfvec_l2_distance".into(),
                native: 0,
            }],
        }
    }

    fn member(oid: u32, prosrc: &str, probin: Option<&str>) -> CatalogFunction {
        CatalogFunction {
            oid,
            name: "l2_distance".into(),
            args: vec!["halfvec".into(), "halfvec".into()],
            prosrc: prosrc.into(),
            probin: probin.map(str::to_string),
            c_strict_scalar: true,
        }
    }

    #[test]
    fn versions_compare_by_number() {
        assert!(version_in_range("0.8.7", "0.7.0", "0.9"));
        assert!(version_in_range("0.7", "0.7.0", "0.9"));
        assert!(!version_in_range("0.9.0", "0.7.0", "0.9"));
        assert!(!version_in_range("0.6.2", "0.7.0", "0.9"));
        assert!(version_in_range("0.10.1", "0.7.0", ""));
        assert!(version_in_range("3.7.0dev", "3.0", "4"));
    }

    #[test]
    fn only_the_declared_c_function_is_bound() {
        let p = pack();
        let good = member(10, "halfvec_l2_distance", Some("$libdir/vector"));
        assert_eq!(bind(0, &p, "0.8.7", &[good.clone()]).len(), 1);
        // A same-named function with another body or library is not taken.
        assert!(bind(0, &p, "0.8.7", &[member(11, "l2_distance", Some("$libdir/vector"))]).is_empty());
        assert!(bind(0, &p, "0.8.7", &[member(12, "halfvec_l2_distance", Some("$libdir/evil"))]).is_empty());
        assert!(bind(0, &p, "0.8.7", &[member(13, "select 1", None)]).is_empty());
        let mut lax = good.clone();
        lax.c_strict_scalar = false;
        assert!(bind(0, &p, "0.8.7", &[lax]).is_empty());
        let mut other_args = good.clone();
        other_args.args = vec!["vector".into(), "vector".into()];
        assert!(bind(0, &p, "0.8.7", &[other_args]).is_empty());
        // Outside the version range nothing is bound.
        assert!(bind(0, &p, "0.9.1", &[good]).is_empty());
    }

    static DECLS: [FunctionV1; 1] = [crate::pack_function!("f", "int4,_float8", "f_c", 3)];
    static PACK: PackV1 = PackV1 {
        abi: PACK_ABI,
        name: c"test_pack".as_ptr(),
        extension: c"ext".as_ptr(),
        min_version: c"1".as_ptr(),
        max_version: c"".as_ptr(),
        module: c"$libdir/ext".as_ptr(),
        functions: DECLS.as_ptr(),
        n_functions: 1,
    };

    #[test]
    fn registry_round_trip() {
        let mut slot: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: slot stands in for the rendezvous variable.
        unsafe {
            register(&mut slot, &PACK).unwrap();
            register(&mut slot, &PACK).unwrap(); // twice: once
            let packs = registered(slot);
            assert_eq!(packs.len(), 1);
            assert_eq!(registered_count(slot), 1);
            assert_eq!(packs[0].name, "test_pack");
            assert_eq!(packs[0].functions[0].args, vec!["int4", "_float8"]);
            assert_eq!(packs[0].functions[0].native, 3);
            let mut junk = [0u64; 40];
            let mut bad: *mut std::ffi::c_void = junk.as_mut_ptr().cast();
            assert_eq!(register(&mut bad, &PACK), Err(RegisterError::NotARegistry));
            assert!(registered(bad).is_empty());
            assert_eq!(registered_count(bad), 0);
            // A pack built with another layout is skipped, not read.
            static OLD: PackV1 = PackV1 { abi: PACK_ABI - 1, ..PACK };
            register(&mut slot, &OLD).unwrap();
            assert_eq!(registered_count(slot), 2);
            assert_eq!(registered(slot).len(), 1);
            assert_eq!(mismatched(slot), 1);
            drop(Box::from_raw(slot as *mut RegistryV1));
        }
    }
}

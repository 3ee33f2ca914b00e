//! orca_bridge: ORCA, Greenplum's cascades optimizer, behind a safe Rust API.
//!
//! ORCA (libgpos, libnaucrates, libgpopt, libgpdbcost) is built from its
//! source snapshot by `tools/devroot` (see `docs/orca.md`); a C++ shim
//! (`csrc/`) exposes it through a small C API whose Rust declarations
//! bindgen generates. This crate wraps that API:
//!
//! - [`optimize_minidump`]: optimize the query of an ORCA minidump (query,
//!   metadata, configuration and expected plan in one DXL file) with ORCA's
//!   own cost model or with [`CostModel::Vec`], vexec's vector-aware model
//!   (`CCostModelVec`, `csrc/cost_model_vec.h`);
//! - [`plan`]: the plan DXL as a tree of operators with their cost, rows and
//!   width, and the shapes the corpus reports compare;
//! - [`stats`]: ORCA's statistics of the search, read from its trace.
//!
//! ORCA's exceptions never cross into Rust: the shim returns them as errors
//! with ORCA's message. ORCA keeps per-process state (its memory pools,
//! worker pool and metadata cache), so calls are serialized by a lock.
//! Nothing here calls PostgreSQL.

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_char;
use std::path::Path;
use std::sync::Mutex;

use vexec_core::cost;

pub mod corpus;
pub mod plan;
pub mod stats;

#[allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]
mod sys {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}

/// An error ORCA (or the shim) reported.
#[derive(Debug, Clone, PartialEq)]
pub struct OrcaError(pub String);

impl fmt::Display for OrcaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OrcaError {}

pub use cost::Factors;

/// Which cost model prices the plans.
#[derive(Debug, Clone, PartialEq)]
pub enum CostModel {
    /// The model the minidump was captured with: ORCA's calibrated GPDB
    /// model, or its legacy model when the dump names none.
    Minidump,
    /// ORCA's calibrated GPDB model (the dump's parameters, or ORCA's
    /// defaults): the model CCostModelVec scales, so its baseline.
    Gpdb,
    /// CCostModelVec with these factors; `kernel_oids` are the function
    /// OIDs vexec has kernels for ([`builtin_kernels`] for PostgreSQL's
    /// built-ins).
    Vec { factors: Factors, kernel_oids: Vec<u32> },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub cost_model: CostModel,
    /// ORCA's branch-and-bound search (space pruning) instead of the
    /// exhaustive one.
    pub space_pruning: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { cost_model: CostModel::Minidump, space_pruning: false }
    }
}

/// The outcome of one optimization.
#[derive(Debug, Clone)]
pub struct Optimized {
    /// The chosen plan, serialized as ORCA's harness compares plans.
    pub plan_dxl: String,
    /// The minidump's expected plan, serialized the same way.
    pub expected_dxl: Option<String>,
    pub plan_id: u64,
    pub plan_space_size: u64,
    pub expected_plan_id: u64,
    pub expected_plan_space_size: u64,
    /// Wall time of ORCA's optimization (not of reading the file).
    pub optimize_ms: f64,
    /// ORCA's trace output of the call.
    pub log: String,
}

/// How ORCA's harness compares plan space sizes: equal after an exhaustive
/// search, at most the expected one after a pruned search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceCheck {
    Equal,
    AtMost,
}

/// Why a plan differs from the expected one (None: it matches).
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch {
    NoExpectedPlan,
    PlanId { actual: u64, expected: u64 },
    SpaceSize { actual: u64, expected: u64 },
    Plan,
}

impl Optimized {
    /// The plan judged as ORCA's harness judges it (CTestUtils::FPlanCompare):
    /// same plan id, plan space size per `space`, identical plan text.
    pub fn mismatch(&self, space: SpaceCheck) -> Option<Mismatch> {
        let Some(expected) = &self.expected_dxl else {
            return Some(Mismatch::NoExpectedPlan);
        };
        if self.plan_id != self.expected_plan_id {
            return Some(Mismatch::PlanId { actual: self.plan_id, expected: self.expected_plan_id });
        }
        let size_ok = match space {
            SpaceCheck::Equal => self.plan_space_size == self.expected_plan_space_size,
            SpaceCheck::AtMost => self.plan_space_size <= self.expected_plan_space_size,
        };
        if self.plan_dxl != *expected {
            return Some(Mismatch::Plan);
        }
        if !size_ok {
            return Some(Mismatch::SpaceSize {
                actual: self.plan_space_size,
                expected: self.expected_plan_space_size,
            });
        }
        None
    }

    /// The chosen plan as a tree.
    pub fn plan(&self) -> Result<plan::PlanNode, OrcaError> {
        plan::parse(&self.plan_dxl)
    }

    /// ORCA's statistics of the search.
    pub fn search_stats(&self) -> stats::SearchStats {
        stats::parse(&self.log)
    }
}

/// The function OIDs of PostgreSQL's built-ins vexec has kernels for
/// (`vexec_core::expr::kernel_functions`).
pub fn builtin_kernels() -> Vec<u32> {
    vexec_core::expr::kernel_functions::KERNEL_FUNCTIONS.iter().map(|&(oid, _)| oid).collect()
}

static ORCA: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    // A panic while holding the lock leaves ORCA as consistent as any
    // error does (each call has its own memory pool).
    ORCA.lock().unwrap_or_else(|e| e.into_inner())
}

const ERR_LEN: usize = 4096;

fn error_from(buf: &[c_char]) -> OrcaError {
    // SAFETY: the shim NUL-terminates the message within the buffer.
    let msg = unsafe { CStr::from_ptr(buf.as_ptr()) };
    OrcaError(msg.to_string_lossy().into_owned())
}

/// Initializes ORCA for this process (once; later calls return at once).
pub fn init() -> Result<(), OrcaError> {
    let _guard = lock();
    let mut err = [0 as c_char; ERR_LEN];
    // SAFETY: err is a writable buffer of ERR_LEN bytes.
    if unsafe { sys::orca_init(err.as_mut_ptr(), ERR_LEN) } != 0 {
        return Err(error_from(&err));
    }
    Ok(())
}

/// Names flags that ask ORCA to stop: it polls them between its
/// optimization jobs and the call returns an error when one is non-zero
/// (a PostgreSQL backend passes `QueryCancelPending` and `ProcDiePending`).
///
/// # Safety
/// Each pointer is null or valid for reads for as long as ORCA may run.
pub unsafe fn set_abort_flags(cancel: *const i32, die: *const i32) {
    let _guard = lock();
    // SAFETY: the caller vouches for the pointers; the shim only reads them.
    unsafe { sys::orca_set_abort_flags(cancel, die) };
}

/// The version of ORCA the shim was built against.
pub fn version() -> &'static str {
    // SAFETY: orca_version returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(sys::orca_version()) }.to_str().unwrap_or("?")
}

/// Takes a string the shim malloc'd (or NULL).
fn take(p: *mut c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: p is a NUL-terminated string from the shim, read before the
    // result is freed.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Optimizes the query of the minidump at `path`, as ORCA's minidump
/// harness does (its trace flags; plan enumeration on; no constant
/// evaluator).
pub fn optimize_minidump(path: &Path, options: &Options) -> Result<Optimized, OrcaError> {
    // A file that cannot be read is said so, not as a parse error.
    std::fs::File::open(path).map_err(|e| OrcaError(format!("could not open {}: {e}", path.display())))?;
    let c_path = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| OrcaError(format!("path contains a NUL byte: {}", path.display())))?;
    let (kind, factors, oids): (sys::OrcaCostModelKind, Factors, &[u32]) = match &options.cost_model {
        CostModel::Minidump => (sys::OrcaCostModelKind::ORCA_COST_MINIDUMP, Factors::NEUTRAL, &[]),
        CostModel::Gpdb => (sys::OrcaCostModelKind::ORCA_COST_GPDB, Factors::NEUTRAL, &[]),
        CostModel::Vec { factors, kernel_oids } => {
            (sys::OrcaCostModelKind::ORCA_COST_VEC, *factors, kernel_oids.as_slice())
        }
    };
    let opts = sys::OrcaOptions {
        cost_model: kind,
        // vexec's factors by ORCA's operator kinds: table scans a tuple into
        // a batch, filters and projections kernels, aggregation and hash
        // joins their key hashing, sorts; the hand-off to a row operator
        // costs `output` of a tuple on top of ORCA's per-tuple cost.
        vec: sys::OrcaVecFactors {
            scan: factors.tuple,
            filter: factors.kernel,
            agg: factors.group_key,
            hash_join: factors.hash_key,
            sort: factors.sort,
            handoff: 1.0 + factors.output,
        },
        kernel_oids: oids.as_ptr(),
        n_kernel_oids: oids.len(),
        space_pruning: options.space_pruning as i32,
    };
    let _guard = lock();
    let mut out = sys::OrcaResult {
        plan_dxl: std::ptr::null_mut(),
        expected_dxl: std::ptr::null_mut(),
        log: std::ptr::null_mut(),
        plan_id: 0,
        plan_space_size: 0,
        expected_plan_id: 0,
        expected_plan_space_size: 0,
        optimize_ms: 0.0,
    };
    let mut err = [0 as c_char; ERR_LEN];
    // SAFETY: every pointer is valid for the call: c_path and oids outlive
    // it, out and err are writable; the shim catches all C++ exceptions.
    let rc =
        unsafe { sys::orca_optimize_minidump(c_path.as_ptr(), &opts, &mut out, err.as_mut_ptr(), ERR_LEN) };
    let result = if rc != 0 {
        let mut e = error_from(&err);
        e.0 = format!("{}: {}", path.display(), e.0);
        Err(e)
    } else {
        Ok(Optimized {
            plan_dxl: take(out.plan_dxl).unwrap_or_default(),
            expected_dxl: take(out.expected_dxl),
            plan_id: out.plan_id,
            plan_space_size: out.plan_space_size,
            expected_plan_id: out.expected_plan_id,
            expected_plan_space_size: out.expected_plan_space_size,
            optimize_ms: out.optimize_ms,
            log: take(out.log).unwrap_or_default(),
        })
    };
    // SAFETY: out was filled by the shim (or zeroed); freed exactly once.
    unsafe { sys::orca_result_free(&mut out) };
    result
}

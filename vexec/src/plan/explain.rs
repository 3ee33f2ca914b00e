//! `EXPLAIN (VEXEC)`: registered through PostgreSQL's extension EXPLAIN
//! option API (PostgreSQL 18+). After the plan tree it prints the planning
//! report of the statement (see `report.rs`): every vector alternative that
//! was considered, and whether it was chosen, not chosen or not possible, and
//! why. Text, JSON, YAML and XML come from PostgreSQL's own property writers.
//!
//! The planner records alternatives only while an EXPLAIN with VEXEC on is
//! running (`vexec_requested`): the option's handler notes it, and a
//! ProcessUtility hook puts the previous value back when the EXPLAIN
//! statement ends, also by ERROR.

use std::cell::Cell;
use std::ffi::{c_char, CStr, CString};
use std::panic::AssertUnwindSafe;

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::report::{Report, NOTHING_CONSIDERED};

use super::report;

// pgrx binds C functions as guarded Rust functions; a C function *pointer*
// needs the symbol itself.
#[cfg(feature = "pg19")]
unsafe extern "C-unwind" {
    fn GUCCheckBooleanExplainOption(name: *const c_char, value: *const c_char, tag: pg_sys::NodeTag) -> bool;
}

static mut EXTENSION_ID: i32 = -1;
static mut PREV_PER_PLAN_HOOK: pg_sys::explain_per_plan_hook_type = None;
static mut PREV_PROCESS_UTILITY: pg_sys::ProcessUtility_hook_type = None;

thread_local! {
    /// Whether the EXPLAIN statement running now has VEXEC on.
    static REQUESTED: Cell<bool> = const { Cell::new(false) };
}

/// Whether statements are being planned for an EXPLAIN (VEXEC) (its own
/// statement, an EXPLAIN EXECUTE's fresh plan, and what they plan inside).
pub fn vexec_requested() -> bool {
    REQUESTED.with(Cell::get)
}

pub fn register() {
    // SAFETY: runs once, in _PG_init on the backend's main thread; previous hooks are kept and
    // called.
    unsafe {
        EXTENSION_ID = pg_sys::GetExplainExtensionId(c"vexec".as_ptr());
        #[cfg(feature = "pg19")]
        pg_sys::RegisterExtensionExplainOption(
            c"vexec".as_ptr(),
            Some(vexec_option_handler),
            Some(GUCCheckBooleanExplainOption),
        );
        #[cfg(feature = "pg18")]
        pg_sys::RegisterExtensionExplainOption(c"vexec".as_ptr(), Some(vexec_option_handler));
        PREV_PER_PLAN_HOOK = pg_sys::explain_per_plan_hook;
        pg_sys::explain_per_plan_hook = Some(vexec_per_plan);
        PREV_PROCESS_UTILITY = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(vexec_process_utility);
    }
}

/// Runs utility statements; around an EXPLAIN, keeps `REQUESTED` to that
/// statement (the option handler sets it while EXPLAIN parses its options).
#[pg_guard]
#[allow(clippy::too_many_arguments)]
unsafe extern "C-unwind" fn vexec_process_utility(
    pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const c_char,
    read_only_tree: bool,
    context: pg_sys::ProcessUtilityContext::Type,
    params: pg_sys::ParamListInfo,
    query_env: *mut pg_sys::QueryEnvironment,
    dest: *mut pg_sys::DestReceiver,
    qc: *mut pg_sys::QueryCompletion,
) {
    // SAFETY: the hook's arguments, passed on unchanged to the previous hook or standard_ProcessUtility.
    let run = || unsafe {
        match PREV_PROCESS_UTILITY {
            Some(prev) => prev(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc),
            None => pg_sys::standard_ProcessUtility(
                pstmt,
                query_string,
                read_only_tree,
                context,
                params,
                query_env,
                dest,
                qc,
            ),
        }
    };
    // SAFETY: pstmt is the utility statement being run.
    let explain = unsafe { (*(*pstmt).utilityStmt).type_ == pg_sys::NodeTag::T_ExplainStmt };
    if !explain {
        return run();
    }
    let saved = REQUESTED.with(|r| r.replace(false));
    PgTryBuilder::new(AssertUnwindSafe(run)).finally(|| REQUESTED.with(|r| r.set(saved))).execute()
}

/// Our state in an ExplainState: present (non-NULL) when VEXEC is on.
#[repr(C)]
struct VexecOptions {
    enabled: bool,
}

#[pg_guard]
unsafe extern "C-unwind" fn vexec_option_handler(
    es: *mut pg_sys::ExplainState,
    opt: *mut pg_sys::DefElem,
    _pstate: *mut pg_sys::ParseState,
) {
    // SAFETY: called by EXPLAIN's option parsing with a live DefElem and the running ExplainState.
    unsafe {
        // defGetBoolean gives PostgreSQL's own error for a non-boolean value.
        let enabled = pg_sys::defGetBoolean(opt);
        let mut state = pg_sys::GetExplainExtensionState(es, EXTENSION_ID) as *mut VexecOptions;
        if state.is_null() {
            state = pg_sys::palloc0(std::mem::size_of::<VexecOptions>()) as *mut VexecOptions;
            pg_sys::SetExplainExtensionState(es, EXTENSION_ID, state.cast());
        }
        (*state).enabled = enabled;
        REQUESTED.with(|r| r.set(enabled));
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn vexec_per_plan(
    pstmt: *mut pg_sys::PlannedStmt,
    into: *mut pg_sys::IntoClause,
    es: *mut pg_sys::ExplainState,
    query_string: *const c_char,
    params: pg_sys::ParamListInfo,
    query_env: *mut pg_sys::QueryEnvironment,
) {
    // SAFETY: the per-plan hook's arguments, passed on unchanged to the previous hook.
    unsafe {
        if let Some(prev) = PREV_PER_PLAN_HOOK {
            prev(pstmt, into, es, query_string, params, query_env);
        }
        let state = pg_sys::GetExplainExtensionState(es, EXTENSION_ID) as *mut VexecOptions;
        if state.is_null() || !(*state).enabled {
            return;
        }
        print_report(report::find(pstmt).as_ref(), es);
    }
}

unsafe fn print_report(report: Option<&Report>, es: *mut pg_sys::ExplainState) {
    // SAFETY: es is the running EXPLAIN (caller's contract).
    unsafe {
        let summary = match report {
            Some(r) => r.summary(),
            None => NOTHING_CONSIDERED.to_string(),
        };
        if (*es).format == pg_sys::ExplainFormat::EXPLAIN_FORMAT_TEXT {
            property_text(c"Vexec", &summary, es);
            if let Some(r) = report {
                for (level, line) in r.text_lines((*es).costs) {
                    pg_sys::appendStringInfoSpaces((*es).str_, ((*es).indent + 1 + level as i32) * 2);
                    append(es, &line);
                    pg_sys::appendStringInfoChar((*es).str_, b'\n' as c_char);
                }
            }
            return;
        }
        pg_sys::ExplainOpenGroup(c"Vexec".as_ptr(), c"Vexec".as_ptr(), true, es);
        property_text(c"Summary", &summary, es);
        if let Some(r) = report {
            property_text(c"Mode", &r.mode, es);
            property_text(c"Batch Format", &r.batch_format, es);
            pg_sys::ExplainPropertyBool(c"Alternatives Recorded".as_ptr(), r.recorded, es);
        }
        pg_sys::ExplainOpenGroup(c"Alternatives".as_ptr(), c"Alternatives".as_ptr(), false, es);
        for alt in report.map(|r| r.alternatives.as_slice()).unwrap_or_default() {
            pg_sys::ExplainOpenGroup(c"Alternative".as_ptr(), std::ptr::null(), true, es);
            property_text(c"Node", &alt.node, es);
            property_text(c"Target", &alt.target, es);
            property_text(c"Verdict", alt.verdict.name(), es);
            if let Some(reason) = alt.verdict.reason() {
                property_text(c"Reason", reason, es);
            }
            if (*es).costs {
                if let Some(c) = alt.row_cost {
                    pg_sys::ExplainPropertyFloat(c"Row Cost".as_ptr(), std::ptr::null(), c, 2, es);
                }
                if let Some(c) = alt.vector_cost {
                    pg_sys::ExplainPropertyFloat(c"Vector Cost".as_ptr(), std::ptr::null(), c, 2, es);
                }
            }
            let mut details: *mut pg_sys::List = std::ptr::null_mut();
            for d in &alt.details {
                details = pg_sys::lappend(details, pstr(d).cast());
            }
            pg_sys::ExplainPropertyList(c"Details".as_ptr(), details, es);
            pg_sys::ExplainCloseGroup(c"Alternative".as_ptr(), std::ptr::null(), true, es);
        }
        pg_sys::ExplainCloseGroup(c"Alternatives".as_ptr(), c"Alternatives".as_ptr(), false, es);
        pg_sys::ExplainCloseGroup(c"Vexec".as_ptr(), c"Vexec".as_ptr(), true, es);
    }
}

/// A palloc'd copy of `s` (EXPLAIN's writers keep pointers to their input).
fn pstr(s: &str) -> *mut c_char {
    let c = CString::new(s.replace('\0', "")).unwrap_or_default();
    // SAFETY: pstrdup copies a NUL-terminated string into the current memory context.
    unsafe { pg_sys::pstrdup(c.as_ptr()) }
}

unsafe fn property_text(label: &CStr, value: &str, es: *mut pg_sys::ExplainState) {
    // SAFETY: es is the running EXPLAIN (caller's contract).
    unsafe { pg_sys::ExplainPropertyText(label.as_ptr(), pstr(value), es) }
}

unsafe fn append(es: *mut pg_sys::ExplainState, s: &str) {
    // SAFETY: es is the running EXPLAIN (caller's contract).
    unsafe { pg_sys::appendStringInfoString((*es).str_, pstr(s)) }
}

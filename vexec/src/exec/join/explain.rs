//! EXPLAIN output of VecHashJoin.

#[allow(unused_imports)]
use super::*;

pub(super) unsafe fn explain(
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: VecNode::explain's contract: node is this VecHashJoin's node, es the running EXPLAIN.
    unsafe {
        let st = state(node);
        let plan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan.cast(), ancestors);
        let prefix = true;
        let tlist: Vec<*mut pg_sys::TargetEntry> = list_ptrs((*plan).custom_scan_tlist).collect();
        let deparse = |e: *mut pg_sys::Node| -> String {
            let s = pg_sys::deparse_expression(e, context, prefix, false);
            std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
        };
        let conds: Vec<String> = st
            .outer
            .keys
            .iter()
            .zip(&st.inner.keys)
            .map(|(&o, &i)| {
                format!(
                    "({} = {})",
                    deparse((*tlist[o]).expr.cast()),
                    deparse((*tlist[st.nouter + i]).expr.cast())
                )
            })
            .collect();
        let prop = |label: &std::ffi::CStr, value: String| crate::pgutil::explain_text(es, label, &value);
        let int = |label: &std::ffi::CStr, unit: Option<&std::ffi::CStr>, v: u64| {
            pg_sys::ExplainPropertyInteger(
                label.as_ptr(),
                unit.map_or(ptr::null(), |u| u.as_ptr()),
                v as i64,
                es,
            )
        };
        prop(c"Join Type", st.jointype.name().into());
        prop(c"Hash Cond", conds.join(" AND "));
        let joinquals = (*plan).custom_exprs;
        if !joinquals.is_null() {
            let e = pg_sys::make_ands_explicit(joinquals);
            prop(c"Join Filter", deparse(e.cast()));
        }
        if (*es).verbose {
            let kind = |s: &Side| if s.src.batches() { "batches" } else { "rows" };
            prop(c"Inputs", format!("outer {}, inner {}", kind(&st.outer), kind(&st.inner)));
            if let Some(o) = &st.output {
                let (columns, kernels, evaluated) = o.counts();
                prop(
                    c"Vector Output",
                    format!("batches ({columns} columns, {kernels} kernel, {evaluated} evaluated targets)"),
                );
            }
        }
        if st.shares_build {
            prop(c"Build", "shared".into());
        }
        if (*es).analyze {
            if !st.shared.is_null() {
                int(c"Shared Inner Rows Written", None, st.stats.shared_rows);
            }
            int(c"Build Rows", None, st.stats.build_rows);
            int(c"Probe Batches", None, st.stats.probe_batches);
            int(c"Peak Memory", Some(c"kB"), st.stats.peak_memory.div_ceil(1024) as u64);
            // (A parallel participant that partitioned its build may have
            // had no outer row to join in any partition: it shows 0.)
            if st.stats.partitions > 0 || st.stats.partitioned {
                int(c"Partitions", None, st.stats.partitions);
                int(c"Spilled Rows", None, st.stats.spilled_rows);
                int(c"Spilled", Some(c"kB"), st.stats.spilled_bytes.div_ceil(1024));
            }
        }
    }
}

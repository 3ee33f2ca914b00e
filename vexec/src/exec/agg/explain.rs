//! EXPLAIN output of VecAgg.

#[allow(unused_imports)]
use super::*;

pub(super) unsafe fn explain(
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: VecNode::explain's contract: node is this VecAgg's node, es the running EXPLAIN.
    unsafe {
        let st = state(node);
        let prop = |label: &std::ffi::CStr, value: String| crate::pgutil::explain_text(es, label, &value);
        let int = |label: &std::ffi::CStr, unit: Option<&std::ffi::CStr>, v: u64| {
            pg_sys::ExplainPropertyInteger(
                label.as_ptr(),
                unit.map_or(ptr::null(), |u| u.as_ptr()),
                v as i64,
                es,
            )
        };
        match &st.grouping {
            None => prop(c"Strategy", "Plain".into()),
            Some(g) => {
                prop(c"Strategy", "Hashed".into());
                // The keys as PostgreSQL's Agg shows them (custom_scan_tlist
                // holds them first, as expressions over the scanned relation).
                let plan = (*node).ss.ps.plan;
                let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan, ancestors);
                let prefix = !(*es).rtable.is_null() && (*(*es).rtable).length > 1;
                let keys: Vec<String> =
                    list_ptrs::<pg_sys::TargetEntry>((*(plan as *mut pg_sys::CustomScan)).custom_scan_tlist)
                        .take(g.kinds.len())
                        .map(|te| {
                            let s = pg_sys::deparse_expression((*te).expr.cast(), context, prefix, false);
                            std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
                        })
                        .collect();
                prop(c"Group Key", keys.join(", "));
            }
        }
        if (*es).verbose {
            let nfmgr = st.fmgr.iter().flatten().count();
            prop(c"Vector Transitions", format!("{} of {}", st.items.len() - nfmgr, st.items.len()));
            if nfmgr > 0 {
                int(c"Fmgr Transitions", None, nfmgr as u64);
            }
            let scaled = st.items.iter().filter(|it| it.arg_scale.is_some()).count();
            if scaled > 0 {
                int(c"Scaled Numeric Arguments", None, scaled as u64);
            }
        }
        if (*es).analyze {
            int(c"Batches", None, st.stats.batches);
            if st.grouping.is_some() {
                int(c"Groups", None, st.stats.groups);
                int(c"Peak Memory", Some(c"kB"), st.stats.peak_memory.div_ceil(1024) as u64);
                if st.stats.spill_files > 0 {
                    int(c"Spill Files", None, st.stats.spill_files);
                    int(c"Spilled Rows", None, st.stats.spilled_rows);
                    int(c"Spilled", Some(c"kB"), st.stats.spilled_bytes.div_ceil(1024));
                }
            }
        }
    }
}

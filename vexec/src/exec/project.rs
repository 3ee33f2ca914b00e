//! The target list of a node that assembles its own batches (VecHashJoin's
//! joined rows), computed a batch at a time for a vector parent.
//!
//! The node's scan tuple is its `custom_scan_tlist`; after set_references
//! its target list reads it through `INDEX_VAR` Vars. A target that is one
//! such Var is the gathered column itself; any other target is compiled by
//! the expression compiler when every node has a kernel, else evaluated by
//! PostgreSQL row by row.
//!
//! Order of evaluation, as in VecScan (see exec/scan.rs): where the node
//! evaluates no qual of its own, kernels run over the whole batch first
//! (they never raise; they report), then PostgreSQL's evaluator runs the
//! other targets row by row; if a kernel reported an error, every computed
//! target is evaluated row by row instead ("row mode"), which raises
//! PostgreSQL's error at PostgreSQL's row. Where the node has quals, each
//! row's computed targets are evaluated right after its quals passed
//! (`per_row`), so a qual's error and a target's error come in the row
//! executor's order; kernels are then not used.

use std::ptr;

use pgrx::pg_sys;
use vexec_core::batch::{full_selection, Column, PhysType, RowIdx};
use vexec_core::expr::{self, EvalCtx, VExpr};

use crate::expr::compile::{phys_of, Compiler};
use crate::pgutil::list_ptrs;
use crate::shim::{self, VxInput, VxTargetItem};

pub enum Target {
    /// Scan tuple column (0-based).
    Column(usize),
    Kernel(VExpr),
    /// PostgreSQL's evaluator.
    Eval,
}

pub struct Projection {
    pub targets: Vec<Target>,
    states: Vec<*mut pg_sys::ExprState>,
    copy_typlen: Vec<i16>,
    phys: Vec<PhysType>,
    /// Targets a parent asked for as scaled integers (numeric Datums in row mode).
    scaled: Vec<bool>,
    /// Per compiler input (a kernel's column index), its scan column.
    kernel_inputs: Vec<usize>,
    /// The scan columns (0-based) computed targets read.
    eval_inputs: Vec<usize>,
    /// Computed targets are evaluated at each row, right after its quals.
    pub per_row: bool,
    /// Subexpressions computed once per batch (see `EvalCtx::shared`).
    shared: Vec<VExpr>,
    /// per_row: each computed target's value and NULL flag per output row.
    row_values: Vec<Vec<usize>>,
    row_nulls: Vec<Vec<bool>>,
    pub row_mode_batches: u64,
    /// Pack functions' fmgr lookups (in the query's memory context).
    fmgr: crate::exec::host::FmgrCache,
}

/// The scan column of a plain `INDEX_VAR` Var (under binary relabelings
/// that keep the physical type).
unsafe fn index_var(e: *mut pg_sys::Node) -> Option<usize> {
    // SAFETY: e is a live expression node of the target list (caller's contract).
    unsafe {
        if (*e).type_ != pg_sys::NodeTag::T_Var {
            return None;
        }
        let v = e as *mut pg_sys::Var;
        ((*v).varno == pg_sys::INDEX_VAR && (*v).varattno > 0 && (*v).varlevelsup == 0)
            .then(|| (*v).varattno as usize - 1)
    }
}

impl Projection {
    /// Compile the target list `tlist` (over `INDEX_VAR`) of node `ps`.
    ///
    /// # Safety
    /// Called in the query's memory context with the node begun.
    pub unsafe fn new(ps: *mut pg_sys::PlanState, tlist: *mut pg_sys::List, per_row: bool) -> Projection {
        // SAFETY: this function's contract: called in the query's memory context with ps begun;
        // tlist is its plan's target list.
        unsafe {
            let mut compiler = Compiler::new(pg_sys::INDEX_VAR as u32);
            let mut p = Projection {
                targets: Vec::new(),
                states: Vec::new(),
                copy_typlen: Vec::new(),
                phys: Vec::new(),
                scaled: Vec::new(),
                kernel_inputs: Vec::new(),
                eval_inputs: Vec::new(),
                per_row,
                shared: Vec::new(),
                row_values: Vec::new(),
                row_nulls: Vec::new(),
                row_mode_batches: 0,
                fmgr: crate::exec::host::FmgrCache::new(),
            };
            let flags = (pg_sys::PVC_RECURSE_AGGREGATES
                | pg_sys::PVC_RECURSE_WINDOWFUNCS
                | pg_sys::PVC_RECURSE_PLACEHOLDERS) as i32;
            for te in list_ptrs::<pg_sys::TargetEntry>(tlist) {
                let e = (*te).expr as *mut pg_sys::Node;
                let typid = pg_sys::exprType(e);
                p.phys.push(phys_of(typid).0);
                p.states.push(pg_sys::ExecInitExpr(e.cast(), ps));
                let by_ref = !pg_sys::get_typbyval(typid);
                let copy = by_ref && pg_sys::contain_subplans(e);
                p.copy_typlen.push(if copy { pg_sys::get_typlen(typid) } else { 0 });
                if let Some(c) = index_var(e) {
                    p.targets.push(Target::Column(c));
                    continue;
                }
                for v in list_ptrs::<pg_sys::Node>(pg_sys::pull_var_clause(e, flags)) {
                    if let Some(c) = index_var(v) {
                        if !p.eval_inputs.contains(&c) {
                            p.eval_inputs.push(c);
                        }
                    }
                }
                let kernel = if per_row || crate::settings::DEBUG_FORCE_FALLBACK.get() {
                    None
                } else {
                    let n = compiler.params.len();
                    let k = compiler.compile(e);
                    // (Parameters: the evaluator's; one per batch is not worth it here.)
                    if compiler.params.len() > n {
                        compiler.params.truncate(n);
                        None
                    } else {
                        k
                    }
                };
                p.targets.push(match kernel {
                    Some(k) => Target::Kernel(k),
                    None => Target::Eval,
                });
            }
            p.kernel_inputs = compiler.inputs.iter().map(|a| a.attnum as usize - 1).collect();
            let n = p.targets.len();
            p.scaled = vec![false; n];
            p.row_values = vec![vec![0; vexec_core::batch::BATCH_CAPACITY]; n];
            p.row_nulls = vec![vec![true; vexec_core::batch::BATCH_CAPACITY]; n];
            p.find_shared();
            p
        }
    }

    /// Recompute `shared` after the kernel targets change.
    fn find_shared(&mut self) {
        let kernels =
            self.targets.iter().filter_map(|t| if let Target::Kernel(e) = t { Some(e) } else { None });
        self.shared = vexec_core::expr::shared_subexpressions(kernels);
    }

    /// The scan columns a batch must be gathered for.
    pub fn needed_columns(&self) -> Vec<usize> {
        let mut cols: Vec<usize> = self
            .targets
            .iter()
            .filter_map(|t| match t {
                Target::Column(c) => Some(*c),
                _ => None,
            })
            .collect();
        if !self.per_row {
            cols.extend(&self.kernel_inputs);
            cols.extend(&self.eval_inputs);
        }
        cols.sort_unstable();
        cols.dedup();
        cols
    }

    pub fn counts(&self) -> (usize, usize, usize) {
        let mut n = (0, 0, 0);
        for t in &self.targets {
            match t {
                Target::Column(_) => n.0 += 1,
                Target::Kernel(_) => n.1 += 1,
                Target::Eval => n.2 += 1,
            }
        }
        n
    }

    /// Target `t` as integers scaled by `10^scale` for a parent that
    /// aggregates numerics (see VecScan's `request_scaled`). Only where
    /// kernels are used at all.
    ///
    /// # Safety
    /// `tlist` is the list `new` compiled.
    pub unsafe fn request_scaled(&mut self, tlist: *mut pg_sys::List, t: usize) -> Option<u16> {
        // SAFETY: this function's contract: tlist is the list new() compiled.
        unsafe {
            if self.per_row || crate::settings::DEBUG_FORCE_FALLBACK.get() {
                return None;
            }
            let te = list_ptrs::<pg_sys::TargetEntry>(tlist).nth(t)?;
            let mut c = Compiler::new(pg_sys::INDEX_VAR as u32);
            let (mut e, scale) = c.compile_scaled((*te).expr.cast())?;
            if !c.params.is_empty() {
                return None;
            }
            let mut new_index = Vec::with_capacity(c.inputs.len());
            for a in &c.inputs {
                let col = a.attnum as usize - 1;
                let i = match self.kernel_inputs.iter().position(|&k| k == col) {
                    Some(i) => i,
                    None => {
                        self.kernel_inputs.push(col);
                        self.kernel_inputs.len() - 1
                    }
                };
                new_index.push(i);
            }
            e.remap_columns(&new_index);
            self.targets[t] = Target::Kernel(e);
            self.scaled[t] = true;
            self.find_shared();
            Some(scale)
        }
    }

    /// per_row: evaluate the computed targets for output row `n` on the
    /// scan tuple the econtext holds, results in the current memory context.
    ///
    /// # Safety
    /// The econtext's scan tuple is the row's.
    pub unsafe fn eval_row(&mut self, n: usize, econtext: *mut pg_sys::ExprContext) {
        // SAFETY: this function's contract: the econtext's scan tuple is the row's.
        unsafe {
            for (t, target) in self.targets.iter().enumerate() {
                if !matches!(target, Target::Eval) {
                    continue;
                }
                let mut isnull = false;
                let state = self.states[t];
                let mut d = pg_sys::ExecEvalExpr(state, econtext, &mut isnull).value();
                if !isnull && self.copy_typlen[t] != 0 {
                    d = pg_sys::datumCopy(pg_sys::Datum::from(d), false, self.copy_typlen[t] as i32).value();
                }
                self.row_values[t][n] = d;
                self.row_nulls[t][n] = isnull;
            }
        }
    }

    /// The output columns of a batch of `n` rows whose scan columns
    /// `gathered` holds (those `needed_columns` named). Evaluator results
    /// live in the econtext's per-tuple memory.
    ///
    /// # Safety
    /// `slot` is the node's scan tuple slot.
    pub unsafe fn project(
        &mut self,
        gathered: &[Option<Column>],
        n: usize,
        econtext: *mut pg_sys::ExprContext,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> Vec<Column> {
        // SAFETY: the batch's columns and the slot are the caller's live batch and node slot (this
        // function's contract); the kernels' Datums point into them.
        unsafe {
            let rows = full_selection(n);
            let mut out: Vec<Option<Column>> = (0..self.targets.len()).map(|_| None).collect();
            let mut row_mode = false;
            if !self.per_row {
                let inputs: Vec<Column> = self
                    .kernel_inputs
                    .iter()
                    .map(|&c| gathered[c].clone().expect("a gathered kernel input"))
                    .collect();
                let mut host = crate::exec::host::PgHost { fmgr: &mut self.fmgr };
                // (Inside this function's unsafe block: the gathered Datums
                // point into the batch's memory, the constants into the plan.)
                let mut ctx = EvalCtx::new(&inputs, &[], n, &mut host, &self.shared);
                for (t, target) in self.targets.iter().enumerate() {
                    if let Target::Kernel(e) = target {
                        match expr::eval(e, &mut ctx, &rows) {
                            Ok(c) => out[t] = Some(c),
                            Err(_) => {
                                row_mode = true;
                                break;
                            }
                        }
                    }
                }
                if row_mode {
                    self.row_mode_batches += 1;
                    out.iter_mut().for_each(|o| *o = None);
                }
                self.eval_rows(gathered, &rows, row_mode, econtext, slot);
            }
            self.targets
                .iter()
                .enumerate()
                .map(|(t, target)| match (target, out[t].take()) {
                    (Target::Column(c), _) => gathered[*c].clone().expect("a gathered column"),
                    (_, Some(col)) => col,
                    // Evaluated by PostgreSQL: per row, or in row mode.
                    (_, None) => {
                        let phys = if self.scaled[t] {
                            // A scaled numeric target computed as numeric Datums.
                            PhysType::Datum
                        } else {
                            self.phys[t]
                        };
                        let mut c = Column::new(phys, n);
                        for r in 0..n {
                            if self.row_nulls[t][r] {
                                c.validity.set(r, false);
                            } else {
                                c.values.set_datum(r, self.row_values[t][r]);
                            }
                        }
                        c
                    }
                })
                .collect()
        }
    }

    /// PostgreSQL's evaluator over the batch, row by row in order: the
    /// `Eval` targets, or every computed target in row mode.
    unsafe fn eval_rows(
        &mut self,
        gathered: &[Option<Column>],
        rows: &[RowIdx],
        row_mode: bool,
        econtext: *mut pg_sys::ExprContext,
        slot: *mut pg_sys::TupleTableSlot,
    ) {
        // SAFETY: as project().
        unsafe {
            let evaluated =
                |t: &Target| matches!(t, Target::Eval) || (row_mode && matches!(t, Target::Kernel(_)));
            if !self.targets.iter().any(evaluated) {
                return;
            }
            let datums: Vec<(usize, Vec<usize>)> = self
                .eval_inputs
                .iter()
                .map(|&c| {
                    let col = gathered[c].as_ref().expect("a gathered input");
                    (c, rows.iter().map(|&r| col.values.datum(r as usize)).collect())
                })
                .collect();
            let inputs: Vec<VxInput> = datums
                .iter()
                .map(|(c, d)| VxInput {
                    attnum: *c as i32 + 1,
                    values: d.as_ptr(),
                    validity: gathered[*c].as_ref().expect("a gathered input").validity.as_bytes().as_ptr(),
                })
                .collect();
            let items: Vec<VxTargetItem> = self
                .targets
                .iter()
                .enumerate()
                .map(|(t, target)| match evaluated(target) {
                    true => VxTargetItem {
                        state: self.states[t],
                        values: self.row_values[t].as_mut_ptr(),
                        isnull: self.row_nulls[t].as_mut_ptr(),
                        copy_typlen: self.copy_typlen[t],
                    },
                    false => VxTargetItem {
                        state: ptr::null_mut(),
                        values: ptr::null_mut(),
                        isnull: ptr::null_mut(),
                        copy_typlen: 0,
                    },
                })
                .collect();
            let mut passing = vec![0u16; rows.len()];
            shim::vx_eval_rows(
                econtext,
                slot,
                inputs.len() as i32,
                inputs.as_ptr(),
                ptr::null(),
                rows.len() as i32,
                rows.as_ptr(),
                0,
                ptr::null(),
                items.len() as i32,
                items.as_ptr(),
                passing.as_mut_ptr(),
            );
        }
    }
}

//! A child plan read as batches, for the vector nodes above other nodes
//! (VecAgg, VecSort, VecHashJoin): a vector node that produces batches
//! (VecScan, VecHashJoin, VecAgg but a Partial one)
//! through its batch interface, any other plan through its slots, a batch
//! of rows at a time.

use std::cell::Cell;

use crate::pgutil::list_ptrs;
use pgrx::pg_sys;
use vexec_core::batch::{Column, PhysType, RowIdx, Values, BATCH_CAPACITY};

use crate::exec::node::{self, BatchOps};
use crate::shim;

pub struct ChildInput {
    pub child: *mut pg_sys::PlanState,
    /// The child's batch interface, if it is a vexec node that gives
    /// batches (`node::batch_source`); read through its slots otherwise.
    batches: Option<&'static BatchOps>,
    /// Per column of the child's output: its physical type, and the typlen
    /// of a by-reference type.
    pub types: Vec<PhysType>,
    pub by_ref: Vec<Option<i16>>,
    /// The child returned its last row: a node must not be called again
    /// before a rescan (an index scan would start over).
    done: Cell<bool>,
    /// Arrow-layout columns of the child's batches converted to the
    /// postgres layout, which the nodes above a scan read.
    pub conversions: Cell<u64>,
    /// The child leaves some columns of its batches unread until
    /// [`ChildInput::complete`] (see [`ChildInput::defer`]).
    deferring: bool,
}

impl ChildInput {
    /// ExecInitNode the child plan.
    ///
    /// # Safety
    /// Called from a BeginCustomScan with its estate.
    pub unsafe fn init(plan: *mut pg_sys::Plan, estate: *mut pg_sys::EState, eflags: i32) -> ChildInput {
        // SAFETY: this function's contract: called from a BeginCustomScan with its estate; plan is
        // a child plan of that node.
        unsafe {
            let child = pg_sys::ExecInitNode(plan, estate, eflags);
            let batches = node::batch_source(child);
            let mut types = Vec::new();
            let mut by_ref = Vec::new();
            for te in list_ptrs::<pg_sys::TargetEntry>((*plan).targetlist) {
                let t = pg_sys::exprType((*te).expr.cast());
                let (mut len, mut byval) = (0i16, false);
                pg_sys::get_typlenbyval(t, &mut len, &mut byval);
                types.push(crate::expr::compile::phys_of(t).0);
                by_ref.push((!byval).then_some(len));
            }
            ChildInput {
                child,
                batches,
                types,
                by_ref,
                done: Cell::new(false),
                conversions: Cell::new(0),
                deferring: false,
            }
        }
    }

    /// The next batch (None at the end): live rows, by-reference values
    /// valid until the next call (a slot's values are copied into
    /// `per_batch`, since the next row replaces them). The child runs in
    /// the caller's memory context: it keeps state across calls.
    ///
    /// # Safety
    /// The child has begun.
    pub unsafe fn next(&self, per_batch: pg_sys::MemoryContext) -> Option<(Vec<Column>, Vec<RowIdx>)> {
        // SAFETY: this function's contract: the child has begun; per_batch is the parent's live
        // per-batch context.
        unsafe {
            if self.done.get() {
                return None;
            }
            if let Some(ops) = self.batches {
                let b = ops.next_batch(self.child);
                if b.is_none() {
                    self.done.set(true);
                }
                return b.map(|b| (self.to_postgres(b.columns, &b.rows, per_batch), b.rows));
            }
            let mut columns: Vec<Column> =
                self.types.iter().map(|&t| Column::new(t, BATCH_CAPACITY)).collect();
            let ncols = columns.len();
            let mut n = 0;
            while n < BATCH_CAPACITY {
                let slot = pg_sys::ExecProcNode(self.child);
                if slot.is_null() || (*slot).tts_flags & pg_sys::TTS_FLAG_EMPTY as u16 != 0 {
                    self.done.set(true);
                    break;
                }
                pg_sys::slot_getsomeattrs(slot, ncols as i32);
                let old = pg_sys::MemoryContextSwitchTo(per_batch);
                for (c, col) in columns.iter_mut().enumerate() {
                    if *(*slot).tts_isnull.add(c) {
                        col.validity.set(n, false);
                        continue;
                    }
                    let mut d = (*(*slot).tts_values.add(c)).value();
                    if let Some(typlen) = self.by_ref[c] {
                        d = pg_sys::datumCopy(pg_sys::Datum::from(d), false, typlen as i32).value();
                    }
                    col.values.set_datum(n, d);
                }
                pg_sys::MemoryContextSwitchTo(old);
                n += 1;
            }
            (n > 0).then(|| (columns, vexec_core::batch::full_selection(n)))
        }
    }

    /// `columns` in the postgres layout (for the rows `rows`), numerics
    /// converted from Decimal128 allocated in `per_batch`.
    fn to_postgres(
        &self,
        mut columns: Vec<Column>,
        rows: &[RowIdx],
        per_batch: pg_sys::MemoryContext,
    ) -> Vec<Column> {
        for col in columns.iter_mut().filter(|c| c.values.is_arrow()) {
            self.conversions.set(self.conversions.get() + 1);
            *col = vexec_core::batch::layout::to_postgres(col, rows, &mut |bytes| {
                // SAFETY: the parent's live per-batch context, which outlives the batch.
                unsafe { crate::pgutil::palloc_copy(per_batch, bytes) }
            });
        }
        columns
    }

    /// EXPLAIN ANALYZE's count of the conversions of `inputs` (shown when
    /// there were any).
    ///
    /// # Safety
    /// `es` is the running EXPLAIN.
    pub unsafe fn explain_conversions(inputs: &[&ChildInput], es: *mut pg_sys::ExplainState) {
        let n: u64 = inputs.iter().map(|i| i.conversions.get()).sum();
        // SAFETY: this function's contract.
        unsafe {
            if (*es).analyze && n > 0 {
                pg_sys::ExplainPropertyInteger(
                    c"Layout Conversions".as_ptr(),
                    std::ptr::null(),
                    n as i64,
                    es,
                );
            }
        }
    }

    /// Late materialization across nodes: the parent needs the columns
    /// `needed` names for every row of a batch, the others only for the
    /// rows it passes to [`ChildInput::complete`], which it must call for
    /// every batch before reading those columns. Before the first batch.
    ///
    /// # Safety
    /// The child has begun and has not returned a batch yet.
    pub unsafe fn defer(&mut self, needed: &[bool]) {
        if let Some(ops) = self.batches {
            // SAFETY: this function's contract; `batches` was found for this child.
            self.deferring = unsafe { ops.defer(self.child, needed) }.contains(&true);
        }
    }

    /// Fill the deferred columns of the batch `next` returned last
    /// (`columns`) for `rows`; the other rows' values in them stay unread.
    ///
    /// # Safety
    /// `columns` are the last batch's; `per_batch` as given to `next`.
    pub unsafe fn complete(&self, columns: &mut [Column], rows: &[RowIdx], per_batch: pg_sys::MemoryContext) {
        let Some(ops) = self.batches.filter(|_| self.deferring) else { return };
        // SAFETY: this function's contract.
        for (c, col) in unsafe { ops.complete(self.child, rows) } {
            columns[c] = self.to_postgres(vec![col], rows, per_batch).pop().expect("one column");
        }
    }

    /// Whether the child is read through its batch interface.
    pub fn batches(&self) -> bool {
        self.batches.is_some()
    }

    /// Ask the child to compute numeric target `target` as scaled integers
    /// (`BatchSource::request_scaled`); None (nothing changed) for a row
    /// child, which is never asked.
    ///
    /// # Safety
    /// The child has begun and has not returned a batch yet.
    pub unsafe fn request_scaled(&self, target: usize) -> Option<u16> {
        // SAFETY: `batches` was found for this child.
        unsafe { self.batches?.request_scaled(self.child, target) }
    }

    /// The child was rescanned: it may be read again.
    pub fn rescanned(&self) {
        self.done.set(false);
    }

    /// About what [`ChildInput::copy_by_ref`] will allocate for `rows`
    /// (not detoasting): each value's size rounded up to a power of two,
    /// as an AllocSet rounds a small request, and a chunk header.
    ///
    /// # Safety
    /// As [`ChildInput::copy_by_ref`].
    pub unsafe fn by_ref_bytes(&self, columns: &[Column], rows: &[RowIdx]) -> usize {
        let mut bytes = 0;
        for (c, col) in columns.iter().enumerate() {
            let Some(typlen) = self.by_ref[c] else { continue };
            let Values::Datum(v) = &col.values else { continue };
            for &r in rows {
                let r = r as usize;
                if !col.validity.get(r) {
                    continue;
                }
                let size = if typlen > 0 {
                    typlen as usize
                } else if typlen == -1 {
                    // SAFETY: a valid value of a varlena column points to one.
                    unsafe { pgrx::varlena::varsize_any(v[r] as *const pg_sys::varlena) }
                } else {
                    // SAFETY: a valid value of a cstring column points to one.
                    unsafe { std::ffi::CStr::from_ptr(v[r] as *const std::ffi::c_char).count_bytes() + 1 }
                };
                bytes += size.max(8).next_power_of_two() + 8;
            }
        }
        bytes
    }

    /// Copy the by-reference values of `rows` into `cxt` (detoasted where
    /// `detoast(column)` says), in one guarded call per column.
    ///
    /// # Safety
    /// `columns` are a batch of this child's columns.
    pub unsafe fn copy_by_ref(
        &self,
        columns: &mut [Column],
        rows: &[RowIdx],
        detoast: impl Fn(usize) -> bool,
        cxt: pg_sys::MemoryContext,
    ) {
        // SAFETY: columns hold the child's values for the rows; cxt is a live context that takes
        // the copies (caller's contract).
        unsafe {
            for (c, col) in columns.iter_mut().enumerate() {
                let Some(typlen) = self.by_ref[c] else { continue };
                let Values::Datum(v) = &mut col.values else { continue };
                let values = v.as_mut_ptr();
                let validity = col.validity.as_bytes().as_ptr();
                let plain = detoast(c);
                let old = pg_sys::MemoryContextSwitchTo(cxt);
                shim::vx_copy_datums(values, validity, rows.len() as i32, rows.as_ptr(), typlen, plain);
                pg_sys::MemoryContextSwitchTo(old);
            }
        }
    }
}

/// A memory context for a node's rows, under `parent`.
///
/// # Safety
/// `parent` is a valid memory context; `name` is static.
pub unsafe fn rows_context(
    parent: pg_sys::MemoryContext,
    name: &'static std::ffi::CStr,
) -> pg_sys::MemoryContext {
    // SAFETY: parent is a live memory context (caller's contract); name is a static string, as the
    // API requires.
    unsafe { pg_sys::AllocSetContextCreateInternal(parent, name.as_ptr(), 0, 8 * 1024, 8 * 1024 * 1024) }
}

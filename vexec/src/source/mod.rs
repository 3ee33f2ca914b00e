//! Where batches come from.
//!
//! - heap: vexec's own page reader (csrc/vexec_shim.c): heap's read stream,
//!   heap_prepare_pagescan() for pruning and (batched) visibility, and only
//!   the needed columns deformed straight into the batch. Datums of
//!   by-reference columns point into the pages, which stay pinned until the
//!   batch is consumed (at most `MAX_PINS` pages a batch).
//! - any other table access method: its own scan through a slot, values
//!   copied into the batch.
//!
//! The scan itself (snapshot, parallel block allocation, sync scan, predicate
//! locks) is always the access method's, opened by table_beginscan.

use pgrx::pg_sys;
use vexec_core::batch::layout::{self, ArrowKind};
use vexec_core::batch::{Column, PhysType, RowIdx, Values};

use crate::shim::{self, VxColumn};

/// Pages one batch may keep pinned.
const MAX_PINS: i32 = 128;

/// One needed attribute of the scanned relation.
#[derive(Debug, Clone, Copy)]
pub struct InputAttr {
    pub attnum: i16,
    pub phys: PhysType,
    /// `"char"` (1 byte by value, not bool): widened to int16.
    pub is_char: bool,
}

impl InputAttr {
    fn kind(&self) -> i32 {
        match self.phys {
            _ if self.is_char => shim::KIND_CHAR,
            PhysType::Bool => shim::KIND_U8,
            PhysType::I16 => shim::KIND_I16,
            PhysType::I32 | PhysType::F32 => shim::KIND_W4,
            PhysType::I64 | PhysType::F64 => shim::KIND_W8,
            PhysType::Datum => shim::KIND_DATUM,
            PhysType::I128 => unreachable!("no relation attribute is stored as an i128"),
        }
    }
}

/// The columns the source fills, one per needed attribute.
pub struct InputBatch {
    /// In the postgres layout as the source fills them; a column put in
    /// the arrow layout for the batch ([`InputBatch::to_arrow`]) holds its
    /// arrow values here and its filled values in `parked`.
    pub columns: Vec<Column>,
    /// Per column, the values the source filled while `columns` holds the
    /// column's arrow form. The source keeps pointers to these buffers:
    /// they are moved, never reallocated, and put back before it fills the
    /// next batch ([`InputBatch::restore`]).
    parked: Vec<Option<Values>>,
    /// Per column, its arrow values of an earlier batch, whose buffer the
    /// next conversion reuses.
    spare: Vec<Option<Values>>,
    /// Item pointers of the rows (when ctid is needed).
    pub tids: Vec<pg_sys::ItemPointerData>,
    pub len: usize,
}

impl InputBatch {
    pub fn new(attrs: &[InputAttr], capacity: usize, with_tids: bool) -> InputBatch {
        InputBatch {
            columns: attrs.iter().map(|a| Column::new(a.phys, capacity)).collect(),
            parked: vec![None; attrs.len()],
            spare: vec![None; attrs.len()],
            tids: if with_tids { vec![pg_sys::ItemPointerData::default(); capacity] } else { Vec::new() },
            len: 0,
        }
    }

    /// Put column `i` in the arrow layout of `kind` for this batch, if every
    /// valid value among `rows` has an exact arrow form. Returns whether it did.
    ///
    /// # Safety
    /// For a numeric column: its valid Datums among `rows` point to varlenas.
    pub unsafe fn to_arrow(&mut self, i: usize, kind: ArrowKind, rows: &[RowIdx]) -> bool {
        debug_assert!(self.parked[i].is_none());
        // SAFETY: this function's contract.
        match unsafe { layout::to_arrow(&self.columns[i], kind, rows, self.spare[i].take()) } {
            Some(values) => {
                self.parked[i] = Some(std::mem::replace(&mut self.columns[i].values, values));
                true
            }
            None => false,
        }
    }

    /// Every column back in the postgres layout the source fills.
    pub fn restore(&mut self) {
        for ((col, parked), spare) in self.columns.iter_mut().zip(&mut self.parked).zip(&mut self.spare) {
            if let Some(values) = parked.take() {
                *spare = Some(std::mem::replace(&mut col.values, values));
            }
        }
    }

    /// Column `i`'s values as the source filled them (PostgreSQL's Datums,
    /// for slots and PostgreSQL's evaluator).
    pub fn postgres_values(&self, i: usize) -> &Values {
        self.parked[i].as_ref().unwrap_or(&self.columns[i].values)
    }

    /// Column `i` for a vector parent: as the batch holds it, except that a
    /// Decimal128, view or offsets column goes up as the Datums the source
    /// read (parents read numerics and varlenas as Datums; no node above a
    /// scan takes them in the arrow layout yet).
    pub fn batch_column(&self, i: usize) -> Column {
        let col = &self.columns[i];
        match (&col.values, &self.parked[i]) {
            (Values::Decimal128(..) | Values::View(_) | Values::Offsets(_), Some(values)) => {
                Column { values: values.clone(), validity: col.validity.clone() }
            }
            _ => col.clone(),
        }
    }

    /// The C descriptions of the columns whose index passes `pick`.
    fn c_columns(&mut self, attrs: &[InputAttr], pick: impl Fn(usize) -> bool) -> Vec<VxColumn> {
        attrs
            .iter()
            .zip(self.columns.iter_mut())
            .enumerate()
            .filter(|(i, _)| pick(*i))
            .map(|(_, (a, c))| VxColumn {
                attnum: a.attnum as i32,
                kind: a.kind(),
                values: c.values.as_mut_ptr(),
                validity: c.validity.as_mut_ptr(),
            })
            .collect()
    }

    fn tids_ptr(&mut self) -> *mut pg_sys::ItemPointerData {
        if self.tids.is_empty() {
            std::ptr::null_mut()
        } else {
            self.tids.as_mut_ptr()
        }
    }
}

pub enum Source {
    Heap { scan: pg_sys::TableScanDesc, reader: *mut shim::VxHeapReader, has_late: bool },
    Slots { scan: pg_sys::TableScanDesc, slot: *mut pg_sys::TupleTableSlot, cols: Vec<VxColumn> },
}

impl Source {
    /// A source over an open table scan. `batch` must not be reallocated
    /// afterwards (the C reader keeps pointers to its buffers). Columns with
    /// `early[i]` are read for every row; the others only for the rows passed
    /// to `deform_late` (the slot reader reads everything early).
    ///
    /// # Safety
    /// `scan` is an open scan of a relation whose attributes `attrs` are.
    pub unsafe fn new(
        scan: pg_sys::TableScanDesc,
        attrs: &[InputAttr],
        early: &[bool],
        batch: &mut InputBatch,
        capacity: usize,
    ) -> Source {
        // SAFETY: this function's contract: scan is a live table scan whose relation is open; the
        // batch buffers are sized for capacity rows.
        unsafe {
            let rel = (*scan).rs_rd;
            let is_heap = (*rel).rd_tableam == pg_sys::GetHeapamTableAmRoutine();
            if is_heap && shim::vx_scan_is_pagemode(scan) && !crate::settings::DEBUG_SLOT_SOURCE.get() {
                let keep_pins = attrs.iter().any(|a| a.phys == PhysType::Datum);
                let mut e = batch.c_columns(attrs, |i| early[i]);
                let mut l = batch.c_columns(attrs, |i| !early[i]);
                let has_late = !l.is_empty();
                let reader = shim::vx_heap_begin(
                    scan,
                    e.len() as i32,
                    e.as_mut_ptr(),
                    l.len() as i32,
                    l.as_mut_ptr(),
                    capacity as i32,
                    keep_pins,
                    MAX_PINS,
                );
                shim::vx_heap_set_tids(reader, batch.tids_ptr());
                Source::Heap { scan, reader, has_late }
            } else {
                let cols = batch.c_columns(attrs, |_| true);
                let slot = shim::guarded(|| pg_sys::table_slot_create(rel, std::ptr::null_mut()));
                Source::Slots { scan, slot, cols }
            }
        }
    }

    /// Choose the early columns again (`early[i]`).
    ///
    /// # Safety
    /// The source has not filled a batch yet; `batch` is the one `new` bound.
    pub unsafe fn set_early(&mut self, attrs: &[InputAttr], early: &[bool], batch: &mut InputBatch) {
        if let Source::Heap { reader, has_late, .. } = self {
            let mut e = batch.c_columns(attrs, |i| early[i]);
            let mut l = batch.c_columns(attrs, |i| !early[i]);
            *has_late = !l.is_empty();
            let r = *reader;
            // SAFETY: this function's contract; r is this source's reader, alive until end().
            unsafe {
                shim::vx_heap_set_columns(r, e.len() as i32, e.as_mut_ptr(), l.len() as i32, l.as_mut_ptr())
            };
        }
    }

    /// Read the late columns of `rows` of the current batch.
    pub fn deform_late(&mut self, rows: &[u16]) {
        if let Source::Heap { reader, has_late: true, .. } = self {
            let r = *reader;
            // SAFETY: r is this source's reader, alive until end(); rows index the current batch.
            unsafe { shim::vx_heap_deform_late(r, rows.len() as i32, rows.as_ptr()) };
        }
    }

    pub fn is_heap(&self) -> bool {
        matches!(self, Source::Heap { .. })
    }

    /// Fill the next batch; false at the end of the scan. By-reference
    /// values of the slot reader are copied into the current memory context.
    pub fn next(&mut self, batch: &mut InputBatch, capacity: usize) -> bool {
        let n = match self {
            Source::Heap { reader, .. } => {
                let r = *reader;
                // SAFETY: r is this source's reader, alive until end(), filling at most capacity
                // rows of the batch new() bound it to.
                unsafe { shim::vx_heap_next(r, capacity as i32) }
            }
            Source::Slots { scan, slot, cols } => {
                let (scan, slot) = (*scan, *slot);
                let tids = batch.tids_ptr();
                // SAFETY: scan and slot are this source's own (new()), alive until end(); the
                // batch's tid buffer has capacity entries.
                unsafe {
                    shim::vx_slot_next(
                        scan,
                        slot,
                        cols.len() as i32,
                        cols.as_mut_ptr(),
                        tids,
                        capacity as i32,
                    )
                }
            }
        };
        batch.len = n as usize;
        n > 0
    }

    /// Restart from the beginning (rescan).
    pub fn rescan(&mut self) {
        // SAFETY: the scan and reader are this source's own, alive until end().
        unsafe {
            match self {
                Source::Heap { scan, reader, .. } => {
                    let (s, r) = (*scan, *reader);
                    shim::guarded(|| {
                        shim::vx_heap_release(r);
                        pg_sys::table_rescan(s, std::ptr::null_mut());
                        shim::vx_heap_restart(r);
                    });
                }
                Source::Slots { scan, .. } => {
                    let s = *scan;
                    shim::guarded(|| pg_sys::table_rescan(s, std::ptr::null_mut()));
                }
            }
        }
    }

    /// (heap pages read, tuples returned), when known.
    pub fn stats(&self) -> Option<(u64, u64)> {
        match self {
            Source::Heap { reader, .. } => {
                let (mut p, mut t) = (0u64, 0u64);
                // SAFETY: reader is this source's own, alive until end().
                unsafe { shim::vx_heap_stats(*reader, &mut p, &mut t) };
                Some((p, t))
            }
            Source::Slots { .. } => None,
        }
    }

    /// Heap pages pinned without a buffer mapping lookup, when known.
    pub fn direct_pins(&self) -> Option<u64> {
        match self {
            // SAFETY: as above.
            Source::Heap { reader, .. } => Some(unsafe { shim::vx_heap_direct_pins(*reader) }),
            Source::Slots { .. } => None,
        }
    }

    /// Release pins and end the scan.
    pub fn end(&mut self) {
        // SAFETY: the scan and reader are this source's own; end() releases them once (the source
        // is not used after).
        unsafe {
            match self {
                Source::Heap { scan, reader, .. } => {
                    let (s, r) = (*scan, *reader);
                    shim::guarded(|| {
                        shim::vx_heap_release(r);
                        pg_sys::table_endscan(s);
                    });
                }
                Source::Slots { scan, slot, .. } => {
                    let (s, sl) = (*scan, *slot);
                    shim::guarded(|| {
                        pg_sys::ExecDropSingleTupleTableSlot(sl);
                        pg_sys::table_endscan(s);
                    });
                }
            }
        }
    }
}

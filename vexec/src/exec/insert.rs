//! VecInsert: the rows of an INSERT written through the table access
//! method's multi_insert, a group of up to 1,000 at a time.
//!
//! The node is the child of PostgreSQL's ModifyTable (plan/insert.rs), which
//! opens the result relation, checks privileges, fires the statement
//! triggers and reads the row count from `es_processed`. VecInsert reads
//! a vector child's batches (`exec::input`) and hands each batch's rows to
//! the C writer (csrc/vexec_insert.c) in one guarded call; any other
//! child's rows the writer pulls itself, a batch's worth per call, copying
//! each slot (a heap tuple whole). When the child is the batch sink's scan
//! of `vexec.ingest_rows` (`ingest::sink_scan`), VecInsert takes the
//! sink's Arrow batches itself, converted column by column, and the
//! function never runs (its rows are not collected in a tuplestore). It
//! returns no rows.
//!
//! Rust state is dropped by EndCustomScan or by the query context's reset
//! callback; the writer's memory and slots belong to the query, its bulk
//! insert buffer pin to the resource owner. Interrupts are checked per
//! batch.

use std::ptr;

use arrow_buffer::Buffer;

use crate::exec::input::{rows_context, ChildInput};
use crate::exec::node::{self, NodeMethods, VecNode};
use crate::ingest;
use crate::pgutil::{list_ints, list_ptrs, SyncPtr};
use crate::shim::{self, VxColumn, VxInsert};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::batch::{Column, RowIdx, Values, BATCH_CAPACITY};
use vexec_core::plan_data::InsertPlanData;

use crate::nodes::INSERT as NAME;

pub struct InsertState {
    src: ChildInput,
    /// The child is the batch sink's scan of `vexec.ingest_rows`: its
    /// batches are read here, not through its tuplestore.
    sink: Option<SinkInput>,
    writer: *mut VxInsert,
    per_batch: pg_sys::MemoryContext,
    batches: u64,
    done: bool,
}

static METHODS: NodeMethods = NodeMethods::new::<InsertState>(NAME, false, None);
static SCAN_METHODS: SyncPtr<pg_sys::CustomScanMethods> = SyncPtr(node::scan_methods::<InsertState>(NAME));

pub fn scan_methods() -> *const pg_sys::CustomScanMethods {
    &SCAN_METHODS.0
}

/// What `exec::register` registers of VecInsert.
pub fn methods() -> (&'static SyncPtr<pg_sys::CustomScanMethods>, &'static NodeMethods) {
    (&SCAN_METHODS, &METHODS)
}

struct SinkInput {
    scan: ingest::SinkScan,
    handle: *mut pg_sys::ExprState,
}

impl InsertState {
    /// Write the rows of the sink's batches: each batch converted column by
    /// column (`ingest::SinkReader`), handed to the writer a batch's worth
    /// of rows at a time, each table column reading the function column
    /// the child's row has there.
    unsafe fn write_sink(&mut self, node: *mut pg_sys::CustomScanState) {
        let sink = self.sink.as_ref().expect("a sink input");
        // SAFETY: the handle's expression state is this node's, evaluated in its expression
        // context; the reader's Datums live in per_batch until the writer has copied the rows.
        unsafe {
            let mut isnull = false;
            let d = shim::vx_eval_scalar(sink.handle, (*node).ss.ps.ps_ExprContext, &mut isnull);
            let mut reader = ingest::SinkReader::open((!isnull).then_some(d as i64), sink.scan.desc);
            let columns = sink.scan.columns.clone();
            let rows: Vec<RowIdx> = (0..BATCH_CAPACITY as RowIdx).collect();
            let all_valid = Buffer::from(vec![u8::MAX; BATCH_CAPACITY.div_ceil(8)]);
            // Formed tuples where every column allows (ingest/tuples.rs).
            let layout = ingest::TableLayout::of(shim::vx_insert_desc(self.writer), &columns);
            let (mut tuples, mut ends) = (Vec::new(), Vec::new());
            while let Some(batch) = reader.next_batch() {
                let mut at = 0;
                while at < batch.num_rows() {
                    pg_sys::check_for_interrupts!();
                    let n = (batch.num_rows() - at).min(BATCH_CAPACITY);
                    // The Datums in per_batch; the writer itself runs in the
                    // query's context (it makes its slots there).
                    let slice = batch.slice(at, n);
                    if layout.as_ref().is_some_and(|l| reader.heap_rows(&slice, l, &mut tuples, &mut ends)) {
                        shim::vx_insert_tuples(self.writer, n as i32, tuples.as_ptr(), ends.as_ptr());
                        self.batches += 1;
                        at += n;
                        continue;
                    }
                    let old = pg_sys::MemoryContextSwitchTo(self.per_batch);
                    reader.fill(&slice);
                    pg_sys::MemoryContextSwitchTo(old);
                    // The writer's validity bits are Arrow's (LSB first, 1 = valid).
                    let validity: Vec<Buffer> = slice
                        .columns()
                        .iter()
                        .map(|a| match a.nulls() {
                            Some(nulls) => nulls.inner().sliced(),
                            None => all_valid.clone(),
                        })
                        .collect();
                    let cols: Vec<VxColumn> = columns
                        .iter()
                        .enumerate()
                        .map(|(a, &f)| VxColumn {
                            attnum: a as i32 + 1,
                            kind: shim::KIND_DATUM,
                            values: reader.values[f].as_mut_ptr().cast(),
                            validity: validity[f].as_ptr() as *mut u8,
                        })
                        .collect();
                    shim::vx_insert_rows(
                        self.writer,
                        cols.len() as i32,
                        cols.as_ptr(),
                        n as i32,
                        rows.as_ptr(),
                    );
                    self.batches += 1;
                    pg_sys::MemoryContextReset(self.per_batch);
                    at += n;
                }
            }
        }
    }

    /// Hand the batch's live rows to the writer, which reads the columns in
    /// place.
    unsafe fn write(&mut self, columns: &mut [Column], rows: &[RowIdx]) {
        let cols: Vec<VxColumn> = columns
            .iter_mut()
            .enumerate()
            .map(|(c, col)| {
                let kind = match col.values {
                    Values::Bool(_) => shim::KIND_U8,
                    Values::I16(_) => shim::KIND_I16,
                    Values::I32(_) | Values::F32(_) => shim::KIND_W4,
                    Values::I64(_) | Values::F64(_) => shim::KIND_W8,
                    Values::Datum(_) => shim::KIND_DATUM,
                    Values::I128(_) => {
                        error!("vexec internal error: VecInsert got a column of 128-bit integers")
                    }
                    Values::Bits(_)
                    | Values::Date32(_)
                    | Values::TimestampUs(_)
                    | Values::Decimal128(..)
                    | Values::View(_)
                    | Values::Offsets(_) => {
                        error!("vexec internal error: VecInsert got an arrow-layout column")
                    }
                };
                VxColumn {
                    attnum: c as i32 + 1,
                    kind,
                    values: col.values.as_mut_ptr(),
                    validity: col.validity.as_bytes().as_ptr() as *mut u8,
                }
            })
            .collect();
        // SAFETY: the writer is this node's; each column holds a value and a validity bit for every
        // row index in `rows`, valid during the call (the writer copies each row into its slot).
        unsafe {
            shim::vx_insert_rows(
                self.writer,
                cols.len() as i32,
                cols.as_ptr(),
                rows.len() as i32,
                rows.as_ptr(),
            )
        };
    }
}

impl VecNode for InsertState {
    const WHAT: &'static str = "VecInsert";

    fn methods() -> &'static NodeMethods {
        &METHODS
    }

    unsafe fn begin(
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        eflags: i32,
    ) -> Box<Self> {
        // SAFETY: VecNode::begin's contract: node is a VecInsert's CustomScanState being begun under
        // its ModifyTable, which opened the result relation; its plan is our CustomScan with one
        // child plan.
        unsafe {
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let child_plan =
                list_ptrs::<pg_sys::Plan>((*cscan).custom_plans).next().expect("VecInsert has a child");
            let src = ChildInput::init(child_plan, estate, eflags);
            (*node).custom_ps = pg_sys::lappend(ptr::null_mut(), src.child.cast());
            let data = InsertPlanData::decode(&list_ints((*cscan).custom_private))
                .unwrap_or_else(|e| error!("vexec internal error: a VecInsert plan's private data: {}", e.0));
            let ncols = src.types.len();
            // EXPLAIN without ANALYZE writes nothing: no writer.
            let writer = if eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as i32 != 0 {
                ptr::null_mut()
            } else {
                shim::vx_insert_begin(estate, (*cscan).scan.scanrelid, data.sets_tag, ncols as i32)
            };
            let sink = ingest::sink_scan(child_plan).map(|scan| {
                let handle = pg_sys::ExecInitExpr(scan.handle, &mut (*node).ss.ps);
                SinkInput { scan, handle }
            });
            Box::new(InsertState {
                src,
                sink,
                writer,
                per_batch: rows_context((*estate).es_query_cxt, c"VecInsert batch"),
                batches: 0,
                done: false,
            })
        }
    }

    unsafe fn exec(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: VecNode::exec's contract; the child has begun and per_batch is this node's.
        unsafe {
            if self.done || self.writer.is_null() {
                return ptr::null_mut();
            }
            if self.sink.is_some() {
                self.write_sink(node);
            } else if self.src.batches() {
                while let Some((mut columns, rows)) = self.src.next(self.per_batch) {
                    pg_sys::check_for_interrupts!();
                    self.batches += 1;
                    self.write(&mut columns, &rows);
                    drop(columns);
                    pg_sys::MemoryContextReset(self.per_batch);
                }
            } else {
                // A row child: its slots copied as they come (a heap tuple
                // whole), a batch's worth per call.
                let chunk = BATCH_CAPACITY as i32;
                loop {
                    pg_sys::check_for_interrupts!();
                    if shim::vx_insert_from_child(self.writer, self.src.child, chunk) < chunk {
                        break;
                    }
                }
            }
            shim::vx_insert_finish(self.writer);
            self.done = true;
            ptr::null_mut()
        }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: the child is this node's and not yet ended.
        unsafe { pg_sys::ExecEndNode(self.src.child) }
    }

    unsafe fn rescan(&mut self, _node: *mut pg_sys::CustomScanState) {
        error!("vexec internal error: VecInsert cannot be rescanned");
    }

    unsafe fn explain(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: VecNode::explain's contract: es is the running EXPLAIN; the writer, when set, is
        // this node's.
        unsafe {
            if (*es).verbose {
                let input = match (&self.sink, self.src.batches()) {
                    (Some(_), _) => "Arrow batches",
                    (None, true) => "batches",
                    (None, false) => "rows",
                };
                crate::pgutil::explain_text(es, c"Input", input);
            }
            if (*es).analyze && !self.writer.is_null() {
                let (mut rows, mut groups) = (0u64, 0u64);
                shim::vx_insert_stats(self.writer, &mut rows, &mut groups);
                let int = |label: &std::ffi::CStr, v: u64| {
                    pg_sys::ExplainPropertyInteger(label.as_ptr(), ptr::null(), v as i64, es)
                };
                int(c"Rows Inserted", rows);
                int(c"Insert Groups", groups);
                if self.src.batches() || self.sink.is_some() {
                    int(c"Batches", self.batches);
                }
            }
        }
    }
}

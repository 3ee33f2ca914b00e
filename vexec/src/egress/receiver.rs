//! The DestReceiver of the Arrow egress: the executor hands it each result
//! row as a slot; it reads the row's values into Arrow builders and, every
//! `batch_rows` rows and at the end, hands a RecordBatch to the sink.
//! Per-value allocations (detoasted values, output functions' text) land in
//! a scratch memory context reset after every batch. A cursor fetched from
//! again and again starts the receiver once per fetch: the result carries
//! over.

use std::ffi::CStr;

use arrow_schema::SchemaRef;
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::arrow::BatchBuilder;
use vexec_core::batch::{layout, Column, RowIdx, Values};

type ReceiveSlot =
    unsafe extern "C-unwind" fn(*mut pg_sys::TupleTableSlot, *mut pg_sys::DestReceiver) -> bool;

use super::reader::{self, internal, Reader};
use super::Sink;
use crate::exec::node::VectorBatch;

/// A DestReceiver with the egress state behind it. `#[repr(C)]` with the
/// DestReceiver first: PostgreSQL holds a `DestReceiver *` to it, and the
/// callbacks cast it back.
#[repr(C)]
pub struct ArrowReceiver<'s> {
    dest: pg_sys::DestReceiver,
    batch_rows: usize,
    sink: Box<dyn Sink + 's>,
    result: Option<Result>,
    scratch: pg_sys::MemoryContext,
    /// The rows of a batch a cursor's fetch did not take (`batches.rs`).
    left_over: Option<VectorBatch>,
}

/// The result being built, from the executor's rStartup on.
struct Result {
    readers: Vec<Reader>,
    builder: BatchBuilder,
    rows: usize,
}

/// The Arrow schema of a result described by `desc`, the readers of its
/// columns and a builder for its batches.
///
/// # Safety
/// `desc` is live; catalog lookups on the main thread, in a transaction.
pub unsafe fn describe(desc: pg_sys::TupleDesc) -> (SchemaRef, Vec<Reader>, BatchBuilder) {
    let mut readers = Vec::new();
    let mut columns = Vec::new();
    // SAFETY: desc is live (this function's contract).
    unsafe {
        for i in 0..(*desc).natts as usize {
            let att = pg_sys::TupleDescAttr(desc, i as i32);
            let name = CStr::from_ptr((*att).attname.data.as_ptr()).to_string_lossy().into_owned();
            let (column, r) = reader::column(&name, (*att).atttypid, (*att).atttypmod, (*att).attcollation);
            columns.push((column, r.kind.clone()));
            readers.push(r);
        }
    }
    let builder = BatchBuilder::new(&columns);
    (builder.schema(), readers, builder)
}

impl<'s> ArrowReceiver<'s> {
    pub fn new(batch_rows: usize, sink: Box<dyn Sink + 's>) -> Box<ArrowReceiver<'s>> {
        let dest = pg_sys::DestReceiver {
            receiveSlot: Some(receive_slot),
            rStartup: Some(startup),
            rShutdown: Some(shutdown),
            rDestroy: Some(destroy),
            mydest: pg_sys::CommandDest::DestNone,
        };
        Box::new(ArrowReceiver {
            dest,
            batch_rows,
            sink,
            result: None,
            scratch: std::ptr::null_mut(),
            left_over: None,
        })
    }

    /// The ArrowReceiver behind a DestReceiver, if it is one (told by its
    /// receiveSlot callback, which no other receiver has).
    ///
    /// # Safety
    /// `dest` is a live DestReceiver.
    pub unsafe fn from_dest<'a>(dest: *mut pg_sys::DestReceiver) -> Option<&'a mut ArrowReceiver<'a>> {
        // SAFETY: a live DestReceiver (this function's contract); only ours has this callback.
        unsafe {
            let ours =
                (*dest).receiveSlot.is_some_and(|f| std::ptr::fn_addr_eq(f, receive_slot as ReceiveSlot));
            ours.then(|| this(dest))
        }
    }

    /// The live rows `rows` of a batch (the output of a vexec node, a
    /// column per result column), appended column by column; batches of at
    /// most `batch_rows` rows go to the sink as they fill.
    ///
    /// # Safety
    /// After startup; the columns' valid values are live values of the
    /// result's types.
    pub unsafe fn receive_batch(&mut self, columns: &[Column], mut rows: &[RowIdx]) {
        let Some(result) = self.result.as_ref() else { internal("a batch before the result's description") };
        if columns.len() != result.readers.len() {
            internal(format!(
                "a batch of {} columns for a result of {}",
                columns.len(),
                result.readers.len()
            ));
        }
        while !rows.is_empty() {
            let Some(result) = self.result.as_mut() else { unreachable!("checked above") };
            let (now, later) = rows.split_at(rows.len().min(self.batch_rows - result.rows));
            // SAFETY: per-value allocations in the scratch context (reset per flushed batch); the
            // values are the result's (this function's contract).
            unsafe {
                let old = pg_sys::MemoryContextSwitchTo(self.scratch);
                for (c, (reader, col)) in result.readers.iter().zip(columns).enumerate() {
                    // Numerics and strings in an arrow layout go back to Datums
                    // (in the scratch context) for readers that read them value by
                    // value; no node gives them to a parent today (`Source::batch_column`).
                    let col = match col.values {
                        Values::Decimal128(..) | Values::View(_) | Values::Offsets(_) => {
                            let scratch = self.scratch;
                            std::borrow::Cow::Owned(layout::to_postgres(col, now, &mut |bytes| {
                                crate::pgutil::palloc_copy(scratch, bytes)
                            }))
                        }
                        _ => std::borrow::Cow::Borrowed(col),
                    };
                    let column = result.builder.column(c).unwrap_or_else(|e| internal(e));
                    reader.push_rows(column, &col, now);
                }
                pg_sys::MemoryContextSwitchTo(old);
            }
            result.rows += now.len();
            if result.rows >= self.batch_rows {
                self.flush();
            }
            rows = later;
        }
    }

    /// Keep rows of a batch for the next fetch of a cursor.
    pub fn leave_over(&mut self, batch: VectorBatch) {
        self.left_over = Some(batch);
    }

    /// The rows the last fetch left over, if any.
    pub fn take_left_over(&mut self) -> Option<VectorBatch> {
        self.left_over.take()
    }

    /// The receiver as PostgreSQL takes it; valid while `self` is.
    pub fn as_dest(&mut self) -> *mut pg_sys::DestReceiver {
        &mut self.dest
    }

    /// After the execution: every row was handed over in rShutdown; a
    /// statement that never started a result is the caller's bug.
    pub fn finish(&mut self) {
        if self.result.is_none() {
            internal("the statement sent no result description");
        }
    }

    /// Hand the rows gathered so far to the sink as one batch.
    fn flush(&mut self) {
        let Some(result) = self.result.as_mut() else { return };
        if result.rows == 0 {
            return;
        }
        let batch = result.builder.finish(result.rows).unwrap_or_else(|e| internal(e));
        result.rows = 0;
        self.sink.batch(batch);
        // SAFETY: the scratch context holds only the finished batch's per-value allocations.
        unsafe { pg_sys::MemoryContextReset(self.scratch) };
    }
}

/// # Safety
/// `dest` is the `dest` field of a live ArrowReceiver.
unsafe fn this<'a>(dest: *mut pg_sys::DestReceiver) -> &'a mut ArrowReceiver<'a> {
    // SAFETY: dest is the first field of a #[repr(C)] ArrowReceiver (this function's contract).
    unsafe { &mut *dest.cast::<ArrowReceiver<'a>>() }
}

#[pg_guard]
unsafe extern "C-unwind" fn startup(
    dest: *mut pg_sys::DestReceiver,
    _operation: i32,
    desc: pg_sys::TupleDesc,
) {
    // SAFETY: called by the executor with our receiver and its result's descriptor, in the
    // query's memory context (the readers' tuple descriptors and the scratch context live there).
    unsafe {
        let this = this(dest);
        if this.result.is_some() {
            return; // the next fetch of a cursor
        }
        let (schema, readers, builder) = describe(desc);
        this.scratch = pg_sys::AllocSetContextCreateInternal(
            pg_sys::CurrentMemoryContext,
            c"vexec Arrow egress".as_ptr(),
            pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
        );
        this.result = Some(Result { readers, builder, rows: 0 });
        this.sink.schema(&schema);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn receive_slot(
    slot: *mut pg_sys::TupleTableSlot,
    dest: *mut pg_sys::DestReceiver,
) -> bool {
    // SAFETY: called by the executor with our receiver, after startup, and a slot of the
    // described result; its values are read before this returns.
    unsafe {
        let this = this(dest);
        let Some(result) = this.result.as_mut() else { internal("a row before the result's description") };
        pg_sys::slot_getallattrs(slot);
        let old = pg_sys::MemoryContextSwitchTo(this.scratch);
        for (c, r) in result.readers.iter().enumerate() {
            let column = result.builder.column(c).unwrap_or_else(|e| internal(e));
            r.push(column, *(*slot).tts_values.add(c), *(*slot).tts_isnull.add(c));
        }
        pg_sys::MemoryContextSwitchTo(old);
        result.rows += 1;
        if result.rows >= this.batch_rows {
            this.flush();
        }
        true
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn shutdown(dest: *mut pg_sys::DestReceiver) {
    // SAFETY: called by the executor with our receiver.
    unsafe { this(dest).flush() }
}

#[pg_guard]
unsafe extern "C-unwind" fn destroy(_dest: *mut pg_sys::DestReceiver) {
    // The receiver is owned by `run`, which drops it.
}

//! `vexec.ingest_rows(handle)`: the rows of the Arrow batches registered
//! under `handle` (`ingest::insert`), as PostgreSQL values of the types
//! `source_of` gives, for the INSERT that reads them.

use std::ffi::CString;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Decimal256Type, Float16Type, Float32Type, Float64Type, Int16Type,
    Int32Type, Int64Type, Int8Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::arrow::ingest::{self, Source};

use super::{fail, raise};

/// How one column's values become Datums.
pub(crate) struct Column {
    source: Source,
    /// Typed and Numeric: the type's input function, I/O parameter and typmod.
    input: Option<(pg_sys::Oid, pg_sys::Oid, i32)>,
    /// The input function looked up once (as COPY does), for the columns
    /// of one `vexec.ingest_rows` call: its lookups, and what the function
    /// keeps in `fn_extra` (array_in, record_in), live in the call's memory
    /// context. Boxed: `fn_extra` users may keep pointers to it.
    finfo: Option<Box<pg_sys::FmgrInfo>>,
}

impl Column {
    /// Strings read as text: the Text source, or a typed one of type text
    /// (whose input function, textin, makes the same varlena).
    fn reads_text(&self) -> bool {
        matches!(self.source, Source::Text)
            || matches!(self.input, Some((_, ioparam, _)) if ioparam == pg_sys::TEXTOID)
    }

    pub(super) fn source(&self) -> &Source {
        &self.source
    }

    /// Read into numeric without a typmod (by numeric_in, else).
    fn plain_numeric(&self) -> bool {
        matches!(self.input, Some((_, ioparam, -1)) if ioparam == pg_sys::NUMERICOID)
    }
}

/// The text of `s` in the server's encoding (validated: an invalid byte
/// sequence or a zero byte is 22021), as a palloc'd C string and its length.
unsafe fn server_text(s: &[u8]) -> (*const std::ffi::c_char, usize) {
    // SAFETY: pg_any_to_server reads len bytes and returns them (validated) or a palloc'd,
    // NUL-terminated conversion.
    unsafe {
        let p = s.as_ptr() as *const std::ffi::c_char;
        let out = pg_sys::pg_any_to_server(p, s.len() as i32, pg_sys::pg_enc::PG_UTF8 as i32);
        if std::ptr::eq(out, p) {
            (out, s.len())
        } else {
            (out, std::ffi::CStr::from_ptr(out).count_bytes())
        }
    }
}

/// `text` read by the column's input function (numeric, or a typed column's type).
unsafe fn input(col: &Column, text: &[u8]) -> pg_sys::Datum {
    let c = CString::new(text).unwrap_or_else(|_| {
        fail(PgSqlErrorCode::ERRCODE_CHARACTER_NOT_IN_REPERTOIRE, "a string value contains a zero byte")
    });
    let (func, ioparam, typmod) = col.input.expect("the column has its input function");
    // SAFETY: the type's input function parses a C string; finfo, when there, is its lookup.
    unsafe {
        match &col.finfo {
            Some(f) => {
                let f = &**f as *const pg_sys::FmgrInfo as *mut pg_sys::FmgrInfo;
                pg_sys::InputFunctionCall(f, c.as_ptr() as *mut _, ioparam, typmod)
            }
            None => pg_sys::OidInputFunctionCall(func, c.as_ptr() as *mut _, ioparam, typmod),
        }
    }
}

fn string_value(a: &ArrayRef, row: usize) -> &[u8] {
    match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().value(row).as_bytes(),
        DataType::LargeUtf8 => a.as_string::<i64>().value(row).as_bytes(),
        DataType::Utf8View => a.as_string_view().value(row).as_bytes(),
        DataType::Binary => a.as_binary::<i32>().value(row),
        DataType::LargeBinary => a.as_binary::<i64>().value(row),
        DataType::BinaryView => a.as_binary_view().value(row),
        DataType::FixedSizeBinary(_) => a.as_fixed_size_binary().value(row),
        other => unreachable!("not a string or binary type: {other}"),
    }
}

pub(super) fn check<T>(r: Result<T, ingest::IngestError>) -> T {
    r.unwrap_or_else(|e| raise(&e))
}

/// Row `row` of `a` as a Datum of `col`'s type (not NULL).
unsafe fn datum(col: &Column, a: &ArrayRef, row: usize) -> pg_sys::Datum {
    // SAFETY: a's values are read at a row below its length (caller); the Datums are made in the
    // current (per-batch) memory context.
    unsafe {
        match (&col.source, a.data_type()) {
            (Source::Bool, _) => pg_sys::Datum::from(a.as_boolean().value(row)),
            (_, DataType::Int8) => pg_sys::Datum::from(a.as_primitive::<Int8Type>().value(row) as i16),
            (_, DataType::Int16) => pg_sys::Datum::from(a.as_primitive::<Int16Type>().value(row)),
            (_, DataType::UInt8) => pg_sys::Datum::from(a.as_primitive::<UInt8Type>().value(row) as i16),
            (_, DataType::Int32) => pg_sys::Datum::from(a.as_primitive::<Int32Type>().value(row)),
            (_, DataType::UInt16) => pg_sys::Datum::from(a.as_primitive::<UInt16Type>().value(row) as i32),
            (_, DataType::Int64) => pg_sys::Datum::from(a.as_primitive::<Int64Type>().value(row)),
            (_, DataType::UInt32) => pg_sys::Datum::from(a.as_primitive::<UInt32Type>().value(row) as i64),
            (_, DataType::UInt64) => {
                input(col, a.as_primitive::<UInt64Type>().value(row).to_string().as_bytes())
            }
            (_, DataType::Float16) => {
                f32::from(a.as_primitive::<Float16Type>().value(row)).into_datum().expect("a float")
            }
            (_, DataType::Float32) => {
                a.as_primitive::<Float32Type>().value(row).into_datum().expect("a float")
            }
            (_, DataType::Float64) => {
                a.as_primitive::<Float64Type>().value(row).into_datum().expect("a float")
            }
            // Into numeric without a typmod (the column definition list's),
            // the value's numeric built directly, as numeric_in would make it
            // from the value's text (dscale = the decimal's scale); the
            // target column's typmod is then applied by the INSERT.
            (_, DataType::Decimal128(_, s)) if *s >= 0 && col.plain_numeric() => {
                let payload = vexec_core::numeric::encode_payload(
                    a.as_primitive::<Decimal128Type>().value(row),
                    *s as u16,
                );
                pg_sys::Datum::from(crate::pgutil::palloc_varlena(&payload))
            }
            (_, DataType::Decimal128(_, s)) => input(
                col,
                ingest::decimal_text(&a.as_primitive::<Decimal128Type>().value(row).to_string(), *s)
                    .as_bytes(),
            ),
            (_, DataType::Decimal256(_, s)) => input(
                col,
                ingest::decimal_text(&a.as_primitive::<Decimal256Type>().value(row).to_string(), *s)
                    .as_bytes(),
            ),
            (Source::Text, _) => {
                let (p, len) = server_text(string_value(a, row));
                pg_sys::Datum::from(pg_sys::cstring_to_text_with_len(p, len as i32))
            }
            (Source::Typed(_), _) => {
                let (p, len) = server_text(string_value(a, row));
                input(col, std::slice::from_raw_parts(p as *const u8, len))
            }
            (Source::Bytea, _) => string_value(a, row).into_datum().expect("bytea"),
            (Source::Uuid, _) => {
                let b: [u8; 16] = string_value(a, row).try_into().expect("uuid is 16 bytes");
                pgrx::datum::Uuid::from_bytes(b).into_datum().expect("uuid")
            }
            (Source::Date, DataType::Date32) => pg_sys::Datum::from(check(ingest::date_of_days(
                a.as_primitive::<Date32Type>().value(row) as i64,
            ))),
            (Source::Date, DataType::Date64) => {
                pg_sys::Datum::from(check(ingest::date_of_millis(a.as_primitive::<Date64Type>().value(row))))
            }
            (Source::Timestamp | Source::TimestampTz, DataType::Timestamp(unit, _)) => {
                let v = match unit {
                    TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(row),
                    TimeUnit::Millisecond => a.as_primitive::<TimestampMillisecondType>().value(row),
                    TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(row),
                    TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().value(row),
                };
                pg_sys::Datum::from(check(ingest::timestamp_of(v, *unit)))
            }
            (Source::Time, DataType::Time32(unit)) => {
                let v = match unit {
                    TimeUnit::Second => a.as_primitive::<Time32SecondType>().value(row),
                    _ => a.as_primitive::<Time32MillisecondType>().value(row),
                };
                pg_sys::Datum::from(check(ingest::time_of(v as i64, *unit)))
            }
            (Source::Time, DataType::Time64(unit)) => {
                let v = match unit {
                    TimeUnit::Microsecond => a.as_primitive::<Time64MicrosecondType>().value(row),
                    _ => a.as_primitive::<Time64NanosecondType>().value(row),
                };
                pg_sys::Datum::from(check(ingest::time_of(v, *unit)))
            }
            (s, t) => error!("vexec internal error: Arrow {t} read as {}", s.sql_name()),
        }
    }
}

/// The Datums (in the current memory context) and NULL flags of every row
/// of `a`, as [`datum`] makes them, with the type dispatch done once: the
/// common fixed-width types copied in a loop, and text from Arrow's
/// (validated) UTF-8 laid out as varlenas in one allocation when the
/// database is UTF-8 (what `pg_any_to_server` and `cstring_to_text` make
/// of them) (a value with a zero byte goes through
/// `pg_any_to_server`, which raises PostgreSQL's error for it).
unsafe fn fill_column(
    col: &Column,
    a: &ArrayRef,
    utf8: bool,
    values: &mut Vec<pg_sys::Datum>,
    nulls: &mut Vec<bool>,
) {
    let n = a.len();
    nulls.clear();
    match a.nulls() {
        Some(b) => nulls.extend(b.iter().map(|valid| !valid)),
        None => nulls.resize(n, false),
    }
    values.clear();
    values.resize(n, pg_sys::Datum::from(0usize));
    let text = utf8 && col.reads_text();
    macro_rules! copy {
        ($t:ty, $conv:expr) => {{
            let v = a.as_primitive::<$t>().values();
            for r in 0..n {
                values[r] = $conv(v[r]);
            }
        }};
    }
    // SAFETY: rows below a's length; the Datums are made in the current (per-batch) context.
    unsafe {
        match (&col.source, a.data_type()) {
            (Source::Int2, DataType::Int16) => copy!(Int16Type, pg_sys::Datum::from),
            (Source::Int4, DataType::Int32) => copy!(Int32Type, pg_sys::Datum::from),
            (Source::Int8, DataType::Int64) => copy!(Int64Type, pg_sys::Datum::from),
            (Source::Float8, DataType::Float64) => {
                copy!(Float64Type, |x: f64| pg_sys::Datum::from(x.to_bits()))
            }
            (Source::Date, DataType::Date32) => {
                let v = a.as_primitive::<Date32Type>().values();
                for r in (0..n).filter(|&r| !nulls[r]) {
                    values[r] = pg_sys::Datum::from(check(ingest::date_of_days(v[r] as i64)));
                }
            }
            // (A text block too large for one allocation falls to the last arm.)
            (_, DataType::Utf8) if text && offsets_text_block(a.as_string::<i32>(), nulls, values) => {}
            (_, DataType::LargeUtf8) if text && offsets_text_block(a.as_string::<i64>(), nulls, values) => {}
            (_, DataType::Utf8View)
                if text && text_block(a.as_string_view().iter(), false, nulls, values) => {}
            _ => {
                for r in (0..n).filter(|&r| !nulls[r]) {
                    values[r] = datum(col, a, r);
                }
            }
        }
    }
}

/// No value of `a` has a zero byte (one search of the bytes its values
/// span, instead of one per value).
pub(super) fn zero_free<O: arrow_array::OffsetSizeTrait>(a: &arrow_array::GenericStringArray<O>) -> bool {
    let offsets = a.value_offsets();
    let (first, last) = (offsets[0].as_usize(), offsets[offsets.len() - 1].as_usize());
    !a.value_data()[first..last].contains(&0)
}

/// [`text_block`] of an offsets + values string array (searched for a
/// zero byte once).
unsafe fn offsets_text_block<O: arrow_array::OffsetSizeTrait>(
    a: &arrow_array::GenericStringArray<O>,
    nulls: &[bool],
    values: &mut [pg_sys::Datum],
) -> bool {
    // SAFETY: the caller's (fill_column's) context.
    unsafe { text_block(a.iter(), zero_free(a), nulls, values) }
}

/// The text values of `strings` (UTF-8, valid as Arrow's string arrays
/// are) as varlenas with 4-byte headers, in one palloc'd block. False, and
/// nothing done, when the block would pass `TEXT_BLOCK_MAX`. `zero_free`:
/// no value has a zero byte (else each is searched for one).
unsafe fn text_block<'s>(
    strings: impl Iterator<Item = Option<&'s str>> + Clone,
    zero_free: bool,
    nulls: &[bool],
    values: &mut [pg_sys::Datum],
) -> bool {
    const HDR: usize = pg_sys::VARHDRSZ;
    let total: usize = strings.clone().map(|s| s.map_or(0, |s| (HDR + s.len()).next_multiple_of(4))).sum();
    if total > TEXT_BLOCK_MAX {
        return false;
    }
    // SAFETY: a block of `total` bytes in the current context; each value is written inside it at
    // a 4-byte aligned offset (its header, then its bytes), as text varlenas are laid out.
    unsafe {
        let block = pg_sys::palloc(total.max(1)) as *mut u8;
        let mut at = 0;
        for (r, s) in strings.enumerate() {
            let Some(s) = s.filter(|_| !nulls[r]) else { continue };
            let bytes = s.as_bytes();
            if !zero_free && bytes.contains(&0) {
                let (p, len) = server_text(bytes); // raises invalid_byte_sequence for the zero byte
                values[r] = pg_sys::Datum::from(pg_sys::cstring_to_text_with_len(p, len as i32));
                continue;
            }
            let p = block.add(at);
            pgrx::varlena::set_varsize_4b(p.cast(), (HDR + bytes.len()) as i32);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(HDR), bytes.len());
            values[r] = pg_sys::Datum::from(p);
            at += (HDR + bytes.len()).next_multiple_of(4);
        }
    }
    true
}

/// The largest block `text_block` allocates (palloc's limit is 1 GB).
pub(super) const TEXT_BLOCK_MAX: usize = 256 << 20;

/// A statement parameter's column: its source, read as type `typid` (by
/// that type's input function for a numeric or typed source).
pub(crate) fn param_column(source: Source, typid: pg_sys::Oid) -> Column {
    let input = matches!(source, Source::Typed(_) | Source::Numeric).then(|| {
        let (mut func, mut ioparam) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
        // SAFETY: a catalog lookup of a type that exists (the statement was parsed with it).
        unsafe { pg_sys::getTypeInputInfo(typid, &mut func, &mut ioparam) };
        (func, ioparam, -1)
    });
    Column { source, input, finfo: None }
}

/// Row `row` of `a` (not NULL) as a parameter's Datum.
///
/// # Safety
/// `row` is below `a`'s length; in a transaction.
pub(crate) unsafe fn param_datum(col: &Column, a: &ArrayRef, row: usize) -> pg_sys::Datum {
    // SAFETY: this function's contract.
    unsafe { datum(col, a, row) }
}

/// The type OID, typmod and (for a typed column) input function of each
/// source, checked against the call's column definition list.
unsafe fn columns(sources: &[Source], desc: pg_sys::TupleDesc) -> Vec<Column> {
    // SAFETY: desc is the call's expected tuple descriptor; the type names are parsed by
    // PostgreSQL.
    unsafe {
        if (*desc).natts as usize != sources.len() {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_DATATYPE_MISMATCH,
                format!(
                    "the column definition list has {} columns, the Arrow batches {}",
                    (*desc).natts,
                    sources.len()
                )
            );
        }
        sources
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let name = CString::new(s.sql_name()).unwrap_or_else(|_| {
                    fail(PgSqlErrorCode::ERRCODE_INVALID_NAME, "a pg.type name contains a zero byte")
                });
                let (mut typid, mut typmod) = (pg_sys::InvalidOid, -1i32);
                pg_sys::parseTypeString(name.as_ptr(), &mut typid, &mut typmod, std::ptr::null_mut());
                if pg_sys::SPI_gettypeid(desc, i as i32 + 1) != typid {
                    ereport!(
                        ERROR,
                        PgSqlErrorCode::ERRCODE_DATATYPE_MISMATCH,
                        format!(
                            "column {} of the column definition list is not of type {}",
                            i + 1,
                            s.sql_name()
                        )
                    );
                }
                let input = matches!(s, Source::Typed(_) | Source::Numeric).then(|| {
                    let (mut func, mut ioparam) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
                    pg_sys::getTypeInputInfo(typid, &mut func, &mut ioparam);
                    (func, ioparam, typmod)
                });
                // Looked up in the call's memory context, which outlives every use.
                let finfo = input.map(|(func, _, _)| {
                    let mut f: Box<pg_sys::FmgrInfo> = Box::new(std::mem::zeroed());
                    pg_sys::fmgr_info(func, &mut *f);
                    f
                });
                Column { source: s.clone(), input, finfo }
            })
            .collect()
    }
}

#[no_mangle]
pub extern "C" fn pg_finfo_vexec_ingest_rows() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

/// The batches registered under a handle, read as the columns of a column
/// definition list a batch at a time: what `vexec.ingest_rows` returns, and
/// what VecInsert reads when its child is that function's scan
/// (`exec/insert.rs`).
pub(crate) struct SinkReader {
    batches: super::Batches,
    cols: Vec<Column>,
    utf8: bool,
    /// Per column, the Datums and NULL flags of the last batch filled.
    pub(crate) values: Vec<Vec<pg_sys::Datum>>,
    pub(crate) nulls: Vec<Vec<bool>>,
}

impl SinkReader {
    /// The batches registered under `handle` (None: a NULL handle), read
    /// as `desc`'s columns; raises `vexec.ingest_rows`' errors.
    ///
    /// # Safety
    /// In a transaction; `desc` is a live tuple descriptor.
    pub(crate) unsafe fn open(handle: Option<i64>, desc: pg_sys::TupleDesc) -> SinkReader {
        let Some(handle) = handle else {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
                "vexec.ingest_rows: handle is NULL"
            );
        };
        let Some(batches) = super::take(handle) else {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("no Arrow batches wait under handle {handle}"),
                "vexec.ingest_rows reads the batches vexec's ingest registered for the statement running it"
            );
        };
        let sources: Vec<Source> = batches
            .schema
            .fields()
            .iter()
            .map(|f| ingest::source_of(f).unwrap_or_else(|e| raise(&e)))
            .collect();
        // SAFETY: this function's contract.
        let (cols, utf8) = unsafe {
            (columns(&sources, desc), pg_sys::GetDatabaseEncoding() == pg_sys::pg_enc::PG_UTF8 as i32)
        };
        let n = cols.len();
        SinkReader { batches, cols, utf8, values: vec![Vec::new(); n], nulls: vec![Vec::new(); n] }
    }

    /// Function column `f`'s conversion.
    pub(super) fn column(&self, f: usize) -> &Column {
        &self.cols[f]
    }

    /// Function column `f` takes Arrow's UTF-8 strings as text varlenas
    /// as they are (a UTF-8 database; see `fill_column`).
    pub(super) fn reads_text(&self, f: usize) -> bool {
        self.utf8 && self.cols[f].reads_text()
    }

    /// The next batch, checked against the stream's schema; None at the end.
    pub(crate) fn next_batch(&mut self) -> Option<RecordBatch> {
        pg_sys::check_for_interrupts!();
        let batch = self.batches.batches.next()?.unwrap_or_else(|e| {
            fail(PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION, format!("Arrow batch: {e}"))
        });
        if batch.schema().fields() != self.batches.schema.fields() {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
                "an Arrow batch's schema differs from its stream's"
            );
        }
        Some(batch)
    }

    /// `values` and `nulls` for the rows of `batch` (one of this stream's),
    /// the Datums made in the current memory context.
    ///
    /// # Safety
    /// In a transaction.
    pub(crate) unsafe fn fill(&mut self, batch: &RecordBatch) {
        for (c, col) in self.cols.iter().enumerate() {
            // SAFETY: this function's contract; the column is of this stream.
            unsafe { fill_column(col, batch.column(c), self.utf8, &mut self.values[c], &mut self.nulls[c]) };
        }
    }
}

/// `vexec.ingest_rows(handle bigint) RETURNS SETOF record`, materialized.
#[no_mangle]
#[pg_guard]
pub unsafe extern "C-unwind" fn vexec_ingest_rows(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: called by fmgr with this function's fcinfo; the tuplestore and descriptor are set up
    // by InitMaterializedSRF, which checks the call context.
    unsafe {
        let arg = (*fcinfo).args.as_slice(1)[0];
        let handle = (!arg.isnull).then(|| arg.value.value() as i64);
        pg_sys::InitMaterializedSRF(fcinfo, pg_sys::MAT_SRF_USE_EXPECTED_DESC as u32);
        let rsinfo = (*fcinfo).resultinfo as *mut pg_sys::ReturnSetInfo;
        let desc = (*rsinfo).setDesc;
        let store = (*rsinfo).setResult;
        let mut reader = SinkReader::open(handle, desc);
        let per_batch = crate::exec::input::rows_context(pg_sys::CurrentMemoryContext, c"vexec ingest batch");
        let n = reader.cols.len();
        let mut values = vec![pg_sys::Datum::from(0usize); n];
        let mut nulls = vec![false; n];
        while let Some(batch) = reader.next_batch() {
            let old = pg_sys::MemoryContextSwitchTo(per_batch);
            // Column by column (the type dispatch once per column), then
            // row by row into the tuplestore.
            reader.fill(&batch);
            for row in 0..batch.num_rows() {
                for c in 0..n {
                    nulls[c] = reader.nulls[c][row];
                    values[c] = reader.values[c][row];
                }
                pg_sys::tuplestore_putvalues(store, desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            }
            pg_sys::MemoryContextSwitchTo(old);
            pg_sys::MemoryContextReset(per_batch);
        }
        pg_sys::MemoryContextDelete(per_batch);
        pg_sys::Datum::from(0usize)
    }
}

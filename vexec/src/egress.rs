//! Query results as Arrow, the server half: `vexec.arrow_ipc(query)` runs a
//! query through a cursor, with the caller's privileges and row level
//! security as any query of theirs, reads its rows a fetch at a time, hands
//! each value to `vexec_core::arrow` (type mapping, exact conversion, batch
//! building) and returns the Arrow IPC stream: one RecordBatch per fetch.
//! Types without a mapping yet, and values Arrow cannot hold (infinite
//! dates, numeric NaN in a Decimal128 column), are errors with SQLSTATEs,
//! never wrong values (docs/arrow.md).

use std::ffi::{c_char, CStr, CString};

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::arrow::{convert, BatchBuilder, ColumnType, IpcStream, PgColumn, Unrepresentable, Value};
use vexec_core::batch::varlena;

/// Rows a fetch reads, and so the rows of each RecordBatch but the last.
const FETCH_ROWS: i64 = 8192;

/// The Arrow IPC stream (schema, then one RecordBatch per 8,192 rows) of
/// `query`'s result.
#[pg_extern(volatile, parallel_unsafe)]
fn arrow_ipc(query: &str) -> Vec<u8> {
    let Ok(query) = CString::new(query) else {
        error(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, "the query contains a NUL byte".into())
    };
    Spi::connect(|_client| {
        // SAFETY: SPI is connected for the closure's duration; the cursor is read on this (the
        // backend's main) thread and closed before returning; SPI_tuptable and its tuples are
        // valid until SPI_freetuptable, and nothing of them is kept across fetches.
        unsafe {
            let portal = pg_sys::SPI_cursor_open_with_args(
                std::ptr::null(),
                query.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null(),
                true,
                0,
            );
            let mut egress: Option<(Vec<Reader>, BatchBuilder, IpcStream)> = None;
            loop {
                pg_sys::check_for_interrupts!();
                pg_sys::SPI_cursor_fetch(portal, true, FETCH_ROWS as _);
                let table = pg_sys::SPI_tuptable;
                let rows = pg_sys::SPI_processed as usize;
                if egress.is_none() {
                    egress = Some(start((*table).tupdesc));
                }
                let (readers, builder, stream) = egress.as_mut().expect("started");
                // One deform a row (one guarded call), not one a value.
                let mut values = vec![pg_sys::Datum::from(0); readers.len()];
                let mut nulls = vec![false; readers.len()];
                for r in 0..rows {
                    let tuple = *(*table).vals.add(r);
                    pg_sys::heap_deform_tuple(
                        tuple,
                        (*table).tupdesc,
                        values.as_mut_ptr(),
                        nulls.as_mut_ptr(),
                    );
                    for (c, reader) in readers.iter().enumerate() {
                        reader.push(builder, c, values[c], nulls[c]);
                    }
                }
                pg_sys::SPI_freetuptable(table);
                if rows > 0 {
                    let batch = builder.finish().unwrap_or_else(|e| internal(e));
                    stream.write(&batch).unwrap_or_else(|e| internal(e));
                }
                if rows < FETCH_ROWS as usize {
                    break;
                }
            }
            pg_sys::SPI_cursor_close(portal);
            let (_, _, stream) = egress.expect("the first fetch describes the result");
            stream.finish().unwrap_or_else(|e| internal(e))
        }
    })
}

/// How one column's Datums become Arrow values.
struct Reader {
    name: String,
    kind: ColumnType,
    type_oid: pg_sys::Oid,
    /// The output function, for numerics (their text is exact), json, enums.
    output: pg_sys::Oid,
    /// The database's encoding is UTF-8 (text needs no conversion).
    utf8_database: bool,
}

/// The readers, batch builder and stream of a result described by `desc`.
///
/// # Safety
/// `desc` is the cursor's live tuple descriptor.
unsafe fn start(desc: pg_sys::TupleDesc) -> (Vec<Reader>, BatchBuilder, IpcStream) {
    // SAFETY: desc is live (this function's contract); format_type_with_typemod and
    // getTypeOutputInfo are catalog lookups on the backend's main thread.
    unsafe {
        let mut readers = Vec::new();
        let mut columns = Vec::new();
        let utf8_database = pg_sys::GetDatabaseEncoding() == pg_sys::pg_enc::PG_UTF8 as i32;
        for i in 0..(*desc).natts as usize {
            let att = pg_sys::TupleDescAttr(desc, i as i32);
            let name = CStr::from_ptr((*att).attname.data.as_ptr()).to_string_lossy().into_owned();
            let type_oid = (*att).atttypid;
            let typmod = (*att).atttypmod;
            let type_name = CStr::from_ptr(pg_sys::format_type_with_typemod(type_oid, typmod))
                .to_string_lossy()
                .into_owned();
            let kind = if pg_sys::get_typtype(type_oid) == pg_sys::TYPTYPE_ENUM as c_char {
                Ok(ColumnType::EnumLabel)
            } else {
                ColumnType::of(type_oid.to_u32(), typmod)
            };
            let Ok(kind) = kind else {
                error(
                    PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                    format!(
                        "column \"{name}\" of type {type_name} has no Arrow mapping yet \
                         (cast it to a mapped type, such as text; docs/arrow.md lists them)"
                    ),
                )
            };
            let mut output = pg_sys::InvalidOid;
            let mut varlena = false;
            pg_sys::getTypeOutputInfo(type_oid, &mut output, &mut varlena);
            columns.push((
                PgColumn { name: name.clone(), type_oid: type_oid.to_u32(), typmod, type_name },
                kind,
            ));
            readers.push(Reader { name, kind, type_oid, output, utf8_database });
        }
        let builder = BatchBuilder::new(&columns);
        let stream = IpcStream::new(&builder.schema()).unwrap_or_else(|e| internal(e));
        (readers, builder, stream)
    }
}

impl Reader {
    /// Append one Datum of this column.
    ///
    /// # Safety
    /// `datum` is a live value of the column's type (or `isnull`).
    unsafe fn push(&self, builder: &mut BatchBuilder, col: usize, datum: pg_sys::Datum, isnull: bool) {
        // SAFETY: datum is a value of this column's type (this function's contract): by-value
        // types are read from the Datum itself, varlenas detoasted, names read as C strings, and
        // numerics printed by their output function.
        unsafe {
            let pushed = if isnull {
                builder.push(col, Value::Null)
            } else {
                match self.kind {
                    ColumnType::Bool => builder.push(col, Value::Bool(datum.value() != 0)),
                    ColumnType::Int16 => builder.push(col, Value::Int16(datum.value() as i16)),
                    ColumnType::Int32 => builder.push(col, Value::Int32(datum.value() as i32)),
                    ColumnType::Int64 => builder.push(col, Value::Int64(datum.value() as i64)),
                    ColumnType::Float32 => {
                        builder.push(col, Value::Float32(f32::from_bits(datum.value() as u32)))
                    }
                    ColumnType::Float64 => {
                        builder.push(col, Value::Float64(f64::from_bits(datum.value() as u64)))
                    }
                    ColumnType::Utf8 if self.type_oid == pg_sys::NAMEOID => {
                        let name = CStr::from_ptr(datum.cast_mut_ptr::<c_char>());
                        builder.push(col, Value::Str(&self.utf8(name.to_bytes())))
                    }
                    ColumnType::Utf8 => builder.push(col, Value::Str(&self.utf8(varlena_bytes(datum)))),
                    ColumnType::Binary => builder.push(col, Value::Bytes(varlena_bytes(datum))),
                    ColumnType::Date32 => {
                        let days =
                            convert::date32(datum.value() as i32).unwrap_or_else(|e| self.unrepresentable(e));
                        builder.push(col, Value::Date32(days))
                    }
                    ColumnType::TimestampMicros { .. } => {
                        let us = convert::timestamp_micros(datum.value() as i64)
                            .unwrap_or_else(|e| self.unrepresentable(e));
                        builder.push(col, Value::Micros(us))
                    }
                    ColumnType::Uuid => builder
                        .push(col, Value::Bytes(std::slice::from_raw_parts(datum.cast_mut_ptr::<u8>(), 16))),
                    ColumnType::Time64Micros => {
                        let us = convert::time64_micros(datum.value() as i64)
                            .unwrap_or_else(|e| self.unrepresentable(e));
                        builder.push(col, Value::Micros(us))
                    }
                    ColumnType::IntervalMonthDayNano => {
                        let iv = datum.cast_mut_ptr::<pg_sys::Interval>();
                        let (m, d, n) = convert::interval_month_day_nano((*iv).month, (*iv).day, (*iv).time)
                            .unwrap_or_else(|e| self.unrepresentable(e));
                        builder.push(col, Value::Interval(m, d, n))
                    }
                    ColumnType::Json | ColumnType::EnumLabel => {
                        builder.push(col, Value::Str(&self.utf8(&self.output_bytes(datum))))
                    }
                    ColumnType::Decimal128 { precision, scale } => {
                        let text = self.output_text(datum);
                        let v = convert::decimal128(&text, precision, scale)
                            .unwrap_or_else(|e| self.unrepresentable(e));
                        builder.push(col, Value::Decimal(v))
                    }
                    ColumnType::NumericText => builder.push(col, Value::Str(&self.output_text(datum))),
                }
            };
            pushed.unwrap_or_else(|e| internal(e));
        }
    }

    /// The value's text from its type's output function, in the database's
    /// encoding.
    ///
    /// # Safety
    /// As `push`.
    unsafe fn output_bytes(&self, datum: pg_sys::Datum) -> Vec<u8> {
        // SAFETY: datum is a value of the column's type, whose output function this is.
        unsafe {
            let text = pg_sys::OidOutputFunctionCall(self.output, datum);
            let bytes = CStr::from_ptr(text).to_bytes().to_vec();
            pg_sys::pfree(text.cast());
            bytes
        }
    }

    /// A numeric's text (ASCII in every encoding).
    ///
    /// # Safety
    /// As `push`.
    unsafe fn output_text(&self, datum: pg_sys::Datum) -> String {
        // SAFETY: as output_bytes.
        String::from_utf8_lossy(&unsafe { self.output_bytes(datum) }).into_owned()
    }

    fn unrepresentable(&self, e: Unrepresentable) -> ! {
        let code = match e {
            Unrepresentable::InfiniteDateTime => PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
            Unrepresentable::NonFiniteNumeric(_) => PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            Unrepresentable::DecimalOverflow(_) => PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            Unrepresentable::EndOfDay | Unrepresentable::Interval => {
                PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW
            }
        };
        error(code, format!("column \"{}\": {e}", self.name))
    }
}

/// The bytes of a varlena Datum: read in place when plain (inline,
/// uncompressed), else detoasted (in the current memory context, freed with
/// the fetch's).
///
/// # Safety
/// `datum` is a live varlena.
unsafe fn varlena_bytes<'a>(datum: pg_sys::Datum) -> &'a [u8] {
    // SAFETY: a live varlena (this function's contract); a detoasted copy lives in the current
    // memory context for at least the row.
    unsafe {
        let p = datum.cast_mut_ptr::<u8>();
        if varlena::is_plain(p) {
            return varlena::bytes(p);
        }
        let v = pg_sys::pg_detoast_datum_packed(datum.cast_mut_ptr());
        std::slice::from_raw_parts(pgrx::varlena::vardata_any(v).cast(), pgrx::varlena::varsize_any_exhdr(v))
    }
}

impl Reader {
    /// Text in the database's encoding as UTF-8 (Arrow's Utf8 is UTF-8): as it
    /// is in a UTF-8 database, converted from other encodings; bytes that are
    /// not UTF-8 even so (a SQL_ASCII database stores any) are an error, not
    /// replaced.
    fn utf8<'a>(&self, bytes: &'a [u8]) -> std::borrow::Cow<'a, str> {
        // SAFETY: pg_server_to_any returns its input when no conversion
        // is needed, else a palloc'd NUL-terminated string (and errors on bytes invalid in the server
        // encoding).
        unsafe {
            let converted = if self.utf8_database {
                std::borrow::Cow::Borrowed(bytes)
            } else {
                let out = pg_sys::pg_server_to_any(
                    bytes.as_ptr().cast(),
                    bytes.len() as i32,
                    pg_sys::pg_enc::PG_UTF8 as i32,
                );
                if std::ptr::eq(out.cast::<u8>(), bytes.as_ptr()) {
                    std::borrow::Cow::Borrowed(bytes)
                } else {
                    std::borrow::Cow::Owned(CStr::from_ptr(out).to_bytes().to_vec())
                }
            };
            match converted {
                std::borrow::Cow::Borrowed(b) => match std::str::from_utf8(b) {
                    Ok(s) => std::borrow::Cow::Borrowed(s),
                    Err(_) => not_utf8(),
                },
                std::borrow::Cow::Owned(v) => match String::from_utf8(v) {
                    Ok(s) => std::borrow::Cow::Owned(s),
                    Err(_) => not_utf8(),
                },
            }
        }
    }
}

fn not_utf8() -> ! {
    error(
        PgSqlErrorCode::ERRCODE_CHARACTER_NOT_IN_REPERTOIRE,
        "a text value is not valid UTF-8, which Arrow's Utf8 requires".into(),
    )
}

fn internal(e: impl std::fmt::Display) -> ! {
    error(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("Arrow egress: {e}"))
}

fn error(code: PgSqlErrorCode, message: String) -> ! {
    ereport!(ERROR, code, message);
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Decimal128Type, Float64Type, Int64Type, TimestampMicrosecondType};
    use arrow_array::{Array, RecordBatch};
    use arrow_ipc::reader::StreamReader;
    use pgrx::prelude::*;

    fn read(query: &str) -> Vec<RecordBatch> {
        let bytes = Spi::get_one_with_args::<Vec<u8>>("SELECT vexec.arrow_ipc($1)", &[query.into()])
            .unwrap()
            .unwrap();
        StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap().map(|b| b.unwrap()).collect()
    }

    #[pg_test]
    fn arrow_ipc_round_trips_values() {
        let batches = read(
            "SELECT g::int8 AS id, g / 4.0::float8 AS f, (g * 1.25)::numeric(10,2) AS price,
                    CASE WHEN g % 3 = 0 THEN NULL ELSE 'é' || g END AS label,
                    date '1970-01-01' + g AS d, timestamp '2000-01-01' + g * interval '1 second' AS ts
             FROM generate_series(1, 10000) g",
        );
        assert_eq!(batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(), vec![8192, 1808]);
        let b = &batches[1];
        let row = 1808 - 1; // g = 10000
        assert_eq!(b.column(0).as_primitive::<Int64Type>().value(row), 10000);
        assert_eq!(b.column(1).as_primitive::<Float64Type>().value(row), 2500.0);
        let price = b.column(2).as_primitive::<Decimal128Type>();
        assert_eq!((price.scale(), price.value(row)), (2, 1_250_000));
        let label = b.column(3).as_string::<i32>();
        assert_eq!(label.value(row), "é10000");
        assert!(label.is_null(row - 1)); // g = 9999
        assert_eq!(b.column(4).as_primitive::<Date32Type>().value(row), 10000);
        assert_eq!(
            b.column(5).as_primitive::<TimestampMicrosecondType>().value(row),
            946_684_800_000_000 + 10_000_000_000
        );
        assert_eq!(b.schema().field(2).metadata()["pg.type"], "numeric(10,2)");
    }

    #[pg_test]
    fn arrow_ipc_round_trips_other_types() {
        use arrow_array::types::{IntervalMonthDayNanoType, Time64MicrosecondType};
        Spi::run("CREATE TYPE mood AS ENUM ('sad', 'ok')").unwrap();
        let batches = read(
            "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS u, time '23:59:59.5' AS t,
                    interval '1 year 2 months -3 days 04:05:06.7' AS i, '{\"k\": [1, 2]}'::jsonb AS j,
                    'ok'::mood AS m",
        );
        let b = &batches[0];
        assert_eq!(b.column(0).as_fixed_size_binary().value(0)[..3], [0xa0, 0xee, 0xbc]);
        assert_eq!(b.column(1).as_primitive::<Time64MicrosecondType>().value(0), 86_399_500_000);
        let i = b.column(2).as_primitive::<IntervalMonthDayNanoType>().value(0);
        assert_eq!((i.months, i.days, i.nanoseconds), (14, -3, 14_706_700_000_000));
        assert_eq!(b.column(3).as_string::<i32>().value(0), "{\"k\": [1, 2]}");
        assert_eq!(b.column(4).as_string::<i32>().value(0), "ok");
        assert_eq!(b.schema().field(0).metadata()["ARROW:extension:name"], "arrow.uuid");
        assert_eq!(b.schema().field(3).metadata()["ARROW:extension:name"], "arrow.json");
    }

    #[pg_test(error = "column \"t\": time 24:00:00 has no Arrow time64 value")]
    fn arrow_ipc_refuses_the_end_of_day() {
        read("SELECT time '24:00:00' AS t");
    }

    #[pg_test(error = "column \"d\": infinite dates and timestamps have no Arrow value")]
    fn arrow_ipc_refuses_infinity() {
        read("SELECT 'infinity'::date AS d");
    }

    #[pg_test(
        error = "column \"p\" of type point has no Arrow mapping yet (cast it to a mapped type, such as text; docs/arrow.md lists them)"
    )]
    fn arrow_ipc_refuses_unmapped_types() {
        read("SELECT point(1, 2) AS p");
    }
}

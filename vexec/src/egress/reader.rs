//! PostgreSQL Datums into Arrow values: one [`Reader`] per result column,
//! a tree for arrays (List) and composites (Struct), built from the catalog
//! once per query. The type mapping itself is `vexec_core::arrow::types`;
//! this file looks types up and reads the values.

use std::ffi::{c_char, CStr};

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::arrow::{
    convert, ColumnBuilder, ColumnType, DatumForm, Nested, PgColumn, Unrepresentable, Value,
};
use vexec_core::batch::varlena;
use vexec_core::batch::{Column, RowIdx};
use vexec_core::numeric;

/// How the values of one column (or of an array's elements, a composite's
/// attribute) become Arrow values.
pub struct Reader {
    /// The result column's name, for messages.
    column: String,
    pub kind: ColumnType,
    read: Read,
    /// The database's encoding is UTF-8, so text needs no conversion (asked
    /// once here rather than by a guarded call into PostgreSQL per value).
    utf8_db: bool,
}

enum Read {
    /// A value of a built-in scalar type, an enum or a type carried as its
    /// text: read directly or through `output` (its output function).
    Scalar { type_oid: pg_sys::Oid, output: pg_sys::Oid },
    /// A one-dimensional array.
    List {
        element: Box<Reader>,
        elem_type: pg_sys::Oid,
        len: i16,
        byval: bool,
        align: c_char,
        zero_based: bool,
    },
    /// A composite; `desc` is a copy in the query's memory, `attrs` the
    /// readers of its attributes that are not dropped, by attribute index.
    Struct { desc: pg_sys::TupleDesc, attrs: Vec<(usize, Reader)> },
}

/// The column `name` of type (`type_oid`, `typmod`) and collation as an
/// Arrow field and the reader of its values.
///
/// # Safety
/// Catalog lookups: on the backend's main thread, in a transaction.
pub unsafe fn column(
    name: &str,
    type_oid: pg_sys::Oid,
    typmod: i32,
    collation: pg_sys::Oid,
) -> (PgColumn, Reader) {
    // SAFETY: format_type_with_typemod and get_collation_name are catalog lookups (this
    // function's contract); the latter returns NULL for an unknown collation.
    let (type_name, collation) = unsafe {
        let type_name =
            CStr::from_ptr(pg_sys::format_type_with_typemod(type_oid, typmod)).to_string_lossy().into_owned();
        let collation = if collation == pg_sys::InvalidOid {
            None
        } else {
            let c = pg_sys::get_collation_name(collation);
            (!c.is_null()).then(|| CStr::from_ptr(c).to_string_lossy().into_owned())
        };
        (type_name, collation)
    };
    // SAFETY: as above.
    let reader = unsafe { Reader::of(name, type_oid, typmod) };
    (PgColumn { name: name.into(), type_oid: type_oid.to_u32(), typmod, type_name, collation }, reader)
}

/// format_type's name of a type with its typmod.
///
/// # Safety
/// As [`column`].
unsafe fn type_name(type_oid: pg_sys::Oid, typmod: i32) -> String {
    // SAFETY: a catalog lookup (this function's contract).
    unsafe { CStr::from_ptr(pg_sys::format_type_with_typemod(type_oid, typmod)) }
        .to_string_lossy()
        .into_owned()
}

impl Reader {
    /// # Safety
    /// As [`column`].
    unsafe fn of(column: &str, type_oid: pg_sys::Oid, typmod: i32) -> Reader {
        // SAFETY: catalog lookups on the main thread (this function's contract); the tuple
        // descriptor is copied into the current (the query's) memory context.
        unsafe {
            let utf8_db = pg_sys::GetDatabaseEncoding() == pg_sys::pg_enc::PG_UTF8 as i32;
            let mut base_typmod = typmod;
            let base = pg_sys::getBaseTypeAndTypmod(type_oid, &mut base_typmod);
            let scalar = |kind| {
                let (mut output, mut varlena) = (pg_sys::InvalidOid, false);
                pg_sys::getTypeOutputInfo(base, &mut output, &mut varlena);
                Reader { column: column.into(), kind, read: Read::Scalar { type_oid: base, output }, utf8_db }
            };
            if let Some(kind) = ColumnType::of_scalar(base.to_u32(), base_typmod) {
                return scalar(kind);
            }
            if pg_sys::type_is_enum(base) {
                return scalar(ColumnType::EnumLabel);
            }
            let elem_type = pg_sys::get_element_type(base);
            if elem_type != pg_sys::InvalidOid {
                let element = Reader::of(column, elem_type, base_typmod);
                let item = Nested {
                    name: "item".into(),
                    pg_type: type_name(elem_type, base_typmod),
                    kind: element.kind.clone(),
                };
                let (mut len, mut byval, mut align) = (0i16, false, 0 as c_char);
                pg_sys::get_typlenbyvalalign(elem_type, &mut len, &mut byval, &mut align);
                let zero_based = base == pg_sys::INT2VECTOROID || base == pg_sys::OIDVECTOROID;
                return Reader {
                    column: column.into(),
                    kind: ColumnType::List(Box::new(item)),
                    read: Read::List { element: Box::new(element), elem_type, len, byval, align, zero_based },
                    utf8_db,
                };
            }
            let known_row_type = base != pg_sys::RECORDOID || base_typmod >= 0;
            if pg_sys::type_is_rowtype(base) && known_row_type {
                let desc = pg_sys::lookup_rowtype_tupdesc_copy(base, base_typmod);
                let mut attrs = Vec::new();
                let mut kinds = Vec::new();
                for i in 0..(*desc).natts as usize {
                    let att = pg_sys::TupleDescAttr(desc, i as i32);
                    if (*att).attisdropped {
                        continue;
                    }
                    let name = CStr::from_ptr((*att).attname.data.as_ptr()).to_string_lossy().into_owned();
                    let r = Reader::of(column, (*att).atttypid, (*att).atttypmod);
                    let pg_type = type_name((*att).atttypid, (*att).atttypmod);
                    kinds.push(Nested { name, pg_type, kind: r.kind.clone() });
                    attrs.push((i, r));
                }
                return Reader {
                    column: column.into(),
                    kind: ColumnType::Struct(kinds),
                    read: Read::Struct { desc, attrs },
                    utf8_db,
                };
            }
            // Anything else (geometric types, network addresses, ranges, money, bit strings,
            // records of no known shape, other extensions' types): PostgreSQL's text of it.
            scalar(ColumnType::PgText)
        }
    }

    /// Append one value (or NULL) of this reader's type to `out`.
    ///
    /// # Safety
    /// `datum` is a live value of the type this reader was made for (or
    /// `isnull`); allocations land in the current memory context, which
    /// the caller resets between batches.
    pub unsafe fn push(&self, out: &mut ColumnBuilder, datum: pg_sys::Datum, isnull: bool) {
        if isnull {
            return pushed(out.push(Value::Null));
        }
        // SAFETY: datum is a live value of this reader's type (this function's contract).
        unsafe {
            match &self.read {
                Read::Scalar { type_oid, output } => self.push_scalar(out, datum, *type_oid, *output),
                Read::List { element, elem_type, len, byval, align, zero_based } => {
                    let arr = pg_sys::pg_detoast_datum(datum.cast_mut_ptr()).cast::<pg_sys::ArrayType>();
                    let ndim = (*arr).ndim;
                    if ndim > 0 {
                        let dims =
                            arr.cast::<u8>().add(std::mem::size_of::<pg_sys::ArrayType>()).cast::<i32>();
                        let lower = *dims.add(ndim as usize);
                        let first = i32::from(!*zero_based);
                        if ndim > 1 {
                            self.not_a_list(format!(
                                "a {ndim}-dimensional array (only one-dimensional arrays)"
                            ));
                        }
                        if lower != first {
                            self.not_a_list(format!(
                                "an array indexed from {lower} (only arrays indexed from {first})"
                            ));
                        }
                    }
                    let (mut values, mut nulls, mut n) = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
                    if ndim > 0 {
                        pg_sys::deconstruct_array(
                            arr,
                            *elem_type,
                            i32::from(*len),
                            *byval,
                            *align,
                            &mut values,
                            &mut nulls,
                            &mut n,
                        );
                    }
                    let elements = out.elements().unwrap_or_else(|e| internal(e));
                    for i in 0..n as usize {
                        element.push(elements, *values.add(i), !nulls.is_null() && *nulls.add(i));
                    }
                    pushed(out.end_list());
                }
                Read::Struct { desc, attrs } => {
                    let header =
                        pg_sys::pg_detoast_datum(datum.cast_mut_ptr()).cast::<pg_sys::HeapTupleHeaderData>();
                    let mut tuple: pg_sys::HeapTupleData = std::mem::zeroed();
                    tuple.t_len = pgrx::varlena::varsize_any(header.cast()) as u32;
                    tuple.t_data = header;
                    let natts = (**desc).natts as usize;
                    let mut values = vec![pg_sys::Datum::from(0); natts];
                    let mut nulls = vec![true; natts];
                    pg_sys::heap_deform_tuple(&mut tuple, *desc, values.as_mut_ptr(), nulls.as_mut_ptr());
                    for (k, (i, r)) in attrs.iter().enumerate() {
                        let attr = out.attribute(k).unwrap_or_else(|e| internal(e));
                        r.push(attr, values[*i], nulls[*i]);
                    }
                    pushed(out.end_struct());
                }
            }
        }
    }

    /// Append rows `rows` of a batch column of this reader's type: in one
    /// pass where `vexec_core` reads the batch's values itself (integers,
    /// floats, booleans, dates, timestamps, decimals, plain text and bytea),
    /// value by value through [`Reader::push`] otherwise.
    ///
    /// # Safety
    /// The column's valid values are live values of this reader's type, in
    /// the postgres layout or an arrow one; allocations as for `push`.
    pub unsafe fn push_rows(&self, out: &mut ColumnBuilder, col: &Column, rows: &[RowIdx]) {
        if let Read::Scalar { type_oid, .. } = self.read {
            let form = match type_oid {
                pg_sys::TEXTOID | pg_sys::VARCHAROID | pg_sys::BPCHAROID if self.utf8_db => {
                    DatumForm::Utf8Text
                }
                pg_sys::BYTEAOID => DatumForm::Bytes,
                pg_sys::NUMERICOID => DatumForm::Numeric,
                _ => DatumForm::Other,
            };
            // SAFETY: the form says what the column's Datums are (this function's contract).
            match unsafe { out.append_rows(col, rows, form) } {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => self.unrepresentable(e),
            }
        }
        for &r in rows {
            let i = r as usize;
            // SAFETY: this function's contract; `datum` converts arrow dates, timestamps and bits.
            unsafe { self.push(out, pg_sys::Datum::from(col.values.datum(i)), !col.is_valid(i)) };
        }
    }

    /// # Safety
    /// As `push`, for a non-NULL value of a scalar type.
    unsafe fn push_scalar(
        &self,
        out: &mut ColumnBuilder,
        datum: pg_sys::Datum,
        type_oid: pg_sys::Oid,
        output: pg_sys::Oid,
    ) {
        // SAFETY: by-value types are read from the Datum itself, varlenas detoasted, names read as
        // C strings, fixed-length by-reference values (uuid, interval, timetz) through their
        // structs, and other types printed by their output function.
        unsafe {
            let v = datum.value();
            let r = match &self.kind {
                ColumnType::Bool => out.push(Value::Bool(v != 0)),
                ColumnType::Int16 => out.push(Value::Int16(v as i16)),
                ColumnType::Int32 => out.push(Value::Int32(v as i32)),
                ColumnType::Int64 => out.push(Value::Int64(v as i64)),
                ColumnType::UInt32 => out.push(Value::UInt32(v as u32)),
                ColumnType::UInt64 => out.push(Value::UInt64(v as u64)),
                ColumnType::Float32 => out.push(Value::Float32(f32::from_bits(v as u32))),
                ColumnType::Float64 => out.push(Value::Float64(f64::from_bits(v as u64))),
                ColumnType::Utf8 if type_oid == pg_sys::NAMEOID => {
                    let name = CStr::from_ptr(datum.cast_mut_ptr::<c_char>());
                    out.push(Value::Str(&utf8(name.to_bytes(), self.utf8_db)))
                }
                ColumnType::Utf8 => out.push(Value::Str(&utf8(varlena_bytes(datum), self.utf8_db))),
                ColumnType::Binary => out.push(Value::Bytes(varlena_bytes(datum))),
                ColumnType::Date32 => out.push(Value::Date32(
                    convert::date32(v as i32).unwrap_or_else(|e| self.unrepresentable(e)),
                )),
                ColumnType::TimestampMicros { .. } => out.push(Value::Micros(
                    convert::timestamp_micros(v as i64).unwrap_or_else(|e| self.unrepresentable(e)),
                )),
                ColumnType::Uuid => {
                    out.push(Value::Bytes(std::slice::from_raw_parts(datum.cast_mut_ptr::<u8>(), 16)))
                }
                ColumnType::Time64Micros => out.push(Value::Micros(
                    convert::time64_micros(v as i64).unwrap_or_else(|e| self.unrepresentable(e)),
                )),
                ColumnType::TimeTz => {
                    let t = datum.cast_mut_ptr::<pg_sys::TimeTzADT>();
                    let (time, offset) =
                        convert::timetz((*t).time, (*t).zone).unwrap_or_else(|e| self.unrepresentable(e));
                    out.push(Value::TimeTz(time, offset))
                }
                ColumnType::IntervalMonthDayNano => {
                    let iv = datum.cast_mut_ptr::<pg_sys::Interval>();
                    let (m, d, n) = convert::interval_month_day_nano((*iv).month, (*iv).day, (*iv).time)
                        .unwrap_or_else(|e| self.unrepresentable(e));
                    out.push(Value::Interval(m, d, n))
                }
                ColumnType::Decimal128 { precision, scale } => {
                    let decoded = numeric::decode(varlena_bytes(datum))
                        .unwrap_or_else(|| internal("a numeric value that is not a numeric"));
                    let d = convert::decimal128_of(decoded, *precision, *scale)
                        .unwrap_or_else(|e| self.unrepresentable(e));
                    out.push(Value::Decimal(d))
                }
                ColumnType::Json | ColumnType::EnumLabel | ColumnType::PgText | ColumnType::NumericText => {
                    out.push(Value::Str(&utf8(&output_bytes(output, datum), self.utf8_db)))
                }
                ColumnType::List(_) | ColumnType::Struct(_) => internal("a nested type read as a scalar"),
            };
            pushed(r)
        }
    }

    fn not_a_list(&self, what: String) -> ! {
        error(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("column \"{}\": {what} has no Arrow List value", self.column),
        )
    }

    fn unrepresentable(&self, e: Unrepresentable) -> ! {
        let code = match e {
            Unrepresentable::InfiniteDateTime | Unrepresentable::TimestampRange => {
                PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW
            }
            Unrepresentable::NonFiniteNumeric(_) => PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            Unrepresentable::DecimalOverflow(_) => PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            Unrepresentable::EndOfDay | Unrepresentable::Interval => {
                PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW
            }
        };
        error(code, format!("column \"{}\": {e}", self.column))
    }
}

fn pushed(r: Result<(), String>) {
    r.unwrap_or_else(|e| internal(e))
}

/// A value's text from its type's output function, in the database's encoding.
///
/// # Safety
/// `datum` is a live value of the type whose output function `output` is.
unsafe fn output_bytes(output: pg_sys::Oid, datum: pg_sys::Datum) -> Vec<u8> {
    // SAFETY: this function's contract.
    unsafe {
        let text = pg_sys::OidOutputFunctionCall(output, datum);
        CStr::from_ptr(text).to_bytes().to_vec()
    }
}

/// The bytes of a varlena Datum: read in place when plain (inline,
/// uncompressed), else detoasted (in the current memory context).
///
/// # Safety
/// `datum` is a live varlena.
unsafe fn varlena_bytes<'a>(datum: pg_sys::Datum) -> &'a [u8] {
    // SAFETY: a live varlena (this function's contract); a detoasted copy lives in the current
    // memory context, which outlives the value's use.
    unsafe {
        let p = datum.cast_mut_ptr::<u8>();
        if varlena::is_plain(p) {
            return varlena::bytes(p);
        }
        let v = pg_sys::pg_detoast_datum_packed(datum.cast_mut_ptr());
        std::slice::from_raw_parts(pgrx::varlena::vardata_any(v).cast(), pgrx::varlena::varsize_any_exhdr(v))
    }
}

/// Text in the database's encoding as UTF-8 (Arrow's Utf8 is UTF-8): as it is
/// in a UTF-8 database, converted from other encodings; bytes that are not
/// UTF-8 even so (a SQL_ASCII database stores any) are an error, not replaced.
fn utf8(bytes: &[u8], utf8_db: bool) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    // SAFETY: pg_server_to_any returns its input when no conversion is needed, else a palloc'd
    // NUL-terminated string (and errors on bytes invalid in the server encoding).
    let converted = unsafe {
        if utf8_db {
            Cow::Borrowed(bytes)
        } else {
            let out = pg_sys::pg_server_to_any(
                bytes.as_ptr().cast(),
                bytes.len() as i32,
                pg_sys::pg_enc::PG_UTF8 as i32,
            );
            if std::ptr::eq(out.cast::<u8>(), bytes.as_ptr()) {
                Cow::Borrowed(bytes)
            } else {
                Cow::Owned(CStr::from_ptr(out).to_bytes().to_vec())
            }
        }
    };
    match converted {
        Cow::Borrowed(b) => std::str::from_utf8(b).map(Cow::Borrowed).unwrap_or_else(|_| not_utf8()),
        Cow::Owned(v) => String::from_utf8(v).map(Cow::Owned).unwrap_or_else(|_| not_utf8()),
    }
}

fn not_utf8() -> ! {
    error(
        PgSqlErrorCode::ERRCODE_CHARACTER_NOT_IN_REPERTOIRE,
        "a text value is not valid UTF-8, which Arrow's Utf8 requires".into(),
    )
}

pub fn internal(e: impl std::fmt::Display) -> ! {
    error(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("Arrow egress: {e}"))
}

pub fn error(code: PgSqlErrorCode, message: String) -> ! {
    ereport!(ERROR, code, message);
}

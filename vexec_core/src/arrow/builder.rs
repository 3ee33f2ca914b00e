//! Rows into Arrow RecordBatches: one [`ColumnBuilder`] per column, a tree
//! for nested types (a list's elements, a struct's attributes), leaves on
//! arrow-rs's array builders.

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, FixedSizeBinaryBuilder,
    Float32Builder, Float64Builder, Int16Builder, Int32Builder, Int64Builder, IntervalMonthDayNanoBuilder,
    StringBuilder, Time64MicrosecondBuilder, TimestampMicrosecondBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, ListArray, RecordBatch, StructArray};
use arrow_buffer::{IntervalMonthDayNano, NullBufferBuilder, OffsetBuffer};
use arrow_schema::{ArrowError, DataType, FieldRef, Fields, Schema, SchemaRef};

use super::convert::{self, Unrepresentable};
use super::types::{timetz_fields, ColumnType, PgColumn};
use crate::batch::{layout, varlena, Column, RowIdx, Values};

/// What the Datums of a batch column of by-reference values are, for
/// [`ColumnBuilder::append_rows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatumForm {
    /// Varlenas whose bytes are the Arrow string: text, varchar and bpchar
    /// in a UTF-8 database (PostgreSQL keeps stored text valid in it).
    Utf8Text,
    /// Varlenas whose bytes are the Arrow binary value (bytea).
    Bytes,
    /// numeric varlenas.
    Numeric,
    /// Anything else: read value by value by the server.
    Other,
}

/// One value, already in its column's Arrow representation (`convert`
/// shifts epochs and scales decimals). Lists and structs are built through
/// [`ColumnBuilder::elements`] and [`ColumnBuilder::attribute`].
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    UInt32(u32),
    UInt64(u64),
    Float32(f32),
    Float64(f64),
    Str(&'a str),
    Bytes(&'a [u8]),
    /// Date32 days since 1970; microseconds since 1970 (timestamps) or
    /// since midnight (times).
    Date32(i32),
    Micros(i64),
    Decimal(i128),
    /// months, days, nanoseconds.
    Interval(i32, i32, i64),
    /// Microseconds since midnight, UTC offset in seconds east.
    TimeTz(i64, i32),
}

enum Leaf {
    Bool(BooleanBuilder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    UInt32(UInt32Builder),
    UInt64(UInt64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Date32(Date32Builder),
    Micros(TimestampMicrosecondBuilder),
    /// With its precision and scale.
    Decimal(Decimal128Builder, u8, i8),
    FixedBinary(FixedSizeBinaryBuilder),
    Time(Time64MicrosecondBuilder),
    Interval(IntervalMonthDayNanoBuilder),
}

/// The builder of one column (or of a list's elements, a struct's attribute).
pub struct ColumnBuilder(Node);

enum Node {
    Leaf(Leaf),
    TimeTz { time: Time64MicrosecondBuilder, offset: Int32Builder, nulls: NullBufferBuilder },
    List { item: FieldRef, offsets: Vec<i32>, nulls: NullBufferBuilder, elements: Box<ColumnBuilder> },
    Struct { fields: Fields, attributes: Vec<ColumnBuilder>, nulls: NullBufferBuilder },
}

macro_rules! each_leaf {
    ($leaf:expr, $b:ident => $e:expr) => {
        match $leaf {
            Leaf::Bool($b) => $e,
            Leaf::Int16($b) => $e,
            Leaf::Int32($b) => $e,
            Leaf::Int64($b) => $e,
            Leaf::UInt32($b) => $e,
            Leaf::UInt64($b) => $e,
            Leaf::Float32($b) => $e,
            Leaf::Float64($b) => $e,
            Leaf::Utf8($b) => $e,
            Leaf::Binary($b) => $e,
            Leaf::Date32($b) => $e,
            Leaf::Micros($b) => $e,
            Leaf::Decimal($b, ..) => $e,
            Leaf::FixedBinary($b) => $e,
            Leaf::Time($b) => $e,
            Leaf::Interval($b) => $e,
        }
    };
}

impl Leaf {
    fn push(&mut self, v: Value<'_>) -> Result<(), String> {
        match (self, v) {
            (leaf, Value::Null) => each_leaf!(leaf, b => b.append_null()),
            (Leaf::Bool(b), Value::Bool(x)) => b.append_value(x),
            (Leaf::Int16(b), Value::Int16(x)) => b.append_value(x),
            (Leaf::Int32(b), Value::Int32(x)) => b.append_value(x),
            (Leaf::Int64(b), Value::Int64(x)) => b.append_value(x),
            (Leaf::UInt32(b), Value::UInt32(x)) => b.append_value(x),
            (Leaf::UInt64(b), Value::UInt64(x)) => b.append_value(x),
            (Leaf::Float32(b), Value::Float32(x)) => b.append_value(x),
            (Leaf::Float64(b), Value::Float64(x)) => b.append_value(x),
            (Leaf::Utf8(b), Value::Str(x)) => b.append_value(x),
            (Leaf::Binary(b), Value::Bytes(x)) => b.append_value(x),
            (Leaf::Date32(b), Value::Date32(x)) => b.append_value(x),
            (Leaf::Micros(b), Value::Micros(x)) => b.append_value(x),
            (Leaf::Decimal(b, ..), Value::Decimal(x)) => b.append_value(x),
            (Leaf::FixedBinary(b), Value::Bytes(x)) => b.append_value(x).map_err(|e| e.to_string())?,
            (Leaf::Time(b), Value::Micros(x)) => b.append_value(x),
            (Leaf::Interval(b), Value::Interval(m, d, n)) => {
                b.append_value(IntervalMonthDayNano::new(m, d, n))
            }
            (_, v) => return Err(format!("a {v:?} in a column of another type")),
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        each_leaf!(self, b => Arc::new(b.finish()))
    }

    fn len(&self) -> usize {
        each_leaf!(self, b => b.len())
    }
}

impl ColumnBuilder {
    pub fn new(t: &ColumnType) -> ColumnBuilder {
        let leaf = |l| ColumnBuilder(Node::Leaf(l));
        match t {
            ColumnType::Bool => leaf(Leaf::Bool(BooleanBuilder::new())),
            ColumnType::Int16 => leaf(Leaf::Int16(Int16Builder::new())),
            ColumnType::Int32 => leaf(Leaf::Int32(Int32Builder::new())),
            ColumnType::Int64 => leaf(Leaf::Int64(Int64Builder::new())),
            ColumnType::UInt32 => leaf(Leaf::UInt32(UInt32Builder::new())),
            ColumnType::UInt64 => leaf(Leaf::UInt64(UInt64Builder::new())),
            ColumnType::Float32 => leaf(Leaf::Float32(Float32Builder::new())),
            ColumnType::Float64 => leaf(Leaf::Float64(Float64Builder::new())),
            ColumnType::Utf8
            | ColumnType::NumericText
            | ColumnType::Json
            | ColumnType::EnumLabel
            | ColumnType::PgText => leaf(Leaf::Utf8(StringBuilder::new())),
            ColumnType::Uuid => leaf(Leaf::FixedBinary(FixedSizeBinaryBuilder::new(16))),
            ColumnType::Time64Micros => leaf(Leaf::Time(Time64MicrosecondBuilder::new())),
            ColumnType::IntervalMonthDayNano => leaf(Leaf::Interval(IntervalMonthDayNanoBuilder::new())),
            ColumnType::Binary => leaf(Leaf::Binary(BinaryBuilder::new())),
            ColumnType::Date32 => leaf(Leaf::Date32(Date32Builder::new())),
            ColumnType::TimestampMicros { utc } => {
                leaf(Leaf::Micros(TimestampMicrosecondBuilder::new().with_timezone_opt(utc.then(|| "UTC"))))
            }
            ColumnType::Decimal128 { precision, scale } => leaf(Leaf::Decimal(
                Decimal128Builder::new()
                    .with_precision_and_scale(*precision, *scale)
                    .expect("precision <= 38"),
                *precision,
                *scale,
            )),
            ColumnType::TimeTz => ColumnBuilder(Node::TimeTz {
                time: Time64MicrosecondBuilder::new(),
                offset: Int32Builder::new(),
                nulls: NullBufferBuilder::new(0),
            }),
            ColumnType::List(element) => {
                let DataType::List(item) = t.data_type() else { unreachable!("a list's data type") };
                ColumnBuilder(Node::List {
                    item,
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                    elements: Box::new(ColumnBuilder::new(&element.kind)),
                })
            }
            ColumnType::Struct(attrs) => {
                let DataType::Struct(fields) = t.data_type() else { unreachable!("a struct's data type") };
                ColumnBuilder(Node::Struct {
                    fields,
                    attributes: attrs.iter().map(|a| ColumnBuilder::new(&a.kind)).collect(),
                    nulls: NullBufferBuilder::new(0),
                })
            }
        }
    }

    /// Append a scalar value, or a NULL of any type. A value of another
    /// type than the column's is the caller's bug: an error, not a panic.
    pub fn push(&mut self, v: Value<'_>) -> Result<(), String> {
        match (&mut self.0, v) {
            (Node::Leaf(leaf), v) => leaf.push(v),
            (Node::TimeTz { time, offset, nulls }, Value::TimeTz(t, o)) => {
                time.append_value(t);
                offset.append_value(o);
                nulls.append_non_null();
                Ok(())
            }
            (Node::TimeTz { time, offset, nulls }, Value::Null) => {
                // The attributes are not nullable: zeros under the NULL.
                time.append_value(0);
                offset.append_value(0);
                nulls.append_null();
                Ok(())
            }
            (Node::List { offsets, nulls, .. }, Value::Null) => {
                offsets.push(*offsets.last().expect("offsets start at 0"));
                nulls.append_null();
                Ok(())
            }
            (Node::Struct { attributes, nulls, .. }, Value::Null) => {
                for a in attributes.iter_mut() {
                    a.push(Value::Null)?;
                }
                nulls.append_null();
                Ok(())
            }
            (_, v) => Err(format!("a {v:?} in a list or struct column")),
        }
    }

    /// The builder of a list column's elements: push one list's elements
    /// there, then call [`ColumnBuilder::end_list`].
    pub fn elements(&mut self) -> Result<&mut ColumnBuilder, String> {
        match &mut self.0 {
            Node::List { elements, .. } => Ok(elements),
            _ => Err("elements of a column that is not a list".into()),
        }
    }

    /// End a (non-NULL) list whose elements were pushed since the last one.
    pub fn end_list(&mut self) -> Result<(), String> {
        match &mut self.0 {
            Node::List { offsets, nulls, elements, .. } => {
                offsets.push(i32::try_from(elements.len()).map_err(|_| "a list column past 2^31 elements")?);
                nulls.append_non_null();
                Ok(())
            }
            _ => Err("end of a list in a column that is not a list".into()),
        }
    }

    /// The builder of attribute `i` of a struct column: push each attribute
    /// once, then call [`ColumnBuilder::end_struct`].
    pub fn attribute(&mut self, i: usize) -> Result<&mut ColumnBuilder, String> {
        match &mut self.0 {
            Node::Struct { attributes, .. } => {
                attributes.get_mut(i).ok_or_else(|| format!("no attribute {i}"))
            }
            _ => Err("attribute of a column that is not a struct".into()),
        }
    }

    /// End a (non-NULL) struct value.
    pub fn end_struct(&mut self) -> Result<(), String> {
        match &mut self.0 {
            Node::Struct { attributes, nulls, .. } => {
                let n = nulls.len() + 1;
                if attributes.iter().any(|a| a.len() != n) {
                    return Err("a struct value without every attribute".into());
                }
                nulls.append_non_null();
                Ok(())
            }
            _ => Err("end of a struct in a column that is not a struct".into()),
        }
    }

    /// Append rows `rows` of a batch column in one pass, when this column's
    /// Arrow type and the batch's values are a pair read without the
    /// server: integers, floats, booleans (bytes or bits), dates and
    /// timestamps (either epoch), Decimal128, and plain (not TOASTed)
    /// varlenas of `form`. `Ok(false)`, with nothing appended, for any other
    /// pair; the value Arrow cannot represent (an infinite date, a numeric
    /// NaN) is an error, the column then half-appended (the caller raises).
    ///
    /// # Safety
    /// For `Utf8Text`, `Bytes` and `Numeric`, every valid Datum among `rows`
    /// points to a varlena of that kind.
    pub unsafe fn append_rows(
        &mut self,
        col: &Column,
        rows: &[RowIdx],
        form: DatumForm,
    ) -> Result<bool, Unrepresentable> {
        let Node::Leaf(leaf) = &mut self.0 else { return Ok(false) };
        let valid = |i: usize| col.validity.get(i);
        macro_rules! each {
            ($b:expr, $v:expr, |$x:ident| $conv:expr) => {{
                for &r in rows {
                    let i = r as usize;
                    if valid(i) {
                        let $x = $v[i];
                        $b.append_value($conv);
                    } else {
                        $b.append_null();
                    }
                }
            }};
        }
        let finite_date = |d: i32| match d {
            i32::MIN | i32::MAX => Err(Unrepresentable::InfiniteDateTime),
            d => Ok(d),
        };
        let finite_stamp = |t: i64| match t {
            i64::MIN | i64::MAX => Err(Unrepresentable::InfiniteDateTime),
            t => Ok(t),
        };
        let Values::Datum(d) = &col.values else {
            match (leaf, &col.values) {
                (Leaf::Bool(b), Values::Bool(v)) => each!(b, v, |x| x != 0),
                (Leaf::Bool(b), Values::Bits(v)) => {
                    for &r in rows {
                        let i = r as usize;
                        b.append_option(valid(i).then(|| v.value(i)));
                    }
                }
                (Leaf::Int16(b), Values::I16(v)) => each!(b, v, |x| x),
                (Leaf::Int32(b), Values::I32(v)) => each!(b, v, |x| x),
                (Leaf::Int64(b), Values::I64(v)) => each!(b, v, |x| x),
                (Leaf::Float32(b), Values::F32(v)) => each!(b, v, |x| x),
                (Leaf::Float64(b), Values::F64(v)) => each!(b, v, |x| x),
                (Leaf::Date32(b), Values::I32(v)) => each!(b, v, |x| convert::date32(x)?),
                (Leaf::Date32(b), Values::Date32(v)) => each!(b, v, |x| finite_date(x)?),
                (Leaf::Micros(b), Values::I64(v)) => each!(b, v, |x| convert::timestamp_micros(x)?),
                (Leaf::Micros(b), Values::TimestampUs(v)) => each!(b, v, |x| finite_stamp(x)?),
                (Leaf::Decimal(b, _, scale), Values::Decimal128(v, s))
                    if i32::from(*scale) == i32::from(*s) =>
                {
                    each!(b, v, |x| x)
                }
                _ => return Ok(false),
            }
            return Ok(true);
        };
        // SAFETY: this function's contract: valid Datums are varlenas.
        let plain = |i: usize| !valid(i) || unsafe { varlena::is_plain(d[i] as *const u8) };
        if form == DatumForm::Other || !rows.iter().all(|&r| plain(r as usize)) {
            return Ok(false); // TOASTed values are the server's to read
        }
        // SAFETY: plain varlenas (checked above).
        let bytes = |i: usize| unsafe { varlena::bytes(d[i] as *const u8) };
        match (leaf, form) {
            (Leaf::Utf8(b), DatumForm::Utf8Text) => {
                for &r in rows {
                    let i = r as usize;
                    // SAFETY: this function's contract: text, valid in the (UTF-8) database encoding.
                    b.append_option(valid(i).then(|| unsafe { std::str::from_utf8_unchecked(bytes(i)) }));
                }
            }
            (Leaf::Binary(b), DatumForm::Bytes) => {
                for &r in rows {
                    let i = r as usize;
                    b.append_option(valid(i).then(|| bytes(i)));
                }
            }
            (Leaf::Decimal(b, precision, scale), DatumForm::Numeric) => {
                let (precision, scale) = (*precision, *scale);
                for &r in rows {
                    let i = r as usize;
                    if !valid(i) {
                        b.append_null();
                        continue;
                    }
                    // The stored form at the column's own scale first (the scan's fast path).
                    // SAFETY: a plain numeric varlena.
                    let fast =
                        (scale >= 0).then(|| unsafe { layout::decimal_of(d[i] as *const u8, scale as u16) });
                    let v = match fast.flatten() {
                        Some(v) => v,
                        None => {
                            let decoded = crate::numeric::decode(bytes(i))
                                .ok_or_else(|| Unrepresentable::DecimalOverflow("(not a numeric)".into()))?;
                            convert::decimal128_of(decoded, precision, scale)?
                        }
                    };
                    b.append_value(v);
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Values appended so far.
    pub fn len(&self) -> usize {
        match &self.0 {
            Node::Leaf(leaf) => leaf.len(),
            Node::TimeTz { nulls, .. } | Node::List { nulls, .. } | Node::Struct { nulls, .. } => nulls.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values appended so far as an array; the builder starts afresh.
    pub fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        Ok(match &mut self.0 {
            Node::Leaf(leaf) => leaf.finish(),
            Node::TimeTz { time, offset, nulls } => Arc::new(StructArray::try_new(
                timetz_fields(),
                vec![Arc::new(time.finish()), Arc::new(offset.finish())],
                nulls.finish(),
            )?),
            Node::List { item, offsets, nulls, elements } => {
                let values = elements.finish()?;
                let offsets = OffsetBuffer::new(std::mem::replace(offsets, vec![0]).into());
                Arc::new(ListArray::try_new(item.clone(), offsets, values, nulls.finish())?)
            }
            Node::Struct { fields, attributes, nulls } => {
                let arrays =
                    attributes.iter_mut().map(ColumnBuilder::finish).collect::<Result<Vec<_>, _>>()?;
                let nulls = nulls.finish();
                if fields.is_empty() {
                    // A composite with no attributes: StructArray needs the length said.
                    Arc::new(StructArray::new_empty_fields(nulls.as_ref().map_or(0, |n| n.len()), nulls))
                } else {
                    Arc::new(StructArray::try_new(fields.clone(), arrays, nulls)?)
                }
            }
        })
    }
}

/// Rows gathered column by column into RecordBatches.
pub struct BatchBuilder {
    schema: SchemaRef,
    columns: Vec<ColumnBuilder>,
}

impl BatchBuilder {
    /// A builder for a result with these columns (each with its mapped type).
    pub fn new(columns: &[(PgColumn, ColumnType)]) -> BatchBuilder {
        let fields: Vec<_> = columns.iter().map(|(c, t)| t.field(c)).collect();
        BatchBuilder {
            schema: Arc::new(Schema::new(fields)),
            columns: columns.iter().map(|(_, t)| ColumnBuilder::new(t)).collect(),
        }
    }

    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Append a scalar value (or NULL) to column `col` (every column once
    /// per row).
    pub fn push(&mut self, col: usize, v: Value<'_>) -> Result<(), String> {
        self.column(col)?.push(v)
    }

    /// The builder of column `col`, for nested values.
    pub fn column(&mut self, col: usize) -> Result<&mut ColumnBuilder, String> {
        self.columns.get_mut(col).ok_or_else(|| format!("no column {col}"))
    }

    /// Rows gathered so far.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, ColumnBuilder::len)
    }

    /// The gathered rows as a RecordBatch; the builder starts afresh. A
    /// result without columns still counts its rows.
    pub fn finish(&mut self, rows: usize) -> Result<RecordBatch, ArrowError> {
        let arrays = self.columns.iter_mut().map(ColumnBuilder::finish).collect::<Result<Vec<_>, _>>()?;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::Nested;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Time64MicrosecondType};
    use arrow_array::Array;

    fn nested(name: &str, kind: ColumnType) -> Nested {
        Nested { name: name.into(), pg_type: "t".into(), kind }
    }

    fn col(name: &str, t: ColumnType) -> (PgColumn, ColumnType) {
        (PgColumn { name: name.into(), type_oid: 0, typmod: -1, type_name: "t".into(), collation: None }, t)
    }

    #[test]
    fn lists_of_structs_with_nulls_at_every_level() {
        // {(1,'a'), NULL, (NULL,'c')}, NULL, {}
        let row = ColumnType::Struct(vec![nested("n", ColumnType::Int32), nested("s", ColumnType::Utf8)]);
        let mut b = BatchBuilder::new(&[col("l", ColumnType::List(Box::new(nested("item", row))))]);
        let l = b.column(0).unwrap();
        let e = l.elements().unwrap();
        e.attribute(0).unwrap().push(Value::Int32(1)).unwrap();
        e.attribute(1).unwrap().push(Value::Str("a")).unwrap();
        e.end_struct().unwrap();
        e.push(Value::Null).unwrap();
        e.attribute(0).unwrap().push(Value::Null).unwrap();
        e.attribute(1).unwrap().push(Value::Str("c")).unwrap();
        e.end_struct().unwrap();
        l.end_list().unwrap();
        l.push(Value::Null).unwrap();
        l.end_list().unwrap();
        let batch = b.finish(3).unwrap();
        let lists = batch.column(0).as_list::<i32>();
        assert_eq!((lists.len(), lists.null_count()), (3, 1));
        assert_eq!((lists.value(0).len(), lists.value(2).len()), (3, 0));
        let first = lists.value(0);
        let structs = first.as_struct();
        assert!(structs.is_valid(0) && structs.is_null(1) && structs.is_valid(2));
        let n = structs.column(0).as_primitive::<Int32Type>();
        assert_eq!((n.value(0), n.is_null(2)), (1, true));
        assert_eq!(structs.column(1).as_string::<i32>().value(2), "c");
    }

    #[test]
    fn timetz_is_a_struct_of_time_and_offset() {
        let mut b = BatchBuilder::new(&[col("t", ColumnType::TimeTz)]);
        b.push(0, Value::TimeTz(3_600_000_000, 7200)).unwrap();
        b.push(0, Value::Null).unwrap();
        let batch = b.finish(2).unwrap();
        let s = batch.column(0).as_struct();
        assert_eq!(s.column(0).as_primitive::<Time64MicrosecondType>().value(0), 3_600_000_000);
        assert_eq!(s.column(1).as_primitive::<Int32Type>().value(0), 7200);
        assert!(s.is_null(1));
    }

    #[test]
    fn a_value_of_another_type_is_an_error() {
        let mut b = BatchBuilder::new(&[col("id", ColumnType::Int32)]);
        assert!(b.push(0, Value::Str("x")).is_err());
        assert!(b.push(1, Value::Int32(1)).is_err());
        assert!(b.column(0).unwrap().elements().is_err());
        let mut s = BatchBuilder::new(&[col("s", ColumnType::Struct(vec![nested("a", ColumnType::Int32)]))]);
        assert!(s.column(0).unwrap().end_struct().is_err(), "a struct value needs its attributes");
    }

    /// A batch column appended in one pass gives the array its values
    /// pushed one by one give, for every pair `append_rows` takes, on a
    /// selection that skips rows, with NULLs; values Arrow cannot hold are
    /// errors; other pairs append nothing.
    #[test]
    fn batch_columns_append_as_their_values_push() {
        use crate::batch::layout::{to_arrow, ArrowKind};
        use crate::batch::PhysType;
        let rows: Vec<RowIdx> = vec![0, 2, 3, 4];
        let ints = |phys, vals: &[i64]| {
            let mut c = Column::new(phys, vals.len());
            for (i, v) in vals.iter().enumerate() {
                c.values.set_datum(i, *v as usize);
            }
            c.validity.set(3, false);
            c
        };
        let numerics: Vec<Vec<u8>> = vec![
            crate::numeric::encode(12_345, 2),
            varlena::make_1b(&crate::numeric::encode_payload(-7, 2)),
            crate::numeric::encode(5, 2),
            crate::numeric::encode(0, 2),
            crate::numeric::encode(10, 1), // display scale 1: the general path
        ];
        let texts: Vec<Vec<u8>> =
            ["", "twelve bytes", "x", "NULL", "väl"].iter().map(|t| varlena::make_1b(t.as_bytes())).collect();
        let datums = |v: &[Vec<u8>]| {
            let mut c = Column::new(PhysType::Datum, v.len());
            for (i, b) in v.iter().enumerate() {
                c.values.set_datum(i, b.as_ptr() as usize);
            }
            if v.len() > 3 {
                c.validity.set(3, false);
            }
            c
        };
        let dates = ints(PhysType::I32, &[-10_957, 1, 2, 3, 9_000]);
        let stamps = ints(PhysType::I64, &[-1, 0, 7, 9, 1_000_000]);
        let all: Vec<RowIdx> = (0..5).collect();
        let arrow = |c: &Column, k| {
            // SAFETY: no Datum column.
            let values = unsafe { to_arrow(c, k, &all, None) }.unwrap();
            Column { values, validity: c.validity.clone() }
        };
        let cases: Vec<(ColumnType, Column, DatumForm, Vec<Value>)> = vec![
            (
                ColumnType::Bool,
                ints(PhysType::Bool, &[1, 0, 0, 1, 1]),
                DatumForm::Other,
                vec![Value::Bool(true), Value::Bool(false), Value::Null, Value::Bool(true)],
            ),
            (
                ColumnType::Bool,
                arrow(&ints(PhysType::Bool, &[1, 0, 0, 1, 1]), ArrowKind::Bits),
                DatumForm::Other,
                vec![Value::Bool(true), Value::Bool(false), Value::Null, Value::Bool(true)],
            ),
            (
                ColumnType::Int32,
                ints(PhysType::I32, &[5, -1, i32::MIN as i64, 0, 9]),
                DatumForm::Other,
                vec![Value::Int32(5), Value::Int32(i32::MIN), Value::Null, Value::Int32(9)],
            ),
            (
                ColumnType::Date32,
                dates.clone(),
                DatumForm::Other,
                vec![Value::Date32(0), Value::Date32(10_959), Value::Null, Value::Date32(19_957)],
            ),
            (
                ColumnType::Date32,
                arrow(&dates, ArrowKind::Date32),
                DatumForm::Other,
                vec![Value::Date32(0), Value::Date32(10_959), Value::Null, Value::Date32(19_957)],
            ),
            (
                ColumnType::TimestampMicros { utc: false },
                arrow(&stamps, ArrowKind::TimestampUs),
                DatumForm::Other,
                vec![
                    Value::Micros(convert::PG_EPOCH_MICROS - 1),
                    Value::Micros(convert::PG_EPOCH_MICROS + 7),
                    Value::Null,
                    Value::Micros(convert::PG_EPOCH_MICROS + 1_000_000),
                ],
            ),
            (
                ColumnType::Decimal128 { precision: 12, scale: 2 },
                datums(&numerics),
                DatumForm::Numeric,
                vec![Value::Decimal(12_345), Value::Decimal(5), Value::Null, Value::Decimal(100)],
            ),
            (
                ColumnType::Utf8,
                datums(&texts),
                DatumForm::Utf8Text,
                vec![Value::Str(""), Value::Str("x"), Value::Null, Value::Str("väl")],
            ),
            (
                ColumnType::Binary,
                datums(&texts),
                DatumForm::Bytes,
                vec![Value::Bytes(b""), Value::Bytes(b"x"), Value::Null, Value::Bytes("väl".as_bytes())],
            ),
        ];
        for (kind, column, form, want) in cases {
            let (mut bulk, mut one) = (ColumnBuilder::new(&kind), ColumnBuilder::new(&kind));
            // SAFETY: the Datum columns point to live varlenas of their form.
            assert_eq!(unsafe { bulk.append_rows(&column, &rows, form) }, Ok(true), "{kind:?}");
            want.iter().for_each(|v| one.push(*v).unwrap());
            assert_eq!(bulk.finish().unwrap().to_data(), one.finish().unwrap().to_data(), "{kind:?}");
        }
        // Infinities have no Arrow value, in either epoch.
        let inf = ints(PhysType::I32, &[0, i32::MAX as i64, 0, 0, 0]);
        for c in [inf.clone(), arrow(&inf, ArrowKind::Date32)] {
            let mut b = ColumnBuilder::new(&ColumnType::Date32);
            // SAFETY: no Datum column.
            let r = unsafe { b.append_rows(&c, &[0, 1], DatumForm::Other) };
            assert_eq!(r, Err(Unrepresentable::InfiniteDateTime));
        }
        // A numeric NaN is an error; a pair without a bulk path appends nothing.
        let nan = vec![varlena::make_4b(&crate::numeric::encode_special(crate::numeric::Special::NaN))];
        let mut b = ColumnBuilder::new(&ColumnType::Decimal128 { precision: 12, scale: 2 });
        // SAFETY: a live numeric varlena.
        let r = unsafe { b.append_rows(&datums(&nan), &[0], DatumForm::Numeric) };
        assert!(matches!(r, Err(Unrepresentable::NonFiniteNumeric(_))), "{r:?}");
        let mut b = ColumnBuilder::new(&ColumnType::UInt32);
        // SAFETY: no Datum column.
        assert_eq!(unsafe { b.append_rows(&dates, &rows, DatumForm::Other) }, Ok(false));
        assert_eq!(b.len(), 0);
        let mut b = ColumnBuilder::new(&ColumnType::Utf8);
        // SAFETY: live varlenas.
        assert_eq!(unsafe { b.append_rows(&datums(&texts), &rows, DatumForm::Other) }, Ok(false));
        let mut toasted = varlena::make_4b(b"xxxx");
        toasted[0] |= 0x02;
        // SAFETY: live varlenas; the compressed one is only inspected.
        assert_eq!(unsafe { b.append_rows(&datums(&[toasted]), &[0], DatumForm::Utf8Text) }, Ok(false));
        assert_eq!(b.len(), 0);
    }

    #[test]
    fn a_result_without_columns_counts_rows() {
        let mut b = BatchBuilder::new(&[]);
        assert_eq!(b.finish(5).unwrap().num_rows(), 5);
    }
}

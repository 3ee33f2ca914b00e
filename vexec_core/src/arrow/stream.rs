//! Rows into Arrow RecordBatches, batches into an Arrow IPC stream.

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, FixedSizeBinaryBuilder,
    Float32Builder, Float64Builder, Int16Builder, Int32Builder, Int64Builder, IntervalMonthDayNanoBuilder,
    StringBuilder, Time64MicrosecondBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_buffer::IntervalMonthDayNano;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{ArrowError, Schema, SchemaRef};

use super::types::{ColumnType, PgColumn};

/// One value of a row, already in its column's Arrow representation
/// (`convert` shifts epochs and scales decimals).
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int16(i16),
    Int32(i32),
    Int64(i64),
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
}

enum Column {
    Bool(BooleanBuilder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Date32(Date32Builder),
    Micros(TimestampMicrosecondBuilder),
    Decimal(Decimal128Builder),
    FixedBinary(FixedSizeBinaryBuilder),
    Time(Time64MicrosecondBuilder),
    Interval(IntervalMonthDayNanoBuilder),
}

impl Column {
    fn new(t: ColumnType) -> Column {
        match t {
            ColumnType::Bool => Column::Bool(BooleanBuilder::new()),
            ColumnType::Int16 => Column::Int16(Int16Builder::new()),
            ColumnType::Int32 => Column::Int32(Int32Builder::new()),
            ColumnType::Int64 => Column::Int64(Int64Builder::new()),
            ColumnType::Float32 => Column::Float32(Float32Builder::new()),
            ColumnType::Float64 => Column::Float64(Float64Builder::new()),
            ColumnType::Utf8 | ColumnType::NumericText | ColumnType::Json | ColumnType::EnumLabel => {
                Column::Utf8(StringBuilder::new())
            }
            ColumnType::Uuid => Column::FixedBinary(FixedSizeBinaryBuilder::new(16)),
            ColumnType::Time64Micros => Column::Time(Time64MicrosecondBuilder::new()),
            ColumnType::IntervalMonthDayNano => Column::Interval(IntervalMonthDayNanoBuilder::new()),
            ColumnType::Binary => Column::Binary(BinaryBuilder::new()),
            ColumnType::Date32 => Column::Date32(Date32Builder::new()),
            ColumnType::TimestampMicros { utc } => {
                Column::Micros(TimestampMicrosecondBuilder::new().with_timezone_opt(utc.then(|| "UTC")))
            }
            ColumnType::Decimal128 { precision, scale } => Column::Decimal(
                Decimal128Builder::new().with_precision_and_scale(precision, scale).expect("precision <= 38"),
            ),
        }
    }

    fn push(&mut self, v: Value<'_>) -> Result<(), String> {
        match (self, v) {
            (Column::Bool(b), Value::Null) => b.append_null(),
            (Column::Int16(b), Value::Null) => b.append_null(),
            (Column::Int32(b), Value::Null) => b.append_null(),
            (Column::Int64(b), Value::Null) => b.append_null(),
            (Column::Float32(b), Value::Null) => b.append_null(),
            (Column::Float64(b), Value::Null) => b.append_null(),
            (Column::Utf8(b), Value::Null) => b.append_null(),
            (Column::Binary(b), Value::Null) => b.append_null(),
            (Column::Date32(b), Value::Null) => b.append_null(),
            (Column::Micros(b), Value::Null) => b.append_null(),
            (Column::Decimal(b), Value::Null) => b.append_null(),
            (Column::FixedBinary(b), Value::Null) => b.append_null(),
            (Column::Time(b), Value::Null) => b.append_null(),
            (Column::Interval(b), Value::Null) => b.append_null(),
            (Column::FixedBinary(b), Value::Bytes(x)) => b.append_value(x).map_err(|e| e.to_string())?,
            (Column::Time(b), Value::Micros(x)) => b.append_value(x),
            (Column::Interval(b), Value::Interval(m, d, n)) => {
                b.append_value(IntervalMonthDayNano::new(m, d, n))
            }
            (Column::Bool(b), Value::Bool(x)) => b.append_value(x),
            (Column::Int16(b), Value::Int16(x)) => b.append_value(x),
            (Column::Int32(b), Value::Int32(x)) => b.append_value(x),
            (Column::Int64(b), Value::Int64(x)) => b.append_value(x),
            (Column::Float32(b), Value::Float32(x)) => b.append_value(x),
            (Column::Float64(b), Value::Float64(x)) => b.append_value(x),
            (Column::Utf8(b), Value::Str(x)) => b.append_value(x),
            (Column::Binary(b), Value::Bytes(x)) => b.append_value(x),
            (Column::Date32(b), Value::Date32(x)) => b.append_value(x),
            (Column::Micros(b), Value::Micros(x)) => b.append_value(x),
            (Column::Decimal(b), Value::Decimal(x)) => b.append_value(x),
            (_, v) => return Err(format!("a {v:?} in a column of another type")),
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Bool(b) => Arc::new(b.finish()),
            Column::Int16(b) => Arc::new(b.finish()),
            Column::Int32(b) => Arc::new(b.finish()),
            Column::Int64(b) => Arc::new(b.finish()),
            Column::Float32(b) => Arc::new(b.finish()),
            Column::Float64(b) => Arc::new(b.finish()),
            Column::Utf8(b) => Arc::new(b.finish()),
            Column::Binary(b) => Arc::new(b.finish()),
            Column::Date32(b) => Arc::new(b.finish()),
            Column::Micros(b) => Arc::new(b.finish()),
            Column::Decimal(b) => Arc::new(b.finish()),
            Column::FixedBinary(b) => Arc::new(b.finish()),
            Column::Time(b) => Arc::new(b.finish()),
            Column::Interval(b) => Arc::new(b.finish()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Column::Bool(b) => b.len(),
            Column::Int16(b) => b.len(),
            Column::Int32(b) => b.len(),
            Column::Int64(b) => b.len(),
            Column::Float32(b) => b.len(),
            Column::Float64(b) => b.len(),
            Column::Utf8(b) => b.len(),
            Column::Binary(b) => b.len(),
            Column::Date32(b) => b.len(),
            Column::Micros(b) => b.len(),
            Column::Decimal(b) => b.len(),
            Column::FixedBinary(b) => b.len(),
            Column::Time(b) => b.len(),
            Column::Interval(b) => b.len(),
        }
    }
}

/// Rows gathered column by column into RecordBatches.
pub struct BatchBuilder {
    schema: SchemaRef,
    columns: Vec<Column>,
}

impl BatchBuilder {
    /// A builder for a result with these columns (each with its mapped type).
    pub fn new(columns: &[(PgColumn, ColumnType)]) -> BatchBuilder {
        let fields: Vec<_> = columns.iter().map(|(c, t)| t.field(c)).collect();
        BatchBuilder {
            schema: Arc::new(Schema::new(fields)),
            columns: columns.iter().map(|(_, t)| Column::new(*t)).collect(),
        }
    }

    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Append `v` to column `col` (every column once per row, in any order).
    /// A value of another type than the column's is the caller's bug: an
    /// error, not a panic.
    pub fn push(&mut self, col: usize, v: Value<'_>) -> Result<(), String> {
        self.columns.get_mut(col).ok_or_else(|| format!("no column {col}"))?.push(v)
    }

    /// Rows gathered so far.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, Column::len)
    }

    /// The gathered rows as a RecordBatch; the builder starts afresh.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let arrays: Vec<ArrayRef> = self.columns.iter_mut().map(Column::finish).collect();
        RecordBatch::try_new(self.schema.clone(), arrays)
    }
}

/// An Arrow IPC stream written to memory, batch by batch.
pub struct IpcStream {
    writer: StreamWriter<Vec<u8>>,
}

impl IpcStream {
    pub fn new(schema: &Schema) -> Result<IpcStream, ArrowError> {
        Ok(IpcStream { writer: StreamWriter::try_new(Vec::new(), schema)? })
    }

    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        self.writer.write(batch)
    }

    /// The stream with its end marker.
    pub fn finish(mut self) -> Result<Vec<u8>, ArrowError> {
        self.writer.finish()?;
        self.writer.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Decimal128Type, Int32Type, TimestampMicrosecondType};
    use arrow_array::Array;
    use arrow_ipc::reader::StreamReader;

    fn col(name: &str, type_oid: u32, typmod: i32, type_name: &str) -> (PgColumn, ColumnType) {
        let c = PgColumn { name: name.into(), type_oid, typmod, type_name: type_name.into() };
        let t = ColumnType::of(type_oid, typmod).unwrap();
        (c, t)
    }

    #[test]
    fn rows_round_trip_through_an_ipc_stream() {
        let cols = [
            col("id", 23, -1, "integer"),
            col("name", 25, -1, "text"),
            col("d", 1082, -1, "date"),
            col("ts", 1184, -1, "timestamp with time zone"),
            col("price", 1700, ((12 << 16) | 2) + 4, "numeric(12,2)"),
        ];
        let mut b = BatchBuilder::new(&cols);
        let mut stream = IpcStream::new(&b.schema()).unwrap();
        for batch in 0..2 {
            for i in 0..3 {
                let id = batch * 3 + i;
                b.push(0, Value::Int32(id)).unwrap();
                b.push(1, if i == 1 { Value::Null } else { Value::Str("é") }).unwrap();
                b.push(2, Value::Date32(id)).unwrap();
                b.push(3, Value::Micros(i64::from(id) * 1_000_000)).unwrap();
                b.push(4, Value::Decimal(i128::from(id) * 125)).unwrap();
            }
            assert_eq!(b.rows(), 3);
            stream.write(&b.finish().unwrap()).unwrap();
            assert_eq!(b.rows(), 0);
        }
        let bytes = stream.finish().unwrap();

        let reader = StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
        let schema = reader.schema();
        assert_eq!(schema.field(4).metadata()["pg.type"], "numeric(12,2)");
        let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
        assert_eq!(batches.len(), 2);
        let last = &batches[1];
        assert_eq!(last.column(0).as_primitive::<Int32Type>().values().to_vec(), vec![3, 4, 5]);
        let names = last.column(1).as_string::<i32>();
        assert_eq!((names.value(0), names.is_null(1), names.value(2)), ("é", true, "é"));
        assert_eq!(last.column(2).as_primitive::<Date32Type>().value(2), 5);
        assert_eq!(last.column(3).as_primitive::<TimestampMicrosecondType>().value(0), 3_000_000);
        let price = last.column(4).as_primitive::<Decimal128Type>();
        assert_eq!((price.precision(), price.scale(), price.value(1)), (12, 2, 500));
    }

    #[test]
    fn a_value_of_another_type_is_an_error() {
        let mut b = BatchBuilder::new(&[col("id", 23, -1, "integer")]);
        assert!(b.push(0, Value::Str("x")).is_err());
        assert!(b.push(1, Value::Int32(1)).is_err());
    }
}

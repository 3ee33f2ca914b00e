//! RecordBatches out: an Arrow IPC stream in memory, or the Arrow C Data
//! Interface (the ABI other extensions read batches through); and in: an
//! Arrow IPC stream from a client, read as untrusted input ([`IpcReader`]).

use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{ArrowError, Schema, SchemaRef};

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

    /// Bytes written and not yet taken.
    pub fn len(&self) -> usize {
        self.writer.get_ref().len()
    }

    /// The bytes written since the last take (the schema message, then each
    /// batch's), for a stream sent in pieces: the pieces in order are the
    /// stream.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(self.writer.get_mut())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The stream with its end marker.
    pub fn finish(mut self) -> Result<Vec<u8>, ArrowError> {
        self.writer.finish()?;
        self.writer.into_inner()
    }
}

/// An Arrow IPC stream from a client (a bytea, a Flight handle), read as
/// untrusted input: malformed bytes are an error, never a panic or an abort.
/// arrow-rs allocates each message's declared metadata and body length
/// before reading them, so a corrupt length could ask for terabytes (and an
/// allocation failure aborts the process): the framing is checked first
/// ([`check_ipc_frames`]). arrow-rs also panics on some malformed buffers
/// (one that does not fit its message's body) rather than erring: caught.
pub struct IpcReader {
    reader: StreamReader<Cursor<Vec<u8>>>,
}

impl IpcReader {
    pub fn open(bytes: Vec<u8>) -> Result<IpcReader, String> {
        check_ipc_frames(&bytes)?;
        match catch_unwind(AssertUnwindSafe(|| StreamReader::try_new(Cursor::new(bytes), None))) {
            Ok(Ok(reader)) => Ok(IpcReader { reader }),
            Ok(Err(e)) => Err(format!("not an Arrow IPC stream: {e}")),
            Err(_) => Err("not an Arrow IPC stream: its schema does not decode".into()),
        }
    }

    pub fn schema(&self) -> SchemaRef {
        self.reader.schema()
    }
}

impl Iterator for IpcReader {
    type Item = Result<RecordBatch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        match catch_unwind(AssertUnwindSafe(|| self.reader.next())) {
            Ok(batch) => batch.map(|b| b.map_err(|e| format!("a malformed Arrow batch: {e}"))),
            Err(_) => Some(Err("a malformed Arrow batch: its buffers do not fit its body".into())),
        }
    }
}

/// Check that the messages of the Arrow IPC stream `bytes` fit in it, as
/// arrow-rs's stream reader frames them: an optional continuation marker
/// (0xFFFFFFFF), the metadata length (a little-endian i32; 0 or the end of
/// the bytes ends the stream), a flatbuffer `Message` whose `bodyLength`
/// bytes follow it.
pub fn check_ipc_frames(bytes: &[u8]) -> Result<(), String> {
    let word = |at: usize| bytes.get(at..at + 4).map(|w| i32::from_le_bytes(w.try_into().expect("4 bytes")));
    let mut pos = 0;
    while let Some(mut len) = word(pos) {
        pos += 4;
        if len == -1 {
            len = word(pos).ok_or("the stream ends inside a message's length")?;
            pos += 4;
        }
        if len == 0 {
            break;
        }
        let meta_len =
            usize::try_from(len).map_err(|_| format!("a message's metadata length is negative ({len})"))?;
        let meta =
            bytes.get(pos..pos + meta_len).ok_or("a message's metadata runs past the end of the stream")?;
        let message = arrow_ipc::root_as_message(meta)
            .map_err(|e| format!("a message's metadata does not decode: {e}"))?;
        let body = message.bodyLength();
        pos += meta_len;
        match usize::try_from(body) {
            Ok(b) if b <= bytes.len() - pos => pos += b,
            _ => return Err(format!("a message's body ({body} bytes) runs past the end of the stream")),
        }
    }
    Ok(())
}

/// A schema as an Arrow C Data Interface schema (a struct of the columns).
pub fn schema_to_c(schema: &Schema) -> Result<FFI_ArrowSchema, ArrowError> {
    FFI_ArrowSchema::try_from(schema)
}

/// A batch as an Arrow C Data Interface array (a struct array of the
/// columns, as the C stream interface passes record batches) and its
/// schema. The receiver owns both and releases them.
pub fn batch_to_c(batch: &RecordBatch) -> Result<(FFI_ArrowArray, FFI_ArrowSchema), ArrowError> {
    let array = StructArray::from(batch.clone());
    let schema = FFI_ArrowSchema::try_from(batch.schema().as_ref())?;
    Ok((FFI_ArrowArray::new(&array.to_data()), schema))
}

/// A batch back from the C Data Interface (what a consumer does).
///
/// # Safety
/// `array` and `schema` were made by [`batch_to_c`] (or any conforming
/// producer) and describe each other.
pub unsafe fn batch_from_c(
    array: FFI_ArrowArray,
    schema: &FFI_ArrowSchema,
) -> Result<RecordBatch, ArrowError> {
    // SAFETY: this function's contract.
    let data = unsafe { arrow_array::ffi::from_ffi(array, schema)? };
    let s = StructArray::from(data);
    let fields = match s.data_type() {
        arrow_schema::DataType::Struct(f) => f.clone(),
        t => return Err(ArrowError::InvalidArgumentError(format!("a batch is a struct, not {t}"))),
    };
    let schema = Schema::new(fields).with_metadata(Schema::try_from(schema)?.metadata().clone());
    RecordBatch::try_new_with_options(
        Arc::new(schema),
        s.columns().to_vec(),
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(s.len())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small stream (a schema and two batches) and its messages' offsets.
    fn small_stream() -> Vec<u8> {
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(arrow_array::Int32Array::from(vec![1, 2, 3])) as arrow_array::ArrayRef),
            ("label", Arc::new(arrow_array::StringArray::from(vec!["a", "bb", "ccc"])) as _),
        ])
        .unwrap();
        let mut w = IpcStream::new(&batch.schema()).unwrap();
        w.write(&batch).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn untrusted_streams_are_errors_never_panics_or_huge_allocations() {
        let good = small_stream();
        let r = IpcReader::open(good.clone()).unwrap();
        assert_eq!(r.map(|b| b.unwrap().num_rows()).sum::<usize>(), 6);
        // Every byte changed in turn, and every prefix: an error or a stream
        // that decodes, never a panic escaping or an allocation past the
        // stream's size (each declared length is checked against the bytes).
        let mut errors = 0;
        for i in 0..good.len() {
            for flip in [0xff, 0x80, 0x01, 0x7f] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                match IpcReader::open(bad) {
                    Ok(r) => errors += r.filter(|b| b.is_err()).count(),
                    Err(_) => errors += 1,
                }
            }
            let _ = IpcReader::open(good[..i].to_vec()).map(|r| r.count());
        }
        assert!(errors > good.len(), "{errors}");
        // A body length far past the stream: refused before any allocation.
        let mut huge = good.clone();
        let (meta_len, meta_at) = (i32::from_le_bytes(huge[4..8].try_into().unwrap()) as usize, 8);
        let second = meta_at
            + meta_len
            + arrow_ipc::root_as_message(&huge[meta_at..meta_at + meta_len]).unwrap().bodyLength() as usize;
        let second_meta = i32::from_le_bytes(huge[second + 4..second + 8].try_into().unwrap()) as usize;
        let body_len =
            arrow_ipc::root_as_message(&huge[second + 8..second + 8 + second_meta]).unwrap().bodyLength();
        let pos = huge[second + 8..second + 8 + second_meta]
            .windows(8)
            .position(|w| w == body_len.to_le_bytes())
            .expect("the body length in the flatbuffer");
        huge[second + 8 + pos..second + 8 + pos + 8].copy_from_slice(&(1i64 << 50).to_le_bytes());
        let err = IpcReader::open(huge).err().unwrap();
        assert!(err.contains("runs past the end"), "{err}");
    }
    use crate::arrow::{BatchBuilder, ColumnType, PgColumn, Value};
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Decimal128Type, Int32Type, TimestampMicrosecondType};
    use arrow_ipc::reader::StreamReader;

    fn col(name: &str, type_oid: u32, typmod: i32, type_name: &str) -> (PgColumn, ColumnType) {
        let c =
            PgColumn { name: name.into(), type_oid, typmod, type_name: type_name.into(), collation: None };
        let t = ColumnType::of_scalar(type_oid, typmod).unwrap();
        (c, t)
    }

    fn sample() -> (BatchBuilder, Vec<RecordBatch>) {
        let cols = [
            col("id", 23, -1, "integer"),
            col("name", 25, -1, "text"),
            col("d", 1082, -1, "date"),
            col("ts", 1184, -1, "timestamp with time zone"),
            col("price", 1700, ((12 << 16) | 2) + 4, "numeric(12,2)"),
        ];
        let mut b = BatchBuilder::new(&cols);
        let mut batches = vec![];
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
            batches.push(b.finish(3).unwrap());
            assert_eq!(b.rows(), 0);
        }
        (b, batches)
    }

    #[test]
    fn rows_round_trip_through_an_ipc_stream() {
        let (b, batches) = sample();
        let mut stream = IpcStream::new(&b.schema()).unwrap();
        batches.iter().for_each(|batch| stream.write(batch).unwrap());
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
    fn a_stream_taken_in_pieces_is_the_stream() {
        let (b, batches) = sample();
        let mut whole = IpcStream::new(&b.schema()).unwrap();
        let mut pieces = IpcStream::new(&b.schema()).unwrap();
        let mut joined = pieces.take();
        for batch in &batches {
            whole.write(batch).unwrap();
            pieces.write(batch).unwrap();
            joined.extend(pieces.take());
        }
        joined.extend(pieces.finish().unwrap());
        assert_eq!(joined, whole.finish().unwrap());
    }

    #[test]
    fn batches_round_trip_through_the_c_data_interface() {
        let (_, batches) = sample();
        let (array, schema) = batch_to_c(&batches[1]).unwrap();
        // SAFETY: made by batch_to_c just above.
        let back = unsafe { batch_from_c(array, &schema) }.unwrap();
        assert_eq!(back, batches[1]);
        assert_eq!(back.schema().field(4).metadata()["pg.type"], "numeric(12,2)");
    }
}

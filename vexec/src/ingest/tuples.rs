//! The sink's batches as heap tuples: where every column of the target
//! table is one `vexec_core::arrow::heap_rows` writes (int2, int4, int8,
//! float8 and date from Arrow's matching types, text from UTF-8 strings
//! with no zero byte in a UTF-8 database), VecInsert hands the writer
//! formed tuples instead of Datums; the tuples are byte for byte what
//! heap_form_tuple makes of the Datums `rows.rs` would have made.

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type, Int16Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, OffsetSizeTrait, RecordBatch};
use arrow_schema::DataType;
use pgrx::pg_sys;
use vexec_core::arrow::heap_rows::{self, Attr, RowType, Values};
use vexec_core::arrow::ingest::{self, Source};

use super::rows::{check, zero_free, TEXT_BLOCK_MAX};
use super::SinkReader;

/// The target table's attributes as heap_rows needs them, and the
/// function column each reads.
pub(crate) struct TableLayout {
    attrs: Vec<Attr>,
    types: Vec<pg_sys::Oid>,
    row_type: RowType,
    columns: Vec<usize>,
}

impl TableLayout {
    /// `desc`'s layout, attribute a reading function column `columns[a]`;
    /// None when an attribute is dropped or generated (the writer then
    /// takes Datums).
    ///
    /// # Safety
    /// `desc` is a live tuple descriptor.
    pub(crate) unsafe fn of(desc: pg_sys::TupleDesc, columns: &[usize]) -> Option<TableLayout> {
        // SAFETY: attributes of the descriptor (this function's contract).
        let atts: Vec<&pg_sys::FormData_pg_attribute> =
            unsafe { (0..(*desc).natts).map(|i| &*pg_sys::TupleDescAttr(desc, i)).collect() };
        if atts.len() != columns.len() || atts.iter().any(|a| a.attisdropped || a.attgenerated != 0) {
            return None;
        }
        let attrs = atts
            .iter()
            .map(|a| Attr {
                len: a.attlen,
                align: match a.attalign as u8 {
                    b'c' => 1,
                    b's' => 2,
                    b'i' => 4,
                    _ => 8,
                },
                packable: a.attstorage as u8 != b'p',
            })
            .collect();
        // SAFETY: as above.
        let row_type = unsafe { RowType { typeid: (*desc).tdtypeid.to_u32(), typmod: (*desc).tdtypmod } };
        Some(TableLayout {
            attrs,
            types: atts.iter().map(|a| a.atttypid).collect(),
            row_type,
            columns: columns.to_vec(),
        })
    }
}

/// A column heap_rows writes: Arrow's buffers as they are, or (dates)
/// the slice's values converted to PostgreSQL's.
enum Direct<'a> {
    Values(Values<'a>),
    Dates(Vec<u8>),
}

impl SinkReader {
    /// `batch`'s rows as heap tuples of `table` into `out` (each tuple's
    /// end in `ends`), when heap_rows writes every column; false, nothing
    /// written, otherwise. A date out of PostgreSQL's range raises the
    /// error `fill` raises.
    pub(crate) fn heap_rows(
        &self,
        batch: &RecordBatch,
        table: &TableLayout,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> bool {
        let mut direct = Vec::with_capacity(table.attrs.len());
        for (a, &f) in table.columns.iter().enumerate() {
            let Some(d) = self.direct(&table.attrs[a], table.types[a], f, batch.column(f)) else {
                return false;
            };
            direct.push(d);
        }
        let columns: Vec<heap_rows::Column> = direct
            .iter()
            .zip(&table.columns)
            .map(|(d, &f)| heap_rows::Column {
                values: match d {
                    Direct::Values(v) => *v,
                    Direct::Dates(bytes) => Values::Fixed(bytes),
                },
                nulls: batch.column(f).nulls(),
            })
            .collect();
        out.clear();
        ends.clear();
        heap_rows::write(&table.attrs, table.row_type, &columns, batch.num_rows(), out, ends);
        true
    }

    /// Function column `f` (Arrow array `a`) as the values of attribute
    /// `attr` of type `typid`, if heap_rows writes it.
    fn direct<'a>(&self, attr: &Attr, typid: pg_sys::Oid, f: usize, a: &'a ArrayRef) -> Option<Direct<'a>> {
        let fixed = |oid, len: i16, bytes: &'a [u8]| {
            (typid == oid && attr.len == len).then_some(Direct::Values(Values::Fixed(bytes)))
        };
        match (self.column(f).source(), a.data_type()) {
            (Source::Int2, DataType::Int16) => {
                fixed(pg_sys::INT2OID, 2, a.as_primitive::<Int16Type>().values().inner().as_slice())
            }
            (Source::Int4, DataType::Int32) => {
                fixed(pg_sys::INT4OID, 4, a.as_primitive::<Int32Type>().values().inner().as_slice())
            }
            (Source::Int8, DataType::Int64) => {
                fixed(pg_sys::INT8OID, 8, a.as_primitive::<Int64Type>().values().inner().as_slice())
            }
            (Source::Float8, DataType::Float64) => {
                fixed(pg_sys::FLOAT8OID, 8, a.as_primitive::<Float64Type>().values().inner().as_slice())
            }
            (Source::Date, DataType::Date32) if typid == pg_sys::DATEOID && attr.len == 4 => {
                let days = a.as_primitive::<Date32Type>().values();
                let mut bytes = Vec::with_capacity(days.len() * 4);
                for (r, &d) in days.iter().enumerate() {
                    let v = if a.is_null(r) { 0 } else { check(ingest::date_of_days(d as i64)) };
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
                Some(Direct::Dates(bytes))
            }
            (_, DataType::Utf8) if self.reads_text(f) && typid == pg_sys::TEXTOID => {
                text(a.as_string::<i32>())
                    .map(|(offsets, data)| Direct::Values(Values::Var32 { offsets, data }))
            }
            (_, DataType::LargeUtf8) if self.reads_text(f) && typid == pg_sys::TEXTOID => {
                text(a.as_string::<i64>())
                    .map(|(offsets, data)| Direct::Values(Values::Var64 { offsets, data }))
            }
            _ => None,
        }
    }
}

/// A string column's offsets and bytes, when it has no zero byte and its
/// values fit in what `rows.rs` lays out in one block.
fn text<O: OffsetSizeTrait>(a: &arrow_array::GenericStringArray<O>) -> Option<(&[O], &[u8])> {
    let offsets = a.value_offsets();
    let span = offsets[offsets.len() - 1].as_usize() - offsets[0].as_usize();
    (span <= TEXT_BLOCK_MAX && zero_free(a)).then(|| (offsets, a.value_data()))
}

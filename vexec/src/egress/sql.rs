//! A query's result as an Arrow IPC stream (the schema, one RecordBatch per
//! `batch_rows` rows, the end-of-stream marker), for psql and any driver:
//! `vexec.arrow_ipc(query)` as one bytea (up to 1 GB), and
//! `vexec.arrow_ipc_stream(query)` as rows of bytea, the stream's pieces in
//! order, fetched from a cursor a batch at a time (no size limit).

use std::cell::RefCell;
use std::ffi::CString;
use std::rc::Rc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use pgrx::prelude::*;
use vexec_core::arrow::IpcStream;

use pgrx::pg_sys;

use super::reader::{error, internal};
use super::receiver::{self, ArrowReceiver};
use super::{Sink, DEFAULT_BATCH_ROWS};

/// A bytea holds at most 1 GB.
const MAX_STREAM_BYTES: usize = (1 << 30) - 1 - 4;

/// The Arrow IPC stream of `query`'s result.
#[pg_extern(volatile, parallel_unsafe)]
fn arrow_ipc(query: &str, batch_rows: default!(i32, 8192)) -> Vec<u8> {
    let (query, batch_rows) = arguments(query, batch_rows);
    let mut sink = IpcSink { stream: None };
    super::run(&query, None, false, batch_rows, &mut sink);
    let stream = sink.stream.unwrap_or_else(|| internal("no schema"));
    stream.finish().unwrap_or_else(|e| internal(e))
}

/// The pieces of the Arrow IPC stream of `query`'s result, in order: the
/// schema, one per batch of `batch_rows` rows, the end-of-stream marker.
/// In a select list, each piece is made when the row is asked for.
#[pg_extern(volatile, parallel_unsafe)]
fn arrow_ipc_stream(query: &str, batch_rows: default!(i32, 8192)) -> SetOfIterator<'static, Vec<u8>> {
    let (query, batch_rows) = arguments(query, batch_rows);
    let portal = super::open_cursor(&query);
    let batch = Rc::new(RefCell::new(None));
    let mut receiver = ArrowReceiver::new(batch_rows, Box::new(LastBatch(batch.clone())));
    // SAFETY: the portal was just opened; its descriptor is live.
    let (schema, _, _) = unsafe { receiver::describe((*portal).tupDesc) };
    let mut stream = Some(IpcStream::new(&schema).unwrap_or_else(|e| internal(e)));
    let schema_piece = stream.as_mut().map(IpcStream::take);
    let pieces = std::iter::from_fn(move || {
        let s = stream.as_mut()?;
        // SAFETY: the portal stays open until the last fetch (it belongs to the transaction, which
        // outlives the function's calls).
        unsafe { super::fetch(portal, batch_rows, &mut receiver) };
        match batch.borrow_mut().take() {
            Some(b) => {
                s.write(&b).unwrap_or_else(|e| internal(e));
                Some(s.take())
            }
            None => {
                // SAFETY: the portal is open and no longer used.
                unsafe { pg_sys::SPI_cursor_close(portal) };
                Some(stream.take()?.finish().unwrap_or_else(|e| internal(e)))
            }
        }
    });
    SetOfIterator::new(schema_piece.into_iter().chain(pieces))
}

/// The checked arguments of both functions.
fn arguments(query: &str, batch_rows: i32) -> (CString, usize) {
    let Ok(query) = CString::new(query) else {
        error(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, "the query contains a NUL byte".into())
    };
    if batch_rows < 1 {
        error(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("batch_rows must be at least 1 (got {batch_rows}; the default is {DEFAULT_BATCH_ROWS})"),
        )
    }
    (query, batch_rows as usize)
}

/// A sink that keeps the last batch (a cursor fetch makes one).
struct LastBatch(Rc<RefCell<Option<RecordBatch>>>);

impl Sink for LastBatch {
    fn schema(&mut self, _schema: &SchemaRef) {}
    fn batch(&mut self, batch: RecordBatch) {
        *self.0.borrow_mut() = Some(batch);
    }
}

struct IpcSink {
    stream: Option<IpcStream>,
}

impl Sink for IpcSink {
    fn schema(&mut self, schema: &SchemaRef) {
        self.stream = Some(IpcStream::new(schema).unwrap_or_else(|e| internal(e)));
    }

    fn batch(&mut self, batch: RecordBatch) {
        let stream = self.stream.as_mut().unwrap_or_else(|| internal("a batch before the schema"));
        stream.write(&batch).unwrap_or_else(|e| internal(e));
        if stream.len() > MAX_STREAM_BYTES {
            error(
                PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                "the Arrow IPC stream of this result passes 1 GB, the most a bytea holds \
                 (fetch it in parts, or through the Arrow egress API)"
                    .into(),
            )
        }
    }
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
        assert_eq!(b.schema().field(3).metadata()["pg.collation"], "default");
        assert!(!b.schema().field(0).metadata().contains_key("pg.collation"));
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

    #[pg_test]
    fn arrow_ipc_maps_arrays_composites_and_other_types() {
        use arrow_array::types::{Decimal128Type, Int32Type, Time64MicrosecondType, UInt32Type};
        use arrow_schema::DataType;
        Spi::run("CREATE TYPE pair AS (n int, s text)").unwrap();
        let batches = read(
            "SELECT ARRAY[1, NULL, 3] AS a, ARRAY[]::int[] AS e, NULL::int[] AS z,
                    ROW(1, 'x')::pair AS p, ARRAY[ROW(2, 'y')::pair, NULL] AS ps,
                    timetz '04:05:06+02' AS tz, point(1, 2) AS pt, 42::oid AS o,
                    ARRAY[1.5]::numeric(4,2)[] AS na, '1 2'::int2vector AS v",
        );
        let b = &batches[0];
        let a = b.column(0).as_list::<i32>().value(0);
        let a = a.as_primitive::<Int32Type>();
        assert_eq!((a.len(), a.value(0), a.is_null(1), a.value(2)), (3, 1, true, 3));
        assert_eq!(b.column(1).as_list::<i32>().value(0).len(), 0);
        assert!(b.column(2).is_null(0));
        let p = b.column(3).as_struct();
        assert_eq!(p.column(0).as_primitive::<Int32Type>().value(0), 1);
        assert_eq!(p.column(1).as_string::<i32>().value(0), "x");
        assert_eq!(p.column_names(), ["n", "s"]);
        let DataType::Struct(attrs) = b.schema().field(3).data_type().clone() else { panic!("a struct") };
        assert_eq!(attrs[1].metadata()["pg.type"], "text");
        let DataType::List(item) = b.schema().field(8).data_type().clone() else { panic!("a list") };
        assert_eq!(item.metadata()["pg.type"], "numeric(4,2)");
        let ps = b.column(4).as_list::<i32>().value(0);
        assert!(ps.as_struct().is_valid(0) && ps.as_struct().is_null(1));
        let tz = b.column(5).as_struct();
        assert_eq!(tz.column(0).as_primitive::<Time64MicrosecondType>().value(0), 14_706_000_000);
        assert_eq!(tz.column(1).as_primitive::<Int32Type>().value(0), 7200);
        assert_eq!(b.column(6).as_string::<i32>().value(0), "(1,2)");
        assert_eq!(b.schema().field(6).metadata()["ARROW:extension:name"], "vexec.pg_text");
        assert_eq!(b.schema().field(6).metadata()["pg.type"], "point");
        assert_eq!(b.column(7).as_primitive::<UInt32Type>().value(0), 42);
        let na = b.column(8).as_list::<i32>().value(0);
        assert_eq!(na.as_primitive::<Decimal128Type>().value(0), 150);
        let v = b.column(9).as_list::<i32>().value(0);
        assert_eq!(v.as_primitive::<arrow_array::types::Int16Type>().values().to_vec(), vec![1, 2]);
    }

    #[pg_test(
        error = "column \"m\": a 2-dimensional array (only one-dimensional arrays) has no Arrow List value"
    )]
    fn arrow_ipc_refuses_multidimensional_arrays() {
        read("SELECT ARRAY[[1, 2], [3, 4]] AS m");
    }

    #[pg_test]
    fn arrow_ipc_stream_pieces_make_the_stream() {
        let q = "SELECT g, repeat('x', g % 7) AS s FROM generate_series(1, 20000) g";
        let whole = Spi::get_one_with_args::<Vec<u8>>("SELECT vexec.arrow_ipc($1, 5000)", &[q.into()])
            .unwrap()
            .unwrap();
        let joined = Spi::get_one_with_args::<Vec<u8>>(
            "SELECT string_agg(p, ''::bytea ORDER BY n) FROM vexec.arrow_ipc_stream($1, 5000) WITH ORDINALITY AS t(p, n)",
            &[q.into()],
        )
        .unwrap()
        .unwrap();
        assert_eq!(joined, whole);
        let pieces = Spi::get_one_with_args::<i64>(
            "SELECT count(*) FROM vexec.arrow_ipc_stream($1, 5000)",
            &[q.into()],
        )
        .unwrap()
        .unwrap();
        assert_eq!(pieces, 1 + 4 + 1, "schema, four batches, end of stream");
    }

    #[pg_test]
    fn arrow_ipc_batches_as_asked() {
        let bytes =
            Spi::get_one::<Vec<u8>>("SELECT vexec.arrow_ipc('SELECT g FROM generate_series(1, 10) g', 4)")
                .unwrap()
                .unwrap();
        let sizes: Vec<usize> = StreamReader::try_new(std::io::Cursor::new(bytes), None)
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .collect();
        assert_eq!(sizes, vec![4, 4, 2]);
    }
}

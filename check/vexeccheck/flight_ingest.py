"""Part of leg `flight`: bulk ingest (Flight SQL's CommandStatementIngest)
through ADBC's `adbc_ingest` and through raw gRPC calls. Every mode
(create, append, replace, create_append), the rows read back through
pgwire equal to what was sent; and what must leave nothing behind: a type
that does not fit, a NULL into NOT NULL, a missing privilege or a row level
security check, a rolled-back transaction, a malformed or truncated Arrow
upload, a message over `vexec_flight.max_message_size`, and a client that
goes away in the middle of its upload."""

import datetime
import decimal
import time

import psycopg
import pyarrow as pa
import pyarrow.flight as flight

from vexecbench.cluster import Cluster

from vexecbench.flightsql import command, field as _field, number, statement_query

# Qualified: the cluster's superuser may be named vexec, like the extension's schema.
SETUP = [
    "CREATE EXTENSION IF NOT EXISTS vexec",
    "GRANT CREATE ON SCHEMA public TO flight_alice",
    "CREATE TABLE public.flight_strict (id int NOT NULL, note text)",
    "GRANT SELECT, INSERT ON public.flight_strict TO flight_alice",
    "CREATE TABLE public.flight_readonly (id int)",
    "GRANT SELECT ON public.flight_readonly TO flight_alice",
    "CREATE TABLE public.flight_guarded (owner text, v int)",
    "ALTER TABLE public.flight_guarded ENABLE ROW LEVEL SECURITY",
    "CREATE POLICY own ON public.flight_guarded USING (true) WITH CHECK (owner = current_user)",
    "GRANT SELECT, INSERT ON public.flight_guarded TO flight_alice",
]

KW = {"username": "flight_alice", "password": "alice pw", "adbc.flight.sql.rpc.call_header.database": "flight_db"}


def sample(n: int, start: int = 0) -> pa.Table:
    """Rows of the types analysts load, with NULLs."""
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([None if i % 97 == 0 else f"name {i} é" for i in ids], pa.string()),
        "price": pa.array([decimal.Decimal(i) / 100 for i in ids], pa.decimal128(15, 2)),
        "ratio": pa.array([i / 7 for i in ids], pa.float64()),
        "day": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 500) for i in ids], pa.date32()),
        "at": pa.array([datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=i) for i in ids],
                       pa.timestamp("us")),
        "flag": pa.array([i % 3 == 0 for i in ids], pa.bool_()),
    })


def pg_rows(c: Cluster, sql: str) -> list:
    with psycopg.connect(c.dsn("flight_db")) as conn:
        return conn.execute(sql).fetchall()


def rows_of(t: pa.Table) -> list:
    return [tuple(r.values()) for r in t.to_pylist()]


def count(c: Cluster, table: str) -> int | None:
    with psycopg.connect(c.dsn("flight_db")) as conn:
        if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0] is None:
            return None
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def ingest_command(table: str, if_not_exist: int = 1, if_exists: int = 2) -> bytes:
    """A CommandStatementIngest (create if missing, append if there), in a protobuf Any."""
    options = number(1, if_not_exist) + number(2, if_exists)
    return command("CommandStatementIngest", _field(1, options) + _field(2, table.encode()))


def ipc_pieces(message: pa.Buffer) -> tuple[bytes, bytes]:
    """An encapsulated IPC message (continuation, length, flatbuffer, body)
    as Flight's data_header and data_body."""
    raw = message.to_pybytes()
    length = int.from_bytes(raw[4:8], "little")
    return raw[8:8 + length], raw[8 + length:]


def raw_put(port: int, bearer: str, cmd: bytes, pieces, break_off: bool = False):
    """DoPut of raw FlightData messages (header, body), the first with the
    command's descriptor; the gRPC error's code, details and SQLSTATE, or
    None. `break_off`: the client fails after its pieces (the call is
    cancelled mid-upload)."""
    import grpc

    def messages():
        for i, (header, body) in enumerate(pieces):
            # FlightDescriptor { type: CMD (2), cmd }
            descriptor = _field(1, b"\x08\x02" + _field(2, cmd)) if i == 0 else b""
            yield descriptor + _field(2, header) + _field(1000, body)
        if break_off:
            raise RuntimeError("the client breaks off")

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.stream_stream("/arrow.flight.protocol.FlightService/DoPut",
                                     request_serializer=lambda b: b, response_deserializer=lambda b: b)
        try:
            list(call(messages(), metadata=[("authorization", bearer)], timeout=60))
            return None
        except grpc.RpcError as e:
            trailers = dict(e.trailing_metadata() or ())
            return e.code().name, e.details(), trailers.get("x-postgresql-sqlstate")
        except RuntimeError:
            return "CLIENT", "broke off", None


def ingest(c: Cluster, port: int, login, check) -> None:
    import adbc_driver_flightsql.dbapi as flightsql
    with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
        for sql in SETUP:
            conn.execute(sql)
    url = f"grpc://127.0.0.1:{port}"

    def error_of(f) -> str:
        try:
            f()
            return ""
        except Exception as e:
            return f"{type(e).__name__}: {e}"

    first, second = sample(20000), sample(5000, start=20000)
    cols = "id, name, price, ratio, day, at, flag"
    with flightsql.connect(url, db_kwargs=KW, autocommit=True) as conn:
        cur = conn.cursor()
        n = cur.adbc_ingest("flight_loaded", first, mode="create")
        got = pg_rows(c, f"SELECT {cols} FROM flight_loaded ORDER BY id")
        check("ingest create: the rows read back through pgwire", n == 20000 and got == rows_of(first),
              f"{n} rows; first {got[:1]} vs {rows_of(first)[:1]}")
        types = pg_rows(c, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                           "WHERE attrelid = 'flight_loaded'::regclass AND attnum > 0 ORDER BY attnum")
        check("ingest create: the columns' types", [t for (t,) in types] == [
            "bigint", "text", "numeric(15,2)", "double precision", "date", "timestamp without time zone",
            "boolean"], str(types))
        e = error_of(lambda: cur.adbc_ingest("flight_loaded", first, mode="create"))
        check("ingest create of an existing table", "already exists" in e and "ALREADY_EXISTS" in e, e)
        n = cur.adbc_ingest("flight_loaded", second, mode="append")
        check("ingest append", n == 5000 and count(c, "flight_loaded") == 25000, str(count(c, "flight_loaded")))
        n = cur.adbc_ingest("flight_loaded", second, mode="replace")
        got = pg_rows(c, f"SELECT {cols} FROM flight_loaded ORDER BY id")
        check("ingest replace", n == 5000 and got == rows_of(second), f"{n} rows, {len(got)} read back")
        n = cur.adbc_ingest("flight_loaded_2", second, mode="create_append")
        n += cur.adbc_ingest("flight_loaded_2", second, mode="create_append")
        check("ingest create_append, twice", n == 10000 and count(c, "flight_loaded_2") == 10000,
              str(count(c, "flight_loaded_2")))
        e = error_of(lambda: cur.adbc_ingest("flight_missing", second, mode="append"))
        check("ingest append to a missing table", 'relation "flight_missing" does not exist' in e, e)
        with conn.cursor() as tmp:  # (the driver keeps the temporary option on its statement)
            tmp.execute("CREATE TEMP TABLE flight_tmp (id bigint, name text)")
            tmp.fetch_arrow_table()
            n = tmp.adbc_ingest("flight_tmp", second.select(["id", "name"]), mode="append", temporary=True)
            tmp.execute("SELECT count(*) AS n FROM flight_tmp")
            check("ingest into the session's temporary table", n == 5000
                  and tmp.fetch_arrow_table().column(0).to_pylist() == [5000])

        # Integers and strings of every Arrow string layout, which the sink
        # reads column by column, written by VecInsert (force): as sent.
        ids = range(3000)
        words = [None if i % 11 == 0 else ("" if i % 5 == 0 else f"é{i} " * (1 + i % 4)) for i in ids]
        kinds = pa.table({
            "id": pa.array(ids, pa.int32()),
            "small": pa.array([i % 300 - 150 for i in ids], pa.int16()),
            "plain": pa.array(words, pa.string()),
            "large": pa.array(words, pa.large_string()),
            "view": pa.array(words, pa.string_view()),
        })
        with conn.cursor() as forced:
            forced.execute("SET vexec.mode = force")
            forced.fetch_arrow_table()
            n = forced.adbc_ingest("flight_kinds", kinds, mode="create")
            forced.execute("RESET vexec.mode")
            forced.fetch_arrow_table()
        got = pg_rows(c, "SELECT id, small, plain, large, view FROM flight_kinds ORDER BY id")
        check("ingest of int16, int32, string, large string and string view columns (force)",
              n == 3000 and got == rows_of(kinds), f"{n} rows; {got[:2]} vs {rows_of(kinds)[:2]}")

        # In force the lineitem-like columns go in as tuples VecInsert forms
        # itself (ingest/tuples.rs): a date past PostgreSQL's range fails there.
        far = pa.table({"id": pa.array(range(2000), pa.int32()),
                        "d": pa.array([0] * 1999 + [2**31 - 1], pa.date32())})
        with conn.cursor() as forced:
            forced.execute("SET vexec.mode = force")
            forced.fetch_arrow_table()
            e = error_of(lambda: forced.adbc_ingest("flight_far_date", far, mode="create"))
            forced.execute("RESET vexec.mode")
            forced.fetch_arrow_table()
        check("ingest of a date past PostgreSQL's range (22008, force), nothing kept",
              "date out of range" in e and count(c, "flight_far_date") is None, e)

        # What must leave nothing behind.
        bad_type = pa.table({"id": pa.array(["x"] * 10), "note": pa.array(["n"] * 10)})
        e = error_of(lambda: cur.adbc_ingest("flight_strict", bad_type, mode="append"))
        check("ingest of a column whose type does not fit (42804)",
              "is of type integer but expression is of type text" in e and count(c, "flight_strict") == 0, e)
        ids = pa.array(list(range(9999)) + [None], pa.int32())
        nulls = pa.table({"id": ids, "note": pa.array(["n"] * 10000)})
        e = error_of(lambda: cur.adbc_ingest("flight_strict", nulls, mode="append"))
        check("ingest of a NULL into NOT NULL (23502), nothing kept",
              'null value in column "id"' in e and count(c, "flight_strict") == 0, e)
        big = pa.table({"id": pa.array([2**40], pa.int64()), "note": pa.array(["n"])})
        e = error_of(lambda: cur.adbc_ingest("flight_strict", big, mode="append"))
        check("ingest of an out-of-range value (22003)", "out of range" in e and count(c, "flight_strict") == 0, e)
        e = error_of(lambda: cur.adbc_ingest("flight_readonly", pa.table({"id": pa.array([1], pa.int32())}),
                                             mode="append"))
        check("ingest without INSERT privilege", "permission denied for table flight_readonly" in e, e)
        e = error_of(lambda: cur.adbc_ingest(
            "flight_guarded", pa.table({"owner": ["flight_alice", "someone"], "v": pa.array([1, 2], pa.int32())}),
            mode="append"))
        check("ingest under a row level security check",
              "violates row-level security policy" in e and count(c, "flight_guarded") == 0, e)
        cur.adbc_ingest("flight_guarded", pa.table({"owner": ["flight_alice"], "v": pa.array([1], pa.int32())}),
                        mode="append")
        check("ingest the policy allows", count(c, "flight_guarded") == 1)
    with flightsql.connect(url, db_kwargs=KW) as conn:  # autocommit off: a Flight SQL transaction
        cur = conn.cursor()
        cur.adbc_ingest("flight_in_tx", second, mode="create")
        check("ingest in a transaction: not seen before commit", count(c, "flight_in_tx") is None)
        conn.rollback()
        check("ingest in a transaction: rolled back, table and rows", count(c, "flight_in_tx") is None)
        cur.adbc_ingest("flight_in_tx", second, mode="create")
        conn.commit()
        check("ingest in a transaction: committed", count(c, "flight_in_tx") == 5000)

    # Raw uploads: malformed, truncated, too big, broken off.
    token, err = login("flight_alice", "alice pw")  # "Bearer ..."
    schema_header, _ = ipc_pieces(second.schema.serialize())
    batch = second.to_batches()[0]
    header, body = ipc_pieces(batch.serialize())
    cmd = ingest_command("flight_raw")
    r = raw_put(port, token, cmd, [(schema_header, b""), (header, body)])
    check("a raw upload (schema, batch)", r is None and count(c, "flight_raw") == batch.num_rows, str(r))
    before = count(c, "flight_raw")
    r = raw_put(port, token, cmd, [(b"\x10\x00\x00\x00garbage", b"")])
    check("an upload that does not start with a schema (22P03)",
          r is not None and r[2] == "22P03" and r[0] == "INVALID_ARGUMENT", str(r))
    r = raw_put(port, token, cmd, [(schema_header, b""), (header, body), (header, body[: len(body) // 3])])
    check("a truncated Arrow batch (22P03), nothing kept",
          r is not None and r[2] == "22P03" and count(c, "flight_raw") == before, str(r))
    r = raw_put(port, token, cmd, [(schema_header, b""), (b"\xff" * 64, body)])
    check("a corrupt Arrow message header (22P03)", r is not None and r[2] == "22P03", str(r))
    r = raw_put(port, token, cmd, [(schema_header, b""), (header, body), (header, body)], break_off=True)
    time.sleep(1)
    check("a client that breaks off its upload: nothing kept",
          r is not None and count(c, "flight_raw") == before, str(r))
    locks = pg_rows(c, "SELECT count(*) FROM pg_locks l JOIN pg_class t ON t.oid = l.relation "
                       "WHERE t.relname = 'flight_raw' AND l.pid <> pg_backend_pid()")
    check("a client that breaks off its upload: no lock held", locks == [(0,)], str(locks))
    huge = pa.table({"id": pa.array([1, 2], pa.int64()), "name": pa.array(["x" * (50 << 20)] * 2)})
    h_header, h_body = ipc_pieces(huge.to_batches()[0].serialize())
    r = raw_put(port, token, cmd, [(schema_header, b""), (h_header, h_body)])
    check("a 100 MB message: refused (RESOURCE_EXHAUSTED), nothing kept",
          r is not None and r[0] == "RESOURCE_EXHAUSTED" and count(c, "flight_raw") == before, str(r))
    client = flight.FlightClient(f"grpc://127.0.0.1:{port}")
    options = flight.FlightCallOptions(headers=[(b"authorization", token.encode())])
    got = client.do_get(
        client.get_flight_info(flight.FlightDescriptor.for_command(statement_query("SELECT count(*) AS n FROM flight_raw")),
                               options).endpoints[0].ticket, options).read_all()
    check("the session serves after the failed uploads", got.column(0).to_pylist() == [before], str(got))
    client.close()


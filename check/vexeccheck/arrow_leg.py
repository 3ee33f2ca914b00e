"""Leg `arrow-types`: the Arrow egress against psycopg. A corpus of every
mapped type (NULLs, extremes, -0, NaN, infinities where Arrow has them,
empty, non-ASCII and TOASTed strings, arrays, composites) is read twice from
the same table: by pyarrow from `vexec.arrow_ipc(...)`'s IPC stream, and by
psycopg over pgwire. Every value must agree, and each Arrow column must have
the documented type. Where psycopg's Python value loses information
(intervals' months, timestamps beyond Python's years), PostgreSQL computes
the parts the Arrow value is compared with."""

import decimal
import math

import psycopg
import psycopg.types.string
import pyarrow as pa
from psycopg.types.composite import CompositeInfo, register_composite

from vexecbench.cluster import Cluster

from .legs import LegResult

# (column type, Arrow type check, literals). Each literal is a SQL expression.
CORPUS = [
    ("boolean", pa.types.is_boolean, ["true", "false"]),
    ("smallint", pa.types.is_int16, ["-32768", "32767", "0"]),
    ("integer", pa.types.is_int32, ["-2147483648", "2147483647", "7"]),
    ("bigint", pa.types.is_int64, ["-9223372036854775808", "9223372036854775807"]),
    ("real", pa.types.is_float32, ["'NaN'", "'-0'", "'Infinity'", "'-Infinity'", "1.17549435e-38", "3.4028235e38"]),
    ("double precision", pa.types.is_float64,
     ["'NaN'", "'-0'", "'Infinity'", "'-Infinity'", "5e-324", "1.7976931348623157e308", "0.1"]),
    ("text", pa.types.is_string,
     ["''", "'é ü 中文 🙂'", "repeat('x', 5000)", "(SELECT string_agg(md5(g::text), '') FROM generate_series(1, 3000) g)"]),
    ("varchar(10)", pa.types.is_string, ["'abc'", "''"]),
    ("char(5)", pa.types.is_string, ["'ab'", "'abcde'"]),
    ("name", pa.types.is_string, ["'pg_class'"]),
    ("bytea", pa.types.is_binary, ["'\\x00ff10'::bytea", "''::bytea", "decode(repeat('ab', 4000), 'hex')"]),
    ("date", pa.types.is_date32, ["'2000-01-01'", "'1970-01-01'", "'0001-01-01'", "'9999-12-31'", "'4713-01-01 BC'",
                                   "'5874897-12-31'"]),
    ("timestamp", pa.types.is_timestamp, ["'2000-01-01 00:00:00'", "'1969-12-31 23:59:59.999999'",
                                          "'0001-01-01 00:00'", "'294246-12-31 23:59:59.999999'",
                                          "'4713-01-01 00:00 BC'"]),
    ("timestamptz", pa.types.is_timestamp, ["'2024-03-31 01:30:00+05:30'", "'1900-01-01 00:00:00+00'"]),
    ("numeric(15,2)", pa.types.is_decimal, ["0", "'-0.01'", "9999999999999.99", "-9999999999999.99"]),
    ("numeric(38,10)", pa.types.is_decimal, ["'9999999999999999999999999999.9999999999'", "'-1e-10'"]),
    ("numeric(5,-2)", pa.types.is_decimal, ["1200", "-9999900"]),
    ("numeric", pa.types.is_string, ["'NaN'", "'Infinity'", "'-Infinity'", "1e100", "'0.000001'", "-5"]),
    ("uuid", lambda t: pa.types.is_fixed_size_binary(t) and t.byte_width == 16,
     ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'00000000-0000-0000-0000-000000000000'"]),
    ("time", pa.types.is_time64, ["'00:00'", "'23:59:59.999999'", "'12:34:56.789'"]),
    ("timetz", pa.types.is_struct, ["'04:05:06+02'", "'23:59:59-14:59'", "'00:00:00+15:59'"]),
    ("interval", lambda t: t == pa.month_day_nano_interval(),
     ["'1 year 2 months -3 days 04:05:06.7'", "'-178000000 years'", "'0'", "'-1 hour'"]),
    ("json", pa.types.is_string, ["'{\"a\": [1, 2.5, null], \"b\": \"é\"}'", "'[]'"]),
    ("jsonb", pa.types.is_string, ["'{\"b\": 1,   \"a\": {\"c\": true}}'"]),
    ("arrow_mood", pa.types.is_string, ["'sad'", "'happy'"]),
    ("oid", pa.types.is_uint32, ["4294967295", "0"]),
    ("integer[]", pa.types.is_list, ["'{1,NULL,3}'", "'{}'"]),
    ("text[]", pa.types.is_list, ["ARRAY['a', NULL, 'é', repeat('y', 3000)]"]),
    ("numeric(6,3)[]", pa.types.is_list, ["'{1.5,-0.001}'"]),
    ("arrow_pair", pa.types.is_struct, ["ROW(1, 'x')", "ROW(NULL, NULL)"]),
    ("arrow_pair[]", pa.types.is_list, ["ARRAY[ROW(2, 'y')::arrow_pair, NULL]"]),
    ("point", pa.types.is_string, ["'(1.5,-2)'"]),
    ("inet", pa.types.is_string, ["'192.168.0.1/24'", "'::1'"]),
    ("money", pa.types.is_string, ["12.34"]),
    ("int4range", pa.types.is_string, ["'[1,10)'", "'empty'"]),
]


def _setup(conn) -> int:
    conn.execute("CREATE TYPE arrow_mood AS ENUM ('sad', 'ok', 'happy')")
    conn.execute("CREATE TYPE arrow_pair AS (n int, s text)")
    cols = ", ".join(f"c{i} {t}" for i, (t, _, _) in enumerate(CORPUS))
    conn.execute(f"CREATE TABLE arrow_corpus (id int, {cols})")
    rows = max(len(vals) for _, _, vals in CORPUS) + 1  # the last row: every column NULL
    for r in range(rows):
        vals = [f"({vals[r]})::{t}" if r < len(vals) else "NULL" for t, _, vals in CORPUS]
        conn.execute(f"INSERT INTO arrow_corpus VALUES ({r}, {', '.join(vals)})")
    return rows


# The extension names of docs/arrow.md.
EXTENSIONS = {"uuid": "arrow.uuid", "json": "arrow.json", "jsonb": "arrow.json", "numeric": "vexec.numeric",
              "timetz": "vexec.timetz", "point": "vexec.pg_text", "inet": "vexec.pg_text", "money": "vexec.pg_text",
              "int4range": "vexec.pg_text"}

# PostgreSQL's own parts of values psycopg's Python types cannot hold.
COMPANIONS = {
    "date": "c{i} - date '1970-01-01'",  # days since the Unix epoch (NULL for infinities)
    "timestamp": "(extract(epoch FROM c{i}) * 1000000)::numeric(30,0)",
    "timestamptz": "(extract(epoch FROM c{i}) * 1000000)::numeric(30,0)",
    "interval": "ARRAY[extract(year FROM c{i}) * 12 + extract(month FROM c{i}), extract(day FROM c{i}), "
                "extract(epoch FROM make_interval(hours => extract(hour FROM c{i})::int, "
                "mins => extract(minute FROM c{i})::int, secs => extract(second FROM c{i}))) * 1000000]",
    "json": "format('%s', c{i})",
    "jsonb": "format('%s', c{i})",
    "point": "format('%s', c{i})",
    "inet": "format('%s', c{i})",
    "money": "format('%s', c{i})",
    "int4range": "format('%s', c{i})",
    "numeric": "format('%s', c{i})",
}


def _same(sql_type: str, a, p, companion) -> bool:  # noqa: C901
    """Whether Arrow's Python value `a` is PostgreSQL's value (`p` from
    psycopg, `companion` computed by PostgreSQL)."""
    if p is None:
        return a is None
    if sql_type in ("real", "double precision"):
        if math.isnan(p):
            return a is not None and math.isnan(a)
        if sql_type == "real":
            p = float(pa.scalar(p, pa.float32()).as_py())
        return a == p and math.copysign(1, a) == math.copysign(1, p)
    if sql_type == "date":
        return a == int(companion)
    if sql_type in ("timestamp", "timestamptz"):
        return a == int(companion)
    if sql_type.startswith("numeric(") and not sql_type.endswith("[]"):
        return isinstance(a, decimal.Decimal) and a == p
    if sql_type in ("numeric", "json", "jsonb", "point", "inet", "money", "int4range"):
        return a == companion
    if sql_type == "uuid":
        return a == p  # pyarrow reads the canonical extension arrow.uuid as uuid.UUID
    if sql_type == "timetz":
        return (a["time"] == p.replace(tzinfo=None)
                and a["utc_offset"] == p.utcoffset().total_seconds())
    if sql_type == "interval":
        months, days, micros = companion
        return (a.months, a.days, a.nanoseconds) == (int(months), int(days), int(micros) * 1000)
    if sql_type == "arrow_mood":
        return a == p
    if sql_type == "arrow_pair":
        return a == {"n": p.n, "s": p.s}
    if sql_type == "arrow_pair[]":
        return a == [None if x is None else {"n": x.n, "s": x.s} for x in p]
    return a == p


def leg_arrow_types(cluster: Cluster) -> LegResult:
    r = LegResult("arrow-types")
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as conn:
        # A database of its own, made afresh: the extension's current SQL objects.
        conn.execute("DROP DATABASE IF EXISTS arrow_types")
        conn.execute("CREATE DATABASE arrow_types")
    with psycopg.connect(cluster.dsn("arrow_types"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vexec")
        rows = _setup(conn)
        register_composite(CompositeInfo.fetch(conn, "arrow_pair"), conn)
        # Python's date and timedelta cannot hold every value: these come as text, and the
        # comparison uses PostgreSQL's parts of them (COMPANIONS).
        for t in ("date", "timestamp", "timestamptz", "interval"):
            conn.adapters.register_loader(t, psycopg.types.string.TextLoader)
        comp_exprs = [(i, COMPANIONS[t].format(i=i)) for i, (t, _, _) in enumerate(CORPUS) if t in COMPANIONS]
        query = ("SELECT * FROM arrow_corpus ORDER BY id")
        stream = conn.execute("SELECT vexec.arrow_ipc(%s)", (query,)).fetchone()[0]
        table = pa.ipc.open_stream(stream).read_all()
        pg_rows = conn.execute(query).fetchall()
        comp_rows = conn.execute(f"SELECT {', '.join(e for _, e in comp_exprs)} FROM arrow_corpus ORDER BY id"
                                 ).fetchall()
        comp_col = {i: k for k, (i, _) in enumerate(comp_exprs)}
    if table.num_rows != rows or len(pg_rows) != rows:
        r.fail(f"rows: Arrow {table.num_rows}, psycopg {len(pg_rows)}, expected {rows}")
        return r
    for i, (sql_type, is_type, _) in enumerate(CORPUS):
        field = table.schema.field(i + 1)
        r.queries += 1
        problems = []
        # pyarrow turns the canonical extensions (arrow.uuid, arrow.json) into types.
        recognized = isinstance(field.type, pa.BaseExtensionType)
        storage = field.type.storage_type if recognized else field.type
        if not is_type(storage):
            problems.append(f"Arrow type {field.type}")
        extension = field.type.extension_name if recognized else \
            (field.metadata or {}).get(b"ARROW:extension:name", b"").decode()
        if extension != EXTENSIONS.get(sql_type, ""):
            problems.append(f"extension {extension!r}")
        column = table.column(i + 1)
        if pa.types.is_timestamp(field.type) or pa.types.is_date32(field.type):
            # The stored integers: Python's datetime stops at year 9999.
            column = column.cast(pa.int64() if pa.types.is_timestamp(field.type) else pa.int32())
        column = column.to_pylist()
        for row in range(rows):
            companion = comp_rows[row][comp_col[i]] if i in comp_col else None
            p = pg_rows[row][i + 1]
            if sql_type in ("date", "timestamp", "timestamptz") and companion is None and p is not None:
                problems.append(f"row {row}: PostgreSQL has {p!r} and no epoch for it")
                continue
            if not _same(sql_type, column[row], p, companion):
                problems.append(f"row {row}: Arrow {column[row]!r:.80}, PostgreSQL {p!r:.80} ({companion!r:.80})")
        if field.metadata.get(b"pg.type") is None:
            problems.append("no pg.type in the field's metadata")
        if problems:
            r.fail(f"{sql_type}: " + "; ".join(problems))
        else:
            r.ok()
    r.notes.append(f"{len(CORPUS)} types x {rows} rows read by pyarrow and psycopg")
    return r

"""Part of leg `flight`: the catalog commands with keys (GetPrimaryKeys,
GetImportedKeys, GetExportedKeys, GetCrossReference) and GetXdbcTypeInfo,
through pyarrow's Flight client (ADBC's driver does not ask for them), and
a type corpus read through Flight equal to what ADBC's PostgreSQL driver
reads through pgwire."""

import decimal

import psycopg
import pyarrow.flight as flight

from vexecbench.cluster import Cluster

from vexecbench.flightsql import command as packed
from vexecbench.flightsql import field as _field
from vexecbench.flightsql import number

from .flight_leg import Session

SETUP = [
    "CREATE TABLE public.meta_parent (a int, b text, PRIMARY KEY (a, b))",
    "CREATE TABLE public.meta_child (id int PRIMARY KEY, pa int, pb text, "
    "CONSTRAINT meta_child_fk FOREIGN KEY (pa, pb) REFERENCES public.meta_parent ON DELETE CASCADE)",
    """CREATE TABLE public.meta_types (
        i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, n numeric(12, 2),
        b boolean, t text, vc varchar(20), c char(3), by bytea, d date, tm time, ts timestamp,
        tz timestamptz, u uuid)""",
    """INSERT INTO public.meta_types VALUES
        (1, 2, 3, 1.5, 2.25, 12.34, true, 'é', 'vc', 'ab', '\\x00ff', '2024-02-29', '12:34:56.789',
         '2024-01-02 03:04:05.678901', '2024-01-02 03:04:05+02', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),
        (-32768, -2147483648, -9223372036854775808, '-Infinity', 'NaN', -0.01, false, '', '', '',
         '\\x', '0001-01-01', '00:00', '1970-01-01', '2262-04-11 23:47:16Z', NULL),
        (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)""",
    "GRANT SELECT ON public.meta_types TO flight_alice",
]


def command(name: str, body: bytes) -> flight.FlightDescriptor:
    return flight.FlightDescriptor.for_command(packed(name, body))


def get(session, name: str, body: bytes = b""):
    info = session.client.get_flight_info(command(name, body), session.options)
    return session.client.do_get(info.endpoints[0].ticket, session.options).read_all()


def text(field: int, s: str) -> bytes:
    return _field(field, s.encode())


def keys_and_types(c: Cluster, check) -> None:
    with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
        for sql in SETUP:
            conn.execute(sql)
    session = Session("flight_alice", "alice pw")
    try:
        keys(session, check)
        type_corpus(c, session, check)
    finally:
        session.close()


def keys(session, check) -> None:
    pk = get(session, "CommandGetPrimaryKeys", text(3, "meta_parent")).to_pylist()
    check("GetPrimaryKeys", pk == [
        {"catalog_name": "flight_db", "db_schema_name": "public", "table_name": "meta_parent",
         "column_name": "a", "key_name": "meta_parent_pkey", "key_sequence": 1},
        {"catalog_name": "flight_db", "db_schema_name": "public", "table_name": "meta_parent",
         "column_name": "b", "key_name": "meta_parent_pkey", "key_sequence": 2}], str(pk))
    none = get(session, "CommandGetPrimaryKeys", text(2, "other") + text(3, "meta_parent"))
    check("GetPrimaryKeys in another schema", none.num_rows == 0, str(none.to_pylist()))

    def fk(pk_col, fk_col, seq):
        return {"pk_catalog_name": "flight_db", "pk_db_schema_name": "public", "pk_table_name": "meta_parent",
                "pk_column_name": pk_col, "fk_catalog_name": "flight_db", "fk_db_schema_name": "public",
                "fk_table_name": "meta_child", "fk_column_name": fk_col, "key_sequence": seq,
                "fk_key_name": "meta_child_fk", "pk_key_name": "meta_parent_pkey",
                "update_rule": 3, "delete_rule": 0}  # NO ACTION, CASCADE
    want = [fk("a", "pa", 1), fk("b", "pb", 2)]
    got = get(session, "CommandGetImportedKeys", text(3, "meta_child")).to_pylist()
    check("GetImportedKeys", got == want, str(got))
    got = get(session, "CommandGetExportedKeys", text(3, "meta_parent")).to_pylist()
    check("GetExportedKeys", got == want, str(got))
    got = get(session, "CommandGetCrossReference", text(3, "meta_parent") + text(6, "meta_child")).to_pylist()
    check("GetCrossReference", got == want, str(got))
    got = get(session, "CommandGetCrossReference", text(3, "meta_child") + text(6, "meta_parent"))
    check("GetCrossReference, the other way", got.num_rows == 0, str(got.to_pylist()))

    types = get(session, "CommandGetXdbcTypeInfo").to_pylist()
    by_name = {t["type_name"]: t for t in types}
    check("GetXdbcTypeInfo", by_name.get("integer", {}).get("data_type") == 4
          and by_name.get("bigint", {}).get("data_type") == -5
          and by_name.get("numeric", {}).get("create_params") == ["precision", "scale"]
          and by_name.get("timestamp with time zone", {}).get("sql_data_type") == 9, str(types)[:500])
    # data_type (field 1, a varint) = 93, TIMESTAMP.
    stamps = get(session, "CommandGetXdbcTypeInfo", number(1, 93)).to_pylist()
    check("GetXdbcTypeInfo of one type", sorted(t["type_name"] for t in stamps) == [
        "timestamp with time zone", "timestamp without time zone"], str(stamps))



def type_corpus(c: Cluster, session, check) -> None:
    """The type corpus: Flight against ADBC's PostgreSQL driver (binary COPY)."""
    import adbc_driver_postgresql.dbapi as pg
    sql = "SELECT * FROM public.meta_types"
    with pg.connect(f"postgresql:///flight_db?host={c.datadir}&port={c.port}&user=flight_alice") as conn:
        with conn.cursor() as cur:
            cur.execute(sql)
            want = cur.fetch_arrow_table()
    got = session.query(sql)
    check("the type corpus: the same columns", got.column_names == want.column_names,
          f"{got.column_names} vs {want.column_names}")
    for name in want.column_names:
        a, b = got.column(name).to_pylist(), want.column(name).to_pylist()
        if name == "n":  # numeric: ADBC's driver gives text, vexec a decimal of its scale
            b = [None if v is None else decimal.Decimal(v) for v in b]
        same = len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))  # NaN is NaN
        check(f"the type corpus: column {name} ({got.schema.field(name).type} vs "
              f"{want.schema.field(name).type})", same, f"{a} vs {b}")

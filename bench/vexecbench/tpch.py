"""TPC-H: data and queries from DuckDB's tpch extension (offline, PyPI).

The data comes from dbgen inside DuckDB and is loaded into PostgreSQL heap
tables with the TPC-H schema's types (numeric(15,2), date, char/varchar).
The 22 queries are DuckDB's own text, which PostgreSQL runs unchanged (the
runner checks that); ADAPTATIONS lists any query that needed editing.
"""

import glob
import importlib
import os

import duckdb

# query number -> (reason, PostgreSQL text); none needed so far.
ADAPTATIONS: dict[int, tuple[str, str]] = {}

SCHEMA = {
    "region": """CREATE TABLE region (
        r_regionkey integer NOT NULL, r_name char(25) NOT NULL, r_comment varchar(152) NOT NULL)""",
    "nation": """CREATE TABLE nation (
        n_nationkey integer NOT NULL, n_name char(25) NOT NULL, n_regionkey integer NOT NULL,
        n_comment varchar(152) NOT NULL)""",
    "part": """CREATE TABLE part (
        p_partkey integer NOT NULL, p_name varchar(55) NOT NULL, p_mfgr char(25) NOT NULL,
        p_brand char(10) NOT NULL, p_type varchar(25) NOT NULL, p_size integer NOT NULL,
        p_container char(10) NOT NULL, p_retailprice numeric(15,2) NOT NULL, p_comment varchar(23) NOT NULL)""",
    "supplier": """CREATE TABLE supplier (
        s_suppkey integer NOT NULL, s_name char(25) NOT NULL, s_address varchar(40) NOT NULL,
        s_nationkey integer NOT NULL, s_phone char(15) NOT NULL, s_acctbal numeric(15,2) NOT NULL,
        s_comment varchar(101) NOT NULL)""",
    "partsupp": """CREATE TABLE partsupp (
        ps_partkey integer NOT NULL, ps_suppkey integer NOT NULL, ps_availqty integer NOT NULL,
        ps_supplycost numeric(15,2) NOT NULL, ps_comment varchar(199) NOT NULL)""",
    "customer": """CREATE TABLE customer (
        c_custkey integer NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL,
        c_nationkey integer NOT NULL, c_phone char(15) NOT NULL, c_acctbal numeric(15,2) NOT NULL,
        c_mktsegment char(10) NOT NULL, c_comment varchar(117) NOT NULL)""",
    "orders": """CREATE TABLE orders (
        o_orderkey integer NOT NULL, o_custkey integer NOT NULL, o_orderstatus char(1) NOT NULL,
        o_totalprice numeric(15,2) NOT NULL, o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL,
        o_clerk char(15) NOT NULL, o_shippriority integer NOT NULL, o_comment varchar(79) NOT NULL)""",
    "lineitem": """CREATE TABLE lineitem (
        l_orderkey integer NOT NULL, l_partkey integer NOT NULL, l_suppkey integer NOT NULL,
        l_linenumber integer NOT NULL, l_quantity numeric(15,2) NOT NULL,
        l_extendedprice numeric(15,2) NOT NULL, l_discount numeric(15,2) NOT NULL,
        l_tax numeric(15,2) NOT NULL, l_returnflag char(1) NOT NULL, l_linestatus char(1) NOT NULL,
        l_shipdate date NOT NULL, l_commitdate date NOT NULL, l_receiptdate date NOT NULL,
        l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL, l_comment varchar(44) NOT NULL)""",
}

# TPC-H is loaded with its primary keys and indexes on the foreign keys the
# correlated subqueries probe (Q2, Q17, Q20, Q21): without them PostgreSQL runs
# Q17 and Q20 as nested scans of lineitem, for hours at SF 1.
FOREIGN_KEY_INDEXES = [
    "CREATE INDEX ON lineitem (l_partkey)",
    "CREATE INDEX ON lineitem (l_suppkey)",
    "CREATE INDEX ON partsupp (ps_suppkey)",
    "CREATE INDEX ON orders (o_custkey)",
]

PRIMARY_KEYS = {
    "region": "r_regionkey", "nation": "n_nationkey", "part": "p_partkey", "supplier": "s_suppkey",
    "partsupp": "ps_partkey, ps_suppkey", "customer": "c_custkey", "orders": "o_orderkey",
    "lineitem": "l_orderkey, l_linenumber",
}


def extension_path(name: str = "tpch") -> str:
    """The file of DuckDB's `name` extension (tpch, tpcds) from its PyPI
    package duckdb-extension-<name> (loaded offline)."""
    package = importlib.import_module(f"duckdb_extension_{name}")
    found = glob.glob(os.path.join(os.path.dirname(package.__file__), "**", f"{name}.duckdb_extension"),
                      recursive=True)
    if not found:
        raise RuntimeError(f"duckdb-extension-{name} is installed but has no {name}.duckdb_extension")
    return found[0]


def connect(path: str | None = None, read_only: bool = False, extension: str = "tpch") -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(path or ":memory:", read_only=read_only)
    con.execute(f"LOAD '{extension_path(extension)}'")
    return con


def queries() -> list[tuple[int, str]]:
    """The 22 queries as (number, PostgreSQL text)."""
    con = connect()
    out = []
    for nr, q in con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY 1").fetchall():
        out.append((nr, ADAPTATIONS.get(nr, (None, q))[1]))
    return out


def duckdb_queries() -> list[tuple[int, str]]:
    con = connect()
    return con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY 1").fetchall()


def generate(db_path: str, sf: float) -> None:
    """dbgen at scale factor sf into a DuckDB database file."""
    if os.path.exists(db_path):
        os.remove(db_path)
    con = connect(db_path)
    con.execute(f"CALL dbgen(sf={sf})")
    con.close()

"""TPC-DS: data and queries from DuckDB's tpcds extension (offline, PyPI).

dsdgen runs inside DuckDB; the PostgreSQL tables take their columns from
DuckDB's catalog of the generated tables (DuckDB keeps no char(n) lengths,
so character columns are varchar), with the primary keys TPC-DS declares.
The 99 queries are DuckDB's own text; PostgreSQL runs them unchanged except
those in ADAPTATIONS, and the few PostgreSQL cannot run at all are listed in
check/expected-differences.txt with PostgreSQL's error.
"""

import os
import re

import duckdb

from . import tpch

# query number -> (reason, PostgreSQL text); none needed so far.
ADAPTATIONS: dict[int, tuple[str, str]] = {}

# The keys of TPC-DS's schema (its specification, section 2): the surrogate
# key of each dimension, the ticket/order number and item of each fact table.
PRIMARY_KEYS = {
    "call_center": "cc_call_center_sk", "catalog_page": "cp_catalog_page_sk",
    "catalog_returns": "cr_item_sk, cr_order_number", "catalog_sales": "cs_item_sk, cs_order_number",
    "customer": "c_customer_sk", "customer_address": "ca_address_sk",
    "customer_demographics": "cd_demo_sk", "date_dim": "d_date_sk",
    "household_demographics": "hd_demo_sk", "income_band": "ib_income_band_sk",
    "inventory": "inv_date_sk, inv_item_sk, inv_warehouse_sk", "item": "i_item_sk",
    "promotion": "p_promo_sk", "reason": "r_reason_sk", "ship_mode": "sm_ship_mode_sk",
    "store": "s_store_sk", "store_returns": "sr_item_sk, sr_ticket_number",
    "store_sales": "ss_item_sk, ss_ticket_number", "time_dim": "t_time_sk", "warehouse": "w_warehouse_sk",
    "web_page": "wp_web_page_sk", "web_returns": "wr_item_sk, wr_order_number",
    "web_sales": "ws_item_sk, ws_order_number", "web_site": "web_site_sk",
}


def connect(path: str | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    return tpch.connect(path, read_only, extension="tpcds")


def queries() -> list[tuple[int, str]]:
    """The 99 queries as (number, PostgreSQL text)."""
    return [(nr, ADAPTATIONS.get(nr, (None, q))[1]) for nr, q in duckdb_queries()]


def duckdb_queries() -> list[tuple[int, str]]:
    con = connect()
    return con.execute("SELECT query_nr, query FROM tpcds_queries() ORDER BY 1").fetchall()


def generate(db_path: str, sf: float) -> None:
    """dsdgen at scale factor sf into a DuckDB database file."""
    if os.path.exists(db_path):
        os.remove(db_path)
    con = connect(db_path)
    con.execute(f"CALL dsdgen(sf={sf})")
    con.close()


def tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]


def _pg_type(duck_type: str) -> str:
    t = duck_type.upper()
    if m := re.fullmatch(r"DECIMAL\((\d+),\s*(\d+)\)", t):
        return f"numeric({m.group(1)},{m.group(2)})"
    return {"INTEGER": "integer", "BIGINT": "bigint", "SMALLINT": "smallint", "DATE": "date",
            "VARCHAR": "varchar", "DOUBLE": "float8", "TIME": "time", "TIMESTAMP": "timestamp"}[t]


def create_sql(con: duckdb.DuckDBPyConnection, table: str) -> str:
    cols = con.execute(
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position", [table]).fetchall()
    body = ",\n    ".join(f"{c} {_pg_type(t)}" + ("" if n == "YES" else " NOT NULL") for c, t, n in cols)
    keys = f",\n    PRIMARY KEY ({PRIMARY_KEYS[table]})" if table in PRIMARY_KEYS else ""
    return f"CREATE TABLE {table} (\n    {body}{keys})"

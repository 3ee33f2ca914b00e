"""The Arrow egress benchmark (`python -m vexecbench egress`, `make
bench-egress`): a whole table into a client's memory, several ways, side by
side in each session:

- `arrow-<mode>`: `SELECT vexec.arrow_ipc_stream('SELECT * FROM <table>')`
  in binary format, each piece read by pyarrow as it arrives (zero-copy
  record batches), with `vexec.mode` at each of `--modes` (in auto and force
  a VecScan at the top of the plan hands its batches to the egress);
- `flight-<mode>`: the same query through vexec_flight (Arrow Flight SQL)
  by ADBC's Flight SQL driver into an Arrow table (`--flight`);
- `adbc-copy`: the same query by ADBC's PostgreSQL driver into an Arrow
  table (it reads `COPY ... (FORMAT binary)` over pgwire; `--flight`);
- `copy`: `COPY (SELECT * FROM <table>) TO STDOUT (FORMAT binary)` read by
  psycopg into Python rows (what a pgwire client that wants all the values
  does; `--with-copy`).

Each run ends with the whole table in the client (an Arrow table, a list
of rows) and checks the row count. Results: one CSV row per run."""

import csv
import getpass
import os
import time

import psycopg
import pyarrow as pa

from . import datasets
from .cluster import Cluster
from .datasets import Dataset


def _arrow(conn, table: str, batch_rows: int) -> int:
    with conn.cursor(binary=True) as cur:
        pieces = cur.stream("SELECT vexec.arrow_ipc_stream(%s, %s)", (f"SELECT * FROM {table}", batch_rows))
        schema = None
        batches = []
        for (piece,) in pieces:
            buf = pa.py_buffer(piece)
            if schema is None:
                schema = pa.ipc.read_schema(buf)
            elif len(piece) > 8:  # the last piece is the 8-byte end-of-stream marker
                batches.append(pa.ipc.read_record_batch(buf, schema))
    return pa.Table.from_batches(batches, schema=schema).num_rows


# vexec_flight's port on the benchmark cluster.
FLIGHT_PORT = 5495


def flight_options() -> dict[str, str]:
    """Server options that turn vexec_flight on (it must be preloaded)."""
    return {"vexec_flight.port": str(FLIGHT_PORT), "vexec_flight.listen_addresses": "127.0.0.1"}


def connect(cluster: Cluster, method: str, db: str):
    """A connection for `method`, set up (vexec.mode) once per session."""
    if method.startswith("flight-"):
        import adbc_driver_flightsql.dbapi as flightsql
        conn = flightsql.connect(f"grpc://127.0.0.1:{FLIGHT_PORT}", autocommit=True, db_kwargs={
            "username": getpass.getuser(), "password": "", "adbc.flight.sql.rpc.call_header.database": db})
        with conn.cursor() as cur:
            cur.execute(f"SET vexec.mode = {method.removeprefix('flight-')}")
            cur.fetch_arrow_table()
        return conn
    if method == "adbc-copy":
        import adbc_driver_postgresql.dbapi as pgadbc
        return pgadbc.connect(f"postgresql://{getpass.getuser()}@/{db}?host={cluster.datadir}&port={cluster.port}",
                              autocommit=True)
    conn = psycopg.connect(cluster.dsn(db), autocommit=True)
    if method.startswith("arrow-"):
        conn.execute(f"SET vexec.mode = {method.removeprefix('arrow-')}")
    return conn


def _adbc(conn, table: str) -> int:
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM {table}")
        return cur.fetch_arrow_table().num_rows


def _copy(conn, table: str, types: list[int]) -> int:
    rows = []
    with conn.cursor() as cur:
        with cur.copy(f"COPY (SELECT * FROM {table}) TO STDOUT (FORMAT binary)") as copy:
            copy.set_types(types)
            rows.extend(copy.rows())
    return len(rows)


def run(cluster: Cluster, state: str, sf: float, seed: int, sessions: int, hot: int, batch_rows: int,
        out_csv: str, sha: str, modes: list[str], with_copy: bool, with_flight: bool = False) -> list[dict]:
    ds = Dataset("tpch", sf)
    datasets.ensure_loaded(cluster, state, ds, seed)
    table = "lineitem"
    with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as c:
        # The extension's SQL objects as this build defines them.
        c.execute("DROP EXTENSION IF EXISTS vexec")
        c.execute("CREATE EXTENSION vexec")
        types = [r[0] for r in c.execute(
            "SELECT atttypid::int FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (table,))]
        expected = c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for mode in modes:
            c.execute(f"SET vexec.mode = {mode}")
            top = c.execute(f"EXPLAIN (COSTS OFF) SELECT * FROM {table}").fetchone()[0]
            print(f"[bench] egress plan in mode {mode}: {top}", flush=True)
    methods = [f"arrow-{m}" for m in modes]
    if with_flight:
        methods += [f"flight-{m}" for m in modes] + ["adbc-copy"]
    methods += ["copy"] if with_copy else []
    results = []
    for session in range(sessions):
        for method in methods:
            with connect(cluster, method, ds.name) as conn:
                for i in range(hot + 1):  # the first run warms the caches
                    t0 = time.perf_counter()
                    if method.startswith("arrow-"):
                        n = _arrow(conn, table, batch_rows)
                    elif method == "copy":
                        n = _copy(conn, table, types)
                    else:
                        n = _adbc(conn, table)
                    ms = (time.perf_counter() - t0) * 1000
                    if n != expected:
                        raise SystemExit(f"[bench] egress {method}: {n} rows, expected {expected}")
                    row = {"sha": sha, "session": session, "method": method, "run": i, "cold": i == 0,
                           "table": f"{ds.name}.{table}", "rows": n, "columns": len(types), "ms": round(ms, 1)}
                    results.append(row)
                    print(f"[bench] egress session {session} {method} run {i}: {ms:,.0f} ms", flush=True)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    best = {m: min(r["ms"] for r in results if r["method"] == m and not r["cold"]) for m in methods}
    summary = ", ".join(f"{m} {ms:,.0f} ms" for m, ms in best.items())
    for base in ("adbc-copy", "copy"):
        if base in best:
            summary += "; " + ", ".join(f"{m} {best[base] / ms:.2f}x faster than {base}"
                                        for m, ms in best.items() if m not in ("copy", "adbc-copy"))
    print(f"[bench] egress {ds.name}.{table} ({expected:,} rows x {len(types)} columns), best hot run: "
          f"{summary}; {os.path.basename(out_csv)}", flush=True)
    return results

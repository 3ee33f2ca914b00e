"""The Arrow egress benchmark (`python -m vexecbench egress`, `make
bench-egress`): a whole table into a client's memory, two ways, side by
side in each session:

- `arrow-<mode>`: `SELECT vexec.arrow_ipc_stream('SELECT * FROM <table>')`
  in binary format, each piece read by pyarrow as it arrives (zero-copy
  record batches), with `vexec.mode` at each of `--modes` (in auto and force
  a VecScan at the top of the plan hands its batches to the egress);
- `copy`: `COPY (SELECT * FROM <table>) TO STDOUT (FORMAT binary)` read by
  psycopg into Python rows (what a pgwire client that wants all the values
  does).

Each run ends with the whole table in the client (an Arrow table, a list
of rows) and checks the row count. Results: one CSV row per run."""

import csv
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


def _copy(conn, table: str, types: list[int]) -> int:
    rows = []
    with conn.cursor() as cur:
        with cur.copy(f"COPY (SELECT * FROM {table}) TO STDOUT (FORMAT binary)") as copy:
            copy.set_types(types)
            rows.extend(copy.rows())
    return len(rows)


def run(cluster: Cluster, state: str, sf: float, seed: int, sessions: int, hot: int, batch_rows: int,
        out_csv: str, sha: str, modes: list[str], with_copy: bool) -> list[dict]:
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
    methods = [f"arrow-{m}" for m in modes] + (["copy"] if with_copy else [])
    results = []
    for session in range(sessions):
        for method in methods:
            with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as conn:
                if method.startswith("arrow-"):
                    conn.execute(f"SET vexec.mode = {method.removeprefix('arrow-')}")
                for i in range(hot + 1):  # the first run warms the caches
                    t0 = time.perf_counter()
                    n = _arrow(conn, table, batch_rows) if method != "copy" else _copy(conn, table, types)
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
    if "copy" in best:
        summary += "; " + ", ".join(f"{m} {best['copy'] / ms:.2f}x faster than copy"
                                    for m, ms in best.items() if m != "copy")
    print(f"[bench] egress {ds.name}.{table} ({expected:,} rows x {len(types)} columns), best hot run: "
          f"{summary}; {os.path.basename(out_csv)}", flush=True)
    return results

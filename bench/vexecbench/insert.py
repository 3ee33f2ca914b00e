"""The insert benchmark (`python -m vexecbench insert`, `make bench-insert`):
`INSERT INTO <copy> SELECT * FROM <table>` with `vexec.mode` at each of
`--modes`, side by side in each session:

- `lineitem`: TPC-H's lineitem (SF `--sf`) into an empty heap table without
  indexes;
- `lineitem-pk`: the same into a table with TPC-H's primary key
  (l_orderkey, l_linenumber);
- `hits`: ClickBench-shaped hits (`--hits-rows`, 105 columns) into an
  empty table without indexes.

Every run writes into a freshly created target (created and CHECKPOINTed
outside the timing, in its own transaction, so the insert is WAL-logged as
any insert into an existing table) and checks the row count and, for the
first run of each case, that every mode wrote the same rows (an md5 over
the sorted rows would take minutes; a sum over hashed rows is compared).
Results: one CSV row per run, with rows/s."""

import csv
import os
import time

import psycopg

from . import datasets
from .cluster import Cluster
from .datasets import Dataset

CASES = {
    "lineitem": ("tpch", "lineitem", ""),
    "lineitem-pk": ("tpch", "lineitem", "PRIMARY KEY (l_orderkey, l_linenumber)"),
    "hits": ("clickbench", "hits", ""),
}


def _fingerprint(conn, table: str) -> tuple:
    # Order-independent: the count and the sum of each row's hashed text.
    return conn.execute(f"SELECT count(*), sum(hashtext(t::text)::numeric) FROM {table} t").fetchone()


def run(cluster: Cluster, state: str, sf: float, hits_rows: int, seed: int, sessions: int, cases: list[str],
        modes: list[str], out_csv: str, sha: str) -> list[dict]:
    sets = {"tpch": Dataset("tpch", sf), "clickbench": Dataset("clickbench", hits_rows)}
    for kind in {CASES[c][0] for c in cases}:
        datasets.ensure_loaded(cluster, state, sets[kind], seed)
    results = []
    fingerprints = {}
    for session in range(sessions):
        for case in cases:
            kind, source, keys = CASES[case]
            ds = sets[kind]
            for mode in modes:
                with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as conn:
                    # The extension's SQL objects as this build defines them.
                    if session == 0 and case == cases[0] and mode == modes[0]:
                        conn.execute("DROP EXTENSION IF EXISTS vexec")
                        conn.execute("CREATE EXTENSION vexec")
                    conn.execute("SET max_parallel_workers_per_gather = 0")
                    conn.execute("DROP TABLE IF EXISTS bench_insert")
                    conn.execute(f"CREATE TABLE bench_insert (LIKE {source}{', ' + keys if keys else ''})")
                    conn.execute("CHECKPOINT")
                    conn.execute(f"SET vexec.mode = {mode}")
                    stmt = f"INSERT INTO bench_insert SELECT * FROM {source}"
                    plan = " / ".join(r[0].strip() for r in conn.execute(f"EXPLAIN (COSTS OFF) {stmt}"))
                    t0 = time.perf_counter()
                    cur = conn.execute(stmt)
                    ms = (time.perf_counter() - t0) * 1000
                    n = cur.rowcount
                    conn.execute("SET vexec.mode = off")
                    if session == 0:
                        fp = _fingerprint(conn, "bench_insert")
                        first = fingerprints.setdefault(case, fp)
                        if fp != first:
                            raise SystemExit(f"[bench] insert {case}: mode {mode} wrote other rows than {modes[0]}")
                    conn.execute("DROP TABLE bench_insert")
                    row = {"sha": sha, "session": session, "case": case, "mode": mode, "rows": n,
                           "ms": round(ms, 1), "rows_per_s": round(n / (ms / 1000)), "plan": plan}
                    results.append(row)
                    print(f"[bench] insert session {session} {case} {mode}: {ms:,.0f} ms, "
                          f"{n / (ms / 1000):,.0f} rows/s ({plan})", flush=True)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    for case in cases:
        best = {m: min(r["ms"] for r in results if r["case"] == case and r["mode"] == m) for m in modes}
        rows = next(r["rows"] for r in results if r["case"] == case)
        parts = [f"{m} {ms:,.0f} ms ({rows / (ms / 1000):,.0f} rows/s)" for m, ms in best.items()]
        ratio = ""
        if "off" in best:
            ratio = "; " + ", ".join(f"{m} {best['off'] / ms:.2f}x off" for m, ms in best.items() if m != "off")
        print(f"[bench] insert {case} ({rows:,} rows), best of {sessions}: {', '.join(parts)}{ratio}", flush=True)
    print(f"[bench] results: {os.path.basename(out_csv)}", flush=True)
    return results

"""The Flight SQL benchmark (`python -m vexecbench flight`, `make
bench-flight`): what vexec_flight's issue measures besides the egress,
side by side in each session, on TPC-H's lineitem (SF 1: 6 M rows):

- `q1`: TPC-H Q1 through Flight (ADBC's Flight SQL driver, into an Arrow
  table) against pgwire (psycopg, `fetchall`), in vexec.mode auto, the
  two alternating run by run.
- `ingest`: lineitem (read once into an Arrow table, in batches of 64 Ki
  rows) into a new table through Flight (`adbc_ingest`, vexec_flight's
  bulk ingest into VecInsert's batch sink) against ADBC's PostgreSQL
  driver (`adbc_ingest`, which writes COPY binary); rows per second.
- `slow`: a client that reads lineitem through Flight slowly (pyarrow's
  Flight client, 5 ms between batches): the session process's private
  memory (RssAnon, /proc) at the start and its peak while it streams.

Results: one CSV row per run."""

import csv
import getpass
import os
import threading
import time

import psycopg
import pyarrow as pa

from . import datasets, egress, tpch
from .cluster import Cluster
from .datasets import Dataset
from .egress import FLIGHT_PORT
from .flightsql import statement_query

INGEST_BATCH_ROWS = 65536


def _flight(cluster: Cluster, db: str):
    """ADBC's Flight SQL driver, vexec.mode auto."""
    return egress.connect(cluster, "flight-auto", db)


def _adbc_pg(cluster: Cluster, db: str):
    return egress.connect(cluster, "adbc-copy", db)


def _rss_anon_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise RuntimeError(f"no RssAnon for {pid}")


def _session_pid(cluster: Cluster, db: str) -> int:
    with psycopg.connect(cluster.dsn(db)) as c:
        (pid,) = c.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = 'vexec_flight session' "
                           "ORDER BY backend_start DESC LIMIT 1").fetchone()
    return pid


def run(cluster: Cluster, state: str, sf: float, seed: int, sessions: int, hot: int, out_csv: str, sha: str,
        cases: list[str]) -> list[dict]:
    ds = Dataset("tpch", sf)
    datasets.ensure_loaded(cluster, state, ds, seed)
    db = ds.name
    with psycopg.connect(cluster.dsn(db), autocommit=True) as c:
        c.execute("DROP EXTENSION IF EXISTS vexec")
        c.execute("CREATE EXTENSION vexec")
        rows = c.execute("SELECT count(*) FROM lineitem").fetchone()[0]
    q1 = dict(tpch.queries())[1]
    results = []

    def record(session, case, method, run_nr, ms, **extra):
        row = {"sha": sha, "session": session, "case": case, "method": method, "run": run_nr, "cold": run_nr == 0,
               "rows": extra.pop("rows", None), "ms": round(ms, 1), **extra}
        results.append(row)
        print(f"[bench] flight session {session} {case} {method} run {run_nr}: {ms:,.0f} ms"
              + "".join(f", {k} {v:,}" for k, v in extra.items()), flush=True)

    table = None
    if "ingest" in cases:
        with _adbc_pg(cluster, db) as conn, conn.cursor() as cur:
            cur.execute("SELECT * FROM lineitem")
            table = cur.fetch_arrow_table().combine_chunks()
        table = pa.Table.from_batches(table.to_batches(max_chunksize=INGEST_BATCH_ROWS))
    for session in range(sessions):
        if "q1" in cases:
            # The two paths alternate run by run (which goes first too), so
            # the VM's drift during a session falls on both alike.
            conns = {"flight": _flight(cluster, db), "pgwire": psycopg.connect(cluster.dsn(db), autocommit=True)}
            conns["pgwire"].execute("SET vexec.mode = auto")
            try:
                for i in range(hot + 1):
                    for method in ("flight", "pgwire") if i % 2 == 0 else ("pgwire", "flight"):
                        conn = conns[method]
                        t0 = time.perf_counter()
                        if method == "flight":
                            with conn.cursor() as cur:
                                cur.execute(q1)
                                n = cur.fetch_arrow_table().num_rows
                        else:
                            n = len(conn.execute(q1).fetchall())
                        record(session, "q1", method, i, (time.perf_counter() - t0) * 1000, rows=n)
            finally:
                for conn in conns.values():
                    conn.close()
        if "ingest" in cases:
            for method in ("flight", "adbc-copy"):
                for i in range(hot + 1):
                    target = f"ingest_{method.replace('-', '_')}"
                    with psycopg.connect(cluster.dsn(db), autocommit=True) as c:
                        c.execute(f"DROP TABLE IF EXISTS {target}")
                    with (_flight(cluster, db) if method == "flight" else _adbc_pg(cluster, db)) as conn:
                        with conn.cursor() as cur:
                            t0 = time.perf_counter()
                            cur.adbc_ingest(target, table, mode="create")
                            ms = (time.perf_counter() - t0) * 1000
                    with psycopg.connect(cluster.dsn(db), autocommit=True) as c:
                        n = c.execute(f"SELECT count(*) FROM {target}").fetchone()[0]
                        c.execute(f"DROP TABLE {target}")
                    if n != rows:
                        raise SystemExit(f"[bench] flight ingest {method}: {n} rows, expected {rows}")
                    record(session, "ingest", method, i, ms, rows=n, rows_per_s=round(n / ms * 1000))
        if "slow" in cases:
            import pyarrow.flight as flight
            client = flight.FlightClient(f"grpc://127.0.0.1:{FLIGHT_PORT}")
            key, value = client.authenticate_basic_token(
                getpass.getuser(), "", flight.FlightCallOptions(headers=[(b"database", db.encode())]))
            options = flight.FlightCallOptions(headers=[(key, value)])
            info = client.get_flight_info(
                flight.FlightDescriptor.for_command(statement_query("SELECT * FROM lineitem")), options)
            pid = _session_pid(cluster, db)
            start_kb = _rss_anon_kb(pid)
            peak = [start_kb]
            done = threading.Event()

            def sample():
                while not done.is_set():
                    peak[0] = max(peak[0], _rss_anon_kb(pid))
                    time.sleep(0.05)
            sampler = threading.Thread(target=sample)
            sampler.start()
            t0 = time.perf_counter()
            n = 0
            try:
                for chunk in client.do_get(info.endpoints[0].ticket, options):
                    n += chunk.data.num_rows
                    time.sleep(0.005)
            finally:
                done.set()
                sampler.join()
                client.close()
            if n != rows:
                raise SystemExit(f"[bench] flight slow client: {n} rows, expected {rows}")
            record(session, "slow", "flight", 1, (time.perf_counter() - t0) * 1000, rows=n,
                   rss_anon_start_kb=start_kb, rss_anon_peak_kb=peak[0])
    with open(out_csv, "w", newline="") as f:
        fields = []
        for r in results:
            fields += [k for k in r if k not in fields]
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(results)
    best = {}
    for r in results:
        if not r["cold"]:
            key = (r["case"], r["method"])
            best[key] = min(best.get(key, r["ms"]), r["ms"])
    summary = "; ".join(f"{case} {method} {ms:,.0f} ms" for (case, method), ms in best.items())
    if ("ingest", "flight") in best:
        f_ms, c_ms = best[("ingest", "flight")], best[("ingest", "adbc-copy")]
        summary += (f"; ingest: Flight {rows / f_ms * 1000:,.0f} rows/s, ADBC COPY {rows / c_ms * 1000:,.0f} rows/s "
                    f"({c_ms / f_ms:.2f}x)")
    slow = [r for r in results if r["case"] == "slow"]
    if slow:
        summary += "; slow client: session RssAnon " + ", ".join(
            f"{r['rss_anon_start_kb']:,} -> {r['rss_anon_peak_kb']:,} kB" for r in slow)
    print(f"[bench] flight {ds.name} (lineitem {rows:,} rows), best hot run: {summary}; "
          f"{os.path.basename(out_csv)}", flush=True)
    return results


"""Running the queries: configurations interleaved, fresh session per query,
one cold run then N hot runs, results drained without being rendered; with
`sessions` > 1 each configuration of a query gets that many fresh sessions,
in rounds (every configuration once, then again), so that one slow session
(this VM slows a whole backend at times) does not decide its figure.

Order: for each query and round, the configurations are taken in an order
rotated by the query's number and the round, so no configuration always runs
first (on a cold cache) or last. Configurations that need the server without vexec (vanilla) form one
block and those with it another, so the server restarts at most twice a query.
"""

import contextlib
import csv
import json
import os
import platform
import threading
import time
from dataclasses import dataclass

import duckdb
import psycopg
from psycopg import pq

from .cluster import Cluster

FIELDS = ["sha", "started", "machine", "benchmark", "dataset", "config", "query", "run", "ms", "rows",
          "status", "error", "peak_kb", "session"]


def rss_anon_kb(status_text: str) -> int | None:
    """The RssAnon line of a /proc/<pid>/status: a process's private memory
    (a backend's palloc and Rust heap; shared buffers are RssShmem)."""
    for line in status_text.splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    return None


class MemoryProbe:
    """Samples a backend's RssAnon every `interval` seconds while a query
    runs and keeps the largest: its peak private memory, up to the sampling
    (the server must be on this machine)."""

    def __init__(self, pid: int, interval: float = 0.005):
        self.path = f"/proc/{pid}/status"
        self.interval = interval
        self.peak: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        try:
            with open(self.path) as f:
                kb = rss_anon_kb(f.read())
        except OSError:
            return
        if kb is not None and (self.peak is None or kb > self.peak):
            self.peak = kb

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> "MemoryProbe":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


@dataclass(frozen=True)
class Config:
    mode: str                 # vanilla | off | auto | force | forcescan | autoarrow | forcearrow | duckdb
                              # (forcescan: force with vector scans only, vexec.enable_agg off;
                              # autoarrow, forcearrow: auto, force with vexec.batch_format = arrow)
    workers: int = 0          # max_parallel_workers_per_gather (DuckDB: threads)

    @property
    def name(self) -> str:
        return "duckdb" if self.mode == "duckdb" else f"{self.mode}-w{self.workers}"

    @property
    def server(self) -> str:
        return {"vanilla": "vanilla", "duckdb": "duckdb"}.get(self.mode, "vexec")


def configs(modes: list[str], workers: list[int], with_duckdb: bool) -> list[Config]:
    out = [Config(m, w) for w in workers for m in modes]
    if with_duckdb:
        out.append(Config("duckdb", os.cpu_count() or 1))
    return out


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem = next(l for l in open("/proc/meminfo") if l.startswith("MemTotal")).split()[1]
        mem_gib = int(mem) / 1024 / 1024
    except (OSError, StopIteration):
        mem_gib = 0
    return f"{platform.node()}: {cpu}, {os.cpu_count()} cores, {mem_gib:.0f} GiB"


def order_for(qi: int, cfgs: list[Config]) -> list[Config]:
    blocks: dict[str, list[Config]] = {}
    for c in cfgs:
        blocks.setdefault(c.server, []).append(c)
    names = list(blocks)
    names = names[qi % len(names):] + names[:qi % len(names)]
    out = []
    for n in names:
        b = blocks[n]
        out += b[qi % len(b):] + b[:qi % len(b)]
    return out


Pair = tuple[str, str, str, str]  # (benchmark, dataset, configuration, query)


def pair_of(row: dict) -> Pair:
    return (row["benchmark"], row["dataset"], row["config"], row["query"])


def session_of(row: dict) -> int:
    """A row's session number (files written before sessions had one: 0)."""
    return int(row.get("session") or 0)


def finished_sessions(rows: list[dict], hot: int) -> set[tuple[Pair, int]]:
    """The (pair, session) whose runs are all recorded: the cold run and
    `hot` hot runs, or runs up to one that failed or timed out (the runner
    stops a session there)."""
    runs: dict[tuple[Pair, int], dict[int, str]] = {}
    for r in rows:
        runs.setdefault((pair_of(r), session_of(r)), {})[int(r["run"])] = r["status"]
    done = set()
    for key, by_run in runs.items():
        for run in range(1 + hot):
            status = by_run.get(run)
            if status is None:
                break
            if status != "ok":
                done.add(key)
                break
        else:
            done.add(key)
    return done


def finished_pairs(rows: list[dict], hot: int, sessions: int = 1) -> set[Pair]:
    """The (benchmark, dataset, configuration, query) pairs whose `sessions`
    sessions are all finished (`finished_sessions`)."""
    done = finished_sessions(rows, hot)
    pairs = {pair for pair, _ in done}
    return {p for p in pairs if all((p, s) in done for s in range(sessions))}


def resume_rows(path: str, sha: str, hot: int) -> tuple[list[dict], set[tuple[Pair, int]]]:
    """The rows of a run cut short that can be kept (those of finished
    sessions) and those (pair, session). Refuses a file of another commit:
    its figures measured other code."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    shas = {r["sha"] for r in rows}
    if shas - {sha}:
        raise SystemExit(f"[bench] {path} holds results of {', '.join(sorted(shas))}, not {sha}: "
                         f"check that commit out to resume it")
    done = finished_sessions(rows, hot)
    return [r for r in rows if (pair_of(r), session_of(r)) in done], done


# The run number of a query's planning time row (status "plan"): outside
# the cold and hot runs, so resuming and the timing tables ignore it.
PLAN_RUN = -1


def planning_ms(pg, q: str, tries: int = 3) -> float | None:
    """The best of `tries` planning times of `q`, as EXPLAIN (SUMMARY)
    reports them without running it (after the timed runs: caches warm);
    None for a text EXPLAIN cannot take (several statements)."""
    best = None
    for _ in range(tries):
        res = pg.exec_(b"EXPLAIN (SUMMARY ON, FORMAT JSON) " + q.encode())
        if res.status != pq.ExecStatus.TUPLES_OK:
            return None
        ms = float(json.loads(res.get_value(0, 0).decode())[0]["Planning Time"])
        best = ms if best is None else min(best, ms)
    return best


class Runner:
    def __init__(self, cluster: Cluster, out_csv: str, sha: str, hot: int, timeout_s: float,
                 resume: bool = False, sessions: int = 1):
        self.cluster = cluster
        self.out_csv = out_csv
        self.sha = sha
        self.hot = hot
        self.sessions = sessions
        self.session = 0    # the session being run, recorded with its rows
        self.timeout_s = timeout_s
        # Resuming: keep the finished sessions' rows, drop one cut in the middle.
        self.done: set[tuple[Pair, int]] = set()
        if resume:
            kept, self.done = resume_rows(out_csv, sha, hot)
            with open(out_csv, "w", newline="") as f:
                w = csv.DictWriter(f, FIELDS)
                w.writeheader()
                w.writerows(kept)
        self.started = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.memory = False
        self.machine = machine()
        new = not os.path.exists(out_csv)
        self._f = open(out_csv, "a", newline="")
        self._w = csv.DictWriter(self._f, FIELDS)
        if new:
            self._w.writeheader()

    def close(self) -> None:
        self._f.close()

    def _record(self, bench: str, dataset: str, cfg: Config, query: str, run: int, ms: float | None,
                rows: int | None, status: str, error: str = "", peak_kb: int | None = None) -> None:
        self._w.writerow(dict(sha=self.sha, started=self.started, machine=self.machine, benchmark=bench,
                              dataset=dataset, config=cfg.name, query=query, run=run,
                              ms=f"{ms:.3f}" if ms is not None else "", rows=rows if rows is not None else "",
                              status=status, error=error.replace("\n", " ")[:300],
                              peak_kb=peak_kb if peak_kb is not None else "", session=self.session))
        self._f.flush()

    def run_benchmark(self, bench: str, dataset: str, pg_db: str, duck_path: str | None,
                      queries: list[tuple[str, str, str]], cfgs: list[Config], memory: bool = False) -> None:
        """queries: (name, PostgreSQL text, DuckDB text); `memory`: sample
        each PostgreSQL run's peak backend memory (MemoryProbe)."""
        self.memory = memory
        for qi, (qname, pg_q, duck_q) in enumerate(queries):
            for session in range(self.sessions):
                self.session = session
                line = []
                for cfg in order_for(qi + session, cfgs):
                    if ((bench, dataset, cfg.name, qname), session) in self.done:
                        line.append(f"{cfg.name} (kept)")
                        continue
                    if cfg.mode == "duckdb":
                        best = self._run_duckdb(bench, dataset, duck_path, cfg, qname, duck_q)
                    else:
                        best = self._run_pg(bench, dataset, pg_db, cfg, qname, pg_q)
                    line.append(f"{cfg.name} {best}")
                tag = f" (session {session + 1} of {self.sessions})" if self.sessions > 1 else ""
                print(f"[bench] {bench} {qname}{tag}: " + ", ".join(line), flush=True)

    def _run_pg(self, bench, dataset, db, cfg: Config, qname: str, q: str) -> str:
        self.cluster.start(preload=cfg.server == "vexec")
        self.cluster.before_session(cfg.mode)
        conn = psycopg.connect(self.cluster.dsn(db), autocommit=True)
        try:
            setup = [f"SET max_parallel_workers_per_gather = {cfg.workers}",
                     f"SET statement_timeout = '{int(self.timeout_s * 1000)}ms'"]
            if cfg.mode == "forcescan":
                setup += ["SET vexec.mode = force", "SET vexec.enable_agg = off"]
            elif cfg.mode in ("autoarrow", "forcearrow"):
                setup += [f"SET vexec.mode = {cfg.mode.removesuffix('arrow')}", "SET vexec.batch_format = arrow"]
            elif cfg.server == "vexec":
                setup.append(f"SET vexec.mode = {cfg.mode}")
            for s in setup:
                conn.execute(s)
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0] if self.memory else None
            pg = conn.pgconn
            best = None
            for run in range(1 + self.hot):
                probe = MemoryProbe(pid) if pid else None
                with probe or contextlib.nullcontext():
                    t0 = time.perf_counter()
                    # Raw libpq: the result is received whole but never
                    # converted into Python values.
                    res = pg.exec_(q.encode())
                    ms = (time.perf_counter() - t0) * 1000
                peak = probe.peak if probe else None
                if res.status == pq.ExecStatus.TUPLES_OK or res.status == pq.ExecStatus.COMMAND_OK:
                    self._record(bench, dataset, cfg, qname, run, ms, res.ntuples, "ok", peak_kb=peak)
                    if run > 0:
                        best = ms if best is None else min(best, ms)
                    continue
                sqlstate = (res.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode()
                msg = (res.error_message or b"").decode(errors="replace").strip()
                status = "timeout" if sqlstate == "57014" else "error"
                self._record(bench, dataset, cfg, qname, run, ms, None, status, f"{sqlstate} {msg}")
                return status
            plan_ms = planning_ms(pg, q)
            if plan_ms is not None:
                self._record(bench, dataset, cfg, qname, PLAN_RUN, plan_ms, None, "plan")
            return f"{best:.1f} ms" if best is not None else "ok"
        finally:
            conn.close()

    def _run_duckdb(self, bench, dataset, path, cfg: Config, qname: str, q: str) -> str:
        con = duckdb.connect(path, read_only=True)
        try:
            con.execute(f"SET threads = {cfg.workers}")
            best = None
            for run in range(1 + self.hot):
                timer = threading.Timer(self.timeout_s, con.interrupt)
                timer.start()
                t0 = time.perf_counter()
                try:
                    tbl = con.execute(q).fetch_arrow_table()
                    ms = (time.perf_counter() - t0) * 1000
                    self._record(bench, dataset, cfg, qname, run, ms, tbl.num_rows, "ok")
                    if run > 0:
                        best = ms if best is None else min(best, ms)
                except duckdb.InterruptException:
                    self._record(bench, dataset, cfg, qname, run, self.timeout_s * 1000, None, "timeout")
                    return "timeout"
                except duckdb.Error as e:
                    ms = (time.perf_counter() - t0) * 1000
                    self._record(bench, dataset, cfg, qname, run, ms, None, "error", str(e))
                    return "error"
                finally:
                    timer.cancel()
            return f"{best:.1f} ms" if best is not None else "ok"
        finally:
            con.close()

"""vexecbench: python -m vexecbench {run,report,compare,demo,egress,insert} ...

  run      load the data sets (once) and run ClickBench, TPC-H (and TPC-DS,
           the scan and agg tables, TPC-H on a Citus cluster on request) in
           every configuration; writes results/<sha>-<time>.csv, .json and a report
  report   rebuild the report of a results CSV
  compare  two results CSVs side by side; exit 1 on regressions
  demo     off vs auto side by side for a handful of queries (make run)
  egress   TPC-H's lineitem into a client: Arrow (vexec.arrow_ipc_stream, pyarrow)
           vs COPY binary (psycopg); writes results/<sha>-<time>-egress.csv
  insert   INSERT INTO copy SELECT * FROM lineitem / hits, by vexec.mode (VecInsert
           against ModifyTable); writes results/<sha>-<time>-insert.csv
  packs    the kernel packs: pgvector (kNN, a distance filter over 1 M 128-dimension
           vectors), PostGIS (box and distance filters over 1 M points, a spatial
           join), by vexec.mode; writes results/<sha>-<time>-packs.csv
  flight   vexec_flight: TPC-H Q1 through Flight vs pgwire, ingest of lineitem (Flight vs
           ADBC's COPY), a slow client's session memory; results/<sha>-<time>-flight.csv
"""

import argparse
import os
import signal
import sys
import time

from . import citus, datasets, egress, flight, insert, packs, report, runner, tpcds, tpch
from .cluster import Cluster
from .datasets import Dataset

# A few queries that show different kinds of work, for `make run`.
DEMO_CLICKBENCH = [2, 7, 12, 20, 28]
DEMO_TPCH = [1, 6, 12, 14]


def clickbench_queries() -> list[tuple[str, str, str]]:
    pg = open(os.path.join(datasets.CLICKBENCH_DIR, "queries.sql")).read().strip().splitlines()
    dk = open(os.path.join(datasets.CLICKBENCH_DIR, "queries-duckdb.sql")).read().strip().splitlines()
    assert len(pg) == len(dk) == 43, "ClickBench has 43 queries"
    # ClickBench numbers its queries from 0.
    return [(f"Q{i}", p, d) for i, (p, d) in enumerate(zip(pg, dk))]


def tpch_queries() -> list[tuple[str, str, str]]:
    duck = dict(tpch.duckdb_queries())
    return [(f"Q{n}", q, duck[n]) for n, q in tpch.queries()]


def tpcds_queries() -> list[tuple[str, str, str]]:
    duck = dict(tpcds.duckdb_queries())
    return [(f"Q{n}", q, duck[n]) for n, q in tpcds.queries()]


def parse_list(s: str, conv=str) -> list:
    return [conv(x) for x in s.split(",") if x]


def positive_int(s: str) -> int:
    """An argparse type: an integer of at least 1."""
    n = int(s)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


def cluster_from(args) -> Cluster:
    c = Cluster(args.bindir, os.path.join(args.state, "pgdata"), args.port)
    c.ensure_initialized()
    return c


def cmd_run(args) -> int:
    os.makedirs(args.results, exist_ok=True)
    cl = cluster_from(args)
    cl.start(preload=True)
    hits_rows = args.hits_rows or (1_000_000 if args.quick else 10_000_000)
    sf = args.sf or (0.1 if args.quick else 1.0)
    benches = parse_list(args.benchmarks)
    unknown = set(benches) - {"clickbench", "clickbench-pk", "tpch", "tpcds", "scan", "agg", "citus-tpch",
                              "tpch-pg18"}
    if unknown:
        raise SystemExit(f"[bench] --benchmarks: unknown {', '.join(sorted(unknown))}")
    sets = []
    # TPC-H first: it is the shorter benchmark, so a run cut short (a 10 M-row
    # ClickBench matrix takes hours on a small machine) still has it whole.
    if "tpch" in benches:
        sets.append(("tpch", Dataset("tpch", sf), tpch_queries()))
    # TPC-DS next: 99 queries at a per-query timeout (--tpcds-timeout).
    if "tpcds" in benches:
        sets.append(("tpcds", Dataset("tpcds", sf), tpcds_queries()))
    if "clickbench" in benches:
        sets.append(("clickbench", Dataset("clickbench", hits_rows), clickbench_queries()))
    # "clickbench-pk" names the primary-key set alone (to run or resume it by
    # itself); --pk adds it to "clickbench".
    if "clickbench-pk" in benches or ("clickbench" in benches and args.pk):
        sets.append(("clickbench", Dataset("clickbench", hits_rows, pk=True), clickbench_queries()))
    if "scan" in benches:
        rows = args.scan_rows or (1_000_000 if args.quick else 10_000_000)
        sets.append(("scan", Dataset("scan", rows), [(n, q, q) for n, q in datasets.SCAN_QUERIES]))
    if "agg" in benches:
        rows = args.scan_rows or (1_000_000 if args.quick else 10_000_000)
        sets.append(("agg", Dataset("agg", rows), [(n, q, q) for n, q in datasets.AGG_QUERIES]))
    citus_cluster = None
    if "citus-tpch" in benches or "tpch-pg18" in benches:
        # PostgreSQL 18 (Citus has no 19): the distributed tables, and the
        # same rows in plain tables on the coordinator (single-node 18).
        citus_cluster = citus.CitusCluster(args.state, base_port=args.port + 40)
        ds = Dataset("tpch", sf)
        for bench in ("citus-tpch", "tpch-pg18"):
            if bench in benches:
                sets.append((bench, ds, tpch_queries()))
    for bench, ds, _ in sets:
        if bench.startswith(("citus", "tpch-pg18")):
            continue
        datasets.ensure_loaded(cl, args.state, ds, args.seed)
        if args.with_duckdb and ds.kind not in ("scan", "agg"):
            datasets.ensure_duckdb(args.state, ds, args.seed)

    if args.resume:
        # A bare file name is one of the results directory.
        out_csv = args.resume if os.path.exists(args.resume) else os.path.join(args.results, args.resume)
        if not os.path.exists(out_csv):
            raise SystemExit(f"[bench] --resume: no results file {args.resume}")
        print(f"[bench] resuming {out_csv}: finished (query, configuration) pairs are kept", flush=True)
    else:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        out_csv = os.path.join(args.results, f"{args.sha}-{stamp}.csv")
    if citus_cluster is not None:
        cl.stop()
        citus_cluster.start(preload=True)
        citus.ensure_loaded(citus_cluster, args.state, Dataset("tpch", sf), args.seed)
        if args.with_duckdb:
            datasets.ensure_duckdb(args.state, Dataset("tpch", sf), args.seed)
        citus_cluster.stop()
    cfgs = runner.configs(parse_list(args.modes), parse_list(args.workers, int), args.with_duckdb)
    first = sets[0][0] if sets else None
    if first is None:
        settings = {}
    elif first.startswith("citus"):
        citus_cluster.start(preload=True)
        settings = citus_cluster.settings(citus.citus_name(sets[0][1]))
    else:
        cl.start(preload=True)
        settings = cl.settings(sets[0][1].name)
    settings.pop("max_parallel_workers_per_gather", None)
    print("[bench] settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()), flush=True)
    print(f"[bench] configurations: {', '.join(c.name for c in cfgs)}; {args.sessions} session(s) each of "
          f"{args.hot} hot runs after one cold run; timeout {args.timeout:.0f} s "
          f"(TPC-DS {args.tpcds_timeout:.0f} s)", flush=True)
    r = runner.Runner(cl, out_csv, args.sha, args.hot, args.timeout, resume=bool(args.resume),
                      sessions=args.sessions)
    try:
        for bench, ds, queries in sets:
            if args.queries:
                keep = set(parse_list(args.queries))
                queries = [q for q in queries if q[0] in keep]
            bcfgs = [c for c in cfgs if c.mode != "duckdb" or ds.kind not in ("scan", "agg")]
            r.timeout_s = args.tpcds_timeout if bench == "tpcds" else args.timeout
            label, db = ds.label, ds.name
            if bench == "citus-tpch":
                cl.stop()
                r.cluster = citus_cluster
                label, db = f"{ds.label}, Citus: coordinator + 2 workers (PostgreSQL 18)", citus.citus_name(ds)
            elif bench == "tpch-pg18":
                citus_cluster.stop()
                r.cluster = citus_cluster.coordinator
                label = f"{ds.label}, single-node PostgreSQL 18 (the Citus coordinator's server)"
            else:
                r.cluster = cl
            r.run_benchmark(bench, label, db, datasets.duckdb_path(args.state, ds), queries, bcfgs,
                            memory=bench == "agg")
    finally:
        r.close()
        cl.stop()
        if citus_cluster is not None:
            citus_cluster.stop()
    md = report.write_report(out_csv, args.reports, settings)
    print(open(md).read())
    print(f"[bench] results: {out_csv}\n[bench] report: {md}")
    return 0


def cmd_demo(args) -> int:
    if args.datadir:
        # An already running cluster (make run's dev cluster).
        cl = Cluster(args.bindir, args.datadir, args.port)
    else:
        cl = cluster_from(args)
        cl.start(preload=True)
    sets = [("clickbench", Dataset("clickbench", 1_000_000), clickbench_queries(), DEMO_CLICKBENCH),
            ("tpch", Dataset("tpch", 0.1), tpch_queries(), DEMO_TPCH)]
    import psycopg
    print(f"{'query':<16} {'off ms':>9} {'auto ms':>9} {'ratio':>7}")
    for bench, ds, queries, pick in sets:
        datasets.ensure_loaded(cl, args.state, ds, args.seed)
        for name, q, _ in queries:
            if int(name[1:]) not in pick:
                continue
            best = {}
            for mode in ("off", "auto"):
                with psycopg.connect(cl.dsn(ds.name), autocommit=True) as c:
                    c.execute(f"SET vexec.mode = {mode}")
                    times = []
                    for _ in range(3):
                        t0 = time.perf_counter()
                        c.pgconn.exec_(q.encode())
                        times.append((time.perf_counter() - t0) * 1000)
                    best[mode] = min(times[1:])
            print(f"{bench + ' ' + name:<16} {best['off']:>9.1f} {best['auto']:>9.1f} "
                  f"{best['off'] / best['auto']:>6.2f}x")
    print("(best of 2 hot runs each, vexec preloaded, max_parallel_workers_per_gather default)")
    return 0


def cmd_egress(args) -> int:
    os.makedirs(args.results, exist_ok=True)
    cl = cluster_from(args)
    if args.flight:
        cl.libraries = ("vexec_flight",)
        cl.options = egress.flight_options()
    cl.stop()  # (re)started with the libraries this run wants
    cl.start(preload=True)
    try:
        out_csv = os.path.join(args.results, f"{args.sha}-{time.strftime('%Y%m%dT%H%M%S')}-egress.csv")
        egress.run(cl, args.state, args.sf, args.seed, args.sessions, args.hot, args.batch_rows, out_csv, args.sha,
                   parse_list(args.modes), args.with_copy, args.flight)
    finally:
        cl.stop()
    return 0


def cmd_flight(args) -> int:
    os.makedirs(args.results, exist_ok=True)
    cl = cluster_from(args)
    cl.libraries = ("vexec_flight",)
    cl.options = egress.flight_options()
    cl.stop()  # (re)started with vexec_flight
    cl.start(preload=True)
    try:
        out_csv = os.path.join(args.results, f"{args.sha}-{time.strftime('%Y%m%dT%H%M%S')}-flight.csv")
        flight.run(cl, args.state, args.sf, args.seed, args.sessions, args.hot, out_csv, args.sha,
                   parse_list(args.cases))
    finally:
        cl.stop()
    return 0


def cmd_insert(args) -> int:
    os.makedirs(args.results, exist_ok=True)
    cl = cluster_from(args)
    cl.start(preload=True)
    try:
        out_csv = os.path.join(args.results, f"{args.sha}-{time.strftime('%Y%m%dT%H%M%S')}-insert.csv")
        insert.run(cl, args.state, args.sf, args.hits_rows, args.seed, args.sessions, parse_list(args.cases),
                   parse_list(args.modes), out_csv, args.sha)
    finally:
        cl.stop()
    return 0


def cmd_packs(args) -> int:
    os.makedirs(args.results, exist_ok=True)
    cl = cluster_from(args)
    cl.libraries = ("vexec_pgvector", "vexec_postgis")
    cl.stop()  # (re)started with the pack preloaded
    cl.start(preload=True)
    try:
        out_csv = os.path.join(args.results, f"{args.sha}-{time.strftime('%Y%m%dT%H%M%S')}-packs.csv")
        packs.run(cl, parse_list(args.packs), args.rows, args.dims, args.sessions, args.hot, parse_list(args.modes),
                  out_csv, args.sha)
    finally:
        cl.stop()
    return 0


def main(argv=None) -> int:
    # A terminated run still stops the cluster it started (finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    p = argparse.ArgumentParser(prog="vexecbench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("run", "demo", "egress", "insert", "flight", "packs"):
        s = sub.add_parser(name)
        s.add_argument("--state", required=True, help="directory for the cluster and generated data")
        s.add_argument("--bindir", default="/usr/lib/postgresql/19/bin")
        s.add_argument("--port", type=int, default=5499)
        s.add_argument("--seed", type=int, default=1)
    sub.choices["demo"].add_argument("--datadir", help="use this running cluster (its socket directory)")
    run = sub.choices["run"]
    run.add_argument("--quick", action="store_true", help="1 M hits rows, TPC-H and TPC-DS SF 0.1")
    run.add_argument("--hits-rows", type=int)
    run.add_argument("--sf", type=float)
    run.add_argument("--scan-rows", type=int, help="rows of the scan and agg tables")
    run.add_argument("--pk", action="store_true", help="also hits with ClickBench's primary key")
    run.add_argument("--benchmarks", default="clickbench,tpch,tpcds",
                     help="clickbench, clickbench-pk, tpch, tpcds, scan, agg, citus-tpch (TPC-H on a "
                          "local Citus cluster, PostgreSQL 18), tpch-pg18 (the same rows on single-node 18)")
    run.add_argument("--queries", help="only these query names, e.g. Q1,Q6")
    run.add_argument("--modes", default="vanilla,off,auto,force")
    run.add_argument("--workers", default="0,2")
    run.add_argument("--no-duckdb", dest="with_duckdb", action="store_false")
    run.add_argument("--hot", type=int, default=3)
    run.add_argument("--sessions", type=positive_int, default=1,
                     help="fresh sessions per query and configuration, in rounds; the best hot run of all counts")
    run.add_argument("--timeout", type=float, default=300.0, help="seconds per query run")
    run.add_argument("--tpcds-timeout", type=float, default=120.0,
                     help="seconds per TPC-DS query run (a few take minutes in PostgreSQL)")
    run.add_argument("--sha", default="unknown")
    run.add_argument("--results", required=True)
    run.add_argument("--resume", metavar="CSV",
                     help="continue a run cut short (same commit and options): its finished pairs are kept")
    run.add_argument("--reports", required=True)
    eg = sub.choices["egress"]
    eg.add_argument("--sf", type=float, default=1.0)
    eg.add_argument("--sessions", type=positive_int, default=2)
    eg.add_argument("--hot", type=positive_int, default=2)
    eg.add_argument("--batch-rows", type=positive_int, default=8192)
    eg.add_argument("--modes", default="off", help="vexec.mode values to run the Arrow way in")
    eg.add_argument("--flight", action="store_true",
                    help="also through vexec_flight (ADBC Flight SQL) and ADBC's PostgreSQL driver")
    eg.add_argument("--no-copy", dest="with_copy", action="store_false", help="leave out the COPY way")
    eg.add_argument("--sha", default="unknown")
    eg.add_argument("--results", required=True)
    ins = sub.choices["insert"]
    ins.add_argument("--sf", type=float, default=1.0)
    ins.add_argument("--hits-rows", type=int, default=10_000_000)
    ins.add_argument("--sessions", type=positive_int, default=2)
    ins.add_argument("--cases", default="lineitem,lineitem-pk,hits", help="lineitem, lineitem-pk, hits")
    ins.add_argument("--modes", default="off,force")
    ins.add_argument("--sha", default="unknown")
    ins.add_argument("--results", required=True)
    fl = sub.choices["flight"]
    fl.add_argument("--sf", type=float, default=1.0)
    fl.add_argument("--sessions", type=positive_int, default=2)
    fl.add_argument("--hot", type=positive_int, default=2)
    fl.add_argument("--cases", default="q1,ingest,slow", help="q1, ingest, slow")
    fl.add_argument("--sha", default="unknown")
    fl.add_argument("--results", required=True)
    pk = sub.choices["packs"]
    pk.add_argument("--packs", default="pgvector,postgis", help="pgvector, postgis")
    pk.add_argument("--rows", type=positive_int, default=1_000_000)
    pk.add_argument("--dims", type=positive_int, default=128)
    pk.add_argument("--sessions", type=positive_int, default=2)
    pk.add_argument("--hot", type=positive_int, default=2)
    pk.add_argument("--modes", default="off,auto,force")
    pk.add_argument("--sha", default="unknown")
    pk.add_argument("--results", required=True)
    rep = sub.add_parser("report")
    rep.add_argument("csv")
    rep.add_argument("--reports", required=True)
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("a")
    cmp_.add_argument("b")
    cmp_.add_argument("--threshold", type=float, default=0.10)
    args = p.parse_args(argv)
    if args.cmd == "run":
        return cmd_run(args)
    if args.cmd == "demo":
        return cmd_demo(args)
    if args.cmd == "egress":
        return cmd_egress(args)
    if args.cmd == "insert":
        return cmd_insert(args)
    if args.cmd == "packs":
        return cmd_packs(args)
    if args.cmd == "flight":
        return cmd_flight(args)
    if args.cmd == "report":
        print(open(report.write_report(args.csv, args.reports)).read())
        return 0
    text, regressions = report.compare(args.a, args.b, args.threshold)
    print(text)
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())

"""vexeccheck: the correctness harness (python -m vexeccheck [--full]).

Default: a fast slice of every leg (part of `make test`). --full: every leg
at full size (`make check-full`). --legs picks legs by name.
"""

import argparse
import os
import signal
import sys
import time

from . import arrow_leg, citus_leg, flight_leg, insert_leg, legs, orca_leg

LEG_NAMES = ["pg18", "pg19", "diff-pgsuite", "diff-regress", "diff-tpch", "answers-tpch", "answers-clickbench",
             "tpcds", "planner-sweep", "suite-sweep", "sqlsmith", "cancel", "citus", "arrow-types", "insert", "flight", "pack-suites", "orca-corpus"]
CLUSTER_LEGS = {"diff-tpch", "answers-tpch", "answers-clickbench", "tpcds", "planner-sweep", "sqlsmith", "cancel",
                "arrow-types", "insert"}


def main(argv=None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    p = argparse.ArgumentParser(prog="vexeccheck", description=__doc__)
    p.add_argument("--state", required=True)
    p.add_argument("--full", action="store_true")
    p.add_argument("--legs", default=",".join(LEG_NAMES))
    p.add_argument("--smith-queries", type=int)
    p.add_argument("--smith-seed", type=int, default=1)
    p.add_argument("--cancel-iterations", type=int, default=1000)
    args = p.parse_args(argv)
    os.makedirs(args.state, exist_ok=True)
    wanted = [l for l in args.legs.split(",") if l]
    unknown = set(wanted) - set(LEG_NAMES)
    if unknown:
        p.error(f"unknown legs {sorted(unknown)}; legs: {LEG_NAMES}")
    expected = legs.Expected(os.path.join(legs.REPO, "check", "expected-differences.txt"))
    full = args.full
    results: list[legs.LegResult] = []
    cluster = None
    t_all = time.time()
    try:
        for name in wanted:
            t0 = time.time()
            if name in CLUSTER_LEGS and cluster is None:
                cluster = legs.check_cluster(args.state)
            if name == "pg18":
                res = legs.leg_pg18(args.state, full, expected)
            elif name == "pg19":
                res = legs.leg_pg19(args.state, full, expected)
            elif name == "diff-pgsuite":
                res = legs.leg_differential_suite(args.state, full, expected)
            elif name == "diff-regress":
                res = legs.leg_differential_regress(args.state, expected)
            elif name == "diff-tpch":
                res = legs.leg_differential_tpch(cluster, args.state, 1.0 if full else 0.1, expected)
            elif name == "answers-tpch":
                res = legs.leg_answers(cluster, args.state, "tpch", 1.0 if full else 0.1)
            elif name == "answers-clickbench":
                res = legs.leg_answers(cluster, args.state, "clickbench", 1_000_000 if full else 100_000)
            elif name == "tpcds":
                # The slice's timeout leaves out Q4 (about 30 s in mode off at SF 0.1 on a debug
                # build), which would otherwise spend two and a half minutes timing out in every mode.
                res = legs.leg_tpcds(cluster, args.state, 1.0 if full else 0.1, expected, 120 if full else 25)
            elif name == "planner-sweep":
                res = legs.leg_planner_sweep(cluster, args.state, sweep_corpora(args.state, cluster, full),
                                             execute=False)
            elif name == "suite-sweep":
                res = legs.leg_suite_sweep(args.state, full)
            elif name == "citus":
                res = citus_leg.leg_citus(args.state, 1.0 if full else 0.1, expected)
            elif name == "arrow-types":
                res = arrow_leg.leg_arrow_types(cluster)
            elif name == "insert":
                res = insert_leg.leg_insert(cluster, args.state, full)
            elif name == "flight":
                res = flight_leg.leg_flight(args.state)
            elif name == "pack-suites":
                res = legs.leg_pack_suites(full)
            elif name == "orca-corpus":
                res = orca_leg.leg_orca_corpus(args.state, full)
            elif name == "cancel":
                res = legs.leg_cancel(cluster, args.cancel_iterations)
            else:
                n = args.smith_queries or (50000 if full else 300)
                res = legs.leg_sqlsmith(cluster, args.state, n, args.smith_seed)
            res.notes.append(f"{time.time() - t0:.0f} s")
            results.append(res)
            for n in res.notes:
                legs.log(f"{res.leg}: {n}")
    finally:
        if cluster is not None:
            cluster.stop()
    print()
    print(f"{'leg':<32} {'queries':>8} {'passed':>8} {'failed':>8} {'skipped':>8}")
    for r in results:
        print(f"{r.leg:<32} {r.queries:>8} {r.passed:>8} {r.failed:>8} {r.skipped:>8}")
    print(f"({time.time() - t_all:.0f} s)")
    return 1 if any(r.failed for r in results) else 0


def sweep_corpora(state: str, cluster, full: bool):
    """The planner sweep's queries: TPC-H's and TPC-DS's, on their data."""
    from vexecbench import datasets, tpcds, tpch
    sf = 1.0 if full else 0.1
    out = []
    for kind, qs in (("tpch", tpch.queries()), ("tpcds", tpcds.queries())):
        ds = datasets.Dataset(kind, sf)
        datasets.ensure_loaded(cluster, state, ds, seed=1)
        out.append((ds, [(f"Q{n}", q) for n, q in qs]))
    return out


if __name__ == "__main__":
    sys.exit(main())

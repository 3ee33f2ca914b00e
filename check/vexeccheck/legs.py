"""The legs of the correctness harness. Each returns a LegResult; the
orchestrator (__main__) prints them as one summary table."""

import os
import re
import subprocess
import time
from dataclasses import dataclass, field

import duckdb
import psycopg

from vexecbench import datasets, tpcds, tpch
from vexecbench.cluster import Cluster
from vexecbench.datasets import Dataset

from . import compare, pgsuite

# A query of the answer legs that runs longer than this fails the leg.
QUERY_TIMEOUT_S = 300

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class LegResult:
    leg: str
    queries: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    notes: list[str] = field(default_factory=list)

    def fail(self, msg: str) -> None:
        self.failed += 1
        self.notes.append("FAIL " + msg)

    def ok(self) -> None:
        self.passed += 1

    def skip(self, msg: str) -> None:
        self.skipped += 1
        self.notes.append("skip " + msg)


def log(msg: str) -> None:
    print(f"[check] {msg}", flush=True)


class Expected:
    """check/expected-differences.txt: differences reviewed one by one.
    Each line: `<leg> <item> <reason>`; `#` starts a comment."""

    def __init__(self, path: str):
        self.entries: dict[tuple[str, str], str] = {}
        for line in open(path):
            line = line.split("#", 1)[0].strip()
            if line:
                leg, item, reason = line.split(None, 2)
                self.entries[(leg, item)] = reason

    def reason(self, leg: str, item: str) -> str | None:
        return self.entries.get((leg, item))


def judge(r: LegResult, expected: Expected, leg: str, test: str, ok: bool, plan_only: bool, diffs: str,
          order_only: bool = False) -> None:
    """A test of a differential run: pass, a reviewed difference, or a failure.
    A reviewed difference whose reason starts with "plan-only:" must really be
    only plans showing vector nodes; one that starts with "order-only:" may
    also return the rows of a result in another order (same rows, same
    counts), nothing more."""
    why = expected.reason(leg, test)
    if ok:
        r.ok()
    elif why and why.startswith("plan-only:") and not plan_only:
        r.fail(f"{test}: listed as plan-only, but results differ too (diffs: {diffs})")
    elif why and why.startswith("order-only:") and not (plan_only or order_only):
        r.fail(f"{test}: listed as order-only, but results differ in content (diffs: {diffs})")
    elif why:
        r.skip(f"{test}: {why}")
    else:
        r.fail(f"{test} (diffs: {diffs})")


# The settings of each mode the differential legs run: vexec.mode, and for
# the arrow-layout modes the batch layout (force-random: a random layout per
# column and batch, from a fixed seed).
MODE_SETTINGS = {
    "off": ("vexec.mode = off",),
    "auto": ("vexec.mode = auto",),
    "force": ("vexec.mode = force",),
    "force-arrow": ("vexec.mode = force", "vexec.batch_format = arrow"),
    "force-random": ("vexec.mode = force", "vexec.debug_random_layout = 1"),
}


def set_mode(conn, mode: str, local: bool = False) -> None:
    """Put the session (or with `local` the transaction) in `mode`."""
    scope = "SET LOCAL" if local else "SET"
    for s in ("vexec.batch_format = postgres", "vexec.debug_random_layout = 0") + MODE_SETTINGS[mode]:
        conn.execute(f"{scope} {s}")


# --- PostgreSQL's regression suite ----------------------------------------------

def leg_pg18(state: str, full: bool, expected: Expected) -> LegResult:
    """PG 18: unchanged expected files; vexec adds no failure to the baseline."""
    r = LegResult("pg18-suite" + ("" if full else " (slice)"))
    d = os.path.join(state, "pgsuite")
    modes = ["off", "explain", "auto"] if full else ["auto"]
    baseline = None
    if full:
        log("PostgreSQL 18 suite, vexec not loaded (baseline)")
        baseline = pgsuite.run(18, d, "pg18-baseline", full, preload=False)
        r.notes.append("baseline failures (vexec not loaded): " + (", ".join(baseline.failed) or "none"))
    for mode in modes:
        log(f"PostgreSQL 18 suite, vexec.mode = {mode}")
        run = pgsuite.run(18, d, f"pg18-{mode}", full, preload=True, mode=mode)
        reference = baseline if baseline is not None else pgsuite.expected_files()
        for test, ok in sorted(run.tests.items()):
            r.queries += 1
            if ok:
                r.ok()
            elif mode == "auto" and (baseline is None or baseline.tests.get(test, True)):
                # auto may choose other plans; tests that print plans differ.
                plan_only = pgsuite.plan_only_difference(reference, run, test)
                order_only = pgsuite.order_only_difference(reference, run, test)
                judge(r, expected, "suite-auto", test, ok, plan_only, f"{run.out_dir}/regression.diffs",
                      order_only)
            elif baseline is not None and not baseline.tests.get(test, True):
                # A baseline failure: vexec must reproduce it exactly.
                if pgsuite.same_output(baseline, run, test):
                    r.skip(f"{mode}/{test}: fails in the baseline too, with the same output")
                else:
                    r.fail(f"{mode}/{test}: fails in the baseline, but differently with vexec ({run.out_dir})")
            else:
                r.fail(f"{mode}/{test} (diffs: {run.out_dir}/regression.diffs)")
    return r


def leg_pg19(state: str, full: bool, expected: Expected) -> LegResult:
    """PG 19: the corpus's output without vexec is the expected output."""
    r = LegResult("pg19-suite" + ("" if full else " (slice)"))
    d = os.path.join(state, "pgsuite")
    log("PostgreSQL 19 suite, vexec not loaded (makes the expected output)")
    vanilla = pgsuite.run(19, d, "pg19-vanilla", full, preload=False)
    r.notes.append(f"vanilla PostgreSQL 19 against the 18.6 expected files: {len(vanilla.failed)} of "
                   f"{len(vanilla.tests)} differ (" + ", ".join(vanilla.failed) + ")")
    for mode in (["off", "explain", "auto"] if full else ["auto"]):
        log(f"PostgreSQL 19 suite, vexec.mode = {mode}")
        run = pgsuite.run(19, d, f"pg19-{mode}", full, preload=True, mode=mode, expected_from=vanilla)
        for test, ok in sorted(run.tests.items()):
            r.queries += 1
            if ok:
                r.ok()
            elif expected.reason("suite19-unstable", test):
                # Output that changes from run to run on 19 (the corpus is 18.6's).
                r.skip(f"{mode}/{test}: {expected.reason('suite19-unstable', test)}")
            elif mode == "auto":
                plan_only = pgsuite.plan_only_difference(vanilla, run, test)
                order_only = pgsuite.order_only_difference(vanilla, run, test)
                judge(r, expected, "suite-auto", test, ok, plan_only, f"{run.out_dir}/regression.diffs",
                      order_only)
            else:
                r.fail(f"{mode}/{test} (diffs: {run.out_dir}/regression.diffs)")
    return r


def leg_differential_suite(state: str, full: bool, expected: Expected) -> LegResult:
    """PostgreSQL's regression SQL on PG 19, mode off vs mode force."""
    r = LegResult("diff-pgsuite" + ("" if full else " (slice)"))
    d = os.path.join(state, "pgsuite")
    log("differential: PostgreSQL's suite on 19, vexec.mode = off")
    off = pgsuite.run(19, d, "pg19-diff-off", full, preload=True, mode="off")
    log("differential: PostgreSQL's suite on 19, vexec.mode = force")
    force = pgsuite.run(19, d, "pg19-diff-force", full, preload=True, mode="force", expected_from=off)
    log("differential: PostgreSQL's suite on 19, vexec.mode = force, vexec.batch_format = arrow")
    arrow = pgsuite.run(19, d, "pg19-diff-force-arrow", full, preload=True, mode="force", expected_from=off,
                        extra=("vexec.batch_format = arrow",))
    for run in (force, arrow):
        for test, ok in sorted(run.tests.items()):
            r.queries += 1
            plan_only = not ok and pgsuite.plan_only_difference(off, run, test)
            order_only = not ok and pgsuite.order_only_difference(off, run, test)
            judge(r, expected, "diff-pgsuite", test, ok, plan_only, f"{run.out_dir}/regression.diffs", order_only)
    return r


def leg_differential_regress(state: str, expected: Expected) -> LegResult:
    """vexec's own pg_regress suite, mode off vs mode force, and force in the
    arrow layout against force in the postgres layout (their outputs must
    differ only in the lines that name the layout)."""
    r = LegResult("diff-regress")
    d = os.path.join(state, "ownsuite")
    runs = {}
    for mode in ("off", "force", "force-arrow"):
        out = os.path.join(d, mode)
        subprocess.run(["rm", "-rf", out])
        os.makedirs(out)
        conf = os.path.join(out, "extra.conf")
        open(conf, "w").write("shared_preload_libraries = 'vexec'\n" + "".join(s + "\n" for s in MODE_SETTINGS[mode]))
        args = [pgsuite.pg_regress(19), f"--temp-instance={out}/instance", f"--temp-config={conf}",
                f"--bindir={pgsuite.bindir(19)}", f"--inputdir={REPO}/regress", f"--outputdir={out}",
                f"--schedule={REPO}/regress/schedule", "--dbname=vexec_regress", "--port=56100"]
        if mode != "off":
            exp = os.path.join(out, "expected-from")
            subprocess.run(["mkdir", "-p", exp])
            subprocess.run(["cp", "-r", os.path.join(runs["off"], "results"), os.path.join(exp, "expected")])
            args.append(f"--expecteddir={exp}")
        p = subprocess.run(args, capture_output=True, text=True)
        runs[mode] = out
        tests = pgsuite.parse_results(p.stdout)
        if mode == "force-arrow":
            for test in sorted(tests):
                r.queries += 1
                diff = _layout_difference(os.path.join(runs["force"], "results", f"{test}.out"),
                                          os.path.join(out, "results", f"{test}.out"))
                why = expected.reason("diff-regress-arrow", test)
                if _own_differences(os.path.join(out, "results", f"{test}.out")):
                    r.fail(f"{test}: off/force differences in the arrow layout reported by the test itself")
                elif diff is None:
                    r.ok()
                elif why:
                    r.skip(f"{test} in the arrow layout: {why}")
                else:
                    r.fail(f"{test}: the arrow layout differs from the postgres layout: {diff}")
        if mode == "force":
            off = pgsuite.SuiteRun("off", runs["off"], 0)
            forced = pgsuite.SuiteRun("force", out, 0)
            for test, ok in sorted(tests.items()):
                r.queries += 1
                # vexec's tests compare off with force themselves (same(),
                # agg_same()), so a wrong kernel changes both runs alike; their
                # "DIFFERENT:" lines are the failure to look for.
                own = sum(_own_differences(os.path.join(run, "results", f"{test}.out")) for run in runs.values())
                if own:
                    r.fail(f"{test}: {own} off/force differences reported by the test itself (results in {d})")
                    continue
                plan_only = not ok and pgsuite.plan_only_difference(off, forced, test)
                judge(r, expected, "diff-regress", test, ok, plan_only, f"{out}/regression.diffs")
    return r


# What differs between the layouts in a result file: lines the arrow layout
# adds to a plan, and the layout's name where output shows it.
_LAYOUT_LINE = re.compile(r"Batch Layout|Arrow Columns|Layout Conversions")
_LAYOUT_NAME = [(re.compile(r"vexec\.batch_format = 'arrow'(, )?"), ""),
                (re.compile(r"vexec\.batch_format: \"arrow\""), ""),
                (re.compile(r"(Batch.Format\W+)arrow"), r"\1postgres"),
                (re.compile(r"format arrow"), "format postgres")]


def _layout_difference(a_file: str, b_file: str) -> str | None:
    """None when two result files are equal but for what names the layout
    (and what follows from it: the padding of tables, a plan's row count);
    else the first differing line pair."""
    def lines(path):
        try:
            text = open(path, errors="replace").read().splitlines()
        except OSError:
            return ["<missing>"]
        out = []
        for line in text:
            for pattern, replacement in _LAYOUT_NAME:
                line = pattern.sub(replacement, line)
            # Tables are padded to their longest cell, and a plan has more
            # lines (and rows) in the arrow layout: compare cells, not padding.
            if not _LAYOUT_LINE.search(line) and not re.fullmatch(r"[-+\s]*|\(\d+ rows?\)|\+?", line.strip()):
                out.append(" ".join(line.split()))
        return out
    a, b = lines(a_file), lines(b_file)
    for x, y in zip(a, b):
        if x != y:
            return f"{x[:120]!r} vs {y[:120]!r}"
    return None if len(a) == len(b) else f"{len(a)} lines vs {len(b)} lines"


def _own_differences(result_file: str) -> int:
    try:
        # A result cell (psql indents it by one space), not the echoed SQL.
        return sum(line.startswith(" DIFFERENT:") for line in open(result_file, errors="replace"))
    except OSError:
        return 0


# --- a cluster with data sets -----------------------------------------------------

def check_cluster(state: str) -> Cluster:
    c = Cluster("/usr/lib/postgresql/19/bin", os.path.join(state, "pgdata"), 5498)
    c.ensure_initialized()
    c.start(preload=True)
    return c


def leg_differential_tpch(cluster: Cluster, state: str, sf: float, expected: Expected) -> LegResult:
    """TPC-H's 22 queries, mode off vs force, compared on PostgreSQL's text;
    then each query's force plan under vexec.debug_require_vector (with
    nested loops and merge joins off, which force mode lets compete on
    cost): a scan, hash join, aggregate or sort left to PostgreSQL fails the
    query unless it is listed (`vector-tpch Q<n> [<nodes>] <why>`, nodes as
    the error names them). The force plans are kept in the state directory."""
    r = LegResult(f"diff-tpch sf{sf}")
    ds = Dataset("tpch", sf)
    datasets.ensure_loaded(cluster, state, ds, seed=1)
    plans = []
    with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as conn:
        conn.execute(f"SET statement_timeout = '{QUERY_TIMEOUT_S}s'")
        for nr, q in tpch.queries():
            r.queries += 1
            results = {}
            for mode in ("off", "force", "force-arrow", "force-random"):
                set_mode(conn, mode)
                results[mode] = compare.pg_text_result(conn, q)
            set_mode(conn, "off")
            for mode in ("force", "force-arrow", "force-random"):
                r.queries += mode != "force"
                a, b = results["off"], results[mode]
                if a[0] == "ok" and b[0] == "ok" and not compare.has_order_by(q):
                    a, b = ("ok", sorted(a[1], key=str)), ("ok", sorted(b[1], key=str))
                r.ok() if a == b else r.fail(f"Q{nr}: off {str(a)[:200]} vs {mode} {str(b)[:200]}")

            r.queries += 1
            conn.execute("SET vexec.mode = force")
            plan = "\n".join(row[0] for row in conn.execute("EXPLAIN (COSTS OFF) " + q).fetchall())
            plans.append(f"-- Q{nr}\n{plan}\n")
            # (Nested loops and merge joins compete on cost in force mode; the
            # check is about what can be vectorized, so they are left out.)
            conn.execute("SET vexec.debug_require_vector = on")
            conn.execute("SET enable_nestloop = off")
            conn.execute("SET enable_mergejoin = off")
            try:
                conn.execute("EXPLAIN (COSTS OFF) " + q)
                missing, detail = None, ""
            except psycopg.Error as e:
                if e.sqlstate != "0A000":
                    raise
                missing = e.diag.message_primary.split("not vectorized: ", 1)[-1].strip()
                detail = e.diag.message_detail or ""
            for setting in ("vexec.debug_require_vector", "enable_nestloop", "enable_mergejoin"):
                conn.execute(f"RESET {setting}")
            why = expected.reason("vector-tpch", f"Q{nr}")
            listed = why.split("]", 1)[0].lstrip("[") if why and why.startswith("[") else None
            if missing is None and why is None:
                r.ok()
            elif missing is None:
                r.fail(f"Q{nr}: fully vector now; remove its vector-tpch entry")
            elif listed == missing:
                r.skip(f"Q{nr} not vector: {why}")
            else:
                r.fail(f"Q{nr}: not vectorized: {missing} (listed: {listed}); {detail[:400]}")
    with open(os.path.join(state, f"tpch-force-plans-sf{sf}.txt"), "w") as f:
        f.write("\n".join(plans))
    return r


def leg_answers(cluster: Cluster, state: str, kind: str, size: float,
                modes=("force", "auto", "force-arrow")) -> LegResult:
    """Answers in force and auto mode equal DuckDB's on the same data."""
    ds = Dataset(kind, size)
    r = LegResult(f"answers {ds.name}")
    datasets.ensure_loaded(cluster, state, ds, seed=1)
    duck_path = datasets.ensure_duckdb(state, ds, seed=1)
    if kind == "tpch":
        duck = dict(tpch.duckdb_queries())
        queries = [(f"Q{n}", q, duck[n]) for n, q in tpch.queries()]
    else:
        from vexecbench.__main__ import clickbench_queries
        queries = clickbench_queries()
    dcon = duckdb.connect(duck_path, read_only=True)
    dcon.execute("SET default_null_order = 'nulls_last_on_asc_first_on_desc'")
    with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as conn:
        conn.execute(f"SET statement_timeout = '{QUERY_TIMEOUT_S}s'")
        for name, pg_q, duck_q in queries:
            ordered = compare.has_order_by(pg_q)
            for mode in modes:
                r.queries += 1
                set_mode(conn, mode)
                try:
                    cur = conn.execute(pg_q)
                    ncols = len(cur.description or [])
                    q_pg = compare.tie_broken(pg_q, ncols) if ordered else pg_q
                    q_dk = compare.tie_broken(duck_q, ncols) if ordered else duck_q
                    a = compare.pg_rows(conn, q_pg)
                    b = compare.duck_rows(dcon, q_dk)
                except (psycopg.Error, duckdb.Error) as e:
                    r.fail(f"{name} {mode}: {type(e).__name__}: {str(e)[:200]}")
                    continue
                if compare.limit_without_order(pg_q):
                    diff = None if len(a) == len(b) else f"{len(a)} rows vs {len(b)} rows"
                    r.ok() if diff is None else r.fail(f"{name} {mode}: {diff}")
                    continue
                if not ordered:
                    a, b = sorted(a, key=compare.sort_key), sorted(b, key=compare.sort_key)
                diff = compare.rows_equal(a, b)
                r.ok() if diff is None else r.fail(f"{name} {mode}: {diff[:300]}")
    dcon.close()
    return r


# --- TPC-DS ----------------------------------------------------------------------

TPCDS_MODES = ("off", "auto", "force", "force-arrow", "force-random")


def leg_tpcds(cluster: Cluster, state: str, sf: float, expected: Expected, timeout_s: int) -> LegResult:
    """TPC-DS's 99 queries (DuckDB's dsdgen data and query text): modes off,
    auto and force give the same text, row for row (each query run with every
    output column appended to its ORDER BY, so ties cannot reorder rows), and
    off's answer equals DuckDB's on the same data (normalised as for TPC-H).
    A difference from DuckDB that is PostgreSQL's own behaviour is listed as
    `answers-tpcds Q<n> <reason>`; a query PostgreSQL cannot run or finish
    as `tpcds Q<n> <reason>`."""
    r = LegResult(f"tpcds sf{sf}")
    ds = Dataset("tpcds", sf)
    datasets.ensure_loaded(cluster, state, ds, seed=1)
    duck_path = datasets.ensure_duckdb(state, ds, seed=1)
    dcon = duckdb.connect(duck_path, read_only=True)
    dcon.execute("SET default_null_order = 'nulls_last_on_asc_first_on_desc'")
    duck = dict(tpcds.duckdb_queries())
    with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as conn:
        conn.execute(f"SET statement_timeout = '{timeout_s}s'")
        for nr, pg_q in tpcds.queries():
            name = f"Q{nr}"
            ordered = compare.has_order_by(pg_q)
            try:
                ncols = len(dcon.execute(duck[nr]).description or [])
            except duckdb.Error as e:
                r.queries += 1
                r.fail(f"{name}: DuckDB: {str(e)[:200]}")
                continue
            q_pg = compare.tie_broken(pg_q, ncols) if ordered else pg_q
            results = {}
            for mode in TPCDS_MODES:
                set_mode(conn, mode)
                results[mode] = compare.pg_text_result(conn, q_pg)
                if results["off"] == ("error", "57014"):
                    break  # nothing to compare with: the other modes are not run
            set_mode(conn, "off")
            off = results["off"]
            why = expected.reason("tpcds", name)
            if off == ("error", "57014"):
                r.queries += 1
                r.skip(f"{name}: mode off does not finish within {timeout_s} s")
                continue
            if off[0] == "error":
                r.queries += 1
                if why:
                    r.skip(f"{name}: {why}")
                else:
                    r.fail(f"{name}: PostgreSQL (mode off) fails with SQLSTATE {off[1]}")
                continue
            if why:
                r.queries += 1
                r.fail(f"{name}: runs now; remove its tpcds entry")
                continue
            for mode in TPCDS_MODES[1:]:
                r.queries += 1
                a, b = off, results[mode]
                if a[0] == "ok" and b[0] == "ok" and not ordered:
                    a, b = ("ok", sorted(a[1], key=str)), ("ok", sorted(b[1], key=str))
                if a == b:
                    r.ok()
                elif b == ("error", "57014"):
                    # A plan slower than off's: a performance defect, not an answer.
                    r.skip(f"{name}: {mode} does not finish within {timeout_s} s (off does)")
                else:
                    r.fail(f"{name}: off {str(a)[:150]} vs {mode} {str(b)[:150]}")
            r.queries += 1
            try:
                conn.execute("SET vexec.mode = off")
                a = compare.pg_rows(conn, q_pg)
                b = compare.duck_rows(dcon, compare.tie_broken(duck[nr], ncols) if ordered else duck[nr])
            except (psycopg.Error, duckdb.Error) as e:
                r.fail(f"{name} answers: {type(e).__name__}: {str(e)[:200]}")
                continue
            if compare.limit_without_order(pg_q):
                diff = None if len(a) == len(b) else f"{len(a)} rows vs {len(b)} rows"
            else:
                if not ordered:
                    a, b = sorted(a, key=compare.sort_key), sorted(b, key=compare.sort_key)
                diff = compare.rows_equal(a, b)
            judge_answer(r, expected, "answers-tpcds", name, diff)
    dcon.close()
    return r


def judge_answer(r: LegResult, expected: Expected, leg: str, name: str, diff: str | None) -> None:
    why = expected.reason(leg, name)
    if diff is None:
        r.ok() if why is None else r.fail(f"{name}: equals DuckDB now; remove its {leg} entry")
    elif why:
        r.skip(f"{name} vs DuckDB: {why}")
    else:
        r.fail(f"{name} vs DuckDB: {diff[:300]}")


# --- the planner sweep -----------------------------------------------------------

# Each line: settings applied together on top of a mode. The sweep plans
# every query under each, in modes auto and force.
SWEEP_SETTINGS = [
    [],
    ["vexec.min_rows = 0"],
    ["vexec.enable_scan = off"],
    ["vexec.enable_agg = off"],
    ["vexec.enable_hashjoin = off"],
    ["vexec.enable_sort = off"],
    ["enable_seqscan = off"],
    ["enable_hashjoin = off", "enable_hashagg = off"],
    ["vexec.enable_scan = off", "vexec.min_rows = 0"],
    ["max_parallel_workers_per_gather = 0", "vexec.min_rows = 0"],
]


def leg_planner_sweep(cluster: Cluster, state: str, corpora: list[tuple[Dataset, list[tuple[str, str]]]],
                      execute: bool) -> LegResult:
    """Every query of the corpora planned (and, with `execute`, run) as a
    plain role in modes auto and force under each of SWEEP_SETTINGS: no
    crash, no internal error (XX000), no error mode off does not raise."""
    r = LegResult("planner-sweep" + (" (explain+run)" if execute else " (explain)"))
    log_path = os.path.join(cluster.datadir, "server.log")
    log_start = os.path.getsize(log_path) if os.path.exists(log_path) else 0
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as c:
        if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = 'vexec_sweep'").fetchone():
            c.execute("CREATE ROLE vexec_sweep LOGIN")
    for ds, queries in corpora:
        with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as c:
            c.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO vexec_sweep")
        conn = psycopg.connect(cluster.dsn(ds.name, user="vexec_sweep"), autocommit=True)
        conn.execute("SET statement_timeout = '10s'")
        for name, q in queries:
            off = compare.pg_text_result(conn, "EXPLAIN (COSTS OFF) " + q)
            for mode in ("auto", "force"):
                for settings in SWEEP_SETTINGS:
                    r.queries += 1
                    what = f"{ds.name} {name} {mode} [{', '.join(settings) or 'defaults'}]"
                    try:
                        conn.execute("BEGIN")
                        conn.execute(f"SET LOCAL vexec.mode = {mode}")
                        for s in settings:
                            conn.execute(f"SET LOCAL {s}")
                        res = compare.pg_text_result(conn, "EXPLAIN (COSTS OFF, VEXEC) " + q)
                        if execute and res[0] == "ok":
                            ran = compare.pg_text_result(conn, q)
                            if ran[0] == "error" and ran[1] not in ("57014",):
                                res = ran
                        conn.execute("ROLLBACK")
                    except psycopg.OperationalError as e:
                        r.fail(f"{what}: connection lost ({e})")
                        conn = psycopg.connect(cluster.dsn(ds.name, user="vexec_sweep"), autocommit=True)
                        conn.execute("SET statement_timeout = '10s'")
                        continue
                    if res[0] == "ok":
                        r.ok()
                    elif res[1] == "XX000":
                        r.fail(f"{what}: internal error")
                    elif off[0] == "error" and off[1] == res[1]:
                        r.ok()  # PostgreSQL's own error (a query it cannot run)
                    elif res[1] == "57014":
                        r.skip(f"{what}: timeout")
                    else:
                        r.fail(f"{what}: SQLSTATE {res[1]}, mode off: {off}")
        conn.close()
    with open(log_path, errors="replace") as f:
        f.seek(log_start)
        crashes = [l.strip() for l in f if "terminated by signal" in l]
    for c in crashes:
        r.fail(f"backend crash: {c}")
    return r


# Settings the suite sweep runs PostgreSQL's and vexec's suites under (on
# top of vexec preloaded); the slice runs the first two.
SUITE_SWEEP = [
    ("vexec.mode = auto", "vexec.min_rows = 0"),
    ("vexec.mode = force", "enable_seqscan = off"),
    ("vexec.mode = force", "vexec.enable_scan = off"),
    ("vexec.mode = auto", "vexec.min_rows = 0", "enable_hashjoin = off", "enable_hashagg = off"),
    ("vexec.mode = force", "max_parallel_workers_per_gather = 0", "vexec.enable_hashjoin = off"),
    ("vexec.mode = auto", "vexec.min_rows = 0", "vexec.enable_agg = off", "vexec.enable_sort = off"),
]


def leg_pack_suites(full: bool) -> LegResult:
    """The packed extensions' own suites as the packs' oracles: pgvector's
    test/sql suite in force mode against pgvector's expected output
    (tools/regress 19 pgvector), PostGIS's whole core regression suite
    (tools/postgis-suite: off and force against a cluster without vexec).
    Full runs only: make test runs pgvector's and a slice of PostGIS's in
    the regress19 leg."""
    r = LegResult("pack-suites")
    if not full:
        r.skipped += 1
        r.notes.append("make test's regress19 leg runs pgvector's suite and PostGIS's slice; whole with --full")
        return r
    log("pack suites: pgvector's own suite in force mode")
    p = subprocess.run([os.path.join(REPO, "tools", "regress"), "19", "pgvector"], capture_output=True, text=True)
    ok = re.findall(r"^ok \d+ ", p.stdout, re.M)
    bad = re.findall(r"^not ok \d+ .*$", p.stdout, re.M)
    r.queries += len(ok) + len(bad)
    r.passed += len(ok)
    if p.returncode != 0 or bad or not ok:
        r.fail(f"pgvector's suite (exit {p.returncode}): {bad or (p.stdout + p.stderr)[-2000:]}")
    log("pack suites: PostGIS's core regression suite, off and force against no vexec")
    p = subprocess.run([os.path.join(REPO, "tools", "postgis-suite")], capture_output=True, text=True)
    m = re.search(r"postgis suite \((\d+) tests.*: (\d+) same, (\d+) reviewed differences, (\d+) unexplained", p.stdout)
    if m is None:
        r.fail(f"tools/postgis-suite did not report (exit {p.returncode}): {(p.stdout + p.stderr)[-2000:]}")
        return r
    tests, differ = int(m.group(1)), int(m.group(4))
    r.queries += tests
    r.passed += tests - min(differ, tests)
    if p.returncode != 0 or differ:
        r.fail(f"{differ} unexplained differences (exit {p.returncode}): {p.stdout[-3000:]}")
    r.notes.append(m.group(0))
    return r


def leg_suite_sweep(state: str, full: bool) -> LegResult:
    """PostgreSQL's suite (PG 19; the slice in make test) and vexec's own
    suite run under each of SUITE_SWEEP: their outputs differ in plans (not
    checked here), but no test may crash the server or meet an internal
    error (a panic, "vexec internal error")."""
    r = LegResult("suite-sweep" + ("" if full else " (slice)"))
    configs = SUITE_SWEEP if full else SUITE_SWEEP[:2]
    d = os.path.join(state, "suite-sweep")
    for i, extra in enumerate(configs):
        what = ", ".join(extra)
        log(f"suite sweep: PostgreSQL's suite on 19 with {what}")
        run = pgsuite.run(19, d, f"pg19-sweep{i}", full, preload=True, extra=extra, port=56200)
        own = _own_suite(os.path.join(d, f"own-sweep{i}"), extra)
        for suite, res in (("pg19", run), ("vexec", own)):
            r.queries += len(res.tests)
            broken = pgsuite.breakage(res)
            for b in broken:
                r.fail(f"{suite} suite [{what}]: {b} ({res.out_dir})")
            r.passed += len(res.tests) - len({b.split(":", 1)[0] for b in broken})
    return r


def _own_suite(out: str, extra: tuple[str, ...]) -> "pgsuite.SuiteRun":
    """vexec's pg_regress suite with `extra` in the server's configuration."""
    subprocess.run(["rm", "-rf", out])
    os.makedirs(out)
    conf = os.path.join(out, "extra.conf")
    with open(conf, "w") as f:
        f.write("shared_preload_libraries = 'vexec'\nshared_buffers = 256MB\nmax_connections = 20\n")
        f.write("max_parallel_workers_per_gather = 2\n" + "".join(s + "\n" for s in extra))
    args = [pgsuite.pg_regress(19), f"--temp-instance={out}/instance", f"--temp-config={conf}",
            f"--bindir={pgsuite.bindir(19)}", f"--inputdir={REPO}/regress", f"--outputdir={out}",
            f"--schedule={REPO}/regress/schedule", "--dbname=vexec_regress", "--port=56300"]
    p = subprocess.run(args, capture_output=True, text=True)
    return pgsuite.SuiteRun("own", out, p.returncode, pgsuite.parse_results(p.stdout))


# --- sqlsmith --------------------------------------------------------------------

SMITH_TABLE = """
CREATE TABLE IF NOT EXISTS smith_types AS
SELECT g AS id,
       CASE WHEN g % 7 = 0 THEN NULL ELSE (g * 37) % 1000 - 500 END::int AS i4,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g::bigint * 7919 - 4000000 END AS i8,
       CASE WHEN g % 5 = 0 THEN NULL ELSE (g % 300)::smallint END AS i2,
       CASE WHEN g % 13 = 0 THEN NULL WHEN g % 17 = 0 THEN 'NaN'::float8
            WHEN g % 19 = 0 THEN '-0'::float8 ELSE g / 7.0 END::float8 AS f8,
       CASE WHEN g % 9 = 0 THEN NULL ELSE (g / 3.0)::float4 END AS f4,
       CASE WHEN g % 6 = 0 THEN NULL ELSE round(g / 9.0, 2)::numeric(12,2) END AS n,
       CASE WHEN g % 4 = 0 THEN NULL ELSE 'text ' || (g % 50) END AS t,
       CASE WHEN g % 8 = 0 THEN NULL ELSE (date '2000-01-01' + g % 4000) END AS d,
       CASE WHEN g % 10 = 0 THEN NULL ELSE timestamp '2001-02-03 04:05:06' + g * interval '1 hour' END AS ts,
       CASE WHEN g % 3 = 0 THEN NULL ELSE g % 2 = 0 END AS b
FROM generate_series(1, 5000) g;
CREATE TABLE IF NOT EXISTS smith_text AS
SELECT g AS id, g % 40 AS k,
       CASE WHEN g % 9 = 0 THEN NULL ELSE (g % 30)::text END::char(6) AS c6,
       CASE WHEN g % 8 = 0 THEN NULL ELSE 'v' || (g % 70) END::varchar(12) AS vc,
       CASE WHEN g % 7 = 0 THEN NULL WHEN g % 29 = 0 THEN '' ELSE 'Text é ' || (g % 55) END AS tx,
       CASE WHEN g % 6 = 0 THEN NULL ELSE (g * 1.0001)::numeric(20,4) END AS n20,
       CASE WHEN g % 5 = 0 THEN NULL WHEN g % 97 = 0 THEN 'NaN'::numeric ELSE g / 3.0 END AS nu,
       CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 1000)::numeric(5,1) END AS n5,
       CASE WHEN g % 12 = 0 THEN NULL ELSE date '1999-12-25' + g % 900 END AS d
FROM generate_series(1, 4000) g
"""


def leg_sqlsmith(cluster: Cluster, state: str, queries: int, seed: int) -> LegResult:
    """sqlsmith's random queries in modes force and auto: no crash, no
    internal error that off does not raise, the same answer as off."""
    r = LegResult(f"sqlsmith {queries}q seed {seed}")
    ds = Dataset("tpch", 0.01)
    datasets.ensure_loaded(cluster, state, ds, seed=1)
    with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as c:
        c.execute(SMITH_TABLE)
        c.execute("ANALYZE smith_types")
        c.execute("ANALYZE smith_text")
    log_path = os.path.join(cluster.datadir, "server.log")
    log_start = os.path.getsize(log_path) if os.path.exists(log_path) else 0
    target = f"host={cluster.datadir} port={cluster.port} dbname={ds.name}"
    p = subprocess.run(["sqlsmith", f"--target={target}", f"--seed={seed}", f"--max-queries={queries}",
                        "--dry-run", "--exclude-catalog"], capture_output=True, text=True, timeout=600)
    # TABLESAMPLE draws a new sample per execution unless it is REPEATABLE:
    # give every sample a seed so both modes see the same rows.
    stmts = [re.sub(r"(tablesample\s+\w+\s*\([^)]*\))(?!\s*repeatable)", r"\1 repeatable (1)", s.strip(), flags=re.I)
             for s in p.stdout.split(";\n") if s.strip()]
    if not stmts:
        r.fail(f"sqlsmith produced no query: {p.stderr[-500:]}")
        return r
    conn = psycopg.connect(cluster.dsn(ds.name), autocommit=True)
    conn.execute("SET statement_timeout = '2s'")
    for i, q in enumerate(stmts):
        r.queries += 1
        try:
            got = {}
            for mode in ("force", "force-random", "auto", "off", "off"):
                # sqlsmith also writes (INSERT, UPDATE, DELETE, MERGE): every
                # run is rolled back, so all of them see the same data.
                conn.execute("BEGIN")
                set_mode(conn, mode, local=True)
                got.setdefault(mode, []).append(compare.pg_text_result(conn, q))
                conn.execute("ROLLBACK")
        except psycopg.OperationalError as e:
            r.fail(f"query {i}: connection lost ({e}); query saved in {save(state, i, q)}")
            conn = psycopg.connect(cluster.dsn(ds.name), autocommit=True)
            conn.execute("SET statement_timeout = '2s'")
            continue
        off1, off2 = got["off"][0], got["off"][1]
        if m := NONDETERMINISTIC.search(q):
            r.skip(f"query {i}: nondeterministic by construction ({m.group(0)})")
            continue
        for mode in ("force", "force-random", "auto"):
            verdict = _smith_verdict(got[mode][0], off1, off2, mode, q)
            if verdict is None:
                r.ok()
            elif verdict.startswith("skip "):
                r.skip(f"query {i}: {verdict[5:]}")
            else:
                r.fail(f"query {i}: {verdict}; saved in {save(state, i, q)}")
    conn.close()
    with open(log_path, errors="replace") as f:
        f.seek(log_start)
        crashes = [l.strip() for l in f if "terminated by signal" in l]
    for c in crashes:
        r.fail(f"backend crash: {c}")
    return r


def _smith_verdict(res, off1, off2, mode: str, q: str) -> str | None:
    """None when `res` (mode `mode`) agrees with mode off's two runs."""
    if "57014" in (res[1], off1[1], off2[1]):
        return "skip timeout"
    if res[0] == "error" and res[1] == "XX000" and off1[1] != "XX000":
        return f"internal error (XX000) in {mode} only"
    if res[0] != off1[0] or (res[0] == "error" and res[1] != off1[1]):
        if off1 != off2:
            return "skip off is not deterministic"
        return f"{mode} {str(res)[:120]} vs off {str(off1)[:120]}"
    if res[0] == "error":
        return None
    # Equal results, as multisets; with LIMIT only the row count is fixed.
    limited = bool(re.search(r"\blimit\b", q, re.I))
    a, b, b2 = res[1], off1[1], off2[1]
    if limited:
        a, b, b2 = len(a), len(b), len(b2)
    else:
        a, b, b2 = sorted(a, key=str), sorted(b, key=str), sorted(b2, key=str)
    if b != b2:
        return "skip off is not deterministic"
    if a != b:
        return f"different answer in {mode}"
    return None


# Queries whose answer may change from one execution to the next.
NONDETERMINISTIC = re.compile(
    r"\brandom\(|\bsetseed\(|clock_timestamp|timeofday|"
    r"\bnextval\(|txid_current|pg_current_xact_id|statement_timestamp|now\(\)", re.I)


def leg_cancel(cluster: Cluster, iterations: int) -> LegResult:  # noqa: C901
    """A vector scan cancelled by statement_timeout, again and again: no
    crash, the right SQLSTATE, and backend memory (PostgreSQL's contexts and
    the process's resident size, which includes Rust's heap) stays flat."""
    r = LegResult(f"cancel {iterations}x")
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS cancel_t")
        c.execute("CREATE TABLE cancel_t AS SELECT g AS a, g::bigint * 3 AS b, 'text ' || (g % 1000) AS t "
                  "FROM generate_series(1, 2000000) g")
        c.execute("ANALYZE cancel_t")
    conn = psycopg.connect(cluster.dsn("postgres"), autocommit=True)
    conn.execute("SET vexec.mode = force")
    conn.execute("SET max_parallel_workers_per_gather = 0")
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]

    def memory() -> tuple[int, int]:
        ctx = conn.execute("SELECT sum(total_bytes) FROM pg_backend_memory_contexts").fetchone()[0]
        rss = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS"))
        return int(ctx), rss * 1024

    samples = []
    cancelled = 0
    for i in range(iterations):
        r.queries += 1
        # 1-20 ms: the cancel lands in different places of the scan.
        conn.execute(f"SET statement_timeout = '{1 + i % 20}ms'")
        res = compare.pg_text_result(conn, "SELECT count(*), sum(b) FROM cancel_t WHERE a % 7 = 3 AND t LIKE '%1%'")
        conn.execute("RESET statement_timeout")
        if res[0] == "error" and res[1] != "57014":
            r.fail(f"iteration {i}: SQLSTATE {res[1]}, expected 57014 (query_canceled)")
        else:
            cancelled += res[0] == "error"
            r.ok()
        if (i + 1) % (iterations // 4) == 0:
            samples.append(memory())
    conn.close()
    r.notes.append(f"{cancelled} of {iterations} runs cancelled; after each quarter: PostgreSQL contexts "
                   + ", ".join(f"{c:,}" for c, _ in samples) + " bytes; RSS "
                   + ", ".join(f"{m / 2**20:.1f}" for _, m in samples) + " MiB")
    if cancelled == 0:
        r.fail("no run was cancelled: the timeout never hit a scan")
    # Caches warm up in the first quarter; after that nothing may grow.
    (ctx0, rss0), (ctx1, rss1) = samples[1], samples[-1]
    if ctx1 - ctx0 > 64 * 1024 or rss1 - rss0 > 4 * 2**20:
        r.fail("backend memory grew")
    return r


def save(state: str, i: int, q: str) -> str:
    d = os.path.join(state, "sqlsmith-findings")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"{time.strftime('%Y%m%dT%H%M%S')}-{i}.sql")
    with open(path, "w") as f:
        f.write(q + ";\n")
    return path

"""The Citus leg: vexec inside a local Citus cluster (PostgreSQL 18, a
coordinator and two workers, vexecbench.citus).

- TPC-H's 22 queries on the distributed tables in modes off, auto and force,
  set on every node: each mode's answer is the text of off's on the cluster
  (row for row; sorted when the query has no ORDER BY), and off's answer
  equals single-node PostgreSQL's on the same rows and DuckDB's (normalised
  as in the answers legs). A query Citus cannot run distributed is listed as
  `citus Q<n> <Citus's reason>` and must fail the same way in every mode.
- The vector nodes run where the work is: in auto and force the workers'
  plans of an aggregation show Vec nodes, in off none do.
- The documented ways a session's mode reaches the workers: SET LOCAL with
  citus.propagate_set_commands = 'local', and ALTER ROLE ... SET.
- Citus's columnar access method: a distributed columnar copy of lineitem
  gives the heap table's answers in every mode.
- Citus's own machinery under vector plans on the coordinator (the session's
  mode, which stays there): subplans whose intermediate results the workers
  read, INSERT ... SELECT through the coordinator, router queries, a local
  table joined to a distributed one; each as in off.
- A node without vexec: with one worker restarted without it, force mode
  gives off's answers, and only the other worker's tasks show Vec nodes.
"""

import re

import duckdb
import psycopg

from vexecbench import citus, datasets, tpch
from vexecbench.datasets import Dataset

from . import compare
from .legs import QUERY_TIMEOUT_S, Expected, LegResult, judge_answer, log

MODES = ("off", "auto", "force")

# An aggregation whose work is on the workers (their plans are EXPLAINed).
WORKER_AGG = ("SELECT l_returnflag, l_linestatus, count(*), sum(l_quantity), avg(l_discount) "
              "FROM lineitem WHERE l_shipdate <= date '1998-09-02' GROUP BY 1, 2 ORDER BY 1, 2")

# Queries over the columnar copy, compared with the same over the heap table.
COLUMNAR_QUERIES = [
    WORKER_AGG.replace("FROM lineitem", "FROM {t}"),
    "SELECT sum(l_extendedprice * l_discount) FROM {t} WHERE l_shipdate >= date '1994-01-01' "
    "AND l_shipdate < date '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
    "SELECT l_shipmode, count(*), min(l_comment), max(l_receiptdate) FROM {t} GROUP BY 1 ORDER BY 1",
    "SELECT o_orderpriority, count(*) FROM orders JOIN {t} ON o_orderkey = l_orderkey "
    "WHERE l_commitdate < l_receiptdate GROUP BY 1 ORDER BY 1",
]


def vec_nodes(plan_lines: list[str]) -> list[str]:
    return [line.strip() for line in plan_lines if re.search(r"\bVec ", line)]


def worker_plan(conn: psycopg.Connection, sql: str) -> list[str]:
    """The plan lines below the first Task of a distributed query's EXPLAIN
    ANALYZE (the worker's own plan of its fragment)."""
    lines = [r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + sql)]
    for i, line in enumerate(lines):
        if line.strip().startswith("->  Task"):
            return lines[i + 1:]
    raise AssertionError("no Task in the distributed plan:\n" + "\n".join(lines))


def leg_citus(state: str, sf: float, expected: Expected) -> LegResult:
    r = LegResult(f"citus tpch sf{sf}")
    ds = Dataset("tpch", sf)
    cluster = citus.CitusCluster(state)
    cluster.start(preload=True)
    try:
        citus.ensure_loaded(cluster, state, ds)
        _tpch(r, cluster, state, ds, expected)
        _vector_plans_on_workers(r, cluster, ds)
        _propagation(r, cluster, ds)
        _columnar(r, cluster, ds)
        _coordinator_plans(r, cluster, ds)
        _worker_without_vexec(r, cluster, ds)
    finally:
        cluster.set_mode("off")
        cluster.stop()
    return r


def _tpch(r: LegResult, cluster: citus.CitusCluster, state: str, ds: Dataset, expected: Expected) -> None:
    duck = dict(tpch.duckdb_queries())
    dcon = duckdb.connect(datasets.ensure_duckdb(state, ds, seed=1), read_only=True)
    dcon.execute("SET default_null_order = 'nulls_last_on_asc_first_on_desc'")
    answers: dict[str, dict[int, tuple]] = {m: {} for m in MODES}
    for mode in MODES:
        cluster.set_mode(mode)
        with psycopg.connect(cluster.dsn(citus.citus_name(ds)), autocommit=True) as conn:
            conn.execute(f"SET statement_timeout = '{QUERY_TIMEOUT_S}s'")
            conn.execute("SET citus.enable_repartition_joins = on")
            for nr, q in tpch.queries():
                answers[mode][nr] = _citus_result(conn, q)
    cluster.set_mode("off")
    single = psycopg.connect(cluster.coordinator.dsn(ds.name), autocommit=True)
    coord = psycopg.connect(cluster.dsn(citus.citus_name(ds)), autocommit=True)
    coord.execute("SET citus.enable_repartition_joins = on")
    for nr, q in tpch.queries():
        name = f"Q{nr}"
        off = answers["off"][nr]
        why = expected.reason("citus", name)
        # Every mode gives off's answer (or off's error) on the cluster.
        for mode in ("auto", "force"):
            r.queries += 1
            got = answers[mode][nr]
            a, b = off, got
            if a[0] == b[0] == "ok" and not compare.has_order_by(q):
                a, b = ("ok", sorted(a[1], key=str)), ("ok", sorted(b[1], key=str))
            r.ok() if a == b else r.fail(f"{name} {mode}: {str(got)[:200]} vs off {str(off)[:200]}")
        r.queries += 1
        if off[0] == "error":
            if why:
                r.skip(f"{name}: Citus cannot run it ({off[1]}): {why}")
            else:
                r.fail(f"{name}: Citus error in off mode, not listed: {off[1]}")
            continue
        if why:
            r.fail(f"{name}: runs on Citus now; remove its `citus {name}` entry")
            continue
        # off on the cluster = single-node PostgreSQL = DuckDB, normalised.
        ordered = compare.has_order_by(q)
        try:
            ncols = len(coord.execute(q).description or [])
            q_pg = compare.tie_broken(q, ncols) if ordered else q
            q_dk = compare.tie_broken(duck[nr], ncols) if ordered else duck[nr]
            dist = compare.pg_rows(coord, q_pg)
            local = compare.pg_rows(single, q_pg)
            ducks = compare.duck_rows(dcon, q_dk)
        except (psycopg.Error, duckdb.Error) as e:
            r.fail(f"{name}: {type(e).__name__}: {str(e)[:200]}")
            continue
        if not ordered:
            dist, local, ducks = (sorted(x, key=compare.sort_key) for x in (dist, local, ducks))
        diff = compare.rows_equal(dist, local)
        if diff:
            r.fail(f"{name}: Citus vs single-node PostgreSQL: {diff[:300]}")
            continue
        judge_answer(r, expected, "answers-citus", name, compare.rows_equal(dist, ducks))
    single.close()
    coord.close()
    dcon.close()


def _citus_result(conn: psycopg.Connection, q: str) -> tuple:
    kind, val = compare.pg_text_result(conn, q)
    if kind == "error":
        msg = (conn.pgconn.error_message or b"").decode(errors="replace").strip().splitlines()[0]
        return "error", f"{val} {msg[:160]}"
    return kind, val


def _vector_plans_on_workers(r: LegResult, cluster: citus.CitusCluster, ds: Dataset) -> None:
    for mode in MODES:
        cluster.set_mode(mode)
        with psycopg.connect(cluster.dsn(citus.citus_name(ds)), autocommit=True) as conn:
            r.queries += 1
            vec = vec_nodes(worker_plan(conn, WORKER_AGG))
            want = mode != "off"
            if bool(vec) == want:
                r.ok()
                r.notes.append(f"worker plan in {mode}: {', '.join(vec) or 'no vector node'}")
            else:
                r.fail(f"worker plan in {mode}: vector nodes {vec}")
    cluster.set_mode("off")


def _propagation(r: LegResult, cluster: citus.CitusCluster, ds: Dataset) -> None:
    """With every node's setting off, a session's SET LOCAL (propagated) and
    a role's setting (ALTER ROLE, propagated by Citus) reach the workers."""
    cluster.set_mode("off")
    db = citus.citus_name(ds)
    with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
        r.queries += 1
        conn.execute("SET citus.propagate_set_commands = 'local'")
        conn.execute("BEGIN")
        conn.execute("SET LOCAL vexec.mode = force")
        vec = vec_nodes(worker_plan(conn, WORKER_AGG))
        conn.execute("COMMIT")
        r.ok() if vec else r.fail("SET LOCAL vexec.mode = force with propagate_set_commands: no Vec node on workers")
        r.queries += 1
        # A plain SET stays on the coordinator: Citus propagates SET LOCAL only.
        conn.execute("SET vexec.mode = force")
        vec = vec_nodes(worker_plan(conn, WORKER_AGG))
        r.ok() if not vec else r.fail(f"session SET reached the workers: {vec}")
        conn.execute("CREATE ROLE vexec_citus_analyst LOGIN")
        try:
            conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO vexec_citus_analyst")
            conn.execute("ALTER ROLE vexec_citus_analyst SET vexec.mode = force")
            r.queries += 1
            with psycopg.connect(cluster.dsn(db, user="vexec_citus_analyst"), autocommit=True) as analyst:
                vec = vec_nodes(worker_plan(analyst, WORKER_AGG))
            r.ok() if vec else r.fail("ALTER ROLE ... SET vexec.mode = force did not reach the workers")
        finally:
            conn.execute("DROP OWNED BY vexec_citus_analyst")
            conn.execute("DROP ROLE vexec_citus_analyst")


def _columnar(r: LegResult, cluster: citus.CitusCluster, ds: Dataset) -> None:
    db = citus.citus_name(ds)
    with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS lineitem_columnar")
        # (Columnar is its own extension since Citus 12; Citus creates it on the workers.)
        conn.execute("CREATE EXTENSION IF NOT EXISTS citus_columnar")
        conn.execute("CREATE TABLE lineitem_columnar (LIKE lineitem) USING columnar")
        conn.execute("SELECT create_distributed_table('lineitem_columnar', 'l_orderkey', colocate_with => 'orders')")
        conn.execute("INSERT INTO lineitem_columnar SELECT * FROM lineitem")
        conn.execute("ANALYZE lineitem_columnar")
    try:
        for q in COLUMNAR_QUERIES:
            heap_q, col_q = q.format(t="lineitem"), q.format(t="lineitem_columnar")
            cluster.set_mode("off")
            with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
                want = compare.pg_text_result(conn, heap_q)
            for mode in MODES:
                cluster.set_mode(mode)
                r.queries += 1
                with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
                    got = compare.pg_text_result(conn, col_q)
                r.ok() if got == want and got[0] == "ok" else \
                    r.fail(f"columnar {mode}: {col_q[:80]}: {str(got)[:200]} vs heap {str(want)[:200]}")
    finally:
        cluster.set_mode("off")
        with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
            conn.execute("DROP TABLE lineitem_columnar")
    log("citus: columnar copy of lineitem compared in every mode")


# Statements whose coordinator plans vexec vectorizes in force mode, each
# exercising a part of Citus's executor; run in a transaction rolled back.
COORDINATOR_SETUP = [
    "CREATE TABLE local_keys (k int, note text)",
    "INSERT INTO local_keys SELECT g, 'n' || g FROM generate_series(1, 500) g",
    "CREATE TABLE order_totals (o_orderkey int, total numeric)",
    "SELECT create_distributed_table('order_totals', 'o_orderkey', colocate_with => 'orders')",
]
COORDINATOR_QUERIES = [
    # A local table joined to a distributed one, in a subquery: the local rows
    # become intermediate result 1, which the workers read for subplan 2,
    # whose coordinator aggregate is vexec's (Citus finds subplan 2's scan
    # below it to send result 1 to the workers: plan/tree.rs).
    "SELECT * FROM (SELECT l.k, l.note, count(*), sum(o.o_totalprice) FROM local_keys l "
    "JOIN orders o ON l.k = o.o_orderkey GROUP BY l.k, l.note) a ORDER BY 1, 2",
    # A CTE planned as a subplan, read back by a distributed join.
    "WITH top AS (SELECT o_custkey, sum(o_totalprice) AS s FROM orders GROUP BY 1 ORDER BY 2 DESC LIMIT 20) "
    "SELECT c_nationkey, count(*), sum(s) FROM top JOIN customer ON c_custkey = o_custkey GROUP BY 1 ORDER BY 1",
    # INSERT ... SELECT pulled to the coordinator (a GROUP BY not on the distribution column).
    "INSERT INTO order_totals SELECT min(l_orderkey), sum(l_extendedprice) FROM lineitem GROUP BY l_partkey",
    "SELECT count(*), sum(total) FROM order_totals",
    # A router query (one shard) and a repartition join.
    "SELECT o_orderstatus, count(*) FROM orders WHERE o_orderkey = 7 GROUP BY 1",
    "SELECT count(*), sum(l_quantity) FROM lineitem JOIN partsupp ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey",
]


def _coordinator_plans(r: LegResult, cluster: citus.CitusCluster, ds: Dataset) -> None:
    cluster.set_mode("off")
    results = {}
    for mode in ("off", "force"):
        with psycopg.connect(cluster.dsn(citus.citus_name(ds)), autocommit=True) as conn:
            conn.execute("SET citus.enable_repartition_joins = on")
            conn.execute("BEGIN")
            for sql in COORDINATOR_SETUP:
                conn.execute(sql)
            conn.execute(f"SET LOCAL vexec.mode = {mode}")
            results[mode] = [_in_savepoint(conn, q) for q in COORDINATOR_QUERIES]
            if mode == "force":
                plan = str(_in_savepoint(conn, "EXPLAIN (COSTS OFF) " + COORDINATOR_QUERIES[0]))
            conn.execute("ROLLBACK")
    for q, a, b in zip(COORDINATOR_QUERIES, results["off"], results["force"]):
        r.queries += 1
        if not compare.has_order_by(q) and a[0] == b[0] == "ok":
            a, b = ("ok", sorted(a[1], key=str)), ("ok", sorted(b[1], key=str))
        r.ok() if a == b and a[0] == "ok" else r.fail(f"coordinator in force: {q[:70]}: {str(b)[:200]} vs off {str(a)[:200]}")
    r.queries += 1
    # The point of the test: a vector node above Citus's scan on the coordinator.
    r.ok() if "Vec Aggregate" in plan else r.fail("no Vec Aggregate in the coordinator plan:\n" + plan)


def _in_savepoint(conn: psycopg.Connection, q: str) -> tuple:
    """pg_text_result, an error rolled back to a savepoint so the
    transaction goes on."""
    conn.execute("SAVEPOINT q")
    res = compare.pg_text_result(conn, q)
    conn.execute("ROLLBACK TO SAVEPOINT q" if res[0] == "error" else "RELEASE SAVEPOINT q")
    return res


def _worker_without_vexec(r: LegResult, cluster: citus.CitusCluster, ds: Dataset) -> None:
    db = citus.citus_name(ds)
    plain = cluster.workers[-1]
    queries = [q for nr, q in tpch.queries() if nr in (1, 3, 5, 6, 10, 12)]
    cluster.set_mode("off")
    with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
        want = [compare.pg_text_result(conn, q) for q in queries]
    plain.stop()
    plain.start(preload=False)
    try:
        cluster.mode = None
        cluster.set_mode("force")
        with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
            for q, w in zip(queries, want):
                r.queries += 1
                got = compare.pg_text_result(conn, q)
                r.ok() if got == w else r.fail(f"worker without vexec, force: {q[:60]}: {str(got)[:200]}")
            conn.execute("SET citus.explain_all_tasks = on")
            lines = [row[0] for row in conn.execute("EXPLAIN (COSTS OFF) " + WORKER_AGG)]
        # Per task: its node line, then its plan; Vec nodes only under the
        # worker that has vexec.
        vec_by_port: dict[int, int] = {}
        port = None
        for line in lines:
            m = re.search(r"Node: host=\S+ port=(\d+)", line)
            if m:
                port = int(m.group(1))
                vec_by_port.setdefault(port, 0)
            elif port is not None and re.search(r"\bVec ", line):
                vec_by_port[port] += 1
        r.queries += 1
        with_vexec = [w.port for w in cluster.workers if w is not plain]
        if vec_by_port.get(plain.port) == 0 and all(vec_by_port.get(p, 0) > 0 for p in with_vexec):
            r.ok()
            r.notes.append(f"worker without vexec: Vec nodes per worker port {vec_by_port}")
        else:
            r.fail(f"worker without vexec: Vec nodes per worker port {vec_by_port}")
    finally:
        plain.stop()
        plain.start(preload=True)
        cluster.mode = None
        cluster.set_mode("off")

"""Leg `insert`: VecInsert against PostgreSQL's ModifyTable.

- The corpora's queries as `INSERT INTO <table> SELECT * FROM (<query>)`,
  mode off then force, each into a fresh table: the same row count (or
  error) and the same contents.
- Four sessions inserting into one keyed table at once, in force mode: every
  row there, the indexes agree with the heap (amcheck).
- WAL: pg_waldump reads every record a VecInsert wrote, multi-insert
  records among them; a table that skips WAL (created by the inserting
  transaction, wal_level = minimal) is written through the bulk-write ring.
- A crash: the backend of a large VecInsert is killed with SIGKILL; after
  crash recovery the table holds none of the statement and its indexes
  agree with the heap; a statement committed before the crash is all there.
"""

import os
import subprocess
import threading
import time

import psycopg

from vexecbench import datasets, tpcds, tpch
from vexecbench.cluster import Cluster
from vexecbench.datasets import Dataset

from .legs import LegResult, log

CONTENTS = ("SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) "
            "FROM leg_insert_target t")


def _outcome(conn, stmt: str) -> tuple:
    try:
        cur = conn.execute(stmt)
        return ("ok", cur.rowcount)
    except psycopg.Error as e:
        return ("error", e.sqlstate, e.diag.message_primary, e.diag.message_detail)


def _corpus(cluster: Cluster, r: LegResult, ds: Dataset, queries: list[tuple[str, str]]) -> None:
    used = 0
    with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as conn:
        conn.execute("SET statement_timeout = '300s'")
        for name, q in queries:
            q = q.strip().rstrip(";").strip()
            try:
                conn.execute("SET vexec.mode = off")
                cur = conn.execute(f"SELECT * FROM ({q}) x LIMIT 0")
                ncols = len(cur.description)
            except psycopg.Error as e:
                r.skip(f"{ds.name} {name}: not a query INSERT can take ({e.sqlstate})")
                continue
            r.queries += 1
            aliases = ", ".join(f"c{i}" for i in range(ncols))
            source = f"SELECT * FROM ({q}) x({aliases})"
            results = {}
            for mode in ("off", "force"):
                conn.execute("SET vexec.mode = off")
                conn.execute("DROP TABLE IF EXISTS leg_insert_target")
                conn.execute(f"CREATE TABLE leg_insert_target AS {source} WITH NO DATA")
                conn.execute(f"SET vexec.mode = {mode}")
                stmt = f"INSERT INTO leg_insert_target {source}"
                if mode == "force":
                    plan = "\n".join(row[0] for row in conn.execute(f"EXPLAIN (COSTS OFF) {stmt}"))
                    used += "Vec Insert" in plan
                outcome = _outcome(conn, stmt)
                conn.execute("SET vexec.mode = off")
                results[mode] = (outcome, conn.execute(CONTENTS).fetchone())
            if results["off"] == results["force"]:
                r.ok()
            else:
                r.fail(f"{ds.name} {name}: off {str(results['off'])[:200]} vs force {str(results['force'])[:200]}")
        conn.execute("DROP TABLE IF EXISTS leg_insert_target")
    r.notes.append(f"{ds.name}: VecInsert in {used} force plans")


def _concurrent(cluster: Cluster, r: LegResult, db: str, sessions: int = 4, rows: int = 50_000) -> None:
    r.queries += 1
    with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS leg_insert_shared")
        conn.execute("CREATE TABLE leg_insert_shared (id bigint PRIMARY KEY, s int, t text UNIQUE, "
                     "d timestamptz DEFAULT now())")
    errors = []

    def work(k: int) -> None:
        try:
            with psycopg.connect(cluster.dsn(db), autocommit=True) as c:
                c.execute("SET vexec.mode = force")
                for part in range(4):
                    lo = k * rows + part * rows // 4
                    c.execute("INSERT INTO leg_insert_shared (id, s, t) SELECT g, %s, 'k' || g "
                              "FROM generate_series(%s::bigint, %s::bigint) g", (k, lo, lo + rows // 4 - 1))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"session {k}: {e}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        n, ids, per = conn.execute("SELECT count(*), count(DISTINCT id), count(DISTINCT s) FROM leg_insert_shared").fetchone()
        for idx in ("leg_insert_shared_pkey", "leg_insert_shared_t_key"):
            conn.execute("SELECT bt_index_check(%s::regclass, true)", (idx,))
        conn.execute("DROP TABLE leg_insert_shared")
    if errors or (n, ids, per) != (sessions * rows, sessions * rows, sessions):
        r.fail(f"{sessions} concurrent sessions: {errors[:2]} rows {n}, ids {ids}, sessions {per}")
    else:
        r.ok()


def _wal(cluster: Cluster, r: LegResult, db: str) -> None:
    r.queries += 1
    with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS leg_insert_wal")
        conn.execute("CREATE TABLE leg_insert_wal (id int PRIMARY KEY, t text)")
        conn.execute("CHECKPOINT")
        start = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
        conn.execute("SET vexec.mode = force")
        conn.execute("INSERT INTO leg_insert_wal SELECT g, repeat('x', g % 300) FROM generate_series(1, 100000) g")
        end = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
        conn.execute("SELECT pg_switch_wal()")  # the records are on disk
        conn.execute("DROP TABLE leg_insert_wal")
    p = subprocess.run([os.path.join(cluster.bindir, "pg_waldump"), "--path", os.path.join(cluster.datadir, "pg_wal"),
                        "--start", str(start), "--end", str(end), "--stats=record"],
                       capture_output=True, text=True)
    multi = [line for line in p.stdout.splitlines() if "MULTI_INSERT" in line]
    if p.returncode != 0 or not multi:
        r.fail(f"pg_waldump {start}..{end}: exit {p.returncode}, {p.stderr.strip()[:300]}; "
               f"multi-insert records: {multi[:1]}")
    else:
        r.ok()
        r.notes.append("WAL of a 100,000-row VecInsert: " + " ".join(multi[0].split()[:3]))


def _ring(cluster: Cluster, r: LegResult, db: str, rows: int = 1_000_000) -> None:
    """Under wal_level = minimal a table created by the inserting transaction
    skips WAL and is written out whole at commit: VecInsert then keeps to
    the bulk-write ring of buffers (as COPY does) instead of filling shared
    buffers with it; into a table created before, it goes through shared
    buffers as ModifyTable's rows do."""
    r.queries += 1
    fill = "INSERT INTO {} SELECT g, repeat('x', 200) FROM generate_series(1, %d) g" % rows
    cached = ("SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode('{0}') "
              "AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())")
    pages = "SELECT pg_relation_size('{}') / 8192"
    with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
        conn.execute("SET vexec.mode = force")
        conn.execute("DROP TABLE IF EXISTS leg_insert_new, leg_insert_old")
        conn.execute("CREATE TABLE leg_insert_old (id int, t text)")
        with conn.transaction():
            conn.execute("CREATE TABLE leg_insert_new (id int, t text)")
            got = {}
            for t in ("leg_insert_new", "leg_insert_old"):
                conn.execute(fill.format(t))
                got[t] = (conn.execute(cached.format(t)).fetchone()[0], conn.execute(pages.format(t)).fetchone()[0])
        wal_level = conn.execute("SHOW wal_level").fetchone()[0]
        kept = conn.execute("SELECT count(*), sum(id) FROM leg_insert_new").fetchone()
        conn.execute("DROP TABLE leg_insert_new, leg_insert_old")
    (new_cached, new_pages), (old_cached, old_pages) = got["leg_insert_new"], got["leg_insert_old"]
    summary = (f"wal_level {wal_level}; {new_cached:,} of a new table's {new_pages:,} pages in shared buffers, "
               f"{old_cached:,} of an older table's {old_pages:,}")
    if (wal_level == "minimal" and new_cached < new_pages // 4 and old_cached >= old_pages
            and kept == (rows, rows * (rows + 1) // 2)):
        r.ok()
        r.notes.append(summary)
    else:
        r.fail(f"{summary}; rows kept {kept}")


def _wait_ready(cluster: Cluster, db: str, timeout_s: float = 120) -> None:
    deadline = time.time() + timeout_s
    while True:
        try:
            with psycopg.connect(cluster.dsn(db), autocommit=True) as c:
                c.execute("SELECT 1")
                return
        except psycopg.Error:
            if time.time() > deadline:
                raise
            time.sleep(0.5)


def _crash(cluster: Cluster, r: LegResult, db: str, rows: int) -> None:
    r.queries += 1
    with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        conn.execute("DROP TABLE IF EXISTS leg_insert_crash")
        conn.execute("CREATE TABLE leg_insert_crash (id int PRIMARY KEY, t text, n numeric)")
        conn.execute("SET vexec.mode = force")
        conn.execute("INSERT INTO leg_insert_crash SELECT g, 'before ' || g, g FROM generate_series(1, 1000) g")
    victim = psycopg.connect(cluster.dsn(db), autocommit=True)
    pid = victim.execute("SELECT pg_backend_pid()").fetchone()[0]
    victim.execute("SET vexec.mode = force")
    failure = []

    def insert() -> None:
        try:
            victim.execute("INSERT INTO leg_insert_crash SELECT g, md5(g::text), g * 1.5 "
                           "FROM generate_series(1001, %s) g", (rows,))
            failure.append("the insert finished before the kill")
        except psycopg.Error:
            pass  # the connection dies with its backend

    t = threading.Thread(target=insert)
    t.start()
    # Kill it once it has written a good part of the rows.
    with psycopg.connect(cluster.dsn(db), autocommit=True) as watch:
        deadline = time.time() + 120
        while time.time() < deadline:
            pages = watch.execute("SELECT pg_relation_size('leg_insert_crash') / 8192").fetchone()[0]
            if pages > 2000:
                break
            time.sleep(0.05)
    os.kill(pid, 9)
    t.join()
    victim.close()
    _wait_ready(cluster, db)
    with psycopg.connect(cluster.dsn(db), autocommit=True) as conn:
        n, lo, hi = conn.execute("SELECT count(*), min(id), max(id) FROM leg_insert_crash").fetchone()
        conn.execute("SELECT bt_index_check('leg_insert_crash_pkey', true)")
        conn.execute("SELECT verify_heapam('leg_insert_crash')")
        conn.execute("DROP TABLE leg_insert_crash")
    if failure or (n, lo, hi) != (1000, 1, 1000):
        r.fail(f"crash during a VecInsert: {failure} {n} rows ({lo}..{hi}) after recovery, expected 1000")
    else:
        r.ok()
        r.notes.append(f"crash: backend killed after {pages} pages of {rows:,} rows; after recovery the "
                       "committed 1,000 rows only, indexes and heap verified")


def leg_insert(cluster: Cluster, state: str, full: bool) -> LegResult:
    r = LegResult("insert" + ("" if full else " (slice)"))
    sf = 1.0 if full else 0.1
    for kind, qs in (("tpch", [(f"Q{n}", q) for n, q in tpch.queries()]),
                     ("tpcds", [(f"Q{n}", q) for n, q in tpcds.queries()])):
        ds = Dataset(kind, sf)
        datasets.ensure_loaded(cluster, state, ds, seed=1)
        log(f"insert: {kind} SF {sf} queries as INSERT ... SELECT, off vs force")
        _corpus(cluster, r, ds, qs if full or kind == "tpch" else qs[:30])
    db = Dataset("tpch", sf).name
    log("insert: concurrent sessions, WAL, crash")
    _concurrent(cluster, r, db)
    _wal(cluster, r, db)
    _ring(cluster, r, db)
    _crash(cluster, r, db, 3_000_000 if full else 1_000_000)
    return r

"""A local Citus cluster on PostgreSQL 18 (Citus does not support 19): a
coordinator and two workers on loopback ports, `citus,vexec` preloaded on
every node, and distributed TPC-H loaded through the coordinator.

Distribution (the usual TPC-H layout for Citus): lineitem and orders by order
key, co-located; customer by customer key; partsupp by part key; part,
supplier, nation and region as reference tables (a copy on every node). The
same rows are also loaded into plain tables of a second database on the
coordinator (no Citus extension there), so single-node PostgreSQL 18 with
vexec runs on the same server, with the same settings.

vexec's mode reaches the workers' sessions through the server settings of
every node (`set_mode`: ALTER SYSTEM and a reload on each node); the other
ways (SET LOCAL with citus.propagate_set_commands, ALTER ROLE ... SET) are in
docs/citus.md and tested by the check leg.
"""

import os
import time

import duckdb
import psycopg

from . import datasets, tpch
from .cluster import Cluster
from .datasets import Dataset

BINDIR = "/usr/lib/postgresql/18/bin"
NODES = ("coordinator", "worker1", "worker2")
# Shards per distributed table: 8 (4 per worker) keeps a shard of SF 1's
# lineitem at 750,000 rows, enough for batches to matter, and the tasks of a
# query at a number two cores can run.
SHARD_COUNT = 8

# Server settings of every node, over the benchmark cluster's: the nodes
# talk over loopback TCP, three servers share 24 GiB, and the adaptive
# executor opens a connection per task.
NODE_SETTINGS = {
    "listen_addresses": "'localhost'",
    "shared_buffers": "2GB",
    "effective_cache_size": "6GB",
    "max_connections": "100",
    "max_worker_processes": "16",
    "wal_level": "logical",   # Citus's shard moves; it warns at start otherwise
    "max_wal_senders": "10",
    "citus.shard_count": str(SHARD_COUNT),
}

# Settings applied with ALTER SYSTEM at every start (so existing clusters get
# them too): joins on other columns than the distribution key, most of
# TPC-H's, are repartitioned between the workers instead of refused.
RUNTIME_SETTINGS = {"citus.enable_repartition_joins": "on"}

DISTRIBUTION = {
    "orders": ("o_orderkey", None),
    "lineitem": ("l_orderkey", "orders"),   # created after orders (SCHEMA's order)
    "customer": ("c_custkey", None),
    "partsupp": ("ps_partkey", None),
}
REFERENCE = ("part", "supplier", "nation", "region")


def log(msg: str) -> None:
    print(f"[citus] {msg}", flush=True)


class CitusCluster:
    """Three PostgreSQL 18 servers under `state`/citus; `base_port` and the
    next two ports. Quacks like `Cluster` for the benchmark runner: dsn()
    points at the coordinator, start()/stop() handle all three nodes."""

    def __init__(self, state: str, base_port: int = 5531, bindir: str = BINDIR):
        root = os.path.join(state, "citus")
        self.nodes = [Cluster(bindir, os.path.join(root, n), base_port + i, libraries=("citus",),
                              settings=NODE_SETTINGS) for i, n in enumerate(NODES)]
        self.coordinator = self.nodes[0]
        self.workers = self.nodes[1:]
        self.datadir = self.coordinator.datadir
        self.port = self.coordinator.port
        self.mode: str | None = None

    def dsn(self, db: str, user: str | None = None) -> str:
        return self.coordinator.dsn(db, user)

    def start(self, preload: bool = True) -> None:
        """Start the nodes that are not running with this preload (the
        benchmark runner calls it before every session)."""
        for n in self.nodes:
            n.ensure_initialized()
        for n in self.nodes:
            if n.running() and n.preload == preload:
                continue
            n.start(preload)
            with psycopg.connect(n.dsn("postgres"), autocommit=True) as c:
                for k, v in RUNTIME_SETTINGS.items():
                    c.execute(f"ALTER SYSTEM SET {k} = {v}")
                c.execute("SELECT pg_reload_conf()")
            self.mode = None   # a restarted node's mode is its configuration's

    def stop(self) -> None:
        for n in reversed(self.nodes):
            n.stop()

    def settings(self, db: str) -> dict[str, str]:
        s = self.coordinator.settings(db)
        s["nodes"] = f"Citus coordinator + {len(self.workers)} workers, {SHARD_COUNT} shards per table"
        return s

    def before_session(self, mode: str) -> None:
        if mode in ("off", "auto", "force"):
            self.set_mode(mode)

    def set_mode(self, mode: str) -> None:
        """vexec.mode on every node (ALTER SYSTEM, then a reload): the
        workers' sessions, cached connections included, take it at their
        next command."""
        if mode == self.mode:
            return
        for n in self.nodes:
            with psycopg.connect(n.dsn("postgres"), autocommit=True) as c:
                c.execute(f"ALTER SYSTEM SET vexec.mode = {mode}")
                c.execute("SELECT pg_reload_conf()")
        # A reload is asynchronous: wait until a new session of each node sees it.
        for n in self.nodes:
            for _ in range(100):
                with psycopg.connect(n.dsn("postgres"), autocommit=True) as c:
                    if c.execute("SHOW vexec.mode").fetchone()[0] == mode:
                        break
                time.sleep(0.05)
            else:
                raise RuntimeError(f"{n.datadir}: vexec.mode did not become {mode}")
        self.mode = mode

    def create_database(self, db: str) -> None:
        """`db` on every node with the citus extension; the coordinator knows
        the workers. vexec's extension (its SQL functions; planning needs
        only the preloaded library) is created on the coordinator, and Citus
        creates it on the workers, as it does for any extension."""
        for n in self.nodes:
            with psycopg.connect(n.dsn("postgres"), autocommit=True) as c:
                _drop_database(c, db)
                c.execute(f"CREATE DATABASE {db}")
            with psycopg.connect(n.dsn(db), autocommit=True) as c:
                c.execute("CREATE EXTENSION citus")
        with psycopg.connect(self.coordinator.dsn(db), autocommit=True) as c:
            c.execute("SELECT citus_set_coordinator_host('localhost', %s)", (self.coordinator.port,))
            for w in self.workers:
                c.execute("SELECT citus_add_node('localhost', %s)", (w.port,))
            c.execute("CREATE EXTENSION vexec")
        for w in self.workers:
            with psycopg.connect(w.dsn(db), autocommit=True) as c:
                if not c.execute("SELECT 1 FROM pg_extension WHERE extname = 'vexec'").fetchone():
                    raise RuntimeError(f"Citus did not create the vexec extension on {w.datadir}")


def _drop_database(c: psycopg.Connection, db: str) -> None:
    """DROP DATABASE, after Citus's maintenance daemon (a background worker
    that WITH (FORCE) does not end) has been terminated; it may come back
    for a moment, hence the retries."""
    for attempt in range(50):
        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                  "WHERE datname = %s AND pid <> pg_backend_pid()", (db,))
        try:
            c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
            return
        except psycopg.errors.ObjectInUse:
            if attempt == 49:
                raise
            time.sleep(0.2)


def citus_name(ds: Dataset) -> str:
    return "citus_" + ds.name


def loaded_version(cluster: CitusCluster, ds: Dataset) -> str | None:
    try:
        with psycopg.connect(cluster.dsn(citus_name(ds)), autocommit=True) as c:
            row = c.execute("SELECT version FROM bench_meta").fetchone()
            return row[0] if row else None
    except psycopg.Error:
        return None


def ensure_loaded(cluster: CitusCluster, state: str, ds: Dataset, seed: int = 1) -> None:
    """Distributed TPC-H in database citus_<name>, and the same rows in plain
    tables of database <name> on the coordinator, unless already there."""
    assert ds.kind == "tpch", "the Citus cluster has TPC-H only"
    datasets.ensure_loaded(cluster.coordinator, state, ds, seed)
    want = ds.version + f":seed={seed}:shards={SHARD_COUNT}:v2"
    db = citus_name(ds)
    if loaded_version(cluster, ds) == want:
        log(f"{ds.label}: already distributed in database {db}")
        return
    t0 = time.time()
    cluster.create_database(db)
    src = datasets.ensure_duckdb(state, ds, seed)
    csv_dir = os.path.join(state, "data", "csv")
    os.makedirs(csv_dir, exist_ok=True)
    con = duckdb.connect(src, read_only=True)
    with psycopg.connect(cluster.dsn(db), autocommit=True) as pg:
        # (Not in a schema named after the user, such as vexec's own.)
        pg.execute("SET search_path = public")
        for table in tpch.SCHEMA:
            pg.execute(tpch.SCHEMA[table].rstrip(")") + f", PRIMARY KEY ({tpch.PRIMARY_KEYS[table]}))")
            if table in REFERENCE:
                pg.execute("SELECT create_reference_table(%s)", (table,))
            else:
                column, colocate = DISTRIBUTION[table]
                pg.execute("SELECT create_distributed_table(%s, %s, colocate_with => %s)",
                           (table, column, colocate or "default"))
        for table in tpch.SCHEMA:
            csv = os.path.join(csv_dir, f"{db}.{table}.csv")
            con.execute(f"COPY {table} TO '{csv}' (FORMAT csv, HEADER false)")
            t1 = time.time()
            # COPY through the coordinator: Citus routes each row to its shard.
            pg.execute(f"COPY {table} FROM '{csv}' WITH (FORMAT csv)")
            os.remove(csv)
            log(f"{table}: copied in {time.time() - t1:.0f} s")
        for sql in tpch.FOREIGN_KEY_INDEXES:
            pg.execute(sql)
        # Named: Citus sends VACUUM of a distributed table to its shards.
        pg.execute("VACUUM (ANALYZE) " + ", ".join(tpch.SCHEMA))
        pg.execute("CREATE TABLE bench_meta (version text)")
        pg.execute("INSERT INTO bench_meta VALUES (%s)", (want,))
    con.close()
    log(f"{ds.label}: distributed in {time.time() - t0:.0f} s")


def main(argv=None) -> int:
    """python -m vexecbench.citus {start,stop,status} --state DIR [--sf SF]"""
    import argparse
    p = argparse.ArgumentParser(prog="vexecbench.citus", description=main.__doc__)
    p.add_argument("cmd", choices=("start", "stop", "status"))
    p.add_argument("--state", required=True)
    p.add_argument("--sf", type=float, default=0.1)
    args = p.parse_args(argv)
    cluster = CitusCluster(args.state)
    if args.cmd == "stop":
        cluster.stop()
        log("stopped")
        return 0
    if args.cmd == "status":
        for n in cluster.nodes:
            print(f"{os.path.basename(n.datadir)}: port {n.port}, {'running' if n.running() else 'stopped'}")
        return 0
    cluster.start(preload=True)
    ds = Dataset("tpch", args.sf)
    ensure_loaded(cluster, args.state, ds)
    log(f"running: coordinator psql -h {cluster.coordinator.datadir} -p {cluster.port} -d {citus_name(ds)}; "
        f"single-node tables in database {ds.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Data sets: generate once (DuckDB), load into PostgreSQL heap tables, reuse.

A data set lives in its own PostgreSQL database (`hits_1m`, `tpch_sf0_1`, ...)
and its own DuckDB file. A marker table `bench_meta` records what was loaded
(generator version, size, primary keys), so a second run with the same
parameters reuses the data and a changed generator reloads it.
"""

import os
import threading
import time
from dataclasses import dataclass

import duckdb
import psycopg

from . import hits, tpcds, tpch
from .cluster import Cluster

# ClickBench's official schema and queries (copied from shared/clickbench).
CLICKBENCH_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "clickbench")


@dataclass
class Dataset:
    kind: str          # "clickbench" | "tpch" | "tpcds" | "scan" | "agg"
    size: float        # rows for clickbench, scale factor for tpch and tpcds
    pk: bool = False   # hits: load with ClickBench's primary key (TPC-H always has its keys)

    @property
    def name(self) -> str:
        if self.kind in ("scan", "agg"):
            return f"{self.kind}_{int(self.size) // 1_000_000}m"
        if self.kind == "clickbench":
            n = int(self.size)
            label = f"{n // 1_000_000}m" if n % 1_000_000 == 0 else str(n)
            base = f"hits_{label}"
        else:
            return self.kind + "_sf" + str(self.size).replace(".", "_")
        return base + ("_pk" if self.pk else "")

    @property
    def label(self) -> str:
        if self.kind == "scan":
            return f"scan table, {int(self.size):,} rows"
        if self.kind == "agg":
            return f"aggregation table, {int(self.size):,} rows"
        if self.kind == "clickbench":
            return f"ClickBench hits-shaped, {int(self.size):,} rows" + (", primary key" if self.pk else "")
        return f"{'TPC-DS' if self.kind == 'tpcds' else 'TPC-H'} SF {self.size}"

    @property
    def version(self) -> str:
        gen = {"clickbench": str(hits.GENERATOR_VERSION), "scan": "1", "agg": "1",
               "tpcds": "dsdgen-duckdb-" + duckdb.__version__}.get(self.kind, "dbgen-duckdb-" + duckdb.__version__)
        keys = self.pk if self.kind == "clickbench" else "keys+fk2"
        return f"{self.kind}:{self.size}:{gen}:pk={keys}"


def log(msg: str) -> None:
    print(f"[bench] {msg}", flush=True)


def duckdb_path(state_dir: str, ds: Dataset) -> str:
    # DuckDB gets the same rows; keys do not change its data.
    return os.path.join(state_dir, "data", Dataset(ds.kind, ds.size).name + ".duckdb")


def ensure_duckdb(state_dir: str, ds: Dataset, seed: int) -> str:
    """The DuckDB file of the data set (and its Parquet export for hits)."""
    path = duckdb_path(state_dir, ds)
    stamp = path + ".version"
    want = Dataset(ds.kind, ds.size).version + f":seed={seed}"
    if os.path.exists(path) and os.path.exists(stamp) and open(stamp).read() == want:
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    t0 = time.time()
    if ds.kind == "tpch":
        log(f"generating TPC-H SF {ds.size} with DuckDB's dbgen")
        tpch.generate(path, ds.size)
    elif ds.kind == "tpcds":
        log(f"generating TPC-DS SF {ds.size} with DuckDB's dsdgen")
        tpcds.generate(path, ds.size)
    else:
        log(f"generating {int(ds.size):,} hits rows (seed {seed})")
        if os.path.exists(path):
            os.remove(path)
        con = duckdb.connect(path)
        for m in hits.macros(seed):
            con.execute(m)
        create = open(os.path.join(CLICKBENCH_DIR, "create.sql")).read()
        con.execute(create)
        con.execute("INSERT INTO hits " + hits.select_sql(int(ds.size)))
        parquet = path.replace(".duckdb", ".parquet")
        con.execute(f"COPY hits TO '{parquet}' (FORMAT parquet)")
        con.close()
    with open(stamp, "w") as f:
        f.write(want)
    log(f"generated in {time.time() - t0:.0f} s")
    return path


def tables(ds: Dataset, con: duckdb.DuckDBPyConnection) -> list[str]:
    if ds.kind == "tpcds":
        return tpcds.tables(con)
    return ["hits"] if ds.kind == "clickbench" else list(tpch.SCHEMA)


def _create_sql(ds: Dataset, table: str, con: duckdb.DuckDBPyConnection) -> str:
    if ds.kind == "tpcds":
        return tpcds.create_sql(con, table)
    if ds.kind == "clickbench":
        sql = open(os.path.join(CLICKBENCH_DIR, "create.sql")).read().strip().rstrip(";")
        if ds.pk:
            # ClickBench's tuned PostgreSQL entries key hits like this.
            sql = sql.rstrip().rstrip(")") + ",\n    PRIMARY KEY (CounterID, EventDate, UserID, EventTime, WatchID)\n)"
        return sql
    return tpch.SCHEMA[table].rstrip(")") + f", PRIMARY KEY ({tpch.PRIMARY_KEYS[table]}))"


def loaded_version(cluster: Cluster, ds: Dataset) -> str | None:
    try:
        with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as c:
            row = c.execute("SELECT version FROM bench_meta").fetchone()
            return row[0] if row else None
    except psycopg.Error:
        return None


def ensure_loaded(cluster: Cluster, state_dir: str, ds: Dataset, seed: int) -> None:
    """Load the data set into PostgreSQL unless the same version is there."""
    want = ds.version + f":seed={seed}"
    if loaded_version(cluster, ds) == want:
        log(f"{ds.label}: already loaded in database {ds.name}")
        _ensure_all_visible(cluster, ds)
        return
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {ds.name}")
        c.execute(f"CREATE DATABASE {ds.name}")
    if ds.kind == "scan":
        _load_scan(cluster, ds, want, SCAN_TABLE)
        return
    if ds.kind == "agg":
        _load_scan(cluster, ds, want, AGG_TABLE)
        return
    src = ensure_duckdb(state_dir, ds, seed)
    csv_dir = os.path.join(state_dir, "data", "csv")
    os.makedirs(csv_dir, exist_ok=True)
    con = duckdb.connect(src, read_only=True)
    t_all = time.time()
    with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as pg:
        for table in tables(ds, con):
            pg.execute(_create_sql(ds, table, con))
            total = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            csv = os.path.join(csv_dir, f"{ds.name}.{table}.csv")
            con.execute(f"COPY {table} TO '{csv}' (FORMAT csv, HEADER false)")
            _copy_with_progress(cluster, ds.name, table, csv, total)
            os.remove(csv)
        if ds.kind == "tpch":
            log("foreign-key indexes")
            for sql in tpch.FOREIGN_KEY_INDEXES:
                pg.execute(sql)
        log("VACUUM ANALYZE")
        pg.execute("VACUUM (ANALYZE)")
        pg.execute("CREATE TABLE bench_meta (version text)")
        pg.execute("INSERT INTO bench_meta VALUES (%s)", (want,))
    log(f"{ds.label}: loaded in {time.time() - t_all:.0f} s")


# The scan benchmark's table: int4, int8, float8, date and text columns.
# `a` is spread over 0..999999, `d` over four years, `s` has 20 keys of 5 %.
SCAN_TABLE = """
CREATE TABLE t AS SELECT
  ((g::bigint * 7919) % 1000000)::int AS a,
  g::bigint * 3 AS b,
  (g % 100000) / 3.0::float8 AS c,
  date '2020-01-01' + ((g::bigint * 31) % 1461)::int AS d,
  'key' || ((g::bigint * 13) % 20) AS s,
  md5(g::text) AS u
FROM generate_series(1, {rows}) g
"""

# Its three queries (the VecScan issue's benchmark): a 1 % int and date
# range under count(*), a 5 % text equality under two sums, a selective
# SELECT *.
SCAN_QUERIES = [
    ("S1", "SELECT count(*) FROM t WHERE a BETWEEN 100000 AND 199999 AND d >= '2021-01-01' AND d < '2021-05-27'"),
    ("S2", "SELECT sum(a), sum(b) FROM t WHERE s = 'key7'"),
    ("S3", "SELECT * FROM t WHERE a = 123456"),
]


# The aggregation benchmark's table (the VecAgg issue's cases): group keys
# with 10, 10,000 and 5,000,000 distinct values spread over the table, an
# int4 and a float8 to sum and average, `u` with 2,000,000 distinct values
# for count(DISTINCT), and `ks`, a short text key with 50 values.
AGG_TABLE = """
CREATE TABLE t AS SELECT
  (g % 10)::int AS k10,
  ((g::bigint * 7919) % 10000)::int AS k10k,
  ((g::bigint * 104729) % 5000000)::int AS k5m,
  (g % 1000)::int AS x,
  (g % 977) / 7.0::float8 AS y,
  ((g::bigint * 31) % 2000000)::int AS u,
  'k' || (g % 50) AS ks
FROM generate_series(1, {rows}) g
"""

AGG_QUERIES = [
    ("A1", "SELECT k10, count(*), sum(x), avg(y) FROM t GROUP BY k10"),
    ("A2", "SELECT k10k, count(*), sum(x), avg(y) FROM t GROUP BY k10k"),
    ("A3", "SELECT k5m, count(*), sum(x), avg(y) FROM t GROUP BY k5m"),
    ("A4", "SELECT count(DISTINCT u) FROM t"),
    ("A5", "SELECT ks, count(DISTINCT u) FROM t GROUP BY ks"),
    # A3 with a small work_mem: the hash tables spill (the issue asks for
    # its peak backend memory, sampled for every agg query).
    ("A3m", "SET work_mem = '4MB'; SELECT k5m, count(*), sum(x), avg(y) FROM t GROUP BY k5m"),
]


def _ensure_all_visible(cluster: Cluster, ds: Dataset) -> None:
    """VACUUM the tables whose pages are not all marked all-visible (a
    crash or an old snapshot during the load leaves them so): every scan of
    them would check each tuple's visibility, in every configuration."""
    with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as pg:
        rows = pg.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> 'bench_meta' "
            "AND c.relallvisible < c.relpages"
        ).fetchall()
        for (rel,) in rows:
            log(f"VACUUM {rel} (not all pages all-visible)")
            pg.execute(f'VACUUM "{rel}"')


def _load_scan(cluster: Cluster, ds: Dataset, version: str, table: str) -> None:
    """Generate a benchmark table from its CREATE TABLE AS in PostgreSQL."""
    t0 = time.time()
    log(f"generating {ds.label} in PostgreSQL")
    with psycopg.connect(cluster.dsn(ds.name), autocommit=True) as pg:
        pg.execute(table.format(rows=int(ds.size)))
        pg.execute("VACUUM (ANALYZE) t")
        pg.execute("CREATE TABLE bench_meta (version text)")
        pg.execute("INSERT INTO bench_meta VALUES (%s)", (version,))
    log(f"{ds.label}: loaded in {time.time() - t0:.0f} s")


def _copy_with_progress(cluster: Cluster, db: str, table: str, csv: str, total: int) -> None:
    """Server-side COPY of a CSV file, printing rows/s and percentage."""
    err: list[BaseException] = []

    def run() -> None:
        try:
            with psycopg.connect(cluster.dsn(db), autocommit=True) as c:
                c.execute(f"COPY {table} FROM '{csv}' WITH (FORMAT csv)")
        except BaseException as e:  # reported by the main thread
            err.append(e)

    t = threading.Thread(target=run)
    t0 = time.time()
    t.start()
    with psycopg.connect(cluster.dsn(db), autocommit=True) as mon:
        while t.is_alive():
            t.join(timeout=5)
            row = mon.execute("SELECT tuples_processed FROM pg_stat_progress_copy WHERE relid = %s::regclass",
                              (table,)).fetchone()
            if row and t.is_alive() and total:
                done = row[0]
                rate = done / max(time.time() - t0, 1e-9)
                print(f"\r[bench] {table}: {done:,}/{total:,} rows ({100 * done / total:.0f}%), "
                      f"{rate:,.0f} rows/s   ", end="", flush=True)
    if err:
        raise err[0]
    el = time.time() - t0
    print(f"\r[bench] {table}: {total:,} rows in {el:.0f} s ({total / max(el, 1e-9):,.0f} rows/s)        ",
          flush=True)

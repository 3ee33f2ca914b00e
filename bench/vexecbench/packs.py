"""The kernel pack benchmark (`python -m vexecbench packs`, `make bench-packs`):
pgvector's functions through vexec_pgvector against PostgreSQL's row
executor, with `vexec.mode` at each of `--modes`, side by side in each
session, no parallel workers:

- `knn-l2`, `knn-cos`: exact kNN without an index,
  `SELECT id FROM items ORDER BY emb <-> q LIMIT 10` (and `<=>`);
- `range`: `SELECT count(*) FROM items WHERE emb <-> q < r`.

`items`: `--rows` rows of `--dims`-dimension vectors of random() values
(setseed), no index, made once per size in database `packs`.

PostGIS through vexec_postgis (`--packs postgis`), on `--rows` random points
in a 100 x 100 square (SRID 4326) and `--rows / 10` squares of side 0.1:

- `box`: `count(*) WHERE geom && envelope` (about 1% of the points);
- `dwithin`: `count(*) WHERE ST_DWithin(geom, point, 5)`;
- `intersects`: `count(*) WHERE ST_Intersects(geom, polygon)` (a triangle
  over about 1% of the points: the others' boxes are disjoint from it);
- `join`: `count(*)` of squares joined to the points by `ST_Intersects`, with
  a GiST index on the points (no hash join is possible: whatever plan the
  planner takes, with its time).

Every mode's answer is checked against the first mode's. Results: one CSV
row per run."""

import csv
import os
import re
import time

import psycopg

from .cluster import Cluster

DB = "packs"


def _query_vector(conn, dims: int) -> str:
    conn.execute("SELECT setseed(0.5)")
    return conn.execute(f"SELECT array_agg(round(random()::numeric, 4))::vector::text "
                        f"FROM generate_series(1, {dims})").fetchone()[0]


def _ensure_table(cluster: Cluster, rows: int, dims: int) -> str:
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as c:
        if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB]).fetchone():
            c.execute(f"CREATE DATABASE {DB}")
    table = f"items_{rows}_{dims}"
    with psycopg.connect(cluster.dsn(DB), autocommit=True) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS vector")
        have = c.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table]).fetchone()
        if have and have[0] == rows:
            return table
        print(f"[bench] packs: making {table} ({rows:,} rows of {dims} dimensions)", flush=True)
        c.execute(f"DROP TABLE IF EXISTS {table}")
        c.execute(f"CREATE TABLE {table} (id int, emb vector({dims}))")
        c.execute("SELECT setseed(0.25)")
        c.execute(f"INSERT INTO {table} SELECT i, (SELECT array_agg(random()::float4) "
                  f"FROM generate_series(1, {dims}) WHERE i > 0)::vector FROM generate_series(1, {rows}) i")
        c.execute(f"VACUUM ANALYZE {table}")
    return table


def _pgvector_cases(cluster: Cluster, rows: int, dims: int) -> dict[str, tuple[str, list[str]]]:
    table = _ensure_table(cluster, rows, dims)
    with psycopg.connect(cluster.dsn(DB), autocommit=True) as c:
        q = _query_vector(c, dims)
        # A radius that keeps about 1% of the rows.
        radius = c.execute(f"SELECT percentile_disc(0.01) WITHIN GROUP (ORDER BY emb <-> '{q}') "
                           f"FROM (SELECT emb FROM {table} LIMIT 20000) s").fetchone()[0]
    return {
        "knn-l2": (f"SELECT id FROM {table} ORDER BY emb <-> '{q}' LIMIT 10", []),
        "knn-cos": (f"SELECT id FROM {table} ORDER BY emb <=> '{q}' LIMIT 10", []),
        "range": (f"SELECT count(*) FROM {table} WHERE emb <-> '{q}' < {radius}", []),
    }


def _postgis_cases(cluster: Cluster, rows: int) -> dict[str, tuple[str, list[str]]]:
    pts, polys = f"pts_{rows}", f"polys_{rows // 10}"
    with psycopg.connect(cluster.dsn(DB), autocommit=True) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        have = c.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [pts]).fetchone()
        if not (have and have[0] == rows):
            print(f"[bench] packs: making {pts} and {polys}", flush=True)
            c.execute("SELECT setseed(0.75)")
            c.execute(f"DROP TABLE IF EXISTS {pts}, {polys}")
            c.execute(f"CREATE TABLE {pts} AS SELECT i AS id, ST_SetSRID(ST_MakePoint(random() * 100, "
                      f"random() * 100), 4326) AS geom FROM generate_series(1, {rows}) i")
            c.execute(f"CREATE TABLE {polys} AS SELECT i AS id, ST_MakeEnvelope(x, y, x + 0.1, y + 0.1, 4326) "
                      f"AS geom FROM (SELECT i, random() * 99.9 AS x, random() * 99.9 AS y "
                      f"FROM generate_series(1, {rows // 10}) i) s")
            c.execute(f"CREATE INDEX ON {pts} USING gist (geom)")
            c.execute(f"VACUUM ANALYZE {pts}")
            c.execute(f"VACUUM ANALYZE {polys}")
    # The filters are measured as scans (index scans off for them: the bar
    # compares a scan with a scan); the join keeps its index.
    no_index = ["SET enable_indexscan = off", "SET enable_bitmapscan = off"]
    return {
        "box": (f"SELECT count(*) FROM {pts} WHERE geom && ST_MakeEnvelope(20, 20, 30, 30, 4326)", no_index),
        "dwithin": (f"SELECT count(*) FROM {pts} WHERE ST_DWithin(geom, ST_SetSRID(ST_MakePoint(50, 50), 4326), 5)",
                    no_index),
        "intersects": (f"SELECT count(*) FROM {pts} WHERE ST_Intersects(geom, "
                       f"'SRID=4326;POLYGON((20 20, 40 20, 20 40, 20 20))'::geometry)", no_index),
        "join": (f"SELECT count(*) FROM {polys} p JOIN {pts} t ON ST_Intersects(p.geom, t.geom)", []),
    }


def run(cluster: Cluster, packs: list[str], rows: int, dims: int, sessions: int, hot: int, modes: list[str],
        out_csv: str, sha: str) -> list[dict]:
    cases = {}
    if "pgvector" in packs:
        cases.update(_pgvector_cases(cluster, rows, dims))
    if "postgis" in packs:
        cases.update(_postgis_cases(cluster, rows))
    with psycopg.connect(cluster.dsn(DB), autocommit=True) as c:
        c.execute("DROP EXTENSION IF EXISTS vexec")
        c.execute("CREATE EXTENSION vexec")
    results, answers = [], {}
    for session in range(sessions):
        for case, (stmt, settings) in cases.items():
            for mode in modes:
                with psycopg.connect(cluster.dsn(DB), autocommit=True) as conn:
                    conn.execute("SET max_parallel_workers_per_gather = 0")
                    for setting in settings:
                        conn.execute(setting)
                    conn.execute(f"SET vexec.mode = {mode}")
                    plan = " / ".join(r[0].strip() for r in conn.execute(f"EXPLAIN (COSTS OFF) {stmt}")
                                      if "->" in r[0] or r[0][:1].isalpha())
                    for run_nr in range(hot + 1):
                        t0 = time.perf_counter()
                        answer = conn.execute(stmt).fetchall()
                        ms = (time.perf_counter() - t0) * 1000
                        first = answers.setdefault(case, answer)
                        if answer != first:
                            raise SystemExit(f"[bench] packs {case}: mode {mode} answered {answer}, not {first}")
                        row = {"sha": sha, "session": session, "case": case, "mode": mode, "run": run_nr,
                               "rows": rows, "dims": dims, "ms": round(ms, 1), "plan": plan}
                        results.append(row)
                    short = re.sub(r"'[^']*'", "'...'", plan)
                    print(f"[bench] packs session {session} {case} {mode}: "
                          f"{min(r['ms'] for r in results[-hot:]):,.0f} ms best hot ({short})", flush=True)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    for case in cases:
        # Hot runs only (run 0 warms the cache).
        best = {m: min(r["ms"] for r in results if r["case"] == case and r["mode"] == m and r["run"] > 0)
                for m in modes}
        parts = [f"{m} {ms:,.0f} ms" for m, ms in best.items()]
        ratio = ""
        if "off" in best:
            ratio = "; " + ", ".join(f"{m} {best['off'] / ms:.2f}x off" for m, ms in best.items() if m != "off")
        print(f"[bench] packs {case} ({rows:,} rows), best of {sessions} sessions: {', '.join(parts)}{ratio}",
              flush=True)
    print(f"[bench] results: {os.path.basename(out_csv)}", flush=True)
    return results

"""Reports from a results CSV: per-query tables (best hot run), geometric
means, ratios to a baseline and to DuckDB, a PNG chart, a JSON summary; and
the side-by-side comparison of two runs.

The baseline of a benchmark's speedups is PostgreSQL without vexec
(vanilla-w0) when it ran, else vexec in mode off with 0 workers, else the
first configuration run; each table says which."""

import csv
import json
import math
import os
from collections import defaultdict

BASELINE_PREFERENCE = ("vanilla-w0", "off-w0")


def baseline_of(cfgs: list[str]) -> str | None:
    """The configuration a benchmark's speedups are measured against."""
    for c in BASELINE_PREFERENCE:
        if c in cfgs:
            return c
    return next((c for c in cfgs if c != "duckdb"), None)


def load(path: str) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def best_hot(rows: list[dict]) -> dict:
    """(benchmark, dataset) -> query -> config -> (best hot ms | status string)."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        key = (r["benchmark"], r["dataset"])
        if r["status"] == "plan":
            continue
        cell = out[key][r["query"]]
        cfg = r["config"]
        if r["status"] != "ok":
            cell[cfg] = r["status"]
            continue
        if int(r["run"]) == 0 or isinstance(cell.get(cfg), str):
            continue
        ms = float(r["ms"])
        cell[cfg] = min(cell.get(cfg, ms), ms)
    return out


def cold(rows: list[dict]) -> dict:
    """The cold run of each query and configuration (of its first session)."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if int(r["run"]) == 0 and r["status"] == "ok" and not int(r.get("session") or 0):
            out[(r["benchmark"], r["dataset"])][r["query"]][r["config"]] = float(r["ms"])
    return out


def peak_memory(rows: list[dict]) -> dict:
    """(benchmark, dataset) -> query -> config -> the largest peak backend
    memory (kB) sampled over the hot runs, where it was sampled."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if int(r["run"]) == 0 or r["status"] != "ok" or not r.get("peak_kb"):
            continue
        cell = out[(r["benchmark"], r["dataset"])][r["query"]]
        cell[r["config"]] = max(cell.get(r["config"], 0), int(r["peak_kb"]))
    return out


def planning(rows: list[dict]) -> dict:
    """(benchmark, dataset) -> query -> config -> the best planning time (ms)
    over the sessions (the runner's "plan" rows)."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if r["status"] == "plan":
            cell = out[(r["benchmark"], r["dataset"])][r["query"]]
            cell[r["config"]] = min(cell.get(r["config"], float(r["ms"])), float(r["ms"]))
    return out


def planning_sums(plans: dict, cfgs: list[str]) -> tuple[int, dict]:
    """The number of queries planned in every configuration of `cfgs` and,
    per configuration, the sum of their planning times."""
    common = [q for q, cells in plans.items() if all(c in cells for c in cfgs)]
    return len(common), {c: sum(plans[q][c] for q in common) for c in cfgs}


def geomean(values: list[float]) -> float | None:
    vals = [v for v in values if v and v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def config_order(cfgs) -> list[str]:
    rank = {"vanilla": 0, "off": 1, "auto": 2, "autoarrow": 3, "force": 4, "forcearrow": 5, "duckdb": 9}
    def key(c):
        mode, _, w = c.partition("-w")
        return (int(w) if w.isdigit() else 99, rank.get(mode, 5), c)
    return sorted(cfgs, key=key)


def query_sort_key(q: str):
    digits = "".join(ch for ch in q if ch.isdigit())
    return (q.rstrip("0123456789"), int(digits) if digits else 0)


def summarize(rows: list[dict]) -> dict:
    """A JSON-able summary: per benchmark, geomeans per config over the queries
    that succeeded in every configuration, and per-query best hot times."""
    summary = {"runs": sorted({(r["sha"], r["started"]) for r in rows}), "benchmarks": {}}
    if rows:
        summary["machine"] = rows[0]["machine"]
    for (bench, dataset), queries in best_hot(rows).items():
        cfgs = config_order({c for q in queries.values() for c in q})
        complete = [q for q, cells in queries.items() if all(isinstance(cells.get(c), float) for c in cfgs)]
        geo = {c: geomean([queries[q][c] for q in complete]) for c in cfgs}
        summary["benchmarks"][f"{bench} ({dataset})"] = {
            "key": (bench, dataset),
            "configs": cfgs,
            "baseline": baseline_of(cfgs),
            "queries_in_geomean": len(complete),
            "queries": len(queries),
            "geomean_ms": geo,
            "per_query_ms": {q: queries[q] for q in sorted(queries, key=query_sort_key)},
            "planning_ms": planning_sums(planning(rows).get((bench, dataset), {}),
                                         [c for c in cfgs if c != "duckdb"])[1],
        }
    return summary


def fmt_ms(v) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}" if v < 100 else f"{v:,.0f}"
    return v or "-"


def ratio(base, v) -> str:
    if isinstance(base, float) and isinstance(v, float) and v > 0:
        return f"{base / v:.2f}x"
    return "-"


def markdown(rows: list[dict], settings: dict | None = None, chart_files: dict | None = None) -> str:
    s = summarize(rows)
    out = ["# vexec benchmark report", ""]
    if rows:
        starts = sorted({r["started"] for r in rows})  # more than one when resumed
        out += [f"- git sha: `{rows[0]['sha']}`, started {', resumed '.join(starts)}",
                f"- machine: {rows[0]['machine']}"]
    if settings:
        out.append("- settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    sessions = 1 + max((int(r.get("session") or 0) for r in rows), default=0)
    over = f" of {sessions} fresh sessions per query and configuration" if sessions > 1 else ""
    out += [f"- times: best of the hot runs{over} (the first run of each fresh session is the cold run and is "
            "not counted), in ms; result rows drained by libpq without conversion",
            "- speedup columns: the baseline's time divided by the configuration's time (>1 is faster); the "
            "baseline is vanilla-w0 (PostgreSQL without vexec) where it ran, else off-w0, else the first "
            "configuration", ""]
    for title, b in s["benchmarks"].items():
        cfgs = b["configs"]
        base_cfg = b["baseline"]
        out += [f"## {title}", "", f"Baseline of the speedups: {base_cfg}.", ""]
        geo = b["geomean_ms"]
        out.append(f"Geometric mean over the {b['queries_in_geomean']} of {b['queries']} queries that "
                   "succeeded in every configuration:")
        out.append("")
        out.append("| configuration | geomean ms | vs " + base_cfg + " | vs duckdb |")
        out.append("|---|---:|---:|---:|")
        for c in cfgs:
            out.append(f"| {c} | {fmt_ms(geo[c])} | {ratio(geo.get(base_cfg), geo[c])} | "
                       f"{ratio(geo[c], geo.get('duckdb')) if 'duckdb' in geo else '-'} |")
        out.append("")
        plan_cfgs = [c for c in cfgs if c != "duckdb"]
        plans = planning(rows).get(b["key"], {})
        n_planned, sums = planning_sums(plans, plan_cfgs)
        if n_planned:
            base_sum = sums.get(base_cfg)
            out.append(f"Planning time (EXPLAIN, best of 3 after the timed runs, best over the sessions), summed "
                       f"over the {n_planned} queries planned in every configuration: " +
                       ", ".join(f"{c} {sums[c]:,.1f} ms" + (f" ({(sums[c] / base_sum - 1) * 100:+.1f}% vs {base_cfg})"
                                                           if base_sum and c != base_cfg else "")
                                 for c in plan_cfgs) + ".")
            out.append("")
        speed_cfgs = [c for c in cfgs if c != base_cfg and not c.startswith("vanilla")]
        out.append("| query | " + " | ".join(cfgs) + " | " +
                   " | ".join(f"{c} speedup" for c in speed_cfgs) + " |")
        out.append("|---|" + "---:|" * (len(cfgs) + len(speed_cfgs)))
        for q, cells in b["per_query_ms"].items():
            base = cells.get(base_cfg)
            out.append(f"| {q} | " + " | ".join(fmt_ms(cells.get(c)) for c in cfgs) + " | " +
                       " | ".join(ratio(base, cells.get(c)) for c in speed_cfgs) + " |")
        out.append("")
        # The slowest queries of the baseline and of vexec's default mode: where
        # the time goes, and what to work on next.
        # (Each once: the baseline may itself be an auto configuration.)
        for c in dict.fromkeys([base_cfg] + [c for c in cfgs if c.startswith("auto")]):
            slow = sorted(((cells.get(c), q) for q, cells in b["per_query_ms"].items()
                           if isinstance(cells.get(c), float)), reverse=True)[:5]
            if slow:
                out.append(f"Slowest queries ({c}): " +
                           ", ".join(f"{q} ({fmt_ms(ms)} ms)" for ms, q in slow))
                out.append("")
        peaks = peak_memory(rows).get(b["key"], {})
        if peaks:
            out += ["Peak backend memory (RssAnon of the backend, sampled every 5 ms; the largest of the "
                    "hot runs), kB:", "",
                    "| query | " + " | ".join(cfgs) + " |", "|---|" + "---:|" * len(cfgs)]
            for q in sorted(peaks, key=query_sort_key):
                out.append(f"| {q} | " + " | ".join(f"{peaks[q][c]:,}" if c in peaks[q] else "-" for c in cfgs)
                           + " |")
            out.append("")
        if chart_files and title in chart_files:
            out += [f"![speedups]({os.path.basename(chart_files[title])})", ""]
    return "\n".join(out)


def chart(rows: list[dict], out_dir: str, stem: str) -> dict:
    """One PNG per benchmark: per-query speedup over its baseline, log scale."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = {}
    s = summarize(rows)
    for i, (title, b) in enumerate(s["benchmarks"].items()):
        base_cfg = b["baseline"]
        cfgs = [c for c in b["configs"] if c != base_cfg]
        queries = list(b["per_query_ms"])
        fig, ax = plt.subplots(figsize=(max(8, len(queries) * 0.45), 4.5))
        width = 0.8 / max(len(cfgs), 1)
        for j, c in enumerate(cfgs):
            ys = []
            for q in queries:
                base, v = b["per_query_ms"][q].get(base_cfg), b["per_query_ms"][q].get(c)
                ys.append(base / v if isinstance(base, float) and isinstance(v, float) and v > 0 else float("nan"))
            ax.bar([k + j * width for k in range(len(queries))], ys, width, label=c)
        ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(queries))])
        ax.set_xticklabels(queries, rotation=90, fontsize=7)
        ax.set_ylabel(f"speedup over {base_cfg} (log)")
        ax.set_title(title)
        ax.legend(fontsize=7, ncol=4)
        fig.tight_layout()
        path = os.path.join(out_dir, f"{stem}-{i}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files[title] = path
    return files


def write_report(csv_path: str, out_dir: str, settings: dict | None = None) -> str:
    rows = load(csv_path)
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(csv_path))[0]
    charts = chart(rows, out_dir, stem)
    md = markdown(rows, settings, charts)
    md_path = os.path.join(out_dir, stem + ".md")
    with open(md_path, "w") as f:
        f.write(md)
    with open(os.path.splitext(csv_path)[0] + ".json", "w") as f:
        json.dump(summarize(rows) | {"settings": settings or {}}, f, indent=1)
    return md_path


def compare(a_path: str, b_path: str, threshold: float = 0.10, min_ms: float = 5.0) -> tuple[str, int]:
    """Two runs side by side per (benchmark, config, query); a regression is B
    slower than A by more than `threshold` and more than `min_ms`."""
    a, b = best_hot(load(a_path)), best_hot(load(b_path))
    lines = [f"A = {os.path.basename(a_path)}", f"B = {os.path.basename(b_path)}",
             f"regression: B slower than A by more than {threshold:.0%} and {min_ms} ms", ""]
    regressions = 0
    for key in sorted(set(a) | set(b)):
        qa, qb = a.get(key, {}), b.get(key, {})
        cfgs = config_order({c for q in list(qa.values()) + list(qb.values()) for c in q})
        lines.append(f"{key[0]} ({key[1]})")
        lines.append(f"  {'query':<8} {'config':<12} {'A ms':>10} {'B ms':>10} {'B/A':>7}")
        for q in sorted(set(qa) | set(qb), key=query_sort_key):
            for c in cfgs:
                va, vb = qa.get(q, {}).get(c), qb.get(q, {}).get(c)
                if va is None and vb is None:
                    continue
                r, flag = "", ""
                if isinstance(va, float) and isinstance(vb, float):
                    r = f"{vb / va:.2f}"
                    if vb > va * (1 + threshold) and vb - va > min_ms:
                        flag = "  REGRESSION"
                        regressions += 1
                elif isinstance(va, float) and isinstance(vb, str):
                    flag = f"  REGRESSION ({vb})"
                    regressions += 1
                lines.append(f"  {q:<8} {c:<12} {fmt_ms(va):>10} {fmt_ms(vb):>10} {r:>7}{flag}")
        lines.append("")
    lines.append(f"{regressions} regression(s)")
    return "\n".join(lines), regressions

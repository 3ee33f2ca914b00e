"""The report's baseline: vanilla-w0 when it ran, else off-w0, else the first
configuration; speedup columns and the geomean table use it."""

import unittest

from vexecbench import report


def rows(configs, ms_of):
    out = []
    for c in configs:
        for q in ("Q1", "Q2"):
            for run in (0, 1):
                out.append(dict(sha="abc", started="2026-12-06T00:00:00", machine="m", benchmark="tpch",
                                dataset="TPC-H SF 1", config=c, query=q, run=str(run), ms=str(ms_of(c, q)),
                                rows="1", status="ok", error="", peak_kb="", session="0"))
    return out


class BaselineTest(unittest.TestCase):
    def test_preference(self):
        self.assertEqual(report.baseline_of(["off-w0", "vanilla-w0", "auto-w0"]), "vanilla-w0")
        self.assertEqual(report.baseline_of(["auto-w0", "off-w0", "force-w0"]), "off-w0")
        self.assertEqual(report.baseline_of(["auto-w2", "force-w2", "duckdb"]), "auto-w2")
        self.assertIsNone(report.baseline_of(["duckdb"]))

    def test_report_without_vanilla_measures_against_off(self):
        ms = {"off-w0": 100.0, "auto-w0": 25.0, "force-w0": 50.0}
        md = report.markdown(rows(list(ms), lambda c, q: ms[c]))
        self.assertIn("Baseline of the speedups: off-w0.", md)
        q1 = next(line for line in md.splitlines() if line.startswith("| Q1 |"))
        # off, auto, force times, then the auto and force speedups over off.
        self.assertTrue(q1.endswith("| 4.00x | 2.00x |"), q1)
        self.assertIn("| auto-w0 | 25.0 | 4.00x | - |", md)


    def test_slowest_queries_listed_once_per_configuration(self):
        # An auto configuration as the baseline (no off, no vanilla) is listed once.
        ms = {"auto-w0": 30.0, "autoarrow-w0": 31.0}
        md = report.markdown(rows(list(ms), lambda c, q: ms[c]))
        self.assertEqual(md.count("Slowest queries (auto-w0)"), 1, md)
        self.assertEqual(md.count("Slowest queries (autoarrow-w0)"), 1, md)

    def test_planning_time_summed_over_queries_planned_everywhere(self):
        ms = {"off-w0": 100.0, "auto-w0": 25.0}
        plan = {("off-w0", "Q1"): 2.0, ("auto-w0", "Q1"): 2.2, ("off-w0", "Q2"): 1.0, ("auto-w0", "Q2"): 1.0,
                ("off-w0", "Q3"): 9.0}  # Q3 was not planned in auto: left out of the sums
        rs = rows(list(ms), lambda c, q: ms[c])
        for (c, q), p in plan.items():
            for session, extra in ((0, 0.5), (1, 0.0)):  # the best session counts
                rs.append(dict(rs[0], config=c, query=q, run="-1", ms=str(p + extra), rows="", status="plan",
                               session=str(session)))
        md = report.markdown(rs)
        self.assertIn("summed over the 2 queries planned in every configuration: off-w0 3.0 ms, "
                      "auto-w0 3.2 ms (+6.7% vs off-w0).", md)
        # Planning rows are not timings: Q3 has no timed cell, Q1's are the runs'.
        q1 = next(line for line in md.splitlines() if line.startswith("| Q1 |"))
        self.assertTrue(q1.startswith("| Q1 | 100 | 25.0 |"), q1)
        self.assertNotIn("| Q3 |", md)
        self.assertEqual(report.summarize(rs)["benchmarks"]["tpch (TPC-H SF 1)"]["planning_ms"],
                         {"off-w0": 3.0, "auto-w0": 3.2})


if __name__ == "__main__":
    unittest.main()

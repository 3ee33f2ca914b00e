"""Resuming a benchmark run cut short: which (query, configuration) pairs
are kept, and that a file of another commit is refused."""

import csv
import os
import tempfile
import unittest

from vexecbench import runner


def row(config, query, run, status="ok", sha="abc", bench="tpch", dataset="TPC-H SF 1.0"):
    return dict(sha=sha, started="2026-12-02T00:00:00", machine="m", benchmark=bench, dataset=dataset,
                config=config, query=query, run=run, ms="1.0", rows="1", status=status, error="")


class ResumeTest(unittest.TestCase):
    def test_finished_pairs_need_every_run_or_a_failure(self):
        rows = ([row("off-w0", "Q1", r) for r in range(4)]          # cold + 3 hot: finished
                + [row("auto-w0", "Q1", r) for r in range(3)]       # last hot run missing
                + [row("force-w0", "Q1", 0), row("force-w0", "Q1", 1, "timeout")]  # stopped at a timeout
                + [row("off-w0", "Q2", 0, "error")]                 # failed cold run
                + [row("off-w0", "Q3", r) for r in (0, 2, 3)])      # a run missing in the middle
        done = runner.finished_pairs(rows, hot=3)
        key = lambda c, q: ("tpch", "TPC-H SF 1.0", c, q)
        self.assertEqual(done, {key("off-w0", "Q1"), key("force-w0", "Q1"), key("off-w0", "Q2")})
        # Fewer hot runs asked for: the three-run pair is finished too.
        self.assertIn(key("auto-w0", "Q1"), runner.finished_pairs(rows, hot=2))

    def test_sessions_are_finished_one_by_one(self):
        rows = ([row("off-w0", "Q1", r) | {"session": "0"} for r in range(4)]
                + [row("off-w0", "Q1", r) | {"session": "1"} for r in range(2)])   # session 1 cut short
        key = ("tpch", "TPC-H SF 1.0", "off-w0", "Q1")
        self.assertEqual(runner.finished_sessions(rows, hot=3), {(key, 0)})
        self.assertEqual(runner.finished_pairs(rows, hot=3, sessions=1), {key})
        self.assertEqual(runner.finished_pairs(rows, hot=3, sessions=2), set())
        # Rows of files written before sessions were recorded count as session 0.
        self.assertEqual(runner.finished_sessions([row("off-w0", "Q1", r) for r in range(4)], hot=3),
                         {(key, 0)})

    def test_resume_keeps_finished_rows_and_refuses_other_commits(self):
        rows = [row("off-w0", "Q1", r) for r in range(4)] + [row("auto-w0", "Q1", 0)]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "abc-1.csv")
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, runner.FIELDS)
                w.writeheader()
                w.writerows(rows)
            kept, done = runner.resume_rows(path, "abc", hot=3)
            self.assertEqual([(r["config"], r["run"]) for r in kept], [("off-w0", str(r)) for r in range(4)])
            self.assertEqual(done, {(("tpch", "TPC-H SF 1.0", "off-w0", "Q1"), 0)})
            with self.assertRaises(SystemExit) as e:
                runner.resume_rows(path, "def", hot=3)
            self.assertIn("abc", str(e.exception))


if __name__ == "__main__":
    unittest.main()

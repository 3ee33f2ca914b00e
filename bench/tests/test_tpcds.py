"""TPC-DS in the benchmark: 99 queries, named as the report names them,
and the per-benchmark timeout."""

import unittest

from vexecbench import __main__ as cli


class TpcdsQueries(unittest.TestCase):
    def test_the_99_queries_with_both_texts(self):
        qs = cli.tpcds_queries()
        self.assertEqual([name for name, _, _ in qs], [f"Q{n}" for n in range(1, 100)])
        for name, pg, duck in qs:
            self.assertIn("select", pg.lower(), name)
            self.assertIn("select", duck.lower(), name)

    def test_tpcds_is_a_benchmark_with_its_own_timeout(self):
        args = build_run_args(["--benchmarks", "tpcds", "--tpcds-timeout", "60"])
        self.assertEqual(args.benchmarks, "tpcds")
        self.assertEqual(args.tpcds_timeout, 60.0)
        self.assertIn("tpcds", build_run_args([]).benchmarks.split(","))


def build_run_args(extra):
    """The run subcommand's arguments as main() parses them."""
    captured = {}

    def fake_run(args):
        captured["args"] = args
        return 0

    real = cli.cmd_run
    cli.cmd_run = fake_run
    try:
        cli.main(["run", "--state", "/nonexistent", "--results", "r", "--reports", "p"] + extra)
    finally:
        cli.cmd_run = real
    return captured["args"]


if __name__ == "__main__":
    unittest.main()

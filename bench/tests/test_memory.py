"""Peak backend memory: the RssAnon parser, the sampling probe (on this
process) and the report's table (hot runs only, the largest kept)."""

import os
import time
import unittest

from vexecbench import report, runner

STATUS = """Name:\tpostgres
VmPeak:\t 4431520 kB
VmRSS:\t  212340 kB
RssAnon:\t   18764 kB
RssFile:\t   20132 kB
RssShmem:\t  173444 kB
"""


def row(config, query, run, peak, status="ok"):
    return dict(sha="abc", started="2026-12-03T00:00:00", machine="m", benchmark="agg", dataset="agg 10M",
                config=config, query=query, run=str(run), ms="10.0", rows="1", status=status, error="",
                peak_kb=str(peak) if peak is not None else "")


class MemoryTest(unittest.TestCase):
    def test_rss_anon_is_the_private_memory_line(self):
        self.assertEqual(runner.rss_anon_kb(STATUS), 18764)
        self.assertIsNone(runner.rss_anon_kb("Name:\tx\nVmRSS:\t1 kB\n"))

    def test_probe_sees_an_allocation_that_is_gone_by_the_end(self):
        with runner.MemoryProbe(os.getpid(), interval=0.001) as idle:
            time.sleep(0.05)
        with runner.MemoryProbe(os.getpid(), interval=0.001) as busy:
            block = bytearray(b"x" * (64 << 20))  # touched: resident
            time.sleep(0.05)
            del block
        self.assertIsNotNone(idle.peak)
        self.assertGreaterEqual(busy.peak - idle.peak, 60 << 10)

    def test_report_keeps_the_largest_hot_run(self):
        rows = [row("off-w0", "A3m", 0, 900_000), row("off-w0", "A3m", 1, 9_000), row("off-w0", "A3m", 2, 9_500),
                row("force-w0", "A3m", 1, 7_000), row("force-w0", "A3m", 2, None),
                row("auto-w0", "A3m", 1, 50_000, status="error")]
        peaks = report.peak_memory(rows)[("agg", "agg 10M")]
        self.assertEqual(peaks, {"A3m": {"off-w0": 9_500, "force-w0": 7_000}})
        md = report.markdown(rows)
        self.assertIn("Peak backend memory", md)
        self.assertIn("| A3m | 9,500 | - | 7,000 |", md)  # auto failed: no figure


if __name__ == "__main__":
    unittest.main()

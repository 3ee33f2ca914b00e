"""The orca-corpus leg: ORCA's whole minidump corpus through orca_bridge
(the `orca-corpus` binary; its report is kept in the state directory).
Full runs only: make test's orca leg runs a sample of about 50."""

import os
import re
import subprocess

from .legs import REPO, LegResult, log


def leg_orca_corpus(state: str, full: bool) -> LegResult:
    r = LegResult("orca-corpus")
    if not full:
        r.skipped += 1
        r.notes.append("make test's orca leg runs a sample of ORCA's minidumps; the whole corpus with --full")
        return r
    out = os.path.join(state, "orca")
    log(f"orca corpus: every minidump of ORCA's snapshot through orca_bridge (report in {out})")
    p = subprocess.run(["cargo", "run", "--release", "-q", "-p", "orca_bridge", "--bin", "orca-corpus", "--",
                        "--all", "--out", out], cwd=REPO, capture_output=True, text=True)
    m = re.search(r"^(\d+) minidumps \((\d+) of them in ORCA's own test list\)", p.stdout, re.M)
    h = re.search(r"^ORCA's test list: (\d+) of (\d+) give the expected plan", p.stdout, re.M)
    if m is None or h is None:
        r.fail(f"orca-corpus did not report (exit {p.returncode}): {(p.stdout + p.stderr)[-3000:]}")
        return r
    r.queries = int(m.group(1))
    r.passed = int(h.group(1))
    r.skipped = r.queries - int(h.group(2))
    if p.returncode != 0:
        r.fail(f"orca-corpus: a requirement failed (exit {p.returncode}); see {out}/orca-corpus.md")
    for line in p.stdout.splitlines():
        if line.startswith(("ORCA's test list:", "Neutral factors", "vexec's factors", "Pruning under", "Memory:")):
            r.notes.append(line)
    return r

"""PostgreSQL's own regression suite (from the postgresql-18 18.6 source
package, extracted by tools/devroot into /opt/pg18-src) run against a
temporary cluster, with vexec not loaded (baseline) or preloaded in a mode.

- PostgreSQL 18: compared with the suite's unchanged expected files. vexec
  must add no failure to those of the baseline (vexec not loaded), and a test
  that fails in the baseline must fail with exactly the baseline's output.
- PostgreSQL 19: the 18.6 expected files do not match 19, so the corpus is
  first run with vexec not loaded and that output becomes the expected output
  of the runs with vexec.
- The differential leg runs the corpus with vexec in mode off and uses that
  output as the expected output of a run in mode force.
"""

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

SRC = os.environ.get("VEXEC_PG18_SRC", "/opt/pg18-src/src")
REGRESS_DIR = os.path.join(SRC, "src", "test", "regress")

# The default (fast) slice: the setup test and the data type groups, which
# exercise every scalar kernel family (ints, floats, numeric, text, dates).
SLICE_GROUPS = 3


@dataclass
class SuiteRun:
    name: str
    out_dir: str
    status: int
    tests: dict[str, bool] = field(default_factory=dict)   # test -> passed

    @property
    def failed(self) -> list[str]:
        return sorted(t for t, ok in self.tests.items() if not ok)

    def result_file(self, test: str) -> str:
        return os.path.join(self.out_dir, "results", test + ".out")


def pg_config(v: int) -> str:
    return f"/usr/lib/postgresql/{v}/bin/pg_config"


def bindir(v: int) -> str:
    return subprocess.check_output([pg_config(v), "--bindir"], text=True).strip()


def pg_regress(v: int) -> str:
    pgxs = subprocess.check_output([pg_config(v), "--pgxs"], text=True).strip()
    return os.path.normpath(os.path.join(os.path.dirname(pgxs), "..", "test", "regress", "pg_regress"))


def build_regress_so(v: int, state: str) -> str:
    """regress.so of the 18.6 suite, built with PGXS against PostgreSQL v."""
    d = os.path.join(state, f"regress-so-pg{v}")
    so = os.path.join(d, "regress.so")
    src = os.path.join(REGRESS_DIR, "regress.c")
    if os.path.exists(so) and os.path.getmtime(so) >= os.path.getmtime(src):
        return d
    os.makedirs(d, exist_ok=True)
    shutil.copy(src, d)
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write(f"MODULES = regress\nPG_CONFIG = {pg_config(v)}\nPGXS := $(shell $(PG_CONFIG) --pgxs)\n"
                "include $(PGXS)\n")
    subprocess.run(["make", "-s", "-C", d], check=True, capture_output=True)
    return d


def schedule(state: str, full: bool) -> str:
    """The schedule file: the whole parallel_schedule, or its first groups."""
    src = os.path.join(REGRESS_DIR, "parallel_schedule")
    if full:
        return src
    lines = [l for l in open(src) if l.startswith("test:")][:SLICE_GROUPS]
    path = os.path.join(state, "slice_schedule")
    with open(path, "w") as f:
        f.writelines(lines)
    return path


def parse_results(log: str) -> dict[str, bool]:
    tests = {}
    for line in log.splitlines():
        m = re.match(r"^(not ok|ok)\s+\d+\s+[-+]\s+(\S+)", line)
        if m:
            tests[m.group(2)] = m.group(1) == "ok"
    return tests


def run(v: int, state: str, name: str, full: bool, preload: bool, mode: str | None = None,
        expected_from: "SuiteRun | None" = None, port: int = 56000) -> SuiteRun:
    """One run of the suite on a temporary PostgreSQL v cluster."""
    out = os.path.join(state, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    conf = os.path.join(out, "extra.conf")
    with open(conf, "w") as f:
        if preload:
            f.write("shared_preload_libraries = 'vexec'\n")
        if mode:
            f.write(f"vexec.mode = {mode}\n")
    args = [pg_regress(v), f"--temp-instance={out}/instance", f"--temp-config={conf}",
            f"--bindir={bindir(v)}", f"--inputdir={REGRESS_DIR}", f"--outputdir={out}",
            f"--schedule={schedule(state, full)}", f"--dlpath={build_regress_so(v, state)}",
            "--max-concurrent-tests=20", f"--port={port + v}"]
    if expected_from is not None:
        # pg_regress reads expected/<test>.out under --expecteddir.
        exp = os.path.join(out, "expected-from")
        os.makedirs(exp)
        shutil.copytree(os.path.join(expected_from.out_dir, "results"), os.path.join(exp, "expected"))
        args.append(f"--expecteddir={exp}")
    # pg_regress sets the time zone and date style itself; the locale of the
    # temporary cluster comes from the environment.
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    with open(os.path.join(out, "pg_regress.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    tests = parse_results(p.stdout)
    if not tests:
        raise RuntimeError(f"pg_regress ran no test ({name}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return SuiteRun(name, out, p.returncode, tests)


def _plan_normalized(text: str) -> list[str]:
    """Output with vexec's node names turned into PostgreSQL's and the
    column-width decoration of psql's table header removed."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"(Parallel )?Vec Seq Scan", lambda m: (m.group(1) or "") + "Seq Scan", line).rstrip()
        if re.fullmatch(r"-+(\+-+)*", line) or line.strip() == "QUERY PLAN":
            line = "<header>"
        out.append(line)
    return out


def plan_only_difference(a: SuiteRun, b: SuiteRun, test: str) -> bool:
    """True when b's output differs from a's only in plans showing vector
    nodes where a shows row nodes."""
    try:
        x = open(a.result_file(test), errors="replace").read()
        y = open(b.result_file(test), errors="replace").read()
    except OSError:
        return False
    return _plan_normalized(x) == _plan_normalized(y)


def same_output(a: SuiteRun, b: SuiteRun, test: str) -> bool:
    try:
        return open(a.result_file(test), "rb").read() == open(b.result_file(test), "rb").read()
    except OSError:
        return False

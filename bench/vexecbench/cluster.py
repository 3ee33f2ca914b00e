"""The benchmark cluster: one PostgreSQL 19 data directory, started with vexec
preloaded (configurations off/auto/force) or without it (vanilla)."""

import os
import subprocess
import time

import psycopg

# Server settings of every benchmark run (printed with every run). The
# parallel workers per gather are set per configuration, in the session.
SERVER_SETTINGS = {
    "shared_buffers": "4GB",
    "work_mem": "64MB",
    "effective_cache_size": "16GB",
    "max_worker_processes": "8",
    "max_parallel_workers": "8",
    "jit": "off",
    "max_wal_size": "8GB",
    "checkpoint_timeout": "30min",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "synchronous_commit": "off",
    "listen_addresses": "''",
    "max_connections": "20",
}

# Settings a session reports with every run.
REPORTED = ["server_version", "shared_buffers", "work_mem", "jit", "max_parallel_workers_per_gather",
            "effective_cache_size", "shared_preload_libraries"]


class Cluster:
    """`libraries`: preloaded in every configuration, before vexec (Citus
    must come first); `settings`: server settings over SERVER_SETTINGS."""

    def __init__(self, bindir: str, datadir: str, port: int, libraries: tuple[str, ...] = (),
                 settings: dict[str, str] | None = None):
        self.bindir = bindir
        self.datadir = datadir
        self.port = port
        self.libraries = libraries
        self.server_settings = {**SERVER_SETTINGS, **(settings or {})}
        # Settings given on the command line at each start (for a cluster
        # initialized before they were wanted).
        self.options: dict[str, str] = {}
        self.preload: bool | None = None   # None: not started by us

    def dsn(self, db: str, user: str | None = None) -> str:
        who = f" user={user}" if user else ""
        return f"host={self.datadir} port={self.port} dbname={db} application_name=vexecbench{who}"

    def _pg_ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, *args],
                              capture_output=True, text=True, check=check)

    def ensure_initialized(self) -> None:
        if os.path.exists(os.path.join(self.datadir, "PG_VERSION")):
            return
        os.makedirs(os.path.dirname(self.datadir), exist_ok=True)
        subprocess.run([os.path.join(self.bindir, "initdb"), "-D", self.datadir, "--auth=trust",
                        "--encoding=UTF8", "--locale=C.UTF-8"], check=True, capture_output=True)
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as f:
            for k, v in self.server_settings.items():
                f.write(f"{k} = {v}\n")
            f.write(f"unix_socket_directories = '{self.datadir}'\n")

    def running(self) -> bool:
        return self._pg_ctl("status", check=False).returncode == 0

    def start(self, preload: bool) -> None:
        """Start (or restart) the server with or without vexec preloaded."""
        if self.running():
            if self.preload == preload:
                return
            self.stop()
        spl = ",".join(self.libraries + (("vexec",) if preload else ()))
        opts = "".join(f" -c {k}={v}" for k, v in self.options.items())
        r = self._pg_ctl("-o", f"-p {self.port} -c shared_preload_libraries='{spl}'{opts}",
                         "-l", os.path.join(self.datadir, "server.log"), "-w", "-t", "120", "start",
                         check=False)
        if r.returncode != 0:
            log_tail = open(os.path.join(self.datadir, "server.log")).read()[-2000:]
            raise RuntimeError(f"server did not start: {r.stderr}\n{log_tail}")
        self.preload = preload
        # Wait until connections are accepted.
        for _ in range(100):
            try:
                psycopg.connect(self.dsn("postgres")).close()
                return
            except psycopg.OperationalError:
                time.sleep(0.1)

    def stop(self) -> None:
        if self.running():
            self._pg_ctl("-m", "fast", "-w", "-t", "120", "stop", check=False)
        self.preload = None

    def before_session(self, mode: str) -> None:
        """Called before a benchmark session of vexec mode `mode` (a cluster
        of several servers sets the mode on every node)."""

    def settings(self, db: str) -> dict[str, str]:
        with psycopg.connect(self.dsn(db)) as c:
            return {k: c.execute(f"SHOW {k}").fetchone()[0] for k in REPORTED}

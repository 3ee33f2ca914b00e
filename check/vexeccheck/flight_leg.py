"""Leg `flight`: vexec_flight's logins (issue 44, its first part). A cluster
with vexec_flight preloaded and a pg_hba.conf of every method the endpoint
judges; pyarrow's Flight client logs in with Basic authentication and gets
a bearer token, or PostgreSQL's refusal for that case (the same message
pgwire gives, the SQLSTATE in `x-postgresql-sqlstate`, the reason only in
the server log). Also: a reload of pg_hba.conf, the session limit and the
idle timeout."""

import os
import time

import psycopg
import pyarrow.flight as flight

from vexecbench.cluster import Cluster

from .legs import LegResult, log

PORT = 5497
FLIGHT_PORT = 5496
MAX_SESSIONS = 40

HBA = """
local   all             all                             trust
host    all             flight_reject   127.0.0.1/32    reject
host    all             flight_trust    127.0.0.1/32    trust
host    all             +flight_banned  127.0.0.1/32    reject
hostssl all             all             127.0.0.1/32    trust
host    flight_md5db    all             127.0.0.1/32    md5
host    all             all             127.0.0.1/32    scram-sha-256
"""

SETUP = [
    "CREATE DATABASE flight_db",
    "CREATE DATABASE flight_md5db",
    "CREATE DATABASE flight_noconnect",
    "REVOKE CONNECT ON DATABASE flight_noconnect FROM PUBLIC",
    "CREATE DATABASE flight_closed ALLOW_CONNECTIONS false",
    "CREATE ROLE flight_alice LOGIN PASSWORD 'alice pw'",
    "CREATE ROLE flight_nologin NOLOGIN PASSWORD 'pw'",
    "CREATE ROLE flight_expired LOGIN PASSWORD 'pw' VALID UNTIL '2000-01-01'",
    "CREATE ROLE flight_reject LOGIN PASSWORD 'pw'",
    "CREATE ROLE flight_trust LOGIN",
    "CREATE ROLE flight_banned NOLOGIN",
    "CREATE ROLE flight_member LOGIN PASSWORD 'pw' IN ROLE flight_banned",
    "SET password_encryption = 'md5'",
    "CREATE ROLE flight_md5 LOGIN PASSWORD 'md5 pw'",
]


def flight_cluster(state: str) -> Cluster:
    c = Cluster("/usr/lib/postgresql/19/bin", os.path.join(state, "flight-pgdata"), PORT,
                libraries=("vexec_flight",),
                settings={"vexec_flight.port": str(FLIGHT_PORT), "vexec_flight.listen_addresses": "'127.0.0.1'",
                          "vexec_flight.max_sessions": str(MAX_SESSIONS)})
    if c.running():
        c.stop()
    if os.path.exists(c.datadir):
        import shutil
        shutil.rmtree(c.datadir)
    c.ensure_initialized()
    with open(os.path.join(c.datadir, "pg_hba.conf"), "w") as f:
        f.write(HBA)
    c.start(preload=True)
    with psycopg.connect(c.dsn("postgres"), autocommit=True) as conn:
        for s in SETUP:
            conn.execute(s)
    return c


def login(user: str, password: str, database: str | None = "flight_db"):
    """(token, None) or (None, the Flight error)."""
    client = flight.FlightClient(f"grpc://127.0.0.1:{FLIGHT_PORT}")
    headers = [(b"database", database.encode())] if database is not None else []
    try:
        key, value = client.authenticate_basic_token(user, password, flight.FlightCallOptions(headers=headers))
        return value.decode(), None
    except Exception as e:  # pyarrow maps some gRPC codes to non-Flight errors
        return None, e
    finally:
        client.close()


def server_log(c: Cluster) -> str:
    return open(os.path.join(c.datadir, "server.log")).read()


def leg_flight(state: str) -> LegResult:
    r = LegResult("flight")
    c = flight_cluster(state)
    try:
        # The listener starts after recovery: wait for its port.
        for _ in range(100):
            if "Arrow Flight SQL listening" in server_log(c):
                break
            time.sleep(0.1)

        def expect_ok(what, user, password, database="flight_db"):
            r.queries += 1
            token, err = login(user, password, database)
            if token is None:
                r.fail(f"{what}: refused: {err}")
            elif not (token.startswith("Bearer ") and len(token) == len("Bearer ") + 43):
                r.fail(f"{what}: token {token!r}")
            else:
                r.ok()
            return token

        def expect_refused(what, user, password, message, kind, database="flight_db", log_detail=None):
            r.queries += 1
            before = len(server_log(c))
            token, err = login(user, password, database)
            if token is not None:
                r.fail(f"{what}: logged in")
            elif not isinstance(err, kind) or message not in str(err):
                r.fail(f"{what}: {type(err).__name__}: {err} (expected {kind.__name__}: {message})")
            elif log_detail and log_detail not in server_log(c)[before:]:
                r.fail(f"{what}: the server log lacks {log_detail!r}")
            elif log_detail and log_detail in str(err):
                r.fail(f"{what}: the client was told the log's detail: {err}")
            else:
                r.ok()

        unauth = flight.FlightUnauthenticatedError
        expect_ok("scram-sha-256", "flight_alice", "alice pw")
        expect_ok("md5 (line for flight_md5db)", "flight_md5", "md5 pw", "flight_md5db")
        expect_ok("scram secret through an md5 line", "flight_alice", "alice pw", "flight_md5db")
        expect_ok("trust", "flight_trust", "")
        expect_refused("wrong password", "flight_alice", "wrong", 'password authentication failed for user "flight_alice"',
                       unauth, log_detail='Password does not match for user "flight_alice"')
        expect_refused("wrong md5 password", "flight_md5", "wrong", 'password authentication failed for user "flight_md5"',
                       unauth, "flight_md5db")
        expect_refused("empty password", "flight_alice", "", 'password authentication failed for user "flight_alice"',
                       unauth)
        expect_refused("no such role", "flight_nobody", "pw", 'password authentication failed for user "flight_nobody"',
                       unauth, log_detail='Role "flight_nobody" does not exist.')
        expect_refused("expired password", "flight_expired", "pw",
                       'password authentication failed for user "flight_expired"', unauth,
                       log_detail='User "flight_expired" has an expired password.')
        expect_refused("reject line", "flight_reject", "pw",
                       'pg_hba.conf rejects connection for host "127.0.0.1", user "flight_reject", '
                       'database "flight_db", no encryption', unauth)
        expect_refused("+group line", "flight_member", "pw",
                       'pg_hba.conf rejects connection for host "127.0.0.1", user "flight_member"', unauth)
        expect_refused("NOLOGIN role", "flight_nologin", "pw", 'role "flight_nologin" is not permitted to log in',
                       unauth)
        expect_refused("no such database", "flight_alice", "alice pw", 'database "flight_nope" does not exist',
                       unauth, "flight_nope")
        expect_refused("no CONNECT privilege", "flight_alice", "alice pw",
                       'permission denied for database "flight_noconnect"', flight.FlightUnauthorizedError, "flight_noconnect",
                       log_detail="User does not have CONNECT privilege.")
        expect_refused("ALLOW_CONNECTIONS false", "flight_alice", "alice pw",
                       'database "flight_closed" is not currently accepting connections', unauth,
                       "flight_closed")
        # A reload of pg_hba.conf is obeyed; one with an error is not taken.
        with open(os.path.join(c.datadir, "pg_hba.conf"), "w") as f:
            f.write("host all flight_alice 127.0.0.1/32 reject\n" + HBA)
        with psycopg.connect(c.dsn("postgres"), autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
        time.sleep(1)
        expect_refused("after a reload", "flight_alice", "alice pw", "pg_hba.conf rejects connection", unauth)
        with open(os.path.join(c.datadir, "pg_hba.conf"), "w") as f:
            f.write("host all all 127.0.0.1/32 no-such-method\n" + HBA)
        with psycopg.connect(c.dsn("postgres"), autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
        time.sleep(1)
        expect_refused("a broken file keeps the last rules", "flight_alice", "alice pw",
                       "pg_hba.conf rejects connection", unauth)
        r.queries += 1
        if "pg_hba.conf was not reloaded" in server_log(c):
            r.ok()
        else:
            r.fail("a broken pg_hba.conf was not reported")

        # The session limit, then the idle timeout frees the sessions.
        with open(os.path.join(c.datadir, "pg_hba.conf"), "w") as f:
            f.write(HBA)
        with psycopg.connect(c.dsn("postgres"), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET vexec_flight.session_idle_timeout = 3")
            conn.execute("SELECT pg_reload_conf()")
        time.sleep(4)
        for _ in range(MAX_SESSIONS):
            if login("flight_trust", "")[0] is None:
                break
        expect_refused("beyond max_sessions", "flight_trust", "",
                       f"too many Flight SQL sessions (vexec_flight.max_sessions = {MAX_SESSIONS})",
                       Exception)
        time.sleep(4)
        expect_ok("after the idle timeout", "flight_trust", "")
        # The listener survived all of it.
        r.queries += 1
        if "terminated by signal" in server_log(c) or "server process" in server_log(c) and "exited" in server_log(c):
            r.fail("a server process died:\n" + server_log(c)[-2000:])
        else:
            r.ok()
    finally:
        c.stop()
    log(f"flight: {r.passed} passed, {r.failed} failed")
    return r

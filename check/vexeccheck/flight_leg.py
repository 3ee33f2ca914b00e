"""Leg `flight`: vexec_flight (issue 44, its first parts). A cluster with
vexec_flight preloaded and a pg_hba.conf of every method the endpoint
judges; pyarrow's Flight client logs in with Basic authentication and gets
a bearer token, or PostgreSQL's refusal for that case (the same message
pgwire gives, the reason only in the server log); a reload of pg_hba.conf,
the session limit and the idle timeout. Then statements (GetFlightInfo +
DoGet of a CommandStatementQuery): results equal psycopg's, run as the role
(privileges, column privileges, row level security, current_user),
PostgreSQL's errors with their SQLSTATE, statement_timeout, cancel and
terminate of the session's worker, and the session in pg_stat_activity;
and ADBC's Flight SQL driver as a user would run it."""

import os
import time

import psycopg
import pyarrow.flight as flight

from vexecbench.cluster import Cluster
from vexecbench.flightsql import field as _field
from vexecbench.flightsql import statement_query

from .legs import LegResult, log

PORT = 5497
FLIGHT_PORT = 5496
MAX_SESSIONS = 6

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


def flight_cluster(state: str, tls: dict[str, str] | None = None) -> Cluster:
    c = Cluster("/usr/lib/postgresql/19/bin", os.path.join(state, "flight-pgdata"), PORT,
                libraries=("vexec_flight",),
                settings={"vexec_flight.port": str(FLIGHT_PORT), "vexec_flight.listen_addresses": "'127.0.0.1'",
                          "vexec_flight.max_sessions": str(MAX_SESSIONS),
                          # Each session is a background worker.
                          "max_worker_processes": "20", **(tls or {})})
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


def login(user: str, password: str, database: str | None = "flight_db", tls_ca: bytes | None = None):
    """(token, None) or (None, the Flight error)."""
    if tls_ca is None:
        client = flight.FlightClient(f"grpc://127.0.0.1:{FLIGHT_PORT}")
    else:
        client = flight.FlightClient(f"grpc+tls://127.0.0.1:{FLIGHT_PORT}", tls_root_certs=tls_ca)
    headers = [(b"database", database.encode())] if database is not None else []
    try:
        key, value = client.authenticate_basic_token(user, password, flight.FlightCallOptions(headers=headers))
        return value.decode(), None
    except Exception as e:  # pyarrow maps some gRPC codes to non-Flight errors
        return None, e
    finally:
        client.close()


class Session:
    """A logged-in pyarrow Flight client."""

    def __init__(self, user: str, password: str, database: str = "flight_db"):
        self.client = flight.FlightClient(f"grpc://127.0.0.1:{FLIGHT_PORT}")
        key, value = self.client.authenticate_basic_token(
            user, password, flight.FlightCallOptions(headers=[(b"database", database.encode())]))
        self.options = flight.FlightCallOptions(headers=[(key, value)])

    def query(self, sql: str):
        info = self.client.get_flight_info(flight.FlightDescriptor.for_command(statement_query(sql)), self.options)
        return self.client.do_get(info.endpoints[0].ticket, self.options).read_all()

    def error(self, sql: str) -> str:
        """The error text of a query that must fail ("" if it succeeded)."""
        try:
            self.query(sql)
            return ""
        except Exception as e:
            return f"{type(e).__name__}: {e}"

    def close(self):
        """End the session (Flight's CloseSession, as ADBC's driver does), then the client."""
        try:
            list(self.client.do_action(flight.Action("CloseSession", b""), self.options))
        finally:
            self.client.close()


def server_log(c: Cluster) -> str:
    return open(os.path.join(c.datadir, "server.log")).read()


STATEMENT_SETUP = [
    "CREATE TABLE flight_open (id int, name text, price numeric(12,2), day date)",
    "INSERT INTO flight_open SELECT g, 'n' || g, g * 1.25, date '2024-01-01' + g % 400 FROM generate_series(1, 30000) g",
    "GRANT SELECT ON flight_open TO flight_alice",
    "CREATE TABLE flight_secret (id int, code text)",
    "INSERT INTO flight_secret VALUES (1, 'x')",
    "CREATE TABLE flight_cols (visible int, hidden text)",
    "INSERT INTO flight_cols VALUES (7, 'h')",
    "GRANT SELECT (visible) ON flight_cols TO flight_alice",
    "CREATE TABLE flight_rls (owner text, v int)",
    "INSERT INTO flight_rls VALUES ('flight_alice', 1), ('someone', 2), ('flight_alice', 3)",
    "ALTER TABLE flight_rls ENABLE ROW LEVEL SECURITY",
    "CREATE POLICY mine ON flight_rls USING (owner = current_user)",
    "GRANT SELECT ON flight_rls TO flight_alice",
    "CREATE TABLE flight_tx (a int)",
    "GRANT SELECT, INSERT, UPDATE ON flight_tx TO flight_alice",
]


def statements(c: Cluster, r: LegResult) -> None:
    time.sleep(4)  # the sessions of the limit test time out (3 s)
    with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
        for sql in STATEMENT_SETUP:
            conn.execute(sql)
        conn.execute("ALTER SYSTEM RESET vexec_flight.session_idle_timeout")
        conn.execute("SELECT pg_reload_conf()")
    time.sleep(1)

    def check(what: str, ok: bool, detail: str = "") -> None:
        r.queries += 1
        if ok:
            r.ok()
        else:
            r.fail(f"{what}: {detail}")

    s = Session("flight_alice", "alice pw")
    try:
        # Results: equal to psycopg's, across many batches, with vexec on and off.
        sql = "SELECT id, name, price, day FROM flight_open ORDER BY id"
        with psycopg.connect(c.dsn("flight_db")) as conn:
            expected = conn.execute(sql).fetchall()
        for mode in ("off", "force"):
            with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
                conn.execute(f"ALTER ROLE flight_alice SET vexec.mode = {mode}")
            t = Session("flight_alice", "alice pw")  # a new session takes the role's settings
            got = t.query(sql)
            rows = list(zip(*(col.to_pylist() for col in got.columns)))
            check(f"rows (vexec.mode = {mode})", rows == expected,
                  f"{len(rows)} rows, first {rows[:2]} vs {expected[:2]}")
            check("schema", [f.name for f in got.schema] == ["id", "name", "price", "day"], str(got.schema))
            t.close()
        check("current_user", s.query("SELECT current_user AS u").column(0).to_pylist() == ["flight_alice"])
        # Privileges as over pgwire.
        e = s.error("SELECT * FROM flight_secret")
        check("table privilege", "permission denied for table flight_secret" in e and "Unauthorized" in e, e)
        check("column privilege: granted", s.query("SELECT visible FROM flight_cols").column(0).to_pylist() == [7])
        e = s.error("SELECT hidden FROM flight_cols")
        check("column privilege: refused", "permission denied for table flight_cols" in e, e)
        got = sorted(s.query("SELECT v FROM flight_rls").column(0).to_pylist())
        check("row level security", got == [1, 3], str(got))
        # Errors: PostgreSQL's, and the session goes on.
        e = s.error("SELEC 1")
        check("syntax error", 'syntax error at or near "SELEC"' in e, e)
        e = s.error("SELECT 1 / (g - 20000) FROM generate_series(1, 30000) g")
        check("an error after batches were sent", "division by zero" in e, e)
        check("the session goes on", s.query("SELECT 2 AS x").column(0).to_pylist() == [2])
        # statement_timeout, from the role's settings.
        with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
            conn.execute("ALTER ROLE flight_alice SET statement_timeout = '300ms'")
        t = Session("flight_alice", "alice pw")
        e = t.error("SELECT pg_sleep(5)")
        check("statement_timeout", "canceling statement due to statement timeout" in e, e)
        t.close()
        with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
            conn.execute("ALTER ROLE flight_alice RESET statement_timeout")
        # pg_stat_activity, pg_cancel_backend, pg_terminate_backend.
        import threading
        result = {}
        worker = threading.Thread(target=lambda: result.update(e=s.error("SELECT pg_sleep(30)")))
        worker.start()
        time.sleep(1)
        with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
            act = conn.execute("SELECT pid, usename, datname, application_name, query, host(client_addr), "
                               "client_port FROM pg_stat_activity "
                               "WHERE backend_type = 'vexec_flight session' AND state = 'active'").fetchall()
            check("pg_stat_activity", len(act) == 1 and act[0][1:3] == ("flight_alice", "flight_db")
                  and act[0][3].startswith("vexec_flight 127.0.0.1") and act[0][4] == "SELECT pg_sleep(30)"
                  and act[0][5] == "127.0.0.1" and act[0][3] == f"vexec_flight 127.0.0.1:{act[0][6]}",
                  str(act))
            if act:
                conn.execute("SELECT pg_cancel_backend(%s)", (act[0][0],))
        worker.join(20)
        check("pg_cancel_backend", "canceling statement due to user request" in result.get("e", ""), str(result))
        check("the session goes on after a cancel", s.query("SELECT 3 AS x").column(0).to_pylist() == [3])
        # A cancel that finds no statement (the session idle) cancels nothing, as for a backend.
        with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
            conn.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
                         "WHERE backend_type = 'vexec_flight session' AND state = 'idle'")
        time.sleep(0.5)
        check("an idle session survives a cancel", s.query("SELECT 4 AS x").column(0).to_pylist() == [4])
        # CancelFlightInfo: the statement of a FlightInfo, while it runs; then it is over.
        info = s.client.get_flight_info(
            flight.FlightDescriptor.for_command(statement_query("SELECT pg_sleep(30)")), s.options)
        result = {}

        def fetch():
            try:
                s.client.do_get(info.endpoints[0].ticket, s.options).read_all()
                result["e"] = ""
            except Exception as ex:
                result["e"] = str(ex)
        fetching = threading.Thread(target=fetch)
        fetching.start()
        time.sleep(1)
        # (pyarrow has no cancel_flight_info: the action, by hand. Its result is
        # CancelFlightInfoResult { status }: 1 CANCELLED, 3 NOT_CANCELLABLE.)
        cancel = flight.Action("CancelFlightInfo", _field(1, info.serialize()))
        res = [r.body.to_pybytes() for r in s.client.do_action(cancel, s.options)]
        fetching.join(20)
        check("CancelFlightInfo", res == [b"\x08\x01"]
              and "canceling statement due to user request" in result.get("e", ""), f"{res} {result}")
        res = [r.body.to_pybytes() for r in s.client.do_action(cancel, s.options)]
        check("CancelFlightInfo after the end", res == [b"\x08\x03"], str(res))
        with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
            pids = [p for (p,) in conn.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = "
                                                "'vexec_flight session' AND usename = 'flight_alice'").fetchall()]
            for p in pids:
                conn.execute("SELECT pg_terminate_backend(%s)", (p,))
        time.sleep(1)
        e = s.error("SELECT 4")
        check("after pg_terminate_backend", "session" in e and ("ended" in e or "expired" in e), e)
        # A client that goes away in the middle of a stream: the statement is
        # cancelled, the session is idle again and serves the next query.
        t = Session("flight_alice", "alice pw")
        info = t.client.get_flight_info(flight.FlightDescriptor.for_command(
            statement_query("SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 5000000) g")), t.options)
        reader = t.client.do_get(info.endpoints[0].ticket, t.options)
        first = reader.read_chunk()
        reader.cancel()
        idle = False
        for _ in range(100):
            with psycopg.connect(c.dsn("flight_db")) as conn:
                states = [st for (st,) in conn.execute(
                    "SELECT state FROM pg_stat_activity WHERE backend_type = 'vexec_flight session' "
                    "AND query LIKE '%generate_series(1, 5000000)%'").fetchall()]
            if states == ["idle"]:
                idle = True
                break
            time.sleep(0.1)
        check("a client gone mid-stream: the statement stops", first.data.num_rows > 0 and idle, str(states))
        check("... and the session goes on", t.query("SELECT 6 AS x").column(0).to_pylist() == [6])
        t.close()
        # Connection limits count pgwire backends and Flight sessions alike.
        with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
            conn.execute("ALTER ROLE flight_alice CONNECTION LIMIT 1")
            conn.execute("ALTER DATABASE flight_md5db CONNECTION LIMIT 1")
        s2 = Session("flight_alice", "alice pw")  # (s ended with pg_terminate_backend)
        token, err = login("flight_alice", "alice pw")
        check("role connection limit", token is None and 'too many connections for role "flight_alice"' in str(err),
              str(err))
        s2.close()
        with psycopg.connect(c.dsn("flight_md5db", user="flight_md5")) as pg:
            token, err = login("flight_md5", "md5 pw", "flight_md5db")
            check("database connection limit, a pgwire backend counted",
                  token is None and 'too many connections for database "flight_md5db"' in str(err), str(err))
        with psycopg.connect(c.dsn("flight_db"), autocommit=True) as conn:
            conn.execute("ALTER ROLE flight_alice CONNECTION LIMIT -1")
            conn.execute("ALTER DATABASE flight_md5db CONNECTION LIMIT -1")
        # A token that was never given.
        bogus = flight.FlightCallOptions(headers=[(b"authorization", b"Bearer " + b"A" * 43)])
        try:
            s.client.get_flight_info(flight.FlightDescriptor.for_command(statement_query("SELECT 1")), bogus)
            check("a forged token", False, "served")
        except flight.FlightUnauthenticatedError as e:
            check("a forged token", "invalid or expired session token" in str(e), str(e))
        from .flight_metadata import keys_and_types
        keys_and_types(c, check)
    finally:
        s.close()
    # ADBC's Flight SQL driver, as a user runs it.
    try:
        import adbc_driver_flightsql.dbapi as flightsql
        with flightsql.connect(f"grpc://127.0.0.1:{FLIGHT_PORT}", db_kwargs={
                "username": "flight_alice", "password": "alice pw",
                "adbc.flight.sql.rpc.call_header.database": "flight_db"}, autocommit=True) as conn:
            with conn.cursor() as cur:
                cur.execute("SELECT count(*) AS n, sum(price) AS s FROM flight_open")
                t = cur.fetch_arrow_table()
        check("ADBC", t.column("n").to_pylist() == [30000] and str(t.column("s")[0]) == "562518750.00",
              str(t.to_pylist()))
    except Exception as e:
        check("ADBC", False, f"{type(e).__name__}: {e}")
    adbc_updates_and_transactions(c, check)
    from .flight_ingest import ingest
    try:
        ingest(c, FLIGHT_PORT, login, check)
    except Exception as e:
        check("ingest", False, f"{type(e).__name__}: {e}")


def catalogs(conn, check) -> None:
    """GetCatalogs, GetDbSchemas, GetTables (with schemas) and
    GetTableTypes, through ADBC's metadata calls."""
    types = conn.adbc_get_table_types()
    check("table types", "TABLE" in types and "VIEW" in types, str(types))
    objs = conn.adbc_get_objects(depth="catalogs").read_all().to_pylist()
    check("catalogs: the session's database", [o["catalog_name"] for o in objs] == ["flight_db"], str(objs))
    objs = conn.adbc_get_objects(depth="db_schemas").read_all().to_pylist()
    schemas = {s["db_schema_name"] for o in objs for s in o["catalog_db_schemas"]}
    check("schemas", {"public", "pg_catalog", "information_schema"} <= schemas and "pg_toast" not in schemas,
          str(sorted(schemas)))
    objs = conn.adbc_get_objects(depth="tables", db_schema_filter="public",
                                 table_name_filter="flight\\_%").read_all().to_pylist()
    tables = {(t["table_name"], t["table_type"]) for o in objs for s in o["catalog_db_schemas"]
              for t in (s["db_schema_tables"] or [])}
    want = {(t, "TABLE") for t in ("flight_open", "flight_secret", "flight_cols", "flight_rls", "flight_tx")}
    check("tables, filtered by patterns", tables == want, str(sorted(tables)))
    schema = conn.adbc_get_table_schema("flight_open", db_schema_filter="public")
    check("a table's Arrow schema", [(f.name, str(f.type)) for f in schema] ==
          [("id", "int32"), ("name", "string"), ("price", "decimal128(12, 2)"), ("day", "date32[day]")], str(schema))


def sessions(c: Cluster) -> int:
    with psycopg.connect(c.dsn("postgres")) as conn:
        return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'vexec_flight session'"
                            ).fetchone()[0]


def parameters(c: Cluster, cur, check) -> None:
    """Statements with parameters through ADBC (a prepared statement, its
    values bound with DoPut): typed values, strings whose type PostgreSQL
    infers, NULL, executemany, the parameter schema, and pgwire's errors."""
    import datetime

    def run(sql, params):
        try:
            cur.execute(sql, parameters=params)
            return cur.fetch_arrow_table().to_pylist()
        except Exception as e:
            return f"{type(e).__name__}: {e}"

    got = run("SELECT id, name FROM flight_open WHERE id = $1", (7,))
    check("a typed parameter", got == [{"id": 7, "name": "n7"}], str(got))
    with psycopg.connect(c.dsn("flight_db")) as conn:
        want = conn.execute("SELECT count(*) FROM flight_open WHERE day = '2024-01-05'").fetchone()[0]
    got = run("SELECT count(*) AS n FROM flight_open WHERE day = $1", ("2024-01-05",))
    check("a string parameter, its type (date) inferred", got == [{"n": want}], f"{got} vs {want}")
    got = run("SELECT count(*) AS n FROM flight_open WHERE day = $1", (datetime.date(2024, 1, 5),))
    check("a date parameter", got == [{"n": want}], f"{got} vs {want}")
    got = run("SELECT $1::text IS NULL AS x, $2 + 1 AS y", (None, 41))
    check("a NULL parameter", got == [{"x": True, "y": 42}], str(got))
    got = run("SELECT id FROM flight_open WHERE id = $1", ("seven",))
    check("a parameter its type cannot read (22P02)", 'invalid input syntax for type integer: "seven"' in str(got),
          str(got))
    got = run("SELECT $1::int + $2::int AS x", (1,))
    check("too few parameters (42P02)", "there is no parameter $2" in str(got), str(got))
    cur.execute("CREATE TEMP TABLE t_params (a int, b text)")
    cur.fetch_arrow_table()
    cur.executemany("INSERT INTO t_params VALUES ($1, $2)", [(1, "x"), (2, None), (3, "z")])
    got = run("SELECT a, b FROM t_params WHERE a >= $1 ORDER BY a", (1,))
    check("executemany: one execution per row", got == [{"a": 1, "b": "x"}, {"a": 2, "b": None},
                                                         {"a": 3, "b": "z"}], str(got))
    schema = cur.adbc_prepare("SELECT a FROM t_params WHERE a > $1 AND b = $2")
    check("a prepared statement's parameter types",
          [(f.name, str(f.type)) for f in schema] == [("$1", "int32"), ("$2", "string")], str(schema))


def adbc_updates_and_transactions(c: Cluster, check) -> None:
    """Statements without rows, updates with their counts, transactions
    (ADBC's DB-API connection runs with autocommit off, in Flight SQL
    transactions), and GetSqlInfo, through ADBC's driver."""
    import adbc_driver_flightsql.dbapi as flightsql
    kw = {"username": "flight_alice", "password": "alice pw", "adbc.flight.sql.rpc.call_header.database": "flight_db"}

    def pg_rows():
        with psycopg.connect(c.dsn("flight_db")) as conn:
            return [a for (a,) in conn.execute("SELECT a FROM flight_tx ORDER BY a").fetchall()]

    try:
        with flightsql.connect(f"grpc://127.0.0.1:{FLIGHT_PORT}", db_kwargs=kw, autocommit=True) as conn:
            cur = conn.cursor()
            cur.execute("CREATE TEMP TABLE t_local (a int)")
            cur.fetch_arrow_table()
            cur.execute("INSERT INTO t_local SELECT generate_series(1, 10)")
            check("DDL and DML through a statement query", cur.fetch_arrow_table().num_columns == 0)
            stmt = cur.adbc_statement
            stmt.set_sql_query("UPDATE t_local SET a = a + 1 WHERE a <= 5")
            check("execute_update's row count", stmt.execute_update() == 5)
            cur.execute("SELECT sum(a) AS s FROM t_local")
            check("the session's temp table", cur.fetch_arrow_table().column(0).to_pylist() == [60])
            prepared = "SELECT count(*) AS n FROM t_local WHERE a <= 6"
            cur.adbc_prepare(prepared)
            runs = []
            for _ in range(2):  # the cursor runs its prepared statement
                cur.execute(prepared)
                runs.append(cur.fetch_arrow_table().column(0).to_pylist())
            check("a prepared statement, run twice", runs == [[6], [6]], str(runs))
            parameters(c, cur, check)
            cur.execute("BEGIN")
            try:
                cur.fetch_arrow_table()
                check("BEGIN as a statement", False, "accepted")
            except Exception as e:
                check("BEGIN as a statement", "transaction control statements are not supported" in str(e), str(e))
            catalogs(conn, check)
            check("the session's process", sessions(c) == 1, str(sessions(c)))
            info = conn.adbc_get_info()
            check("GetSqlInfo", info.get("vendor_name") == "PostgreSQL (vexec_flight)"
                  and str(info.get("vendor_version", "")).startswith("19"), str(info))
        time.sleep(0.5)
        check("CloseSession ends the session's process", sessions(c) == 0, str(sessions(c)))
        with flightsql.connect(f"grpc://127.0.0.1:{FLIGHT_PORT}", db_kwargs=kw) as conn:  # autocommit off
            cur = conn.cursor()
            cur.execute("INSERT INTO flight_tx VALUES (1)")
            cur.fetch_arrow_table()
            check("uncommitted rows are not seen", pg_rows() == [], str(pg_rows()))
            conn.rollback()
            cur.execute("INSERT INTO flight_tx VALUES (2)")
            cur.fetch_arrow_table()
            conn.commit()
            check("rollback then commit", pg_rows() == [2], str(pg_rows()))
            cur.execute("INSERT INTO flight_tx VALUES (3)")
            cur.fetch_arrow_table()
            try:
                cur.execute("SELECT 1 / 0 AS x")
                cur.fetch_arrow_table()
            except Exception:
                pass
            try:
                cur.execute("SELECT 1 AS x")
                cur.fetch_arrow_table()
                e = ""
            except Exception as ex:
                e = str(ex)
            check("a failed transaction ignores commands", "current transaction is aborted" in e, e)
            try:
                conn.commit()
                e = ""
            except Exception as ex:
                e = str(ex)
            check("COMMIT of a failed transaction is refused", "rolled back" in e and pg_rows() == [2],
                  f"{e} {pg_rows()}")
        # (ADBC's driver does not begin a new transaction after a failed commit:
        # a new connection.)
        with flightsql.connect(f"grpc://127.0.0.1:{FLIGHT_PORT}", db_kwargs=kw) as conn:
            cur = conn.cursor()
            cur.execute("INSERT INTO flight_tx VALUES (4)")
            cur.fetch_arrow_table()
            conn.commit()
            check("a new transaction after it", pg_rows() == [2, 4], str(pg_rows()))
    except Exception as e:
        check("ADBC updates and transactions", False, f"{type(e).__name__}: {e}")


def leg_flight_tls(state: str, r: LegResult) -> None:
    """The endpoint over TLS (a test CA's certificate for 127.0.0.1): hostssl
    lines match, hostnossl ones do not; plain clients are refused."""
    import trustme
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    tls_dir = os.path.join(state, "flight-tls")
    os.makedirs(tls_dir, exist_ok=True)
    cert.private_key_pem.write_to_path(os.path.join(tls_dir, "server.key"))
    cert.cert_chain_pems[0].write_to_path(os.path.join(tls_dir, "server.crt"))
    settings = {"vexec_flight.ssl_cert_file": f"'{tls_dir}/server.crt'",
                "vexec_flight.ssl_key_file": f"'{tls_dir}/server.key'"}
    c = flight_cluster(state, settings)
    with open(os.path.join(c.datadir, "pg_hba.conf"), "w") as f:
        f.write("local all all trust\n"
                "hostnossl all flight_alice 127.0.0.1/32 reject\n"
                "hostssl all flight_trust 127.0.0.1/32 trust\n"
                "hostssl all all 127.0.0.1/32 scram-sha-256\n")
    with psycopg.connect(c.dsn("postgres"), autocommit=True) as conn:
        conn.execute("SELECT pg_reload_conf()")
    time.sleep(1)
    ca_pem = ca.cert_pem.bytes()
    try:
        for _ in range(100):
            if "Arrow Flight SQL listening on port" in server_log(c):
                break
            time.sleep(0.1)

        def check(what, ok, detail=""):
            r.queries += 1
            r.ok() if ok else r.fail(f"{what}: {detail}")

        token, err = login("flight_alice", "alice pw", tls_ca=ca_pem)
        check("TLS: scram on a hostssl line", token is not None, str(err))
        token, err = login("flight_trust", "", tls_ca=ca_pem)
        check("TLS: trust on a hostssl line", token is not None, str(err))
        token, err = login("flight_alice", "wrong", tls_ca=ca_pem)
        check("TLS: a wrong password", token is None and "password authentication failed" in str(err), str(err))
        token, err = login("flight_alice", "alice pw")
        check("TLS: a plain client is refused", token is None, str(err))
        client = flight.FlightClient(f"grpc+tls://127.0.0.1:{FLIGHT_PORT}", tls_root_certs=ca_pem)
        key, value = client.authenticate_basic_token(
            "flight_alice", "alice pw", flight.FlightCallOptions(headers=[(b"database", b"flight_db")]))
        opts = flight.FlightCallOptions(headers=[(key, value)])
        info = client.get_flight_info(flight.FlightDescriptor.for_command(statement_query("SELECT 42 AS x")), opts)
        got = client.do_get(info.endpoints[0].ticket, opts).read_all().column(0).to_pylist()
        check("TLS: a query", got == [42], str(got))
        client.close()
    finally:
        c.stop()


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
        statements(c, r)
        # The listener survived all of it.
        r.queries += 1
        if "terminated by signal" in server_log(c) or "server process" in server_log(c) and "exited" in server_log(c):
            r.fail("a server process died:\n" + server_log(c)[-2000:])
        else:
            r.ok()
    finally:
        c.stop()
    leg_flight_tls(state, r)
    log(f"flight: {r.passed} passed, {r.failed} failed")
    return r

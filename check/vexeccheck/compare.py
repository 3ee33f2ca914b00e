"""Comparing query results: PostgreSQL against PostgreSQL (exact, on the
text PostgreSQL prints) and PostgreSQL against DuckDB (normalised).

Normalisation for DuckDB answers:
- rows are compared in order when the query orders its result; to make that
  order total, the comparison runs both engines on the query with every output
  column appended to its ORDER BY as a tie-breaker (`tie_broken`);
- unordered results are compared as sorted multisets;
- char(n) values are compared without their trailing blanks (PostgreSQL pads
  them, DuckDB has no char type);
- numbers are equal when they agree to the precision of the less precise side:
  its number of decimals, or 14 significant digits (DuckDB computes averages
  and decimal divisions in double precision, PostgreSQL in exact numeric);
- a LIMIT without ORDER BY may return any rows, so only the row count is
  compared.
"""

import datetime
import decimal
import re

import psycopg
from psycopg import pq


def _top_level_positions(sql: str, word: str) -> list[int]:
    """Positions of a keyword outside parentheses and string literals."""
    out, depth, i, n = [], 0, 0, len(sql)
    pat = re.compile(r"\b" + word.replace(" ", r"\s+") + r"\b", re.I)
    while i < n:
        ch = sql[i]
        if ch == "'":
            i = sql.index("'", i + 1) + 1 if "'" in sql[i + 1:] else n
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0:
            m = pat.match(sql, i)
            if m and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
                out.append(i)
        i += 1
    return out


def limit_without_order(sql: str) -> bool:
    return bool(_top_level_positions(sql, "LIMIT")) and not has_order_by(sql)


def has_order_by(sql: str) -> bool:
    return bool(_top_level_positions(sql, "ORDER BY"))


def tie_broken(sql: str, ncols: int) -> str:
    """The query with all output columns appended to its top-level ORDER BY."""
    pos = _top_level_positions(sql, "ORDER BY")
    if not pos or ncols == 0:
        return sql
    start = pos[-1]
    ends = [p for w in ("LIMIT", "OFFSET") for p in _top_level_positions(sql, w) if p > start]
    body = sql.rstrip().rstrip(";")
    end = min(ends) if ends else len(body)
    extra = ", ".join(str(i) for i in range(1, ncols + 1))
    return body[:end].rstrip() + ", " + extra + " " + body[end:]


def norm(v):
    if v is None:
        return ("null",)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, decimal.Decimal, float)):
        if isinstance(v, float) and v != v:
            return ("nan",)
        d = decimal.Decimal(repr(v)) if isinstance(v, float) else decimal.Decimal(v)
        return ("num", d)
    if isinstance(v, str):
        return ("str", v.rstrip(" "))
    if isinstance(v, (datetime.date, datetime.datetime, datetime.time)):
        return ("time", v.isoformat())
    return ("other", str(v))


def _num_close(a: decimal.Decimal, b: decimal.Decimal) -> bool:
    if a == b:
        return True
    scale = min(-a.as_tuple().exponent, -b.as_tuple().exponent, 28)
    if abs(a - b) <= decimal.Decimal(1).scaleb(-max(scale, 0)):
        return True
    return abs(a - b) <= decimal.Decimal("1e-14") * max(abs(a), abs(b))


def values_equal(a, b) -> bool:
    if a[0] == "num" and b[0] == "num":
        return _num_close(a[1], b[1])
    return a == b


def rows_equal(ra: list[tuple], rb: list[tuple]) -> str | None:
    """None when equal, else a description of the first difference."""
    if len(ra) != len(rb):
        return f"{len(ra)} rows vs {len(rb)} rows"
    for i, (x, y) in enumerate(zip(ra, rb)):
        if len(x) != len(y) or not all(values_equal(p, q) for p, q in zip(x, y)):
            return f"row {i}: {x} vs {y}"
    return None


def sort_key(row):
    return tuple((t[0], str(t[1:])) for t in row)


def pg_rows(conn: psycopg.Connection, sql: str) -> list[tuple]:
    return [tuple(norm(v) for v in r) for r in conn.execute(sql).fetchall()]


def duck_rows(con, sql: str) -> list[tuple]:
    return [tuple(norm(v) for v in r) for r in con.execute(sql).fetchall()]


def pg_text_result(conn: psycopg.Connection, sql: str) -> tuple[str, object]:
    """("ok", rows as text tuples) or ("error", SQLSTATE) of one statement, by
    raw libpq (the values exactly as PostgreSQL prints them)."""
    res = conn.pgconn.exec_(sql.encode())
    if res.status in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
        rows = [tuple(None if res.get_value(r, c) is None else res.get_value(r, c).decode(errors="replace")
                      for c in range(res.nfields)) for r in range(res.ntuples)]
        return "ok", rows
    return "error", (res.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode()

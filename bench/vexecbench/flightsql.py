"""Flight SQL commands by hand, for pyarrow's Flight client (which has no
Flight SQL layer): a command is a protobuf message packed in a
`google.protobuf.Any`, encoded here with the two wire types it needs."""


def varint(n: int) -> bytes:
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(number: int, data: bytes) -> bytes:
    """A length-delimited field (strings, bytes, messages)."""
    return varint(number << 3 | 2) + varint(len(data)) + data


def number(field_number: int, n: int) -> bytes:
    """A varint field (integers, enums, booleans)."""
    return varint(field_number << 3) + varint(n)


def command(name: str, body: bytes) -> bytes:
    """Flight SQL's command `name` (e.g. CommandStatementQuery) with `body`, packed in an Any."""
    return field(1, f"type.googleapis.com/arrow.flight.protocol.sql.{name}".encode()) + field(2, body)


def statement_query(sql: str) -> bytes:
    return command("CommandStatementQuery", field(1, sql.encode()))

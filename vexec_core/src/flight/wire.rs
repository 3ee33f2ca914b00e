//! Messages between the Flight SQL listener and a session worker, over a
//! pair of shared-memory queues (shm_mq). A message is a tag byte and its
//! fields; strings and byte strings are a little-endian u32 length and the
//! bytes. The worker encodes Arrow data as Flight's IPC pieces (an IPC
//! message header and its body), so the listener forwards them as
//! `FlightData` without decoding.

/// What the listener asks a session worker. `transaction` is the id of the
/// Flight SQL transaction a statement belongs to (empty: autocommit);
/// `params` the values of its parameters, an Arrow IPC stream whose rows are
/// executions (empty: none).
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// The schema of a query's result, from its plan (nothing runs), then
    /// that of its parameters (their types as `params` would bind them;
    /// without `params`, inferred).
    Describe { sql: String, transaction: Vec<u8>, params: Vec<u8> },
    /// Run a query; its result as Arrow (a statement that returns no rows
    /// runs too, with an empty schema).
    Query { sql: String, transaction: Vec<u8>, params: Vec<u8> },
    /// Run statements for their effect; the answer is `Done` with the rows
    /// they processed.
    Update { sql: String, transaction: Vec<u8>, params: Vec<u8> },
    /// A catalog query (`describe`: only its schema), run in the session's
    /// open transaction if it has one (catalog commands name none).
    Catalog { sql: String, describe: bool },
    /// Open a transaction block named `transaction`.
    Begin { transaction: Vec<u8> },
    /// Commit or roll back the open transaction block.
    End { transaction: Vec<u8>, commit: bool },
    /// Insert an upload into a table (Flight SQL's bulk ingest); the
    /// upload follows as `Piece`s ended by `PieceEnd` or `PieceAbort`,
    /// which the worker reads to their end whatever happens.
    Ingest { target: IngestTarget, transaction: Vec<u8> },
    /// One IPC message of an upload (the schema first, then batches).
    Piece { header: Vec<u8>, body: Vec<u8> },
    /// The upload is complete.
    PieceEnd,
    /// The upload broke off (the client went away, or sent garbage): the
    /// statement fails with this error.
    PieceAbort { sqlstate: String, message: String },
}

/// Where an ingest goes and what it does with what is there.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestTarget {
    pub table: String,
    /// Empty: none given (the search path decides).
    pub schema: String,
    /// Empty: none given (else it must be the session's database).
    pub catalog: String,
    pub temporary: bool,
    /// Create the table when it does not exist (else that is an error).
    pub create: bool,
    pub if_exists: IfExists,
}

/// What an ingest does when its table exists.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IfExists {
    Fail,
    Append,
    /// Drop it and create it anew from the upload's schema.
    Replace,
}

/// What a session worker answers, in order: for a Describe, two `Data`
/// (the result's schema, the parameters') then `Done`; for a Query, `Data` pieces (the schema, then
/// batches) then `Done`; for an Update, `Done`; or `Error` at any point,
/// which ends the answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// One IPC message: Flight's `data_header` and `data_body`.
    Data { header: Vec<u8>, body: Vec<u8> },
    /// The end of a successful answer, with the number of rows.
    Done { rows: u64 },
    /// PostgreSQL's error: SQLSTATE, message, detail and hint.
    Error { sqlstate: String, message: String, detail: String, hint: String },
}

/// The bytes of `Response::Data { header, body }` that come before the
/// body: a sender writes them and the body as two pieces (shm_mq_sendv),
/// so a batch's data is copied once, into the queue.
pub fn data_prefix(header: &[u8], body_len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + header.len());
    out.push(b'd');
    put(&mut out, header);
    out.extend_from_slice(&(body_len as u32).to_le_bytes());
    out
}

impl Response {
    /// Whether this message ends an answer.
    pub fn is_last(&self) -> bool {
        !matches!(self, Response::Data { .. })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Malformed;

/// PostgreSQL's packed SQLSTATE (elog.h's MAKE_SQLSTATE: five 6-bit
/// characters, the first in the low bits) as its five characters.
pub fn sqlstate_text(code: i32) -> String {
    (0..5).map(|i| ((((code >> (6 * i)) & 0x3f) as u8) + b'0') as char).collect()
}

/// Five SQLSTATE characters packed as PostgreSQL packs them (None if they
/// are not five of 0-9A-Z).
pub fn sqlstate_code(text: &str) -> Option<i32> {
    let b = text.as_bytes();
    (b.len() == 5 && b.iter().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()))
        .then(|| b.iter().enumerate().map(|(i, &c)| (((c - b'0') & 0x3f) as i32) << (6 * i)).sum())
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let len = self.0.get(..4).ok_or(Malformed)?;
        let len = u32::from_le_bytes(len.try_into().map_err(|_| Malformed)?) as usize;
        let v = self.0.get(4..4 + len).ok_or(Malformed)?;
        self.0 = &self.0[4 + len..];
        Ok(v)
    }

    fn string(&mut self) -> Result<String, Malformed> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| Malformed)
    }

    fn u64(&mut self) -> Result<u64, Malformed> {
        let v = self.0.get(..8).ok_or(Malformed)?;
        self.0 = &self.0[8..];
        Ok(u64::from_le_bytes(v.try_into().map_err(|_| Malformed)?))
    }

    fn byte(&mut self) -> Result<u8, Malformed> {
        let (&b, rest) = self.0.split_first().ok_or(Malformed)?;
        self.0 = rest;
        Ok(b)
    }

    fn end(self) -> Result<(), Malformed> {
        self.0.is_empty().then_some(()).ok_or(Malformed)
    }
}

/// A `Piece` message's IPC header and body, borrowed from the message
/// (None for any other request): the session reads an upload's batches
/// in place, so a batch's body is copied once, into Arrow's buffer.
pub fn piece_of(msg: &[u8]) -> Option<Result<(&[u8], &[u8]), Malformed>> {
    let (&b'p', rest) = msg.split_first()? else { return None };
    let mut r = Reader(rest);
    let piece = (|| {
        let (header, body) = (r.bytes()?, r.bytes()?);
        r.end()?;
        Ok((header, body))
    })();
    Some(piece)
}

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Request::Describe { sql, transaction, params }
            | Request::Query { sql, transaction, params }
            | Request::Update { sql, transaction, params } => {
                out.push(match self {
                    Request::Describe { .. } => b'D',
                    Request::Query { .. } => b'Q',
                    _ => b'U',
                });
                put(&mut out, sql.as_bytes());
                put(&mut out, transaction);
                put(&mut out, params);
            }
            Request::Catalog { sql, describe } => {
                out.push(if *describe { b'd' } else { b'c' });
                put(&mut out, sql.as_bytes());
            }
            Request::Begin { transaction } => {
                out.push(b'B');
                put(&mut out, transaction);
            }
            Request::End { transaction, commit } => {
                out.push(if *commit { b'C' } else { b'R' });
                put(&mut out, transaction);
            }
            Request::Ingest { target, transaction } => {
                out.push(b'I');
                for s in [&target.table, &target.schema, &target.catalog] {
                    put(&mut out, s.as_bytes());
                }
                out.push(target.temporary as u8);
                out.push(target.create as u8);
                out.push(match target.if_exists {
                    IfExists::Fail => 0,
                    IfExists::Append => 1,
                    IfExists::Replace => 2,
                });
                put(&mut out, transaction);
            }
            Request::Piece { header, body } => {
                out.reserve(9 + header.len() + body.len());
                out.push(b'p');
                put(&mut out, header);
                put(&mut out, body);
            }
            Request::PieceEnd => out.push(b'E'),
            Request::PieceAbort { sqlstate, message } => {
                out.push(b'A');
                put(&mut out, sqlstate.as_bytes());
                put(&mut out, message.as_bytes());
            }
        }
        out
    }

    pub fn decode(msg: &[u8]) -> Result<Request, Malformed> {
        let (&tag, rest) = msg.split_first().ok_or(Malformed)?;
        let mut r = Reader(rest);
        let req = match tag {
            b'D' | b'Q' | b'U' => {
                let (sql, transaction, params) = (r.string()?, r.bytes()?.to_vec(), r.bytes()?.to_vec());
                match tag {
                    b'D' => Request::Describe { sql, transaction, params },
                    b'Q' => Request::Query { sql, transaction, params },
                    _ => Request::Update { sql, transaction, params },
                }
            }
            b'c' | b'd' => Request::Catalog { sql: r.string()?, describe: tag == b'd' },
            b'B' => Request::Begin { transaction: r.bytes()?.to_vec() },
            b'C' | b'R' => Request::End { transaction: r.bytes()?.to_vec(), commit: tag == b'C' },
            b'I' => {
                let (table, schema, catalog) = (r.string()?, r.string()?, r.string()?);
                let (temporary, create) = (r.byte()? != 0, r.byte()? != 0);
                let if_exists = match r.byte()? {
                    0 => IfExists::Fail,
                    1 => IfExists::Append,
                    2 => IfExists::Replace,
                    _ => return Err(Malformed),
                };
                let target = IngestTarget { table, schema, catalog, temporary, create, if_exists };
                Request::Ingest { target, transaction: r.bytes()?.to_vec() }
            }
            b'p' => {
                let (header, body) = piece_of(msg).expect("a piece")?;
                return Ok(Request::Piece { header: header.to_vec(), body: body.to_vec() });
            }
            b'E' => Request::PieceEnd,
            b'A' => Request::PieceAbort { sqlstate: r.string()?, message: r.string()? },
            _ => return Err(Malformed),
        };
        r.end()?;
        Ok(req)
    }
}

impl Response {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Response::Data { header, body } => {
                out.reserve(9 + header.len() + body.len());
                out.push(b'd');
                put(&mut out, header);
                put(&mut out, body);
            }
            Response::Done { rows } => {
                out.push(b'z');
                out.extend_from_slice(&rows.to_le_bytes());
            }
            Response::Error { sqlstate, message, detail, hint } => {
                out.push(b'e');
                for s in [sqlstate, message, detail, hint] {
                    put(&mut out, s.as_bytes());
                }
            }
        }
        out
    }

    pub fn decode(msg: &[u8]) -> Result<Response, Malformed> {
        let (&tag, rest) = msg.split_first().ok_or(Malformed)?;
        let mut r = Reader(rest);
        let resp = match tag {
            b'd' => Response::Data { header: r.bytes()?.to_vec(), body: r.bytes()?.to_vec() },
            b'z' => Response::Done { rows: r.u64()? },
            b'e' => Response::Error {
                sqlstate: r.string()?,
                message: r.string()?,
                detail: r.string()?,
                hint: r.string()?,
            },
            _ => return Err(Malformed),
        };
        r.end()?;
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_responses_round_trip() {
        for req in [
            Request::Describe { sql: "SELECT 1".into(), transaction: vec![], params: vec![] },
            Request::Query { sql: "SELECT 'é', ''".into(), transaction: vec![1, 2], params: vec![5; 9] },
            Request::Update { sql: "INSERT INTO t VALUES (1)".into(), transaction: vec![], params: vec![] },
            Request::Catalog { sql: "SELECT 1".into(), describe: true },
            Request::Catalog { sql: "SELECT 2".into(), describe: false },
            Request::Begin { transaction: vec![7; 8] },
            Request::End { transaction: vec![7; 8], commit: true },
            Request::End { transaction: vec![], commit: false },
            Request::Ingest {
                target: IngestTarget {
                    table: "t\"x".into(),
                    schema: String::new(),
                    catalog: "db".into(),
                    temporary: true,
                    create: false,
                    if_exists: IfExists::Replace,
                },
                transaction: vec![3],
            },
            Request::Piece { header: vec![1], body: vec![2; 100_000] },
            Request::PieceEnd,
            Request::PieceAbort { sqlstate: "08006".into(), message: "gone".into() },
        ] {
            assert_eq!(Request::decode(&req.encode()), Ok(req));
        }
        for resp in [
            Response::Data { header: vec![1, 2, 3], body: vec![] },
            Response::Data { header: vec![], body: vec![9; 70_000] },
            Response::Done { rows: u64::MAX },
            Response::Error {
                sqlstate: "42P01".into(),
                message: "relation \"x\" does not exist".into(),
                detail: String::new(),
                hint: "h".into(),
            },
        ] {
            assert_eq!(Response::decode(&resp.encode()), Ok(resp.clone()));
            assert_eq!(resp.is_last(), !matches!(resp, Response::Data { .. }));
        }
    }

    #[test]
    fn a_piece_is_read_in_place() {
        let piece = Request::Piece { header: vec![1, 2], body: vec![7; 1_000] }.encode();
        assert_eq!(piece_of(&piece), Some(Ok((&[1u8, 2][..], &[7u8; 1_000][..]))));
        assert_eq!(piece_of(&piece[..piece.len() - 1]), Some(Err(Malformed)));
        assert_eq!(piece_of(&[piece.as_slice(), &[0]].concat()), Some(Err(Malformed)));
        assert_eq!(piece_of(&Request::PieceEnd.encode()), None);
        assert_eq!(piece_of(&[]), None);
    }

    #[test]
    fn a_data_prefix_and_its_body_are_the_data_message() {
        let (header, body) = (vec![5u8; 17], vec![9u8; 1000]);
        let mut msg = data_prefix(&header, body.len());
        msg.extend_from_slice(&body);
        assert_eq!(msg, Response::Data { header: header.clone(), body: body.clone() }.encode());
        assert_eq!(Response::decode(&msg), Ok(Response::Data { header, body }));
    }

    #[test]
    fn sqlstates_unpack() {
        let pack = |s: &str| {
            s.bytes().enumerate().map(|(i, c)| (((c - b'0') & 0x3f) as i32) << (6 * i)).sum::<i32>()
        };
        for s in ["42P01", "57014", "00000", "XX000", "22012", "28P01"] {
            assert_eq!(sqlstate_text(pack(s)), s);
            assert_eq!(sqlstate_code(s), Some(pack(s)));
        }
        assert_eq!(sqlstate_code("4201"), None);
        assert_eq!(sqlstate_code("42p01"), None);
    }

    #[test]
    fn truncated_extended_or_unknown_messages_are_malformed() {
        let good =
            Response::Error { sqlstate: "X".into(), message: "m".into(), detail: "".into(), hint: "".into() };
        let bytes = good.encode();
        for cut in 0..bytes.len() {
            assert_eq!(Response::decode(&bytes[..cut]), Err(Malformed), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(Response::decode(&longer), Err(Malformed));
        assert_eq!(Request::decode(b"X"), Err(Malformed));
        assert_eq!(Request::decode(&[b'Q', 5, 0, 0, 0, b'a']), Err(Malformed));
        // Not UTF-8.
        assert_eq!(Request::decode(&[b'Q', 1, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0]), Err(Malformed));
        // A query without its parameters field.
        assert_eq!(Request::decode(&[b'Q', 1, 0, 0, 0, b'x', 0, 0, 0, 0]), Err(Malformed));
        // A query without its transaction field.
        assert_eq!(Request::decode(&[b'Q', 1, 0, 0, 0, b'x']), Err(Malformed));
    }
}

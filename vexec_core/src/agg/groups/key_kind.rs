//! How a key column is compared and hashed (`KeyKind`), the table layout
//! of a plan's keys, and the fixed-length key types.

#[allow(unused_imports)]
use super::*;

/// How a key column is compared and hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// Any by-value integer-like column (bool, int2/4/8, date, timestamp...).
    Int,
    Float4,
    Float8,
    /// Plain varlena compared bytewise.
    Bytes,
    /// bpchar: bytewise after removing trailing blanks.
    Bpchar,
    /// numeric (plain varlena): by value, display scale ignored.
    Numeric,
    /// uuid: its 16 bytes (a pointer to them, not a varlena), compared as
    /// uuid_eq does (memcmp).
    Uuid,
    /// text/varchar under a nondeterministic collation, equal when their
    /// sort keys are (texteq and hashtext agree with them). For plans: the
    /// table sees the sort key (`Bytes`) and the value (`Carried`).
    Collated,
    /// A varlena stored with its group and never compared: the group's
    /// first value (of a `Collated` key, whose sort key is compared in
    /// another column).
    Carried,
    /// interval (16 bytes by reference): by its span, as interval_eq.
    Interval,
    /// bpchar under a nondeterministic collation: as `Collated`, the sort
    /// key taken without trailing blanks (bpchareq and hashbpchar ignore them).
    CollatedBpchar,
    /// An array or range, equal when the canonical encodings the host
    /// computes are ([`crate::agg::encoded`]). For plans: the table sees the
    /// encoding (`Bytes`) and the value (`Carried`), as for `Collated`.
    Encoded,
}

impl KeyKind {
    /// A stable integer for plan nodes (which hold lists of integers).
    pub fn code(self) -> i32 {
        match self {
            KeyKind::Int => 0,
            KeyKind::Float4 => 1,
            KeyKind::Float8 => 2,
            KeyKind::Bytes => 3,
            KeyKind::Bpchar => 4,
            KeyKind::Numeric => 5,
            KeyKind::Uuid => 6,
            KeyKind::Collated => 7,
            KeyKind::Carried => 8,
            KeyKind::Interval => 9,
            KeyKind::CollatedBpchar => 10,
            KeyKind::Encoded => 11,
        }
    }

    /// The inverse of [`KeyKind::code`].
    pub fn from_code(code: i32) -> Option<KeyKind> {
        const KINDS: [KeyKind; 12] = [
            KeyKind::Int,
            KeyKind::Float4,
            KeyKind::Float8,
            KeyKind::Bytes,
            KeyKind::Bpchar,
            KeyKind::Numeric,
            KeyKind::Uuid,
            KeyKind::Collated,
            KeyKind::Carried,
            KeyKind::Interval,
            KeyKind::CollatedBpchar,
            KeyKind::Encoded,
        ];
        KINDS.get(usize::try_from(code).ok()?).copied()
    }

    /// The kind the group table compares for a key of this kind: a
    /// `Collated` key's sort key and an `Encoded` key's encoding are
    /// compared as bytes.
    pub fn compared(self) -> KeyKind {
        match self {
            KeyKind::Collated | KeyKind::CollatedBpchar | KeyKind::Encoded => KeyKind::Bytes,
            k => k,
        }
    }

    /// Whether keys of this kind are compared by a sort key the host computes.
    pub fn is_collated(self) -> bool {
        matches!(self, KeyKind::Collated | KeyKind::CollatedBpchar)
    }

    /// Whether the host gives the table another column to compare for keys
    /// of this kind (a sort key, an encoding), their values being carried.
    pub fn host_keyed(self) -> bool {
        self.is_collated() || self == KeyKind::Encoded
    }

    /// Whether the table stores keys of this kind as bytes.
    pub(super) fn stores_bytes(self) -> bool {
        matches!(
            self,
            KeyKind::Bytes
                | KeyKind::Bpchar
                | KeyKind::Numeric
                | KeyKind::Uuid
                | KeyKind::Collated
                | KeyKind::CollatedBpchar
                | KeyKind::Encoded
                | KeyKind::Carried
                | KeyKind::Interval
        )
    }
}

/// The columns of a group table for the keys `kinds` of a plan: each key's
/// compared kind, then a `Carried` column per `Collated` or `Encoded` key
/// (the value its group outputs). Also, per key, the table column holding
/// its output value.
pub fn table_layout(kinds: &[KeyKind]) -> (Vec<KeyKind>, Vec<usize>) {
    let mut table: Vec<KeyKind> = kinds.iter().map(|k| k.compared()).collect();
    let mut output = Vec::with_capacity(kinds.len());
    for (k, &kind) in kinds.iter().enumerate() {
        if kind.host_keyed() {
            output.push(table.len());
            table.push(KeyKind::Carried);
        } else {
            output.push(k);
        }
    }
    (table, output)
}

/// The length of a uuid.
pub const UUID_LEN: usize = 16;
/// The length of an interval (time: int64, day: int32, month: int32).
pub const INTERVAL_LEN: usize = 16;

/// An interval's span as interval_cmp_value computes it: microseconds, a
/// month counted as 30 days of 24 hours (infinities are the extreme fields
/// and compare as their spans do).
pub fn interval_span(b: &[u8]) -> i128 {
    let time = i64::from_le_bytes(b[0..8].try_into().expect("16 bytes"));
    let day = i32::from_le_bytes(b[8..12].try_into().expect("16 bytes"));
    let month = i32::from_le_bytes(b[12..16].try_into().expect("16 bytes"));
    let days = month as i64 * 30 + day as i64;
    time as i128 + days as i128 * 86_400_000_000
}

//! The group table of a hashed aggregation: maps the group key of every live
//! row of a batch to a dense group number (0, 1, 2, ... in order of first
//! appearance, which is also the order PostgreSQL's HashAggregate would meet
//! them).
//!
//! Keys are copied into the table (by-reference values into a byte arena), so
//! a batch's buffer pins and memory can go as soon as it has been consumed.
//! Equality is PostgreSQL's for the key kinds offered here:
//! - integers, dates, timestamps, booleans: the value;
//! - float4/float8: `-0 = 0` and every NaN equal to every NaN (hashfloat8's
//!   normalisation);
//! - byte strings (text/varchar under a *deterministic* collation, bytea):
//!   the bytes, which is exactly texteq for deterministic collations;
//! - bpchar: the bytes without trailing blanks (bpchareq);
//! - byte keys of up to 7 bytes (after that) are compared and hashed as one
//!   integer holding their length and bytes;
//! - numeric: the value whatever the display scale (`numeric::key_view`),
//!   the first value met kept as the group's key, as HashAggregate does.
//!
//! - uuid: its 16 bytes.
//! - interval: its span in microseconds with a month as 30 days and a day
//!   as 24 hours (interval_cmp_value: '1 day' = '24 hours'), the first
//!   value met kept as the group's key.
//!
//! - text under a nondeterministic collation ([`KeyKind::Collated`]): its
//!   sort key (what the collation's hash and equality agree on), which only
//!   the host can compute. The table never holds a `Collated` column: the
//!   host gives it the sort keys as a `Bytes` column and, for output, the
//!   value itself as a [`KeyKind::Carried`] column ([`table_layout`]).
//!
//! NULL keys group together (SQL's GROUP BY treats NULLs as not distinct).

use foldhash::fast::FixedState;
use hashbrown::HashTable;
use std::hash::BuildHasher;

use super::int_index::IntIndex;
use super::pair_index::PairIndex;
use crate::batch::{varlena, Column, RowIdx, Values};
use crate::expr::kernels::cmp::trim_blanks;

/// How many rows ahead of the probe the single-integer-key paths prefetch
/// the slot of a row's key (enough to overlap the cache misses of a batch
/// without the lines being evicted before use).
const PREFETCH_AHEAD: usize = 16;

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
    fn stores_bytes(self) -> bool {
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

/// The stored keys of one key column, one entry per group.
#[derive(Debug)]
enum KeyStore {
    /// The bits of floats as first met (-0 and NaN payloads included).
    Fixed { values: Vec<i64>, nulls: Vec<bool> },
    /// Integer keys: the normalised key (`norm_tags`, `norm_vals`) is the
    /// key, so nothing more is stored (9 bytes a group fewer).
    Normalized,
    /// Byte keys: group `g` owns `data[ends[g-1]..ends[g]]`.
    Bytes { data: Vec<u8>, ends: Vec<usize>, nulls: Vec<bool> },
}

/// A key value of one row, normalised for equality and hashing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyRef<'a> {
    Null,
    Fixed(i64),
    Bytes(&'a [u8]),
    /// A numeric's `key_view`.
    Numeric(i64, &'a [u8]),
    /// An interval's span.
    Wide(i128),
}

/// What [`GroupTable::lookup`] gives a row whose key has no group.
pub const NO_GROUP: u32 = u32::MAX;

/// Dense group numbers for composite keys.
pub struct GroupTable {
    kinds: Vec<KeyKind>,
    keys: Vec<KeyStore>,
    /// Per key column, every group's key as compared: the integer of a
    /// `KeyRef::Fixed` (integers, float bits, packed short strings), else
    /// [`NORM_OTHER`] or [`NORM_NULL`] in `norm_tags` (compared through the
    /// store). Comparing a row with a group then costs no normalisation.
    norm_vals: Vec<Vec<i64>>,
    norm_tags: Vec<Vec<u8>>,
    /// The hash of every group's key (for growing the table without rehashing
    /// keys), except in tables of integer-like keys ([`GroupTable::ints`],
    /// [`GroupTable::pairs`]): their normalised keys give the hash again
    /// ([`hash_of_norms`]) for 8 bytes a group fewer.
    hashes: Vec<u64>,
    /// Number of groups.
    groups: usize,
    /// The groups by key, for every table but [`GroupTable::ints`]' (and
    /// but those of [`GroupTable::pairs`] without a NULL key).
    table: HashTable<u32>,
    /// A table of one integer-like key (integers, dates, floats, bools) finds
    /// its groups here instead: the key beside its group ([`IntIndex`]),
    /// the NULL key's group apart ([`NO_GROUP`] until met).
    ints: Option<IntIndex>,
    /// A table of two integer-like keys finds the groups of keys without a
    /// NULL here: both keys beside the group ([`PairIndex`]).
    pairs: Option<PairIndex>,
    null_group: u32,
    state: FixedState,
}

/// The hash [`GroupTable::hash_keys`] gives group `g`'s key, from its
/// normalised key (integer-like keys only: every tag fixed or NULL).
fn hash_of_norms(state: &FixedState, tags: &[Vec<u8>], vals: &[Vec<i64>], g: u32) -> u64 {
    let g = g as usize;
    tags.iter().zip(vals).fold(HASH_SEED, |h, (t, v)| {
        let part = match t[g] {
            NORM_FIXED => state.hash_one(v[g]),
            NORM_NULL => NULL_HASH,
            other => unreachable!("tag {other} in a table of integer-like keys"),
        };
        (h.rotate_left(5) ^ part).wrapping_mul(HASH_SEED)
    })
}

/// Group `g`'s hash: stored, or from its normalised key.
#[inline]
fn group_hash(
    keeps: bool,
    hashes: &[u64],
    state: &FixedState,
    tags: &[Vec<u8>],
    vals: &[Vec<i64>],
    g: u32,
) -> u64 {
    if keeps {
        hashes[g as usize]
    } else {
        hash_of_norms(state, tags, vals, g)
    }
}

const HASH_SEED: u64 = 0x9e37_79b9_7f4a_7c15;
const NULL_HASH: u64 = 0x5bd1_e995;

/// Normalise a float's bits so that equal floats have equal bits.
#[inline]
fn float_bits(v: f64) -> i64 {
    if v.is_nan() {
        f64::NAN.to_bits() as i64
    } else if v == 0.0 {
        0
    } else {
        v.to_bits() as i64
    }
}

/// The key of row `i` of `col`.
///
/// # Safety
/// For byte kinds, the column's valid values are pointers to plain varlenas
/// (to 16 bytes for uuid).
#[inline]
unsafe fn key_of<'a>(kind: KeyKind, col: &'a Column, i: usize) -> KeyRef<'a> {
    if !col.is_valid(i) {
        return KeyRef::Null;
    }
    match (kind, &col.values) {
        (KeyKind::Float4, Values::F32(v)) => KeyRef::Fixed((v[i] as f64).to_bits() as i64),
        (KeyKind::Float8, Values::F64(v)) => KeyRef::Fixed(v[i].to_bits() as i64),
        (KeyKind::Bytes | KeyKind::Bpchar | KeyKind::Numeric | KeyKind::Carried, Values::Datum(v)) => {
            KeyRef::Bytes(unsafe { varlena::bytes(v[i] as *const u8) })
        }
        (KeyKind::Uuid, Values::Datum(v)) => {
            KeyRef::Bytes(unsafe { std::slice::from_raw_parts(v[i] as *const u8, UUID_LEN) })
        }
        (KeyKind::Interval, Values::Datum(v)) => {
            KeyRef::Bytes(unsafe { std::slice::from_raw_parts(v[i] as *const u8, INTERVAL_LEN) })
        }
        (KeyKind::Int, Values::Bool(v)) => KeyRef::Fixed(v[i] as i64),
        (KeyKind::Int, Values::I16(v)) => KeyRef::Fixed(v[i] as i64),
        (KeyKind::Int, Values::I32(v)) => KeyRef::Fixed(v[i] as i64),
        (KeyKind::Int, Values::I64(v)) => KeyRef::Fixed(v[i]),
        (k, v) => panic!("group key kind {k:?} over a {:?} column", v.phys_type()),
    }
}

/// The form of a key that equality and hashing look at.
#[inline]
fn normalized(kind: KeyKind, k: KeyRef<'_>) -> KeyRef<'_> {
    match (kind, k) {
        (KeyKind::Float4 | KeyKind::Float8, KeyRef::Fixed(bits)) => {
            KeyRef::Fixed(float_bits(f64::from_bits(bits as u64)))
        }
        (KeyKind::Bpchar, KeyRef::Bytes(b)) => short_bytes(trim_blanks(b)),
        (KeyKind::Bytes, KeyRef::Bytes(b)) => short_bytes(b),
        (KeyKind::Interval, KeyRef::Bytes(b)) => KeyRef::Wide(interval_span(b)),
        (KeyKind::Numeric, KeyRef::Bytes(b)) => match crate::numeric::key_view(b) {
            Some((head, digits)) => KeyRef::Numeric(head, digits),
            None => KeyRef::Bytes(b),
        },
        (_, k) => k,
    }
}

/// Byte keys of up to 7 bytes as one integer (length in the low byte): equal
/// exactly when the bytes are, and hashed and compared as cheaply as an
/// integer key (TPC-H Q1 groups by two one-letter codes).
#[inline]
fn short_bytes(b: &[u8]) -> KeyRef<'_> {
    if b.len() > 7 {
        return KeyRef::Bytes(b);
    }
    // A shift per byte: a copy of a variable length would call memmove.
    let word = b.iter().enumerate().fold(b.len() as u64, |w, (j, &c)| w | (c as u64) << (8 * (j + 1)));
    KeyRef::Fixed(word as i64)
}

const NORM_FIXED: u8 = 0;
const NORM_NULL: u8 = 1;
const NORM_OTHER: u8 = 2;

/// A normalised key as a tag and an integer (0 unless `NORM_FIXED`).
#[inline]
fn tagged(k: KeyRef<'_>) -> (u8, i64) {
    match k {
        KeyRef::Fixed(v) => (NORM_FIXED, v),
        KeyRef::Null => (NORM_NULL, 0),
        _ => (NORM_OTHER, 0),
    }
}

/// The borrowed parts of a group table that [`has_key`] reads.
struct Stored<'t> {
    kinds: &'t [KeyKind],
    keys: &'t [KeyStore],
    norm_vals: &'t [Vec<i64>],
    norm_tags: &'t [Vec<u8>],
}

/// The normalised keys of a batch's rows in one key column, computed once
/// per batch for hashing and for every comparison with a group: a tag and
/// an integer per row (integers, float bits, packed short strings), and
/// the key itself only for the other rows (long strings, numerics).
struct RowKeys<'c> {
    tags: Vec<u8>,
    vals: Vec<i64>,
    others: Vec<KeyRef<'c>>,
}

/// Keep row `i`'s key in `others` (at index `i`) when it is compared through
/// the store (long strings, numerics): only those rows read it, so short
/// keys cost no write (`others` catches up with NULLs).
#[inline]
fn push_other<'c>(others: &mut Vec<KeyRef<'c>>, i: usize, tag: u8, k: KeyRef<'c>) {
    if tag == NORM_OTHER {
        others.resize(i, KeyRef::Null);
        others.push(k);
    }
}

/// Whether the batch has one key column of integers (the common GROUP BY),
/// which [`find`] compares in place.
fn single_fixed(rk: &[RowKeys<'_>]) -> bool {
    rk.len() == 1 && !rk[0].tags.contains(&NORM_OTHER)
}

/// The group with the key of row `i` of `rk` (hash `h`), if any.
#[inline]
fn find(
    table: &HashTable<u32>,
    t: &Stored<'_>,
    h: u64,
    rk: &[RowKeys<'_>],
    i: usize,
    single_fixed: bool,
) -> Option<u32> {
    let found = if single_fixed {
        let (tag, val) = (rk[0].tags[i], rk[0].vals[i]);
        table.find(h, |&g| t.norm_tags[0][g as usize] == tag && t.norm_vals[0][g as usize] == val)
    } else {
        table.find(h, |&g| has_key(t, g, rk, i))
    };
    found.copied()
}

/// Whether row `i` has the same key as row `i - 1` (`hashes`: the rows'
/// hashes): rows often come clustered by key (a table loaded in key order, a
/// join's matches), and then one comparison replaces a probe of the table.
#[inline]
fn same_as_previous(rk: &[RowKeys<'_>], i: usize, hashes: &[u64]) -> bool {
    i > 0
        && hashes[i] == hashes[i - 1]
        && rk.iter().all(|k| {
            k.tags[i] == k.tags[i - 1]
                && match k.tags[i] {
                    NORM_FIXED => k.vals[i] == k.vals[i - 1],
                    NORM_NULL => true,
                    _ => k.others[i] == k.others[i - 1],
                }
        })
}

/// Whether group `g` has the key of row `i` of `rk` (one per key column):
/// PostgreSQL's equality.
#[inline]
fn has_key(t: &Stored<'_>, g: u32, rk: &[RowKeys<'_>], i: usize) -> bool {
    let g = g as usize;
    rk.iter().enumerate().all(|(c, k)| {
        let tag = k.tags[i];
        tag == t.norm_tags[c][g]
            && match tag {
                NORM_FIXED => t.norm_vals[c][g] == k.vals[i],
                NORM_NULL => true,
                _ => normalized(t.kinds[c], t.keys[c].get(g)) == k.others[i],
            }
    })
}

impl KeyStore {
    /// Group `g`'s key, from a store that keeps it (not `Normalized`).
    fn get(&self, g: usize) -> KeyRef<'_> {
        match self {
            KeyStore::Normalized => unreachable!("a normalised key is read from the group table"),
            KeyStore::Fixed { values, nulls } => {
                if nulls[g] {
                    KeyRef::Null
                } else {
                    KeyRef::Fixed(values[g])
                }
            }
            KeyStore::Bytes { data, ends, nulls } => {
                if nulls[g] {
                    KeyRef::Null
                } else {
                    let start = if g == 0 { 0 } else { ends[g - 1] };
                    KeyRef::Bytes(&data[start..ends[g]])
                }
            }
        }
    }

    fn push(&mut self, k: KeyRef<'_>) {
        match (self, k) {
            (KeyStore::Normalized, _) => {}
            (KeyStore::Fixed { values, nulls }, KeyRef::Null) => {
                values.push(0);
                nulls.push(true);
            }
            (KeyStore::Fixed { values, nulls }, KeyRef::Fixed(v)) => {
                values.push(v);
                nulls.push(false);
            }
            (KeyStore::Bytes { data, ends, nulls }, KeyRef::Null) => {
                ends.push(data.len());
                nulls.push(true);
            }
            (KeyStore::Bytes { data, ends, nulls }, KeyRef::Bytes(b)) => {
                data.extend_from_slice(b);
                ends.push(data.len());
                nulls.push(false);
            }
            _ => unreachable!("key kinds are fixed per column"),
        }
    }

    fn bytes_used(&self) -> usize {
        match self {
            KeyStore::Fixed { values, nulls } => values.capacity() * 8 + nulls.capacity(),
            KeyStore::Normalized => 0,
            KeyStore::Bytes { data, ends, nulls } => data.capacity() + ends.capacity() * 8 + nulls.capacity(),
        }
    }
}

/// The capacity `hashbrown` gives a table grown to hold `items`: buckets
/// in a power of two, seven eighths of them usable.
fn hash_table_capacity(items: usize) -> usize {
    if items < 8 {
        return if items < 4 { 3 } else { 7 };
    }
    (items * 8 / 7).next_power_of_two() / 8 * 7
}

impl GroupTable {
    pub fn new(kinds: &[KeyKind]) -> GroupTable {
        let keys = kinds
            .iter()
            .map(|k| {
                assert!(!k.host_keyed(), "the host gives a Collated or Encoded key's own key as Bytes");
                if k.stores_bytes() {
                    KeyStore::Bytes { data: vec![], ends: vec![], nulls: vec![] }
                } else if *k == KeyKind::Int {
                    KeyStore::Normalized
                } else {
                    KeyStore::Fixed { values: vec![], nulls: vec![] }
                }
            })
            .collect();
        let ints =
            matches!(kinds, [KeyKind::Int | KeyKind::Float4 | KeyKind::Float8]).then(IntIndex::default);
        let pairs = matches!(
            kinds,
            [
                KeyKind::Int | KeyKind::Float4 | KeyKind::Float8,
                KeyKind::Int | KeyKind::Float4 | KeyKind::Float8
            ]
        )
        .then(PairIndex::default);
        GroupTable {
            groups: 0,
            kinds: kinds.to_vec(),
            keys,
            norm_vals: vec![vec![]; kinds.len()],
            norm_tags: vec![vec![]; kinds.len()],
            hashes: vec![],
            table: HashTable::new(),
            ints,
            pairs,
            null_group: NO_GROUP,
            state: FixedState::with_seed(0x7665_7865_63),
        }
    }

    /// Whether the table stores its groups' hashes (see `hashes`).
    fn keeps_hashes(&self) -> bool {
        self.ints.is_none() && self.pairs.is_none()
    }

    /// Number of groups so far.
    pub fn len(&self) -> usize {
        self.groups
    }

    pub fn is_empty(&self) -> bool {
        self.groups == 0
    }

    /// Approximate memory held, for the `hash_mem` budget.
    pub fn bytes_used(&self) -> usize {
        self.keys.iter().map(KeyStore::bytes_used).sum::<usize>()
            + self.norm_vals.iter().map(|v| v.capacity() * 9).sum::<usize>()
            + self.hashes.capacity() * 8
            + self.table.capacity() * 5
            + self.ints.as_ref().map_or(0, |i| i.index.bytes_used())
            + self.pairs.as_ref().map_or(0, |p| p.index.bytes_used())
    }

    /// What [`GroupTable::bytes_used`] will be after
    /// [`GroupTable::reserve_groups`]`(total)`: the per-group vectors grow
    /// to exactly `total`, the group index by powers of two (so a budget
    /// that assumed memory proportional to the groups would be overrun).
    ///
    /// `incoming[k]` is the bytes the batch about to be assigned may add to
    /// byte key column `k` ([`GroupTable::key_bytes`]; empty: none): room
    /// is made for them too, not only for keys of the average length.
    pub fn bytes_at(&self, total: usize, incoming: &[usize]) -> usize {
        let at = |capacity: usize| capacity.max(total);
        let keys: usize = self
            .keys
            .iter()
            .enumerate()
            .map(|(k, store)| match store {
                KeyStore::Normalized => 0,
                KeyStore::Fixed { values, nulls } => at(values.capacity()) * 8 + at(nulls.capacity()),
                KeyStore::Bytes { data, ends, nulls } => {
                    self.data_capacity_at(
                        (data.len(), data.capacity()),
                        total,
                        incoming.get(k).copied().unwrap_or(0),
                    ) + at(ends.capacity()) * 8
                        + at(nulls.capacity())
                }
            })
            .sum();
        let index = match (&self.ints, &self.pairs) {
            (Some(ints), _) => ints.index.bytes_at(total),
            // (Keys with a NULL in the general table: not reserved for.)
            (_, Some(pairs)) => pairs.index.bytes_at(total) + self.table.capacity() * 5,
            (None, None) if total > self.table.capacity() => hash_table_capacity(total) * 5,
            (None, None) => self.table.capacity() * 5,
        };
        keys + self.norm_vals.iter().map(|v| at(v.capacity()) * 9).sum::<usize>()
            + if self.keeps_hashes() { at(self.hashes.capacity()) * 8 } else { 0 }
            + index
    }

    /// The capacity of a byte key store after a reservation for `total`
    /// groups with `incoming` bytes about to come: room for `total` keys of
    /// the average length so far and for the incoming bytes.
    fn data_capacity_at(&self, (len, capacity): (usize, usize), total: usize, incoming: usize) -> usize {
        let n = self.len();
        let average = if n == 0 { 8 } else { len.div_ceil(n) };
        capacity.max(average * total).max(len + incoming)
    }

    /// Per key column, the bytes the stored keys of `rows` take at most
    /// (each row a new group), for [`GroupTable::bytes_at`] and
    /// [`GroupTable::reserve_groups`]; 0 for columns stored otherwise.
    ///
    /// # Safety
    /// As [`GroupTable::assign`].
    pub unsafe fn key_bytes(&self, cols: &[&Column], rows: &[RowIdx]) -> Vec<usize> {
        self.keys
            .iter()
            .zip(&self.kinds)
            .zip(cols)
            .map(|((store, &kind), col)| match store {
                KeyStore::Bytes { .. } => rows
                    .iter()
                    .map(|&r| match unsafe { key_of(kind, col, r as usize) } {
                        KeyRef::Bytes(b) => b.len(),
                        _ => 0,
                    })
                    .sum(),
                _ => 0,
            })
            .collect()
    }

    /// Whether some key column is stored as bytes (whose room depends on
    /// the keys' lengths, see [`GroupTable::key_bytes`]).
    pub fn stores_bytes(&self) -> bool {
        self.keys.iter().any(|store| matches!(store, KeyStore::Bytes { .. }))
    }

    /// Whether the byte keys of a batch (`incoming`, see
    /// [`GroupTable::key_bytes`]) may not fit the room reserved.
    pub fn needs_key_room(&self, incoming: &[usize]) -> bool {
        self.keys.iter().zip(incoming).any(|(store, &extra)| match store {
            KeyStore::Bytes { data, .. } => data.len() + extra > data.capacity(),
            _ => false,
        })
    }

    /// Groups the table holds without growing its per-group vectors.
    pub fn room(&self) -> usize {
        // The least capacity of the per-group vectors (they may have grown
        // apart by doubling on their own).
        let keys = self.keys.iter().map(|store| match store {
            KeyStore::Normalized => usize::MAX,
            KeyStore::Fixed { values, nulls } => values.capacity().min(nulls.capacity()),
            KeyStore::Bytes { ends, nulls, .. } => ends.capacity().min(nulls.capacity()),
        });
        let norms = self.norm_vals.iter().map(Vec::capacity).chain(self.norm_tags.iter().map(Vec::capacity));
        let hashes = self.keeps_hashes().then(|| self.hashes.capacity());
        keys.chain(norms).chain(hashes).min().unwrap_or(usize::MAX)
    }

    /// Grow the per-group vectors to exactly `total` groups (and the hash
    /// table to hold them), instead of letting them double on the next
    /// insert: a caller within a memory budget decides how far. Byte keys
    /// get room for `total` keys of the average length so far and for the
    /// `incoming` bytes of the next batch ([`GroupTable::key_bytes`]).
    pub fn reserve_groups(&mut self, total: usize, incoming: &[usize]) {
        let n = self.len();
        let extra = total.saturating_sub(n);
        let capacities: Vec<usize> = (self.keys.iter().enumerate())
            .map(|(k, store)| match store {
                KeyStore::Bytes { data, .. } => self.data_capacity_at(
                    (data.len(), data.capacity()),
                    total,
                    incoming.get(k).copied().unwrap_or(0),
                ),
                _ => 0,
            })
            .collect();
        for (store, capacity) in self.keys.iter_mut().zip(capacities) {
            if let KeyStore::Bytes { data, .. } = store {
                data.reserve_exact(capacity - data.len());
            }
        }
        if extra == 0 {
            return;
        }
        for store in &mut self.keys {
            match store {
                KeyStore::Normalized => {}
                KeyStore::Fixed { values, nulls } => {
                    values.reserve_exact(extra);
                    nulls.reserve_exact(extra);
                }
                KeyStore::Bytes { ends, nulls, .. } => {
                    ends.reserve_exact(extra);
                    nulls.reserve_exact(extra);
                }
            }
        }
        self.norm_vals.iter_mut().for_each(|v| v.reserve_exact(extra));
        self.norm_tags.iter_mut().for_each(|v| v.reserve_exact(extra));
        let keeps = self.keeps_hashes();
        if keeps {
            self.hashes.reserve_exact(extra);
        }
        let (hashes, state) = (&self.hashes, &self.state);
        let (tags, vals) = (&self.norm_tags, &self.norm_vals);
        let hash_of = |g: u32| group_hash(keeps, hashes, state, tags, vals, g);
        match (&mut self.ints, &mut self.pairs) {
            (Some(ints), _) => ints.index.reserve(total, hash_of),
            (_, Some(pairs)) => pairs.index.reserve(total, hash_of),
            (None, None) => self.table.reserve(extra, |&g| hash_of(g)),
        }
    }

    /// The hash of each row's key among `rows` (into `out`, one per row);
    /// rows with equal keys have equal hashes (a hash join partitions both
    /// sides by it).
    ///
    /// # Safety
    /// As [`GroupTable::assign`].
    pub unsafe fn hash_rows(&self, cols: &[&Column], rows: &[RowIdx], out: &mut Vec<u64>) {
        let norms = unsafe { self.row_keys(cols, rows) };
        self.hash_keys(&norms, rows.len(), out);
    }

    /// The normalised key of every row among `rows`, per key column: computed
    /// once per batch, for hashing and for every comparison with a group.
    ///
    /// # Safety
    /// As [`GroupTable::assign`].
    unsafe fn row_keys<'c>(&self, cols: &[&'c Column], rows: &[RowIdx]) -> Vec<RowKeys<'c>> {
        self.kinds
            .iter()
            .zip(cols)
            .map(|(&kind, &col)| {
                let n = rows.len();
                let mut tags = Vec::with_capacity(n);
                let mut vals = Vec::with_capacity(n);
                let mut others = Vec::new();
                // Integer columns without the per-row dispatch of key_of.
                macro_rules! ints {
                    ($v:expr) => {
                        for &r in rows {
                            let r = r as usize;
                            let valid = col.validity.get(r);
                            tags.push(if valid { NORM_FIXED } else { NORM_NULL });
                            vals.push(if valid { $v[r] as i64 } else { 0 });
                        }
                    };
                }
                match (kind, &col.values) {
                    // Never compared: every row matches every group here.
                    (KeyKind::Carried, _) => {
                        tags.resize(n, NORM_NULL);
                        vals.resize(n, 0);
                    }
                    (KeyKind::Int, Values::I32(v)) => ints!(v),
                    (KeyKind::Int, Values::I64(v)) => ints!(v),
                    (KeyKind::Int, Values::I16(v)) => ints!(v),
                    (KeyKind::Bytes | KeyKind::Bpchar, Values::Datum(v)) => {
                        for &r in rows {
                            let r = r as usize;
                            let k = if col.validity.get(r) {
                                // SAFETY: valid byte keys point to plain varlenas.
                                normalized(kind, KeyRef::Bytes(unsafe { varlena::bytes(v[r] as *const u8) }))
                            } else {
                                KeyRef::Null
                            };
                            let (tag, val) = tagged(k);
                            tags.push(tag);
                            vals.push(val);
                            push_other(&mut others, tags.len() - 1, tag, k);
                        }
                    }
                    _ => {
                        for &r in rows {
                            let k = normalized(kind, unsafe { key_of(kind, col, r as usize) });
                            let (tag, val) = tagged(k);
                            tags.push(tag);
                            vals.push(val);
                            push_other(&mut others, tags.len() - 1, tag, k);
                        }
                    }
                }
                RowKeys { tags, vals, others }
            })
            .collect()
    }

    fn hash_keys(&self, rk: &[RowKeys<'_>], n: usize, out: &mut Vec<u64>) {
        out.clear();
        out.resize(n, HASH_SEED);
        for (k, _) in rk.iter().zip(&self.kinds).filter(|(_, &kind)| kind != KeyKind::Carried) {
            for (i, h) in out.iter_mut().enumerate() {
                let part = match k.tags[i] {
                    NORM_FIXED => self.state.hash_one(k.vals[i]),
                    NORM_NULL => NULL_HASH,
                    _ => match k.others[i] {
                        KeyRef::Bytes(b) => self.state.hash_one(b),
                        KeyRef::Numeric(head, digits) => self.state.hash_one((head, digits)),
                        KeyRef::Wide(v) => self.state.hash_one(v),
                        other => unreachable!("{other:?} is tagged as another key"),
                    },
                };
                *h = (h.rotate_left(5) ^ part).wrapping_mul(HASH_SEED);
            }
        }
    }

    /// The group number of every row among `rows` (into `out`, one per row),
    /// creating groups for keys not seen before. Returns how many groups
    /// were created.
    ///
    /// # Safety
    /// `cols` holds one column per key kind, of the matching physical type;
    /// byte kinds hold pointers to plain varlenas (uuid: to 16 bytes) valid
    /// for the call.
    pub unsafe fn assign(&mut self, cols: &[&Column], rows: &[RowIdx], out: &mut Vec<u32>) -> usize {
        assert_eq!(cols.len(), self.kinds.len(), "one column per group key");
        let norms = unsafe { self.row_keys(cols, rows) };
        let mut hashes = Vec::with_capacity(rows.len());
        self.hash_keys(&norms, rows.len(), &mut hashes);
        out.clear();
        let before = self.len();
        let keeps = self.keeps_hashes();
        let GroupTable {
            kinds,
            keys,
            norm_vals,
            norm_tags,
            hashes: group_hashes,
            groups,
            table,
            ints,
            pairs,
            null_group,
            state,
        } = self;
        // A new group for row `i` (row `r` of the batch, hash `h`): its key
        // stored, not yet indexed.
        macro_rules! new_group {
            ($i:expr, $r:expr, $h:expr) => {{
                let g = *groups as u32;
                for (c, ((k, store), col)) in kinds.iter().zip(keys.iter_mut()).zip(cols).enumerate() {
                    store.push(unsafe { key_of(*k, col, $r) });
                    norm_tags[c].push(norms[c].tags[$i]);
                    norm_vals[c].push(norms[c].vals[$i]);
                }
                if keeps {
                    group_hashes.push($h);
                }
                *groups += 1;
                g
            }};
        }
        // Row `i`'s group through the general table, added if new.
        macro_rules! general_group {
            ($i:expr, $r:expr, $h:expr, $single_fixed:expr) => {{
                let stored = Stored { kinds, keys, norm_vals, norm_tags };
                match find(table, &stored, $h, &norms, $i, $single_fixed) {
                    Some(g) => g,
                    None => {
                        let g = new_group!($i, $r, $h);
                        table.insert_unique($h, g, |&x| {
                            group_hash(keeps, group_hashes, state, norm_tags, norm_vals, x)
                        });
                        g
                    }
                }
            }};
        }
        if let Some(ints) = ints {
            let (tags, vals) = (&norms[0].tags, &norms[0].vals);
            for (i, (&r, &h)) in rows.iter().zip(&hashes).enumerate() {
                if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD) {
                    ints.index.prefetch(ahead);
                }
                if same_as_previous(&norms, i, &hashes) {
                    out.push(out[i - 1]);
                    continue;
                }
                let g = if tags[i] == NORM_NULL {
                    if *null_group == NO_GROUP {
                        *null_group = new_group!(i, r as usize, h);
                    }
                    *null_group
                } else {
                    match ints.find(vals[i], h, &norm_vals[0]) {
                        Some(g) => g,
                        None => {
                            let g = new_group!(i, r as usize, h);
                            ints.insert(vals[i], h, g, |x| {
                                group_hash(keeps, group_hashes, state, norm_tags, norm_vals, x)
                            });
                            g
                        }
                    }
                };
                out.push(g);
            }
            return self.len() - before;
        }
        if let Some(pairs) = pairs {
            let (ta, va, tb, vb) = (&norms[0].tags, &norms[0].vals, &norms[1].tags, &norms[1].vals);
            for (i, (&r, &h)) in rows.iter().zip(&hashes).enumerate() {
                if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD) {
                    pairs.index.prefetch(ahead);
                }
                if same_as_previous(&norms, i, &hashes) {
                    out.push(out[i - 1]);
                    continue;
                }
                let g = if ta[i] == NORM_FIXED && tb[i] == NORM_FIXED {
                    match pairs.find(va[i], vb[i], h) {
                        Some(g) => g,
                        None => {
                            let g = new_group!(i, r as usize, h);
                            pairs.insert(va[i], vb[i], h, g, |x| {
                                group_hash(keeps, group_hashes, state, norm_tags, norm_vals, x)
                            });
                            g
                        }
                    }
                } else {
                    general_group!(i, r as usize, h, false)
                };
                out.push(g);
            }
            return self.len() - before;
        }
        let single_fixed = single_fixed(&norms);
        for (i, (&r, &h)) in rows.iter().zip(&hashes).enumerate() {
            let r = r as usize;
            if same_as_previous(&norms, i, &hashes) {
                out.push(out[i - 1]);
                continue;
            }
            out.push(general_group!(i, r, h, single_fixed));
        }
        self.len() - before
    }

    /// The group number of every row among `rows` whose key already has a
    /// group (into `groups`; [`NO_GROUP`] for the others), creating none, and
    /// every row's key hash (into `hashes`), by which a spilling aggregate
    /// partitions the rows that found no group.
    ///
    /// # Safety
    /// As [`GroupTable::assign`].
    pub unsafe fn lookup(
        &self,
        cols: &[&Column],
        rows: &[RowIdx],
        groups: &mut Vec<u32>,
        hashes: &mut Vec<u64>,
    ) {
        assert_eq!(cols.len(), self.kinds.len(), "one column per group key");
        let norms = unsafe { self.row_keys(cols, rows) };
        self.hash_keys(&norms, rows.len(), hashes);
        groups.clear();
        if let Some(ints) = &self.ints {
            let (tags, vals) = (&norms[0].tags, &norms[0].vals);
            for (i, &h) in hashes.iter().enumerate() {
                if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD) {
                    ints.index.prefetch(ahead);
                }
                let g = if same_as_previous(&norms, i, hashes) {
                    groups[i - 1]
                } else if tags[i] == NORM_NULL {
                    self.null_group
                } else {
                    ints.find(vals[i], h, &self.norm_vals[0]).unwrap_or(NO_GROUP)
                };
                groups.push(g);
            }
            return;
        }
        let stored = Stored {
            kinds: &self.kinds,
            keys: &self.keys,
            norm_vals: &self.norm_vals,
            norm_tags: &self.norm_tags,
        };
        if let Some(pairs) = &self.pairs {
            let (ta, va, tb, vb) = (&norms[0].tags, &norms[0].vals, &norms[1].tags, &norms[1].vals);
            for (i, &h) in hashes.iter().enumerate() {
                if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD) {
                    pairs.index.prefetch(ahead);
                }
                let g = if same_as_previous(&norms, i, hashes) {
                    groups[i - 1]
                } else if ta[i] == NORM_FIXED && tb[i] == NORM_FIXED {
                    pairs.find(va[i], vb[i], h).unwrap_or(NO_GROUP)
                } else {
                    find(&self.table, &stored, h, &norms, i, false).unwrap_or(NO_GROUP)
                };
                groups.push(g);
            }
            return;
        }
        let single_fixed = single_fixed(&norms);
        for (i, &h) in hashes.iter().enumerate() {
            if same_as_previous(&norms, i, hashes) {
                groups.push(groups[i - 1]);
                continue;
            }
            groups.push(find(&self.table, &stored, h, &norms, i, single_fixed).unwrap_or(NO_GROUP));
        }
    }

    /// The key of group `g` in column `k` as first met: None for NULL, else
    /// the integer value (floats as the bits of the value as a float8).
    pub fn fixed_key(&self, k: usize, g: usize) -> Option<i64> {
        if let KeyStore::Normalized = self.keys[k] {
            return (self.norm_tags[k][g] == NORM_FIXED).then(|| self.norm_vals[k][g]);
        }
        match self.keys[k].get(g) {
            KeyRef::Fixed(v) => Some(v),
            _ => None,
        }
    }

    /// The key of group `g` in byte column `k` (None for NULL).
    pub fn bytes_key(&self, k: usize, g: usize) -> Option<&[u8]> {
        if let KeyStore::Normalized = self.keys[k] {
            return None;
        }
        match self.keys[k].get(g) {
            KeyRef::Bytes(b) => Some(b),
            _ => None,
        }
    }

    pub fn kinds(&self) -> &[KeyKind] {
        &self.kinds
    }
}

impl std::fmt::Debug for GroupTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupTable").field("kinds", &self.kinds).field("groups", &self.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{Bitmap, PhysType};

    fn ints(v: &[Option<i32>]) -> Column {
        let mut c = Column::new(PhysType::I32, v.len());
        for (i, x) in v.iter().enumerate() {
            match x {
                Some(x) => c.values.set_datum(i, *x as i64 as usize),
                None => c.validity.set(i, false),
            }
        }
        c
    }

    fn texts(store: &[Vec<u8>]) -> Column {
        let mut c = Column::new(PhysType::Datum, store.len());
        for (i, s) in store.iter().enumerate() {
            c.values.set_datum(i, s.as_ptr() as usize);
        }
        c
    }

    fn all(n: usize) -> Vec<RowIdx> {
        (0..n as RowIdx).collect()
    }

    #[test]
    fn reserved_groups_take_no_further_memory() {
        // Room for 3,000 groups of (int, text) keys reserved up front: filling
        // it does not grow the table (its memory is what the budget saw), and
        // the room is exactly what was asked for.
        let mut t = GroupTable::new(&[KeyKind::Int, KeyKind::Bytes]);
        let first: Vec<Vec<u8>> =
            (0..1000).map(|i| crate::batch::varlena::make_1b(format!("k{i:05}").as_bytes())).collect();
        let mut out = Vec::new();
        let a = ints(&(0..1000).map(Some).collect::<Vec<_>>());
        unsafe { t.assign(&[&a, &texts(&first)], &all(1000), &mut out) };
        t.reserve_groups(3000, &[]);
        assert_eq!(t.room(), 3000);
        let before = t.bytes_used();
        for batch in 1..3 {
            let keys: Vec<Vec<u8>> = (0..1000)
                .map(|i| crate::batch::varlena::make_1b(format!("k{:05}", batch * 1000 + i).as_bytes()))
                .collect();
            let a = ints(&(0..1000).map(|i| Some(batch * 1000 + i)).collect::<Vec<_>>());
            let created = unsafe { t.assign(&[&a, &texts(&keys)], &all(1000), &mut out) };
            assert_eq!(created, 1000);
        }
        assert_eq!(t.len(), 3000);
        assert_eq!(t.bytes_used(), before, "no vector grew past the reserved room");

        // Accumulators grow to the room given, not by doubling.
        let mut acc = crate::agg::accum::Accumulator::new(crate::agg::accum::Transition::CountRows);
        acc.ensure_groups_in(1000, 3000);
        let reserved = acc.bytes_used();
        acc.ensure_groups_in(3000, 3000);
        assert_eq!(acc.bytes_used(), reserved);
        assert_eq!(reserved, 3000 * 8);
    }

    #[test]
    fn bytes_at_foretells_a_reservation() {
        // One int key (the int index, slots in powers of two) and (int,
        // text) keys (hashbrown): what a reservation will hold is known
        // before it is made, also where the index doubles.
        let mut out = Vec::new();
        let keys: Vec<Vec<u8>> =
            (0..1000).map(|i| crate::batch::varlena::make_1b(format!("key {i}").as_bytes())).collect();
        let a = ints(&(0..1000).map(Some).collect::<Vec<_>>());
        let mut one = GroupTable::new(&[KeyKind::Int]);
        let mut two = GroupTable::new(&[KeyKind::Int, KeyKind::Bytes]);
        unsafe {
            one.assign(&[&a], &all(1000), &mut out);
            two.assign(&[&a, &texts(&keys)], &all(1000), &mut out);
        }
        for total in [1000, 3000, 12_288, 12_289, 100_000] {
            for t in [&mut one, &mut two] {
                let foretold = t.bytes_at(total, &[]);
                t.reserve_groups(total, &[]);
                assert_eq!(t.bytes_used(), foretold, "{total} groups");
            }
        }
        // A batch of keys longer than the average so far: room for its
        // bytes is foretold and reserved too (the store does not double).
        let long: Vec<Vec<u8>> = (0..1000)
            .map(|i| crate::batch::varlena::make_1b(format!("a much longer key than before {i}").as_bytes()))
            .collect();
        let mut t = GroupTable::new(&[KeyKind::Int, KeyKind::Bytes]);
        unsafe { t.assign(&[&a, &texts(&keys)], &all(1000), &mut out) };
        t.reserve_groups(2000, &[]);
        let (b, l) = (ints(&(1000..2000).map(Some).collect::<Vec<_>>()), texts(&long));
        let incoming = unsafe { t.key_bytes(&[&b, &l], &all(1000)) };
        assert_eq!(incoming[0], 0);
        assert_eq!(incoming[1], long.iter().map(|v| v.len() - 1).sum::<usize>());
        assert!(t.needs_key_room(&incoming));
        let foretold = t.bytes_at(2000, &incoming);
        assert!(foretold > t.bytes_at(2000, &[]));
        t.reserve_groups(2000, &incoming);
        assert_eq!(t.bytes_used(), foretold);
        assert!(!t.needs_key_room(&incoming));
        unsafe { t.assign(&[&b, &l], &all(1000), &mut out) };
        assert_eq!(t.bytes_used(), foretold, "no store grew past its reservation");

        // Past 12,288 groups the index takes 32,768 slots, not 16,384.
        let mut t = GroupTable::new(&[KeyKind::Int]);
        let per_group = t.bytes_at(12_288, &[]) / 12_288;
        assert!(t.bytes_at(12_289, &[]) > per_group * 12_289 + 16_384 * 8 - 1);
        t.reserve_groups(12_289, &[]);
        assert_eq!(t.bytes_used(), GroupTable::new(&[KeyKind::Int]).bytes_at(12_289, &[]));
    }

    #[test]
    fn two_integer_keys_group_as_pairs_and_with_nulls_apart() {
        // (a, b) with NULLs in either key: keys without a NULL go to the pair
        // index, the others to the general table; the groups are those of
        // a map on (Option, Option), across batches and through growth, and
        // lookup finds what assign made.
        let mut t = GroupTable::new(&[KeyKind::Int, KeyKind::Int]);
        assert!(t.pairs.is_some());
        let key = |i: i32| {
            let a = (i * 7919 % 211 != 0).then_some(i % 97 - 40);
            let b = (i % 13 != 0).then_some(i * 31 % 89);
            (a, b)
        };
        let mut oracle: std::collections::HashMap<(Option<i32>, Option<i32>), u32> = Default::default();
        let mut out = Vec::new();
        for batch in 0..8 {
            let ks: Vec<(Option<i32>, Option<i32>)> = (0..1000).map(|i| key(batch * 1000 + i)).collect();
            let (a, b) = (
                ints(&ks.iter().map(|k| k.0).collect::<Vec<_>>()),
                ints(&ks.iter().map(|k| k.1).collect::<Vec<_>>()),
            );
            unsafe { t.assign(&[&a, &b], &all(1000), &mut out) };
            for (k, &g) in ks.iter().zip(&out) {
                let expected = *oracle.entry(*k).or_insert(g);
                assert_eq!(g, expected, "{k:?}");
            }
            let (mut found, mut hashes) = (Vec::new(), Vec::new());
            unsafe { t.lookup(&[&a, &b], &all(1000), &mut found, &mut hashes) };
            assert_eq!(found, out);
        }
        assert_eq!(t.len(), oracle.len());
        let distinct: std::collections::HashSet<u32> = oracle.values().copied().collect();
        assert_eq!(distinct.len(), oracle.len(), "distinct keys, distinct groups");
        assert!(oracle.keys().any(|k| k.0.is_none()) && oracle.keys().any(|k| k.1.is_none()));
        // A key never met: no group.
        let (a, b) = (ints(&[Some(1000), None]), ints(&[Some(0), Some(-5)]));
        let (mut found, mut hashes) = (Vec::new(), Vec::new());
        unsafe { t.lookup(&[&a, &b], &all(2), &mut found, &mut hashes) };
        assert_eq!(found, vec![NO_GROUP, NO_GROUP]);
    }

    #[test]
    fn runs_of_equal_keys_share_their_group() {
        // Runs of one key (the shortcut) next to keys that differ only in a
        // later column, long byte keys and NULLs.
        let long = |s: &str| format!("a key longer than seven bytes: {s}");
        let names = ["x", "x", "x", "y", "y", "x", "x", "x"].map(long);
        let store: Vec<Vec<u8>> =
            names.iter().map(|n| crate::batch::varlena::make_1b(n.as_bytes())).collect();
        let a = ints(&[Some(1), Some(1), Some(2), Some(2), Some(2), None, None, Some(1)]);
        let mut t = GroupTable::new(&[KeyKind::Int, KeyKind::Bytes]);
        let mut out = vec![];
        let created = unsafe { t.assign(&[&a, &texts(&store)], &all(8), &mut out) };
        assert_eq!(out, vec![0, 0, 1, 2, 2, 3, 3, 0]);
        assert_eq!(created, 4);
        let (mut groups, mut hashes) = (vec![], vec![]);
        unsafe { t.lookup(&[&a, &texts(&store)], &[0, 1, 2, 3, 4, 5, 6, 7], &mut groups, &mut hashes) };
        assert_eq!(groups, out);
        // Rows without a group stay without one along their run.
        let b = ints(&[Some(9), Some(9), Some(1), Some(1)]);
        let other: Vec<Vec<u8>> =
            ["x", "x", "x", "x"].map(|s| crate::batch::varlena::make_1b(long(s).as_bytes())).to_vec();
        unsafe { t.lookup(&[&b, &texts(&other)], &all(4), &mut groups, &mut hashes) };
        assert_eq!(groups, vec![NO_GROUP, NO_GROUP, 0, 0]);
    }

    #[test]
    fn groups_in_order_of_first_appearance_with_nulls_together() {
        let mut t = GroupTable::new(&[KeyKind::Int]);
        let c = ints(&[Some(5), None, Some(5), Some(-1), None, Some(7)]);
        let mut out = vec![];
        let created = unsafe { t.assign(&[&c], &all(6), &mut out) };
        assert_eq!(created, 4);
        assert_eq!(out, vec![0, 1, 0, 2, 1, 3]);
        assert_eq!(t.fixed_key(0, 0), Some(5));
        assert_eq!(t.fixed_key(0, 1), None);
        // A second batch meets old and new keys; only selected rows count.
        let c2 = ints(&[Some(7), Some(8), Some(5), None]);
        let created = unsafe { t.assign(&[&c2], &[0, 1, 3], &mut out) };
        assert_eq!(created, 1);
        assert_eq!(out, vec![3, 4, 1]);
    }

    #[test]
    fn float_keys_follow_postgres_equality() {
        let mut t = GroupTable::new(&[KeyKind::Float8]);
        let mut c = Column::new(PhysType::F64, 5);
        for (i, v) in [0.0, -0.0, f64::NAN, -f64::NAN, 1.5].iter().enumerate() {
            c.values.set_datum(i, v.to_bits() as usize);
        }
        let mut out = vec![];
        unsafe { t.assign(&[&c], &all(5), &mut out) };
        assert_eq!(out, vec![0, 0, 1, 1, 2]);
        // The group keeps the first value met: 0, not -0.
        assert_eq!(t.fixed_key(0, 0), Some(0));
        let mut t = GroupTable::new(&[KeyKind::Float8]);
        let mut c = Column::new(PhysType::F64, 2);
        c.values.set_datum(0, (-0.0f64).to_bits() as usize);
        unsafe { t.assign(&[&c], &all(2), &mut out) };
        assert_eq!(out, vec![0, 0]);
        assert_eq!(t.fixed_key(0, 0), Some((-0.0f64).to_bits() as i64));
    }

    #[test]
    fn numeric_keys_ignore_the_display_scale() {
        use crate::numeric::{encode_payload, encode_special, Special};
        // 1.0, 1.00, 1, 2.50, 0.00, 0, NaN, NaN, -1.0, 10000 (weight 1), 1e-4
        let values: [(i128, u16); 11] = [
            (10, 1),
            (100, 2),
            (1, 0),
            (250, 2),
            (0, 2),
            (0, 0),
            (0, 0),
            (0, 0),
            (-10, 1),
            (10000, 0),
            (1, 4),
        ];
        let mut store: Vec<Vec<u8>> =
            values.iter().map(|&(v, s)| varlena::make_4b(&encode_payload(v, s))).collect();
        store[6] = varlena::make_4b(&encode_special(Special::NaN));
        store[7] = varlena::make_1b(&encode_special(Special::NaN));
        let col = texts(&store);
        let mut t = GroupTable::new(&[KeyKind::Numeric]);
        let mut out = vec![];
        unsafe { t.assign(&[&col], &all(11), &mut out) };
        assert_eq!(out, vec![0, 0, 0, 1, 2, 2, 3, 3, 4, 5, 6]);
        // The group keeps the first value met, with its scale.
        assert_eq!(t.bytes_key(0, 0), Some(&encode_payload(10, 1)[..]));
        // Equal values hash alike (a hash join partitions by the hash).
        let mut h = vec![];
        unsafe { t.hash_rows(&[&col], &[0, 1, 2, 4, 5], &mut h) };
        assert!(h[0] == h[1] && h[1] == h[2] && h[3] == h[4] && h[0] != h[3]);
    }

    #[test]
    fn composite_text_and_bpchar_keys() {
        let s = [
            varlena::make_1b(b"ab"),
            varlena::make_4b(b"ab"),
            varlena::make_1b(b"ab "),
            varlena::make_1b(b""),
        ];
        let text = texts(&s);
        let mut t = GroupTable::new(&[KeyKind::Bytes]);
        let mut out = vec![];
        unsafe { t.assign(&[&text], &all(4), &mut out) };
        // The header format does not matter; trailing blanks do for text.
        assert_eq!(out, vec![0, 0, 1, 2]);
        assert_eq!(t.bytes_key(0, 1), Some(&b"ab "[..]));

        let mut t = GroupTable::new(&[KeyKind::Bpchar, KeyKind::Int]);
        let k2 = ints(&[Some(1), Some(1), Some(1), Some(2)]);
        unsafe { t.assign(&[&text, &k2], &all(4), &mut out) };
        assert_eq!(out, vec![0, 0, 0, 1]);
        assert_eq!(t.bytes_key(0, 0), Some(&b"ab"[..]));
        let mut t = GroupTable::new(&[KeyKind::Bpchar]);
        unsafe { t.assign(&[&text], &[2, 0], &mut out) };
        // bpchar keeps the first value with its blanks.
        assert_eq!((out.as_slice(), t.bytes_key(0, 0)), (&[0u32, 0][..], Some(&b"ab "[..])));
    }

    #[test]
    fn short_and_long_byte_keys_around_the_packed_width() {
        // 7 bytes are packed into an integer, 8 are not; a zero byte, a
        // prefix and a blank-padded bpchar must still be told apart exactly.
        let s = [
            varlena::make_1b(b"abcdefg"),
            varlena::make_1b(b"abcdefgh"),
            varlena::make_4b(b"abcdefg"),
            varlena::make_1b(b"abcdefgh"),
            varlena::make_1b(b"abc"),
            varlena::make_1b(b"abc\0"),
            varlena::make_1b(b""),
            varlena::make_1b(b"abcdefg   "),
        ];
        let col = texts(&s);
        let mut t = GroupTable::new(&[KeyKind::Bytes]);
        let mut out = vec![];
        unsafe { t.assign(&[&col], &all(8), &mut out) };
        assert_eq!(out, vec![0, 1, 0, 1, 2, 3, 4, 5]);
        let mut t = GroupTable::new(&[KeyKind::Bpchar]);
        unsafe { t.assign(&[&col], &all(8), &mut out) };
        assert_eq!(out, vec![0, 1, 0, 1, 2, 3, 4, 0]);
        assert_eq!(t.bytes_key(0, 0), Some(&b"abcdefg"[..]));
        let mut h = vec![];
        unsafe { t.hash_rows(&[&col], &[0, 7, 1], &mut h) };
        assert!(h[0] == h[1] && h[0] != h[2]);
    }

    #[test]
    fn uuid_keys_are_their_sixteen_bytes() {
        let a = [7u8; 16];
        let mut b = [7u8; 16];
        b[15] = 8;
        let a2 = a; // equal bytes at another address
        let mut c = Column::new(PhysType::Datum, 4);
        for (i, p) in [a.as_ptr(), b.as_ptr(), a2.as_ptr()].iter().enumerate() {
            c.values.set_datum(i, *p as usize);
        }
        c.validity.set(3, false);
        let mut t = GroupTable::new(&[KeyKind::Uuid]);
        let mut out = vec![];
        unsafe { t.assign(&[&c], &all(4), &mut out) };
        assert_eq!(out, vec![0, 1, 0, 2]);
        assert_eq!(t.bytes_key(0, 1), Some(&b[..]));
        assert_eq!(t.bytes_key(0, 2), None);
    }

    #[test]
    fn interval_keys_are_equal_by_span_and_keep_the_first_value() {
        let iv = |time: i64, day: i32, month: i32| {
            let mut b = time.to_le_bytes().to_vec();
            b.extend_from_slice(&day.to_le_bytes());
            b.extend_from_slice(&month.to_le_bytes());
            b
        };
        let day_us = 86_400_000_000i64;
        let vals = [
            iv(0, 1, 0),                      // 1 day
            iv(day_us, 0, 0),                 // 24 hours
            iv(0, 30, 0),                     // 30 days
            iv(0, 0, 1),                      // 1 month
            iv(0, 0, 0),                      // 0
            iv(-day_us, 1, 0),                // 1 day -24 hours
            iv(i64::MAX, i32::MAX, i32::MAX), // infinity
            iv(i64::MIN, i32::MIN, i32::MIN), // -infinity
            iv(1, 1, 0),
        ];
        let mut c = Column::new(PhysType::Datum, vals.len());
        for (i, v) in vals.iter().enumerate() {
            c.values.set_datum(i, v.as_ptr() as usize);
        }
        let mut t = GroupTable::new(&[KeyKind::Interval]);
        let mut out = vec![];
        unsafe { t.assign(&[&c], &all(vals.len()), &mut out) };
        assert_eq!(out, vec![0, 0, 1, 1, 2, 2, 3, 4, 5]);
        assert_eq!(t.bytes_key(0, 0), Some(&vals[0][..]));
        assert_eq!(t.bytes_key(0, 1), Some(&vals[2][..]));
        let mut h = vec![];
        unsafe { t.hash_rows(&[&c], &[2, 3, 4], &mut h) };
        assert!(h[0] == h[1] && h[0] != h[2]);
    }

    #[test]
    fn integer_tables_keep_no_hashes_and_recompute_them_alike() {
        // One int key, and a pair of int keys with NULLs (those groups go to
        // the general table): grown batch by batch, with and without
        // reservations, every group is found again through its recomputed
        // hash, which is the hash its row had.
        for (two, reserve) in [(false, false), (false, true), (true, false), (true, true)] {
            let kinds: &[KeyKind] = if two { &[KeyKind::Int, KeyKind::Int] } else { &[KeyKind::Int] };
            let mut t = GroupTable::new(kinds);
            assert!(!t.keeps_hashes());
            let mut expected = Vec::new();
            for b in 0..40 {
                let a: Vec<Option<i32>> = (0..500)
                    .map(|i| if (b * 500 + i) % 97 == 0 { None } else { Some(b * 500 + i) })
                    .collect();
                let c: Vec<Option<i32>> =
                    (0..500).map(|i| if i % 89 == 0 { None } else { Some(i % 7) }).collect();
                let (a, c) = (ints(&a), ints(&c));
                let cols: Vec<&Column> = if two { vec![&a, &c] } else { vec![&a] };
                if reserve {
                    t.reserve_groups(t.len() + 500, &[]);
                }
                let mut out = vec![];
                unsafe { t.assign(&cols, &all(500), &mut out) };
                let mut h = vec![];
                unsafe { t.hash_rows(&cols, &all(500), &mut h) };
                for (i, &g) in out.iter().enumerate() {
                    assert_eq!(hash_of_norms(&t.state, &t.norm_tags, &t.norm_vals, g), h[i]);
                }
                expected.push((a, c, out));
            }
            assert!(t.hashes.is_empty() && t.hashes.capacity() == 0);
            for (a, c, out) in &expected {
                let cols: Vec<&Column> = if two { vec![a, c] } else { vec![a] };
                let (mut found, mut hashes) = (vec![], vec![]);
                unsafe { t.lookup(&cols, &all(500), &mut found, &mut hashes) };
                assert_eq!(&found, out, "two keys {two}, reserved {reserve}");
            }
            assert!(t.room() >= t.len());
        }
    }

    #[test]
    fn lookup_finds_existing_groups_only_with_the_hashes_assign_uses() {
        let mut t = GroupTable::new(&[KeyKind::Int]);
        let mut out = vec![];
        unsafe { t.assign(&[&ints(&[Some(1), Some(2), None])], &all(3), &mut out) };
        let probe = ints(&[Some(2), Some(3), None, Some(1), Some(3)]);
        let (mut groups, mut hashes) = (vec![], vec![]);
        unsafe { t.lookup(&[&probe], &[0, 1, 2, 3, 4], &mut groups, &mut hashes) };
        assert_eq!(groups, vec![1, NO_GROUP, 2, 0, NO_GROUP]);
        // Equal keys hash alike, so a spilled key always lands in one partition.
        assert_eq!(hashes[1], hashes[4]);
        assert_ne!(hashes[1], hashes[0]);
        assert_eq!(t.len(), 3);
    }

    fn int8s(v: &[Option<i64>]) -> Column {
        let mut c = Column::new(PhysType::I64, v.len());
        for (i, x) in v.iter().enumerate() {
            match x {
                Some(x) => c.values.set_datum(i, *x as usize),
                None => c.validity.set(i, false),
            }
        }
        c
    }

    /// The single-integer-key index against the general table (the same
    /// keys with a constant second key): equal group numbers for assign and
    /// lookup, with NULLs, runs, rows skipped, keys beyond 32 bits whose low
    /// bits equal others' (from batch 40 on), and growth past many batches.
    #[test]
    fn one_integer_key_groups_as_the_general_table_does() {
        let mut one = GroupTable::new(&[KeyKind::Int]);
        let mut two = GroupTable::new(&[KeyKind::Int, KeyKind::Int]);
        assert!(one.ints.is_some() && two.ints.is_none());
        let zeros = ints(&[Some(0); 1024]);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut a, mut b) = (vec![], vec![]);
        for batch in 0..60 {
            let keys: Vec<Option<i64>> = (0..1024)
                .map(|i| match next() % 50 {
                    0 => None,
                    // runs of one key, as a join's matches come
                    1..=5 if i > 0 => Some(batch * 1000 + i / 8),
                    6..=9 if batch >= 40 => {
                        Some((next() % 40_000) as i64 - 20_000 + ((next() % 3) as i64 - 1) * (1 << 32))
                    }
                    _ => Some((next() % 40_000) as i64 - 20_000),
                })
                .collect();
            let col = int8s(&keys);
            let rows: Vec<RowIdx> = (0..1024).filter(|r| r % 7 != 3).collect();
            let made = unsafe { one.assign(&[&col], &rows, &mut a) };
            assert_eq!(made, unsafe { two.assign(&[&col, &zeros], &rows, &mut b) });
            assert_eq!(a, b, "batch {batch}");
            let (mut ha, mut hb) = (vec![], vec![]);
            let probe = int8s(&keys.iter().map(|k| k.map(|k| k + 7)).collect::<Vec<_>>());
            unsafe { one.lookup(&[&probe], &rows, &mut a, &mut ha) };
            unsafe { two.lookup(&[&probe, &zeros], &rows, &mut b, &mut hb) };
            assert_eq!(a, b, "lookup, batch {batch}");
        }
        assert!(one.len() > 30_000, "{} groups", one.len());
        assert!(one.ints.as_ref().is_some_and(|x| x.is_wide()));
        assert_eq!(one.fixed_key(0, 0), two.fixed_key(0, 0));
    }

    #[test]
    fn many_groups_survive_growth() {
        let mut t = GroupTable::new(&[KeyKind::Int, KeyKind::Int]);
        let mut out = vec![];
        for batch in 0..50 {
            let a = ints(&(0..1000).map(|i| Some(batch * 1000 + i)).collect::<Vec<_>>());
            let mut b = ints(&(0..1000).map(|i| Some(i % 3)).collect::<Vec<_>>());
            b.validity = Bitmap::all_valid(1000);
            unsafe { t.assign(&[&a, &b], &all(1000), &mut out) };
            assert_eq!(out[999] as i32, batch * 1000 + 999);
        }
        assert_eq!(t.len(), 50_000);
        let a = ints(&[Some(31_337)]);
        let b = ints(&[Some(31_337 % 1000 % 3)]);
        unsafe { t.assign(&[&a, &b], &all(1), &mut out) };
        assert_eq!(out, vec![31_337]);
        assert!(t.bytes_used() > 50_000 * 16);
    }
}

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

mod key_kind;

pub use key_kind::*;

/// How many rows ahead of the probe the single-integer-key paths prefetch
/// the slot of a row's key (enough to overlap the cache misses of a batch
/// without the lines being evicted before use).
const PREFETCH_AHEAD: usize = 16;

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
            // SAFETY: this function's contract: a valid Datum value of a Bytes-like kind points to
            // a plain varlena.
            KeyRef::Bytes(unsafe { varlena::bytes(v[i] as *const u8) })
        }
        (KeyKind::Uuid, Values::Datum(v)) => {
            // SAFETY: this function's contract: a uuid Datum points to its 16 bytes.
            KeyRef::Bytes(unsafe { std::slice::from_raw_parts(v[i] as *const u8, UUID_LEN) })
        }
        (KeyKind::Interval, Values::Datum(v)) => {
            // SAFETY: this function's contract: an interval Datum points to its 16 bytes.
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
                    // SAFETY: this function's contract (as assign's) covers the key columns' values
                    // among rows.
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
        // SAFETY: this function's contract is assign's.
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
                            // SAFETY: this function's contract (as assign's) covers the key
                            // columns' values among rows.
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
        // SAFETY: this function's contract: the by-reference key values among rows point to plain
        // varlenas (or their fixed-length bytes).
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
                    // SAFETY: as above.
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
        // SAFETY: this function's contract is assign's.
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
mod tests;

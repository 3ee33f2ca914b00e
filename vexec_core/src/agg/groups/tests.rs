//! The group table against PostgreSQL's key equality.

use super::*;
use crate::batch::{Bitmap, PhysType};

/// The table's entry points without `unsafe` at each call.
trait Checked {
    fn assign_rows(&mut self, cols: &[&Column], rows: &[RowIdx], out: &mut Vec<u32>) -> usize;
    fn lookup_rows(&self, cols: &[&Column], rows: &[RowIdx], groups: &mut Vec<u32>, hashes: &mut Vec<u64>);
    fn hash_of_rows(&self, cols: &[&Column], rows: &[RowIdx], out: &mut Vec<u64>);
    fn key_bytes_of(&self, cols: &[&Column], rows: &[RowIdx]) -> Vec<usize>;
}

// SAFETY (every method): the tests' Datum columns point to plain varlenas
// in vectors that outlive the calls (`texts`, `make_1b`).
impl Checked for GroupTable {
    fn assign_rows(&mut self, cols: &[&Column], rows: &[RowIdx], out: &mut Vec<u32>) -> usize {
        // SAFETY: see the impl.
        unsafe { self.assign(cols, rows, out) }
    }
    fn lookup_rows(&self, cols: &[&Column], rows: &[RowIdx], groups: &mut Vec<u32>, hashes: &mut Vec<u64>) {
        // SAFETY: see the impl.
        unsafe { self.lookup(cols, rows, groups, hashes) }
    }
    fn hash_of_rows(&self, cols: &[&Column], rows: &[RowIdx], out: &mut Vec<u64>) {
        // SAFETY: see the impl.
        unsafe { self.hash_rows(cols, rows, out) }
    }
    fn key_bytes_of(&self, cols: &[&Column], rows: &[RowIdx]) -> Vec<usize> {
        // SAFETY: see the impl.
        unsafe { self.key_bytes(cols, rows) }
    }
}

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
    t.assign_rows(&[&a, &texts(&first)], &all(1000), &mut out);
    t.reserve_groups(3000, &[]);
    assert_eq!(t.room(), 3000);
    let before = t.bytes_used();
    for batch in 1..3 {
        let keys: Vec<Vec<u8>> = (0..1000)
            .map(|i| crate::batch::varlena::make_1b(format!("k{:05}", batch * 1000 + i).as_bytes()))
            .collect();
        let a = ints(&(0..1000).map(|i| Some(batch * 1000 + i)).collect::<Vec<_>>());
        let created = t.assign_rows(&[&a, &texts(&keys)], &all(1000), &mut out);
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
    one.assign_rows(&[&a], &all(1000), &mut out);
    two.assign_rows(&[&a, &texts(&keys)], &all(1000), &mut out);
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
    t.assign_rows(&[&a, &texts(&keys)], &all(1000), &mut out);
    t.reserve_groups(2000, &[]);
    let (b, l) = (ints(&(1000..2000).map(Some).collect::<Vec<_>>()), texts(&long));
    let incoming = t.key_bytes_of(&[&b, &l], &all(1000));
    assert_eq!(incoming[0], 0);
    assert_eq!(incoming[1], long.iter().map(|v| v.len() - 1).sum::<usize>());
    assert!(t.needs_key_room(&incoming));
    let foretold = t.bytes_at(2000, &incoming);
    assert!(foretold > t.bytes_at(2000, &[]));
    t.reserve_groups(2000, &incoming);
    assert_eq!(t.bytes_used(), foretold);
    assert!(!t.needs_key_room(&incoming));
    t.assign_rows(&[&b, &l], &all(1000), &mut out);
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
        t.assign_rows(&[&a, &b], &all(1000), &mut out);
        for (k, &g) in ks.iter().zip(&out) {
            let expected = *oracle.entry(*k).or_insert(g);
            assert_eq!(g, expected, "{k:?}");
        }
        let (mut found, mut hashes) = (Vec::new(), Vec::new());
        t.lookup_rows(&[&a, &b], &all(1000), &mut found, &mut hashes);
        assert_eq!(found, out);
    }
    assert_eq!(t.len(), oracle.len());
    let distinct: std::collections::HashSet<u32> = oracle.values().copied().collect();
    assert_eq!(distinct.len(), oracle.len(), "distinct keys, distinct groups");
    assert!(oracle.keys().any(|k| k.0.is_none()) && oracle.keys().any(|k| k.1.is_none()));
    // A key never met: no group.
    let (a, b) = (ints(&[Some(1000), None]), ints(&[Some(0), Some(-5)]));
    let (mut found, mut hashes) = (Vec::new(), Vec::new());
    t.lookup_rows(&[&a, &b], &all(2), &mut found, &mut hashes);
    assert_eq!(found, vec![NO_GROUP, NO_GROUP]);
}

#[test]
fn runs_of_equal_keys_share_their_group() {
    // Runs of one key (the shortcut) next to keys that differ only in a
    // later column, long byte keys and NULLs.
    let long = |s: &str| format!("a key longer than seven bytes: {s}");
    let names = ["x", "x", "x", "y", "y", "x", "x", "x"].map(long);
    let store: Vec<Vec<u8>> = names.iter().map(|n| crate::batch::varlena::make_1b(n.as_bytes())).collect();
    let a = ints(&[Some(1), Some(1), Some(2), Some(2), Some(2), None, None, Some(1)]);
    let mut t = GroupTable::new(&[KeyKind::Int, KeyKind::Bytes]);
    let mut out = vec![];
    let created = t.assign_rows(&[&a, &texts(&store)], &all(8), &mut out);
    assert_eq!(out, vec![0, 0, 1, 2, 2, 3, 3, 0]);
    assert_eq!(created, 4);
    let (mut groups, mut hashes) = (vec![], vec![]);
    t.lookup_rows(&[&a, &texts(&store)], &[0, 1, 2, 3, 4, 5, 6, 7], &mut groups, &mut hashes);
    assert_eq!(groups, out);
    // Rows without a group stay without one along their run.
    let b = ints(&[Some(9), Some(9), Some(1), Some(1)]);
    let other: Vec<Vec<u8>> =
        ["x", "x", "x", "x"].map(|s| crate::batch::varlena::make_1b(long(s).as_bytes())).to_vec();
    t.lookup_rows(&[&b, &texts(&other)], &all(4), &mut groups, &mut hashes);
    assert_eq!(groups, vec![NO_GROUP, NO_GROUP, 0, 0]);
}

#[test]
fn groups_in_order_of_first_appearance_with_nulls_together() {
    let mut t = GroupTable::new(&[KeyKind::Int]);
    let c = ints(&[Some(5), None, Some(5), Some(-1), None, Some(7)]);
    let mut out = vec![];
    let created = t.assign_rows(&[&c], &all(6), &mut out);
    assert_eq!(created, 4);
    assert_eq!(out, vec![0, 1, 0, 2, 1, 3]);
    assert_eq!(t.fixed_key(0, 0), Some(5));
    assert_eq!(t.fixed_key(0, 1), None);
    // A second batch meets old and new keys; only selected rows count.
    let c2 = ints(&[Some(7), Some(8), Some(5), None]);
    let created = t.assign_rows(&[&c2], &[0, 1, 3], &mut out);
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
    t.assign_rows(&[&c], &all(5), &mut out);
    assert_eq!(out, vec![0, 0, 1, 1, 2]);
    // The group keeps the first value met: 0, not -0.
    assert_eq!(t.fixed_key(0, 0), Some(0));
    let mut t = GroupTable::new(&[KeyKind::Float8]);
    let mut c = Column::new(PhysType::F64, 2);
    c.values.set_datum(0, (-0.0f64).to_bits() as usize);
    t.assign_rows(&[&c], &all(2), &mut out);
    assert_eq!(out, vec![0, 0]);
    assert_eq!(t.fixed_key(0, 0), Some((-0.0f64).to_bits() as i64));
}

#[test]
fn numeric_keys_ignore_the_display_scale() {
    use crate::numeric::{encode_payload, encode_special, Special};
    // 1.0, 1.00, 1, 2.50, 0.00, 0, NaN, NaN, -1.0, 10000 (weight 1), 1e-4
    let values: [(i128, u16); 11] =
        [(10, 1), (100, 2), (1, 0), (250, 2), (0, 2), (0, 0), (0, 0), (0, 0), (-10, 1), (10000, 0), (1, 4)];
    let mut store: Vec<Vec<u8>> =
        values.iter().map(|&(v, s)| varlena::make_4b(&encode_payload(v, s))).collect();
    store[6] = varlena::make_4b(&encode_special(Special::NaN));
    store[7] = varlena::make_1b(&encode_special(Special::NaN));
    let col = texts(&store);
    let mut t = GroupTable::new(&[KeyKind::Numeric]);
    let mut out = vec![];
    t.assign_rows(&[&col], &all(11), &mut out);
    assert_eq!(out, vec![0, 0, 0, 1, 2, 2, 3, 3, 4, 5, 6]);
    // The group keeps the first value met, with its scale.
    assert_eq!(t.bytes_key(0, 0), Some(&encode_payload(10, 1)[..]));
    // Equal values hash alike (a hash join partitions by the hash).
    let mut h = vec![];
    t.hash_of_rows(&[&col], &[0, 1, 2, 4, 5], &mut h);
    assert!(h[0] == h[1] && h[1] == h[2] && h[3] == h[4] && h[0] != h[3]);
}

#[test]
fn composite_text_and_bpchar_keys() {
    let s =
        [varlena::make_1b(b"ab"), varlena::make_4b(b"ab"), varlena::make_1b(b"ab "), varlena::make_1b(b"")];
    let text = texts(&s);
    let mut t = GroupTable::new(&[KeyKind::Bytes]);
    let mut out = vec![];
    t.assign_rows(&[&text], &all(4), &mut out);
    // The header format does not matter; trailing blanks do for text.
    assert_eq!(out, vec![0, 0, 1, 2]);
    assert_eq!(t.bytes_key(0, 1), Some(&b"ab "[..]));

    let mut t = GroupTable::new(&[KeyKind::Bpchar, KeyKind::Int]);
    let k2 = ints(&[Some(1), Some(1), Some(1), Some(2)]);
    t.assign_rows(&[&text, &k2], &all(4), &mut out);
    assert_eq!(out, vec![0, 0, 0, 1]);
    assert_eq!(t.bytes_key(0, 0), Some(&b"ab"[..]));
    let mut t = GroupTable::new(&[KeyKind::Bpchar]);
    t.assign_rows(&[&text], &[2, 0], &mut out);
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
    t.assign_rows(&[&col], &all(8), &mut out);
    assert_eq!(out, vec![0, 1, 0, 1, 2, 3, 4, 5]);
    let mut t = GroupTable::new(&[KeyKind::Bpchar]);
    t.assign_rows(&[&col], &all(8), &mut out);
    assert_eq!(out, vec![0, 1, 0, 1, 2, 3, 4, 0]);
    assert_eq!(t.bytes_key(0, 0), Some(&b"abcdefg"[..]));
    let mut h = vec![];
    t.hash_of_rows(&[&col], &[0, 7, 1], &mut h);
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
    t.assign_rows(&[&c], &all(4), &mut out);
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
    t.assign_rows(&[&c], &all(vals.len()), &mut out);
    assert_eq!(out, vec![0, 0, 1, 1, 2, 2, 3, 4, 5]);
    assert_eq!(t.bytes_key(0, 0), Some(&vals[0][..]));
    assert_eq!(t.bytes_key(0, 1), Some(&vals[2][..]));
    let mut h = vec![];
    t.hash_of_rows(&[&c], &[2, 3, 4], &mut h);
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
            let a: Vec<Option<i32>> =
                (0..500).map(|i| if (b * 500 + i) % 97 == 0 { None } else { Some(b * 500 + i) }).collect();
            let c: Vec<Option<i32>> =
                (0..500).map(|i| if i % 89 == 0 { None } else { Some(i % 7) }).collect();
            let (a, c) = (ints(&a), ints(&c));
            let cols: Vec<&Column> = if two { vec![&a, &c] } else { vec![&a] };
            if reserve {
                t.reserve_groups(t.len() + 500, &[]);
            }
            let mut out = vec![];
            t.assign_rows(&cols, &all(500), &mut out);
            let mut h = vec![];
            t.hash_of_rows(&cols, &all(500), &mut h);
            for (i, &g) in out.iter().enumerate() {
                assert_eq!(hash_of_norms(&t.state, &t.norm_tags, &t.norm_vals, g), h[i]);
            }
            expected.push((a, c, out));
        }
        assert!(t.hashes.is_empty() && t.hashes.capacity() == 0);
        for (a, c, out) in &expected {
            let cols: Vec<&Column> = if two { vec![a, c] } else { vec![a] };
            let (mut found, mut hashes) = (vec![], vec![]);
            t.lookup_rows(&cols, &all(500), &mut found, &mut hashes);
            assert_eq!(&found, out, "two keys {two}, reserved {reserve}");
        }
        assert!(t.room() >= t.len());
    }
}

#[test]
fn lookup_finds_existing_groups_only_with_the_hashes_assign_uses() {
    let mut t = GroupTable::new(&[KeyKind::Int]);
    let mut out = vec![];
    t.assign_rows(&[&ints(&[Some(1), Some(2), None])], &all(3), &mut out);
    let probe = ints(&[Some(2), Some(3), None, Some(1), Some(3)]);
    let (mut groups, mut hashes) = (vec![], vec![]);
    t.lookup_rows(&[&probe], &[0, 1, 2, 3, 4], &mut groups, &mut hashes);
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
        let made = one.assign_rows(&[&col], &rows, &mut a);
        assert_eq!(made, two.assign_rows(&[&col, &zeros], &rows, &mut b));
        assert_eq!(a, b, "batch {batch}");
        let (mut ha, mut hb) = (vec![], vec![]);
        let probe = int8s(&keys.iter().map(|k| k.map(|k| k + 7)).collect::<Vec<_>>());
        one.lookup_rows(&[&probe], &rows, &mut a, &mut ha);
        two.lookup_rows(&[&probe, &zeros], &rows, &mut b, &mut hb);
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
        t.assign_rows(&[&a, &b], &all(1000), &mut out);
        assert_eq!(out[999] as i32, batch * 1000 + 999);
    }
    assert_eq!(t.len(), 50_000);
    let a = ints(&[Some(31_337)]);
    let b = ints(&[Some(31_337 % 1000 % 3)]);
    t.assign_rows(&[&a, &b], &all(1), &mut out);
    assert_eq!(out, vec![31_337]);
    assert!(t.bytes_used() > 50_000 * 16);
}

//! Sorting materialized rows by keys, in the orders of PostgreSQL's default
//! btree operator classes.
//!
//! A sort gathers its input in a [`RowStore`] (growable columns), then
//! [`sort_rows`] computes the output order as a permutation of row numbers.
//! Ties keep their input order (the comparison ends on the row number), so
//! a sort is deterministic, and a top-N sort ([`sort_rows`] with a bound)
//! returns exactly the first rows of the full sort, plus every row that
//! ties with the last of them (what `FETCH FIRST n ROWS WITH TIES` needs).
//!
//! Keys compared here ([`KeyValues`]): integers, dates, times and
//! timestamps by value; booleans false < true; float4/float8 with
//! `-0 = 0` and NaN equal to NaN and above every other value (float.c's
//! `float8_cmp_internal`); strings under a collation that orders bytes
//! (`C`, `POSIX`) bytewise, a shorter prefix first. Any other type or
//! collation is ranked by the server (its SortSupport comparator) and
//! compared here by rank.

use std::cmp::Ordering;

use crate::batch::{varlena, Column, PhysType, RowIdx, Values};

/// Rows gathered from batches, one growable vector per column.
#[derive(Debug)]
pub struct RowStore {
    pub columns: Vec<Values>,
    /// Per column, per row: true when the value is NULL.
    pub nulls: Vec<Vec<bool>>,
    len: usize,
}

impl RowStore {
    pub fn new(types: &[PhysType]) -> RowStore {
        RowStore {
            columns: types.iter().map(|&t| Values::new(t, 0)).collect(),
            nulls: types.iter().map(|_| Vec::new()).collect(),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append the rows `rows` of a batch (one column per store column).
    pub fn push_batch(&mut self, columns: &[Column], rows: &[RowIdx]) {
        for ((dst, nulls), src) in self.columns.iter_mut().zip(&mut self.nulls).zip(columns) {
            nulls.extend(rows.iter().map(|&r| !src.is_valid(r as usize)));
            push_values(dst, &src.values, rows.iter().map(|&r| r as usize));
        }
        self.len += rows.len();
    }

    /// Append one row given as Datums (None: NULL).
    pub fn push_datums(&mut self, datums: &[Option<usize>]) {
        for ((dst, nulls), d) in self.columns.iter_mut().zip(&mut self.nulls).zip(datums) {
            nulls.push(d.is_none());
            let i = dst.len();
            grow(dst, i + 1);
            dst.set_datum(i, d.unwrap_or(0));
        }
        self.len += 1;
    }

    /// Keep only rows `keep`, in that order.
    pub fn retain_rows(&mut self, keep: &[u32]) {
        for (values, nulls) in self.columns.iter_mut().zip(&mut self.nulls) {
            let mut kept = Values::new(values.phys_type(), 0);
            push_values(&mut kept, values, keep.iter().map(|&r| r as usize));
            *values = kept;
            *nulls = keep.iter().map(|&r| nulls[r as usize]).collect();
        }
        self.len = keep.len();
    }

    /// The row's value in column `c` as a Datum (None: NULL).
    #[inline]
    pub fn datum(&self, c: usize, row: usize) -> Option<usize> {
        (!self.nulls[c][row]).then(|| self.columns[c].datum(row))
    }

    /// Bytes held by the vectors (not by what Datum columns point to).
    pub fn heap_bytes(&self) -> usize {
        self.columns.iter().map(|v| v.len() * v.width()).sum::<usize>() + self.len * self.columns.len()
    }
}

fn grow(v: &mut Values, len: usize) {
    match v {
        Values::Bool(x) => x.resize(len, 0),
        Values::I16(x) => x.resize(len, 0),
        Values::I32(x) => x.resize(len, 0),
        Values::I64(x) => x.resize(len, 0),
        Values::I128(x) => x.resize(len, 0),
        Values::F32(x) => x.resize(len, 0.0),
        Values::F64(x) => x.resize(len, 0.0),
        Values::Datum(x) => x.resize(len, 0),
        v => unreachable!("a sort store holds the postgres layout, not {v:?}"),
    }
}

fn push_values(dst: &mut Values, src: &Values, rows: impl Iterator<Item = usize>) {
    match (dst, src) {
        (Values::Bool(d), Values::Bool(s)) => d.extend(rows.map(|r| s[r])),
        (Values::I16(d), Values::I16(s)) => d.extend(rows.map(|r| s[r])),
        (Values::I32(d), Values::I32(s)) => d.extend(rows.map(|r| s[r])),
        (Values::I64(d), Values::I64(s)) => d.extend(rows.map(|r| s[r])),
        (Values::I128(d), Values::I128(s)) => d.extend(rows.map(|r| s[r])),
        (Values::F32(d), Values::F32(s)) => d.extend(rows.map(|r| s[r])),
        (Values::F64(d), Values::F64(s)) => d.extend(rows.map(|r| s[r])),
        (Values::Datum(d), Values::Datum(s)) => d.extend(rows.map(|r| s[r])),
        // A batch whose column has another layout (a row-mode batch):
        // through Datums, as the slot would see them.
        (d, s) => {
            for r in rows {
                let i = d.len();
                grow(d, i + 1);
                d.set_datum(i, s.datum(r));
            }
        }
    }
}

/// The values of one sort key, as the comparison reads them.
#[derive(Debug, Clone, Copy)]
pub enum KeyValues<'a> {
    /// int2/int4/int8, date, time, timestamp(tz), bool (0/1): by value.
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    /// Scaled numerics of one scale.
    I128(&'a [i128]),
    Bool(&'a [u8]),
    F32(&'a [f32]),
    F64(&'a [f64]),
    /// Pointers to plain (detoasted) varlenas, compared bytewise.
    Bytes(&'a [usize]),
    /// Ranks assigned by the server: equal values have equal ranks, and the
    /// ranks are in the key's order (its direction included).
    Rank(&'a [u32]),
}

impl<'a> KeyValues<'a> {
    /// The values of a stored column for a natively compared key.
    ///
    /// # Safety
    /// For a by-reference column (`Bytes`), every non-NULL value points to
    /// a plain varlena that outlives the sort.
    pub unsafe fn of(values: &'a Values) -> KeyValues<'a> {
        match values {
            Values::Bool(v) => KeyValues::Bool(v),
            Values::I16(v) => KeyValues::I16(v),
            Values::I32(v) => KeyValues::I32(v),
            Values::I64(v) => KeyValues::I64(v),
            Values::I128(v) => KeyValues::I128(v),
            Values::F32(v) => KeyValues::F32(v),
            Values::F64(v) => KeyValues::F64(v),
            Values::Datum(v) => KeyValues::Bytes(v),
            v => panic!("sort keys are read in the postgres layout, not {v:?}"),
        }
    }
}

/// One ORDER BY item.
#[derive(Debug, Clone, Copy)]
pub struct SortKey<'a> {
    pub values: KeyValues<'a>,
    /// Per row: true when NULL.
    pub nulls: &'a [bool],
    pub descending: bool,
    pub nulls_first: bool,
}

/// float8_cmp_internal: NaNs are equal and sort above everything else.
#[inline]
fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        // -0 == 0, as PostgreSQL compares them.
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

impl SortKey<'_> {
    #[inline]
    fn compare(&self, a: usize, b: usize) -> Ordering {
        match (self.nulls[a], self.nulls[b]) {
            (true, true) => return Ordering::Equal,
            (true, false) => return if self.nulls_first { Ordering::Less } else { Ordering::Greater },
            (false, true) => return if self.nulls_first { Ordering::Greater } else { Ordering::Less },
            _ => {}
        }
        let o = match self.values {
            KeyValues::I16(v) => v[a].cmp(&v[b]),
            KeyValues::I32(v) => v[a].cmp(&v[b]),
            KeyValues::I64(v) => v[a].cmp(&v[b]),
            KeyValues::I128(v) => v[a].cmp(&v[b]),
            KeyValues::Bool(v) => v[a].cmp(&v[b]),
            KeyValues::F32(v) => float_cmp(v[a] as f64, v[b] as f64),
            KeyValues::F64(v) => float_cmp(v[a], v[b]),
            // SAFETY: KeyValues::of's contract.
            KeyValues::Bytes(v) => unsafe {
                varlena::bytes(v[a] as *const u8).cmp(varlena::bytes(v[b] as *const u8))
            },
            KeyValues::Rank(v) => v[a].cmp(&v[b]),
        };
        if self.descending {
            o.reverse()
        } else {
            o
        }
    }
}

/// Compare rows `a` and `b` by every key in turn.
#[inline]
pub fn compare_rows(keys: &[SortKey<'_>], a: usize, b: usize) -> Ordering {
    for k in keys {
        match k.compare(a, b) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    Ordering::Equal
}

/// The order of rows `0..n` by `keys`, ties in row order. With `bound`,
/// only the first `bound` rows of that order, followed by the rows that tie
/// with the last of them on every key.
pub fn sort_rows(keys: &[SortKey<'_>], n: usize, bound: Option<usize>) -> Vec<u32> {
    let total = |a: &u32, b: &u32| compare_rows(keys, *a as usize, *b as usize).then(a.cmp(b));
    let mut order: Vec<u32> = (0..n as u32).collect();
    match bound {
        Some(b) if b < n => {
            if b == 0 {
                return Vec::new();
            }
            order.select_nth_unstable_by(b - 1, total);
            let last = order[b - 1] as usize;
            let (head, tail) = order.split_at(b);
            let mut kept = head.to_vec();
            kept.extend(tail.iter().filter(|&&r| compare_rows(keys, r as usize, last) == Ordering::Equal));
            kept.sort_unstable_by(total);
            kept
        }
        _ => {
            order.sort_unstable_by(total);
            order
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'a>(values: KeyValues<'a>, nulls: &'a [bool], descending: bool, nulls_first: bool) -> SortKey<'a> {
        SortKey { values, nulls, descending, nulls_first }
    }

    #[test]
    fn nulls_first_and_last_in_both_directions() {
        let v = [3i32, 0, 1, 0, 2];
        let nulls = [false, true, false, true, false];
        let asc_last = sort_rows(&[key(KeyValues::I32(&v), &nulls, false, false)], 5, None);
        assert_eq!(asc_last, vec![2, 4, 0, 1, 3]);
        let desc_first = sort_rows(&[key(KeyValues::I32(&v), &nulls, true, true)], 5, None);
        assert_eq!(desc_first, vec![1, 3, 0, 4, 2]);
        let desc_last = sort_rows(&[key(KeyValues::I32(&v), &nulls, true, false)], 5, None);
        assert_eq!(desc_last, vec![0, 4, 2, 1, 3]);
    }

    #[test]
    fn floats_order_as_postgres_orders_them() {
        let v = [f64::NAN, 1.0, -0.0, f64::NEG_INFINITY, 0.0, f64::INFINITY, f64::NAN];
        let nulls = [false; 7];
        let order = sort_rows(&[key(KeyValues::F64(&v), &nulls, false, false)], 7, None);
        // -0 and 0 tie (kept in row order); NaNs above +Infinity.
        assert_eq!(order, vec![3, 2, 4, 1, 5, 0, 6]);
    }

    #[test]
    fn strings_bytewise_shorter_prefix_first() {
        let words: Vec<Vec<u8>> =
            ["b", "ab", "a", "", "\u{e9}", "B"].iter().map(|s| varlena::make_4b(s.as_bytes())).collect();
        let ptrs: Vec<usize> = words.iter().map(|w| w.as_ptr() as usize).collect();
        let nulls = [false; 6];
        let order = sort_rows(&[key(KeyValues::Bytes(&ptrs), &nulls, false, false)], 6, None);
        assert_eq!(order, vec![3, 5, 2, 1, 0, 4]);
    }

    #[test]
    fn second_key_breaks_ties_and_ties_keep_row_order() {
        let a = [1i64, 0, 1, 0, 1];
        let b = [5i16, 5, 4, 5, 4];
        let nulls = [false; 5];
        let keys =
            [key(KeyValues::I64(&a), &nulls, false, false), key(KeyValues::I16(&b), &nulls, true, false)];
        assert_eq!(sort_rows(&keys, 5, None), vec![1, 3, 0, 2, 4]);
    }

    #[test]
    fn bounded_sort_is_the_prefix_of_the_full_sort_plus_ties() {
        // A deterministic pseudo-random column with many duplicates.
        let v: Vec<i32> = (0..5000u64).map(|i| ((i * 2654435761) % 97) as i32).collect();
        let nulls: Vec<bool> = (0..5000).map(|i| i % 13 == 0).collect();
        let k = [key(KeyValues::I32(&v), &nulls, false, true)];
        let full = sort_rows(&k, v.len(), None);
        for bound in [0usize, 1, 7, 384, 385, 4999, 5000, 6000] {
            let top = sort_rows(&k, v.len(), Some(bound));
            let b = bound.min(full.len());
            assert_eq!(&top[..b], &full[..b], "bound {bound}");
            // Past the bound: exactly the rows tying with row b-1.
            let ties = full[b..]
                .iter()
                .take_while(|&&r| b > 0 && compare_rows(&k, r as usize, full[b - 1] as usize).is_eq())
                .count();
            assert_eq!(top.len(), b + ties, "bound {bound}");
            assert_eq!(&top[..], &full[..b + ties]);
        }
    }

    #[test]
    fn ranks_and_bools() {
        let r = [2u32, 0, 1, 0];
        let t = [1u8, 0, 1, 0];
        let nulls = [false; 4];
        let keys =
            [key(KeyValues::Bool(&t), &nulls, true, false), key(KeyValues::Rank(&r), &nulls, false, false)];
        assert_eq!(sort_rows(&keys, 4, None), vec![2, 0, 1, 3]);
    }

    #[test]
    fn store_push_retain_and_datums() {
        let mut s = RowStore::new(&[PhysType::I32, PhysType::Datum]);
        let mut a = Column::new(PhysType::I32, 4);
        let mut d = Column::new(PhysType::Datum, 4);
        for i in 0..4 {
            a.values.set_datum(i, i * 10);
            d.values.set_datum(i, 100 + i);
        }
        d.validity.set(2, false);
        s.push_batch(&[a, d], &[0, 2, 3]);
        s.push_datums(&[Some(7), None]);
        assert_eq!(s.len(), 4);
        assert_eq!(s.datum(0, 1), Some(20));
        assert_eq!(s.datum(1, 1), None);
        assert_eq!(s.datum(1, 3), None);
        s.retain_rows(&[3, 0]);
        assert_eq!(s.len(), 2);
        assert_eq!((s.datum(0, 0), s.datum(0, 1), s.datum(1, 1)), (Some(7), Some(0), Some(100)));
        // A batch column of another layout goes through Datums.
        let mut t = RowStore::new(&[PhysType::Datum]);
        t.push_batch(&[Column::splat(PhysType::I64, 2, Some(5))], &[1]);
        assert_eq!(t.datum(0, 0), Some(5));
    }
}

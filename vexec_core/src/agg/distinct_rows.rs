//! The distinct argument rows of a DISTINCT aggregate run through fmgr
//! (`string_agg(DISTINCT t, ',')`, `array_agg(DISTINCT x)`...), per group,
//! and the order PostgreSQL feeds them to the transition function in: it
//! sorts each group's argument rows (each argument ascending, NULLs last)
//! and skips a row equal to the one before it. Collected here in a group
//! table keyed by (group, arguments), then sorted once the input is read.
//!
//! Only argument kinds whose equal values are identical qualify (the host
//! checks it): which of two equal but different values PostgreSQL keeps
//! (1.0 or 1.00, -0 or 0) depends on its sort's order among equals. Numeric
//! qualifies only where the host knows every value has one display scale
//! (a `numeric(p, s)` argument); its values are kept as their bytes. So
//! does bpchar where every value is padded to one length (a `char(n)`
//! argument): equal under bpchareq, they are byte for byte the same.

use std::cmp::Ordering;

use super::groups::{GroupTable, KeyKind};
use crate::batch::{Column, PhysType, RowIdx};

/// How the host orders the values of a byte argument (text under a
/// collation other than C): `(a, b) -> a.cmp(b)` under it.
pub type ByteOrder<'a> = &'a dyn Fn(&[u8], &[u8]) -> Ordering;

pub struct DistinctRows {
    /// Keys: the group (an integer), then the arguments.
    table: GroupTable,
    nargs: usize,
    /// Per row inserted by the last call, its group as a column (reused).
    group_col: Column,
}

/// One argument value of a distinct row, as the table keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgValue<'a> {
    Null,
    Int(i64),
    Bytes(&'a [u8]),
}

impl DistinctRows {
    /// For arguments of kinds `Int`, `Bytes`, `Bpchar`, `Uuid` or `Numeric`.
    pub fn new(arg_kinds: &[KeyKind]) -> DistinctRows {
        assert!(arg_kinds.iter().all(|k| matches!(
            k,
            KeyKind::Int | KeyKind::Bytes | KeyKind::Bpchar | KeyKind::Uuid | KeyKind::Numeric
        )));
        let kinds: Vec<KeyKind> = std::iter::once(KeyKind::Int).chain(arg_kinds.iter().copied()).collect();
        DistinctRows {
            table: GroupTable::new(&kinds),
            nargs: arg_kinds.len(),
            group_col: Column::new(PhysType::I64, 0),
        }
    }

    /// Add rows `rows` of the argument columns `args`, of groups `groups`
    /// (one per row), each (group, arguments) once.
    ///
    /// # Safety
    /// As [`GroupTable::assign`] for the argument columns.
    pub unsafe fn insert(&mut self, groups: &[u32], rows: &[RowIdx], args: &[&Column]) {
        assert_eq!(args.len(), self.nargs);
        let len = args.first().map_or(0, |c| c.len());
        if self.group_col.len() < len {
            self.group_col = Column::new(PhysType::I64, len);
        }
        for (&g, &r) in groups.iter().zip(rows) {
            self.group_col.values.set_datum(r as usize, g as usize);
        }
        let cols: Vec<&Column> = std::iter::once(&self.group_col).chain(args.iter().copied()).collect();
        let mut out = Vec::with_capacity(rows.len());
        // SAFETY: this function's contract: the argument columns' by-reference values among rows
        // are plain varlenas.
        unsafe { self.table.assign(&cols, rows, &mut out) };
    }

    /// Number of distinct rows held.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub fn bytes_used(&self) -> usize {
        self.table.bytes_used() + self.group_col.len() * 9
    }

    /// Row `i`'s group.
    pub fn group(&self, i: u32) -> u32 {
        self.table.fixed_key(0, i as usize).expect("a group") as u32
    }

    /// Row `i`'s argument `k`.
    pub fn arg(&self, i: u32, k: usize) -> ArgValue<'_> {
        let c = k + 1;
        match self.table.kinds()[c] {
            KeyKind::Int => self.table.fixed_key(c, i as usize).map_or(ArgValue::Null, ArgValue::Int),
            _ => self.table.bytes_key(c, i as usize).map_or(ArgValue::Null, ArgValue::Bytes),
        }
    }

    /// The rows in the order PostgreSQL feeds them: by group, then by each
    /// argument in turn, ascending with NULLs last; `order[k]` orders the
    /// bytes of argument `k` when it is not bytewise.
    pub fn sorted(&self, order: &[Option<ByteOrder<'_>>]) -> Vec<u32> {
        let mut rows: Vec<u32> = (0..self.len() as u32).collect();
        rows.sort_by(|&a, &b| {
            self.group(a).cmp(&self.group(b)).then_with(|| {
                (0..self.nargs)
                    .map(|k| match (self.arg(a, k), self.arg(b, k)) {
                        (ArgValue::Null, ArgValue::Null) => Ordering::Equal,
                        (ArgValue::Null, _) => Ordering::Greater,
                        (_, ArgValue::Null) => Ordering::Less,
                        (ArgValue::Int(x), ArgValue::Int(y)) => x.cmp(&y),
                        (ArgValue::Bytes(x), ArgValue::Bytes(y)) => match order.get(k).copied().flatten() {
                            Some(cmp) => cmp(x, y),
                            None => x.cmp(y),
                        },
                        _ => unreachable!("an argument has one kind"),
                    })
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            })
        });
        rows
    }

    /// Drop every row (a new spilled partition, a rescan).
    pub fn clear(&mut self) {
        let kinds = self.table.kinds().to_vec();
        self.table = GroupTable::new(&kinds);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::varlena;

    #[test]
    fn keeps_each_row_once_per_group_and_sorts_as_postgresql_feeds() {
        // Two arguments: an integer (with NULLs) and a text.
        let texts = [varlena::make_1b(b"b"), varlena::make_1b(b"a"), varlena::make_4b(b"b")];
        let mut ints = Column::new(PhysType::I32, 6);
        let mut strs = Column::new(PhysType::Datum, 6);
        let vals = [Some(2), None, Some(2), Some(1), None, Some(2)];
        let which = [0, 1, 2, 0, 1, 1];
        for i in 0..6 {
            match vals[i] {
                Some(v) => ints.values.set_datum(i, v as usize),
                None => ints.validity.set(i, false),
            }
            strs.values.set_datum(i, texts[which[i]].as_ptr() as usize);
        }
        let mut d = DistinctRows::new(&[KeyKind::Int, KeyKind::Bytes]);
        // Rows 0 and 2 are equal ((2, 'b') in group 0: short and long
        // headers alike); row 5 is (2, 'a') in group 1.
        // SAFETY: strs points to the test's plain varlenas, which outlive the call.
        unsafe { d.insert(&[0, 0, 0, 0, 0, 1], &[0, 1, 2, 3, 4, 5], &[&ints, &strs]) };
        assert_eq!(d.len(), 4);
        let order = d.sorted(&[None, None]);
        let rows: Vec<(u32, ArgValue<'_>, ArgValue<'_>)> =
            order.iter().map(|&i| (d.group(i), d.arg(i, 0), d.arg(i, 1))).collect();
        assert_eq!(
            rows,
            vec![
                (0, ArgValue::Int(1), ArgValue::Bytes(b"b")),
                (0, ArgValue::Int(2), ArgValue::Bytes(b"b")),
                (0, ArgValue::Null, ArgValue::Bytes(b"a")),
                (1, ArgValue::Int(2), ArgValue::Bytes(b"a")),
            ]
        );
        // A host order for the bytes (reversed here) decides ties of the first argument.
        let reversed = |a: &[u8], b: &[u8]| b.cmp(a);
        let mut e = DistinctRows::new(&[KeyKind::Bytes]);
        // SAFETY: as above.
        unsafe { e.insert(&[0, 0, 0], &[0, 1, 2], &[&strs]) };
        let order = e.sorted(&[Some(&reversed)]);
        let firsts: Vec<ArgValue<'_>> = order.iter().map(|&i| e.arg(i, 0)).collect();
        assert_eq!(firsts, vec![ArgValue::Bytes(b"b"), ArgValue::Bytes(b"a")]);
        e.clear();
        assert!(e.is_empty());
    }

    #[test]
    fn keeps_numerics_of_one_scale_by_value_and_sorts_them_by_the_hosts_order() {
        use crate::numeric::{compare, encode, encode_special, Special};
        // SAFETY: each is a whole plain varlena.
        let payload = |v: &[u8]| unsafe { varlena::bytes(v.as_ptr()) }.to_vec();
        // numeric(8, 2) values: 12.50 twice (one copy with a 1-byte header,
        // as on disk), -3.00, NaN, 0.00, and a NULL.
        let twelve = encode(1250, 2);
        let values = [
            Some(varlena::make_1b(&payload(&twelve))),
            Some(encode(-300, 2)),
            None,
            Some(varlena::make_4b(&encode_special(Special::NaN))),
            Some(twelve.clone()),
            Some(encode(0, 2)),
        ];
        let mut col = Column::new(PhysType::Datum, values.len());
        for (i, v) in values.iter().enumerate() {
            match v {
                Some(v) => col.values.set_datum(i, v.as_ptr() as usize),
                None => col.validity.set(i, false),
            }
        }
        let mut d = DistinctRows::new(&[KeyKind::Numeric]);
        // SAFETY: col points to the test's numeric varlenas, which outlive the call.
        unsafe { d.insert(&[0; 6], &[0, 1, 2, 3, 4, 5], &[&col]) };
        assert_eq!(d.len(), 5, "12.50 once");
        let by_value = |a: &[u8], b: &[u8]| compare(a, b).unwrap();
        let order = d.sorted(&[Some(&by_value)]);
        let sorted: Vec<ArgValue<'_>> = order.iter().map(|&i| d.arg(i, 0)).collect();
        let expect = [encode(-300, 2), encode(0, 2), twelve, varlena::make_4b(&encode_special(Special::NaN))];
        let expect: Vec<Vec<u8>> = expect.iter().map(|v| payload(v)).collect();
        let mut want: Vec<ArgValue<'_>> = expect.iter().map(|v| ArgValue::Bytes(v)).collect();
        want.push(ArgValue::Null);
        assert_eq!(sorted, want);
    }
}

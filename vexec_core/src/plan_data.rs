//! What a vexec plan node tells its executor: typed, and converted to and
//! from the integers of the plan's `custom_private` in one place each.
//!
//! A plan's `custom_private` must survive copyObject and the plan's text
//! form (parallel workers read plans back), so it is a list of Integer
//! nodes; the planner writes one of these structs with `encode` and the
//! executor reads it with `decode`. The report id (for EXPLAIN (VEXEC)) is
//! always the first integer.

use crate::agg::{KeyKind, Transition};

/// A `custom_private` that does not decode: a bug, never user input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

/// Reads integers front to back.
struct Reader<'a>(&'a [i32]);

impl Reader<'_> {
    fn int(&mut self, what: &str) -> Result<i32, Malformed> {
        let (&v, rest) = self.0.split_first().ok_or_else(|| Malformed(format!("no {what}")))?;
        self.0 = rest;
        Ok(v)
    }

    fn count(&mut self, what: &str) -> Result<usize, Malformed> {
        usize::try_from(self.int(what)?).map_err(|_| Malformed(format!("negative {what}")))
    }

    fn column(&mut self, what: &str) -> Result<usize, Malformed> {
        self.count(what)
    }

    /// -1 for none.
    fn optional(&mut self, what: &str) -> Result<Option<usize>, Malformed> {
        match self.int(what)? {
            -1 => Ok(None),
            v => usize::try_from(v).map(Some).map_err(|_| Malformed(format!("bad {what} {v}"))),
        }
    }

    fn end(&self) -> Result<(), Malformed> {
        match self.0.is_empty() {
            true => Ok(()),
            false => Err(Malformed(format!("{} integers left over", self.0.len()))),
        }
    }
}

fn optional(v: Option<usize>) -> i32 {
    v.map_or(-1, |v| v as i32)
}

/// Which part of an aggregation a VecAgg node does. PostgreSQL's parallel
/// aggregation is Finalize Agg over Gather over Partial Agg; VecAgg's is
/// the same shape with its own partial states (`Accumulator::serialize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggSplit {
    /// The whole aggregation over a VecScan.
    Serial = 0,
    /// One participant's share: group keys and a bytea state per aggregate.
    Partial = 1,
    /// Combines the partial states read from a row child (Gather).
    Finalize = 2,
}

impl AggSplit {
    pub fn from_code(code: i32) -> Option<AggSplit> {
        match code {
            0 => Some(AggSplit::Serial),
            1 => Some(AggSplit::Partial),
            2 => Some(AggSplit::Finalize),
            _ => None,
        }
    }
}

/// One aggregate of a VecAgg plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggSpec {
    pub transition: Transition,
    /// The child column of its FILTER (a boolean), if any.
    pub filter: Option<usize>,
    /// The child columns of its arguments.
    pub args: Vec<usize>,
}

/// A VecAgg plan: `custom_scan_tlist` holds the keys (child columns 0..),
/// then the aggregates, in the order of `key_kinds` and `aggs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggPlanData {
    pub report_id: i32,
    pub split: AggSplit,
    pub key_kinds: Vec<KeyKind>,
    pub aggs: Vec<AggSpec>,
}

impl AggPlanData {
    /// [report id, split, number of keys, key kinds..., then per aggregate:
    /// transition, FILTER column (-1: none), number of arguments, argument
    /// columns...].
    pub fn encode(&self) -> Vec<i32> {
        let mut out = vec![self.report_id, self.split as i32, self.key_kinds.len() as i32];
        out.extend(self.key_kinds.iter().map(|k| k.code()));
        for a in &self.aggs {
            out.extend([a.transition.code(), optional(a.filter), a.args.len() as i32]);
            out.extend(a.args.iter().map(|&c| c as i32));
        }
        out
    }

    pub fn decode(ints: &[i32]) -> Result<AggPlanData, Malformed> {
        let mut r = Reader(ints);
        let report_id = r.int("report id")?;
        let split = r.int("split")?;
        let split = AggSplit::from_code(split).ok_or_else(|| Malformed(format!("unknown split {split}")))?;
        let nkeys = r.count("number of keys")?;
        let key_kinds = (0..nkeys)
            .map(|_| {
                let c = r.int("key kind")?;
                KeyKind::from_code(c).ok_or_else(|| Malformed(format!("unknown key kind {c}")))
            })
            .collect::<Result<_, _>>()?;
        let mut aggs = Vec::new();
        while !r.0.is_empty() {
            let code = r.int("transition")?;
            let transition =
                Transition::from_code(code).ok_or_else(|| Malformed(format!("unknown transition {code}")))?;
            let filter = r.optional("FILTER column")?;
            let nargs = r.count("number of arguments")?;
            let args = (0..nargs).map(|_| r.column("argument column")).collect::<Result<_, _>>()?;
            aggs.push(AggSpec { transition, filter, args });
        }
        Ok(AggPlanData { report_id, split, key_kinds, aggs })
    }
}

/// One hash key of a VecHashJoin plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinKeySpec {
    pub outer_col: usize,
    pub inner_col: usize,
    pub kind: KeyKind,
    /// The clause's input collation (an Oid).
    pub collation: u32,
}

/// A VecHashJoin plan: its scan tuple is the outer input's columns, then
/// the inner input's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinPlanData {
    pub report_id: i32,
    /// PostgreSQL's JoinType.
    pub jointype: i32,
    /// Columns of the outer input.
    pub nouter: usize,
    pub keys: Vec<JoinKeySpec>,
}

impl JoinPlanData {
    /// [report id, join type, outer columns, number of keys, then per key:
    /// outer column, inner column, key kind, collation].
    pub fn encode(&self) -> Vec<i32> {
        let mut out = vec![self.report_id, self.jointype, self.nouter as i32, self.keys.len() as i32];
        for k in &self.keys {
            out.extend([k.outer_col as i32, k.inner_col as i32, k.kind.code(), k.collation as i32]);
        }
        out
    }

    pub fn decode(ints: &[i32]) -> Result<JoinPlanData, Malformed> {
        let mut r = Reader(ints);
        let report_id = r.int("report id")?;
        let jointype = r.int("join type")?;
        let nouter = r.count("outer columns")?;
        let nkeys = r.count("number of keys")?;
        let keys = (0..nkeys)
            .map(|_| {
                let outer_col = r.column("outer column")?;
                let inner_col = r.column("inner column")?;
                let c = r.int("key kind")?;
                let kind = KeyKind::from_code(c).ok_or_else(|| Malformed(format!("unknown key kind {c}")))?;
                let collation = r.int("collation")? as u32;
                Ok(JoinKeySpec { outer_col, inner_col, kind, collation })
            })
            .collect::<Result<_, Malformed>>()?;
        r.end()?;
        Ok(JoinPlanData { report_id, jointype, nouter, keys })
    }
}

/// One ORDER BY item of a VecSort plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortKeySpec {
    /// The child column.
    pub col: usize,
    /// The sort operator and collation (Oids).
    pub sortop: u32,
    pub collation: u32,
    pub nulls_first: bool,
}

/// A VecSort plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortPlanData {
    pub report_id: i32,
    /// Rows a top-N sort keeps (LIMIT + OFFSET), None for a full sort.
    pub bound: Option<usize>,
    pub keys: Vec<SortKeySpec>,
}

impl SortPlanData {
    /// [report id, bound (-1: none), number of keys, then per key: child
    /// column, sort operator, collation, NULLS FIRST (0/1)].
    pub fn encode(&self) -> Vec<i32> {
        let mut out = vec![self.report_id, optional(self.bound), self.keys.len() as i32];
        for k in &self.keys {
            out.extend([k.col as i32, k.sortop as i32, k.collation as i32, k.nulls_first as i32]);
        }
        out
    }

    pub fn decode(ints: &[i32]) -> Result<SortPlanData, Malformed> {
        let mut r = Reader(ints);
        let report_id = r.int("report id")?;
        let bound = r.optional("bound")?;
        let n = r.count("number of keys")?;
        let keys = (0..n)
            .map(|_| {
                Ok(SortKeySpec {
                    col: r.column("key column")?,
                    sortop: r.int("sort operator")? as u32,
                    collation: r.int("collation")? as u32,
                    nulls_first: r.int("NULLS FIRST")? != 0,
                })
            })
            .collect::<Result<_, Malformed>>()?;
        r.end()?;
        Ok(SortPlanData { report_id, bound, keys })
    }
}

/// A VecInsert plan. (Its result relation is the plan's `custom_relids`,
/// which PostgreSQL renumbers when it flattens range tables.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertPlanData {
    pub report_id: i32,
    /// The statement's row count is the command tag's (ModifyTable's canSetTag).
    pub sets_tag: bool,
}

impl InsertPlanData {
    /// [report id, sets tag (0/1)].
    pub fn encode(&self) -> Vec<i32> {
        vec![self.report_id, self.sets_tag as i32]
    }

    pub fn decode(ints: &[i32]) -> Result<InsertPlanData, Malformed> {
        let mut r = Reader(ints);
        let report_id = r.int("report id")?;
        let sets_tag = r.int("sets tag")? != 0;
        r.end()?;
        Ok(InsertPlanData { report_id, sets_tag })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agg::MomentsFinal;

    #[test]
    fn agg_plans_round_trip() {
        for split in [AggSplit::Serial, AggSplit::Partial, AggSplit::Finalize] {
            let p = AggPlanData {
                report_id: 7,
                split,
                key_kinds: vec![KeyKind::Int, KeyKind::Bytes, KeyKind::Float8],
                aggs: vec![
                    AggSpec { transition: Transition::CountRows, filter: None, args: vec![] },
                    AggSpec { transition: Transition::SumNumeric, filter: Some(4), args: vec![3] },
                    AggSpec {
                        transition: Transition::Moments { fin: MomentsFinal::StddevSamp },
                        filter: None,
                        args: vec![5],
                    },
                ],
            };
            assert_eq!(AggPlanData::decode(&p.encode()), Ok(p));
        }
        let plain = AggPlanData { report_id: 0, split: AggSplit::Serial, key_kinds: vec![], aggs: vec![] };
        assert_eq!(AggPlanData::decode(&plain.encode()), Ok(plain));
    }

    #[test]
    fn join_and_sort_plans_round_trip() {
        let j = JoinPlanData {
            report_id: 3,
            jointype: 5,
            nouter: 4,
            keys: vec![
                JoinKeySpec { outer_col: 0, inner_col: 2, kind: KeyKind::Int, collation: 0 },
                JoinKeySpec { outer_col: 3, inner_col: 1, kind: KeyKind::Bytes, collation: 100 },
            ],
        };
        assert_eq!(JoinPlanData::decode(&j.encode()), Ok(j));
        let s = SortPlanData {
            report_id: 9,
            bound: Some(10),
            keys: vec![
                SortKeySpec { col: 1, sortop: 97, collation: 0, nulls_first: false },
                SortKeySpec { col: 0, sortop: 664, collation: 950, nulls_first: true },
            ],
        };
        assert_eq!(SortPlanData::decode(&s.encode()), Ok(s));
        let full = SortPlanData { report_id: 1, bound: None, keys: vec![] };
        assert_eq!(SortPlanData::decode(&full.encode()), Ok(full));
    }

    #[test]
    fn malformed_lists_are_errors_not_panics() {
        assert!(AggPlanData::decode(&[]).is_err());
        assert!(AggPlanData::decode(&[1, 9, 0]).is_err(), "unknown split");
        assert!(AggPlanData::decode(&[1, 0, 2, 0]).is_err(), "a key kind missing");
        assert!(AggPlanData::decode(&[1, 0, 0, 0, -1, 2, 5]).is_err(), "an argument missing");
        assert!(JoinPlanData::decode(&[1, 0, 2, 1, 0, 0, 0]).is_err(), "a key cut short");
        assert!(JoinPlanData::decode(&[1, 0, 2, 0, 99]).is_err(), "left over");
        assert!(SortPlanData::decode(&[1, -2, 0]).is_err(), "bad bound");
    }

    #[test]
    fn insert_plans_round_trip() {
        for sets_tag in [false, true] {
            let p = InsertPlanData { report_id: 3, sets_tag };
            assert_eq!(InsertPlanData::decode(&p.encode()), Ok(p));
        }
        assert!(InsertPlanData::decode(&[3]).is_err());
        assert!(InsertPlanData::decode(&[3, 1, 9]).is_err());
    }
}

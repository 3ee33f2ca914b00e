//! Vectorized transitions: one state array per aggregate, indexed by group.
//!
//! Each transition reproduces the PostgreSQL transition function it replaces,
//! including its quirks, so results are PostgreSQL's bit for bit:
//! - `sum(int2/int4)` and `avg(int2/int4)` keep an int8 sum that wraps
//!   (`int4_sum`, `int4_avg_accum`: C addition on int64 with -fwrapv);
//! - `sum(int8)` and `avg(int8)` keep an int128 sum (`int8_avg_accum`);
//! - `sum(float4/float8)` starts from the first non-NULL value and adds in
//!   row order with `float4_pl`/`float8_pl`'s overflow check;
//! - `avg`, `var_*`, `stddev_*` over floats follow `float8_accum`
//!   (Youngs-Cramer) in row order;
//! - `sum`/`avg` over numeric keep an exact scaled `i128` sum at the largest
//!   display scale met (as `add_var`), the values too wide for it aside (the
//!   host adds them with numeric_add: exact addition does not depend on
//!   order), and counts of NaN and infinities (`do_numeric_accum`);
//! - `min`/`max` keep the *later* of two equal values (`float8smaller` and
//!   friends return their second argument unless the first is strictly
//!   smaller/larger), which matters for -0 and 0.
//!
//! Rows are fed in batch order, so the per-group order is the input order, as
//! in PostgreSQL's own Agg node.

use crate::batch::{varlena, Column, RowIdx, Values};
use crate::numeric::{self, Decoded, Special};

use super::groups::{GroupTable, KeyKind};

#[macro_use]
mod float;
mod numeric_sums;
mod partial;
mod transition;

use float::*;
use numeric_sums::*;
pub use transition::{MomentsFinal, Transition};

/// A transition PostgreSQL would end with an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggError {
    /// `value out of range: overflow` (22003) from float addition, at a batch row.
    FloatOverflow { row: RowIdx },
    /// A numeric argument whose bytes are not a numeric (damaged data).
    InvalidNumeric { row: RowIdx },
    /// A partial state (from a Partial VecAgg) that does not read back.
    InvalidState { row: RowIdx },
}

/// An aggregate's result for one group, for the host to turn into a Datum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AggResult<'a> {
    Null,
    Int(i64),
    /// A numeric result with this integral value.
    Numeric(i128),
    /// numeric `sum / count` (count > 0).
    NumericAvg {
        sum: i128,
        count: i64,
    },
    /// numeric sum (or, with `avg`, `sum / count`) of finite values:
    /// `value / 10^dscale` plus every payload of `wide`.
    NumericSum {
        value: i128,
        dscale: u16,
        wide: &'a [Box<[u8]>],
        count: i64,
        avg: bool,
    },
    NumericSpecial(Special),
    Float4(f32),
    Float8(f64),
    Bytes(&'a [u8]),
}

#[derive(Debug)]
enum State {
    Counts(Vec<i64>),
    Distinct {
        counts: Vec<i64>,
        seen: Box<GroupTable>,
    },
    /// count(DISTINCT) of integer-like values: the (group, value) pairs seen.
    DistinctInts {
        counts: Vec<i64>,
        seen: hashbrown::HashSet<(u32, i64), foldhash::fast::FixedState>,
    },
    IntSum {
        sums: Vec<i64>,
        counts: Vec<i64>,
    },
    /// sum/avg(DISTINCT) of integers: the (group, value) pairs seen, and
    /// per group the sum and count of its distinct values.
    DistinctSum {
        seen: hashbrown::HashSet<(u32, i64), foldhash::fast::FixedState>,
        sums: Vec<i128>,
        counts: Vec<i64>,
    },
    WideSum {
        sums: Vec<i128>,
        counts: Vec<i64>,
    },
    F32Sum {
        sums: Vec<f32>,
        seen: Vec<bool>,
    },
    F64Sum {
        sums: Vec<f64>,
        seen: Vec<bool>,
    },
    Moments {
        n: Vec<f64>,
        sx: Vec<f64>,
        sxx: Vec<f64>,
    },
    IntExtreme {
        values: Vec<i64>,
        seen: Vec<bool>,
    },
    FloatExtreme {
        values: Vec<f64>,
        seen: Vec<bool>,
    },
    /// Text or numeric extremes; `bytes` is the total length held (kept as
    /// values change, so the memory check does not walk every group).
    BytesExtreme {
        values: Vec<Option<Box<[u8]>>>,
        bytes: usize,
    },
    NumericSum(NumericSums),
}

/// The states of one aggregate over all groups.
#[derive(Debug)]
pub struct Accumulator {
    transition: Transition,
    state: State,
    /// For numeric sum/avg: the scale of an argument that arrives as scaled
    /// integers (I64 columns) rather than numeric Datums.
    arg_scale: Option<u16>,
    /// For text min/max: the collation's order (bytewise when None, which
    /// is the C collation's).
    order: Option<TextOrder>,
}

/// A collation's order of two strings, as `text_cmp` gives it (the host
/// calls PostgreSQL's `varstr_cmp`).
pub struct TextOrder(pub Box<dyn FnMut(&[u8], &[u8]) -> std::cmp::Ordering>);

impl std::fmt::Debug for TextOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TextOrder")
    }
}

impl Accumulator {
    pub fn new(transition: Transition) -> Accumulator {
        let state = match transition {
            // (Fmgr aggregates keep their states on the host; an empty count stands in.)
            Transition::CountRows | Transition::CountValues | Transition::Fmgr { .. } => {
                State::Counts(vec![])
            }
            Transition::CountDistinct(KeyKind::Int) => State::DistinctInts {
                counts: vec![],
                seen: hashbrown::HashSet::with_hasher(foldhash::fast::FixedState::with_seed(0x6469_7374)),
            },
            Transition::CountDistinct(kind) => {
                // (A Collated argument comes as its sort keys.)
                State::Distinct {
                    counts: vec![],
                    seen: Box::new(GroupTable::new(&[KeyKind::Int, kind.compared()])),
                }
            }
            Transition::SumInt => State::IntSum { sums: vec![], counts: vec![] },
            Transition::SumDistinctInt | Transition::SumDistinctBigInt | Transition::AvgDistinctInt => {
                State::DistinctSum {
                    seen: hashbrown::HashSet::with_hasher(foldhash::fast::FixedState::with_seed(0x6469_7374)),
                    sums: vec![],
                    counts: vec![],
                }
            }
            Transition::SumBigInt | Transition::AvgInt => State::WideSum { sums: vec![], counts: vec![] },
            Transition::SumFloat4 => State::F32Sum { sums: vec![], seen: vec![] },
            Transition::SumFloat8 => State::F64Sum { sums: vec![], seen: vec![] },
            Transition::Moments { .. } => State::Moments { n: vec![], sx: vec![], sxx: vec![] },
            Transition::MinMaxInt { .. } => State::IntExtreme { values: vec![], seen: vec![] },
            Transition::MinMaxFloat { .. } => State::FloatExtreme { values: vec![], seen: vec![] },
            Transition::MinMaxBytes { .. } | Transition::MinMaxNumeric { .. } => {
                State::BytesExtreme { values: vec![], bytes: 0 }
            }
            Transition::SumNumeric | Transition::AvgNumeric => State::NumericSum(NumericSums::default()),
        };
        Accumulator { transition, state, arg_scale: None, order: None }
    }

    /// Text min/max: compare with this collation order instead of bytewise.
    pub fn set_text_order(&mut self, order: TextOrder) {
        self.order = Some(order);
    }

    /// Numeric sum/avg: I64 argument columns hold values scaled by `10^scale`.
    pub fn set_arg_scale(&mut self, scale: u16) {
        self.arg_scale = Some(scale);
    }

    pub fn transition(&self) -> Transition {
        self.transition
    }

    /// Make room for groups `0..n` (new groups start empty).
    pub fn ensure_groups(&mut self, n: usize) {
        self.ensure_groups_in(n, 0);
    }

    /// As [`Accumulator::ensure_groups`], but a vector that must grow grows
    /// to exactly `room` groups (when `room >= n`) instead of doubling: the
    /// caller sizes `room` to keep its memory within a budget.
    pub fn ensure_groups_in(&mut self, n: usize, room: usize) {
        fn grow<T: Clone>(v: &mut Vec<T>, n: usize, room: usize, fill: T) {
            if n > v.capacity() && room >= n {
                v.reserve_exact(room - v.len());
            }
            v.resize(n, fill);
        }
        match &mut self.state {
            State::Counts(c) | State::Distinct { counts: c, .. } | State::DistinctInts { counts: c, .. } => {
                grow(c, n, room, 0)
            }
            State::IntSum { sums, counts } => {
                grow(sums, n, room, 0);
                grow(counts, n, room, 0);
            }
            State::WideSum { sums, counts } | State::DistinctSum { sums, counts, .. } => {
                grow(sums, n, room, 0);
                grow(counts, n, room, 0);
            }
            State::F32Sum { sums, seen } => {
                grow(sums, n, room, 0.0);
                grow(seen, n, room, false);
            }
            State::F64Sum { sums, seen } => {
                grow(sums, n, room, 0.0);
                grow(seen, n, room, false);
            }
            State::Moments { n: cnt, sx, sxx } => {
                grow(cnt, n, room, 0.0);
                grow(sx, n, room, 0.0);
                grow(sxx, n, room, 0.0);
            }
            State::IntExtreme { values, seen } => {
                grow(values, n, room, 0);
                grow(seen, n, room, false);
            }
            State::FloatExtreme { values, seen } => {
                grow(values, n, room, 0.0);
                grow(seen, n, room, false);
            }
            State::BytesExtreme { values, .. } => grow(values, n, room, None),
            State::NumericSum(s) => {
                grow(&mut s.sums, n, room, 0);
                grow(&mut s.scales, n, room, 0);
                grow(&mut s.counts, n, room, 0);
            }
        }
    }

    /// Feed the batch rows `rows`, row `rows[i]` into group `groups[i]`, in
    /// order. `arg` is the aggregate's argument column (None for count(*)).
    /// Groups must exist ([`Accumulator::ensure_groups`]).
    ///
    /// # Safety
    /// For byte transitions the argument's valid values point to plain varlenas.
    pub unsafe fn update(
        &mut self,
        groups: &[u32],
        rows: &[RowIdx],
        arg: Option<&Column>,
    ) -> Result<(), AggError> {
        debug_assert_eq!(groups.len(), rows.len());
        let pairs = groups.iter().map(|&g| g as usize).zip(rows.iter().map(|&r| r as usize));
        if let State::Counts(counts) = &mut self.state {
            if self.transition == Transition::CountRows {
                pairs.for_each(|(g, _)| counts[g] += 1);
                return Ok(());
            }
        }
        let col = arg.expect("the aggregate has an argument");
        if let Some(&g) = groups.first() {
            if groups.iter().all(|&x| x == g) && self.update_one_group(g as usize, rows, col) {
                return Ok(());
            }
        }
        let live = pairs.filter(|&(_, r)| col.is_valid(r));
        match (&mut self.state, self.transition) {
            (State::Counts(counts), _) => live.for_each(|(g, _)| counts[g] += 1),
            (State::Distinct { counts, seen }, _) => {
                // New (group, value) pairs are the distinct values of a group.
                let (gs, rs): (Vec<u32>, Vec<RowIdx>) = live.map(|(g, r)| (g as u32, r as RowIdx)).unzip();
                let mut group_col = Column::new(crate::batch::PhysType::I64, col.len());
                if let Values::I64(v) = &mut group_col.values {
                    for (&g, &r) in gs.iter().zip(&rs) {
                        v[r as usize] = g as i64;
                    }
                }
                let before = seen.len();
                let mut ids = Vec::with_capacity(rs.len());
                unsafe { seen.assign(&[&group_col, col], &rs, &mut ids) };
                // Ids at or past `before` that are first met here are new pairs.
                let mut next = before as u32;
                for (&id, &g) in ids.iter().zip(&gs) {
                    if id == next {
                        counts[g as usize] += 1;
                        next += 1;
                    }
                }
            }
            (State::DistinctInts { counts, seen }, _) => {
                for_ints!(&col.values, live, |g, _r, x| {
                    counts[g] += seen.insert((g as u32, x)) as i64;
                })
            }
            (State::DistinctSum { seen, sums, counts }, _) => {
                for_ints!(&col.values, live, |g, _r, x| {
                    if seen.insert((g as u32, x)) {
                        sums[g] += x as i128;
                        counts[g] += 1;
                    }
                })
            }
            (State::IntSum { sums, counts }, _) => {
                for_ints!(&col.values, live, |g, _r, x| {
                    sums[g] = sums[g].wrapping_add(x);
                    counts[g] += 1;
                })
            }
            (State::WideSum { sums, counts }, _) => {
                for_ints!(&col.values, live, |g, _r, x| {
                    sums[g] += x as i128;
                    counts[g] += 1;
                })
            }
            (State::F32Sum { sums, seen }, _) => {
                let Values::F32(v) = &col.values else { panic!("sum(float4) over a non-float4 column") };
                for (g, r) in live {
                    if seen[g] {
                        sums[g] =
                            float4_pl(sums[g], v[r]).ok_or(AggError::FloatOverflow { row: r as RowIdx })?;
                    } else {
                        sums[g] = v[r];
                        seen[g] = true;
                    }
                }
            }
            (State::F64Sum { sums, seen }, _) => {
                let Values::F64(v) = &col.values else { panic!("sum(float8) over a non-float8 column") };
                for (g, r) in live {
                    if seen[g] {
                        sums[g] =
                            float8_pl(sums[g], v[r]).ok_or(AggError::FloatOverflow { row: r as RowIdx })?;
                    } else {
                        sums[g] = v[r];
                        seen[g] = true;
                    }
                }
            }
            (State::Moments { n, sx, sxx }, _) => {
                for (g, r) in live {
                    let x = float_value(&col.values, r);
                    // float8_accum, step by step.
                    let n0 = n[g];
                    let sx0 = sx[g];
                    let nn = n0 + 1.0;
                    let s = sx0 + x;
                    let mut q = sxx[g];
                    if n0 > 0.0 {
                        let tmp = x * nn - s;
                        q += tmp * tmp / (nn * n0);
                        if s.is_infinite() || q.is_infinite() {
                            if !sx0.is_infinite() && !x.is_infinite() {
                                return Err(AggError::FloatOverflow { row: r as RowIdx });
                            }
                            q = f64::NAN;
                        }
                    } else if x.is_nan() || x.is_infinite() {
                        q = f64::NAN;
                    }
                    n[g] = nn;
                    sx[g] = s;
                    sxx[g] = q;
                }
            }
            (State::IntExtreme { values, seen }, Transition::MinMaxInt { max }) => {
                for_ints!(&col.values, live, |g, _r, x| {
                    if !seen[g] || (if max { x > values[g] } else { x < values[g] }) {
                        values[g] = x;
                        seen[g] = true;
                    }
                })
            }
            (State::FloatExtreme { values, seen }, Transition::MinMaxFloat { max }) => {
                for (g, r) in live {
                    let x = float_value(&col.values, r);
                    // smaller(state, x) keeps the state only when strictly smaller.
                    let keep = seen[g] && if max { float_lt(x, values[g]) } else { float_lt(values[g], x) };
                    if !keep {
                        values[g] = x;
                        seen[g] = true;
                    }
                }
            }
            (State::BytesExtreme { values, bytes }, Transition::MinMaxBytes { max }) => {
                let Values::Datum(v) = &col.values else { panic!("text min/max over a by-value column") };
                for (g, r) in live {
                    let x = unsafe { varlena::bytes(v[r] as *const u8) };
                    // text_larger keeps the state only when it is greater,
                    // text_smaller only when it is smaller.
                    let replace = match &values[g] {
                        None => true,
                        Some(cur) => {
                            let o = match &mut self.order {
                                None => (**cur).cmp(x),
                                Some(order) => (order.0)(cur, x),
                            };
                            if max {
                                o.is_le()
                            } else {
                                o.is_ge()
                            }
                        }
                    };
                    // The same bytes need no copy (strings that a
                    // nondeterministic collation orders equal are copied).
                    if replace && values[g].as_deref() != Some(x) {
                        *bytes += x.len();
                        *bytes -= values[g].replace(x.into()).map_or(0, |old| old.len());
                    }
                }
            }
            (State::BytesExtreme { values, bytes }, Transition::MinMaxNumeric { max }) => {
                let Values::Datum(v) = &col.values else { panic!("numeric min/max over a by-value column") };
                for (g, r) in live {
                    let x = unsafe { varlena::bytes(v[r] as *const u8) };
                    // numeric_smaller keeps the state only when strictly smaller.
                    let keep = match &values[g] {
                        None if !numeric::is_numeric(x) => {
                            return Err(AggError::InvalidNumeric { row: r as RowIdx });
                        }
                        None => false,
                        Some(cur) => {
                            let o = numeric::compare(cur, x)
                                .ok_or(AggError::InvalidNumeric { row: r as RowIdx })?;
                            if max {
                                o.is_gt()
                            } else {
                                o.is_lt()
                            }
                        }
                    };
                    if !keep {
                        *bytes += x.len();
                        *bytes -= values[g].replace(x.into()).map_or(0, |old| old.len());
                    }
                }
            }
            (State::NumericSum(sums), _) => match &col.values {
                Values::Datum(v) => {
                    for (g, r) in live {
                        if !sums.add(g, unsafe { varlena::bytes(v[r] as *const u8) }) {
                            return Err(AggError::InvalidNumeric { row: r as RowIdx });
                        }
                    }
                }
                // numeric(p, s) values the child computed as scaled integers.
                Values::I64(v) => {
                    let scale = self.arg_scale.expect("the scale of a scaled numeric argument");
                    for (g, r) in live {
                        sums.add_scaled(g, v[r] as i128, scale);
                    }
                }
                // numeric(19..38, s): scaled integers of 128 bits.
                Values::I128(v) => {
                    let scale = self.arg_scale.expect("the scale of a scaled numeric argument");
                    for (g, r) in live {
                        sums.add_scaled(g, v[r], scale);
                    }
                }
                other => panic!("numeric sum over a {:?} column", other.phys_type()),
            },
            (_, t) => unreachable!("state does not match transition {t:?}"),
        }
        Ok(())
    }

    /// Every row into group `g` (plain aggregation, or a batch of one
    /// group): integer counts and sums as one pass over the values, which
    /// the compiler vectorizes (integer addition is associative, so the
    /// result is the row-by-row one). False when the state has no such path.
    fn update_one_group(&mut self, g: usize, rows: &[RowIdx], col: &Column) -> bool {
        // (sum of the valid values, how many)
        fn sum<T: Copy + Into<i64>>(v: &[T], rows: &[RowIdx], col: &Column) -> (i128, i64) {
            // Selections are ascending: first 0 and last n - 1 is all of 0..n.
            let contiguous = rows.len() <= v.len()
                && rows.first() == Some(&0)
                && rows.last().map(|&r| r as usize + 1) == Some(rows.len());
            if contiguous && col.validity.all_set() {
                // Chunks of i64 sums cannot overflow: 2^31 * 1024 < 2^63.
                let s: i128 = v[..rows.len()]
                    .chunks(1024)
                    .map(|c| c.iter().map(|&x| x.into()).sum::<i64>() as i128)
                    .sum();
                return (s, rows.len() as i64);
            }
            let (mut s, mut n) = (0i128, 0i64);
            for &r in rows {
                let r = r as usize;
                if col.is_valid(r) {
                    s += v[r].into() as i128;
                    n += 1;
                }
            }
            (s, n)
        }
        let (total, n) = match (&self.state, &col.values) {
            (State::Counts(_), _) => (0, rows.iter().filter(|&&r| col.is_valid(r as usize)).count() as i64),
            (State::IntSum { .. } | State::WideSum { .. }, Values::I16(v)) => sum(v, rows, col),
            (State::IntSum { .. } | State::WideSum { .. }, Values::I32(v)) => sum(v, rows, col),
            (State::WideSum { .. }, Values::I64(v)) => {
                let (mut s, mut n) = (0i128, 0i64);
                for &r in rows {
                    let r = r as usize;
                    if col.is_valid(r) {
                        s += v[r] as i128;
                        n += 1;
                    }
                }
                (s, n)
            }
            _ => return false,
        };
        match &mut self.state {
            State::Counts(c) => c[g] += n,
            // int2/int4 sums wrap in int8 as PostgreSQL's int4_sum does.
            State::IntSum { sums, counts } => {
                sums[g] = sums[g].wrapping_add(total as i64);
                counts[g] += n;
            }
            State::WideSum { sums, counts } => {
                sums[g] += total;
                counts[g] += n;
            }
            _ => unreachable!("matched above"),
        }
        true
    }

    /// The result for group `g`.
    pub fn result(&self, g: usize) -> AggResult<'_> {
        self.result_as(g, self.transition)
    }

    /// The result for group `g` of transition `t`, which shares this
    /// accumulator's state ([`Transition::shares_state`]).
    pub fn result_as(&self, g: usize, t: Transition) -> AggResult<'_> {
        debug_assert!(t == self.transition || t.shares_state(self.transition));
        match (&self.state, t) {
            (State::Counts(c), _)
            | (State::Distinct { counts: c, .. }, _)
            | (State::DistinctInts { counts: c, .. }, _) => AggResult::Int(c[g]),
            (State::IntSum { sums, counts }, _) => {
                if counts[g] == 0 {
                    AggResult::Null
                } else {
                    AggResult::Int(sums[g])
                }
            }
            (State::DistinctSum { sums, counts, .. }, t) => match (counts[g], t) {
                (0, _) => AggResult::Null,
                // (int8 wrapping, as SumInt)
                (_, Transition::SumDistinctInt) => AggResult::Int(sums[g] as i64),
                (_, Transition::AvgDistinctInt) => AggResult::NumericAvg { sum: sums[g], count: counts[g] },
                _ => AggResult::Numeric(sums[g]),
            },
            (State::WideSum { sums, counts }, t) => match (counts[g], t) {
                (0, _) => AggResult::Null,
                (_, Transition::AvgInt) => AggResult::NumericAvg { sum: sums[g], count: counts[g] },
                _ => AggResult::Numeric(sums[g]),
            },
            (State::F32Sum { sums, seen }, _) => {
                if seen[g] {
                    AggResult::Float4(sums[g])
                } else {
                    AggResult::Null
                }
            }
            (State::F64Sum { sums, seen }, _) => {
                if seen[g] {
                    AggResult::Float8(sums[g])
                } else {
                    AggResult::Null
                }
            }
            (State::Moments { n, sx, sxx }, Transition::Moments { fin }) => {
                let (n, sx, sxx) = (n[g], sx[g], sxx[g]);
                let v = match fin {
                    MomentsFinal::Avg if n > 0.0 => Some(sx / n),
                    MomentsFinal::VarPop if n > 0.0 => Some(sxx / n),
                    MomentsFinal::StddevPop if n > 0.0 => Some((sxx / n).sqrt()),
                    MomentsFinal::VarSamp if n > 1.0 => Some(sxx / (n - 1.0)),
                    MomentsFinal::StddevSamp if n > 1.0 => Some((sxx / (n - 1.0)).sqrt()),
                    _ => None,
                };
                v.map_or(AggResult::Null, AggResult::Float8)
            }
            (State::IntExtreme { values, seen }, _) => {
                if seen[g] {
                    AggResult::Int(values[g])
                } else {
                    AggResult::Null
                }
            }
            (State::FloatExtreme { values, seen }, _) => {
                if seen[g] {
                    AggResult::Float8(values[g])
                } else {
                    AggResult::Null
                }
            }
            (State::BytesExtreme { values, .. }, _) => {
                values[g].as_deref().map_or(AggResult::Null, AggResult::Bytes)
            }
            (State::NumericSum(sums), t) => sums.result(g, t == Transition::AvgNumeric),
            (_, t) => unreachable!("state does not match transition {t:?}"),
        }
    }

    /// Approximate memory held, for the `hash_mem` budget.
    pub fn bytes_used(&self) -> usize {
        match &self.state {
            State::Counts(c) => c.capacity() * 8,
            State::Distinct { counts, seen } => counts.capacity() * 8 + seen.bytes_used(),
            // 16-byte entries and a control byte each.
            State::DistinctInts { counts, seen } => counts.capacity() * 8 + seen.capacity() * 17,
            State::DistinctSum { seen, sums, counts } => {
                seen.capacity() * 17 + sums.capacity() * 16 + counts.capacity() * 8
            }
            State::IntSum { sums, counts } => (sums.capacity() + counts.capacity()) * 8,
            State::WideSum { sums, counts } => sums.capacity() * 16 + counts.capacity() * 8,
            State::F32Sum { sums, seen } => sums.capacity() * 4 + seen.capacity(),
            State::F64Sum { sums, seen } => sums.capacity() * 8 + seen.capacity(),
            State::Moments { n, sx, sxx } => (n.capacity() + sx.capacity() + sxx.capacity()) * 8,
            State::IntExtreme { values, seen } => values.capacity() * 8 + seen.capacity(),
            State::FloatExtreme { values, seen } => values.capacity() * 8 + seen.capacity(),
            State::BytesExtreme { values, bytes } => values.capacity() * 16 + bytes,
            State::NumericSum(s) => {
                s.sums.capacity() * 16
                    + s.scales.capacity() * 2
                    + s.counts.capacity() * 8
                    + s.specials.capacity() * 24
                    + s.wide.values().flatten().map(|b| b.len() + 48).sum::<usize>()
            }
        }
    }
}

#[cfg(test)]
mod tests;

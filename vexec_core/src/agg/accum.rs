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

/// Which float statistic the moments state ends in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MomentsFinal {
    Avg,
    VarPop,
    VarSamp,
    StddevPop,
    StddevSamp,
}

/// The vectorized aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// count(*).
    CountRows,
    /// count(x): non-NULL inputs.
    CountValues,
    /// count(DISTINCT x) over a hashable key kind.
    CountDistinct(KeyKind),
    /// sum(DISTINCT x) over int2/int4: int8 result, wrapping (SumInt over
    /// the distinct values of each group; a sum does not depend on the
    /// order PostgreSQL's sort feeds them in).
    SumDistinctInt,
    /// sum(DISTINCT x) over int8: numeric result.
    SumDistinctBigInt,
    /// avg(DISTINCT x) over int2/int4/int8: numeric result.
    AvgDistinctInt,
    /// sum over int2/int4: int8 result, wrapping.
    SumInt,
    /// sum over int8: numeric result from an int128 sum.
    SumBigInt,
    /// avg over int2/int4/int8: numeric result (the host divides).
    AvgInt,
    /// sum over numeric.
    SumNumeric,
    /// avg over numeric (the host divides).
    AvgNumeric,
    SumFloat4,
    SumFloat8,
    /// avg/var/stddev over float4 (`float4 = true`) or float8.
    Moments {
        fin: MomentsFinal,
    },
    /// min (`max = false`) or max over a by-value column in native order
    /// (integers, dates, timestamps, bool for bool_and/bool_or/every).
    MinMaxInt {
        max: bool,
    },
    /// min/max over float4/float8 in PostgreSQL's order (NaN above all).
    MinMaxFloat {
        max: bool,
    },
    /// min/max over text/varchar under the C collation (bytewise).
    MinMaxBytes {
        max: bool,
    },
    /// min/max over numeric (`numeric_smaller`/`numeric_larger`).
    MinMaxNumeric {
        max: bool,
    },
    /// Any other aggregate: its own transition and final functions, called
    /// by the host through fmgr (no [`Accumulator`] state). `raises`: the
    /// transition function may raise an error.
    Fmgr {
        raises: bool,
    },
}

impl Transition {
    /// Whether the transition can end the query with an error (float overflow).
    pub fn can_raise(self) -> bool {
        matches!(
            self,
            Transition::SumFloat4
                | Transition::SumFloat8
                | Transition::Moments { .. }
                | Transition::Fmgr { raises: true }
        )
    }

    /// Whether an aggregate of transition `other` over the same argument
    /// (and FILTER) can read its result from this one's state, as
    /// PostgreSQL shares one transition state between sum and avg of a
    /// numeric or int8, and between avg, variance and stddev of a float.
    pub fn shares_state(self, other: Transition) -> bool {
        use Transition::*;
        let class = |t: Transition| match t {
            SumNumeric | AvgNumeric => Some(0),
            SumBigInt | AvgInt => Some(1),
            Moments { .. } => Some(2),
            CountDistinct(_) | SumDistinctInt | SumDistinctBigInt | AvgDistinctInt | Fmgr { .. } => None,
            _ => Some(3),
        };
        match (class(self), class(other)) {
            (Some(a), Some(b)) => self == other || (a < 3 && a == b),
            _ => false,
        }
    }

    /// Whether partial states of this vector transition combine
    /// (count(DISTINCT) would need the values themselves, not a count per
    /// partial group). An aggregate run through fmgr combines when its own
    /// combine function does, which the planner looks up.
    pub fn combines(self) -> bool {
        !matches!(
            self,
            Transition::CountDistinct(_)
                | Transition::SumDistinctInt
                | Transition::SumDistinctBigInt
                | Transition::AvgDistinctInt
                | Transition::Fmgr { .. }
        )
    }

    /// A stable integer for plan nodes (which hold lists of integers).
    pub fn code(self) -> i32 {
        let fin = |f: MomentsFinal| match f {
            MomentsFinal::Avg => 0,
            MomentsFinal::VarPop => 1,
            MomentsFinal::VarSamp => 2,
            MomentsFinal::StddevPop => 3,
            MomentsFinal::StddevSamp => 4,
        };
        match self {
            Transition::CountRows => 1,
            Transition::CountValues => 2,
            Transition::SumInt => 3,
            Transition::SumBigInt => 4,
            Transition::AvgInt => 5,
            Transition::SumNumeric => 14,
            Transition::AvgNumeric => 15,
            Transition::SumFloat4 => 6,
            Transition::SumFloat8 => 7,
            Transition::MinMaxInt { max } => 8 + max as i32,
            Transition::MinMaxFloat { max } => 10 + max as i32,
            Transition::MinMaxBytes { max } => 12 + max as i32,
            Transition::MinMaxNumeric { max } => 16 + max as i32,
            Transition::Moments { fin: f } => 20 + fin(f),
            Transition::CountDistinct(k) => 30 + k.code(),
            Transition::Fmgr { raises } => 60 + raises as i32,
            Transition::SumDistinctInt => 70,
            Transition::SumDistinctBigInt => 71,
            Transition::AvgDistinctInt => 72,
        }
    }

    /// The inverse of [`Transition::code`].
    pub fn from_code(code: i32) -> Option<Transition> {
        const FINS: [MomentsFinal; 5] = [
            MomentsFinal::Avg,
            MomentsFinal::VarPop,
            MomentsFinal::VarSamp,
            MomentsFinal::StddevPop,
            MomentsFinal::StddevSamp,
        ];
        Some(match code {
            1 => Transition::CountRows,
            2 => Transition::CountValues,
            3 => Transition::SumInt,
            4 => Transition::SumBigInt,
            5 => Transition::AvgInt,
            14 => Transition::SumNumeric,
            15 => Transition::AvgNumeric,
            6 => Transition::SumFloat4,
            7 => Transition::SumFloat8,
            8 | 9 => Transition::MinMaxInt { max: code == 9 },
            10 | 11 => Transition::MinMaxFloat { max: code == 11 },
            12 | 13 => Transition::MinMaxBytes { max: code == 13 },
            16 | 17 => Transition::MinMaxNumeric { max: code == 17 },
            20..=24 => Transition::Moments { fin: FINS[(code - 20) as usize] },
            30..=59 => Transition::CountDistinct(KeyKind::from_code(code - 30)?),
            60 | 61 => Transition::Fmgr { raises: code == 61 },
            70 => Transition::SumDistinctInt,
            71 => Transition::SumDistinctBigInt,
            72 => Transition::AvgDistinctInt,
            _ => return None,
        })
    }
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

/// Per group: the finite values' scaled sum at the largest display scale
/// met, their count, values that did not fit (sparse), and NaN/+Inf/-Inf counts.
#[derive(Debug, Default)]
struct NumericSums {
    sums: Vec<i128>,
    scales: Vec<u16>,
    counts: Vec<i64>,
    /// NaN/+Inf/-Inf counts of the groups that met one (few do: sparse,
    /// 12 bytes a group would be a third of the state).
    specials: std::collections::HashMap<usize, [u32; 3]>,
    wide: std::collections::BTreeMap<usize, Vec<Box<[u8]>>>,
}

impl NumericSums {
    /// Add the finite value `value / 10^dscale` to group `g`.
    #[inline]
    fn add_scaled(&mut self, g: usize, value: i128, dscale: u16) {
        self.add_scaled_n(g, value, dscale, 1)
    }

    /// Add the sum `value / 10^dscale` of `n` finite values to group `g`.
    #[inline]
    fn add_scaled_n(&mut self, g: usize, value: i128, dscale: u16, n: i64) {
        self.counts[g] += n;
        if dscale == self.scales[g] {
            // The common case: values of one numeric(p, s) column.
            if let Some(s) = self.sums[g].checked_add(value) {
                self.sums[g] = s;
                return;
            }
        }
        if dscale > self.scales[g] {
            let k = dscale - self.scales[g];
            match numeric::rescale(self.sums[g], k) {
                Some(s) => self.sums[g] = s,
                None => {
                    let old = numeric::encode_payload(self.sums[g], self.scales[g]);
                    self.wide.entry(g).or_default().push(old.into());
                    self.sums[g] = 0;
                }
            }
            self.scales[g] = dscale;
        }
        let v = numeric::rescale(value, self.scales[g] - dscale);
        match v.and_then(|v| self.sums[g].checked_add(v)) {
            Some(s) => self.sums[g] = s,
            None => {
                let p = numeric::encode_payload(value, dscale);
                self.wide.entry(g).or_default().push(p.into())
            }
        }
    }

    fn add(&mut self, g: usize, payload: &[u8]) -> bool {
        match numeric::decode(payload) {
            Some(Decoded::Scaled { value, dscale }) => self.add_scaled(g, value, dscale),
            Some(Decoded::TooWide) => {
                self.counts[g] += 1;
                self.wide.entry(g).or_default().push(payload.into());
            }
            Some(Decoded::NaN) => self.specials.entry(g).or_default()[0] += 1,
            Some(Decoded::PosInfinity) => self.specials.entry(g).or_default()[1] += 1,
            Some(Decoded::NegInfinity) => self.specials.entry(g).or_default()[2] += 1,
            None => return false,
        }
        true
    }

    fn result(&self, g: usize, avg: bool) -> AggResult<'_> {
        let [nan, pinf, ninf] = self.specials.get(&g).copied().unwrap_or_default();
        if self.counts[g] == 0 && nan + pinf + ninf == 0 {
            AggResult::Null
        } else if nan > 0 || (pinf > 0 && ninf > 0) {
            AggResult::NumericSpecial(Special::NaN)
        } else if pinf > 0 {
            AggResult::NumericSpecial(Special::PosInfinity)
        } else if ninf > 0 {
            AggResult::NumericSpecial(Special::NegInfinity)
        } else {
            AggResult::NumericSum {
                value: self.sums[g],
                dscale: self.scales[g],
                wide: self.wide.get(&g).map_or(&[], |w| w.as_slice()),
                count: self.counts[g],
                avg,
            }
        }
    }
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

/// PostgreSQL's float `<` (NaN equal to NaN and above every other value).
#[inline]
fn float_lt(a: f64, b: f64) -> bool {
    if a.is_nan() {
        false
    } else {
        b.is_nan() || a < b
    }
}

/// `float8_pl`: the sum, or an overflow when finite inputs give infinity.
#[inline]
fn float8_pl(a: f64, b: f64) -> Option<f64> {
    let r = a + b;
    (!(r.is_infinite() && a.is_finite() && b.is_finite())).then_some(r)
}

#[inline]
fn float4_pl(a: f32, b: f32) -> Option<f32> {
    let r = a + b;
    (!(r.is_infinite() && !a.is_infinite() && !b.is_infinite())).then_some(r)
}

/// `for (g, r) in live { let x = <row r's value as i64>; body }` with the
/// column's type matched once, not per row.
macro_rules! for_ints {
    ($values:expr, $live:expr, |$g:ident, $r:ident, $x:ident| $body:block) => {
        match $values {
            Values::Bool(v) => {
                for ($g, $r) in $live {
                    let $x = v[$r] as i64;
                    $body
                }
            }
            Values::I16(v) => {
                for ($g, $r) in $live {
                    let $x = v[$r] as i64;
                    $body
                }
            }
            Values::I32(v) => {
                for ($g, $r) in $live {
                    let $x = v[$r] as i64;
                    $body
                }
            }
            Values::I64(v) => {
                for ($g, $r) in $live {
                    let $x = v[$r];
                    $body
                }
            }
            other => panic!("integer aggregate over a {:?} column", other.phys_type()),
        }
    };
}

#[inline]
fn float_value(values: &Values, i: usize) -> f64 {
    match values {
        Values::F32(v) => v[i] as f64,
        Values::F64(v) => v[i],
        other => panic!("float aggregate over a {:?} column", other.phys_type()),
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

/// float4pl/float8pl as a combine function: another partial sum `x` (when
/// it saw a value) into `sum`.
fn combine_float_sum<T: Copy>(
    sum: &mut T,
    seen: &mut bool,
    other_seen: bool,
    x: T,
    add: fn(T, T) -> Option<T>,
    overflow: AggError,
) -> Result<(), AggError> {
    if other_seen {
        *sum = if *seen { add(*sum, x).ok_or(overflow)? } else { x };
        *seen = true;
    }
    Ok(())
}

/// Reads a partial state back (see [`Accumulator::serialize`]).
struct StateReader<'a>(&'a [u8]);

impl StateReader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_at_checked(N)?;
        self.0 = rest;
        head.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }
    fn i128(&mut self) -> Option<i128> {
        self.take().map(i128::from_le_bytes)
    }
    fn f32(&mut self) -> Option<f32> {
        self.take().map(f32::from_le_bytes)
    }
    fn f64(&mut self) -> Option<f64> {
        self.take().map(f64::from_le_bytes)
    }
    fn bytes(&mut self) -> Option<&[u8]> {
        let n = self.u32()? as usize;
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

impl Accumulator {
    /// The state of group `g` as bytes, for a Finalize VecAgg to
    /// [`combine`](Accumulator::combine) (parallel aggregation: each worker
    /// aggregates its share of the rows, the leader combines the states).
    pub fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.clear();
        match &self.state {
            State::Counts(c) => out.extend_from_slice(&c[g].to_le_bytes()),
            State::Distinct { .. } | State::DistinctInts { .. } | State::DistinctSum { .. } => {
                panic!("a DISTINCT aggregate has no partial state")
            }
            State::IntSum { sums, counts } => {
                out.extend_from_slice(&sums[g].to_le_bytes());
                out.extend_from_slice(&counts[g].to_le_bytes());
            }
            State::WideSum { sums, counts } => {
                out.extend_from_slice(&sums[g].to_le_bytes());
                out.extend_from_slice(&counts[g].to_le_bytes());
            }
            State::F32Sum { sums, seen } => {
                out.push(seen[g] as u8);
                out.extend_from_slice(&sums[g].to_le_bytes());
            }
            State::F64Sum { sums, seen } => {
                out.push(seen[g] as u8);
                out.extend_from_slice(&sums[g].to_le_bytes());
            }
            State::Moments { n, sx, sxx } => {
                for v in [n[g], sx[g], sxx[g]] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            State::IntExtreme { values, seen } => {
                out.push(seen[g] as u8);
                out.extend_from_slice(&values[g].to_le_bytes());
            }
            State::FloatExtreme { values, seen } => {
                out.push(seen[g] as u8);
                out.extend_from_slice(&values[g].to_le_bytes());
            }
            State::BytesExtreme { values, .. } => {
                out.push(values[g].is_some() as u8);
                if let Some(v) = &values[g] {
                    put_bytes(out, v);
                }
            }
            State::NumericSum(s) => {
                out.extend_from_slice(&s.sums[g].to_le_bytes());
                out.extend_from_slice(&s.scales[g].to_le_bytes());
                out.extend_from_slice(&s.counts[g].to_le_bytes());
                for c in s.specials.get(&g).copied().unwrap_or_default() {
                    out.extend_from_slice(&c.to_le_bytes());
                }
                let wide = s.wide.get(&g).map_or(&[][..], |w| w.as_slice());
                out.extend_from_slice(&(wide.len() as u32).to_le_bytes());
                for w in wide {
                    put_bytes(out, w);
                }
            }
        }
    }

    /// Combine partial states into groups: row `rows[i]` of `states` (plain
    /// varlenas holding [`serialize`](Accumulator::serialize)d states) into
    /// group `groups[i]`, in order, with the combine rules of PostgreSQL's
    /// combine functions (int8pl, float8_combine, numeric_combine, ...).
    ///
    /// # Safety
    /// The valid values of `states` point to plain varlenas.
    pub unsafe fn combine(
        &mut self,
        groups: &[u32],
        rows: &[RowIdx],
        states: &Column,
    ) -> Result<(), AggError> {
        let Values::Datum(v) = &states.values else { panic!("partial states are varlenas") };
        for (&g, &r) in groups.iter().zip(rows) {
            let i = r as usize;
            if !states.is_valid(i) {
                continue;
            }
            let bytes = unsafe { varlena::bytes(v[i] as *const u8) };
            self.combine_one(g as usize, bytes, r).ok_or(AggError::InvalidState { row: r })??;
        }
        Ok(())
    }

    /// Combine one state into group `g`; None when it does not read back.
    fn combine_one(&mut self, g: usize, bytes: &[u8], row: RowIdx) -> Option<Result<(), AggError>> {
        let mut rd = StateReader(bytes);
        let overflow = AggError::FloatOverflow { row };
        match (&mut self.state, self.transition) {
            (State::Counts(c), _) => c[g] += rd.i64()?,
            (State::Distinct { .. } | State::DistinctInts { .. } | State::DistinctSum { .. }, _) => {
                return None
            }
            (State::IntSum { sums, counts }, _) => {
                sums[g] = sums[g].wrapping_add(rd.i64()?);
                counts[g] += rd.i64()?;
            }
            (State::WideSum { sums, counts }, _) => {
                sums[g] += rd.i128()?;
                counts[g] += rd.i64()?;
            }
            (State::F32Sum { sums, seen }, _) => {
                let (other_seen, x) = (rd.u8()? != 0, rd.f32()?);
                if let Err(e) =
                    combine_float_sum(&mut sums[g], &mut seen[g], other_seen, x, float4_pl, overflow)
                {
                    return Some(Err(e));
                }
            }
            (State::F64Sum { sums, seen }, _) => {
                let (other_seen, x) = (rd.u8()? != 0, rd.f64()?);
                if let Err(e) =
                    combine_float_sum(&mut sums[g], &mut seen[g], other_seen, x, float8_pl, overflow)
                {
                    return Some(Err(e));
                }
            }
            (State::Moments { n, sx, sxx }, _) => {
                let (n2, sx2, sxx2) = (rd.f64()?, rd.f64()?, rd.f64()?);
                // float8_combine.
                let (n1, sx1, sxx1) = (n[g], sx[g], sxx[g]);
                if n1 == 0.0 {
                    (n[g], sx[g], sxx[g]) = (n2, sx2, sxx2);
                } else if n2 != 0.0 {
                    let nn = n1 + n2;
                    let Some(s) = float8_pl(sx1, sx2) else { return Some(Err(overflow)) };
                    let tmp = sx1 / n1 - sx2 / n2;
                    let q = sxx1 + sxx2 + n1 * n2 * tmp * tmp / nn;
                    if q.is_infinite() && !sxx1.is_infinite() && !sxx2.is_infinite() {
                        return Some(Err(overflow));
                    }
                    (n[g], sx[g], sxx[g]) = (nn, s, q);
                }
            }
            (State::IntExtreme { values, seen }, Transition::MinMaxInt { max }) => {
                let (other_seen, x) = (rd.u8()? != 0, rd.i64()?);
                if other_seen && (!seen[g] || (if max { x > values[g] } else { x < values[g] })) {
                    (values[g], seen[g]) = (x, true);
                }
            }
            (State::FloatExtreme { values, seen }, Transition::MinMaxFloat { max }) => {
                let (other_seen, x) = (rd.u8()? != 0, rd.f64()?);
                let keep = seen[g] && if max { float_lt(x, values[g]) } else { float_lt(values[g], x) };
                if other_seen && !keep {
                    (values[g], seen[g]) = (x, true);
                }
            }
            (State::BytesExtreme { values, bytes }, t) => {
                if rd.u8()? == 0 {
                    return Some(Ok(()));
                }
                let x = rd.bytes()?;
                let replace = match (&values[g], t) {
                    (None, _) => true,
                    (Some(cur), Transition::MinMaxBytes { max }) => {
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
                    (Some(cur), Transition::MinMaxNumeric { max }) => {
                        let o = numeric::compare(cur, x)?;
                        !(if max { o.is_gt() } else { o.is_lt() })
                    }
                    _ => return None,
                };
                if replace {
                    *bytes += x.len();
                    *bytes -= values[g].replace(x.into()).map_or(0, |old| old.len());
                }
            }
            (State::NumericSum(s), _) => {
                let (value, dscale, count) = (rd.i128()?, rd.u16()?, rd.i64()?);
                let specials = [rd.u32()?, rd.u32()?, rd.u32()?];
                s.add_scaled_n(g, value, dscale, count);
                if specials != [0; 3] {
                    let mine = s.specials.entry(g).or_default();
                    for (k, c) in specials.into_iter().enumerate() {
                        mine[k] += c;
                    }
                }
                for _ in 0..rd.u32()? {
                    let w = rd.bytes()?;
                    s.wide.entry(g).or_default().push(w.into());
                }
            }
            _ => return None,
        }
        rd.0.is_empty().then_some(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::PhysType;

    fn column<T: Copy>(t: PhysType, v: &[Option<T>], to_datum: impl Fn(T) -> usize) -> Column {
        let mut c = Column::new(t, v.len());
        for (i, x) in v.iter().enumerate() {
            match x {
                Some(x) => c.values.set_datum(i, to_datum(*x)),
                None => c.validity.set(i, false),
            }
        }
        c
    }

    fn i32s(v: &[Option<i32>]) -> Column {
        column(PhysType::I32, v, |x| x as i64 as usize)
    }

    fn f64s(v: &[Option<f64>]) -> Column {
        column(PhysType::F64, v, |x| x.to_bits() as usize)
    }

    /// Run one aggregate over a batch whose rows go to `groups`.
    fn run(t: Transition, arg: Option<&Column>, groups: &[u32]) -> (Accumulator, Result<(), AggError>) {
        let mut a = Accumulator::new(t);
        a.ensure_groups(*groups.iter().max().unwrap_or(&0) as usize + 1);
        let rows: Vec<RowIdx> = (0..groups.len() as RowIdx).collect();
        let r = unsafe { a.update(groups, &rows, arg) };
        (a, r)
    }

    /// Aggregate `arg` in two halves (rows alternating), serialize each
    /// half's groups and combine them; the combined accumulator.
    fn split_and_combine(t: Transition, arg: Option<&Column>, groups: &[u32]) -> Accumulator {
        let ngroups = *groups.iter().max().unwrap() as usize + 1;
        let mut parts = [Accumulator::new(t), Accumulator::new(t)];
        for (k, part) in parts.iter_mut().enumerate() {
            part.ensure_groups(ngroups);
            let rows: Vec<RowIdx> = (0..groups.len() as RowIdx).filter(|r| *r as usize % 2 == k).collect();
            let gs: Vec<u32> = rows.iter().map(|&r| groups[r as usize]).collect();
            unsafe { part.update(&gs, &rows, arg) }.unwrap();
        }
        // Every part's state of every group, as the rows a Gather brings.
        let mut store: Vec<Vec<u8>> = Vec::new();
        let mut state_groups = Vec::new();
        let mut buf = Vec::new();
        for part in &parts {
            for g in 0..ngroups {
                part.serialize(g, &mut buf);
                store.push(varlena::make_4b(&buf));
                state_groups.push(g as u32);
            }
        }
        let mut states = Column::new(PhysType::Datum, store.len());
        store.iter().enumerate().for_each(|(i, b)| states.values.set_datum(i, b.as_ptr() as usize));
        let mut fin = Accumulator::new(t);
        fin.ensure_groups(ngroups);
        let rows: Vec<RowIdx> = (0..store.len() as RowIdx).collect();
        unsafe { fin.combine(&state_groups, &rows, &states) }.unwrap();
        fin
    }

    #[test]
    fn combined_partial_states_give_the_serial_results() {
        let groups: Vec<u32> = (0..40).map(|i| (i % 3) as u32).chain([3]).collect();
        let ints: Vec<Option<i32>> =
            (0..41).map(|i| if i % 7 == 0 { None } else { Some((i * 7919) % 2001 - 1000) }).collect();
        let ints = i32s(&ints);
        let floats = f64s(&(0..41).map(|i| (i % 5 != 0).then_some((i % 9) as f64 - 4.5)).collect::<Vec<_>>());
        let store: Vec<Vec<u8>> =
            (0..41).map(|i| numeric::encode(i as i128 * 37 - 700, (i % 3) as u16)).collect();
        let mut nums = Column::new(PhysType::Datum, 41);
        store.iter().enumerate().for_each(|(i, v)| nums.values.set_datum(i, v.as_ptr() as usize));
        nums.validity.set(40, false);
        let texts_store: Vec<Vec<u8>> =
            (0..41).map(|i| varlena::make_4b(format!("w{}", i * 13 % 17).as_bytes())).collect();
        let mut texts = Column::new(PhysType::Datum, 41);
        texts_store.iter().enumerate().for_each(|(i, v)| texts.values.set_datum(i, v.as_ptr() as usize));
        let cases: Vec<(Transition, Option<&Column>)> = vec![
            (Transition::CountRows, None),
            (Transition::CountValues, Some(&ints)),
            (Transition::SumInt, Some(&ints)),
            (Transition::SumBigInt, Some(&ints)),
            (Transition::AvgInt, Some(&ints)),
            (Transition::MinMaxInt { max: false }, Some(&ints)),
            (Transition::MinMaxInt { max: true }, Some(&ints)),
            (Transition::SumFloat8, Some(&floats)),
            (Transition::MinMaxFloat { max: true }, Some(&floats)),
            (Transition::SumNumeric, Some(&nums)),
            (Transition::AvgNumeric, Some(&nums)),
            (Transition::MinMaxNumeric { max: false }, Some(&nums)),
            (Transition::MinMaxBytes { max: true }, Some(&texts)),
            (Transition::MinMaxBytes { max: false }, Some(&texts)),
        ];
        for (t, arg) in cases {
            let (serial, r) = run(t, arg, &groups);
            r.unwrap();
            let combined = split_and_combine(t, arg, &groups);
            for g in 0..4 {
                assert_eq!(combined.result(g), serial.result(g), "{t:?} group {g}");
            }
        }
        // Moments combine as float8_combine does: equal up to rounding.
        let t = Transition::Moments { fin: MomentsFinal::VarSamp };
        let (serial, _) = run(t, Some(&floats), &groups);
        let combined = split_and_combine(t, Some(&floats), &groups);
        for g in 0..3 {
            let (AggResult::Float8(a), AggResult::Float8(b)) = (serial.result(g), combined.result(g)) else {
                panic!("variance of group {g}")
            };
            assert!((a - b).abs() < 1e-9 * a.abs().max(1.0), "{a} vs {b}");
        }
        // A state that does not read back is reported, not misread.
        let mut a = Accumulator::new(Transition::SumInt);
        a.ensure_groups(1);
        let bad = varlena::make_4b(&[1, 2, 3]);
        let mut c = Column::new(PhysType::Datum, 1);
        c.values.set_datum(0, bad.as_ptr() as usize);
        assert_eq!(unsafe { a.combine(&[0], &[0], &c) }, Err(AggError::InvalidState { row: 0 }));
    }

    #[test]
    fn one_group_batches_sum_like_row_by_row() {
        let vals: Vec<Option<i32>> = (0..3000)
            .map(|i| match i % 97 {
                0 => None,
                1 => Some(i32::MAX),
                2 => Some(i32::MIN),
                _ => Some(i * 7919 % 100_000 - 50_000),
            })
            .collect();
        let full = i32s(&vals[..1024].iter().map(|v| v.or(Some(3))).collect::<Vec<_>>());
        for col in [i32s(&vals), full] {
            let len = col.len();
            let all: Vec<RowIdx> = (0..len as RowIdx).collect();
            let some: Vec<RowIdx> = (0..len as RowIdx).filter(|r| r % 3 != 1).collect();
            for t in [Transition::SumInt, Transition::SumBigInt, Transition::AvgInt, Transition::CountValues]
            {
                for rows in [&all, &some] {
                    // One group: the batch path. Row by row: one row per call.
                    let mut fast = Accumulator::new(t);
                    fast.ensure_groups(1);
                    unsafe { fast.update(&vec![0; rows.len()], rows, Some(&col)) }.unwrap();
                    let mut slow = Accumulator::new(t);
                    slow.ensure_groups(2);
                    for &r in rows.iter() {
                        // Two groups per call keep it off the one-group path.
                        unsafe { slow.update(&[0, 1], &[r, r], Some(&col)) }.unwrap();
                    }
                    assert_eq!(fast.result(0), slow.result(0), "{t:?} over {} of {len} rows", rows.len());
                }
            }
        }
    }

    #[test]
    fn shared_states_are_postgres_shared_ones() {
        use Transition::*;
        assert!(SumNumeric.shares_state(AvgNumeric) && AvgInt.shares_state(SumBigInt));
        assert!(Moments { fin: MomentsFinal::Avg }.shares_state(Moments { fin: MomentsFinal::StddevSamp }));
        assert!(CountValues.shares_state(CountValues));
        assert!(!SumInt.shares_state(AvgInt) && !SumFloat8.shares_state(Moments { fin: MomentsFinal::Avg }));
        // States kept elsewhere or of values: never shared.
        assert!(!(Fmgr { raises: false }).shares_state(Fmgr { raises: false }));
        assert!(!CountDistinct(KeyKind::Int).shares_state(CountDistinct(KeyKind::Int)));
        // The shared state gives each aggregate its own result.
        let mut c = Column::new(PhysType::I64, 3);
        for (i, v) in [4i64, 5, 7].iter().enumerate() {
            c.values.set_datum(i, *v as usize);
        }
        let mut a = Accumulator::new(SumBigInt);
        a.ensure_groups(1);
        unsafe { a.update(&[0, 0, 0], &[0, 1, 2], Some(&c)) }.unwrap();
        assert_eq!(a.result_as(0, SumBigInt), AggResult::Numeric(16));
        assert_eq!(a.result_as(0, AvgInt), AggResult::NumericAvg { sum: 16, count: 3 });
    }

    #[test]
    fn transition_codes_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for code in -1..80 {
            if let Some(t) = Transition::from_code(code) {
                assert_eq!(t.code(), code);
                assert!(seen.insert(t.code()));
            }
        }
        // (7 plain, 2 numeric sums, 8 extremes, 5 moments, 12 count(DISTINCT)
        // kinds, 2 fmgr, 3 DISTINCT sums)
        assert_eq!(seen.len(), 7 + 2 + 8 + 5 + 12 + 2 + 3);
        // Every key kind's count(DISTINCT) comes back from its code.
        for k in (0..).map_while(KeyKind::from_code) {
            let t = Transition::CountDistinct(k);
            assert_eq!(Transition::from_code(t.code()), Some(t));
        }
    }

    #[test]
    fn numeric_sums_are_exact_at_the_largest_scale_with_specials_and_wide_values() {
        use crate::numeric::{encode, encode_special, Special};
        let big = 9 * 10i128.pow(37);
        let store: Vec<Vec<u8>> = vec![
            encode(15, 1),
            encode(225, 2),
            crate::batch::varlena::make_4b(&encode_special(Special::NaN)),
            encode(1, 0),
            crate::batch::varlena::make_4b(&encode_special(Special::PosInfinity)),
            encode(3, 0),
            crate::batch::varlena::make_4b(&encode_special(Special::PosInfinity)),
            crate::batch::varlena::make_4b(&encode_special(Special::NegInfinity)),
            encode(big, 0),
            encode(big, 0),
            encode(-5, 3),
        ];
        let mut c = Column::new(PhysType::Datum, store.len() + 1);
        for (i, v) in store.iter().enumerate() {
            c.values.set_datum(i, v.as_ptr() as usize);
        }
        c.validity.set(store.len(), false);
        let groups = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 0];
        let (a, r) = run(Transition::SumNumeric, Some(&c), &groups);
        assert_eq!(r, Ok(()));
        // 1.5 + 2.25 - 0.005 = 3.745 at scale 3 (the NULL does not count).
        assert_eq!(
            a.result(0),
            AggResult::NumericSum { value: 3745, dscale: 3, wide: &[], count: 3, avg: false }
        );
        assert_eq!(a.result(1), AggResult::NumericSpecial(Special::NaN));
        assert_eq!(a.result(2), AggResult::NumericSpecial(Special::PosInfinity));
        assert_eq!(a.result(3), AggResult::NumericSpecial(Special::NaN));
        // The second 9e37 does not fit the i128 sum: it is kept aside.
        let AggResult::NumericSum { value, wide, count, .. } = a.result(4) else { panic!("a sum") };
        assert_eq!((value, wide.len(), count), (big, 1, 2));
        let mut a = Accumulator::new(Transition::AvgNumeric);
        a.ensure_groups(2);
        assert_eq!(a.result(1), AggResult::Null);
        // Bytes that are not a numeric are an error, not a guess.
        let junk = crate::batch::varlena::make_4b(&[0x01]);
        let mut c = Column::new(PhysType::Datum, 1);
        c.values.set_datum(0, junk.as_ptr() as usize);
        assert_eq!(run(Transition::SumNumeric, Some(&c), &[0]).1, Err(AggError::InvalidNumeric { row: 0 }));
    }

    /// An accumulator of transition `t` fed `scaled` (a scaled numeric
    /// column at scale 2) into `groups`, one row each.
    fn scaled_run(t: Transition, scaled: &Column, groups: &[u32]) -> Accumulator {
        let mut b = Accumulator::new(t);
        b.set_arg_scale(2);
        b.ensure_groups(*groups.iter().max().unwrap() as usize + 1);
        let rows: Vec<RowIdx> = (0..groups.len() as RowIdx).collect();
        unsafe { b.update(groups, &rows, Some(scaled)) }.unwrap();
        b
    }

    /// `xs` at scale 2 as numeric Datums (with their storage) and as a
    /// scaled column of type `phys`, row `null` NULL in both.
    fn numeric_and_scaled(
        xs: &[i128],
        phys: PhysType,
        null: Option<usize>,
    ) -> (Vec<Vec<u8>>, Column, Column) {
        let store: Vec<Vec<u8>> = xs.iter().map(|&x| numeric::encode(x, 2)).collect();
        let mut datums = Column::new(PhysType::Datum, xs.len());
        let mut scaled = Column::new(phys, xs.len());
        for (i, (v, &x)) in store.iter().zip(xs).enumerate() {
            datums.values.set_datum(i, v.as_ptr() as usize);
            match &mut scaled.values {
                Values::I128(sv) => sv[i] = x,
                sv => sv.set_datum(i, x as i64 as usize),
            }
        }
        if let Some(r) = null {
            datums.validity.set(r, false);
            scaled.validity.set(r, false);
        }
        (store, datums, scaled)
    }

    /// sum and avg of the numerics `datums` and of their scaled integers
    /// `scaled` give equal results in every group.
    fn assert_sums_agree(datums: &Column, scaled: &Column, groups: &[u32]) {
        for t in [Transition::SumNumeric, Transition::AvgNumeric] {
            let (a, r) = run(t, Some(datums), groups);
            r.unwrap();
            let b = scaled_run(t, scaled, groups);
            for g in 0..=*groups.iter().max().unwrap() as usize {
                assert_eq!(a.result(g), b.result(g), "{t:?} group {g}");
            }
        }
    }

    #[test]
    fn numeric_sums_of_scaled_integers_equal_sums_of_their_numerics() {
        let xs = [12345, -5, 0, i64::MAX as i128, i64::MAX as i128];
        let (_store, datums, scaled) = numeric_and_scaled(&xs, PhysType::I64, None);
        let groups = [0u32, 1, 0, 1, 1];
        assert_sums_agree(&datums, &scaled, &groups);
        let b = scaled_run(Transition::SumNumeric, &scaled, &groups);
        assert!(matches!(b.result(0), AggResult::NumericSum { value: 12345, dscale: 2, count: 2, .. }));
    }

    /// numeric(38, 2) values as I128 columns: the same results as their
    /// Datums, including two 38-digit values whose sum leaves the i128.
    #[test]
    fn numeric_sums_of_wide_scaled_integers_equal_sums_of_their_numerics() {
        let big = 10i128.pow(38) - 1;
        let xs = [big, -5, big, 12345, -big, i64::MAX as i128 * 3];
        let (_store, datums, scaled) = numeric_and_scaled(&xs, PhysType::I128, Some(3));
        let groups = [0u32, 1, 0, 1, 1, 0];
        assert_sums_agree(&datums, &scaled, &groups);
        let b = scaled_run(Transition::SumNumeric, &scaled, &groups);
        let AggResult::NumericSum { value, wide, count, .. } = b.result(0) else { panic!("a sum") };
        assert_eq!((value, wide.len(), count), (big + xs[5], 1, 3), "the second 38-digit value aside");
        assert!(matches!(b.result(1), AggResult::NumericSum { value: v, count: 2, .. } if v == -5 - big));
    }

    #[test]
    fn text_min_max_follow_the_collation_order_and_keep_the_later_of_equals() {
        let words: Vec<Vec<u8>> =
            ["b", "B", "a", "A"].iter().map(|w| varlena::make_4b(w.as_bytes())).collect();
        let mut c = Column::new(PhysType::Datum, words.len());
        words.iter().enumerate().for_each(|(i, w)| c.values.set_datum(i, w.as_ptr() as usize));
        // A case-insensitive order: "a" = "A" < "b" = "B".
        let ci =
            || TextOrder(Box::new(|a: &[u8], b: &[u8]| a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())));
        for (max, want) in [(false, &b"A"[..]), (true, &b"B"[..])] {
            let mut a = Accumulator::new(Transition::MinMaxBytes { max });
            a.set_text_order(ci());
            a.ensure_groups(1);
            unsafe { a.update(&[0; 4], &[0, 1, 2, 3], Some(&c)) }.unwrap();
            assert_eq!(a.result(0), AggResult::Bytes(want), "max {max}");
        }
        // Bytewise (C): uppercase sorts first.
        let (a, _) = run(Transition::MinMaxBytes { max: false }, Some(&c), &[0; 4]);
        assert_eq!(a.result(0), AggResult::Bytes(b"A"));
        let (a, _) = run(Transition::MinMaxBytes { max: true }, Some(&c), &[0; 4]);
        assert_eq!(a.result(0), AggResult::Bytes(b"b"));
    }

    #[test]
    fn numeric_min_max_keep_the_later_of_equal_values() {
        use crate::numeric::{encode, encode_special, Special};
        let store: Vec<Vec<u8>> = vec![
            encode(10, 1),
            encode(-3, 0),
            encode(100, 2),
            encode(-300, 2),
            crate::batch::varlena::make_4b(&encode_special(Special::NaN)),
            encode(5, 0),
        ];
        let mut c = Column::new(PhysType::Datum, store.len());
        for (i, v) in store.iter().enumerate() {
            c.values.set_datum(i, v.as_ptr() as usize);
        }
        let groups = [0, 0, 0, 0, 1, 1];
        let (min, _) = run(Transition::MinMaxNumeric { max: false }, Some(&c), &groups);
        let (max, _) = run(Transition::MinMaxNumeric { max: true }, Some(&c), &groups);
        let payload = |v: &Vec<u8>| unsafe { varlena::bytes(v.as_ptr()) }.to_vec();
        // -3 and -3.00 are equal: the later (-3.00) is kept; 1.0 and 1.00 likewise.
        assert_eq!(min.result(0), AggResult::Bytes(&payload(&store[3])));
        assert_eq!(max.result(0), AggResult::Bytes(&payload(&store[2])));
        // NaN is above every number.
        assert_eq!(min.result(1), AggResult::Bytes(&payload(&store[5])));
        assert_eq!(max.result(1), AggResult::Bytes(&payload(&store[4])));
    }

    #[test]
    fn counts_skip_nulls_only_for_count_of_a_value() {
        let c = i32s(&[Some(1), None, Some(3), None]);
        let (a, _) = run(Transition::CountRows, None, &[0, 0, 1, 1]);
        assert_eq!((a.result(0), a.result(1)), (AggResult::Int(2), AggResult::Int(2)));
        let (a, _) = run(Transition::CountValues, Some(&c), &[0, 0, 1, 1]);
        assert_eq!((a.result(0), a.result(1)), (AggResult::Int(1), AggResult::Int(1)));
    }

    #[test]
    fn int_sums_wrap_like_int4_sum_and_int8_sums_widen() {
        let c = i32s(&[Some(i32::MAX), Some(i32::MAX), None]);
        let (a, _) = run(Transition::SumInt, Some(&c), &[0, 0, 1]);
        assert_eq!(a.result(0), AggResult::Int(2 * i32::MAX as i64));
        assert_eq!(a.result(1), AggResult::Null);

        let big = column(PhysType::I64, &[Some(i64::MAX), Some(i64::MAX), Some(-3)], |x: i64| x as usize);
        let (a, _) = run(Transition::SumBigInt, Some(&big), &[0, 0, 0]);
        assert_eq!(a.result(0), AggResult::Numeric(2 * i64::MAX as i128 - 3));
        let (a, _) = run(Transition::AvgInt, Some(&big), &[0, 1, 1]);
        assert_eq!(a.result(1), AggResult::NumericAvg { sum: i64::MAX as i128 - 3, count: 2 });

        // int4_sum adds on int64 without an overflow check: it wraps.
        let mut a = Accumulator::new(Transition::SumInt);
        a.ensure_groups(1);
        let c = column(PhysType::I64, &[Some(i64::MAX), Some(1)], |x: i64| x as usize);
        unsafe { a.update(&[0, 0], &[0, 1], Some(&c)).unwrap() };
        assert_eq!(a.result(0), AggResult::Int(i64::MIN));
    }

    #[test]
    fn float_sum_starts_from_the_first_value_and_reports_overflow_rows() {
        let c = f64s(&[Some(-0.0), None]);
        let (a, _) = run(Transition::SumFloat8, Some(&c), &[0, 1]);
        assert_eq!(a.result(0), AggResult::Float8(-0.0));
        assert!(matches!(a.result(0), AggResult::Float8(v) if v.is_sign_negative()));
        assert_eq!(a.result(1), AggResult::Null);

        let c = f64s(&[Some(f64::MAX), Some(1.0), Some(f64::MAX)]);
        let (_, r) = run(Transition::SumFloat8, Some(&c), &[0, 0, 0]);
        assert_eq!(r, Err(AggError::FloatOverflow { row: 2 }));
        // Infinity in the input is not an overflow.
        let c = f64s(&[Some(f64::INFINITY), Some(f64::MAX)]);
        let (a, r) = run(Transition::SumFloat8, Some(&c), &[0, 0]);
        assert_eq!((r, a.result(0)), (Ok(()), AggResult::Float8(f64::INFINITY)));

        let c = column(PhysType::F32, &[Some(f32::MAX), Some(f32::MAX)], |x: f32| x.to_bits() as usize);
        let (_, r) = run(Transition::SumFloat4, Some(&c), &[0, 0]);
        assert_eq!(r, Err(AggError::FloatOverflow { row: 1 }));
    }

    /// float8_accum as PostgreSQL writes it, for comparison.
    fn reference_moments(xs: &[f64]) -> (f64, f64, f64) {
        let (mut n, mut sx, mut sxx) = (0.0f64, 0.0f64, 0.0f64);
        for &x in xs {
            let n0 = n;
            n += 1.0;
            sx += x;
            if n0 > 0.0 {
                let tmp = x * n - sx;
                sxx += tmp * tmp / (n * n0);
            }
        }
        (n, sx, sxx)
    }

    #[test]
    fn moments_follow_float8_accum_in_row_order() {
        let xs = [0.1, 1e10, -3.25, 7.0, 0.3, 1e-7];
        let c = f64s(&xs.iter().map(|&x| Some(x)).collect::<Vec<_>>());
        let (n, sx, sxx) = reference_moments(&xs);
        for (fin, want) in [
            (MomentsFinal::Avg, sx / n),
            (MomentsFinal::VarPop, sxx / n),
            (MomentsFinal::VarSamp, sxx / (n - 1.0)),
            (MomentsFinal::StddevPop, (sxx / n).sqrt()),
            (MomentsFinal::StddevSamp, (sxx / (n - 1.0)).sqrt()),
        ] {
            let (a, _) = run(Transition::Moments { fin }, Some(&c), &[0; 6]);
            assert_eq!(a.result(0), AggResult::Float8(want), "{fin:?}");
        }
        // One value: var_samp is NULL, var_pop is 0; an infinite first value makes Sxx NaN.
        let one = f64s(&[Some(2.0)]);
        let (a, _) = run(Transition::Moments { fin: MomentsFinal::VarSamp }, Some(&one), &[0]);
        assert_eq!(a.result(0), AggResult::Null);
        let inf = f64s(&[Some(f64::INFINITY)]);
        let (a, _) = run(Transition::Moments { fin: MomentsFinal::VarPop }, Some(&inf), &[0]);
        assert!(matches!(a.result(0), AggResult::Float8(v) if v.is_nan()));
        let big = f64s(&[Some(1e308), Some(1e308)]);
        let (_, r) = run(Transition::Moments { fin: MomentsFinal::Avg }, Some(&big), &[0, 0]);
        assert_eq!(r, Err(AggError::FloatOverflow { row: 1 }));
    }

    #[test]
    fn float_min_max_order_nan_last_and_keep_the_later_of_equals() {
        let c = f64s(&[Some(f64::NAN), Some(1.0), Some(-0.0), Some(0.0), None]);
        let (a, _) = run(Transition::MinMaxFloat { max: true }, Some(&c), &[0; 5]);
        assert!(matches!(a.result(0), AggResult::Float8(v) if v.is_nan()));
        let (a, _) = run(Transition::MinMaxFloat { max: false }, Some(&c), &[0; 5]);
        // -0 then 0: float8smaller(-0, 0) returns its second argument.
        assert!(matches!(a.result(0), AggResult::Float8(v) if v == 0.0 && v.is_sign_positive()));
        let (a, _) =
            run(Transition::MinMaxInt { max: false }, Some(&i32s(&[Some(4), Some(-2), None])), &[0, 0, 1]);
        assert_eq!((a.result(0), a.result(1)), (AggResult::Int(-2), AggResult::Null));
    }

    #[test]
    fn text_min_max_and_count_distinct() {
        let store = [
            varlena::make_1b(b"b"),
            varlena::make_4b(b"abc"),
            varlena::make_1b(b"ab"),
            varlena::make_1b(b"b"),
        ];
        let c = column(
            PhysType::Datum,
            &store.iter().map(|s| Some(s.as_ptr() as usize)).collect::<Vec<_>>(),
            |x| x,
        );
        let (a, _) = run(Transition::MinMaxBytes { max: false }, Some(&c), &[0; 4]);
        assert_eq!(a.result(0), AggResult::Bytes(b"ab"));
        let (a, _) = run(Transition::MinMaxBytes { max: true }, Some(&c), &[0; 4]);
        assert_eq!(a.result(0), AggResult::Bytes(b"b"));
        let (a, _) = run(Transition::CountDistinct(KeyKind::Bytes), Some(&c), &[0, 0, 1, 1]);
        assert_eq!((a.result(0), a.result(1)), (AggResult::Int(2), AggResult::Int(2)));
        let (a, _) = run(Transition::CountDistinct(KeyKind::Bytes), Some(&c), &[0, 0, 0, 0]);
        assert_eq!(a.result(0), AggResult::Int(3));

        // Across batches, with NULLs (not counted).
        let mut a = Accumulator::new(Transition::CountDistinct(KeyKind::Int));
        a.ensure_groups(2);
        let b1 = i32s(&[Some(1), Some(1), None, Some(2)]);
        let b2 = i32s(&[Some(2), Some(3), Some(1), None]);
        unsafe {
            a.update(&[0, 0, 0, 1], &[0, 1, 2, 3], Some(&b1)).unwrap();
            a.update(&[0, 0, 1, 1], &[0, 1, 2, 3], Some(&b2)).unwrap();
        }
        assert_eq!((a.result(0), a.result(1)), (AggResult::Int(3), AggResult::Int(2)));

        // Integer values: the same counts as the group table's pairs give.
        let vals: Vec<Option<i32>> =
            (0..2000).map(|i| (i % 17 != 0).then_some((i * 7919) % 613 - 300)).collect();
        let col = i32s(&vals);
        let groups: Vec<u32> = (0..2000).map(|i| (i % 5) as u32).collect();
        let (ints, _) = run(Transition::CountDistinct(KeyKind::Int), Some(&col), &groups);
        let mut table = GroupTable::new(&[KeyKind::Int, KeyKind::Int]);
        let mut gcol = Column::new(PhysType::I64, 2000);
        groups.iter().enumerate().for_each(|(i, &g)| gcol.values.set_datum(i, g as usize));
        let rows: Vec<RowIdx> = (0..2000).filter(|&r| col.is_valid(r as usize)).collect();
        let mut ids = Vec::new();
        unsafe { table.assign(&[&gcol, &col], &rows, &mut ids) };
        for g in 0..5u32 {
            let pairs = (0..table.len()).filter(|&p| table.fixed_key(0, p) == Some(g as i64)).count();
            assert_eq!(ints.result(g as usize), AggResult::Int(pairs as i64), "group {g}");
        }
    }

    #[test]
    fn distinct_sums_take_each_value_once_per_group() {
        // group 0: 5, 5, 7, NULL, 5 -> {5, 7}; group 1: 5, -2, -2 -> {5, -2}; group 2: NULL only
        let col = i32s(&[Some(5), Some(5), Some(7), None, Some(5), Some(5), Some(-2), Some(-2), None]);
        let groups = [0, 0, 0, 0, 0, 1, 1, 1, 2];
        let (a, r) = run(Transition::SumDistinctInt, Some(&col), &groups);
        r.unwrap();
        let t = Transition::SumDistinctInt;
        assert_eq!((a.result_as(0, t), a.result_as(1, t)), (AggResult::Int(12), AggResult::Int(3)));
        assert_eq!(a.result_as(2, t), AggResult::Null);
        let (a, _) = run(Transition::AvgDistinctInt, Some(&col), &groups);
        assert_eq!(a.result_as(0, Transition::AvgDistinctInt), AggResult::NumericAvg { sum: 12, count: 2 });
        // A second batch adds only values not seen in the group before.
        let mut a = Accumulator::new(Transition::SumDistinctBigInt);
        a.ensure_groups(2);
        let mut big = Column::new(PhysType::I64, 3);
        for (i, v) in [i64::MAX, i64::MAX, 1].into_iter().enumerate() {
            big.values.set_datum(i, v as usize);
        }
        unsafe {
            a.update(&[0, 0, 1], &[0, 1, 2], Some(&big)).unwrap();
            a.update(&[0, 1, 1], &[2, 0, 2], Some(&big)).unwrap();
        }
        let t = Transition::SumDistinctBigInt;
        assert_eq!(a.result_as(0, t), AggResult::Numeric(i64::MAX as i128 + 1));
        assert_eq!(a.result_as(1, t), AggResult::Numeric(i64::MAX as i128 + 1));
        assert!(!t.combines() && !t.shares_state(Transition::SumBigInt));
        assert_eq!(Transition::from_code(t.code()), Some(t));
    }
}

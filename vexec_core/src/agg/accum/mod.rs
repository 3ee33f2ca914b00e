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
//!
//! Each kind of state lives in its own file behind [`GroupStates`]:
//! `count.rs`, `int_sum.rs`, `float_sum.rs`, `moments.rs`, `extreme.rs`,
//! `distinct.rs`, `numeric_sums.rs`. [`Accumulator`] picks the kind from the
//! [`Transition`] and dispatches to it (an enum, so the per-batch loops are
//! statically dispatched and inlined).

use crate::batch::{Column, RowIdx};
use crate::numeric::Special;

use super::groups::KeyKind;

/// `$body` with `$s` bound to the state's kind, whichever it is.
macro_rules! with_state {
    ($state:expr, $s:ident => $body:expr) => {
        match $state {
            State::Counts($s) => $body,
            State::DistinctValues($s) => $body,
            State::DistinctInts($s) => $body,
            State::DistinctSum($s) => $body,
            State::IntSum($s) => $body,
            State::WideSum($s) => $body,
            State::F32Sum($s) => $body,
            State::F64Sum($s) => $body,
            State::Moments($s) => $body,
            State::IntExtreme($s) => $body,
            State::FloatExtreme($s) => $body,
            State::BytesExtreme($s) => $body,
            State::NumericSum($s) => $body,
        }
    };
}

#[macro_use]
mod float;
mod count;
mod distinct;
mod extreme;
mod float_sum;
mod int_sum;
mod moments;
mod numeric_sums;
mod partial;
mod transition;

use count::Counts;
use distinct::{DistinctInts, DistinctSum, DistinctValues};
use extreme::{BytesExtreme, FloatExtreme, IntExtreme};
use float_sum::FloatSum;
use int_sum::{IntSum, WideSum};
use moments::Moments;
use numeric_sums::NumericSums;
use partial::StateReader;
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

/// The states of one aggregate for groups `0..n`: what each kind of state
/// implements (one kind per file).
trait GroupStates {
    /// Room for groups `0..n`, new groups empty; a vector that must grow
    /// grows to exactly `room` groups when `room >= n` (see
    /// [`Accumulator::ensure_groups_in`]).
    fn grow(&mut self, n: usize, room: usize);

    /// Fold the rows whose argument is not NULL, `(group, row)` pairs in
    /// input order.
    ///
    /// # Safety
    /// For by-reference arguments the column's valid values point to plain
    /// varlenas.
    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError>;

    /// Every row of `rows` into group `g` in one pass over the values;
    /// false when this kind has no such path (then [`GroupStates::update`]).
    fn update_one_group(&mut self, _g: usize, _rows: &[RowIdx], _col: &Column) -> bool {
        false
    }

    /// Group `g`'s result for transition `t` (this state's transition or
    /// one that shares its state).
    fn result(&self, g: usize, t: Transition) -> AggResult<'_>;

    /// Group `g`'s state as bytes (see [`Accumulator::serialize`]).
    fn serialize(&self, g: usize, out: &mut Vec<u8>);

    /// Combine a serialized state into group `g`; None when the bytes do not
    /// read back as this kind's state.
    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, row: RowIdx) -> Option<Result<(), AggError>>;

    /// Approximate memory held, for the `hash_mem` budget.
    fn bytes_used(&self) -> usize;
}

/// Grow a per-group vector as [`GroupStates::grow`] says.
fn grow<T: Clone>(v: &mut Vec<T>, n: usize, room: usize, fill: T) {
    if n > v.capacity() && room >= n {
        v.reserve_exact(room - v.len());
    }
    v.resize(n, fill);
}

/// [`grow`] for per-group flags (new groups' flags clear).
fn grow_bits(b: &mut crate::batch::Bitmap, n: usize, room: usize) {
    if room >= n && n > b.len() {
        b.reserve_exact(room - b.len());
    }
    b.resize(n, false);
}

#[derive(Debug)]
enum State {
    Counts(Counts),
    DistinctValues(DistinctValues),
    DistinctInts(DistinctInts),
    DistinctSum(DistinctSum),
    IntSum(IntSum),
    WideSum(WideSum),
    F32Sum(FloatSum<f32>),
    F64Sum(FloatSum<f64>),
    Moments(Moments),
    IntExtreme(IntExtreme),
    FloatExtreme(FloatExtreme),
    BytesExtreme(BytesExtreme),
    NumericSum(NumericSums),
}

/// The states of one aggregate over all groups.
#[derive(Debug)]
pub struct Accumulator {
    transition: Transition,
    state: State,
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
                State::Counts(Counts::default())
            }
            Transition::CountDistinct(KeyKind::Int) => State::DistinctInts(DistinctInts::default()),
            Transition::CountDistinct(kind) => State::DistinctValues(DistinctValues::new(kind)),
            Transition::SumInt => State::IntSum(IntSum::default()),
            Transition::SumDistinctInt | Transition::SumDistinctBigInt | Transition::AvgDistinctInt => {
                State::DistinctSum(DistinctSum::default())
            }
            Transition::SumBigInt | Transition::AvgInt => State::WideSum(WideSum::default()),
            Transition::SumFloat4 => State::F32Sum(FloatSum::default()),
            Transition::SumFloat8 => State::F64Sum(FloatSum::default()),
            Transition::Moments { .. } => State::Moments(Moments::default()),
            Transition::MinMaxInt { max } => State::IntExtreme(IntExtreme::new(max)),
            Transition::MinMaxFloat { max } => State::FloatExtreme(FloatExtreme::new(max)),
            Transition::MinMaxBytes { max } => State::BytesExtreme(BytesExtreme::new(max, false)),
            Transition::MinMaxNumeric { max } => State::BytesExtreme(BytesExtreme::new(max, true)),
            Transition::SumNumeric | Transition::AvgNumeric => State::NumericSum(NumericSums::default()),
        };
        Accumulator { transition, state }
    }

    /// Text min/max: compare with this collation order instead of bytewise.
    pub fn set_text_order(&mut self, order: TextOrder) {
        if let State::BytesExtreme(s) = &mut self.state {
            s.set_order(order);
        }
    }

    /// Numeric sum/avg: I64 argument columns hold values scaled by `10^scale`.
    pub fn set_arg_scale(&mut self, scale: u16) {
        if let State::NumericSum(s) = &mut self.state {
            s.arg_scale = Some(scale);
        }
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
        with_state!(&mut self.state, s => s.grow(n, room))
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
        if let (State::Counts(counts), Transition::CountRows) = (&mut self.state, self.transition) {
            counts.count_rows(groups);
            return Ok(());
        }
        let col = arg.expect("the aggregate has an argument");
        if let Some(&g) = groups.first() {
            let one_group = groups.iter().all(|&x| x == g);
            if one_group && with_state!(&mut self.state, s => s.update_one_group(g as usize, rows, col)) {
                return Ok(());
            }
        }
        let live = groups
            .iter()
            .map(|&g| g as usize)
            .zip(rows.iter().map(|&r| r as usize))
            .filter(|&(_, r)| col.is_valid(r));
        // SAFETY: the caller vouches for the argument's varlenas.
        with_state!(&mut self.state, s => unsafe { s.update(live, col) })
    }

    /// The result for group `g`.
    pub fn result(&self, g: usize) -> AggResult<'_> {
        self.result_as(g, self.transition)
    }

    /// The result for group `g` of transition `t`, which shares this
    /// accumulator's state ([`Transition::shares_state`]).
    pub fn result_as(&self, g: usize, t: Transition) -> AggResult<'_> {
        debug_assert!(t == self.transition || t.shares_state(self.transition));
        with_state!(&self.state, s => s.result(g, t))
    }

    /// Approximate memory held, for the `hash_mem` budget.
    pub fn bytes_used(&self) -> usize {
        with_state!(&self.state, s => s.bytes_used())
    }
}

#[cfg(test)]
mod tests;

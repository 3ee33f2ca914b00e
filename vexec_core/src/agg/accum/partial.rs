//! Partial states: an accumulator's state of one group as bytes
//! (`serialize`) for a Gather, and combining them in a Finalize
//! (the rules of PostgreSQL's combine functions).

use super::*;
use crate::batch::{varlena, Values};

/// float4pl/float8pl as a combine function: another partial sum `x` (when
/// it saw a value) into `sum`.
pub(super) fn combine_float_sum<T: Copy>(
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
pub(super) struct StateReader<'a>(pub(super) &'a [u8]);

impl StateReader<'_> {
    pub(super) fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_at_checked(N)?;
        self.0 = rest;
        head.try_into().ok()
    }
    pub(super) fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    pub(super) fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    pub(super) fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    pub(super) fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }
    pub(super) fn i128(&mut self) -> Option<i128> {
        self.take().map(i128::from_le_bytes)
    }
    pub(super) fn f32(&mut self) -> Option<f32> {
        self.take().map(f32::from_le_bytes)
    }
    pub(super) fn f64(&mut self) -> Option<f64> {
        self.take().map(f64::from_le_bytes)
    }
    pub(super) fn bytes(&mut self) -> Option<&[u8]> {
        let n = self.u32()? as usize;
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
}

pub(super) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

impl Accumulator {
    /// The state of group `g` as bytes, for a Finalize VecAgg to
    /// [`combine`](Accumulator::combine) (parallel aggregation: each worker
    /// aggregates its share of the rows, the leader combines the states).
    pub fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.clear();
        with_state!(&self.state, s => s.serialize(g, out))
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
            // SAFETY: the caller vouches that valid values are plain varlenas.
            let bytes = unsafe { varlena::bytes(v[i] as *const u8) };
            self.combine_one(g as usize, bytes, r).ok_or(AggError::InvalidState { row: r })??;
        }
        Ok(())
    }

    /// Combine one state into group `g`; None when it does not read back
    /// (bytes left over count as not reading back).
    pub(super) fn combine_one(
        &mut self,
        g: usize,
        bytes: &[u8],
        row: RowIdx,
    ) -> Option<Result<(), AggError>> {
        let mut rd = StateReader(bytes);
        match with_state!(&mut self.state, s => s.combine(g, &mut rd, row))? {
            Ok(()) => rd.0.is_empty().then_some(Ok(())),
            Err(e) => Some(Err(e)),
        }
    }
}

//! `sum(float4)` and `sum(float8)`: the first non-NULL value, then
//! `float4_pl`/`float8_pl` in row order with their overflow check (combined
//! with the same addition).

use super::float::{float4_pl, float8_pl};
use super::partial::combine_float_sum;
use super::{grow, grow_bits, AggError, AggResult, GroupStates, StateReader, Transition};
use crate::batch::{Bitmap, Column, RowIdx, Values};

/// What differs between float4 and float8 sums.
pub(super) trait SumFloat: Copy + Default + std::fmt::Debug {
    const SIZE: usize;
    /// PostgreSQL's addition with its overflow check (None: overflow).
    fn pl(a: Self, b: Self) -> Option<Self>;
    fn values(col: &Column) -> &[Self];
    fn result(self) -> AggResult<'static>;
    fn to_le(self, out: &mut Vec<u8>);
    fn read(rd: &mut StateReader<'_>) -> Option<Self>;
}

impl SumFloat for f32 {
    const SIZE: usize = 4;
    fn pl(a: f32, b: f32) -> Option<f32> {
        float4_pl(a, b)
    }
    fn values(col: &Column) -> &[f32] {
        let Values::F32(v) = &col.values else { panic!("sum(float4) over a non-float4 column") };
        v
    }
    fn result(self) -> AggResult<'static> {
        AggResult::Float4(self)
    }
    fn to_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn read(rd: &mut StateReader<'_>) -> Option<f32> {
        rd.f32()
    }
}

impl SumFloat for f64 {
    const SIZE: usize = 8;
    fn pl(a: f64, b: f64) -> Option<f64> {
        float8_pl(a, b)
    }
    fn values(col: &Column) -> &[f64] {
        let Values::F64(v) = &col.values else { panic!("sum(float8) over a non-float8 column") };
        v
    }
    fn result(self) -> AggResult<'static> {
        AggResult::Float8(self)
    }
    fn to_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn read(rd: &mut StateReader<'_>) -> Option<f64> {
        rd.f64()
    }
}

#[derive(Debug, Default)]
pub(super) struct FloatSum<T> {
    sums: Vec<T>,
    /// Whether the group met a value (the sum of none is NULL).
    seen: Bitmap,
}

impl<T: SumFloat> GroupStates for FloatSum<T> {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.sums, n, room, T::default());
        grow_bits(&mut self.seen, n, room);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        let v = T::values(col);
        for (g, r) in live {
            if self.seen.get(g) {
                self.sums[g] =
                    T::pl(self.sums[g], v[r]).ok_or(AggError::FloatOverflow { row: r as RowIdx })?;
            } else {
                self.sums[g] = v[r];
                self.seen.set(g, true);
            }
        }
        Ok(())
    }

    fn result(&self, g: usize, _t: Transition) -> AggResult<'_> {
        if self.seen.get(g) {
            self.sums[g].result()
        } else {
            AggResult::Null
        }
    }

    fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.push(self.seen.get(g) as u8);
        self.sums[g].to_le(out);
    }

    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, row: RowIdx) -> Option<Result<(), AggError>> {
        let (other_seen, x) = (rd.u8()? != 0, T::read(rd)?);
        let overflow = AggError::FloatOverflow { row };
        let mut seen = self.seen.get(g);
        let r = combine_float_sum(&mut self.sums[g], &mut seen, other_seen, x, T::pl, overflow);
        self.seen.set(g, seen);
        Some(r)
    }

    fn bytes_used(&self) -> usize {
        self.sums.capacity() * T::SIZE + self.seen.allocated_bytes()
    }
}

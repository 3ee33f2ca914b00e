//! Integer sums per group with their counts: `sum(int2/int4)` in an int8
//! that wraps (`int4_sum`, C addition with -fwrapv), `sum(int8)` and
//! `avg(int2/int4/int8)` in an int128 (`int8_avg_accum`, `int4_avg_accum`).

use super::{grow, AggError, AggResult, GroupStates, StateReader, Transition};
use crate::batch::{Column, RowIdx, Values};

#[derive(Debug, Default)]
pub(super) struct IntSum {
    sums: Vec<i64>,
    counts: Vec<i64>,
}

#[derive(Debug, Default)]
pub(super) struct WideSum {
    sums: Vec<i128>,
    counts: Vec<i64>,
}

/// The valid values of `rows` summed in one pass, and how many there were.
fn sum_valid<T: Copy + Into<i64>>(v: &[T], rows: &[RowIdx], col: &Column) -> (i128, i64) {
    // Selections are ascending: first 0 and last n - 1 is all of 0..n.
    let contiguous = rows.len() <= v.len()
        && rows.first() == Some(&0)
        && rows.last().map(|&r| r as usize + 1) == Some(rows.len());
    if contiguous && col.validity.all_set() {
        // Chunks of i64 sums cannot overflow: 2^31 * 1024 < 2^63. The
        // compiler vectorizes this (integer addition is associative, so the
        // result is the row-by-row one).
        let s: i128 =
            v[..rows.len()].chunks(1024).map(|c| c.iter().map(|&x| x.into()).sum::<i64>() as i128).sum();
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

impl GroupStates for IntSum {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.sums, n, room, 0);
        grow(&mut self.counts, n, room, 0);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        let (sums, counts) = (&mut self.sums, &mut self.counts);
        for_ints!(&col.values, live, |g, _r, x| {
            sums[g] = sums[g].wrapping_add(x);
            counts[g] += 1;
        });
        Ok(())
    }

    fn update_one_group(&mut self, g: usize, rows: &[RowIdx], col: &Column) -> bool {
        let (total, n) = match &col.values {
            Values::I16(v) => sum_valid(v, rows, col),
            Values::I32(v) => sum_valid(v, rows, col),
            _ => return false,
        };
        // int2/int4 sums wrap in int8 as PostgreSQL's int4_sum does.
        self.sums[g] = self.sums[g].wrapping_add(total as i64);
        self.counts[g] += n;
        true
    }

    fn result(&self, g: usize, _t: Transition) -> AggResult<'_> {
        if self.counts[g] == 0 {
            AggResult::Null
        } else {
            AggResult::Int(self.sums[g])
        }
    }

    fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.sums[g].to_le_bytes());
        out.extend_from_slice(&self.counts[g].to_le_bytes());
    }

    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, _row: RowIdx) -> Option<Result<(), AggError>> {
        self.sums[g] = self.sums[g].wrapping_add(rd.i64()?);
        self.counts[g] += rd.i64()?;
        Some(Ok(()))
    }

    fn bytes_used(&self) -> usize {
        (self.sums.capacity() + self.counts.capacity()) * 8
    }
}

impl GroupStates for WideSum {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.sums, n, room, 0);
        grow(&mut self.counts, n, room, 0);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        let (sums, counts) = (&mut self.sums, &mut self.counts);
        for_ints!(&col.values, live, |g, _r, x| {
            sums[g] += x as i128;
            counts[g] += 1;
        });
        Ok(())
    }

    fn update_one_group(&mut self, g: usize, rows: &[RowIdx], col: &Column) -> bool {
        let (total, n) = match &col.values {
            Values::I16(v) => sum_valid(v, rows, col),
            Values::I32(v) => sum_valid(v, rows, col),
            Values::I64(v) => {
                // (int8 values can overflow an i64 chunk sum: add in i128.)
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
        self.sums[g] += total;
        self.counts[g] += n;
        true
    }

    fn result(&self, g: usize, t: Transition) -> AggResult<'_> {
        match (self.counts[g], t) {
            (0, _) => AggResult::Null,
            (_, Transition::AvgInt) => AggResult::NumericAvg { sum: self.sums[g], count: self.counts[g] },
            _ => AggResult::Numeric(self.sums[g]),
        }
    }

    fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.sums[g].to_le_bytes());
        out.extend_from_slice(&self.counts[g].to_le_bytes());
    }

    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, _row: RowIdx) -> Option<Result<(), AggError>> {
        self.sums[g] += rd.i128()?;
        self.counts[g] += rd.i64()?;
        Some(Ok(()))
    }

    fn bytes_used(&self) -> usize {
        self.sums.capacity() * 16 + self.counts.capacity() * 8
    }
}

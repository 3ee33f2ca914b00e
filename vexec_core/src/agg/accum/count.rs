//! count(*) and count(x): an int8 count per group (`int8inc`,
//! `int8inc_any`; combined with `int8pl`). Fmgr aggregates keep their states
//! on the host and leave an empty count here.

use super::{grow, AggError, AggResult, GroupStates, StateReader, Transition};
use crate::batch::{Column, RowIdx};

#[derive(Debug, Default)]
pub(super) struct Counts {
    counts: Vec<i64>,
}

impl Counts {
    /// count(*): every row, NULL or not.
    pub(super) fn count_rows(&mut self, groups: &[u32]) {
        groups.iter().for_each(|&g| self.counts[g as usize] += 1);
    }
}

impl GroupStates for Counts {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.counts, n, room, 0);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        _col: &Column,
    ) -> Result<(), AggError> {
        live.for_each(|(g, _)| self.counts[g] += 1);
        Ok(())
    }

    fn update_one_group(&mut self, g: usize, rows: &[RowIdx], col: &Column) -> bool {
        self.counts[g] += rows.iter().filter(|&&r| col.is_valid(r as usize)).count() as i64;
        true
    }

    fn result(&self, g: usize, _t: Transition) -> AggResult<'_> {
        AggResult::Int(self.counts[g])
    }

    fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.counts[g].to_le_bytes());
    }

    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, _row: RowIdx) -> Option<Result<(), AggError>> {
        self.counts[g] += rd.i64()?;
        Some(Ok(()))
    }

    fn bytes_used(&self) -> usize {
        self.counts.capacity() * 8
    }
}

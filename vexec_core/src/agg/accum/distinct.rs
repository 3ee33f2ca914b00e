//! Aggregates over DISTINCT values: count(DISTINCT x) of any key kind,
//! and sum/avg(DISTINCT x) of integers. Each keeps the (group, value) pairs
//! it has seen; a pair met for the first time is a new distinct value of
//! its group. None has a partial state (PostgreSQL has none either: the
//! serial aggregate stays in parallel plans).

use super::{grow, AggError, AggResult, GroupStates, StateReader, Transition};
use crate::agg::groups::{GroupTable, KeyKind};
use crate::batch::{Column, PhysType, RowIdx, Values};

type SeenInts = hashbrown::HashSet<(u32, i64), foldhash::fast::FixedState>;

fn seen_ints() -> SeenInts {
    SeenInts::with_hasher(foldhash::fast::FixedState::with_seed(0x6469_7374))
}

/// count(DISTINCT x) of any kind the group table keys on: (group, value)
/// pairs in a group table of their own.
#[derive(Debug)]
pub(super) struct DistinctValues {
    counts: Vec<i64>,
    seen: Box<GroupTable>,
}

impl DistinctValues {
    pub(super) fn new(kind: KeyKind) -> DistinctValues {
        // (A Collated argument comes as its sort keys.)
        DistinctValues { counts: vec![], seen: Box::new(GroupTable::new(&[KeyKind::Int, kind.compared()])) }
    }
}

/// count(DISTINCT x) of integer-like values.
#[derive(Debug)]
pub(super) struct DistinctInts {
    counts: Vec<i64>,
    seen: SeenInts,
}

impl Default for DistinctInts {
    fn default() -> DistinctInts {
        DistinctInts { counts: vec![], seen: seen_ints() }
    }
}

/// sum/avg(DISTINCT x) of integers: per group the sum and count of its
/// distinct values.
#[derive(Debug)]
pub(super) struct DistinctSum {
    seen: SeenInts,
    sums: Vec<i128>,
    counts: Vec<i64>,
}

impl Default for DistinctSum {
    fn default() -> DistinctSum {
        DistinctSum { seen: seen_ints(), sums: vec![], counts: vec![] }
    }
}

/// What the three share: no partial state.
macro_rules! no_partial_state {
    () => {
        fn serialize(&self, _g: usize, _out: &mut Vec<u8>) {
            panic!("a DISTINCT aggregate has no partial state")
        }

        fn combine(
            &mut self,
            _g: usize,
            _rd: &mut StateReader<'_>,
            _row: RowIdx,
        ) -> Option<Result<(), AggError>> {
            None
        }
    };
}

impl GroupStates for DistinctValues {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.counts, n, room, 0);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        let (gs, rs): (Vec<u32>, Vec<RowIdx>) = live.map(|(g, r)| (g as u32, r as RowIdx)).unzip();
        // The pairs as a two-column key: the group number, then the value.
        let mut group_col = Column::new(PhysType::I64, col.len());
        if let Values::I64(v) = &mut group_col.values {
            for (&g, &r) in gs.iter().zip(&rs) {
                v[r as usize] = g as i64;
            }
        }
        let before = self.seen.len();
        let mut ids = Vec::with_capacity(rs.len());
        // SAFETY: the caller vouches for the argument's varlenas; the group
        // column is by value.
        unsafe { self.seen.assign(&[&group_col, col], &rs, &mut ids) };
        // Ids at or past `before` that are first met here are new pairs.
        let mut next = before as u32;
        for (&id, &g) in ids.iter().zip(&gs) {
            if id == next {
                self.counts[g as usize] += 1;
                next += 1;
            }
        }
        Ok(())
    }

    fn result(&self, g: usize, _t: Transition) -> AggResult<'_> {
        AggResult::Int(self.counts[g])
    }

    no_partial_state!();

    fn bytes_used(&self) -> usize {
        self.counts.capacity() * 8 + self.seen.bytes_used()
    }
}

impl GroupStates for DistinctInts {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.counts, n, room, 0);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        let (counts, seen) = (&mut self.counts, &mut self.seen);
        for_ints!(&col.values, live, |g, _r, x| {
            counts[g] += seen.insert((g as u32, x)) as i64;
        });
        Ok(())
    }

    fn result(&self, g: usize, _t: Transition) -> AggResult<'_> {
        AggResult::Int(self.counts[g])
    }

    no_partial_state!();

    fn bytes_used(&self) -> usize {
        // 16-byte entries and a control byte each.
        self.counts.capacity() * 8 + self.seen.capacity() * 17
    }
}

impl GroupStates for DistinctSum {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.sums, n, room, 0);
        grow(&mut self.counts, n, room, 0);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        let (seen, sums, counts) = (&mut self.seen, &mut self.sums, &mut self.counts);
        for_ints!(&col.values, live, |g, _r, x| {
            if seen.insert((g as u32, x)) {
                sums[g] += x as i128;
                counts[g] += 1;
            }
        });
        Ok(())
    }

    fn result(&self, g: usize, t: Transition) -> AggResult<'_> {
        match (self.counts[g], t) {
            (0, _) => AggResult::Null,
            // (int8 wrapping, as SumInt)
            (_, Transition::SumDistinctInt) => AggResult::Int(self.sums[g] as i64),
            (_, Transition::AvgDistinctInt) => {
                AggResult::NumericAvg { sum: self.sums[g], count: self.counts[g] }
            }
            _ => AggResult::Numeric(self.sums[g]),
        }
    }

    no_partial_state!();

    fn bytes_used(&self) -> usize {
        self.seen.capacity() * 17 + self.sums.capacity() * 16 + self.counts.capacity() * 8
    }
}

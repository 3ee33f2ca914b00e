//! Aggregation on batches: the group table of a hashed aggregate and the
//! vectorized transitions. The executor node (VecAgg) binds them to
//! PostgreSQL's aggregates by OID; everything here is pure computation.

pub mod accum;
pub mod budget;
pub mod collated;
pub mod distinct_rows;
pub mod encoded;
pub mod groups;
mod int_index;
mod open_index;
mod pair_index;
pub mod state_bytes;

pub use accum::{Accumulator, AggError, AggResult, MomentsFinal, TextOrder, Transition};
pub use groups::{interval_span, table_layout, GroupTable, KeyKind, NO_GROUP};

/// The largest group count in `lo..=hi` whose memory `fits` (a test that
/// holds up to some count and fails past it), or None when even `lo` does
/// not fit: how far a table within a budget may grow.
pub fn largest_within(lo: usize, hi: usize, fits: impl Fn(usize) -> bool) -> Option<usize> {
    if lo > hi || !fits(lo) {
        return None;
    }
    let (mut good, mut bad) = (lo, hi + 1);
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if fits(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Some(good)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_within_finds_the_edge() {
        assert_eq!(largest_within(10, 100, |t| t <= 37), Some(37));
        assert_eq!(largest_within(10, 100, |_| true), Some(100));
        assert_eq!(largest_within(10, 100, |t| t < 10), None);
        assert_eq!(largest_within(10, 10, |t| t == 10), Some(10));
        // An int-keyed table (9 bytes a group: the normalised key, plus the
        // index; no stored hash) whose index doubles past 12,288 groups: a
        // budget 1,000 bytes above 12,288 groups stops at 12,288, not 111
        // groups further.
        let t = GroupTable::new(&[KeyKind::Int]);
        let budget = t.bytes_at(12_288, &[]) + 1000;
        assert_eq!(t.bytes_at(12_288, &[]) - t.bytes_at(12_287, &[]), 9);
        assert_eq!(largest_within(1024, 40_000, |n| t.bytes_at(n, &[]) <= budget), Some(12_288));
    }
}

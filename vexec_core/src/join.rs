//! The pure parts of VecHashJoin: join types and what they return, row ids
//! of held inner batches, and the chains of inner rows per key.
//!
//! The join holds the inner side as batches; a row is named by a row id,
//! `batch << ROW_BITS | row`. The group table gives each distinct key a
//! group number; `KeyChains` links the rows of each group:
//!
//! ```text
//!   inner rows (batch 0):  r0 key A, r1 key B, r2 key A, r3 key A
//!   groups:                A = 0, B = 1
//!   heads[group]:          heads[0] = r0, heads[1] = r1
//!   next[row id]:          next[r0] = r2, next[r2] = r3, next[r3] = NO_ROW,
//!                          next[r1] = NO_ROW
//! ```
//!
//! A probe row of key A walks r0, r2, r3: a batch's rows of a key in input
//! order (the chain is built from the batch's last row backwards); the rows
//! of a batch linked later come before them.

use crate::batch::RowIdx;

/// The join types VecHashJoin runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinType {
    Inner,
    Left,
    Full,
    Right,
    Semi,
    Anti,
}

impl JoinType {
    /// From PostgreSQL's `JoinType` value (JOIN_INNER = 0, JOIN_LEFT,
    /// JOIN_FULL, JOIN_RIGHT, JOIN_SEMI, JOIN_ANTI = 5; the extension
    /// asserts these values against the server's headers). None for the
    /// others (unique-ified, right semi/anti), which VecHashJoin does not run.
    pub fn from_pg(code: u32) -> Option<JoinType> {
        Some(match code {
            0 => JoinType::Inner,
            1 => JoinType::Left,
            2 => JoinType::Full,
            3 => JoinType::Right,
            4 => JoinType::Semi,
            5 => JoinType::Anti,
            _ => return None,
        })
    }

    /// Unmatched outer rows are returned (null-extended, or alone for anti).
    pub fn keeps_outer(self) -> bool {
        matches!(self, JoinType::Left | JoinType::Full | JoinType::Anti)
    }

    /// Unmatched inner rows are returned (after the outer side ends).
    pub fn keeps_inner(self) -> bool {
        matches!(self, JoinType::Right | JoinType::Full)
    }

    /// An outer row is done at its first match (semi: returned once; anti:
    /// not returned).
    pub fn stops_at_first_match(self) -> bool {
        matches!(self, JoinType::Semi | JoinType::Anti)
    }

    /// As EXPLAIN names it.
    pub fn name(self) -> &'static str {
        match self {
            JoinType::Inner => "Inner",
            JoinType::Left => "Left",
            JoinType::Full => "Full",
            JoinType::Right => "Right",
            JoinType::Semi => "Semi",
            JoinType::Anti => "Anti",
        }
    }
}

/// Bits of a row id that number the row within its batch (a batch holds
/// up to 1,024 rows).
pub const ROW_BITS: u32 = 10;
/// No row: the end of a chain.
pub const NO_ROW: u32 = u32::MAX;

/// The row id of row `row` of held batch `batch`.
pub fn row_id(batch: u32, row: u32) -> u32 {
    debug_assert!(row < 1 << ROW_BITS);
    (batch << ROW_BITS) | row
}

/// The held batch and row of row id `id`.
pub fn split_row_id(id: u32) -> (usize, usize) {
    ((id >> ROW_BITS) as usize, (id & ((1 << ROW_BITS) - 1)) as usize)
}

/// The rows of each key group, linked (see the module comment).
#[derive(Debug, Default)]
pub struct KeyChains {
    /// Per group, its first row id.
    heads: Vec<u32>,
    /// Per row id, the next row id of its group.
    next: Vec<u32>,
}

impl KeyChains {
    /// Link the rows `rows` of held batch `batch` (row `r` at position
    /// `base + r` of the batch), of groups `groups` (`ngroups` in all):
    /// each group's rows of this batch in input order, in front of the rows
    /// linked before.
    pub fn link_batch(&mut self, batch: u32, base: u32, rows: &[RowIdx], groups: &[u32], ngroups: usize) {
        self.heads.resize(ngroups, NO_ROW);
        let first = row_id(batch, 0) as usize;
        self.next.resize(self.next.len().max(first + (1 << ROW_BITS)), NO_ROW);
        // Backwards, so that a group's rows of this batch come in input order.
        for (&r, &g) in rows.iter().zip(groups).rev() {
            let id = row_id(batch, base + r as u32);
            self.next[id as usize] = self.heads[g as usize];
            self.heads[g as usize] = id;
        }
    }

    /// The first row id of group `group` (NO_ROW: none).
    pub fn head(&self, group: u32) -> u32 {
        self.heads.get(group as usize).copied().unwrap_or(NO_ROW)
    }

    /// The row id after `id` in its group's chain (NO_ROW at the end).
    pub fn next(&self, id: u32) -> u32 {
        self.next[id as usize]
    }

    /// Row ids the chains have room for.
    pub fn slots(&self) -> usize {
        self.next.capacity()
    }

    /// Make room for `groups` groups and `slots` row ids.
    pub fn reserve(&mut self, groups: usize, slots: usize) {
        self.heads.reserve_exact(groups.saturating_sub(self.heads.len()));
        self.next.reserve_exact(slots.saturating_sub(self.next.len()));
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        (self.heads.capacity() + self.next.capacity()) * 4
    }

    /// Bytes held with room for `groups` groups and `slots` row ids.
    pub fn bytes_at(&self, groups: usize, slots: usize) -> usize {
        (self.heads.capacity().max(groups) + self.next.capacity().max(slots)) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(c: &KeyChains, g: u32) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut id = c.head(g);
        while id != NO_ROW {
            out.push(split_row_id(id));
            id = c.next(id);
        }
        out
    }

    #[test]
    fn a_keys_rows_of_a_batch_come_in_input_order() {
        // The module comment's example.
        let mut c = KeyChains::default();
        c.link_batch(0, 0, &[0, 1, 2, 3], &[0, 1, 0, 0], 2);
        assert_eq!(chain(&c, 0), vec![(0, 0), (0, 2), (0, 3)]);
        assert_eq!(chain(&c, 1), vec![(0, 1)]);
        assert_eq!(c.head(7), NO_ROW, "a group never linked has no rows");
    }

    #[test]
    fn later_batches_go_in_front_and_rows_skip_unkeyed_ones() {
        let mut c = KeyChains::default();
        c.link_batch(0, 0, &[0, 2], &[0, 0], 1);
        // Batch 1: rows 1 and 3 have keys (0 has a NULL key, never linked).
        c.link_batch(1, 0, &[1, 3], &[0, 1], 2);
        assert_eq!(chain(&c, 0), vec![(1, 1), (0, 0), (0, 2)]);
        assert_eq!(chain(&c, 1), vec![(1, 3)]);
        // A batch appended to the last held one: rows from `base` on.
        c.link_batch(1, 4, &[0], &[1], 2);
        assert_eq!(chain(&c, 1), vec![(1, 4), (1, 3)]);
    }

    #[test]
    fn row_ids_round_trip_and_room_is_counted() {
        for (b, r) in [(0u32, 0u32), (3, 1023), (4_000_000, 17)] {
            assert_eq!(split_row_id(row_id(b, r)), (b as usize, r as usize));
        }
        let mut c = KeyChains::default();
        c.reserve(10, 2048);
        assert!(c.slots() >= 2048);
        assert!(c.bytes() >= (10 + 2048) * 4);
        assert!(c.bytes_at(100, 4096) >= (100 + 4096) * 4);
    }

    #[test]
    fn join_types_return_what_postgresql_returns() {
        let all: Vec<JoinType> = (0..6).map(|c| JoinType::from_pg(c).unwrap()).collect();
        let outer: Vec<&str> = all.iter().filter(|j| j.keeps_outer()).map(|j| j.name()).collect();
        let inner: Vec<&str> = all.iter().filter(|j| j.keeps_inner()).map(|j| j.name()).collect();
        let first: Vec<&str> = all.iter().filter(|j| j.stops_at_first_match()).map(|j| j.name()).collect();
        assert_eq!(outer, ["Left", "Full", "Anti"]);
        assert_eq!(inner, ["Full", "Right"]);
        assert_eq!(first, ["Semi", "Anti"]);
        assert_eq!(JoinType::from_pg(6), None);
    }
}

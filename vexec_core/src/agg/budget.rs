//! How a hashed aggregate stays within `hash_mem`: before each batch, room
//! for the groups the batch may add, or freezing the table (the batch's new
//! groups then go to spill files). VecAgg's executor measures the memory;
//! the decision is here.

use super::largest_within;
use crate::spill::MAX_LEVEL;

/// What the group table does before a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Room {
    /// It has room for every row of the batch starting a group.
    Enough,
    /// Reserve room for this many groups (at least the groups the batch may
    /// reach).
    Reserve(usize),
    /// The table takes no new group from here: their rows spill.
    Freeze,
}

/// The table and states before a batch.
#[derive(Debug, Clone, Copy)]
pub struct TableNow {
    /// Groups in the table, and how many it has room for.
    pub groups: usize,
    pub room: usize,
    /// Bytes of the table, and of the table with the states (accumulators,
    /// host keys, fmgr states).
    pub table_bytes: usize,
    pub used_bytes: usize,
    /// Whether the batch's key bytes need room the table has not.
    pub needs_key_room: bool,
    /// The table's recursion level (0: the input; more: a spilled partition).
    pub level: u32,
}

/// Room for a batch of `rows` rows that may each start a group, within
/// `budget` bytes: doubling while that fits, then only up to the budget.
/// `table_bytes_at(t)` is the table's size with room for `t` groups (its
/// index grows by powers of two, so it is asked, not extrapolated); the
/// states are taken to grow in proportion to the room. A partition at the
/// last recursion level reserves what it needs whatever the budget: another
/// level would not split it (see `spill::MAX_LEVEL`).
pub fn room_for_batch(
    now: TableNow,
    rows: usize,
    budget: usize,
    table_bytes_at: impl Fn(usize) -> usize,
) -> Room {
    let (n, room) = (now.groups, now.room);
    if n + rows <= room && !now.needs_key_room {
        return Room::Enough;
    }
    // Key bytes alone may be short: room for them, the groups as they are.
    let wanted = if n + rows <= room { room } else { (2 * room).max(n + rows).max(1024) };
    let target = if room == 0 {
        wanted
    } else {
        let states_per_group = now.used_bytes.saturating_sub(now.table_bytes) as f64 / room as f64;
        let bytes_at = |t: usize| table_bytes_at(t) + (states_per_group * t.max(room) as f64) as usize;
        largest_within(n + rows, wanted, |t| bytes_at(t) <= budget).unwrap_or(0)
    };
    if target >= n + rows || now.level >= MAX_LEVEL {
        Room::Reserve(target.max(n + rows))
    } else {
        Room::Freeze
    }
}

/// After a batch: whether a table that took no new groups but grew anyway
/// (DISTINCT sets, text extremes, fmgr states) must freeze.
pub fn must_freeze(used_bytes: usize, budget: usize, frozen: bool, level: u32) -> bool {
    used_bytes > budget && !frozen && level < MAX_LEVEL
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of 16 bytes a group of room.
    fn table(t: usize) -> usize {
        16 * t
    }

    fn now(groups: usize, room: usize, states: usize) -> TableNow {
        TableNow {
            groups,
            room,
            table_bytes: table(room),
            used_bytes: table(room) + states,
            needs_key_room: false,
            level: 0,
        }
    }

    #[test]
    fn a_batch_that_fits_needs_nothing() {
        assert_eq!(room_for_batch(now(10, 2048, 0), 1024, 1 << 20, table), Room::Enough);
    }

    #[test]
    fn an_empty_table_starts_at_1024_groups_or_the_batch() {
        assert_eq!(room_for_batch(now(0, 0, 0), 1024, 1 << 20, table), Room::Reserve(1024));
        assert_eq!(room_for_batch(now(0, 0, 0), 7, 1 << 20, table), Room::Reserve(1024));
    }

    #[test]
    fn room_doubles_while_within_the_budget_then_stops_at_it() {
        // 2,048 groups of room, full; states 16 bytes a group: 32 bytes a group.
        let full = now(2048, 2048, 16 * 2048);
        assert_eq!(room_for_batch(full, 1024, 1 << 20, table), Room::Reserve(4096));
        // A budget of 100,000 bytes: 3,125 groups fit, not 4,096.
        assert_eq!(room_for_batch(full, 1024, 100_000, table), Room::Reserve(3125));
    }

    #[test]
    fn past_the_budget_the_table_freezes_but_not_at_the_last_level() {
        let full = now(2048, 2048, 16 * 2048);
        // 2,048 + 1,024 groups need 98,304 bytes.
        assert_eq!(room_for_batch(full, 1024, 90_000, table), Room::Freeze);
        let last = TableNow { level: MAX_LEVEL, ..full };
        assert_eq!(room_for_batch(last, 1024, 90_000, table), Room::Reserve(3072));
    }

    #[test]
    fn key_bytes_alone_ask_for_room_without_more_groups() {
        let keys = TableNow { needs_key_room: true, ..now(10, 2048, 0) };
        assert_eq!(room_for_batch(keys, 100, 1 << 20, table), Room::Reserve(2048));
    }

    #[test]
    fn growth_without_new_groups_freezes_once() {
        assert!(must_freeze(101, 100, false, 0));
        assert!(!must_freeze(101, 100, true, 0), "already frozen");
        assert!(!must_freeze(100, 100, false, 0), "at the budget");
        assert!(!must_freeze(101, 100, false, MAX_LEVEL), "the last level");
    }
}

//! VecAgg's memory budget and spill driver: room for new groups within
//! hash_mem, freezing the table past it, partitions aggregated in turn.

#[allow(unused_imports)]
use super::*;
use vexec_core::agg::budget::{must_freeze, room_for_batch, Room, TableNow};

impl AggState {
    /// Bytes held by the group table, the accumulators and fmgr states.
    pub(super) fn memory_used(&self) -> usize {
        let Some(g) = &self.grouping else { return 0 };
        g.table.bytes_used()
            + g.host_keys.iter().flatten().map(HostKeys::bytes_used).sum::<usize>()
            + self.accs.iter().map(Accumulator::bytes_used).sum::<usize>()
            + self.fmgr.iter().flatten().map(FmgrAgg::bytes_used).sum::<usize>()
    }

    /// Before a batch of `r` rows that may each start a group: room for
    /// them in the table and the states, by doubling while that stays
    /// within the budget and then only up to it. When even that is too
    /// little the table is frozen (the batch's new groups spill). Checking
    /// only after each batch, with vectors that all double at once,
    /// overshot hash_mem by half.
    pub(super) unsafe fn make_room(&mut self, r: usize, incoming: &[usize]) {
        let used = self.memory_used();
        let Some(g) = &mut self.grouping else { return };
        if g.frozen {
            return;
        }
        let now = TableNow {
            groups: g.table.len(),
            room: g.table.room(),
            table_bytes: g.table.bytes_used(),
            used_bytes: used,
            needs_key_room: g.table.needs_key_room(incoming),
            level: g.level,
        };
        match room_for_batch(now, r, g.budget, |t| g.table.bytes_at(t, incoming)) {
            Room::Enough => {}
            Room::Reserve(groups) => g.table.reserve_groups(groups, incoming),
            // SAFETY: the node is running (caller's contract): its query context is live for the
            // spill files.
            Room::Freeze => unsafe { self.freeze() },
        }
    }

    /// The table takes no new groups from here: their rows go to files.
    pub(super) unsafe fn freeze(&mut self) {
        let Some(g) = &mut self.grouping else { return };
        g.frozen = true;
        // SAFETY: query_cxt is the node's live query-lifetime context; the switch is undone below.
        let old = unsafe { pg_sys::MemoryContextSwitchTo(self.query_cxt) };
        // SAFETY: in the query context (switched to above), on the backend's main thread.
        g.spill = (0..SPILL_FANOUT).map(|_| unsafe { SpillFile::create() }).collect();
        // SAFETY: restores the context saved above.
        unsafe { pg_sys::MemoryContextSwitchTo(old) };
        self.stats.spill_files += SPILL_FANOUT as u64;
    }

    /// Freeze the table once it and the accumulators outgrow the budget
    /// anyway (states that grow without new groups: DISTINCT sets, text
    /// extremes, fmgr states).
    pub(super) unsafe fn check_memory(&mut self) {
        let used = self.memory_used();
        self.stats.peak_memory = self.stats.peak_memory.max(used);
        let Some(g) = &self.grouping else { return };
        if must_freeze(used, g.budget, g.frozen, g.level) {
            // SAFETY: as in make_room.
            unsafe { self.freeze() };
        }
    }

    /// The current input is consumed: its spill files wait their turn.
    pub(super) unsafe fn input_done(&mut self) {
        self.stage = Stage::Returning;
        // DISTINCT aggregates through fmgr take their rows now, sorted.
        for f in self.fmgr.iter_mut().flatten() {
            // SAFETY: the fmgr aggregate's collected rows are still live (its context is reset only
            // after this).
            unsafe { f.finish_distinct() };
        }
        let Some(g) = &mut self.grouping else { return };
        let level = g.level + 1;
        for mut f in std::mem::take(&mut g.spill) {
            self.stats.spilled_bytes += f.bytes;
            if f.rows == 0 {
                // SAFETY: f is one of this state's files, closed once (it is dropped here).
                unsafe { f.close() };
            } else {
                // SAFETY: f is one of this state's open files.
                unsafe { f.rewind() };
                g.pending.push((f, level));
            }
        }
    }

    /// Start on the next spilled partition: a fresh table and accumulators,
    /// fed from the file. False when none is left.
    pub(super) unsafe fn next_partition(&mut self) -> bool {
        // SAFETY: the pending files are this state's own; the batch context is live.
        unsafe {
            let Some(g) = &mut self.grouping else { return false };
            let Some((mut file, level)) = g.pending.pop() else { return false };
            g.restart(level);
            let (types, fixed) = (g.types.clone(), g.fixed.clone());
            self.accs = new_accumulators(&self.items, false);
            self.fmgr.iter_mut().flatten().for_each(FmgrAgg::restart);
            let mut buf = Vec::new();
            let mut groups = Vec::new();
            while let Some(batch) = file.read(&types, &fixed, &mut buf) {
                check_for_interrupts!();
                let rows: Vec<RowIdx> = (0..batch.len as RowIdx).collect();
                self.feed(&batch.columns, &rows, &mut groups);
            }
            file.close();
            self.input_done();
            true
        }
    }

    /// Close every temporary file (normal end or rescan; after an ERROR the
    /// resource owner has closed them).
    pub(super) unsafe fn close_files(&mut self) {
        if let Some(g) = &mut self.grouping {
            for f in std::mem::take(&mut g.spill) {
                // SAFETY: the files are this state's own and each is closed once (taken out of the
                // state).
                unsafe { f.close() };
            }
            for (f, _) in std::mem::take(&mut g.pending) {
                // SAFETY: as above.
                unsafe { f.close() };
            }
        }
    }
}

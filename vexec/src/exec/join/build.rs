//! VecHashJoin's build side: holding inner batches in the table, its
//! memory budget, and partitioning both sides to files past hash_mem
//! (see the module comment of `exec::join`).

#[allow(unused_imports)]
use super::*;

/// Make the varlena values of `rows` plain (detoasted) in the current
/// memory context, so keys can be hashed and rows written to files.
pub(super) unsafe fn detoast(s: &Side, columns: &mut [Column], rows: &[RowIdx]) {
    for (c, col) in columns.iter_mut().enumerate() {
        if s.src.by_ref[c] != Some(-1) {
            continue;
        }
        let Values::Datum(v) = &mut col.values else { continue };
        let values = v.as_mut_ptr();
        let validity = col.validity.as_bytes().as_ptr();
        // SAFETY: values and validity point into this column for its length; rows are indexes below
        // it; by_ref says the column holds varlenas. The shim's detoast can ERROR, through its
        // guarded declaration.
        unsafe { shim::vx_detoast(values, validity, rows.len() as i32, rows.as_ptr()) };
    }
}

/// The rows of `rows` whose keys are all non-NULL.
pub(super) fn keyed_rows(columns: &[Column], keys: &[usize], rows: &[RowIdx]) -> Vec<RowIdx> {
    // (NOT NULL keys: no row to test)
    if keys.iter().all(|&k| columns[k].validity.all_set()) {
        return rows.to_vec();
    }
    rows.iter().copied().filter(|&r| keys.iter().all(|&k| columns[k].is_valid(r as usize))).collect()
}

/// A batch of only `rows`, in order.
pub(super) fn compact(columns: &[Column], rows: &[RowIdx]) -> Vec<Column> {
    columns
        .iter()
        .map(|c| {
            let mut out = Column::new(c.values.phys_type(), rows.len());
            for (i, &r) in rows.iter().enumerate() {
                let r = r as usize;
                if c.is_valid(r) {
                    out.values.set_datum(i, c.values.datum(r));
                } else {
                    out.validity.set(i, false);
                }
            }
            out
        })
        .collect()
}

pub(super) fn columns_bytes(columns: &[Column]) -> usize {
    columns.iter().map(|c| c.len() * c.values.width() + c.len().div_ceil(8)).sum()
}

impl JoinState {
    /// Whether a batch of `len` inner rows whose values live in the rows
    /// context can be appended to the last held batch rather than held on
    /// its own: a filtered scan gives batches of a few rows, and each held
    /// batch reserves a chain slot for every row id it could have.
    pub(super) fn fits_last(&self, len: usize, columns: &[Column]) -> bool {
        let (Some(last), Some(&have)) = (self.table.batches.last(), self.table.lens.last()) else {
            return false;
        };
        last._spilled.is_none()
            && have + len <= BATCH_CAPACITY
            && last.columns.iter().zip(columns).all(|(a, b)| a.values.phys_type() == b.values.phys_type())
    }

    /// Add a batch of inner rows (plain values, held by `held`) to the table,
    /// appended to the last held batch when `merge` (see [`Self::fits_last`]).
    pub(super) unsafe fn insert(&mut self, held: Held, len: usize, merge: bool) {
        // SAFETY: this function's contract: the batch's values are plain and held by `held`, which
        // the table keeps alive with them.
        unsafe {
            let (b, base) = if merge {
                let b = self.table.batches.len() - 1;
                (b as u32, self.table.lens[b] as u32)
            } else {
                (self.table.batches.len() as u32, 0)
            };
            let rows = vexec_core::batch::full_selection(len);
            let keyed = keyed_rows(&held.columns, &self.inner.keys, &rows);
            let mut groups = Vec::new();
            let keys = self.inner.key_columns(&held.columns, &keyed);
            let cols: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
            self.table.groups.assign(&cols, &keyed, &mut groups);
            let ngroups = self.table.groups.len();
            self.table.chains.link_batch(b, base, &keyed, &groups, ngroups);
            if self.jointype.keeps_inner() {
                self.table.matched.resize(row_id(b, 0) as usize + BATCH_CAPACITY, false);
            }
            self.table.bytes +=
                columns_bytes(&held.columns) + held._spilled.as_ref().map_or(0, |s| s.arena_bytes());
            self.table.rows += len as u64;
            if merge {
                let last = &mut self.table.batches[b as usize];
                for (into, col) in last.columns.iter_mut().zip(&held.columns) {
                    let same_type = into.append(col);
                    debug_assert!(same_type, "fits_last checked the types");
                }
                self.table.lens[b as usize] += len;
            } else {
                self.table.batches.push(held);
                self.table.lens.push(len);
            }
        }
    }

    pub(super) unsafe fn memory(&self) -> usize {
        // SAFETY: data_cxt is this state's live memory context.
        unsafe { self.table.memory() + pg_sys::MemoryContextMemAllocated(self.data_cxt, true) }
    }

    /// Room in the table for one more inner batch of `len` rows whose
    /// values take `incoming` bytes, within hash_mem: the group table and
    /// the chains grow by doubling while that fits and then only as far as
    /// this batch needs (growing after the insert, as vectors do by
    /// themselves, overran hash_mem by up to half). False when even that
    /// does not fit: the caller spills.
    pub(super) unsafe fn make_room(
        &mut self,
        columns: &[Column],
        len: usize,
        incoming: usize,
        merge: bool,
    ) -> bool {
        // SAFETY: as memory().
        let used = unsafe { self.memory() };
        let marks = self.jointype.keeps_inner();
        let key_bytes = if self.table.groups.stores_bytes() {
            let rows = vexec_core::batch::full_selection(len);
            let keyed = keyed_rows(columns, &self.inner.keys, &rows);
            // SAFETY: the inner batch's key varlenas are plain (the caller detoasted them).
            let keys = unsafe { self.inner.key_columns(columns, &keyed) };
            let cols: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
            // SAFETY: the key columns just made hold plain values for the keyed rows.
            unsafe { self.table.groups.key_bytes(&cols, &keyed) }
        } else {
            Vec::new()
        };
        let t = &self.table;
        // A new block of the rows context may come with the batch.
        let others = used.saturating_sub(t.vector_bytes()) + incoming + self.block_bytes;
        let fits = |groups: usize, slots: usize| {
            others + t.vector_bytes_at(groups, slots, marks, &key_bytes) <= self.budget
        };
        let (groups_needed, room) = (t.groups.len() + len, t.groups.room());
        let slots_needed = (t.batches.len() + usize::from(!merge)) << ROW_BITS;
        if !fits(groups_needed, slots_needed) {
            return false;
        }
        let groups = if groups_needed > room {
            largest_within(groups_needed, (2 * room).max(groups_needed).max(1024), |g| fits(g, slots_needed))
                .unwrap_or(groups_needed)
        } else {
            room
        };
        let slots = if slots_needed > t.chains.slots() {
            largest_within(slots_needed, (2 * t.chains.slots()).max(slots_needed), |s| fits(groups, s))
                .unwrap_or(slots_needed)
        } else {
            slots_needed
        };
        let t = &mut self.table;
        t.groups.reserve_groups(groups, &key_bytes);
        t.chains.reserve(groups, slots);
        if marks {
            t.matched.reserve_exact(slots.saturating_sub(t.matched.len()));
        }
        true
    }

    /// Read the inner child into the table, or into partition files once
    /// it outgrows hash_mem.
    pub(super) unsafe fn build(&mut self) {
        // SAFETY: the join has begun (caller's contract); the inner child and the shared state,
        // when set, are this node's.
        unsafe {
            if !self.shared.is_null() {
                return self.build_shared();
            }
            let per_batch = self.batch_cxt;
            let mut files: Option<Vec<SpillFile>> = None;
            loop {
                check_for_interrupts!();
                pg_sys::MemoryContextReset(per_batch);
                // (The child runs in the caller's memory context: it keeps
                // state across calls.)
                let next = self.inner.src.next(per_batch);
                let Some((mut columns, rows)) = next else { break };
                self.stats.build_batches += 1;
                self.stats.build_rows += rows.len() as u64;
                // Rows with a NULL key only matter to joins that return
                // unmatched inner rows.
                let rows = if self.jointype.keeps_inner() {
                    rows
                } else {
                    keyed_rows(&columns, &self.inner.keys, &rows)
                };
                if rows.is_empty() {
                    continue;
                }
                self.inner_empty = false;
                let old = pg_sys::MemoryContextSwitchTo(per_batch);
                detoast(&self.inner, &mut columns, &rows);
                pg_sys::MemoryContextSwitchTo(old);
                if let Some(f) = files.as_mut() {
                    self.write_partitioned(f, true, &columns, &rows, 0);
                    continue;
                }
                let mut compacted = compact(&columns, &rows);
                let rows_all = vexec_core::batch::full_selection(compacted.first().map_or(0, |c| c.len()));
                let incoming = columns_bytes(&compacted) + self.inner.src.by_ref_bytes(&compacted, &rows_all);
                let merge = self.fits_last(rows.len(), &compacted);
                if !self.make_room(&compacted, rows.len(), incoming, merge) {
                    // The table to files, and this batch after it.
                    let mut f = self.spill_table(0);
                    self.write_partitioned(&mut f, true, &columns, &rows, 0);
                    files = Some(f);
                    continue;
                }
                self.inner.src.copy_by_ref(&mut compacted, &rows_all, |_| false, self.data_cxt);
                self.insert(Held { columns: compacted, _spilled: None }, rows.len(), merge);
                self.stats.peak_memory = self.stats.peak_memory.max(self.memory());
            }
            self.finish_build(files);
        }
    }

    /// The shared build: this process's share of the inner side to its
    /// file, then, once every process that took part has written its share,
    /// all the files into this process's table (partitioned past hash_mem
    /// as the inner child would be).
    pub(super) unsafe fn build_shared(&mut self) {
        // SAFETY: self.shared points into this node's DSM segment
        // (initialize_dsm/initialize_worker), alive while the node runs.
        unsafe {
            let shared = self.shared;
            let per_batch = self.batch_cxt;
            // A process that comes after the shares were written (its
            // partial inner side would return nothing: the others ran it to
            // its end) only reads them.
            if pg_sys::BarrierAttach(&mut (*shared).barrier) == 0 {
                let slot = pg_sys::ParallelWorkerNumber + 1;
                let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
                let mut mine = SpillFile::create_shared(&mut (*shared).fileset, &share_name(slot));
                pg_sys::MemoryContextSwitchTo(old);
                loop {
                    check_for_interrupts!();
                    pg_sys::MemoryContextReset(per_batch);
                    let Some((mut columns, rows)) = self.inner.src.next(per_batch) else { break };
                    // (Only joins that return no unmatched inner row share.)
                    let rows = keyed_rows(&columns, &self.inner.keys, &rows);
                    if rows.is_empty() {
                        continue;
                    }
                    let old = pg_sys::MemoryContextSwitchTo(per_batch);
                    detoast(&self.inner, &mut columns, &rows);
                    pg_sys::MemoryContextSwitchTo(old);
                    let all: Vec<&Column> = columns.iter().collect();
                    mine.write(&all, &self.inner.fixed, &rows, &mut self.scratch);
                }
                self.stats.shared_rows = mine.rows;
                mine.close();
                pg_sys::BarrierArriveAndWait(&mut (*shared).barrier, build_wait_event());
            }
            pg_sys::BarrierDetach(&mut (*shared).barrier);

            let mut files: Option<Vec<SpillFile>> = None;
            let mut buf = Vec::new();
            for slot in 0..(*shared).slots {
                let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
                let share = SpillFile::open_shared(&mut (*shared).fileset, &share_name(slot));
                pg_sys::MemoryContextSwitchTo(old);
                let Some(mut share) = share else { continue };
                while let Some(b) = share.read(&self.inner.src.types, &self.inner.fixed, &mut buf) {
                    check_for_interrupts!();
                    self.stats.build_batches += 1;
                    self.stats.build_rows += b.len as u64;
                    self.inner_empty = false;
                    self.hold_read_batch(b, &mut files, 0);
                }
                share.close();
            }
            self.finish_build(files);
        }
    }

    /// Hold inner rows read back from a file (whole batches, values in the
    /// batch's arena) in the table; once the table outgrows hash_mem, it and
    /// the rows after it go to partition files at `level` (`files`), unless
    /// the partitioning is already as deep as it goes.
    pub(super) unsafe fn hold_read_batch(
        &mut self,
        mut b: SpilledBatch,
        files: &mut Option<Vec<SpillFile>>,
        level: u32,
    ) {
        // SAFETY: b's values live in its own arena, moved into the table with it or written out
        // here.
        unsafe {
            let len = b.len;
            if let Some(f) = files.as_mut() {
                self.write_partitioned(f, true, &b.columns, &vexec_core::batch::full_selection(len), level);
                return;
            }
            let incoming = columns_bytes(&b.columns) + b.arena_bytes();
            if !self.make_room(&b.columns, len, incoming, false) && level <= MAX_LEVEL {
                // The table to files, and this batch after it.
                let mut f = self.spill_table(level);
                self.write_partitioned(
                    &mut f,
                    true,
                    &b.columns,
                    &vexec_core::batch::full_selection(len),
                    level,
                );
                *files = Some(f);
                return;
            }
            let columns = std::mem::take(&mut b.columns);
            self.insert(Held { columns, _spilled: Some(b) }, len, false);
            self.stats.peak_memory = self.stats.peak_memory.max(self.memory());
        }
    }

    /// After the inner side is read: probe the table, or, if it went to
    /// partition files, partition the outer side too and join the pairs.
    pub(super) unsafe fn finish_build(&mut self, files: Option<Vec<SpillFile>>) {
        // SAFETY: the join has begun and its batch context is live (caller's contract).
        unsafe {
            let per_batch = self.batch_cxt;
            match files {
                None => {
                    self.phase = if self.inner_empty && !self.jointype.keeps_outer() {
                        Phase::Done // nothing can match and no outer row is returned alone
                    } else {
                        Phase::Probe
                    };
                    self.source = ProbeSource::Child;
                }
                Some(inner_files) => {
                    self.stats.partitioned = true;
                    // Partition the outer input too, then join file pair by pair.
                    let mut outer_files: Vec<SpillFile> = (0..FANOUT).map(|_| self.new_file()).collect();
                    loop {
                        check_for_interrupts!();
                        pg_sys::MemoryContextReset(per_batch);
                        let next = self.outer.src.next(per_batch);
                        let Some((mut columns, rows)) = next else { break };
                        self.outer.src.complete(&mut columns, &rows, per_batch);
                        let old = pg_sys::MemoryContextSwitchTo(per_batch);
                        detoast(&self.outer, &mut columns, &rows);
                        pg_sys::MemoryContextSwitchTo(old);
                        self.stats.probe_batches += 1;
                        self.stats.probe_rows += rows.len() as u64;
                        let rows = if self.jointype.keeps_outer() {
                            rows
                        } else {
                            keyed_rows(&columns, &self.outer.keys, &rows)
                        };
                        self.write_partitioned(&mut outer_files, false, &columns, &rows, 0);
                    }
                    self.queue_partitions(inner_files, outer_files, 0);
                    self.phase = Phase::NextPartition;
                }
            }
        }
    }

    pub(super) unsafe fn new_file(&self) -> SpillFile {
        // SAFETY: query_cxt is the node's query-lifetime context; the BufFile lives there until
        // closed.
        unsafe {
            let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
            let f = SpillFile::create();
            pg_sys::MemoryContextSwitchTo(old);
            f
        }
    }

    /// Write rows to `files` by the partition of their key hash at `level`
    /// (rows with a NULL key go to the first: they match nothing).
    pub(super) unsafe fn write_partitioned(
        &mut self,
        files: &mut [SpillFile],
        inner: bool,
        columns: &[Column],
        rows: &[RowIdx],
        level: u32,
    ) {
        // SAFETY: columns hold the side's batch with plain key varlenas for rows (caller's
        // contract); the files are this state's.
        unsafe {
            let s = if inner { &mut self.inner } else { &mut self.outer };
            let keys = s.key_columns(columns, rows);
            let cols: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
            let mut hashes = Vec::new();
            self.table.groups.hash_rows(&cols, rows, &mut hashes);
            let mut parts: Vec<Vec<RowIdx>> = vec![Vec::new(); FANOUT];
            for (&r, &h) in rows.iter().zip(&hashes) {
                let keyed = s.keys.iter().all(|&k| columns[k].is_valid(r as usize));
                let p = if keyed { partition_of(h, level, FANOUT) } else { 0 };
                parts[p].push(r);
            }
            let all: Vec<&Column> = columns.iter().collect();
            for (f, part) in files.iter_mut().zip(&parts) {
                let before = f.bytes;
                f.write(&all, &s.fixed, part, &mut self.scratch);
                self.stats.spilled_rows += part.len() as u64;
                self.stats.spilled_bytes += f.bytes - before;
            }
        }
    }

    /// Move the table's rows to new partition files at `level`; the table
    /// starts over empty.
    pub(super) unsafe fn spill_table(&mut self, level: u32) -> Vec<SpillFile> {
        // SAFETY: the table's held batches are alive until written out here.
        unsafe {
            let mut files: Vec<SpillFile> = (0..FANOUT).map(|_| self.new_file()).collect();
            let table = std::mem::replace(&mut self.table, Table::new(&self.kinds));
            for (held, &len) in table.batches.iter().zip(&table.lens) {
                let rows = vexec_core::batch::full_selection(len);
                self.write_partitioned(&mut files, true, &held.columns, &rows, level);
            }
            drop(table);
            pg_sys::MemoryContextReset(self.data_cxt);
            files
        }
    }

    /// Queue the file pairs that can return rows.
    pub(super) unsafe fn queue_partitions(
        &mut self,
        inner: Vec<SpillFile>,
        outer: Vec<SpillFile>,
        level: u32,
    ) {
        // SAFETY: the files are this state's own, read back or closed once.
        unsafe {
            for (i, o) in inner.into_iter().zip(outer) {
                let useful = if i.rows == 0 {
                    o.rows > 0 && self.jointype.keeps_outer()
                } else {
                    o.rows > 0 || self.jointype.keeps_inner()
                };
                if useful {
                    self.stats.partitions += 1;
                    self.pending.push(Partition { inner: i, outer: o, level });
                } else {
                    i.close();
                    o.close();
                }
            }
        }
    }

    /// Load the next queued partition's inner rows (partitioning again if
    /// they outgrow hash_mem). False when none is left.
    pub(super) unsafe fn next_partition(&mut self) -> bool {
        // SAFETY: the queued files are this state's own; interrupts are checked as partitions are
        // read.
        unsafe {
            loop {
                let Some(Partition { mut inner, mut outer, level }) = self.pending.pop() else {
                    return false;
                };
                check_for_interrupts!();
                self.table = Table::new(&self.kinds);
                pg_sys::MemoryContextReset(self.data_cxt);
                self.inner_empty = inner.rows == 0;
                inner.rewind();
                let mut buf = Vec::new();
                let mut again: Option<Vec<SpillFile>> = None;
                while let Some(b) = inner.read(&self.inner.src.types, &self.inner.fixed, &mut buf) {
                    self.hold_read_batch(b, &mut again, level + 1);
                }
                inner.close();
                match again {
                    None => {
                        outer.rewind();
                        if let ProbeSource::File(done) =
                            std::mem::replace(&mut self.source, ProbeSource::File(outer))
                        {
                            done.close();
                        }
                        return true;
                    }
                    Some(inner_files) => {
                        let mut outer_files: Vec<SpillFile> = (0..FANOUT).map(|_| self.new_file()).collect();
                        outer.rewind();
                        while let Some(b) = outer.read(&self.outer.src.types, &self.outer.fixed, &mut buf) {
                            let rows = vexec_core::batch::full_selection(b.len);
                            self.write_partitioned(&mut outer_files, false, &b.columns, &rows, level + 1);
                        }
                        outer.close();
                        self.queue_partitions(inner_files, outer_files, level + 1);
                    }
                }
            }
        }
    }
}

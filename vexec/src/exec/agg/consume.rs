//! VecAgg's input side: every batch of the child fed to the accumulators
//! by group (see the module comment of `exec::agg`).

#[allow(unused_imports)]
use super::*;

impl AggState {
    /// Feed every batch of the child to the accumulators (a Finalize
    /// reads its rows, the group keys and partial states, a batch at a time).
    pub(super) unsafe fn consume(&mut self) {
        // SAFETY: the node has begun (caller's contract): its child input and expression context
        // are live; interrupts are checked per batch.
        unsafe {
            let per_batch = (*self.econtext).ecxt_per_tuple_memory;
            let mut groups: Vec<u32> = Vec::new();
            loop {
                check_for_interrupts!();
                pg_sys::MemoryContextReset(per_batch);
                let Some((mut columns, rows)) = self.src.next(per_batch) else { break };
                self.stats.batches += 1;
                self.stats.rows += rows.len() as u64;
                self.detoast(&mut columns, &rows);
                self.feed(&columns, &rows, &mut groups);
            }
            self.input_done();
        }
    }

    /// Kernels, keys and files read the bytes of some columns: detoast
    /// them in this node's per-batch memory.
    pub(super) unsafe fn detoast(&self, columns: &mut [Column], rows: &[RowIdx]) {
        // SAFETY: econtext is the node's live expression context.
        let per_batch = unsafe { (*self.econtext).ecxt_per_tuple_memory };
        for (c, col) in columns.iter_mut().enumerate() {
            // (Fixed-length by-reference values, uuid or interval, are never toasted.)
            if !self.reads_bytes(c) || self.src.by_ref[c] != Some(-1) {
                continue;
            }
            let Values::Datum(v) = &mut col.values else { continue };
            let values = v.as_mut_ptr();
            let validity = col.validity.as_bytes().as_ptr();
            // SAFETY: per_batch is the node's live per-batch context; the switch is undone below.
            let old = unsafe { pg_sys::MemoryContextSwitchTo(per_batch) };
            // SAFETY: values and validity point into this column for its length; rows are indexes
            // below it; the column holds varlenas. The shim's detoast can ERROR, through its
            // guarded declaration.
            unsafe { shim::vx_detoast(values, validity, rows.len() as i32, rows.as_ptr()) };
            // SAFETY: restores the context saved above.
            unsafe { pg_sys::MemoryContextSwitchTo(old) };
        }
    }

    /// Whether child column `c` must hold plain varlenas: text keys and
    /// text min/max arguments (whose bytes are compared) and, when a
    /// hashed aggregate spills, every by-reference column it writes.
    pub(super) fn reads_bytes(&self, c: usize) -> bool {
        if self.split == AggSplit::Finalize && self.items.iter().any(|it| it.arg() == Some(c)) {
            return true; // partial states
        }
        match &self.grouping {
            Some(g) => g.spill_values[c],
            None => self.items.iter().zip(&self.fmgr).any(|(it, f)| {
                (it.arg() == Some(c) && reads_arg_bytes(it.transition))
                    || (it.args.contains(&c) && f.as_ref().is_some_and(FmgrAgg::is_distinct))
            }),
        }
    }

    /// Aggregate rows `rows` of `columns` (a child batch or a batch read
    /// back from a file).
    pub(super) unsafe fn feed(&mut self, columns: &[Column], rows: &[RowIdx], groups: &mut Vec<u32>) {
        // SAFETY: columns hold the batch's values for rows, their key varlenas plain (caller's
        // contract).
        unsafe {
            // Host-keyed keys as their sort keys or encodings, and their
            // values at the end.
            let host_keys: Vec<Option<Column>> = match &mut self.grouping {
                Some(g) => g
                    .host_keys
                    .iter_mut()
                    .zip(columns)
                    .map(|(s, c)| s.as_mut().map(|s| s.column(c, rows)))
                    .collect(),
                None => Vec::new(),
            };
            let keys: Vec<&Column> = host_keys
                .iter()
                .zip(columns)
                .map(|(s, c)| s.as_ref().unwrap_or(c))
                .chain(host_keys.iter().zip(columns).filter(|(s, _)| s.is_some()).map(|(_, c)| c))
                .collect();
            let incoming = match &self.grouping {
                Some(g) if !g.frozen => g.table.key_bytes(&keys, rows),
                _ => Vec::new(),
            };
            self.make_room(rows.len(), &incoming);
            // The rows the accumulators take (all but spilled ones) and their groups.
            let rows: std::borrow::Cow<'_, [RowIdx]> = match &mut self.grouping {
                None => {
                    groups.clear();
                    groups.resize(rows.len(), 0);
                    rows.into()
                }
                Some(g) => {
                    if !g.frozen {
                        let created = g.table.assign(&keys, rows, groups);
                        if created > 0 {
                            self.stats.groups += created as u64;
                            let (n, room) = (g.table.len(), g.table.room());
                            for (a, it) in self.accs.iter_mut().zip(&self.items) {
                                if it.shares.is_none() {
                                    a.ensure_groups_in(n, room);
                                }
                            }
                            self.fmgr.iter_mut().flatten().for_each(|f| f.ensure_groups_in(n, room));
                        }
                        rows.into()
                    } else {
                        // Rows of groups in the table update them; the
                        // others go to the file of their hash partition.
                        let mut hashes = Vec::new();
                        g.table.lookup(&keys, rows, groups, &mut hashes);
                        let mut parts: Vec<Vec<RowIdx>> = vec![Vec::new(); SPILL_FANOUT];
                        let mut kept_rows = Vec::with_capacity(rows.len());
                        let mut kept_groups = Vec::with_capacity(rows.len());
                        for ((&r, &grp), &h) in rows.iter().zip(groups.iter()).zip(&hashes) {
                            if grp == NO_GROUP {
                                parts[partition_of(h, g.level, SPILL_FANOUT)].push(r);
                            } else {
                                kept_rows.push(r);
                                kept_groups.push(grp);
                            }
                        }
                        let stand_ins: Vec<Column> = columns
                            .iter()
                            .zip(&g.spill_values)
                            .map(
                                |(c, &keep)| {
                                    if keep {
                                        Column::new(PhysType::Bool, 0)
                                    } else {
                                        validity_only(c)
                                    }
                                },
                            )
                            .collect();
                        let spilled: Vec<RowIdx> = parts.concat();
                        let numerics: Vec<Option<Column>> = columns
                            .iter()
                            .zip(&g.scaled)
                            .map(|(c, scale)| match (scale, &c.values) {
                                (Some(s), Values::I64(_) | Values::I128(_)) => {
                                    Some(numeric_column(c, *s, &spilled, self.econtext))
                                }
                                _ => None,
                            })
                            .collect();
                        let cols: Vec<&Column> = columns
                            .iter()
                            .zip(&stand_ins)
                            .zip(&g.spill_values)
                            .zip(&numerics)
                            .map(|(((c, s), &keep), n)| match (keep, n) {
                                (true, Some(n)) => n,
                                (true, None) => c,
                                (false, _) => s,
                            })
                            .collect();
                        for (file, part) in g.spill.iter_mut().zip(&parts) {
                            file.write(&cols, &g.fixed, part, &mut g.scratch);
                            self.stats.spilled_rows += part.len() as u64;
                        }
                        *groups = kept_groups;
                        kept_rows.into()
                    }
                }
            };
            let (mut f_groups, mut f_rows) = (Vec::new(), Vec::new());
            // count(DISTINCT x) under a nondeterministic collation counts sort keys.
            let distinct_args: Vec<Option<Column>> = self
                .distinct_host_keys
                .iter_mut()
                .zip(&self.items)
                .map(|(s, it)| s.as_mut().map(|s| s.column(&columns[it.arg().expect("an argument")], &rows)))
                .collect();
            for (((item, acc), fmgr), distinct_arg) in
                self.items.iter().zip(self.accs.iter_mut()).zip(self.fmgr.iter_mut()).zip(&distinct_args)
            {
                let arg = distinct_arg.as_ref().or(item.arg().map(|i| &columns[i]));
                let (groups, rows) = match item.filter {
                    None => (&groups[..], &rows[..]),
                    Some(f) => {
                        let Values::Bool(pass) = &columns[f].values else { panic!("a FILTER is boolean") };
                        (f_groups.clear(), f_rows.clear());
                        for (&g, &r) in groups.iter().zip(rows.iter()) {
                            if columns[f].is_valid(r as usize) && pass[r as usize] != 0 {
                                f_groups.push(g);
                                f_rows.push(r);
                            }
                        }
                        (&f_groups[..], &f_rows[..])
                    }
                };
                if item.shares.is_some() {
                    continue;
                }
                if let Some(f) = fmgr {
                    let args: Vec<&Column> = item.args.iter().map(|&i| &columns[i]).collect();
                    let old = pg_sys::MemoryContextSwitchTo((*self.econtext).ecxt_per_tuple_memory);
                    f.update(groups, rows, &args);
                    pg_sys::MemoryContextSwitchTo(old);
                    continue;
                }
                let outcome = match (self.split, arg) {
                    (AggSplit::Finalize, Some(states)) => acc.combine(groups, rows, states),
                    _ => acc.update(groups, rows, arg),
                };
                match outcome {
                    Ok(()) => {}
                    Err(AggError::FloatOverflow { .. }) => {
                        ereport!(
                            ERROR,
                            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value out of range: overflow"
                        );
                    }
                    Err(AggError::InvalidState { .. }) => {
                        ereport!(
                            ERROR,
                            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                            "a partial aggregate state of VecAgg does not read back"
                        );
                    }
                    Err(AggError::InvalidNumeric { .. }) => {
                        ereport!(
                            ERROR,
                            PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                            "invalid numeric value in an aggregate's input"
                        );
                    }
                }
            }
            self.check_memory();
        }
    }
}

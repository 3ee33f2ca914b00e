//! VecHashJoin's probe side: outer batches looked up in the table, rows
//! returned one match at a time or as batches for a vector parent.

#[allow(unused_imports)]
use super::*;

impl JoinState {
    /// The next outer batch to probe with (false at the end of the source).
    pub(super) unsafe fn next_probe_batch(&mut self) -> bool {
        // SAFETY: the join has begun (caller's contract): its outer input and batch context are
        // live.
        unsafe {
            let per_batch = self.batch_cxt;
            loop {
                check_for_interrupts!();
                pg_sys::MemoryContextReset(per_batch);
                self.probe = None;
                let (held, rows) = match &mut self.source {
                    ProbeSource::Child => {
                        let next = self.outer.src.next(per_batch);
                        let Some((mut columns, rows)) = next else { return false };
                        let old = pg_sys::MemoryContextSwitchTo(per_batch);
                        detoast_keys(&self.outer, &mut columns, &rows);
                        pg_sys::MemoryContextSwitchTo(old);
                        self.stats.probe_batches += 1;
                        self.stats.probe_rows += rows.len() as u64;
                        (Held { columns, _spilled: None }, rows)
                    }
                    ProbeSource::File(f) => {
                        let mut buf = std::mem::take(&mut self.scratch);
                        let b = f.read(&self.outer.src.types, &self.outer.fixed, &mut buf);
                        self.scratch = buf;
                        let Some(mut b) = b else { return false };
                        let rows = vexec_core::batch::full_selection(b.len);
                        (Held { columns: std::mem::take(&mut b.columns), _spilled: Some(b) }, rows)
                    }
                };
                let keyed = keyed_rows(&held.columns, &self.outer.keys, &rows);
                let keeps_outer = self.jointype.keeps_outer();
                let rows = if keeps_outer { rows } else { keyed.clone() };
                if rows.is_empty() {
                    continue;
                }
                let mut groups = Vec::new();
                let mut hashes = Vec::new();
                let keys = self.outer.key_columns(&held.columns, &keyed);
                let cols: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
                self.table.groups.lookup(&cols, &keyed, &mut groups, &mut hashes);
                // Per live row, the head of its key's chain.
                let mut heads = vec![NO_ROW; rows.len()];
                let mut k = 0;
                for (i, &r) in rows.iter().enumerate() {
                    if k < keyed.len() && keyed[k] == r {
                        if groups[k] != NO_GROUP {
                            heads[i] = self.table.chains.head(groups[k]);
                        }
                        k += 1;
                    }
                }
                // Outer rows without a match give nothing unless the join
                // keeps them: drop them here rather than step over each.
                let (rows, heads): (Vec<RowIdx>, Vec<u32>) = if keeps_outer {
                    (rows, heads)
                } else {
                    rows.iter().zip(&heads).filter(|&(_, &h)| h != NO_ROW).map(|(&r, &h)| (r, h)).unzip()
                };
                if rows.is_empty() {
                    continue;
                }
                let mut held = held;
                if matches!(self.source, ProbeSource::Child) {
                    self.outer.src.complete(&mut held.columns, &rows, per_batch);
                }
                self.probe = Some(Probe {
                    held,
                    rows,
                    heads,
                    pos: 0,
                    cursor: NO_ROW,
                    started: false,
                    matched: false,
                    ended: false,
                });
                return true;
            }
        }
    }

    /// The scan tuple: outer row `o` of the probe batch (or NULLs), then
    /// inner row `id` (or NULLs).
    pub(super) unsafe fn fill(
        &self,
        slot: *mut pg_sys::TupleTableSlot,
        outer: Option<usize>,
        inner: Option<u32>,
    ) {
        // SAFETY: slot is the node's scan slot of the join's scan tuple descriptor; the picked rows
        // are below their batches' lengths.
        unsafe {
            pg_sys::ExecClearTuple(slot);
            let values = (*slot).tts_values;
            let isnull = (*slot).tts_isnull;
            let nouter = self.nouter;
            match (outer, &self.probe) {
                (Some(o), Some(p)) => {
                    for (c, col) in p.held.columns.iter().enumerate() {
                        let valid = col.is_valid(o);
                        *isnull.add(c) = !valid;
                        *values.add(c) = pg_sys::Datum::from(if valid { col.values.datum(o) } else { 0 });
                    }
                }
                _ => {
                    for c in 0..nouter {
                        *isnull.add(c) = true;
                        *values.add(c) = pg_sys::Datum::from(0usize);
                    }
                }
            }
            let ninner = self.inner.src.types.len();
            match inner {
                Some(id) => {
                    let (b, r) = split_row_id(id);
                    let held = &self.table.batches[b];
                    for (c, col) in held.columns.iter().enumerate() {
                        let valid = col.is_valid(r);
                        *isnull.add(nouter + c) = !valid;
                        *values.add(nouter + c) =
                            pg_sys::Datum::from(if valid { col.values.datum(r) } else { 0 });
                    }
                }
                None => {
                    for c in 0..ninner {
                        *isnull.add(nouter + c) = true;
                        *values.add(nouter + c) = pg_sys::Datum::from(0usize);
                    }
                }
            }
            pg_sys::ExecStoreVirtualTuple(slot);
        }
    }
}

/// Key columns that are varlenas must be plain for hashing.
pub(super) unsafe fn detoast_keys(s: &Side, columns: &mut [Column], rows: &[RowIdx]) {
    for &k in &s.keys {
        if s.src.by_ref[k] != Some(-1) {
            continue;
        }
        let col = &mut columns[k];
        let Values::Datum(v) = &mut col.values else { continue };
        let values = v.as_mut_ptr();
        let validity = col.validity.as_bytes().as_ptr();
        // SAFETY: values and validity point into this column for its length; rows are indexes below
        // it; by_ref says the column holds varlenas. The shim's detoast can ERROR, through its
        // guarded declaration.
        unsafe { shim::vx_detoast(values, validity, rows.len() as i32, rows.as_ptr()) };
    }
}

/// Evaluate an ExprState qual (NULL: true) on the econtext's scan tuple.
pub(super) unsafe fn passes(qual: *mut pg_sys::ExprState, econtext: *mut pg_sys::ExprContext) -> bool {
    // SAFETY: qual, when set, is an ExprState of this node; econtext is its live expression
    // context.
    unsafe { qual.is_null() || pg_sys::ExecQual(qual, econtext) }
}

/// What the join produced next.
pub(super) enum Step {
    /// A row passed the join filter and the qual: the probe batch's outer
    /// row (None: null-extended) and the inner row id (None: null-extended
    /// or anti join). The scan tuple holds it where the step filled it.
    Row(Option<usize>, Option<u32>),
    /// The rows referred to so far are about to go (the probe batch is
    /// replaced, or the table of a partition): a batch must end here.
    BatchEnd,
    Done,
}

impl JoinState {
    /// Put the row into the scan tuple when the caller or a qual needs it.
    pub(super) unsafe fn fill_row(
        &self,
        node: *mut pg_sys::CustomScanState,
        fill: bool,
        o: Option<usize>,
        i: Option<u32>,
    ) {
        // SAFETY: node is this state's node (caller's contract).
        unsafe {
            if fill {
                let slot = (*node).ss.ss_ScanTupleSlot;
                pg_sys::MemoryContextReset((*self.econtext).ecxt_per_tuple_memory);
                self.fill(slot, o, i);
                (*self.econtext).ecxt_scantuple = slot;
            }
        }
    }

    /// Run the join to its next row. `fill_always`: the scan tuple is
    /// wanted for every row (row output); otherwise it is filled only for
    /// the quals.
    pub(super) unsafe fn advance(&mut self, node: *mut pg_sys::CustomScanState, fill_always: bool) -> Step {
        // SAFETY: node is this state's node and the join has begun (caller's contract).
        unsafe {
            let econtext = self.econtext;
            let otherqual = (*node).ss.ps.qual;
            let fill = fill_always || !otherqual.is_null() || !self.joinqual.is_null();
            loop {
                match self.phase {
                    Phase::Build => self.build(),
                    Phase::NextPartition => {
                        self.phase = if self.next_partition() { Phase::Probe } else { Phase::Done };
                    }
                    Phase::Done => return Step::Done,
                    Phase::Unmatched(from) => {
                        // Inner rows no outer row matched, outer side NULL.
                        let mut id = from;
                        let mut found = None;
                        let nb = self.table.batches.len() as u32;
                        while (id >> ROW_BITS) < nb {
                            let (b, r) = split_row_id(id);
                            if r >= self.table.lens[b] {
                                id = row_id(b as u32 + 1, 0);
                                continue;
                            }
                            if !self.table.matched.get(id as usize) {
                                found = Some(id);
                                id += 1;
                                break;
                            }
                            id += 1;
                        }
                        let Some(inner) = found else {
                            self.phase = Phase::NextPartition;
                            return Step::BatchEnd;
                        };
                        self.phase = Phase::Unmatched(id);
                        self.fill_row(node, fill, None, Some(inner));
                        if passes(otherqual, econtext) {
                            return Step::Row(None, Some(inner));
                        }
                    }
                    Phase::Probe => {
                        let Some(p) = self.probe.as_mut() else {
                            if !self.next_probe_batch() {
                                self.phase = if self.jointype.keeps_inner() {
                                    Phase::Unmatched(0)
                                } else {
                                    Phase::NextPartition
                                };
                            }
                            continue;
                        };
                        if p.pos >= p.rows.len() {
                            if !p.ended {
                                p.ended = true;
                                return Step::BatchEnd;
                            }
                            self.probe = None;
                            continue;
                        }
                        if !p.started {
                            p.started = true;
                            p.matched = false;
                            p.cursor = p.heads[p.pos];
                        }
                        let o = p.rows[p.pos] as usize;
                        if p.cursor == NO_ROW {
                            // The outer row's matches are done.
                            let unmatched = !p.matched;
                            p.pos += 1;
                            p.started = false;
                            if unmatched && self.jointype.keeps_outer() {
                                self.fill_row(node, fill, Some(o), None);
                                if passes(otherqual, econtext) {
                                    return Step::Row(Some(o), None);
                                }
                            }
                            continue;
                        }
                        let id = p.cursor;
                        p.cursor = self.table.chains.next(id);
                        self.fill_row(node, fill, Some(o), Some(id));
                        if !passes(self.joinqual, econtext) {
                            continue;
                        }
                        let p = self.probe.as_mut().expect("a probe batch");
                        p.matched = true;
                        if self.jointype.keeps_inner() {
                            self.table.matched.set(id as usize, true);
                        }
                        match self.jointype {
                            JoinType::Anti => {
                                p.cursor = NO_ROW;
                                p.pos += 1;
                                p.started = false;
                                continue;
                            }
                            JoinType::Semi => {
                                p.cursor = NO_ROW;
                                p.pos += 1;
                                p.started = false;
                            }
                            _ => {}
                        }
                        if passes(otherqual, econtext) {
                            return Step::Row(Some(o), Some(id));
                        }
                    }
                }
            }
        }
    }

    /// The target list for a vector parent, compiled on first use. Where
    /// the join has quals, targets are evaluated per row after them.
    pub(super) unsafe fn output(&mut self, node: *mut pg_sys::CustomScanState) -> &mut Projection {
        // SAFETY: node is this state's node (caller's contract); its plan's target list is live.
        unsafe {
            if self.output.is_none() {
                let plan = (*node).ss.ps.plan;
                let per_row = !(*node).ss.ps.qual.is_null() || !self.joinqual.is_null();
                let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
                self.output = Some(Box::new(Projection::new(node.cast(), (*plan).targetlist, per_row)));
                pg_sys::MemoryContextSwitchTo(old);
            }
            self.output.as_mut().expect("an output")
        }
    }

    /// The join's output as a batch for a vector parent: up to a batch of
    /// joined rows (fewer where a probe batch or a partition ends), its
    /// target list computed by `exec::project`.
    pub(super) unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
        // SAFETY: node is this state's node and the join has begun (caller's contract).
        unsafe {
            let econtext = self.econtext;
            self.output(node);
            // Evaluator results of the previous batch go now.
            pg_sys::MemoryContextReset(self.out_cxt);
            pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
            let per_row = self.output.as_ref().is_some_and(|o| o.per_row);
            let mut picks: Vec<(Option<usize>, Option<u32>)> = Vec::with_capacity(BATCH_CAPACITY);
            loop {
                match self.advance(node, false) {
                    Step::Row(o, i) => {
                        if per_row {
                            let old = pg_sys::MemoryContextSwitchTo(self.out_cxt);
                            let out = self.output.as_mut().expect("an output");
                            out.eval_row(picks.len(), econtext);
                            pg_sys::MemoryContextSwitchTo(old);
                        }
                        picks.push((o, i));
                        if picks.len() == BATCH_CAPACITY {
                            break;
                        }
                    }
                    Step::BatchEnd if picks.is_empty() => {}
                    Step::BatchEnd | Step::Done => break,
                }
            }
            if picks.is_empty() {
                return None;
            }
            let n = picks.len();
            let out = self.output.as_mut().expect("an output");
            let needed = out.needed_columns();
            let ncols = self.nouter + self.inner.src.types.len();
            let mut gathered: Vec<Option<Column>> = (0..ncols).map(|_| None).collect();
            let probe_cols: &[Column] = self.probe.as_ref().map_or(&[], |p| &p.held.columns);
            // Where each output row's outer and inner values are (per batch,
            // shared by every column of the side).
            let outer_rows: Vec<Option<(u32, u16)>> =
                picks.iter().map(|&(o, _)| o.map(|o| (0, o as u16))).collect();
            let inner_rows: Vec<Option<(u32, u16)>> = picks
                .iter()
                .map(|&(_, i)| i.map(|id| split_row_id(id)).map(|(b, r)| (b as u32, r as u16)))
                .collect();
            for c in needed {
                gathered[c] = Some(if c < self.nouter {
                    match probe_cols.get(c) {
                        Some(col) => vexec_core::batch::gather(col.values.phys_type(), &[col], &outer_rows),
                        // Unmatched inner rows only: the outer side is NULL.
                        None => vexec_core::batch::gather(self.outer.src.types[c], &[], &vec![None; n]),
                    }
                } else {
                    let ic = c - self.nouter;
                    let srcs: Vec<&Column> = self.table.batches.iter().map(|h| &h.columns[ic]).collect();
                    let phys = srcs.first().map_or(self.inner.src.types[ic], |x| x.values.phys_type());
                    vexec_core::batch::gather(phys, &srcs, &inner_rows)
                });
            }
            let slot = (*node).ss.ss_ScanTupleSlot;
            let columns = out.project(&gathered, n, econtext, slot);
            Some(VectorBatch { columns, rows: vexec_core::batch::full_selection(n) })
        }
    }
}

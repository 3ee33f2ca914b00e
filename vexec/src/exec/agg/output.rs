//! VecAgg's output: groups' keys and results as Datums, rows for a row
//! parent and batches for a vector parent.

#[allow(unused_imports)]
use super::*;

/// Scaled integers of `c` back to numeric Datums for rows `rows`, in the
/// per-batch memory (for a spill file).
pub(super) unsafe fn numeric_column(
    c: &Column,
    scale: u16,
    rows: &[RowIdx],
    econtext: *mut pg_sys::ExprContext,
) -> Column {
    // SAFETY: econtext is the node's live expression context (caller's contract), whose
    // per-tuple memory takes the numeric Datums made from c's scaled integers.
    unsafe {
        let mut out = Column::new(PhysType::Datum, c.len());
        out.validity = c.validity.clone();
        let old = pg_sys::MemoryContextSwitchTo((*econtext).ecxt_per_tuple_memory);
        for &r in rows {
            let r = r as usize;
            if c.is_valid(r) {
                let v = match &c.values {
                    Values::I128(v) => v[r],
                    v => v.datum(r) as i64 as i128,
                };
                out.values.set_datum(r, palloc_varlena(&vexec_core::numeric::encode_payload(v, scale)));
            }
        }
        pg_sys::MemoryContextSwitchTo(old);
        out
    }
}

/// The order of collation `collid` as text_cmp has it: PostgreSQL's
/// `varstr_cmp` (an ERROR it raises unwinds through the aggregate and is
/// raised again at the node's boundary).
pub(super) fn collation_order(collid: pg_sys::Oid) -> TextOrder {
    TextOrder(Box::new(move |a: &[u8], b: &[u8]| {
        // SAFETY: a and b are byte slices of their lengths; collid is the aggregate's valid
        // collation; called on the backend's main thread while the node runs (varstr_cmp may ERROR
        // there).
        let r = unsafe {
            pg_sys::varstr_cmp(a.as_ptr().cast(), a.len() as i32, b.as_ptr().cast(), b.len() as i32, collid)
        };
        r.cmp(&0)
    }))
}

/// Whether a transition compares its argument's bytes.
pub(super) fn reads_arg_bytes(t: Transition) -> bool {
    matches!(
        t,
        Transition::MinMaxBytes { .. }
            | Transition::CountDistinct(
                KeyKind::Bytes
                    | KeyKind::Bpchar
                    | KeyKind::Numeric
                    | KeyKind::Collated
                    | KeyKind::CollatedBpchar
                    | KeyKind::Encoded
            )
            | Transition::SumNumeric
            | Transition::AvgNumeric
            | Transition::MinMaxNumeric { .. }
    )
}

/// A column that keeps only `c`'s validity (for count(x) arguments written
/// to a spill file).
pub(super) fn validity_only(c: &Column) -> Column {
    let mut out = Column::new(PhysType::Bool, c.len());
    out.validity = c.validity.clone();
    out
}

pub(super) unsafe fn numeric_datum(value: i128) -> usize {
    // SAFETY: as palloc_varlena.
    unsafe { palloc_varlena(&vexec_core::numeric::encode_payload(value, 0)) }
}

/// The Datum of an aggregate's result (None for NULL), in the current memory context.
pub(super) unsafe fn result_datum(r: AggResult<'_>, result_type: pg_sys::Oid) -> Option<usize> {
    // SAFETY: r's bytes (if any) are a value of result_type's representation, copied into the
    // current context.
    unsafe {
        Some(match r {
            AggResult::Null => return None,
            AggResult::Int(v) if result_type == pg_sys::BOOLOID => (v != 0) as usize,
            AggResult::Int(v) => v as usize,
            AggResult::Numeric(v) => numeric_datum(v),
            AggResult::NumericAvg { sum, count } => {
                // As int8_avg and numeric_poly_avg: numeric_div(sum, count).
                let (s, c) = (numeric_datum(sum), numeric_datum(count as i128));
                let d = pg_sys::OidFunctionCall2Coll(
                    pg_sys::Oid::from(pg_sys::F_NUMERIC_DIV),
                    pg_sys::InvalidOid,
                    pg_sys::Datum::from(s),
                    pg_sys::Datum::from(c),
                );
                d.value()
            }
            AggResult::NumericSpecial(sp) => palloc_varlena(&vexec_core::numeric::encode_special(sp)),
            AggResult::NumericSum { value, dscale, wide, count, avg } => {
                // As numeric_sum / numeric_avg: the exact sum (values too
                // wide for the scaled sum added by numeric_add), divided by
                // the count of finite values for avg.
                let call = |f: u32, a: usize, b: usize| {
                    pg_sys::OidFunctionCall2Coll(
                        pg_sys::Oid::from(f),
                        pg_sys::InvalidOid,
                        pg_sys::Datum::from(a),
                        pg_sys::Datum::from(b),
                    )
                    .value()
                };
                let mut sum = palloc_varlena(&vexec_core::numeric::encode_payload(value, dscale));
                for w in wide {
                    sum = call(pg_sys::F_NUMERIC_ADD, sum, palloc_varlena(w));
                }
                if avg {
                    call(pg_sys::F_NUMERIC_DIV, sum, numeric_datum(count as i128))
                } else {
                    sum
                }
            }
            AggResult::Float4(f) => f.to_bits() as usize,
            AggResult::Float8(f) if result_type == pg_sys::FLOAT4OID => (f as f32).to_bits() as usize,
            AggResult::Float8(f) => f.to_bits() as usize,
            AggResult::Bytes(b) => palloc_varlena(b),
        })
    }
}

/// The Datum of group `g`'s key `k` (None for NULL), in the current memory context.
pub(super) unsafe fn key_datum(g: &Grouping, k: usize, group: usize) -> Option<usize> {
    // SAFETY: group is a group of g's table; the key columns' by-reference values live in the
    // table's arenas.
    unsafe {
        let t = g.key_output[k];
        match g.kinds[k] {
            KeyKind::Bytes
            | KeyKind::Bpchar
            | KeyKind::Numeric
            | KeyKind::Collated
            | KeyKind::CollatedBpchar
            | KeyKind::Encoded => g.table.bytes_key(t, group).map(|b| palloc_varlena(b)),
            KeyKind::Carried => unreachable!("a plan's keys are never Carried"),
            KeyKind::Uuid | KeyKind::Interval => g.table.bytes_key(t, group).map(|b| {
                let p = pg_sys::palloc(b.len()) as *mut u8;
                std::ptr::copy_nonoverlapping(b.as_ptr(), p, b.len());
                p as usize
            }),
            KeyKind::Float4 => g
                .table
                .fixed_key(k, group)
                .map(|bits| (f64::from_bits(bits as u64) as f32).to_bits() as usize),
            KeyKind::Float8 | KeyKind::Int => g.table.fixed_key(k, group).map(|v| v as usize),
        }
    }
}

impl AggState {
    /// The next group to return (the only one of a plain aggregate), None
    /// at the end. At the end of a spilled partition: the next partition is
    /// aggregated first when `next_partition`, else None (it restarts the
    /// states the returned groups' by-reference results point into).
    pub(super) unsafe fn next_group(&mut self, next_partition: bool) -> Option<usize> {
        loop {
            match &mut self.grouping {
                None => {
                    self.stage = Stage::Done;
                    return Some(0);
                }
                Some(g) if g.next < g.table.len() => {
                    g.next += 1;
                    return Some(g.next - 1);
                }
                Some(_) if !next_partition => return None,
                Some(_) => {
                    // SAFETY: the node is running (caller's contract).
                    if !unsafe { self.next_partition() } {
                        self.stage = Stage::Done;
                        return None;
                    }
                }
            }
        }
    }

    /// Group `group`'s keys, then its aggregates' results (partial states
    /// for a Partial), as Datums in the current memory context, each passed
    /// to `put` with its scan tuple column.
    pub(super) unsafe fn group_values(&self, group: usize, mut put: impl FnMut(usize, Option<usize>)) {
        // SAFETY: group is a group of this state's tables (caller's contract).
        unsafe {
            let mut col = 0;
            if let Some(g) = &self.grouping {
                for k in 0..g.kinds.len() {
                    put(col, key_datum(g, k, group));
                    col += 1;
                }
            }
            let mut state = Vec::new();
            for ((item, acc), fmgr) in self.items.iter().zip(&self.accs).zip(&self.fmgr) {
                let acc = item.shares.map_or(acc, |j| &self.accs[j]);
                let d = if let Some(f) = fmgr {
                    f.result(group)
                } else if self.split == AggSplit::Partial {
                    acc.serialize(group, &mut state);
                    Some(palloc_varlena(&state))
                } else {
                    result_datum(acc.result_as(group, item.transition), item.result_type)
                };
                put(col, d);
                col += 1;
            }
        }
    }
}

/// How a VecAgg hands batches to a vector parent (every VecAgg but a
/// Partial, whose parent is a Gather): `Direct` when every output column is
/// a column of the scan tuple (keys and results; the scan tuple column of
/// each), `Projected` when some are computed (PostgreSQL's projection runs
/// per group, as for a row parent). HAVING, if any, is evaluated per group
/// either way.
#[derive(Debug, Clone)]
pub enum BatchShape {
    Direct(Vec<usize>),
    Projected,
}

/// The batch shape of VecAgg plan `plan`, None for a Partial.
///
/// # Safety
/// `plan` is a VecAgg plan.
pub unsafe fn batch_columns(plan: *const pg_sys::CustomScan) -> Option<BatchShape> {
    // SAFETY: this function's contract: plan is a VecAgg plan.
    unsafe {
        if (*plan).methods == scan_methods(AggSplit::Partial) {
            return None;
        }
        let direct: Option<Vec<usize>> = list_ptrs::<pg_sys::TargetEntry>((*plan).scan.plan.targetlist)
            .map(|te| {
                let e = (*te).expr as *mut pg_sys::Node;
                if (*e).type_ != pg_sys::NodeTag::T_Var {
                    return None;
                }
                let v = e as *mut pg_sys::Var;
                ((*v).varno == pg_sys::INDEX_VAR && (*v).varattno > 0 && (*v).varlevelsup == 0)
                    .then(|| (*v).varattno as usize - 1)
            })
            .collect();
        Some(direct.map_or(BatchShape::Projected, BatchShape::Direct))
    }
}

impl AggState {
    /// Up to a batch of output rows of node `node` (this state's): groups
    /// that pass HAVING, their output columns.
    pub(super) unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
        // SAFETY: this function's contract: node is this state's node, which has begun.
        unsafe {
            if self.stage == Stage::Done {
                return None;
            }
            if self.stage == Stage::Consuming {
                self.consume();
            }
            // (A clone of a few integers: the loop below needs `self` mutably.)
            let (shape, types) =
                self.batch_out.clone().expect("VecAgg gives batches only when batch_columns accepts it");
            let (qual, proj) = ((*node).ss.ps.qual, (*node).ss.ps.ps_ProjInfo);
            let (slot, econtext) = ((*node).ss.ss_ScanTupleSlot, self.econtext);
            let mut columns: Vec<Column> = types.iter().map(|&t| Column::new(t, BATCH_CAPACITY)).collect();
            // The previous batch is consumed: its by-reference values go.
            // HAVING and the projection evaluate in this memory too, so
            // what they return stays valid as long as the batch.
            let per_batch = (*econtext).ecxt_per_tuple_memory;
            pg_sys::MemoryContextReset(per_batch);
            let old = pg_sys::MemoryContextSwitchTo(per_batch);
            let mut values: Vec<Option<usize>> = Vec::new();
            let mut n = 0;
            while n < BATCH_CAPACITY {
                // A batch ends where a spilled partition ends (unless it has
                // no row yet: every group so far failed HAVING).
                let Some(group) = self.next_group(n == 0) else { break };
                values.clear();
                self.group_values(group, |_, d| values.push(d));
                let plain = self.grouping.is_none();
                if !qual.is_null() || matches!(shape, BatchShape::Projected) {
                    // The group as the scan tuple, as a row parent gets it.
                    pg_sys::ExecClearTuple(slot);
                    for (col, d) in values.iter().enumerate() {
                        *(*slot).tts_values.add(col) = pg_sys::Datum::from(d.unwrap_or(0));
                        *(*slot).tts_isnull.add(col) = d.is_none();
                    }
                    pg_sys::ExecStoreVirtualTuple(slot);
                    (*econtext).ecxt_scantuple = slot;
                    if !qual.is_null() && !pg_sys::ExecQual(qual, econtext) {
                        if plain {
                            break;
                        }
                        continue;
                    }
                }
                match &shape {
                    BatchShape::Direct(map) => {
                        for (col, &src) in columns.iter_mut().zip(map) {
                            match values[src] {
                                Some(d) => col.values.set_datum(n, d),
                                None => col.validity.set(n, false),
                            }
                        }
                    }
                    BatchShape::Projected => {
                        let out = if proj.is_null() { slot } else { pg_sys::ExecProject(proj) };
                        pg_sys::slot_getallattrs(out);
                        for (i, col) in columns.iter_mut().enumerate() {
                            if *(*out).tts_isnull.add(i) {
                                col.validity.set(n, false);
                            } else {
                                col.values.set_datum(n, (*(*out).tts_values.add(i)).value());
                            }
                        }
                    }
                }
                n += 1;
                if plain {
                    break;
                }
            }
            pg_sys::MemoryContextSwitchTo(old);
            check_for_interrupts!();
            (n > 0).then(|| VectorBatch { columns, rows: full_selection(n) })
        }
    }
}

//! Egress straight from batches. When a query's result goes to the Arrow
//! receiver and the plan's top node is a vexec node that gives batches
//! (VecScan, VecHashJoin, a serial or final VecAgg, VecSort), vexec's
//! ExecutorRun hook runs the query by taking that node's batches and
//! appending them to the Arrow builders column by column
//! (`Reader::push_rows`: one pass per column where vexec_core reads the
//! values itself), instead of having the node build a slot per row for the
//! receiver to take apart value by value. Everything around the run loop is
//! standard_ExecutorRun's and ExecutePlan's (memory context, parallel mode,
//! es_processed, ExecShutdownNode), for a plain SELECT read forward to the
//! end, or a cursor fetched forward (`vexec.arrow_ipc_stream`), without
//! query-level instrumentation (pg_stat_statements asks for it when it
//! tracks: those queries take the slot path) and without junk columns. A
//! fetch of `count` rows takes exactly that many: the rest of its last batch
//! waits in the receiver for the next fetch (the batch's values stay valid
//! until the node is asked for another). Any other query, or any other
//! receiver, goes to PostgreSQL's ExecutorRun (or the previous hook)
//! untouched.

use std::sync::atomic::{AtomicU64, Ordering};

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::receiver::ArrowReceiver;
use crate::exec::node;

static mut PREV_EXECUTOR_RUN: pg_sys::ExecutorRun_hook_type = None;

/// Batches taken through this path in this backend (the tests read it).
pub static BATCHES_TAKEN: AtomicU64 = AtomicU64::new(0);

pub fn install() {
    // SAFETY: _PG_init runs once per process, on its main thread, before any query; the previous
    // hook is kept and called for every query this one does not run.
    unsafe {
        PREV_EXECUTOR_RUN = pg_sys::ExecutorRun_hook;
        pg_sys::ExecutorRun_hook = Some(executor_run);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn executor_run(
    qd: *mut pg_sys::QueryDesc,
    direction: pg_sys::ScanDirection::Type,
    count: u64,
) {
    // SAFETY: called by ExecutorRun with a started query; everything read is part of it.
    unsafe {
        if let Some(receiver) = ArrowReceiver::from_dest((*qd).dest) {
            let estate = (*qd).estate;
            let plain_select = (*qd).operation == pg_sys::CmdType::CMD_SELECT
                && direction == pg_sys::ScanDirection::ForwardScanDirection
                && (*estate).es_junkFilter.is_null()
                && (*estate).es_top_eflags & pg_sys::EXEC_FLAG_BACKWARD as i32 == 0
                && !query_instrumented(qd);
            if plain_select {
                if let Some(ops) = node::batch_source((*qd).planstate) {
                    run_batches(qd, ops, receiver, count);
                    return;
                }
            }
        }
        match PREV_EXECUTOR_RUN {
            Some(prev) => prev(qd, direction, count),
            None => pg_sys::standard_ExecutorRun(qd, direction, count),
        }
    }
}

/// standard_ExecutorRun + ExecutePlan for a SELECT whose top node gives
/// batches: every row, or `count` of them (0: every row).
///
/// # Safety
/// `qd` is a started SELECT whose planstate is the node `ops` serves, and
/// whose receiver is `receiver` (which holds the rows a fetch left over).
unsafe fn run_batches(
    qd: *mut pg_sys::QueryDesc,
    ops: &node::BatchOps,
    receiver: &mut ArrowReceiver<'_>,
    count: u64,
) {
    // SAFETY: this function's contract; the calls are the ones standard_ExecutorRun and
    // ExecutePlan make, in their order.
    unsafe {
        let estate = (*qd).estate;
        let planstate = (*qd).planstate;
        let old = pg_sys::MemoryContextSwitchTo((*estate).es_query_cxt);
        (*estate).es_processed = 0;
        let dest = (*qd).dest;
        (*dest).rStartup.expect("a receiver")(dest, (*qd).operation as i32, (*qd).tupDesc);
        (*estate).es_direction = pg_sys::ScanDirection::ForwardScanDirection;
        // Parallel mode only for a whole run, as ExecutePlan decides.
        let parallel = !(*qd).already_executed && count == 0 && (*(*qd).plannedstmt).parallelModeNeeded;
        (*qd).already_executed = true;
        (*estate).es_use_parallel_mode = parallel;
        if parallel {
            pg_sys::EnterParallelMode();
        }
        let wanted = if count == 0 { u64::MAX } else { count };
        let mut sent = 0u64;
        let mut next = receiver.take_left_over();
        while sent < wanted {
            let batch = match next.take() {
                Some(batch) => batch,
                None => match ops.next_batch(planstate) {
                    Some(batch) => {
                        BATCHES_TAKEN.fetch_add(1, Ordering::Relaxed);
                        batch
                    }
                    None => break,
                },
            };
            let n = batch.rows.len().min((wanted - sent).min(usize::MAX as u64) as usize);
            receiver.receive_batch(&batch.columns, &batch.rows[..n]);
            sent += n as u64;
            if n < batch.rows.len() {
                receiver
                    .leave_over(node::VectorBatch { columns: batch.columns, rows: batch.rows[n..].to_vec() });
            }
        }
        (*estate).es_processed = sent;
        if (*estate).es_top_eflags & pg_sys::EXEC_FLAG_BACKWARD as i32 == 0 {
            pg_sys::ExecShutdownNode(planstate);
        }
        if parallel {
            pg_sys::ExitParallelMode();
        }
        (*estate).es_total_processed += (*estate).es_processed;
        (*dest).rShutdown.expect("a receiver")(dest);
        pg_sys::MemoryContextSwitchTo(old);
    }
}

/// Whether the query asked for query-level instrumentation.
///
/// # Safety
/// `qd` is a started query.
unsafe fn query_instrumented(qd: *mut pg_sys::QueryDesc) -> bool {
    // SAFETY: this function's contract.
    #[cfg(feature = "pg19")]
    let instr = unsafe { (*qd).query_instr };
    // SAFETY: as above.
    #[cfg(feature = "pg18")]
    let instr = unsafe { (*qd).totaltime };
    !instr.is_null()
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use std::sync::atomic::Ordering;

    use pgrx::prelude::*;

    use super::BATCHES_TAKEN;

    /// `vexec.arrow_ipc` of `query`, whole.
    const WHOLE: &str = "SELECT vexec.arrow_ipc($1, $2)";
    /// The pieces of `vexec.arrow_ipc_stream` (a cursor fetched
    /// `batch_rows` rows at a time) joined: the same stream as arrow_ipc's.
    const PIECES: &str =
        "SELECT string_agg(p, ''::bytea ORDER BY n) FROM vexec.arrow_ipc_stream($1, $2) WITH ORDINALITY AS t(p, n)";

    /// The stream `how` gives for `query` in `mode`, and the batches the
    /// batch path took for it.
    fn stream(how: &str, mode: &str, query: &str, batch_rows: i32) -> (Vec<u8>, u64) {
        Spi::run(&format!("SET vexec.mode = {mode}")).unwrap();
        let before = BATCHES_TAKEN.load(Ordering::Relaxed);
        let bytes =
            Spi::get_one_with_args::<Vec<u8>>(how, &[query.into(), batch_rows.into()]).unwrap().unwrap();
        (bytes, BATCHES_TAKEN.load(Ordering::Relaxed) - before)
    }

    #[pg_test]
    fn egress_from_batches_equals_egress_from_slots() {
        Spi::run(
            "CREATE TABLE eb AS SELECT g AS a, g::bigint * 7 AS b, CASE WHEN g % 5 = 0 THEN NULL ELSE 'r' || g END AS t,
                    date '2020-01-01' + g % 400 AS d, (g * 0.25)::numeric(10,2) AS n, g % 2 = 0 AS f,
                    CASE WHEN g % 7 = 0 THEN NULL ELSE timestamp '1969-12-31 23:00' + g * interval '77 minutes' END AS ts,
                    decode(lpad(to_hex(g % 300), 4, '0'), 'hex') AS y, (g % 9)::char(4) AS c, g * 0.5::float8 AS x,
                    CASE WHEN g % 11 = 0 THEN 'NaN' ELSE g / 3.0 END AS u
             FROM generate_series(1, 20000) g;
             ANALYZE eb;
             SET vexec.min_rows = 0",
        )
        .unwrap();
        for format in ["postgres", "arrow"] {
            Spi::run(&format!("SET vexec.batch_format = {format}")).unwrap();
            for (query, batch_rows) in [
                ("SELECT a, b, t, d, n, f, ts, y, c, x, u FROM eb WHERE a % 3 <> 1", 8192),
                ("SELECT t, a, d FROM eb WHERE d > date '2020-06-01' AND t LIKE 'r1%'", 1000),
                ("SELECT t, a FROM eb", 100),
                ("SELECT count(*), sum(b), min(d), max(t), sum(n) FROM eb", 8192),
                ("SELECT a % 1 AS k, count(*), sum(n), max(ts), min(t) FROM eb GROUP BY 1", 300),
                ("SELECT a, n * 2, d - 1, b + a FROM eb WHERE a > 5000", 5000),
            ] {
                let (off, slots) = stream(WHOLE, "off", query, batch_rows);
                let (force, batches) = stream(WHOLE, "force", query, batch_rows);
                assert_eq!(slots, 0, "mode off has no vexec node: {query}");
                assert!(batches > 0, "the batch path ran: {query}");
                assert_eq!(force, off, "{format}: {query}");
                // A cursor's fetches: each exactly batch_rows rows, the rest of a
                // batch kept for the next fetch.
                let (fetched, batches) = stream(PIECES, "force", query, batch_rows);
                assert!(batches > 0, "the batch path ran for the cursor: {query}");
                assert_eq!(fetched, off, "{format}, cursor: {query}");
            }
        }
    }
}

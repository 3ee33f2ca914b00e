//! Where PostgreSQL counts a path kind as disabled. A vector scan is a
//! sequential scan and VecHashJoin a hash join, so each is disabled exactly
//! where PostgreSQL's own would be: on 18 by the session's `enable_seqscan`
//! and `enable_hashjoin` (which pg_hint_plan 1.8 sets around each relation and
//! join it hints); on 19 by the relation's or join's strategy mask
//! (`pgs_mask`: the enable_* settings, narrowed by extensions such as
//! pg_hint_plan 1.9 through the planner's hooks). As in PostgreSQL, a
//! disabled path is still built (it may be the only one) and loses to any
//! path that is not disabled.

use pgrx::pg_sys;

/// Is a sequential scan of `rel` disabled (`partial`: a parallel-aware one)?
///
/// # Safety
/// `rel` is the planner's live RelOptInfo.
pub unsafe fn seq_scan_disabled(rel: *mut pg_sys::RelOptInfo, partial: bool) -> bool {
    #[cfg(feature = "pg19")]
    // SAFETY: rel is live (this function's contract).
    unsafe {
        // PostgreSQL 19's cost_seqscan: a non-partial path also needs
        // PGS_CONSIDER_NONPARTIAL (cleared to force a parallel plan).
        let partial_bit = if partial { 0 } else { pg_sys::PGS_CONSIDER_NONPARTIAL };
        let want = u64::from(pg_sys::PGS_SEQSCAN | partial_bit);
        (*rel).pgs_mask & want != want
    }
    #[cfg(not(feature = "pg19"))]
    // SAFETY: reading a GUC variable on the backend's main thread.
    unsafe {
        let _ = (rel, partial);
        !pg_sys::enable_seqscan
    }
}

/// Is a hash join disabled for the join `extra` describes (`partial`: a
/// parallel one)?
///
/// # Safety
/// `extra` is the planner's live JoinPathExtraData of the join.
pub unsafe fn hash_join_disabled(extra: *mut pg_sys::JoinPathExtraData, partial: bool) -> bool {
    #[cfg(feature = "pg19")]
    // SAFETY: extra is live (this function's contract).
    unsafe {
        let partial_bit = if partial { 0 } else { pg_sys::PGS_CONSIDER_NONPARTIAL };
        let want = u64::from(pg_sys::PGS_HASHJOIN | partial_bit);
        (*extra).pgs_mask & want != want
    }
    #[cfg(not(feature = "pg19"))]
    // SAFETY: reading a GUC variable on the backend's main thread.
    unsafe {
        let _ = (extra, partial);
        !pg_sys::enable_hashjoin
    }
}

//! The shared build of a parallel-aware VecHashJoin: its DSM callbacks,
//! file names and wait event (see `SharedBuild`).

#[allow(unused_imports)]
use super::*;

/// The name of a process's share of the inner side in the shared file set.
pub(super) fn share_name(slot: i32) -> std::ffi::CString {
    std::ffi::CString::new(format!("vexec_inner.{slot}")).expect("no NUL in a file name")
}

/// The wait event of processes waiting for the others' shares.
pub(super) unsafe fn build_wait_event() -> u32 {
    static mut EVENT: u32 = 0;
    // SAFETY: EVENT is only touched on the backend's main thread (this process's executor).
    unsafe {
        if EVENT == 0 {
            EVENT = pg_sys::WaitEventExtensionNew(c"VecHashJoinBuild".as_ptr());
        }
        EVENT
    }
}

// The shared state of a parallel-aware VecHashJoin (PostgreSQL calls these
// only for a plan node marked parallel aware).

pub(super) unsafe fn estimate_dsm(
    _node: *mut pg_sys::CustomScanState,
    _pcxt: *mut pg_sys::ParallelContext,
) -> pg_sys::Size {
    std::mem::size_of::<SharedBuild>()
}

pub(super) unsafe fn initialize_dsm(
    node: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut c_void,
) {
    // SAFETY: the DSM callback's contract: coordinate is this node's share of the DSM segment of
    // pcxt, sized by estimate_dsm.
    unsafe {
        let shared = coordinate as *mut SharedBuild;
        pg_sys::SharedFileSetInit(&mut (*shared).fileset, (*pcxt).seg);
        pg_sys::BarrierInit(&mut (*shared).barrier, 0);
        (*shared).slots = (*pcxt).nworkers + 1;
        (*shared).segment = pg_sys::dsm_segment_handle((*pcxt).seg);
        state(node).shared = shared;
    }
}

/// Before the workers start again (the Gather above is rescanned; the
/// leader has rescanned this node): no file of the last run is read again.
pub(super) unsafe fn reinitialize_dsm(
    _node: *mut pg_sys::CustomScanState,
    _pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut c_void,
) {
    // SAFETY: coordinate is the SharedBuild initialize_dsm set up.
    unsafe {
        let shared = coordinate as *mut SharedBuild;
        pg_sys::SharedFileSetDeleteAll(&mut (*shared).fileset);
        pg_sys::BarrierInit(&mut (*shared).barrier, 0);
    }
}

pub(super) unsafe fn initialize_worker(
    node: *mut pg_sys::CustomScanState,
    _toc: *mut pg_sys::shm_toc,
    coordinate: *mut c_void,
) {
    // SAFETY: in a worker, coordinate is the leader's SharedBuild in the mapped DSM segment.
    unsafe {
        let shared = coordinate as *mut SharedBuild;
        let seg = pg_sys::dsm_find_mapping((*shared).segment);
        if seg.is_null() {
            pgrx::error!("VecHashJoin: the parallel query's shared memory is not mapped");
        }
        pg_sys::SharedFileSetAttach(&mut (*shared).fileset, seg);
        state(node).shared = shared;
    }
}

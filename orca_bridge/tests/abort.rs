//! ORCA stops when a flag named by `set_abort_flags` is raised (as a
//! backend's QueryCancelPending is on a cancel), and works again once it
//! is lowered. A file of its own: the flags are per process.

use std::sync::atomic::{AtomicI32, Ordering};

use orca_bridge::{corpus, optimize_minidump, Options, SpaceCheck};

static CANCEL: AtomicI32 = AtomicI32::new(0);
static DIE: AtomicI32 = AtomicI32::new(0);
/// The tests share the flags: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn raised_flags_stop_orca() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the statics live for the whole process.
    unsafe { orca_bridge::set_abort_flags(CANCEL.as_ptr(), DIE.as_ptr()) };
    let file = corpus::source_dir().join("data/dxl/minidump/InEqualityJoin.mdp");
    for flag in [&CANCEL, &DIE] {
        flag.store(1, Ordering::SeqCst);
        let err =
            optimize_minidump(&file, &Options::default()).expect_err("ORCA ran with an abort flag raised");
        assert!(err.0.contains("bort"), "{err}");
        flag.store(0, Ordering::SeqCst);
    }
    let ok = optimize_minidump(&file, &Options::default()).unwrap();
    assert_eq!(ok.mismatch(SpaceCheck::Equal), None);
}

/// A flag raised while ORCA searches (not before it starts) stops the
/// search between jobs, well before it would have finished.
#[test]
fn a_flag_raised_mid_search_stops_it() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the statics live for the whole process.
    unsafe { orca_bridge::set_abort_flags(CANCEL.as_ptr(), DIE.as_ptr()) };
    // About a second of search in a release build, several in debug.
    let file = corpus::source_dir().join("data/dxl/minidump/PartTbl-MultiWayJoin.mdp");
    let full = std::time::Instant::now();
    optimize_minidump(&file, &Options::default()).unwrap();
    let full = full.elapsed();

    let raiser = std::thread::spawn(move || {
        std::thread::sleep(full / 5);
        CANCEL.store(1, Ordering::SeqCst);
    });
    let t0 = std::time::Instant::now();
    let err = optimize_minidump(&file, &Options::default()).expect_err("ORCA finished despite the flag");
    let stopped = t0.elapsed();
    raiser.join().unwrap();
    CANCEL.store(0, Ordering::SeqCst);
    assert!(err.0.contains("bort"), "{err}");
    assert!(stopped < full * 3 / 4, "stopped after {stopped:?} of {full:?}");
}

//! ORCA through the bridge, on a sample of ORCA's own minidumps (the whole
//! corpus runs in `make check-full`: `orca-corpus`). Needs ORCA built by
//! `tools/devroot setup` (its source tree holds the minidumps).

use std::path::PathBuf;

use orca_bridge::{corpus, optimize_minidump, CostModel, Factors, Mismatch, Options, SpaceCheck};

/// About 50 minidumps spread over ORCA's own test list.
fn sample() -> Vec<PathBuf> {
    let all =
        corpus::harness_minidumps(&corpus::source_dir()).expect("ORCA's source tree (tools/devroot setup)");
    corpus::sample(&all, 50)
}

fn vec_model(factors: Factors) -> CostModel {
    CostModel::Vec { factors, kernel_oids: orca_bridge::builtin_kernels() }
}

#[test]
fn version_and_init() {
    orca_bridge::init().unwrap();
    assert_eq!(orca_bridge::version(), "3.122.0");
    orca_bridge::init().unwrap();
}

/// The sample gives ORCA's expected plans, judged as ORCA's harness judges
/// them: an exhaustive search (plan space size equal) and a pruned one
/// (plan space size at most the expected).
#[test]
fn sample_matches_expected_plans() {
    let mut failures = Vec::new();
    let files = sample();
    assert!(files.len() >= 45, "sample of {} minidumps", files.len());
    for file in &files {
        for (pruning, space) in [(false, SpaceCheck::Equal), (true, SpaceCheck::AtMost)] {
            let opts = Options { space_pruning: pruning, ..Options::default() };
            match optimize_minidump(file, &opts) {
                Ok(o) => {
                    if let Some(m) = o.mismatch(space) {
                        failures.push(format!("{} (pruning {pruning}): {m:?}", file.display()));
                    }
                }
                Err(e) => failures.push(format!("{} (pruning {pruning}): {e}", file.display())),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs differ:\n{}",
        failures.len(),
        2 * files.len(),
        failures.join("\n")
    );
}

/// With every factor 1, CCostModelVec prices exactly as ORCA's GPDB model:
/// same plans, same costs, on every minidump of the sample.
#[test]
fn neutral_vector_model_is_orcas_model() {
    for file in sample() {
        let orca =
            optimize_minidump(&file, &Options { cost_model: CostModel::Gpdb, space_pruning: false }).unwrap();
        let opts = Options { cost_model: vec_model(Factors::NEUTRAL), space_pruning: false };
        let vec = optimize_minidump(&file, &opts).unwrap();
        assert_eq!(orca.plan_dxl, vec.plan_dxl, "{}", file.display());
        assert_eq!(orca.plan_space_size, vec.plan_space_size, "{}", file.display());
    }
}

/// ORCA prunes with partial plans as lower bounds: under the vector model
/// the best plan a pruned search finds costs what the exhaustive search's
/// best plan costs.
#[test]
fn vector_model_keeps_pruning_exact() {
    let mut changed = 0;
    for file in sample() {
        let run = |pruning| {
            let opts = Options { cost_model: vec_model(Factors::DEFAULT), space_pruning: pruning };
            optimize_minidump(&file, &opts).unwrap()
        };
        let (exhaustive, pruned) = (run(false), run(true));
        let cost = |o: &orca_bridge::Optimized| o.plan().unwrap().total_cost;
        assert_eq!(cost(&exhaustive), cost(&pruned), "{}", file.display());
        let orca =
            optimize_minidump(&file, &Options { cost_model: CostModel::Gpdb, space_pruning: false }).unwrap();
        if orca.plan().unwrap().shape() != exhaustive.plan().unwrap().shape() {
            changed += 1;
        }
    }
    // The factors must matter somewhere, or this test checks nothing.
    assert!(changed > 0, "the vector model chose ORCA's plan on every minidump of the sample");
}

#[test]
fn plans_carry_costs_and_search_statistics() {
    let file = corpus::source_dir().join("data/dxl/minidump/InEqualityJoin.mdp");
    let o = optimize_minidump(&file, &Options::default()).unwrap();
    let plan = o.plan().unwrap();
    assert!(plan.total_cost > 0.0 && plan.rows > 0.0, "{plan:?}");
    assert!(plan.walk().iter().all(|n| n.total_cost >= n.startup_cost));
    let stats = o.search_stats();
    assert!(stats.stages >= 1 && stats.groups > 0 && stats.group_expressions >= stats.groups, "{stats:?}");
    assert!(o.optimize_ms > 0.0);
}

#[test]
fn bad_minidumps_are_errors_not_crashes() {
    let missing = optimize_minidump(std::path::Path::new("/nonexistent.mdp"), &Options::default());
    assert!(missing.is_err());

    let dir = std::env::temp_dir().join(format!("orca-bridge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good =
        std::fs::read_to_string(corpus::source_dir().join("data/dxl/minidump/InEqualityJoin.mdp")).unwrap();
    for (name, text) in
        [("truncated.mdp", &good[..good.len() / 2]), ("not-xml.mdp", "this is not DXL"), ("empty.mdp", "")]
    {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let err = optimize_minidump(&path, &Options::default()).expect_err(name);
        assert!(!err.0.is_empty(), "{name}");
    }
    // ORCA still works after its errors.
    let ok = optimize_minidump(
        &corpus::source_dir().join("data/dxl/minidump/InEqualityJoin.mdp"),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(ok.mismatch(SpaceCheck::Equal), None::<Mismatch>);
    std::fs::remove_dir_all(&dir).ok();
}

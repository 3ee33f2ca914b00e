//! orca-corpus: ORCA's minidump corpus through the bridge, reported.
//!
//!   orca-corpus [--all] [--only TEXT] [--pruning-sample N] [--leak-runs N] [--out DIR]
//!
//! For every minidump of ORCA's own test list (`--all`: every `.mdp` of the
//! snapshot), as ORCA's harness runs them: an exhaustive search and a
//! pruned one, each judged against the expected plan. Then CCostModelVec
//! against ORCA's calibrated GPDB model (the model it scales): with neutral
//! factors (must give that model's plans on the whole corpus), with
//! vexec's factors (how often the plan changes, and how), and on a sample
//! the pruned search against the exhaustive one (same best cost). Writes
//! `orca-corpus.md` and `orca-corpus.csv` to `--out` and exits non-zero
//! when a requirement fails (a minidump of ORCA's test list that does not
//! give its expected plan, a neutral-model plan that differs, a pruned
//! best cost that differs).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use orca_bridge::plan::{compare, PlanChange};
use orca_bridge::{corpus, optimize_minidump, CostModel, Factors, Options, SpaceCheck};

struct Args {
    all: bool,
    /// Only the minidumps whose path contains this text.
    only: Option<String>,
    pruning_sample: usize,
    leak_runs: usize,
    out: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut a =
        Args { all: false, only: None, pruning_sample: 100, leak_runs: 1000, out: PathBuf::from(".") };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--all" => a.all = true,
            "--only" => a.only = Some(value(&arg)?),
            "--pruning-sample" => {
                a.pruning_sample = value(&arg)?.parse().map_err(|e| format!("{arg}: {e}"))?
            }
            "--leak-runs" => a.leak_runs = value(&arg)?.parse().map_err(|e| format!("{arg}: {e}"))?,
            "--out" => a.out = PathBuf::from(value(&arg)?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

/// One minidump's outcome.
struct Row {
    name: String,
    in_harness: bool,
    exhaustive: String,
    pruned: String,
    optimize_ms: f64,
    groups: u64,
    neutral_same: Option<bool>,
    change: Option<PlanChange>,
    shapes: Option<(String, String)>,
}

impl Row {
    fn failed(exhaustive: String) -> Row {
        Row {
            name: String::new(),
            in_harness: false,
            pruned: exhaustive.clone(),
            exhaustive,
            optimize_ms: 0.0,
            groups: 0,
            neutral_same: None,
            change: None,
            shapes: None,
        }
    }

    /// One line per field, as the parent reads it back.
    fn encode(&self) -> String {
        let flag = |b: Option<bool>| b.map_or("-".to_string(), |b| b.to_string());
        let c = self.change;
        [
            self.exhaustive.replace('\n', " "),
            self.pruned.replace('\n', " "),
            self.optimize_ms.to_string(),
            self.groups.to_string(),
            flag(self.neutral_same),
            flag(c.map(|c| c.any)),
            flag(c.map(|c| c.join_order)),
            flag(c.map(|c| c.join_method)),
            flag(c.map(|c| c.aggregate_stages)),
            self.shapes.as_ref().map_or(String::new(), |s| s.0.clone()),
            self.shapes.as_ref().map_or(String::new(), |s| s.1.clone()),
        ]
        .join("\n")
    }

    fn decode(text: &str) -> Row {
        let f: Vec<&str> = text.split('\n').collect();
        if f.len() != 11 {
            return Row::failed(format!("error: unreadable child output ({} fields)", f.len()));
        }
        let flag = |s: &str| s.parse::<bool>().ok();
        let change = flag(f[5]).map(|any| PlanChange {
            any,
            join_order: flag(f[6]).unwrap_or(false),
            join_method: flag(f[7]).unwrap_or(false),
            aggregate_stages: flag(f[8]).unwrap_or(false),
        });
        Row {
            name: String::new(),
            in_harness: false,
            exhaustive: f[0].to_string(),
            pruned: f[1].to_string(),
            optimize_ms: f[2].parse().unwrap_or(0.0),
            groups: f[3].parse().unwrap_or(0),
            neutral_same: flag(f[4]),
            change,
            shapes: (!f[9].is_empty()).then(|| (f[9].to_string(), f[10].to_string())),
        }
    }
}

fn verdict(
    r: Result<orca_bridge::Optimized, orca_bridge::OrcaError>,
    space: SpaceCheck,
) -> (String, Option<orca_bridge::Optimized>) {
    match r {
        Ok(o) => match o.mismatch(space) {
            None => ("pass".into(), Some(o)),
            Some(m) => (format!("{m:?}"), Some(o)),
        },
        Err(e) => {
            let first = e.0.lines().next().unwrap_or("").to_string();
            (format!("error: {first}"), None)
        }
    }
}

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// The signal that ended a child, as text.
fn crash_signal(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    status.signal().map_or("killed".to_string(), |s| format!("signal {s}"))
}

/// `--child FILE`: every optimization of one minidump; the row on stdout.
fn child(file: &std::path::Path) -> ExitCode {
    let vec_model = |factors| CostModel::Vec { factors, kernel_oids: orca_bridge::builtin_kernels() };
    let (exhaustive, orca) = verdict(optimize_minidump(file, &Options::default()), SpaceCheck::Equal);
    let pruned_opts = Options { space_pruning: true, ..Options::default() };
    let (pruned, _) = verdict(optimize_minidump(file, &pruned_opts), SpaceCheck::AtMost);
    let mut row = Row::failed(exhaustive);
    row.pruned = pruned;
    row.optimize_ms = orca.as_ref().map_or(0.0, |o| o.optimize_ms);
    row.groups = orca.as_ref().map_or(0, |o| o.search_stats().groups);
    let gpdb = optimize_minidump(file, &Options { cost_model: CostModel::Gpdb, space_pruning: false }).ok();
    if let Some(base) = &gpdb {
        let neutral = optimize_minidump(
            file,
            &Options { cost_model: vec_model(Factors::NEUTRAL), space_pruning: false },
        );
        row.neutral_same = Some(neutral.is_ok_and(|n| n.plan_dxl == base.plan_dxl));
        let vector = optimize_minidump(
            file,
            &Options { cost_model: vec_model(Factors::DEFAULT), space_pruning: false },
        );
        if let (Ok(v), Ok(a)) = (vector, base.plan()) {
            if let Ok(b) = v.plan() {
                row.change = Some(compare(&a, &b));
                row.shapes = Some((a.shape(), b.shape()));
            }
        }
    }
    print!("{}", row.encode());
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    if argv.len() == 3 && argv[1] == "--child" {
        return child(std::path::Path::new(&argv[2]));
    }
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("orca-corpus: {e}");
            return ExitCode::from(2);
        }
    };
    let source = corpus::source_dir();
    let harness = corpus::harness_minidumps(&source).expect("ORCA's source tree");
    let mut files =
        if args.all { corpus::all_minidumps(&source).expect("ORCA's minidumps") } else { harness.clone() };
    if let Some(only) = &args.only {
        files.retain(|f| f.to_string_lossy().contains(only.as_str()));
    }
    let vec_model = |factors| CostModel::Vec { factors, kernel_oids: orca_bridge::builtin_kernels() };
    let mut rows = Vec::new();
    let me = std::env::current_exe().expect("the path of orca-corpus");
    for (i, file) in files.iter().enumerate() {
        let name = file.strip_prefix(source.join("data/dxl/minidump")).unwrap_or(file).display().to_string();
        eprint!("\r[{}/{}] {name:60.60}", i + 1, files.len());
        // Each minidump in a process of its own: ORCA crashes on some
        // minidumps outside its test list, and a crash is a finding to
        // report, not the end of the run.
        let out = std::process::Command::new(&me)
            .arg("--child")
            .arg(file)
            .output()
            .expect("running orca-corpus --child");
        let mut row = if out.status.success() {
            Row::decode(&String::from_utf8_lossy(&out.stdout))
        } else {
            let why = match out.status.code() {
                Some(c) => format!("error: exit {c}"),
                None => format!("crash: {}", crash_signal(&out.status)),
            };
            Row::failed(why)
        };
        row.name = name;
        row.in_harness = harness.contains(file);
        rows.push(row);
    }
    eprintln!();

    // Pruning under the vector model: a spread sample of the minidumps that
    // optimize at all.
    let optimizable: Vec<PathBuf> =
        files.iter().zip(&rows).filter(|(_, r)| r.change.is_some()).map(|(f, _)| f.clone()).collect();
    let mut pruning_failures = Vec::new();
    let pruning_files = corpus::sample(&optimizable, args.pruning_sample);
    for file in &pruning_files {
        let run = |pruning| {
            optimize_minidump(
                file,
                &Options { cost_model: vec_model(Factors::DEFAULT), space_pruning: pruning },
            )
            .and_then(|o| o.plan())
            .map(|p| p.total_cost)
        };
        match (run(false), run(true)) {
            (Ok(a), Ok(b)) if a == b => {}
            (a, b) => pruning_failures.push(format!("{}: exhaustive {a:?}, pruned {b:?}", file.display())),
        }
    }

    // Leaks: one minidump optimized `leak_runs` times; resident memory
    // after a warm-up against after the runs.
    let leak_file = source.join("data/dxl/minidump/InEqualityJoin.mdp");
    for _ in 0..20 {
        let _ = optimize_minidump(&leak_file, &Options::default());
    }
    let before = resident_kib();
    for _ in 0..args.leak_runs {
        let _ = optimize_minidump(&leak_file, &Options::default());
    }
    let after = resident_kib();

    let report = report(&rows, &pruning_files, &pruning_failures, args.leak_runs, before, after);
    std::fs::create_dir_all(&args.out).expect("--out directory");
    std::fs::write(args.out.join("orca-corpus.md"), &report.0).expect("writing the report");
    std::fs::write(args.out.join("orca-corpus.csv"), &report.1).expect("writing the CSV");
    print!("{}", report.0);
    if report.2 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// An optimization that gave no plan at all.
fn failed(verdict: &str) -> bool {
    verdict.starts_with("error") || verdict.starts_with("crash")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The report (markdown), the CSV, and whether every requirement holds.
fn report(
    rows: &[Row],
    pruning_files: &[PathBuf],
    pruning_failures: &[String],
    leak_runs: usize,
    before: u64,
    after: u64,
) -> (String, String, bool) {
    let mut md = String::new();
    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    let harness: Vec<&Row> = rows.iter().filter(|r| r.in_harness).collect();
    let harness_fail: Vec<&&Row> =
        harness.iter().filter(|r| r.exhaustive != "pass" || r.pruned != "pass").collect();
    let _ = writeln!(md, "# ORCA's minidumps through orca_bridge (ORCA {})\n", orca_bridge::version());
    let _ = writeln!(
        md,
        "{} minidumps ({} of them in ORCA's own test list).\n\n\
         | | exhaustive search | pruned search |\n|---|---:|---:|\n\
         | expected plan | {} | {} |\n| different plan | {} | {} |\n| ORCA error | {} | {} |\n| crash (in ORCA) | {} | {} |\n",
        rows.len(),
        harness.len(),
        count(&|r| r.exhaustive == "pass"),
        count(&|r| r.pruned == "pass"),
        count(&|r| r.exhaustive != "pass" && !failed(&r.exhaustive)),
        count(&|r| r.pruned != "pass" && !failed(&r.pruned)),
        count(&|r| r.exhaustive.starts_with("error")),
        count(&|r| r.pruned.starts_with("error")),
        count(&|r| r.exhaustive.starts_with("crash")),
        count(&|r| r.pruned.starts_with("crash")),
    );
    let _ = writeln!(
        md,
        "ORCA's test list: {} of {} give the expected plan in both searches.\n",
        harness.len() - harness_fail.len(),
        harness.len()
    );
    let mut times: Vec<f64> = rows.iter().filter(|r| r.optimize_ms > 0.0).map(|r| r.optimize_ms).collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let _ = writeln!(
        md,
        "Optimization time (exhaustive, ORCA's cost model): median {:.1} ms, p90 {:.1} ms, max {:.1} ms, total {:.1} s.\n",
        percentile(&times, 0.5),
        percentile(&times, 0.9),
        times.last().copied().unwrap_or(0.0),
        times.iter().sum::<f64>() / 1000.0
    );

    let neutral_checked = count(&|r| r.neutral_same.is_some());
    let neutral_diff: Vec<&Row> = rows.iter().filter(|r| r.neutral_same == Some(false)).collect();
    let _ = writeln!(
        md,
        "## CCostModelVec\n\nAgainst ORCA's calibrated GPDB model, the model it scales (dumps taken with ORCA's legacy model get\nthe GPDB model's default parameters).\n\nNeutral factors (all 1): {} of {} plans identical to the GPDB model's (text, costs included).\n",
        neutral_checked - neutral_diff.len(),
        neutral_checked
    );
    let changes: Vec<&Row> = rows.iter().filter(|r| r.change.is_some_and(|c| c.any)).collect();
    let _ = writeln!(
        md,
        "vexec's factors ({:?}): of {} plans, {} change: join order {}, join method {}, aggregation stages {}.\n",
        Factors::DEFAULT,
        count(&|r| r.change.is_some()),
        changes.len(),
        count(&|r| r.change.is_some_and(|c| c.join_order)),
        count(&|r| r.change.is_some_and(|c| c.join_method)),
        count(&|r| r.change.is_some_and(|c| c.aggregate_stages)),
    );
    // One example of each kind of change, each a different minidump.
    let kinds: [fn(&PlanChange) -> bool; 3] = [|c| c.join_order, |c| c.join_method, |c| c.aggregate_stages];
    let mut examples: Vec<&Row> = Vec::new();
    for kind in kinds {
        let fresh = |r: &&Row| !examples.iter().any(|e| e.name == r.name);
        if let Some(r) = rows.iter().filter(fresh).find(|r| r.change.as_ref().is_some_and(kind)) {
            examples.push(r);
        }
    }
    for r in examples {
        let (a, b) = r.shapes.as_ref().unwrap();
        let _ = writeln!(md, "- `{}`\n  - GPDB model: `{a}`\n  - vector model: `{b}`", r.name);
    }
    let _ = writeln!(
        md,
        "\nPruning under vexec's factors: {} of {} sampled minidumps find the exhaustive search's best cost.",
        pruning_files.len() - pruning_failures.len(),
        pruning_files.len()
    );
    for f in pruning_failures {
        let _ = writeln!(md, "- {f}");
    }
    let leak_kib = after as i64 - before as i64;
    let _ = writeln!(
        md,
        "\nMemory: {leak_runs} optimizations of one minidump: resident {before} KiB before, {after} KiB after ({leak_kib:+} KiB).\n"
    );
    if !harness_fail.is_empty() || rows.len() > harness.len() {
        let _ = writeln!(md, "## Minidumps without their expected plan\n");
        for r in rows.iter().filter(|r| r.exhaustive != "pass" || r.pruned != "pass") {
            let list = if r.in_harness { "in ORCA's test list" } else { "not in ORCA's test list" };
            let _ = writeln!(md, "- `{}` ({list}): exhaustive {}; pruned {}", r.name, r.exhaustive, r.pruned);
        }
    }
    if !neutral_diff.is_empty() {
        let _ = writeln!(md, "\n## Neutral-model plans that differ\n");
        for r in &neutral_diff {
            let _ = writeln!(md, "- `{}`", r.name);
        }
    }

    let mut csv =
        String::from("minidump,in_harness,exhaustive,pruned,optimize_ms,groups,neutral_same,plan_changed\n");
    for r in rows {
        let _ = writeln!(
            csv,
            "{},{},\"{}\",\"{}\",{:.3},{},{},{}",
            r.name,
            r.in_harness,
            r.exhaustive.replace('"', "'"),
            r.pruned.replace('"', "'"),
            r.optimize_ms,
            r.groups,
            r.neutral_same.map_or("".into(), |b| b.to_string()),
            r.change.map_or("".into(), |c| c.any.to_string())
        );
    }
    // Memory growth allowed: a few MiB of allocator noise, not a leak per run.
    let ok = harness_fail.is_empty()
        && neutral_diff.is_empty()
        && pruning_failures.is_empty()
        && leak_kib < 8 * 1024;
    (md, csv, ok)
}

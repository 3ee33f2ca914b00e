//! ORCA's minidump corpus: the `.mdp` files of its source snapshot and the
//! subset its own test server runs (the `MDP_GROUPS` list in
//! `server/CMakeLists.txt`). Pure: plain `cargo test` covers the parsing.

use std::path::{Path, PathBuf};

/// Where the dev root keeps ORCA's source tree (`ORCA_SOURCE` overrides).
pub fn source_dir() -> PathBuf {
    std::env::var_os("ORCA_SOURCE").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/opt/gporca-src"))
}

/// Every minidump under `data/dxl/minidump` (subdirectories included),
/// sorted by path.
pub fn all_minidumps(source: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut dirs = vec![source.join("data/dxl/minidump")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "mdp") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The minidump names (without `.mdp`) ORCA's test server runs, in its
/// order, from the text of `server/CMakeLists.txt`: groups
/// `CxxxTest: name name ...;` inside `set(MDP_GROUPS "...")`, with
/// `/* ... */` comments.
pub fn harness_names(cmakelists: &str) -> Vec<String> {
    let Some(start) = cmakelists.find("set(MDP_GROUPS \"") else {
        return Vec::new();
    };
    let body = &cmakelists[start + "set(MDP_GROUPS \"".len()..];
    let body = &body[..body.find('"').unwrap_or(body.len())];
    let mut text = String::new();
    let mut rest = body;
    while let Some(open) = rest.find("/*") {
        text.push_str(&rest[..open]);
        rest = rest[open..].find("*/").map_or("", |close| &rest[open + close + 2..]);
    }
    text.push_str(rest);
    text.split(';')
        .filter_map(|group| group.split_once(':').map(|(_, names)| names))
        .flat_map(|names| names.split_whitespace().map(str::to_string))
        .collect()
}

/// The minidumps of ORCA's own test list, as paths under `source`.
pub fn harness_minidumps(source: &Path) -> std::io::Result<Vec<PathBuf>> {
    let text = std::fs::read_to_string(source.join("server/CMakeLists.txt"))?;
    let dir = source.join("data/dxl/minidump");
    Ok(harness_names(&text).into_iter().map(|n| dir.join(format!("{n}.mdp"))).collect())
}

/// Every `step`-th item starting at the first: a sample that spreads over
/// the whole list.
pub fn sample<T: Clone>(items: &[T], count: usize) -> Vec<T> {
    if count == 0 || items.is_empty() {
        return Vec::new();
    }
    let step = (items.len() / count).max(1);
    items.iter().step_by(step).take(count).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_harness_groups() {
        let text = "x\nset(MDP_GROUPS \"\n\nCSemiJoinTest:\nSemiJoin2InnerJoin SemiJoin2Select-1\n/* a comment; with a semicolon */ Correlated-SemiJoin;\n\nCAntiTest:\nNOT-IN-NullInner\")\nforeach()";
        assert_eq!(
            harness_names(text),
            vec!["SemiJoin2InnerJoin", "SemiJoin2Select-1", "Correlated-SemiJoin", "NOT-IN-NullInner"]
        );
        assert!(harness_names("no list").is_empty());
    }

    #[test]
    fn samples_spread_over_the_list() {
        let items: Vec<u32> = (0..100).collect();
        assert_eq!(sample(&items, 4), vec![0, 25, 50, 75]);
        assert_eq!(sample(&items[..3], 10), vec![0, 1, 2]);
        assert!(sample(&items, 0).is_empty());
    }
}

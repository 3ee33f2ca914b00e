//! ORCA's statistics of a search, read from the trace it prints with
//! `EopttracePrintOptimizationStatistics` (CEngine's "[OPT]: Memo" lines).
//! Pure: plain `cargo test` covers it.

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Search stages run.
    pub stages: u32,
    /// The memo after the last stage.
    pub groups: u64,
    pub duplicate_groups: u64,
    pub group_expressions: u64,
    /// The xforms activated in the last stage.
    pub xforms: u64,
    /// Time of all stages, as ORCA measured them (ms).
    pub stage_ms: u64,
}

/// Reads the statistics from ORCA's trace output of one optimization.
pub fn parse(log: &str) -> SearchStats {
    let mut s = SearchStats::default();
    for line in log.lines() {
        if let Some(rest) = after(line, "[OPT]: Memo (stage ") {
            // "0): [20 groups, 0 duplicate groups, 44 group expressions, 4 activated xforms]"
            s.stages += 1;
            let nums = numbers(rest.split_once(':').map_or("", |(_, r)| r));
            if let [g, d, e, x] = nums[..] {
                s.groups = g;
                s.duplicate_groups = d;
                s.group_expressions = e;
                s.xforms = x;
            }
        } else if let Some(rest) = after(line, "completed in ") {
            if line.contains("[OPT]: stage ") {
                s.stage_ms += numbers(rest).first().copied().unwrap_or(0);
            }
        }
    }
    s
}

fn after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.find(marker).map(|i| &line[i + marker.len()..])
}

fn numbers(s: &str) -> Vec<u64> {
    s.split(|c: char| !c.is_ascii_digit()).filter(|t| !t.is_empty()).filter_map(|t| t.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_memo_lines_of_every_stage() {
        let log = "[OPT]: Memo (stage 0): [12 groups, 1 duplicate groups, 30 group expressions, 5 activated xforms]\n\
                   [OPT]: stage 0 completed in 7 msec,  plan with cost 431 was found\n\
                   [OPT]: Memo (stage 1): [20 groups, 2 duplicate groups, 44 group expressions, 4 activated xforms]\n\
                   [OPT]: stage 1 completed in 12 msec,  plan with cost 430 was found\n";
        let s = parse(log);
        assert_eq!(
            s,
            SearchStats {
                stages: 2,
                groups: 20,
                duplicate_groups: 2,
                group_expressions: 44,
                xforms: 4,
                stage_ms: 19
            }
        );
        assert_eq!(parse("nothing here"), SearchStats::default());
    }
}

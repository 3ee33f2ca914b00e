//! Cost arithmetic that needs nothing of PostgreSQL's: the planner side
//! (`vexec::plan::scan`, the index fetch charge) feeds it the planner's estimates.

/// vexec's vector factors: what a unit of a row operator's work costs when
/// vexec does it on batches. The planner (`vexec::plan`) prices vector paths
/// with them, and ORCA's vector-aware cost model (`orca_bridge`,
/// CCostModelVec) takes the same figures. vexec reads them from its
/// settings (`vexec.tuple_cost_factor` and the like), whose defaults are
/// [`Factors::DEFAULT`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Factors {
    /// Getting a tuple into a batch (batched visibility, only the needed
    /// columns deformed) against `cpu_tuple_cost` for a row scan.
    pub tuple: f64,
    /// A qual or target evaluated by kernels against its `cost_qual_eval`
    /// cost (fallback items keep their full cost).
    pub kernel: f64,
    /// Handing a row to a row-based parent (filling its slot), in
    /// `cpu_tuple_cost` on top of what the parent pays.
    pub output: f64,
    /// Hashing a row's keys and probing the group table, against
    /// PostgreSQL's `cpu_operator_cost` per key column and row in
    /// `cost_agg`: batching the probes saves less than kernels do.
    pub group_key: f64,
    /// Hashing a key and probing, against `cpu_operator_cost` per key in
    /// HashJoin's costing.
    pub hash_key: f64,
    /// Comparisons and moving rows in a VecSort, against `cost_sort`'s
    /// charge for a Sort: native keys over columns and no tuple forming.
    pub sort: f64,
}

impl Factors {
    /// The factors as calibrated on the scan and aggregation benchmarks
    /// (bench/); conservative, since auto mode must never pick a vector
    /// plan meaningfully slower than the row plan it replaces.
    pub const DEFAULT: Factors =
        Factors { tuple: 0.3, kernel: 0.25, output: 0.2, group_key: 0.5, hash_key: 0.5, sort: 0.5 };

    /// Vector work at the price of row work and free hand-offs: vector
    /// paths cost what the row paths they replace cost (ORCA's
    /// CCostModelVec then prices plans exactly as ORCA's own model).
    pub const NEUTRAL: Factors =
        Factors { tuple: 1.0, kernel: 1.0, output: 0.0, group_key: 1.0, hash_key: 1.0, sort: 1.0 };
}

/// The heap pages one scan of an index visits for `selectivity` of a table
/// of `tuples` rows on `pages` pages, as cost_index counts them for a single
/// loop before amortizing over loops: from one page per row (uncorrelated,
/// at most every page of the table) down to the rows' share of the table's
/// pages (correlation 1), interpolated by the squared correlation.
pub fn heap_pages_per_loop(selectivity: f64, tuples: f64, pages: f64, correlation: f64) -> f64 {
    let rows = (selectivity * tuples).max(0.0);
    let max_pages = rows.min(pages);
    let min_pages = (selectivity * pages).ceil().clamp(0.0, max_pages.max(1.0));
    let c2 = (correlation * correlation).min(1.0);
    (max_pages + c2 * (min_pages - max_pages)).max(0.0)
}

/// btcostestimate reports a multi-column index's correlation as its leading
/// column's times 0.75, a hedge for the later columns. Rows that share a
/// leading key lie together whatever the later columns do (lineitem's
/// primary key (l_orderkey, l_linenumber)), so the heap pages of a lookup
/// follow the leading column's own correlation.
pub fn leading_column_correlation(reported: f64) -> f64 {
    (reported / 0.75).clamp(-1.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::heap_pages_per_loop;

    // lineitem at SF 1: 6 M rows on 112,553 pages.
    const TUPLES: f64 = 6_001_215.0;
    const PAGES: f64 = 112_553.0;

    #[test]
    fn uncorrelated_rows_take_a_page_each() {
        // l_suppkey = $1: 600 rows scattered over the table.
        let sel = 600.0 / TUPLES;
        assert!((heap_pages_per_loop(sel, TUPLES, PAGES, 0.0) - 600.0).abs() < 1e-6);
        // Sign of the correlation does not matter.
        assert_eq!(
            heap_pages_per_loop(sel, TUPLES, PAGES, 0.3),
            heap_pages_per_loop(sel, TUPLES, PAGES, -0.3)
        );
    }

    #[test]
    fn correlated_rows_share_their_pages() {
        // l_orderkey = $1: 4 rows lying together, correlation 1.
        let sel = 4.0 / TUPLES;
        assert_eq!(heap_pages_per_loop(sel, TUPLES, PAGES, 1.0), 1.0);
        // Halfway correlation lands between the two bounds.
        let sel = 600.0 / TUPLES;
        let mid = heap_pages_per_loop(sel, TUPLES, PAGES, 0.7);
        assert!(mid > 12.0 && mid < 600.0, "{mid}");
    }

    #[test]
    fn never_more_pages_than_the_table_or_fewer_than_none() {
        assert_eq!(heap_pages_per_loop(1.0, TUPLES, PAGES, 0.0), PAGES);
        assert_eq!(heap_pages_per_loop(0.0, TUPLES, PAGES, 0.0), 0.0);
        assert_eq!(heap_pages_per_loop(0.0, TUPLES, PAGES, 1.0), 0.0);
        assert_eq!(heap_pages_per_loop(1.0, TUPLES, PAGES, 1.0), PAGES);
    }

    #[test]
    fn a_composite_keys_lookup_counts_by_its_leading_column() {
        use super::leading_column_correlation;
        // (l_orderkey, l_linenumber): btcostestimate says 0.75 for a
        // perfectly ordered l_orderkey.
        let sel = 4.0 / TUPLES;
        let c = leading_column_correlation(0.75);
        assert_eq!(c, 1.0);
        assert_eq!(heap_pages_per_loop(sel, TUPLES, PAGES, c), 1.0);
        assert_eq!(leading_column_correlation(-0.75), -1.0);
        assert!((leading_column_correlation(0.3) - 0.4).abs() < 1e-12);
    }
}

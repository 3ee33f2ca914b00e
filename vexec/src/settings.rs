//! vexec's settings (GUCs), all under the reserved prefix `vexec.`.
//!
//! Planner settings carry `GUC_EXPLAIN`, so `EXPLAIN (SETTINGS)` shows them
//! when they differ from their defaults, like PostgreSQL's `enable_*`.

use pgrx::guc::GucEnum;
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::{pg_guard, PostgresGucEnum};
use vexec_core::cost::Factors;

/// `vexec.mode`: whether vector paths are built and whether they may win.
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// No vector path is ever built; plans are vanilla PostgreSQL's.
    #[name = c"off"]
    Off,
    /// Vector paths are costed and reported by EXPLAIN (VEXEC), never chosen.
    #[name = c"explain"]
    Explain,
    /// Vector paths compete with row paths on cost.
    #[name = c"auto"]
    Auto,
    /// Wherever a vector path is possible, it wins.
    #[name = c"force"]
    Force,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Explain => "explain",
            Mode::Auto => "auto",
            Mode::Force => "force",
        }
    }
}

/// `vexec.batch_format`: the in-memory layout of batches (DESIGN.md).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum BatchFormat {
    #[name = c"postgres"]
    Postgres,
    #[name = c"arrow"]
    Arrow,
}

impl BatchFormat {
    pub fn name(self) -> &'static str {
        match self {
            BatchFormat::Postgres => "postgres",
            BatchFormat::Arrow => "arrow",
        }
    }
}

/// `vexec.bool_layout`: booleans in batches, a byte a value (PostgreSQL's)
/// or a bit (Arrow's); `auto` follows `vexec.batch_format`.
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum BoolLayout {
    #[name = c"auto"]
    Auto,
    #[name = c"byte"]
    Byte,
    #[name = c"bit"]
    Bit,
}

/// `vexec.temporal_layout`: dates and timestamps counted from 2000-01-01
/// (PostgreSQL's) or from 1970-01-01 (Arrow's date32, timestamp(us)).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum TemporalLayout {
    #[name = c"auto"]
    Auto,
    #[name = c"postgres"]
    Postgres,
    #[name = c"unix"]
    Unix,
}

/// `vexec.numeric_layout`: numeric(p <= 38, s) values as PostgreSQL's
/// varlenas or as Arrow's decimal128.
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum NumericLayout {
    #[name = c"auto"]
    Auto,
    #[name = c"varlena"]
    Varlena,
    #[name = c"decimal128"]
    Decimal128,
}

/// `vexec.varlena_layout`: text, varchar, bpchar and bytea values as
/// PostgreSQL's Datums, Arrow's byte views (Utf8View/BinaryView) or Arrow's
/// offsets + values (Utf8/Binary); `auto` follows `vexec.batch_format`
/// (views).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum VarlenaLayout {
    #[name = c"auto"]
    Auto,
    #[name = c"datum"]
    Datum,
    #[name = c"view"]
    View,
    #[name = c"offsets"]
    Offsets,
}

pub static BOOL_LAYOUT: GucSetting<BoolLayout> = GucSetting::<BoolLayout>::new(BoolLayout::Auto);
pub static TEMPORAL_LAYOUT: GucSetting<TemporalLayout> =
    GucSetting::<TemporalLayout>::new(TemporalLayout::Auto);
pub static NUMERIC_LAYOUT: GucSetting<NumericLayout> = GucSetting::<NumericLayout>::new(NumericLayout::Auto);
pub static VARLENA_LAYOUT: GucSetting<VarlenaLayout> = GucSetting::<VarlenaLayout>::new(VarlenaLayout::Auto);
/// `vexec.debug_random_layout`: 0, or the seed of a per column and batch
/// random choice of layout (overrides the layout settings).
pub static DEBUG_RANDOM_LAYOUT: GucSetting<i32> = GucSetting::<i32>::new(0);

pub static MODE: GucSetting<Mode> = GucSetting::<Mode>::new(Mode::Off);
pub static BATCH_FORMAT: GucSetting<BatchFormat> = GucSetting::<BatchFormat>::new(BatchFormat::Postgres);
/// Default of `vexec.min_rows`: below about ten batches the fixed cost of
/// setting up a vector pipeline is not worth paying.
pub const MIN_ROWS_DEFAULT: i32 = 10_000;
pub static MIN_ROWS: GucSetting<i32> = GucSetting::<i32>::new(MIN_ROWS_DEFAULT);
/// Default of `vexec.index_margin`. PostgreSQL's estimates of index paths
/// (random_page_cost per page) and ours of a full vector scan can be off in
/// opposite directions on cached data: TPC-H Q8 at SF 1 ran 1.75x slower on
/// a hash join over a vector scan of lineitem, estimated 9% cheaper than
/// the nested loop over its index.
pub const INDEX_MARGIN_DEFAULT: f64 = 0.25;
pub static INDEX_MARGIN: GucSetting<f64> = GucSetting::<f64>::new(INDEX_MARGIN_DEFAULT);
/// Default of `vexec.index_fetch_cost`. PostgreSQL amortizes the heap pages
/// a parameterized index scan visits over all the loops of a nested loop
/// and, on cached data, counts them as almost free, while each is a buffer
/// lookup: TPC-H Q5 at SF 1 spent 1.95 s in a nested loop fetching 1.2 M
/// lineitem rows by l_suppkey (1.6 us a row, all in shared buffers), a plan
/// estimated cheaper than hash joins over vector scans that run the whole
/// query in 0.33 s. On that scale a vector scan of lineitem is costed about
/// 0.03 a row and runs at about 0.03 us a row, so a scattered page is
/// worth more than 0.5; 0.5 is what the 22 TPC-H queries at SF 1 were
/// measured with (the default was 0.05 while the charge still counted a
/// lookup's first page and read composite keys at btree's hedged
/// correlation, which made 0.5 cost primary-key nested loops their place).
pub const INDEX_FETCH_COST_DEFAULT: f64 = 0.5;
pub static INDEX_FETCH_COST: GucSetting<f64> = GucSetting::<f64>::new(INDEX_FETCH_COST_DEFAULT);
/// The vector cost factors (`vexec_core::cost::Factors`), one setting each.
pub static TUPLE_COST_FACTOR: GucSetting<f64> = GucSetting::<f64>::new(Factors::DEFAULT.tuple);
pub static KERNEL_COST_FACTOR: GucSetting<f64> = GucSetting::<f64>::new(Factors::DEFAULT.kernel);
pub static OUTPUT_COST_FACTOR: GucSetting<f64> = GucSetting::<f64>::new(Factors::DEFAULT.output);
pub static GROUP_KEY_COST_FACTOR: GucSetting<f64> = GucSetting::<f64>::new(Factors::DEFAULT.group_key);
pub static HASH_KEY_COST_FACTOR: GucSetting<f64> = GucSetting::<f64>::new(Factors::DEFAULT.hash_key);
pub static SORT_COST_FACTOR: GucSetting<f64> = GucSetting::<f64>::new(Factors::DEFAULT.sort);

/// The vector cost factors as the session has them set.
pub fn cost_factors() -> Factors {
    Factors {
        tuple: TUPLE_COST_FACTOR.get(),
        kernel: KERNEL_COST_FACTOR.get(),
        output: OUTPUT_COST_FACTOR.get(),
        group_key: GROUP_KEY_COST_FACTOR.get(),
        hash_key: HASH_KEY_COST_FACTOR.get(),
        sort: SORT_COST_FACTOR.get(),
    }
}

pub static ENABLE_SCAN: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static ENABLE_AGG: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static ENABLE_HASHJOIN: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static ENABLE_SORT: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static ENABLE_INSERT: GucSetting<bool> = GucSetting::<bool>::new(true);
/// Debug: rows per batch (1..1024), to shake out batch-boundary bugs.
pub static DEBUG_BATCH_SIZE: GucSetting<i32> = GucSetting::<i32>::new(1024);
/// Debug: every expression runs through PostgreSQL's evaluator.
pub static DEBUG_FORCE_FALLBACK: GucSetting<bool> = GucSetting::<bool>::new(false);
/// Debug: in force mode, planning fails when a row scan, hash join,
/// aggregate or sort is left in the plan (plan/require.rs).
pub static DEBUG_REQUIRE_VECTOR: GucSetting<bool> = GucSetting::<bool>::new(false);
/// Debug: read heap tables through slots, as other table access methods are.
pub static DEBUG_SLOT_SOURCE: GucSetting<bool> = GucSetting::<bool>::new(false);

// A cached plan keeps the vector nodes (or their absence) of the mode it was
// planned in. So that `SET vexec.mode = off` is an immediate way back to
// vanilla plans, a change of mode or format invalidates cached plans (as
// PostgreSQL does for search_path), and prepared statements are planned anew.
#[pg_guard]
unsafe extern "C-unwind" fn assign_mode(newval: i32, _extra: *mut std::ffi::c_void) {
    // Assign hooks run before the variable changes: MODE still holds the old value.
    if newval != MODE.get().to_ordinal() {
        // SAFETY: a GUC assign hook, called by guc.c on the backend's main thread.
        unsafe { pgrx::pg_sys::ResetPlanCache() };
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn assign_batch_format(newval: i32, _extra: *mut std::ffi::c_void) {
    if newval != BATCH_FORMAT.get().to_ordinal() {
        // SAFETY: as assign_mode.
        unsafe { pgrx::pg_sys::ResetPlanCache() };
    }
}

pub fn register() {
    let planner = GucFlags::EXPLAIN;
    // SAFETY: runs once, in _PG_init on the backend's main thread; the settings are statics that
    // live for the process.
    unsafe {
        GucRegistry::define_enum_guc_with_hooks(
            c"vexec.mode",
            c"Whether the planner builds vector paths, and whether they may win.",
            c"off: never (vanilla plans); explain: cost them and report them in EXPLAIN (VEXEC), never choose them; \
auto: they compete with row paths on cost; force: they win wherever possible.",
            &MODE,
            GucContext::Userset,
            planner,
            None,
            Some(assign_mode),
            None,
        );
        GucRegistry::define_enum_guc_with_hooks(
            c"vexec.batch_format",
            c"In-memory layout of vector batches: postgres or arrow.",
            c"postgres keeps values as PostgreSQL defines them; arrow keeps booleans, dates, timestamps and numeric(p <= 38, s) \
in Arrow's representations (vexec.bool_layout, vexec.temporal_layout, vexec.numeric_layout choose per type).",
            &BATCH_FORMAT,
            GucContext::Userset,
            planner,
            None,
            Some(assign_batch_format),
            None,
        );
    }
    GucRegistry::define_int_guc(
        c"vexec.min_rows",
        c"Fewest rows a table must have (as estimated) for a vector scan of it to be considered (ignored in force mode).",
        c"",
        &MIN_ROWS,
        0,
        i32::MAX,
        GucContext::Userset,
        planner,
    );
    GucRegistry::define_float_guc(
        c"vexec.index_margin",
        c"In auto mode, the fraction by which a vector scan's estimated cost is raised (short of the sequential scan's), so that a vector plan replaces an index plan only when clearly cheaper.",
        c"",
        &INDEX_MARGIN,
        0.0,
        100.0,
        GucContext::Userset,
        planner,
    );
    GucRegistry::define_float_guc(
        c"vexec.index_fetch_cost",
        c"In auto and force modes, the cost added per heap page a parameterized index scan (the inner side of a nested loop) visits on each loop, on top of PostgreSQL's estimate.",
        c"",
        &INDEX_FETCH_COST,
        0.0,
        1.0e6,
        GucContext::Userset,
        planner,
    );
    let factors: [(&'static std::ffi::CStr, &'static std::ffi::CStr, &'static GucSetting<f64>); 6] = [
        (
            c"vexec.tuple_cost_factor",
            c"Cost of getting a tuple into a vector batch, as a fraction of cpu_tuple_cost.",
            &TUPLE_COST_FACTOR,
        ),
        (
            c"vexec.kernel_cost_factor",
            c"Cost of an expression evaluated by vector kernels, as a fraction of its cost in PostgreSQL's evaluator.",
            &KERNEL_COST_FACTOR,
        ),
        (
            c"vexec.output_cost_factor",
            c"Cost of handing a row between a vector node and a row node, as a fraction of cpu_tuple_cost.",
            &OUTPUT_COST_FACTOR,
        ),
        (
            c"vexec.group_key_cost_factor",
            c"Cost of hashing a grouping key and probing in a vector aggregate, as a fraction of cpu_operator_cost.",
            &GROUP_KEY_COST_FACTOR,
        ),
        (
            c"vexec.hash_key_cost_factor",
            c"Cost of hashing a join key and probing in a vector hash join, as a fraction of cpu_operator_cost.",
            &HASH_KEY_COST_FACTOR,
        ),
        (
            c"vexec.sort_cost_factor",
            c"Cost of a vector sort, as a fraction of PostgreSQL's cost of the same sort.",
            &SORT_COST_FACTOR,
        ),
    ];
    for (name, short, setting) in factors {
        GucRegistry::define_float_guc(name, short, c"", setting, 0.0, 1000.0, GucContext::Userset, planner);
    }
    let switches: [(&'static std::ffi::CStr, &'static std::ffi::CStr, &'static GucSetting<bool>); 5] = [
        (c"vexec.enable_scan", c"Enables the planner's use of vector scans.", &ENABLE_SCAN),
        (c"vexec.enable_agg", c"Enables the planner's use of vector aggregation.", &ENABLE_AGG),
        (c"vexec.enable_hashjoin", c"Enables the planner's use of vector hash joins.", &ENABLE_HASHJOIN),
        (c"vexec.enable_sort", c"Enables the planner's use of vector sorts.", &ENABLE_SORT),
        (
            c"vexec.enable_insert",
            c"Enables the planner's use of batched inserts (VecInsert).",
            &ENABLE_INSERT,
        ),
    ];
    for (name, short, setting) in switches {
        GucRegistry::define_bool_guc(name, short, c"", setting, GucContext::Userset, planner);
    }
    GucRegistry::define_enum_guc(
        c"vexec.bool_layout",
        c"Booleans in vector batches: byte (PostgreSQL's) or bit (Arrow's); auto follows vexec.batch_format.",
        c"",
        &BOOL_LAYOUT,
        GucContext::Userset,
        GucFlags::EXPLAIN,
    );
    GucRegistry::define_enum_guc(
        c"vexec.temporal_layout",
        c"Dates and timestamps in vector batches: postgres (from 2000-01-01) or unix (Arrow's, from 1970-01-01); auto follows vexec.batch_format.",
        c"",
        &TEMPORAL_LAYOUT,
        GucContext::Userset,
        GucFlags::EXPLAIN,
    );
    GucRegistry::define_enum_guc(
        c"vexec.numeric_layout",
        c"numeric(p <= 38, s) in vector batches: varlena (PostgreSQL's) or decimal128 (Arrow's); auto follows vexec.batch_format.",
        c"",
        &NUMERIC_LAYOUT,
        GucContext::Userset,
        GucFlags::EXPLAIN,
    );
    GucRegistry::define_enum_guc(
        c"vexec.varlena_layout",
        c"text, varchar, bpchar and bytea in vector batches: datum (PostgreSQL's), view (Arrow's byte views) or offsets (Arrow's offsets and values); auto follows vexec.batch_format (view).",
        c"",
        &VARLENA_LAYOUT,
        GucContext::Userset,
        GucFlags::EXPLAIN,
    );
    // Debug settings: superuser only, so that tests can shake the executor.
    GucRegistry::define_int_guc(
        c"vexec.debug_random_layout",
        c"Seed of a random layout per column and batch (debug: exercises every mix of layouts); 0 is off.",
        c"",
        &DEBUG_RANDOM_LAYOUT,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::EXPLAIN,
    );
    GucRegistry::define_int_guc(
        c"vexec.debug_batch_size",
        c"Rows per batch (debug: small values exercise batch boundaries).",
        c"",
        &DEBUG_BATCH_SIZE,
        1,
        vexec_core::batch::BATCH_CAPACITY as i32,
        GucContext::Suset,
        GucFlags::EXPLAIN,
    );
    GucRegistry::define_bool_guc(
        c"vexec.debug_force_fallback",
        c"Evaluate every expression with PostgreSQL's evaluator (debug: checks the fallback path).",
        c"",
        &DEBUG_FORCE_FALLBACK,
        GucContext::Suset,
        GucFlags::EXPLAIN,
    );
    GucRegistry::define_bool_guc(
        c"vexec.debug_require_vector",
        c"In force mode, fail planning when a scan, hash join, aggregate or sort stays a row node (debug: for tests).",
        c"",
        &DEBUG_REQUIRE_VECTOR,
        GucContext::Suset,
        GucFlags::EXPLAIN,
    );
    GucRegistry::define_bool_guc(
        c"vexec.debug_slot_source",
        c"Read heap tables through slots, as other table access methods are (debug).",
        c"",
        &DEBUG_SLOT_SOURCE,
        GucContext::Suset,
        GucFlags::EXPLAIN,
    );
    // SAFETY: as above.
    unsafe { pgrx::pg_sys::MarkGUCPrefixReserved(c"vexec".as_ptr()) };
}

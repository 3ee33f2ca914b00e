//! Which vector transition computes an aggregate exactly (`transition_of`),
//! or how it runs through fmgr inside VecAgg, and whether its partial
//! states combine; or why not.

#[allow(unused_imports)]
use super::*;

/// The vector transition that computes `aggref` exactly, or why there is none.
pub unsafe fn transition_of(aggref: *mut pg_sys::Aggref) -> Result<Transition, String> {
    // SAFETY: this function's contract: aggref is a live Aggref of the query; catalog lookups by
    // OID on the main thread.
    unsafe {
        let a = &*aggref;
        let name = {
            let n = pg_sys::get_func_name(a.aggfnoid);
            if n.is_null() {
                "?".to_string()
            } else {
                CStr::from_ptr(n).to_string_lossy().into_owned()
            }
        };
        if a.aggkind as u8 != pg_sys::AGGKIND_NORMAL {
            return Err(format!("ordered-set aggregate {name}"));
        }
        if !a.aggorder.is_null() {
            return Err(format!("ORDER BY inside aggregate {name}"));
        }
        // (INITIAL_SERIAL: the aggregates of our own Partial VecAgg.)
        let split_ok = matches!(
            a.aggsplit,
            pg_sys::AggSplit::AGGSPLIT_SIMPLE | pg_sys::AggSplit::AGGSPLIT_INITIAL_SERIAL
        );
        if a.agglevelsup != 0 || !split_ok {
            return Err(format!("aggregate {name} of an outer query or split"));
        }
        let builtin =
            pg_sys::get_func_namespace(a.aggfnoid) == pg_sys::Oid::from(pg_sys::PG_CATALOG_NAMESPACE);
        // The types of the argument expressions, which are what the
        // transition reads, not `aggargtypes`: an Aggref built by another
        // extension may label them otherwise (Citus's combine query gives
        // sum(int8) over a worker's count a numeric `aggargtypes`).
        let argtypes: Vec<pg_sys::Oid> =
            list_ptrs::<pg_sys::TargetEntry>(a.args).map(|te| pg_sys::exprType((*te).expr.cast())).collect();
        if !a.aggdistinct.is_null() {
            // count(DISTINCT x): a set of (group, value) pairs, with the
            // group table's equality, which must be the DISTINCT's.
            let sgc = list_ptrs::<pg_sys::SortGroupClause>(a.aggdistinct).next();
            return match (name.as_str(), argtypes.as_slice(), sgc) {
                ("count", [t], Some(sgc)) if (*a.aggdistinct).length == 1 => {
                    let kind = if *t == pg_sys::RECORDOID {
                        // count(DISTINCT (a, b)): the row's fields are known here.
                        let arg =
                            (*list_ptrs::<pg_sys::TargetEntry>(a.args).next().expect("an argument")).expr;
                        match row_encoding(arg.cast())? {
                            Some(_) => KeyKind::Encoded,
                            None => return Err("count(DISTINCT) of a record of unknown fields".into()),
                        }
                    } else {
                        key_kind(*t, a.inputcollid)?
                    };
                    if !default_equality(*t, sgc) {
                        return Err(format!("count(DISTINCT {}) with a non-default equality", type_name(*t)));
                    }
                    Ok(Transition::CountDistinct(kind))
                }
                (_, [t], Some(sgc))
                    if builtin
                        && (*a.aggdistinct).length == 1
                        && distinct_transition(&name, *t).is_some() =>
                {
                    if !default_equality(*t, sgc) {
                        return Err(format!(
                            "{name}(DISTINCT {}) with a non-default equality",
                            type_name(*t)
                        ));
                    }
                    Ok(distinct_transition(&name, *t).expect("checked"))
                }
                _ => fmgr_distinct(aggref, builtin, &name),
            };
        }
        use pg_sys::{
            BOOLOID, DATEOID, FLOAT4OID, FLOAT8OID, INT2OID, INT4OID, INT8OID, TEXTOID, TIMESTAMPOID,
            TIMESTAMPTZOID,
        };
        let int_like = [INT2OID, INT4OID, INT8OID, DATEOID, TIMESTAMPOID, TIMESTAMPTZOID];
        let vector = match (name.as_str(), argtypes.as_slice()) {
            _ if !builtin => None,
            ("count", []) if a.aggstar => Some(Transition::CountRows),
            ("count", [_]) => Some(Transition::CountValues),
            ("sum", [t]) if *t == INT2OID || *t == INT4OID => Some(Transition::SumInt),
            ("sum", [t]) if *t == INT8OID => Some(Transition::SumBigInt),
            ("avg", [t]) if [INT2OID, INT4OID, INT8OID].contains(t) => Some(Transition::AvgInt),
            ("sum", [t]) if *t == pg_sys::NUMERICOID => Some(Transition::SumNumeric),
            ("avg", [t]) if *t == pg_sys::NUMERICOID => Some(Transition::AvgNumeric),
            ("min" | "max", [t]) if *t == pg_sys::NUMERICOID => {
                Some(Transition::MinMaxNumeric { max: name == "max" })
            }
            ("sum", [t]) if *t == FLOAT4OID => Some(Transition::SumFloat4),
            ("sum", [t]) if *t == FLOAT8OID => Some(Transition::SumFloat8),
            (n, [t]) if *t == FLOAT4OID || *t == FLOAT8OID => {
                let fin = match n {
                    "avg" => Some(MomentsFinal::Avg),
                    "var_pop" => Some(MomentsFinal::VarPop),
                    "var_samp" | "variance" => Some(MomentsFinal::VarSamp),
                    "stddev_pop" => Some(MomentsFinal::StddevPop),
                    "stddev_samp" | "stddev" => Some(MomentsFinal::StddevSamp),
                    _ => None,
                };
                match (n, fin) {
                    (_, Some(fin)) => Some(Transition::Moments { fin }),
                    ("min" | "max", None) => Some(Transition::MinMaxFloat { max: n == "max" }),
                    _ => None,
                }
            }
            ("min" | "max", [t]) if int_like.contains(t) => {
                Some(Transition::MinMaxInt { max: name == "max" })
            }
            ("bool_and" | "every", [t]) if *t == BOOLOID => Some(Transition::MinMaxInt { max: false }),
            ("bool_or", [t]) if *t == BOOLOID => Some(Transition::MinMaxInt { max: true }),
            // Under the C collation bytewise; under others through the
            // collation's own order (exec/agg/).
            ("min" | "max", [t]) if *t == TEXTOID => {
                if a.inputcollid == pg_sys::InvalidOid {
                    return Err(format!("{name}(text) without a collation"));
                }
                Some(Transition::MinMaxBytes { max: name == "max" })
            }
            _ => None,
        };
        match vector {
            Some(t) => Ok(t),
            None => fmgr_transition(aggref, builtin).map_err(|why| {
                let types: Vec<String> = argtypes.iter().map(|&t| type_name(t)).collect();
                format!("no vector transition for {name}({}), {why}", types.join(", "))
            }),
        }
    }
}

/// The vector transition of `name(DISTINCT x)` over type `t` whose result
/// does not depend on the order in which PostgreSQL would feed it the
/// (sorted) distinct values: sums and averages of integers (each distinct
/// value once per group), and extremes of integer-like values and booleans
/// (the extreme of the distinct values is the extreme of all of them, and
/// values equal here are identical). None for the others (float sums and
/// fmgr aggregates depend on that order; text and numeric have equal values
/// that differ).
pub(super) fn distinct_transition(name: &str, t: pg_sys::Oid) -> Option<Transition> {
    use pg_sys::{BOOLOID, DATEOID, INT2OID, INT4OID, INT8OID, TIMESTAMPOID, TIMESTAMPTZOID};
    let ints = [INT2OID, INT4OID, INT8OID];
    let int_like = [INT2OID, INT4OID, INT8OID, DATEOID, TIMESTAMPOID, TIMESTAMPTZOID];
    Some(match name {
        "sum" if t == INT2OID || t == INT4OID => Transition::SumDistinctInt,
        "sum" if t == INT8OID => Transition::SumDistinctBigInt,
        "avg" if ints.contains(&t) => Transition::AvgDistinctInt,
        "min" | "max" if int_like.contains(&t) => Transition::MinMaxInt { max: name == "max" },
        "bool_and" | "every" if t == BOOLOID => Transition::MinMaxInt { max: false },
        "bool_or" if t == BOOLOID => Transition::MinMaxInt { max: true },
        _ => return None,
    })
}

/// A DISTINCT aggregate without a vector transition runs through fmgr,
/// fed each group's distinct argument rows in PostgreSQL's order (sorted
/// by each argument, NULLs last: exec/agg/fmgr.rs), when every argument
/// has a type whose equal values are identical (so which of equal values
/// PostgreSQL's sort keeps does not matter) under its default equality and
/// order, or why not.
pub(super) unsafe fn fmgr_distinct(
    aggref: *mut pg_sys::Aggref,
    builtin: bool,
    name: &str,
) -> Result<Transition, String> {
    // SAFETY: aggref is a live Aggref (caller's contract).
    unsafe {
        let a = &*aggref;
        let args: Vec<*mut pg_sys::TargetEntry> = list_ptrs(a.args).collect();
        let clauses: Vec<*mut pg_sys::SortGroupClause> = list_ptrs(a.aggdistinct).collect();
        for &te in &args {
            let t = pg_sys::exprType((*te).expr.cast());
            let Some(sgc) = clauses.iter().copied().find(|&c| (*c).tleSortGroupRef == (*te).ressortgroupref)
            else {
                return Err(format!("DISTINCT aggregate {name} with an argument outside its DISTINCT"));
            };
            if distinct_arg_kind(t, a.inputcollid, pg_sys::exprTypmod((*te).expr.cast())).is_none() {
                return Err(format!(
                    "DISTINCT aggregate {name} over {} (its equal values can differ, and which one PostgreSQL keeps depends on its sort)",
                    type_name(t)
                ));
            }
            let lt = (*pg_sys::lookup_type_cache(t, pg_sys::TYPECACHE_LT_OPR as i32)).lt_opr;
            if !default_equality(t, sgc) || (*sgc).sortop != lt || (*sgc).nulls_first {
                return Err(format!(
                    "DISTINCT aggregate {name} over {} with a non-default order",
                    type_name(t)
                ));
            }
        }
        fmgr_transition(aggref, builtin)
            .map_err(|why| format!("no vector transition for {name}(DISTINCT), {why}"))
    }
}

/// An aggregate without a vector transition runs its own transition and
/// final functions through fmgr inside VecAgg (exec/agg/), when its state
/// is an SQL value: an `internal` state needs an aggregate context
/// (AggCheckCallContext) that only PostgreSQL's Agg node provides.
pub(super) unsafe fn fmgr_transition(
    aggref: *mut pg_sys::Aggref,
    builtin: bool,
) -> Result<Transition, String> {
    // SAFETY: aggref is a live Aggref (caller's contract).
    unsafe {
        let a = &*aggref;
        // (`agg(*)` has no arguments: args is NIL.)
        if list_ptrs::<pg_sys::TargetEntry>(a.args).count() > MAX_FMGR_ARGS {
            return Err(format!("and it has more than {MAX_FMGR_ARGS} arguments"));
        }
        // Arguments go to spill files as values: by value, fixed-length or
        // varlenas (not cstrings).
        for te in list_ptrs::<pg_sys::TargetEntry>(a.args) {
            let t = pg_sys::exprType((*te).expr.cast());
            if !pg_sys::get_typbyval(t) && pg_sys::get_typlen(t) < -1 {
                return Err(format!("and its argument type {} is a C string", type_name(t)));
            }
        }
        let Some(AggregateFunctions { transfn, finalfn, .. }) = aggregate_functions(a.aggfnoid) else {
            return Err("and it has no pg_aggregate entry".into());
        };
        if a.aggtranstype == pg_sys::INTERNALOID {
            // An internal state lives in the aggregate context the functions
            // ask VecAgg's stand-in Agg node for (exec/agg/fmgr.rs). Whether
            // the transition can raise an error on some input (not only past
            // memory limits) is known for these built-in pairs; any other
            // may.
            let name = |f: pg_sys::Oid| {
                (f != pg_sys::InvalidOid)
                    .then(|| CStr::from_ptr(pg_sys::get_func_name(f)).to_string_lossy().into_owned())
            };
            let (t, f) = (name(transfn), name(finalfn));
            let (t, f) = (t.as_deref().unwrap_or(""), f.as_deref().unwrap_or(""));
            let known = builtin_function(transfn)
                .then(|| {
                    CONTEXT_AGGREGATES.iter().find(|c| c.0 == t && c.1 == f).map(|c| c.2).or_else(|| {
                        // variance and stddev of integers (exact) and numerics
                        // (whose squares can pass numeric's range)
                        match t {
                            "int2_accum" | "int4_accum" => {
                                VARIANCE_FINALS_INT128.contains(&f).then_some(false)
                            }
                            "int8_accum" => VARIANCE_FINALS.contains(&f).then_some(false),
                            "numeric_accum" => VARIANCE_FINALS.contains(&f).then_some(true),
                            _ => None,
                        }
                    })
                })
                .flatten();
            return Ok(Transition::Fmgr { raises: known.unwrap_or(true) });
        }
        // Built-in min/max transitions (int4larger, interval_smaller, ...)
        // only compare; range intersections raise no error on ranges of one
        // type; any other function may raise an error.
        let fname = CStr::from_ptr(pg_sys::get_func_name(transfn)).to_string_lossy().into_owned();
        let compares = builtin && (fname.ends_with("larger") || fname.ends_with("smaller"));
        let checks_context = builtin && CONTEXT_CHECKING_FNS.contains(&fname.as_str());
        Ok(Transition::Fmgr { raises: !compares && !checks_context })
    }
}

/// Whether `f` is a function of pg_catalog.
pub(super) unsafe fn builtin_function(f: pg_sys::Oid) -> bool {
    // SAFETY: a catalog lookup by OID on the backend's main thread.
    unsafe {
        f != pg_sys::InvalidOid
            && pg_sys::get_func_namespace(f) == pg_sys::Oid::from(pg_sys::PG_CATALOG_NAMESPACE)
    }
}

/// Built-in aggregates with an `internal` state whose transition and final
/// functions use only the aggregate memory context of their Agg node:
/// (transition, final, whether the transition can raise an error on some
/// input, not only past memory limits).
pub(super) const CONTEXT_AGGREGATES: &[(&str, &str, bool)] = &[
    ("string_agg_transfn", "string_agg_finalfn", false),
    ("bytea_string_agg_transfn", "bytea_string_agg_finalfn", false),
    ("array_agg_transfn", "array_agg_finalfn", false),
    // (arrays of different dimensions, NULL arrays)
    ("array_agg_array_transfn", "array_agg_array_finalfn", true),
    // (values turned into JSON by their types' functions; NULL object keys)
    ("json_agg_transfn", "json_agg_finalfn", true),
    ("json_agg_strict_transfn", "json_agg_finalfn", true),
    ("jsonb_agg_transfn", "jsonb_agg_finalfn", true),
    ("jsonb_agg_strict_transfn", "jsonb_agg_finalfn", true),
    ("jsonb_object_agg_transfn", "jsonb_object_agg_finalfn", true),
    ("jsonb_object_agg_strict_transfn", "jsonb_object_agg_finalfn", true),
    ("jsonb_object_agg_unique_transfn", "jsonb_object_agg_finalfn", true),
    ("jsonb_object_agg_unique_strict_transfn", "jsonb_object_agg_finalfn", true),
    ("json_object_agg_transfn", "json_object_agg_finalfn", true),
    ("json_object_agg_strict_transfn", "json_object_agg_finalfn", true),
    ("json_object_agg_unique_transfn", "json_object_agg_finalfn", true),
    ("json_object_agg_unique_strict_transfn", "json_object_agg_finalfn", true),
    // sum and avg of interval (interval out of range)
    ("interval_avg_accum", "interval_sum", true),
    ("interval_avg_accum", "interval_avg", true),
    // range_agg of ranges and of multiranges (their union)
    ("range_agg_transfn", "range_agg_finalfn", false),
    ("multirange_agg_transfn", "multirange_agg_finalfn", false),
];

/// Built-in C functions of aggregates with an SQL state that insist on
/// being called by an Agg node (AggCheckCallContext) and raise no error on
/// values of one type: range_intersect_agg of ranges and of multiranges.
pub(super) const CONTEXT_CHECKING_FNS: &[&str] =
    &["range_intersect_agg_transfn", "multirange_intersect_agg_transfn"];

/// The final functions of var_pop, var_samp (variance), stddev_pop and
/// stddev_samp (stddev) over the states of int8_accum and numeric_accum,
/// and over the 128-bit integer states of int2_accum and int4_accum.
pub(super) const VARIANCE_FINALS: [&str; 4] =
    ["numeric_var_pop", "numeric_var_samp", "numeric_stddev_pop", "numeric_stddev_samp"];
pub(super) const VARIANCE_FINALS_INT128: [&str; 4] =
    ["numeric_poly_var_pop", "numeric_poly_var_samp", "numeric_poly_stddev_pop", "numeric_poly_stddev_samp"];

/// Whether the partial states of an aggregate run through fmgr combine in
/// a Finalize VecAgg: it has a combine function and, for an `internal`
/// state, serialization and deserialization functions, or why not.
pub(super) unsafe fn fmgr_combines(aggref: *mut pg_sys::Aggref) -> Result<(), String> {
    // SAFETY: aggref is a live Aggref (caller's contract).
    unsafe {
        let a = &*aggref;
        let name = |f: pg_sys::Oid| CStr::from_ptr(pg_sys::get_func_name(f)).to_string_lossy().into_owned();
        let agg = name(a.aggfnoid);
        let f = aggregate_functions(a.aggfnoid).ok_or_else(|| format!("{agg} has no pg_aggregate entry"))?;
        if f.combinefn == pg_sys::InvalidOid {
            return Err(format!("{agg} has no combine function"));
        }
        if a.aggtranstype == pg_sys::INTERNALOID
            && (f.serialfn == pg_sys::InvalidOid || f.deserialfn == pg_sys::InvalidOid)
        {
            return Err(format!("{agg} has an internal state without serialization functions"));
        }
        if a.aggtranstype == pg_sys::INTERNALOID {
            // As PostgreSQL's agg_args_support_sendreceive(): an internal
            // state is serialized with its arguments' send and receive
            // functions (array_agg's), and record_recv cannot read an
            // anonymous record back.
            for tle in crate::pgutil::list_ptrs::<pg_sys::TargetEntry>(a.args) {
                let t = pg_sys::exprType((*tle).expr.cast());
                let io_function = |which| {
                    let (mut len, mut byval, mut align, mut delim) =
                        (0i16, false, 0 as std::ffi::c_char, 0 as std::ffi::c_char);
                    let (mut param, mut func) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
                    pg_sys::get_type_io_data(
                        t, which, &mut len, &mut byval, &mut align, &mut delim, &mut param, &mut func,
                    );
                    func
                };
                let send = io_function(pg_sys::IOFuncSelector::IOFunc_send);
                let recv = io_function(pg_sys::IOFuncSelector::IOFunc_receive);
                if t == pg_sys::RECORDOID || send == pg_sys::InvalidOid || recv == pg_sys::InvalidOid {
                    return Err(format!(
                        "{agg}'s state cannot be serialized: an argument's type has no usable binary I/O"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Whether the partial states of `aggref` combine, or why not.
pub(super) unsafe fn partial_state_of(aggref: *mut pg_sys::Aggref) -> Result<(), String> {
    // SAFETY: as transition_of.
    unsafe {
        match transition_of(aggref) {
            Ok(t) if t.combines() => Ok(()),
            Ok(Transition::Fmgr { .. }) if !(*aggref).aggdistinct.is_null() => {
                let name =
                    CStr::from_ptr(pg_sys::get_func_name((*aggref).aggfnoid)).to_string_lossy().into_owned();
                Err(format!("{name}(DISTINCT) has no partial state"))
            }
            Ok(Transition::Fmgr { .. }) => fmgr_combines(aggref),
            _ => {
                let a = &*aggref;
                let name = CStr::from_ptr(pg_sys::get_func_name(a.aggfnoid)).to_string_lossy().into_owned();
                let what = if a.aggdistinct.is_null() { name } else { format!("{name}(DISTINCT)") };
                Err(format!("{what} has no partial state"))
            }
        }
    }
}

//! What PostgreSQL's catalogs say about types, functions and aggregates,
//! for the planner and the executor alike: an aggregate's functions, whether
//! a function is written in C, the group table's key kind of a type, the
//! byte encoding of composite and array keys.

use std::ffi::CStr;

use pgrx::pg_sys;

use crate::pgutil::list_ptrs;
use vexec_core::agg::encoded::{ElemType, Encoding, RecordField};
use vexec_core::agg::KeyKind;

/// How the argument of a DISTINCT aggregate run through fmgr is kept and
/// ordered: integer-like types (by their signed value, which is their
/// order), text and varchar under a deterministic collation, bytea and
/// uuid (equal exactly when their bytes are), numeric of a declared
/// scale (`typmod`: a `numeric(p, s)` column or cast, whose values all have
/// display scale s, so 1.0 and 1.00 cannot both occur; ordered by value),
/// and char(n) under a deterministic collation (every value is padded to n
/// characters, so 'a' and 'a ' cannot both occur; ordered as bpcharcmp,
/// without the trailing blanks). None for the other types.
pub fn distinct_arg_kind(t: pg_sys::Oid, collid: pg_sys::Oid, typmod: i32) -> Option<KeyKind> {
    use pg_sys::{
        BOOLOID, BYTEAOID, DATEOID, INT2OID, INT4OID, INT8OID, NUMERICOID, TEXTOID, TIMEOID, TIMESTAMPOID,
        TIMESTAMPTZOID, VARCHAROID,
    };
    match t {
        // numeric's typmod is ((precision << 16) | scale) + VARHDRSZ; any
        // valid one fixes the scale.
        NUMERICOID if typmod >= pg_sys::VARHDRSZ as i32 => Some(KeyKind::Numeric),
        BOOLOID | INT2OID | INT4OID | INT8OID | DATEOID | TIMEOID | TIMESTAMPOID | TIMESTAMPTZOID => {
            Some(KeyKind::Int)
        }
        TEXTOID | VARCHAROID
            if collid != pg_sys::InvalidOid && crate::expr::compile::collation_allows(collid, true) =>
        {
            Some(KeyKind::Bytes)
        }
        BYTEAOID => Some(KeyKind::Bytes),
        pg_sys::UUIDOID => Some(KeyKind::Uuid),
        // bpchar's typmod is n + VARHDRSZ; -1 (no length) keeps blanks as given.
        pg_sys::BPCHAROID
            if typmod >= pg_sys::VARHDRSZ as i32
                && collid != pg_sys::InvalidOid
                && crate::expr::compile::collation_allows(collid, true) =>
        {
            Some(KeyKind::Bpchar)
        }
        _ => None,
    }
}

/// Whether function `f` is written in C (language internal or c).
pub unsafe fn is_c_function(f: pg_sys::Oid) -> bool {
    // SAFETY: a syscache lookup by OID on the backend's main thread; the tuple is released below.
    unsafe {
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::PROCOID as i32, f.into());
        if tup.is_null() {
            return true;
        }
        let lang = (*(pg_sys::GETSTRUCT(tup) as *mut pg_sys::FormData_pg_proc)).prolang;
        pg_sys::ReleaseSysCache(tup);
        lang == pg_sys::Oid::from(pg_sys::INTERNALlanguageId)
            || lang == pg_sys::Oid::from(pg_sys::ClanguageId)
    }
}

/// Most arguments an fmgr aggregate may have here.
pub const MAX_FMGR_ARGS: usize = 8;

/// The pg_aggregate entry of aggregate `aggfnoid`.
pub unsafe fn aggregate_functions(aggfnoid: pg_sys::Oid) -> Option<AggregateFunctions> {
    // SAFETY: as is_c_function.
    unsafe {
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::AGGFNOID as i32, aggfnoid.into());
        if tup.is_null() {
            return None;
        }
        let form = &*(pg_sys::GETSTRUCT(tup) as *mut pg_sys::FormData_pg_aggregate);
        let mut isnull = false;
        let d = pg_sys::SysCacheGetAttr(
            pg_sys::SysCacheIdentifier::AGGFNOID as i32,
            tup,
            pg_sys::Anum_pg_aggregate_agginitval as i16,
            &mut isnull,
        );
        let initval = (!isnull).then(|| {
            let c = pg_sys::text_to_cstring(d.cast_mut_ptr());
            CStr::from_ptr(c).to_string_lossy().into_owned()
        });
        let f = AggregateFunctions {
            transfn: form.aggtransfn,
            finalfn: form.aggfinalfn,
            final_extra: form.aggfinalextra,
            initval,
            combinefn: form.aggcombinefn,
            serialfn: form.aggserialfn,
            deserialfn: form.aggdeserialfn,
        };
        pg_sys::ReleaseSysCache(tup);
        Some(f)
    }
}

/// An aggregate's support functions and initial value (pg_aggregate).
pub struct AggregateFunctions {
    pub transfn: pg_sys::Oid,
    pub finalfn: pg_sys::Oid,
    pub final_extra: bool,
    /// The initial value's text (agginitval), None for NULL.
    pub initval: Option<String>,
    pub combinefn: pg_sys::Oid,
    pub serialfn: pg_sys::Oid,
    pub deserialfn: pg_sys::Oid,
}

pub fn type_name(t: pg_sys::Oid) -> String {
    // SAFETY: format_type_be returns a palloc'd C string for any OID (or ERRORs on the main
    // thread).
    unsafe { CStr::from_ptr(pg_sys::format_type_be(t)).to_string_lossy().into_owned() }
}

/// How the group table compares a key of type `typid` and collation
/// `collid`, or why it cannot.
pub fn key_kind(typid: pg_sys::Oid, collid: pg_sys::Oid) -> Result<KeyKind, String> {
    use pg_sys::{
        BOOLOID, BPCHAROID, BYTEAOID, DATEOID, FLOAT4OID, FLOAT8OID, INT2OID, INT4OID, INT8OID, OIDOID,
        TEXTOID, TIMEOID, TIMESTAMPOID, TIMESTAMPTZOID, VARCHAROID,
    };
    // Text compares by bytes under a deterministic collation, else by sort key.
    let by_collation = |bytes: KeyKind, sort_key: KeyKind| {
        if collid == pg_sys::InvalidOid {
            Err(format!("group key of type {} without a collation", type_name(typid)))
        } else if crate::expr::compile::collation_allows(collid, true) {
            Ok(bytes)
        } else {
            Ok(sort_key)
        }
    };
    match typid {
        BOOLOID | INT2OID | INT4OID | INT8OID | OIDOID | DATEOID | TIMEOID | TIMESTAMPOID
        | TIMESTAMPTZOID => Ok(KeyKind::Int),
        FLOAT4OID => Ok(KeyKind::Float4),
        FLOAT8OID => Ok(KeyKind::Float8),
        BYTEAOID => Ok(KeyKind::Bytes),
        TEXTOID | VARCHAROID => by_collation(KeyKind::Bytes, KeyKind::Collated),
        BPCHAROID => by_collation(KeyKind::Bpchar, KeyKind::CollatedBpchar),
        pg_sys::NUMERICOID => Ok(KeyKind::Numeric),
        pg_sys::UUIDOID => Ok(KeyKind::Uuid),
        pg_sys::INTERVALOID => Ok(KeyKind::Interval),
        // SAFETY: catalog lookups by OID on the backend's main thread.
        _ if unsafe { by_value_image_equality(typid, collid) } => Ok(KeyKind::Int),
        // SAFETY: as above.
        _ => match unsafe { encoding_of(typid, collid) } {
            Ok(Some(_)) => Ok(KeyKind::Encoded),
            Ok(None) => Err(format!("no vector group key for type {}", type_name(typid))),
            Err(why) => Err(why),
        },
    }
}

/// Whether `typid` is an integer-sized by-value type whose default btree
/// operator class declares that equal values have equal images (its
/// `equalimage` support function, which B-tree deduplication relies on):
/// enums, "char", money, pg_lsn... Such keys compare as integers.
unsafe fn by_value_image_equality(typid: pg_sys::Oid, collid: pg_sys::Oid) -> bool {
    // SAFETY: catalog lookups by OID on the backend's main thread.
    unsafe {
        let (mut len, mut byval) = (0i16, false);
        pg_sys::get_typlenbyval(typid, &mut len, &mut byval);
        if !byval || !matches!(len, 1 | 2 | 4 | 8) {
            return false;
        }
        let class = pg_sys::GetDefaultOpClass(typid, pg_sys::Oid::from(pg_sys::BTREE_AM_OID));
        if class == pg_sys::InvalidOid {
            return false;
        }
        let family = pg_sys::get_opclass_family(class);
        let input = pg_sys::get_opclass_input_type(class);
        let proc = pg_sys::get_opfamily_proc(family, input, input, pg_sys::BTEQUALIMAGE_PROC as i16);
        proc != pg_sys::InvalidOid
            && pg_sys::OidFunctionCall1Coll(proc, collid, pg_sys::Datum::from(input)).value() != 0
    }
}

/// How keys of `typid` under `collid` are encoded for the group table, when
/// it is an array, range or multirange type whose equality is array_eq,
/// range_eq or multirange_eq over elements (bounds) of a key kind compared
/// natively, a composite type compared by record_eq whose fields are of
/// such kinds, or jsonb with jsonb_eq (None for other types), or why it
/// cannot be.
pub unsafe fn encoding_of(typid: pg_sys::Oid, collid: pg_sys::Oid) -> Result<Option<Encoding>, String> {
    // SAFETY: catalog and type cache lookups by OID on the backend's main thread.
    unsafe {
        let eq_func = |t: pg_sys::Oid| {
            let eq = (*pg_sys::lookup_type_cache(t, pg_sys::TYPECACHE_EQ_OPR as i32)).eq_opr;
            if eq == pg_sys::InvalidOid {
                pg_sys::InvalidOid
            } else {
                pg_sys::get_opcode(eq)
            }
        };
        // An element or bound of type `t` compared under `coll`.
        let elem_type = |t: pg_sys::Oid, coll: pg_sys::Oid, what: &str| elem_type_of(t, coll, typid, what);
        let elem = pg_sys::get_element_type(typid);
        if elem != pg_sys::InvalidOid {
            if eq_func(typid) != pg_sys::Oid::from(pg_sys::F_ARRAY_EQ) {
                return Ok(None); // oidvector, int2vector: their own equality
            }
            return elem_type(elem, collid, "group key elements").map(|e| Some(Encoding::Array(e)));
        }
        if typid == pg_sys::JSONBOID {
            // jsonb_eq: by structure, numbers by value, strings by bytes.
            return Ok((eq_func(typid) == pg_sys::Oid::from(pg_sys::F_JSONB_EQ)).then_some(Encoding::Jsonb));
        }
        let typtype = pg_sys::get_typtype(typid) as u8;
        if typtype == pg_sys::TYPTYPE_RANGE || typtype == pg_sys::TYPTYPE_MULTIRANGE {
            let multi = typtype == pg_sys::TYPTYPE_MULTIRANGE;
            let eq = if multi { pg_sys::F_MULTIRANGE_EQ } else { pg_sys::F_RANGE_EQ };
            if eq_func(typid) != pg_sys::Oid::from(eq) {
                return Ok(None);
            }
            // A multirange's ranges compare as its range type's values.
            let tc = if multi {
                (*pg_sys::lookup_type_cache(typid, pg_sys::TYPECACHE_MULTIRANGE_INFO as i32)).rngtype
            } else {
                pg_sys::lookup_type_cache(typid, pg_sys::TYPECACHE_RANGE_INFO as i32)
            };
            let tc = pg_sys::lookup_type_cache((*tc).type_id, pg_sys::TYPECACHE_RANGE_INFO as i32);
            let sub = (*(*tc).rngelemtype).type_id;
            // range_eq compares bounds with the range's btree operator class:
            // only the subtype's default one has the equality encoded here.
            let default_class = pg_sys::GetDefaultOpClass(sub, pg_sys::Oid::from(pg_sys::BTREE_AM_OID));
            if default_class == pg_sys::InvalidOid
                || pg_sys::get_opclass_family(default_class) != (*tc).rng_opfamily
            {
                return Err(format!(
                    "group key of type {} with a non-default subtype operator class",
                    type_name(typid)
                ));
            }
            let e = elem_type(sub, (*tc).rng_collation, "group key bounds")?;
            return Ok(Some(if multi { Encoding::Multirange(e) } else { Encoding::Range(e) }));
        }
        if typtype == pg_sys::TYPTYPE_COMPOSITE && typid != pg_sys::RECORDOID {
            // record_eq: field by field, each with its type's equality under
            // the attribute's collation.
            if eq_func(typid) != pg_sys::Oid::from(pg_sys::F_RECORD_EQ) {
                return Ok(None);
            }
            let desc = (*pg_sys::lookup_type_cache(typid, pg_sys::TYPECACHE_TUPDESC as i32)).tupDesc;
            if desc.is_null() {
                return Ok(None);
            }
            let mut fields = Vec::with_capacity((*desc).natts as usize);
            for i in 0..(*desc).natts {
                let att = pg_sys::TupleDescAttr(desc, i);
                let align = align_bytes((*att).attalign);
                let field = if (*att).attisdropped {
                    RecordField::dropped((*att).attlen, align).ok_or_else(|| {
                        format!("group key of type {} (a dropped attribute)", type_name(typid))
                    })?
                } else {
                    let name = CStr::from_ptr((*att).attname.data.as_ptr()).to_string_lossy();
                    RecordField::Kept(field_type((*att).atttypid, (*att).attcollation, typid, &name)?)
                };
                fields.push(field);
            }
            return Ok(Some(Encoding::Record(fields.into())));
        }
        Ok(None)
    }
}

/// How an element, bound or field of type `t` compared under `coll` is
/// encoded inside a key of type `of`, or why it cannot be.
unsafe fn elem_type_of(
    t: pg_sys::Oid,
    coll: pg_sys::Oid,
    of: pg_sys::Oid,
    what: &str,
) -> Result<ElemType, String> {
    // SAFETY: catalog lookups by OID on the backend's main thread.
    unsafe {
        let kind = key_kind(t, coll).map_err(|_| format!("{what} of type {}", type_name(of)))?;
        if kind.is_collated() {
            return Err(format!("{what} of type {} under a nondeterministic collation", type_name(of)));
        }
        if kind.host_keyed() {
            // An encoded element (jsonb, arrays of arrays' types...).
            return Err(format!("{what} of type {}", type_name(of)));
        }
        let (mut len, mut byval, mut align) = (0i16, false, 0 as std::ffi::c_char);
        pg_sys::get_typlenbyvalalign(t, &mut len, &mut byval, &mut align);
        ElemType::new(kind, len, align_bytes(align))
            .ok_or_else(|| format!("{what} of type {}", type_name(of)))
    }
}

/// A typalign code ('c', 's', 'i', 'd') in bytes.
fn align_bytes(code: std::ffi::c_char) -> usize {
    match code as u8 {
        b'c' => 1,
        b's' => 2,
        b'i' => 4,
        _ => 8,
    }
}

/// A field `name` of type `t` under `coll` of a composite key of type `of`.
unsafe fn field_type(
    t: pg_sys::Oid,
    coll: pg_sys::Oid,
    of: pg_sys::Oid,
    name: &str,
) -> Result<ElemType, String> {
    // SAFETY: as elem_type_of.
    unsafe {
        elem_type_of(t, coll, of, "group key fields").map_err(|_| {
            format!("group key of type {} (its field {name} of type {})", type_name(of), type_name(t))
        })
    }
}

/// The encoding of the anonymous records `expr` builds, when it is a
/// `ROW(...)` of type record: its fields are its arguments, with their
/// types and collations (as ExecTypeFromExprList describes them). None for
/// other expressions, whose record type is unknown until run time.
pub unsafe fn row_encoding(expr: *mut pg_sys::Node) -> Result<Option<Encoding>, String> {
    // SAFETY: expr is a live expression node (caller's contract).
    unsafe {
        if expr.is_null() || (*expr).type_ != pg_sys::NodeTag::T_RowExpr {
            return Ok(None);
        }
        let row = expr as *mut pg_sys::RowExpr;
        if (*row).row_typeid != pg_sys::RECORDOID {
            return Ok(None);
        }
        let mut fields = Vec::new();
        for (i, arg) in list_ptrs::<pg_sys::Node>((*row).args).enumerate() {
            let t = pg_sys::exprType(arg);
            fields.push(RecordField::Kept(field_type(
                t,
                pg_sys::exprCollation(arg),
                pg_sys::RECORDOID,
                &format!("f{}", i + 1),
            )?));
        }
        Ok(Some(Encoding::Record(fields.into())))
    }
}

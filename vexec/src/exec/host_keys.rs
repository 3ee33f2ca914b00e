//! Key columns the host computes for the group table, when a key's own
//! bytes are not what its equality compares: the sort keys of text under a
//! nondeterministic collation ([`SortKeys`]), the canonical encodings of
//! arrays, ranges, jsonb and composite values ([`vexec_core::agg::encoded`]).

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::encoded::{EncodedKeyColumn, Encoding, Malformed};
use vexec_core::agg::KeyKind;
use vexec_core::batch::{Column, RowIdx};

use crate::exec::collate::SortKeys;

pub(crate) enum HostKeys {
    Sorted(SortKeys),
    Encoded(EncodedKeyColumn),
    /// Values of a composite type: encoded, or first rebuilt with their
    /// fields decompressed (in `flat_cxt`, reset per batch) when a field is
    /// compressed.
    Record {
        keys: EncodedKeyColumn,
        flat_cxt: pg_sys::MemoryContext,
    },
}

impl HostKeys {
    /// The builder for keys of `kind` (of type `typid` under `collid`), when
    /// the table compares a column the host computes (None for the others).
    ///
    /// # Safety
    /// `collid` is a valid collation for `Collated` kinds.
    pub(crate) unsafe fn for_kind(
        kind: KeyKind,
        typid: pg_sys::Oid,
        collid: pg_sys::Oid,
    ) -> Option<HostKeys> {
        // SAFETY: this function's contract: collid is a valid collation for Collated kinds; typid
        // is a type the planner resolved.
        unsafe {
            match kind {
                KeyKind::Collated | KeyKind::CollatedBpchar => {
                    Some(HostKeys::Sorted(SortKeys::new(collid, kind == KeyKind::CollatedBpchar)))
                }
                KeyKind::Encoded => {
                    // The planner chose this kind from the same type.
                    let encoding = crate::catalog::encoding_of(typid, collid)
                        .ok()
                        .flatten()
                        .unwrap_or_else(|| error!("vexec: no key encoding for type {}", u32::from(typid)));
                    Some(HostKeys::encoded(encoding))
                }
                _ => None,
            }
        }
    }

    /// The builder of keys encoded as `encoding` says.
    ///
    /// # Safety
    /// Called in a memory context that lives as long as the builder.
    unsafe fn encoded(encoding: Encoding) -> HostKeys {
        // SAFETY: called in a memory context that lives as long as the builder (this function's
        // contract), which owns the new child context.
        unsafe {
            if matches!(encoding, Encoding::Record(_)) {
                let flat_cxt = pg_sys::AllocSetContextCreateInternal(
                    pg_sys::CurrentMemoryContext,
                    c"vexec decompressed composite keys".as_ptr(),
                    0,
                    8 * 1024,
                    8 * 1024 * 1024,
                );
                return HostKeys::Record { keys: EncodedKeyColumn::new(encoding), flat_cxt };
            }
            HostKeys::Encoded(EncodedKeyColumn::new(encoding))
        }
    }

    /// As [`HostKeys::for_kind`] for the values of `expr`: anonymous
    /// records (`ROW(a, b)`) are encoded by the fields the expression builds.
    ///
    /// # Safety
    /// As [`HostKeys::for_kind`]; `expr` is a valid expression.
    pub(crate) unsafe fn for_expr(
        kind: KeyKind,
        expr: *mut pg_sys::Node,
        collid: pg_sys::Oid,
    ) -> Option<HostKeys> {
        // SAFETY: expr is a live expression node of the plan (caller's contract).
        unsafe {
            let typid = pg_sys::exprType(expr);
            if kind == KeyKind::Encoded && typid == pg_sys::RECORDOID {
                let encoding = crate::catalog::row_encoding(expr)
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| error!("vexec: no key encoding for a record of unknown fields"));
                return Some(HostKeys::encoded(encoding));
            }
            HostKeys::for_kind(kind, typid, collid)
        }
    }

    /// The keys of `col`'s rows among `rows` as the table compares them,
    /// valid until the next call.
    ///
    /// # Safety
    /// `col`'s valid values among `rows` are plain (detoasted) varlenas.
    pub(crate) unsafe fn column(&mut self, col: &Column, rows: &[RowIdx]) -> Column {
        // SAFETY: this function's contract: the valid values among rows are plain varlenas.
        unsafe {
            match self {
                HostKeys::Sorted(s) => s.column(col, rows),
                HostKeys::Encoded(e) => malformed_is_error(e.build(col, rows)),
                HostKeys::Record { keys, flat_cxt } => match keys.build(col, rows) {
                    Err(m) if m == Malformed::TOASTED_FIELD => {
                        pg_sys::MemoryContextReset(*flat_cxt);
                        let flat = decompressed_records(col, rows, *flat_cxt);
                        malformed_is_error(keys.build(&flat, rows))
                    }
                    built => malformed_is_error(built),
                },
            }
        }
    }

    pub(crate) fn bytes_used(&self) -> usize {
        match self {
            HostKeys::Sorted(s) => s.bytes_used(),
            HostKeys::Encoded(e) | HostKeys::Record { keys: e, .. } => e.bytes_used(),
        }
    }
}

/// Per key, the builder of a host-keyed one (None for the others).
///
/// # Safety
/// As [`HostKeys::for_kind`].
pub(crate) unsafe fn for_kinds(
    kinds: &[KeyKind],
    types: impl IntoIterator<Item = pg_sys::Oid>,
    collations: impl IntoIterator<Item = pg_sys::Oid>,
) -> Vec<Option<HostKeys>> {
    kinds
        .iter()
        .zip(types.into_iter().zip(collations))
        // SAFETY: for_kinds' contract is for_kind's.
        .map(|(&k, (typ, coll))| unsafe { HostKeys::for_kind(k, typ, coll) })
        .collect()
}

fn malformed_is_error(built: Result<Column, Malformed>) -> Column {
    match built {
        Ok(c) => c,
        Err(m) => {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                format!("vexec: a group or join key value is malformed: {}", m.0)
            );
        }
    }
}

/// `col`'s composite values among `rows` rebuilt, in `cxt`, with their
/// varlena fields decompressed and fetched: the same values to record_eq,
/// in the form the key encoding reads.
///
/// # Safety
/// `col`'s valid values among `rows` are composite Datums (of a named type,
/// or of a blessed anonymous one: each value's header says which).
unsafe fn decompressed_records(col: &Column, rows: &[RowIdx], cxt: pg_sys::MemoryContext) -> Column {
    // SAFETY: col's valid values among rows are record varlenas (caller's contract); cxt is a live
    // context that takes the copies.
    unsafe {
        let old = pg_sys::MemoryContextSwitchTo(cxt);
        let mut out = col.clone();
        for &r in rows {
            let r = r as usize;
            if !col.is_valid(r) {
                continue;
            }
            let header = pg_sys::pg_detoast_datum(col.values.datum(r) as *mut pg_sys::varlena)
                as pg_sys::HeapTupleHeader;
            // HeapTupleHeaderGetTypeId and HeapTupleHeaderGetTypMod
            let fields = (*header).t_choice.t_datum;
            let desc = pg_sys::lookup_rowtype_tupdesc(fields.datum_typeid, fields.datum_typmod);
            let natts = (*desc).natts as usize;
            let mut values = vec![pg_sys::Datum::from(0usize); natts];
            let mut nulls = vec![false; natts];
            let mut tuple: pg_sys::HeapTupleData = std::mem::zeroed();
            tuple.t_len = varsize_4b(header.cast());
            tuple.t_data = header;
            pg_sys::heap_deform_tuple(&mut tuple, desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            for i in 0..natts {
                let att = pg_sys::TupleDescAttr(desc, i as i32);
                if !nulls[i] && !(*att).attisdropped && (*att).attlen == -1 {
                    values[i] = pg_sys::Datum::from(pg_sys::pg_detoast_datum_packed(
                        values[i].cast_mut_ptr::<pg_sys::varlena>(),
                    ));
                }
            }
            let flat = pg_sys::heap_form_tuple(desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            out.values.set_datum(r, pg_sys::heap_copy_tuple_as_datum(flat, desc).value());
            if (*desc).tdrefcount >= 0 {
                pg_sys::DecrTupleDescRefCount(desc); // ReleaseTupleDesc
            }
        }
        pg_sys::MemoryContextSwitchTo(old);
        out
    }
}

/// The length word of a 4-byte-header varlena.
unsafe fn varsize_4b(p: *const u8) -> u32 {
    // SAFETY: p points to a 4-byte varlena header (caller's contract); read unaligned.
    unsafe { (std::ptr::read_unaligned(p as *const u32) >> 2) & 0x3fff_ffff }
}

//! Key columns the host computes for the group table, when a key's own
//! bytes are not what its equality compares: the sort keys of text under a
//! nondeterministic collation ([`SortKeys`]), the canonical encodings of
//! arrays and ranges ([`vexec_core::agg::encoded`]).

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::encoded::EncodedKeyColumn;
use vexec_core::agg::KeyKind;
use vexec_core::batch::{Column, RowIdx};

use crate::exec::collate::SortKeys;

pub(crate) enum HostKeys {
    Sorted(SortKeys),
    Encoded(EncodedKeyColumn),
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
        unsafe {
            match kind {
                KeyKind::Collated | KeyKind::CollatedBpchar => {
                    Some(HostKeys::Sorted(SortKeys::new(collid, kind == KeyKind::CollatedBpchar)))
                }
                KeyKind::Encoded => {
                    // The planner chose this kind from the same type.
                    let encoding = crate::plan::agg::encoding_of(typid, collid)
                        .ok()
                        .flatten()
                        .unwrap_or_else(|| error!("vexec: no key encoding for type {}", u32::from(typid)));
                    Some(HostKeys::Encoded(EncodedKeyColumn::new(encoding)))
                }
                _ => None,
            }
        }
    }

    /// The keys of `col`'s rows among `rows` as the table compares them,
    /// valid until the next call.
    ///
    /// # Safety
    /// `col`'s valid values among `rows` are plain (detoasted) varlenas.
    pub(crate) unsafe fn column(&mut self, col: &Column, rows: &[RowIdx]) -> Column {
        unsafe {
            match self {
                HostKeys::Sorted(s) => s.column(col, rows),
                HostKeys::Encoded(e) => match e.build(col, rows) {
                    Ok(c) => c,
                    Err(m) => {
                        ereport!(
                            ERROR,
                            PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                            format!("vexec: a group or join key value is malformed: {}", m.0)
                        );
                    }
                },
            }
        }
    }

    pub(crate) fn bytes_used(&self) -> usize {
        match self {
            HostKeys::Sorted(s) => s.bytes_used(),
            HostKeys::Encoded(e) => e.bytes_used(),
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
        .map(|(&k, (typ, coll))| unsafe { HostKeys::for_kind(k, typ, coll) })
        .collect()
}

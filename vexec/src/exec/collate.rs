//! Group and join keys of text under a nondeterministic collation: compared
//! by their sort keys, which PostgreSQL's own `pg_strnxfrm` computes (the
//! bytes hashtext hashes for such a collation; equal exactly when texteq
//! finds the values equal).

use pgrx::pg_sys;
use vexec_core::agg::collated::SortKeyColumn;
use vexec_core::batch::{Column, RowIdx};

pub(crate) struct SortKeys {
    locale: pg_sys::pg_locale_t,
    /// bpchar: sort keys of the values without their trailing blanks.
    trim_blanks: bool,
    builder: SortKeyColumn,
}

impl SortKeys {
    /// # Safety
    /// `collid` is a valid collation (its locale is cached for the backend's life).
    pub(crate) unsafe fn new(collid: pg_sys::Oid, trim_blanks: bool) -> SortKeys {
        SortKeys {
            // SAFETY: this function's contract: collid is a valid collation; the locale cache lives
            // for the session.
            locale: unsafe { pg_sys::pg_newlocale_from_collation(collid) },
            trim_blanks,
            builder: SortKeyColumn::default(),
        }
    }

    /// The sort keys of `col`'s rows among `rows`, valid until the next call.
    ///
    /// # Safety
    /// `col`'s valid values among `rows` are plain (detoasted) varlenas.
    pub(crate) unsafe fn column(&mut self, col: &Column, rows: &[RowIdx]) -> Column {
        let locale = self.locale;
        // SAFETY: this function's contract: the valid values among rows are plain varlenas;
        // pg_strnxfrm writes at most the length it is given.
        unsafe {
            self.builder.build(col, rows, self.trim_blanks, |value, dest| {
                pg_sys::pg_strnxfrm(
                    dest.as_mut_ptr().cast(),
                    dest.len(),
                    value.as_ptr().cast(),
                    value.len() as _,
                    locale,
                )
            })
        }
    }

    pub(crate) fn bytes_used(&self) -> usize {
        self.builder.bytes_used()
    }
}

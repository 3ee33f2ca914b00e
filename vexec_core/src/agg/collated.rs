//! Text keys under a nondeterministic collation (case- or accent-blind ICU
//! collations) are equal exactly when their sort keys are: PostgreSQL's
//! texteq compares them with the collation and hashtext hashes their sort
//! key. The host computes each sort key (`pg_strnxfrm`); this builds the
//! column of them that the group table compares as bytes.

use crate::batch::{varlena, Column, PhysType, RowIdx};

/// Varlenas built for some rows of a batch (keys the group table compares
/// as bytes), in one buffer reused from batch to batch.
#[derive(Debug, Default)]
pub struct KeyArena {
    arena: Vec<u8>,
    /// Per built row: its row number and the offset of its varlena.
    placed: Vec<(usize, usize)>,
}

impl KeyArena {
    pub fn clear(&mut self) {
        self.arena.clear();
        self.placed.clear();
    }

    /// Build row `r`'s varlena: `fill` appends its payload to the buffer it
    /// is given (and may write past it and truncate again).
    pub fn push(&mut self, r: usize, fill: impl FnOnce(&mut Vec<u8>)) {
        let start = self.arena.len();
        self.arena.extend_from_slice(&[0; 4]);
        fill(&mut self.arena);
        let len = self.arena.len() - start;
        self.arena[start..start + 4].copy_from_slice(&((len as u32) << 2).to_le_bytes());
        self.placed.push((r, start));
    }

    /// A column of `len` rows pointing at the varlenas built since the last
    /// [`KeyArena::clear`] (NULL in the other rows); valid until the next
    /// change to this arena.
    pub fn column(&self, len: usize) -> Column {
        let mut out = Column::new(PhysType::Datum, len);
        out.validity.set_all(false);
        let base = self.arena.as_ptr() as usize;
        for &(r, start) in &self.placed {
            out.values.set_datum(r, base + start);
            out.validity.set(r, true);
        }
        debug_assert!(self
            .placed
            .iter()
            // SAFETY: each pointer is to a varlena this arena just built.
            .all(|&(r, _)| unsafe { varlena::is_plain(out.values.datum(r) as *const u8) }));
        out
    }

    /// Memory held.
    pub fn bytes_used(&self) -> usize {
        self.arena.capacity() + self.placed.capacity() * 16
    }
}

/// Builds sort-key columns, reusing its memory from batch to batch.
#[derive(Debug, Default)]
pub struct SortKeyColumn {
    arena: KeyArena,
}

impl SortKeyColumn {
    /// A column of plain varlenas holding the sort keys of `col`'s rows
    /// among `rows` (NULL where `col` is NULL; the other rows are NULL too),
    /// of each value without its trailing blanks when `trim_blanks` (bpchar).
    /// `xfrm(value, dest)` writes the sort key of `value` into `dest` when
    /// it fits and returns its length either way. The column points into
    /// this builder: it is valid until the next call.
    ///
    /// # Safety
    /// `col`'s valid values among `rows` are pointers to plain varlenas.
    pub unsafe fn build(
        &mut self,
        col: &Column,
        rows: &[RowIdx],
        trim_blanks: bool,
        mut xfrm: impl FnMut(&[u8], &mut [u8]) -> usize,
    ) -> Column {
        self.arena.clear();
        for &r in rows {
            let r = r as usize;
            if !col.is_valid(r) {
                continue;
            }
            // SAFETY: valid values are plain varlenas (the caller's promise).
            let mut value = unsafe { varlena::bytes(col.values.datum(r) as *const u8) };
            if trim_blanks {
                value = crate::expr::kernels::cmp::trim_blanks(value);
            }
            self.arena.push(r, |buf| {
                let start = buf.len();
                let guess = 2 * value.len() + 16;
                buf.resize(start + guess, 0);
                let mut len = xfrm(value, &mut buf[start..]);
                if len >= guess {
                    // Too long for the guess: again with room for it (and a NUL).
                    buf.resize(start + len + 1, 0);
                    len = xfrm(value, &mut buf[start..]);
                }
                buf.truncate(start + len);
            });
        }
        self.arena.column(col.len())
    }

    /// Memory held.
    pub fn bytes_used(&self) -> usize {
        self.arena.bytes_used()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agg::{table_layout, GroupTable, KeyKind};

    /// A stand-in collation blind to ASCII case whose keys are longer than
    /// the first guess for long values (each byte twice).
    fn fold(value: &[u8], dest: &mut [u8]) -> usize {
        let key: Vec<u8> = value
            .iter()
            .flat_map(|c| [c.to_ascii_lowercase(), b'.'])
            .chain(*b"!!!!!!!!!!!!!!!!!!!!")
            .collect();
        if key.len() < dest.len() {
            dest[..key.len()].copy_from_slice(&key);
        }
        key.len()
    }

    #[test]
    fn groups_by_sort_key_and_keeps_the_first_value() {
        let store = [
            varlena::make_1b(b"Abc"),
            varlena::make_4b(b"abc"),
            varlena::make_1b(b"ABD"),
            varlena::make_1b(b""),
            varlena::make_4b(b"ABC"),
        ];
        let mut col = Column::new(PhysType::Datum, 6);
        for (i, s) in store.iter().enumerate() {
            col.values.set_datum(i, s.as_ptr() as usize);
        }
        col.validity.set(5, false);
        let (kinds, output) = table_layout(&[KeyKind::Int, KeyKind::Collated]);
        assert_eq!(kinds, vec![KeyKind::Int, KeyKind::Bytes, KeyKind::Carried]);
        assert_eq!(output, vec![0, 2]);
        let mut ints = Column::new(PhysType::I32, 6);
        for i in 0..6 {
            ints.values.set_datum(i, 1);
        }
        let rows: Vec<RowIdx> = (0..6).collect();
        let mut b = SortKeyColumn::default();
        // SAFETY: col points to the test's plain varlenas, which outlive the call.
        let keys = unsafe { b.build(&col, &rows, false, fold) };
        let mut t = GroupTable::new(&kinds);
        let mut out = vec![];
        // SAFETY: the columns hold integers or plain varlenas that outlive the call.
        unsafe { t.assign(&[&ints, &keys, &col], &rows, &mut out) };
        assert_eq!(out, vec![0, 0, 1, 2, 0, 3]);
        // The group outputs its first value, not the sort key.
        assert_eq!(t.bytes_key(2, 0), Some(&b"Abc"[..]));
        assert_eq!(t.bytes_key(2, 1), Some(&b"ABD"[..]));
        assert_eq!(t.bytes_key(2, 3), None);
        // Equal sort keys hash alike whatever the values.
        let mut h = vec![];
        // SAFETY: as for assign.
        unsafe { t.hash_rows(&[&ints, &keys, &col], &[0, 1, 2], &mut h) };
        assert!(h[0] == h[1] && h[0] != h[2]);
        // Only the selected rows are built; the others read as NULL.
        // SAFETY: as above.
        let keys = unsafe { b.build(&col, &[4], false, fold) };
        assert!(keys.is_valid(4) && !keys.is_valid(0));
        let long = varlena::make_4b(&[b'x'; 300]);
        let mut c = Column::new(PhysType::Datum, 1);
        c.values.set_datum(0, long.as_ptr() as usize);
        // SAFETY: c points to long, a plain varlena alive here.
        let keys = unsafe { b.build(&c, &[0], false, fold) };
        // SAFETY: keys was just built: its valid values are plain varlenas in b's arena.
        assert_eq!(unsafe { varlena::bytes(keys.values.datum(0) as *const u8) }.len(), 620);
        // bpchar: trailing blanks do not count ('ab ' = 'AB').
        let padded = [varlena::make_1b(b"ab "), varlena::make_1b(b"AB"), varlena::make_1b(b"a b")];
        let mut c = Column::new(PhysType::Datum, 3);
        for (i, s) in padded.iter().enumerate() {
            c.values.set_datum(i, s.as_ptr() as usize);
        }
        // SAFETY: c points to padded's plain varlenas.
        let keys = unsafe { b.build(&c, &[0, 1, 2], true, fold) };
        // SAFETY: as above: built keys in b's arena.
        let key = |i: usize| unsafe { varlena::bytes(keys.values.datum(i) as *const u8) }.to_vec();
        assert!(key(0) == key(1) && key(0) != key(2));
    }
}

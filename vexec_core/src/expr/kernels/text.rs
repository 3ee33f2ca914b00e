//! Text functions on plain varlenas: lengths and set membership.
//!
//! - `length`/`char_length` of text count characters: in UTF-8 the bytes that
//!   do not continue a character; the compiler uses Octets in single-byte
//!   encodings. Text is not always valid: a C function can build any bytes,
//!   and PostgreSQL's count stops at a NUL byte and raises on a truncated
//!   character. Such a value is reported as an error row, so PostgreSQL
//!   evaluates the batch itself.
//! - `octet_length` counts bytes (bpchar's blanks included).
//! - `length` of bpchar counts characters without the trailing blanks.

use crate::batch::strings::Bytes;
use crate::batch::{Column, RowIdx, Values};
use crate::expr::kernels::cmp::trim_blanks;
use crate::expr::{KernelError, LengthKind};

#[inline]
pub fn utf8_chars(b: &[u8]) -> usize {
    b.iter().filter(|&&x| (x & 0xc0) != 0x80).count()
}

/// `out[r]` = the length of `arg[r]` (characters or octets) on the rows of
/// `sel`; an error at a row that is not valid UTF-8 (characters).
///
/// # Safety
/// The valid Datum values among the rows point to plain varlenas (the
/// column may also be byte views or offsets).
pub unsafe fn length(
    kind: LengthKind,
    arg: &Column,
    sel: &[RowIdx],
    out: &mut Column,
) -> Result<(), KernelError> {
    // SAFETY: this function's contract.
    let (Some(a), Values::I32(o)) = (unsafe { Bytes::of(&arg.values) }, &mut out.values) else {
        panic!("length expects varlena input and int32 output");
    };
    for &row in sel {
        let i = row as usize;
        let valid = arg.validity.get(i);
        out.validity.set(i, valid);
        if valid {
            let s = a.get(i);
            if kind != LengthKind::Octets && (s.contains(&0) || std::str::from_utf8(s).is_err()) {
                return Err(KernelError { row });
            }
            o[i] = match kind {
                LengthKind::Octets => s.len(),
                LengthKind::TextChars => utf8_chars(s),
                LengthKind::BpcharChars => utf8_chars(trim_blanks(s)),
            } as i32;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{varlena, Bitmap, PhysType};

    fn length(kind: LengthKind, arg: &Column, sel: &[RowIdx], out: &mut Column) -> Result<(), KernelError> {
        // SAFETY: the tests' columns point to live test varlenas.
        unsafe { super::length(kind, arg, sel, out) }
    }

    #[test]
    fn lengths() {
        let a = varlena::make_1b("häll ".as_bytes());
        let col = Column { values: Values::Datum(vec![a.as_ptr() as usize]), validity: Bitmap::all_valid(1) };
        let mut out = Column::new(PhysType::I32, 1);
        length(LengthKind::TextChars, &col, &[0], &mut out).unwrap();
        assert_eq!(out.values, Values::I32(vec![5]));
        length(LengthKind::Octets, &col, &[0], &mut out).unwrap();
        assert_eq!(out.values, Values::I32(vec![6]));
        length(LengthKind::BpcharChars, &col, &[0], &mut out).unwrap();
        assert_eq!(out.values, Values::I32(vec![4]));
    }

    #[test]
    fn invalid_text_is_left_to_postgres() {
        // A truncated character and an embedded NUL: PostgreSQL raises or
        // stops counting; the kernel reports the row instead of guessing.
        let truncated = varlena::make_1b(b"caf\xc3");
        let nul = varlena::make_1b(b"ab\x00cd");
        let col = Column {
            values: Values::Datum(vec![truncated.as_ptr() as usize, nul.as_ptr() as usize]),
            validity: Bitmap::all_valid(2),
        };
        let mut out = Column::new(PhysType::I32, 2);
        assert_eq!(length(LengthKind::TextChars, &col, &[0], &mut out), Err(KernelError { row: 0 }));
        assert_eq!(length(LengthKind::TextChars, &col, &[1], &mut out), Err(KernelError { row: 1 }));
        length(LengthKind::Octets, &col, &[0, 1], &mut out).unwrap();
        assert_eq!(out.values, Values::I32(vec![4, 5]));
    }
}

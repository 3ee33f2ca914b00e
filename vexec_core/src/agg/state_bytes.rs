//! The bytes by which the state of an aggregate run through fmgr travels
//! from a Partial VecAgg to its Finalize (a bytea column through Gather),
//! when the state is an SQL value rather than `internal` (those have
//! serialization functions of their own).
//!
//! A by-value state travels as its Datum (native byte order: both ends are
//! processes of one server), a fixed-length by-reference state as its
//! bytes, a varlena state as the whole varlena, header included, so the
//! Finalize gets back exactly the value (short header, compression and
//! all) it would have combined in one process.

/// How a state type is stored (typbyval, typlen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateForm {
    ByValue,
    Fixed(usize),
    Varlena,
}

impl StateForm {
    /// From pg_type's typbyval and typlen (-1: varlena); None for C
    /// strings (typlen -2), which no aggregate state here uses.
    pub fn of(byval: bool, typlen: i16) -> Option<StateForm> {
        match (byval, typlen) {
            (true, _) => Some(StateForm::ByValue),
            (false, n) if n > 0 => Some(StateForm::Fixed(n as usize)),
            (false, -1) => Some(StateForm::Varlena),
            _ => None,
        }
    }

    /// Whether `payload` (the bytea's bytes) is a state of this form: a
    /// Datum's width, the type's length, or one whole varlena.
    pub fn reads_back(self, payload: &[u8]) -> bool {
        match self {
            StateForm::ByValue => payload.len() == std::mem::size_of::<usize>(),
            StateForm::Fixed(n) => payload.len() == n,
            StateForm::Varlena => varlena_size(payload) == Some(payload.len()),
        }
    }
}

/// The total size of the varlena at the start of `bytes` as its header
/// gives it (1-byte or 4-byte header, compressed or not), None for a TOAST
/// pointer or a header that does not fit.
pub fn varlena_size(bytes: &[u8]) -> Option<usize> {
    let &h = bytes.first()?;
    if h & 0x01 == 0x01 {
        // 1-byte header; exactly 0x01 is an external TOAST pointer
        (h != 0x01).then_some(((h >> 1) & 0x7f) as usize)
    } else {
        let word = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
        let size = ((word >> 2) & 0x3fff_ffff) as usize;
        (size >= 4).then_some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::varlena::{make_1b, make_4b};

    #[test]
    fn forms_follow_pg_type() {
        assert_eq!(StateForm::of(true, 8), Some(StateForm::ByValue));
        assert_eq!(StateForm::of(true, 4), Some(StateForm::ByValue));
        assert_eq!(StateForm::of(false, 16), Some(StateForm::Fixed(16)));
        assert_eq!(StateForm::of(false, -1), Some(StateForm::Varlena));
        assert_eq!(StateForm::of(false, -2), None);
    }

    #[test]
    fn whole_varlenas_read_back_and_cut_ones_do_not() {
        let long = make_4b(&[7u8; 300]);
        let short = make_1b(b"abc");
        assert!(StateForm::Varlena.reads_back(&long));
        assert!(StateForm::Varlena.reads_back(&short));
        assert!(!StateForm::Varlena.reads_back(&long[..long.len() - 1]));
        let mut extra = short.clone();
        extra.push(0);
        assert!(!StateForm::Varlena.reads_back(&extra));
        assert!(!StateForm::Varlena.reads_back(&[]));
        assert!(!StateForm::Varlena.reads_back(&[0x01, 18, 0, 0]), "a TOAST pointer");
        assert!(!StateForm::Varlena.reads_back(&[0, 0]), "a cut 4-byte header");
    }

    #[test]
    fn fixed_and_by_value_states_need_their_exact_width() {
        assert!(StateForm::ByValue.reads_back(&[0u8; 8]));
        assert!(!StateForm::ByValue.reads_back(&[0u8; 4]));
        assert!(StateForm::Fixed(16).reads_back(&[0u8; 16]));
        assert!(!StateForm::Fixed(16).reads_back(&[0u8; 15]));
    }
}

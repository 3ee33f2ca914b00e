//! Group and join keys of arrays and ranges, compared through a canonical
//! encoding of their value: bytes that are equal exactly when PostgreSQL's
//! equality finds the values equal.
//!
//! - An array (array_eq): its dimensions and lower bounds, then per element
//!   a NULL mark or the element's key (NULL elements are equal to each other
//!   there).
//! - A range (range_eq): whether it is empty, which bounds are infinite and
//!   which finite ones inclusive, then the finite bounds' keys (bounds
//!   compare with the subtype's btree comparison).
//! - A composite value (record_eq): per attribute of its type, dropped ones
//!   aside, a NULL mark or the field's key (NULL fields are equal to each
//!   other there; attributes past the tuple's own count are NULL).
//!
//! An element or bound is encoded as the group table normalises a key of
//! its kind ([`KeyKind`]): integers by value, floats with `-0 = 0` and one
//! NaN, strings by their bytes (bpchar without trailing blanks), numerics by
//! value whatever their display scale, intervals by their span. So the
//! encoding is only offered for element types whose own equality is one of
//! those (the host checks it, with collations).
//!
//! The group table then compares and hashes the encodings as bytes; the
//! group's output is its first value, carried in another column, as for
//! text under a nondeterministic collation ([`crate::agg::table_layout`]).

use super::collated::KeyArena;
use super::groups::{interval_span, KeyKind};
use crate::batch::{varlena, Column, RowIdx};
use crate::expr::kernels::cmp::trim_blanks;

/// How an array's elements or a range's bounds are stored and compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElemType {
    /// How values compare: `Int`, `Float4`, `Float8`, `Bytes`, `Bpchar`,
    /// `Numeric`, `Uuid` or `Interval`.
    pub kind: KeyKind,
    /// typlen: 1, 2, 4 or 8 by value, 16 by reference (uuid, interval), or
    /// -1 (varlena).
    pub len: i16,
    /// typalign in bytes (1, 2, 4 or 8).
    pub align: usize,
}

impl ElemType {
    /// Whether values of `kind` stored with `len` can be encoded.
    pub fn new(kind: KeyKind, len: i16, align: usize) -> Option<ElemType> {
        let fits = match kind {
            KeyKind::Int => matches!(len, 1 | 2 | 4 | 8),
            KeyKind::Float4 => len == 4,
            KeyKind::Float8 => len == 8,
            KeyKind::Bytes | KeyKind::Bpchar | KeyKind::Numeric => len == -1,
            KeyKind::Uuid | KeyKind::Interval => len == 16,
            _ => false,
        };
        (fits && matches!(align, 1 | 2 | 4 | 8)).then_some(ElemType { kind, len, align })
    }
}

/// An attribute of a composite type, as its values store it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordField {
    /// A live attribute, compared by its key.
    Kept(ElemType),
    /// A dropped attribute: old values may still hold bytes for it, which
    /// are stepped over (typlen: 1, 2, 4, 8 or 16 by value or reference, or
    /// -1; typalign in bytes).
    Dropped { len: i16, align: usize },
}

impl RecordField {
    /// A dropped attribute of typlen `len` and typalign `align`, when its
    /// bytes can be stepped over (not a C string).
    pub fn dropped(len: i16, align: usize) -> Option<RecordField> {
        ((len == -1 || len > 0) && matches!(align, 1 | 2 | 4 | 8))
            .then_some(RecordField::Dropped { len, align })
    }
}

/// What a key column holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Encoding {
    Array(ElemType),
    Range(ElemType),
    Multirange(ElemType),
    Jsonb,
    /// A composite type's values, its attributes in order.
    Record(std::sync::Arc<[RecordField]>),
}

/// Why a value could not be read (a corrupt value: an ERROR for the host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

impl Malformed {
    /// A composite value holding a compressed or external field (heap_form_tuple
    /// keeps fields as it is given them): not corrupt, the host decompresses
    /// its fields and encodes it again.
    pub const TOASTED_FIELD: Malformed = Malformed("a compressed or external field");
}

// Range flags (rangetypes.h).
const RANGE_EMPTY: u8 = 0x01;
const RANGE_LB_INC: u8 = 0x02;
const RANGE_UB_INC: u8 = 0x04;
const RANGE_LB_INF: u8 = 0x08;
const RANGE_UB_INF: u8 = 0x10;
const RANGE_LB_NULL: u8 = 0x20;
const RANGE_UB_NULL: u8 = 0x40;

/// A varlena's payload read as PostgreSQL's structs are: offsets count from
/// the start of the value with a 4-byte header (where a detoasted copy
/// starts, maximally aligned), whatever header this copy has.
struct Value<'a> {
    payload: &'a [u8],
}

impl Value<'_> {
    /// The bytes from struct offset `off`.
    fn at(&self, off: usize) -> Result<&[u8], Malformed> {
        self.payload.get(off.wrapping_sub(4)..).filter(|_| off >= 4).ok_or(Malformed("offset past the value"))
    }

    fn i32_at(&self, off: usize) -> Result<i32, Malformed> {
        let b = self.at(off)?.get(..4).ok_or(Malformed("truncated header"))?;
        Ok(i32::from_le_bytes(b.try_into().expect("4 bytes")))
    }
}

fn align_to(off: usize, align: usize) -> usize {
    (off + align - 1) & !(align - 1)
}

/// The length of the varlena `bytes` start with, header included, read
/// from its 1-byte or 4-byte header (compressed or not); a TOAST pointer or
/// a length past `bytes` is an error.
fn varlena_len(bytes: &[u8]) -> Result<usize, Malformed> {
    let first = *bytes.first().ok_or(Malformed("truncated varlena"))?;
    let total = if first & 0x01 == 0x01 {
        if first == 0x01 {
            return Err(Malformed("a TOAST pointer inside a value"));
        }
        ((first >> 1) & 0x7f) as usize
    } else {
        let word =
            u32::from_le_bytes(bytes.get(..4).ok_or(Malformed("truncated varlena"))?.try_into().unwrap());
        ((word >> 2) & 0x3fff_ffff) as usize
    };
    if total == 0 || total > bytes.len() {
        return Err(Malformed("truncated varlena"));
    }
    Ok(total)
}

/// Encode the element of type `e` at struct offset `off` of `v`; returns the
/// offset after it.
fn encode_elem(v: &Value<'_>, off: usize, e: ElemType, out: &mut Vec<u8>) -> Result<usize, Malformed> {
    let bytes = v.at(off)?;
    let (value, size): (&[u8], usize) = if e.len > 0 {
        let n = e.len as usize;
        (bytes.get(..n).ok_or(Malformed("truncated element"))?, n)
    } else {
        if bytes.first().is_some_and(|&b| b & 0x03 == 0x02) {
            return Err(Malformed("a compressed element"));
        }
        let total = varlena_len(bytes)?;
        let whole = &bytes[..total];
        // SAFETY: `whole` is a whole plain varlena.
        (unsafe { varlena::bytes(whole.as_ptr()) }, total)
    };
    match e.kind {
        KeyKind::Int => {
            let x = match e.len {
                1 => value[0] as i8 as i64,
                2 => i16::from_le_bytes(value.try_into().unwrap()) as i64,
                4 => i32::from_le_bytes(value.try_into().unwrap()) as i64,
                _ => i64::from_le_bytes(value.try_into().unwrap()),
            };
            out.extend_from_slice(&x.to_le_bytes());
        }
        KeyKind::Float4 | KeyKind::Float8 => {
            let x = match e.kind {
                KeyKind::Float4 => f32::from_le_bytes(value.try_into().unwrap()) as f64,
                _ => f64::from_le_bytes(value.try_into().unwrap()),
            };
            // As hashfloat8 and float8eq: -0 = 0, every NaN equal.
            let bits = if x.is_nan() {
                f64::NAN.to_bits()
            } else if x == 0.0 {
                0
            } else {
                x.to_bits()
            };
            out.extend_from_slice(&bits.to_le_bytes());
        }
        KeyKind::Bytes | KeyKind::Bpchar => {
            let kept = match e.kind {
                KeyKind::Bpchar => trim_blanks(value),
                _ => value,
            };
            out.extend_from_slice(&(kept.len() as u32).to_le_bytes());
            out.extend_from_slice(kept);
        }
        KeyKind::Numeric => match crate::numeric::key_view(value) {
            Some((head, digits)) => {
                out.push(1);
                out.extend_from_slice(&head.to_le_bytes());
                out.extend_from_slice(&(digits.len() as u32).to_le_bytes());
                out.extend_from_slice(digits);
            }
            None => return Err(Malformed("an invalid numeric")),
        },
        KeyKind::Uuid => out.extend_from_slice(value),
        KeyKind::Interval => out.extend_from_slice(&interval_span(value).to_le_bytes()),
        other => unreachable!("ElemType::new refuses {other:?}"),
    }
    Ok(off + size)
}

/// Append the canonical encoding of the array whose payload (the bytes after
/// its varlena header) is `payload`.
pub fn encode_array(payload: &[u8], e: ElemType, out: &mut Vec<u8>) -> Result<(), Malformed> {
    let v = Value { payload };
    let ndim = v.i32_at(4)?;
    if !(0..=6).contains(&ndim) {
        return Err(Malformed("an array of more than 6 dimensions"));
    }
    let ndim = ndim as usize;
    let dataoffset = v.i32_at(8)?;
    out.push(ndim as u8);
    let mut items: usize = if ndim == 0 { 0 } else { 1 };
    // Dimensions, then lower bounds (array_eq compares both).
    for d in 0..2 * ndim {
        let x = v.i32_at(16 + 4 * d)?;
        if d < ndim {
            items = items
                .checked_mul(usize::try_from(x).map_err(|_| Malformed("a negative dimension"))?)
                .ok_or(Malformed("too many elements"))?;
        }
        out.extend_from_slice(&x.to_le_bytes());
    }
    let bitmap_at = 16 + 8 * ndim;
    let (nulls, mut off) = if dataoffset != 0 {
        let bitmap = v.at(bitmap_at)?.get(..items.div_ceil(8)).ok_or(Malformed("truncated null bitmap"))?;
        (Some(bitmap), dataoffset as usize)
    } else {
        (None, align_to(bitmap_at, 8))
    };
    for i in 0..items {
        // A clear bit is a NULL element (PostgreSQL's polarity).
        if nulls.is_some_and(|b| b[i / 8] & (1 << (i % 8)) == 0) {
            out.push(0);
            continue;
        }
        out.push(1);
        off = encode_elem(&v, align_to(off, e.align), e, out)?;
    }
    Ok(())
}

/// Append the canonical encoding of the range whose payload is `payload`.
pub fn encode_range(payload: &[u8], e: ElemType, out: &mut Vec<u8>) -> Result<(), Malformed> {
    let v = Value { payload };
    let flags = *payload.last().ok_or(Malformed("an empty range value"))?;
    // Bounds follow the range type's OID; the flags byte ends the value.
    let end = encode_range_bounds(&v, 8, flags, e, out)?;
    if end > payload.len() + 3 {
        return Err(Malformed("range bounds past the value"));
    }
    Ok(())
}

/// Append the canonical encoding of a range with flags `flags` whose bounds
/// (those it has) start at struct offset `off` of `v`; returns the offset
/// after them. Shared by ranges and the ranges of a multirange.
fn encode_range_bounds(
    v: &Value<'_>,
    mut off: usize,
    flags: u8,
    e: ElemType,
    out: &mut Vec<u8>,
) -> Result<usize, Malformed> {
    if flags & RANGE_EMPTY != 0 {
        out.push(RANGE_EMPTY);
        return Ok(off);
    }
    let mut kept = flags & (RANGE_LB_INC | RANGE_UB_INC | RANGE_LB_INF | RANGE_UB_INF);
    // An infinite bound is never inclusive (range_cmp_bounds ignores it).
    if kept & RANGE_LB_INF != 0 {
        kept &= !RANGE_LB_INC;
    }
    if kept & RANGE_UB_INF != 0 {
        kept &= !RANGE_UB_INC;
    }
    out.push(kept);
    // Bounds aligned as att_align_pointer aligns them (a varlena bound with
    // a 1-byte header is not aligned).
    for (inf, null) in [(RANGE_LB_INF, RANGE_LB_NULL), (RANGE_UB_INF, RANGE_UB_NULL)] {
        if flags & (inf | null) != 0 {
            continue;
        }
        let short_header = e.len == -1 && v.at(off)?.first().is_some_and(|&b| b != 0);
        if !short_header {
            off = align_to(off, e.align);
        }
        off = encode_elem(v, off, e, out)?;
    }
    Ok(off)
}

/// Append the canonical encoding of the multirange whose payload is
/// `payload` (multirange_eq: the same number of ranges, each equal as
/// range_eq has it). After the header (type OID, range count) come an item
/// per range but the first (the length of the previous range's bounds, or
/// every fourth their offset), a flags byte per range, then, aligned to the
/// subtype, each range's bounds as a range stores them.
pub fn encode_multirange(payload: &[u8], e: ElemType, out: &mut Vec<u8>) -> Result<(), Malformed> {
    const ITEM_OFF_BIT: u32 = 0x8000_0000;
    let v = Value { payload };
    let count = v.i32_at(8)? as u32 as usize;
    out.extend_from_slice(&(count as u32).to_le_bytes());
    if count == 0 {
        return Ok(());
    }
    if count > payload.len() {
        return Err(Malformed("more ranges than bytes"));
    }
    let items_at = 12;
    let flags_at = items_at + 4 * (count - 1);
    let bounds_at = align_to(flags_at + count, e.align);
    let flags = v.at(flags_at)?.get(..count).ok_or(Malformed("truncated multirange flags"))?;
    let mut offset = 0usize;
    for (i, &f) in flags.iter().enumerate() {
        if i > 0 {
            let item = v.i32_at(items_at + 4 * (i - 1))? as u32;
            let x = (item & !ITEM_OFF_BIT) as usize;
            offset = if item & ITEM_OFF_BIT != 0 { x } else { offset + x };
        }
        if f & RANGE_EMPTY != 0 {
            return Err(Malformed("an empty range inside a multirange"));
        }
        let end = encode_range_bounds(&v, bounds_at + offset, f, e, out)?;
        if end > payload.len() + 4 {
            return Err(Malformed("multirange bounds past the value"));
        }
    }
    Ok(())
}

// HeapTupleHeader fields of a composite Datum (htup_details.h), as struct
// offsets from the start of a value with a 4-byte header.
const TUP_INFOMASK2: usize = 18;
const TUP_INFOMASK: usize = 20;
const TUP_HOFF: usize = 22;
const TUP_BITS: usize = 23;
const HEAP_HASNULL: u16 = 0x0001;
const HEAP_NATTS_MASK: u16 = 0x07FF;

/// The struct offset after a value of typlen `len` starting at struct offset
/// `off` of `v` (a varlena's length from its header).
fn value_end(v: &Value<'_>, off: usize, len: i16) -> Result<usize, Malformed> {
    if len > 0 {
        return Ok(off + len as usize);
    }
    Ok(off + varlena_len(v.at(off)?)?)
}

/// Append the canonical encoding of the composite value whose payload is
/// `payload` (a HeapTupleHeader after its length word), of a type whose
/// attributes are `fields`: equal exactly when record_eq finds the values
/// equal (field by field with each type's equality, NULL equal to NULL).
/// Attributes are aligned as heap tuples align them: fixed-length ones to
/// their typalign, a varlena only when it does not start with a 1-byte
/// header (a nonzero first byte; padding is zeros).
pub fn encode_record(payload: &[u8], fields: &[RecordField], out: &mut Vec<u8>) -> Result<(), Malformed> {
    let v = Value { payload };
    let u16_at = |off: usize| -> Result<u16, Malformed> {
        let b = v.at(off)?.get(..2).ok_or(Malformed("truncated tuple header"))?;
        Ok(u16::from_le_bytes(b.try_into().unwrap()))
    };
    let natts = (u16_at(TUP_INFOMASK2)? & HEAP_NATTS_MASK) as usize;
    let has_nulls = u16_at(TUP_INFOMASK)? & HEAP_HASNULL != 0;
    let hoff = *v.at(TUP_HOFF)?.first().ok_or(Malformed("truncated tuple header"))? as usize;
    let bits = if has_nulls {
        Some(v.at(TUP_BITS)?.get(..natts.div_ceil(8)).ok_or(Malformed("truncated null bitmap"))?)
    } else {
        None
    };
    if hoff < TUP_BITS || bits.is_some_and(|b| TUP_BITS + b.len() > hoff) {
        return Err(Malformed("a tuple header overlapping its data"));
    }
    let mut off = hoff;
    for (i, f) in fields.iter().enumerate() {
        let kept = match f {
            RecordField::Kept(_) => true,
            RecordField::Dropped { .. } => false,
        };
        // Past the tuple's attributes (added to the type since) or NULL.
        if i >= natts || bits.is_some_and(|b| b[i / 8] & (1 << (i % 8)) == 0) {
            if kept {
                out.push(0);
            }
            continue;
        }
        let (len, align) = match *f {
            RecordField::Kept(e) => (e.len, e.align),
            RecordField::Dropped { len, align } => (len, align),
        };
        let short_header = len == -1 && v.at(off)?.first().is_some_and(|&b| b != 0);
        if !short_header {
            off = align_to(off, align);
        }
        if len == -1 && kept {
            // A TOAST pointer (1-byte header 0x01) or a compressed value
            // (4-byte header, low bits 10).
            let first = *v.at(off)?.first().ok_or(Malformed("truncated field"))?;
            if first == 0x01 || first & 0x03 == 0x02 {
                return Err(Malformed::TOASTED_FIELD);
            }
        }
        off = match *f {
            RecordField::Kept(e) => {
                out.push(1);
                encode_elem(&v, off, e, out)?
            }
            RecordField::Dropped { len, .. } => value_end(&v, off, len)?,
        };
    }
    if off > payload.len() + 4 {
        return Err(Malformed("fields past the value"));
    }
    Ok(())
}

// JsonbContainer header and JEntry bits (jsonb.h).
const JB_CMASK: u32 = 0x0FFF_FFFF;
const JB_FSCALAR: u32 = 0x1000_0000;
const JB_FOBJECT: u32 = 0x2000_0000;
const JB_FARRAY: u32 = 0x4000_0000;
const JENTRY_OFFLENMASK: u32 = 0x0FFF_FFFF;
const JENTRY_TYPEMASK: u32 = 0x7000_0000;
const JENTRY_HAS_OFF: u32 = 0x8000_0000;
const JENTRY_ISSTRING: u32 = 0x0000_0000;
const JENTRY_ISNUMERIC: u32 = 0x1000_0000;
const JENTRY_ISBOOL_FALSE: u32 = 0x2000_0000;
const JENTRY_ISBOOL_TRUE: u32 = 0x3000_0000;
const JENTRY_ISNULL: u32 = 0x4000_0000;
const JENTRY_ISCONTAINER: u32 = 0x5000_0000;

/// Append the canonical encoding of the jsonb whose payload is `payload`:
/// equal exactly when jsonb_eq (compareJsonbContainers) finds the values
/// equal. A container is its kind (object, array, or the one-element array
/// of a raw scalar, which equals no real array) and size, then its children
/// in storage order: an object's pairs key by key (keys are stored sorted and
/// unique, so equal objects list equal pairs alike), an array's elements.
/// Strings compare by their bytes (varstr_cmp under the database's default
/// collation, which is deterministic, ties broken bytewise), numbers by
/// value whatever their display scale (numeric_cmp), booleans and nulls by
/// kind. Nesting is walked with an explicit stack: a value's depth is not
/// bounded by ours.
pub fn encode_jsonb(payload: &[u8], out: &mut Vec<u8>) -> Result<(), Malformed> {
    let v = Value { payload };
    // A container's children are written in order; a nested container is
    // written in full where it occurs, so walk depth first: each stack entry
    // is a container being written, with the next child to write.
    struct Open {
        base: usize,
        children_at: usize,
        nchildren: usize,
        npairs: Option<usize>,
        next: usize,
        offsets: Vec<(usize, usize)>,
    }
    let mut stack: Vec<Open> = Vec::new();
    let open = |at: usize, out: &mut Vec<u8>| -> Result<Open, Malformed> {
        let header = v.i32_at(at)? as u32;
        let count = (header & JB_CMASK) as usize;
        let (tag, nchildren, npairs) = if header & JB_FOBJECT != 0 {
            (b'o', count.checked_mul(2).ok_or(Malformed("too many jsonb pairs"))?, Some(count))
        } else if header & JB_FARRAY != 0 {
            (if header & JB_FSCALAR != 0 { b's' } else { b'a' }, count, None)
        } else {
            return Err(Malformed("a jsonb container that is neither an object nor an array"));
        };
        out.push(tag);
        out.extend_from_slice(&(count as u32).to_le_bytes());
        let children_at = at + 4;
        let base = children_at
            .checked_add(nchildren.checked_mul(4).ok_or(Malformed("too many jsonb children"))?)
            .ok_or(Malformed("too many jsonb children"))?;
        if base > payload.len() + 4 {
            return Err(Malformed("jsonb children past the value"));
        }
        // Each child's [start, end) from its JEntry (an end offset, or a
        // length after the previous end).
        let mut offsets = Vec::with_capacity(nchildren);
        let mut end = 0usize;
        for i in 0..nchildren {
            let je = v.i32_at(children_at + 4 * i)? as u32;
            let x = (je & JENTRY_OFFLENMASK) as usize;
            let start = end;
            end = if je & JENTRY_HAS_OFF != 0 { x } else { end + x };
            if end < start {
                return Err(Malformed("jsonb offsets out of order"));
            }
            offsets.push((start, end));
        }
        Ok(Open { base, children_at, nchildren, npairs, next: 0, offsets })
    };
    stack.push(open(4, out)?);
    while let Some(top) = stack.last_mut() {
        if top.next == top.nchildren {
            stack.pop();
            continue;
        }
        // Objects: key i, then value i (children i and npairs + i).
        let index = match top.npairs {
            Some(n) => {
                let (pair, is_value) = (top.next / 2, top.next % 2 == 1);
                if is_value {
                    n + pair
                } else {
                    pair
                }
            }
            None => top.next,
        };
        top.next += 1;
        let je = v.i32_at(top.children_at + 4 * index)? as u32;
        let (start, end) = top.offsets[index];
        let at = top.base + start;
        match je & JENTRY_TYPEMASK {
            JENTRY_ISNULL => out.push(b'z'),
            JENTRY_ISBOOL_FALSE => out.push(b'f'),
            JENTRY_ISBOOL_TRUE => out.push(b't'),
            JENTRY_ISSTRING => {
                let s = v.at(at)?.get(..end - start).ok_or(Malformed("a jsonb string past the value"))?;
                out.push(b'"');
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s);
            }
            JENTRY_ISNUMERIC => {
                // A numeric varlena, int-aligned, inside the value.
                let at = align_to(at, 4);
                let len =
                    (top.base + end).checked_sub(at).ok_or(Malformed("a jsonb number past its entry"))?;
                let whole = v.at(at)?.get(..len).ok_or(Malformed("a jsonb number past the value"))?;
                let num =
                    varlena_payload(whole).ok_or(Malformed("a jsonb number that is not a plain numeric"))?;
                let (head, digits) =
                    crate::numeric::key_view(num).ok_or(Malformed("an invalid numeric in a jsonb"))?;
                out.push(b'n');
                out.extend_from_slice(&head.to_le_bytes());
                out.extend_from_slice(&(digits.len() as u32).to_le_bytes());
                out.extend_from_slice(digits);
            }
            JENTRY_ISCONTAINER => {
                let child = open(align_to(at, 4), out)?;
                stack.push(child);
            }
            _ => return Err(Malformed("an unknown jsonb entry type")),
        }
    }
    Ok(())
}

/// The payload of a plain varlena (1- or 4-byte header) that fills `whole`.
fn varlena_payload(whole: &[u8]) -> Option<&[u8]> {
    let first = *whole.first()?;
    if first & 0x01 == 0x01 {
        let total = ((first >> 1) & 0x7f) as usize;
        (first != 0x01 && total >= 1 && total <= whole.len()).then(|| &whole[1..total])
    } else {
        if first & 0x03 != 0 {
            return None; // compressed
        }
        let word = u32::from_le_bytes(whole.get(..4)?.try_into().ok()?);
        let total = ((word >> 2) & 0x3fff_ffff) as usize;
        (total >= 4 && total <= whole.len()).then(|| &whole[4..total])
    }
}

/// Builds columns of encoded keys, reusing its memory from batch to batch.
#[derive(Debug)]
pub struct EncodedKeyColumn {
    encoding: Encoding,
    arena: KeyArena,
}

impl EncodedKeyColumn {
    pub fn new(encoding: Encoding) -> EncodedKeyColumn {
        EncodedKeyColumn { encoding, arena: KeyArena::default() }
    }

    /// A column of plain varlenas holding the encodings of `col`'s rows
    /// among `rows` (NULL where `col` is NULL and in the other rows), valid
    /// until the next call.
    ///
    /// # Safety
    /// `col`'s valid values among `rows` are pointers to plain varlenas.
    pub unsafe fn build(&mut self, col: &Column, rows: &[RowIdx]) -> Result<Column, Malformed> {
        self.arena.clear();
        let mut result = Ok(());
        for &r in rows {
            let r = r as usize;
            if !col.is_valid(r) {
                continue;
            }
            // SAFETY: valid values are plain varlenas (the caller's promise).
            let payload = unsafe { varlena::bytes(col.values.datum(r) as *const u8) };
            let encoding = &self.encoding;
            self.arena.push(r, |out| {
                result = match encoding {
                    Encoding::Array(e) => encode_array(payload, *e, out),
                    Encoding::Range(e) => encode_range(payload, *e, out),
                    Encoding::Multirange(e) => encode_multirange(payload, *e, out),
                    Encoding::Jsonb => encode_jsonb(payload, out),
                    Encoding::Record(fields) => encode_record(payload, fields, out),
                };
            });
            result.clone()?;
        }
        Ok(self.arena.column(col.len()))
    }

    /// Memory held.
    pub fn bytes_used(&self) -> usize {
        self.arena.bytes_used()
    }
}

#[cfg(test)]
mod tests;

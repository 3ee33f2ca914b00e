//! PostgreSQL's `numeric` on disk and as scaled integers.
//!
//! A numeric value is a varlena holding a header word (sign, display scale,
//! weight), then base-10,000 digits, most significant first; the digit at
//! index `i` is worth `10000^(weight - i)`. Values with a small scale and
//! weight use a 2-byte "short" header, others a 4-byte "long" one, and NaN and
//! the infinities are header-only special values (numeric.c, `NumericData`).
//!
//! Batches carry numeric(p, s) columns with p <= 38 as scaled integers: the
//! value times `10^dscale` in an `i128`. [`decode`] and [`encode`] convert
//! between the two exactly as numeric.c's `make_result` lays values out
//! (leading and trailing zero digits stripped, zero is weight 0 and positive,
//! short header whenever it fits), so an encoded value is byte-identical to
//! the one PostgreSQL would build.

const SIGN_MASK: u16 = 0xC000;
const NEG: u16 = 0x4000;
const SHORT: u16 = 0x8000;
const SPECIAL: u16 = 0xC000;
const NAN: u16 = 0xC000;
const PINF: u16 = 0xD000;
const NINF: u16 = 0xF000;
const SHORT_SIGN: u16 = 0x2000;
const SHORT_DSCALE_MASK: u16 = 0x1F80;
const SHORT_DSCALE_SHIFT: u16 = 7;
const SHORT_WEIGHT_SIGN: u16 = 0x0040;
const SHORT_WEIGHT_MASK: u16 = 0x003F;
const DSCALE_MASK: u16 = 0x3FFF;
const NBASE: i128 = 10_000;

/// A numeric value read from its on-disk payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    NaN,
    PosInfinity,
    NegInfinity,
    /// `value / 10^dscale`.
    Scaled {
        value: i128,
        dscale: u16,
    },
    /// Finite, but too large for an `i128` at its display scale.
    TooWide,
}

/// `10^n` for n <= 38.
fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// Read a numeric from the payload of a plain varlena (the bytes after the
/// varlena header). None when the bytes are not a valid numeric.
pub fn decode(payload: &[u8]) -> Option<Decoded> {
    let word = |i: usize| payload.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let header = word(0)?;
    if header & SIGN_MASK == SPECIAL {
        return match header {
            NAN => Some(Decoded::NaN),
            PINF => Some(Decoded::PosInfinity),
            NINF => Some(Decoded::NegInfinity),
            _ => None,
        };
    }
    let (negative, dscale, weight, digits_at) = if header & SIGN_MASK == SHORT {
        let w = (header & SHORT_WEIGHT_MASK) as i32;
        let weight = if header & SHORT_WEIGHT_SIGN != 0 { w - (SHORT_WEIGHT_MASK as i32 + 1) } else { w };
        (header & SHORT_SIGN != 0, (header & SHORT_DSCALE_MASK) >> SHORT_DSCALE_SHIFT, weight, 2)
    } else {
        let weight = word(2)? as i16 as i32;
        (header & SIGN_MASK == NEG, header & DSCALE_MASK, weight, 4)
    };
    let body = &payload[digits_at..];
    if body.len() % 2 != 0 {
        return None;
    }
    let mut value: i128 = 0;
    // Accumulate in units of 10^-dscale: digit i is worth 10^(4*(weight-i) + dscale).
    for (i, d) in body.chunks_exact(2).enumerate() {
        let d = i16::from_le_bytes([d[0], d[1]]) as i128;
        if !(0..NBASE).contains(&d) {
            return None;
        }
        let exp = 4 * (weight - i as i32) + dscale as i32;
        let term = if exp >= 0 {
            match pow10(exp as u32).and_then(|p| d.checked_mul(p)) {
                Some(t) => t,
                None if d == 0 => 0,
                None => return Some(Decoded::TooWide),
            }
        } else {
            // Below the display scale: PostgreSQL never stores non-zero digits there.
            let p = pow10((-exp) as u32)?;
            if d % p != 0 {
                return None;
            }
            d / p
        };
        value = match value.checked_add(term) {
            Some(v) => v,
            None => return Some(Decoded::TooWide),
        };
    }
    Some(Decoded::Scaled { value: if negative { -value } else { value }, dscale })
}

/// The payload (without varlena header) of the numeric `value / 10^dscale`,
/// laid out as numeric.c's `make_result` would.
pub fn encode_payload(value: i128, dscale: u16) -> Vec<u8> {
    assert!(dscale <= DSCALE_MASK, "display scale out of range");
    let magnitude = value.unsigned_abs();
    // Split into integer and fraction parts in base 10,000.
    let frac_groups = (dscale as u32).div_ceil(4);
    let (int_part, frac) = if dscale as u32 <= 38 {
        let p = 10u128.pow(dscale as u32);
        (magnitude / p, magnitude % p)
    } else {
        (0, magnitude) // a scale past 38 digits: the whole value is fraction
    };
    let mut int_digits = vec![];
    let mut ip = int_part;
    while ip > 0 {
        int_digits.push((ip % NBASE as u128) as i16);
        ip /= NBASE as u128;
    }
    int_digits.reverse();
    // Fraction digits, most significant first, padded to whole groups.
    let mut frac_digits = vec![0i16; frac_groups as usize];
    let pad = 4 * frac_groups - dscale as u32;
    let mut f = frac;
    let mut pad_left = pad;
    for slot in frac_digits.iter_mut().rev() {
        // The last group holds the lowest `4 - pad` decimal digits, shifted up.
        let take = 4 - pad_left;
        let p = 10u128.pow(take);
        *slot = ((f % p) * 10u128.pow(pad_left)) as i16;
        f /= p;
        pad_left = 0;
    }
    let mut weight = int_digits.len() as i32 - 1;
    let mut digits: Vec<i16> = int_digits.into_iter().chain(frac_digits).collect();
    // Strip leading zeros (each lowers the weight) and trailing zeros.
    let lead = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..lead);
    weight -= lead as i32;
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let negative = value < 0 && !digits.is_empty();
    if digits.is_empty() {
        weight = 0;
    }
    let mut out = Vec::with_capacity(4 + digits.len() * 2);
    if dscale <= SHORT_DSCALE_MASK >> SHORT_DSCALE_SHIFT && (-64..=63).contains(&weight) {
        let header = SHORT
            | if negative { SHORT_SIGN } else { 0 }
            | (dscale << SHORT_DSCALE_SHIFT)
            | if weight < 0 { SHORT_WEIGHT_SIGN } else { 0 }
            | (weight as u16 & SHORT_WEIGHT_MASK);
        out.extend_from_slice(&header.to_le_bytes());
    } else {
        out.extend_from_slice(&((if negative { NEG } else { 0 }) | dscale).to_le_bytes());
        out.extend_from_slice(&(weight as i16).to_le_bytes());
    }
    for d in digits {
        out.extend_from_slice(&d.to_le_bytes());
    }
    out
}

/// A numeric's sign, weight and base-10,000 digits as stored (no leading or
/// trailing zero digits, zero has none), or its special value.
enum Parts<'a> {
    Special(Special),
    Finite { negative: bool, weight: i32, digits: &'a [u8] },
}

fn parts(payload: &[u8]) -> Option<Parts<'_>> {
    let word = |i: usize| payload.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let header = word(0)?;
    if header & SIGN_MASK == SPECIAL {
        return Some(Parts::Special(match header {
            NAN => Special::NaN,
            PINF => Special::PosInfinity,
            NINF => Special::NegInfinity,
            _ => return None,
        }));
    }
    let (negative, weight, at) = if header & SIGN_MASK == SHORT {
        let w = (header & SHORT_WEIGHT_MASK) as i32;
        let weight = if header & SHORT_WEIGHT_SIGN != 0 { w - (SHORT_WEIGHT_MASK as i32 + 1) } else { w };
        (header & SHORT_SIGN != 0, weight, 2)
    } else {
        (header & SIGN_MASK == NEG, word(2)? as i16 as i32, 4)
    };
    let digits = &payload[at..];
    (digits.len() % 2 == 0).then_some(Parts::Finite { negative, weight, digits })
}

/// The parts of a numeric that equality looks at, for hashing and
/// comparing numerics as group and join keys: numeric_eq ignores the
/// display scale (1.0 = 1.00), and PostgreSQL stores digits without
/// leading or trailing zero digits (stripped again here all the same).
/// Returns a class-and-weight word and the significant base-10000 digits
/// (little-endian pairs); equal numerics give equal views. None when the
/// bytes are not a valid numeric.
pub fn key_view(payload: &[u8]) -> Option<(i64, &[u8])> {
    let (negative, mut weight, mut digits) = match parts(payload)? {
        Parts::Special(s) => return Some(((s as i64 + 1) << 40, &[])),
        Parts::Finite { negative, weight, digits } => (negative, weight, digits),
    };
    while digits.len() >= 2 && digits[0] == 0 && digits[1] == 0 {
        digits = &digits[2..];
        weight -= 1;
    }
    while digits.len() >= 2 && digits[digits.len() - 2] == 0 && digits[digits.len() - 1] == 0 {
        digits = &digits[..digits.len() - 2];
    }
    if digits.is_empty() {
        return Some((1, digits)); // zero, whatever its sign, weight and scale
    }
    let class = if negative { 3i64 } else { 2 };
    Some(((class << 20) | (weight as i64 & 0xFFFFF), digits))
}

/// Whether `payload` is a well-formed numeric.
pub fn is_numeric(payload: &[u8]) -> bool {
    parts(payload).is_some()
}

/// PostgreSQL's order of two numerics (`cmp_numerics`): NaN above
/// +Infinity above every finite value above -Infinity; finite values by
/// value whatever their display scale. None when a payload is not a numeric.
pub fn compare(a: &[u8], b: &[u8]) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    let rank = |p: &Parts<'_>| match p {
        Parts::Special(Special::NegInfinity) => 0,
        Parts::Finite { .. } => 1,
        Parts::Special(Special::PosInfinity) => 2,
        Parts::Special(Special::NaN) => 3,
    };
    let (pa, pb) = (parts(a)?, parts(b)?);
    let (
        Parts::Finite { negative: na, weight: wa, digits: da },
        Parts::Finite { negative: nb, weight: wb, digits: db },
    ) = (&pa, &pb)
    else {
        return Some(rank(&pa).cmp(&rank(&pb)));
    };
    // Zero has no digits and no sign.
    let sign = |neg: bool, d: &[u8]| {
        if d.is_empty() {
            0
        } else if neg {
            -1
        } else {
            1
        }
    };
    let (sa, sb) = (sign(*na, da), sign(*nb, db));
    if sa != sb || sa == 0 {
        return Some(sa.cmp(&sb));
    }
    // Same sign, both non-zero: compare magnitudes digit by digit from the
    // highest weight.
    let digit = |d: &[u8], i: usize| d.get(2 * i..2 * i + 2).map_or(0, |x| i16::from_le_bytes([x[0], x[1]]));
    let magnitude = if wa != wb {
        wa.cmp(wb)
    } else {
        let n = da.len().max(db.len()) / 2;
        (0..n)
            .map(|i| digit(da, i).cmp(&digit(db, i)))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    };
    Some(if sa < 0 { magnitude.reverse() } else { magnitude })
}

/// The non-finite numerics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    NaN,
    PosInfinity,
    NegInfinity,
}

/// The payload of a special value (a short header alone, as `make_result`).
pub fn encode_special(s: Special) -> Vec<u8> {
    let header = match s {
        Special::NaN => NAN,
        Special::PosInfinity => PINF,
        Special::NegInfinity => NINF,
    };
    header.to_le_bytes().to_vec()
}

/// `value * 10^k`, None on overflow.
pub fn rescale(value: i128, k: u16) -> Option<i128> {
    pow10(k as u32).and_then(|p| value.checked_mul(p))
}

/// The finite numeric `payload` as an integer scaled by `10^scale`, when its
/// display scale is exactly `scale` and the scaled value fits an `i64`;
/// None otherwise (NaN, infinities, another display scale, too wide, not a
/// numeric). This is the batch kernels' fast path for numeric(p, s) columns,
/// whose every value has display scale `s`.
#[inline]
pub fn decode_scaled_i64(payload: &[u8], scale: u16) -> Option<i64> {
    let header = u16::from_le_bytes([*payload.first()?, *payload.get(1)?]);
    let (negative, dscale, weight, at) = match header & SIGN_MASK {
        SHORT => {
            let w = (header & SHORT_WEIGHT_MASK) as i32;
            let weight = if header & SHORT_WEIGHT_SIGN != 0 { w - (SHORT_WEIGHT_MASK as i32 + 1) } else { w };
            (header & SHORT_SIGN != 0, (header & SHORT_DSCALE_MASK) >> SHORT_DSCALE_SHIFT, weight, 2)
        }
        SPECIAL => return None,
        sign => {
            let w = i16::from_le_bytes([*payload.get(2)?, *payload.get(3)?]) as i32;
            (sign == NEG, header & DSCALE_MASK, w, 4)
        }
    };
    if dscale != scale {
        return None;
    }
    let body = &payload[at..];
    let n = body.len() / 2;
    // Four base-10,000 digits are 16 decimal digits: an i64 holds them
    // (a value needing more digits than that at scale <= 18 is rare; the
    // caller falls back).
    if body.len() % 2 != 0 || n > 4 {
        return None;
    }
    let digit = |d: &[u8]| {
        let d = i16::from_le_bytes([d[0], d[1]]);
        (0..NBASE as i16).contains(&d).then_some(d as i64)
    };
    let Some((head, last)) = body.split_last_chunk::<2>() else {
        return Some(0); // no digits: zero
    };
    let mut acc: i64 = 0;
    for d in head.chunks_exact(2) {
        acc = acc * NBASE as i64 + digit(d)?;
    }
    let magnitude = scaled_magnitude(acc, digit(last)?, weight, n, scale)?;
    Some(if negative { -magnitude } else { magnitude })
}

/// As [`decode_scaled_i64`] for an `i128` (the numeric(19..38, s) columns):
/// None for NaN, infinities, another display scale, a value past the
/// i128, or bytes that are not a numeric.
pub fn decode_scaled_i128(payload: &[u8], scale: u16) -> Option<i128> {
    match decode(payload)? {
        Decoded::Scaled { value, dscale } if dscale == scale => Some(value),
        _ => None,
    }
}

/// The magnitude, in units of `10^-scale`, of the `n` base-10,000 digits
/// whose leading `n - 1` make `acc` and whose last is `last`, the first of
/// weight `weight`. None when it does not fit an i64 or has digits below
/// the scale.
#[inline(always)]
fn scaled_magnitude(acc: i64, last: i64, weight: i32, n: usize, scale: u16) -> Option<i64> {
    // The last digit is worth 10^(4 * (weight - n + 1)); in units of 10^-scale:
    let exp = 4 * (weight - n as i32 + 1) + scale as i32;
    if exp >= 0 {
        (acc * NBASE as i64 + last).checked_mul(*POW10_I64.get(exp as usize)?)
    } else {
        // Digits below the display scale are zero in a stored numeric: the
        // last base-10,000 digit holds 1 to 3 of them. Dividing only that
        // digit, by a multiplication (a division per value was a sixth of
        // TPC-H Q1's reading of its numerics, and LLVM turns a match of
        // constant divisors back into one), keeps the rest exact.
        let k = -exp;
        if k > 3 {
            return None; // not a stored numeric of this scale
        }
        let q = div_pow10_small(last, k as u32);
        if q * POW10_I64[k as usize] != last {
            return None;
        }
        acc.checked_mul(POW10_I64[(4 - k) as usize])?.checked_add(q)
    }
}

/// [`decode_scaled_i64`] for the form a numeric(p, s) column stores on
/// disk: a 1-byte varlena header, the short numeric header and at most four
/// base-10,000 digits. None for any other form (the caller then takes the
/// general path, which decides). TPC-H reads most of its numerics through
/// here; without the slices and the header-form dispatch it costs about
/// half of the general path.
///
/// # Safety
/// `p` points to a varlena whose first byte says it is a plain 1-byte
/// header value (`h & 1 == 1 && h != 1`), readable for its whole length.
#[inline(always)]
pub unsafe fn decode_scaled_i64_short(p: *const u8, scale: u16) -> Option<i64> {
    // SAFETY: this function's contract: p is a plain numeric varlena with a 1-byte header, so the
    // payload bytes its header counts are readable.
    unsafe {
        let read = |at: usize| u16::from_le_bytes([*p.add(at), *p.add(at + 1)]);
        let len = ((*p >> 1) as usize).wrapping_sub(1); // payload bytes
        if !(2..=10).contains(&len) || len & 1 != 0 {
            return None;
        }
        let header = read(1);
        if header & SIGN_MASK != SHORT || (header & SHORT_DSCALE_MASK) >> SHORT_DSCALE_SHIFT != scale {
            return None;
        }
        let n = (len - 2) / 2;
        if n == 0 {
            return Some(0);
        }
        // The digits, each checked to be one (0..=9999) without a branch each.
        let mut acc: i64 = 0;
        let mut bad = false;
        for k in 0..n - 1 {
            let d = read(3 + 2 * k);
            bad |= d > 9999;
            acc = acc * 10_000 + d as i64;
        }
        let last = read(3 + 2 * (n - 1));
        if bad || last > 9999 {
            return None;
        }
        let w = (header & SHORT_WEIGHT_MASK) as i32;
        let weight = if header & SHORT_WEIGHT_SIGN != 0 { w - (SHORT_WEIGHT_MASK as i32 + 1) } else { w };
        let magnitude = scaled_magnitude(acc, last as i64, weight, n, scale)?;
        Some(if header & SHORT_SIGN != 0 { -magnitude } else { magnitude })
    }
}

/// `d / 10^k` for a base-10,000 digit `d` (0..=9999) and k in 1..=3, by a
/// multiplication and a shift (exact over that range; tested exhaustively).
#[inline]
fn div_pow10_small(d: i64, k: u32) -> i64 {
    const MAGIC: [(i64, u32); 4] = [(1, 0), (52429, 19), (5243, 19), (8389, 23)];
    let (m, s) = MAGIC[k as usize];
    (d * m) >> s
}

/// `10^n` for n <= 18.
const POW10_I64: [i64; 19] = {
    let mut t = [1i64; 19];
    let mut i = 1;
    while i < 19 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// A complete numeric varlena (4-byte header), as PostgreSQL builds one in memory.
pub fn encode(value: i128, dscale: u16) -> Vec<u8> {
    crate::batch::varlena::make_4b(&encode_payload(value, dscale))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits(payload: &[u8], header: usize) -> Vec<i16> {
        payload[header..].chunks_exact(2).map(|d| i16::from_le_bytes([d[0], d[1]])).collect()
    }

    #[test]
    fn compare_orders_like_cmp_numerics() {
        use std::cmp::Ordering::*;
        let p = |v: i128, d: u16| encode_payload(v, d);
        let s = encode_special;
        // Scale does not matter, value does; the sign of zero does not exist.
        assert_eq!(compare(&p(10, 1), &p(100, 2)), Some(Equal));
        assert_eq!(compare(&p(0, 0), &p(0, 5)), Some(Equal));
        assert_eq!(compare(&p(-1, 3), &p(0, 0)), Some(Less));
        assert_eq!(compare(&p(12_345, 2), &p(12_346, 2)), Some(Less));
        assert_eq!(compare(&p(-12_345, 2), &p(-12_346, 2)), Some(Greater));
        assert_eq!(compare(&p(10, 0), &p(99_999, 4)), Some(Greater));
        assert_eq!(compare(&p(1, 0), &p(99_999, 4)), Some(Less));
        assert_eq!(compare(&p(10i128.pow(30), 0), &p(10i128.pow(29) * 9, 0)), Some(Greater));
        assert_eq!(compare(&p(-10i128.pow(30), 0), &p(1, 10)), Some(Less));
        // NaN above +Infinity above finite above -Infinity.
        assert_eq!(compare(&s(Special::NaN), &s(Special::PosInfinity)), Some(Greater));
        assert_eq!(compare(&s(Special::NaN), &s(Special::NaN)), Some(Equal));
        assert_eq!(compare(&s(Special::PosInfinity), &p(10i128.pow(37), 0)), Some(Greater));
        assert_eq!(compare(&s(Special::NegInfinity), &p(-10i128.pow(37), 0)), Some(Less));
        assert_eq!(compare(&[1], &p(1, 0)), None);
    }

    #[test]
    fn layout_matches_make_result() {
        // 1: short header, weight 0, one digit.
        assert_eq!(encode(1, 0), vec![8 << 2, 0, 0, 0, 0x00, 0x80, 1, 0]);
        // 0 with scale 2: no digits, positive, weight 0, dscale kept.
        assert_eq!(encode_payload(0, 2), ((SHORT | (2 << SHORT_DSCALE_SHIFT)) as u16).to_le_bytes().to_vec());
        // 12345.678: digits 1 2345 6780, weight 1, dscale 3.
        let p = encode_payload(12_345_678, 3);
        assert_eq!(u16::from_le_bytes([p[0], p[1]]), SHORT | (3 << SHORT_DSCALE_SHIFT) | 1);
        assert_eq!(digits(&p, 2), vec![1, 2345, 6780]);
        // -0.0005 (dscale 4): weight -1, digit 5, negative.
        let p = encode_payload(-5, 4);
        assert_eq!(
            u16::from_le_bytes([p[0], p[1]]),
            SHORT | SHORT_SIGN | (4 << SHORT_DSCALE_SHIFT) | SHORT_WEIGHT_SIGN | 0x3F
        );
        assert_eq!(digits(&p, 2), vec![5]);
        // 10^8: trailing zero digits stripped: weight 2, digit 1.
        assert_eq!(digits(&encode_payload(100_000_000, 0), 2), vec![1]);
        // A display scale above 63 needs the long header.
        let p = encode_payload(15, 64);
        assert_eq!(u16::from_le_bytes([p[0], p[1]]), 64);
    }

    #[test]
    fn decode_scaled_i64_reads_values_of_their_own_scale_only() {
        for (v, s) in [(0i128, 2u16), (12345, 2), (-12345, 2), (1, 0), (-7, 0), (99999999999999, 2), (5, 6)] {
            let p = encode_payload(v, s);
            assert_eq!(decode_scaled_i64(&p, s), Some(v as i64), "{v} at {s}");
            assert_eq!(decode_scaled_i64(&p, s + 1), None, "another scale is refused");
        }
        // Long headers (large weight) and values past i64.
        let big = 10i128.pow(17) * 3;
        assert_eq!(decode_scaled_i64(&encode_payload(big, 0), 0), Some(big as i64));
        assert_eq!(decode_scaled_i64(&encode_payload(10i128.pow(19), 0), 0), None);
        assert_eq!(decode_scaled_i64(&encode_payload(-(10i128.pow(18)), 0), 0), Some(-(10i64.pow(18))));
        let p = encode_payload(123_456_789_012_345_678, 2); // five base-10,000 digits
        assert_eq!(decode_scaled_i64(&p, 2), None);
        assert_eq!(decode_scaled_i64(&encode_payload(-1, 18), 18), Some(-1));
        for s in [Special::NaN, Special::PosInfinity, Special::NegInfinity] {
            assert_eq!(decode_scaled_i64(&encode_special(s), 0), None);
        }
        assert_eq!(decode_scaled_i64(&[1], 0), None);
        // Every last-digit split: values whose last base-10,000 digit holds
        // 1, 2 or 3 decimals below the scale, around each power of ten.
        for s in 0..=18u16 {
            for v in [1i128, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10000, 123456789, 99999999999] {
                for v in [v, -v] {
                    let p = encode_payload(v, s);
                    assert_eq!(decode_scaled_i64(&p, s), i64::try_from(v).ok(), "{v} at {s}");
                }
            }
        }
    }

    #[test]
    fn short_form_decoding_agrees_with_the_general_path() {
        let mut values = vec![0i128, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10000, 12345, 123456789];
        values.extend([99_999_999_999_999, 999_999_999_999_999_999, 922_337_203_685_477_580, 10i128.pow(18)]);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push((x % 10u64.pow((x % 17) as u32 + 1)) as i128);
        }
        for s in 0..=18u16 {
            for &v in &values {
                for v in [v, -v] {
                    let payload = encode_payload(v, s);
                    if payload.len() > 126 {
                        continue;
                    }
                    let value = crate::batch::varlena::make_1b(&payload);
                    for scale in [s, s + 1] {
                        // SAFETY: a 1-byte header varlena built just above.
                        let fast = unsafe { decode_scaled_i64_short(value.as_ptr(), scale) };
                        let general = decode_scaled_i64(&payload, scale);
                        // The fast path may decline (None) only where the general path does.
                        assert!(
                            fast == general || (fast.is_none() && payload.len() > 10),
                            "{v} at {s}/{scale}"
                        );
                    }
                }
            }
        }
        // Not a digit: refused by both.
        let mut bad = (SHORT | 1).to_le_bytes().to_vec();
        bad.extend_from_slice(&10_000u16.to_le_bytes());
        let value = crate::batch::varlena::make_1b(&bad);
        // SAFETY: value is a plain 1-byte-header varlena alive here.
        assert_eq!(unsafe { decode_scaled_i64_short(value.as_ptr(), 0) }, None);
        assert_eq!(decode_scaled_i64(&bad, 0), None);
        // NaN and the infinities (short header alone, special bits): refused.
        for sp in [Special::NaN, Special::PosInfinity, Special::NegInfinity] {
            let value = crate::batch::varlena::make_1b(&encode_special(sp));
            // SAFETY: as above.
            assert_eq!(unsafe { decode_scaled_i64_short(value.as_ptr(), 0) }, None);
        }
    }

    #[test]
    fn small_powers_of_ten_divide_exactly_by_multiplication() {
        for k in 1..=3u32 {
            for d in 0..10_000i64 {
                assert_eq!(div_pow10_small(d, k), d / 10i64.pow(k), "{d} / 10^{k}");
            }
        }
    }

    #[test]
    fn decode_inverts_encode() {
        for (v, s) in [
            (0i128, 0u16),
            (1, 0),
            (-1, 0),
            (12_345_678, 3),
            (-5, 4),
            (100_000_000, 0),
            (99_999_999_999_999_999, 2),
            (i128::MAX, 0),
            (i128::MIN + 1, 10),
            (7, 37),
            (15, 64),
            (123_456, 70),
        ] {
            assert_eq!(
                decode(&encode_payload(v, s)),
                Some(Decoded::Scaled { value: v, dscale: s }),
                "{v} scale {s}"
            );
        }
        assert_eq!(decode(&NAN.to_le_bytes()), Some(Decoded::NaN));
        assert_eq!(decode(&NINF.to_le_bytes()), Some(Decoded::NegInfinity));
        // 10^40 does not fit an i128 at scale 0.
        let mut wide = (SHORT | 10).to_le_bytes().to_vec();
        wide.extend_from_slice(&1i16.to_le_bytes());
        assert_eq!(decode(&wide), Some(Decoded::TooWide));
        // A digit of 10000 is not a numeric.
        let mut bad = SHORT.to_le_bytes().to_vec();
        bad.extend_from_slice(&10_000i16.to_le_bytes());
        assert_eq!(decode(&bad), None);
    }
}

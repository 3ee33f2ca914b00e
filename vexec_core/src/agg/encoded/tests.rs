//! Key encodings against the server's equality and order, and malformed input.

use super::*;
use crate::agg::{table_layout, GroupTable};
use crate::batch::PhysType;

const INT4: ElemType = ElemType { kind: KeyKind::Int, len: 4, align: 4 };
const TEXT: ElemType = ElemType { kind: KeyKind::Bytes, len: -1, align: 4 };
const NUMERIC: ElemType = ElemType { kind: KeyKind::Numeric, len: -1, align: 4 };
const FLOAT8: ElemType = ElemType { kind: KeyKind::Float8, len: 8, align: 8 };

/// An array's payload as array_in builds it: one dimension, elements
/// given as their stored bytes (None: NULL).
fn array(lbound: i32, elems: &[Option<Vec<u8>>], align: usize) -> Vec<u8> {
    let has_nulls = elems.iter().any(Option::is_none);
    let mut s = vec![0u8; 4]; // header, dropped at the end
    s.extend_from_slice(&1i32.to_le_bytes());
    s.extend_from_slice(&0i32.to_le_bytes()); // dataoffset, patched below
    s.extend_from_slice(&23u32.to_le_bytes());
    s.extend_from_slice(&(elems.len() as i32).to_le_bytes());
    s.extend_from_slice(&lbound.to_le_bytes());
    if has_nulls {
        let mut bits = vec![0u8; elems.len().div_ceil(8)];
        for (i, e) in elems.iter().enumerate() {
            if e.is_some() {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        s.extend_from_slice(&bits);
    }
    s.resize(align_to(s.len(), 8), 0);
    if has_nulls {
        let at = s.len() as i32;
        s[8..12].copy_from_slice(&at.to_le_bytes());
    }
    for e in elems.iter().flatten() {
        s.resize(align_to(s.len(), align), 0);
        s.extend_from_slice(e);
    }
    s.split_off(4)
}

fn int4(x: i32) -> Option<Vec<u8>> {
    Some(x.to_le_bytes().to_vec())
}

fn enc(
    payload: &[u8],
    f: fn(&[u8], ElemType, &mut Vec<u8>) -> Result<(), Malformed>,
    e: ElemType,
) -> Vec<u8> {
    let mut out = vec![];
    f(payload, e, &mut out).expect("a valid value");
    out
}

/// A numeric's payload in the short format: positive, weight 0, one
/// base-10000 digit, display scale `dscale` (1.0 and 1.00 differ only there).
fn numeric(digit: u16, dscale: u16) -> Vec<u8> {
    let mut p = (0x8000u16 | dscale << 7).to_le_bytes().to_vec();
    p.extend_from_slice(&digit.to_le_bytes());
    p
}

#[test]
fn arrays_equal_as_array_eq_says() {
    let a = enc(&array(1, &[int4(1), None, int4(-3)], 4), encode_array, INT4);
    let b = enc(&array(1, &[int4(1), None, int4(-3)], 4), encode_array, INT4);
    assert_eq!(a, b);
    // A NULL element differs from any value, the lower bound counts,
    // and so does the length.
    assert_ne!(a, enc(&array(1, &[int4(1), int4(0), int4(-3)], 4), encode_array, INT4));
    assert_ne!(a, enc(&array(0, &[int4(1), None, int4(-3)], 4), encode_array, INT4));
    assert_ne!(a, enc(&array(1, &[int4(1), None], 4), encode_array, INT4));
    // Empty arrays are all equal; not to an array of one element.
    let empty = {
        let mut s = vec![0u8; 12];
        s[8..12].copy_from_slice(&23u32.to_le_bytes());
        s
    };
    assert_eq!(enc(&empty, encode_array, INT4), vec![0]);
    assert_ne!(enc(&empty, encode_array, INT4), enc(&array(1, &[int4(0)], 4), encode_array, INT4));
    // Text elements: by bytes, short or long headers alike; no
    // concatenation ambiguity ({ab,c} vs {a,bc}).
    let t = |s: &[&str]| {
        let elems: Vec<_> = s.iter().map(|x| Some(varlena::make_4b(x.as_bytes()))).collect();
        enc(&array(1, &elems, 4), encode_array, TEXT)
    };
    assert_ne!(t(&["ab", "c"]), t(&["a", "bc"]));
    assert_eq!(t(&["x", ""]), t(&["x", ""]));
    let short = enc(&array(1, &[Some(varlena::make_1b(b"ab"))], 1), encode_array, TEXT);
    assert_eq!(short, t(&["ab"]));
    // Floats: -0 = 0, NaNs equal.
    let f = |x: f64| enc(&array(1, &[Some(x.to_le_bytes().to_vec())], 8), encode_array, FLOAT8);
    assert_eq!(f(0.0), f(-0.0));
    assert_eq!(f(f64::NAN), f(-f64::NAN));
    assert_ne!(f(1.0), f(2.0));
    // Numerics: by value whatever the display scale.
    let n =
        |d: u16, s: u16| enc(&array(1, &[Some(varlena::make_4b(&numeric(d, s)))], 4), encode_array, NUMERIC);
    assert_eq!(n(1, 1), n(1, 2));
    assert_ne!(n(1, 1), n(2, 1));
    // A truncated value is refused, never read past its end.
    let whole = array(1, &[int4(1), int4(2)], 4);
    let mut out = vec![];
    assert!(encode_array(&whole[..whole.len() - 2], INT4, &mut out).is_err());
}

/// A range payload as range_serialize builds it (type OID, bounds, flags).
fn range(flags: u8, bounds: &[Vec<u8>], align: usize) -> Vec<u8> {
    let mut s = vec![0u8; 4];
    s.extend_from_slice(&3904u32.to_le_bytes());
    for b in bounds {
        if b[0] & 1 == 0 {
            s.resize(align_to(s.len(), align), 0);
        }
        s.extend_from_slice(b);
    }
    s.push(flags);
    s.split_off(4)
}

#[test]
fn ranges_equal_as_range_eq_says() {
    let r = |flags: u8, b: &[i32]| {
        enc(
            &range(flags, &b.iter().map(|x| x.to_le_bytes().to_vec()).collect::<Vec<_>>(), 4),
            encode_range,
            INT4,
        )
    };
    let lb_inc = RANGE_LB_INC;
    assert_eq!(r(lb_inc, &[1, 5]), r(lb_inc, &[1, 5]));
    assert_ne!(r(lb_inc, &[1, 5]), r(lb_inc | RANGE_UB_INC, &[1, 5]));
    assert_ne!(r(lb_inc, &[1, 5]), r(lb_inc, &[1, 6]));
    // Empty ranges are equal whatever else their flags hold (0x80: a
    // GiST mark that range_eq does not read).
    assert_eq!(r(RANGE_EMPTY, &[]), r(RANGE_EMPTY | 0x80, &[]));
    // (,5) and [,5): an infinite bound is never inclusive.
    assert_eq!(r(RANGE_LB_INF, &[5]), r(RANGE_LB_INF | RANGE_LB_INC, &[5]));
    assert_ne!(r(RANGE_LB_INF, &[5]), r(RANGE_UB_INF | lb_inc, &[5]));
    // numrange bounds with short headers, by value: [1.0,2) = [1.00,2).
    let n = |d1: u16, s1: u16| {
        let b = vec![varlena::make_1b(&numeric(d1, s1)), varlena::make_1b(&numeric(2, 0))];
        enc(&range(lb_inc, &b, 4), encode_range, NUMERIC)
    };
    assert_eq!(n(1, 1), n(1, 2));
    assert_ne!(n(1, 1), n(2, 1));
}

/// A multirange payload as write_multirange_data builds it, from the
/// ranges' flags and stored bounds.
fn multirange(ranges: &[(u8, Vec<Vec<u8>>)], align: usize) -> Vec<u8> {
    let n = ranges.len();
    let mut s = vec![0u8; 4];
    s.extend_from_slice(&4451u32.to_le_bytes());
    s.extend_from_slice(&(n as u32).to_le_bytes());
    let items_at = s.len();
    s.resize(items_at + 4 * n.saturating_sub(1), 0);
    for (f, _) in ranges {
        s.push(*f);
    }
    s.resize(align_to(s.len(), align), 0);
    let begin = s.len();
    let mut prev = 0usize;
    for (i, (_, bounds)) in ranges.iter().enumerate() {
        if i > 0 {
            let at = s.len() - begin;
            let item = if i % 4 != 0 { (at - prev) as u32 } else { at as u32 | 0x8000_0000 };
            s[items_at + 4 * (i - 1)..items_at + 4 * i].copy_from_slice(&item.to_le_bytes());
            prev = at;
        }
        for b in bounds {
            if b[0] & 1 == 0 {
                s.resize(begin + align_to(s.len() - begin, align), 0);
            }
            s.extend_from_slice(b);
        }
        s.resize(begin + align_to(s.len() - begin, align), 0);
    }
    s.split_off(4)
}

#[test]
fn multiranges_equal_as_multirange_eq_says() {
    let m = |rs: &[(u8, &[i32])]| {
        let rs: Vec<(u8, Vec<Vec<u8>>)> =
            rs.iter().map(|(f, b)| (*f, b.iter().map(|x| x.to_le_bytes().to_vec()).collect())).collect();
        enc(&multirange(&rs, 4), encode_multirange, INT4)
    };
    let inc = RANGE_LB_INC;
    let a = m(&[(inc, &[1, 3]), (inc, &[5, 7])]);
    assert_eq!(a, m(&[(inc, &[1, 3]), (inc, &[5, 7])]));
    assert_ne!(a, m(&[(inc, &[1, 3])]));
    assert_ne!(a, m(&[(inc, &[1, 3]), (inc, &[5, 8])]));
    assert_ne!(a, m(&[(inc, &[1, 3]), (inc | RANGE_UB_INC, &[5, 7])]));
    // Empty multirange; infinite bounds never inclusive.
    assert_eq!(m(&[]), m(&[]));
    assert_ne!(m(&[]), m(&[(RANGE_LB_INF | RANGE_UB_INF, &[])]));
    assert_eq!(m(&[(RANGE_LB_INF, &[5])]), m(&[(RANGE_LB_INF | RANGE_LB_INC, &[5])]));
    // Nine ranges: items hold offsets at every fourth range.
    let many: Vec<(u8, Vec<i32>)> = (0..9).map(|i| (inc, vec![10 * i, 10 * i + 5])).collect();
    let many: Vec<(u8, &[i32])> = many.iter().map(|(f, b)| (*f, b.as_slice())).collect();
    let mut other = many.clone();
    let last = [80, 86];
    other[8] = (inc, &last);
    assert_eq!(m(&many), m(&many));
    assert_ne!(m(&many), m(&other));
    // numeric bounds with short headers, by value: {[1.0,2)} = {[1.00,2)}.
    let n = |d: u16, sc: u16| {
        let b = vec![varlena::make_1b(&numeric(d, sc)), varlena::make_1b(&numeric(2, 0))];
        enc(&multirange(&[(inc, b.clone()), (inc, b)], 4), encode_multirange, NUMERIC)
    };
    assert_eq!(n(1, 1), n(1, 2));
    assert_ne!(n(1, 1), n(3, 1));
    // Truncated or inconsistent values are errors, never read past.
    let whole = multirange(&[(inc, vec![int4(1).unwrap(), int4(2).unwrap()])], 4);
    assert!(encode_multirange(&whole[..whole.len() - 2], INT4, &mut vec![]).is_err());
    let mut lying = whole.clone();
    lying[4..8].copy_from_slice(&1000u32.to_le_bytes());
    assert!(encode_multirange(&lying, INT4, &mut vec![]).is_err());
}

/// A jsonb value, built into bytes as convertJsonbValue lays them out.
enum J {
    Null,
    Bool(bool),
    Str(&'static str),
    Num(u16, u16),
    Arr(Vec<J>),
    Obj(Vec<(&'static str, J)>),
}

/// The jsonb payload (after the varlena header) of `j`; a scalar is
/// stored as the raw-scalar array, as jsonb_in stores it.
fn jsonb(j: &J) -> Vec<u8> {
    const ISSTRING: u32 = 0;
    const ISNUMERIC: u32 = 0x1000_0000;
    const ISFALSE: u32 = 0x2000_0000;
    const ISTRUE: u32 = 0x3000_0000;
    const ISNULL: u32 = 0x4000_0000;
    const ISCONTAINER: u32 = 0x5000_0000;
    fn pad(buf: &mut Vec<u8>) -> usize {
        let before = buf.len();
        buf.resize(align_to(before, 4), 0);
        buf.len() - before
    }
    // Writes the value's data; returns its JEntry (type | length).
    fn value(buf: &mut Vec<u8>, j: &J) -> u32 {
        match j {
            J::Null => ISNULL,
            J::Bool(false) => ISFALSE,
            J::Bool(true) => ISTRUE,
            J::Str(s) => {
                buf.extend_from_slice(s.as_bytes());
                ISSTRING | s.len() as u32
            }
            J::Num(d, sc) => {
                let padlen = pad(buf);
                let v = varlena::make_4b(&numeric(*d, *sc));
                buf.extend_from_slice(&v);
                ISNUMERIC | (padlen + v.len()) as u32
            }
            J::Arr(_) | J::Obj(_) => {
                let padlen = pad(buf);
                let len = container(buf, j, false);
                ISCONTAINER | (padlen + len) as u32
            }
        }
    }
    // Writes a container; returns its length.
    fn container(buf: &mut Vec<u8>, j: &J, raw_scalar: bool) -> usize {
        let start = buf.len();
        let children: Vec<&J>;
        let keys: Vec<J>;
        let header = match j {
            J::Arr(elems) => {
                children = elems.iter().collect();
                elems.len() as u32 | JB_FARRAY | if raw_scalar { JB_FSCALAR } else { 0 }
            }
            J::Obj(pairs) => {
                // Keys sorted by length, then bytes (lengthCompareJsonbString).
                let mut pairs: Vec<&(&str, J)> = pairs.iter().collect();
                pairs.sort_by(|a, b| (a.0.len(), a.0).cmp(&(b.0.len(), b.0)));
                keys = pairs.iter().map(|p| J::Str(p.0)).collect();
                children = keys.iter().chain(pairs.iter().map(|p| &p.1)).collect();
                pairs.len() as u32 | JB_FOBJECT
            }
            _ => unreachable!(),
        };
        buf.extend_from_slice(&header.to_le_bytes());
        let entries_at = buf.len();
        buf.resize(entries_at + 4 * children.len(), 0);
        let mut total = 0u32;
        for (i, c) in children.iter().enumerate() {
            let mut meta = value(buf, c);
            total += meta & JENTRY_OFFLENMASK;
            if i % 32 == 0 {
                meta = (meta & JENTRY_TYPEMASK) | total | JENTRY_HAS_OFF;
            }
            buf[entries_at + 4 * i..entries_at + 4 * i + 4].copy_from_slice(&meta.to_le_bytes());
        }
        buf.len() - start
    }
    let mut buf = vec![0u8; 4]; // the varlena header, dropped below
    match j {
        J::Arr(_) | J::Obj(_) => container(&mut buf, j, false),
        scalar => {
            let wrapped = J::Arr(vec![match scalar {
                J::Null => J::Null,
                J::Bool(b) => J::Bool(*b),
                J::Str(s) => J::Str(s),
                J::Num(d, sc) => J::Num(*d, *sc),
                _ => unreachable!(),
            }]);
            container(&mut buf, &wrapped, true)
        }
    };
    buf.split_off(4)
}

fn jenc(j: &J) -> Vec<u8> {
    let mut out = vec![];
    encode_jsonb(&jsonb(j), &mut out).expect("a valid jsonb");
    out
}

#[test]
fn jsonb_equal_as_jsonb_eq_says() {
    use J::*;
    let obj = |a: u16| Obj(vec![("b", Num(a, 1)), ("a", Arr(vec![Str("x"), Null, Bool(true)]))]);
    // Objects by their pairs, whatever order they were written in.
    assert_eq!(jenc(&obj(1)), jenc(&obj(1)));
    assert_eq!(
        jenc(&Obj(vec![("a", Num(1, 0)), ("bb", Null)])),
        jenc(&Obj(vec![("bb", Null), ("a", Num(1, 0))]))
    );
    assert_ne!(jenc(&obj(1)), jenc(&obj(2)));
    assert_ne!(jenc(&Obj(vec![("a", Null)])), jenc(&Obj(vec![("b", Null)])));
    // Numbers by value: 1.0 = 1.00, inside containers too.
    assert_eq!(jenc(&Num(1, 1)), jenc(&Num(1, 2)));
    assert_eq!(jenc(&obj(1)), {
        let o = Obj(vec![("b", Num(1, 3)), ("a", Arr(vec![Str("x"), Null, Bool(true)]))]);
        jenc(&o)
    });
    // A raw scalar is not a one-element array; [] is not {}; null is
    // not false; no concatenation ambiguity between strings.
    assert_ne!(jenc(&Num(1, 0)), jenc(&Arr(vec![Num(1, 0)])));
    assert_ne!(jenc(&Arr(vec![])), jenc(&Obj(vec![])));
    assert_ne!(jenc(&Null), jenc(&Bool(false)));
    assert_ne!(jenc(&Arr(vec![Str("ab"), Str("c")])), jenc(&Arr(vec![Str("a"), Str("bc")])));
    assert_ne!(jenc(&Arr(vec![Arr(vec![]), Null])), jenc(&Arr(vec![Arr(vec![Null])])));
    // 70 children: entries past the 32nd hold end offsets.
    let long = |last: &'static str| {
        Arr((0..70).map(|i| if i == 69 { Str(last) } else { Num(i as u16, 0) }).collect())
    };
    assert_eq!(jenc(&long("z")), jenc(&long("z")));
    assert_ne!(jenc(&long("z")), jenc(&long("y")));
    // 40 pairs: keys and values cross the stride (values are children 40..80).
    let wide = |last: u16| {
        Obj((0..40)
            .map(|i| {
                let key: &'static str = Box::leak(format!("k{i:02}").into_boxed_str());
                (key, Num(if i == 39 { last } else { 1 }, 0))
            })
            .collect())
    };
    assert_eq!(jenc(&wide(1)), jenc(&wide(1)));
    assert_ne!(jenc(&wide(1)), jenc(&wide(2)));
    // Deep nesting is walked without recursion: 100,000 levels encode on
    // a 64 kB stack (the test's own builder recurses, on a large one).
    let bytes = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(|| {
            let mut deep = Null;
            for _ in 0..100_000 {
                deep = Arr(vec![deep]);
            }
            jsonb(&deep)
        })
        .unwrap()
        .join()
        .unwrap();
    let encoded = std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(move || {
            let mut out = vec![];
            encode_jsonb(&bytes, &mut out).map(|_| out.len())
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(encoded, Ok(100_000 * 5 + 1));
    // Truncated and inconsistent values are errors, never read past.
    let whole = jsonb(&obj(1));
    for cut in [1, 5, 9, whole.len() / 2] {
        assert!(encode_jsonb(&whole[..whole.len() - cut], &mut vec![]).is_err(), "cut {cut}");
    }
    let mut lying = whole.clone();
    lying[0..4].copy_from_slice(&(0x2000_0000u32 | 0x0FFF_FFFF).to_le_bytes());
    assert!(encode_jsonb(&lying, &mut vec![]).is_err());
}

#[test]
fn groups_arrays_by_their_encoding_and_outputs_the_first_value() {
    let values = [
        varlena::make_4b(&array(1, &[int4(1), int4(2)], 4)),
        varlena::make_4b(&array(1, &[int4(2), int4(1)], 4)),
        varlena::make_4b(&array(1, &[int4(1), int4(2)], 4)),
    ];
    let mut col = Column::new(PhysType::Datum, 4);
    for (i, v) in values.iter().enumerate() {
        col.values.set_datum(i, v.as_ptr() as usize);
    }
    col.validity.set(3, false);
    let (kinds, output) = table_layout(&[KeyKind::Encoded]);
    assert_eq!(kinds, vec![KeyKind::Bytes, KeyKind::Carried]);
    let rows: Vec<RowIdx> = (0..4).collect();
    let mut b = EncodedKeyColumn::new(Encoding::Array(INT4));
    // SAFETY: col points to the test's array varlenas, which outlive the call.
    let keys = unsafe { b.build(&col, &rows) }.unwrap();
    let mut t = GroupTable::new(&kinds);
    let mut out = vec![];
    // SAFETY: keys and col point to plain varlenas that outlive the call.
    unsafe { t.assign(&[&keys, &col], &rows, &mut out) };
    assert_eq!(out, vec![0, 1, 0, 2]);
    // SAFETY: values[1] is a plain varlena.
    assert_eq!(t.bytes_key(output[0], 1), Some(unsafe { varlena::bytes(values[1].as_ptr()) }));
    assert_eq!(t.bytes_key(output[0], 2), None);
}

/// A composite value's payload as heap_form_tuple builds it: `natts`
/// attributes, `fields` the stored ones by position (None: NULL), each
/// with its typalign and whether it is a varlena (a short-header
/// varlena is not aligned).
fn record(natts: usize, fields: &[(Option<Vec<u8>>, usize)]) -> Vec<u8> {
    let has_nulls = fields.iter().any(|(v, _)| v.is_none());
    let mut s = vec![0u8; 12]; // length word, typmod, type OID
    s.extend_from_slice(&[0u8; 6]); // t_ctid
    s.extend_from_slice(&(natts as u16).to_le_bytes());
    s.extend_from_slice(&u16::from(has_nulls).to_le_bytes());
    s.push(0); // t_hoff, patched below
    if has_nulls {
        let mut bits = vec![0u8; natts.div_ceil(8)];
        for (i, (v, _)) in fields.iter().enumerate() {
            if v.is_some() {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        s.extend_from_slice(&bits);
    }
    s.resize(align_to(s.len(), 8), 0);
    s[TUP_HOFF] = s.len() as u8;
    for (v, align) in fields {
        if let Some(v) = v {
            let short = v[0] & 1 == 1 && v[0] != 1;
            if !short {
                s.resize(align_to(s.len(), *align), 0);
            }
            s.extend_from_slice(v);
        }
    }
    s.split_off(4)
}

fn fields(f: &[RecordField]) -> std::sync::Arc<[RecordField]> {
    f.iter().copied().collect()
}

#[test]
fn records_equal_as_record_eq_says() {
    use RecordField::*;
    let int_text = fields(&[Kept(INT4), Kept(TEXT)]);
    let e = |p: &[u8], f: &[RecordField]| {
        let mut out = vec![];
        encode_record(p, f, &mut out).expect("a valid value");
        out
    };
    let it = |i: i32, t: Option<&str>, short: bool| {
        let t =
            t.map(|t| if short { varlena::make_1b(t.as_bytes()) } else { varlena::make_4b(t.as_bytes()) });
        record(2, &[(int4(i), 4), (t, 4)])
    };
    // A text field with a 1-byte or a 4-byte header: the same value.
    assert_eq!(e(&it(1, Some("ab"), true), &int_text), e(&it(1, Some("ab"), false), &int_text));
    assert_ne!(e(&it(1, Some("ab"), true), &int_text), e(&it(2, Some("ab"), true), &int_text));
    assert_ne!(e(&it(1, Some("ab"), true), &int_text), e(&it(1, Some("abc"), true), &int_text));
    // NULL fields are equal to each other, and to attributes the tuple
    // does not have (added to the type after it was written), and differ
    // from an empty string.
    let null_text = e(&it(1, None, true), &int_text);
    assert_eq!(null_text, e(&record(1, &[(int4(1), 4)]), &int_text));
    assert_ne!(null_text, e(&it(1, Some(""), true), &int_text));
    // No concatenation ambiguity between fields.
    let two_texts = fields(&[Kept(TEXT), Kept(TEXT)]);
    let tt = |a: &str, b: &str| {
        record(2, &[(Some(varlena::make_1b(a.as_bytes())), 4), (Some(varlena::make_1b(b.as_bytes())), 4)])
    };
    assert_ne!(e(&tt("ab", "c"), &two_texts), e(&tt("a", "bc"), &two_texts));
    // A dropped attribute's bytes are stepped over, whatever they hold.
    let with_dropped = fields(&[Kept(INT4), RecordField::dropped(-1, 4).unwrap(), Kept(FLOAT8)]);
    let d = |dropped: Option<&str>, x: f64| {
        let dropped = dropped.map(|t| varlena::make_4b(t.as_bytes()));
        record(3, &[(int4(7), 4), (dropped, 4), (Some(x.to_le_bytes().to_vec()), 8)])
    };
    assert_eq!(e(&d(Some("old bytes"), 1.5), &with_dropped), e(&d(None, 1.5), &with_dropped));
    // Fields compare by their type's equality: -0 = 0, 1.0 = 1.00.
    assert_eq!(e(&d(None, 0.0), &with_dropped), e(&d(None, -0.0), &with_dropped));
    assert_ne!(e(&d(None, 1.0), &with_dropped), e(&d(None, 2.0), &with_dropped));
    let num = fields(&[Kept(NUMERIC)]);
    let n = |dscale| record(1, &[(Some(varlena::make_1b(&numeric(1, dscale))), 4)]);
    assert_eq!(e(&n(1), &num), e(&n(2), &num));
    // Truncated values and headers that point past the value are errors.
    let whole = it(1, Some("abcdef"), false);
    for cut in [1, 4, whole.len() - 10] {
        assert!(encode_record(&whole[..whole.len() - cut], &int_text, &mut vec![]).is_err(), "cut {cut}");
    }
    let mut lying = whole.clone();
    lying[TUP_HOFF - 4] = 200;
    assert!(encode_record(&lying, &int_text, &mut vec![]).is_err());
    let mut lying = whole.clone();
    lying[TUP_HOFF - 4] = 4;
    assert!(encode_record(&lying, &int_text, &mut vec![]).is_err());
    // A compressed text field is left to the host to decompress.
    let mut compressed = whole;
    let at = compressed.len() - 10;
    compressed[at] |= 0x02;
    assert_eq!(encode_record(&compressed, &int_text, &mut vec![]), Err(Malformed::TOASTED_FIELD));
}

#[test]
fn groups_records_by_their_encoding() {
    use RecordField::*;
    let f = fields(&[Kept(INT4), Kept(TEXT)]);
    let values = [
        varlena::make_4b(&record(2, &[(int4(1), 4), (Some(varlena::make_1b(b"x")), 4)])),
        varlena::make_4b(&record(2, &[(int4(1), 4), (None, 4)])),
        varlena::make_4b(&record(2, &[(int4(1), 4), (Some(varlena::make_4b(b"x")), 4)])),
        varlena::make_4b(&record(1, &[(int4(1), 4)])),
    ];
    let mut col = Column::new(PhysType::Datum, 4);
    for (i, v) in values.iter().enumerate() {
        col.values.set_datum(i, v.as_ptr() as usize);
    }
    let (kinds, _) = table_layout(&[KeyKind::Encoded]);
    let rows: Vec<RowIdx> = (0..4).collect();
    let mut b = EncodedKeyColumn::new(Encoding::Record(f));
    // SAFETY: col points to the test's record varlenas, which outlive the call.
    let keys = unsafe { b.build(&col, &rows) }.unwrap();
    let mut t = GroupTable::new(&kinds);
    let mut out = vec![];
    // SAFETY: keys and col point to plain varlenas that outlive the call.
    unsafe { t.assign(&[&keys, &col], &rows, &mut out) };
    assert_eq!(out, vec![0, 1, 0, 1]);
}

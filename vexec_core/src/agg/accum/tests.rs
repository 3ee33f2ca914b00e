//! Accumulators against PostgreSQL's transition rules.

use super::*;
use crate::agg::groups::GroupTable;
use crate::batch::PhysType;
use crate::batch::{varlena, Values};
use crate::numeric;

fn column<T: Copy>(t: PhysType, v: &[Option<T>], to_datum: impl Fn(T) -> usize) -> Column {
    let mut c = Column::new(t, v.len());
    for (i, x) in v.iter().enumerate() {
        match x {
            Some(x) => c.values.set_datum(i, to_datum(*x)),
            None => c.validity.set(i, false),
        }
    }
    c
}

fn i32s(v: &[Option<i32>]) -> Column {
    column(PhysType::I32, v, |x| x as i64 as usize)
}

fn f64s(v: &[Option<f64>]) -> Column {
    column(PhysType::F64, v, |x| x.to_bits() as usize)
}

/// Run one aggregate over a batch whose rows go to `groups`.
fn run(t: Transition, arg: Option<&Column>, groups: &[u32]) -> (Accumulator, Result<(), AggError>) {
    let mut a = Accumulator::new(t);
    a.ensure_groups(*groups.iter().max().unwrap_or(&0) as usize + 1);
    let rows: Vec<RowIdx> = (0..groups.len() as RowIdx).collect();
    // SAFETY: the test's columns hold by-value integers or point to plain test varlenas that
    // outlive the call.
    let r = unsafe { a.update(groups, &rows, arg) };
    (a, r)
}

/// Aggregate `arg` in two halves (rows alternating), serialize each
/// half's groups and combine them; the combined accumulator.
fn split_and_combine(t: Transition, arg: Option<&Column>, groups: &[u32]) -> Accumulator {
    let ngroups = *groups.iter().max().unwrap() as usize + 1;
    let mut parts = [Accumulator::new(t), Accumulator::new(t)];
    for (k, part) in parts.iter_mut().enumerate() {
        part.ensure_groups(ngroups);
        let rows: Vec<RowIdx> = (0..groups.len() as RowIdx).filter(|r| *r as usize % 2 == k).collect();
        let gs: Vec<u32> = rows.iter().map(|&r| groups[r as usize]).collect();
        // SAFETY: the test's columns hold by-value integers or point to plain test varlenas that
        // outlive the call.
        unsafe { part.update(&gs, &rows, arg) }.unwrap();
    }
    // Every part's state of every group, as the rows a Gather brings.
    let mut store: Vec<Vec<u8>> = Vec::new();
    let mut state_groups = Vec::new();
    let mut buf = Vec::new();
    for part in &parts {
        for g in 0..ngroups {
            part.serialize(g, &mut buf);
            store.push(varlena::make_4b(&buf));
            state_groups.push(g as u32);
        }
    }
    let mut states = Column::new(PhysType::Datum, store.len());
    store.iter().enumerate().for_each(|(i, b)| states.values.set_datum(i, b.as_ptr() as usize));
    let mut fin = Accumulator::new(t);
    fin.ensure_groups(ngroups);
    let rows: Vec<RowIdx> = (0..store.len() as RowIdx).collect();
    // SAFETY: the states column points to the serialized states in store, which outlives the call.
    unsafe { fin.combine(&state_groups, &rows, &states) }.unwrap();
    fin
}

#[test]
fn combined_partial_states_give_the_serial_results() {
    let groups: Vec<u32> = (0..40).map(|i| (i % 3) as u32).chain([3]).collect();
    let ints: Vec<Option<i32>> =
        (0..41).map(|i| if i % 7 == 0 { None } else { Some((i * 7919) % 2001 - 1000) }).collect();
    let ints = i32s(&ints);
    let floats = f64s(&(0..41).map(|i| (i % 5 != 0).then_some((i % 9) as f64 - 4.5)).collect::<Vec<_>>());
    let store: Vec<Vec<u8>> =
        (0..41).map(|i| numeric::encode(i as i128 * 37 - 700, (i % 3) as u16)).collect();
    let mut nums = Column::new(PhysType::Datum, 41);
    store.iter().enumerate().for_each(|(i, v)| nums.values.set_datum(i, v.as_ptr() as usize));
    nums.validity.set(40, false);
    let texts_store: Vec<Vec<u8>> =
        (0..41).map(|i| varlena::make_4b(format!("w{}", i * 13 % 17).as_bytes())).collect();
    let mut texts = Column::new(PhysType::Datum, 41);
    texts_store.iter().enumerate().for_each(|(i, v)| texts.values.set_datum(i, v.as_ptr() as usize));
    let cases: Vec<(Transition, Option<&Column>)> = vec![
        (Transition::CountRows, None),
        (Transition::CountValues, Some(&ints)),
        (Transition::SumInt, Some(&ints)),
        (Transition::SumBigInt, Some(&ints)),
        (Transition::AvgInt, Some(&ints)),
        (Transition::MinMaxInt { max: false }, Some(&ints)),
        (Transition::MinMaxInt { max: true }, Some(&ints)),
        (Transition::SumFloat8, Some(&floats)),
        (Transition::MinMaxFloat { max: true }, Some(&floats)),
        (Transition::SumNumeric, Some(&nums)),
        (Transition::AvgNumeric, Some(&nums)),
        (Transition::MinMaxNumeric { max: false }, Some(&nums)),
        (Transition::MinMaxBytes { max: true }, Some(&texts)),
        (Transition::MinMaxBytes { max: false }, Some(&texts)),
    ];
    for (t, arg) in cases {
        let (serial, r) = run(t, arg, &groups);
        r.unwrap();
        let combined = split_and_combine(t, arg, &groups);
        for g in 0..4 {
            assert_eq!(combined.result(g), serial.result(g), "{t:?} group {g}");
        }
    }
    // Moments combine as float8_combine does: equal up to rounding.
    let t = Transition::Moments { fin: MomentsFinal::VarSamp };
    let (serial, _) = run(t, Some(&floats), &groups);
    let combined = split_and_combine(t, Some(&floats), &groups);
    for g in 0..3 {
        let (AggResult::Float8(a), AggResult::Float8(b)) = (serial.result(g), combined.result(g)) else {
            panic!("variance of group {g}")
        };
        assert!((a - b).abs() < 1e-9 * a.abs().max(1.0), "{a} vs {b}");
    }
    // A state that does not read back is reported, not misread.
    let mut a = Accumulator::new(Transition::SumInt);
    a.ensure_groups(1);
    let bad = varlena::make_4b(&[1, 2, 3]);
    let mut c = Column::new(PhysType::Datum, 1);
    c.values.set_datum(0, bad.as_ptr() as usize);
    // SAFETY: c points to a plain varlena in the test's vector.
    assert_eq!(unsafe { a.combine(&[0], &[0], &c) }, Err(AggError::InvalidState { row: 0 }));
}

#[test]
fn one_group_batches_sum_like_row_by_row() {
    let vals: Vec<Option<i32>> = (0..3000)
        .map(|i| match i % 97 {
            0 => None,
            1 => Some(i32::MAX),
            2 => Some(i32::MIN),
            _ => Some(i * 7919 % 100_000 - 50_000),
        })
        .collect();
    let full = i32s(&vals[..1024].iter().map(|v| v.or(Some(3))).collect::<Vec<_>>());
    for col in [i32s(&vals), full] {
        let len = col.len();
        let all: Vec<RowIdx> = (0..len as RowIdx).collect();
        let some: Vec<RowIdx> = (0..len as RowIdx).filter(|r| r % 3 != 1).collect();
        for t in [Transition::SumInt, Transition::SumBigInt, Transition::AvgInt, Transition::CountValues] {
            for rows in [&all, &some] {
                // One group: the batch path. Row by row: one row per call.
                let mut fast = Accumulator::new(t);
                fast.ensure_groups(1);
                // SAFETY: the test's columns hold by-value integers or point to plain test varlenas
                // that outlive the call.
                unsafe { fast.update(&vec![0; rows.len()], rows, Some(&col)) }.unwrap();
                let mut slow = Accumulator::new(t);
                slow.ensure_groups(2);
                for &r in rows.iter() {
                    // Two groups per call keep it off the one-group path.
                    // SAFETY: the test's columns hold by-value integers or point to plain test
                    // varlenas that outlive the call.
                    unsafe { slow.update(&[0, 1], &[r, r], Some(&col)) }.unwrap();
                }
                assert_eq!(fast.result(0), slow.result(0), "{t:?} over {} of {len} rows", rows.len());
            }
        }
    }
}

#[test]
fn shared_states_are_postgres_shared_ones() {
    use Transition::*;
    assert!(SumNumeric.shares_state(AvgNumeric) && AvgInt.shares_state(SumBigInt));
    assert!(Moments { fin: MomentsFinal::Avg }.shares_state(Moments { fin: MomentsFinal::StddevSamp }));
    assert!(CountValues.shares_state(CountValues));
    assert!(!SumInt.shares_state(AvgInt) && !SumFloat8.shares_state(Moments { fin: MomentsFinal::Avg }));
    // States kept elsewhere or of values: never shared.
    assert!(!(Fmgr { raises: false }).shares_state(Fmgr { raises: false }));
    assert!(!CountDistinct(KeyKind::Int).shares_state(CountDistinct(KeyKind::Int)));
    // The shared state gives each aggregate its own result.
    let mut c = Column::new(PhysType::I64, 3);
    for (i, v) in [4i64, 5, 7].iter().enumerate() {
        c.values.set_datum(i, *v as usize);
    }
    let mut a = Accumulator::new(SumBigInt);
    a.ensure_groups(1);
    // SAFETY: the test's columns hold by-value integers or point to plain test varlenas that
    // outlive the call.
    unsafe { a.update(&[0, 0, 0], &[0, 1, 2], Some(&c)) }.unwrap();
    assert_eq!(a.result_as(0, SumBigInt), AggResult::Numeric(16));
    assert_eq!(a.result_as(0, AvgInt), AggResult::NumericAvg { sum: 16, count: 3 });
}

#[test]
fn transition_codes_round_trip() {
    let mut seen = std::collections::HashSet::new();
    for code in -1..80 {
        if let Some(t) = Transition::from_code(code) {
            assert_eq!(t.code(), code);
            assert!(seen.insert(t.code()));
        }
    }
    // (7 plain, 2 numeric sums, 8 extremes, 5 moments, 12 count(DISTINCT)
    // kinds, 2 fmgr, 3 DISTINCT sums)
    assert_eq!(seen.len(), 7 + 2 + 8 + 5 + 12 + 2 + 3);
    // Every key kind's count(DISTINCT) comes back from its code.
    for k in (0..).map_while(KeyKind::from_code) {
        let t = Transition::CountDistinct(k);
        assert_eq!(Transition::from_code(t.code()), Some(t));
    }
}

#[test]
fn numeric_sums_are_exact_at_the_largest_scale_with_specials_and_wide_values() {
    use crate::numeric::{encode, encode_special, Special};
    let big = 9 * 10i128.pow(37);
    let store: Vec<Vec<u8>> = vec![
        encode(15, 1),
        encode(225, 2),
        crate::batch::varlena::make_4b(&encode_special(Special::NaN)),
        encode(1, 0),
        crate::batch::varlena::make_4b(&encode_special(Special::PosInfinity)),
        encode(3, 0),
        crate::batch::varlena::make_4b(&encode_special(Special::PosInfinity)),
        crate::batch::varlena::make_4b(&encode_special(Special::NegInfinity)),
        encode(big, 0),
        encode(big, 0),
        encode(-5, 3),
    ];
    let mut c = Column::new(PhysType::Datum, store.len() + 1);
    for (i, v) in store.iter().enumerate() {
        c.values.set_datum(i, v.as_ptr() as usize);
    }
    c.validity.set(store.len(), false);
    let groups = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 0];
    let (a, r) = run(Transition::SumNumeric, Some(&c), &groups);
    assert_eq!(r, Ok(()));
    // 1.5 + 2.25 - 0.005 = 3.745 at scale 3 (the NULL does not count).
    assert_eq!(
        a.result(0),
        AggResult::NumericSum { value: 3745, dscale: 3, wide: &[], count: 3, avg: false }
    );
    assert_eq!(a.result(1), AggResult::NumericSpecial(Special::NaN));
    assert_eq!(a.result(2), AggResult::NumericSpecial(Special::PosInfinity));
    assert_eq!(a.result(3), AggResult::NumericSpecial(Special::NaN));
    // The second 9e37 does not fit the i128 sum: it is kept aside.
    let AggResult::NumericSum { value, wide, count, .. } = a.result(4) else { panic!("a sum") };
    assert_eq!((value, wide.len(), count), (big, 1, 2));
    let mut a = Accumulator::new(Transition::AvgNumeric);
    a.ensure_groups(2);
    assert_eq!(a.result(1), AggResult::Null);
    // Bytes that are not a numeric are an error, not a guess.
    let junk = crate::batch::varlena::make_4b(&[0x01]);
    let mut c = Column::new(PhysType::Datum, 1);
    c.values.set_datum(0, junk.as_ptr() as usize);
    assert_eq!(run(Transition::SumNumeric, Some(&c), &[0]).1, Err(AggError::InvalidNumeric { row: 0 }));
}

/// An accumulator of transition `t` fed `scaled` (a scaled numeric
/// column at scale 2) into `groups`, one row each.
fn scaled_run(t: Transition, scaled: &Column, groups: &[u32]) -> Accumulator {
    let mut b = Accumulator::new(t);
    b.set_arg_scale(2);
    b.ensure_groups(*groups.iter().max().unwrap() as usize + 1);
    let rows: Vec<RowIdx> = (0..groups.len() as RowIdx).collect();
    // SAFETY: scaled holds by-value integers.
    unsafe { b.update(groups, &rows, Some(scaled)) }.unwrap();
    b
}

/// `xs` at scale 2 as numeric Datums (with their storage) and as a
/// scaled column of type `phys`, row `null` NULL in both.
fn numeric_and_scaled(xs: &[i128], phys: PhysType, null: Option<usize>) -> (Vec<Vec<u8>>, Column, Column) {
    let store: Vec<Vec<u8>> = xs.iter().map(|&x| numeric::encode(x, 2)).collect();
    let mut datums = Column::new(PhysType::Datum, xs.len());
    let mut scaled = Column::new(phys, xs.len());
    for (i, (v, &x)) in store.iter().zip(xs).enumerate() {
        datums.values.set_datum(i, v.as_ptr() as usize);
        match &mut scaled.values {
            Values::I128(sv) => sv[i] = x,
            sv => sv.set_datum(i, x as i64 as usize),
        }
    }
    if let Some(r) = null {
        datums.validity.set(r, false);
        scaled.validity.set(r, false);
    }
    (store, datums, scaled)
}

/// sum and avg of the numerics `datums` and of their scaled integers
/// `scaled` give equal results in every group.
fn assert_sums_agree(datums: &Column, scaled: &Column, groups: &[u32]) {
    for t in [Transition::SumNumeric, Transition::AvgNumeric] {
        let (a, r) = run(t, Some(datums), groups);
        r.unwrap();
        let b = scaled_run(t, scaled, groups);
        for g in 0..=*groups.iter().max().unwrap() as usize {
            assert_eq!(a.result(g), b.result(g), "{t:?} group {g}");
        }
    }
}

#[test]
fn numeric_sums_of_scaled_integers_equal_sums_of_their_numerics() {
    let xs = [12345, -5, 0, i64::MAX as i128, i64::MAX as i128];
    let (_store, datums, scaled) = numeric_and_scaled(&xs, PhysType::I64, None);
    let groups = [0u32, 1, 0, 1, 1];
    assert_sums_agree(&datums, &scaled, &groups);
    let b = scaled_run(Transition::SumNumeric, &scaled, &groups);
    assert!(matches!(b.result(0), AggResult::NumericSum { value: 12345, dscale: 2, count: 2, .. }));
}

/// numeric(38, 2) values as I128 columns: the same results as their
/// Datums, including two 38-digit values whose sum leaves the i128.
#[test]
fn numeric_sums_of_wide_scaled_integers_equal_sums_of_their_numerics() {
    let big = 10i128.pow(38) - 1;
    let xs = [big, -5, big, 12345, -big, i64::MAX as i128 * 3];
    let (_store, datums, scaled) = numeric_and_scaled(&xs, PhysType::I128, Some(3));
    let groups = [0u32, 1, 0, 1, 1, 0];
    assert_sums_agree(&datums, &scaled, &groups);
    let b = scaled_run(Transition::SumNumeric, &scaled, &groups);
    let AggResult::NumericSum { value, wide, count, .. } = b.result(0) else { panic!("a sum") };
    assert_eq!((value, wide.len(), count), (big + xs[5], 1, 3), "the second 38-digit value aside");
    assert!(matches!(b.result(1), AggResult::NumericSum { value: v, count: 2, .. } if v == -5 - big));
}

#[test]
fn text_min_max_follow_the_collation_order_and_keep_the_later_of_equals() {
    let words: Vec<Vec<u8>> = ["b", "B", "a", "A"].iter().map(|w| varlena::make_4b(w.as_bytes())).collect();
    let mut c = Column::new(PhysType::Datum, words.len());
    words.iter().enumerate().for_each(|(i, w)| c.values.set_datum(i, w.as_ptr() as usize));
    // A case-insensitive order: "a" = "A" < "b" = "B".
    let ci = || TextOrder(Box::new(|a: &[u8], b: &[u8]| a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())));
    for (max, want) in [(false, &b"A"[..]), (true, &b"B"[..])] {
        let mut a = Accumulator::new(Transition::MinMaxBytes { max });
        a.set_text_order(ci());
        a.ensure_groups(1);
        // SAFETY: the test's columns hold by-value integers or point to plain test varlenas that
        // outlive the call.
        unsafe { a.update(&[0; 4], &[0, 1, 2, 3], Some(&c)) }.unwrap();
        assert_eq!(a.result(0), AggResult::Bytes(want), "max {max}");
    }
    // Bytewise (C): uppercase sorts first.
    let (a, _) = run(Transition::MinMaxBytes { max: false }, Some(&c), &[0; 4]);
    assert_eq!(a.result(0), AggResult::Bytes(b"A"));
    let (a, _) = run(Transition::MinMaxBytes { max: true }, Some(&c), &[0; 4]);
    assert_eq!(a.result(0), AggResult::Bytes(b"b"));
}

#[test]
fn numeric_min_max_keep_the_later_of_equal_values() {
    use crate::numeric::{encode, encode_special, Special};
    let store: Vec<Vec<u8>> = vec![
        encode(10, 1),
        encode(-3, 0),
        encode(100, 2),
        encode(-300, 2),
        crate::batch::varlena::make_4b(&encode_special(Special::NaN)),
        encode(5, 0),
    ];
    let mut c = Column::new(PhysType::Datum, store.len());
    for (i, v) in store.iter().enumerate() {
        c.values.set_datum(i, v.as_ptr() as usize);
    }
    let groups = [0, 0, 0, 0, 1, 1];
    let (min, _) = run(Transition::MinMaxNumeric { max: false }, Some(&c), &groups);
    let (max, _) = run(Transition::MinMaxNumeric { max: true }, Some(&c), &groups);
    // SAFETY: v holds a plain varlena (made by make_1b/encode).
    let payload = |v: &Vec<u8>| unsafe { varlena::bytes(v.as_ptr()) }.to_vec();
    // -3 and -3.00 are equal: the later (-3.00) is kept; 1.0 and 1.00 likewise.
    assert_eq!(min.result(0), AggResult::Bytes(&payload(&store[3])));
    assert_eq!(max.result(0), AggResult::Bytes(&payload(&store[2])));
    // NaN is above every number.
    assert_eq!(min.result(1), AggResult::Bytes(&payload(&store[5])));
    assert_eq!(max.result(1), AggResult::Bytes(&payload(&store[4])));
}

#[test]
fn counts_skip_nulls_only_for_count_of_a_value() {
    let c = i32s(&[Some(1), None, Some(3), None]);
    let (a, _) = run(Transition::CountRows, None, &[0, 0, 1, 1]);
    assert_eq!((a.result(0), a.result(1)), (AggResult::Int(2), AggResult::Int(2)));
    let (a, _) = run(Transition::CountValues, Some(&c), &[0, 0, 1, 1]);
    assert_eq!((a.result(0), a.result(1)), (AggResult::Int(1), AggResult::Int(1)));
}

#[test]
fn int_sums_wrap_like_int4_sum_and_int8_sums_widen() {
    let c = i32s(&[Some(i32::MAX), Some(i32::MAX), None]);
    let (a, _) = run(Transition::SumInt, Some(&c), &[0, 0, 1]);
    assert_eq!(a.result(0), AggResult::Int(2 * i32::MAX as i64));
    assert_eq!(a.result(1), AggResult::Null);

    let big = column(PhysType::I64, &[Some(i64::MAX), Some(i64::MAX), Some(-3)], |x: i64| x as usize);
    let (a, _) = run(Transition::SumBigInt, Some(&big), &[0, 0, 0]);
    assert_eq!(a.result(0), AggResult::Numeric(2 * i64::MAX as i128 - 3));
    let (a, _) = run(Transition::AvgInt, Some(&big), &[0, 1, 1]);
    assert_eq!(a.result(1), AggResult::NumericAvg { sum: i64::MAX as i128 - 3, count: 2 });

    // int4_sum adds on int64 without an overflow check: it wraps.
    let mut a = Accumulator::new(Transition::SumInt);
    a.ensure_groups(1);
    let c = column(PhysType::I64, &[Some(i64::MAX), Some(1)], |x: i64| x as usize);
    // SAFETY: the test's columns hold by-value integers or point to plain test varlenas that
    // outlive the call.
    unsafe { a.update(&[0, 0], &[0, 1], Some(&c)).unwrap() };
    assert_eq!(a.result(0), AggResult::Int(i64::MIN));
}

#[test]
fn float_sum_starts_from_the_first_value_and_reports_overflow_rows() {
    let c = f64s(&[Some(-0.0), None]);
    let (a, _) = run(Transition::SumFloat8, Some(&c), &[0, 1]);
    assert_eq!(a.result(0), AggResult::Float8(-0.0));
    assert!(matches!(a.result(0), AggResult::Float8(v) if v.is_sign_negative()));
    assert_eq!(a.result(1), AggResult::Null);

    let c = f64s(&[Some(f64::MAX), Some(1.0), Some(f64::MAX)]);
    let (_, r) = run(Transition::SumFloat8, Some(&c), &[0, 0, 0]);
    assert_eq!(r, Err(AggError::FloatOverflow { row: 2 }));
    // Infinity in the input is not an overflow.
    let c = f64s(&[Some(f64::INFINITY), Some(f64::MAX)]);
    let (a, r) = run(Transition::SumFloat8, Some(&c), &[0, 0]);
    assert_eq!((r, a.result(0)), (Ok(()), AggResult::Float8(f64::INFINITY)));

    let c = column(PhysType::F32, &[Some(f32::MAX), Some(f32::MAX)], |x: f32| x.to_bits() as usize);
    let (_, r) = run(Transition::SumFloat4, Some(&c), &[0, 0]);
    assert_eq!(r, Err(AggError::FloatOverflow { row: 1 }));
}

/// float8_accum as PostgreSQL writes it, for comparison.
fn reference_moments(xs: &[f64]) -> (f64, f64, f64) {
    let (mut n, mut sx, mut sxx) = (0.0f64, 0.0f64, 0.0f64);
    for &x in xs {
        let n0 = n;
        n += 1.0;
        sx += x;
        if n0 > 0.0 {
            let tmp = x * n - sx;
            sxx += tmp * tmp / (n * n0);
        }
    }
    (n, sx, sxx)
}

#[test]
fn moments_follow_float8_accum_in_row_order() {
    let xs = [0.1, 1e10, -3.25, 7.0, 0.3, 1e-7];
    let c = f64s(&xs.iter().map(|&x| Some(x)).collect::<Vec<_>>());
    let (n, sx, sxx) = reference_moments(&xs);
    for (fin, want) in [
        (MomentsFinal::Avg, sx / n),
        (MomentsFinal::VarPop, sxx / n),
        (MomentsFinal::VarSamp, sxx / (n - 1.0)),
        (MomentsFinal::StddevPop, (sxx / n).sqrt()),
        (MomentsFinal::StddevSamp, (sxx / (n - 1.0)).sqrt()),
    ] {
        let (a, _) = run(Transition::Moments { fin }, Some(&c), &[0; 6]);
        assert_eq!(a.result(0), AggResult::Float8(want), "{fin:?}");
    }
    // One value: var_samp is NULL, var_pop is 0; an infinite first value makes Sxx NaN.
    let one = f64s(&[Some(2.0)]);
    let (a, _) = run(Transition::Moments { fin: MomentsFinal::VarSamp }, Some(&one), &[0]);
    assert_eq!(a.result(0), AggResult::Null);
    let inf = f64s(&[Some(f64::INFINITY)]);
    let (a, _) = run(Transition::Moments { fin: MomentsFinal::VarPop }, Some(&inf), &[0]);
    assert!(matches!(a.result(0), AggResult::Float8(v) if v.is_nan()));
    let big = f64s(&[Some(1e308), Some(1e308)]);
    let (_, r) = run(Transition::Moments { fin: MomentsFinal::Avg }, Some(&big), &[0, 0]);
    assert_eq!(r, Err(AggError::FloatOverflow { row: 1 }));
}

#[test]
fn float_min_max_order_nan_last_and_keep_the_later_of_equals() {
    let c = f64s(&[Some(f64::NAN), Some(1.0), Some(-0.0), Some(0.0), None]);
    let (a, _) = run(Transition::MinMaxFloat { max: true }, Some(&c), &[0; 5]);
    assert!(matches!(a.result(0), AggResult::Float8(v) if v.is_nan()));
    let (a, _) = run(Transition::MinMaxFloat { max: false }, Some(&c), &[0; 5]);
    // -0 then 0: float8smaller(-0, 0) returns its second argument.
    assert!(matches!(a.result(0), AggResult::Float8(v) if v == 0.0 && v.is_sign_positive()));
    let (a, _) =
        run(Transition::MinMaxInt { max: false }, Some(&i32s(&[Some(4), Some(-2), None])), &[0, 0, 1]);
    assert_eq!((a.result(0), a.result(1)), (AggResult::Int(-2), AggResult::Null));
}

#[test]
fn text_min_max_and_count_distinct() {
    let store =
        [varlena::make_1b(b"b"), varlena::make_4b(b"abc"), varlena::make_1b(b"ab"), varlena::make_1b(b"b")];
    let c =
        column(PhysType::Datum, &store.iter().map(|s| Some(s.as_ptr() as usize)).collect::<Vec<_>>(), |x| x);
    let (a, _) = run(Transition::MinMaxBytes { max: false }, Some(&c), &[0; 4]);
    assert_eq!(a.result(0), AggResult::Bytes(b"ab"));
    let (a, _) = run(Transition::MinMaxBytes { max: true }, Some(&c), &[0; 4]);
    assert_eq!(a.result(0), AggResult::Bytes(b"b"));
    let (a, _) = run(Transition::CountDistinct(KeyKind::Bytes), Some(&c), &[0, 0, 1, 1]);
    assert_eq!((a.result(0), a.result(1)), (AggResult::Int(2), AggResult::Int(2)));
    let (a, _) = run(Transition::CountDistinct(KeyKind::Bytes), Some(&c), &[0, 0, 0, 0]);
    assert_eq!(a.result(0), AggResult::Int(3));

    // Across batches, with NULLs (not counted).
    let mut a = Accumulator::new(Transition::CountDistinct(KeyKind::Int));
    a.ensure_groups(2);
    let b1 = i32s(&[Some(1), Some(1), None, Some(2)]);
    let b2 = i32s(&[Some(2), Some(3), Some(1), None]);
    // SAFETY: the test's columns hold by-value integers or point to plain test varlenas that
    // outlive the call.
    unsafe {
        a.update(&[0, 0, 0, 1], &[0, 1, 2, 3], Some(&b1)).unwrap();
        a.update(&[0, 0, 1, 1], &[0, 1, 2, 3], Some(&b2)).unwrap();
    }
    assert_eq!((a.result(0), a.result(1)), (AggResult::Int(3), AggResult::Int(2)));

    // Integer values: the same counts as the group table's pairs give.
    let vals: Vec<Option<i32>> = (0..2000).map(|i| (i % 17 != 0).then_some((i * 7919) % 613 - 300)).collect();
    let col = i32s(&vals);
    let groups: Vec<u32> = (0..2000).map(|i| (i % 5) as u32).collect();
    let (ints, _) = run(Transition::CountDistinct(KeyKind::Int), Some(&col), &groups);
    let mut table = GroupTable::new(&[KeyKind::Int, KeyKind::Int]);
    let mut gcol = Column::new(PhysType::I64, 2000);
    groups.iter().enumerate().for_each(|(i, &g)| gcol.values.set_datum(i, g as usize));
    let rows: Vec<RowIdx> = (0..2000).filter(|&r| col.is_valid(r as usize)).collect();
    let mut ids = Vec::new();
    // SAFETY: the test's columns hold by-value integers or point to plain test varlenas that
    // outlive the call.
    unsafe { table.assign(&[&gcol, &col], &rows, &mut ids) };
    for g in 0..5u32 {
        let pairs = (0..table.len()).filter(|&p| table.fixed_key(0, p) == Some(g as i64)).count();
        assert_eq!(ints.result(g as usize), AggResult::Int(pairs as i64), "group {g}");
    }
}

#[test]
fn distinct_sums_take_each_value_once_per_group() {
    // group 0: 5, 5, 7, NULL, 5 -> {5, 7}; group 1: 5, -2, -2 -> {5, -2}; group 2: NULL only
    let col = i32s(&[Some(5), Some(5), Some(7), None, Some(5), Some(5), Some(-2), Some(-2), None]);
    let groups = [0, 0, 0, 0, 0, 1, 1, 1, 2];
    let (a, r) = run(Transition::SumDistinctInt, Some(&col), &groups);
    r.unwrap();
    let t = Transition::SumDistinctInt;
    assert_eq!((a.result_as(0, t), a.result_as(1, t)), (AggResult::Int(12), AggResult::Int(3)));
    assert_eq!(a.result_as(2, t), AggResult::Null);
    let (a, _) = run(Transition::AvgDistinctInt, Some(&col), &groups);
    assert_eq!(a.result_as(0, Transition::AvgDistinctInt), AggResult::NumericAvg { sum: 12, count: 2 });
    // A second batch adds only values not seen in the group before.
    let mut a = Accumulator::new(Transition::SumDistinctBigInt);
    a.ensure_groups(2);
    let mut big = Column::new(PhysType::I64, 3);
    for (i, v) in [i64::MAX, i64::MAX, 1].into_iter().enumerate() {
        big.values.set_datum(i, v as usize);
    }
    // SAFETY: the test's columns hold by-value integers or point to plain test varlenas that
    // outlive the call.
    unsafe {
        a.update(&[0, 0, 1], &[0, 1, 2], Some(&big)).unwrap();
        a.update(&[0, 1, 1], &[2, 0, 2], Some(&big)).unwrap();
    }
    let t = Transition::SumDistinctBigInt;
    assert_eq!(a.result_as(0, t), AggResult::Numeric(i64::MAX as i128 + 1));
    assert_eq!(a.result_as(1, t), AggResult::Numeric(i64::MAX as i128 + 1));
    assert!(!t.combines() && !t.shares_state(Transition::SumBigInt));
    assert_eq!(Transition::from_code(t.code()), Some(t));
}

//! Partial states: an accumulator's state of one group as bytes
//! (`serialize`) for a Gather, and combining them in a Finalize
//! (the rules of PostgreSQL's combine functions).

#[allow(unused_imports)]
use super::*;

/// float4pl/float8pl as a combine function: another partial sum `x` (when
/// it saw a value) into `sum`.
pub(super) fn combine_float_sum<T: Copy>(
    sum: &mut T,
    seen: &mut bool,
    other_seen: bool,
    x: T,
    add: fn(T, T) -> Option<T>,
    overflow: AggError,
) -> Result<(), AggError> {
    if other_seen {
        *sum = if *seen { add(*sum, x).ok_or(overflow)? } else { x };
        *seen = true;
    }
    Ok(())
}

/// Reads a partial state back (see [`Accumulator::serialize`]).
pub(super) struct StateReader<'a>(&'a [u8]);

impl StateReader<'_> {
    pub(super) fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_at_checked(N)?;
        self.0 = rest;
        head.try_into().ok()
    }
    pub(super) fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    pub(super) fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    pub(super) fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    pub(super) fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }
    pub(super) fn i128(&mut self) -> Option<i128> {
        self.take().map(i128::from_le_bytes)
    }
    pub(super) fn f32(&mut self) -> Option<f32> {
        self.take().map(f32::from_le_bytes)
    }
    pub(super) fn f64(&mut self) -> Option<f64> {
        self.take().map(f64::from_le_bytes)
    }
    pub(super) fn bytes(&mut self) -> Option<&[u8]> {
        let n = self.u32()? as usize;
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
}

pub(super) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

impl Accumulator {
    /// The state of group `g` as bytes, for a Finalize VecAgg to
    /// [`combine`](Accumulator::combine) (parallel aggregation: each worker
    /// aggregates its share of the rows, the leader combines the states).
    pub fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.clear();
        match &self.state {
            State::Counts(c) => out.extend_from_slice(&c[g].to_le_bytes()),
            State::Distinct { .. } | State::DistinctInts { .. } | State::DistinctSum { .. } => {
                panic!("a DISTINCT aggregate has no partial state")
            }
            State::IntSum { sums, counts } => {
                out.extend_from_slice(&sums[g].to_le_bytes());
                out.extend_from_slice(&counts[g].to_le_bytes());
            }
            State::WideSum { sums, counts } => {
                out.extend_from_slice(&sums[g].to_le_bytes());
                out.extend_from_slice(&counts[g].to_le_bytes());
            }
            State::F32Sum { sums, seen } => {
                out.push(seen[g] as u8);
                out.extend_from_slice(&sums[g].to_le_bytes());
            }
            State::F64Sum { sums, seen } => {
                out.push(seen[g] as u8);
                out.extend_from_slice(&sums[g].to_le_bytes());
            }
            State::Moments { n, sx, sxx } => {
                for v in [n[g], sx[g], sxx[g]] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            State::IntExtreme { values, seen } => {
                out.push(seen[g] as u8);
                out.extend_from_slice(&values[g].to_le_bytes());
            }
            State::FloatExtreme { values, seen } => {
                out.push(seen[g] as u8);
                out.extend_from_slice(&values[g].to_le_bytes());
            }
            State::BytesExtreme { values, .. } => {
                out.push(values[g].is_some() as u8);
                if let Some(v) = &values[g] {
                    put_bytes(out, v);
                }
            }
            State::NumericSum(s) => {
                out.extend_from_slice(&s.sums[g].to_le_bytes());
                out.extend_from_slice(&s.scales[g].to_le_bytes());
                out.extend_from_slice(&s.counts[g].to_le_bytes());
                for c in s.specials.get(&g).copied().unwrap_or_default() {
                    out.extend_from_slice(&c.to_le_bytes());
                }
                let wide = s.wide.get(&g).map_or(&[][..], |w| w.as_slice());
                out.extend_from_slice(&(wide.len() as u32).to_le_bytes());
                for w in wide {
                    put_bytes(out, w);
                }
            }
        }
    }

    /// Combine partial states into groups: row `rows[i]` of `states` (plain
    /// varlenas holding [`serialize`](Accumulator::serialize)d states) into
    /// group `groups[i]`, in order, with the combine rules of PostgreSQL's
    /// combine functions (int8pl, float8_combine, numeric_combine, ...).
    ///
    /// # Safety
    /// The valid values of `states` point to plain varlenas.
    pub unsafe fn combine(
        &mut self,
        groups: &[u32],
        rows: &[RowIdx],
        states: &Column,
    ) -> Result<(), AggError> {
        let Values::Datum(v) = &states.values else { panic!("partial states are varlenas") };
        for (&g, &r) in groups.iter().zip(rows) {
            let i = r as usize;
            if !states.is_valid(i) {
                continue;
            }
            let bytes = unsafe { varlena::bytes(v[i] as *const u8) };
            self.combine_one(g as usize, bytes, r).ok_or(AggError::InvalidState { row: r })??;
        }
        Ok(())
    }

    /// Combine one state into group `g`; None when it does not read back.
    pub(super) fn combine_one(
        &mut self,
        g: usize,
        bytes: &[u8],
        row: RowIdx,
    ) -> Option<Result<(), AggError>> {
        let mut rd = StateReader(bytes);
        let overflow = AggError::FloatOverflow { row };
        match (&mut self.state, self.transition) {
            (State::Counts(c), _) => c[g] += rd.i64()?,
            (State::Distinct { .. } | State::DistinctInts { .. } | State::DistinctSum { .. }, _) => {
                return None
            }
            (State::IntSum { sums, counts }, _) => {
                sums[g] = sums[g].wrapping_add(rd.i64()?);
                counts[g] += rd.i64()?;
            }
            (State::WideSum { sums, counts }, _) => {
                sums[g] += rd.i128()?;
                counts[g] += rd.i64()?;
            }
            (State::F32Sum { sums, seen }, _) => {
                let (other_seen, x) = (rd.u8()? != 0, rd.f32()?);
                if let Err(e) =
                    combine_float_sum(&mut sums[g], &mut seen[g], other_seen, x, float4_pl, overflow)
                {
                    return Some(Err(e));
                }
            }
            (State::F64Sum { sums, seen }, _) => {
                let (other_seen, x) = (rd.u8()? != 0, rd.f64()?);
                if let Err(e) =
                    combine_float_sum(&mut sums[g], &mut seen[g], other_seen, x, float8_pl, overflow)
                {
                    return Some(Err(e));
                }
            }
            (State::Moments { n, sx, sxx }, _) => {
                let (n2, sx2, sxx2) = (rd.f64()?, rd.f64()?, rd.f64()?);
                // float8_combine.
                let (n1, sx1, sxx1) = (n[g], sx[g], sxx[g]);
                if n1 == 0.0 {
                    (n[g], sx[g], sxx[g]) = (n2, sx2, sxx2);
                } else if n2 != 0.0 {
                    let nn = n1 + n2;
                    let Some(s) = float8_pl(sx1, sx2) else { return Some(Err(overflow)) };
                    let tmp = sx1 / n1 - sx2 / n2;
                    let q = sxx1 + sxx2 + n1 * n2 * tmp * tmp / nn;
                    if q.is_infinite() && !sxx1.is_infinite() && !sxx2.is_infinite() {
                        return Some(Err(overflow));
                    }
                    (n[g], sx[g], sxx[g]) = (nn, s, q);
                }
            }
            (State::IntExtreme { values, seen }, Transition::MinMaxInt { max }) => {
                let (other_seen, x) = (rd.u8()? != 0, rd.i64()?);
                if other_seen && (!seen[g] || (if max { x > values[g] } else { x < values[g] })) {
                    (values[g], seen[g]) = (x, true);
                }
            }
            (State::FloatExtreme { values, seen }, Transition::MinMaxFloat { max }) => {
                let (other_seen, x) = (rd.u8()? != 0, rd.f64()?);
                let keep = seen[g] && if max { float_lt(x, values[g]) } else { float_lt(values[g], x) };
                if other_seen && !keep {
                    (values[g], seen[g]) = (x, true);
                }
            }
            (State::BytesExtreme { values, bytes }, t) => {
                if rd.u8()? == 0 {
                    return Some(Ok(()));
                }
                let x = rd.bytes()?;
                let replace = match (&values[g], t) {
                    (None, _) => true,
                    (Some(cur), Transition::MinMaxBytes { max }) => {
                        let o = match &mut self.order {
                            None => (**cur).cmp(x),
                            Some(order) => (order.0)(cur, x),
                        };
                        if max {
                            o.is_le()
                        } else {
                            o.is_ge()
                        }
                    }
                    (Some(cur), Transition::MinMaxNumeric { max }) => {
                        let o = numeric::compare(cur, x)?;
                        !(if max { o.is_gt() } else { o.is_lt() })
                    }
                    _ => return None,
                };
                if replace {
                    *bytes += x.len();
                    *bytes -= values[g].replace(x.into()).map_or(0, |old| old.len());
                }
            }
            (State::NumericSum(s), _) => {
                let (value, dscale, count) = (rd.i128()?, rd.u16()?, rd.i64()?);
                let specials = [rd.u32()?, rd.u32()?, rd.u32()?];
                s.add_scaled_n(g, value, dscale, count);
                if specials != [0; 3] {
                    let mine = s.specials.entry(g).or_default();
                    for (k, c) in specials.into_iter().enumerate() {
                        mine[k] += c;
                    }
                }
                for _ in 0..rd.u32()? {
                    let w = rd.bytes()?;
                    s.wide.entry(g).or_default().push(w.into());
                }
            }
            _ => return None,
        }
        rd.0.is_empty().then_some(Ok(()))
    }
}

//! Exact numeric sums per group, as `do_numeric_accum` keeps them.

use super::partial::put_bytes;
use super::{grow, AggError, AggResult, GroupStates, StateReader, Transition};
use crate::batch::{varlena, Column, RowIdx, Values};
use crate::numeric::{self, Decoded, Special};

/// Per group: the finite values' scaled sum at the largest display scale
/// met, their count, values that did not fit (sparse), and NaN/+Inf/-Inf counts.
#[derive(Debug, Default)]
pub(super) struct NumericSums {
    pub(super) sums: Vec<i128>,
    pub(super) scales: Vec<u16>,
    pub(super) counts: Vec<i64>,
    /// NaN/+Inf/-Inf counts of the groups that met one (few do: sparse,
    /// 12 bytes a group would be a third of the state).
    pub(super) specials: std::collections::HashMap<usize, [u32; 3]>,
    pub(super) wide: std::collections::BTreeMap<usize, Vec<Box<[u8]>>>,
    /// The scale of an argument that arrives as scaled integers (I64/I128
    /// columns) rather than numeric Datums.
    pub(super) arg_scale: Option<u16>,
}

impl NumericSums {
    /// Add the finite value `value / 10^dscale` to group `g`.
    #[inline]
    pub(super) fn add_scaled(&mut self, g: usize, value: i128, dscale: u16) {
        self.add_scaled_n(g, value, dscale, 1)
    }

    /// Add the sum `value / 10^dscale` of `n` finite values to group `g`.
    #[inline]
    pub(super) fn add_scaled_n(&mut self, g: usize, value: i128, dscale: u16, n: i64) {
        self.counts[g] += n;
        if dscale == self.scales[g] {
            // The common case: values of one numeric(p, s) column.
            if let Some(s) = self.sums[g].checked_add(value) {
                self.sums[g] = s;
                return;
            }
        }
        if dscale > self.scales[g] {
            let k = dscale - self.scales[g];
            match numeric::rescale(self.sums[g], k) {
                Some(s) => self.sums[g] = s,
                None => {
                    let old = numeric::encode_payload(self.sums[g], self.scales[g]);
                    self.wide.entry(g).or_default().push(old.into());
                    self.sums[g] = 0;
                }
            }
            self.scales[g] = dscale;
        }
        let v = numeric::rescale(value, self.scales[g] - dscale);
        match v.and_then(|v| self.sums[g].checked_add(v)) {
            Some(s) => self.sums[g] = s,
            None => {
                let p = numeric::encode_payload(value, dscale);
                self.wide.entry(g).or_default().push(p.into())
            }
        }
    }

    pub(super) fn add(&mut self, g: usize, payload: &[u8]) -> bool {
        match numeric::decode(payload) {
            Some(Decoded::Scaled { value, dscale }) => self.add_scaled(g, value, dscale),
            Some(Decoded::TooWide) => {
                self.counts[g] += 1;
                self.wide.entry(g).or_default().push(payload.into());
            }
            Some(Decoded::NaN) => self.specials.entry(g).or_default()[0] += 1,
            Some(Decoded::PosInfinity) => self.specials.entry(g).or_default()[1] += 1,
            Some(Decoded::NegInfinity) => self.specials.entry(g).or_default()[2] += 1,
            None => return false,
        }
        true
    }

    pub(super) fn sum_result(&self, g: usize, avg: bool) -> AggResult<'_> {
        let [nan, pinf, ninf] = self.specials.get(&g).copied().unwrap_or_default();
        if self.counts[g] == 0 && nan + pinf + ninf == 0 {
            AggResult::Null
        } else if nan > 0 || (pinf > 0 && ninf > 0) {
            AggResult::NumericSpecial(Special::NaN)
        } else if pinf > 0 {
            AggResult::NumericSpecial(Special::PosInfinity)
        } else if ninf > 0 {
            AggResult::NumericSpecial(Special::NegInfinity)
        } else {
            AggResult::NumericSum {
                value: self.sums[g],
                dscale: self.scales[g],
                wide: self.wide.get(&g).map_or(&[], |w| w.as_slice()),
                count: self.counts[g],
                avg,
            }
        }
    }
}

impl GroupStates for NumericSums {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.sums, n, room, 0);
        grow(&mut self.scales, n, room, 0);
        grow(&mut self.counts, n, room, 0);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        match &col.values {
            Values::Datum(v) => {
                for (g, r) in live {
                    // SAFETY: the caller vouches that valid values are plain varlenas.
                    if !self.add(g, unsafe { varlena::bytes(v[r] as *const u8) }) {
                        return Err(AggError::InvalidNumeric { row: r as RowIdx });
                    }
                }
            }
            // numeric(p, s) values the child computed as scaled integers.
            Values::I64(v) => {
                let scale = self.arg_scale.expect("the scale of a scaled numeric argument");
                for (g, r) in live {
                    self.add_scaled(g, v[r] as i128, scale);
                }
            }
            // numeric(19..38, s): scaled integers of 128 bits.
            Values::I128(v) => {
                let scale = self.arg_scale.expect("the scale of a scaled numeric argument");
                for (g, r) in live {
                    self.add_scaled(g, v[r], scale);
                }
            }
            other => panic!("numeric sum over a {:?} column", other.phys_type()),
        }
        Ok(())
    }

    fn result(&self, g: usize, t: Transition) -> AggResult<'_> {
        self.sum_result(g, t == Transition::AvgNumeric)
    }

    fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.sums[g].to_le_bytes());
        out.extend_from_slice(&self.scales[g].to_le_bytes());
        out.extend_from_slice(&self.counts[g].to_le_bytes());
        for c in self.specials.get(&g).copied().unwrap_or_default() {
            out.extend_from_slice(&c.to_le_bytes());
        }
        let wide = self.wide.get(&g).map_or(&[][..], |w| w.as_slice());
        out.extend_from_slice(&(wide.len() as u32).to_le_bytes());
        for w in wide {
            put_bytes(out, w);
        }
    }

    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, _row: RowIdx) -> Option<Result<(), AggError>> {
        let (value, dscale, count) = (rd.i128()?, rd.u16()?, rd.i64()?);
        let specials = [rd.u32()?, rd.u32()?, rd.u32()?];
        self.add_scaled_n(g, value, dscale, count);
        if specials != [0; 3] {
            let mine = self.specials.entry(g).or_default();
            for (k, c) in specials.into_iter().enumerate() {
                mine[k] += c;
            }
        }
        for _ in 0..rd.u32()? {
            let w = rd.bytes()?;
            self.wide.entry(g).or_default().push(w.into());
        }
        Some(Ok(()))
    }

    fn bytes_used(&self) -> usize {
        self.sums.capacity() * 16
            + self.scales.capacity() * 2
            + self.counts.capacity() * 8
            + self.specials.capacity() * 24
            + self.wide.values().flatten().map(|b| b.len() + 48).sum::<usize>()
    }
}

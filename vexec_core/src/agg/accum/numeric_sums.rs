//! Exact numeric sums per group, as `do_numeric_accum` keeps them.

#[allow(unused_imports)]
use super::*;

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

    pub(super) fn result(&self, g: usize, avg: bool) -> AggResult<'_> {
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

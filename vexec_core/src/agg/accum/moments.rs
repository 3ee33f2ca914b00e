//! `avg`, `var_*` and `stddev_*` over floats: `float8_accum`'s
//! (N, Sx, Sxx) with the Youngs-Cramer update in row order, combined as
//! `float8_combine`.

use super::float::{float8_pl, float_value};
use super::{grow, AggError, AggResult, GroupStates, MomentsFinal, StateReader, Transition};
use crate::batch::{Column, RowIdx};

#[derive(Debug, Default)]
pub(super) struct Moments {
    n: Vec<f64>,
    sx: Vec<f64>,
    sxx: Vec<f64>,
}

impl GroupStates for Moments {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.n, n, room, 0.0);
        grow(&mut self.sx, n, room, 0.0);
        grow(&mut self.sxx, n, room, 0.0);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        for (g, r) in live {
            let x = float_value(&col.values, r);
            // float8_accum, step by step.
            let n0 = self.n[g];
            let sx0 = self.sx[g];
            let nn = n0 + 1.0;
            let s = sx0 + x;
            let mut q = self.sxx[g];
            if n0 > 0.0 {
                let tmp = x * nn - s;
                q += tmp * tmp / (nn * n0);
                if s.is_infinite() || q.is_infinite() {
                    if !sx0.is_infinite() && !x.is_infinite() {
                        return Err(AggError::FloatOverflow { row: r as RowIdx });
                    }
                    q = f64::NAN;
                }
            } else if x.is_nan() || x.is_infinite() {
                q = f64::NAN;
            }
            self.n[g] = nn;
            self.sx[g] = s;
            self.sxx[g] = q;
        }
        Ok(())
    }

    fn result(&self, g: usize, t: Transition) -> AggResult<'_> {
        let Transition::Moments { fin } = t else { unreachable!("moments state for {t:?}") };
        let (n, sx, sxx) = (self.n[g], self.sx[g], self.sxx[g]);
        let v = match fin {
            MomentsFinal::Avg if n > 0.0 => Some(sx / n),
            MomentsFinal::VarPop if n > 0.0 => Some(sxx / n),
            MomentsFinal::StddevPop if n > 0.0 => Some((sxx / n).sqrt()),
            MomentsFinal::VarSamp if n > 1.0 => Some(sxx / (n - 1.0)),
            MomentsFinal::StddevSamp if n > 1.0 => Some((sxx / (n - 1.0)).sqrt()),
            _ => None,
        };
        v.map_or(AggResult::Null, AggResult::Float8)
    }

    fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        for v in [self.n[g], self.sx[g], self.sxx[g]] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, row: RowIdx) -> Option<Result<(), AggError>> {
        let (n2, sx2, sxx2) = (rd.f64()?, rd.f64()?, rd.f64()?);
        let overflow = AggError::FloatOverflow { row };
        // float8_combine.
        let (n1, sx1, sxx1) = (self.n[g], self.sx[g], self.sxx[g]);
        if n1 == 0.0 {
            (self.n[g], self.sx[g], self.sxx[g]) = (n2, sx2, sxx2);
        } else if n2 != 0.0 {
            let nn = n1 + n2;
            let Some(s) = float8_pl(sx1, sx2) else { return Some(Err(overflow)) };
            let tmp = sx1 / n1 - sx2 / n2;
            let q = sxx1 + sxx2 + n1 * n2 * tmp * tmp / nn;
            if q.is_infinite() && !sxx1.is_infinite() && !sxx2.is_infinite() {
                return Some(Err(overflow));
            }
            (self.n[g], self.sx[g], self.sxx[g]) = (nn, s, q);
        }
        Some(Ok(()))
    }

    fn bytes_used(&self) -> usize {
        (self.n.capacity() + self.sx.capacity() + self.sxx.capacity()) * 8
    }
}

//! `min` and `max`. Each keeps the *later* of two equal values, as
//! `int4larger`, `float8smaller`, `text_larger`, `numeric_smaller` and
//! friends do (they return their second argument unless the first is
//! strictly smaller/larger), which matters for -0 and 0, for strings a
//! nondeterministic collation orders equal, and for numerics of different
//! display scales.

use super::float::{float_lt, float_value};
use super::partial::put_bytes;
use super::{grow, grow_bits, AggError, AggResult, GroupStates, StateReader, TextOrder, Transition};
use crate::batch::{varlena, Bitmap, Column, RowIdx, Values};
use crate::numeric;

/// Integer-like min/max (int2/int4/int8, dates, timestamps, bool).
#[derive(Debug)]
pub(super) struct IntExtreme {
    max: bool,
    values: Vec<i64>,
    seen: Bitmap,
}

impl IntExtreme {
    pub(super) fn new(max: bool) -> IntExtreme {
        IntExtreme { max, values: vec![], seen: Bitmap::default() }
    }

    /// Whether `x` replaces group `g`'s value.
    #[inline]
    fn replaces(&self, g: usize, x: i64) -> bool {
        !self.seen.get(g) || if self.max { x > self.values[g] } else { x < self.values[g] }
    }
}

impl GroupStates for IntExtreme {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.values, n, room, 0);
        grow_bits(&mut self.seen, n, room);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        for_ints!(&col.values, live, |g, _r, x| {
            if self.replaces(g, x) {
                self.values[g] = x;
                self.seen.set(g, true);
            }
        });
        Ok(())
    }

    fn result(&self, g: usize, _t: Transition) -> AggResult<'_> {
        if self.seen.get(g) {
            AggResult::Int(self.values[g])
        } else {
            AggResult::Null
        }
    }

    fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.push(self.seen.get(g) as u8);
        out.extend_from_slice(&self.values[g].to_le_bytes());
    }

    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, _row: RowIdx) -> Option<Result<(), AggError>> {
        let (other_seen, x) = (rd.u8()? != 0, rd.i64()?);
        if other_seen && self.replaces(g, x) {
            self.values[g] = x;
            self.seen.set(g, true);
        }
        Some(Ok(()))
    }

    fn bytes_used(&self) -> usize {
        self.values.capacity() * 8 + self.seen.allocated_bytes()
    }
}

/// float4/float8 min/max, with PostgreSQL's order (NaN above everything).
#[derive(Debug)]
pub(super) struct FloatExtreme {
    max: bool,
    values: Vec<f64>,
    seen: Bitmap,
}

impl FloatExtreme {
    pub(super) fn new(max: bool) -> FloatExtreme {
        FloatExtreme { max, values: vec![], seen: Bitmap::default() }
    }

    /// Whether `x` replaces group `g`'s value: smaller(state, x) keeps the
    /// state only when it is strictly smaller (larger: strictly larger).
    #[inline]
    fn replaces(&self, g: usize, x: f64) -> bool {
        let keep = self.seen.get(g)
            && if self.max { float_lt(x, self.values[g]) } else { float_lt(self.values[g], x) };
        !keep
    }
}

impl GroupStates for FloatExtreme {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.values, n, room, 0.0);
        grow_bits(&mut self.seen, n, room);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        for (g, r) in live {
            let x = float_value(&col.values, r);
            if self.replaces(g, x) {
                self.values[g] = x;
                self.seen.set(g, true);
            }
        }
        Ok(())
    }

    fn result(&self, g: usize, _t: Transition) -> AggResult<'_> {
        if self.seen.get(g) {
            AggResult::Float8(self.values[g])
        } else {
            AggResult::Null
        }
    }

    fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.push(self.seen.get(g) as u8);
        out.extend_from_slice(&self.values[g].to_le_bytes());
    }

    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, _row: RowIdx) -> Option<Result<(), AggError>> {
        let (other_seen, x) = (rd.u8()? != 0, rd.f64()?);
        if other_seen && self.replaces(g, x) {
            self.values[g] = x;
            self.seen.set(g, true);
        }
        Some(Ok(()))
    }

    fn bytes_used(&self) -> usize {
        self.values.capacity() * 8 + self.seen.allocated_bytes()
    }
}

/// Text (in a collation's order) or numeric min/max: the value's bytes.
#[derive(Debug)]
pub(super) struct BytesExtreme {
    max: bool,
    /// Numeric values (compared as numerics), or text.
    numeric: bool,
    /// Text: the collation's order (bytewise when None, which is the C
    /// collation's).
    order: Option<TextOrder>,
    values: Vec<Option<Box<[u8]>>>,
    /// The total length held (kept as values change, so the memory check
    /// does not walk every group).
    bytes: usize,
}

impl BytesExtreme {
    pub(super) fn new(max: bool, numeric: bool) -> BytesExtreme {
        BytesExtreme { max, numeric, order: None, values: vec![], bytes: 0 }
    }

    pub(super) fn set_order(&mut self, order: TextOrder) {
        self.order = Some(order);
    }

    /// Whether `x` replaces group `g`'s value; None for a value that is not
    /// a numeric in a numeric min/max.
    fn replaces(&mut self, g: usize, x: &[u8]) -> Option<bool> {
        let Some(cur) = &self.values[g] else {
            return (!self.numeric || numeric::is_numeric(x)).then_some(true);
        };
        Some(if self.numeric {
            // numeric_smaller keeps the state only when strictly smaller.
            let o = numeric::compare(cur, x)?;
            !(if self.max { o.is_gt() } else { o.is_lt() })
        } else {
            // text_larger keeps the state only when it is greater,
            // text_smaller only when it is smaller.
            let o = match &mut self.order {
                None => (**cur).cmp(x),
                Some(order) => (order.0)(cur, x),
            };
            if self.max {
                o.is_le()
            } else {
                o.is_ge()
            }
        })
    }

    fn replace(&mut self, g: usize, x: &[u8]) {
        // The same bytes need no copy (strings that a nondeterministic
        // collation orders equal are copied).
        if self.values[g].as_deref() != Some(x) {
            self.bytes += x.len();
            self.bytes -= self.values[g].replace(x.into()).map_or(0, |old| old.len());
        }
    }
}

impl GroupStates for BytesExtreme {
    fn grow(&mut self, n: usize, room: usize) {
        grow(&mut self.values, n, room, None);
    }

    unsafe fn update(
        &mut self,
        live: impl Iterator<Item = (usize, usize)>,
        col: &Column,
    ) -> Result<(), AggError> {
        let Values::Datum(v) = &col.values else { panic!("text or numeric min/max over a by-value column") };
        for (g, r) in live {
            // SAFETY: the caller vouches that valid values are plain varlenas.
            let x = unsafe { varlena::bytes(v[r] as *const u8) };
            match self.replaces(g, x) {
                Some(true) => self.replace(g, x),
                Some(false) => {}
                None => return Err(AggError::InvalidNumeric { row: r as RowIdx }),
            }
        }
        Ok(())
    }

    fn result(&self, g: usize, _t: Transition) -> AggResult<'_> {
        self.values[g].as_deref().map_or(AggResult::Null, AggResult::Bytes)
    }

    fn serialize(&self, g: usize, out: &mut Vec<u8>) {
        out.push(self.values[g].is_some() as u8);
        if let Some(v) = &self.values[g] {
            put_bytes(out, v);
        }
    }

    fn combine(&mut self, g: usize, rd: &mut StateReader<'_>, _row: RowIdx) -> Option<Result<(), AggError>> {
        if rd.u8()? == 0 {
            return Some(Ok(()));
        }
        let x = rd.bytes()?;
        if self.replaces(g, x)? {
            self.replace(g, x);
        }
        Some(Ok(()))
    }

    fn bytes_used(&self) -> usize {
        self.values.capacity() * 16 + self.bytes
    }
}

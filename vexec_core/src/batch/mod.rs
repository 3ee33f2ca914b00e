//! Batches: up to 1,024 rows laid out by column.
//!
//! A [`Column`] holds the values of one column at their physical width
//! ([`Values`]) and a validity [`Bitmap`] with PostgreSQL's polarity (bit set =
//! not NULL, least significant bit first, as in a heap tuple's null bitmap).
//! Rows removed by a filter are never marked invalid: they leave the batch's
//! *selection* (a list of live row indexes, ascending), so `count(*)` and NULL handling
//! stay separate concerns.
//!
//! Layouts. The first [`Values`] variants are the `postgres` layout:
//! fixed-width values at their width, bool a byte a value, dates and
//! timestamps in PostgreSQL's epoch, by-reference values (text, numeric, ...)
//! as the Datum (pointer) PostgreSQL gives. The last ones are the `arrow`
//! layout's representations of the types where Arrow's differs (bit-packed
//! booleans, Unix-epoch dates and timestamps, Decimal128, byte views or
//! offsets for varlenas); [`layout`]
//! converts between the two. Kernels take the postgres layout unless they
//! say otherwise: the evaluator converts an arrow column for the others
//! and counts it (`EvalCtx::input`).

mod bitmap;
pub mod late;
pub mod layout;
pub mod strings;
pub mod varlena;

pub use bitmap::Bitmap;

/// The number of rows of a full batch.
pub const BATCH_CAPACITY: usize = 1024;

/// Row index within a batch.
pub type RowIdx = u16;

/// The physical representation of a column's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PhysType {
    Bool,
    I16,
    I32,
    I64,
    /// Scaled numerics of more than 18 digits (numeric(19..38, s)): no
    /// PostgreSQL type has this width, so these columns exist only between
    /// numeric kernels and the aggregates that read them, never as Datums.
    I128,
    F32,
    F64,
    /// A PostgreSQL Datum of a by-reference type (a pointer).
    Datum,
}

impl PhysType {
    /// The physical type of a PostgreSQL type from its `typlen`/`typbyval`
    /// (booleans are passed as `is_bool`, since "char" is also 1 byte by value).
    pub fn of(typlen: i16, typbyval: bool, is_bool: bool) -> PhysType {
        match (typbyval, typlen) {
            (true, 1) if is_bool => PhysType::Bool,
            (true, 1) => PhysType::I16, // "char": widened, converted back at the Datum boundary
            (true, 2) => PhysType::I16,
            (true, 4) => PhysType::I32,
            (true, 8) => PhysType::I64,
            _ => PhysType::Datum,
        }
    }

    /// Integers at their width (int2/int4/int8, dates, timestamps...).
    pub fn is_integer_like(self) -> bool {
        matches!(self, PhysType::I16 | PhysType::I32 | PhysType::I64)
    }
}

/// A column's values at their physical width. Rows outside the selection a
/// kernel ran on hold unspecified values.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Bool(Vec<u8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    I128(Vec<i128>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Datum(Vec<usize>),
    /// Arrow layout of bool: one bit a value, least significant first.
    Bits(arrow_buffer::BooleanBuffer),
    /// Arrow layout of date: days since 1970-01-01 (Arrow's date32);
    /// `i32::MIN`/`i32::MAX` stay -infinity/+infinity.
    Date32(Vec<i32>),
    /// Arrow layout of timestamp and timestamptz: microseconds since
    /// 1970-01-01 00:00 (Arrow's timestamp(us)); `i64::MIN`/`i64::MAX`
    /// stay -infinity/+infinity.
    TimestampUs(Vec<i64>),
    /// Arrow layout of numeric(p <= 38, s): the value times `10^s` (Arrow's
    /// decimal128(p, s)), with `s`.
    Decimal128(Vec<i128>, u16),
    /// Arrow layout of text, varchar, bpchar, bytea: byte views
    /// (Utf8View/BinaryView) of the varlenas' payloads.
    View(strings::ByteViews),
    /// Arrow layout of the same types: offsets + values (Utf8/Binary).
    Offsets(strings::ByteOffsets),
}

impl Values {
    pub fn new(t: PhysType, len: usize) -> Values {
        match t {
            PhysType::Bool => Values::Bool(vec![0; len]),
            PhysType::I16 => Values::I16(vec![0; len]),
            PhysType::I32 => Values::I32(vec![0; len]),
            PhysType::I64 => Values::I64(vec![0; len]),
            PhysType::I128 => Values::I128(vec![0; len]),
            PhysType::F32 => Values::F32(vec![0.0; len]),
            PhysType::F64 => Values::F64(vec![0.0; len]),
            PhysType::Datum => Values::Datum(vec![0; len]),
        }
    }

    /// The physical type of the column in the postgres layout (an arrow
    /// column's is the one it converts to).
    pub fn phys_type(&self) -> PhysType {
        match self {
            Values::Bool(_) | Values::Bits(_) => PhysType::Bool,
            Values::I16(_) => PhysType::I16,
            Values::I32(_) | Values::Date32(_) => PhysType::I32,
            Values::I64(_) | Values::TimestampUs(_) => PhysType::I64,
            Values::I128(_) => PhysType::I128,
            Values::F32(_) => PhysType::F32,
            Values::F64(_) => PhysType::F64,
            Values::Datum(_) | Values::Decimal128(..) | Values::View(_) | Values::Offsets(_) => {
                PhysType::Datum
            }
        }
    }

    /// Whether these are values in one of the arrow layout's own
    /// representations (which kernels take only where they say so).
    pub fn is_arrow(&self) -> bool {
        matches!(
            self,
            Values::Bits(_)
                | Values::Date32(_)
                | Values::TimestampUs(_)
                | Values::Decimal128(..)
                | Values::View(_)
                | Values::Offsets(_)
        )
    }

    pub fn len(&self) -> usize {
        match self {
            Values::Bool(v) => v.len(),
            Values::I16(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::I128(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Datum(v) => v.len(),
            Values::Bits(v) => v.len(),
            Values::Date32(v) => v.len(),
            Values::TimestampUs(v) => v.len(),
            Values::Decimal128(v, _) => v.len(),
            Values::View(v) => v.views.len(),
            Values::Offsets(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Width in bytes of one value (rounded up: a bit counts as a byte;
    /// views and offsets without their data).
    pub fn width(&self) -> usize {
        match self {
            Values::View(_) => 16,
            Values::Offsets(_) => 4,
            Values::Bool(_) | Values::Bits(_) => 1,
            Values::I16(_) => 2,
            Values::I32(_) | Values::F32(_) | Values::Date32(_) => 4,
            Values::I64(_) | Values::F64(_) | Values::Datum(_) | Values::TimestampUs(_) => 8,
            Values::I128(_) | Values::Decimal128(..) => 16,
        }
    }

    /// Raw pointer to the first value, for a C producer that fills the
    /// column. Producers fill the postgres layout only.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            Values::Bool(v) => v.as_mut_ptr(),
            Values::I16(v) => v.as_mut_ptr().cast(),
            Values::I32(v) => v.as_mut_ptr().cast(),
            Values::I64(v) => v.as_mut_ptr().cast(),
            Values::I128(v) => v.as_mut_ptr().cast(),
            Values::F32(v) => v.as_mut_ptr().cast(),
            Values::F64(v) => v.as_mut_ptr().cast(),
            Values::Datum(v) => v.as_mut_ptr().cast(),
            v => panic!("{:?} columns are converted from the postgres layout, not filled", v.phys_type()),
        }
    }

    /// The value of row `i` as a PostgreSQL Datum (by-value types are
    /// converted the way PostgreSQL's `XGetDatum` macros do; arrow dates
    /// and timestamps shifted back to PostgreSQL's epoch). An I128 value
    /// has no Datum: its low 64 bits are returned, which is the value only
    /// when it fits an i64 (consumers of I128 columns read them as i128).
    /// Neither has a Decimal128 value: those columns are converted
    /// ([`layout::to_postgres`]) before anything reads Datums.
    #[inline]
    pub fn datum(&self, i: usize) -> usize {
        match self {
            Values::Bool(v) => v[i] as usize,
            Values::I16(v) => v[i] as i64 as usize,
            Values::I32(v) => v[i] as i64 as usize,
            Values::I64(v) => v[i] as usize,
            Values::I128(v) => v[i] as i64 as usize,
            Values::F32(v) => v[i].to_bits() as usize,
            Values::F64(v) => v[i].to_bits() as usize,
            Values::Datum(v) => v[i],
            Values::Bits(v) => v.value(i) as usize,
            Values::Date32(v) => layout::date_from_unix(v[i]) as i64 as usize,
            Values::TimestampUs(v) => layout::timestamp_from_unix(v[i]) as usize,
            Values::Decimal128(..) | Values::View(_) | Values::Offsets(_) => {
                panic!("a Decimal128, view or offsets value has no Datum: convert the column first")
            }
        }
    }

    /// Set row `i` from a PostgreSQL Datum (the inverse of [`Values::datum`]).
    /// Arrow columns are made whole by [`layout`], not row by row.
    #[inline]
    pub fn set_datum(&mut self, i: usize, d: usize) {
        match self {
            Values::Bool(v) => v[i] = (d != 0) as u8,
            Values::I16(v) => v[i] = d as i16,
            Values::I32(v) => v[i] = d as i32,
            Values::I64(v) => v[i] = d as i64,
            Values::I128(v) => v[i] = d as i64 as i128,
            Values::F32(v) => v[i] = f32::from_bits(d as u32),
            Values::F64(v) => v[i] = f64::from_bits(d as u64),
            Values::Datum(v) => v[i] = d,
            v => panic!("arrow-layout {:?} values are not set from Datums", v.phys_type()),
        }
    }

    /// Set row `i` to row `j` of `src` (of the same physical type), at
    /// full width (I128 included, which `datum` cannot carry).
    #[inline]
    pub fn copy_value(&mut self, i: usize, src: &Values, j: usize) {
        match (self, src) {
            (Values::I128(d), Values::I128(s)) => d[i] = s[j],
            (d, s) => d.set_datum(i, s.datum(j)),
        }
    }
}

/// One column of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub values: Values,
    pub validity: Bitmap,
}

impl Column {
    pub fn new(t: PhysType, len: usize) -> Column {
        Column { values: Values::new(t, len), validity: Bitmap::all_valid(len) }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    #[inline]
    pub fn is_valid(&self, i: usize) -> bool {
        self.validity.get(i)
    }

    /// Append `other`'s rows after this column's (capacity grown exactly,
    /// as held batches are counted against a memory budget). False, and
    /// nothing changed, when the physical types differ.
    pub fn append(&mut self, other: &Column) -> bool {
        macro_rules! extend {
            ($a:expr, $b:expr) => {{
                $a.reserve_exact($b.len());
                $a.extend_from_slice($b);
            }};
        }
        match (&mut self.values, &other.values) {
            (Values::Bool(a), Values::Bool(b)) => extend!(a, b),
            (Values::I16(a), Values::I16(b)) => extend!(a, b),
            (Values::I32(a), Values::I32(b)) => extend!(a, b),
            (Values::I64(a), Values::I64(b)) => extend!(a, b),
            (Values::I128(a), Values::I128(b)) => extend!(a, b),
            (Values::F32(a), Values::F32(b)) => extend!(a, b),
            (Values::F64(a), Values::F64(b)) => extend!(a, b),
            (Values::Datum(a), Values::Datum(b)) => extend!(a, b),
            (Values::Date32(a), Values::Date32(b)) => extend!(a, b),
            (Values::TimestampUs(a), Values::TimestampUs(b)) => extend!(a, b),
            (Values::Decimal128(a, s), Values::Decimal128(b, t)) if s == t => extend!(a, b),
            (Values::View(a), Values::View(b)) => {
                let base = a.data.len() as u64;
                if base + b.data.len() as u64 > u32::MAX as u64 {
                    return false;
                }
                a.views.reserve_exact(b.views.len());
                a.views.extend(b.views.iter().map(|&v| strings::rebase_view(v, base as u32)));
                extend!(a.data, &b.data);
            }
            (Values::Offsets(a), Values::Offsets(b)) => {
                let base = *a.offsets.last().expect("offsets start at 0") as i64;
                if base + b.data.len() as i64 > i32::MAX as i64 {
                    return false;
                }
                a.offsets.reserve_exact(b.len());
                a.offsets.extend(b.offsets[1..].iter().map(|&o| o + base as i32));
                extend!(a.data, &b.data);
            }
            (Values::Bits(a), Values::Bits(b)) => {
                let mut all = arrow_buffer::BooleanBufferBuilder::new(a.len() + b.len());
                all.append_buffer(a);
                all.append_buffer(b);
                *a = all.finish();
            }
            _ => return false,
        }
        self.validity.extend_from(&other.validity);
        true
    }

    /// A column whose every row is `value` (or NULL).
    pub fn splat(t: PhysType, len: usize, datum: Option<usize>) -> Column {
        let mut c = Column::new(t, len);
        match datum {
            None => c.validity.set_all(false),
            // Filled per type, not row by row: constants are splatted for
            // every batch (TPC-H Q1 spent 3% of its time here).
            Some(d) => match &mut c.values {
                Values::Bool(v) => v.fill((d != 0) as u8),
                Values::I16(v) => v.fill(d as i16),
                Values::I32(v) => v.fill(d as i32),
                Values::I64(v) => v.fill(d as i64),
                Values::I128(v) => v.fill(d as i64 as i128),
                Values::F32(v) => v.fill(f32::from_bits(d as u32)),
                Values::F64(v) => v.fill(f64::from_bits(d as u64)),
                Values::Datum(v) => v.fill(d),
                v => unreachable!("Column::new made {:?}, a postgres-layout column", v.phys_type()),
            },
        }
        c
    }
}

/// The row indexes `0..n` (a full selection).
pub fn full_selection(n: usize) -> Vec<RowIdx> {
    (0..n as RowIdx).collect()
}

/// A column of `picks.len()` rows: row `i` is row `r` of `sources[s]` for
/// `picks[i] = Some((s, r))`, NULL for `None` (the side an outer join
/// null-extends). The result has the physical type of the sources.
pub fn gather(phys: PhysType, sources: &[&Column], picks: &[Option<(u32, u16)>]) -> Column {
    let mut out = Column::new(phys, picks.len());
    for (i, pick) in picks.iter().enumerate() {
        match *pick {
            Some((s, r)) if sources[s as usize].is_valid(r as usize) => {
                out.values.copy_value(i, &sources[s as usize].values, r as usize);
            }
            _ => out.validity.set(i, false),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_picks_rows_across_sources_and_nulls() {
        let mut a = Column::new(PhysType::I32, 3);
        let mut b = Column::new(PhysType::I32, 2);
        for i in 0..3 {
            a.values.set_datum(i, (10 + i) as usize);
        }
        b.values.set_datum(0, 20);
        b.validity.set(1, false);
        let g = gather(PhysType::I32, &[&a, &b], &[Some((1, 0)), None, Some((0, 2)), Some((1, 1))]);
        assert_eq!(g.len(), 4);
        assert_eq!(g.values.datum(0), 20);
        assert!(!g.is_valid(1));
        assert_eq!(g.values.datum(2), 12);
        assert!(!g.is_valid(3), "a NULL source value stays NULL");
    }

    #[test]
    fn append_keeps_values_and_nulls_and_refuses_other_types() {
        let mut a = Column::new(PhysType::I64, 2);
        a.values.set_datum(0, 7);
        a.validity.set(1, false);
        let mut b = Column::new(PhysType::I64, 3);
        for i in 0..3 {
            b.values.set_datum(i, 100 + i);
        }
        b.validity.set(2, false);
        assert!(a.append(&b));
        assert_eq!(a.len(), 5);
        assert_eq!(a.validity.len(), 5);
        assert_eq!(a.values.datum(0), 7);
        assert!(!a.is_valid(1));
        assert_eq!((a.values.datum(2), a.values.datum(3)), (100, 101));
        assert!(a.is_valid(3) && !a.is_valid(4));
        let before = a.clone();
        assert!(!a.append(&Column::new(PhysType::I32, 1)), "an I32 column cannot extend an I64 one");
        assert_eq!(a, before);
    }

    #[test]
    fn datum_round_trip_for_every_physical_type() {
        for (t, d) in [
            (PhysType::Bool, 1usize),
            (PhysType::I16, (-5i64) as usize),
            (PhysType::I32, (i32::MIN as i64) as usize),
            (PhysType::I64, i64::MIN as usize),
            (PhysType::F32, (-0.0f32).to_bits() as usize),
            (PhysType::F64, f64::NAN.to_bits() as usize),
            (PhysType::Datum, 0xdead_beef),
        ] {
            let mut v = Values::new(t, 3);
            v.set_datum(1, d);
            assert_eq!(v.datum(1), d, "{t:?}");
            assert_eq!(v.phys_type(), t);
        }
    }

    #[test]
    fn phys_type_of_postgres_types() {
        assert_eq!(PhysType::of(1, true, true), PhysType::Bool);
        assert_eq!(PhysType::of(4, true, false), PhysType::I32);
        assert_eq!(PhysType::of(8, true, false), PhysType::I64);
        assert_eq!(PhysType::of(-1, false, false), PhysType::Datum);
        assert_eq!(PhysType::of(16, false, false), PhysType::Datum);
    }

    #[test]
    fn splat_null_and_value() {
        let c = Column::splat(PhysType::I32, 4, None);
        assert!((0..4).all(|i| !c.is_valid(i)));
        let c = Column::splat(PhysType::I32, 4, Some(7));
        assert!((0..4).all(|i| c.is_valid(i) && c.values.datum(i) == 7));
    }
}

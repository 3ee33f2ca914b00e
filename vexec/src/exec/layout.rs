//! Which input columns of a VecScan's batches are put in the arrow layout
//! (`vexec.batch_format` and the per-type layout settings, or the random
//! layout of `vexec.debug_random_layout`), read once at executor start.
//!
//! A column has an arrow form when its type is bool, date, timestamp,
//! timestamptz, numeric(p <= 38, s >= 0), text, varchar, bpchar or bytea
//! (`vexec_core::batch::layout`; varlenas as views or as offsets); other
//! types keep PostgreSQL's Datums in both layouts.

use pgrx::pg_sys;
use vexec_core::batch::layout::ArrowKind;

use crate::settings::{self, BatchFormat, BoolLayout, NumericLayout, TemporalLayout, VarlenaLayout};

/// The arrow representation of a column of type `typid`/`typmod`, if it
/// has one (varlenas: views, or offsets where the settings say so).
pub fn arrow_kind(typid: pg_sys::Oid, typmod: i32) -> Option<ArrowKind> {
    match typid {
        pg_sys::TEXTOID | pg_sys::VARCHAROID | pg_sys::BPCHAROID | pg_sys::BYTEAOID => Some(ArrowKind::View),
        pg_sys::BOOLOID => Some(ArrowKind::Bits),
        pg_sys::DATEOID => Some(ArrowKind::Date32),
        pg_sys::TIMESTAMPOID | pg_sys::TIMESTAMPTZOID => Some(ArrowKind::TimestampUs),
        pg_sys::NUMERICOID if typmod >= pg_sys::VARHDRSZ as i32 => {
            // numeric.c's typmod: precision in the high 16 bits, the scale an
            // 11-bit signed number in the low ones (negative since PostgreSQL 15).
            let t = typmod - pg_sys::VARHDRSZ as i32;
            let precision = (t >> 16) & 0xffff;
            let scale = ((t & 0x7ff) ^ 1024) - 1024;
            (precision <= 38 && (0..=38).contains(&scale))
                .then_some(ArrowKind::Decimal128 { scale: scale as u16 })
        }
        _ => None,
    }
}

/// The layout settings in force, as each input column's choice.
pub struct LayoutChoice {
    /// Per input column: the arrow representation the settings put it in.
    wanted: Vec<Option<ArrowKind>>,
    /// Per input column: its arrow representation, for the random layout.
    possible: Vec<Option<ArrowKind>>,
    /// The random layout's generator state (0: off).
    random: u64,
}

impl LayoutChoice {
    /// The choice for the attributes `attnums` of a relation whose tuple
    /// descriptor is `desc` (system attributes have no arrow form), from
    /// the current settings.
    ///
    /// # Safety
    /// `desc` is a valid tuple descriptor with those attributes.
    pub unsafe fn for_attributes(desc: pg_sys::TupleDesc, attnums: &[i16]) -> LayoutChoice {
        let types: Vec<(pg_sys::Oid, i32)> = attnums
            .iter()
            .map(|&n| match n {
                // SAFETY: this function's contract: n is an attribute of desc.
                n if n > 0 => unsafe {
                    let att = pg_sys::TupleDescAttr(desc, n as i32 - 1);
                    ((*att).atttypid, (*att).atttypmod)
                },
                _ => (pg_sys::InvalidOid, -1),
            })
            .collect();
        Self::from_settings(&types)
    }

    /// The choice for input columns of types `types` (type OID, typmod),
    /// from the current settings.
    fn from_settings(types: &[(pg_sys::Oid, i32)]) -> LayoutChoice {
        let arrow = settings::BATCH_FORMAT.get() == BatchFormat::Arrow;
        let bits = match settings::BOOL_LAYOUT.get() {
            BoolLayout::Auto => arrow,
            l => l == BoolLayout::Bit,
        };
        let unix = match settings::TEMPORAL_LAYOUT.get() {
            TemporalLayout::Auto => arrow,
            l => l == TemporalLayout::Unix,
        };
        let decimal = match settings::NUMERIC_LAYOUT.get() {
            NumericLayout::Auto => arrow,
            l => l == NumericLayout::Decimal128,
        };
        let varlena = match settings::VARLENA_LAYOUT.get() {
            VarlenaLayout::Auto if arrow => Some(ArrowKind::View),
            VarlenaLayout::Auto | VarlenaLayout::Datum => None,
            VarlenaLayout::View => Some(ArrowKind::View),
            VarlenaLayout::Offsets => Some(ArrowKind::Offsets),
        };
        let possible: Vec<Option<ArrowKind>> = types.iter().map(|&(t, m)| arrow_kind(t, m)).collect();
        let wanted = possible
            .iter()
            .map(|k| match k {
                Some(ArrowKind::View | ArrowKind::Offsets) => varlena,
                k => k.filter(|k| match k {
                    ArrowKind::Bits => bits,
                    ArrowKind::Date32 | ArrowKind::TimestampUs => unix,
                    ArrowKind::Decimal128 { .. } => decimal,
                    ArrowKind::View | ArrowKind::Offsets => unreachable!("matched above"),
                }),
            })
            .collect();
        let seed = settings::DEBUG_RANDOM_LAYOUT.get() as u64;
        LayoutChoice {
            wanted,
            possible,
            random: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | (seed != 0) as u64,
        }
    }

    /// Input column `i`'s arrow representation, if its type has one.
    pub fn kind_of(&self, i: usize) -> Option<ArrowKind> {
        self.possible[i]
    }

    /// Whether any column may be put in the arrow layout.
    pub fn any(&self) -> bool {
        if self.random != 0 {
            self.possible.iter().any(Option::is_some)
        } else {
            self.wanted.iter().any(Option::is_some)
        }
    }

    /// The layout of input column `i` in the next batch: its arrow
    /// representation, or None for the postgres layout.
    pub fn next(&mut self, i: usize) -> Option<ArrowKind> {
        if self.random == 0 {
            return self.wanted[i];
        }
        // xorshift64: a reproducible sequence per seed. Varlenas: one bit
        // for arrow or not, one for views or offsets.
        self.random ^= self.random << 13;
        self.random ^= self.random >> 7;
        self.random ^= self.random << 17;
        match self.possible[i].filter(|_| self.random & 1 == 1) {
            Some(ArrowKind::View) if self.random & 2 == 2 => Some(ArrowKind::Offsets),
            k => k,
        }
    }

    /// The layouts in force for the columns `used` (the ones a kernel
    /// reads), for EXPLAIN.
    pub fn describe(&self, used: &[bool]) -> String {
        let name = |k: &ArrowKind| match k {
            ArrowKind::Bits => "bit",
            ArrowKind::Date32 => "date32",
            ArrowKind::TimestampUs => "timestamp(us)",
            ArrowKind::Decimal128 { .. } => "decimal128",
            ArrowKind::View => "view",
            ArrowKind::Offsets => "offsets",
        };
        if self.random != 0 {
            return "random per column and batch".into();
        }
        let mut kinds: Vec<&str> = self
            .wanted
            .iter()
            .zip(used)
            .filter(|(_, &u)| u)
            .filter_map(|(k, _)| k.as_ref())
            .map(name)
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        if kinds.is_empty() {
            "postgres".into()
        } else {
            format!("arrow ({})", kinds.join(", "))
        }
    }
}

//! Which Arrow type a PostgreSQL column becomes. Every field carries the
//! PostgreSQL type in its metadata (`pg.type`, `pg.typmod`), so a client can
//! tell `varchar(10)` from `text` or `timestamp` from `timestamptz`.

use std::collections::HashMap;

use arrow_schema::{DataType, Field, IntervalUnit, TimeUnit};

/// Built-in type OIDs (pg_type.dat; fixed across versions).
mod oid {
    pub const BOOL: u32 = 16;
    pub const BYTEA: u32 = 17;
    pub const NAME: u32 = 19;
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const TEXT: u32 = 25;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const BPCHAR: u32 = 1042;
    pub const VARCHAR: u32 = 1043;
    pub const DATE: u32 = 1082;
    pub const TIMESTAMP: u32 = 1114;
    pub const TIMESTAMPTZ: u32 = 1184;
    pub const NUMERIC: u32 = 1700;
    pub const JSON: u32 = 114;
    pub const JSONB: u32 = 3802;
    pub const TIME: u32 = 1083;
    pub const INTERVAL: u32 = 1186;
    pub const UUID: u32 = 2950;
}

/// Arrow's Decimal128 holds at most 38 digits.
pub const DECIMAL128_MAX_PRECISION: i32 = 38;

/// The Arrow extension name of a numeric without a precision Decimal128
/// can hold (no typmod, or more than 38 digits): its text, exact.
pub const NUMERIC_TEXT_EXTENSION: &str = "vexec.numeric";

/// How one column's values are carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    Bool,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    /// text, varchar, bpchar (with its padding, as PostgreSQL outputs it), name.
    Utf8,
    Binary,
    /// Days since 1970-01-01.
    Date32,
    /// Microseconds since 1970-01-01 00:00; `utc` for timestamptz.
    TimestampMicros {
        utc: bool,
    },
    /// numeric(p, s) with p <= 38: the value times 10^s.
    Decimal128 {
        precision: u8,
        scale: i8,
    },
    /// Any other numeric: PostgreSQL's text of it (extension `vexec.numeric`).
    NumericText,
    /// 16 bytes (Arrow's canonical extension `arrow.uuid`).
    Uuid,
    /// time: microseconds since midnight.
    Time64Micros,
    /// interval: months, days and nanoseconds, as PostgreSQL keeps them apart.
    IntervalMonthDayNano,
    /// json and jsonb: their text (Arrow's canonical extension `arrow.json`).
    Json,
    /// An enum's label.
    EnumLabel,
}

/// A result column as PostgreSQL describes it.
#[derive(Clone, Debug)]
pub struct PgColumn {
    pub name: String,
    pub type_oid: u32,
    pub typmod: i32,
    /// format_type()'s name, kept in the field's metadata.
    pub type_name: String,
}

impl ColumnType {
    /// The Arrow representation of a PostgreSQL type, or why there is none
    /// yet (the caller reports it with the column's name).
    pub fn of(type_oid: u32, typmod: i32) -> Result<ColumnType, String> {
        Ok(match type_oid {
            oid::BOOL => ColumnType::Bool,
            oid::INT2 => ColumnType::Int16,
            oid::INT4 => ColumnType::Int32,
            oid::INT8 => ColumnType::Int64,
            oid::FLOAT4 => ColumnType::Float32,
            oid::FLOAT8 => ColumnType::Float64,
            oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME => ColumnType::Utf8,
            oid::BYTEA => ColumnType::Binary,
            oid::DATE => ColumnType::Date32,
            oid::TIMESTAMP => ColumnType::TimestampMicros { utc: false },
            oid::TIMESTAMPTZ => ColumnType::TimestampMicros { utc: true },
            oid::NUMERIC => match numeric_typmod(typmod) {
                Some((p, s)) if p <= DECIMAL128_MAX_PRECISION => {
                    ColumnType::Decimal128 { precision: p as u8, scale: s as i8 }
                }
                _ => ColumnType::NumericText,
            },
            oid::UUID => ColumnType::Uuid,
            oid::TIME => ColumnType::Time64Micros,
            oid::INTERVAL => ColumnType::IntervalMonthDayNano,
            oid::JSON | oid::JSONB => ColumnType::Json,
            _ => return Err(format!("type OID {type_oid} has no Arrow mapping yet")),
        })
    }

    pub fn data_type(self) -> DataType {
        match self {
            ColumnType::Bool => DataType::Boolean,
            ColumnType::Int16 => DataType::Int16,
            ColumnType::Int32 => DataType::Int32,
            ColumnType::Int64 => DataType::Int64,
            ColumnType::Float32 => DataType::Float32,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Utf8 | ColumnType::NumericText | ColumnType::Json | ColumnType::EnumLabel => {
                DataType::Utf8
            }
            ColumnType::Uuid => DataType::FixedSizeBinary(16),
            ColumnType::Time64Micros => DataType::Time64(TimeUnit::Microsecond),
            ColumnType::IntervalMonthDayNano => DataType::Interval(IntervalUnit::MonthDayNano),
            ColumnType::Binary => DataType::Binary,
            ColumnType::Date32 => DataType::Date32,
            ColumnType::TimestampMicros { utc } => {
                DataType::Timestamp(TimeUnit::Microsecond, utc.then(|| "UTC".into()))
            }
            ColumnType::Decimal128 { precision, scale } => DataType::Decimal128(precision, scale),
        }
    }

    /// The Arrow field of a column: nullable, with the PostgreSQL type in
    /// its metadata.
    pub fn field(self, col: &PgColumn) -> Field {
        let mut meta = HashMap::from([
            ("pg.type".to_string(), col.type_name.clone()),
            ("pg.typmod".to_string(), col.typmod.to_string()),
        ]);
        let extension = match self {
            ColumnType::NumericText => Some(NUMERIC_TEXT_EXTENSION),
            ColumnType::Uuid => Some("arrow.uuid"),
            ColumnType::Json => Some("arrow.json"),
            _ => None,
        };
        if let Some(name) = extension {
            meta.insert("ARROW:extension:name".into(), name.into());
        }
        Field::new(&col.name, self.data_type(), true).with_metadata(meta)
    }
}

/// numeric's typmod: ((precision << 16) | (scale & 0x7ff)) + 4, the scale an
/// 11-bit signed number (numeric(3, -2) rounds to hundreds); -1 when none.
pub fn numeric_typmod(typmod: i32) -> Option<(i32, i32)> {
    if typmod < 4 {
        return None;
    }
    let t = typmod - 4;
    let precision = (t >> 16) & 0xffff;
    let scale = ((t & 0x7ff) ^ 0x400) - 0x400;
    Some((precision, scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typmod(p: i32, s: i32) -> i32 {
        ((p << 16) | (s & 0x7ff)) + 4
    }

    #[test]
    fn numeric_typmods() {
        assert_eq!(numeric_typmod(-1), None);
        assert_eq!(numeric_typmod(typmod(15, 2)), Some((15, 2)));
        assert_eq!(numeric_typmod(typmod(3, -2)), Some((3, -2)));
        assert_eq!(numeric_typmod(typmod(1000, 1000)), Some((1000, 1000)));
        assert_eq!(
            ColumnType::of(oid::NUMERIC, typmod(38, 4)),
            Ok(ColumnType::Decimal128 { precision: 38, scale: 4 })
        );
        assert_eq!(ColumnType::of(oid::NUMERIC, typmod(39, 4)), Ok(ColumnType::NumericText));
        assert_eq!(ColumnType::of(oid::NUMERIC, -1), Ok(ColumnType::NumericText));
    }

    #[test]
    fn fields_carry_the_postgresql_type() {
        let col = PgColumn {
            name: "ts".into(),
            type_oid: oid::TIMESTAMPTZ,
            typmod: -1,
            type_name: "timestamptz".into(),
        };
        let t = ColumnType::of(col.type_oid, col.typmod).unwrap();
        let f = t.field(&col);
        assert_eq!(f.data_type(), &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())));
        assert_eq!(f.metadata()["pg.type"], "timestamptz");
        assert!(f.is_nullable());
        let n =
            PgColumn { name: "n".into(), type_oid: oid::NUMERIC, typmod: -1, type_name: "numeric".into() };
        assert_eq!(ColumnType::NumericText.field(&n).metadata()["ARROW:extension:name"], "vexec.numeric");
        assert!(ColumnType::of(600, -1).is_err()); // point
        let u = PgColumn { name: "u".into(), type_oid: oid::UUID, typmod: -1, type_name: "uuid".into() };
        let uf = ColumnType::of(oid::UUID, -1).unwrap().field(&u);
        assert_eq!(
            (uf.data_type(), uf.metadata()["ARROW:extension:name"].as_str()),
            (&DataType::FixedSizeBinary(16), "arrow.uuid")
        );
        assert_eq!(ColumnType::of(oid::JSONB, -1), Ok(ColumnType::Json));
    }
}

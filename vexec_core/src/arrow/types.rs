//! Which Arrow type a PostgreSQL column becomes (docs/arrow.md has the
//! table). Every field carries the PostgreSQL type in its metadata
//! (`pg.type`, `pg.typmod`, and `pg.collation` for text), so a client can tell `varchar(10)` from `text`
//! or `timestamp` from `timestamptz`.
//!
//! Built-in scalar types are mapped here from their OIDs; arrays, composites,
//! enums and domains need the catalog, so the server half builds those
//! (`ColumnType::List`, `ColumnType::Struct`, ...) from what it looks up.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, IntervalUnit, TimeUnit};

/// Built-in type OIDs (pg_type.dat; fixed across versions).
mod oid {
    pub const BOOL: u32 = 16;
    pub const BYTEA: u32 = 17;
    pub const NAME: u32 = 19;
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const TEXT: u32 = 25;
    pub const OID: u32 = 26;
    pub const XID: u32 = 28;
    pub const CID: u32 = 29;
    pub const JSON: u32 = 114;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const BPCHAR: u32 = 1042;
    pub const VARCHAR: u32 = 1043;
    pub const DATE: u32 = 1082;
    pub const TIME: u32 = 1083;
    pub const TIMESTAMP: u32 = 1114;
    pub const TIMESTAMPTZ: u32 = 1184;
    pub const INTERVAL: u32 = 1186;
    pub const TIMETZ: u32 = 1266;
    pub const NUMERIC: u32 = 1700;
    pub const UUID: u32 = 2950;
    pub const JSONB: u32 = 3802;
    pub const XID8: u32 = 5069;
}

/// Arrow's Decimal128 holds at most 38 digits.
pub const DECIMAL128_MAX_PRECISION: i32 = 38;

/// The Arrow extension name of a numeric without a precision Decimal128
/// can hold (no typmod, or more than 38 digits): its text, exact.
pub const NUMERIC_TEXT_EXTENSION: &str = "vexec.numeric";
/// The extension name of a type Arrow has no type for (geometric types,
/// network addresses, ranges, money, bit strings, ...): PostgreSQL's own
/// text of the value (its output function), which its input function
/// reads back; `pg.type` says which type it is.
pub const PG_TEXT_EXTENSION: &str = "vexec.pg_text";
/// The extension name of timetz: a struct of the local time and its UTC
/// offset.
pub const TIMETZ_EXTENSION: &str = "vexec.timetz";

/// How one column's values are carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnType {
    Bool,
    Int16,
    Int32,
    Int64,
    /// oid, xid, cid: unsigned 32-bit.
    UInt32,
    /// xid8.
    UInt64,
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
    /// timetz: Struct { time: Time64(µs), utc_offset: Int32 seconds east of
    /// UTC } (extension `vexec.timetz`).
    TimeTz,
    /// interval: months, days and nanoseconds, as PostgreSQL keeps them apart.
    IntervalMonthDayNano,
    /// json and jsonb: their text (Arrow's canonical extension `arrow.json`).
    Json,
    /// An enum's label.
    EnumLabel,
    /// PostgreSQL's text of a value of a type Arrow has no type for
    /// (extension `vexec.pg_text`).
    PgText,
    /// A one-dimensional array: its elements (named `item`).
    List(Box<Nested>),
    /// A composite: its attributes.
    Struct(Vec<Nested>),
}

/// A list's element or a struct's attribute: its field name, PostgreSQL
/// type (format_type's name, kept in the field's metadata as for columns)
/// and mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nested {
    pub name: String,
    pub pg_type: String,
    pub kind: ColumnType,
}

impl Nested {
    /// The nested field: nullable, with `pg.type` and the extension name
    /// where there is one.
    pub fn field(&self) -> Field {
        let mut meta = HashMap::from([("pg.type".to_string(), self.pg_type.clone())]);
        if let Some(ext) = self.kind.extension() {
            meta.insert("ARROW:extension:name".into(), ext.into());
        }
        Field::new(&self.name, self.kind.data_type(), true).with_metadata(meta)
    }
}

/// A result column as PostgreSQL describes it.
#[derive(Clone, Debug)]
pub struct PgColumn {
    pub name: String,
    pub type_oid: u32,
    pub typmod: i32,
    /// format_type()'s name, kept in the field's metadata.
    pub type_name: String,
    /// The column's collation (for text types), kept in the metadata too.
    pub collation: Option<String>,
}

impl ColumnType {
    /// The Arrow representation of a built-in scalar type; None for types
    /// the caller maps from the catalog (arrays, composites, enums,
    /// domains) or as their text ([`ColumnType::PgText`]).
    pub fn of_scalar(type_oid: u32, typmod: i32) -> Option<ColumnType> {
        Some(match type_oid {
            oid::BOOL => ColumnType::Bool,
            oid::INT2 => ColumnType::Int16,
            oid::INT4 => ColumnType::Int32,
            oid::INT8 => ColumnType::Int64,
            oid::OID | oid::XID | oid::CID => ColumnType::UInt32,
            oid::XID8 => ColumnType::UInt64,
            oid::FLOAT4 => ColumnType::Float32,
            oid::FLOAT8 => ColumnType::Float64,
            oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME => ColumnType::Utf8,
            oid::BYTEA => ColumnType::Binary,
            oid::DATE => ColumnType::Date32,
            oid::TIMESTAMP => ColumnType::TimestampMicros { utc: false },
            oid::TIMESTAMPTZ => ColumnType::TimestampMicros { utc: true },
            oid::NUMERIC => match numeric_typmod(typmod) {
                Some((p, s)) if (1..=DECIMAL128_MAX_PRECISION).contains(&p) => {
                    ColumnType::Decimal128 { precision: p as u8, scale: s as i8 }
                }
                _ => ColumnType::NumericText,
            },
            oid::UUID => ColumnType::Uuid,
            oid::TIME => ColumnType::Time64Micros,
            oid::TIMETZ => ColumnType::TimeTz,
            oid::INTERVAL => ColumnType::IntervalMonthDayNano,
            oid::JSON | oid::JSONB => ColumnType::Json,
            _ => return None,
        })
    }

    pub fn data_type(&self) -> DataType {
        match self {
            ColumnType::Bool => DataType::Boolean,
            ColumnType::Int16 => DataType::Int16,
            ColumnType::Int32 => DataType::Int32,
            ColumnType::Int64 => DataType::Int64,
            ColumnType::UInt32 => DataType::UInt32,
            ColumnType::UInt64 => DataType::UInt64,
            ColumnType::Float32 => DataType::Float32,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Utf8
            | ColumnType::NumericText
            | ColumnType::Json
            | ColumnType::EnumLabel
            | ColumnType::PgText => DataType::Utf8,
            ColumnType::Uuid => DataType::FixedSizeBinary(16),
            ColumnType::Time64Micros => DataType::Time64(TimeUnit::Microsecond),
            ColumnType::TimeTz => DataType::Struct(timetz_fields()),
            ColumnType::IntervalMonthDayNano => DataType::Interval(IntervalUnit::MonthDayNano),
            ColumnType::Binary => DataType::Binary,
            ColumnType::Date32 => DataType::Date32,
            ColumnType::TimestampMicros { utc } => {
                DataType::Timestamp(TimeUnit::Microsecond, utc.then(|| "UTC".into()))
            }
            ColumnType::Decimal128 { precision, scale } => DataType::Decimal128(*precision, *scale),
            ColumnType::List(element) => DataType::List(Arc::new(element.field())),
            ColumnType::Struct(attrs) => DataType::Struct(attrs.iter().map(Nested::field).collect()),
        }
    }

    fn extension(&self) -> Option<&'static str> {
        match self {
            ColumnType::NumericText => Some(NUMERIC_TEXT_EXTENSION),
            ColumnType::Uuid => Some("arrow.uuid"),
            ColumnType::Json => Some("arrow.json"),
            ColumnType::PgText => Some(PG_TEXT_EXTENSION),
            ColumnType::TimeTz => Some(TIMETZ_EXTENSION),
            _ => None,
        }
    }

    /// The Arrow field of a column: nullable, with the PostgreSQL type in
    /// its metadata.
    pub fn field(&self, col: &PgColumn) -> Field {
        let mut meta = HashMap::from([
            ("pg.type".to_string(), col.type_name.clone()),
            ("pg.typmod".to_string(), col.typmod.to_string()),
        ]);
        if let Some(name) = self.extension() {
            meta.insert("ARROW:extension:name".into(), name.into());
        }
        if let Some(c) = &col.collation {
            meta.insert("pg.collation".into(), c.clone());
        }
        Field::new(&col.name, self.data_type(), true).with_metadata(meta)
    }
}

/// The fields of a timetz struct.
pub fn timetz_fields() -> Fields {
    Fields::from(vec![
        Field::new("time", DataType::Time64(TimeUnit::Microsecond), false),
        Field::new("utc_offset", DataType::Int32, false),
    ])
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
            ColumnType::of_scalar(oid::NUMERIC, typmod(38, 4)),
            Some(ColumnType::Decimal128 { precision: 38, scale: 4 })
        );
        assert_eq!(ColumnType::of_scalar(oid::NUMERIC, typmod(39, 4)), Some(ColumnType::NumericText));
        assert_eq!(ColumnType::of_scalar(oid::NUMERIC, -1), Some(ColumnType::NumericText));
    }

    #[test]
    fn fields_carry_the_postgresql_type() {
        let col = PgColumn {
            name: "ts".into(),
            type_oid: oid::TIMESTAMPTZ,
            typmod: -1,
            type_name: "timestamptz".into(),
            collation: None,
        };
        let t = ColumnType::of_scalar(col.type_oid, col.typmod).unwrap();
        let f = t.field(&col);
        assert_eq!(f.data_type(), &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())));
        assert_eq!(f.metadata()["pg.type"], "timestamptz");
        assert!(f.is_nullable());
        let n = PgColumn {
            name: "n".into(),
            type_oid: oid::NUMERIC,
            typmod: -1,
            type_name: "numeric".into(),
            collation: None,
        };
        assert_eq!(ColumnType::NumericText.field(&n).metadata()["ARROW:extension:name"], "vexec.numeric");
        assert_eq!(ColumnType::of_scalar(600, -1), None); // point: the server maps it as PgText
        let u = PgColumn {
            name: "u".into(),
            type_oid: oid::UUID,
            typmod: -1,
            type_name: "uuid".into(),
            collation: Some("C".into()),
        };
        let uf = ColumnType::of_scalar(oid::UUID, -1).unwrap().field(&u);
        assert_eq!(
            (uf.data_type(), uf.metadata()["ARROW:extension:name"].as_str()),
            (&DataType::FixedSizeBinary(16), "arrow.uuid")
        );
        assert_eq!(uf.metadata()["pg.collation"], "C");
        assert!(!f.metadata().contains_key("pg.collation"));
        assert_eq!(ColumnType::of_scalar(oid::JSONB, -1), Some(ColumnType::Json));
        assert_eq!(ColumnType::of_scalar(oid::OID, -1), Some(ColumnType::UInt32));
    }

    #[test]
    fn nested_types() {
        let nested =
            |name: &str, pg_type: &str, kind| Nested { name: name.into(), pg_type: pg_type.into(), kind };
        let t = ColumnType::List(Box::new(nested(
            "item",
            "pair",
            ColumnType::Struct(vec![
                nested("a", "integer", ColumnType::Int32),
                nested("j", "jsonb", ColumnType::Json),
            ]),
        )));
        let DataType::List(item) = t.data_type() else { panic!("a list") };
        let DataType::Struct(fields) = item.data_type() else { panic!("of structs") };
        assert_eq!(fields.len(), 2);
        assert_eq!(fields[1].metadata()["ARROW:extension:name"], "arrow.json");
        assert_eq!((item.name().as_str(), item.metadata()["pg.type"].as_str()), ("item", "pair"));
        assert_eq!(fields[0].metadata()["pg.type"], "integer");
        assert_eq!(ColumnType::TimeTz.data_type(), DataType::Struct(timetz_fields()));
    }
}

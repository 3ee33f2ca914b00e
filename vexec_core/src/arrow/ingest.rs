//! Arrow into PostgreSQL, the pure half: which PostgreSQL type an Arrow
//! column arrives as (`source_of`), and values PostgreSQL counts
//! differently, converted exactly or refused (never a silently wrong value).
//! The server half is `vexec/src/ingest/`; the target table's column types
//! then apply PostgreSQL's own assignment casts.

use std::fmt;

use arrow_schema::{DataType, Field, TimeUnit};

use super::convert::{DAY_MICROS, PG_EPOCH_DAYS, PG_EPOCH_MICROS};

/// The PostgreSQL type an Arrow column arrives as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    /// Decimal128/Decimal256 (as text of the exact value), UInt64.
    Numeric,
    Text,
    Bytea,
    Uuid,
    Date,
    Timestamp,
    TimestampTz,
    Time,
    /// A string column whose field names its PostgreSQL type (`pg.type`, as
    /// vexec's egress writes it): read with that type's input function.
    Typed(String),
}

impl Source {
    /// The type's SQL name, for a column definition list.
    pub fn sql_name(&self) -> &str {
        match self {
            Source::Bool => "boolean",
            Source::Int2 => "smallint",
            Source::Int4 => "integer",
            Source::Int8 => "bigint",
            Source::Float4 => "real",
            Source::Float8 => "double precision",
            Source::Numeric => "numeric",
            Source::Text => "text",
            Source::Bytea => "bytea",
            Source::Uuid => "uuid",
            Source::Date => "date",
            Source::Timestamp => "timestamp",
            Source::TimestampTz => "timestamptz",
            Source::Time => "time",
            Source::Typed(name) => name,
        }
    }
}

/// Where an Arrow column (or value) cannot go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IngestError {
    /// An Arrow type vexec does not read (0A000).
    Unsupported(String),
    /// A date, time or timestamp outside PostgreSQL's range (22008).
    OutOfRange(&'static str),
    /// A value below PostgreSQL's microsecond resolution (22008).
    Resolution(&'static str),
    /// A value Arrow's own rules forbid (22P03).
    Invalid(String),
}

impl fmt::Display for IngestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IngestError::Unsupported(t) => {
                write!(f, "Arrow type {t} has no PostgreSQL type in vexec's ingest")
            }
            IngestError::OutOfRange(what) => write!(f, "{what} out of range"),
            IngestError::Resolution(what) => {
                write!(f, "{what} has nanoseconds; PostgreSQL keeps microseconds")
            }
            IngestError::Invalid(why) => write!(f, "invalid Arrow value: {why}"),
        }
    }
}

/// The PostgreSQL type `field` arrives as.
pub fn source_of(field: &Field) -> Result<Source, IngestError> {
    let typed = field.metadata().get("pg.type").filter(|t| !t.is_empty());
    let extension = field.metadata().get("ARROW:extension:name").map(String::as_str);
    Ok(match field.data_type() {
        DataType::Boolean => Source::Bool,
        DataType::Int8 | DataType::Int16 | DataType::UInt8 => Source::Int2,
        DataType::Int32 | DataType::UInt16 => Source::Int4,
        DataType::Int64 | DataType::UInt32 => Source::Int8,
        DataType::UInt64 => Source::Numeric,
        DataType::Float16 | DataType::Float32 => Source::Float4,
        DataType::Float64 => Source::Float8,
        DataType::Decimal128(_, _) | DataType::Decimal256(_, _) => Source::Numeric,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => match typed {
            Some(t) => Source::Typed(t.clone()),
            None => Source::Text,
        },
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Source::Bytea,
        DataType::FixedSizeBinary(16) if extension == Some("arrow.uuid") => Source::Uuid,
        DataType::FixedSizeBinary(_) => Source::Bytea,
        DataType::Date32 | DataType::Date64 => Source::Date,
        DataType::Timestamp(_, None) => Source::Timestamp,
        DataType::Timestamp(_, Some(_)) => Source::TimestampTz,
        DataType::Time32(_) | DataType::Time64(_) => Source::Time,
        other => return Err(IngestError::Unsupported(other.to_string())),
    })
}

/// PostgreSQL's date range (days since 2000-01-01): 4714-11-24 BC up to
/// but not including 5874898-01-01.
const PG_DATE_MIN: i64 = -2_451_545;
const PG_DATE_END: i64 = 2_147_483_494 - 2_451_545;
/// PostgreSQL's timestamp range (microseconds since 2000-01-01).
const PG_TIMESTAMP_MIN: i64 = -211_813_488_000_000_000;
const PG_TIMESTAMP_END: i64 = 9_223_371_331_200_000_000;

/// Arrow's Date32 (days since 1970) as a PostgreSQL date.
pub fn date_of_days(unix_days: i64) -> Result<i32, IngestError> {
    let d = unix_days - PG_EPOCH_DAYS as i64;
    if (PG_DATE_MIN..PG_DATE_END).contains(&d) {
        Ok(d as i32)
    } else {
        Err(IngestError::OutOfRange("date"))
    }
}

/// Arrow's Date64 (milliseconds since 1970, a whole number of days by
/// Arrow's rules) as a PostgreSQL date.
pub fn date_of_millis(ms: i64) -> Result<i32, IngestError> {
    const DAY_MS: i64 = 86_400_000;
    if ms % DAY_MS != 0 {
        return Err(IngestError::Invalid(format!("Date64 {ms} is not a whole number of days")));
    }
    date_of_days(ms / DAY_MS)
}

/// A count of `unit`s as microseconds, exactly.
fn micros(v: i64, unit: TimeUnit, what: &'static str) -> Result<i64, IngestError> {
    match unit {
        TimeUnit::Second => v.checked_mul(1_000_000).ok_or(IngestError::OutOfRange(what)),
        TimeUnit::Millisecond => v.checked_mul(1_000).ok_or(IngestError::OutOfRange(what)),
        TimeUnit::Microsecond => Ok(v),
        TimeUnit::Nanosecond if v % 1_000 == 0 => Ok(v / 1_000),
        TimeUnit::Nanosecond => Err(IngestError::Resolution(what)),
    }
}

/// Arrow's Timestamp (`unit`s since 1970) as a PostgreSQL timestamp.
pub fn timestamp_of(v: i64, unit: TimeUnit) -> Result<i64, IngestError> {
    let pg = micros(v, unit, "timestamp")?
        .checked_sub(PG_EPOCH_MICROS)
        .ok_or(IngestError::OutOfRange("timestamp"))?;
    if (PG_TIMESTAMP_MIN..PG_TIMESTAMP_END).contains(&pg) {
        Ok(pg)
    } else {
        Err(IngestError::OutOfRange("timestamp"))
    }
}

/// Arrow's Time32/Time64 (`unit`s since midnight) as a PostgreSQL time.
pub fn time_of(v: i64, unit: TimeUnit) -> Result<i64, IngestError> {
    let us = micros(v, unit, "time")?;
    if (0..=DAY_MICROS).contains(&us) {
        Ok(us)
    } else {
        Err(IngestError::OutOfRange("time"))
    }
}

/// The exact decimal text of `v` scaled by 10^-`scale` (numeric input).
pub fn decimal_text(v: &str, scale: i8) -> String {
    let (sign, digits) = match v.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", v),
    };
    if scale <= 0 {
        let zeros = if digits == "0" { 0 } else { (-scale) as usize };
        return format!("{sign}{digits}{}", "0".repeat(zeros));
    }
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn arrow_types_arrive_as_postgres_types() {
        let f = |t: DataType| Field::new("c", t, true);
        assert_eq!(source_of(&f(DataType::Int8)), Ok(Source::Int2));
        assert_eq!(source_of(&f(DataType::UInt32)), Ok(Source::Int8));
        assert_eq!(source_of(&f(DataType::UInt64)), Ok(Source::Numeric));
        assert_eq!(source_of(&f(DataType::Utf8View)), Ok(Source::Text));
        assert_eq!(
            source_of(&f(DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())))),
            Ok(Source::TimestampTz)
        );
        assert_eq!(source_of(&f(DataType::FixedSizeBinary(16))), Ok(Source::Bytea));
        let uuid = f(DataType::FixedSizeBinary(16))
            .with_metadata(HashMap::from([("ARROW:extension:name".into(), "arrow.uuid".into())]));
        assert_eq!(source_of(&uuid), Ok(Source::Uuid));
        let typed = f(DataType::Utf8).with_metadata(HashMap::from([("pg.type".into(), "inet".into())]));
        assert_eq!(source_of(&typed), Ok(Source::Typed("inet".into())));
        assert!(matches!(
            source_of(&f(DataType::Duration(TimeUnit::Second))),
            Err(IngestError::Unsupported(_))
        ));
    }

    #[test]
    fn epochs_shift_exactly_and_ranges_hold() {
        assert_eq!(date_of_days(10_957), Ok(0));
        assert_eq!(date_of_days(0), Ok(-10_957));
        assert_eq!(date_of_days(-2_451_545 + 10_957), Ok(-2_451_545));
        assert!(date_of_days(-2_451_546 + 10_957).is_err());
        assert_eq!(date_of_millis(86_400_000), Ok(1 - 10_957));
        assert!(matches!(date_of_millis(1), Err(IngestError::Invalid(_))));
        assert_eq!(timestamp_of(946_684_800, TimeUnit::Second), Ok(0));
        assert_eq!(timestamp_of(-1, TimeUnit::Microsecond), Ok(-PG_EPOCH_MICROS - 1));
        assert_eq!(timestamp_of(1_500, TimeUnit::Nanosecond), Err(IngestError::Resolution("timestamp")));
        assert_eq!(timestamp_of(2_000, TimeUnit::Nanosecond), Ok(2 - PG_EPOCH_MICROS));
        assert_eq!(timestamp_of(i64::MAX, TimeUnit::Second), Err(IngestError::OutOfRange("timestamp")));
        assert_eq!(timestamp_of(i64::MIN, TimeUnit::Microsecond), Err(IngestError::OutOfRange("timestamp")));
        assert_eq!(timestamp_of(i64::MAX, TimeUnit::Microsecond), Ok(i64::MAX - PG_EPOCH_MICROS));
        assert_eq!(time_of(86_400, TimeUnit::Second), Ok(DAY_MICROS));
        assert!(time_of(-1, TimeUnit::Millisecond).is_err());
    }

    #[test]
    fn decimals_keep_every_digit() {
        assert_eq!(decimal_text("12345", 2), "123.45");
        assert_eq!(decimal_text("-5", 3), "-0.005");
        assert_eq!(decimal_text("0", 2), "0.00");
        assert_eq!(decimal_text("12", -2), "1200");
        assert_eq!(decimal_text("0", -2), "0");
        assert_eq!(
            decimal_text("-99999999999999999999999999999999999999", 10),
            "-9999999999999999999999999999.9999999999"
        );
    }
}

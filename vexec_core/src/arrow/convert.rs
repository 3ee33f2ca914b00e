//! Values PostgreSQL and Arrow count differently, converted exactly, or an
//! error where Arrow has no such value (never a silently wrong one).

use std::fmt;

use crate::numeric::Decoded;

/// Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
pub const PG_EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
pub const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// A value with no Arrow representation in its column's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unrepresentable {
    /// `infinity` or `-infinity` of a date or timestamp.
    InfiniteDateTime,
    /// A timestamp past 294246 AD, whose microseconds since 1970 leave the
    /// i64 (PostgreSQL's own end is 294276 AD).
    TimestampRange,
    /// `NaN`, `Infinity` or `-Infinity` of a numeric bound for Decimal128.
    NonFiniteNumeric(String),
    /// More digits than the column's Decimal128 precision (cannot happen for
    /// a value of the column's own typmod; kept as a check).
    DecimalOverflow(String),
    /// time `24:00:00`, past Arrow's time64 day.
    EndOfDay,
    /// An interval whose microseconds overflow nanoseconds, or an infinite one.
    Interval,
}

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unrepresentable::InfiniteDateTime => {
                write!(f, "infinite dates and timestamps have no Arrow value")
            }
            Unrepresentable::TimestampRange => {
                write!(f, "timestamps after 294246 AD have no Arrow value (64-bit microseconds since 1970)")
            }
            Unrepresentable::NonFiniteNumeric(v) => write!(f, "numeric value {v} has no Decimal128 value"),
            Unrepresentable::DecimalOverflow(v) => {
                write!(f, "numeric value {v} does not fit its Decimal128 column")
            }
            Unrepresentable::EndOfDay => write!(f, "time 24:00:00 has no Arrow time64 value"),
            Unrepresentable::Interval => {
                write!(
                    f,
                    "infinite intervals and intervals beyond 292 years of microseconds have no Arrow value"
                )
            }
        }
    }
}

/// A PostgreSQL date (days since 2000-01-01) as Arrow's Date32.
pub fn date32(pg_days: i32) -> Result<i32, Unrepresentable> {
    if pg_days == i32::MIN || pg_days == i32::MAX {
        return Err(Unrepresentable::InfiniteDateTime);
    }
    pg_days.checked_add(PG_EPOCH_DAYS).ok_or(Unrepresentable::InfiniteDateTime)
}

/// A PostgreSQL timestamp (microseconds since 2000-01-01) as microseconds
/// since the Unix epoch.
pub fn timestamp_micros(pg_micros: i64) -> Result<i64, Unrepresentable> {
    if pg_micros == i64::MIN || pg_micros == i64::MAX {
        return Err(Unrepresentable::InfiniteDateTime);
    }
    pg_micros.checked_add(PG_EPOCH_MICROS).ok_or(Unrepresentable::TimestampRange)
}

/// Microseconds in a day: PostgreSQL's time allows the day's end itself.
pub const DAY_MICROS: i64 = 86_400_000_000;

/// A PostgreSQL time (microseconds since midnight, up to 24:00:00 itself)
/// as Arrow's Time64 (microseconds, below a day).
pub fn time64_micros(pg_micros: i64) -> Result<i64, Unrepresentable> {
    if (0..DAY_MICROS).contains(&pg_micros) {
        Ok(pg_micros)
    } else {
        Err(Unrepresentable::EndOfDay)
    }
}

/// A PostgreSQL interval (months, days, microseconds, kept apart as
/// PostgreSQL keeps them) as Arrow's MonthDayNano.
pub fn interval_month_day_nano(
    months: i32,
    days: i32,
    micros: i64,
) -> Result<(i32, i32, i64), Unrepresentable> {
    // PostgreSQL 17+ infinities: every field at its minimum or maximum.
    let infinite = (months, days, micros) == (i32::MIN, i32::MIN, i64::MIN)
        || (months, days, micros) == (i32::MAX, i32::MAX, i64::MAX);
    if infinite {
        return Err(Unrepresentable::Interval);
    }
    Ok((months, days, micros.checked_mul(1000).ok_or(Unrepresentable::Interval)?))
}

/// A numeric read from its payload (`numeric::decode`) as a Decimal128 of
/// `scale` and at most `precision` digits: exact, or an error (NaN and the
/// infinities have no Decimal128 value; a value of the column's own typmod
/// always fits, so the overflow is a check, never a rounding).
pub fn decimal128_of(decoded: Decoded, precision: u8, scale: i8) -> Result<i128, Unrepresentable> {
    let (value, dscale) = match decoded {
        Decoded::NaN => return Err(Unrepresentable::NonFiniteNumeric("NaN".into())),
        Decoded::PosInfinity => return Err(Unrepresentable::NonFiniteNumeric("Infinity".into())),
        Decoded::NegInfinity => return Err(Unrepresentable::NonFiniteNumeric("-Infinity".into())),
        Decoded::TooWide => return Err(Unrepresentable::DecimalOverflow("(more than 38 digits)".into())),
        Decoded::Scaled { value, dscale } => (value, i32::from(dscale)),
    };
    let overflow = || Unrepresentable::DecimalOverflow(scaled_text(value, dscale));
    let shift = i32::from(scale) - dscale;
    let v = if shift >= 0 {
        10i128.checked_pow(shift as u32).and_then(|p| value.checked_mul(p)).ok_or_else(overflow)?
    } else {
        let p = 10i128.checked_pow((-shift) as u32).ok_or_else(overflow)?;
        if value % p != 0 {
            return Err(overflow());
        }
        value / p
    };
    let limit = 10i128.pow(u32::from(precision.min(38)));
    if v.unsigned_abs() >= limit as u128 {
        return Err(overflow());
    }
    Ok(v)
}

/// `value / 10^dscale` as decimal text, for messages.
fn scaled_text(value: i128, dscale: i32) -> String {
    let digits = value.unsigned_abs().to_string();
    let d = dscale.max(0) as usize;
    let padded = format!("{digits:0>width$}", width = d + 1);
    let (int, frac) = padded.split_at(padded.len() - d);
    let sign = if value < 0 { "-" } else { "" };
    if d == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

/// A PostgreSQL timetz (microseconds since midnight, zone in seconds west
/// of UTC) as Arrow's time of day and a UTC offset in seconds east.
pub fn timetz(pg_micros: i64, zone_west: i32) -> Result<(i64, i32), Unrepresentable> {
    Ok((time64_micros(pg_micros)?, -zone_west))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_shift_to_the_unix_epoch() {
        assert_eq!(date32(0), Ok(10_957)); // 2000-01-01
        assert_eq!(date32(-10_957), Ok(0)); // 1970-01-01
        assert_eq!(date32(-2_451_545), Ok(-2_440_588)); // 4713-11-24 BC, Julian day 0
        assert_eq!(date32(i32::MAX), Err(Unrepresentable::InfiniteDateTime));
        assert_eq!(date32(i32::MIN), Err(Unrepresentable::InfiniteDateTime));
    }

    #[test]
    fn timestamps_shift_to_the_unix_epoch() {
        assert_eq!(timestamp_micros(0), Ok(PG_EPOCH_MICROS));
        assert_eq!(timestamp_micros(-PG_EPOCH_MICROS), Ok(0));
        assert_eq!(timestamp_micros(i64::MAX), Err(Unrepresentable::InfiniteDateTime));
        assert_eq!(timestamp_micros(i64::MIN), Err(Unrepresentable::InfiniteDateTime));
        // 294276-12-31 23:59:59.999999, PostgreSQL's last timestamp.
        assert_eq!(timestamp_micros(9_223_371_331_199_999_999), Err(Unrepresentable::TimestampRange));
    }

    #[test]
    fn times_and_intervals() {
        assert_eq!(time64_micros(0), Ok(0));
        assert_eq!(time64_micros(DAY_MICROS - 1), Ok(DAY_MICROS - 1));
        assert_eq!(time64_micros(DAY_MICROS), Err(Unrepresentable::EndOfDay)); // 24:00:00
        assert_eq!(interval_month_day_nano(14, -3, 1_500_000), Ok((14, -3, 1_500_000_000)));
        assert_eq!(interval_month_day_nano(i32::MAX, i32::MAX, i64::MAX), Err(Unrepresentable::Interval));
        assert_eq!(interval_month_day_nano(i32::MIN, i32::MIN, i64::MIN), Err(Unrepresentable::Interval));
        assert_eq!(interval_month_day_nano(0, 0, i64::MAX / 100), Err(Unrepresentable::Interval));
    }

    #[test]
    fn decoded_numerics_become_exact_decimals() {
        let d = |value, dscale| Decoded::Scaled { value, dscale };
        assert_eq!(decimal128_of(d(1250, 2), 10, 2), Ok(1250));
        assert_eq!(decimal128_of(d(125, 1), 10, 2), Ok(1250));
        assert_eq!(decimal128_of(d(1200, 0), 3, -2), Ok(12));
        assert_eq!(decimal128_of(d(-5, 2), 10, 2), Ok(-5));
        assert!(
            matches!(decimal128_of(d(1234, 3), 10, 2), Err(Unrepresentable::DecimalOverflow(t)) if t == "1.234")
        );
        assert!(matches!(decimal128_of(d(1250, 0), 3, -2), Err(Unrepresentable::DecimalOverflow(_))));
        assert!(
            matches!(decimal128_of(d(-123456, 0), 5, 0), Err(Unrepresentable::DecimalOverflow(t)) if t == "-123456")
        );
        assert!(matches!(decimal128_of(Decoded::NaN, 10, 2), Err(Unrepresentable::NonFiniteNumeric(_))));
        assert!(matches!(
            decimal128_of(Decoded::NegInfinity, 10, 2),
            Err(Unrepresentable::NonFiniteNumeric(_))
        ));
        assert_eq!(scaled_text(-5, 3), "-0.005");
        assert_eq!(timetz(3_600_000_000, -7200), Ok((3_600_000_000, 7200)));
        assert_eq!(timetz(DAY_MICROS, 0), Err(Unrepresentable::EndOfDay));
    }
}

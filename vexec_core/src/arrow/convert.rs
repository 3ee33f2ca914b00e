//! Values PostgreSQL and Arrow count differently, converted exactly, or an
//! error where Arrow has no such value (never a silently wrong one).

use std::fmt;

/// Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
pub const PG_EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
pub const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// A value with no Arrow representation in its column's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unrepresentable {
    /// `infinity` or `-infinity` of a date or timestamp.
    InfiniteDateTime,
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
    pg_micros.checked_add(PG_EPOCH_MICROS).ok_or(Unrepresentable::InfiniteDateTime)
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

/// numeric's output text (`-12.50`, `NaN`, `Infinity`) as a Decimal128 of
/// `scale` (negative: the value counted in units of 10^-scale) and at most
/// `precision` digits. The text of a value of the column's own typmod has
/// exactly `scale` decimals (zeros where the scale is negative), so this is
/// exact; anything else is an error, not a rounding.
pub fn decimal128(text: &str, precision: u8, scale: i8) -> Result<i128, Unrepresentable> {
    let overflow = || Unrepresentable::DecimalOverflow(text.to_string());
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if !unsigned.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(Unrepresentable::NonFiniteNumeric(text.to_string()));
    }
    let (int_part, frac_part) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    if !int_part.bytes().chain(frac_part.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(overflow());
    }
    // The digits of value * 10^scale.
    let mut digits: String = int_part.to_string();
    let scale = i32::from(scale);
    if scale >= 0 {
        let s = scale as usize;
        if frac_part.len() > s && frac_part[s..].bytes().any(|b| b != b'0') {
            return Err(overflow());
        }
        digits.push_str(&frac_part[..frac_part.len().min(s)]);
        digits.extend(std::iter::repeat_n('0', s.saturating_sub(frac_part.len())));
    } else {
        // Negative scale: an integer ending in -scale zeros.
        let drop = (-scale) as usize;
        if frac_part.bytes().any(|b| b != b'0') {
            return Err(overflow());
        }
        let significant = int_part.trim_start_matches('0');
        digits = if significant.is_empty() {
            String::new()
        } else if significant.len() < drop
            || significant[significant.len() - drop..].bytes().any(|b| b != b'0')
        {
            return Err(overflow());
        } else {
            significant[..significant.len() - drop].to_string()
        };
    }
    let digits = digits.trim_start_matches('0');
    if digits.len() > usize::from(precision) {
        return Err(overflow());
    }
    let magnitude: i128 = if digits.is_empty() { 0 } else { digits.parse().map_err(|_| overflow())? };
    Ok(if negative { -magnitude } else { magnitude })
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
    fn decimals_are_exact() {
        assert_eq!(decimal128("12.50", 10, 2), Ok(1250));
        assert_eq!(decimal128("-0.05", 10, 2), Ok(-5));
        assert_eq!(decimal128("0.00", 10, 2), Ok(0));
        assert_eq!(decimal128("-0", 10, 0), Ok(0));
        assert_eq!(decimal128("1200", 3, -2), Ok(12));
        assert_eq!(decimal128("0", 3, -2), Ok(0));
        assert_eq!(
            decimal128("99999999999999999999999999999999999999", 38, 0),
            Ok(99_999_999_999_999_999_999_999_999_999_999_999_999)
        );
        assert_eq!(decimal128("12.5", 10, 2), Ok(1250)); // fewer decimals than the scale
    }

    #[test]
    fn decimals_never_round() {
        assert!(matches!(decimal128("NaN", 10, 2), Err(Unrepresentable::NonFiniteNumeric(_))));
        assert!(matches!(decimal128("Infinity", 10, 2), Err(Unrepresentable::NonFiniteNumeric(_))));
        assert!(matches!(decimal128("-Infinity", 10, 2), Err(Unrepresentable::NonFiniteNumeric(_))));
        assert!(matches!(decimal128("1.234", 10, 2), Err(Unrepresentable::DecimalOverflow(_))));
        assert!(matches!(decimal128("1250", 3, -2), Err(Unrepresentable::DecimalOverflow(_))));
        assert!(matches!(decimal128("123456", 5, 0), Err(Unrepresentable::DecimalOverflow(_))));
    }
}

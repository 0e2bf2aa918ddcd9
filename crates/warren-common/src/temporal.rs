//! Dates, timestamps and intervals: conversions between calendar fields and the stored integers,
//! parsing of Kùzu's literal forms, and printing in Kùzu's format.

use std::fmt::Write;

pub const MICROS_PER_SECOND: i64 = 1_000_000;
pub const MICROS_PER_MINUTE: i64 = 60 * MICROS_PER_SECOND;
pub const MICROS_PER_HOUR: i64 = 60 * MICROS_PER_MINUTE;
pub const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;

/// A calendar interval: months and days are kept apart from the exact time part, as in Kùzu.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

impl Interval {
    /// A total order key: months count as 30 days, as Kùzu compares intervals.
    pub fn normalized_micros(&self) -> i128 {
        (i128::from(self.months) * 30 + i128::from(self.days)) * i128::from(MICROS_PER_DAY)
            + i128::from(self.micros)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The calendar date (year, month, day) of a day count since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap_year(year) => 29,
        _ => 28,
    }
}

/// A cursor over literal text.
struct Scanner<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            position: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.position += 1;
            true
        } else {
            false
        }
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.position += 1;
        }
    }

    fn at_end(&self) -> bool {
        self.position >= self.bytes.len()
    }

    /// Up to `max_digits` decimal digits; `None` if there is none.
    fn digits(&mut self, max_digits: usize) -> Option<(i64, usize)> {
        let start = self.position;
        let mut value: i64 = 0;
        while self.position - start < max_digits {
            match self.peek() {
                Some(b @ b'0'..=b'9') => {
                    value = value * 10 + i64::from(b - b'0');
                    self.position += 1;
                }
                _ => break,
            }
        }
        let count = self.position - start;
        (count > 0).then_some((value, count))
    }
}

fn scan_date(scanner: &mut Scanner<'_>) -> Option<i64> {
    let negative = scanner.eat(b'-');
    let (year, _) = scanner.digits(9)?;
    let year = if negative { -year } else { year };
    if !scanner.eat(b'-') {
        return None;
    }
    let (month, _) = scanner.digits(2)?;
    if !scanner.eat(b'-') {
        return None;
    }
    let (day, _) = scanner.digits(2)?;
    let month = u32::try_from(month).ok()?;
    let day = u32::try_from(day).ok()?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// Parses `YYYY-MM-DD` (one-digit months and days allowed) into days since the epoch.
pub fn parse_date(text: &str) -> Option<i32> {
    let mut scanner = Scanner::new(text.trim());
    let days = scan_date(&mut scanner)?;
    scanner
        .at_end()
        .then_some(days)
        .and_then(|d| i32::try_from(d).ok())
}

/// Parses `HH:MM[:SS[.fraction]]` into microseconds since midnight.
fn scan_time(scanner: &mut Scanner<'_>) -> Option<i64> {
    let (hour, _) = scanner.digits(2)?;
    if !scanner.eat(b':') {
        return None;
    }
    let (minute, _) = scanner.digits(2)?;
    let mut second = 0;
    let mut micros = 0;
    if scanner.eat(b':') {
        second = scanner.digits(2)?.0;
        if scanner.eat(b'.') {
            let (fraction, count) = scanner.digits(9)?;
            micros = scale_fraction(fraction, count);
            // Digits beyond nanoseconds are ignored.
            while scanner.peek().is_some_and(|b| b.is_ascii_digit()) {
                scanner.position += 1;
            }
        }
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some(hour * MICROS_PER_HOUR + minute * MICROS_PER_MINUTE + second * MICROS_PER_SECOND + micros)
}

fn scale_fraction(fraction: i64, digits: usize) -> i64 {
    let mut micros = fraction;
    let mut digits = digits;
    while digits < 6 {
        micros *= 10;
        digits += 1;
    }
    while digits > 6 {
        micros /= 10;
        digits -= 1;
    }
    micros
}

/// Parses a zone offset `Z`, `Z+HH:MM`, `+HH`, `-HH:MM`, `+HHMM` into microseconds east of UTC.
fn scan_zone(scanner: &mut Scanner<'_>) -> Option<i64> {
    scanner.skip_spaces();
    let had_z = scanner.eat(b'Z') || scanner.eat(b'z');
    let sign = match scanner.peek() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return had_z.then_some(0),
    };
    scanner.position += 1;
    let (hours, count) = scanner.digits(4)?;
    let (hours, mut minutes) = if count > 2 {
        (hours / 100, hours % 100)
    } else {
        (hours, 0)
    };
    if count <= 2 && scanner.eat(b':') {
        minutes = scanner.digits(2)?.0;
    }
    Some(sign * (hours * MICROS_PER_HOUR + minutes * MICROS_PER_MINUTE))
}

/// Parses a timestamp literal (`YYYY-MM-DD[ |T]HH:MM[:SS[.ffffff]][zone]`) into microseconds since
/// the epoch, UTC. A zone offset is subtracted, as Kùzu does.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let mut scanner = Scanner::new(text.trim());
    let days = scan_date(&mut scanner)?;
    let mut micros = days.checked_mul(MICROS_PER_DAY)?;
    if scanner.at_end() {
        return Some(micros);
    }
    if !(scanner.eat(b' ') || scanner.eat(b'T') || scanner.eat(b't')) {
        return None;
    }
    scanner.skip_spaces();
    micros = micros.checked_add(scan_time(&mut scanner)?)?;
    if !scanner.at_end() {
        micros = micros.checked_sub(scan_zone(&mut scanner)?)?;
        scanner.skip_spaces();
        if scanner.bytes[scanner.position..].eq_ignore_ascii_case(b"UTC") {
            scanner.position += 3;
        }
    }
    scanner.at_end().then_some(micros)
}

pub fn format_date(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    if year < 0 {
        format!("{:04}-{month:02}-{day:02} (BC)", -year + 1)
    } else {
        format!("{year:04}-{month:02}-{day:02}")
    }
}

/// `HH:MM:SS[.ffffff]` with trailing zeros of the fraction removed. Hours may exceed 23.
fn write_time(out: &mut String, micros: i64) {
    let hours = micros / MICROS_PER_HOUR;
    let minutes = (micros % MICROS_PER_HOUR) / MICROS_PER_MINUTE;
    let seconds = (micros % MICROS_PER_MINUTE) / MICROS_PER_SECOND;
    let fraction = micros % MICROS_PER_SECOND;
    let _ = write!(out, "{hours:02}:{minutes:02}:{seconds:02}");
    if fraction != 0 {
        let digits = format!("{fraction:06}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// Prints microseconds since the epoch as `YYYY-MM-DD HH:MM:SS[.ffffff]`.
pub fn format_timestamp(micros: i64) -> String {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let time = micros.rem_euclid(MICROS_PER_DAY);
    let mut out = format_date(days);
    out.push(' ');
    write_time(&mut out, time);
    out
}

/// Prints a timestamp with nanosecond precision (TIMESTAMP_NS).
pub fn format_timestamp_ns(nanos: i64) -> String {
    let micros = nanos.div_euclid(1000);
    let extra = nanos.rem_euclid(1000);
    let mut out = format_timestamp(micros);
    if extra != 0 {
        let fraction_micros = micros.rem_euclid(MICROS_PER_SECOND);
        if fraction_micros == 0 {
            out.push('.');
        } else {
            // Re-print the fraction with its full six digits before appending nanoseconds.
            let cut = out.rfind('.').unwrap_or(out.len());
            out.truncate(cut);
            let _ = write!(out, ".{fraction_micros:06}");
        }
        let _ = write!(out, "{extra:03}");
        let trimmed = out.trim_end_matches('0').len();
        out.truncate(trimmed);
    }
    out
}

/// Prints an interval as Kùzu does: `1 year 2 months 3 days 04:05:06.000007`.
pub fn format_interval(interval: Interval) -> String {
    let mut out = String::new();
    let years = interval.months / 12;
    let months = interval.months % 12;
    let mut part = |value: i64, unit: &str| {
        if value != 0 {
            if !out.is_empty() {
                out.push(' ');
            }
            let _ = write!(out, "{value} {unit}");
            if value != 1 {
                out.push('s');
            }
        }
    };
    part(i64::from(years), "year");
    part(i64::from(months), "month");
    part(i64::from(interval.days), "day");
    if interval.micros != 0 {
        if !out.is_empty() {
            out.push(' ');
        }
        if interval.micros < 0 {
            out.push('-');
        }
        write_time(&mut out, interval.micros.unsigned_abs() as i64);
    } else if out.is_empty() {
        out.push_str("00:00:00");
    }
    out
}

/// Parses an interval literal: `<number> <unit>` pairs (`10 years 5 months 13 hours 24 us`,
/// `2 days 48:00:00`, `480us`), as Kùzu accepts them.
pub fn parse_interval(text: &str) -> Option<Interval> {
    let mut scanner = Scanner::new(text.trim());
    let mut interval = Interval::default();
    let mut any = false;
    loop {
        scanner.skip_spaces();
        if scanner.at_end() {
            return any.then_some(interval);
        }
        let negative = scanner.eat(b'-');
        if !negative {
            scanner.eat(b'+');
        }
        let start = scanner.position;
        let (number, _) = scanner.digits(18)?;
        if scanner.peek() == Some(b':') {
            scanner.position = start;
            let time = scan_time(&mut scanner).or_else(|| scan_long_time(&mut scanner))?;
            interval.micros += if negative { -time } else { time };
            any = true;
            continue;
        }
        let mut fraction = 0.0;
        if scanner.eat(b'.') {
            let (digits, count) = scanner.digits(9)?;
            fraction = digits as f64 / 10f64.powi(count as i32);
        }
        scanner.skip_spaces();
        let unit_start = scanner.position;
        while scanner.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
            scanner.position += 1;
        }
        let unit = std::str::from_utf8(&scanner.bytes[unit_start..scanner.position]).ok()?;
        let sign = if negative { -1 } else { 1 };
        add_interval_part(&mut interval, sign * number, sign as f64 * fraction, unit)?;
        any = true;
    }
}

/// `HHH:MM:SS` with hours above 23, as Kùzu prints long intervals.
fn scan_long_time(scanner: &mut Scanner<'_>) -> Option<i64> {
    let (hours, _) = scanner.digits(12)?;
    if !scanner.eat(b':') {
        return None;
    }
    let (minutes, _) = scanner.digits(2)?;
    let mut seconds = 0;
    let mut micros = 0;
    if scanner.eat(b':') {
        seconds = scanner.digits(2)?.0;
        if scanner.eat(b'.') {
            let (fraction, count) = scanner.digits(9)?;
            micros = scale_fraction(fraction, count);
        }
    }
    Some(
        hours * MICROS_PER_HOUR
            + minutes * MICROS_PER_MINUTE
            + seconds * MICROS_PER_SECOND
            + micros,
    )
}

fn add_interval_part(
    interval: &mut Interval,
    number: i64,
    fraction: f64,
    unit: &str,
) -> Option<()> {
    let unit = unit.to_ascii_lowercase();
    let micros_per_unit = match unit.as_str() {
        "year" | "years" | "y" | "yr" | "yrs" => {
            interval.months += i32::try_from(number * 12).ok()?;
            interval.days += (fraction * 12.0 * 30.0) as i32;
            return Some(());
        }
        "month" | "months" | "mon" | "mons" => {
            interval.months += i32::try_from(number).ok()?;
            interval.days += (fraction * 30.0) as i32;
            return Some(());
        }
        "week" | "weeks" | "w" => {
            interval.days += i32::try_from(number * 7).ok()?;
            interval.micros += (fraction * 7.0 * MICROS_PER_DAY as f64) as i64;
            return Some(());
        }
        "day" | "days" | "d" => {
            interval.days += i32::try_from(number).ok()?;
            interval.micros += (fraction * MICROS_PER_DAY as f64) as i64;
            return Some(());
        }
        "hour" | "hours" | "h" | "hr" | "hrs" => MICROS_PER_HOUR,
        "minute" | "minutes" | "m" | "min" | "mins" => MICROS_PER_MINUTE,
        "second" | "seconds" | "s" | "sec" | "secs" => MICROS_PER_SECOND,
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => 1000,
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" => 1,
        _ => return None,
    };
    interval.micros += number.checked_mul(micros_per_unit)?;
    interval.micros += (fraction * micros_per_unit as f64) as i64;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        for days in [-800_000, -1, 0, 1, 365, 11_016, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(
            format_date(i64::from(parse_date("1950-7-23").unwrap())),
            "1950-07-23"
        );
        assert_eq!(parse_date("2021-02-29"), None);
        assert_eq!(
            parse_date("2020-02-29")
                .map(i64::from)
                .map(format_date)
                .unwrap(),
            "2020-02-29"
        );
    }

    #[test]
    fn timestamps_parse_with_zones_and_print_trimmed() {
        let cases = [
            ("2011-08-20 11:25:30Z+00:00", "2011-08-20 11:25:30"),
            (
                "2008-11-03 13:25:30.000526-02:00",
                "2008-11-03 15:25:30.000526",
            ),
            ("1976-12-23 11:21:42Z+06:40", "1976-12-23 04:41:42"),
            ("2031-11-30 12:25:30Z", "2031-11-30 12:25:30"),
            ("2002-07-31 11:42:53.12342", "2002-07-31 11:42:53.12342"),
            ("1982-11-11 13:12:05.123", "1982-11-11 13:12:05.123"),
            ("2021-06-30", "2021-06-30 00:00:00"),
        ];
        for (input, printed) in cases {
            let micros = parse_timestamp(input).unwrap_or_else(|| panic!("{input}"));
            assert_eq!(format_timestamp(micros), printed, "{input}");
        }
        assert_eq!(parse_timestamp("2021-06-30 25:00:00"), None);
    }

    #[test]
    fn intervals_parse_and_print_as_kuzu() {
        let cases = [
            (
                "10 years 5 months 13 hours 24 us",
                "10 years 5 months 13:00:00.000024",
            ),
            (
                "3 years 2 days 13 hours 2 minutes",
                "3 years 2 days 13:02:00",
            ),
            ("48 hours 24 minutes 11 seconds", "48:24:11"),
            ("18 minutes 24 milliseconds", "00:18:00.024"),
            ("480us", "00:00:00.00048"),
            ("1 day", "1 day"),
            ("30 hours 40 days", "40 days 30:00:00"),
            ("0 days", "00:00:00"),
        ];
        for (input, printed) in cases {
            let interval = parse_interval(input).unwrap_or_else(|| panic!("{input}"));
            assert_eq!(format_interval(interval), printed, "{input}");
        }
        assert_eq!(parse_interval("ten days"), None);
    }
}

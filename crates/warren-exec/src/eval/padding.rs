//! `lpad(text, count, pad)` and `rpad(text, count, pad)`: the text cut or padded to `count`
//! characters (not bytes), as Kùzu does: a count of 0 or less gives the empty string, a longer
//! text is cut to its first `count` characters, and an empty pad leaves the text as it is.

use warren_common::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Left,
    Right,
}

pub(super) fn pad(text: &str, count: i64, fill: &str, side: Side) -> Result<String> {
    let Ok(count) = usize::try_from(count) else {
        return Ok(String::new());
    };
    let length = text.chars().count();
    if count <= length {
        return Ok(text.chars().take(count).collect());
    }
    if fill.is_empty() {
        return Ok(text.to_string());
    }
    let missing = count - length;
    // At most one more whole copy of the fill than the characters missing need.
    let copies = missing / fill.chars().count() + 1;
    if text.len().saturating_add(copies.saturating_mul(fill.len()))
        > warren_common::limits::STRING_BYTES_MAX
    {
        return Err(Error::LimitExceeded(format!(
            "padding to {count} characters would make a string longer than {} bytes",
            warren_common::limits::STRING_BYTES_MAX
        )));
    }
    let padding: String = fill.chars().cycle().take(missing).collect();
    Ok(match side {
        Side::Left => padding + text,
        Side::Right => text.to_string() + &padding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_and_cuts_by_characters() {
        let l = |t: &str, n: i64, f: &str| pad(t, n, f, Side::Left).unwrap();
        let r = |t: &str, n: i64, f: &str| pad(t, n, f, Side::Right).unwrap();
        assert_eq!(l("abc", 5, "*"), "**abc");
        assert_eq!(l("abc", 7, "xy"), "xyxyabc");
        assert_eq!(l("abc", 6, "xy"), "xyxabc");
        assert_eq!(r("abc", 6, "xy"), "abcxyx");
        assert_eq!(l("abc", 2, "*"), "ab");
        assert_eq!(r("abc", 2, "*"), "ab");
        assert_eq!(l("abc", 3, "x"), "abc");
        assert_eq!(l("abc", 0, "x"), "");
        assert_eq!(l("abc", -1, "x"), "");
        assert_eq!(l("abc", 5, ""), "abc");
        assert_eq!(l("ü✓", 4, "é"), "ééü✓");
        assert_eq!(r("ü✓", 4, "é"), "ü✓éé");
    }

    #[test]
    fn huge_counts_are_refused() {
        let error = pad("a", i64::MAX, "x", Side::Left).unwrap_err();
        assert!(matches!(error, Error::LimitExceeded(_)));
    }
}

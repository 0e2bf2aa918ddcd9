//! The fast reader of a rel COPY's plainest rows: lines of two integer keys and one delimiter
//! (`712647,1011043`), the form of every generated graph and most edge-list exports. It parses
//! the bytes directly instead of going through the CSV reader's records, and resolves the keys
//! with a lookup that needs no row. It accepts nothing it is unsure of: any other line (a blank
//! one, spaces, a sign other than `-`, a third field, a lone carriage return, more than 18
//! digits) or a key that does not resolve makes it give up on the whole chunk, which the CSV
//! reader then reads from the start, so the rows, the rel ids and the first error reported are
//! the same as without it.

/// Resolves a row's two keys to their (source, target) node offsets, or `None` when either key
/// is unknown (the CSV reader then reports the row).
pub(crate) type PlainResolve<'a> = dyn Fn(i64, i64) -> Option<(u32, u32)> + Sync + 'a;

/// The most digits a key may have here: [`crate::import::csv_reader::parse_i64`]'s limit, under
/// which no value overflows an i64.
const DIGITS_MAX: usize = 18;

/// Reads every line of `body` (whole lines: a chunk) as `key delimiter key`, writing row `i`'s
/// endpoints to `sources[i]` and `targets[i]`; returns the rows, or `None` when a line is not
/// plain, a key does not resolve, or there are more rows than slots.
pub(crate) fn read_plain_pairs(
    body: &[u8],
    delimiter: u8,
    resolve: &PlainResolve<'_>,
    sources: &mut [u32],
    targets: &mut [u32],
) -> Option<usize> {
    assert_eq!(
        sources.len(),
        targets.len(),
        "one slot per row in each array"
    );
    if delimiter.is_ascii_digit() || matches!(delimiter, b'-' | b'\n' | b'\r') {
        return None;
    }
    let mut at = 0;
    let mut rows = 0;
    while at < body.len() {
        let (source_key, after_source) = parse_key(body, at)?;
        if body.get(after_source) != Some(&delimiter) {
            return None;
        }
        let (target_key, after_target) = parse_key(body, after_source + 1)?;
        at = line_end(body, after_target)?;
        let (source, target) = resolve(source_key, target_key)?;
        *sources.get_mut(rows)? = source;
        *targets.get_mut(rows)? = target;
        rows += 1;
    }
    Some(rows)
}

/// The key starting at `at` (an optional `-` and 1 to [`DIGITS_MAX`] digits) and the position
/// after it.
#[inline]
fn parse_key(body: &[u8], at: usize) -> Option<(i64, usize)> {
    let negative = body.get(at) == Some(&b'-');
    let start = at + usize::from(negative);
    let mut end = start;
    let mut value: i64 = 0;
    while let Some(&byte) = body.get(end) {
        if !byte.is_ascii_digit() {
            break;
        }
        value = value * 10 + i64::from(byte - b'0');
        end += 1;
        if end - start > DIGITS_MAX {
            return None;
        }
    }
    if end == start {
        return None;
    }
    Some((if negative { -value } else { value }, end))
}

/// The start of the next line, when `at` is the end of the body or a line break (`\n` or
/// `\r\n`).
#[inline]
fn line_end(body: &[u8], at: usize) -> Option<usize> {
    match body.get(at) {
        None => Some(at),
        Some(b'\n') => Some(at + 1),
        Some(b'\r') if body.get(at + 1) == Some(&b'\n') => Some(at + 2),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str, slots: usize) -> Option<Vec<(u32, u32)>> {
        let resolve = |a: i64, b: i64| {
            let range = 0..100;
            (range.contains(&a) && range.contains(&b)).then_some((a as u32, b as u32))
        };
        let (mut sources, mut targets) = (vec![0; slots], vec![0; slots]);
        let rows = read_plain_pairs(body.as_bytes(), b',', &resolve, &mut sources, &mut targets)?;
        Some(sources.into_iter().zip(targets).take(rows).collect())
    }

    #[test]
    fn reads_plain_lines_with_any_line_break() {
        assert_eq!(read("1,2\n3,4", 2), Some(vec![(1, 2), (3, 4)]));
        assert_eq!(read("1,2\r\n-0,99\n", 2), Some(vec![(1, 2), (0, 99)]));
        assert_eq!(read("", 0), Some(vec![]));
    }

    #[test]
    fn gives_up_on_anything_else() {
        for body in [
            "1,2\n\n3,4\n",
            " 1,2\n",
            "1, 2\n",
            "+1,2\n",
            "1,2,3\n",
            "1\n",
            "1,2\r3,4\n",
            "1,\n",
            "-,2\n",
            "a,2\n",
            "1,200\n",
            "1,0000000000000000001\n",
        ] {
            assert_eq!(read(body, 4), None, "{body:?}");
        }
        assert_eq!(read("1,2\n3,4\n", 1), None, "more rows than slots");
    }
}

//! List functions with Kùzu's edge-case rules: sorting with NULL placement, slicing with
//! 1-based inclusive bounds (negative bounds count from the end), positions, set tests,
//! joining to a string and building maps from key and value lists.

use std::cmp::Ordering;

use warren_common::value::{GraphLookup, Value};
use warren_common::{Error, Result};

/// `list_sort(list[, 'ASC'|'DESC'[, 'NULLS FIRST'|'NULLS LAST']])`; `reverse` for
/// `list_reverse_sort(list[, nulls])`, whose second argument is the NULL placement. NULLs come
/// first unless asked otherwise, in both directions.
pub(super) fn sort(items: &[Value], options: &[Value], reverse: bool) -> Result<Value> {
    let option = |index: usize| options.get(index).and_then(Value::as_str);
    let (order, nulls) = if reverse {
        (Some("DESC"), option(0))
    } else {
        (option(0), option(1))
    };
    let descending = match order.map(str::to_ascii_uppercase).as_deref() {
        None | Some("ASC") => false,
        Some("DESC") => true,
        Some(_) => return Err(Error::runtime("Invalid sortOrder")),
    };
    let nulls_first = match nulls.map(str::to_ascii_uppercase).as_deref() {
        None | Some("NULLS FIRST") => true,
        Some("NULLS LAST") => false,
        Some(_) => return Err(Error::runtime("Invalid nullOrder")),
    };
    let mut values: Vec<Value> = items.iter().filter(|v| !v.is_null()).cloned().collect();
    values.sort_by(|a, b| {
        let order = a.total_cmp(b);
        if descending {
            order.reverse()
        } else {
            order
        }
    });
    let null_count = items.len() - values.len();
    let nulls = std::iter::repeat_n(Value::Null, null_count);
    let sorted: Vec<Value> = if nulls_first {
        nulls.chain(values).collect()
    } else {
        values.into_iter().chain(nulls).collect()
    };
    Ok(Value::list(sorted))
}

/// The half-open range of 0-based indexes `list[begin:end]` selects in a sequence of
/// `length` items: bounds are 1-based and inclusive, 0 reads as 1 for `begin`, a negative
/// bound counts from the end (-1 is the last item), and both are clamped to the sequence.
pub(super) fn slice_range(length: usize, begin: i64, end: i64) -> std::ops::Range<usize> {
    let n = i64::try_from(length).expect("a sequence shorter than 2^63");
    let resolve = |bound: i64| if bound < 0 { n + bound + 1 } else { bound };
    let first = resolve(begin).max(1);
    let last = resolve(end).min(n);
    if first > last {
        return 0..0;
    }
    let range = (first - 1) as usize..last as usize;
    debug_assert!(range.end <= length);
    range
}

/// `list_position(list, value)`: the 1-based position of the first element of the same type
/// equal to `value`, or 0.
pub(super) fn position(items: &[Value], value: &Value) -> Value {
    let ty = value.logical_type();
    let found = items
        .iter()
        .position(|item| item.sql_eq(value) == Some(true) && item.logical_type() == ty);
    Value::Int64(found.map_or(0, |i| i as i64 + 1))
}

/// `list_has_all(list, sub)`: every non-NULL element of `sub` occurs in `list` (with the same
/// type: structs with other field names differ).
pub(super) fn has_all(items: &[Value], sub: &[Value]) -> Value {
    let contains = |wanted: &Value| {
        let ty = wanted.logical_type();
        items
            .iter()
            .any(|item| item.sql_eq(wanted) == Some(true) && item.logical_type() == ty)
    };
    Value::Bool(sub.iter().filter(|v| !v.is_null()).all(contains))
}

/// `list_unique(list)`: the number of distinct non-NULL elements.
pub(super) fn unique_count(items: &[Value]) -> Value {
    let mut distinct: Vec<&Value> = items.iter().filter(|v| !v.is_null()).collect();
    distinct.sort_by(|a, b| a.total_cmp(b));
    distinct.dedup_by(|a, b| a.total_cmp(b) == Ordering::Equal);
    Value::Int64(distinct.len() as i64)
}

/// `list_to_string(separator, list)`: the non-NULL elements as Kùzu prints them, joined.
pub(super) fn join(separator: &str, items: &[Value], graph: &dyn GraphLookup) -> Value {
    let mut out = String::new();
    for (index, item) in items.iter().filter(|v| !v.is_null()).enumerate() {
        if index > 0 {
            out.push_str(separator);
        }
        match item {
            Value::String(text) => out.push_str(text),
            other => out.push_str(&warren_common::format::to_kuzu_string(other, graph)),
        }
    }
    Value::string(out)
}

/// `map(keys, values)`: pairs the two lists, which must have the same length.
pub(super) fn map(keys: &[Value], values: &[Value]) -> Result<Value> {
    if keys.len() != values.len() {
        return Err(Error::runtime("Unaligned key list and value list."));
    }
    let entries: Vec<(Value, Value)> = keys.iter().cloned().zip(values.iter().cloned()).collect();
    Ok(Value::Map(entries.into()))
}

#[cfg(test)]
mod tests {
    use warren_common::value::NoGraph;

    use super::*;

    fn ints(values: &[Option<i64>]) -> Vec<Value> {
        values
            .iter()
            .map(|v| v.map_or(Value::Null, Value::Int64))
            .collect()
    }

    fn text(value: &Value) -> String {
        warren_common::format::to_kuzu_string(value, &NoGraph)
    }

    #[test]
    fn sort_places_nulls_first_unless_told() {
        let items = ints(&[Some(3), None, Some(1), None]);
        let s = |options: &[&str], reverse: bool| {
            let options: Vec<Value> = options.iter().map(|o| Value::string(*o)).collect();
            text(&sort(&items, &options, reverse).unwrap())
        };
        assert_eq!(s(&[], false), "[,,1,3]");
        assert_eq!(s(&["desc"], false), "[,,3,1]");
        assert_eq!(s(&["ASC", "NULLS LAST"], false), "[1,3,,]");
        assert_eq!(s(&["DESC", "nulls last"], false), "[3,1,,]");
        assert_eq!(s(&[], true), "[,,3,1]");
        assert_eq!(s(&["NULLS LAST"], true), "[3,1,,]");
        let bad = sort(&items, &[Value::string("x")], false).unwrap_err();
        assert_eq!(bad.to_string(), "Runtime exception: Invalid sortOrder");
        let bad = sort(&items, &[Value::string("ASC"), Value::string("x")], false);
        assert_eq!(
            bad.unwrap_err().to_string(),
            "Runtime exception: Invalid nullOrder"
        );
    }

    #[test]
    fn slice_bounds_follow_kuzu() {
        // list_slice([1,2,3,4,5], b, e) as Kùzu 0.11.3 answers it.
        assert_eq!(slice_range(5, 2, 4), 1..4);
        assert_eq!(slice_range(5, -2, 5), 3..5);
        assert_eq!(slice_range(5, 0, 2), 0..2);
        assert_eq!(slice_range(5, 4, 2), 0..0);
        assert_eq!(slice_range(5, 2, 10), 1..5);
        assert_eq!(slice_range(5, -10, 2), 0..2);
        assert_eq!(slice_range(5, -3, -1), 2..5);
        assert_eq!(slice_range(3, 1, 0), 0..0);
        assert_eq!(slice_range(3, 4, 5), 0..0);
        assert_eq!(slice_range(3, -1, 4), 2..3);
        assert_eq!(slice_range(0, 1, 1), 0..0);
        assert_eq!(slice_range(3, i64::MIN + 5, i64::MAX), 0..3);
    }

    #[test]
    fn position_needs_equal_value_and_type() {
        let items = ints(&[Some(1), Some(2), Some(3), Some(2)]);
        assert_eq!(position(&items, &Value::Int64(2)), Value::Int64(2));
        assert_eq!(position(&items, &Value::Int64(5)), Value::Int64(0));
        assert_eq!(position(&items, &Value::Double(2.0)), Value::Int64(0));
        assert_eq!(position(&[], &Value::Int64(2)), Value::Int64(0));
    }

    #[test]
    fn has_all_ignores_nulls_of_the_sublist() {
        let items = ints(&[Some(4), Some(5), Some(6)]);
        assert_eq!(
            has_all(&items, &ints(&[Some(6), Some(4)])),
            Value::Bool(true)
        );
        assert_eq!(has_all(&items, &ints(&[Some(7)])), Value::Bool(false));
        assert_eq!(has_all(&items, &ints(&[None])), Value::Bool(true));
        assert_eq!(has_all(&[], &[]), Value::Bool(true));
    }

    #[test]
    fn unique_counts_distinct_non_nulls() {
        let items = ints(&[Some(1), Some(1), None, Some(-3), Some(1), Some(5)]);
        assert_eq!(unique_count(&items), Value::Int64(3));
        assert_eq!(unique_count(&ints(&[None])), Value::Int64(0));
    }

    #[test]
    fn join_skips_nulls_and_prints_values_as_kuzu() {
        let j = |items: &[Value]| text(&join("-", items, &NoGraph));
        assert_eq!(j(&ints(&[None, None, Some(1), None, Some(1)])), "1-1");
        assert_eq!(j(&ints(&[None, None])), "");
        assert_eq!(j(&[Value::Bool(true), Value::Double(1.5)]), "True-1.500000");
        assert_eq!(j(&[Value::string(""), Value::string("a")]), "-a");
        assert_eq!(j(&[Value::list(ints(&[Some(1), Some(2)]))]), "[1,2]");
    }

    #[test]
    fn map_pairs_aligned_lists() {
        let keys = [Value::string("a"), Value::string("a")];
        let map_value = map(&keys, &ints(&[Some(1), Some(2)])).unwrap();
        assert_eq!(text(&map_value), "{a=1, a=2}");
        let error = map(&keys, &ints(&[Some(1)])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Runtime exception: Unaligned key list and value list."
        );
    }
}

//! Prefilters: the conjuncts of a node filter of the form `n.property op constant` with an
//! INT64 property and constant, or `n.property IN [constants]` with INT64 constants, checked
//! on the raw column before a row is built and the full filter is evaluated. A row failing
//! one fails the whole filter (the conjunct is false or NULL), so skipping it early changes no
//! result; rows passing still get the full filter.

use std::sync::Arc;

use warren_common::value::Value;
use warren_common::TableId;
use warren_planner::expr::{BinaryOp, Expr, PropertyColumns};

use super::pass_bits::{pass_word_kernel, Compare};

/// `property op constant` or `property IN [constants]` on the scanned node, with INT64
/// constants: a row for which it is false or NULL fails the whole (conjunctive) filter, so it
/// can be skipped early.
#[derive(Debug)]
pub struct IntPrefilter {
    property: PropertyColumns,
    test: IntTest,
}

/// What a prefilter holds a row's (non-NULL) value against.
#[derive(Clone, Debug, PartialEq)]
pub enum IntTest {
    /// `value compare constant`.
    Compare(Compare, i64),
    /// `value IN [...]`: the list's INT64 elements, sorted and without repeats (its NULLs
    /// never match: Kùzu skips them).
    InList(Arc<[i64]>),
}

impl IntTest {
    #[inline]
    fn holds(&self, value: i64) -> bool {
        match self {
            IntTest::Compare(compare, constant) => compare.holds(value, *constant),
            IntTest::InList(constants) => constants.binary_search(&value).is_ok(),
        }
    }
}

/// Lists longer than this are tested by a binary search per value, not one compare each.
const IN_LIST_COMPARES_MAX: usize = 8;

pub fn collect_prefilters(expr: &Expr, slot: usize, out: &mut Vec<IntPrefilter>) {
    let Expr::Binary(op, left, right) = expr else {
        return;
    };
    if *op == BinaryOp::And {
        collect_prefilters(left, slot, out);
        collect_prefilters(right, slot, out);
        return;
    }
    if let Some(prefilter) = prefilter_of(*op, left, right, slot) {
        out.push(prefilter);
    }
}

/// Whether `expr` is exactly the conjunction of its prefilters: then rows passing every
/// resolved prefilter pass the filter, and the filter need not be evaluated (when every
/// prefilter resolved against the table, see [`filter_decided`]).
pub fn is_conjunction_of_prefilters(expr: &Expr, slot: usize) -> bool {
    let Expr::Binary(op, left, right) = expr else {
        return false;
    };
    if *op == BinaryOp::And {
        return is_conjunction_of_prefilters(left, slot)
            && is_conjunction_of_prefilters(right, slot);
    }
    prefilter_of(*op, left, right, slot).is_some()
}

/// Whether the resolved prefilters alone decide a filter: it is a conjunction of prefilters
/// (`conjunction`) and each of its `collected` prefilters resolved against the table.
pub fn filter_decided(
    conjunction: bool,
    collected: usize,
    resolved: &[ResolvedPrefilter<'_>],
) -> bool {
    conjunction && resolved.len() == collected
}

/// `left op right` as a prefilter on the node in `slot`, when it has that form.
fn prefilter_of(op: BinaryOp, left: &Expr, right: &Expr, slot: usize) -> Option<IntPrefilter> {
    if op == BinaryOp::In {
        return in_list_of(left, right, slot);
    }
    let compare = Compare::of(op)?;
    let property_of = |e: &Expr| match e {
        Expr::Property { base, property } if **base == Expr::Slot(slot) => Some(property.clone()),
        _ => None,
    };
    let constant_of = |e: &Expr| match e {
        Expr::Literal(Value::Int64(c)) => Some(*c),
        _ => None,
    };
    if let (Some(property), Some(constant)) = (property_of(left), constant_of(right)) {
        Some(IntPrefilter {
            property,
            test: IntTest::Compare(compare, constant),
        })
    } else if let (Some(constant), Some(property)) = (constant_of(left), property_of(right)) {
        Some(IntPrefilter {
            property,
            test: IntTest::Compare(compare.swapped(), constant),
        })
    } else {
        None
    }
}

/// `n.property IN [...]` as a prefilter when every element of the list (a list of literals,
/// or a literal list) is an INT64 or NULL.
fn in_list_of(left: &Expr, right: &Expr, slot: usize) -> Option<IntPrefilter> {
    let Expr::Property { base, property } = left else {
        return None;
    };
    if **base != Expr::Slot(slot) {
        return None;
    }
    let items: Vec<&Value> = match right {
        Expr::List(items) => items
            .iter()
            .map(|item| match item {
                Expr::Literal(value) => Some(value),
                _ => None,
            })
            .collect::<Option<_>>()?,
        Expr::Literal(list) => list.as_list()?.iter().collect(),
        _ => return None,
    };
    let mut constants = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::Int64(constant) => constants.push(*constant),
            Value::Null => {}
            _ => return None,
        }
    }
    constants.sort_unstable();
    constants.dedup();
    Some(IntPrefilter {
        property: property.clone(),
        test: IntTest::InList(constants.into()),
    })
}

/// A prefilter resolved against one table: the column's values and nulls.
pub enum ResolvedPrefilter<'a> {
    /// The table lacks the property: the comparison is NULL for every row.
    RejectAll,
    Column {
        /// The column's null words (`None`: no NULLs), read once (see `Column::null_words`).
        nulls: Option<&'a [u64]>,
        values: &'a [i64],
        test: IntTest,
    },
}

impl ResolvedPrefilter<'_> {
    #[inline]
    pub fn passes(&self, row: usize) -> bool {
        match self {
            ResolvedPrefilter::RejectAll => false,
            ResolvedPrefilter::Column {
                nulls,
                values,
                test,
            } => {
                if nulls.is_some_and(|words| words[row / 64] >> (row % 64) & 1 == 1) {
                    return false;
                }
                test.holds(values[row])
            }
        }
    }

    /// ANDs into `words` whether each row of `rows` passes: bit `i` of word `w` is row
    /// `rows.start + 64 w + i`, so `rows.start` is a multiple of 64 (the null words are read
    /// a word at a time) and `words` holds `rows.len().div_ceil(64)` words. A loop over the raw
    /// values with the operator chosen once builds each word; words already zero are skipped.
    pub fn and_pass_bits(&self, rows: std::ops::Range<usize>, words: &mut [u64]) {
        assert!(rows.start.is_multiple_of(64), "rows start at a null word");
        assert_eq!(words.len(), rows.len().div_ceil(64), "a word per 64 rows");
        let ResolvedPrefilter::Column {
            nulls,
            values,
            test,
        } = self
        else {
            words.fill(0);
            return;
        };
        let first_word = rows.start / 64;
        let kernel = pass_word_kernel();
        let pass_word = |group: &[i64]| -> u64 {
            match test {
                IntTest::Compare(compare, constant) => kernel(group, *compare, *constant),
                IntTest::InList(constants) if constants.len() <= IN_LIST_COMPARES_MAX => {
                    constants.iter().fold(0, |bits, &constant| {
                        bits | kernel(group, Compare::Eq, constant)
                    })
                }
                IntTest::InList(_) => group.iter().enumerate().fold(0, |bits, (i, &value)| {
                    bits | (u64::from(test.holds(value)) << i)
                }),
            }
        };
        let groups = values[rows].chunks(64);
        for (index, (word, group)) in words.iter_mut().zip(groups).enumerate() {
            if *word == 0 {
                continue;
            }
            *word &= pass_word(group);
            if let Some(nulls) = nulls {
                *word &= !nulls[first_word + index];
            }
        }
    }
}

/// The prefilters of `table` over its stored columns, each column verified as a whole first
/// (a damaged block is a `corrupt database` error).
pub fn resolve_prefilters<'a>(
    prefilters: &[IntPrefilter],
    table_id: TableId,
    table: &'a warren_storage::NodeTable,
) -> warren_common::Result<Vec<ResolvedPrefilter<'a>>> {
    // Prefilters read the stored column in place; rows in a delta get the full filter only.
    if table.has_delta() {
        return Ok(Vec::new());
    }
    let mut resolved = Vec::with_capacity(prefilters.len());
    for prefilter in prefilters {
        let Some(index) = prefilter.property.column(table_id) else {
            resolved.push(ResolvedPrefilter::RejectAll);
            continue;
        };
        let column = table.column(index);
        column.try_verify()?;
        if let Some(values) = column.int64_values() {
            resolved.push(ResolvedPrefilter::Column {
                nulls: column.null_words(),
                values,
                test: prefilter.test.clone(),
            });
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn id_of(slot: usize) -> Expr {
        Expr::Property {
            base: Box::new(Expr::Slot(slot)),
            property: PropertyColumns {
                name: Arc::from("ID"),
                columns: vec![(0, 0)],
            },
        }
    }

    fn int(value: i64) -> Expr {
        Expr::Literal(Value::Int64(value))
    }

    fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        Expr::Binary(op, Box::new(left), Box::new(right))
    }

    #[test]
    fn only_conjunctions_of_prefilters_are_decided_by_them() {
        let below = binary(BinaryOp::Lt, id_of(0), int(5));
        let above = binary(BinaryOp::Gt, int(1), id_of(0));
        assert!(is_conjunction_of_prefilters(&below, 0));
        assert!(is_conjunction_of_prefilters(
            &binary(BinaryOp::And, below.clone(), above.clone()),
            0
        ));
        // Another slot's property, a disjunction, a non-integer constant and an arithmetic
        // operand each need the evaluator.
        assert!(!is_conjunction_of_prefilters(&below, 1));
        assert!(!is_conjunction_of_prefilters(
            &binary(BinaryOp::Or, below.clone(), above.clone()),
            0
        ));
        assert!(!is_conjunction_of_prefilters(
            &binary(BinaryOp::Lt, id_of(0), Expr::Literal(Value::Double(5.0))),
            0
        ));
        assert!(!is_conjunction_of_prefilters(
            &binary(
                BinaryOp::And,
                below,
                binary(
                    BinaryOp::Lt,
                    binary(BinaryOp::Add, id_of(0), int(1)),
                    int(3)
                )
            ),
            0
        ));
        let mut collected = Vec::new();
        collect_prefilters(&above, 0, &mut collected);
        assert_eq!(collected.len(), 1);
        assert_eq!(
            collected[0].test,
            IntTest::Compare(Compare::Lt, 1),
            "`1 > n.ID` is `n.ID < 1`"
        );
        // `IN` over a literal list of INT64s (NULLs skipped, repeats dropped) is a prefilter;
        // a list with another type is not.
        let list = |items: Vec<Value>| Expr::Literal(Value::List(items.into()));
        let in_list = binary(
            BinaryOp::In,
            id_of(0),
            list(vec![
                Value::Int64(3),
                Value::Null,
                Value::Int64(1),
                Value::Int64(3),
            ]),
        );
        assert!(is_conjunction_of_prefilters(&in_list, 0));
        let mut collected = Vec::new();
        collect_prefilters(&in_list, 0, &mut collected);
        assert_eq!(collected[0].test, IntTest::InList(vec![1, 3].into()));
        for other in [Value::Double(2.5), Value::String("a".into())] {
            let mixed = binary(BinaryOp::In, id_of(0), list(vec![Value::Int64(1), other]));
            assert!(!is_conjunction_of_prefilters(&mixed, 0));
        }
        // The binder's form: a list of literal expressions (any other element needs the
        // evaluator).
        let literals = Expr::List(vec![int(9), Expr::Literal(Value::Null), int(2)]);
        let mut collected = Vec::new();
        collect_prefilters(&binary(BinaryOp::In, id_of(0), literals), 0, &mut collected);
        assert_eq!(collected[0].test, IntTest::InList(vec![2, 9].into()));
        let computed = Expr::List(vec![int(9), binary(BinaryOp::Add, int(1), int(1))]);
        assert!(!is_conjunction_of_prefilters(
            &binary(BinaryOp::In, id_of(0), computed),
            0
        ));
        assert!(
            !filter_decided(true, 1, &[]),
            "an unresolved prefilter decides nothing"
        );
        assert!(filter_decided(true, 1, &[ResolvedPrefilter::RejectAll]));
        assert!(!filter_decided(false, 1, &[ResolvedPrefilter::RejectAll]));
    }

    #[test]
    fn pass_bits_agree_with_passes_row_by_row() {
        // Small values so every operator both passes and fails often; every fifth row NULL.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let values: Vec<i64> = (0..300)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 60) as i64 - 8
            })
            .collect();
        let mut nulls = vec![0u64; values.len().div_ceil(64)];
        for row in (0..values.len()).step_by(5) {
            nulls[row / 64] |= 1 << (row % 64);
        }
        let ops = [
            BinaryOp::Eq,
            BinaryOp::Ne,
            BinaryOp::Lt,
            BinaryOp::Le,
            BinaryOp::Gt,
            BinaryOp::Ge,
        ];
        let mut tests: Vec<IntTest> = ops
            .iter()
            .flat_map(|&op| {
                let compare = Compare::of(op).expect("a comparison");
                [-9, -3, 0, 4, 8].map(|constant| IntTest::Compare(compare, constant))
            })
            .collect();
        // IN lists: empty, one, a few (compares), more than the compares' limit (searched).
        for list in [
            &[][..],
            &[3],
            &[-8, 0, 5],
            &[-8, -6, -4, -2, 0, 1, 2, 3, 4, 5, 6, 100],
        ] {
            assert!(list.windows(2).all(|pair| pair[0] < pair[1]));
            tests.push(IntTest::InList(list.into()));
        }
        for test in tests {
            for with_nulls in [false, true] {
                let prefilter = ResolvedPrefilter::Column {
                    nulls: with_nulls.then_some(&nulls[..]),
                    values: &values,
                    test: test.clone(),
                };
                for start in [0, 64, 256] {
                    for end in [start, start + 1, start + 63, 200.max(start), 300] {
                        let rows = start..end.min(values.len());
                        let mut words = vec![u64::MAX; rows.len().div_ceil(64)];
                        // A zero word stays zero (and is not read).
                        if let Some(first) = words.first_mut() {
                            *first &= !1;
                        }
                        prefilter.and_pass_bits(rows.clone(), &mut words);
                        for row in rows {
                            let offset = row - start;
                            let bit = words[offset / 64] >> (offset % 64) & 1 == 1;
                            let expected = offset != 0 && prefilter.passes(row);
                            assert_eq!(bit, expected, "{test:?} row {row}");
                            if let IntTest::InList(list) = &test {
                                let null = with_nulls && row % 5 == 0;
                                let member = list.contains(&values[row]);
                                assert_eq!(prefilter.passes(row), !null && member, "{test:?}");
                            }
                        }
                    }
                }
            }
        }
        let mut words = [u64::MAX; 2];
        ResolvedPrefilter::RejectAll.and_pass_bits(0..100, &mut words);
        assert_eq!(words, [0, 0]);
    }
}

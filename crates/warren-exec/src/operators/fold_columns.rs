//! Aggregates of a node scan read from the stored columns (`Plan::FoldColumns`): the live
//! nodes of some tables that pass a filter come a batch of offsets at a time
//! (`node_batches`), and each
//! fold reads its property for the batch straight from the column (INT64 and DOUBLE arrays)
//! or, for other types and tables with a delta, value by value. Every fold ends in the state
//! the aggregation's own accumulator would reach over the same values in the same order
//! (integer sums are exact whatever the order; DOUBLE sums and averages add in row order;
//! MIN and MAX keep the first of equal values), so the one row it yields folds into the
//! scan's answer bit for bit.

use std::cmp::Ordering;
use std::sync::Arc;

use warren_common::value::{compare_doubles, Value};
use warren_common::{Result, TableId};
use warren_planner::expr::{AggregateFunction, Expr};
use warren_planner::plan::ColumnFold;
use warren_storage::{NodeTable, Snapshot};

use super::aggregate::Accumulator;
use super::node_batches::{columns_in, Batch, ScanFilter};
use super::{Operator, Row};
use crate::context::ExecContext;
use crate::eval::extremes::{extreme_kernel, Extreme};
use crate::eval::Evaluator;

pub struct FoldColumns {
    tables: Vec<TableId>,
    scan: ScanFilter,
    folds: Vec<ColumnFold>,
    width: usize,
    done: bool,
}

impl FoldColumns {
    pub fn new(
        tables: Vec<TableId>,
        slot: usize,
        filter: Option<Expr>,
        folds: Vec<ColumnFold>,
        width: usize,
    ) -> Self {
        assert!(slot < width, "the node's slot is in the row");
        assert!(
            folds.iter().all(|fold| fold.slot < width),
            "every fold's slot is in the row"
        );
        Self {
            tables,
            scan: ScanFilter::new(slot, filter),
            folds,
            width,
            done: false,
        }
    }

    /// Folds every passing node of every table; the number of nodes that passed.
    fn fold_all(
        &self,
        snapshot: &Arc<Snapshot>,
        ctx: &ExecContext,
        states: &mut [Accumulator],
    ) -> Result<u64> {
        let evaluator = Evaluator::new(snapshot, ctx);
        let mut passed = 0u64;
        for &table_id in &self.tables {
            let table = snapshot.node_table(table_id);
            // `None` for a count of rows, or a property the table lacks.
            let properties = self.folds.iter().map(|fold| fold.property.as_ref());
            let columns = columns_in(table_id, table, properties)?;
            let mut fold = |batch: Batch<'_>| -> Result<()> {
                for ((fold, state), column) in self.folds.iter().zip(&mut *states).zip(&columns) {
                    fold_batch(fold.function, state, table, *column, batch)?;
                }
                passed += batch.len() as u64;
                Ok(())
            };
            self.scan
                .for_each_batch(table_id, table, &evaluator, self.width, ctx, &mut fold)?;
        }
        Ok(passed)
    }
}

/// Folds property `column` (`None`: NULL, or the fold counts rows) of `table` at `batch` into
/// `state` as the accumulator would, value by value in order.
fn fold_batch(
    function: AggregateFunction,
    state: &mut Accumulator,
    table: &NodeTable,
    column: Option<usize>,
    batch: Batch<'_>,
) -> Result<()> {
    if batch.len() == 0 {
        return Ok(());
    }
    let Some(column) = column else {
        if function == AggregateFunction::CountStar {
            state.add_rows(batch.len() as u64);
        }
        // Every value NULL: no aggregate but `count(*)` changes.
        return Ok(());
    };
    if !table.has_delta() {
        let stored = table.column(column);
        let mut kept = Vec::new();
        // The rows whose value is not NULL.
        let batch = if stored.has_nulls() {
            kept.extend(batch.rows().filter(|&row| !stored.is_null(row as usize)));
            Batch::Rows(&kept)
        } else {
            batch
        };
        // A run's values are a slice (its loops vectorize), a list's are gathered.
        let count = batch.len();
        if let Some(values) = stored.int64_values() {
            return match batch {
                Batch::Run { start, end } => {
                    let run = &values[start as usize..end as usize];
                    match function {
                        AggregateFunction::Min | AggregateFunction::Max => {
                            let extreme = if function == AggregateFunction::Min {
                                Extreme::Least
                            } else {
                                Extreme::Greatest
                            };
                            let value = Value::Int64(extreme_kernel(extreme)(run));
                            state.add(function, Some(&value))
                        }
                        _ => fold_int64(function, state, run.iter().copied(), count),
                    }
                }
                Batch::Rows(rows) => {
                    let gathered = rows.iter().map(|&row| values[row as usize]);
                    fold_int64(function, state, gathered, count)
                }
            };
        }
        if let Some(values) = stored.double_values() {
            return match batch {
                Batch::Run { start, end } => {
                    let run = values[start as usize..end as usize].iter().copied();
                    fold_doubles(function, state, run, count)
                }
                Batch::Rows(rows) => {
                    let gathered = rows.iter().map(|&row| values[row as usize]);
                    fold_doubles(function, state, gathered, count)
                }
            };
        }
    }
    for row in batch.rows() {
        let value = table.try_value(row, column)?;
        state.add(function, Some(&value))?;
    }
    Ok(())
}

/// [`fold_batch`] of `count` non-NULL values of a stored INT64 (or SERIAL) column, whose
/// values are `Value::Int64`.
fn fold_int64(
    function: AggregateFunction,
    state: &mut Accumulator,
    values: impl Iterator<Item = i64>,
    count: usize,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    match (function, &mut *state) {
        (AggregateFunction::Count, _) => state.add_rows(count as u64),
        // An exact sum: adding the batch's total is adding its values one by one.
        (AggregateFunction::Sum, Accumulator::Sum(None | Some(Value::Int128(_)))) => {
            let total = exact_sum(values, count);
            state.add(function, Some(&Value::Int128(total)))?;
        }
        (AggregateFunction::Avg, Accumulator::Avg { sum, count: seen }) => {
            for value in values {
                *sum += value as f64;
            }
            *seen += count as i64;
        }
        // Equal integers are the same value: any extreme is the first.
        (AggregateFunction::Min, _) => {
            let least = values.min().expect("a value");
            state.add(function, Some(&Value::Int64(least)))?;
        }
        (AggregateFunction::Max, _) => {
            let most = values.max().expect("a value");
            state.add(function, Some(&Value::Int64(most)))?;
        }
        _ => {
            for value in values {
                state.add(function, Some(&Value::Int64(value)))?;
            }
        }
    }
    Ok(())
}

/// The exact sum of `count` INT64s (at most `BATCH_ROWS`): the values' high 32 bits (signed)
/// and low 32 bits (unsigned) summed apart in 64-bit adds, which vectorize where `i128` adds
/// do not, and cannot overflow for fewer than 2^31 values.
fn exact_sum(values: impl Iterator<Item = i64>, count: usize) -> i128 {
    assert!(count < 1 << 31, "a batch of fewer than 2^31 values");
    let (high, low) = values.fold((0i64, 0u64), |(high, low), value| {
        (high + (value >> 32), low + (value as u64 & 0xffff_ffff))
    });
    (i128::from(high) << 32) + i128::from(low)
}

/// [`fold_batch`] of `count` non-NULL values of a stored DOUBLE column.
fn fold_doubles(
    function: AggregateFunction,
    state: &mut Accumulator,
    mut values: impl Iterator<Item = f64>,
    count: usize,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    match (function, &mut *state) {
        (AggregateFunction::Count, _) => state.add_rows(count as u64),
        // In row order from the first value, as the accumulator adds DOUBLEs.
        (AggregateFunction::Sum, Accumulator::Sum(sum @ (None | Some(Value::Double(_))))) => {
            let mut total = match sum {
                Some(Value::Double(total)) => *total,
                _ => values.next().expect("a value"),
            };
            for value in values {
                total += value;
            }
            *sum = Some(Value::Double(total));
        }
        (AggregateFunction::Avg, Accumulator::Avg { sum, count: seen }) => {
            for value in values {
                *sum += value;
            }
            *seen += count as i64;
        }
        // The first of equal values (-0.0 and 0.0 compare equal), as the accumulator keeps it.
        (AggregateFunction::Min | AggregateFunction::Max, _) => {
            let keep = if function == AggregateFunction::Min {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            let mut best = values.next().expect("a value");
            for value in values {
                if compare_doubles(value, best) == keep {
                    best = value;
                }
            }
            state.add(function, Some(&Value::Double(best)))?;
        }
        _ => {
            for value in values {
                state.add(function, Some(&Value::Double(value)))?;
            }
        }
    }
    Ok(())
}

impl Operator for FoldColumns {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(None);
        }
        let snapshot = ctx.snapshot();
        let mut states: Vec<Accumulator> = self
            .folds
            .iter()
            .map(|fold| Accumulator::new(fold.function))
            .collect();
        if self.fold_all(&snapshot, ctx, &mut states)? == 0 {
            return Ok(None);
        }
        let mut row = vec![Value::Null; self.width];
        for (fold, state) in self.folds.iter().zip(states) {
            row[fold.slot] = state.finish();
        }
        Ok(Some(row))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::operators::node_batches::BATCH_ROWS;

    proptest! {
        /// The split sum is the `i128` sum, for batches of the extremes and of small values.
        #[test]
        fn the_exact_sum_is_the_wide_sum(
            values in prop::collection::vec(
                prop_oneof![Just(i64::MIN), Just(i64::MAX), any::<i64>(), -3i64..3],
                0..BATCH_ROWS,
            ),
        ) {
            let wide: i128 = values.iter().map(|&v| i128::from(v)).sum();
            prop_assert_eq!(exact_sum(values.iter().copied(), values.len()), wide);
        }
    }

    #[test]
    fn a_full_batch_of_extremes_sums_exactly() {
        for value in [i64::MIN, i64::MAX, -1] {
            let values = vec![value; BATCH_ROWS];
            let wide = i128::from(value) * BATCH_ROWS as i128;
            assert_eq!(exact_sum(values.iter().copied(), values.len()), wide);
        }
    }
}

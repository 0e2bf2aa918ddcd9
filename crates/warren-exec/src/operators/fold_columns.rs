//! Aggregates of a node scan read from the stored columns (`Plan::FoldColumns`): the live
//! nodes of some tables that pass a filter come a batch of offsets at a time
//! (`node_batches`), and each
//! fold reads its property for the batch straight from the column (INT64 and DOUBLE arrays)
//! or, for other types and tables with a delta, value by value. Every fold ends in the state
//! the aggregation's own accumulator would reach over the same values in the same order
//! (integer sums are exact whatever the order; DOUBLE sums and averages add in row order;
//! MIN and MAX keep the first of equal values), so the one row it yields folds into the
//! scan's answer bit for bit.
//!
//! With keys, each node's keys are read first (`column_keys`), in node order, and give its
//! group (the aggregation's own `GroupIndex`, groups numbered as they first appear); each fold
//! then adds the batch's values to their groups' accumulators in node order, so every group
//! ends as the aggregation would leave it, and one row per group comes out in that order. A
//! key that fails at a node fails the fold after the nodes before it were folded, as the rows
//! would.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use warren_common::value::{compare_doubles, Value};
use warren_common::{Result, TableId};
use warren_planner::expr::{AggregateFunction, Expr};
use warren_planner::plan::ColumnFold;
use warren_storage::{NodeTable, Snapshot};

use super::aggregate::{Accumulator, GroupIndex};
use super::column_keys::{KeyReader, QuickKey};
use super::node_batches::{columns_in, Batch, ScanFilter};
use super::{row_bytes, Operator, Row};
use crate::context::ExecContext;
use crate::eval::extremes::{extreme_kernel, Extreme};
use crate::eval::Evaluator;

pub struct FoldColumns {
    tables: Vec<TableId>,
    slot: usize,
    scan: ScanFilter,
    keys: Vec<(usize, Expr)>,
    folds: Vec<ColumnFold>,
    width: usize,
    done: bool,
    /// A grouped fold's rows, one per group, handed out one per `next`.
    output: std::vec::IntoIter<Row>,
}

impl FoldColumns {
    pub fn new(
        tables: Vec<TableId>,
        slot: usize,
        filter: Option<Expr>,
        keys: Vec<(usize, Expr)>,
        folds: Vec<ColumnFold>,
        width: usize,
    ) -> Self {
        assert!(slot < width, "the node's slot is in the row");
        assert!(
            folds.iter().all(|fold| fold.slot < width),
            "every fold's slot is in the row"
        );
        assert!(
            keys.iter().all(|(key_slot, _)| *key_slot < width),
            "every key's slot is in the row"
        );
        Self {
            tables,
            slot,
            scan: ScanFilter::new(slot, filter),
            keys,
            folds,
            width,
            done: false,
            output: Vec::new().into_iter(),
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

impl FoldColumns {
    /// The groups of every passing node of every table, one row each (keys and folds in their
    /// slots), in order of their first node; the bytes reserved for them stay reserved.
    fn fold_groups(&self, snapshot: &Arc<Snapshot>, ctx: &ExecContext) -> Result<Vec<Row>> {
        let evaluator = Evaluator::new(snapshot, ctx);
        let mut groups = Groups {
            index: GroupIndex::new(self.keys.len()),
            dense_groups: Vec::new(),
            int64_groups: HashMap::default(),
            keys: Vec::new(),
            states: vec![Vec::new(); self.folds.len()],
            reserved: 0,
            bytes_per_group: (self.keys.len() * 64 + self.folds.len() * 48) as u64,
        };
        let mut row = vec![Value::Null; self.width];
        let mut group_of: Vec<usize> = Vec::new();
        let mut key_values: Vec<Value> = Vec::with_capacity(self.keys.len());
        let result = (|| -> Result<()> {
            for &table_id in &self.tables {
                let table = snapshot.node_table(table_id);
                let properties = self.folds.iter().map(|fold| fold.property.as_ref());
                let columns = columns_in(table_id, table, properties)?;
                let readers = self
                    .keys
                    .iter()
                    .map(|(_, key)| KeyReader::new(key, self.slot, table_id, table))
                    .collect::<Result<Vec<_>>>()?;
                // One key read as an INT64 finds its group without a value.
                let quick = match readers.as_slice() {
                    [reader] => Some(reader),
                    _ => None,
                };
                let mut fold = |batch: Batch<'_>| -> Result<()> {
                    group_of.clear();
                    let mut failed = None;
                    for node in batch.rows() {
                        if let Some(QuickKey::Int64(key)) = quick.map(|reader| reader.quick(node)) {
                            if let Some(group) = groups.int64_group(key) {
                                group_of.push(group);
                                continue;
                            }
                        }
                        key_values.clear();
                        for reader in &readers {
                            let at = (table_id, self.slot);
                            match reader.value(node, at, &evaluator, &mut row) {
                                Ok(value) => key_values.push(value),
                                Err(error) => {
                                    failed = Some(error);
                                    break;
                                }
                            }
                        }
                        if failed.is_some() {
                            break;
                        }
                        group_of.push(groups.find_or_add(&self.folds, &mut key_values, ctx)?);
                    }
                    // The nodes before a failed key fold, as their rows would have.
                    let folded = batch.first(group_of.len());
                    for (f, fold) in self.folds.iter().enumerate() {
                        let states = &mut groups.states[f];
                        fold_grouped(fold.function, states, &group_of, table, columns[f], folded)?;
                    }
                    failed.map_or(Ok(()), Err)
                };
                self.scan
                    .for_each_batch(table_id, table, &evaluator, self.width, ctx, &mut fold)?;
            }
            Ok(())
        })();
        ctx.memory.release(groups.reserved);
        result?;
        let Groups { keys, states, .. } = groups;
        let mut states: Vec<std::vec::IntoIter<Accumulator>> =
            states.into_iter().map(Vec::into_iter).collect();
        let mut rows = Vec::with_capacity(keys.len());
        for group_keys in keys {
            let mut out = vec![Value::Null; self.width];
            for ((slot, _), key) in self.keys.iter().zip(group_keys) {
                out[*slot] = key;
            }
            for (fold, state) in self.folds.iter().zip(&mut states) {
                out[fold.slot] = state.next().expect("a state per group").finish();
            }
            rows.push(out);
        }
        let bytes: u64 = rows.iter().map(row_bytes).sum();
        ctx.memory.reserve(bytes, "aggregation output")?;
        Ok(rows)
    }
}

/// Single INT64 keys below this find their group by position (a list of this many group
/// numbers, made at the first such key: 512 KiB).
const DENSE_KEYS: usize = 1 << 16;

/// No group known yet for a dense key.
const NO_GROUP: usize = usize::MAX;

/// A grouped fold's groups: their index by keys, their keys, each fold's accumulator per
/// group, and the memory reserved for them.
struct Groups {
    index: GroupIndex,
    /// The groups `index` found for single INT64 keys (a cache: a key of another type equal
    /// to an INT64 may have started the group): keys `0..DENSE_KEYS` by position (filled as
    /// they are found; `NO_GROUP` for none yet), others by hash.
    dense_groups: Vec<usize>,
    int64_groups: HashMap<i64, usize, ahash::RandomState>,
    keys: Vec<Vec<Value>>,
    /// `states[f][g]`: fold `f`'s accumulator of group `g`.
    states: Vec<Vec<Accumulator>>,
    reserved: u64,
    bytes_per_group: u64,
}

impl Groups {
    /// The group of the single INT64 key `key`, if it has one already and this knows it.
    #[inline]
    fn int64_group(&self, key: i64) -> Option<usize> {
        match usize::try_from(key) {
            Ok(position) if position < DENSE_KEYS => self
                .dense_groups
                .get(position)
                .copied()
                .filter(|&group| group != NO_GROUP),
            _ => self.int64_groups.get(&key).copied(),
        }
    }

    /// Remembers that the single INT64 key `key` is in `group`.
    fn cache_int64(&mut self, key: i64, group: usize) {
        match usize::try_from(key) {
            Ok(position) if position < DENSE_KEYS => {
                if self.dense_groups.is_empty() {
                    self.dense_groups = vec![NO_GROUP; DENSE_KEYS];
                }
                self.dense_groups[position] = group;
            }
            _ => {
                self.int64_groups.insert(key, group);
            }
        }
    }

    /// The group of the keys in `keys` (emptied when they start a group, which keeps them),
    /// added with a fresh accumulator per fold when they start one.
    fn find_or_add(
        &mut self,
        folds: &[ColumnFold],
        keys: &mut Vec<Value>,
        ctx: &ExecContext,
    ) -> Result<usize> {
        let found = match keys.as_slice() {
            [key] => self.index.find_one(key),
            _ => self.index.find_many(keys),
        };
        let int64_key = match keys.as_slice() {
            [Value::Int64(key)] => Some(*key),
            _ => None,
        };
        if let Some(group) = found {
            if let Some(key) = int64_key {
                self.cache_int64(key, group);
            }
            return Ok(group);
        }
        ctx.memory.reserve(self.bytes_per_group, "aggregation")?;
        self.reserved += self.bytes_per_group;
        let group = self.keys.len();
        self.index.insert(keys, group);
        if let Some(key) = int64_key {
            self.cache_int64(key, group);
        }
        self.keys.push(std::mem::take(keys));
        for (states, fold) in self.states.iter_mut().zip(folds) {
            states.push(Accumulator::new(fold.function));
        }
        Ok(group)
    }
}

/// Folds property `column` (`None`: NULL, or the fold counts rows) of `table` at `batch`, node
/// `i` of which is in group `group_of[i]`, into the groups' `states` as the accumulator would,
/// value by value in node order.
fn fold_grouped(
    function: AggregateFunction,
    states: &mut [Accumulator],
    group_of: &[usize],
    table: &NodeTable,
    column: Option<usize>,
    batch: Batch<'_>,
) -> Result<()> {
    debug_assert_eq!(group_of.len(), batch.len(), "a group per node");
    let Some(column) = column else {
        if function == AggregateFunction::CountStar {
            for &group in group_of {
                states[group].add_rows(1);
            }
        }
        // Every value NULL: no aggregate but `count(*)` changes.
        return Ok(());
    };
    if !table.has_delta() {
        let stored = table.column(column);
        let nulls = stored.has_nulls();
        let present = |row: u64| !nulls || !stored.is_null(row as usize);
        if let Some(values) = stored.int64_values() {
            for (row, &group) in batch.rows().zip(group_of) {
                if present(row) {
                    add_int64(function, &mut states[group], values[row as usize])?;
                }
            }
            return Ok(());
        }
        if let Some(values) = stored.double_values() {
            for (row, &group) in batch.rows().zip(group_of) {
                if present(row) {
                    let value = Value::Double(values[row as usize]);
                    states[group].add(function, Some(&value))?;
                }
            }
            return Ok(());
        }
    }
    for (row, &group) in batch.rows().zip(group_of) {
        let value = table.try_value(row, column)?;
        states[group].add(function, Some(&value))?;
    }
    Ok(())
}

/// One non-NULL INT64 value folded into `state`, as `Accumulator::add` folds it.
#[inline]
fn add_int64(function: AggregateFunction, state: &mut Accumulator, value: i64) -> Result<()> {
    match (function, &mut *state) {
        (AggregateFunction::Count, _) => state.add_rows(1),
        // The accumulator's INT128 addition, which fails only past the INT128 range.
        (AggregateFunction::Sum, Accumulator::Sum(Some(Value::Int128(total))))
            if total.checked_add(i128::from(value)).is_some() =>
        {
            *total += i128::from(value);
        }
        (AggregateFunction::Avg, Accumulator::Avg { sum, count }) => {
            *sum += value as f64;
            *count += 1;
        }
        // INT64s compare as `total_cmp` compares them.
        (AggregateFunction::Min, Accumulator::Min(Some(Value::Int64(least)))) => {
            *least = (*least).min(value);
        }
        (AggregateFunction::Max, Accumulator::Max(Some(Value::Int64(most)))) => {
            *most = (*most).max(value);
        }
        _ => state.add(function, Some(&Value::Int64(value)))?,
    }
    Ok(())
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
        if !self.keys.is_empty() {
            if !std::mem::replace(&mut self.done, true) {
                let snapshot = ctx.snapshot();
                self.output = self.fold_groups(&snapshot, ctx)?.into_iter();
            }
            return Ok(self.output.next());
        }
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

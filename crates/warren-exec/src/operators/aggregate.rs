//! Hash aggregation: groups input rows by key values and folds each aggregate function per
//! group. Output rows hold the key slots and aggregate slots only. Groups come out in order of
//! first appearance. The tables hash with `ahash` (randomly keyed per table, several times
//! cheaper per key than the standard SipHash). A single key is looked up by its value, several
//! by one reused buffer of their values; keys and arguments that are slots are read in place
//! (borrowed), and keys are copied only when they start a group. Consumed rows go back to the
//! input ([`Operator::recycle`]) for reuse. When every key and argument is a slot and the input
//! yields runs of rows (a procedure call, [`RowRun`]), the runs are folded without making rows.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// The hasher of the grouping and DISTINCT tables.
type Hasher = ahash::RandomState;

use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_planner::expr::{AggregateExpr, AggregateFunction, BinaryOp, Expr};

use super::{row_bytes, BoxedOperator, Operator, Row, RowRun};
use crate::context::ExecContext;
use crate::eval::Evaluator;
use crate::procedures::ProcedureColumn;

/// The running state of one aggregate in one group.
#[derive(Clone, Debug)]
pub(crate) enum Accumulator {
    Count(i64),
    Sum(Option<Value>),
    Min(Option<Value>),
    Max(Option<Value>),
    Avg { sum: f64, count: i64 },
    Collect(Vec<Value>),
}

impl Accumulator {
    pub(crate) fn new(function: AggregateFunction) -> Self {
        match function {
            AggregateFunction::CountStar
            | AggregateFunction::Count
            | AggregateFunction::SumCounts => Accumulator::Count(0),
            AggregateFunction::Sum => Accumulator::Sum(None),
            AggregateFunction::Min => Accumulator::Min(None),
            AggregateFunction::Max => Accumulator::Max(None),
            AggregateFunction::Avg => Accumulator::Avg { sum: 0.0, count: 0 },
            AggregateFunction::Collect => Accumulator::Collect(Vec::new()),
        }
    }

    /// Folds `value` (`None` for `count(*)`, which has no argument) into the state; values
    /// are borrowed from the row and copied only where the state keeps them.
    pub(crate) fn add(&mut self, function: AggregateFunction, value: Option<&Value>) -> Result<()> {
        let value = match (function, value) {
            (AggregateFunction::CountStar, _) => {
                if let Accumulator::Count(c) = self {
                    *c += 1;
                }
                return Ok(());
            }
            (_, None) | (_, Some(Value::Null)) => return Ok(()),
            (_, Some(v)) => v,
        };
        match self {
            Accumulator::Count(c) if function == AggregateFunction::SumCounts => {
                *c = c.checked_add(value.as_i64().unwrap_or(0)).ok_or_else(|| {
                    Error::LimitExceeded("count(*) exceeds the INT64 range".into())
                })?;
            }
            Accumulator::Count(c) => *c += 1,
            Accumulator::Sum(Some(Value::Double(sum))) if matches!(value, Value::Double(_)) => {
                // Double + Double is a plain float addition (`eval::binary`), done in place.
                *sum += value.as_f64().expect("a DOUBLE");
            }
            Accumulator::Sum(sum) => {
                let value = match value.as_i128() {
                    Some(v) => Value::Int128(v),
                    None => value.clone(),
                };
                *sum = Some(match sum.take() {
                    None => value,
                    Some(s) => crate::eval::binary(BinaryOp::Add, s, value)?,
                });
            }
            Accumulator::Min(min) => {
                if min.as_ref().is_none_or(|m| value.total_cmp(m).is_lt()) {
                    *min = Some(value.clone());
                }
            }
            Accumulator::Max(max) => {
                if max.as_ref().is_none_or(|m| value.total_cmp(m).is_gt()) {
                    *max = Some(value.clone());
                }
            }
            Accumulator::Avg { sum, count } => {
                *sum += value
                    .as_f64()
                    .ok_or_else(|| Error::runtime("AVG expects numbers."))?;
                *count += 1;
            }
            Accumulator::Collect(items) => items.push(value.clone()),
        }
        Ok(())
    }

    /// Counts `rows` more rows or non-NULL values (a count's state, as `add` would per
    /// value).
    pub(crate) fn add_rows(&mut self, rows: u64) {
        match self {
            Accumulator::Count(count) => {
                *count += i64::try_from(rows).expect("a count fits in INT64");
            }
            other => unreachable!("rows are counted by a count, not {other:?}"),
        }
    }

    pub(crate) fn finish(self) -> Value {
        match self {
            Accumulator::Count(c) => Value::Int64(c),
            Accumulator::Sum(v) | Accumulator::Min(v) | Accumulator::Max(v) => {
                v.unwrap_or(Value::Null)
            }
            Accumulator::Avg { count: 0, .. } => Value::Null,
            Accumulator::Avg { sum, count } => Value::Double(sum / count as f64),
            Accumulator::Collect(items) if items.is_empty() => Value::Null,
            Accumulator::Collect(items) => Value::list(items),
        }
    }
}

/// Keys `0..SMALL_KEYS` of INT64 are found by position in [`GroupIndex::One`]'s `small`.
const SMALL_KEYS: usize = 64;

/// No group yet for a small key.
const NO_GROUP: usize = usize::MAX;

/// Rows of a procedure run folded between two interrupt checks (a run can hold every node a
/// spread reached, so it is checked in chunks rather than per row).
const RUN_ROWS_PER_CHECK: usize = 4096;

/// The groups by key: a single key is looked up by the value itself (no key vector per row),
/// several by the vector of their values. A single key that is a small non-negative INT64 (a
/// hop count, a label index) is found by position in `small`, without hashing; the first key
/// that is not an INT64 moves those groups into the map (another type, e.g. a DOUBLE 1.0, may
/// equal an INT64 key), and from then on every key goes through the map.
pub(crate) enum GroupIndex {
    One {
        small: Option<Vec<usize>>,
        map: HashMap<Value, usize, Hasher>,
    },
    Many(HashMap<Vec<Value>, usize, Hasher>),
}

impl GroupIndex {
    pub(crate) fn new(keys: usize) -> Self {
        if keys == 1 {
            GroupIndex::One {
                small: Some(vec![NO_GROUP; SMALL_KEYS]),
                map: HashMap::default(),
            }
        } else {
            GroupIndex::Many(HashMap::default())
        }
    }

    /// The position of `key` in `small`, if it is a small INT64.
    fn small_position(key: &Value) -> Option<usize> {
        match key {
            Value::Int64(v) => usize::try_from(*v).ok().filter(|&v| v < SMALL_KEYS),
            _ => None,
        }
    }

    pub(crate) fn find_one(&mut self, key: &Value) -> Option<usize> {
        let GroupIndex::One { small, map } = self else {
            unreachable!("a single key is looked up by value")
        };
        if let Some(positions) = small {
            if let Some(position) = Self::small_position(key) {
                return Some(positions[position]).filter(|&group| group != NO_GROUP);
            }
            if !matches!(key, Value::Int64(_)) {
                for (position, &group) in positions.iter().enumerate() {
                    if group != NO_GROUP {
                        map.insert(Value::Int64(position as i64), group);
                    }
                }
                *small = None;
            }
        }
        map.get(key).copied()
    }

    /// The group of the small INT64 `key`, if small keys are indexed by position and it has
    /// one ([`GroupIndex::find_one`] finds the same group).
    #[inline]
    pub(crate) fn small_group(&self, key: i64) -> Option<usize> {
        let GroupIndex::One {
            small: Some(positions),
            ..
        } = self
        else {
            return None;
        };
        let group = *positions.get(usize::try_from(key).ok()?)?;
        (group != NO_GROUP).then_some(group)
    }

    pub(crate) fn find_many(&self, keys: &[Value]) -> Option<usize> {
        match self {
            GroupIndex::Many(map) => map.get(keys).copied(),
            GroupIndex::One { .. } => unreachable!("several keys are looked up by vector"),
        }
    }

    /// Records `group` for `keys`, just looked up and not found.
    pub(crate) fn insert(&mut self, keys: &[Value], group: usize) {
        match self {
            GroupIndex::One { small, map } => {
                let [key] = keys else {
                    unreachable!("one key per group")
                };
                match (small, Self::small_position(key)) {
                    (Some(positions), Some(position)) => positions[position] = group,
                    _ => {
                        map.insert(key.clone(), group);
                    }
                }
            }
            GroupIndex::Many(map) => {
                map.insert(keys.to_vec(), group);
            }
        }
    }
}

/// The value of `expr` over `row`: borrowed from the row when it is a slot, evaluated
/// otherwise (`evaluator` is present whenever some expression is not a slot).
fn value_of<'r>(
    evaluator: Option<&Evaluator<'_>>,
    expr: &Expr,
    row: &'r Row,
) -> Result<Cow<'r, Value>> {
    match expr {
        Expr::Slot(slot) => Ok(Cow::Borrowed(&row[*slot])),
        _ => Ok(Cow::Owned(
            evaluator
                .expect("an evaluator for a computed expression")
                .eval(expr, row)?,
        )),
    }
}

struct Group {
    keys: Vec<Value>,
    accumulators: Vec<Accumulator>,
    /// Values seen per aggregate, when one is DISTINCT (else empty: no allocation per group).
    distinct: Vec<HashSet<Value, Hasher>>,
}

pub struct Aggregate {
    input: BoxedOperator,
    width: usize,
    keys: Vec<(usize, Expr)>,
    aggregates: Vec<(usize, AggregateExpr)>,
    output: Option<std::vec::IntoIter<Row>>,
}

impl Aggregate {
    pub fn new(
        input: BoxedOperator,
        width: usize,
        keys: Vec<(usize, Expr)>,
        aggregates: Vec<(usize, AggregateExpr)>,
    ) -> Self {
        Self {
            input,
            width,
            keys,
            aggregates,
            output: None,
        }
    }

    fn new_group(&self, keys: Vec<Value>) -> Group {
        Group {
            keys,
            accumulators: self
                .aggregates
                .iter()
                .map(|(_, a)| Accumulator::new(a.function))
                .collect(),
            distinct: if self.aggregates.iter().any(|(_, a)| a.distinct) {
                self.aggregates.iter().map(|_| HashSet::default()).collect()
            } else {
                Vec::new()
            },
        }
    }

    fn consume(&mut self, ctx: &ExecContext) -> Result<Vec<Row>> {
        let mut folding = Folding {
            index: GroupIndex::new(self.keys.len()),
            groups: Vec::new(),
            reserved: 0,
            keys: Vec::with_capacity(self.keys.len()),
        };
        // Slots are read in place; only other expressions need an evaluator (and a snapshot).
        let evaluates = self
            .keys
            .iter()
            .map(|(_, e)| e)
            .chain(self.aggregates.iter().filter_map(|(_, a)| a.arg.as_ref()))
            .any(|e| !matches!(e, Expr::Slot(_)));
        if !evaluates && self.input.yields_runs() {
            while let Some(run) = self.input.next_run(ctx)? {
                self.fold_run(&mut folding, &run, ctx)?;
            }
        } else {
            while let Some(row) = self.input.next(ctx)? {
                ctx.tick()?;
                let snapshot = evaluates.then(|| ctx.snapshot());
                let evaluator = snapshot.as_deref().map(|s| Evaluator::new(s, ctx));
                self.fold(&mut folding, ctx, &mut |e| {
                    value_of(evaluator.as_ref(), e, &row)
                })?;
                self.input.recycle(row);
            }
        }
        let Folding {
            mut groups,
            reserved,
            ..
        } = folding;
        if groups.is_empty() && self.keys.is_empty() {
            groups.push(self.new_group(Vec::new()));
        }
        let mut rows = Vec::with_capacity(groups.len());
        for group in groups {
            let mut row = vec![Value::Null; self.width];
            for ((slot, _), key) in self.keys.iter().zip(group.keys) {
                row[*slot] = key;
            }
            for ((slot, _), accumulator) in self.aggregates.iter().zip(group.accumulators) {
                row[*slot] = accumulator.finish();
            }
            rows.push(row);
        }
        ctx.memory.release(reserved);
        let bytes: u64 = rows.iter().map(row_bytes).sum();
        ctx.memory.reserve(bytes, "aggregation output")?;
        Ok(rows)
    }

    /// Folds every row of `run` (keys and arguments are all slots): each slot's value is read
    /// from the run's columns or its base row, without making the row. Rows whose group is
    /// already found by a small INT64 key from a typed column, and whose aggregates are counts
    /// and DOUBLE sums of typed columns, are folded on typed values ([`Aggregate::fold_typed`]).
    fn fold_run(&self, folding: &mut Folding, run: &RowRun, ctx: &ExecContext) -> Result<()> {
        let sources = run.sources();
        let column_of = |expr: &Expr| match expr {
            Expr::Slot(slot) => sources[*slot].map(|j| run.rows.column(j)),
            _ => unreachable!("runs are folded only when keys and arguments are slots"),
        };
        let typed = self.typed_folds(&column_of);
        let small_keys = match self.keys.as_slice() {
            [(_, key)] => match column_of(key) {
                Some(ProcedureColumn::Int64s(keys)) => Some(keys.as_slice()),
                _ => None,
            },
            _ => None,
        };
        let fast = typed.as_deref().zip(small_keys);
        let rows = run.rows.len();
        for chunk_start in (0..rows).step_by(RUN_ROWS_PER_CHECK) {
            ctx.interrupt.check()?;
            let chunk_end = rows.min(chunk_start + RUN_ROWS_PER_CHECK);
            let mut i = chunk_start;
            while i < chunk_end {
                if let Some((typed, keys)) = fast {
                    let key = keys[i];
                    if let Some(group) = folding.index.small_group(key) {
                        // The consecutive rows with this key, folded as one stretch.
                        let same = keys[i..chunk_end].iter().take_while(|&&k| k == key);
                        let end = i + same.count();
                        Self::fold_typed_stretch(&mut folding.groups[group], typed, i..end);
                        i = end;
                        continue;
                    }
                }
                self.fold(folding, ctx, &mut |e| {
                    let Expr::Slot(slot) = e else {
                        unreachable!("runs are folded only when keys and arguments are slots")
                    };
                    Ok(match sources[*slot] {
                        Some(column) => Cow::Owned(run.rows.value(column, i)),
                        None => Cow::Borrowed(&run.base[*slot]),
                    })
                })?;
                i += 1;
            }
        }
        Ok(())
    }

    /// Each aggregate as a fold over a typed column, if all can be: `count(*)`, `count` of a
    /// typed column (no NULLs), `sum` of a DOUBLE column, none DISTINCT.
    fn typed_folds<'a>(
        &self,
        column_of: &dyn Fn(&Expr) -> Option<&'a ProcedureColumn>,
    ) -> Option<Vec<TypedFold<'a>>> {
        self.aggregates
            .iter()
            .map(|(_, aggregate)| {
                let column = aggregate.arg.as_ref().and_then(column_of);
                match (aggregate.function, aggregate.distinct, column) {
                    (AggregateFunction::CountStar, _, _) => Some(TypedFold::Count),
                    (
                        AggregateFunction::Count,
                        false,
                        Some(
                            ProcedureColumn::Int64s(_)
                            | ProcedureColumn::Doubles(_)
                            | ProcedureColumn::Nodes(_),
                        ),
                    ) => Some(TypedFold::Count),
                    (AggregateFunction::Sum, false, Some(ProcedureColumn::Doubles(values))) => {
                        Some(TypedFold::SumDoubles(values))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// Folds the consecutive rows `rows` of a run, all of `group`, by `folds`: a count adds
    /// their number, a DOUBLE sum adds their values in row order in a register, so the results
    /// are exactly those of [`Accumulator::add`] row by row.
    fn fold_typed_stretch(group: &mut Group, folds: &[TypedFold<'_>], rows: Range<usize>) {
        debug_assert!(!rows.is_empty(), "a stretch holds a row");
        for (accumulator, fold) in group.accumulators.iter_mut().zip(folds) {
            match (fold, accumulator) {
                (TypedFold::Count, Accumulator::Count(c)) => *c += rows.len() as i64,
                (TypedFold::SumDoubles(values), Accumulator::Sum(sum)) => {
                    let values = &values[rows.clone()];
                    let (mut total, rest) = match sum {
                        Some(Value::Double(total)) => (*total, values),
                        None => (values[0], &values[1..]),
                        Some(other) => unreachable!("a DOUBLE sum holds {other:?}"),
                    };
                    for &value in rest {
                        total += value;
                    }
                    *sum = Some(Value::Double(total));
                }
                (fold, accumulator) => {
                    unreachable!("{fold:?} folds into a matching accumulator, not {accumulator:?}")
                }
            }
        }
    }

    /// Folds one row, whose keys' and arguments' values `value_of` gives, into its group.
    fn fold<'r>(
        &self,
        folding: &mut Folding,
        ctx: &ExecContext,
        value_of: &mut dyn FnMut(&Expr) -> Result<Cow<'r, Value>>,
    ) -> Result<()> {
        let Folding {
            index,
            groups,
            reserved,
            keys,
        } = folding;
        // The group's index, or (`Err`) the single key of a new group.
        let found = match self.keys.as_slice() {
            // Without keys every row folds into the one group.
            [] if !groups.is_empty() => Ok(0),
            [(_, key)] => {
                let key = value_of(key)?;
                match index.find_one(&key) {
                    Some(i) => Ok(i),
                    None => Err(key.into_owned()),
                }
            }
            _ => {
                keys.clear();
                for (_, e) in &self.keys {
                    keys.push(value_of(e)?.into_owned());
                }
                index.find_many(keys).ok_or(Value::Null)
            }
        };
        let group_index = match found {
            Ok(i) => i,
            Err(single) => {
                let bytes = (self.keys.len() * 64 + self.aggregates.len() * 48) as u64;
                ctx.memory.reserve(bytes, "aggregation")?;
                *reserved += bytes;
                let group_keys = if self.keys.len() == 1 {
                    vec![single]
                } else {
                    keys.clone()
                };
                index.insert(&group_keys, groups.len());
                groups.push(self.new_group(group_keys));
                groups.len() - 1
            }
        };
        let group = &mut groups[group_index];
        for (i, (_, aggregate)) in self.aggregates.iter().enumerate() {
            let value = match &aggregate.arg {
                Some(arg) => Some(value_of(arg)?),
                None => None,
            };
            if aggregate.distinct {
                match &value {
                    Some(v) if !v.is_null() && !group.distinct[i].insert(v.as_ref().clone()) => {
                        continue
                    }
                    _ => {}
                }
            }
            if matches!(group.accumulators[i], Accumulator::Collect(_)) {
                ctx.memory.reserve(64, "collect()")?;
                *reserved += 64;
            }
            group.accumulators[i].add(aggregate.function, value.as_deref())?;
        }
        Ok(())
    }
}

/// An aggregate folded on a run's typed column.
#[derive(Debug)]
enum TypedFold<'a> {
    /// `count(*)`, or `count` of a column without NULLs.
    Count,
    /// `sum` of a DOUBLE column.
    SumDoubles(&'a [f64]),
}

/// The state of one aggregation while it folds rows: the groups, their index, the bytes
/// reserved for them, and the key buffer of a multi-key lookup.
struct Folding {
    index: GroupIndex,
    groups: Vec<Group>,
    reserved: u64,
    keys: Vec<Value>,
}

impl Operator for Aggregate {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if self.output.is_none() {
            let rows = self.consume(ctx)?;
            self.output = Some(rows.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use proptest::prelude::*;

    use super::*;
    use crate::procedures::ProcedureRows;

    /// An input of `(key, value)` rows in slots 0 and 1, as row runs of the given lengths
    /// (typed columns, as a procedure call yields them; the last run takes what is left) or as
    /// single rows.
    struct Input {
        rows: VecDeque<(i64, f64)>,
        run_lengths: Option<VecDeque<usize>>,
    }

    impl Operator for Input {
        fn next(&mut self, _ctx: &ExecContext) -> Result<Option<Row>> {
            assert!(self.run_lengths.is_none(), "read as runs");
            Ok(self
                .rows
                .pop_front()
                .map(|(key, value)| vec![Value::Int64(key), Value::Double(value)]))
        }

        fn yields_runs(&self) -> bool {
            self.run_lengths.is_some()
        }

        fn next_run(&mut self, _ctx: &ExecContext) -> Result<Option<RowRun>> {
            let lengths = self.run_lengths.as_mut().expect("runs");
            if self.rows.is_empty() {
                return Ok(None);
            }
            let length = match lengths.pop_front() {
                Some(length) if !lengths.is_empty() => length.min(self.rows.len()),
                _ => self.rows.len(),
            };
            let run: Vec<(i64, f64)> = self.rows.drain(..length).collect();
            let columns = vec![
                ProcedureColumn::Int64s(run.iter().map(|r| r.0).collect()),
                ProcedureColumn::Doubles(run.iter().map(|r| r.1).collect()),
            ];
            Ok(Some(RowRun {
                base: vec![Value::Null, Value::Null],
                columns: vec![0, 1],
                rows: ProcedureRows::from_columns(length, columns),
            }))
        }
    }

    /// `RETURN key, count(*), sum(value)` over `input`, the groups' rows as strings.
    fn grouped(input: Input) -> Vec<String> {
        let aggregate = |function, arg| AggregateExpr {
            function,
            distinct: false,
            arg,
        };
        let mut operator = Aggregate::new(
            Box::new(input),
            4,
            vec![(0, Expr::Slot(0))],
            vec![
                (2, aggregate(AggregateFunction::CountStar, None)),
                (3, aggregate(AggregateFunction::Sum, Some(Expr::Slot(1)))),
            ],
        );
        let ctx = ExecContext::for_tests();
        let mut out = Vec::new();
        while let Some(row) = operator.next(&ctx).unwrap() {
            // The sum's bits, so that a different order of additions shows.
            let sum = match &row[3] {
                Value::Double(sum) => format!("{:016x}", sum.to_bits()),
                other => format!("{other:?}"),
            };
            out.push(format!("{:?} {:?} {sum}", row[0], row[2]));
        }
        out
    }

    /// Stretches of rows with one key: a key (small ones, and large and negative ones, which
    /// are looked up in the map) and values over 12 orders of magnitude, `-0.0` among them, so
    /// that the order of the additions changes the bits.
    fn stretches() -> impl Strategy<Value = Vec<(i64, f64)>> {
        let key = prop::sample::select(vec![0i64, 1, 2, 3, 63, 64, 70, -1]);
        let value = prop_oneof![
            1 => Just(-0.0),
            49 => (0u32..1000, -6i32..6).prop_map(|(m, e)| f64::from(m) * 10f64.powi(e)),
        ];
        prop::collection::vec((key, prop::collection::vec(value, 1..20)), 0..600).prop_map(
            |stretches| {
                stretches
                    .into_iter()
                    .flat_map(|(key, values)| values.into_iter().map(move |v| (key, v)))
                    .collect()
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Runs folded in stretches (typed, by position for small keys) give the groups,
        /// counts and sums, bit for bit, that folding row by row gives, with runs cut at any
        /// length (also longer than the interrupt-check chunks).
        #[test]
        fn runs_fold_to_the_sums_rows_fold_to_bit_for_bit(
            rows in stretches(),
            run_lengths in prop::collection::vec(
                prop_oneof![3 => 1usize..400, 1 => 4000usize..9000],
                1..40,
            ),
        ) {
            let by_runs = grouped(Input {
                rows: rows.iter().copied().collect(),
                run_lengths: Some(run_lengths.into()),
            });
            let by_rows = grouped(Input {
                rows: rows.into(),
                run_lengths: None,
            });
            prop_assert_eq!(by_runs, by_rows);
        }
    }

    /// The index finds the same groups as one plain map of values, whatever the key types.
    #[test]
    fn small_integer_keys_find_the_groups_a_map_of_values_finds() {
        let keys = [
            Value::Int64(1),
            Value::Int64(63),
            Value::Int64(64),
            Value::Int64(-1),
            Value::Int64(1),
            Value::Double(63.0),
            Value::Int32(1),
            Value::Int64(63),
            Value::from("x"),
            Value::Int64(5),
            Value::Int64(5),
            Value::Double(5.0),
        ];
        let mut index = GroupIndex::new(1);
        let mut reference: HashMap<Value, usize> = HashMap::new();
        let mut small_lookups = 0;
        for key in keys {
            let expected = reference.get(&key).copied();
            if GroupIndex::small_position(&key).is_some() {
                small_lookups += 1;
            }
            assert_eq!(index.find_one(&key), expected, "{key:?}");
            if expected.is_none() {
                let group = reference.len();
                reference.insert(key.clone(), group);
                index.insert(&[key], group);
            }
        }
        assert!(small_lookups > 0);
        assert!(matches!(index, GroupIndex::One { small: None, .. }));
    }
}

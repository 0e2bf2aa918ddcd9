//! ORDER BY (a stable sort of all input rows, NULLs last ascending, first descending), its
//! limited form TopN (the first `skip + limit` rows of that sort, kept in a bounded heap), and
//! DISTINCT (keeps the first row of each distinct combination of slots, streaming).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;

use warren_common::value::Value;
use warren_common::Result;
use warren_planner::expr::Expr;

use super::{row_bytes, BoxedOperator, Operator, Row};
use crate::context::ExecContext;
use crate::eval::Evaluator;

pub struct OrderBy {
    input: BoxedOperator,
    keys: Vec<(Expr, bool)>,
    output: Option<std::vec::IntoIter<Row>>,
}

impl OrderBy {
    pub fn new(input: BoxedOperator, keys: Vec<(Expr, bool)>) -> Self {
        Self {
            input,
            keys,
            output: None,
        }
    }

    fn sort(&mut self, ctx: &ExecContext) -> Result<Vec<Row>> {
        let mut keyed: Vec<(Vec<Value>, Row)> = Vec::new();
        while let Some(row) = self.input.next(ctx)? {
            ctx.tick()?;
            let snapshot = ctx.snapshot();
            let evaluator = Evaluator::new(&snapshot, ctx);
            let keys = self
                .keys
                .iter()
                .map(|(e, _)| evaluator.eval(e, &row))
                .collect::<Result<Vec<_>>>()?;
            ctx.memory
                .reserve(row_bytes(&row) + keys.len() as u64 * 32, "ORDER BY")?;
            keyed.push((keys, row));
        }
        let descending: Vec<bool> = self.keys.iter().map(|(_, d)| *d).collect();
        keyed.sort_by(|(a, _), (b, _)| compare_keys(a, b, &descending));
        Ok(keyed.into_iter().map(|(_, row)| row).collect())
    }
}

/// The sort order of two rows' keys (each key ascending or descending; NULL is the largest).
pub(super) fn compare_keys(a: &[Value], b: &[Value], descending: &[bool]) -> Ordering {
    for ((x, y), desc) in a.iter().zip(b).zip(descending) {
        let order = x.total_cmp(y);
        let order = if *desc { order.reverse() } else { order };
        if order.is_ne() {
            return order;
        }
    }
    Ordering::Equal
}

/// What `ORDER BY ... [SKIP s] LIMIT k` keeps: `(s, s + k)`, or `None` for LIMIT 0, which
/// reads neither the input nor the SKIP count (LIMIT is evaluated first).
pub(super) fn kept_rows(
    skip: Option<&Expr>,
    limit: &Expr,
    ctx: &ExecContext,
) -> Result<Option<(u64, usize)>> {
    let limit = super::simple::row_count(limit, ctx)?;
    if limit == 0 {
        return Ok(None);
    }
    let skip = match skip {
        Some(skip) => super::simple::row_count(skip, ctx)?,
        None => 0,
    };
    let kept = usize::try_from(skip.saturating_add(limit)).unwrap_or(usize::MAX);
    Ok(Some((skip, kept)))
}

/// A row kept by [`TopN`]: ordered by its keys, then by arrival (what a stable sort keeps).
pub(super) struct Ranked {
    pub(super) keys: Vec<Value>,
    pub(super) descending: Arc<[bool]>,
    pub(super) arrival: u64,
    pub(super) row: Row,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_keys(&self.keys, &other.keys, &self.descending)
            .then(self.arrival.cmp(&other.arrival))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ranked {}

/// `ORDER BY keys [SKIP s] LIMIT k`: the rows a stable sort would put at positions `s..s + k`,
/// found with a heap of at most `s + k` rows (O(n log(s + k)) time, O(s + k) memory).
pub struct TopN {
    input: BoxedOperator,
    keys: Vec<(Expr, bool)>,
    skip: Option<Expr>,
    limit: Expr,
    output: Option<std::vec::IntoIter<Row>>,
}

impl TopN {
    pub fn new(
        input: BoxedOperator,
        keys: Vec<(Expr, bool)>,
        skip: Option<Expr>,
        limit: Expr,
    ) -> Self {
        Self {
            input,
            keys,
            skip,
            limit,
            output: None,
        }
    }

    fn select(&mut self, ctx: &ExecContext) -> Result<Vec<Row>> {
        let Some((skip, kept)) = kept_rows(self.skip.as_ref(), &self.limit, ctx)? else {
            return Ok(Vec::new());
        };
        let descending: Arc<[bool]> = self.keys.iter().map(|(_, d)| *d).collect();
        let mut heap: BinaryHeap<Ranked> = BinaryHeap::new();
        let mut arrival = 0u64;
        while let Some(row) = self.input.next(ctx)? {
            ctx.tick()?;
            let snapshot = ctx.snapshot();
            let evaluator = Evaluator::new(&snapshot, ctx);
            let keys = self
                .keys
                .iter()
                .map(|(e, _)| evaluator.eval(e, &row))
                .collect::<Result<Vec<_>>>()?;
            let ranked = Ranked {
                keys,
                descending: descending.clone(),
                arrival,
                row,
            };
            arrival += 1;
            if heap.len() < kept {
                ctx.memory.reserve(
                    row_bytes(&ranked.row) + ranked.keys.len() as u64 * 32,
                    "ORDER BY",
                )?;
                heap.push(ranked);
            } else if heap.peek().is_some_and(|worst| ranked < *worst) {
                *heap.peek_mut().expect("a full heap has a top") = ranked;
            }
        }
        debug_assert!(heap.len() <= kept);
        let sorted = heap.into_sorted_vec();
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        Ok(sorted.into_iter().skip(skip).map(|r| r.row).collect())
    }
}

impl Operator for TopN {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if self.output.is_none() {
            let rows = self.select(ctx)?;
            self.output = Some(rows.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}

impl Operator for OrderBy {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if self.output.is_none() {
            let rows = self.sort(ctx)?;
            self.output = Some(rows.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}

pub struct Distinct {
    input: BoxedOperator,
    slots: Vec<usize>,
    seen: HashSet<Vec<Value>>,
}

impl Distinct {
    pub fn new(input: BoxedOperator, slots: Vec<usize>) -> Self {
        Self {
            input,
            slots,
            seen: HashSet::new(),
        }
    }
}

impl Operator for Distinct {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        while let Some(row) = self.input.next(ctx)? {
            ctx.tick()?;
            let key: Vec<Value> = self.slots.iter().map(|&s| row[s].clone()).collect();
            if !self.seen.contains(&key) {
                ctx.memory.reserve(key.len() as u64 * 48, "DISTINCT")?;
                self.seen.insert(key);
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}

//! ORDER BY (a stable sort of all input rows, NULLs last ascending, first descending) and
//! DISTINCT (keeps the first row of each distinct combination of slots, streaming).

use std::collections::HashSet;

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
        keyed.sort_by(|(a, _), (b, _)| {
            for ((x, y), desc) in a.iter().zip(b).zip(&descending) {
                let order = x.total_cmp(y);
                let order = if *desc { order.reverse() } else { order };
                if order.is_ne() {
                    return order;
                }
            }
            std::cmp::Ordering::Equal
        });
        Ok(keyed.into_iter().map(|(_, row)| row).collect())
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

//! Streaming operators that need no state beyond the current row: a single row, filters,
//! projections, SKIP, LIMIT, UNWIND and UNION.

use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_planner::expr::Expr;

use super::{BoxedOperator, Operator, Row};
use crate::context::ExecContext;
use crate::eval::Evaluator;

/// Yields one given row (or none).
pub struct Once {
    row: Option<Row>,
}

impl Once {
    pub fn new(row: Option<Row>) -> Self {
        Self { row }
    }
}

impl Operator for Once {
    fn next(&mut self, _ctx: &ExecContext) -> Result<Option<Row>> {
        Ok(self.row.take())
    }
}

pub struct Filter {
    input: BoxedOperator,
    predicate: Expr,
}

impl Filter {
    pub fn new(input: BoxedOperator, predicate: Expr) -> Self {
        Self { input, predicate }
    }
}

impl Operator for Filter {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        while let Some(row) = self.input.next(ctx)? {
            ctx.tick()?;
            let snapshot = ctx.snapshot();
            if Evaluator::new(&snapshot, ctx).test(&self.predicate, &row)? {
                return Ok(Some(row));
            }
            self.input.recycle(row);
        }
        Ok(None)
    }

    fn recycle(&mut self, row: Row) {
        self.input.recycle(row);
    }
}

pub struct Project {
    input: BoxedOperator,
    assignments: Vec<(usize, Expr)>,
}

impl Project {
    pub fn new(input: BoxedOperator, assignments: Vec<(usize, Expr)>) -> Self {
        Self { input, assignments }
    }
}

impl Operator for Project {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        let Some(mut row) = self.input.next(ctx)? else {
            return Ok(None);
        };
        let snapshot = ctx.snapshot();
        let evaluator = Evaluator::new(&snapshot, ctx);
        for (slot, expr) in &self.assignments {
            row[*slot] = evaluator.eval(expr, &row)?;
        }
        Ok(Some(row))
    }
}

pub(super) fn row_count(expr: &Expr, ctx: &ExecContext) -> Result<u64> {
    let snapshot = ctx.snapshot();
    let value = Evaluator::new(&snapshot, ctx).eval(expr, &[])?;
    value
        .as_i64()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| Error::runtime("SKIP and LIMIT need a non-negative integer."))
}

pub struct Skip {
    input: BoxedOperator,
    count: Expr,
    remaining: Option<u64>,
}

impl Skip {
    pub fn new(input: BoxedOperator, count: Expr) -> Self {
        Self {
            input,
            count,
            remaining: None,
        }
    }
}

impl Operator for Skip {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if self.remaining.is_none() {
            self.remaining = Some(row_count(&self.count, ctx)?);
        }
        while self.remaining > Some(0) {
            if self.input.next(ctx)?.is_none() {
                return Ok(None);
            }
            self.remaining = self.remaining.map(|r| r - 1);
        }
        self.input.next(ctx)
    }
}

pub struct Limit {
    input: BoxedOperator,
    count: Expr,
    remaining: Option<u64>,
}

impl Limit {
    pub fn new(input: BoxedOperator, count: Expr) -> Self {
        Self {
            input,
            count,
            remaining: None,
        }
    }
}

impl Operator for Limit {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if self.remaining.is_none() {
            self.remaining = Some(row_count(&self.count, ctx)?);
        }
        if self.remaining == Some(0) {
            return Ok(None);
        }
        let row = self.input.next(ctx)?;
        if row.is_some() {
            self.remaining = self.remaining.map(|r| r - 1);
        }
        Ok(row)
    }
}

pub struct Unwind {
    input: BoxedOperator,
    expr: Expr,
    slot: usize,
    current: Option<(Row, std::sync::Arc<[Value]>, usize)>,
}

impl Unwind {
    pub fn new(input: BoxedOperator, expr: Expr, slot: usize) -> Self {
        Self {
            input,
            expr,
            slot,
            current: None,
        }
    }
}

impl Operator for Unwind {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        loop {
            if let Some((row, items, index)) = &mut self.current {
                if *index < items.len() {
                    ctx.tick()?;
                    let mut out = row.clone();
                    out[self.slot] = items[*index].clone();
                    *index += 1;
                    return Ok(Some(out));
                }
                self.current = None;
            }
            let Some(row) = self.input.next(ctx)? else {
                return Ok(None);
            };
            let snapshot = ctx.snapshot();
            match Evaluator::new(&snapshot, ctx).eval(&self.expr, &row)? {
                Value::List(items) => self.current = Some((row, items, 0)),
                Value::Null => {}
                other => {
                    let mut out = row;
                    out[self.slot] = other;
                    return Ok(Some(out));
                }
            }
        }
    }
}

/// Concatenates inputs, copying each input's column slots to the output slots.
pub struct Union {
    inputs: Vec<(BoxedOperator, Vec<usize>)>,
    output: Vec<usize>,
    width: usize,
    current: usize,
}

impl Union {
    pub fn new(inputs: Vec<(BoxedOperator, Vec<usize>)>, output: Vec<usize>, width: usize) -> Self {
        Self {
            inputs,
            output,
            width,
            current: 0,
        }
    }
}

impl Operator for Union {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        while self.current < self.inputs.len() {
            let (input, slots) = &mut self.inputs[self.current];
            if let Some(row) = input.next(ctx)? {
                let mut out = vec![Value::Null; self.width];
                for (from, to) in slots.iter().zip(&self.output) {
                    out[*to] = row[*from].clone();
                }
                return Ok(Some(out));
            }
            self.current += 1;
        }
        Ok(None)
    }
}

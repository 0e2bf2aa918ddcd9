//! `CALL` of a graph procedure: for each input row, evaluates the call's arguments over that
//! row, runs the procedure, and yields the input row extended with each row it returns. The
//! input slots nothing above reads (the plan's `dead` slots) are set to NULL before the row is
//! copied into the output rows. A consumer that folds rows (an aggregation) may take each
//! input row's rows as one [`RowRun`] instead, without a row per procedure row.

use std::sync::Arc;

use warren_common::value::Value;
use warren_common::Result;
use warren_planner::procedure::ProcedureCall;

use super::{BoxedOperator, Operator, Row, RowRun};
use crate::context::ExecContext;
use crate::eval::Evaluator;
use crate::procedures::{procedure_for, GraphProcedure, OutputShape, ProcedureRows};

pub struct ProcedureScan {
    input: BoxedOperator,
    call: Arc<ProcedureCall>,
    procedure: Box<dyn GraphProcedure>,
    columns: Vec<usize>,
    /// Input slots no operator above reads.
    dead: Vec<usize>,
    /// What the plan above needs of the rows.
    shape: OutputShape,
    /// The slots an output row takes from the input row: all but the procedure's columns.
    carried: Vec<usize>,
    /// The procedure's rows for the current input row, the next one to yield, and the bytes
    /// they are charged for.
    rows: Option<ProcedureRows>,
    next_row: usize,
    rows_bytes: u64,
    /// The input row being extended.
    current: Option<Row>,
    /// A row given back by the consumer, whose buffer the next output row reuses.
    spare: Option<Row>,
}

impl ProcedureScan {
    pub fn new(
        input: BoxedOperator,
        call: Arc<ProcedureCall>,
        columns: Vec<usize>,
        dead: Vec<usize>,
        shape: OutputShape,
    ) -> Self {
        assert_eq!(
            call.columns.len(),
            columns.len(),
            "one slot per procedure column"
        );
        assert_eq!(shape.read.len(), columns.len(), "one flag per column");
        assert!(
            dead.iter().all(|slot| !columns.contains(slot)),
            "a procedure column is not dead"
        );
        Self {
            input,
            procedure: procedure_for(&call.kind),
            call,
            carried: Vec::new(),
            columns,
            dead,
            shape,
            rows: None,
            next_row: 0,
            rows_bytes: 0,
            current: None,
            spare: None,
        }
    }

    /// Runs the procedure for `row`, returning its rows (charged to the query's memory until
    /// the next call or the end).
    fn run(&mut self, row: &Row, ctx: &ExecContext) -> Result<ProcedureRows> {
        let snapshot = ctx.snapshot();
        let evaluator = Evaluator::new(&snapshot, ctx);
        let arguments = self
            .call
            .arguments
            .iter()
            .map(|argument| evaluator.eval(argument, row))
            .collect::<Result<Vec<_>>>()?;
        self.release(ctx);
        let rows = self.procedure.call(&arguments, ctx, &self.shape)?;
        assert!(
            rows.is_empty() || rows.width() == self.columns.len(),
            "a procedure row has one value per column"
        );
        let bytes = rows.bytes();
        ctx.memory.reserve(bytes, "the rows of a procedure call")?;
        self.rows_bytes = bytes;
        Ok(rows)
    }

    fn release(&mut self, ctx: &ExecContext) {
        ctx.memory.release(self.rows_bytes);
        self.rows_bytes = 0;
    }

    /// The next input row with the procedure's rows for it, its dead slots cleared; `None`
    /// at the end of the input.
    fn next_input(&mut self, ctx: &ExecContext) -> Result<Option<(Row, ProcedureRows)>> {
        let Some(mut row) = self.input.next(ctx)? else {
            self.release(ctx);
            return Ok(None);
        };
        let rows = self.run(&row, ctx)?;
        for &slot in &self.dead {
            row[slot] = Value::Null;
        }
        Ok(Some((row, rows)))
    }
}

impl Operator for ProcedureScan {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        loop {
            if let (Some(row), Some(rows)) = (&self.current, &mut self.rows) {
                if self.next_row < rows.len() {
                    let mut out = match self.spare.take() {
                        Some(mut spare) => {
                            refill(&mut spare, row, &self.carried);
                            spare
                        }
                        None => row.clone(),
                    };
                    for (column, &slot) in self.columns.iter().enumerate() {
                        out[slot] = rows.take(column, self.next_row);
                    }
                    self.next_row += 1;
                    ctx.tick()?;
                    return Ok(Some(out));
                }
            }
            let Some((row, rows)) = self.next_input(ctx)? else {
                self.rows = None;
                return Ok(None);
            };
            if self.carried.len() + self.columns.len() != row.len() {
                self.carried = (0..row.len())
                    .filter(|slot| !self.columns.contains(slot))
                    .collect();
            }
            self.current = Some(row);
            self.rows = Some(rows);
            self.next_row = 0;
        }
    }

    fn recycle(&mut self, row: Row) {
        self.spare = Some(row);
    }

    fn yields_runs(&self) -> bool {
        true
    }

    fn next_run(&mut self, ctx: &ExecContext) -> Result<Option<RowRun>> {
        Ok(self.next_input(ctx)?.map(|(base, rows)| RowRun {
            base,
            columns: self.columns.clone(),
            rows,
        }))
    }
}

/// Makes `out` (a recycled row) a copy of `row` in the `carried` slots (the others are the
/// procedure's columns, set next), skipping the slots that are NULL in both (most of a
/// procedure's input row once its dead slots are cleared).
fn refill(out: &mut Row, row: &Row, carried: &[usize]) {
    if out.len() != row.len() {
        out.clone_from(row);
        return;
    }
    for &slot in carried {
        if !matches!((&out[slot], &row[slot]), (Value::Null, Value::Null)) {
            out[slot].clone_from(&row[slot]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refill_copies_every_slot() {
        let row = vec![Value::Null, Value::Int64(7), Value::Null, Value::from("x")];
        let mut out = vec![Value::Double(1.5), Value::Null, Value::Null, Value::Null];
        refill(&mut out, &row, &[0, 1, 3]);
        assert_eq!(out[..2], row[..2]);
        assert_eq!(out[3], row[3]);
        let mut short = vec![Value::Int64(1)];
        refill(&mut short, &row, &[0, 1, 3]);
        assert_eq!(short, row);
    }
}

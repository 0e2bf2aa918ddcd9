//! `CALL` of a graph procedure: for each input row, evaluates the call's arguments over that
//! row, runs the procedure, and yields the input row extended with each row it returns. The
//! input slots nothing above reads (the plan's `dead` slots) are set to NULL before the row is
//! copied into the output rows.

use std::sync::Arc;

use warren_common::value::Value;
use warren_common::Result;
use warren_planner::procedure::ProcedureCall;

use super::{BoxedOperator, Operator, Row};
use crate::context::ExecContext;
use crate::eval::Evaluator;
use crate::procedures::{procedure_for, GraphProcedure, ProcedureRows};

pub struct ProcedureScan {
    input: BoxedOperator,
    call: Arc<ProcedureCall>,
    procedure: Box<dyn GraphProcedure>,
    columns: Vec<usize>,
    /// Input slots no operator above reads.
    dead: Vec<usize>,
    /// The slots an output row takes from the input row: all but the procedure's columns.
    carried: Vec<usize>,
    /// The values of the procedure's rows for the current input row not yet yielded (moved
    /// out, row after row), and the bytes they held when made.
    values: std::vec::IntoIter<Value>,
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
    ) -> Self {
        assert_eq!(
            call.columns.len(),
            columns.len(),
            "one slot per procedure column"
        );
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
            values: Vec::new().into_iter(),
            rows_bytes: 0,
            current: None,
            spare: None,
        }
    }

    /// Runs the procedure for `row`, keeping its rows (charged to the query's memory).
    fn run(&mut self, row: &Row, ctx: &ExecContext) -> Result<()> {
        let snapshot = ctx.snapshot();
        let evaluator = Evaluator::new(&snapshot, ctx);
        let arguments = self
            .call
            .arguments
            .iter()
            .map(|argument| evaluator.eval(argument, row))
            .collect::<Result<Vec<_>>>()?;
        ctx.memory.release(self.rows_bytes);
        self.rows_bytes = 0;
        let rows: ProcedureRows = self.procedure.call(&arguments, ctx)?;
        assert!(
            rows.is_empty() || rows.width() == self.columns.len(),
            "a procedure row has one value per column"
        );
        self.rows_bytes = (rows.len() * rows.width() * std::mem::size_of::<Value>()) as u64;
        self.values = rows.into_values();
        let reserved = ctx
            .memory
            .reserve(self.rows_bytes, "the rows of a procedure call");
        if reserved.is_err() {
            self.rows_bytes = 0;
        }
        reserved
    }
}

impl Operator for ProcedureScan {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        loop {
            if let Some(row) = &self.current {
                if !self.values.as_slice().is_empty() {
                    let mut out = match self.spare.take() {
                        Some(mut spare) => {
                            refill(&mut spare, row, &self.carried);
                            spare
                        }
                        None => row.clone(),
                    };
                    for &slot in &self.columns {
                        out[slot] = self.values.next().expect("whole rows");
                    }
                    ctx.tick()?;
                    return Ok(Some(out));
                }
            }
            let Some(row) = self.input.next(ctx)? else {
                ctx.memory.release(self.rows_bytes);
                self.rows_bytes = 0;
                self.values = Vec::new().into_iter();
                return Ok(None);
            };
            let mut row = row;
            self.run(&row, ctx)?;
            for &slot in &self.dead {
                row[slot] = Value::Null;
            }
            if self.carried.len() + self.columns.len() != row.len() {
                self.carried = (0..row.len())
                    .filter(|slot| !self.columns.contains(slot))
                    .collect();
            }
            self.current = Some(row);
        }
    }

    fn recycle(&mut self, row: Row) {
        self.spare = Some(row);
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

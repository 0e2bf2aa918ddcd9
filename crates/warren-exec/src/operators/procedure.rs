//! `CALL` of a graph procedure: for each input row, evaluates the call's arguments over that
//! row, runs the procedure, and yields the input row extended with each row it returns.

use std::sync::Arc;

use warren_common::value::Value;
use warren_common::Result;
use warren_planner::procedure::ProcedureCall;

use super::{row_bytes, BoxedOperator, Operator, Row};
use crate::context::ExecContext;
use crate::eval::Evaluator;
use crate::procedures::{procedure_for, GraphProcedure};

pub struct ProcedureScan {
    input: BoxedOperator,
    call: Arc<ProcedureCall>,
    procedure: Box<dyn GraphProcedure>,
    columns: Vec<usize>,
    /// The procedure's rows for the current input row, and the bytes they hold.
    rows: Vec<Vec<Value>>,
    rows_bytes: u64,
    /// The input row being extended and the index of its next procedure row.
    current: Option<(Row, usize)>,
}

impl ProcedureScan {
    pub fn new(input: BoxedOperator, call: Arc<ProcedureCall>, columns: Vec<usize>) -> Self {
        assert_eq!(
            call.columns.len(),
            columns.len(),
            "one slot per procedure column"
        );
        Self {
            input,
            procedure: procedure_for(&call.kind),
            call,
            columns,
            rows: Vec::new(),
            rows_bytes: 0,
            current: None,
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
        self.rows = self.procedure.call(&arguments, ctx)?;
        assert!(
            self.rows.iter().all(|r| r.len() == self.columns.len()),
            "a procedure row has one value per column"
        );
        self.rows_bytes = self.rows.iter().map(row_bytes).sum();
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
            if let Some((row, index)) = &mut self.current {
                if let Some(values) = self.rows.get(*index) {
                    *index += 1;
                    let mut out = row.clone();
                    for (&slot, value) in self.columns.iter().zip(values) {
                        out[slot] = value.clone();
                    }
                    ctx.tick()?;
                    return Ok(Some(out));
                }
            }
            let Some(row) = self.input.next(ctx)? else {
                ctx.memory.release(self.rows_bytes);
                self.rows_bytes = 0;
                self.rows.clear();
                return Ok(None);
            };
            self.run(&row, ctx)?;
            self.current = Some((row, 0));
        }
    }
}

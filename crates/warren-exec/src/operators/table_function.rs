//! `CALL f(...)`: yields, for each input row, the input row extended with every row of a table
//! function's result (computed when the call was bound).

use std::sync::Arc;

use warren_common::value::Value;
use warren_common::Result;

use super::extend_each::ExtendEach;
use super::{BoxedOperator, Operator, Row};
use crate::context::ExecContext;

pub struct TableFunctionScan {
    input: BoxedOperator,
    rows: Arc<[Vec<Value>]>,
    columns: Vec<usize>,
    extend: ExtendEach,
}

impl TableFunctionScan {
    pub fn new(input: BoxedOperator, rows: Arc<[Vec<Value>]>, columns: Vec<usize>) -> Self {
        assert!(
            rows.iter().all(|row| row.len() == columns.len()),
            "every table function row has one value per column"
        );
        Self {
            input,
            rows,
            columns,
            extend: ExtendEach::default(),
        }
    }
}

impl Operator for TableFunctionScan {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        self.extend
            .next(&mut self.input, &self.rows, &self.columns, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::simple::Once;

    /// Two input rows; each comes back once per function row, with the function's values in
    /// their slots and the input's values kept.
    #[test]
    fn every_input_row_meets_every_function_row() {
        let ctx = ExecContext::for_tests();
        let rows: Arc<[Vec<Value>]> = vec![
            vec![Value::string("a"), Value::Int64(1)],
            vec![Value::string("b"), Value::Int64(2)],
        ]
        .into();
        let input = Box::new(Once::new(Some(vec![
            Value::Int64(7),
            Value::Null,
            Value::Null,
        ])));
        let mut scan = TableFunctionScan::new(input, rows, vec![2, 1]);
        let mut out = Vec::new();
        while let Some(row) = scan.next(&ctx).unwrap() {
            out.push(row);
        }
        assert_eq!(
            out,
            vec![
                vec![Value::Int64(7), Value::Int64(1), Value::string("a")],
                vec![Value::Int64(7), Value::Int64(2), Value::string("b")],
            ]
        );
    }
}

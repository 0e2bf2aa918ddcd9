//! The loop shared by `LOAD FROM` and table-function calls: each input row is yielded once per
//! row of a fixed table, with that row's values written into their slots.

use warren_common::value::Value;
use warren_common::Result;

use super::{BoxedOperator, Row};
use crate::context::ExecContext;

/// Where the cross product of the input and a fixed table stands.
#[derive(Default)]
pub struct ExtendEach {
    /// The input row being extended and the index of the next table row.
    current: Option<(Row, usize)>,
}

impl ExtendEach {
    /// The next input row extended with the next table row (`rows[i][j]` goes to `slots[j]`).
    pub fn next(
        &mut self,
        input: &mut BoxedOperator,
        rows: &[Vec<Value>],
        slots: &[usize],
        ctx: &ExecContext,
    ) -> Result<Option<Row>> {
        loop {
            if let Some((row, index)) = self.current.take() {
                if let Some(values) = rows.get(index) {
                    let mut out = row.clone();
                    for (&slot, value) in slots.iter().zip(values) {
                        out[slot] = value.clone();
                    }
                    self.current = Some((row, index + 1));
                    ctx.tick()?;
                    return Ok(Some(out));
                }
            }
            let Some(row) = input.next(ctx)? else {
                return Ok(None);
            };
            self.current = Some((row, 0));
        }
    }
}

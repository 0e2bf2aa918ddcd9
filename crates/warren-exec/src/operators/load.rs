//! `LOAD FROM`: reads the CSV rows once and yields, for each input row, the input row extended
//! with every file row's values.

use std::path::PathBuf;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::Result;
use warren_storage::import::CsvOptions;

use super::{row_bytes, BoxedOperator, Operator, Row};
use crate::context::ExecContext;

pub struct LoadCsv {
    input: BoxedOperator,
    files: Vec<PathBuf>,
    options: CsvOptions,
    columns: Vec<(usize, LogicalType)>,
    /// The file rows, read on first use.
    rows: Option<Vec<Vec<Value>>>,
    current: Option<(Row, usize)>,
}

impl LoadCsv {
    pub fn new(
        input: BoxedOperator,
        files: Vec<PathBuf>,
        options: CsvOptions,
        columns: Vec<(usize, LogicalType)>,
    ) -> Self {
        Self {
            input,
            files,
            options,
            columns,
            rows: None,
            current: None,
        }
    }

    fn load(&mut self, ctx: &ExecContext) -> Result<()> {
        if self.rows.is_none() {
            let types: Vec<LogicalType> = self.columns.iter().map(|(_, ty)| ty.clone()).collect();
            let rows = warren_storage::import::read_rows(&self.files, &self.options, &types)?;
            let bytes: u64 = rows.iter().map(row_bytes).sum();
            ctx.memory.reserve(bytes, "LOAD FROM")?;
            self.rows = Some(rows);
        }
        Ok(())
    }
}

impl Operator for LoadCsv {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        self.load(ctx)?;
        loop {
            if let Some((row, index)) = self.current.take() {
                let rows = self.rows.as_deref().unwrap_or_default();
                if let Some(values) = rows.get(index) {
                    let mut out = row.clone();
                    for ((slot, _), value) in self.columns.iter().zip(values) {
                        out[*slot] = value.clone();
                    }
                    self.current = Some((row, index + 1));
                    ctx.tick()?;
                    return Ok(Some(out));
                }
            }
            let Some(row) = self.input.next(ctx)? else {
                return Ok(None);
            };
            self.current = Some((row, 0));
        }
    }
}

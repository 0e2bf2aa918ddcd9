//! `LOAD FROM`: reads the CSV rows once and yields, for each input row, the input row extended
//! with every file row's values. With `IGNORE_ERRORS` the rows that do not read (a wrong number
//! of fields, a value that does not convert) are skipped and recorded as warnings.

use std::path::PathBuf;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::Result;
use warren_storage::import::CsvOptions;

use super::extend_each::ExtendEach;
use super::{row_bytes, BoxedOperator, Operator, Row};
use crate::context::ExecContext;

pub struct LoadCsv {
    input: BoxedOperator,
    files: Vec<PathBuf>,
    options: CsvOptions,
    types: Vec<LogicalType>,
    slots: Vec<usize>,
    /// The file rows, read on first use.
    rows: Option<Vec<Vec<Value>>>,
    extend: ExtendEach,
}

impl LoadCsv {
    pub fn new(
        input: BoxedOperator,
        files: Vec<PathBuf>,
        options: CsvOptions,
        columns: Vec<(usize, LogicalType)>,
    ) -> Self {
        let (slots, types) = columns.into_iter().unzip();
        Self {
            input,
            files,
            options,
            types,
            slots,
            rows: None,
            extend: ExtendEach::default(),
        }
    }

    fn load(&mut self, ctx: &ExecContext) -> Result<()> {
        if self.rows.is_none() {
            let rows = if self.options.ignore_errors {
                let (rows, skipped) = warren_storage::import::read_rows_ignoring_errors(
                    &self.files,
                    &self.options,
                    &self.types,
                )?;
                if let Some(sink) = &ctx.warnings {
                    sink.record(skipped);
                }
                rows
            } else {
                warren_storage::import::read_rows(&self.files, &self.options, &self.types)?
            };
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
        let rows = self.rows.as_deref().unwrap_or_default();
        self.extend.next(&mut self.input, rows, &self.slots, ctx)
    }
}

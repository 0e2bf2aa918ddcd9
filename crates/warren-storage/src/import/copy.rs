//! `COPY table FROM files` and `COPY table FROM (query)`: converts every input row to the table's
//! column types and builds the table's next version (existing rows followed by the new ones).
//! Node tables get their primary-key index rebuilt; rel tables resolve both endpoint keys and get
//! both CSRs rebuilt. Any bad row aborts the whole COPY with its location (`file:line`, or the
//! row number of a query) and the reason; nothing is applied, except that with `IGNORE_ERRORS`
//! the failing rows (a line with a wrong number of fields, a value that does not convert, a NULL
//! or duplicate primary key, a rel endpoint that does not exist) are skipped, each with a
//! warning, and the others are copied. That path reads every row as values before building the
//! table, so it is slower than the atomic one, as in Kùzu.

use std::path::PathBuf;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result, TableId};

use crate::buffer::U32Words;
use crate::column::{Column, ColumnBuilder};
use crate::editor::Editor;
use crate::import::csv_reader::{
    for_each_row, parse_i64, read_rows_skipping_errors, CopyProgress, LineOrigin, RowReader,
    SplitFiles, CHUNK_BYTES,
};
use crate::import::options::CsvOptions;
use crate::import::parallel_rels::{copy_threads, read_endpoints, Endpoints, Resolvers};
use crate::import::phases::{CopyPhases, PhaseClock};
use crate::import::plain_pairs::PlainResolve;
use crate::node_table::NodeTable;
use crate::pk_index::duplicate_key_message;
use crate::rel_table::RelTable;
use crate::reorder::NodeOrder;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopySummary {
    pub table: String,
    pub rows: u64,
    /// The rows `IGNORE_ERRORS` skipped.
    pub warnings: Vec<CopyWarning>,
    /// The wall time of each phase, for `PROFILE COPY` (the commit's is the caller's).
    pub phases: CopyPhases,
}

/// A row COPY skipped under `IGNORE_ERRORS`, as Kùzu's `show_warnings()` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyWarning {
    pub message: String,
    /// The file the row is in; empty for a query's or a data frame's rows.
    pub file_path: String,
    /// The row's line, or its number (from 1) among the query's rows.
    pub line_number: u64,
    /// The skipped row's values, comma-separated.
    pub record: String,
}

/// One input row: a CSV record or a row of query results.
trait InputRow {
    /// Where the row is: (source index, line or row number).
    fn location(&self) -> (u32, u64);
    fn error(&self, message: String) -> Error;
    /// Converts value `index` to the builder's type and appends it.
    fn push_value(&self, index: usize, builder: &mut ColumnBuilder) -> Result<()>;
    /// The node of `table` whose primary key (of type `ty`) is value `index`.
    fn endpoint(
        &self,
        index: usize,
        table: &NodeTable,
        ty: &LogicalType,
        lookup: &KeyLookup,
    ) -> Result<u32>;
}

/// How COPY finds a rel endpoint's row from its key, decided once per COPY: INT64 keys that are
/// exactly `first, first + 1, ...` in row order (generated and most exported graphs) map by a
/// subtraction; other INT64 keys go through the primary-key hash index, and other types through
/// the generic lookup. The subtraction avoids two random memory accesses per endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyLookup {
    Dense { first: i64, rows: u64 },
    HashedInt64,
    Generic,
}

impl KeyLookup {
    pub fn of(table: &NodeTable) -> Self {
        let Some(keys) = table.column(table.primary_key()).int64_values() else {
            return KeyLookup::Generic;
        };
        if table.deleted().is_some_and(|d| d.count_ones() > 0) {
            return KeyLookup::Generic;
        }
        match keys.first() {
            Some(&first)
                if keys
                    .iter()
                    .enumerate()
                    .all(|(i, &k)| (k as i128) == first as i128 + i as i128) =>
            {
                KeyLookup::Dense {
                    first,
                    rows: keys.len() as u64,
                }
            }
            _ => KeyLookup::HashedInt64,
        }
    }

    /// Whether keys are looked up as INT64 values ([`KeyLookup::int64_row`]).
    fn takes_int64(self) -> bool {
        self != KeyLookup::Generic
    }

    /// The row of `table` whose INT64 key is `key`; `None` when there is none, or when keys are
    /// not looked up as INT64 values.
    #[inline]
    fn int64_row(self, table: &NodeTable, key: i64) -> Option<u32> {
        match self {
            KeyLookup::Dense { first, rows } => {
                let offset = i128::from(key) - i128::from(first);
                (0..i128::from(rows))
                    .contains(&offset)
                    .then_some(offset as u32)
            }
            KeyLookup::HashedInt64 => {
                let keys = table
                    .column(table.primary_key())
                    .int64_values()
                    .expect("an INT64 key column");
                table.pk_index().lookup_i64(keys, key)
            }
            KeyLookup::Generic => None,
        }
    }
}

/// Where COPY reads its rows.
pub enum CopySource<'a> {
    Files {
        files: &'a [PathBuf],
        options: &'a CsvOptions,
        progress: &'a mut dyn CopyProgress,
    },
    Rows(&'a [Vec<Value>]),
}

impl CopySource<'_> {
    /// Calls `each` for every row; `types` are the expected columns.
    fn for_each(
        &mut self,
        types: &[LogicalType],
        mut each: impl FnMut(&dyn InputRow) -> Result<()>,
    ) -> Result<()> {
        match self {
            CopySource::Files {
                files,
                options,
                progress,
            } => for_each_row(files, options, types, *progress, |row| {
                row.check_width(types.len())?;
                each(&CsvRow { row })
            }),
            CopySource::Rows(rows) => {
                for (number, values) in rows.iter().enumerate() {
                    let row = ValueRow {
                        values,
                        number: number as u64 + 1,
                    };
                    if values.len() != types.len() {
                        return Err(row.error(format!(
                            "expected {} values per row, but found {}",
                            types.len(),
                            values.len()
                        )));
                    }
                    each(&row)?;
                }
                Ok(())
            }
        }
    }

    fn describe(&self, (source, line): (u32, u64)) -> String {
        match self {
            CopySource::Files { files, .. } => {
                format!("{}:{line}", files[source as usize].display())
            }
            CopySource::Rows(_) => format!("row {line} of the query"),
        }
    }
}

struct CsvRow<'r, 'a> {
    row: &'r RowReader<'a>,
}

impl InputRow for CsvRow<'_, '_> {
    fn location(&self) -> (u32, u64) {
        (self.row.file, self.row.line)
    }

    fn error(&self, message: String) -> Error {
        self.row.error(message)
    }

    fn push_value(&self, index: usize, builder: &mut ColumnBuilder) -> Result<()> {
        self.row.push_field(index, builder)
    }

    fn endpoint(
        &self,
        index: usize,
        table: &NodeTable,
        ty: &LogicalType,
        lookup: &KeyLookup,
    ) -> Result<u32> {
        if lookup.takes_int64() {
            if let Some(key) = parse_i64(&self.row.record[index]) {
                return lookup
                    .int64_row(table, key)
                    .ok_or_else(|| self.error(format!("Unable to find primary key value {key}.")));
            }
        }
        let text = self.row.field(index)?;
        let ty = if *ty == LogicalType::Serial {
            &LogicalType::Int64
        } else {
            ty
        };
        let key = warren_common::cast::parse_value(text, ty).map_err(|e| self.error(e))?;
        table
            .lookup(&key)
            .ok_or_else(|| self.error(format!("Unable to find primary key value {text}.")))
    }
}

struct ValueRow<'a> {
    values: &'a [Value],
    number: u64,
}

impl InputRow for ValueRow<'_> {
    fn location(&self) -> (u32, u64) {
        (0, self.number)
    }

    fn error(&self, message: String) -> Error {
        Error::Copy {
            location: format!("row {} of the query", self.number),
            message,
        }
    }

    fn push_value(&self, index: usize, builder: &mut ColumnBuilder) -> Result<()> {
        let ty = match builder.ty() {
            LogicalType::Serial => LogicalType::Int64,
            other => other.clone(),
        };
        let value =
            warren_common::cast::cast_value(&self.values[index], &ty).map_err(|e| self.error(e))?;
        builder.push(&value).map_err(|e| self.error(e))
    }

    fn endpoint(
        &self,
        index: usize,
        table: &NodeTable,
        ty: &LogicalType,
        _lookup: &KeyLookup,
    ) -> Result<u32> {
        let ty = if *ty == LogicalType::Serial {
            &LogicalType::Int64
        } else {
            ty
        };
        let key =
            warren_common::cast::cast_value(&self.values[index], ty).map_err(|e| self.error(e))?;
        table.lookup(&key).ok_or_else(|| {
            let shown = warren_common::format::to_kuzu_string(&key, &warren_common::value::NoGraph);
            self.error(format!("Unable to find primary key value {shown}."))
        })
    }
}

/// Runs `COPY table FROM files` against the editor's current state and stages the result.
pub fn copy_from_files(
    editor: &mut Editor,
    table: &str,
    files: &[PathBuf],
    options: &CsvOptions,
    progress: &mut dyn CopyProgress,
) -> Result<CopySummary> {
    if options.by_column {
        let rows = super::npy::read_rows(files)?;
        return copy_into(editor, table, CopySource::Rows(&rows), options);
    }
    copy_into(
        editor,
        table,
        CopySource::Files {
            files,
            options,
            progress,
        },
        options,
    )
}

/// Runs `COPY table FROM (query)` with the query's rows; `options` select the rel pair and
/// whether failing rows are skipped (`IGNORE_ERRORS`).
pub fn copy_from_rows(
    editor: &mut Editor,
    table: &str,
    rows: &[Vec<Value>],
    options: &CsvOptions,
) -> Result<CopySummary> {
    copy_into(editor, table, CopySource::Rows(rows), options)
}

fn copy_into(
    editor: &mut Editor,
    table: &str,
    mut source: CopySource<'_>,
    options: &CsvOptions,
) -> Result<CopySummary> {
    if let Some(schema) = editor.catalog().node_table(table) {
        if options.reorder.is_some() {
            return Err(Error::binder(
                "The COPY option REORDER applies to a rel table's COPY, after its rels are loaded.",
            ));
        }
        let (id, name) = (schema.id, schema.name.clone());
        editor.fold(id)?;
        let mut warnings = Vec::new();
        let mut phases = CopyPhases::default();
        let (data, rows) = if options.ignore_errors {
            let types = node_input_types(editor, id);
            let input = phases.time("read rows", || SkippableRows::read(&mut source, &types))?;
            let kept = node_rows_without_errors(editor, id, &input, &mut warnings);
            warnings.extend(input.skipped);
            copy_node_table(editor, id, &mut CopySource::Rows(&kept), &mut phases)?
        } else {
            copy_node_table(editor, id, &mut source, &mut phases)?
        };
        let warnings = finish_warnings(warnings, &source);
        editor.replace_node_table(id, data);
        return Ok(CopySummary {
            table: name,
            rows,
            warnings,
            phases,
        });
    }
    if let Some(schema) = editor.catalog().rel_table(table) {
        let name = schema.name.clone();
        let pair = select_pair(editor, table, options)?;
        let (_, ends) = editor.catalog().rel_pair(pair).expect("selected pair");
        let (from, to) = (ends.from, ends.to);
        for id in [pair, from, to] {
            editor.fold(id)?;
        }
        let mut warnings = Vec::new();
        let mut phases = CopyPhases::default();
        let (data, rows) = if options.ignore_errors {
            let types = rel_input_types(editor, pair);
            let input = phases.time("read rows", || SkippableRows::read(&mut source, &types))?;
            let kept = rel_rows_without_errors(editor, pair, &input, &mut warnings);
            warnings.extend(input.skipped);
            copy_rel_table(editor, pair, &mut CopySource::Rows(&kept), &mut phases)?
        } else {
            copy_rel_table(editor, pair, &mut source, &mut phases)?
        };
        let warnings = finish_warnings(warnings, &source);
        editor.replace_rel_table(pair, data);
        if let Some(order) = options.reorder {
            phases.time("reorder the endpoint node tables", || {
                reorder_endpoints(editor, (from, to), order)
            })?;
        }
        return Ok(CopySummary {
            table: name,
            rows,
            warnings,
            phases,
        });
    }
    Err(Error::binder(format!("Table {table} does not exist.")))
}

/// `COPY rel ... (REORDER=order)`: reorders the pair's FROM node table and, when it is
/// another, its TO node table, staged in the same editor as the rels.
fn reorder_endpoints(
    editor: &mut Editor,
    (from, to): (TableId, TableId),
    order: NodeOrder,
) -> Result<()> {
    let mut tables = vec![from];
    if to != from {
        tables.push(to);
    }
    for table in tables {
        let name = editor
            .catalog()
            .node_table_by_id(table)
            .expect("a rel pair's endpoint is a node table")
            .name
            .clone();
        crate::reorder::reorder_nodes(editor, &name, order)?;
    }
    Ok(())
}

/// Where an input row is: its line in a file, or its number (from 1) among a query's rows.
#[derive(Clone, Debug, PartialEq, Eq)]
enum RowOrigin {
    Line(LineOrigin),
    QueryRow(u64),
}

/// A row `IGNORE_ERRORS` skipped, before it becomes a [`CopyWarning`].
#[derive(Clone, Debug)]
struct SkippedRow {
    origin: RowOrigin,
    /// The row's text (a CSV line, or a query row's values comma-separated).
    text: String,
    message: String,
}

/// The input rows of a COPY with `IGNORE_ERRORS`: those that were read, as values, with their
/// origins, and those that could not be (a CSV line with a wrong number of fields or a field
/// that does not convert).
struct SkippableRows<'a> {
    rows: std::borrow::Cow<'a, [Vec<Value>]>,
    /// One per row of `rows`; empty for a query's rows, whose origin is their position.
    lines: Vec<LineOrigin>,
    skipped: Vec<SkippedRow>,
}

impl<'a> SkippableRows<'a> {
    fn read(source: &mut CopySource<'a>, types: &[LogicalType]) -> Result<Self> {
        match source {
            CopySource::Rows(rows) => Ok(Self {
                rows: std::borrow::Cow::Borrowed(*rows),
                lines: Vec::new(),
                skipped: Vec::new(),
            }),
            CopySource::Files {
                files,
                options,
                progress,
            } => {
                let (rows, lines, failed) =
                    read_rows_skipping_errors(files, options, types, *progress)?;
                let skipped = failed
                    .into_iter()
                    .map(|(line, message)| SkippedRow {
                        text: line.text.clone(),
                        origin: RowOrigin::Line(line),
                        message,
                    })
                    .collect();
                Ok(Self {
                    rows: std::borrow::Cow::Owned(rows),
                    lines,
                    skipped,
                })
            }
        }
    }

    /// Row `index` (from 0) skipped for `message`.
    fn skip(&self, index: usize, message: String) -> SkippedRow {
        match self.lines.get(index) {
            Some(line) => SkippedRow {
                origin: RowOrigin::Line(line.clone()),
                text: line.text.clone(),
                message,
            },
            None => SkippedRow {
                origin: RowOrigin::QueryRow(index as u64 + 1),
                text: self.rows[index]
                    .iter()
                    .map(show)
                    .collect::<Vec<_>>()
                    .join(","),
                message,
            },
        }
    }
}

/// The skipped rows as warnings, in input order (file, then line or row number).
fn finish_warnings(mut skipped: Vec<SkippedRow>, source: &CopySource<'_>) -> Vec<CopyWarning> {
    let position = |row: &SkippedRow| match &row.origin {
        RowOrigin::Line(line) => (line.file, line.line),
        RowOrigin::QueryRow(number) => (0, *number),
    };
    skipped.sort_by_key(position);
    skipped
        .into_iter()
        .map(|row| {
            let (file_path, line_number) = match (&row.origin, source) {
                (RowOrigin::Line(line), CopySource::Files { files, .. }) => {
                    (files[line.file as usize].display().to_string(), line.line)
                }
                (RowOrigin::Line(line), CopySource::Rows(_)) => (String::new(), line.line),
                (RowOrigin::QueryRow(number), _) => (String::new(), *number),
            };
            CopyWarning {
                message: row.message,
                file_path,
                line_number,
                record: row.text,
            }
        })
        .collect()
}

/// The type a value of a column of type `ty` is converted to (a SERIAL is an INT64).
fn value_type(ty: &LogicalType) -> LogicalType {
    match ty {
        LogicalType::Serial => LogicalType::Int64,
        other => other.clone(),
    }
}

fn show(value: &Value) -> String {
    warren_common::format::to_kuzu_string(value, &warren_common::value::NoGraph)
}

/// The input columns of a node table: every property but a SERIAL primary key.
fn node_input_types(editor: &Editor, table: TableId) -> Vec<LogicalType> {
    let schema = editor
        .catalog()
        .node_table_by_id(table)
        .expect("resolved table");
    let pk = schema.primary_key;
    let serial = schema.properties[pk].ty == LogicalType::Serial;
    (0..schema.properties.len())
        .filter(|&i| !(serial && i == pk))
        .map(|i| schema.properties[i].ty.clone())
        .collect()
}

/// The input columns of a rel table pair: both endpoint keys, then the properties.
fn rel_input_types(editor: &Editor, pair: TableId) -> Vec<LogicalType> {
    let catalog = editor.catalog();
    let (schema, ends) = catalog.rel_pair(pair).expect("resolved pair");
    let key_type = |table| {
        catalog
            .node_table_by_id(table)
            .expect("endpoint table")
            .primary_key()
            .ty
            .clone()
    };
    let mut types = vec![key_type(ends.from), key_type(ends.to)];
    types.extend(schema.properties.iter().map(|p| p.ty.clone()));
    types
}

/// Converts row `values` to `types`, or says why it can't.
fn convert_row(values: &[Value], types: &[LogicalType]) -> std::result::Result<Vec<Value>, String> {
    if values.len() != types.len() {
        return Err(format!(
            "expected {} values per row, but found {}",
            types.len(),
            values.len()
        ));
    }
    values
        .iter()
        .zip(types)
        .map(|(value, ty)| {
            warren_common::cast::cast_value(value, &value_type(ty))
                .map_err(|e| format!("Conversion exception: {e}"))
        })
        .collect()
}

/// `IGNORE_ERRORS` for a node table: the rows that convert and whose primary key is neither NULL
/// nor taken (by a stored node or an earlier row); a skipped row for each other row.
fn node_rows_without_errors(
    editor: &Editor,
    table: TableId,
    input: &SkippableRows<'_>,
    skipped: &mut Vec<SkippedRow>,
) -> Vec<Vec<Value>> {
    let schema = editor
        .catalog()
        .node_table_by_id(table)
        .expect("resolved table");
    let stored = editor.node_table(table);
    let pk = schema.primary_key;
    let serial = schema.properties[pk].ty == LogicalType::Serial;
    let types = node_input_types(editor, table);
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::with_capacity(input.rows.len());
    for (index, values) in input.rows.iter().enumerate() {
        let converted = match convert_row(values, &types) {
            Ok(converted) => converted,
            Err(message) => {
                skipped.push(input.skip(index, message));
                continue;
            }
        };
        if !serial {
            let key = &converted[pk];
            if key.is_null() {
                let message =
                    "Found NULL, which violates the non-null constraint of the primary key column.";
                skipped.push(input.skip(index, message.into()));
                continue;
            }
            if stored.lookup(key).is_some() || !seen.insert(key.clone()) {
                skipped.push(input.skip(index, duplicate_key_message(key)));
                continue;
            }
        }
        kept.push(converted);
    }
    kept
}

/// `IGNORE_ERRORS` for a rel table pair: the rows that convert and whose endpoints exist; a
/// skipped row for each other row.
fn rel_rows_without_errors(
    editor: &Editor,
    pair: TableId,
    input: &SkippableRows<'_>,
    skipped: &mut Vec<SkippedRow>,
) -> Vec<Vec<Value>> {
    let ends = *editor.catalog().rel_pair(pair).expect("resolved pair").1;
    let types = rel_input_types(editor, pair);
    let (from, to) = (editor.node_table(ends.from), editor.node_table(ends.to));
    let mut kept = Vec::with_capacity(input.rows.len());
    for (index, values) in input.rows.iter().enumerate() {
        let converted = match convert_row(values, &types) {
            Ok(converted) => converted,
            Err(message) => {
                skipped.push(input.skip(index, message));
                continue;
            }
        };
        let missing = [(&converted[0], from), (&converted[1], to)]
            .into_iter()
            .find(|(key, table)| table.lookup(key).is_none());
        if let Some((key, _)) = missing {
            let message = format!("Unable to find primary key value {}.", show(key));
            skipped.push(input.skip(index, message));
            continue;
        }
        kept.push(converted);
    }
    kept
}

fn copy_node_table(
    editor: &Editor,
    table: TableId,
    source: &mut CopySource<'_>,
    phases: &mut CopyPhases,
) -> Result<(NodeTable, u64)> {
    let schema = editor
        .catalog()
        .node_table_by_id(table)
        .expect("resolved table")
        .clone();
    let stored = editor.node_table(table).clone();
    let pk = schema.primary_key;
    let serial = schema.properties[pk].ty == LogicalType::Serial;
    // A SERIAL key is generated, so it has no column in the file.
    let file_columns: Vec<usize> = (0..schema.properties.len())
        .filter(|&i| !(serial && i == pk))
        .collect();
    let types: Vec<LogicalType> = file_columns
        .iter()
        .map(|&i| schema.properties[i].ty.clone())
        .collect();
    let mut builders: Vec<ColumnBuilder> = stored
        .columns()
        .iter()
        .map(ColumnBuilder::from_column)
        .collect();
    let mut next_serial = stored.next_serial();
    let first_new_row = stored.num_rows();
    let mut locations: Vec<(u32, u64)> = Vec::new();
    let reading = PhaseClock::start();
    source.for_each(&types, |row| {
        for (field, &property) in file_columns.iter().enumerate() {
            row.push_value(field, &mut builders[property])?;
        }
        if serial {
            builders[pk].push_i64(next_serial);
            next_serial += 1;
        }
        if builders[pk].len() as u64 > warren_common::limits::NODE_TABLE_ROWS_MAX {
            return Err(row.error("the node table would exceed 4294967295 rows".into()));
        }
        locations.push(row.location());
        Ok(())
    })?;
    let columns: Vec<Column> = builders.into_iter().map(ColumnBuilder::finish).collect();
    phases.record("read and convert rows", reading.stop());
    let rows = columns[pk].len() as u64 - first_new_row;
    let locate = |row: usize| source.describe(locations[row - first_new_row as usize]);
    if let Some(row) = (first_new_row as usize..columns[pk].len()).find(|&r| columns[pk].is_null(r))
    {
        return Err(Error::Copy {
            location: locate(row),
            message:
                "Found NULL, which violates the non-null constraint of the primary key column."
                    .into(),
        });
    }
    let pk_index = phases.time("primary-key index", || {
        crate::pk_index::PrimaryKeyIndex::build(&columns[pk], stored.deleted())
    });
    let pk_index = pk_index.map_err(|(row, key)| Error::Copy {
        location: if row >= first_new_row as usize {
            locate(row)
        } else {
            String::new()
        },
        message: duplicate_key_message(&key),
    })?;
    let deleted = stored.deleted().map(|d| {
        let mut bits = d.to_bits();
        bits.resize(columns[pk].len(), false);
        crate::buffer::Bitmap::from_bits(&bits)
    });
    if let Some(max) = columns[pk].int64_values().and_then(|v| v.iter().max()) {
        if serial {
            next_serial = next_serial.max(max + 1);
        }
    }
    let table = NodeTable::from_parts(columns, pk, pk_index, deleted, next_serial)
        .map_err(Error::internal)?;
    Ok((table, rows))
}

fn select_pair(editor: &Editor, table: &str, options: &CsvOptions) -> Result<TableId> {
    let schema = editor.catalog().rel_table(table).expect("resolved table");
    if schema.pairs.len() == 1 {
        return Ok(schema.pairs[0].id);
    }
    let (Some(from), Some(to)) = (&options.from_table, &options.to_table) else {
        return Err(Error::binder(format!(
            "The table {} has multiple FROM and TO pairs defined in the schema. A specific pair of FROM and TO options is expected when copying data into the {} table.",
            schema.name, schema.name
        )));
    };
    let catalog = editor.catalog();
    schema
        .pairs
        .iter()
        .find(|p| {
            catalog.label(p.from).eq_ignore_ascii_case(from)
                && catalog.label(p.to).eq_ignore_ascii_case(to)
        })
        .map(|p| p.id)
        .ok_or_else(|| {
            Error::binder(format!(
                "Table {} has no FROM {from} TO {to} pair.",
                schema.name
            ))
        })
}

fn copy_rel_table(
    editor: &Editor,
    pair: TableId,
    source: &mut CopySource<'_>,
    phases: &mut CopyPhases,
) -> Result<(RelTable, u64)> {
    let (schema, pair_schema) = editor.catalog().rel_pair(pair).expect("resolved pair");
    let (schema, pair_schema) = (schema.clone(), *pair_schema);
    let from = editor.node_table(pair_schema.from).clone();
    let to = editor.node_table(pair_schema.to).clone();
    let from_key = editor
        .catalog()
        .node_table_by_id(pair_schema.from)
        .expect("from")
        .primary_key()
        .ty
        .clone();
    let to_key = editor
        .catalog()
        .node_table_by_id(pair_schema.to)
        .expect("to")
        .primary_key()
        .ty
        .clone();
    let stored = editor.rel_table(pair).clone();
    let mut types = vec![from_key.clone(), to_key.clone()];
    types.extend(schema.properties.iter().map(|p| p.ty.clone()));
    let first_new = stored.sources().len();
    let (from_lookup, to_lookup) = (KeyLookup::of(&from), KeyLookup::of(&to));
    let resolve = |row: &dyn InputRow| -> Result<(u32, u32)> {
        Ok((
            row.endpoint(0, &from, &from_key, &from_lookup)?,
            row.endpoint(1, &to, &to_key, &to_lookup)?,
        ))
    };
    let parallel = match source {
        CopySource::Files {
            files,
            options,
            progress,
        } if schema.properties.is_empty() => {
            let plain = |source_key: i64, target_key: i64| {
                Some((
                    from_lookup.int64_row(&from, source_key)?,
                    to_lookup.int64_row(&to, target_key)?,
                ))
            };
            let plain = (from_lookup.takes_int64() && to_lookup.takes_int64())
                .then_some(&plain as &PlainResolve<'_>);
            let input = (&**files, &**options, &types[..]);
            let readers = (&resolve as &ResolveRow<'_>, plain);
            read_endpoints_in_parallel(input, &stored, &mut **progress, readers, phases)?
        }
        _ => None,
    };
    let (sources, targets, columns) = match parallel {
        Some(endpoints) => (endpoints.sources, endpoints.targets, Vec::new()),
        None => {
            let mut sources = stored.sources().to_vec();
            let mut targets = stored.targets().to_vec();
            let mut builders: Vec<ColumnBuilder> = stored
                .columns()
                .iter()
                .map(ColumnBuilder::from_column)
                .collect();
            let reading = PhaseClock::start();
            source.for_each(&types, |row| {
                let (from_node, to_node) = resolve(row)?;
                for (i, builder) in builders.iter_mut().enumerate() {
                    row.push_value(i + 2, builder)?;
                }
                if sources.len() as u64 >= u64::from(u32::MAX) {
                    return Err(row.error("the rel table would exceed 4294967295 rows".into()));
                }
                sources.push(from_node);
                targets.push(to_node);
                Ok(())
            })?;
            let columns = builders.into_iter().map(ColumnBuilder::finish).collect();
            phases.record("read and resolve rows (one reader)", reading.stop());
            let source_words = U32Words::from(&sources[..]);
            drop(sources);
            let target_words = U32Words::from(&targets[..]);
            drop(targets);
            (source_words, target_words, columns)
        }
    };
    let rows = (sources.len() - first_new) as u64;
    let deleted = stored.deleted().map(|d| {
        let mut bits = d.to_bits();
        bits.resize(sources.len(), false);
        crate::buffer::Bitmap::from_bits(&bits)
    });
    let table = RelTable::build_from_words_timed(
        (sources, targets),
        columns,
        deleted,
        (from.num_rows(), to.num_rows()),
        phases,
    )
    .map_err(Error::internal)?;
    Ok((table, rows))
}

/// Turns an input row into its (source, target) node offsets, or fails with the row's error.
type ResolveRow<'a> = dyn Fn(&dyn InputRow) -> Result<(u32, u32)> + Sync + 'a;

/// Reads a property-less rel COPY's endpoints with [`copy_threads`] workers, or returns `None`
/// when the files cannot be cut at line breaks (they hold quotes) or hold too many lines for a
/// rel table: then the one-reader path reads them. `plain`, where given, reads the chunks of
/// plain integer pairs (see [`crate::import::plain_pairs`]).
fn read_endpoints_in_parallel(
    (files, options, types): (&[PathBuf], &CsvOptions, &[LogicalType]),
    stored: &RelTable,
    progress: &mut dyn CopyProgress,
    (resolve, plain): (&ResolveRow<'_>, Option<&PlainResolve<'_>>),
    phases: &mut CopyPhases,
) -> Result<Option<Endpoints>> {
    let split = phases.time("split input at line breaks", || {
        SplitFiles::split(files, options, types, CHUNK_BYTES)
    })?;
    let Some(split) = split else {
        return Ok(None);
    };
    let lines: usize = split.chunks().iter().map(|c| c.rows_max).sum();
    if (stored.sources().len() + lines) as u64 >= u64::from(u32::MAX) {
        return Ok(None);
    }
    let width = types.len();
    let resolve_csv = |row: &RowReader<'_>| {
        row.check_width(width)?;
        resolve(&CsvRow { row })
    };
    let reading = PhaseClock::start();
    let endpoints = read_endpoints(
        &split,
        (stored.sources(), stored.targets()),
        copy_threads(),
        progress,
        &Resolvers {
            resolve: &resolve_csv,
            plain,
        },
    )?;
    phases.record("read, parse and resolve endpoints", reading.stop());
    Ok(Some(endpoints))
}

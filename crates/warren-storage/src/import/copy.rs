//! `COPY table FROM files`: reads CSV rows, converts every field to its column's type, and builds
//! the table's next version (existing rows followed by the new ones). Node tables get their
//! primary-key index rebuilt; rel tables resolve both endpoint keys and get both CSRs rebuilt.
//! Any bad row aborts the whole COPY with `file:line` and the reason; nothing is applied.

use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result, TableId};

use crate::column::{Column, ColumnBuilder};
use crate::editor::Editor;
use crate::import::options::{detect_dialect, CsvOptions, Dialect};
use crate::node_table::NodeTable;
use crate::rel_table::RelTable;

/// Bytes of a file given to dialect detection.
const SAMPLE_BYTES: usize = 64 * 1024;

/// Receives progress while files are read.
pub trait CopyProgress {
    /// `total` bytes are about to be read.
    fn start(&mut self, _total: u64) {}
    /// `bytes` more bytes were read.
    fn advance(&mut self, _bytes: u64) {}
    fn finish(&mut self) {}
}

/// Progress that goes nowhere.
impl CopyProgress for () {}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopySummary {
    pub table: String,
    pub rows: u64,
}

/// A mapped input file.
struct InputFile {
    path: PathBuf,
    bytes: Option<Mmap>,
}

impl InputFile {
    fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::Copy {
            location: String::new(),
            message: format!("Cannot open file {}: {e}", path.display()),
        })?;
        let length = file
            .metadata()
            .map_err(|e| Error::io(path.display(), e))?
            .len();
        // SAFETY: the file is only read; a concurrent writer could change what we read, which
        // at worst yields a conversion error, never memory unsafety for &[u8] reads.
        let bytes = if length == 0 {
            None
        } else {
            Some(unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path.display(), e))?)
        };
        Ok(Self {
            path: path.to_path_buf(),
            bytes,
        })
    }

    fn bytes(&self) -> &[u8] {
        self.bytes.as_deref().unwrap_or(&[])
    }
}

/// Skips `lines` lines; returns the rest and the number of the first remaining line.
fn skip_lines(bytes: &[u8], lines: u64) -> (&[u8], u64) {
    let mut rest = bytes;
    for _ in 0..lines {
        match rest.iter().position(|&b| b == b'\n') {
            Some(end) => rest = &rest[end + 1..],
            None => return (&[], lines + 1),
        }
    }
    (rest, lines + 1)
}

/// One CSV row being converted, with its location for error messages.
struct RowReader<'a> {
    path: &'a Path,
    record: csv::ByteRecord,
    line: u64,
}

impl RowReader<'_> {
    fn error(&self, message: impl Into<String>) -> Error {
        Error::Copy {
            location: format!("{}:{}", self.path.display(), self.line),
            message: message.into(),
        }
    }

    fn field(&self, index: usize) -> Result<&str> {
        std::str::from_utf8(&self.record[index])
            .map_err(|_| self.error(format!("column {} is not valid UTF-8", index + 1)))
    }

    /// Converts field `index` to `ty` (empty fields are NULL) and appends it to `builder`.
    fn push_field(&self, index: usize, builder: &mut ColumnBuilder) -> Result<()> {
        let raw = &self.record[index];
        if raw.is_empty() {
            builder.push_null();
            return Ok(());
        }
        if matches!(builder.ty(), LogicalType::Int64) {
            if let Some(v) = parse_i64(raw) {
                builder.push_i64(v);
                return Ok(());
            }
        }
        let value = self.parse(index, builder.ty())?;
        builder.push(&value).map_err(|e| self.error(e))
    }

    fn parse(&self, index: usize, ty: &LogicalType) -> Result<Value> {
        let text = self.field(index)?;
        warren_common::cast::parse_value(text, ty).map_err(|e| self.error(e))
    }
}

/// Decimal i64 without allocation; `None` for anything else (the slow path reports the error).
#[inline]
fn parse_i64(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes.first()? {
        b'-' => (true, &bytes[1..]),
        b'+' => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut value: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(b - b'0');
    }
    Some(if negative { -value } else { value })
}

/// Reads every data row of every file, calling `row` for each. `types` are the expected
/// columns (used to detect the dialect and to check the column count).
fn for_each_row(
    files: &[PathBuf],
    options: &CsvOptions,
    types: &[LogicalType],
    progress: &mut dyn CopyProgress,
    mut row: impl FnMut(&RowReader<'_>) -> Result<()>,
) -> Result<()> {
    let inputs: Vec<InputFile> = files
        .iter()
        .map(|p| InputFile::open(p))
        .collect::<Result<_>>()?;
    progress.start(inputs.iter().map(|f| f.bytes().len() as u64).sum());
    for input in &inputs {
        let (body, first_line) = skip_lines(input.bytes(), options.skip);
        let dialect = detect_dialect(&body[..body.len().min(SAMPLE_BYTES)], options, types);
        read_file(
            input,
            body,
            first_line,
            &dialect,
            types.len(),
            progress,
            &mut row,
        )?;
    }
    progress.finish();
    Ok(())
}

fn read_file(
    input: &InputFile,
    body: &[u8],
    first_line: u64,
    dialect: &Dialect,
    columns: usize,
    progress: &mut dyn CopyProgress,
    row: &mut impl FnMut(&RowReader<'_>) -> Result<()>,
) -> Result<()> {
    let mut reader = dialect.reader_builder().from_reader(body);
    let mut current = RowReader {
        path: &input.path,
        record: csv::ByteRecord::new(),
        line: first_line,
    };
    let mut reported: u64 = 0;
    let mut is_first = true;
    loop {
        let more = reader.read_byte_record(&mut current.record).map_err(|e| {
            let line = e
                .position()
                .map_or(first_line, |p| p.line() + first_line - 1);
            Error::Copy {
                location: format!("{}:{line}", input.path.display()),
                message: e.to_string(),
            }
        })?;
        if !more {
            break;
        }
        current.line = current
            .record
            .position()
            .map_or(first_line, |p| p.line() + first_line - 1);
        if std::mem::take(&mut is_first) && dialect.header {
            continue;
        }
        if current.record.len() != columns {
            return Err(current.error(format!(
                "expected {columns} values per row, but found {}",
                current.record.len()
            )));
        }
        row(&current)?;
        let position = current.record.position().map_or(0, |p| p.byte());
        if position - reported > 1 << 20 {
            progress.advance(position - reported);
            reported = position;
        }
    }
    progress.advance(body.len() as u64 - reported.min(body.len() as u64));
    Ok(())
}

/// Runs `COPY table FROM files` against the editor's current state and stages the result.
pub fn copy_from_files(
    editor: &mut Editor,
    table: &str,
    files: &[PathBuf],
    options: &CsvOptions,
    progress: &mut dyn CopyProgress,
) -> Result<CopySummary> {
    if let Some(schema) = editor.catalog().node_table(table) {
        let (id, name) = (schema.id, schema.name.clone());
        let (data, rows) = copy_node_table(editor, id, files, options, progress)?;
        editor.replace_node_table(id, data);
        return Ok(CopySummary { table: name, rows });
    }
    if let Some(schema) = editor.catalog().rel_table(table) {
        let name = schema.name.clone();
        let pair = select_pair(editor, table, options)?;
        let (data, rows) = copy_rel_table(editor, pair, files, options, progress)?;
        editor.replace_rel_table(pair, data);
        return Ok(CopySummary { table: name, rows });
    }
    Err(Error::binder(format!("Table {table} does not exist.")))
}

fn copy_node_table(
    editor: &Editor,
    table: TableId,
    files: &[PathBuf],
    options: &CsvOptions,
    progress: &mut dyn CopyProgress,
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
    let mut file_index = 0u32;
    let mut last_path: Option<PathBuf> = None;
    for_each_row(files, options, &types, progress, |row| {
        if last_path.as_deref() != Some(row.path) {
            file_index = files.iter().position(|f| f == row.path).unwrap_or(0) as u32;
            last_path = Some(row.path.to_path_buf());
        }
        for (field, &property) in file_columns.iter().enumerate() {
            row.push_field(field, &mut builders[property])?;
        }
        if serial {
            builders[pk].push_i64(next_serial);
            next_serial += 1;
        }
        if builders[pk].len() as u64 > warren_common::limits::NODE_TABLE_ROWS_MAX {
            return Err(row.error("the node table would exceed 4294967295 rows"));
        }
        locations.push((file_index, row.line));
        Ok(())
    })?;
    let columns: Vec<Column> = builders.into_iter().map(ColumnBuilder::finish).collect();
    let rows = columns[pk].len() as u64 - first_new_row;
    let locate = |row: usize| {
        let (file, line) = locations[row - first_new_row as usize];
        format!("{}:{line}", files[file as usize].display())
    };
    if let Some(row) = (first_new_row as usize..columns[pk].len()).find(|&r| columns[pk].is_null(r))
    {
        return Err(Error::Copy {
            location: locate(row),
            message:
                "Found NULL, which violates the non-null constraint of the primary key column."
                    .into(),
        });
    }
    let pk_index = crate::pk_index::PrimaryKeyIndex::build(&columns[pk], stored.deleted())
        .map_err(|(row, key)| Error::Copy {
            location: if row >= first_new_row as usize { locate(row) } else { String::new() },
            message: format!(
                "Found duplicated primary key value {}, which violates the uniqueness constraint of the primary key column.",
                warren_common::format::to_kuzu_string(&key, &warren_common::value::NoGraph)
            ),
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

/// Resolves a primary-key field of a rel row to a node offset.
fn resolve_endpoint(
    row: &RowReader<'_>,
    index: usize,
    table: &NodeTable,
    ty: &LogicalType,
) -> Result<u32> {
    let raw = &row.record[index];
    if let (Some(keys), Some(key)) = (
        table.column(table.primary_key()).int64_values(),
        parse_i64(raw),
    ) {
        if table.deleted().is_none_or(|d| d.count_ones() == 0) {
            return table
                .pk_index()
                .lookup_i64(keys, key)
                .ok_or_else(|| row.error(format!("Unable to find primary key value {key}.")));
        }
    }
    let text = row.field(index)?;
    let key = match ty {
        LogicalType::Serial => warren_common::cast::parse_value(text, &LogicalType::Int64),
        other => warren_common::cast::parse_value(text, other),
    }
    .map_err(|e| row.error(e))?;
    table
        .lookup(&key)
        .ok_or_else(|| row.error(format!("Unable to find primary key value {text}.")))
}

fn copy_rel_table(
    editor: &Editor,
    pair: TableId,
    files: &[PathBuf],
    options: &CsvOptions,
    progress: &mut dyn CopyProgress,
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
    let mut sources = stored.sources().to_vec();
    let mut targets = stored.targets().to_vec();
    let mut builders: Vec<ColumnBuilder> = stored
        .columns()
        .iter()
        .map(ColumnBuilder::from_column)
        .collect();
    let first_new = sources.len();
    for_each_row(files, options, &types, progress, |row| {
        let source = resolve_endpoint(row, 0, &from, &from_key)?;
        let target = resolve_endpoint(row, 1, &to, &to_key)?;
        for (i, builder) in builders.iter_mut().enumerate() {
            row.push_field(i + 2, builder)?;
        }
        if sources.len() as u64 >= u64::from(u32::MAX) {
            return Err(row.error("the rel table would exceed 4294967295 rows"));
        }
        sources.push(source);
        targets.push(target);
        Ok(())
    })?;
    let rows = (sources.len() - first_new) as u64;
    let columns = builders.into_iter().map(ColumnBuilder::finish).collect();
    let deleted = stored.deleted().map(|d| {
        let mut bits = d.to_bits();
        bits.resize(sources.len(), false);
        crate::buffer::Bitmap::from_bits(&bits)
    });
    let table = RelTable::build(
        sources,
        targets,
        columns,
        deleted,
        from.num_rows(),
        to.num_rows(),
    )
    .map_err(Error::internal)?;
    Ok((table, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_integers_only() {
        assert_eq!(parse_i64(b"-42"), Some(-42));
        assert_eq!(parse_i64(b"+7"), Some(7));
        assert_eq!(parse_i64(b"4x"), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(parse_i64(b"1234567890123456789"), None);
    }

    #[test]
    fn skips_lines() {
        assert_eq!(skip_lines(b"a\nb\nc", 2), (&b"c"[..], 3));
        assert_eq!(skip_lines(b"a\n", 5).0, b"");
    }
}

//! Reading CSV files: mapping them, skipping lines, detecting the dialect, and handing out one
//! row at a time with its `file:line` for error messages. Used by COPY and by LOAD FROM, which
//! also detects column names and types here.

use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result};

use crate::column::ColumnBuilder;
use crate::import::copy::CopyWarning;
use crate::import::options::{detect_dialect, CsvOptions, Dialect};

/// Bytes of a file given to dialect detection.
pub(crate) const SAMPLE_BYTES: usize = 64 * 1024;
/// Rows read to detect the column types of LOAD FROM.
const TYPE_SAMPLE_ROWS: usize = 1024;

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

    /// Drops the whole pages inside `range` from this process's memory; reading them again
    /// reads them back from the page cache or the file.
    fn release(&self, range: std::ops::Range<usize>) {
        const PAGE: usize = 4096;
        let Some(map) = &self.bytes else { return };
        let start = range.start.div_ceil(PAGE) * PAGE;
        let end = range.end / PAGE * PAGE;
        if start < end {
            // SAFETY: the mapping is a read-only private mapping of a file; after DONTNEED its
            // pages read as the file's contents again, so every slice of it stays valid.
            let advised = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
            };
            debug_assert!(advised.is_ok(), "madvise failed: {advised:?}");
        }
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
pub(crate) struct RowReader<'a> {
    pub(crate) path: &'a Path,
    /// The position of `path` among the files read.
    pub(crate) file: u32,
    pub(crate) record: csv::ByteRecord,
    pub(crate) line: u64,
    /// The bytes the file's rows are read from, and the row's span in them.
    body: &'a [u8],
    span: std::ops::Range<usize>,
}

impl RowReader<'_> {
    pub(crate) fn error(&self, message: impl Into<String>) -> Error {
        Error::Copy {
            location: format!("{}:{}", self.path.display(), self.line),
            message: message.into(),
        }
    }

    /// The row as it is written in the file, without its line break.
    pub(crate) fn text(&self) -> String {
        let bytes = self.body.get(self.span.clone()).unwrap_or(&[]);
        let text = String::from_utf8_lossy(bytes);
        text.trim_end_matches(['\r', '\n']).to_string()
    }

    /// Fails unless the row has `columns` fields.
    pub(crate) fn check_width(&self, columns: usize) -> Result<()> {
        if self.record.len() == columns {
            return Ok(());
        }
        Err(self.error(format!(
            "expected {columns} values per row, but found {}",
            self.record.len()
        )))
    }

    /// Field `index` as a value of `ty` (empty fields are NULL), or why it does not convert.
    pub(crate) fn value(
        &self,
        index: usize,
        ty: &LogicalType,
    ) -> std::result::Result<Value, String> {
        let raw = &self.record[index];
        if raw.is_empty() {
            return Ok(Value::Null);
        }
        let text = std::str::from_utf8(raw)
            .map_err(|_| format!("column {} is not valid UTF-8", index + 1))?;
        warren_common::cast::parse_value(text, ty).map_err(|e| format!("Conversion exception: {e}"))
    }

    pub(crate) fn field(&self, index: usize) -> Result<&str> {
        std::str::from_utf8(&self.record[index])
            .map_err(|_| self.error(format!("column {} is not valid UTF-8", index + 1)))
    }

    /// Converts field `index` to `ty` (empty fields are NULL) and appends it to `builder`.
    pub(crate) fn push_field(&self, index: usize, builder: &mut ColumnBuilder) -> Result<()> {
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
pub(crate) fn parse_i64(bytes: &[u8]) -> Option<i64> {
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
/// columns (used to detect the dialect); `row` checks the column count
/// ([`RowReader::check_width`]).
pub(crate) fn for_each_row(
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
    for (file, input) in inputs.iter().enumerate() {
        let (body, first_line) = skip_lines(input.bytes(), options.skip);
        let dialect = detect_dialect(&body[..body.len().min(SAMPLE_BYTES)], options, types);
        read_file(
            (input, file as u32),
            body,
            first_line,
            &dialect,
            progress,
            &mut row,
        )?;
    }
    progress.finish();
    Ok(())
}

fn read_file(
    (input, file): (&InputFile, u32),
    body: &[u8],
    first_line: u64,
    dialect: &Dialect,
    progress: &mut dyn CopyProgress,
    row: &mut impl FnMut(&RowReader<'_>) -> Result<()>,
) -> Result<()> {
    let mut reader = dialect.reader_builder().from_reader(body);
    let mut current = RowReader {
        path: &input.path,
        file,
        record: csv::ByteRecord::new(),
        line: first_line,
        body,
        span: 0..0,
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
        let position = current.record.position().map_or(0, |p| p.byte());
        let end = usize::try_from(reader.position().byte()).unwrap_or(usize::MAX);
        // After a CRLF the record starts at the LF the reader stopped before: skip the line
        // breaks in front of it, counting lines, so that its line and text are its own.
        let mut start = usize::try_from(position).unwrap_or(usize::MAX).min(end);
        let mut breaks = 0;
        while start < end && matches!(body.get(start), Some(b'\n' | b'\r')) {
            breaks += u64::from(body[start] == b'\n');
            start += 1;
        }
        current.line = current
            .record
            .position()
            .map_or(first_line, |p| p.line() + first_line - 1)
            + breaks;
        current.span = start..end;
        if std::mem::take(&mut is_first) && dialect.header {
            continue;
        }
        row(&current)?;
        if position - reported > 1 << 20 {
            progress.advance(position - reported);
            reported = position;
        }
    }
    progress.advance(body.len() as u64 - reported.min(body.len() as u64));
    Ok(())
}

/// The bytes of one piece of the files that a parallel COPY hands to one worker. Chunks end at a
/// line break, so no row is split between two of them.
pub(crate) const CHUNK_BYTES: usize = 16 << 20;

/// A piece of one file's rows: whole lines, read by one worker.
#[derive(Clone, Debug)]
pub(crate) struct Chunk {
    /// The position of the file among the files read.
    pub(crate) file: u32,
    /// The chunk's byte range in the file's mapping.
    pub(crate) range: std::ops::Range<usize>,
    /// The line number of the chunk's first line.
    pub(crate) first_line: u64,
    /// An upper bound on the chunk's rows: its line breaks, plus one for a last line without
    /// one (blank lines are no rows, so there may be fewer).
    pub(crate) rows_max: usize,
}

/// The carriage returns of `text` not followed by a line feed: the CSV reader ends a row at
/// each of them too, so a chunk's rows are bounded by its line feeds plus these.
fn lone_carriage_returns(text: &[u8]) -> usize {
    memchr::memchr_iter(b'\r', text)
        .filter(|&at| text.get(at + 1) != Some(&b'\n'))
        .count()
}

/// Mapped input files cut into [`Chunk`]s of about `chunk_bytes` ([`CHUNK_BYTES`] for COPY),
/// for workers that read them at the same time.
pub(crate) struct SplitFiles {
    inputs: Vec<InputFile>,
    dialects: Vec<Dialect>,
    chunks: Vec<Chunk>,
}

impl SplitFiles {
    /// Maps `files` and cuts them at line breaks, or returns `None` when a file contains the
    /// dialect's quote or escape byte: a quoted field may hold a line break, so such files are
    /// read from start to end by one reader.
    pub(crate) fn split(
        files: &[PathBuf],
        options: &CsvOptions,
        types: &[LogicalType],
        chunk_bytes: usize,
    ) -> Result<Option<Self>> {
        assert!(chunk_bytes > 0, "chunks hold at least one byte");
        let mut split = Self {
            inputs: Vec::with_capacity(files.len()),
            dialects: Vec::with_capacity(files.len()),
            chunks: Vec::new(),
        };
        for (file, path) in files.iter().enumerate() {
            let input = InputFile::open(path)?;
            let bytes = input.bytes();
            let (body, mut first_line) = skip_lines(bytes, options.skip);
            let mut dialect = detect_dialect(&body[..body.len().min(SAMPLE_BYTES)], options, types);
            if memchr::memchr2(dialect.quote, dialect.escape, body).is_some() {
                return Ok(None);
            }
            let mut start = bytes.len() - body.len();
            if std::mem::take(&mut dialect.header) {
                start = memchr::memchr(b'\n', &bytes[start..])
                    .map_or(bytes.len(), |end| start + end + 1);
                first_line += 1;
            }
            while start < bytes.len() {
                let cut = (start + chunk_bytes).min(bytes.len());
                let end = match memchr::memchr(b'\n', &bytes[cut..]) {
                    Some(at) if cut < bytes.len() => cut + at + 1,
                    _ => bytes.len(),
                };
                let breaks = memchr::memchr_iter(b'\n', &bytes[start..end]).count();
                split.chunks.push(Chunk {
                    file: file as u32,
                    range: start..end,
                    first_line,
                    rows_max: breaks
                        + lone_carriage_returns(&bytes[start..end])
                        + usize::from(bytes[end - 1] != b'\n'),
                });
                first_line += breaks as u64;
                start = end;
            }
            split.inputs.push(input);
            split.dialects.push(dialect);
        }
        Ok(Some(split))
    }

    pub(crate) fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    pub(crate) fn total_bytes(&self) -> u64 {
        self.chunks.iter().map(|c| c.range.len() as u64).sum()
    }

    /// The text of `chunk` (whole lines) and its file's delimiter.
    pub(crate) fn chunk_text(&self, chunk: &Chunk) -> (&[u8], u8) {
        let input = &self.inputs[chunk.file as usize];
        let delimiter = self.dialects[chunk.file as usize].delimiter;
        (&input.bytes()[chunk.range.clone()], delimiter)
    }

    /// Lets the kernel drop the pages of `chunk`, read, from this process (see
    /// [`SplitFiles::read_chunk`]).
    pub(crate) fn release_chunk(&self, chunk: &Chunk) {
        self.inputs[chunk.file as usize].release(chunk.range.clone());
    }

    /// Reads the rows of `chunk`, calling `row` for each, then lets the kernel drop the chunk's
    /// pages from this process (they stay in the page cache), so that a COPY's resident memory
    /// does not grow with the size of its input files.
    pub(crate) fn read_chunk(
        &self,
        chunk: &Chunk,
        mut row: impl FnMut(&RowReader<'_>) -> Result<()>,
    ) -> Result<()> {
        let input = &self.inputs[chunk.file as usize];
        let body = &input.bytes()[chunk.range.clone()];
        let dialect = &self.dialects[chunk.file as usize];
        read_file(
            (input, chunk.file),
            body,
            chunk.first_line,
            dialect,
            &mut (),
            &mut row,
        )?;
        input.release(chunk.range.clone());
        Ok(())
    }
}

/// The columns of a file for LOAD FROM: names from the header row (or `column0`, `column1`, ...)
/// and types detected from a sample (BOOL, INT64, DOUBLE, DATE, TIMESTAMP, else STRING).
pub fn sniff_columns(path: &Path, options: &CsvOptions) -> Result<Vec<(String, LogicalType)>> {
    let input = InputFile::open(path)?;
    let (body, _) = skip_lines(input.bytes(), options.skip);
    let sample = &body[..body.len().min(SAMPLE_BYTES)];
    let width = first_record_width(sample, options);
    let strings = vec![LogicalType::String; width];
    let dialect = detect_dialect(sample, options, &strings);
    let mut reader = dialect.reader_builder().from_reader(sample);
    let mut rows: Vec<Vec<String>> = Vec::new();
    for record in reader.records().take(TYPE_SAMPLE_ROWS) {
        let Ok(record) = record else { break };
        rows.push(record.iter().map(str::to_string).collect());
    }
    let header = options.header.unwrap_or(false);
    let (names, data): (Vec<String>, &[Vec<String>]) = match rows.split_first() {
        Some((first, rest)) if header => (first.clone(), rest),
        _ => (
            (0..width).map(|i| format!("column{i}")).collect(),
            &rows[..],
        ),
    };
    Ok(names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            (
                name,
                column_type(data.iter().filter_map(|r| r.get(i).map(String::as_str))),
            )
        })
        .collect())
}

fn first_record_width(sample: &[u8], options: &CsvOptions) -> usize {
    for delimiter in options
        .delimiter
        .map_or(vec![b',', b'|', b';', b'\t'], |d| vec![d])
    {
        let dialect = Dialect {
            delimiter,
            quote: options.quote,
            escape: options.escape.unwrap_or(options.quote),
            header: false,
        };
        let mut reader = dialect.reader_builder().from_reader(sample);
        if let Some(Ok(record)) = reader.records().next() {
            if record.len() > 1 {
                return record.len();
            }
        }
    }
    1
}

/// The narrowest type every non-empty value converts to.
fn column_type<'a>(values: impl Iterator<Item = &'a str> + Clone) -> LogicalType {
    let all = |ty: &LogicalType| {
        values
            .clone()
            .filter(|v| !v.is_empty())
            .all(|v| warren_common::cast::parse_value(v, ty).is_ok())
    };
    let words = values
        .clone()
        .filter(|v| !v.is_empty())
        .all(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "false"));
    if values.clone().any(|v| !v.is_empty()) && words {
        return LogicalType::Bool;
    }
    for ty in [
        LogicalType::Int64,
        LogicalType::Double,
        LogicalType::Date,
        LogicalType::Timestamp,
    ] {
        if values.clone().any(|v| !v.is_empty()) && all(&ty) {
            return ty;
        }
    }
    LogicalType::String
}

/// Every data row of `files` as values of `types` (for LOAD FROM).
pub fn read_rows(
    files: &[PathBuf],
    options: &CsvOptions,
    types: &[LogicalType],
) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for_each_row(files, options, types, &mut (), |row| {
        row.check_width(types.len())?;
        rows.push(loaded_values(row, types)?);
        Ok(())
    })?;
    Ok(rows)
}

/// A row's values for LOAD FROM: an empty field is NULL, except an empty STRING.
fn loaded_values(row: &RowReader<'_>, types: &[LogicalType]) -> Result<Vec<Value>> {
    let mut values = Vec::with_capacity(types.len());
    for (i, ty) in types.iter().enumerate() {
        let text = row.field(i)?;
        values.push(if text.is_empty() && *ty != LogicalType::String {
            Value::Null
        } else {
            warren_common::cast::parse_value(text, ty).map_err(|e| row.error(e))?
        });
    }
    Ok(values)
}

/// [`read_rows`] with `IGNORE_ERRORS`: a row with a wrong number of fields or a value that does
/// not convert is skipped and returned as a warning.
pub fn read_rows_ignoring_errors(
    files: &[PathBuf],
    options: &CsvOptions,
    types: &[LogicalType],
) -> Result<(Vec<Vec<Value>>, Vec<CopyWarning>)> {
    let (mut rows, mut skipped) = (Vec::new(), Vec::new());
    for_each_row(files, options, types, &mut (), |row| {
        let values = match row.check_width(types.len()) {
            Ok(()) => types
                .iter()
                .enumerate()
                .map(|(i, ty)| match ty {
                    LogicalType::String if row.record[i].is_empty() => Ok(Value::string("")),
                    _ => row.value(i, ty),
                })
                .collect::<std::result::Result<Vec<_>, _>>(),
            Err(Error::Copy { message, .. }) => Err(message),
            Err(other) => return Err(other),
        };
        match values {
            Ok(values) => rows.push(values),
            Err(message) => skipped.push(CopyWarning {
                message,
                file_path: row.path.display().to_string(),
                line_number: row.line,
                record: row.text(),
            }),
        }
        Ok(())
    })?;
    Ok((rows, skipped))
}

/// Where a CSV row is: its file (position among the files read), line and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LineOrigin {
    pub(crate) file: u32,
    pub(crate) line: u64,
    pub(crate) text: String,
}

/// The rows of `files` for COPY with `IGNORE_ERRORS`: each row that has `types.len()` fields
/// which all convert, as values (empty fields are NULL; a SERIAL column is an INT64 here),
/// with its origin; and each other row's origin with the reason it was skipped.
#[allow(clippy::type_complexity)]
pub(crate) fn read_rows_skipping_errors(
    files: &[PathBuf],
    options: &CsvOptions,
    types: &[LogicalType],
    progress: &mut dyn CopyProgress,
) -> Result<(Vec<Vec<Value>>, Vec<LineOrigin>, Vec<(LineOrigin, String)>)> {
    let value_types: Vec<LogicalType> = types
        .iter()
        .map(|ty| match ty {
            LogicalType::Serial => LogicalType::Int64,
            other => other.clone(),
        })
        .collect();
    let (mut rows, mut origins, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    for_each_row(files, options, types, progress, |row| {
        let origin = LineOrigin {
            file: row.file,
            line: row.line,
            text: row.text(),
        };
        let converted = match row.check_width(types.len()) {
            Ok(()) => (0..types.len())
                .map(|i| row.value(i, &value_types[i]))
                .collect::<std::result::Result<Vec<_>, _>>(),
            Err(Error::Copy { message, .. }) => Err(message),
            Err(other) => return Err(other),
        };
        match converted {
            Ok(values) => {
                rows.push(values);
                origins.push(origin);
            }
            Err(message) => skipped.push((origin, message)),
        }
        Ok(())
    })?;
    Ok((rows, origins, skipped))
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
    fn skipping_reader_keeps_good_rows_and_says_why_it_skipped_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        std::fs::write(&path, "id,n\n1,2\r\n2,x\n3\n\"4\",\n").unwrap();
        let options = CsvOptions {
            header: Some(true),
            ..CsvOptions::default()
        };
        let types = [LogicalType::Int64, LogicalType::Int32];
        let (rows, origins, skipped) =
            read_rows_skipping_errors(&[path], &options, &types, &mut ()).unwrap();
        assert_eq!(
            rows,
            [
                vec![Value::Int64(1), Value::Int32(2)],
                vec![Value::Int64(4), Value::Null]
            ]
        );
        let lines: Vec<(u64, &str)> = origins.iter().map(|o| (o.line, o.text.as_str())).collect();
        assert_eq!(lines, [(2, "1,2"), (5, "\"4\",")]);
        let skipped: Vec<(u64, &str, &str)> = skipped
            .iter()
            .map(|(o, m)| (o.line, o.text.as_str(), m.as_str()))
            .collect();
        assert_eq!(skipped[0].0, 3);
        assert_eq!(skipped[0].1, "2,x");
        assert!(
            skipped[0].2.starts_with("Conversion exception: "),
            "{}",
            skipped[0].2
        );
        assert_eq!(
            skipped[1],
            (4, "3", "expected 2 values per row, but found 1")
        );
        assert_eq!(skipped.len(), 2);
    }

    #[test]
    fn skips_lines() {
        assert_eq!(skip_lines(b"a\nb\nc", 2), (&b"c"[..], 3));
        assert_eq!(skip_lines(b"a\n", 5).0, b"");
    }
}

//! Printing results: box and ASCII tables, CSV (RFC 4180, header row), JSON
//! (`{"columns": [...], "rows": [[...]]}`), Markdown, and the binary wire format (`bincode`:
//! the framed messages of `docs/format/wire.md`, streamed in chunks). CSV and JSON stream row by row; the
//! table formats buffer at most `max_rows` rows to size their columns, then report the rest.

use std::io::Write;

use warren::{QueryResult, Result};
use warren_common::types::LogicalType;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Box,
    Table,
    Csv,
    Json,
    Markdown,
    Bincode,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        Ok(match text.to_ascii_lowercase().as_str() {
            "box" => Format::Box,
            "table" => Format::Table,
            "csv" => Format::Csv,
            "json" => Format::Json,
            "markdown" | "md" => Format::Markdown,
            "bincode" => Format::Bincode,
            other => {
                return Err(format!(
                    "unknown format {other} (box, table, csv, json, markdown, bincode)"
                ))
            }
        })
    }
}

fn io(e: std::io::Error) -> warren::Error {
    warren::Error::Io(e.to_string())
}

/// Rows to print: the names and type names of the columns, then each row as display text (for
/// CSV and the tables) or as JSON values. A local `QueryResult` and a server's JSON answer both
/// print through it, so `warren shell` and `warren shell --server` print alike.
pub trait Rows {
    fn names(&self) -> Vec<String>;
    /// One name per column; empty where the type is not known (`ANY`).
    fn type_names(&self) -> Vec<String>;
    fn next_text(&mut self) -> Result<Option<Vec<String>>>;
    fn next_json(&mut self) -> Result<Option<Vec<serde_json::Value>>>;
}

/// A local result as [`Rows`].
pub struct LocalRows<'a>(pub &'a mut QueryResult);

impl Rows for LocalRows<'_> {
    fn names(&self) -> Vec<String> {
        self.0.column_names().to_vec()
    }

    fn type_names(&self) -> Vec<String> {
        self.0.column_types().iter().map(type_name).collect()
    }

    fn next_text(&mut self) -> Result<Option<Vec<String>>> {
        let result = &mut *self.0;
        Ok(result
            .next_row()?
            .map(|row| row.iter().map(|v| result.format(v)).collect()))
    }

    fn next_json(&mut self) -> Result<Option<Vec<serde_json::Value>>> {
        let result = &mut *self.0;
        Ok(result.next_row()?.map(|row| {
            row.iter()
                .map(|v| warren::json::to_json(v, result.snapshot().as_ref()))
                .collect()
        }))
    }
}

/// Prints every row of `result` to `out` in `format`.
pub fn print(
    result: &mut QueryResult,
    format: Format,
    max_rows: usize,
    out: &mut dyn Write,
) -> Result<()> {
    match format {
        Format::Bincode => warren::wire::write_result(result, out).map(|_| ()),
        other => print_rows(&mut LocalRows(result), other, max_rows, out),
    }
}

/// Prints `rows` in a text format (every format but `bincode`, which needs a local result).
pub fn print_rows(
    rows: &mut dyn Rows,
    format: Format,
    max_rows: usize,
    out: &mut dyn Write,
) -> Result<()> {
    match format {
        Format::Csv => print_csv(rows, out),
        Format::Json => print_json(rows, out),
        Format::Bincode => Err(warren::Error::Io(
            "bincode output needs a local result (use `warren query --format bincode`)".into(),
        )),
        Format::Box | Format::Table | Format::Markdown => print_table(rows, format, max_rows, out),
    }
}

fn print_csv(rows: &mut dyn Rows, out: &mut dyn Write) -> Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer
        .write_record(rows.names())
        .map_err(|e| warren::Error::Io(e.to_string()))?;
    while let Some(fields) = rows.next_text()? {
        writer
            .write_record(&fields)
            .map_err(|e| warren::Error::Io(e.to_string()))?;
    }
    writer.flush().map_err(io)
}

fn print_json(rows: &mut dyn Rows, out: &mut dyn Write) -> Result<()> {
    let columns =
        serde_json::to_string(&rows.names()).map_err(|e| warren::Error::Io(e.to_string()))?;
    write!(out, "{{\"columns\": {columns}, \"rows\": [").map_err(io)?;
    let mut first = true;
    while let Some(values) = rows.next_json()? {
        let text = serde_json::to_string(&values).map_err(|e| warren::Error::Io(e.to_string()))?;
        write!(out, "{}\n  {text}", if first { "" } else { "," }).map_err(io)?;
        first = false;
    }
    writeln!(out, "{}]}}", if first { "" } else { "\n" }).map_err(io)
}

fn type_name(ty: &LogicalType) -> String {
    match ty {
        LogicalType::Any => String::new(),
        other => other.to_string(),
    }
}

/// EXPLAIN and PROFILE return one multi-line text column; a table cell would break its lines.
fn is_plan_text(names: &[String], types: &[String]) -> bool {
    matches!(names, [name] if name == "explain" || name == "profile") && types == ["STRING"]
}

/// Prints each value of a plan-text result as it is.
fn print_plan_text(rows: &mut dyn Rows, out: &mut dyn Write) -> Result<()> {
    while let Some(row) = rows.next_text()? {
        let text = &row[0];
        out.write_all(text.as_bytes()).map_err(io)?;
        if !text.ends_with('\n') {
            out.write_all(b"\n").map_err(io)?;
        }
    }
    Ok(())
}

fn print_table(
    source: &mut dyn Rows,
    format: Format,
    max_rows: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let columns = source.names();
    if columns.is_empty() {
        while source.next_text()?.is_some() {}
        return Ok(());
    }
    let types = source.type_names();
    if is_plan_text(&columns, &types) {
        return print_plan_text(source, out);
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut total = 0u64;
    while let Some(row) = source.next_text()? {
        total += 1;
        if rows.len() < max_rows {
            rows.push(row);
        }
    }
    let widths: Vec<usize> = (0..columns.len())
        .map(|i| {
            let cells = rows.iter().map(|r| r[i].chars().count());
            cells
                .chain([columns[i].chars().count(), types[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| -> String {
        let separator = if format == Format::Box { "│" } else { "|" };
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!(" {c}{} ", " ".repeat(w - c.chars().count())))
            .collect();
        format!("{separator}{}{separator}", padded.join(separator))
    };
    let rule = |left: &str, middle: &str, right: &str, fill: &str| -> String {
        let parts: Vec<String> = widths.iter().map(|w| fill.repeat(w + 2)).collect();
        format!("{left}{}{right}", parts.join(middle))
    };
    let mut text = String::new();
    match format {
        Format::Markdown => {
            text.push_str(&line(&columns));
            text.push('\n');
            let parts: Vec<String> = widths.iter().map(|w| "-".repeat(w + 2)).collect();
            text.push_str(&format!("|{}|\n", parts.join("|")));
            for row in &rows {
                text.push_str(&line(row));
                text.push('\n');
            }
        }
        Format::Box => {
            text.push_str(&rule("┌", "┬", "┐", "─"));
            text.push('\n');
            text.push_str(&line(&columns));
            text.push('\n');
            text.push_str(&line(&types));
            text.push('\n');
            text.push_str(&rule("├", "┼", "┤", "─"));
            text.push('\n');
            for row in &rows {
                text.push_str(&line(row));
                text.push('\n');
            }
            text.push_str(&rule("└", "┴", "┘", "─"));
            text.push('\n');
        }
        _ => {
            text.push_str(&rule("+", "+", "+", "-"));
            text.push('\n');
            text.push_str(&line(&columns));
            text.push('\n');
            text.push_str(&rule("+", "+", "+", "-"));
            text.push('\n');
            for row in &rows {
                text.push_str(&line(row));
                text.push('\n');
            }
            text.push_str(&rule("+", "+", "+", "-"));
            text.push('\n');
        }
    }
    let shown = rows.len() as u64;
    if total > shown {
        text.push_str(&format!(
            "({total} tuples, {shown} shown; use --format csv or json for all)\n"
        ));
    } else {
        text.push_str(&format!(
            "({total} {})\n",
            if total == 1 { "tuple" } else { "tuples" }
        ));
    }
    out.write_all(text.as_bytes()).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(query: &str, format: Format) -> String {
        let db = warren::Database::in_memory();
        let mut conn = db.connect();
        let mut result = conn.query(query).expect("query");
        let mut out = Vec::new();
        print(&mut result, format, 100, &mut out).expect("print");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn plan_text_prints_raw_in_table_formats() {
        let expected = printed("EXPLAIN UNWIND [1, 2] AS x RETURN x", Format::Csv);
        assert!(expected.starts_with("explain\n\""), "{expected}");
        for format in [Format::Box, Format::Table, Format::Markdown] {
            let text = printed("EXPLAIN UNWIND [1, 2] AS x RETURN x", format);
            assert!(text.starts_with("Project "), "{text}");
            assert!(
                text.contains("\n  Unwind ") && text.ends_with("Unit\n"),
                "{text}"
            );
            let profile = printed("PROFILE UNWIND [1, 2] AS x RETURN x", format);
            assert!(profile.trim_start().starts_with("rows"), "{profile}");
            assert!(profile.contains("result rows: 2\n"), "{profile}");
        }
    }

    #[test]
    fn other_string_columns_stay_in_tables() {
        let text = printed("RETURN 'a' AS explanation", Format::Table);
        assert!(text.starts_with("+-"), "{text}");
    }
}

//! CSV options as Kùzu names them (`HEADER`, `DELIM`, `QUOTE`, `ESCAPE`, `SKIP`, ...) and the
//! detection of what was not given: the dialect (delimiter and escape) by trying candidates on a
//! sample until every sampled row has the expected number of columns, and the header by
//! checking whether the first row's values fit the column types.

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result};

/// Rows read to detect the dialect and the header.
const SAMPLE_ROWS: usize = 64;
const DELIMITER_CANDIDATES: [u8; 4] = [b',', b'|', b';', b'\t'];
const ESCAPE_CANDIDATES: [u8; 2] = [b'"', b'\\'];

#[derive(Clone, Debug, PartialEq)]
pub struct CsvOptions {
    pub header: Option<bool>,
    pub delimiter: Option<u8>,
    pub quote: u8,
    pub escape: Option<u8>,
    /// Lines to skip at the start of each file.
    pub skip: u64,
    pub auto_detect: bool,
    /// Pair selection for rel tables with several FROM/TO pairs: `(FROM='a', TO='b')`.
    pub from_table: Option<String>,
    pub to_table: Option<String>,
    /// `COPY ... BY COLUMN`: one NumPy `.npy` file per column instead of CSV rows.
    pub by_column: bool,
    /// `IGNORE_ERRORS`: rows that fail (a wrong number of fields, a bad value, a duplicate or
    /// NULL primary key, a missing rel endpoint) are skipped with a warning instead of failing
    /// the COPY.
    pub ignore_errors: bool,
    /// `REORDER='bfs'|'degree'` on a rel COPY: after the rels are loaded, the pair's endpoint
    /// node tables are reordered for locality in the same commit (`crate::reorder`).
    pub reorder: Option<crate::reorder::NodeOrder>,
}

impl Default for CsvOptions {
    fn default() -> Self {
        Self {
            header: None,
            delimiter: None,
            quote: b'"',
            escape: None,
            skip: 0,
            auto_detect: true,
            from_table: None,
            to_table: None,
            by_column: false,
            ignore_errors: false,
            reorder: None,
        }
    }
}

fn single_byte(name: &str, value: &Value) -> Result<u8> {
    let text = value
        .as_str()
        .ok_or_else(|| Error::binder(format!("{name} must be a string.")))?;
    let text = match text {
        "\\t" => "\t",
        other => other,
    };
    match text.as_bytes() {
        [byte] => Ok(*byte),
        _ => Err(Error::binder(format!("Copy csv option value must be a single character with an optional escape character. {name}: {text}"))),
    }
}

fn boolean(name: &str, value: &Value) -> Result<bool> {
    value.as_bool().ok_or_else(|| {
        Error::binder(format!(
            "The type of csv parsing option {name} must be a boolean."
        ))
    })
}

fn node_order(name: &str, value: &Value) -> Result<crate::reorder::NodeOrder> {
    let text = value
        .as_str()
        .ok_or_else(|| Error::binder(format!("{name} must be a string.")))?;
    crate::reorder::NodeOrder::parse(text).ok_or_else(|| {
        Error::binder(format!(
            "Order {text} is not supported; use one of {}.",
            crate::reorder::NodeOrder::NAMES
        ))
    })
}

impl CsvOptions {
    /// Reads options given as `(NAME, constant value)` pairs.
    pub fn from_pairs(pairs: &[(String, Value)]) -> Result<Self> {
        let mut options = CsvOptions::default();
        for (name, value) in pairs {
            match name.to_ascii_uppercase().as_str() {
                "HEADER" => options.header = Some(boolean(name, value)?),
                "DELIM" | "DELIMITER" => options.delimiter = Some(single_byte(name, value)?),
                "QUOTE" => options.quote = single_byte(name, value)?,
                "ESCAPE" => options.escape = Some(single_byte(name, value)?),
                "SKIP" => {
                    options.skip = value.as_i64().filter(|&v| v >= 0).ok_or_else(|| {
                        Error::binder("The value of SKIP must be a non-negative integer.")
                    })? as u64;
                }
                "AUTO_DETECT" | "AUTODETECT" => options.auto_detect = boolean(name, value)?,
                "FROM" => options.from_table = value.as_str().map(str::to_string),
                "TO" => options.to_table = value.as_str().map(str::to_string),
                "IGNORE_ERRORS" => options.ignore_errors = boolean(name, value)?,
                "REORDER" => options.reorder = Some(node_order(name, value)?),
                // Accepted for compatibility; Warren decides parallelism itself.
                "PARALLEL" | "SAMPLE_SIZE" => {}
                other => {
                    return Err(Error::binder(format!(
                        "Unrecognized csv parsing option: {other}."
                    )))
                }
            }
        }
        Ok(options)
    }
}

/// The resolved dialect of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dialect {
    pub delimiter: u8,
    pub quote: u8,
    pub escape: u8,
    pub header: bool,
}

impl Dialect {
    pub fn reader_builder(&self) -> csv::ReaderBuilder {
        let mut builder = csv::ReaderBuilder::new();
        builder
            .delimiter(self.delimiter)
            .quote(self.quote)
            .double_quote(true)
            .has_headers(false)
            .flexible(true);
        if self.escape != self.quote {
            builder.escape(Some(self.escape));
        }
        builder
    }
}

fn sample_rows(bytes: &[u8], dialect: &Dialect) -> Option<Vec<Vec<String>>> {
    let mut reader = dialect.reader_builder().from_reader(bytes);
    let mut rows = Vec::new();
    for record in reader.byte_records().take(SAMPLE_ROWS) {
        let record = record.ok()?;
        rows.push(
            record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect(),
        );
    }
    Some(rows)
}

/// Resolves the dialect of a file from the options and, where allowed, from a sample of its
/// first bytes (after skipped lines). `types` are the expected column types.
pub fn detect_dialect(sample: &[u8], options: &CsvOptions, types: &[LogicalType]) -> Dialect {
    let default_delimiter = options.delimiter.unwrap_or(b',');
    let default_escape = options.escape.unwrap_or(options.quote);
    let mut chosen = Dialect {
        delimiter: default_delimiter,
        quote: options.quote,
        escape: default_escape,
        header: options.header.unwrap_or(false),
    };
    if !options.auto_detect {
        return chosen;
    }
    let delimiters: Vec<u8> = match options.delimiter {
        Some(d) => vec![d],
        None => DELIMITER_CANDIDATES.to_vec(),
    };
    let escapes: Vec<u8> = match options.escape {
        Some(e) => vec![e],
        None => ESCAPE_CANDIDATES
            .iter()
            .map(|&e| if e == b'"' { options.quote } else { e })
            .collect(),
    };
    // The first candidate whose sample rows all have the expected columns and whose values all
    // convert wins; failing that, the first with the right column count.
    let mut shape_only = None;
    'search: for &delimiter in &delimiters {
        for &escape in &escapes {
            let candidate = Dialect {
                delimiter,
                quote: options.quote,
                escape,
                header: false,
            };
            let Some(rows) = sample_rows(sample, &candidate) else {
                continue;
            };
            if rows.is_empty() || rows.iter().any(|r| r.len() != types.len()) {
                continue;
            }
            if values_convert(&rows, types) {
                chosen.delimiter = delimiter;
                chosen.escape = escape;
                shape_only = None;
                break 'search;
            }
            shape_only.get_or_insert((delimiter, escape));
        }
    }
    if let Some((delimiter, escape)) = shape_only {
        chosen.delimiter = delimiter;
        chosen.escape = escape;
    }
    if options.header.is_none() {
        chosen.header = detect_header(sample, &chosen, types);
    }
    chosen
}

/// Whether every value of the sample (the first row aside, which may be a header) converts to
/// its column's type.
fn values_convert(rows: &[Vec<String>], types: &[LogicalType]) -> bool {
    rows.iter().skip(1).all(|row| {
        row.iter()
            .zip(types)
            .all(|(text, ty)| text.is_empty() || warren_common::cast::parse_value(text, ty).is_ok())
    })
}

/// A first row is a header when one of its values does not fit its column's type while the
/// rest of the sample fits it.
fn detect_header(sample: &[u8], dialect: &Dialect, types: &[LogicalType]) -> bool {
    let Some(rows) = sample_rows(sample, dialect) else {
        return false;
    };
    let Some((first, rest)) = rows.split_first() else {
        return false;
    };
    if first.len() != types.len() {
        return false;
    }
    let fits = |text: &str, ty: &LogicalType| {
        text.is_empty() || warren_common::cast::parse_value(text, ty).is_ok()
    };
    types.iter().enumerate().any(|(i, ty)| {
        *ty != LogicalType::String
            && !fits(&first[i], ty)
            && rest
                .iter()
                .all(|row| row.get(i).is_none_or(|text| fits(text, ty)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_tab_delimiter_and_header() {
        let sample = b"id\tname\n1\ta\n2\tb\n";
        let dialect = detect_dialect(
            sample,
            &CsvOptions::default(),
            &[LogicalType::Int64, LogicalType::String],
        );
        assert_eq!(dialect.delimiter, b'\t');
        assert!(dialect.header);
    }

    #[test]
    fn string_only_first_row_is_data() {
        let sample = b"A\nB\n";
        let dialect = detect_dialect(sample, &CsvOptions::default(), &[LogicalType::String]);
        assert!(!dialect.header);
        assert_eq!(dialect.delimiter, b',');
    }

    #[test]
    fn backslash_escape_is_detected_when_needed() {
        let sample = b"1,\"[\\\"a,b\\\"]\"\n2,\"[x]\"\n";
        let dialect = detect_dialect(
            sample,
            &CsvOptions::default(),
            &[LogicalType::Int64, LogicalType::String],
        );
        assert_eq!(dialect.escape, b'\\');
    }

    #[test]
    fn explicit_options_win() {
        let options = CsvOptions::from_pairs(&[
            ("HEADER".into(), Value::Bool(true)),
            ("DELIM".into(), Value::string("|")),
        ])
        .unwrap();
        let dialect = detect_dialect(b"a,b\n1,2\n", &options, &[LogicalType::Int64]);
        assert_eq!(dialect.delimiter, b'|');
        assert!(dialect.header);
        assert!(CsvOptions::from_pairs(&[("BOGUS".into(), Value::Bool(true))]).is_err());
    }
}

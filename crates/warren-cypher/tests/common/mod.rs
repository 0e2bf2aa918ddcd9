//! Reading Kùzu's conformance corpus (`shared/conformance/kuzu`): the `-STATEMENT`s of every
//! `.test` file, with the Parser-exception expectations that follow them, and every line of
//! every dataset's `schema.cypher` and `copy.cypher`. Shared by the corpus and robustness tests.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

/// The corpus root, if this checkout has one.
pub fn corpus_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/kuzu");
    root.join("test_files").is_dir().then_some(root)
}

/// Every statement of the corpus, test files first, then dataset scripts.
pub fn corpus_cases(root: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    for path in files_under(&root.join("test_files"), |name| name.ends_with(".test")) {
        cases.extend(test_file_cases(root, &path));
    }
    let is_dataset_script = |name: &str| name == "schema.cypher" || name == "copy.cypher";
    for path in files_under(&root.join("dataset"), is_dataset_script) {
        cases.extend(dataset_cases(root, &path));
    }
    cases
}

/// One statement taken from the corpus.
pub struct Case {
    /// `file:line`
    pub origin: String,
    pub text: String,
    pub expects_parser_error: bool,
}

/// Every file under `dir` (recursively, in name order) whose file name `wanted` accepts.
fn files_under(dir: &Path, wanted: impl Fn(&str) -> bool + Copy) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            files.extend(files_under(&path, wanted));
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(wanted)
        {
            files.push(path);
        }
    }
    files
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The `-STATEMENT`s of one `.test` file, with `${NAME}` from `-SET NAME ARANGE a b` filled in.
fn test_file_cases(root: &Path, path: &Path) -> Vec<Case> {
    let content = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = content.lines().collect();
    let mut variables = Vec::new();
    let mut cases = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index].trim();
        if let Some(definition) = line.strip_prefix("-SET ") {
            variables.extend(arange_variable(definition));
        }
        let Some(first) = line.strip_prefix("-STATEMENT") else {
            index += 1;
            continue;
        };
        let origin = format!("{}:{}", relative(root, path), index + 1);
        let mut text = first.trim().to_string();
        index += 1;
        while index < lines.len() && is_continuation(lines[index]) {
            text.push(' ');
            text.push_str(lines[index].trim());
            index += 1;
        }
        for (name, value) in &variables {
            text = text.replace(&format!("${{{name}}}"), value);
        }
        let expects_parser_error = expects_parser_error(&lines[index..]);
        cases.push(Case {
            origin,
            text,
            expects_parser_error,
        });
    }
    cases
}

fn is_continuation(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && !line.starts_with('#') && !line.starts_with('-')
}

/// `NAME ARANGE a b` defines `${NAME}` as the list `[a, ..., b]`.
fn arange_variable(definition: &str) -> Option<(String, String)> {
    let words: Vec<&str> = definition.split_whitespace().collect();
    let [name, "ARANGE", low, high] = words.as_slice() else {
        return None;
    };
    let (low, high): (i64, i64) = (low.parse().ok()?, high.parse().ok()?);
    let items: Vec<String> = (low..=high).map(|value| value.to_string()).collect();
    Some((name.to_string(), format!("[{}]", items.join(","))))
}

/// Whether the result block after a statement (`rest` starts right after it) is an error
/// whose message starts `Parser exception`.
fn expects_parser_error(rest: &[&str]) -> bool {
    for (offset, line) in rest.iter().enumerate() {
        let line = line.trim();
        if line.starts_with("-STATEMENT") || line.starts_with("-CASE") {
            return false;
        }
        if line.starts_with("---- error") {
            let message = rest.get(offset + 1).map(|l| l.trim()).unwrap_or("");
            return message.starts_with("Parser exception");
        }
        if line.starts_with("----") {
            return false;
        }
    }
    false
}

/// Each non-blank line of a dataset's `schema.cypher` or `copy.cypher` is one statement.
fn dataset_cases(root: &Path, path: &Path) -> Vec<Case> {
    let content = fs::read_to_string(path).unwrap_or_default();
    content
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| Case {
            origin: format!("{}:{}", relative(root, path), index + 1),
            text: line.trim().to_string(),
            expects_parser_error: false,
        })
        .collect()
}

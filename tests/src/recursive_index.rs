//! `recursive_statements.json`: which statements of the Kùzu suite use recursive patterns.
//! A statement is recursive and active when it is listed (by file path and `-STATEMENT`
//! line) with `"skipped": false` in a file that was copied into the suite.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use serde_json::Value;

/// `(file, line)` of every active recursive statement; `file` is relative to the suite root
/// (`test_files/...`).
#[derive(Clone, Debug, Default)]
pub struct RecursiveIndex {
    statements: BTreeSet<(String, usize)>,
}

impl RecursiveIndex {
    pub fn read(path: &Path) -> Result<Self, String> {
        let text =
            fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
        Self::parse(&text).map_err(|error| format!("{}: {error}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let json: Value = serde_json::from_str(text).map_err(|error| error.to_string())?;
        let files = json["files"].as_array().ok_or("no `files` array")?;
        let mut statements = BTreeSet::new();
        for file in files {
            if file["copied"] == Value::Bool(false) {
                continue;
            }
            let path = file["path"].as_str().ok_or("a file without `path`")?;
            for statement in file["statements"].as_array().into_iter().flatten() {
                if statement["skipped"] == Value::Bool(true) {
                    continue;
                }
                let line = statement["line"]
                    .as_u64()
                    .ok_or("a statement without `line`")?;
                statements.insert((path.to_string(), line as usize));
            }
        }
        Ok(Self { statements })
    }

    /// Whether `file:line` is an active recursive statement.
    pub fn contains(&self, file: &str, line: usize) -> bool {
        self.statements.contains(&(file.to_string(), line))
    }

    pub fn len(&self) -> usize {
        self.statements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_active_copied_statements() {
        let text = r#"{"files": [
            {"path": "test_files/a.test", "copied": true,
             "statements": [{"line": 3, "skipped": false}, {"line": 9, "skipped": true}]},
            {"path": "test_files/b.test", "copied": false,
             "statements": [{"line": 4, "skipped": false}]}]}"#;
        let index = RecursiveIndex::parse(text).unwrap();
        assert!(index.contains("test_files/a.test", 3));
        assert!(!index.contains("test_files/a.test", 9));
        assert!(!index.contains("test_files/b.test", 4));
        assert_eq!(index.len(), 1);
    }
}

//! The skip list: statements the runner does not execute. One entry per line,
//! `<file>:<line> <reason>`, where `<file>` is the path printed in `FAILED` lines; `#` starts
//! a comment. A skipped statement counts as skipped, never as passed.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Skipped statements: `(file, line)` to the reason.
#[derive(Clone, Debug, Default)]
pub struct SkipList {
    entries: BTreeMap<(String, usize), String>,
}

impl SkipList {
    /// Reads `path`; a missing file is an empty list.
    pub fn read(path: &Path) -> Result<Self, String> {
        match fs::read_to_string(path) {
            Ok(text) => Self::parse(&text).map_err(|error| format!("{}: {error}", path.display())),
            Err(_) => Ok(Self::default()),
        }
    }

    /// Parses the text of a skip list.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut entries = BTreeMap::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (location, reason) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let parsed = location
                .rsplit_once(':')
                .and_then(|(file, at)| Some((file.to_string(), at.parse::<usize>().ok()?)));
            let Some(key) = parsed else {
                return Err(format!(
                    "line {}: expected `<file>:<line> <reason>`",
                    number + 1
                ));
            };
            entries.insert(key, reason.trim().to_string());
        }
        Ok(Self { entries })
    }

    /// The reason `file:line` is skipped, if it is.
    pub fn reason(&self, file: &str, line: usize) -> Option<&str> {
        self.entries
            .get(&(file.to_string(), line))
            .map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_entries_and_comments() {
        let list = SkipList::parse("# header\n\ntest_files/a.test:12 too slow # really\n").unwrap();
        assert_eq!(list.reason("test_files/a.test", 12), Some("too slow"));
        assert_eq!(list.len(), 1);
        assert!(SkipList::parse("nonsense\n").is_err());
    }
}

//! Baseline files: `key=value` lines holding the pass counts a suite must not fall below
//! (`recursive_passed=N`, `all_passed=M`). `#` starts a comment.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The counts of a baseline file, by key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    pub counts: BTreeMap<String, usize>,
}

impl Baseline {
    /// Reads `path`; a missing file is an empty baseline (nothing to guard).
    pub fn read(path: &Path) -> Result<Self, String> {
        match fs::read_to_string(path) {
            Ok(text) => Self::parse(&text).map_err(|error| format!("{}: {error}", path.display())),
            Err(_) => Ok(Self::default()),
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let mut counts = BTreeMap::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let parsed = line
                .split_once('=')
                .and_then(|(key, value)| Some((key.trim(), value.trim().parse::<usize>().ok()?)));
            let Some((key, value)) = parsed else {
                return Err(format!("line {}: expected `name=count`", number + 1));
            };
            counts.insert(key.to_string(), value);
        }
        Ok(Self { counts })
    }

    pub fn get(&self, key: &str) -> usize {
        self.counts.get(key).copied().unwrap_or(0)
    }

    /// The file's text for these counts.
    pub fn render(&self) -> String {
        self.counts
            .iter()
            .map(|(key, value)| format!("{key}={value}\n"))
            .collect()
    }

    /// Writes the counts to `path`.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        fs::write(path, self.render())
    }

    /// `key: actual < baseline` for every count below its baseline.
    pub fn regressions(&self, actual: &Baseline) -> Vec<String> {
        self.counts
            .iter()
            .filter(|(key, &floor)| actual.get(key) < floor)
            .map(|(key, floor)| format!("{key}: {} < baseline {floor}", actual.get(key)))
            .collect()
    }
}

/// Whether `observed` is at least the baseline at `path` (printing each regression). With
/// the environment variable `update_var` set to `1`, writes `observed` there instead.
pub fn enforce(path: &Path, observed: &Baseline, update_var: &str) -> bool {
    if std::env::var(update_var).is_ok_and(|v| v == "1") {
        return match observed.write(path) {
            Ok(()) => {
                println!("baseline written to {}", path.display());
                true
            }
            Err(error) => {
                println!("cannot write {}: {error}", path.display());
                false
            }
        };
    }
    let floor = match Baseline::read(path) {
        Ok(floor) => floor,
        Err(error) => {
            println!("bad baseline: {error}");
            return false;
        }
    };
    let regressions = floor.regressions(observed);
    if regressions.is_empty() {
        let raised = observed
            .counts
            .iter()
            .any(|(key, &count)| count > floor.get(key));
        if raised {
            println!(
                "pass counts are above {}; set {update_var}=1 to raise it",
                path.display()
            );
        }
        return true;
    }
    for regression in regressions {
        println!("REGRESSION {regression} ({})", path.display());
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_compares() {
        let floor = Baseline::parse("# c\nrecursive_passed=3\nall_passed = 10\n").unwrap();
        assert_eq!(floor.get("all_passed"), 10);
        let actual = Baseline::parse("recursive_passed=4\nall_passed=9\n").unwrap();
        assert_eq!(
            floor.regressions(&actual),
            vec!["all_passed: 9 < baseline 10".to_string()]
        );
        assert_eq!(actual.render(), "all_passed=9\nrecursive_passed=4\n");
    }
}

//! Loading a `-DATASET` into a fresh database, as Kùzu's test runner does: every non-empty
//! line of `<dir>/schema.cypher`, then of `<dir>/copy.cypher`, runs as one query. Missing
//! files are skipped, so an unknown directory (`CSV empty`) means an empty database. Unlike
//! Kùzu's runner, a failing line does not stop the load: the error is reported and the other
//! lines still run, so one bad line costs only the statements that depend on it.
//!
//! Instead of prefixing quoted file paths with the root directory, the connection's working
//! directory is set to the directory that the dataset's paths are relative to, so Warren
//! resolves `"dataset/tinysnb/vPerson.csv"` itself.

use std::fs;
use std::path::{Path, PathBuf};

use warren::Connection;

use crate::test_file::DatasetSpec;

/// A place where datasets live.
#[derive(Clone, Debug)]
pub struct DatasetDir {
    /// The directory holding one subdirectory per dataset (`dataset/` in Kùzu's layout).
    pub datasets: PathBuf,
    /// The directory that file paths inside `copy.cypher` are relative to.
    pub base: PathBuf,
}

/// The dataset's directory: the first of `dirs` that has it, or `None` (an empty database).
pub fn locate(spec: &DatasetSpec, dirs: &[DatasetDir]) -> Option<(PathBuf, PathBuf)> {
    dirs.iter().find_map(|dir| {
        let path = dir.datasets.join(&spec.name);
        path.is_dir().then(|| (path, dir.base.clone()))
    })
}

/// Loads the dataset named by `spec` through `conn`. The connection's working directory is
/// left at the dataset's base directory; the caller sets it for the statements.
pub fn load(conn: &mut Connection, spec: &DatasetSpec, dirs: &[DatasetDir]) -> Result<(), String> {
    if !spec.format.eq_ignore_ascii_case("CSV") {
        return Err(format!(
            "unsupported dataset format {} {}",
            spec.format, spec.name
        ));
    }
    let Some((path, base)) = locate(spec, dirs) else {
        return Ok(());
    };
    conn.set_working_dir(base);
    let mut errors = Vec::new();
    for script in ["schema.cypher", "copy.cypher"] {
        run_script(conn, &path.join(script), &mut errors);
    }
    match errors.is_empty() {
        true => Ok(()),
        false => Err(errors.join("; ")),
    }
}

/// Runs every non-empty line of `script` (if it exists) as one query. A failing line is
/// recorded in `errors` and loading goes on, so one bad line costs only what depends on it.
fn run_script(conn: &mut Connection, script: &Path, errors: &mut Vec<String>) {
    let Ok(text) = fs::read_to_string(script) else {
        return;
    };
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let outcome = conn.query(line).and_then(|mut result| result.to_strings());
        if let Err(error) = outcome {
            errors.push(format!("{}:{}: {error}", script.display(), number + 1));
        }
    }
}

//! What a request may not do: touch files outside the `--files` directory, change where
//! files are looked up, or leave a transaction open on a pooled connection.

use std::path::{Component, Path, PathBuf};

use warren::Error;
use warren_cypher::ast::{Clause, Query, Statement};

fn refused(message: String) -> Error {
    Error::Binder(message)
}

/// Parses `text` and checks every statement; returns the statements, so that the query runs
/// them without parsing again. A parse error is returned as the engine reports it.
pub fn check(text: &str, files: Option<&Path>) -> Result<Vec<Statement>, Error> {
    let statements = warren_cypher::parse_script(text)?;
    for statement in &statements {
        statement_allowed(statement, files)?;
    }
    Ok(statements)
}

fn statement_allowed(statement: &Statement, files: Option<&Path>) -> Result<(), Error> {
    match statement {
        Statement::Copy(copy) => copy
            .files
            .iter()
            .try_for_each(|file| input_allowed(file, files).map(drop)),
        Statement::CopyFromQuery { query, .. } => query_allowed(query, files),
        Statement::CopyTo { query, file, .. } => {
            output_allowed(file, files)?;
            query_allowed(query, files)
        }
        Statement::Query(query) => query_allowed(query, files),
        Statement::Explain(inner) | Statement::Profile(inner) => statement_allowed(inner, files),
        Statement::CallSetting { name, .. } if name.eq_ignore_ascii_case("file_search_path") => {
            Err(refused(
                "the server does not allow changing file_search_path".into(),
            ))
        }
        Statement::Transaction(_) => Err(refused(
            "the server runs each request as its own transaction: BEGIN, COMMIT and ROLLBACK are not allowed".into(),
        )),
        _ => Ok(()),
    }
}

fn query_allowed(query: &Query, files: Option<&Path>) -> Result<(), Error> {
    for part in &query.parts {
        for clause in &part.clauses {
            if let Clause::LoadFrom(load) = clause {
                for file in &load.files {
                    input_allowed(file, files)?;
                }
            }
        }
    }
    Ok(())
}

fn base<'a>(file: &str, files: Option<&'a Path>) -> Result<&'a Path, Error> {
    let Some(base) = files else {
        return Err(refused(format!(
            "{file}: reading or writing files needs the server's --files directory"
        )));
    };
    if file.contains(['*', '?', '[']) {
        return Err(refused(format!(
            "{file}: the server does not expand file patterns"
        )));
    }
    Ok(base)
}

fn outside(file: &str) -> Error {
    refused(format!(
        "{file}: not a file inside the server's --files directory"
    ))
}

/// An input file: it must exist, and its canonical path (symlinks resolved) must lie inside
/// `files` (already canonical).
pub fn input_allowed(file: &str, files: Option<&Path>) -> Result<PathBuf, Error> {
    let base = base(file, files)?;
    let path = base.join(file);
    let canonical = path.canonicalize().map_err(|_| outside(file))?;
    if !canonical.starts_with(base) {
        return Err(outside(file));
    }
    Ok(canonical)
}

/// An output file: its directory's canonical path must lie inside `files`, its name must be a
/// plain name, and it must not be a symlink.
pub fn output_allowed(file: &str, files: Option<&Path>) -> Result<PathBuf, Error> {
    let base = base(file, files)?;
    let path = base.join(file);
    let (Some(parent), Some(Component::Normal(name))) =
        (path.parent(), path.components().next_back())
    else {
        return Err(outside(file));
    };
    let parent = parent.canonicalize().map_err(|_| outside(file))?;
    if !parent.starts_with(base) {
        return Err(outside(file));
    }
    let target = parent.join(name);
    if target
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        return Err(outside(file));
    }
    Ok(target)
}

//! Writing a dataset directory: `nodes.csv`, `edges.csv`, `schema.cypher`, `copy.cypher`.
//!
//! Each file is written under a temporary name in the same directory and renamed into place
//! once complete, so an interrupted run never leaves a half-written file under a final name.
//! `copy.cypher` is written last, so its presence means the other three are complete.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::parallel::map_chunks;

/// The node file's name.
pub const NODES_FILE: &str = "nodes.csv";
/// The edge file's name.
pub const EDGES_FILE: &str = "edges.csv";
/// The schema script's name.
pub const SCHEMA_FILE: &str = "schema.cypher";
/// The load script's name.
pub const COPY_FILE: &str = "copy.cypher";
/// The schema script's contents.
pub const SCHEMA_CYPHER: &str = "CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID));\n\
                                 CREATE REL TABLE Knows(FROM Person TO Person);\n";

const EDGES_PER_BLOCK: usize = 1 << 16;
const BLOCKS_PER_BATCH: usize = 32;
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// Writes the four files of a dataset into `dir`, creating it if needed, and returns the
/// directory's absolute path.
pub fn write_dataset(dir: &Path, node_count: u64, edges: &[(u32, u32)]) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let dir = fs::canonicalize(dir)?;
    write_atomically(&dir.join(NODES_FILE), |writer| {
        write_nodes(writer, node_count)
    })?;
    write_atomically(&dir.join(EDGES_FILE), |writer| write_edges(writer, edges))?;
    write_atomically(&dir.join(SCHEMA_FILE), |writer| {
        writer.write_all(SCHEMA_CYPHER.as_bytes())
    })?;
    let copy = copy_cypher(&dir.join(NODES_FILE), &dir.join(EDGES_FILE));
    write_atomically(&dir.join(COPY_FILE), |writer| {
        writer.write_all(copy.as_bytes())
    })?;
    Ok(dir)
}

/// The load script for the given absolute file paths.
pub fn copy_cypher(nodes_path: &Path, edges_path: &Path) -> String {
    format!(
        "COPY Person FROM '{}' (HEADER=true);\nCOPY Knows FROM '{}' (HEADER=true);\n",
        quote_path(nodes_path),
        quote_path(edges_path)
    )
}

/// A path as the inside of a single-quoted Cypher string.
fn quote_path(path: &Path) -> String {
    path.display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('\'', "\\'")
}

/// Writes `path` through `fill` under a temporary name, then renames it into place.
fn write_atomically<F>(path: &Path, fill: F) -> io::Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let file_name = path.file_name().expect("a file path").to_string_lossy();
    let temporary = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = File::create(&temporary).and_then(|file| {
        let mut writer = BufWriter::with_capacity(WRITE_BUFFER_BYTES, file);
        fill(&mut writer)?;
        writer
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        fs::rename(&temporary, path)
    });
    if result.is_err() {
        // Best effort: the original error matters more than a failed clean-up.
        let _ = fs::remove_file(&temporary);
    }
    result
}

/// `ID`, then the ids `0..node_count`, one per line.
fn write_nodes(writer: &mut impl Write, node_count: u64) -> io::Result<()> {
    writer.write_all(b"ID\n")?;
    let mut number = itoa::Buffer::new();
    for id in 0..node_count {
        writer.write_all(number.format(id).as_bytes())?;
        writer.write_all(b"\n")?;
    }
    Ok(())
}

/// `from,to`, then one edge per line. Blocks of lines are formatted in parallel.
fn write_edges(writer: &mut impl Write, edges: &[(u32, u32)]) -> io::Result<()> {
    writer.write_all(b"from,to\n")?;
    for batch in edges.chunks(EDGES_PER_BLOCK * BLOCKS_PER_BATCH) {
        let block_count = batch.len().div_ceil(EDGES_PER_BLOCK);
        let blocks = map_chunks(block_count, |block| {
            let start = block * EDGES_PER_BLOCK;
            let end = (start + EDGES_PER_BLOCK).min(batch.len());
            format_edges(&batch[start..end])
        });
        for block in blocks {
            writer.write_all(&block)?;
        }
    }
    Ok(())
}

/// The CSV lines of `edges`.
fn format_edges(edges: &[(u32, u32)]) -> Vec<u8> {
    let mut text = Vec::with_capacity(edges.len() * 16);
    let mut number = itoa::Buffer::new();
    for &(from, to) in edges {
        text.extend_from_slice(number.format(from).as_bytes());
        text.push(b',');
        text.extend_from_slice(number.format(to).as_bytes());
        text.push(b'\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_format_as_csv_lines() {
        assert_eq!(
            format_edges(&[(0, 12), (4_294_967_295, 7)]),
            b"0,12\n4294967295,7\n"
        );
        let mut text = Vec::new();
        write_nodes(&mut text, 3).unwrap();
        assert_eq!(text, b"ID\n0\n1\n2\n");
    }

    #[test]
    fn quotes_are_escaped_in_paths() {
        let script = copy_cypher(Path::new("/a'b/nodes.csv"), Path::new("/c\\d/edges.csv"));
        assert_eq!(
            script,
            "COPY Person FROM '/a\\'b/nodes.csv' (HEADER=true);\n\
             COPY Knows FROM '/c\\\\d/edges.csv' (HEADER=true);\n"
        );
    }
}

//! Damage found after open: a flipped bit in one block of a closed database's adjacency or
//! column makes the queries that read that block fail with `corrupt database: checksum
//! mismatch in <section> block N`, while queries that read other blocks succeed and the
//! process goes on; `warren check`'s validation names the damaged block.

use std::path::{Path, PathBuf};

use warren::Database;

/// Nodes of the test graph: enough that each section spans several 256 KiB blocks.
const NODES: u32 = 200_000;

/// Section tags (docs/format/storage.md).
const COLUMN_DATA: u32 = 2;
const FORWARD_OFFSETS: u32 = 22;
const FORWARD_NEIGHBOURS: u32 = 23;
const FORWARD_RELS: u32 = 24;

fn try_rows(db: &Database, query: &str) -> Result<Vec<String>, String> {
    db.connect()
        .query(query)
        .and_then(|mut result| result.to_strings())
        .map_err(|e| e.to_string())
}

/// A closed database of `P(id, name)` nodes 0..NODES and a `K` ring i -> i+1.
fn build(dir: &Path) -> PathBuf {
    let nodes = dir.join("nodes.csv");
    let edges = dir.join("edges.csv");
    let mut text = String::from("id,name\n");
    let mut rels = String::from("from,to\n");
    for i in 0..NODES {
        text.push_str(&format!("{i},name-{i}\n"));
        rels.push_str(&format!("{i},{}\n", (i + 1) % NODES));
    }
    std::fs::write(&nodes, text).unwrap();
    std::fs::write(&edges, rels).unwrap();
    let path = dir.join("db");
    let db = Database::open(&path).unwrap();
    let mut conn = db.connect();
    for statement in [
        "CREATE NODE TABLE P(id INT64, name STRING, PRIMARY KEY(id))".to_string(),
        "CREATE REL TABLE K(FROM P TO P)".to_string(),
        format!("COPY P FROM '{}' (header=true)", nodes.display()),
        format!("COPY K FROM '{}' (header=true)", edges.display()),
    ] {
        conn.query(&statement).unwrap();
    }
    drop(conn);
    drop(db);
    path
}

/// The segment files of the database, read as (path, bytes).
fn segments(db: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(db.join("data"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "seg"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}

/// The (offset, length) of the section `tag` `index` of a version-2 segment, if it has one.
fn section(bytes: &[u8], tag: u32, index: u32) -> Option<(usize, usize)> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let long = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    assert_eq!(word(8), 2, "a new database writes segment format version 2");
    (0..word(12) as usize)
        .map(|i| 64 + i * 32)
        .find(|&entry| word(entry) == tag && word(entry + 4) == index)
        .map(|entry| (long(entry + 8), long(entry + 16)))
}

/// Flips one bit at `at` bytes into the section `tag` `index` of whichever segment has it.
fn flip(db: &Path, tag: u32, index: u32, at: usize) {
    for (path, mut bytes) in segments(db) {
        if let Some((offset, length)) = section(&bytes, tag, index) {
            assert!(at < length, "flip beyond the section");
            bytes[offset + at] ^= 0x10;
            std::fs::write(&path, bytes).unwrap();
            return;
        }
    }
    panic!("no segment has section {tag} {index}");
}

fn shortest_from(id: u32) -> String {
    format!("MATCH p=(a:P)-[:K* SHORTEST 1..3]->(b:P) WHERE a.id = {id} RETURN count(*)")
}

const BLOCK_BYTES: usize = 1 << 18;

#[test]
fn a_damaged_adjacency_block_fails_the_queries_that_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path());
    // Node v's forward neighbour is entry v (4 bytes): node 150000's is in block 2.
    flip(&path, FORWARD_NEIGHBOURS, 0, 150_000 * 4);
    let db = Database::open(&path).unwrap();
    assert_eq!(try_rows(&db, &shortest_from(10)).unwrap(), vec!["3"]);
    let error = try_rows(&db, &shortest_from(150_000)).unwrap_err();
    assert!(
        error.contains("corrupt database: checksum mismatch in")
            && error.contains("section ForwardNeighbours 0 block 2"),
        "{error}"
    );
    // The same block fails again, the others still read, and a point read is unaffected.
    assert!(try_rows(&db, &shortest_from(140_000)).is_err());
    assert_eq!(try_rows(&db, &shortest_from(7)).unwrap(), vec!["3"]);
    assert_eq!(
        try_rows(&db, "MATCH (a:P) WHERE a.id = 150000 RETURN a.name").unwrap(),
        vec!["name-150000"]
    );
    let (_, problems) = db.snapshot().validate();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("ForwardNeighbours 0 block 2"),
        "{problems:?}"
    );
}

#[test]
fn a_damaged_rel_ids_block_fails_only_the_reads_of_rel_ids() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path());
    // Node v's forward rel id is entry v (4 bytes): node 150000's is in block 2.
    flip(&path, FORWARD_RELS, 0, 150_000 * 4);
    let db = Database::open(&path).unwrap();
    // A traversal without a rel filter reads the neighbours alone: the block is not read.
    assert_eq!(try_rows(&db, &shortest_from(150_000)).unwrap(), vec!["3"]);
    let rel = "MATCH (a:P)-[r:K]->(b:P) WHERE a.id = 150000 RETURN id(r)";
    let error = try_rows(&db, rel).unwrap_err();
    assert!(error.contains("section ForwardRels 0 block 2"), "{error}");
}

#[test]
fn a_damaged_offsets_block_fails_traversals_from_its_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path());
    // Offsets are u64: node 100000's offset is at 800000 bytes, in block 3.
    flip(&path, FORWARD_OFFSETS, 0, 100_000 * 8);
    let db = Database::open(&path).unwrap();
    assert_eq!(try_rows(&db, &shortest_from(5)).unwrap(), vec!["3"]);
    let error = try_rows(&db, &shortest_from(100_000)).unwrap_err();
    assert!(error.contains("ForwardOffsets 0 block 3"), "{error}");
    // A counted hop (degrees, no rows) reads the same offsets.
    let counted = |id: u32| format!("MATCH (a:P)-[:K]->(b:P) WHERE a.id = {id} RETURN count(*)");
    assert_eq!(try_rows(&db, &counted(5)).unwrap(), vec!["1"]);
    let error = try_rows(&db, &counted(100_000)).unwrap_err();
    assert!(error.contains("ForwardOffsets 0 block 3"), "{error}");
}

#[test]
fn a_damaged_column_block_fails_the_reads_of_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path());
    // The name column's data: "name-<i>" strings, encoded with a length; the last block holds
    // the last rows'.
    let name_data = {
        let segments = segments(&path);
        let bytes = segments
            .iter()
            .find_map(|(_, bytes)| section(bytes, COLUMN_DATA, 1))
            .expect("the name column's data section");
        bytes.1
    };
    let last_block = (name_data - 1) / BLOCK_BYTES;
    flip(&path, COLUMN_DATA, 1, name_data - 3);
    let db = Database::open(&path).unwrap();
    let near_end = NODES - 1;
    let error = try_rows(
        &db,
        &format!("MATCH (a:P) WHERE a.id = {near_end} RETURN a.name"),
    )
    .unwrap_err();
    assert!(
        error.contains(&format!("ColumnData 1 block {last_block}")),
        "{error}"
    );
    assert_eq!(
        try_rows(&db, "MATCH (a:P) WHERE a.id = 3 RETURN a.name").unwrap(),
        vec!["name-3"]
    );
    // A scan that reads the whole column fails; one that does not read it succeeds.
    let scan = try_rows(&db, "MATCH (a:P) RETURN count(a.name)").unwrap_err();
    assert!(scan.contains("checksum mismatch"), "{scan}");
    assert_eq!(
        try_rows(&db, "MATCH (a:P) RETURN count(*)").unwrap(),
        vec![NODES.to_string()]
    );
    let (_, problems) = db.snapshot().validate();
    assert!(
        problems
            .iter()
            .any(|p| p.contains(&format!("ColumnData 1 block {last_block}"))),
        "{problems:?}"
    );
}

//! Damage found after open: a flipped bit in one block of a closed database's adjacency,
//! column, primary-key index or vector column makes the queries and statements that read that
//! block fail with `corrupt database: checksum mismatch in <section> block N`, while those that
//! read other blocks succeed and the process goes on; whole nodes, rels and paths printed by a
//! result, writers' key lookups, weights, vectors and the log's replay at open included.
//! `warren check`'s validation names the damaged block.

use std::path::{Path, PathBuf};

use warren::{Database, DatabaseOptions};

/// Nodes of the test graph: enough that each section spans several 256 KiB blocks.
const NODES: u32 = 200_000;
/// Rows of the vector table `V`: its FLOAT[8] column spans three blocks.
const VECTORS: u32 = 20_000;

/// Section tags (docs/format/storage.md).
const COLUMN_VALUES: u32 = 1;
const COLUMN_DATA: u32 = 2;
const VECTOR_VALUES: u32 = 4;
const PRIMARY_KEY_SLOTS: u32 = 10;
const DELETED: u32 = 11;
const FORWARD_OFFSETS: u32 = 22;
const FORWARD_NEIGHBOURS: u32 = 23;
const FORWARD_RELS: u32 = 24;

fn try_rows(db: &Database, query: &str) -> Result<Vec<String>, String> {
    db.connect()
        .query(query)
        .and_then(|mut result| result.to_strings())
        .map_err(|e| e.to_string())
}

/// The error of `query`, which must be a checksum mismatch in `section` (e.g.
/// `ColumnData 1 block 3`).
fn mismatch(db: &Database, query: &str, section: &str) -> String {
    let error = match try_rows(db, query) {
        Ok(rows) => panic!(
            "{query}: rows {:?} despite the damaged block",
            &rows[..rows.len().min(3)]
        ),
        Err(error) => error,
    };
    assert!(
        error.contains("corrupt database: checksum mismatch in") && error.contains(section),
        "{query}: {error}"
    );
    error
}

/// The storage ids of the test tables, which name their segment files (`t<id>-g<n>.seg`).
#[derive(Clone, Copy, Debug)]
struct Tables {
    p: u32,
    k: u32,
    v: u32,
}

/// A closed database of `P(id, name)` nodes 0..NODES, a `K(w DOUBLE)` ring i -> i+1 (rel i,
/// weight 1), and `V(id, emb FLOAT[8])` rows 0..VECTORS.
fn build(dir: &Path) -> (PathBuf, Tables) {
    let nodes = dir.join("nodes.csv");
    let edges = dir.join("edges.csv");
    let vectors = dir.join("vectors.csv");
    let mut text = String::from("id,name\n");
    let mut rels = String::from("from,to,w\n");
    for i in 0..NODES {
        text.push_str(&format!("{i},name-{i}\n"));
        rels.push_str(&format!("{i},{},1.0\n", (i + 1) % NODES));
    }
    let mut rows = String::new();
    for i in 0..VECTORS {
        let emb: Vec<String> = (0..8).map(|j| format!("{}.5", (i + j) % 7)).collect();
        rows.push_str(&format!("{i},\"[{}]\"\n", emb.join(",")));
    }
    std::fs::write(&nodes, text).unwrap();
    std::fs::write(&edges, rels).unwrap();
    std::fs::write(&vectors, rows).unwrap();
    let path = dir.join("db");
    let db = Database::open(&path).unwrap();
    let mut conn = db.connect();
    for statement in [
        "CREATE NODE TABLE P(id INT64, name STRING, PRIMARY KEY(id))".to_string(),
        "CREATE REL TABLE K(FROM P TO P, w DOUBLE)".to_string(),
        "CREATE NODE TABLE V(id INT64, emb FLOAT[8], PRIMARY KEY(id))".to_string(),
        format!("COPY P FROM '{}' (header=true)", nodes.display()),
        format!("COPY K FROM '{}' (header=true)", edges.display()),
        format!("COPY V FROM '{}' (header=false)", vectors.display()),
    ] {
        conn.query(&statement).unwrap();
    }
    let snapshot = db.snapshot();
    let catalog = snapshot.catalog();
    let tables = Tables {
        p: catalog.node_table("P").unwrap().id,
        k: catalog.rel_table("K").unwrap().pairs[0].id,
        v: catalog.node_table("V").unwrap().id,
    };
    drop(conn);
    drop(db);
    (path, tables)
}

/// The newest segment file of table `table`, as (path, bytes).
fn segment(db: &Path, table: u32) -> (PathBuf, Vec<u8>) {
    let prefix = format!("t{table}-g");
    let generation = |path: &Path| -> u64 {
        let name = path.file_stem().unwrap().to_str().unwrap();
        name[prefix.len()..].parse().unwrap()
    };
    let path = std::fs::read_dir(db.join("data"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "seg"))
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(&prefix)
        })
        .max_by_key(|path| generation(path))
        .unwrap_or_else(|| panic!("no segment of table {table}"));
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
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

/// The length of section `tag` `index` of table `table`'s segment.
fn section_len(db: &Path, table: u32, tag: u32, index: u32) -> usize {
    let (_, bytes) = segment(db, table);
    section(&bytes, tag, index)
        .unwrap_or_else(|| panic!("table {table} has no section {tag} {index}"))
        .1
}

/// Flips one bit at `at` bytes into the section `tag` `index` of table `table`'s segment.
fn flip_in(db: &Path, table: u32, tag: u32, index: u32, at: usize) {
    let (path, mut bytes) = segment(db, table);
    let (offset, length) = section(&bytes, tag, index)
        .unwrap_or_else(|| panic!("table {table} has no section {tag} {index}"));
    assert!(at < length, "flip beyond the section");
    bytes[offset + at] ^= 0x10;
    std::fs::write(&path, bytes).unwrap();
}

fn shortest_from(id: u32) -> String {
    format!("MATCH p=(a:P)-[:K* SHORTEST 1..3]->(b:P) WHERE a.id = {id} RETURN count(*)")
}

const BLOCK_BYTES: usize = 1 << 18;

#[test]
fn a_damaged_adjacency_block_fails_the_queries_that_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let (path, tables) = build(dir.path());
    // Node v's forward neighbour is entry v (4 bytes): node 150000's is in block 2.
    flip_in(&path, tables.k, FORWARD_NEIGHBOURS, 0, 150_000 * 4);
    let db = Database::open(&path).unwrap();
    assert_eq!(try_rows(&db, &shortest_from(10)).unwrap(), vec!["3"]);
    let error = try_rows(&db, &shortest_from(150_000)).unwrap_err();
    assert!(
        error.contains("corrupt database: checksum mismatch in")
            && error.contains("section ForwardNeighbours 0 block 2"),
        "{error}"
    );
    // A counted hop from a node whose neighbours lie in the block checks them as a read of
    // them would, though it needs only the offsets.
    let counted = "MATCH (a:P)-[:K]->(b:P) WHERE a.id = 150000 RETURN count(*)";
    assert!(try_rows(&db, counted)
        .unwrap_err()
        .contains("ForwardNeighbours 0 block 2"));
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
    let (path, tables) = build(dir.path());
    // Node v's forward rel id is entry v (4 bytes): node 150000's is in block 2.
    flip_in(&path, tables.k, FORWARD_RELS, 0, 150_000 * 4);
    let db = Database::open(&path).unwrap();
    // A traversal without a rel filter reads the neighbours alone: the block is not read.
    assert_eq!(try_rows(&db, &shortest_from(150_000)).unwrap(), vec!["3"]);
    let rel = "MATCH (a:P)-[r:K]->(b:P) WHERE a.id = 150000 RETURN id(r)";
    let error = try_rows(&db, rel).unwrap_err();
    assert!(error.contains("section ForwardRels 0 block 2"), "{error}");
    // A counted hop reads degrees from the offsets: no rel id either.
    let counted = "MATCH (a:P)-[:K]->(b:P) WHERE a.id = 150000 RETURN count(*)";
    assert_eq!(try_rows(&db, counted).unwrap(), vec!["1"]);
}

#[test]
fn a_damaged_offsets_block_fails_traversals_from_its_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let (path, tables) = build(dir.path());
    // Offsets are u64: node 100000's offset is at 800000 bytes, in block 3.
    flip_in(&path, tables.k, FORWARD_OFFSETS, 0, 100_000 * 8);
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
    let (path, tables) = build(dir.path());
    // The name column's data: "name-<i>" strings, encoded with a length; the last block holds
    // the last rows'.
    let name_data = section_len(&path, tables.p, COLUMN_DATA, 1);
    let last_block = (name_data - 1) / BLOCK_BYTES;
    flip_in(&path, tables.p, COLUMN_DATA, 1, name_data - 3);
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

/// A database whose `P.name` data has a flipped bit in its last block, and that block's
/// section name for the error.
fn with_damaged_names(dir: &Path) -> (PathBuf, Tables, String) {
    let (path, tables) = build(dir);
    let name_data = section_len(&path, tables.p, COLUMN_DATA, 1);
    flip_in(&path, tables.p, COLUMN_DATA, 1, name_data - 3);
    let block = (name_data - 1) / BLOCK_BYTES;
    (path, tables, format!("ColumnData 1 block {block}"))
}

#[test]
fn whole_nodes_printed_from_a_damaged_block_are_the_query_error() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _, damaged) = with_damaged_names(dir.path());
    let db = Database::open(&path).unwrap();
    let last = NODES - 1;
    mismatch(&db, "MATCH (n) RETURN n", &damaged);
    mismatch(&db, "MATCH (n:P) RETURN n", &damaged);
    mismatch(
        &db,
        &format!("MATCH (n:P) WHERE n.id = {last} RETURN n"),
        &damaged,
    );
    // Nodes inside lists, and nodes printed by a function, read the same block.
    mismatch(
        &db,
        &format!("MATCH (n:P) WHERE n.id > {} RETURN collect(n)", last - 3),
        &damaged,
    );
    mismatch(
        &db,
        &format!("MATCH (n:P) WHERE n.id = {last} RETURN to_string(n)"),
        &damaged,
    );
    // A node whose properties lie in other blocks prints; so do scans that do not print.
    assert_eq!(
        try_rows(&db, "MATCH (n:P) WHERE n.id = 3 RETURN n").unwrap(),
        vec!["{_ID: 0:3, _LABEL: P, id: 3, name: name-3}"]
    );
    assert_eq!(
        try_rows(
            &db,
            "MATCH (n:P) WHERE n.id < 2 RETURN n.id, n ORDER BY n.id"
        )
        .unwrap(),
        vec![
            "0|{_ID: 0:0, _LABEL: P, id: 0, name: name-0}",
            "1|{_ID: 0:1, _LABEL: P, id: 1, name: name-1}"
        ]
    );
    assert_eq!(
        try_rows(&db, "MATCH (n:P) RETURN count(n)").unwrap(),
        vec![NODES.to_string()]
    );
    // The result's other forms (batches for the wire and Python) are checked the same way.
    let mut result = db.connect().query("MATCH (n:P) RETURN n").unwrap();
    let error = loop {
        match result.next_columns(4096) {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("every batch of damaged nodes was handed out"),
            Err(error) => break error.to_string(),
        }
    };
    assert!(error.contains(&damaged), "{error}");
}

#[test]
fn rels_and_paths_printed_from_a_damaged_block_are_the_query_error() {
    let dir = tempfile::tempdir().unwrap();
    let (path, tables) = build(dir.path());
    // The weights are DOUBLEs: rel 150000's is at 1.2 MB, in block 4.
    flip_in(&path, tables.k, COLUMN_VALUES, 0, 150_000 * 8);
    let damaged = "ColumnValues 0 block 4";
    let db = Database::open(&path).unwrap();
    let rel_from = |id: u32| format!("MATCH (a:P)-[r:K]->(b:P) WHERE a.id = {id} RETURN r");
    let path_from = |id: u32| format!("MATCH p=(a:P)-[:K*1..2]->(b:P) WHERE a.id = {id} RETURN p");
    mismatch(&db, &rel_from(150_000), damaged);
    mismatch(&db, &path_from(149_999), damaged);
    mismatch(&db, "MATCH ()-[r:K]->() RETURN r", damaged);
    assert_eq!(
        try_rows(&db, &rel_from(5)).unwrap(),
        vec!["(0:5)-{_LABEL: K, _ID: 1:5, w: 1.000000}->(0:6)"]
    );
    let paths = try_rows(&db, &path_from(5)).unwrap();
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(paths.iter().all(|p| p.contains("name-6")), "{paths:?}");
    // Reading the rel's endpoints does not touch the weights.
    assert_eq!(
        try_rows(
            &db,
            "MATCH (a:P)-[r:K]->(b:P) WHERE a.id = 150000 RETURN b.id, r._src, r._dst"
        )
        .unwrap(),
        vec!["150001|0:150000|0:150001"]
    );
}

#[test]
fn a_damaged_weight_block_fails_weighted_paths_and_spreading_activation() {
    let dir = tempfile::tempdir().unwrap();
    let (path, tables) = build(dir.path());
    flip_in(&path, tables.k, COLUMN_VALUES, 0, 150_000 * 8);
    let damaged = "ColumnValues 0 block 4";
    let db = Database::open(&path).unwrap();
    let weighted = "MATCH p=(a:P)-[e:K* WSHORTEST(w)]->(b:P) WHERE a.id = 5 AND b.id = 8 \
                    RETURN length(e)";
    mismatch(&db, weighted, damaged);
    let spread = |weight: &str| {
        format!(
            "MATCH (a:P) WHERE a.id < 3 WITH collect(a) AS seeds \
             CALL spread_activation('K', seeds, max_hops := 2{weight}) RETURN count(*)"
        )
    };
    mismatch(&db, &spread(", weight := 'w'"), damaged);
    // The same searches without weights read no weight.
    assert_eq!(try_rows(&db, &spread("")).unwrap(), vec!["5"]);
    assert_eq!(
        try_rows(
            &db,
            "MATCH p=(a:P)-[e:K* SHORTEST 1..5]->(b:P) WHERE a.id = 5 AND b.id = 8 \
             RETURN length(e)"
        )
        .unwrap(),
        vec!["3"]
    );
}

#[test]
fn a_damaged_vector_block_fails_top_k_and_the_vector_index() {
    let dir = tempfile::tempdir().unwrap();
    let (path, tables) = build(dir.path());
    // Rows are 32 bytes: row 10000's vector is at 320000 bytes, in block 1.
    flip_in(&path, tables.v, VECTOR_VALUES, 1, 10_000 * 32);
    let damaged = "VectorValues 1 block 1";
    let db = Database::open(&path).unwrap();
    let query = "[1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]";
    mismatch(
        &db,
        &format!(
            "MATCH (v:V) RETURN v.id ORDER BY array_cosine_similarity(v.emb, {query}) DESC LIMIT 3"
        ),
        damaged,
    );
    mismatch(
        &db,
        "CALL CREATE_VECTOR_INDEX('V', 'emb_cos', 'emb', metric := 'cosine')",
        damaged,
    );
    // The table's other columns read.
    assert_eq!(
        try_rows(&db, "MATCH (v:V) WHERE v.id = 3 RETURN v.id").unwrap(),
        vec!["3"]
    );
    assert_eq!(
        try_rows(&db, "MATCH (v:V) RETURN count(*)").unwrap(),
        vec![VECTORS.to_string()]
    );
}

#[test]
fn a_damaged_primary_key_block_fails_the_writes_that_probe_it() {
    let dir = tempfile::tempdir().unwrap();
    let (path, tables) = build(dir.path());
    let slots = section_len(&path, tables.p, PRIMARY_KEY_SLOTS, 0);
    let blocks = slots.div_ceil(BLOCK_BYTES);
    assert!(blocks >= 4, "the index spans {blocks} blocks");
    let block = blocks / 2;
    flip_in(
        &path,
        tables.p,
        PRIMARY_KEY_SLOTS,
        0,
        block * BLOCK_BYTES + 100,
    );
    let damaged = format!("PrimaryKeySlots 0 block {block}");
    let db = Database::open(&path).unwrap();
    let run = |statement: String| {
        db.connect()
            .query(&statement)
            .and_then(|mut result| result.to_strings())
            .map_err(|e| e.to_string())
    };
    // Keys hash all over the index: some probe the damaged block, most do not.
    let (mut created, mut refused) = (0, 0);
    for key in 0..200 {
        let outcome = run(format!(
            "CREATE (:P {{id: {}, name: 'new'}})",
            1_000_000 + key
        ));
        match outcome {
            Ok(_) => created += 1,
            Err(error) => {
                assert!(error.contains(&damaged), "{error}");
                refused += 1;
            }
        }
    }
    let (mut merged, mut merge_refused) = (0, 0);
    for key in 0..200 {
        match run(format!("MERGE (p:P {{id: {key}}}) RETURN p.id")) {
            Ok(rows) => {
                assert_eq!(rows, vec![key.to_string()]);
                merged += 1;
            }
            Err(error) => {
                assert!(error.contains(&damaged), "{error}");
                merge_refused += 1;
            }
        }
    }
    assert!(
        created > 0 && refused > 0,
        "{created} created, {refused} refused"
    );
    assert!(
        merged > 0 && merge_refused > 0,
        "{merged} merged, {merge_refused} refused"
    );
    // What was created is there; nothing half-written.
    assert_eq!(
        try_rows(&db, "MATCH (p:P) WHERE p.id >= 1000000 RETURN count(*)").unwrap(),
        vec![created.to_string()]
    );
}

#[test]
fn a_damaged_block_met_replaying_the_log_fails_the_open_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let (path, tables) = build(dir.path());
    let keep_log = DatabaseOptions {
        checkpoint_on_close: false,
        auto_checkpoint: false,
        ..DatabaseOptions::default()
    };
    {
        let db = Database::open_with(&path, keep_log.clone()).unwrap();
        db.connect()
            .query("MATCH (n:P) WHERE n.id = 5 SET n.name = 'changed'")
            .unwrap();
    }
    let name_data = section_len(&path, tables.p, COLUMN_DATA, 1);
    let block = (name_data - 1) / BLOCK_BYTES;
    flip_in(&path, tables.p, COLUMN_DATA, 1, name_data - 3);
    let error = Database::open_with(&path, keep_log.clone())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("corrupt database: checksum mismatch in")
            && error.contains(&format!("ColumnData 1 block {block}")),
        "{error}"
    );
    // The process goes on; the same bit flipped back, the log replays.
    flip_in(&path, tables.p, COLUMN_DATA, 1, name_data - 3);
    let db = Database::open_with(&path, keep_log).unwrap();
    assert_eq!(
        try_rows(&db, "MATCH (n:P) WHERE n.id = 5 RETURN n.name").unwrap(),
        vec!["changed"]
    );
}

#[test]
fn a_damaged_deletion_bitmap_fails_the_reads_of_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let (path, tables) = build(dir.path());
    {
        let db = Database::open(&path).unwrap();
        db.connect()
            .query("MATCH (v:V) WHERE v.id >= 19000 DELETE v")
            .unwrap();
    }
    // The checkpoint at close wrote V's tombstones as its Deleted section (one block).
    flip_in(&path, tables.v, DELETED, 0, 100);
    let damaged = "Deleted 0 block 0";
    let db = Database::open(&path).unwrap();
    for query in [
        "MATCH (v:V) RETURN v.id",
        "MATCH (v:V) WHERE v.id = 3 RETURN v.id",
        "MATCH (v:V) RETURN v",
        "MATCH (p:P)-[:K]->(q:P), (v:V) WHERE p.id = 1 AND v.id = 2 RETURN q.id",
        "MATCH (v:V) WHERE v.id = 3 DELETE v",
    ] {
        mismatch(&db, query, damaged);
    }
    // Other tables read and write as before.
    assert_eq!(
        try_rows(&db, "MATCH (p:P) WHERE p.id = 3 RETURN p.name").unwrap(),
        vec!["name-3"]
    );
    assert_eq!(
        try_rows(
            &db,
            "MATCH (p:P) WHERE p.id = 3 SET p.name = 'three' RETURN p.name"
        )
        .unwrap(),
        vec!["three"]
    );
}

//! End-to-end tests of `generate`: the files, their bytes and their determinism.

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// A fresh directory under the system's temporary directory, removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "warren-bench-generate-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        let _ = fs::remove_dir_all(&path);
        Self(path)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn small(kind: DatasetKind, seed: u64) -> GenerateOptions {
    GenerateOptions {
        scale: 9,
        edge_factor: 8,
        nodes: 700,
        degree: 6,
        seed,
        ..GenerateOptions::defaults(kind)
    }
}

fn files(dir: &std::path::Path) -> Vec<Vec<u8>> {
    ["nodes.csv", "edges.csv", "schema.cypher", "copy.cypher"]
        .iter()
        .map(|name| fs::read(dir.join(name)).unwrap())
        .collect()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    for kind in DatasetKind::ALL {
        let (first, second, third) = (ScratchDir::new(), ScratchDir::new(), ScratchDir::new());
        generate(&small(kind, 7), &first.0).unwrap();
        generate(&small(kind, 7), &second.0).unwrap();
        generate(&small(kind, 8), &third.0).unwrap();
        let (a, b, c) = (files(&first.0), files(&second.0), files(&third.0));
        assert_eq!(a[..3], b[..3], "{kind}");
        assert_ne!(a[1], c[1], "{kind}");
    }
}

#[test]
fn files_follow_the_contract() {
    for kind in DatasetKind::ALL {
        let scratch = ScratchDir::new();
        let out_dir = scratch.0.join("nested").join("out");
        let dataset = generate(&small(kind, 1), &out_dir).unwrap();
        assert!(dataset.dir.is_absolute());
        check_nodes(
            &fs::read_to_string(dataset.nodes_path()).unwrap(),
            dataset.nodes,
        );
        check_edges(&fs::read_to_string(dataset.edges_path()).unwrap(), &dataset);
        assert_eq!(
            fs::read_to_string(dataset.schema_path()).unwrap(),
            "CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID));\n\
             CREATE REL TABLE Knows(FROM Person TO Person);\n"
        );
        check_copy(&fs::read_to_string(dataset.copy_path()).unwrap(), &dataset);
        let leftovers = fs::read_dir(&dataset.dir).unwrap().count();
        assert_eq!(leftovers, 4, "no temporary files remain");
    }
}

fn check_nodes(text: &str, node_count: u64) {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("ID"));
    let ids: Vec<u64> = lines.map(|line| line.parse().unwrap()).collect();
    assert_eq!(ids, (0..node_count).collect::<Vec<_>>());
}

fn check_edges(text: &str, dataset: &GeneratedDataset) {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("from,to"));
    let mut edges: Vec<(u64, u64)> = lines
        .map(|line| {
            let (from, to) = line.split_once(',').unwrap();
            (from.parse().unwrap(), to.parse().unwrap())
        })
        .collect();
    assert_eq!(edges.len() as u64, dataset.edges);
    assert!(dataset.edges > 0);
    assert!(edges
        .iter()
        .all(|&(from, to)| from != to && from < dataset.nodes && to < dataset.nodes));
    edges.sort_unstable();
    edges.dedup();
    assert_eq!(edges.len() as u64, dataset.edges, "no duplicate edges");
}

fn check_copy(text: &str, dataset: &GeneratedDataset) {
    let expected = format!(
        "COPY Person FROM '{}' (HEADER=true);\nCOPY Knows FROM '{}' (HEADER=true);\n",
        dataset.nodes_path().display(),
        dataset.edges_path().display()
    );
    assert_eq!(text, expected);
    for line in text.lines() {
        let quoted = line.split('\'').nth(1).unwrap();
        assert!(std::path::Path::new(quoted).is_absolute());
        assert!(std::path::Path::new(quoted).is_file());
    }
}

#[test]
fn node_counts_are_exact() {
    let scratch = ScratchDir::new();
    let dataset = generate(&small(DatasetKind::Graph500, 2), &scratch.0).unwrap();
    assert_eq!(dataset.nodes, 512);
    let dense = generate(&small(DatasetKind::Dense, 2), &scratch.0).unwrap();
    assert_eq!((dense.nodes, dense.edges), (700, 700 * 6));
    let social = generate(&small(DatasetKind::Social, 2), &scratch.0).unwrap();
    assert_eq!((social.nodes, social.edges), (700, 700 * 6));
}

#[test]
fn relative_output_directories_become_absolute() {
    let scratch = ScratchDir::new();
    fs::create_dir_all(&scratch.0).unwrap();
    let relative = pathdiff_from_cwd(&scratch.0.join("relative"));
    let dataset = generate(&small(DatasetKind::Dense, 3), &relative).unwrap();
    assert!(dataset.dir.is_absolute());
    assert!(fs::read_to_string(dataset.copy_path())
        .unwrap()
        .contains(&*dataset.dir.to_string_lossy()));
}

/// `target` written relative to the current directory, with `..` components.
fn pathdiff_from_cwd(target: &std::path::Path) -> PathBuf {
    let cwd = fs::canonicalize(std::env::current_dir().unwrap()).unwrap();
    let target = fs::canonicalize(target.parent().unwrap())
        .unwrap()
        .join(target.file_name().unwrap());
    let mut relative = PathBuf::new();
    for _ in cwd.components().skip(1) {
        relative.push("..");
    }
    relative.join(target.strip_prefix("/").unwrap())
}

#[test]
fn invalid_options_are_rejected() {
    let mut options = GenerateOptions::defaults(DatasetKind::Graph500);
    options.scale = 0;
    assert_eq!(
        options.validate().unwrap_err().kind(),
        io::ErrorKind::InvalidInput
    );
    options.scale = 33;
    assert!(options.validate().is_err());
    let mut options = GenerateOptions::defaults(DatasetKind::Dense);
    options.degree = 20_000;
    assert!(options.validate().is_err());
    options.nodes = 0;
    assert!(options.validate().is_err());
    for kind in DatasetKind::ALL {
        GenerateOptions::defaults(kind).validate().unwrap();
    }
}

#[test]
fn kinds_parse_from_their_names() {
    for kind in DatasetKind::ALL {
        assert_eq!(kind.name().parse::<DatasetKind>().unwrap(), kind);
    }
    assert!("kronecker".parse::<DatasetKind>().is_err());
}

//! The hybrid part of the `vectors` workload (issue 7, part 5): vector search then spreading
//! activation, through Cypher, on an in-memory database holding the workload's vectors as
//! `Doc(id, emb FLOAT[dim])` and a Graph500 graph over the same nodes as `Link`. Per query it
//! runs
//!
//! * `hybrid index+spread`: `CALL QUERY_VECTOR_INDEX(...) WITH collect(node) AS seeds CALL
//!   spread_activation('Link', seeds, ...)`, the index's top-10 as seeds;
//! * `hybrid exact+spread`: the same spread seeded with the exact top-10 (`ORDER BY
//!   array_cosine_similarity(...) DESC LIMIT 10`, the brute force in Cypher),
//!
//! alternating, and reports the time of each and the recall of the first against the second:
//! the share of the exact run's 10 (and 100) most activated nodes that the index run also
//! ranks in its first 10 (100). Ranks order by activation, then by id, so tied activations
//! (unit weights make many) rank the same way in both runs.
//!
//! [`cypher_brute_force`] times the brute force alone in Cypher on a database holding only
//! `Doc`, the query text the peers' table gives Kùzu (`MATCH (d:Doc) RETURN d.id,
//! array_cosine_similarity(d.emb, $q) AS s ORDER BY s DESC LIMIT 10`), best of `repeat` runs
//! per query.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use warren::{Connection, Database, Value};

use crate::error::{BenchError, BenchResult};
use crate::generate::graph500::graph500_edges;
use crate::report::Figures;
use crate::stats::Summary;

/// Edges per node of the Graph500 graph (its standard edge factor).
pub const EDGE_FACTOR: u32 = 16;
/// The spread's parameters (those of the `spread` workload).
pub const HOPS: u32 = 3;
const DECAY: f64 = 0.5;
const THRESHOLD: f64 = 0.01;
/// The ranks compared: recall@10 and recall@100 of the activation ranking.
const RANKED: usize = 100;
const SEEDS: usize = 10;

/// What the hybrid part measured.
pub struct HybridResult {
    pub scale: u32,
    pub edges: usize,
    pub build_s: f64,
    pub efs: usize,
    pub index_times_s: Vec<f64>,
    pub exact_times_s: Vec<f64>,
    pub recall_at_10: f64,
    pub recall_at_100: f64,
    /// Mean nodes activated per query (exact seeds).
    pub activated: f64,
}

fn io_error(path: &Path, error: std::io::Error) -> BenchError {
    BenchError::Io {
        path: path.display().to_string(),
        message: error.to_string(),
    }
}

/// The Graph500 scale whose node count (`2^scale`) is the largest not above `rows`: the graph
/// covers nodes `0 .. 2^scale`, the later rows have no edges.
pub fn scale_for(rows: usize) -> u32 {
    assert!(rows >= 2, "a graph needs two nodes");
    usize::BITS - 1 - rows.leading_zeros()
}

/// Writes `ids.npy`, `emb.npy` and `links.csv` into `dir`; the number of edges.
fn write_inputs(
    dir: &Path,
    vectors: &[f32],
    dim: usize,
    scale: u32,
    seed: u64,
) -> BenchResult<usize> {
    write_vectors(dir, vectors, dim)?;
    let (_, edges) = graph500_edges(scale, EDGE_FACTOR, seed);
    let path = dir.join("links.csv");
    let file = std::fs::File::create(&path).map_err(|e| io_error(&path, e))?;
    let mut out = std::io::BufWriter::new(file);
    for (from, to) in &edges {
        writeln!(out, "{from},{to}").map_err(|e| io_error(&path, e))?;
    }
    out.flush().map_err(|e| io_error(&path, e))?;
    Ok(edges.len())
}

/// Writes `ids.npy` (0..rows) and `emb.npy` (the vectors) into `dir`.
fn write_vectors(dir: &Path, vectors: &[f32], dim: usize) -> BenchResult<()> {
    let rows = vectors.len() / dim;
    let ids: Vec<i64> = (0..rows as i64).collect();
    let write = |name: &str, header: Vec<u8>, bytes: &[u8]| -> BenchResult<()> {
        let path = dir.join(name);
        let mut file = std::fs::File::create(&path).map_err(|e| io_error(&path, e))?;
        file.write_all(&header)
            .and_then(|()| file.write_all(bytes))
            .map_err(|e| io_error(&path, e))
    };
    write(
        "ids.npy",
        crate::vectors::npy_header_1d("<i8", rows),
        bytemuck::cast_slice(&ids),
    )?;
    write(
        "emb.npy",
        crate::vectors::npy_header("<f4", [rows, dim]),
        bytemuck::cast_slice(vectors),
    )
}

fn run(conn: &mut Connection, query: &str) -> BenchResult<()> {
    conn.query(query)?;
    Ok(())
}

/// The spread seeded by `seeds` (a Cypher expression list of nodes), ranked.
fn spread_text(seeds_clause: &str) -> String {
    format!(
        "{seeds_clause} CALL spread_activation('Link', seeds, decay := {DECAY}, \
         threshold := {THRESHOLD}, max_hops := {HOPS}) \
         RETURN node.id, activation ORDER BY activation DESC, node.id LIMIT {RANKED}"
    )
}

/// The ids of the ranked nodes, and the seconds the query took.
fn ranked(
    conn: &mut Connection,
    query: &str,
    parameters: &HashMap<String, Value>,
) -> BenchResult<(Vec<i64>, f64)> {
    let started = Instant::now();
    let rows = conn.query_with(query, parameters)?.collect_rows()?;
    let seconds = started.elapsed().as_secs_f64();
    let ids = rows
        .iter()
        .map(|row| {
            row[0]
                .as_i64()
                .ok_or_else(|| BenchError::Result(format!("not a node id: {:?}", row[0])))
        })
        .collect::<BenchResult<_>>()?;
    Ok((ids, seconds))
}

/// The share of `exact`'s first `n` ids among `found`'s first `n`.
fn overlap(found: &[i64], exact: &[i64], n: usize) -> (usize, usize) {
    let exact = &exact[..n.min(exact.len())];
    let found = &found[..n.min(found.len())];
    (
        found.iter().filter(|id| exact.contains(id)).count(),
        exact.len(),
    )
}

/// The Cypher brute force of every query on a database holding only the vectors.
pub struct CypherBruteForce {
    /// Per query the best of `repeat` runs' seconds.
    pub times_s: Vec<f64>,
    /// Per query the ids it returned.
    pub answers: Vec<Vec<i64>>,
    /// Every run's seconds of the first query: the first reads the FLOAT block, the second
    /// builds the block's int8 copy and reads it (`warren_exec::vector_copy`).
    pub first_query_runs_s: Vec<f64>,
    /// The int8 copies the database built, the scans answered through one, the last build's
    /// seconds and the bytes held at the end.
    pub copies_built: u64,
    pub scans_through_copy: u64,
    pub copy_build_s: f64,
    pub copy_bytes: usize,
}

/// Runs [`CypherBruteForce`].
pub fn cypher_brute_force(
    vectors: &[f32],
    queries: &[f32],
    dim: usize,
    threads: usize,
    repeat: usize,
) -> BenchResult<CypherBruteForce> {
    let dir = tempfile::tempdir().map_err(|e| io_error(Path::new("(temp dir)"), e))?;
    write_vectors(dir.path(), vectors, dim)?;
    let db = Database::in_memory();
    let mut conn = db.connect();
    load_docs(&mut conn, dir.path(), dim, threads, false)?;
    let mut brute = scan_times(&mut conn, queries, dim, repeat)?;
    let copies = db.vector_copy_stats();
    brute.copies_built = copies.built;
    brute.scans_through_copy = copies.used;
    brute.copy_build_s = copies.last_build_us as f64 / 1e6;
    brute.copy_bytes = copies.bytes;
    Ok(brute)
}

/// Creates `Doc` (and `Link` when `links`) in a fresh database and copies the files that
/// `write_vectors` (and `write_inputs`) wrote into `dir`.
fn load_docs(
    conn: &mut Connection,
    dir: &Path,
    dim: usize,
    threads: usize,
    links: bool,
) -> BenchResult<()> {
    let path = |name: &str| dir.join(name).display().to_string();
    let mut statements = vec![
        format!("CALL THREADS={threads}"),
        format!("CREATE NODE TABLE Doc(id INT64, emb FLOAT[{dim}], PRIMARY KEY(id))"),
        format!(
            "COPY Doc FROM ('{}', '{}') BY COLUMN",
            path("ids.npy"),
            path("emb.npy")
        ),
    ];
    if links {
        statements.push("CREATE REL TABLE Link(FROM Doc TO Doc)".to_string());
        statements.push(format!(
            "COPY Link FROM '{}' (HEADER=false)",
            path("links.csv")
        ));
    }
    for statement in &statements {
        run(conn, statement)?;
    }
    Ok(())
}

/// The Cypher brute force of every query: per query the best of `repeat` runs' seconds, and
/// the ids it returned; and every run's seconds of the first query (the copy's figures are
/// left at zero).
fn scan_times(
    conn: &mut Connection,
    queries: &[f32],
    dim: usize,
    repeat: usize,
) -> BenchResult<CypherBruteForce> {
    let text = format!(
        "MATCH (d:Doc) RETURN d.id, array_cosine_similarity(d.emb, $q) AS s \
         ORDER BY s DESC LIMIT {SEEDS}"
    );
    let (mut times, mut answers, mut first_runs) = (Vec::new(), Vec::new(), Vec::new());
    for (index, query) in queries.chunks_exact(dim).enumerate() {
        let parameters = query_parameters(query);
        let mut best = f64::INFINITY;
        let mut ids = Vec::new();
        for _ in 0..repeat.max(1) {
            let (found, seconds) = ranked(conn, &text, &parameters)?;
            best = best.min(seconds);
            ids = found;
            if index == 0 {
                first_runs.push(seconds);
            }
        }
        times.push(best);
        answers.push(ids);
    }
    Ok(CypherBruteForce {
        times_s: times,
        answers,
        first_query_runs_s: first_runs,
        copies_built: 0,
        scans_through_copy: 0,
        copy_build_s: 0.0,
        copy_bytes: 0,
    })
}

/// `$q`: the query vector as a list of FLOATs.
fn query_parameters(query: &[f32]) -> HashMap<String, Value> {
    let values: Vec<Value> = query.iter().map(|&x| Value::Float(x)).collect();
    HashMap::from([("q".to_string(), Value::List(values.into()))])
}

/// Loads the database and runs every query both ways; see the module's documentation.
pub fn measure(
    vectors: &[f32],
    queries: &[f32],
    dim: usize,
    threads: usize,
    efs: usize,
    seed: u64,
) -> BenchResult<HybridResult> {
    let rows = vectors.len() / dim;
    let scale = scale_for(rows);
    let dir = tempfile::tempdir().map_err(|e| io_error(Path::new("(temp dir)"), e))?;
    let edges = write_inputs(dir.path(), vectors, dim, scale, seed)?;
    let db = Database::in_memory();
    let mut conn = db.connect();
    load_docs(&mut conn, dir.path(), dim, threads, true)?;
    let started = Instant::now();
    run(
        &mut conn,
        "CALL CREATE_VECTOR_INDEX('Doc', 'emb_idx', 'emb')",
    )?;
    let build_s = started.elapsed().as_secs_f64();
    let by_index = spread_text(&format!(
        "CALL QUERY_VECTOR_INDEX('Doc', 'emb_idx', $q, {SEEDS}, efs := {efs}) \
         WITH collect(node) AS seeds"
    ));
    let by_scan = spread_text(&format!(
        "MATCH (d:Doc) WITH d ORDER BY array_cosine_similarity(d.emb, $q) DESC LIMIT {SEEDS} \
         WITH collect(d) AS seeds"
    ));
    let (mut index_times_s, mut exact_times_s) = (Vec::new(), Vec::new());
    let (mut hits_10, mut wanted_10, mut hits_100, mut wanted_100) = (0, 0, 0, 0);
    let mut activated = 0usize;
    for query in queries.chunks_exact(dim) {
        let parameters = query_parameters(query);
        let (found, seconds) = ranked(&mut conn, &by_index, &parameters)?;
        index_times_s.push(seconds);
        let (exact, seconds) = ranked(&mut conn, &by_scan, &parameters)?;
        exact_times_s.push(seconds);
        activated += exact.len();
        let (hits, wanted) = overlap(&found, &exact, 10);
        (hits_10, wanted_10) = (hits_10 + hits, wanted_10 + wanted);
        let (hits, wanted) = overlap(&found, &exact, RANKED);
        (hits_100, wanted_100) = (hits_100 + hits, wanted_100 + wanted);
    }
    let count = queries.len() / dim;
    Ok(HybridResult {
        scale,
        edges,
        build_s,
        efs,
        index_times_s,
        exact_times_s,
        recall_at_10: hits_10 as f64 / wanted_10.max(1) as f64,
        recall_at_100: hits_100 as f64 / wanted_100.max(1) as f64,
        activated: activated as f64 / count.max(1) as f64,
    })
}

/// The figures of one way of seeding: per-query times and queries per second.
pub fn figures(times_s: &[f64]) -> Figures {
    let qps: Vec<f64> = times_s.iter().map(|s| 1.0 / s).collect();
    Figures {
        time_s: Some(Summary::of(times_s)),
        ops_per_s: Some(Summary::of(&qps)),
        ..Figures::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_fits_the_rows() {
        assert_eq!(scale_for(2), 1);
        assert_eq!(scale_for(3_000), 11);
        assert_eq!(scale_for(4_096), 12);
        assert_eq!(scale_for(1_000_000), 19);
    }

    #[test]
    fn overlap_counts_shared_ids_among_the_first_n() {
        assert_eq!(overlap(&[1, 2, 3, 4], &[2, 1, 9, 4], 2), (2, 2));
        assert_eq!(overlap(&[1, 2, 3, 4], &[2, 1, 9, 4], 4), (3, 4));
        assert_eq!(overlap(&[1], &[2, 3], 10), (0, 2));
    }

    /// On a small dataset the index finds (nearly) the exact seeds, so the hybrid ranking
    /// (nearly) equals the exact one.
    #[test]
    fn hybrid_recall_on_a_small_dataset() {
        let (vectors, queries) = warren_vector::sample::clustered(2_000, 5, 16, 7);
        let result = measure(&vectors, &queries, 16, 2, 200, 7).unwrap();
        assert_eq!(result.scale, 10);
        let brute = cypher_brute_force(&vectors, &queries, 16, 2, 2).unwrap();
        assert_eq!(brute.times_s.len(), 5);
        assert_eq!(brute.first_query_runs_s.len(), 2);
        assert_eq!(
            brute.copies_built, 1,
            "built on the second run of the first query"
        );
        assert_eq!(brute.scans_through_copy, 9);
        for (query, ids) in queries.chunks_exact(16).zip(&brute.answers) {
            let exact = warren_vector::hnsw::exact_top_k(
                &vectors,
                16,
                0..2_000,
                query,
                SEEDS,
                warren_vector::distance::Metric::Cosine,
                |_| true,
            );
            let rows: Vec<i64> = exact.iter().map(|hit| i64::from(hit.row)).collect();
            assert_eq!(ids, &rows);
        }
        assert!(result.edges > 1_000 * 8, "{}", result.edges);
        assert_eq!(result.index_times_s.len(), 5);
        assert!(result.recall_at_10 >= 0.9, "{}", result.recall_at_10);
        assert!(result.recall_at_100 >= 0.9, "{}", result.recall_at_100);
        assert!(result.activated > 10.0, "the spread reaches past the seeds");
    }
}

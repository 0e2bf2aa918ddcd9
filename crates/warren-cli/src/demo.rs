//! `warren demo`, the main job: generate a Graph500 graph, load it into a fresh database, run the
//! seed queries (many-source SHORTEST, ALL SHORTEST, walk counts) and print answers and timings.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use warren::{Connection, Database, Value};
use warren_bench::generate::{generate, DatasetKind, GenerateOptions};

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Graph500 scale: 2^scale nodes, 16 edges per node before deduplication.
    #[arg(long, default_value_t = 18)]
    pub scale: u32,
    /// Where to put the generated files and the database (a temporary folder by default).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long, default_value_t = warren_bench::generate::DEFAULT_SEED)]
    pub seed: u64,
}

/// The seed queries of the mission, verbatim, with a short title each.
pub const SEED_QUERIES: [(&str, &str); 4] = [
    (
        "SHORTEST from 64 sources",
        "MATCH p = (a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID < 64 RETURN a.ID, count(*), sum(length(p)) ORDER BY a.ID",
    ),
    (
        "ALL SHORTEST from one source",
        "MATCH p = (a:Person)-[r:Knows* ALL SHORTEST 1..30]->(b:Person) WHERE a.ID = 0 RETURN count(*)",
    ),
    (
        "walks 1..4, 5 sources, 500 destinations",
        "MATCH (a:Person)-[r:Knows*1..4]->(b:Person) WHERE a.ID < 5 AND b.ID < 500 RETURN count(*)",
    ),
    (
        "walks 1..5, 5 sources, 500 destinations",
        "MATCH (a:Person)-[r:Knows*1..5]->(b:Person) WHERE a.ID < 5 AND b.ID < 500 RETURN count(*)",
    ),
];

fn io(e: std::io::Error) -> warren::Error {
    warren::Error::Io(e.to_string())
}

pub fn run(args: &DemoArgs) -> warren::Result<()> {
    let dir = args.dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("warren-demo-{}", std::process::id()))
    });
    let data_dir = dir.join("graph500");
    let db_dir = dir.join("db");
    if db_dir.exists() {
        std::fs::remove_dir_all(&db_dir).map_err(io)?;
    }
    println!(
        "Warren demo: Graph500 scale {} (seed {}) in {}",
        args.scale,
        args.seed,
        dir.display()
    );

    let mut options = GenerateOptions::defaults(DatasetKind::Graph500);
    options.scale = args.scale;
    options.seed = args.seed;
    let started = Instant::now();
    let dataset = generate(&options, &data_dir).map_err(io)?;
    println!(
        "  generated {} nodes and {} edges in {:.2} s",
        dataset.nodes,
        dataset.edges,
        started.elapsed().as_secs_f64()
    );

    let database = Database::open(&db_dir)?;
    let mut conn = database.connect();
    conn.settings_mut().progress_bar = true;
    if let Some(threads) = args.threads {
        conn.set("threads", Value::Int64(threads as i64))?;
    }
    println!("  threads: {}", conn.settings().threads);
    load(&mut conn, &dataset.schema_path(), &dataset.copy_path())?;
    for (title, query) in SEED_QUERIES {
        run_query(&mut conn, title, query)?;
    }
    if args.dir.is_none() {
        drop(conn);
        drop(database);
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

fn load(
    conn: &mut Connection,
    schema: &std::path::Path,
    copy: &std::path::Path,
) -> warren::Result<()> {
    for file in [schema, copy] {
        let text =
            std::fs::read_to_string(file).map_err(|e| warren::Error::io(file.display(), e))?;
        for statement in warren_cypher::split_statements(&text) {
            if statement.text.trim().is_empty() {
                continue;
            }
            let started = Instant::now();
            let mut result = conn.query(&statement.text)?;
            let message = result
                .next_row()?
                .map(|row| result.format(&row[0]))
                .unwrap_or_default();
            println!(
                "  {:<40} {:>8.3} s  {message}",
                statement.text.trim().chars().take(40).collect::<String>(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

fn run_query(conn: &mut Connection, title: &str, query: &str) -> warren::Result<()> {
    println!("\n{title}:\n  {query}");
    let started = Instant::now();
    let mut result = conn.query(query)?;
    let rows = result.to_strings()?;
    let seconds = started.elapsed().as_secs_f64();
    for row in rows.iter().take(5) {
        println!("    {row}");
    }
    if rows.len() > 5 {
        println!("    ... ({} rows)", rows.len());
    }
    println!("  time: {seconds:.3} s");
    Ok(())
}

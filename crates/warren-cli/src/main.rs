//! The `warren` command line: `demo` (generate a graph, load it, run the seed queries),
//! `shell`, `query`, `run` and `generate`. Errors print as one line
//! `Error: <kind>: <message>` on standard error, with a non-zero exit status.

mod bench_commands;
mod demo;
mod malloc_policy;
mod output;
mod pipe;
mod remote_shell;
mod shell;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use warren::{Connection, Database, Value};

use crate::output::Format;

#[derive(Parser, Debug)]
#[command(
    name = "warren",
    version,
    about = "An embeddable graph database for recursive path queries"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate a Graph500 graph, load it, run the seed queries and print answers and timings.
    Demo(demo::DemoArgs),
    /// Interactive shell over a database directory (created if missing), or over a
    /// `warren serve` with --server URL.
    Shell {
        #[arg(required_unless_present = "server")]
        db: Option<PathBuf>,
        #[arg(long)]
        threads: Option<usize>,
        /// A `warren serve` to send the statements to (`http://host:port`), instead of DB.
        #[arg(long, conflicts_with = "db")]
        server: Option<String>,
        /// With --server: a file whose first line is the server's bearer token.
        #[arg(long, requires = "server")]
        token_file: Option<PathBuf>,
    },
    /// Run one query (or several `;`-separated statements) and print the last result.
    Query {
        db: PathBuf,
        query: String,
        /// A query parameter `name=value`; the value is read as a Cypher literal (`5`, `'x'`, `[1,2]`).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// box, table, csv, json, markdown, or bincode (the binary wire format of
        /// docs/format/wire.md: framed messages, as `warren serve` sends them).
        #[arg(long, default_value = "table")]
        format: Format,
        #[arg(long)]
        threads: Option<usize>,
        /// Sources traversed at once (`auto` by default).
        #[arg(long)]
        k: Option<String>,
        /// Rows shown by the table formats.
        #[arg(long, default_value_t = 10_000)]
        max_rows: usize,
    },
    /// Run a script of `;`-separated statements, printing each result.
    Run {
        db: PathBuf,
        file: PathBuf,
        #[arg(long, default_value = "table")]
        format: Format,
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Write a generated dataset (nodes.csv, edges.csv, schema.cypher, copy.cypher) into a folder.
    Generate {
        /// graph500, dense or social
        kind: warren_bench::generate::DatasetKind,
        #[arg(long)]
        out: PathBuf,
        #[arg(long)]
        scale: Option<u32>,
        #[arg(long)]
        edge_factor: Option<u32>,
        #[arg(long)]
        nodes: Option<u64>,
        #[arg(long)]
        degree: Option<u32>,
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Run a benchmark workload (sp64, sp1, allsp, varlen, spread, ksweep, load, writes, wire,
    /// serve, vectors), check its answer and write a JSON report.
    Bench(Box<bench_commands::BenchArgs>),
    /// Compare two bench reports: medians, deltas and noise-aware verdicts.
    Compare(bench_commands::CompareArgs),
    /// Verify a database: every section's checksum, every table's invariants, and the
    /// write-ahead log's committed frames; reports what it checked and any damage found.
    Check { db: PathBuf },
    /// Serve a database over HTTP: POST /query (JSON, or the wire format with
    /// `Accept: application/x-warren-bincode`), GET /health, GET /metrics. See docs/SERVER.md.
    Serve(ServeArgs),
}

#[derive(clap::Args, Debug)]
struct ServeArgs {
    db: PathBuf,
    /// Address to listen on; an address beyond loopback needs --token-file.
    #[arg(long, default_value = warren_server::config::LISTEN_DEFAULT)]
    listen: std::net::SocketAddr,
    /// Query threads of the light lane (key lookups, one hop, counted hops); the machine's
    /// cores by default.
    #[arg(long)]
    threads: Option<usize>,
    /// Query threads of the heavy lane (recursive joins, scans, multi-hop rows), so that light
    /// queries never wait behind heavy ones; 0: one lane for every query.
    #[arg(long, default_value_t = warren_server::config::HEAVY_THREADS_DEFAULT)]
    heavy_threads: usize,
    /// A file whose first line is the bearer token every request but GET /health must send.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Open the database read-only: every write is refused.
    #[arg(long)]
    read_only: bool,
    /// The only directory COPY FROM, LOAD FROM and COPY TO may read or write (refused without).
    #[arg(long)]
    files: Option<PathBuf>,
    #[arg(long, default_value_t = warren_server::config::CONNECTIONS_MAX_DEFAULT)]
    max_connections: usize,
    /// Queries that may wait for a query thread, per lane; beyond, 503 with Retry-After.
    #[arg(long, default_value_t = warren_server::config::QUEUE_DEFAULT)]
    queue: usize,
    /// Each query's time limit in milliseconds.
    #[arg(long, default_value_t = warren_server::config::TIMEOUT_MS_DEFAULT)]
    timeout_ms: u64,
    /// The largest request body, in bytes (413 beyond).
    #[arg(long, default_value_t = warren_server::config::BODY_BYTES_MAX_DEFAULT)]
    max_body: usize,
    /// Microseconds an I/O thread keeps polling its connections after an answer before it
    /// sleeps, so that the next request finds it awake, while the server has a single client
    /// connection (at most 1000; 0: sleep at once). Costs at most this much CPU per answer,
    /// none when idle or serving several connections. See docs/SERVER.md.
    #[arg(long, default_value_t = warren_server::spin::SPIN_US_DEFAULT)]
    io_spin_us: u64,
}

fn main() -> ExitCode {
    malloc_policy::apply();
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`| head`): not an error of ours.
        Err(_) if pipe::stdout_closed() => ExitCode::SUCCESS,
        Err(error) => {
            let _ = std::io::stdout().flush();
            // One line: a syntax error's quoted statement and caret lines are left out here.
            let text = error.to_string();
            let first = text.split('\n').next().unwrap_or_default();
            let text = if matches!(error, warren::Error::Syntax { .. }) {
                first.to_string()
            } else {
                one_line(&text)
            };
            eprintln!("Error: {text}");
            ExitCode::FAILURE
        }
    }
}

fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads `name=value` parameters; values are Cypher literals, or plain text if they do not parse.
fn parse_params(params: &[String]) -> warren::Result<HashMap<String, Value>> {
    let mut out = HashMap::new();
    let db = Database::in_memory();
    let mut conn = db.connect();
    for param in params {
        let (name, text) = param.split_once('=').ok_or_else(|| {
            warren::Error::binder(format!("--param expects NAME=VALUE, got {param}"))
        })?;
        let value = match conn
            .query(&format!("RETURN {text}"))
            .and_then(|mut r| r.next_row())
        {
            Ok(Some(mut row)) if row.len() == 1 => row.remove(0),
            _ => Value::string(text),
        };
        out.insert(name.trim_start_matches('$').to_string(), value);
    }
    Ok(out)
}

/// Opens a database for the command line: for writing if no other process writes to it, else
/// for reading, so that many `warren query` processes can read one database at once.
fn open(db: &Path, threads: Option<usize>) -> warren::Result<Connection> {
    let options = warren::DatabaseOptions {
        write_if_free: true,
        ..warren::DatabaseOptions::default()
    };
    let database = Database::open_with(db, options)?;
    let mut conn = database.connect();
    conn.settings_mut().progress_bar = true;
    if let Some(threads) = threads {
        conn.set("threads", Value::Int64(threads as i64))?;
    }
    Ok(conn)
}

fn run(command: Command) -> warren::Result<()> {
    match command {
        Command::Demo(args) => demo::run(&args),
        Command::Shell {
            db,
            threads,
            server,
            token_file,
        } => match (server, db) {
            (Some(url), _) => {
                let token = token_file
                    .map(|file| warren_server::config::read_token(&file))
                    .transpose()?;
                remote_shell::run(&url, token.as_deref())
            }
            (None, Some(db)) => shell::run(open(&db, threads)?),
            (None, None) => Err(warren::Error::Runtime(
                "shell needs DB or --server URL".into(),
            )),
        },
        Command::Query {
            db,
            query,
            params,
            format,
            threads,
            k,
            max_rows,
        } => {
            let mut conn = open(&db, threads)?;
            if let Some(k) = k {
                let value = k
                    .parse::<i64>()
                    .map(Value::Int64)
                    .unwrap_or_else(|_| Value::string(k.as_str()));
                conn.set("max_active_sources", value)?;
            }
            let params = parse_params(&params)?;
            let mut result = conn.query_with(&query, &params)?;
            let mut out = pipe::stdout();
            output::print(&mut result, format, max_rows, &mut out)?;
            out.flush().map_err(|e| warren::Error::Io(e.to_string()))
        }
        Command::Run {
            db,
            file,
            format,
            threads,
        } => {
            let mut conn = open(&db, threads)?;
            run_script(&mut conn, &file, format)
        }
        Command::Generate {
            kind,
            out,
            scale,
            edge_factor,
            nodes,
            degree,
            seed,
        } => {
            let mut options = warren_bench::generate::GenerateOptions::defaults(kind);
            options.scale = scale.unwrap_or(options.scale);
            options.edge_factor = edge_factor.unwrap_or(options.edge_factor);
            options.nodes = nodes.unwrap_or(options.nodes);
            options.degree = degree.unwrap_or(options.degree);
            options.seed = seed.unwrap_or(options.seed);
            let started = std::time::Instant::now();
            let dataset = warren_bench::generate::generate(&options, &out)
                .map_err(|e| warren::Error::Io(format!("generate: {e}")))?;
            println!(
                "{}: {} nodes, {} edges in {:.2} s -> {}",
                kind.name(),
                dataset.nodes,
                dataset.edges,
                started.elapsed().as_secs_f64(),
                dataset.dir.display()
            );
            Ok(())
        }
        Command::Bench(args) => bench_commands::run_bench(*args),
        Command::Compare(args) => bench_commands::run_compare(&args),
        Command::Check { db } => check(&db),
        Command::Serve(args) => serve(args),
    }
}

/// `warren serve DB`: serves until SIGTERM or SIGINT, then drains the queries in flight.
fn serve(args: ServeArgs) -> warren::Result<()> {
    let mut config = warren_server::Config {
        listen: args.listen,
        read_only: args.read_only,
        files: args.files,
        connections_max: args.max_connections,
        heavy_threads: args.heavy_threads,
        queue: args.queue,
        timeout_ms: args.timeout_ms,
        body_bytes_max: args.max_body,
        io_spin_us: args.io_spin_us,
        ..warren_server::Config::default()
    };
    if let Some(threads) = args.threads {
        config.threads = threads;
    }
    if let Some(file) = &args.token_file {
        config.token = Some(warren_server::config::read_token(file)?);
    }
    config.validate()?;
    let db = warren_server::open_database(&args.db, args.read_only)?;
    let server = warren_server::Server::start(&config, &db)?;
    // Tests and scripts wait for this line to learn the port (`--listen 127.0.0.1:0`).
    println!("warren serve: listening on http://{}", server.addr());
    let _ = std::io::stdout().flush();
    server.run_until_signal()?;
    println!("warren serve: stopped");
    Ok(())
}

/// `warren check DB`: opens the database for reading (replaying its log), verifies all of it.
fn check(db: &Path) -> warren::Result<()> {
    let options = warren::DatabaseOptions {
        read_only: true,
        ..warren::DatabaseOptions::default()
    };
    let started = std::time::Instant::now();
    let database = Database::open_with(db, options)?;
    let snapshot = database.snapshot();
    let (tables, problems) = snapshot.validate();
    let log_bytes = database.wal_bytes();
    if !problems.is_empty() {
        for problem in &problems {
            eprintln!("damaged: {problem}");
        }
        return Err(warren::Error::Corrupt(format!(
            "{}: {} of {tables} tables damaged",
            db.display(),
            problems.len()
        )));
    }
    println!(
        "{}: ok: {tables} tables verified (checksums and invariants), log {log_bytes} bytes replayed, in {:.3} s",
        db.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs each statement of a script; an error names the file and line of its statement.
pub fn run_script(conn: &mut Connection, file: &Path, format: Format) -> warren::Result<()> {
    let text = std::fs::read_to_string(file).map_err(|e| warren::Error::io(file.display(), e))?;
    for statement in warren_cypher::split_statements(&text) {
        if statement.text.trim().is_empty() {
            continue;
        }
        let located = |error: warren::Error| {
            let line = match &error {
                warren::Error::Syntax { position, .. } => statement.line + position.line - 1,
                _ => statement.line,
            };
            error.with_suffix(&format!(" [{}:{line}]", file.display()))
        };
        let mut result = conn.query(&statement.text).map_err(located)?;
        let mut out = pipe::stdout();
        output::print(&mut result, format, 10_000, &mut out).map_err(located)?;
        out.flush().map_err(|e| warren::Error::Io(e.to_string()))?;
    }
    Ok(())
}

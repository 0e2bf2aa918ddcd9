//! The interactive shell: multi-line input until `;`, history, and `:` commands
//! (`:help`, `:mode`, `:max_rows`, `:schema`, `:timer`, `:quit`), over a [`Session`]: a local
//! database here, a server in `remote_shell`.

use std::io::Write;
use std::time::Instant;

use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use warren::Connection;

use crate::output::{self, Format};

const HELP: &str = "\
Enter Cypher statements ending with ';' (they may span lines).
  :help                 this text
  :mode MODE            output as box, table, csv, json or markdown
  :max_rows N           rows shown by box, table and markdown output
  :schema               list tables and their properties
  :timer on|off         print compile and execution times
  :quit                 leave (also Ctrl-D); Ctrl-C stops a running query
Examples:
  MATCH (a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID = 0 RETURN b.ID, length(r) LIMIT 5;
  CALL THREADS=4;";

/// What the user set with `:` commands.
pub struct ShellState {
    pub format: Format,
    pub max_rows: usize,
    pub timer: bool,
}

/// Where the shell's statements run: a local database or a server.
pub trait Session {
    /// The first line the shell prints.
    fn banner(&self) -> String;
    /// Runs one statement and prints its rows (or its error) as `state` says.
    fn execute(&mut self, statement: &str, state: &ShellState);
    /// Prints the tables and their properties (`:schema`).
    fn print_schema(&mut self);
}

fn history_path() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(|home| std::path::PathBuf::from(home).join(".warren_history"))
}

/// The shell on a local database. Ctrl-C at the prompt clears the line; while a query runs it
/// stops the query.
pub fn run(conn: Connection) -> warren::Result<()> {
    let interrupt = conn.interrupt_flag();
    ctrlc::set_handler(move || interrupt.store(true, std::sync::atomic::Ordering::Relaxed))
        .map_err(|e| warren::Error::Io(format!("cannot install the Ctrl-C handler: {e}")))?;
    run_session(&mut LocalSession { conn })
}

/// The input loop: multi-line statements until `;`, history, and `:` commands.
pub fn run_session(session: &mut dyn Session) -> warren::Result<()> {
    let mut editor = DefaultEditor::new().map_err(|e| warren::Error::Io(e.to_string()))?;
    if let Some(path) = history_path() {
        let _ = editor.load_history(&path);
    }
    println!("{}", session.banner());
    let mut state = ShellState {
        format: Format::Box,
        max_rows: 20,
        timer: true,
    };
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() {
            "warren> "
        } else {
            "   ...> "
        };
        match editor.readline(prompt) {
            Ok(line) => {
                if buffer.is_empty() && line.trim_start().starts_with(':') {
                    let _ = editor.add_history_entry(line.as_str());
                    if !command(&line, &mut state, session) {
                        break;
                    }
                    continue;
                }
                buffer.push_str(&line);
                buffer.push('\n');
                if warren_cypher::is_complete(&buffer) {
                    let _ = editor.add_history_entry(buffer.trim_end());
                    for statement in warren_cypher::split_statements(&buffer) {
                        if !statement.text.trim().is_empty() {
                            session.execute(&statement.text, &state);
                        }
                    }
                    buffer.clear();
                }
            }
            Err(ReadlineError::Interrupted) => buffer.clear(),
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(warren::Error::Io(e.to_string())),
        }
    }
    if let Some(path) = history_path() {
        let _ = editor.save_history(&path);
    }
    Ok(())
}

/// Handles a `:` command; returns false to leave the shell.
fn command(line: &str, state: &mut ShellState, session: &mut dyn Session) -> bool {
    let mut words = line.trim().trim_start_matches(':').split_whitespace();
    match (words.next().unwrap_or(""), words.next()) {
        ("quit" | "exit" | "q", _) => return false,
        ("help" | "h", _) => println!("{HELP}"),
        ("mode", Some(mode)) => match mode.parse::<Format>() {
            Ok(Format::Bincode) => {
                eprintln!("Error: the shell prints text; use `warren query --format bincode`")
            }
            Ok(format) => state.format = format,
            Err(e) => eprintln!("Error: {e}"),
        },
        ("max_rows", Some(n)) => match n.parse() {
            Ok(n) => state.max_rows = n,
            Err(_) => eprintln!("Error: :max_rows expects a number"),
        },
        ("timer", Some(flag)) => state.timer = flag.eq_ignore_ascii_case("on"),
        ("schema", _) => session.print_schema(),
        (other, _) => eprintln!("Error: unknown command :{other} (try :help)"),
    }
    true
}

/// Prints the compile and execution times when the timer is on.
pub fn print_times(state: &ShellState, compile: std::time::Duration, execute: std::time::Duration) {
    if state.timer {
        println!(
            "Time: {:.2}ms (compiling), {:.2}ms (executing)",
            compile.as_secs_f64() * 1e3,
            execute.as_secs_f64() * 1e3
        );
    }
}

struct LocalSession {
    conn: Connection,
}

impl Session for LocalSession {
    fn banner(&self) -> String {
        format!(
            "Warren {} shell. Type :help for help, :quit to leave.",
            env!("CARGO_PKG_VERSION")
        )
    }

    fn execute(&mut self, statement: &str, state: &ShellState) {
        let started = Instant::now();
        let outcome = self.conn.query(statement).and_then(|mut result| {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            output::print(&mut result, state.format, state.max_rows, &mut out)?;
            let _ = out.flush();
            Ok(result.compile_time())
        });
        match outcome {
            Ok(compile) => print_times(state, compile, started.elapsed() - compile),
            Err(error) => eprintln!("Error: {error}"),
        }
    }

    fn print_schema(&mut self) {
        print_schema(&self.conn)
    }
}

/// A table's row count for the schema listing, or the damaged block that prevents it.
fn shown_count<E: std::fmt::Display>(count: Result<u64, E>) -> String {
    count.map_or_else(|error| format!("? ({error})"), |rows| rows.to_string())
}

fn print_schema(conn: &Connection) {
    let snapshot = conn.database_snapshot();
    let catalog = snapshot.catalog();
    for table in catalog.node_tables() {
        let properties: Vec<String> = table
            .properties
            .iter()
            .map(|p| format!("{} {}", p.name, p.ty))
            .collect();
        let rows = shown_count(snapshot.node_table(table.id).num_live_rows());
        println!(
            "NODE {}({}) PRIMARY KEY {} -- {rows} nodes",
            table.name,
            properties.join(", "),
            table.primary_key().name
        );
    }
    for table in catalog.rel_tables() {
        let pairs: Vec<String> = table
            .pairs
            .iter()
            .map(|p| format!("FROM {} TO {}", catalog.label(p.from), catalog.label(p.to)))
            .collect();
        let properties: Vec<String> = table
            .properties
            .iter()
            .map(|p| format!("{} {}", p.name, p.ty))
            .collect();
        let rows = shown_count(
            table
                .pairs
                .iter()
                .map(|p| snapshot.rel_table(p.id).num_live_rows())
                .sum(),
        );
        println!(
            "REL {}({}{}{}) -- {rows} rels",
            table.name,
            pairs.join(", "),
            if properties.is_empty() { "" } else { ", " },
            properties.join(", ")
        );
    }
}

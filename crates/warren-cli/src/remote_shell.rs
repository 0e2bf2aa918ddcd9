//! `warren shell --server URL`: the shell over `warren serve`. Each statement is sent as
//! `POST /query` (a JSON answer) and printed by the same printers as the local shell, so `:mode`,
//! `:max_rows` and `:timer` work alike; the times printed are the server's. Errors print the
//! server's `Error: <kind>: <message>` line. Ctrl-C clears the line being typed; while a
//! statement runs, it asks the server to stop it (`POST /cancel` with the statement's query id,
//! over a connection of its own), and the server's interrupt error is printed.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use warren_client::Client;

use crate::output::{self, Rows};
use crate::shell::{self, Session, ShellState};

fn io(error: impl std::fmt::Display) -> warren::Error {
    warren::Error::Io(error.to_string())
}

pub fn run(url: &str, token: Option<&str>) -> warren::Result<()> {
    let client = Client::connect(url, token).map_err(|e| io(format!("{url}: {e}")))?;
    let in_flight = Arc::new(AtomicU64::new(0));
    let canceller = Canceller {
        url: url.to_string(),
        token: token.map(str::to_string),
        in_flight: in_flight.clone(),
    };
    ctrlc::set_handler(move || canceller.cancel())
        .map_err(|e| io(format!("cannot install the Ctrl-C handler: {e}")))?;
    shell::run_session(&mut RemoteSession {
        client,
        url: url.to_string(),
        in_flight,
        ids: QueryIds::new(),
    })
}

/// What Ctrl-C does while a statement runs: a cancel request for its id.
struct Canceller {
    url: String,
    token: Option<String>,
    /// The id of the statement in flight; 0 when none is.
    in_flight: Arc<AtomicU64>,
}

impl Canceller {
    fn cancel(&self) {
        let id = self.in_flight.load(Ordering::Acquire);
        if id == 0 {
            return;
        }
        let sent =
            Client::connect_with_timeout(&self.url, self.token.as_deref(), Some(CANCEL_TIMEOUT))
                .and_then(|mut client| client.cancel(id));
        if let Err(error) = sent {
            eprintln!("Error: the cancel request failed: {error}");
        }
    }
}

/// How long a cancel request may take before the shell gives up on it.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

/// Query ids for this shell's statements: a random start (so that two shells on one server
/// do not collide) counting up, never 0 (which means "no id").
struct QueryIds {
    next: u64,
}

impl QueryIds {
    fn new() -> Self {
        Self {
            next: RandomState::new().hash_one(std::process::id()) >> 1,
        }
    }

    fn next(&mut self) -> u64 {
        self.next = self.next.wrapping_add(1).max(1);
        self.next
    }
}

struct RemoteSession {
    client: Client,
    url: String,
    in_flight: Arc<AtomicU64>,
    ids: QueryIds,
}

impl RemoteSession {
    /// Sends `text` with a fresh query id that Ctrl-C can cancel; the server's JSON answer, or
    /// the error line to print.
    fn query(&mut self, text: &str) -> Result<serde_json::Value, String> {
        let id = self.ids.next();
        self.in_flight.store(id, Ordering::Release);
        let answer = self.send(text, id);
        self.in_flight.store(0, Ordering::Release);
        answer
    }

    fn send(&mut self, text: &str, id: u64) -> Result<serde_json::Value, String> {
        let body = format!(
            "{{\"query\": {}, \"query_id\": {id}}}",
            warren_client::json_string(text)
        );
        let response = self
            .client
            .request(
                "POST",
                "/query",
                &[("Content-Type", "application/json")],
                body.as_bytes(),
            )
            .map_err(|e| format!("Error: {e}\n"))?;
        let status = response.status;
        let bytes = response.into_bytes().map_err(|e| format!("Error: {e}\n"))?;
        if status != 200 {
            return Err(String::from_utf8_lossy(&bytes).into_owned());
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("Error: the server's answer is not JSON: {e}\n"))
    }
}

impl Session for RemoteSession {
    fn banner(&self) -> String {
        format!(
            "Warren {} shell on {}. Type :help for help, :quit to leave.",
            env!("CARGO_PKG_VERSION"),
            self.url
        )
    }

    fn execute(&mut self, statement: &str, state: &ShellState) {
        let json = match self.query(statement) {
            Ok(json) => json,
            Err(line) => return eprint!("{line}"),
        };
        let mut rows = JsonRows::new(&json);
        let stdout = std::io::stdout();
        let printed =
            output::print_rows(&mut rows, state.format, state.max_rows, &mut stdout.lock());
        if let Err(error) = printed {
            eprintln!("Error: {error}");
        }
        if let Some(error) = json["error"].as_str() {
            eprintln!("Error: {error}");
        }
        let millis = |key: &str| Duration::from_secs_f64(json[key].as_f64().unwrap_or(0.0) / 1e3);
        shell::print_times(
            state,
            millis("compile_time_ms"),
            millis("execution_time_ms"),
        );
    }

    fn print_schema(&mut self) {
        let state = ShellState {
            format: output::Format::Box,
            max_rows: usize::MAX,
            timer: false,
        };
        self.execute("CALL show_tables() RETURN *", &state);
    }
}

/// A server's JSON answer (`{"columns": [...], "types": [...], "rows": [[...]]}`) as [`Rows`].
struct JsonRows<'a> {
    names: Vec<String>,
    types: Vec<String>,
    rows: std::slice::Iter<'a, serde_json::Value>,
}

impl<'a> JsonRows<'a> {
    fn new(json: &'a serde_json::Value) -> Self {
        let strings = |key: &str| -> Vec<String> {
            json[key]
                .as_array()
                .map(|values| {
                    values
                        .iter()
                        .map(|v| v.as_str().unwrap_or_default().to_string())
                        .collect()
                })
                .unwrap_or_default()
        };
        let names = strings("columns");
        let mut types = strings("types");
        types.resize(names.len(), String::new());
        let rows = json["rows"]
            .as_array()
            .map(|rows| rows.iter())
            .unwrap_or_default();
        Self { names, types, rows }
    }

    fn next_values(&mut self) -> Option<Vec<serde_json::Value>> {
        self.rows
            .next()
            .map(|row| row.as_array().cloned().unwrap_or_default())
    }
}

/// Display text of a JSON value: strings without quotes, NULL empty, the rest as JSON.
fn text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Rows for JsonRows<'_> {
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    fn type_names(&self) -> Vec<String> {
        self.types
            .iter()
            .map(|t| if t == "ANY" { String::new() } else { t.clone() })
            .collect()
    }

    fn next_text(&mut self) -> warren::Result<Option<Vec<String>>> {
        Ok(self.next_values().map(|row| row.iter().map(text).collect()))
    }

    fn next_json(&mut self) -> warren::Result<Option<Vec<serde_json::Value>>> {
        Ok(self.next_values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(json: &str, format: output::Format) -> String {
        let json: serde_json::Value = serde_json::from_str(json).unwrap();
        let mut out = Vec::new();
        output::print_rows(&mut JsonRows::new(&json), format, 10, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_json_answer_prints_in_every_text_format() {
        let answer = r#"{"columns": ["a.ID", "a.name"], "types": ["INT64", "STRING"],
                         "rows": [[1, "Ann"], [2, null]]}"#;
        let table = printed(answer, output::Format::Table);
        assert!(table.contains("| a.ID  | a.name |"), "{table}");
        assert!(table.contains("| 1     | Ann    |"), "{table}");
        assert!(table.ends_with("(2 tuples)\n"), "{table}");
        let boxed = printed(answer, output::Format::Box);
        assert!(boxed.contains("│ INT64 │ STRING │"), "{boxed}");
        assert_eq!(
            printed(answer, output::Format::Csv),
            "a.ID,a.name\n1,Ann\n2,\n"
        );
        assert_eq!(
            printed(answer, output::Format::Json),
            "{\"columns\": [\"a.ID\",\"a.name\"], \"rows\": [\n  [1,\"Ann\"],\n  [2,null]\n]}\n"
        );
    }

    #[test]
    fn plan_text_prints_raw() {
        let answer =
            r#"{"columns": ["explain"], "types": ["STRING"], "rows": [["Project\n  Unit"]]}"#;
        assert_eq!(printed(answer, output::Format::Box), "Project\n  Unit\n");
    }
}

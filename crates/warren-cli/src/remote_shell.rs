//! `warren shell --server URL`: the shell's input loop over `warren serve`. Each statement is
//! sent as `POST /query` (JSON answers); rows print one a line as their JSON values, as
//! `--format json` prints them, with the server's times. Errors print the server's
//! `Error: <kind>: <message>` line.

use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use warren_client::Client;

fn io(error: impl std::fmt::Display) -> warren::Error {
    warren::Error::Io(error.to_string())
}

pub fn run(url: &str, token: Option<&str>) -> warren::Result<()> {
    let mut client = Client::connect(url, token).map_err(|e| io(format!("{url}: {e}")))?;
    let mut editor = DefaultEditor::new().map_err(io)?;
    println!(
        "Warren {} shell on {url}. Type :quit to leave.",
        env!("CARGO_PKG_VERSION")
    );
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
                    match line.trim().trim_start_matches(':') {
                        "quit" | "exit" | "q" => break,
                        other => eprintln!("Error: unknown command :{other} (:quit leaves)"),
                    }
                    continue;
                }
                buffer.push_str(&line);
                buffer.push('\n');
                if warren_cypher::is_complete(&buffer) {
                    let _ = editor.add_history_entry(buffer.trim_end());
                    for statement in warren_cypher::split_statements(&buffer) {
                        if !statement.text.trim().is_empty() {
                            execute(&mut client, &statement.text);
                        }
                    }
                    buffer.clear();
                }
            }
            Err(ReadlineError::Interrupted) => buffer.clear(),
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(io(e)),
        }
    }
    Ok(())
}

fn execute(client: &mut Client, text: &str) {
    let body = format!("{{\"query\": {}}}", warren_client::json_string(text));
    let answer = client
        .request(
            "POST",
            "/query",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
        .map_err(|e| e.to_string())
        .and_then(|response| {
            let status = response.status;
            let bytes = response.into_bytes().map_err(|e| e.to_string())?;
            Ok((status, bytes))
        });
    let (status, bytes) = match answer {
        Ok(answer) => answer,
        Err(error) => return eprintln!("Error: {error}"),
    };
    if status != 200 {
        return eprint!("{}", String::from_utf8_lossy(&bytes));
    }
    let json: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(json) => json,
        Err(error) => return eprintln!("Error: the server's answer is not JSON: {error}"),
    };
    let names: Vec<&str> = json["columns"]
        .as_array()
        .map(|c| c.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    println!("{}", names.join(" | "));
    let rows = json["rows"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for row in rows {
        let cells: Vec<String> = row
            .as_array()
            .map(|cells| cells.iter().map(ToString::to_string).collect())
            .unwrap_or_default();
        println!("{}", cells.join(" | "));
    }
    println!("({} tuples)", rows.len());
    if let Some(error) = json["error"].as_str() {
        eprintln!("Error: {error}");
    }
    println!(
        "Time: {:.2}ms (compiling), {:.2}ms (executing)",
        json["compile_time_ms"].as_f64().unwrap_or(0.0),
        json["execution_time_ms"].as_f64().unwrap_or(0.0)
    );
}

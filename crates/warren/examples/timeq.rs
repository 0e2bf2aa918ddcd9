//! Developer tool: times a query in process. `timeq DB REPEAT "QUERY" [name=value ...]`.
//! With `TIMEQ_COLUMNS=1` in the environment, the rows are read as column batches
//! (`next_columns`) and counted, instead of being collected as rows of values.
use std::time::Instant;
use warren::{Database, Value};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let db = Database::open(&args[1]).unwrap();
    let mut conn = db.connect();
    let repeat: usize = args[2].parse().unwrap();
    for setting in &args[4..] {
        let (name, value) = setting.split_once('=').unwrap();
        let value = value
            .parse::<i64>()
            .map(Value::Int64)
            .unwrap_or_else(|_| match value {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => Value::string(value),
            });
        conn.set(name, value).unwrap();
    }
    let mut times = Vec::new();
    for _ in 0..repeat {
        let started = Instant::now();
        let mut result = conn.query(&args[3]).unwrap();
        if std::env::var_os("TIMEQ_COLUMNS").is_some() {
            let mut count = 0;
            while let Some(batch) = result.next_columns(1 << 16).unwrap() {
                count += batch.len();
            }
            times.push(started.elapsed().as_secs_f64());
            if times.len() == repeat {
                println!("rows={count} (column batches)");
            }
            continue;
        }
        let rows = result.collect_rows().unwrap();
        times.push(started.elapsed().as_secs_f64());
        if times.len() == repeat {
            let first: Vec<String> = rows.iter().take(3).map(|r| format!("{r:?}")).collect();
            println!("rows={} first={}", rows.len(), first.join(" "));
            for t in result.traversals() {
                println!(
                    "  {} | k={} ({}) | sources={} edges={} cas_fail={} levels={}",
                    t.algorithm,
                    t.max_active_sources,
                    t.k_reason,
                    t.sources,
                    t.edges_scanned,
                    t.cas_failures,
                    t.levels.len()
                );
                for (i, l) in t.levels.iter().enumerate() {
                    println!(
                        "    L{} frontier={} edges={} td={} bu={} {:.2}ms",
                        i + 1,
                        l.frontier,
                        l.edges_scanned,
                        l.top_down,
                        l.bottom_up,
                        l.time.as_secs_f64() * 1e3
                    );
                }
            }
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "min {:.4} median {:.4} max {:.4}",
        times[0],
        times[times.len() / 2],
        times[times.len() - 1]
    );
}

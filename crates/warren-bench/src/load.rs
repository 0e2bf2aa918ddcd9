//! The `load` workload: per repeat, a fresh temporary database (created beside `--db`, removed
//! afterwards) gets the dataset's schema (untimed) and then its COPY statements (timed). The
//! answer, what was loaded, is checked against the dataset's CSV files read directly.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::Instant;

use warren::Connection;

use crate::answer::Answer;
use crate::bench::{database_at, new_report, settings_info, Header};
use crate::check::{judge, Reference};
use crate::counters::HardwareCounters;
use crate::dataset::{self, count, NODE_TABLE, REL_TABLE};
use crate::error::{BenchError, BenchResult};
use crate::generate::output::{COPY_FILE, EDGES_FILE, NODES_FILE, SCHEMA_FILE};
use crate::machine;
use crate::report::{CountsInfo, DatasetInfo, Figures, Report};
use crate::stats::Summary;

const CHECK: &str = "nodes, edges and the sums of their IDs in the loaded database (counted with \
                     MATCH queries) equal those of nodes.csv and edges.csv read directly";

/// One timed load.
struct LoadSample {
    time_s: f64,
    answer: Answer,
    counts: Option<CountsInfo>,
}

pub fn run(
    options: &crate::workload::BenchOptions,
    counters: &mut HardwareCounters,
    header: &Header,
) -> BenchResult<(Report, Option<String>)> {
    let (db, dir) = database_at(options, 0);
    let dir = dir.expect("validated: load has a dataset folder");
    let reference = if options.check {
        Reference::Computed(csv_answer(dir)?)
    } else {
        Reference::Skipped
    };
    let parent = temporary_parent(db);
    std::fs::create_dir_all(&parent).map_err(|e| BenchError::io(&parent, &e))?;
    machine::reset_peak_rss();
    let mut samples = Vec::with_capacity(options.repeat);
    let mut threads = 0;
    for _ in 0..options.repeat {
        let (sample, used_threads) = load_once(options, counters, &parent, dir)?;
        samples.push(sample);
        threads = used_threads;
    }
    let answers: Vec<&Answer> = samples.iter().map(|s| &s.answer).collect();
    let checked = judge(consistent(&answers), &reference, CHECK);
    let info = dataset_info(&parent, dir, &samples[0].answer);
    let mut report = new_report(
        options,
        header,
        &copy_text(dir)?,
        info,
        settings_info(options, threads, options.k),
    );
    report.answer = checked.answer;
    report.answer_checked = checked.answer_checked;
    report.check = checked.check;
    report.expected = checked.expected;
    report.figures = figures(&samples);
    report.hardware_counts = samples.last().and_then(|s| s.counts);
    Ok((report, checked.mismatch))
}

/// Temporary databases go beside `--db` (the same file system), in its parent directory.
fn temporary_parent(db: &Path) -> std::path::PathBuf {
    let absolute = std::path::absolute(db).unwrap_or_else(|_| db.to_path_buf());
    absolute
        .parent()
        .map_or_else(std::env::temp_dir, Path::to_path_buf)
}

fn load_once(
    options: &crate::workload::BenchOptions,
    counters: &mut HardwareCounters,
    parent: &Path,
    dir: &Path,
) -> BenchResult<(LoadSample, usize)> {
    let temporary = tempfile::Builder::new()
        .prefix(".warren-bench-load-")
        .tempdir_in(parent)
        .map_err(|e| BenchError::io(parent, &e))?;
    let database = warren::Database::open(temporary.path().join("db"))?;
    let mut conn = database.connect();
    options.configure(&mut conn, options.k)?;
    dataset::run_script(&mut conn, &dir.join(SCHEMA_FILE))?;
    let copy_path = dir.join(COPY_FILE);
    let statements = dataset::script_statements(&copy_path)?;
    let (timed, counts) = counters.measure(|| {
        let started = Instant::now();
        for statement in &statements {
            let mut result = conn.query(&statement.text)?;
            while result.next_row()?.is_some() {}
        }
        Ok::<_, BenchError>(started.elapsed().as_secs_f64())
    });
    let time_s = timed?.max(1e-9);
    let answer = loaded_answer(&mut conn)?;
    let threads = conn.settings().threads;
    drop(conn);
    drop(database);
    temporary.close().map_err(|e| BenchError::io(parent, &e))?;
    Ok((
        LoadSample {
            time_s,
            answer,
            counts: counts.map(CountsInfo::from),
        },
        threads,
    ))
}

/// What the database holds, by plain MATCH queries.
fn loaded_answer(conn: &mut Connection) -> BenchResult<Answer> {
    let nodes = count(conn, &format!("MATCH (a:{NODE_TABLE}) RETURN count(*)"))?;
    let edges = count(
        conn,
        &format!("MATCH (a:{NODE_TABLE})-[:{REL_TABLE}]->(b:{NODE_TABLE}) RETURN count(*)"),
    )?;
    let node_id_sum = sum(conn, &format!("MATCH (a:{NODE_TABLE}) RETURN sum(a.ID)"))?;
    let from_id_sum = sum(
        conn,
        &format!("MATCH (a:{NODE_TABLE})-[:{REL_TABLE}]->(b:{NODE_TABLE}) RETURN sum(a.ID)"),
    )?;
    let to_id_sum = sum(
        conn,
        &format!("MATCH (a:{NODE_TABLE})-[:{REL_TABLE}]->(b:{NODE_TABLE}) RETURN sum(b.ID)"),
    )?;
    Ok(Answer::Load {
        nodes,
        node_id_sum,
        edges,
        from_id_sum,
        to_id_sum,
    })
}

/// A `sum(...)` query's one value (NULL, for no rows, is 0).
fn sum(conn: &mut Connection, query: &str) -> BenchResult<i128> {
    let rows = conn.query(query)?.collect_rows()?;
    match rows.as_slice() {
        [row] if row.len() == 1 && row[0].is_null() => Ok(0),
        [row] if row.len() == 1 => row[0]
            .as_i128()
            .ok_or_else(|| BenchError::Result(format!("{query}: not an integer: {:?}", row[0]))),
        _ => Err(BenchError::Result(format!("{query}: expected one row"))),
    }
}

fn consistent<'a>(answers: &[&'a Answer]) -> Result<&'a Answer, String> {
    let first = answers.first().expect("at least one repeat");
    match answers.iter().position(|a| a != first) {
        None => Ok(first),
        Some(index) => Err(format!(
            "repeat {} loaded {} but repeat 1 loaded {}",
            index + 1,
            answers[index].to_json(),
            first.to_json()
        )),
    }
}

/// The statements timed: copy.cypher's, one per line.
fn copy_text(dir: &Path) -> BenchResult<String> {
    let statements = dataset::script_statements(&dir.join(COPY_FILE))?;
    Ok(statements
        .iter()
        .map(|s| s.text.trim().to_string())
        .collect::<Vec<_>>()
        .join("; "))
}

fn dataset_info(parent: &Path, dir: &Path, answer: &Answer) -> DatasetInfo {
    let (nodes, edges) = match answer {
        Answer::Load { nodes, edges, .. } => (*nodes, *edges),
        _ => (0, 0),
    };
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    DatasetInfo {
        db: format!("(temporary databases under {})", parent.display()),
        name: dir
            .file_name()
            .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into()),
        dir: Some(dir.display().to_string()),
        nodes,
        edges,
    }
}

fn figures(samples: &[LoadSample]) -> Figures {
    let times: Vec<f64> = samples.iter().map(|s| s.time_s).collect();
    let edge_rates: Vec<f64> = samples
        .iter()
        .map(|s| match s.answer {
            Answer::Load { edges, .. } => edges as f64 / s.time_s,
            _ => 0.0,
        })
        .collect();
    let llc_rates: Option<Vec<f64>> = samples
        .iter()
        .map(|s| s.counts.map(|c| c.llc_loads as f64 / s.time_s))
        .collect();
    Figures {
        time_s: Some(Summary::of(&times)),
        edges_per_s: Some(Summary::of(&edge_rates)),
        paths_per_s: None,
        llc_loads_per_s: llc_rates.map(|r| Summary::of(&r)),
        peak_rss_bytes: None,
        query_memory_peak_bytes: None,
        ..Figures::default()
    }
}

/// The reference: nodes.csv and edges.csv of a `warren generate` folder, read line by line.
pub fn csv_answer(dir: &Path) -> BenchResult<Answer> {
    let mut nodes = 0u64;
    let mut node_id_sum = 0i128;
    for_each_record(&dir.join(NODES_FILE), 1, |fields| {
        nodes += 1;
        node_id_sum += i128::from(fields[0]);
    })?;
    let (mut edges, mut from_id_sum, mut to_id_sum) = (0u64, 0i128, 0i128);
    for_each_record(&dir.join(EDGES_FILE), 2, |fields| {
        edges += 1;
        from_id_sum += i128::from(fields[0]);
        to_id_sum += i128::from(fields[1]);
    })?;
    Ok(Answer::Load {
        nodes,
        node_id_sum,
        edges,
        from_id_sum,
        to_id_sum,
    })
}

/// Calls `visit` with the integer fields of every line after the header.
fn for_each_record(path: &Path, width: usize, mut visit: impl FnMut(&[i64])) -> BenchResult<()> {
    let file = std::fs::File::open(path).map_err(|e| BenchError::io(path, &e))?;
    let mut fields = Vec::with_capacity(width);
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| BenchError::io(path, &e))?;
        if index == 0 || line.trim().is_empty() {
            continue;
        }
        fields.clear();
        for field in line.split(',') {
            fields.push(field.trim().parse::<i64>().map_err(|_| {
                BenchError::Dataset(format!(
                    "{}:{}: expected {width} integer field(s) (the `warren generate` format), \
                     got '{line}'",
                    path.display(),
                    index + 1
                ))
            })?);
        }
        if fields.len() != width {
            return Err(BenchError::Dataset(format!(
                "{}:{}: expected {width} field(s), got {}",
                path.display(),
                index + 1,
                fields.len()
            )));
        }
        visit(&fields);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_reference_reads_generate_folders() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("tiny");
        crate::generate::output::write_dataset(&dir, 4, &[(0, 1), (1, 2), (3, 0)]).unwrap();
        let answer = csv_answer(&dir).unwrap();
        assert_eq!(
            answer,
            Answer::Load {
                nodes: 4,
                node_id_sum: 6,
                edges: 3,
                from_id_sum: 4,
                to_id_sum: 3,
            }
        );
    }

    #[test]
    fn csv_reference_rejects_other_formats() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join(NODES_FILE), "ID\n0\n1\n").unwrap();
        std::fs::write(temp.path().join(EDGES_FILE), "from,to\n0,1,2\n").unwrap();
        assert!(matches!(
            csv_answer(temp.path()),
            Err(BenchError::Dataset(_))
        ));
        std::fs::write(temp.path().join(EDGES_FILE), "from,to\nx,1\n").unwrap();
        assert!(matches!(
            csv_answer(temp.path()),
            Err(BenchError::Dataset(_))
        ));
    }

    #[test]
    fn consistency_names_the_first_differing_repeat() {
        let (a, b) = (Answer::Count(1), Answer::Count(2));
        assert_eq!(consistent(&[&a, &a]), Ok(&a));
        assert!(consistent(&[&a, &a, &b])
            .unwrap_err()
            .starts_with("repeat 3"));
    }
}

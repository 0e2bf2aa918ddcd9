//! Running one `-CASE` under a watchdog. The case runs in its own thread on a fresh
//! in-memory database: the dataset is loaded, the connection gets the query timeout, and the
//! statements run in order on one connection, each reported back as it finishes. The caller's
//! thread waits for each report with a hard limit; a statement that overruns it (Warren did not
//! honour the timeout) is interrupted and abandoned with the rest of its case, so one
//! pathological statement cannot hang the suite.
//!
//! After a panic the case goes on with the same connection: Warren changes a connection's
//! state only at commit points, so a statement that panicked leaves it as it was before.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use warren::{Connection, Database, Value};

use crate::dataset::{self, DatasetDir};
use crate::execute::{self, Outcome};
use crate::test_file::{Case, DatasetSpec};
use crate::variables;

/// How cases run.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// Warren's `timeout` setting for every query, in milliseconds.
    pub timeout_ms: u64,
    /// Warren's `threads` setting (Kùzu's runner uses 2).
    pub threads: i64,
    /// How long the watchdog waits for one statement before abandoning the case.
    pub hard_limit: Duration,
    /// How long the watchdog waits for the dataset to load.
    pub load_limit: Duration,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            timeout_ms: 10_000,
            threads: 2,
            hard_limit: Duration::from_secs(60),
            load_limit: Duration::from_secs(300),
        }
    }
}

/// Everything a case needs besides its statements.
#[derive(Clone, Debug)]
pub struct CaseEnv {
    pub dataset: Option<DatasetSpec>,
    pub dataset_dirs: Vec<DatasetDir>,
    /// The working directory for the statements (relative COPY/LOAD paths).
    pub statement_dir: PathBuf,
    /// `${KUZU_ROOT_DIRECTORY}` and friends; `${DATABASE_PATH}` is added per case.
    pub variables: BTreeMap<String, String>,
    pub settings: RunSettings,
}

/// What happened to one statement.
#[derive(Clone, Debug)]
pub enum StatementRun {
    /// On the skip list: not executed.
    Skipped(String),
    Ran {
        outcome: Outcome,
        elapsed: Duration,
    },
    /// No answer within the hard limit; the case was abandoned.
    Hung(Duration),
    /// Not run because an earlier statement hung.
    Abandoned,
}

/// The result of a case: the dataset load's error, if any, and one entry per statement.
#[derive(Clone, Debug)]
pub struct CaseRun {
    pub dataset_error: Option<String>,
    pub statements: Vec<StatementRun>,
}

enum Event {
    Started(Arc<AtomicBool>),
    Loaded(Result<(), String>),
    Statement(Outcome, Duration),
}

static SCRATCH: AtomicUsize = AtomicUsize::new(0);

/// Runs `case`; `skips[i]` is the skip reason of statement `i`, if it is skipped (missing
/// entries mean not skipped).
pub fn run_case(case: &Case, skips: &[Option<String>], env: &CaseEnv) -> CaseRun {
    let scratch = std::env::temp_dir().join(format!(
        "warren-tests-{}-{}",
        std::process::id(),
        SCRATCH.fetch_add(1, Ordering::Relaxed)
    ));
    let mut variables = env.variables.clone();
    variables.insert("DATABASE_PATH".into(), scratch.display().to_string());
    let queries: Vec<Option<String>> = case
        .statements
        .iter()
        .enumerate()
        .map(|(index, statement)| {
            let skipped = skips.get(index).is_some_and(Option::is_some);
            (!skipped).then(|| variables::substitute(&statement.query, &variables))
        })
        .collect();

    let (sender, receiver) = mpsc::channel();
    let worker_env = env.clone();
    let worker_scratch = scratch.clone();
    let worker = thread::Builder::new()
        .name(format!("case {}", case.name))
        .spawn(move || worker(&queries, &worker_env, &worker_scratch, &sender))
        .expect("spawning a case thread");

    let mut run = CaseRun {
        dataset_error: None,
        statements: Vec::new(),
    };
    let abandoned = watch(case, skips, env, &receiver, &mut run);
    if abandoned {
        // The worker is left to finish (or not) on its own; its scratch directory stays.
        drop(worker);
    } else {
        let _ = worker.join();
        let _ = std::fs::remove_dir_all(&scratch);
    }
    run
}

/// Collects the worker's reports into `run`; returns whether the case was abandoned.
fn watch(
    case: &Case,
    skips: &[Option<String>],
    env: &CaseEnv,
    receiver: &mpsc::Receiver<Event>,
    run: &mut CaseRun,
) -> bool {
    let mut interrupt: Option<Arc<AtomicBool>> = None;
    let total = case.statements.len();
    let mut loaded = false;
    let mut waiting_since = Instant::now();
    while run.statements.len() < total {
        let index = run.statements.len();
        if let Some(reason) = skips.get(index).and_then(Option::as_ref) {
            run.statements.push(StatementRun::Skipped(reason.clone()));
            continue;
        }
        let limit = match loaded {
            true => env.settings.hard_limit,
            false => env.settings.load_limit,
        };
        match receiver.recv_timeout(limit.saturating_sub(waiting_since.elapsed())) {
            Ok(Event::Started(flag)) => interrupt = Some(flag),
            Ok(Event::Loaded(result)) => {
                run.dataset_error = result.err();
                loaded = true;
                waiting_since = Instant::now();
            }
            Ok(Event::Statement(outcome, elapsed)) => {
                run.statements.push(StatementRun::Ran { outcome, elapsed });
                waiting_since = Instant::now();
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Some(flag) = &interrupt {
                    flag.store(true, Ordering::Relaxed);
                }
                if loaded {
                    run.statements
                        .push(StatementRun::Hung(waiting_since.elapsed()));
                } else {
                    run.dataset_error = Some(format!("loading took over {limit:?}"));
                }
                while run.statements.len() < total {
                    run.statements.push(StatementRun::Abandoned);
                }
                return true;
            }
            Err(RecvTimeoutError::Disconnected) => {
                // The worker died outside a statement (it should not): count the rest as lost.
                while run.statements.len() < total {
                    run.statements.push(StatementRun::Abandoned);
                }
                return false;
            }
        }
    }
    false
}

/// The case's thread: set up the database and run the statements that are not skipped.
fn worker(
    queries: &[Option<String>],
    env: &CaseEnv,
    scratch: &std::path::Path,
    events: &mpsc::Sender<Event>,
) {
    let db = Database::in_memory();
    let mut conn = db.connect();
    let _ = events.send(Event::Started(conn.interrupt_flag()));
    let loaded = setup(&mut conn, env, scratch);
    let _ = events.send(Event::Loaded(loaded));
    conn.set_working_dir(env.statement_dir.clone());
    for query in queries {
        let Some(query) = query else { continue };
        let started = Instant::now();
        let outcome = execute::run(&mut conn, query);
        if events
            .send(Event::Statement(outcome, started.elapsed()))
            .is_err()
        {
            return;
        }
    }
}

fn setup(conn: &mut Connection, env: &CaseEnv, scratch: &std::path::Path) -> Result<(), String> {
    let settings = &env.settings;
    conn.set("timeout", Value::Int64(settings.timeout_ms as i64))
        .and_then(|()| conn.set("threads", Value::Int64(settings.threads)))
        .map_err(|error| format!("settings: {error}"))?;
    std::fs::create_dir_all(scratch).map_err(|error| format!("{}: {error}", scratch.display()))?;
    match &env.dataset {
        Some(spec) => dataset::load(conn, spec, &env.dataset_dirs),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_file::parse;

    fn env(hard_limit: Duration) -> CaseEnv {
        CaseEnv {
            dataset: None,
            dataset_dirs: Vec::new(),
            statement_dir: std::env::temp_dir(),
            variables: BTreeMap::new(),
            settings: RunSettings {
                timeout_ms: 0,
                threads: 1,
                hard_limit,
                ..RunSettings::default()
            },
        }
    }

    #[test]
    fn runs_statements_in_order_and_skips() {
        let file = parse(
            "--\n-CASE A\n-STATEMENT CREATE NODE TABLE T(id INT64, PRIMARY KEY(id))\n---- ok\n\
             -STATEMENT CREATE (:T {id: 1})\n---- ok\n-STATEMENT MATCH (t:T) RETURN t.id\n---- 1\n1\n",
        )
        .unwrap();
        let skips = [None, Some("not today".to_string()), None];
        let run = run_case(&file.cases[0], &skips, &env(Duration::from_secs(60)));
        assert!(run.dataset_error.is_none());
        assert!(
            matches!(&run.statements[1], StatementRun::Skipped(reason) if reason == "not today")
        );
        let StatementRun::Ran { outcome, .. } = &run.statements[2] else {
            panic!("not run")
        };
        let rows = Outcome::Results(vec![crate::execute::Actual::Rows {
            columns: vec!["t.id".into()],
            rows: vec![],
        }]);
        assert_eq!(outcome, &rows, "the skipped CREATE did not run");
    }

    /// A complete graph on 36 nodes, then a TRAIL query that enumerates for ages.
    fn slow_case() -> Case {
        let file = parse(
            "--\n-CASE A\n-STATEMENT CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))\n---- ok\n\
             -STATEMENT CREATE REL TABLE E(FROM N TO N)\n---- ok\n\
             -STATEMENT UNWIND range(1, 6) AS i UNWIND range(1, 6) AS j CREATE (:N {id: i * 10 + j})\n\
             -STATEMENT MATCH (a:N), (b:N) WHERE a.id <> b.id CREATE (a)-[:E]->(b)\n\
             -STATEMENT MATCH (a:N)-[e:E* TRAIL 1..30]->(b:N) WHERE b.id + length(e) < 0 \
             RETURN count(*)\n---- ok\n-STATEMENT RETURN 1\n---- ok\n",
        )
        .unwrap();
        file.cases[0].clone()
    }

    #[test]
    fn abandons_a_case_after_a_statement_overruns() {
        // The limit applies to every statement, the set-up ones too (milliseconds each, but a
        // busy machine may stretch them): 3 s is far above those and far below the TRAIL
        // enumeration, which takes ages.
        let run = run_case(&slow_case(), &[], &env(Duration::from_secs(3)));
        assert!(
            matches!(run.statements[4], StatementRun::Hung(_)),
            "{run:?}"
        );
        assert!(matches!(run.statements[5], StatementRun::Abandoned));
    }

    #[test]
    fn the_query_timeout_stops_a_long_statement() {
        let mut env = env(Duration::from_secs(20));
        env.settings.timeout_ms = 200;
        let run = run_case(&slow_case(), &[], &env);
        let StatementRun::Ran {
            outcome: Outcome::Results(results),
            ..
        } = &run.statements[4]
        else {
            panic!("the statement did not finish: {:?}", run.statements[4]);
        };
        let interrupted = |actual: &crate::execute::Actual| matches!(actual, crate::execute::Actual::Error(e) if e.starts_with("Interrupted"));
        assert!(interrupted(&results[0]), "{run:?}");
        assert!(matches!(run.statements[5], StatementRun::Ran { .. }));
    }
}

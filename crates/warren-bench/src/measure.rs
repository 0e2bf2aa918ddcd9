//! Measuring a query: one untimed warm-up run, then `repeat` timed runs, each consuming every
//! row; per run the wall time (compile, execute and consume), the answer, the engine's
//! traversal summaries and, where granted, hardware counts. The figures come from these runs.

use std::time::Instant;

use warren::hardware::Counts;
use warren::{Connection, TraversalSummary};

use crate::answer::{read_answer, Answer};
use crate::counters::HardwareCounters;
use crate::error::{BenchError, BenchResult};
use crate::query::BenchQuery;
use crate::report::{CountsInfo, Figures, TraversalInfo};
use crate::stats::Summary;

/// The most repeats one measurement may take.
pub const REPEAT_MAX: usize = 1000;

/// One timed run.
#[derive(Clone, Debug)]
pub struct RunSample {
    pub time_s: f64,
    pub answer: Answer,
    /// What the engine reported (empty where it reports nothing).
    pub traversals: Vec<TraversalSummary>,
    pub counts: Option<Counts>,
    pub query_memory_peak_bytes: u64,
}

impl RunSample {
    /// Edges the query's recursive joins scanned, when the engine reported any traversal.
    pub fn edges_scanned(&self) -> Option<u64> {
        (!self.traversals.is_empty()).then(|| self.traversals.iter().map(|t| t.edges_scanned).sum())
    }
}

/// Runs `query` once, timing it from submission to its last row.
pub fn run_once(
    conn: &mut Connection,
    query: &BenchQuery,
    counters: &mut HardwareCounters,
) -> BenchResult<RunSample> {
    let text = query.text();
    let (outcome, counts) = counters.measure(|| {
        let started = Instant::now();
        let mut result = conn.query(&text)?;
        let answer = read_answer(&mut result, query.shape())?;
        let time_s = started.elapsed().as_secs_f64();
        Ok::<_, BenchError>((time_s, answer, result))
    });
    let (time_s, answer, result) = outcome?;
    Ok(RunSample {
        // A run too fast for the clock still took some time; keep rates finite.
        time_s: time_s.max(1e-9),
        answer,
        traversals: result.traversals(),
        counts,
        query_memory_peak_bytes: result.peak_memory(),
    })
}

/// A warm-up run (not kept) followed by `repeat` timed runs.
pub fn measure(
    conn: &mut Connection,
    query: &BenchQuery,
    counters: &mut HardwareCounters,
    repeat: usize,
) -> BenchResult<Measurement> {
    check_repeat(repeat)?;
    let warm_up = run_once(conn, query, counters)?;
    let mut samples = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        samples.push(run_once(conn, query, counters)?);
    }
    Ok(Measurement {
        warm_up_answer: Some(warm_up.answer),
        samples,
    })
}

pub fn check_repeat(repeat: usize) -> BenchResult<()> {
    if (1..=REPEAT_MAX).contains(&repeat) {
        Ok(())
    } else {
        Err(BenchError::Usage(format!(
            "--repeat must be between 1 and {REPEAT_MAX}, got {repeat}"
        )))
    }
}

/// The runs of one configuration.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub warm_up_answer: Option<Answer>,
    pub samples: Vec<RunSample>,
}

impl Measurement {
    /// The answer every run gave, or which run disagreed with the first.
    pub fn consistent_answer(&self) -> Result<&Answer, String> {
        assert!(!self.samples.is_empty(), "a measurement has runs");
        let first = &self.samples[0].answer;
        if let Some(warm_up) = &self.warm_up_answer {
            if warm_up != first {
                return Err(format!(
                    "the warm-up run answered {} but repeat 1 answered {}",
                    warm_up.to_json(),
                    first.to_json()
                ));
            }
        }
        for (index, sample) in self.samples.iter().enumerate().skip(1) {
            if &sample.answer != first {
                return Err(format!(
                    "repeat {} answered {} but repeat 1 answered {}",
                    index + 1,
                    sample.answer.to_json(),
                    first.to_json()
                ));
            }
        }
        Ok(first)
    }

    fn last(&self) -> &RunSample {
        self.samples.last().expect("a measurement has runs")
    }

    /// The last run's first traversal summary (`null` in the report when there is none).
    pub fn traversal(&self) -> Option<TraversalInfo> {
        self.last().traversals.first().map(TraversalInfo::from)
    }

    /// The k the engine reported for the last run.
    pub fn k_chosen(&self) -> Option<usize> {
        self.last().traversals.first().map(|t| t.max_active_sources)
    }

    pub fn last_counts(&self) -> Option<CountsInfo> {
        self.last().counts.map(CountsInfo::from)
    }

    /// Time, edges/s (when the engine reported traversals on every run), paths/s (for
    /// counting answers) and LLC loads/s (with hardware counters). Peak RSS is the caller's.
    pub fn figures(&self) -> Figures {
        let times: Vec<f64> = self.samples.iter().map(|s| s.time_s).collect();
        let per_second = |amount: &dyn Fn(&RunSample) -> Option<f64>| {
            let rates: Option<Vec<f64>> = self
                .samples
                .iter()
                .map(|s| amount(s).map(|a| a / s.time_s))
                .collect();
            rates.map(|r| Summary::of(&r))
        };
        Figures {
            time_s: Some(Summary::of(&times)),
            edges_per_s: per_second(&|s| s.edges_scanned().map(|e| e as f64)),
            paths_per_s: per_second(&|s| s.answer.path_count().map(|p| p as f64)),
            llc_loads_per_s: per_second(&|s| s.counts.map(|c| c.llc_loads as f64)),
            peak_rss_bytes: None,
            query_memory_peak_bytes: self.samples.iter().map(|s| s.query_memory_peak_bytes).max(),
            ..Figures::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(time_s: f64, answer: Answer, edges: Option<u64>) -> RunSample {
        RunSample {
            time_s,
            answer,
            traversals: edges
                .map(|edges_scanned| {
                    vec![TraversalSummary {
                        edges_scanned,
                        max_active_sources: 4,
                        ..TraversalSummary::default()
                    }]
                })
                .unwrap_or_default(),
            counts: None,
            query_memory_peak_bytes: 10,
        }
    }

    #[test]
    fn figures_from_samples() {
        let measurement = Measurement {
            warm_up_answer: None,
            samples: vec![
                sample(1.0, Answer::Count(10), Some(100)),
                sample(2.0, Answer::Count(10), Some(100)),
                sample(4.0, Answer::Count(10), Some(100)),
            ],
        };
        let figures = measurement.figures();
        assert_eq!(figures.time_s.unwrap().median, 2.0);
        let edges = figures.edges_per_s.unwrap();
        assert_eq!((edges.min, edges.median, edges.max), (25.0, 50.0, 100.0));
        assert_eq!(figures.paths_per_s.unwrap().max, 10.0);
        assert!(figures.llc_loads_per_s.is_none());
        assert_eq!(figures.query_memory_peak_bytes, Some(10));
        assert_eq!(measurement.k_chosen(), Some(4));
        assert_eq!(measurement.consistent_answer(), Ok(&Answer::Count(10)));
    }

    #[test]
    fn missing_traversals_give_no_edge_rate() {
        let measurement = Measurement {
            warm_up_answer: None,
            samples: vec![sample(1.0, Answer::Rows(vec![]), None)],
        };
        let figures = measurement.figures();
        assert!(figures.edges_per_s.is_none());
        assert!(figures.paths_per_s.is_none());
        assert!(measurement.traversal().is_none());
        assert!(measurement.k_chosen().is_none());
    }

    #[test]
    fn disagreeing_runs_are_reported() {
        let measurement = Measurement {
            warm_up_answer: Some(Answer::Count(1)),
            samples: vec![
                sample(1.0, Answer::Count(1), None),
                sample(1.0, Answer::Count(2), None),
            ],
        };
        let error = measurement.consistent_answer().unwrap_err();
        assert!(error.contains("repeat 2 answered 2"), "{error}");
        let warm = Measurement {
            warm_up_answer: Some(Answer::Count(3)),
            samples: vec![sample(1.0, Answer::Count(1), None)],
        };
        assert!(warm.consistent_answer().unwrap_err().contains("warm-up"));
    }

    #[test]
    fn repeat_is_bounded() {
        assert!(check_repeat(0).is_err());
        assert!(check_repeat(REPEAT_MAX + 1).is_err());
        assert!(check_repeat(5).is_ok());
    }

    #[test]
    fn runs_a_query_on_a_small_graph() {
        let db = warren::Database::in_memory();
        let mut conn = db.connect();
        conn.query(
            "CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID)); \
             CREATE REL TABLE Knows(FROM Person TO Person); \
             CREATE (:Person {ID: 0})-[:Knows]->(:Person {ID: 1})",
        )
        .unwrap();
        let mut counters = HardwareCounters::unavailable("test");
        let query = BenchQuery::ShortestFrom { source: 0 };
        let measurement = measure(&mut conn, &query, &mut counters, 2).unwrap();
        assert_eq!(measurement.samples.len(), 2);
        assert_eq!(
            measurement.consistent_answer(),
            Ok(&Answer::Rows(vec![vec![0, 1, 1]]))
        );
        assert!(measurement.samples.iter().all(|s| s.time_s > 0.0));
    }
}

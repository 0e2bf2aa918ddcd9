//! The JSON report of one `warren bench` invocation (schema `warren-bench/1`): what ran, on
//! what data and machine, the checked answer, the engine's traversal summary and the figures.
//! `warren compare` reads two of these back.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value as Json;

use crate::error::{BenchError, BenchResult};
use crate::machine::Machine;
use crate::stats::Summary;

/// The schema name every report carries.
pub const SCHEMA: &str = "warren-bench/1";

/// The k setting (`max_active_sources`): chosen by the engine, or fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KSetting {
    Auto,
    Fixed(usize),
}

impl KSetting {
    /// Parses `auto` or a positive integer.
    pub fn parse(text: &str) -> Result<KSetting, String> {
        if text.eq_ignore_ascii_case("auto") {
            return Ok(KSetting::Auto);
        }
        match text.parse::<usize>() {
            Ok(k) if k > 0 => Ok(KSetting::Fixed(k)),
            _ => Err(format!(
                "k must be 'auto' or a positive integer, got '{text}'"
            )),
        }
    }
}

impl fmt::Display for KSetting {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KSetting::Auto => formatter.write_str("auto"),
            KSetting::Fixed(k) => write!(formatter, "{k}"),
        }
    }
}

impl Serialize for KSetting {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            KSetting::Auto => serializer.serialize_str("auto"),
            KSetting::Fixed(k) => serializer.serialize_u64(*k as u64),
        }
    }
}

impl<'de> Deserialize<'de> for KSetting {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Json::deserialize(deserializer)? {
            Json::String(text) => KSetting::parse(&text).map_err(D::Error::custom),
            Json::Number(number) => number
                .as_u64()
                .filter(|&k| k > 0)
                .map(|k| KSetting::Fixed(k as usize))
                .ok_or_else(|| D::Error::custom(format!("bad k {number}"))),
            other => Err(D::Error::custom(format!("bad k {other}"))),
        }
    }
}

/// The data a workload ran on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetInfo {
    /// The database directory.
    pub db: String,
    /// The `warren generate` folder it was loaded from, if given.
    pub dir: Option<String>,
    /// A short name (the dataset folder's name, else the database's).
    pub name: String,
    pub nodes: u64,
    pub edges: u64,
}

/// The configuration of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsInfo {
    pub threads: usize,
    pub k: KSetting,
    /// Engine settings given with `--set name=value`, as given.
    pub set: BTreeMap<String, String>,
    pub repeat: usize,
    /// varlen: the hop upper bound, source and destination ID bounds, and whether paths were
    /// returned (`RETURN r`) rather than counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destinations: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<bool>,
    /// ksweep: the fixed k values swept (`auto` runs besides them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k_values: Option<Vec<usize>>,
}

/// One level of a traversal, as the engine reported it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelInfo {
    pub frontier: u64,
    pub edges_scanned: u64,
    pub top_down: u64,
    pub bottom_up: u64,
    pub time_s: f64,
}

/// What the engine's recursive join did (`QueryResult::traversals`), from the last repeat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraversalInfo {
    pub algorithm: String,
    pub threads: usize,
    pub max_active_sources: usize,
    pub k_reason: String,
    pub sources: u64,
    pub edges_scanned: u64,
    pub cas_failures: u64,
    pub time_s: f64,
    pub levels: Vec<LevelInfo>,
}

impl From<&warren::TraversalSummary> for TraversalInfo {
    fn from(summary: &warren::TraversalSummary) -> TraversalInfo {
        TraversalInfo {
            algorithm: summary.algorithm.clone(),
            threads: summary.threads,
            max_active_sources: summary.max_active_sources,
            k_reason: summary.k_reason.clone(),
            sources: summary.sources,
            edges_scanned: summary.edges_scanned,
            cas_failures: summary.cas_failures,
            time_s: summary.time.as_secs_f64(),
            levels: summary
                .levels
                .iter()
                .map(|level| LevelInfo {
                    frontier: level.frontier,
                    edges_scanned: level.edges_scanned,
                    top_down: level.top_down,
                    bottom_up: level.bottom_up,
                    time_s: level.time.as_secs_f64(),
                })
                .collect(),
        }
    }
}

/// Hardware counts of one run (the last repeat), where the kernel grants counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountsInfo {
    pub cycles: u64,
    pub instructions: u64,
    pub llc_loads: u64,
    pub llc_misses: u64,
}

impl From<warren::hardware::Counts> for CountsInfo {
    fn from(counts: warren::hardware::Counts) -> CountsInfo {
        CountsInfo {
            cycles: counts.cycles,
            instructions: counts.instructions,
            llc_loads: counts.llc_loads,
            llc_misses: counts.llc_misses,
        }
    }
}

/// The measured figures. A figure a workload does not measure, or that the engine or the
/// kernel did not report, is `null`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub time_s: Option<Summary>,
    pub edges_per_s: Option<Summary>,
    pub paths_per_s: Option<Summary>,
    pub llc_loads_per_s: Option<Summary>,
    /// The process's peak resident memory at the end of the invocation.
    pub peak_rss_bytes: Option<u64>,
    /// The most bytes the query's memory tracker held in any repeat.
    #[serde(default)]
    pub query_memory_peak_bytes: Option<u64>,
    /// Operations (commits, edges, queries) per second (the writes workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_s: Option<Summary>,
    /// Latency percentiles in microseconds, one sample per repeat (HDR histograms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us_p50: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us_p99: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us_p999: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us_max: Option<Summary>,
    /// Time over a baseline's (the read slowdown with a delta).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<Summary>,
    /// Throughput in gigabytes (1e9 bytes) per second (the wire workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gb_per_s: Option<Summary>,
}

/// One (dataset, k) point of a ksweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub dataset: String,
    pub k: KSetting,
    /// The k the engine reported using (its traversal summary); `null` when it reported none.
    pub k_chosen: Option<usize>,
    pub answer: Json,
    pub answer_checked: bool,
    pub figures: Figures,
    pub traversal: Option<TraversalInfo>,
    #[serde(default)]
    pub hardware_counts: Option<CountsInfo>,
}

/// The ksweep verdict for one dataset: the best fixed k against `auto`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KSweepSummary {
    pub dataset: String,
    pub best_k: usize,
    pub best_time_s: f64,
    pub auto_k: Option<usize>,
    pub auto_time_s: f64,
    /// auto's median time over the best fixed k's (the goal: at most 1.10).
    pub auto_over_best: f64,
}

/// A whole report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub workload: String,
    pub query: String,
    /// The dataset (ksweep: the first; every one is in `datasets`).
    pub dataset: DatasetInfo,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datasets: Vec<DatasetInfo>,
    pub settings: SettingsInfo,
    pub machine: Machine,
    pub git_rev: String,
    pub started_at: String,
    pub answer: Json,
    pub answer_checked: bool,
    pub check: String,
    /// The reference's answer, recorded only when it differs from `answer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Json>,
    pub traversal: Option<TraversalInfo>,
    pub figures: Figures,
    pub hardware_counters: String,
    #[serde(default)]
    pub hardware_counts: Option<CountsInfo>,
    pub runs: Vec<Run>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ksweep: Vec<KSweepSummary>,
}

impl Report {
    /// Writes the report as pretty-printed JSON.
    pub fn write(&self, path: &Path) -> BenchResult<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| BenchError::Result(format!("report does not serialize: {e}")))?;
        std::fs::write(path, text + "\n").map_err(|e| BenchError::io(path, &e))
    }

    /// Reads a report, checking its schema name.
    pub fn read(path: &Path) -> BenchResult<Report> {
        let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, &e))?;
        let report: Report = serde_json::from_str(&text).map_err(|e| BenchError::Io {
            path: path.display().to_string(),
            message: format!("not a warren-bench report: {e}"),
        })?;
        if report.schema != SCHEMA {
            return Err(BenchError::Io {
                path: path.display().to_string(),
                message: format!("schema is '{}', expected '{SCHEMA}'", report.schema),
            });
        }
        Ok(report)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One ksweep point for tests of this crate: one sample of `time_s` (and 1e6 edges).
    pub(crate) fn sample_run(
        dataset: &str,
        k: KSetting,
        k_chosen: Option<usize>,
        time_s: f64,
    ) -> Run {
        Run {
            dataset: dataset.into(),
            k,
            k_chosen,
            answer: serde_json::Value::Null,
            answer_checked: true,
            figures: Figures {
                time_s: Some(Summary::of(&[time_s])),
                edges_per_s: Some(Summary::of(&[1e6 / time_s])),
                ..Figures::default()
            },
            traversal: None,
            hardware_counts: None,
        }
    }

    /// A small, complete report for tests of this crate.
    pub(crate) fn sample_report(times_s: &[f64]) -> Report {
        let dataset = DatasetInfo {
            db: "/tmp/db".into(),
            dir: None,
            name: "tiny".into(),
            nodes: 10,
            edges: 20,
        };
        Report {
            schema: SCHEMA.into(),
            workload: "sp64".into(),
            query: "MATCH ...".into(),
            dataset,
            datasets: Vec::new(),
            settings: SettingsInfo {
                threads: 2,
                k: KSetting::Auto,
                set: BTreeMap::from([("prefetch_distance".to_string(), "8".to_string())]),
                repeat: times_s.len(),
                hops: None,
                sources: None,
                destinations: None,
                paths: None,
                k_values: None,
            },
            machine: Machine {
                cpu: "cpu".into(),
                logical_cores: 2,
                memory_bytes: 1 << 30,
                os: "linux".into(),
                kernel: "6.1".into(),
            },
            git_rev: "abc1234".into(),
            started_at: "2025-01-01T00:00:00Z".into(),
            answer: serde_json::json!([[0, 3, 4]]),
            answer_checked: true,
            check: "rows".into(),
            expected: None,
            traversal: None,
            figures: Figures {
                time_s: Some(Summary::of(times_s)),
                edges_per_s: Some(Summary::of(
                    &times_s.iter().map(|t| 1000.0 / t).collect::<Vec<_>>(),
                )),
                paths_per_s: None,
                llc_loads_per_s: None,
                peak_rss_bytes: Some(1 << 20),
                query_memory_peak_bytes: None,
                ..Figures::default()
            },
            hardware_counters: "unavailable: test".into(),
            hardware_counts: None,
            runs: Vec::new(),
            ksweep: Vec::new(),
        }
    }

    #[test]
    fn k_setting_parses_and_round_trips() {
        assert_eq!(KSetting::parse("auto"), Ok(KSetting::Auto));
        assert_eq!(KSetting::parse("AUTO"), Ok(KSetting::Auto));
        assert_eq!(KSetting::parse("4"), Ok(KSetting::Fixed(4)));
        assert!(KSetting::parse("0").is_err());
        assert!(KSetting::parse("x").is_err());
        assert_eq!(serde_json::to_string(&KSetting::Auto).unwrap(), "\"auto\"");
        assert_eq!(serde_json::to_string(&KSetting::Fixed(8)).unwrap(), "8");
        let back: KSetting = serde_json::from_str("8").unwrap();
        assert_eq!(back, KSetting::Fixed(8));
        assert!(serde_json::from_str::<KSetting>("0").is_err());
        assert!(serde_json::from_str::<KSetting>("true").is_err());
    }

    #[test]
    fn report_json_has_the_contract_fields_and_round_trips() {
        let report = sample_report(&[1.0, 2.0, 3.0]);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["schema"], "warren-bench/1");
        assert_eq!(json["settings"]["k"], "auto");
        assert_eq!(json["settings"]["set"]["prefetch_distance"], "8");
        assert_eq!(json["figures"]["time_s"]["median"], 2.0);
        assert_eq!(json["figures"]["time_s"]["samples"][2], 3.0);
        assert!(json["figures"]["llc_loads_per_s"].is_null());
        assert!(json["traversal"].is_null());
        assert!(json["dataset"]["dir"].is_null());
        assert!(
            json.get("expected").is_none(),
            "expected only on a mismatch"
        );
        assert!(json.get("datasets").is_none(), "datasets only for ksweep");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        report.write(&path).unwrap();
        assert_eq!(Report::read(&path).unwrap(), report);
    }

    #[test]
    fn reading_rejects_other_schemas() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut report = sample_report(&[1.0]);
        report.schema = "other/2".into();
        report.write(&path).unwrap();
        let error = Report::read(&path).unwrap_err().to_string();
        assert!(error.contains("schema is 'other/2'"), "{error}");
        std::fs::write(&path, "{}").unwrap();
        assert!(Report::read(&path).is_err());
    }

    #[test]
    fn traversal_info_copies_the_engine_summary() {
        let summary = warren::TraversalSummary {
            algorithm: "BFS".into(),
            threads: 2,
            max_active_sources: 4,
            k_reason: "fixed".into(),
            sources: 64,
            edges_scanned: 1000,
            cas_failures: 3,
            time: std::time::Duration::from_millis(1500),
            levels: vec![warren::LevelSummary {
                frontier: 1,
                edges_scanned: 10,
                top_down: 1,
                bottom_up: 0,
                time: std::time::Duration::from_millis(500),
            }],
        };
        let info = TraversalInfo::from(&summary);
        assert_eq!(info.max_active_sources, 4);
        assert_eq!(info.time_s, 1.5);
        assert_eq!(info.levels[0].time_s, 0.5);
        assert_eq!(info.levels[0].edges_scanned, 10);
    }
}

//! The benchmark workloads (design §6) and the options of one `warren bench` invocation: which
//! workload, on which databases, with which engine settings, how often.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use warren::{Connection, Value};

use crate::error::{BenchError, BenchResult};
use crate::measure::check_repeat;
use crate::query::BenchQuery;
use crate::report::KSetting;

/// The repeats when none are asked for.
pub const REPEAT_DEFAULT: usize = 5;
/// The fixed k values a ksweep tries by default (then `auto`).
pub const K_VALUES_DEFAULT: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// The most k values and databases one ksweep may take.
pub const K_VALUES_MAX: usize = 32;
pub const DATABASES_MAX: usize = 16;

/// A benchmark workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// SHORTEST from the 64 sources `a.ID < 64`.
    Sp64,
    /// SHORTEST from `a.ID = 0`.
    Sp1,
    /// ALL SHORTEST from `a.ID = 0`, counted.
    AllSp,
    /// Variable-length walks, counted or returned.
    Varlen,
    /// `spread_activation` from the 10 seeds `a.ID < 10`, 3 hops (decay 0.5, threshold 0.01).
    Spread,
    /// sp64 at every k of a list and `auto`, on every database given.
    Ksweep,
    /// COPY of a dataset folder into a fresh database.
    Load,
    /// Durable writes: single-row commits from many connections, batches, mixed reads and
    /// writes, checkpoint under load, recovery, and the read slowdown with a delta.
    Writes,
    /// The wire format's encoder and decoder next to memcpy and bincode 1.3.3 (no database).
    Wire,
    /// `warren serve` in-process under an open-loop load: latency percentiles per workload and
    /// rate, and the server's overhead over the embedded call.
    Serve,
    /// Vector search (no database): memory read bandwidth, brute-force top-10, HNSW index
    /// build, queries per second and recall@10.
    Vectors,
}

impl Workload {
    pub const ALL: [Workload; 11] = [
        Workload::Sp64,
        Workload::Sp1,
        Workload::AllSp,
        Workload::Varlen,
        Workload::Spread,
        Workload::Ksweep,
        Workload::Load,
        Workload::Writes,
        Workload::Wire,
        Workload::Serve,
        Workload::Vectors,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::Sp64 => "sp64",
            Workload::Sp1 => "sp1",
            Workload::AllSp => "allsp",
            Workload::Varlen => "varlen",
            Workload::Spread => "spread",
            Workload::Ksweep => "ksweep",
            Workload::Load => "load",
            Workload::Writes => "writes",
            Workload::Wire => "wire",
            Workload::Serve => "serve",
            Workload::Vectors => "vectors",
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == text)
            .ok_or_else(|| {
                format!(
                    "unknown workload '{text}' (expected sp64, sp1, allsp, varlen, spread, ksweep, load, writes, wire, serve or vectors)"
                )
            })
    }
}

/// The varlen workload's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarlenOptions {
    /// The hop upper bound H of `*1..H`.
    pub hops: u32,
    /// Sources `a.ID < sources`.
    pub sources: i64,
    /// Destinations `b.ID < destinations`.
    pub destinations: i64,
    /// `RETURN r` (every path streamed) instead of `RETURN count(*)`.
    pub paths: bool,
}

impl Default for VarlenOptions {
    fn default() -> Self {
        VarlenOptions {
            hops: 3,
            sources: 5,
            destinations: 500,
            paths: false,
        }
    }
}

/// Everything one `warren bench` invocation needs.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchOptions {
    pub workload: Workload,
    /// `--db`: one database, or several for ksweep (load: where temporary databases go).
    pub databases: Vec<PathBuf>,
    /// `--dataset`: none, or one `warren generate` folder per database.
    pub dataset_dirs: Vec<PathBuf>,
    pub threads: Option<usize>,
    pub k: KSetting,
    /// `--set name=value`, in order.
    pub engine_settings: Vec<(String, String)>,
    pub repeat: usize,
    /// Compare the answer with the reference implementation (`--no-check` turns it off).
    pub check: bool,
    pub varlen: VarlenOptions,
    pub k_values: Vec<usize>,
    pub output: PathBuf,
    /// ksweep: where to draw the figure (SVG; a PNG beside it when fonts allow).
    pub plot: Option<PathBuf>,
    /// writes: small sizes (for the test that runs every scenario).
    pub quick: bool,
    /// serve: the request rate (requests per second) of every workload.
    pub rate: Option<f64>,
    /// serve: increasing rates until the knee instead of one rate.
    pub sweep: bool,
    /// serve: the overload run (the mix at twice the knee, between two steps at half of it).
    pub overload: bool,
    /// writes, serve: only these scenarios or workloads (all when empty).
    pub scenarios: Vec<String>,
    /// serve: the server's heavy-lane threads (`warren serve --heavy-threads`; its default
    /// when `None`).
    pub heavy_threads: Option<usize>,
    /// serve: the server's `io_spin_us` (its default when `None`).
    pub io_spin_us: Option<u64>,
    /// serve: the overhead loop's client polls its socket up to this long before blocking
    /// (`warren_client::Client::set_poll_window`; `None`: the client's default).
    pub client_poll_us: Option<u64>,
    /// vectors: the dataset's sizes, the beams, and where to write the dataset for the peers.
    pub vectors: crate::vectors::VectorOptions,
}

impl BenchOptions {
    /// The defaults for `workload` on one database.
    pub fn new(workload: Workload, db: PathBuf, output: PathBuf) -> BenchOptions {
        BenchOptions {
            workload,
            databases: vec![db],
            dataset_dirs: Vec::new(),
            threads: None,
            k: KSetting::Auto,
            engine_settings: Vec::new(),
            repeat: REPEAT_DEFAULT,
            check: true,
            varlen: VarlenOptions::default(),
            k_values: K_VALUES_DEFAULT.to_vec(),
            output,
            plot: None,
            quick: false,
            rate: None,
            sweep: false,
            overload: false,
            scenarios: Vec::new(),
            heavy_threads: None,
            io_spin_us: None,
            client_poll_us: None,
            vectors: crate::vectors::VectorOptions::default(),
        }
    }

    /// Checks that the options fit together.
    pub fn validate(&self) -> BenchResult<()> {
        check_repeat(self.repeat)?;
        let usage = |message: String| Err(BenchError::Usage(message));
        let many = self.workload == Workload::Ksweep;
        if self.workload == Workload::Wire {
            return Ok(());
        }
        if self.workload == Workload::Vectors {
            return self.vectors.validate();
        }
        if self.databases.is_empty()
            || self.databases.iter().any(|db| db.as_os_str().is_empty())
            || self.databases.len() > DATABASES_MAX
        {
            return usage(format!("give 1 to {DATABASES_MAX} --db"));
        }
        if !many && self.databases.len() > 1 {
            return usage(format!(
                "{} takes one --db (only ksweep repeats it)",
                self.workload
            ));
        }
        if !self.dataset_dirs.is_empty() && self.dataset_dirs.len() != self.databases.len() {
            return usage("give one --dataset per --db, in the same order, or none".into());
        }
        if self.workload == Workload::Load && self.dataset_dirs.is_empty() {
            return usage(
                "load needs --dataset DIR (a folder written by `warren generate`)".into(),
            );
        }
        if many && self.k != KSetting::Auto {
            return usage("ksweep sets k itself (use --k-values); leave out --k".into());
        }
        if self.plot.is_some() && !many {
            return usage("--plot draws the ksweep figure; use it with ksweep".into());
        }
        if self.k_values.is_empty()
            || self.k_values.len() > K_VALUES_MAX
            || self.k_values.contains(&0)
        {
            return usage(format!(
                "--k-values takes 1 to {K_VALUES_MAX} positive integers"
            ));
        }
        self.validate_varlen()?;
        for (name, _) in &self.engine_settings {
            if ["threads", "max_active_sources", "k"].contains(&name.to_ascii_lowercase().as_str())
            {
                return usage(format!(
                    "use --threads and --k rather than --set {name}=..."
                ));
            }
        }
        Ok(())
    }

    fn validate_varlen(&self) -> BenchResult<()> {
        let varlen = &self.varlen;
        if varlen.hops == 0 || varlen.hops > warren_common::limits::HOPS_MAX_CEILING {
            return Err(BenchError::Usage(format!(
                "--hops must be between 1 and {}",
                warren_common::limits::HOPS_MAX_CEILING
            )));
        }
        Ok(())
    }

    /// The query a query workload runs (`None` for load).
    pub fn query(&self) -> Option<BenchQuery> {
        Some(match self.workload {
            Workload::Sp64 | Workload::Ksweep => BenchQuery::ShortestBelow { sources_below: 64 },
            Workload::Sp1 => BenchQuery::ShortestFrom { source: 0 },
            Workload::AllSp => BenchQuery::AllShortestFrom { source: 0 },
            Workload::Varlen => BenchQuery::Walks {
                hops: self.varlen.hops,
                sources_below: self.varlen.sources,
                destinations_below: self.varlen.destinations,
                paths: self.varlen.paths,
            },
            Workload::Spread => BenchQuery::Spread {
                seeds_below: 10,
                hops: 3,
            },
            Workload::Load
            | Workload::Writes
            | Workload::Wire
            | Workload::Serve
            | Workload::Vectors => return None,
        })
    }

    /// Applies `--threads`, the given k and every `--set` to a connection.
    pub fn configure(&self, conn: &mut Connection, k: KSetting) -> BenchResult<()> {
        if let Some(threads) = self.threads {
            let threads = i64::try_from(threads)
                .map_err(|_| BenchError::Usage(format!("--threads {threads} is too large")))?;
            conn.set("threads", Value::Int64(threads))?;
        }
        let k_value = match k {
            KSetting::Auto => Value::string("auto"),
            KSetting::Fixed(k) => Value::Int64(
                i64::try_from(k).map_err(|_| BenchError::Usage(format!("k {k} is too large")))?,
            ),
        };
        conn.set("max_active_sources", k_value)?;
        for (name, text) in &self.engine_settings {
            conn.set(name, setting_value(text))?;
        }
        Ok(())
    }
}

/// Parses `name=value` of `--set`.
pub fn parse_setting(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("--set expects NAME=VALUE, got '{text}'")),
    }
}

/// A `--set` value as the engine expects it: an integer, a boolean, or text.
pub fn setting_value(text: &str) -> Value {
    if let Ok(integer) = text.parse::<i64>() {
        return Value::Int64(integer);
    }
    match text.to_ascii_lowercase().as_str() {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::string(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(workload: Workload) -> BenchOptions {
        BenchOptions::new(workload, "db".into(), "out.json".into())
    }

    #[test]
    fn workload_names_round_trip() {
        for workload in Workload::ALL {
            assert_eq!(workload.name().parse::<Workload>(), Ok(workload));
        }
        assert!("nosuch".parse::<Workload>().is_err());
    }

    #[test]
    fn settings_parse() {
        assert_eq!(
            parse_setting("prefetch_distance=8"),
            Ok(("prefetch_distance".into(), "8".into()))
        );
        assert!(parse_setting("novalue").is_err());
        assert!(parse_setting("=3").is_err());
        assert_eq!(setting_value("8"), Value::Int64(8));
        assert_eq!(setting_value("false"), Value::Bool(false));
        assert_eq!(setting_value("top_down"), Value::string("top_down"));
    }

    #[test]
    fn options_are_validated() {
        assert!(options(Workload::Sp64).validate().is_ok());
        let mut two = options(Workload::Sp64);
        two.databases.push("other".into());
        assert!(two.validate().is_err());
        two.workload = Workload::Ksweep;
        assert!(two.validate().is_ok());
        two.dataset_dirs = vec!["one".into()];
        assert!(two.validate().is_err(), "datasets pair with databases");
        assert!(
            options(Workload::Load).validate().is_err(),
            "load needs a dataset"
        );
        let mut no_db = BenchOptions::new(Workload::Sp64, PathBuf::new(), "out.json".into());
        assert!(no_db.validate().is_err(), "query workloads need --db");
        no_db.workload = Workload::Wire;
        assert!(no_db.validate().is_ok(), "wire needs no database");
        let mut fixed_sweep = options(Workload::Ksweep);
        fixed_sweep.k = KSetting::Fixed(4);
        assert!(fixed_sweep.validate().is_err());
        let mut plot = options(Workload::Sp1);
        plot.plot = Some("x.svg".into());
        assert!(plot.validate().is_err());
        let mut repeat = options(Workload::Sp1);
        repeat.repeat = 0;
        assert!(repeat.validate().is_err());
        let mut k_values = options(Workload::Ksweep);
        k_values.k_values = vec![0];
        assert!(k_values.validate().is_err());
        let mut hops = options(Workload::Varlen);
        hops.varlen.hops = 0;
        assert!(hops.validate().is_err());
        let mut set = options(Workload::Sp1);
        set.engine_settings = vec![("threads".into(), "2".into())];
        assert!(set.validate().is_err());
    }

    #[test]
    fn configure_applies_settings() {
        let db = warren::Database::in_memory();
        let mut conn = db.connect();
        let mut options = options(Workload::Sp64);
        options.threads = Some(1);
        options.engine_settings = vec![
            ("prefetch_distance".into(), "8".into()),
            ("multi_source_bfs".into(), "false".into()),
        ];
        options.configure(&mut conn, KSetting::Fixed(4)).unwrap();
        assert_eq!(conn.settings().threads, 1);
        assert_eq!(conn.settings().engine.max_active_sources, Some(4));
        assert_eq!(conn.settings().engine.prefetch_distance, 8);
        assert!(!conn.settings().engine.multi_source_bfs);
        options.configure(&mut conn, KSetting::Auto).unwrap();
        assert_eq!(conn.settings().engine.max_active_sources, None);
        options.engine_settings = vec![("no_such_setting".into(), "1".into())];
        assert!(options.configure(&mut conn, KSetting::Auto).is_err());
    }
}

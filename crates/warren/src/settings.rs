//! Connection settings, changed with `CALL name = value` (or the API and command-line flags):
//! threads, recursion depth and semantics, memory limit, timeout, scheduling knobs.

use warren_common::value::Value;
use warren_common::{Error, Limits, Result};
use warren_exec::EngineSettings;
use warren_planner::DefaultSemantic;

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// `threads`: worker threads a query may use.
    pub threads: usize,
        /// The recursive engine's knobs: `max_active_sources` (k), `prefetch_distance`,
    /// `morsel_size`, `bfs_direction`, `multi_source_bfs`, `walk_count_meet`, `varlen_paths`.
    pub engine: EngineSettings,
    /// `var_length_extend_max_depth`: the largest upper bound of a recursive pattern.
    pub hops_max: u32,
    /// `recursive_pattern_semantic`: what a plain `*` means.
    pub default_semantic: DefaultSemantic,
    /// `memory_limit`: bytes a query may hold.
    pub memory_limit: u64,
    /// `timeout`: milliseconds a query may run (0: none).
    pub timeout_ms: u64,
    /// `progress_bar`: draw progress bars for long work on a terminal's standard error.
    pub progress_bar: bool,
    /// `file_search_path`: the directory relative file paths of COPY and LOAD FROM start from.
    pub file_search_path: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
                        engine: EngineSettings::default(),
            hops_max: warren_common::limits::HOPS_MAX_DEFAULT,
            default_semantic: DefaultSemantic::Walk,
            memory_limit: default_memory_limit(),
            timeout_ms: 0,
            progress_bar: false,
            file_search_path: None,
        }
    }
}

/// Three quarters of physical memory, capped by the default limit.
fn default_memory_limit() -> u64 {
    let physical = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map(|kib| kib * 1024);
    match physical {
        Some(bytes) => (bytes / 4 * 3).min(warren_common::limits::QUERY_MEMORY_BYTES_DEFAULT),
        None => warren_common::limits::QUERY_MEMORY_BYTES_DEFAULT,
    }
}

fn positive(name: &str, value: &Value) -> Result<u64> {
    value
        .as_i64()
        .filter(|&v| v > 0)
        .map(|v| v as u64)
        .ok_or_else(|| Error::binder(format!("The value of {name} must be a positive integer.")))
}

/// The largest `prefetch_distance`.
const PREFETCH_DISTANCE_MAX: i64 = 256;

fn boolean(name: &str, value: &Value) -> Result<bool> {
    value
        .as_bool()
        .ok_or_else(|| Error::binder(format!("{name} must be TRUE or FALSE.")))
}

/// The value as one of `choices` (upper case), compared case-insensitively.
fn one_of(name: &str, value: &Value, choices: &[&'static str]) -> Result<&'static str> {
    let text = value.as_str().unwrap_or_default();
    choices
        .iter()
        .find(|c| c.eq_ignore_ascii_case(text))
        .copied()
        .ok_or_else(|| {
            Error::binder(format!(
                "{name} must be one of {}.",
                choices.join(", ").to_ascii_lowercase()
            ))
        })
}

impl Settings {
    pub fn limits(&self) -> Limits {
        Limits {
            hops_max: self.hops_max,
            query_memory_bytes: self.memory_limit,
            timeout_ms: self.timeout_ms,
        }
    }

    /// Applies `CALL name = value`.
    pub fn set(&mut self, name: &str, value: &Value) -> Result<()> {
        match name.to_ascii_lowercase().as_str() {
            "threads" => {
                let threads = positive(name, value)? as usize;
                if threads > warren_common::limits::THREADS_MAX {
                    return Err(Error::binder(format!(
                        "threads must be at most {}.",
                        warren_common::limits::THREADS_MAX
                    )));
                }
                self.threads = threads;
            }
            "max_active_sources" | "k" => {
                                self.engine.max_active_sources = match value.as_str() {
                    Some(text) if text.eq_ignore_ascii_case("auto") => None,
                    _ => Some(positive(name, value)? as usize),
                };
            }
            "prefetch_distance" => {
                self.engine.prefetch_distance = value
                    .as_i64()
                    .filter(|v| (0..=PREFETCH_DISTANCE_MAX).contains(v))
                    .ok_or_else(|| {
                        Error::binder(format!(
                            "prefetch_distance must be an integer from 0 to {PREFETCH_DISTANCE_MAX}."
                        ))
                    })? as usize;
            }
            "morsel_size" => {
                self.engine.morsel_size = positive(name, value)? as usize;
            }
            "bfs_direction" => {
                self.engine.direction_optimizing = match one_of(name, value, &["AUTO", "TOP_DOWN"])? {
                    "AUTO" => true,
                    _ => false,
                };
            }
            "multi_source_bfs" => self.engine.multi_source_bfs = boolean(name, value)?,
            "walk_count_meet" => self.engine.walk_count_meet = boolean(name, value)?,
            "varlen_paths" => {
                self.engine.varlen_levels = one_of(name, value, &["DFS", "LEVELS"])? == "LEVELS";
            }
            "var_length_extend_max_depth" => {
                let depth = positive(name, value)?;
                if depth > u64::from(warren_common::limits::HOPS_MAX_CEILING) {
                    return Err(Error::binder(format!(
                        "var_length_extend_max_depth must be at most {}.",
                        warren_common::limits::HOPS_MAX_CEILING
                    )));
                }
                self.hops_max = depth as u32;
            }
            "recursive_pattern_semantic" => {
                let text = value.as_str().unwrap_or_default().to_ascii_uppercase();
                self.default_semantic = match text.as_str() {
                    "WALK" => DefaultSemantic::Walk,
                    "TRAIL" => DefaultSemantic::Trail,
                    "ACYCLIC" => DefaultSemantic::Acyclic,
                    _ => {
                        return Err(Error::binder(format!(
                            "Cannot parse {} as a path semantic. Supported inputs are [WALK, TRAIL, ACYCLIC]",
                            value.as_str().unwrap_or_default()
                        )))
                    }
                };
            }
            "memory_limit" => self.memory_limit = positive(name, value)?,
            "timeout" => {
                self.timeout_ms = value.as_i64().filter(|&v| v >= 0).ok_or_else(|| {
                    Error::binder("The value of timeout must be a non-negative integer.")
                })? as u64;
            }
                        "progress_bar" => self.progress_bar = boolean(name, value)?,
            "file_search_path" => {
                self.file_search_path = Some(
                    value
                        .as_str()
                        .ok_or_else(|| Error::binder("file_search_path must be a string."))?
                        .to_string(),
                );
            }
            // Kùzu scheduling hints that Warren decides by itself.
            "recursive_pattern_factor" | "enable_semi_mask" | "enable_zone_map" => {}
            other => return Err(Error::binder(format!("Invalid option name: {other}."))),
        }
        Ok(())
    }
}

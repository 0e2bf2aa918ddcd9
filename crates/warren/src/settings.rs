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
    /// `morsel_size`, `bfs_direction`, `multi_source_bfs`, `binned_push`, `walk_count_meet`,
    /// `varlen_paths`.
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
    /// `columnar_results`: run the plans that have a columnar form (node scans and one-hop
    /// expansions projecting properties) by the columnar path; off: by the row operators.
    pub columnar: bool,
    /// `warning_limit`: the most warnings (rows COPY skipped with `IGNORE_ERRORS`) the
    /// connection keeps for `show_warnings()`; later ones are counted but not kept.
    pub warning_limit: u64,
    /// Kùzu's planner hints, kept so that `current_setting` reads back what was set.
    pub kuzu_hints: KuzuHints,
}

/// `recursive_pattern_factor`, `enable_semi_mask` and `enable_zone_map`: settings of Kùzu's
/// planner that scripts written for Kùzu set. Warren accepts and stores them (with Kùzu's
/// defaults and type checks) but decides those plans by itself, so nothing else reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KuzuHints {
    pub recursive_pattern_factor: i64,
    pub enable_semi_mask: bool,
    pub enable_zone_map: bool,
}

impl Default for KuzuHints {
    fn default() -> Self {
        Self {
            recursive_pattern_factor: 100,
            enable_semi_mask: true,
            enable_zone_map: true,
        }
    }
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
            columnar: true,
            warning_limit: warren_common::limits::WARNINGS_KEPT_DEFAULT,
            kuzu_hints: KuzuHints::default(),
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

/// A value of type `expected` for a setting Kùzu types strictly, with Kùzu's message.
fn typed<T>(value: &Value, expected: &str, get: impl Fn(&Value) -> Option<T>) -> Result<T> {
    get(value).ok_or_else(|| {
        Error::binder(format!(
            "Expression {} has data type {} but expected {expected}. Implicit cast is not supported.",
            warren_common::format::to_kuzu_string(value, &warren_common::value::NoGraph),
            value.logical_type()
        ))
    })
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
                self.engine.direction_optimizing =
                    one_of(name, value, &["AUTO", "TOP_DOWN"])? == "AUTO";
            }
            "multi_source_bfs" => self.engine.multi_source_bfs = boolean(name, value)?,
            "binned_push" => self.engine.binned_push = boolean(name, value)?,
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
            "warning_limit" => {
                let limit = value.as_i64().filter(|&v| v >= 0).ok_or_else(|| {
                    Error::binder("The value of warning_limit must be a non-negative integer.")
                })? as u64;
                let ceiling = warren_common::limits::WARNINGS_KEPT_CEILING;
                if limit > ceiling {
                    return Err(Error::binder(format!(
                        "warning_limit must be at most {ceiling}."
                    )));
                }
                self.warning_limit = limit;
            }
            "columnar_results" => self.columnar = boolean(name, value)?,
            "file_search_path" => {
                self.file_search_path = Some(
                    value
                        .as_str()
                        .ok_or_else(|| Error::binder("file_search_path must be a string."))?
                        .to_string(),
                );
            }
            "recursive_pattern_factor" => {
                self.kuzu_hints.recursive_pattern_factor = typed(value, "INT64", |v| match v {
                    Value::Int64(x) => Some(*x),
                    _ => None,
                })?;
            }
            "enable_semi_mask" => {
                self.kuzu_hints.enable_semi_mask = typed(value, "BOOL", Value::as_bool)?;
            }
            "enable_zone_map" => {
                self.kuzu_hints.enable_zone_map = typed(value, "BOOL", Value::as_bool)?;
            }
            other => return Err(Error::binder(format!("Invalid option name: {other}."))),
        }
        Ok(())
    }
    /// The value of setting `name` (case-insensitive), as `CALL current_setting('name')`
    /// shows it; `None` when there is no such setting.
    pub fn get(&self, name: &str) -> Option<Value> {
        let count = |n: usize| Value::Int64(i64::try_from(n).unwrap_or(i64::MAX));
        let bytes = |n: u64| Value::Int64(i64::try_from(n).unwrap_or(i64::MAX));
        let engine = &self.engine;
        Some(match name.to_ascii_lowercase().as_str() {
            "threads" => count(self.threads),
            "max_active_sources" | "k" => match engine.max_active_sources {
                Some(k) => count(k),
                None => Value::string("AUTO"),
            },
            "prefetch_distance" => count(engine.prefetch_distance),
            "morsel_size" => count(engine.morsel_size),
            "bfs_direction" => Value::string(if engine.direction_optimizing {
                "AUTO"
            } else {
                "TOP_DOWN"
            }),
            "multi_source_bfs" => Value::Bool(engine.multi_source_bfs),
            "binned_push" => Value::Bool(engine.binned_push),
            "walk_count_meet" => Value::Bool(engine.walk_count_meet),
            "varlen_paths" => Value::string(if engine.varlen_levels {
                "LEVELS"
            } else {
                "DFS"
            }),
            "var_length_extend_max_depth" => Value::Int64(i64::from(self.hops_max)),
            "recursive_pattern_semantic" => Value::string(match self.default_semantic {
                DefaultSemantic::Walk => "WALK",
                DefaultSemantic::Trail => "TRAIL",
                DefaultSemantic::Acyclic => "ACYCLIC",
            }),
            "memory_limit" => bytes(self.memory_limit),
            "timeout" => bytes(self.timeout_ms),
            "progress_bar" => Value::Bool(self.progress_bar),
            "warning_limit" => bytes(self.warning_limit),
            "columnar_results" => Value::Bool(self.columnar),
            "file_search_path" => Value::string(self.file_search_path.clone().unwrap_or_default()),
            "recursive_pattern_factor" => Value::Int64(self.kuzu_hints.recursive_pattern_factor),
            "enable_semi_mask" => Value::Bool(self.kuzu_hints.enable_semi_mask),
            "enable_zone_map" => Value::Bool(self.kuzu_hints.enable_zone_map),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every setting `set` accepts reads back through `get` as it was set.
    #[test]
    fn settings_read_back_what_was_set() {
        let cases = [
            ("threads", Value::Int64(3), Value::Int64(3)),
            ("K", Value::Int64(4), Value::Int64(4)),
            (
                "max_active_sources",
                Value::string("auto"),
                Value::string("AUTO"),
            ),
            ("prefetch_distance", Value::Int64(8), Value::Int64(8)),
            ("morsel_size", Value::Int64(64), Value::Int64(64)),
            (
                "bfs_direction",
                Value::string("top_down"),
                Value::string("TOP_DOWN"),
            ),
            ("multi_source_bfs", Value::Bool(false), Value::Bool(false)),
            ("binned_push", Value::Bool(false), Value::Bool(false)),
            ("walk_count_meet", Value::Bool(false), Value::Bool(false)),
            (
                "varlen_paths",
                Value::string("levels"),
                Value::string("LEVELS"),
            ),
            (
                "var_length_extend_max_depth",
                Value::Int64(10),
                Value::Int64(10),
            ),
            (
                "recursive_pattern_semantic",
                Value::string("trail"),
                Value::string("TRAIL"),
            ),
            ("memory_limit", Value::Int64(1 << 20), Value::Int64(1 << 20)),
            ("timeout", Value::Int64(500), Value::Int64(500)),
            ("progress_bar", Value::Bool(true), Value::Bool(true)),
            ("warning_limit", Value::Int64(16), Value::Int64(16)),
            ("columnar_results", Value::Bool(false), Value::Bool(false)),
            (
                "file_search_path",
                Value::string("data"),
                Value::string("data"),
            ),
            (
                "recursive_pattern_factor",
                Value::Int64(-1),
                Value::Int64(-1),
            ),
            ("enable_semi_mask", Value::Bool(false), Value::Bool(false)),
            ("Enable_Zone_Map", Value::Bool(false), Value::Bool(false)),
        ];
        let mut settings = Settings::default();
        for (name, value, shown) in cases {
            settings.set(name, &value).unwrap();
            assert_eq!(settings.get(name), Some(shown), "{name}");
        }
        assert_eq!(settings.get("no_such_setting"), None);
    }

    #[test]
    fn kuzu_hints_have_kuzu_defaults_and_types() {
        let mut settings = Settings::default();
        assert_eq!(
            settings.get("recursive_pattern_factor"),
            Some(Value::Int64(100))
        );
        assert_eq!(settings.get("enable_semi_mask"), Some(Value::Bool(true)));
        assert_eq!(settings.get("file_search_path"), Some(Value::string("")));
        let error = settings.set("recursive_pattern_factor", &Value::string("abc"));
        assert_eq!(
            error.unwrap_err().to_string(),
            "Binder exception: Expression abc has data type STRING but expected INT64. Implicit cast is not supported."
        );
        let error = settings.set("enable_zone_map", &Value::Int64(3));
        assert_eq!(
            error.unwrap_err().to_string(),
            "Binder exception: Expression 3 has data type INT64 but expected BOOL. Implicit cast is not supported."
        );
    }
}

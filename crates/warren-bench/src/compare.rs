//! `warren compare BASELINE.json AFTER.json`: per figure (and for ksweep per dataset and k) the
//! two medians, the change, and a verdict that accounts for noise.
//!
//! A change is significant when it is at least [`EFFECT_MIN`] (2%) of the baseline median AND
//! the samples say it is real: with at least [`U_TEST_SAMPLES_MIN`] samples on each side, a
//! two-sided Mann–Whitney U test at [`ALPHA`]; with fewer (where the U test can never reach
//! 5%), the min..max ranges of the two sides must not overlap. Figures with one value (peak
//! memory) use the 2% threshold alone.

use std::fmt::Write as _;

use crate::report::{Figures, Report, Run, TraversalInfo};
use crate::stats::{mann_whitney, Summary};

/// The significance level of the U test.
pub const ALPHA: f64 = 0.05;
/// The smallest relative change of the median that can be called a change.
pub const EFFECT_MIN: f64 = 0.02;
/// The fewest samples per side for the U test; fewer use non-overlapping ranges.
pub const U_TEST_SAMPLES_MIN: usize = 4;

/// Which way a figure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    /// Time: lower is faster.
    Lower,
    /// Rates of work (edges/s, paths/s): higher is faster.
    Higher,
    /// Neither (memory traffic, memory): reported as higher or lower.
    Neither,
}

/// The verdict on one figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    Higher,
    Lower,
    NoSignificantChange,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Higher => "higher",
            Verdict::Lower => "lower",
            Verdict::NoSignificantChange => "no significant change",
        }
    }
}

/// How the verdict was reached.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Evidence {
    /// The U test's two-sided p-value (and whether it was exact).
    UTest { p_value: f64, exact: bool },
    /// Too few samples for the U test: whether the min..max ranges overlap.
    Ranges { overlap: bool },
    /// One value per side: the effect threshold alone.
    OneValue,
}

impl Evidence {
    fn text(self) -> String {
        match self {
            Evidence::UTest { p_value, exact } => {
                format!(
                    "U test p={p_value:.3}{}",
                    if exact { "" } else { " (normal)" }
                )
            }
            Evidence::Ranges { overlap: true } => "ranges overlap".into(),
            Evidence::Ranges { overlap: false } => "ranges apart".into(),
            Evidence::OneValue => "one value".into(),
        }
    }
}

/// One compared figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Empty for a single-run report; `dataset k=K` for a ksweep point.
    pub scope: String,
    pub figure: &'static str,
    pub baseline_median: f64,
    pub after_median: f64,
    pub delta_percent: f64,
    pub verdict: Verdict,
    pub evidence: Evidence,
}

/// The whole comparison.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Differences that make the comparison doubtful (machine, threads, dataset, revision...).
    pub warnings: Vec<String>,
    /// Differences that are presumably the point (engine settings).
    pub notes: Vec<String>,
    pub rows: Vec<Row>,
}

impl Comparison {
    /// Whether any speed figure got significantly slower.
    pub fn any_slower(&self) -> bool {
        self.rows.iter().any(|row| row.verdict == Verdict::Slower)
    }
}

/// Decides one figure with samples.
pub fn decide(baseline: &Summary, after: &Summary, better: Better) -> (Verdict, Evidence, f64) {
    let delta = relative_change(baseline.median, after.median);
    let evidence = if baseline.samples.len() >= U_TEST_SAMPLES_MIN
        && after.samples.len() >= U_TEST_SAMPLES_MIN
    {
        let test = mann_whitney(&baseline.samples, &after.samples);
        Evidence::UTest {
            p_value: test.p_value,
            exact: test.exact,
        }
    } else if baseline.samples.len() <= 1 && after.samples.len() <= 1 {
        Evidence::OneValue
    } else {
        Evidence::Ranges {
            overlap: after.min <= baseline.max && baseline.min <= after.max,
        }
    };
    let evidence_holds = match evidence {
        Evidence::UTest { p_value, .. } => p_value < ALPHA,
        Evidence::Ranges { overlap } => !overlap,
        Evidence::OneValue => true,
    };
    let significant = evidence_holds && delta.abs() >= EFFECT_MIN;
    (verdict(significant, delta, better), evidence, delta * 100.0)
}

fn relative_change(baseline: f64, after: f64) -> f64 {
    if baseline == 0.0 {
        if after == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(after)
        }
    } else {
        (after - baseline) / baseline.abs()
    }
}

fn verdict(significant: bool, delta: f64, better: Better) -> Verdict {
    if !significant {
        return Verdict::NoSignificantChange;
    }
    match (better, delta > 0.0) {
        (Better::Lower, true) | (Better::Higher, false) => Verdict::Slower,
        (Better::Lower, false) | (Better::Higher, true) => Verdict::Faster,
        (Better::Neither, true) => Verdict::Higher,
        (Better::Neither, false) => Verdict::Lower,
    }
}

/// Compares two reports.
pub fn compare(baseline: &Report, after: &Report) -> Comparison {
    let mut comparison = Comparison {
        warnings: warnings(baseline, after),
        notes: setting_notes(baseline, after),
        rows: Vec::new(),
    };
    compare_figures("", &baseline.figures, &after.figures, &mut comparison.rows);
    for run in &baseline.runs {
        let Some(other) = after
            .runs
            .iter()
            .find(|r| r.dataset == run.dataset && r.k == run.k)
        else {
            comparison
                .warnings
                .push(format!("{}: only in the baseline", run_scope(run)));
            continue;
        };
        if run.answer != other.answer {
            comparison
                .warnings
                .push(format!("{}: the answers differ", run_scope(run)));
        }
        let work = work_warning(
            &run_scope(run),
            run.traversal.as_ref(),
            other.traversal.as_ref(),
        );
        comparison.warnings.extend(work);
        compare_figures(
            &run_scope(run),
            &run.figures,
            &other.figures,
            &mut comparison.rows,
        );
    }
    comparison
}

fn run_scope(run: &Run) -> String {
    format!("{} k={}", run.dataset, run.k)
}

fn compare_figures(scope: &str, baseline: &Figures, after: &Figures, rows: &mut Vec<Row>) {
    let sampled: [(&'static str, &Option<Summary>, &Option<Summary>, Better); 10] = [
        ("time_s", &baseline.time_s, &after.time_s, Better::Lower),
        (
            "edges_per_s",
            &baseline.edges_per_s,
            &after.edges_per_s,
            Better::Higher,
        ),
        (
            "paths_per_s",
            &baseline.paths_per_s,
            &after.paths_per_s,
            Better::Higher,
        ),
        (
            "llc_loads_per_s",
            &baseline.llc_loads_per_s,
            &after.llc_loads_per_s,
            Better::Neither,
        ),
        (
            "ops_per_s",
            &baseline.ops_per_s,
            &after.ops_per_s,
            Better::Higher,
        ),
        (
            "latency_us_p50",
            &baseline.latency_us_p50,
            &after.latency_us_p50,
            Better::Lower,
        ),
        (
            "latency_us_p99",
            &baseline.latency_us_p99,
            &after.latency_us_p99,
            Better::Lower,
        ),
        (
            "latency_us_p999",
            &baseline.latency_us_p999,
            &after.latency_us_p999,
            Better::Lower,
        ),
        (
            "latency_us_max",
            &baseline.latency_us_max,
            &after.latency_us_max,
            Better::Lower,
        ),
        (
            "slowdown",
            &baseline.slowdown,
            &after.slowdown,
            Better::Lower,
        ),
    ];
    for (figure, base, next, better) in sampled {
        if let (Some(base), Some(next)) = (base, next) {
            let (verdict, evidence, delta_percent) = decide(base, next, better);
            rows.push(Row {
                scope: scope.to_string(),
                figure,
                baseline_median: base.median,
                after_median: next.median,
                delta_percent,
                verdict,
                evidence,
            });
        }
    }
    let single: [(&'static str, Option<u64>, Option<u64>); 2] = [
        (
            "peak_rss_bytes",
            baseline.peak_rss_bytes,
            after.peak_rss_bytes,
        ),
        (
            "query_memory_peak_bytes",
            baseline.query_memory_peak_bytes,
            after.query_memory_peak_bytes,
        ),
    ];
    for (figure, base, next) in single {
        if let (Some(base), Some(next)) = (base, next) {
            let (base, next) = (Summary::of(&[base as f64]), Summary::of(&[next as f64]));
            let (verdict, evidence, delta_percent) = decide(&base, &next, Better::Neither);
            rows.push(Row {
                scope: scope.to_string(),
                figure,
                baseline_median: base.median,
                after_median: next.median,
                delta_percent,
                verdict,
                evidence,
            });
        }
    }
}

/// What differs between the two runs besides the change under test.
fn warnings(baseline: &Report, after: &Report) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut differ = |what: &str, before: String, now: String| {
        if before != now {
            warnings.push(format!("{what} differs: {before} -> {now}"));
        }
    };
    differ(
        "workload",
        baseline.workload.clone(),
        after.workload.clone(),
    );
    differ("query", baseline.query.clone(), after.query.clone());
    let machine = |r: &Report| {
        let m = &r.machine;
        format!(
            "{}, {} cores, {} bytes, {}, kernel {}",
            m.cpu, m.logical_cores, m.memory_bytes, m.os, m.kernel
        )
    };
    differ("machine", machine(baseline), machine(after));
    differ(
        "threads",
        baseline.settings.threads.to_string(),
        after.settings.threads.to_string(),
    );
    let dataset = |r: &Report| {
        let names: Vec<String> = if r.datasets.is_empty() {
            vec![dataset_text(&r.dataset)]
        } else {
            r.datasets.iter().map(dataset_text).collect()
        };
        names.join("; ")
    };
    differ("dataset", dataset(baseline), dataset(after));
    differ(
        "git revision",
        baseline.git_rev.clone(),
        after.git_rev.clone(),
    );
    differ(
        "hardware counters",
        baseline.hardware_counters.clone(),
        after.hardware_counters.clone(),
    );
    if baseline.runs.is_empty() && baseline.answer != after.answer {
        warnings.push("the answers differ".to_string());
    }
    if let Some(warning) = work_warning("", baseline.traversal.as_ref(), after.traversal.as_ref()) {
        warnings.push(warning);
    }
    warnings
}

/// A warning when the engine did different work (another algorithm, or edges scanned that
/// differ by more than the effect threshold): rates such as edges/s then compare unlike work.
fn work_warning(
    scope: &str,
    baseline: Option<&TraversalInfo>,
    after: Option<&TraversalInfo>,
) -> Option<String> {
    let (Some(before), Some(now)) = (baseline, after) else {
        return None;
    };
    let edges_change = relative_change(before.edges_scanned as f64, now.edges_scanned as f64);
    if before.algorithm == now.algorithm && edges_change.abs() < EFFECT_MIN {
        return None;
    }
    let prefix = if scope.is_empty() {
        String::new()
    } else {
        format!("{scope}: ")
    };
    Some(format!(
        "{prefix}the engine did different work ({}, {} edges scanned -> {}, {} edges \
         scanned): edges_per_s compares unlike work",
        before.algorithm, before.edges_scanned, now.algorithm, now.edges_scanned
    ))
}

fn dataset_text(info: &crate::report::DatasetInfo) -> String {
    format!("{} ({} nodes, {} edges)", info.name, info.nodes, info.edges)
}

/// Engine settings that differ (presumably what is being compared).
fn setting_notes(baseline: &Report, after: &Report) -> Vec<String> {
    let (before, now) = (&baseline.settings, &after.settings);
    let mut notes = Vec::new();
    if before.k != now.k {
        notes.push(format!("k: {} -> {}", before.k, now.k));
    }
    if before.repeat != now.repeat {
        notes.push(format!("repeat: {} -> {}", before.repeat, now.repeat));
    }
    let names: std::collections::BTreeSet<&String> =
        before.set.keys().chain(now.set.keys()).collect();
    for name in names {
        let (old, new) = (before.set.get(name), now.set.get(name));
        if old != new {
            let show = |v: Option<&String>| v.map_or("(default)".to_string(), Clone::clone);
            notes.push(format!("set {name}: {} -> {}", show(old), show(new)));
        }
    }
    notes
}

/// The comparison as text: warnings, notes, then one aligned line per figure.
pub fn render(comparison: &Comparison) -> String {
    let mut text = String::new();
    for warning in &comparison.warnings {
        let _ = writeln!(text, "warning: {warning}");
    }
    for note in &comparison.notes {
        let _ = writeln!(text, "setting: {note}");
    }
    if comparison.rows.is_empty() {
        text.push_str("no figure is present in both reports\n");
        return text;
    }
    let header = [
        "scope", "figure", "baseline", "after", "delta", "verdict", "evidence",
    ];
    let mut table: Vec<[String; 7]> = vec![header.map(String::from)];
    for row in &comparison.rows {
        table.push([
            if row.scope.is_empty() {
                "-".into()
            } else {
                row.scope.clone()
            },
            row.figure.to_string(),
            format_number(row.baseline_median),
            format_number(row.after_median),
            format!("{:+.1}%", row.delta_percent),
            row.verdict.text().to_string(),
            row.evidence.text(),
        ]);
    }
    text.push_str(&crate::print::aligned(&table));
    text
}

/// A number with about four significant digits.
pub fn format_number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude == 0.0 {
        "0".into()
    } else if !(1e-3..1e6).contains(&magnitude) {
        format!("{value:.3e}")
    } else if magnitude >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample_report;
    use crate::report::KSetting;

    fn summary(samples: &[f64]) -> Summary {
        Summary::of(samples)
    }

    #[test]
    fn clear_speedup_with_five_samples_is_faster() {
        let base = summary(&[1.00, 1.01, 1.02, 0.99, 1.005]);
        let after = summary(&[0.80, 0.81, 0.79, 0.805, 0.82]);
        let (verdict, evidence, delta) = decide(&base, &after, Better::Lower);
        assert_eq!(verdict, Verdict::Faster);
        assert!(matches!(evidence, Evidence::UTest { p_value, exact: true } if p_value < 0.01));
        assert!((delta - -20.0).abs() < 0.5);
        let (slower, _, _) = decide(&after, &base, Better::Lower);
        assert_eq!(slower, Verdict::Slower);
        // The same samples as rates: higher is faster.
        let (rate, _, _) = decide(&after, &base, Better::Higher);
        assert_eq!(rate, Verdict::Faster);
        let (traffic, _, _) = decide(&after, &base, Better::Neither);
        assert_eq!(traffic, Verdict::Higher);
    }

    #[test]
    fn overlapping_noise_is_no_change() {
        let base = summary(&[1.0, 1.3, 0.9, 1.2, 1.1]);
        let after = summary(&[1.05, 1.25, 0.95, 1.15, 1.0]);
        let (verdict, _, _) = decide(&base, &after, Better::Lower);
        assert_eq!(verdict, Verdict::NoSignificantChange);
    }

    #[test]
    fn tiny_but_consistent_changes_are_below_the_minimum_effect() {
        let base = summary(&[1.000, 1.001, 1.002, 1.003, 1.004]);
        let after = summary(&[0.990, 0.991, 0.992, 0.993, 0.994]);
        let (verdict, evidence, _) = decide(&base, &after, Better::Lower);
        assert!(matches!(evidence, Evidence::UTest { p_value, .. } if p_value < 0.05));
        assert_eq!(
            verdict,
            Verdict::NoSignificantChange,
            "1% is below the 2% minimum"
        );
    }

    #[test]
    fn few_samples_use_ranges() {
        let base = summary(&[1.0, 1.1]);
        let apart = summary(&[0.5, 0.6]);
        let (verdict, evidence, _) = decide(&base, &apart, Better::Lower);
        assert_eq!(evidence, Evidence::Ranges { overlap: false });
        assert_eq!(verdict, Verdict::Faster);
        let touching = summary(&[0.5, 1.0]);
        let (verdict, evidence, _) = decide(&base, &touching, Better::Lower);
        assert_eq!(evidence, Evidence::Ranges { overlap: true });
        assert_eq!(verdict, Verdict::NoSignificantChange);
        let (one, evidence, _) = decide(&summary(&[100.0]), &summary(&[150.0]), Better::Neither);
        assert_eq!(evidence, Evidence::OneValue);
        assert_eq!(one, Verdict::Higher);
    }

    #[test]
    fn reports_compare_figure_by_figure_with_warnings() {
        let baseline = sample_report(&[1.0, 1.01, 0.99, 1.0, 1.02]);
        let mut after = sample_report(&[1.5, 1.51, 1.49, 1.5, 1.52]);
        after.settings.threads = 1;
        after.git_rev = "def5678-dirty".into();
        after
            .settings
            .set
            .insert("prefetch_distance".into(), "0".into());
        let comparison = compare(&baseline, &after);
        let time = comparison
            .rows
            .iter()
            .find(|r| r.figure == "time_s")
            .unwrap();
        assert_eq!(time.verdict, Verdict::Slower);
        let edges = comparison
            .rows
            .iter()
            .find(|r| r.figure == "edges_per_s")
            .unwrap();
        assert_eq!(edges.verdict, Verdict::Slower);
        assert!(comparison.any_slower());
        assert!(comparison
            .rows
            .iter()
            .all(|r| r.figure != "llc_loads_per_s"));
        let warnings = comparison.warnings.join("\n");
        assert!(warnings.contains("threads differs: 2 -> 1"), "{warnings}");
        assert!(warnings.contains("git revision differs"), "{warnings}");
        assert!(!warnings.contains("machine"), "{warnings}");
        assert_eq!(
            comparison.notes,
            vec!["set prefetch_distance: 8 -> 0".to_string()]
        );
        let text = render(&comparison);
        assert!(
            text.contains("slower") && text.contains("warning: threads"),
            "{text}"
        );
    }

    #[test]
    fn ksweep_runs_are_matched_by_dataset_and_k() {
        let mut baseline = sample_report(&[1.0]);
        let mut after = sample_report(&[1.0]);
        let run = |k: KSetting, times: &[f64]| Run {
            dataset: "g".into(),
            k,
            k_chosen: None,
            answer: serde_json::Value::Null,
            answer_checked: true,
            figures: Figures {
                time_s: Some(Summary::of(times)),
                ..Figures::default()
            },
            traversal: None,
            hardware_counts: None,
        };
        baseline.runs = vec![
            run(KSetting::Fixed(1), &[2.0, 2.1]),
            run(KSetting::Auto, &[1.0, 1.1]),
        ];
        after.runs = vec![run(KSetting::Auto, &[0.5, 0.6])];
        let comparison = compare(&baseline, &after);
        let auto = comparison
            .rows
            .iter()
            .find(|r| r.scope == "g k=auto")
            .unwrap();
        assert_eq!(auto.verdict, Verdict::Faster);
        assert!(comparison
            .warnings
            .iter()
            .any(|w| w == "g k=1: only in the baseline"));
    }

    #[test]
    fn different_work_is_a_warning() {
        let traversal = |algorithm: &str, edges_scanned: u64| TraversalInfo {
            algorithm: algorithm.into(),
            threads: 2,
            max_active_sources: 1,
            k_reason: String::new(),
            sources: 1,
            edges_scanned,
            cas_failures: 0,
            time_s: 0.0,
            levels: Vec::new(),
        };
        let same = work_warning(
            "",
            Some(&traversal("BFS", 100)),
            Some(&traversal("BFS", 101)),
        );
        assert_eq!(same, None);
        let more = work_warning(
            "",
            Some(&traversal("BFS", 100)),
            Some(&traversal("BFS", 200)),
        );
        assert!(more.unwrap().contains("100 edges scanned -> BFS, 200"));
        let other = work_warning(
            "g k=1",
            Some(&traversal("BFS", 100)),
            Some(&traversal("MS", 100)),
        );
        assert!(other
            .unwrap()
            .starts_with("g k=1: the engine did different work"));
        assert_eq!(work_warning("", None, Some(&traversal("BFS", 1))), None);
    }

    #[test]
    fn numbers_format_compactly() {
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(0.012_345), "0.0123");
        assert_eq!(format_number(1234.5), "1234");
        assert_eq!(format_number(12_345_678.0), "1.235e7");
    }
}

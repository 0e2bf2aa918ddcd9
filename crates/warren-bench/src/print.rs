//! A report as text for the terminal: what ran, whether the answer was checked, the figures,
//! and for ksweep the table of every (dataset, k) point with auto against the best fixed k.

use std::fmt::Write as _;

use crate::compare::format_number;
use crate::ksweep::AUTO_OVER_BEST_GOAL;
use crate::report::{Figures, Report};
use crate::stats::Summary;

/// Rows of cells as left-aligned columns separated by two spaces.
pub fn aligned<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for row in rows {
        let mut line = String::new();
        for (index, cell) in row.iter().enumerate() {
            if index + 1 == N {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<width$}  ", width = widths[index]);
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// The whole report as text.
pub fn report_text(report: &Report) -> String {
    let mut text = String::new();
    let datasets = if report.datasets.is_empty() {
        vec![&report.dataset]
    } else {
        report.datasets.iter().collect()
    };
    let _ = writeln!(
        text,
        "{} | threads {} | k {} | repeat {} | git {}",
        report.workload,
        report.settings.threads,
        report.settings.k,
        report.settings.repeat,
        report.git_rev
    );
    for dataset in datasets {
        let _ = writeln!(
            text,
            "dataset {}: {} nodes, {} edges ({})",
            dataset.name, dataset.nodes, dataset.edges, dataset.db
        );
    }
    if !report.settings.set.is_empty() {
        let set: Vec<String> = report
            .settings
            .set
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        let _ = writeln!(text, "set: {}", set.join(", "));
    }
    let _ = writeln!(text, "query: {}", report.query);
    let _ = writeln!(text, "hardware counters: {}", report.hardware_counters);
    let verdict = if report.answer_checked {
        "checked"
    } else {
        "NOT checked"
    };
    let _ = writeln!(text, "answer {verdict}: {}", report.check);
    if report.workload == "writes" {
        text.push_str(&crate::writes::table(report));
    } else if report.workload == "wire" {
        text.push_str(&crate::wire::table(report));
    } else if report.workload == "vectors" {
        text.push_str(&crate::vectors::table(report));
    } else if report.runs.is_empty() {
        text.push_str(&figures_text(&report.figures));
        traversal_text(report, &mut text);
    } else {
        text.push_str(&runs_text(report));
        ksweep_text(report, &mut text);
        if let Some(peak) = report.figures.peak_rss_bytes {
            let _ = writeln!(text, "peak RSS (whole sweep): {}", bytes_text(peak));
        }
    }
    text
}

fn summary_cells(summary: &Summary) -> [String; 3] {
    [
        format_number(summary.median),
        format_number(summary.min),
        format_number(summary.max),
    ]
}

fn figures_text(figures: &Figures) -> String {
    let mut rows = vec![["figure", "median", "min", "max"].map(String::from)];
    let sampled = [
        ("time_s", &figures.time_s),
        ("edges_per_s", &figures.edges_per_s),
        ("paths_per_s", &figures.paths_per_s),
        ("llc_loads_per_s", &figures.llc_loads_per_s),
    ];
    for (name, summary) in sampled {
        if let Some(summary) = summary {
            let [median, min, max] = summary_cells(summary);
            rows.push([name.to_string(), median, min, max]);
        }
    }
    let memory = [
        ("peak_rss_bytes", figures.peak_rss_bytes),
        ("query_memory_peak_bytes", figures.query_memory_peak_bytes),
    ];
    for (name, bytes) in memory {
        if let Some(bytes) = bytes {
            rows.push([
                name.to_string(),
                bytes.to_string(),
                bytes_text(bytes),
                String::new(),
            ]);
        }
    }
    aligned(&rows)
}

fn traversal_text(report: &Report, text: &mut String) {
    match &report.traversal {
        None => text.push_str("traversal: the engine reported none\n"),
        Some(t) => {
            let _ = writeln!(
                text,
                "traversal: {} | threads {} | k {} ({}) | sources {} | edges scanned {} | \
                 CAS failures {} | {} levels",
                t.algorithm,
                t.threads,
                t.max_active_sources,
                t.k_reason,
                t.sources,
                t.edges_scanned,
                t.cas_failures,
                t.levels.len()
            );
        }
    }
}

fn runs_text(report: &Report) -> String {
    let proxy = if report
        .runs
        .iter()
        .all(|r| r.figures.llc_loads_per_s.is_some())
    {
        "llc_loads/s"
    } else {
        "edges_scanned/s"
    };
    let header = [
        "dataset",
        "k",
        "k chosen",
        "time_s median",
        "min",
        "max",
        proxy,
        "checked",
    ];
    let mut rows = vec![header.map(String::from)];
    for run in &report.runs {
        let time = run.figures.time_s.as_ref().map(summary_cells);
        let [median, min, max] = time.unwrap_or_else(|| ["-".into(), "-".into(), "-".into()]);
        let traffic = if proxy == "llc_loads/s" {
            &run.figures.llc_loads_per_s
        } else {
            &run.figures.edges_per_s
        };
        rows.push([
            run.dataset.clone(),
            run.k.to_string(),
            run.k_chosen.map_or("-".into(), |k| k.to_string()),
            median,
            min,
            max,
            traffic
                .as_ref()
                .map_or("-".into(), |s| format_number(s.median)),
            if run.answer_checked { "yes" } else { "no" }.into(),
        ]);
    }
    aligned(&rows)
}

fn ksweep_text(report: &Report, text: &mut String) {
    for summary in &report.ksweep {
        let goal = if summary.auto_over_best <= AUTO_OVER_BEST_GOAL {
            "within"
        } else {
            "OUTSIDE"
        };
        let _ = writeln!(
            text,
            "{}: best fixed k={} {} s; auto chose k={} {} s; auto/best {:.3} ({goal} the {:.0}% goal)",
            summary.dataset,
            summary.best_k,
            format_number(summary.best_time_s),
            summary.auto_k.map_or("?".into(), |k| k.to_string()),
            format_number(summary.auto_time_s),
            summary.auto_over_best,
            (AUTO_OVER_BEST_GOAL - 1.0) * 100.0
        );
    }
}

/// Bytes in binary units.
pub fn bytes_text(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample_report;

    #[test]
    fn columns_align() {
        let rows = [
            ["a".to_string(), "bb".to_string()],
            ["ccc".to_string(), "d".to_string()],
        ];
        assert_eq!(aligned(&rows), "a    bb\nccc  d\n");
    }

    #[test]
    fn bytes_in_binary_units() {
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(1536), "1.5 KiB");
        assert_eq!(bytes_text(3 << 30), "3.0 GiB");
    }

    #[test]
    fn report_text_shows_figures_and_check() {
        let report = sample_report(&[1.0, 2.0, 3.0]);
        let text = report_text(&report);
        assert!(text.contains("answer checked: rows"), "{text}");
        assert!(text.contains("time_s"), "{text}");
        assert!(
            text.contains("traversal: the engine reported none"),
            "{text}"
        );
        assert!(text.contains("set: prefetch_distance=8"), "{text}");
    }
}

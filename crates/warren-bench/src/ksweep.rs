//! The `ksweep` workload: sp64 at every fixed k of a list and at `auto`, on every database
//! given; per dataset, the best fixed k against the engine's own choice (the project's goal:
//! auto within 10% of the best fixed k).

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::bench::{database_at, new_report, reference_answer, settings_info, Header};
use crate::check::{judge, Reference};
use crate::counters::HardwareCounters;
use crate::dataset;
use crate::error::BenchResult;
use crate::machine;
use crate::measure::measure;
use crate::query::BenchQuery;
use crate::report::{KSetting, KSweepSummary, Report, Run};
use crate::workload::BenchOptions;

/// The goal for auto's median time over the best fixed k's.
pub const AUTO_OVER_BEST_GOAL: f64 = 1.10;

pub fn run(
    options: &BenchOptions,
    counters: &mut HardwareCounters,
    header: &Header,
) -> BenchResult<(Report, Option<String>)> {
    let query = options.query().expect("ksweep runs sp64");
    let mut runs = Vec::new();
    let mut datasets = Vec::new();
    let mut answers = BTreeMap::new();
    let mut mismatch = None;
    let mut all_checked = true;
    let mut threads = 0;
    for index in 0..options.databases.len() {
        let (db, dir) = database_at(options, index);
        let opened = dataset::open(db, dir)?;
        let mut conn = opened.database.connect();
        options.configure(&mut conn, KSetting::Auto)?;
        threads = conn.settings().threads;
        let reference = reference_answer(options, &mut conn, &query)?;
        machine::reset_peak_rss();
        for k in sweep_points(&options.k_values) {
            options.configure(&mut conn, k)?;
            let (mut point, point_mismatch) =
                measure_point(options, &mut conn, &query, counters, &reference, k)?;
            point.dataset.clone_from(&opened.info.name);
            all_checked &= point.answer_checked;
            if mismatch.is_none() {
                mismatch = point_mismatch.map(|m| format!("{} at k={k}: {m}", point.dataset));
            }
            if k == KSetting::Auto {
                answers.insert(point.dataset.clone(), point.answer.clone());
            }
            runs.push(point);
        }
        datasets.push(opened.info);
    }
    let mut report = new_report(
        options,
        header,
        &query.text(),
        datasets[0].clone(),
        settings_info(options, threads, KSetting::Auto),
    );
    report.ksweep = summarize(&runs);
    report.datasets = datasets;
    report.answer = Json::Object(answers.into_iter().collect());
    report.answer_checked = all_checked;
    report.check = format!(
        "every (dataset, k) run: {}",
        if options.check {
            query.check_description()
        } else {
            "not checked (--no-check)"
        }
    );
    report.runs = runs;
    Ok((report, mismatch))
}

/// The fixed k values in the given order, then `auto`.
fn sweep_points(k_values: &[usize]) -> Vec<KSetting> {
    k_values
        .iter()
        .map(|&k| KSetting::Fixed(k))
        .chain([KSetting::Auto])
        .collect()
}

/// Measures one k; the run's dataset name is filled in by the caller.
fn measure_point(
    options: &BenchOptions,
    conn: &mut warren::Connection,
    query: &BenchQuery,
    counters: &mut HardwareCounters,
    reference: &Reference,
    k: KSetting,
) -> BenchResult<(Run, Option<String>)> {
    let measurement = measure(conn, query, counters, options.repeat)?;
    let checked = judge(
        measurement.consistent_answer(),
        reference,
        query.check_description(),
    );
    let run = Run {
        dataset: String::new(),
        k,
        k_chosen: measurement.k_chosen(),
        answer: checked.answer,
        answer_checked: checked.answer_checked,
        figures: measurement.figures(),
        traversal: measurement.traversal(),
        hardware_counts: measurement.last_counts(),
    };
    Ok((run, checked.mismatch))
}

fn median_time_s(run: &Run) -> f64 {
    run.figures
        .time_s
        .as_ref()
        .expect("every ksweep run is timed")
        .median
}

/// Per dataset (in run order): the fixed k with the lowest median time, and auto against it.
pub fn summarize(runs: &[Run]) -> Vec<KSweepSummary> {
    let mut names: Vec<&str> = Vec::new();
    for run in runs {
        if !names.contains(&run.dataset.as_str()) {
            names.push(&run.dataset);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let of_dataset = runs.iter().filter(|r| r.dataset == name);
            let best = of_dataset
                .clone()
                .filter_map(|r| match r.k {
                    KSetting::Fixed(k) => Some((k, median_time_s(r))),
                    KSetting::Auto => None,
                })
                .min_by(|a, b| a.1.total_cmp(&b.1))?;
            let auto = of_dataset.clone().find(|r| r.k == KSetting::Auto)?;
            let auto_time_s = median_time_s(auto);
            Some(KSweepSummary {
                dataset: name.to_string(),
                best_k: best.0,
                best_time_s: best.1,
                auto_k: auto.k_chosen,
                auto_time_s,
                auto_over_best: auto_time_s / best.1,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample_run as run;

    #[test]
    fn sweep_ends_with_auto() {
        assert_eq!(
            sweep_points(&[1, 4]),
            vec![KSetting::Fixed(1), KSetting::Fixed(4), KSetting::Auto]
        );
    }

    #[test]
    fn summary_finds_the_best_fixed_k_per_dataset() {
        let runs = vec![
            run("dense", KSetting::Fixed(1), Some(1), 4.0),
            run("dense", KSetting::Fixed(4), Some(4), 2.0),
            run("dense", KSetting::Fixed(64), Some(64), 3.0),
            run("dense", KSetting::Auto, Some(4), 2.1),
            run("sparse", KSetting::Fixed(1), Some(1), 8.0),
            run("sparse", KSetting::Fixed(64), Some(64), 1.0),
            run("sparse", KSetting::Auto, None, 1.5),
        ];
        let summary = summarize(&runs);
        assert_eq!(summary.len(), 2);
        assert_eq!(summary[0].dataset, "dense");
        assert_eq!(summary[0].best_k, 4);
        assert_eq!(summary[0].auto_k, Some(4));
        assert!((summary[0].auto_over_best - 1.05).abs() < 1e-12);
        assert_eq!(summary[1].best_k, 64);
        assert_eq!(summary[1].auto_k, None);
        assert!((summary[1].auto_over_best - 1.5).abs() < 1e-12);
    }
}

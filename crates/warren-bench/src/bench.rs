//! The entry point of `warren bench`: runs one workload as its options say, checks its answer,
//! writes the JSON report (also when the answer is wrong) and, for ksweep, the figure.

use std::path::{Path, PathBuf};

use crate::check::{judge, Reference};
use crate::counters::HardwareCounters;
use crate::dataset;
use crate::error::BenchResult;
use crate::machine::{self, Machine};
use crate::measure::measure;
use crate::query::BenchQuery;
use crate::report::{DatasetInfo, Figures, KSetting, Report, SettingsInfo, SCHEMA};
use crate::workload::{BenchOptions, Workload};
use crate::{ksweep, load, plot};

/// What a benchmark invocation produced.
#[derive(Debug)]
pub struct Outcome {
    pub report: Report,
    /// Why the invocation must exit non-zero (a wrong or unstable answer), after its report
    /// was written.
    pub mismatch: Option<String>,
    /// Files written and remarks, one line each.
    pub notes: Vec<String>,
}

/// The parts of a report that do not depend on the workload.
#[derive(Clone, Debug)]
pub struct Header {
    pub machine: Machine,
    pub git_rev: String,
    pub started_at: String,
    pub hardware_counters: String,
}

/// Runs the workload of `options`, writes its report to `options.output` and returns it.
pub fn run(options: &BenchOptions) -> BenchResult<Outcome> {
    options.validate()?;
    // Opened before any query, so that the counters also count the threads queries spawn.
    let mut counters = HardwareCounters::open();
    let header = Header {
        machine: Machine::current(),
        git_rev: machine::git_revision(),
        started_at: machine::now_rfc3339(),
        hardware_counters: counters.status(),
    };
    let (mut report, mismatch) = match options.workload {
        Workload::Ksweep => ksweep::run(options, &mut counters, &header)?,
        Workload::Load => load::run(options, &mut counters, &header)?,
        Workload::Writes => crate::writes::run(options, &header)?,
        Workload::Wire => crate::wire::run(options, &header)?,
        Workload::Serve => crate::serve::run(options, &header)?,
        Workload::Vectors => crate::vectors::run(options, &header)?,
        _ => run_query(options, &mut counters, &header)?,
    };
    report.figures.peak_rss_bytes = Some(machine::peak_rss_bytes());
    report.write(&options.output)?;
    let mut notes = vec![format!("wrote {}", options.output.display())];
    if options.workload == Workload::Serve {
        notes.insert(0, crate::serve::text(&report));
    }
    if let Some(path) = &options.plot {
        notes.extend(plot::draw_ksweep(&report, path)?);
    }
    Ok(Outcome {
        report,
        mismatch,
        notes,
    })
}

/// The `i`th database and its dataset folder, if any.
pub fn database_at(options: &BenchOptions, index: usize) -> (&Path, Option<&Path>) {
    (
        &options.databases[index],
        options.dataset_dirs.get(index).map(PathBuf::as_path),
    )
}

/// The reference answer of `query` on the opened database (`--no-check`: none).
pub fn reference_answer(
    options: &BenchOptions,
    conn: &mut warren::Connection,
    query: &BenchQuery,
) -> BenchResult<Reference> {
    if !options.check {
        return Ok(Reference::Skipped);
    }
    let graph = dataset::reference_graph(conn)?;
    Ok(match query.expected(&graph) {
        Ok(answer) => Reference::Computed(answer),
        Err(reason) => Reference::Failed(reason),
    })
}

/// sp64, sp1, allsp, varlen: one query on one database.
fn run_query(
    options: &BenchOptions,
    counters: &mut HardwareCounters,
    header: &Header,
) -> BenchResult<(Report, Option<String>)> {
    let query = options.query().expect("a query workload");
    let (db, dir) = database_at(options, 0);
    let opened = dataset::open(db, dir)?;
    let mut conn = opened.database.connect();
    options.configure(&mut conn, options.k)?;
    let reference = reference_answer(options, &mut conn, &query)?;
    // The reference graph is freed by now; the peak that follows is the workload's.
    machine::reset_peak_rss();
    let measurement = measure(&mut conn, &query, counters, options.repeat)?;
    let checked = judge(
        measurement.consistent_answer(),
        &reference,
        query.check_description(),
    );
    let mut report = new_report(
        options,
        header,
        &query.text(),
        opened.info,
        settings_info(options, conn.settings().threads, options.k),
    );
    report.answer = checked.answer;
    report.answer_checked = checked.answer_checked;
    report.check = checked.check;
    report.expected = checked.expected;
    report.traversal = measurement.traversal();
    report.figures = measurement.figures();
    report.hardware_counts = measurement.last_counts();
    Ok((report, checked.mismatch))
}

/// The settings a report records.
pub fn settings_info(options: &BenchOptions, threads: usize, k: KSetting) -> SettingsInfo {
    let varlen = (options.workload == Workload::Varlen).then_some(options.varlen);
    SettingsInfo {
        threads,
        k,
        set: options.engine_settings.iter().cloned().collect(),
        repeat: options.repeat,
        hops: varlen.map(|v| v.hops),
        sources: varlen.map(|v| v.sources),
        destinations: varlen.map(|v| v.destinations),
        paths: varlen.map(|v| v.paths),
        k_values: (options.workload == Workload::Ksweep).then(|| options.k_values.clone()),
    }
}

/// A report with the invocation's header and nothing measured yet.
pub fn new_report(
    options: &BenchOptions,
    header: &Header,
    query: &str,
    dataset: DatasetInfo,
    settings: SettingsInfo,
) -> Report {
    Report {
        schema: SCHEMA.to_string(),
        workload: options.workload.name().to_string(),
        query: query.to_string(),
        dataset,
        datasets: Vec::new(),
        settings,
        machine: header.machine.clone(),
        git_rev: header.git_rev.clone(),
        started_at: header.started_at.clone(),
        answer: serde_json::Value::Null,
        answer_checked: false,
        check: String::new(),
        expected: None,
        traversal: None,
        figures: Figures::default(),
        hardware_counters: header.hardware_counters.clone(),
        hardware_counts: None,
        runs: Vec::new(),
        ksweep: Vec::new(),
    }
}

//! The text `PROFILE` returns: the plan as a tree with each operator's rows and wall time
//! (inclusive, and self = inclusive minus its children), the query's totals, its hardware
//! counters (or why there are none), and the software counters of each recursive join; for
//! `PROFILE COPY`, the COPY's phases with their wall times.

use std::fmt::Write;
use std::time::Duration;

use warren_exec::operators::profiled::OperatorProfile;
use warren_exec::recursive::counters::TraversalSummary;
use warren_planner::explain::plan_lines;
use warren_planner::{BoundStatement, Plan};

use crate::hardware::Counts;

/// Everything one PROFILE measured.
pub(crate) struct ProfileReport<'a> {
    pub plan: &'a Plan,
    /// Per plan node in pre-order (see `warren_planner::explain::plan_lines`).
    pub operators: Vec<Option<OperatorProfile>>,
    pub result_rows: u64,
    pub compile_time: Duration,
    pub execution_time: Duration,
    pub peak_memory_bytes: u64,
    /// The counts, or why the kernel or platform gave none.
    pub hardware: Result<Counts, String>,
    pub traversals: Vec<TraversalSummary>,
}

impl ProfileReport<'_> {
    /// The report as multi-line text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write_operators(&mut out);
        self.write_totals(&mut out);
        self.write_hardware(&mut out);
        self.write_traversals(&mut out);
        out
    }

    fn write_operators(&self, out: &mut String) {
        let lines = plan_lines(self.plan);
        assert_eq!(
            lines.len(),
            self.operators.len(),
            "one profile per plan node, in the same order"
        );
        let _ = writeln!(
            out,
            "{:>12} {:>12} {:>12}  operator",
            "rows", "inclusive ms", "self ms"
        );
        for (line, operator) in lines.iter().zip(&self.operators) {
            let indent = "  ".repeat(line.depth);
            match operator {
                Some(op) => {
                    let _ = writeln!(
                        out,
                        "{:>12} {:>12} {:>12}  {indent}{}",
                        op.rows,
                        milliseconds(op.inclusive),
                        milliseconds(op.self_time),
                        line.text
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "{:>12} {:>12} {:>12}  {indent}{} (built per input row; in its parent's self time)",
                        "-", "-", "-", line.text
                    );
                }
            }
        }
        out.push_str("(wall time; a parallel operator's is its elapsed time, not its workers' summed CPU time)\n");
    }

    fn write_totals(&self, out: &mut String) {
        let _ = writeln!(out, "result rows: {}", self.result_rows);
        let _ = writeln!(out, "compile time: {} ms", milliseconds(self.compile_time));
        let _ = writeln!(
            out,
            "execution time: {} ms",
            milliseconds(self.execution_time)
        );
        let _ = writeln!(out, "peak query memory: {} bytes", self.peak_memory_bytes);
    }

    fn write_hardware(&self, out: &mut String) {
        let counts = match &self.hardware {
            Ok(counts) => counts,
            Err(reason) => {
                let _ = writeln!(out, "hardware counters: unavailable ({reason})");
                return;
            }
        };
        let _ = writeln!(
            out,
            "hardware counters (user space, all query threads): cycles {}, instructions {} \
             ({} per cycle), LLC loads {} ({}/s), LLC misses {} ({} of loads)",
            counts.cycles,
            counts.instructions,
            ratio(counts.instructions, counts.cycles),
            counts.llc_loads,
            per_second(counts.llc_loads, self.execution_time),
            counts.llc_misses,
            percent(counts.llc_misses, counts.llc_loads),
        );
    }

    fn write_traversals(&self, out: &mut String) {
        if self.traversals.is_empty() {
            let recursive = count_recursive(self.plan);
            if recursive == 0 {
                out.push_str("software counters: no recursive join\n");
            } else {
                let _ = writeln!(
                    out,
                    "software counters: none recorded by the {recursive} recursive join(s)"
                );
            }
            return;
        }
        for (index, traversal) in self.traversals.iter().enumerate() {
            write_traversal(out, index + 1, traversal);
        }
    }
}

fn write_traversal(out: &mut String, number: usize, t: &TraversalSummary) {
    let _ = writeln!(out, "recursive join {number}: {}", t.algorithm);
    let _ = writeln!(
        out,
        "  threads: {}, k (max active sources): {} ({})",
        t.threads, t.max_active_sources, t.k_reason
    );
    let _ = writeln!(
        out,
        "  sources: {}, edges scanned: {} ({} edges/s over {} ms), CAS failures: {}",
        t.sources,
        t.edges_scanned,
        per_second(t.edges_scanned, t.time),
        milliseconds(t.time),
        t.cas_failures
    );
    if t.levels.is_empty() {
        out.push_str("  levels: none recorded\n");
        return;
    }
    let _ = writeln!(
        out,
        "  {:>5} {:>12} {:>14} {:>9} {:>9} {:>10}",
        "level", "frontier", "edges scanned", "top-down", "bottom-up", "time ms"
    );
    for (index, level) in t.levels.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {:>5} {:>12} {:>14} {:>9} {:>9} {:>10}",
            index + 1,
            level.frontier,
            level.edges_scanned,
            level.top_down,
            level.bottom_up,
            milliseconds(level.time)
        );
    }
}

/// What kind of statement `statement` is, for PROFILE's refusal of everything but queries.
pub(crate) fn statement_kind(statement: &BoundStatement) -> &'static str {
    match statement {
        BoundStatement::Query(_) => "a query",
        BoundStatement::CreateNodeTable { .. } => "CREATE NODE TABLE",
        BoundStatement::CreateRelTable { .. } => "CREATE REL TABLE",
        BoundStatement::DropTable { .. } => "DROP TABLE",
        BoundStatement::AlterTable { .. } => "ALTER TABLE",
        BoundStatement::Copy { .. } | BoundStatement::CopyFromQuery { .. } => "COPY",
        BoundStatement::Setting { .. } => "CALL (a setting)",
        BoundStatement::ProjectedGraph(_) => "CALL (a projected graph)",
        BoundStatement::ClearWarnings => "CALL clear_warnings()",
        BoundStatement::CreateVectorIndex(_) => "CALL CREATE_VECTOR_INDEX",
        BoundStatement::DropVectorIndex { .. } => "CALL DROP_VECTOR_INDEX",
        BoundStatement::ReorderNodes { .. } => "CALL reorder_nodes",
        BoundStatement::Explain(_) => "EXPLAIN",
        BoundStatement::Profile(_) => "PROFILE",
        BoundStatement::Transaction(_) => "a transaction command",
    }
}

/// Recursive joins in `plan` (the operator tree's, not those of per-row subqueries).
fn count_recursive(plan: &Plan) -> usize {
    let own = usize::from(matches!(plan, Plan::Recursive(_)));
    own + plan
        .children()
        .into_iter()
        .map(count_recursive)
        .sum::<usize>()
}

/// `PROFILE COPY`'s text: the rows copied, each phase's wall time and the process's CPU time
/// in it (all threads; `-` for a direction's CSR, built at the same time as the other), in the
/// order they ran, and the statement's wall time.
pub(crate) fn copy_report(
    summary: &warren_storage::import::CopySummary,
    total: Duration,
) -> String {
    let title = format!("COPY {}: {} rows", summary.table, summary.rows);
    phases_report(&title, &summary.phases, total)
}

/// `PROFILE CALL reorder_nodes(...)`: the reorder's phases, as COPY's are shown.
pub(crate) fn reorder_report(
    summary: &warren_storage::reorder::ReorderSummary,
    total: Duration,
) -> String {
    let title = format!(
        "reorder_nodes {}: {} rows, {} rel tables",
        summary.table, summary.rows, summary.rel_pairs
    );
    phases_report(&title, &summary.phases, total)
}

/// A title, then one line per phase (wall and CPU milliseconds), then the whole statement.
fn phases_report(
    title: &str,
    phases: &warren_storage::import::phases::CopyPhases,
    total: Duration,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{title}");
    let _ = writeln!(out, "{:>12} {:>12}  phase", "wall ms", "cpu ms");
    for (name, cost) in phases.iter() {
        let cpu = cost.cpu.map_or_else(|| "-".to_string(), milliseconds);
        let _ = writeln!(out, "{:>12} {cpu:>12}  {name}", milliseconds(cost.wall));
    }
    let _ = writeln!(
        out,
        "{:>12} {:>12}  the whole statement",
        milliseconds(total),
        "-"
    );
    out
}

fn milliseconds(time: Duration) -> String {
    format!("{:.3}", time.as_secs_f64() * 1e3)
}

/// `count / time` with an SI prefix (`12.3 M`), or `-` when no time passed.
fn per_second(count: u64, time: Duration) -> String {
    let seconds = time.as_secs_f64();
    if seconds <= 0.0 {
        return "-".into();
    }
    si(count as f64 / seconds)
}

fn si(value: f64) -> String {
    const PREFIXES: [(f64, &str); 3] = [(1e9, " G"), (1e6, " M"), (1e3, " k")];
    for (scale, prefix) in PREFIXES {
        if value >= scale {
            return format!("{:.1}{prefix}", value / scale);
        }
    }
    format!("{value:.1}")
}

fn ratio(numerator: u64, denominator: u64) -> String {
    if denominator == 0 {
        return "-".into();
    }
    format!("{:.2}", numerator as f64 / denominator as f64)
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

#[cfg(test)]
mod tests {
    use warren_exec::recursive::counters::LevelSummary;

    use super::*;

    fn report(plan: &Plan) -> ProfileReport<'_> {
        let operators = vec![
            Some(OperatorProfile {
                rows: 3,
                calls: 4,
                inclusive: Duration::from_micros(2500),
                self_time: Duration::from_micros(500),
            }),
            None,
        ];
        ProfileReport {
            plan,
            operators,
            result_rows: 3,
            compile_time: Duration::from_micros(100),
            execution_time: Duration::from_secs(1),
            peak_memory_bytes: 4096,
            hardware: Err("perf_event_open for cycles failed: no".into()),
            traversals: Vec::new(),
        }
    }

    fn plan() -> Plan {
        Plan::Filter {
            input: Box::new(Plan::Argument),
            predicate: warren_planner::expr::Expr::Literal(warren_common::Value::Bool(true)),
        }
    }

    #[test]
    fn operators_totals_and_unavailable_counters() {
        let plan = plan();
        let text = report(&plan).render();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("operator"));
        assert!(
            lines[1].contains(" 3 ") && lines[1].contains("2.500") && lines[1].contains("0.500")
        );
        assert!(lines[1].ends_with("Filter True"), "{}", lines[1]);
        assert!(
            lines[2].contains("  Argument (built per input row"),
            "{}",
            lines[2]
        );
        assert!(text.contains("result rows: 3\n"));
        assert!(text.contains("peak query memory: 4096 bytes\n"));
        assert!(text
            .contains("hardware counters: unavailable (perf_event_open for cycles failed: no)\n"));
        assert!(text.ends_with("software counters: no recursive join\n"));
    }

    #[test]
    fn hardware_counts_and_traversals() {
        let plan = plan();
        let mut report = report(&plan);
        report.hardware = Ok(Counts {
            cycles: 2000,
            instructions: 3000,
            llc_loads: 2_000_000,
            llc_misses: 500_000,
        });
        report.traversals = vec![TraversalSummary {
            algorithm: "BFS".into(),
            threads: 2,
            max_active_sources: 2,
            k_reason: "auto: sparse".into(),
            sources: 64,
            edges_scanned: 5_000_000,
            cas_failures: 7,
            time: Duration::from_millis(500),
            levels: vec![LevelSummary {
                frontier: 64,
                edges_scanned: 5_000_000,
                top_down: 64,
                bottom_up: 0,
                time: Duration::from_millis(500),
            }],
        }];
        let text = report.render();
        assert!(
            text.contains("instructions 3000 (1.50 per cycle)"),
            "{text}"
        );
        assert!(text.contains("LLC loads 2000000 (2.0 M/s), LLC misses 500000 (25.0% of loads)"));
        assert!(text.contains("recursive join 1: BFS\n"));
        assert!(text.contains("k (max active sources): 2 (auto: sparse)"));
        assert!(text.contains("edges scanned: 5000000 (10.0 M edges/s over 500.000 ms)"));
        assert!(text.contains("CAS failures: 7"));
        let last = text.lines().last().expect("level row");
        let cells: Vec<&str> = last.split_whitespace().collect();
        assert_eq!(cells, vec!["1", "64", "5000000", "64", "0", "500.000"]);
    }
}

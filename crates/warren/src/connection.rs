//! A connection: runs statements against a database with its own settings. Reading queries
//! stream their rows from the published snapshot; a statement that writes takes the database's
//! writer slot, runs to completion on the latest snapshot and commits (durably, before it
//! returns), or joins the connection's explicit transaction, which COMMIT persists and
//! ROLLBACK discards.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_cypher::ast::{Statement, TransactionCommand};
use warren_exec::{ExecContext, ExecSettings, Interrupt, WarningLog, WarningSink};
use warren_planner::binder::{ProjectedGraphs, Session};
use warren_planner::{BindSettings, BoundStatement, QueryPlan, UserFunction, UserFunctions};
use warren_storage::editor::Changes;
use warren_storage::import::CopyWarning;
use warren_storage::{Editor, Snapshot};

use crate::database::{Database, WriteLock};
use crate::progress::CopyBar;
use crate::result::QueryResult;
use crate::settings::Settings;

/// An explicit transaction: the snapshot its statements built so far and their changes.
#[derive(Debug)]
struct Transaction {
    base: u64,
    snapshot: Arc<Snapshot>,
    changes: Changes,
}

#[derive(Debug)]
pub struct Connection {
    db: Database,
    settings: Settings,
    transaction: Option<Transaction>,
    interrupt: Arc<AtomicBool>,
    working_dir: PathBuf,
    /// Graphs defined with `CALL PROJECT_GRAPH(...)`; they live as long as the connection.
    projected_graphs: ProjectedGraphs,
    /// The writer slot, held while an auto-committing write statement runs.
    write_lock: Option<WriteLock>,
    /// Scalar functions defined with [`Connection::create_function`].
    user_functions: UserFunctions,
    /// Statements run so far: the id of the next one is this plus one (`show_warnings()`'s
    /// `query_id`).
    statements_run: u64,
    /// The rows COPY and LOAD FROM skipped with `IGNORE_ERRORS`, with their statement's id (at
    /// most the `warning_limit` setting, as Kùzu keeps).
    warnings: Arc<WarningLog>,
    /// Statements parsed before, by their text: an application that sends the same statement
    /// with new parameters (a commit loop, a server) parses it once.
    parsed: HashMap<String, Arc<[Statement]>>,
}

/// The most statement texts a connection keeps parsed; the cache is emptied when full.
const PARSED_MAX: usize = 256;
/// Texts longer than this are parsed every time (scripts, big literals).
const PARSED_TEXT_BYTES_MAX: usize = 4096;

impl Connection {
    pub(crate) fn new(db: Database) -> Self {
        Self {
            db,
            settings: Settings::default(),
            transaction: None,
            interrupt: Arc::new(AtomicBool::new(false)),
            working_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            projected_graphs: ProjectedGraphs::default(),
            write_lock: None,
            user_functions: UserFunctions::default(),
            statements_run: 0,
            warnings: Arc::default(),
            parsed: HashMap::new(),
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// Sets `name` as `CALL name = value` would.
    pub fn set(&mut self, name: &str, value: Value) -> Result<()> {
        self.settings.set(name, &value)
    }

    /// Defines a scalar function that this connection's statements may call; Kùzu's catalog
    /// error when a function of that name exists.
    pub fn create_function(&mut self, function: Arc<dyn UserFunction>) -> Result<()> {
        self.user_functions.create(function)
    }

    /// Removes a function defined with [`Connection::create_function`].
    pub fn remove_function(&mut self, name: &str) -> Result<()> {
        self.user_functions.remove(name)
    }

    /// A flag that, once set from another thread, stops the running query.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    /// The snapshot this connection's next statement reads (its open transaction's, if any).
    pub fn database_snapshot(&self) -> Arc<Snapshot> {
        self.current_snapshot()
    }

    /// Relative COPY paths are resolved against this directory (the process's by default).
    pub fn set_working_dir(&mut self, dir: PathBuf) {
        self.working_dir = dir;
    }

    /// Runs every `;`-separated statement of `text` and returns the last result.
    pub fn query(&mut self, text: &str) -> Result<QueryResult> {
        self.query_with(text, &HashMap::new())
    }

    /// Like [`Connection::query`], with `$name` parameters.
    pub fn query_with(
        &mut self,
        text: &str,
        parameters: &HashMap<String, Value>,
    ) -> Result<QueryResult> {
        let statements = self.parse(text)?;
        let Some((last, rest)) = statements.split_last() else {
            return Err(Error::Syntax {
                message: "Connection Exception: Query is empty.".into(),
                position: warren_common::error::Position { line: 1, column: 1 },
            });
        };
        for statement in rest {
            let mut result = self.execute(statement, parameters)?;
            while result.next_row()?.is_some() {}
        }
        self.execute(last, parameters)
    }

    /// The statements of `text`, parsed once per connection for short texts.
    fn parse(&mut self, text: &str) -> Result<Arc<[Statement]>> {
        if let Some(statements) = self.parsed.get(text) {
            return Ok(statements.clone());
        }
        let statements: Arc<[Statement]> = warren_cypher::parse_script(text)?.into();
        if text.len() <= PARSED_TEXT_BYTES_MAX {
            if self.parsed.len() >= PARSED_MAX {
                self.parsed.clear();
            }
            self.parsed.insert(text.to_string(), statements.clone());
        }
        Ok(statements)
    }

    /// Runs every statement of a script, returning one result per statement.
    pub fn query_script(&mut self, text: &str) -> Result<Vec<QueryResult>> {
        let statements = warren_cypher::parse_script(text)?;
        let mut results = Vec::with_capacity(statements.len());
        for statement in &statements {
            results.push(self.execute(statement, &HashMap::new())?);
        }
        Ok(results)
    }

    fn current_snapshot(&self) -> Arc<Snapshot> {
        match (&self.transaction, &self.write_lock) {
            (Some(transaction), _) => transaction.snapshot.clone(),
            (None, Some(lock)) => lock.latest().clone(),
            (None, None) => self.db.snapshot(),
        }
    }

    fn bind_settings(&self) -> BindSettings {
        BindSettings {
            hops_max: self.settings.hops_max,
            default_semantic: self.settings.default_semantic,
            working_dir: match &self.settings.file_search_path {
                Some(dir) => self.working_dir.join(dir),
                None => self.working_dir.clone(),
            },
        }
    }

    fn exec_context(&self, snapshot: Arc<Snapshot>) -> ExecContext {
        self.interrupt.store(false, Ordering::Relaxed);
        let deadline = (self.settings.timeout_ms > 0)
            .then(|| Instant::now() + Duration::from_millis(self.settings.timeout_ms));
        let settings = ExecSettings {
            threads: self.settings.threads,
            limits: self.settings.limits(),
            engine: self.settings.engine.clone(),
        };
        ExecContext::new(
            snapshot,
            settings,
            Interrupt::new(deadline, self.interrupt.clone()),
        )
        .with_warnings(self.warning_sink())
        .with_vector_indexes(self.db.vector_indexes())
        .with_vector_copies(self.db.vector_copies())
        .with_search_states(self.db.search_states())
        .with_spread_states(self.db.spread_states())
        .with_workers(self.db.workers())
    }

    /// Where the statement running now records its warnings.
    fn warning_sink(&self) -> WarningSink {
        WarningSink {
            log: self.warnings.clone(),
            query_id: self.statements_run,
            limit: usize::try_from(self.settings.warning_limit).unwrap_or(usize::MAX),
        }
    }

    /// Runs one parsed statement.
    pub fn execute(
        &mut self,
        statement: &Statement,
        parameters: &HashMap<String, Value>,
    ) -> Result<QueryResult> {
        let started = Instant::now();
        let snapshot = self.current_snapshot();
        self.statements_run += 1;
        let session = SessionView {
            db: &self.db,
            settings: &self.settings,
            graphs: &self.projected_graphs,
            functions: &self.user_functions,
            warnings: &self.warnings,
        };
        let bound = warren_planner::bind_statement(
            statement,
            snapshot.catalog(),
            parameters,
            &self.bind_settings(),
            &session,
        )?;
        if self.transaction.is_some() || !writes(&bound) {
            return self.run(bound, snapshot, started);
        }
        // An auto-committing write runs alone, on the latest snapshot.
        let lock = self.db.begin_write()?;
        let latest = lock.latest().clone();
        self.write_lock = Some(lock);
        let result = self.run(bound, latest, started);
        self.write_lock = None;
        result
    }

    fn run(
        &mut self,
        bound: BoundStatement,
        snapshot: Arc<Snapshot>,
        started: Instant,
    ) -> Result<QueryResult> {
        match bound {
            BoundStatement::Query(plan) => self.run_query(plan, snapshot, started.elapsed()),
            BoundStatement::CreateNodeTable {
                name,
                properties,
                primary_key,
                if_not_exists,
            } => {
                if if_not_exists && snapshot.catalog().node_table(&name).is_some() {
                    return Ok(QueryResult::message(
                        format!("Table {name} already exists."),
                        snapshot,
                        started.elapsed(),
                    ));
                }
                let mut editor = Editor::new(snapshot);
                editor.create_node_table(&name, properties, &primary_key)?;
                self.commit_editor(editor)?;
                Ok(QueryResult::message(
                    format!("Table {name} has been created."),
                    self.current_snapshot(),
                    started.elapsed(),
                ))
            }
            BoundStatement::CreateRelTable {
                name,
                connections,
                properties,
                multiplicity,
                if_not_exists,
            } => {
                if if_not_exists && snapshot.catalog().rel_table(&name).is_some() {
                    return Ok(QueryResult::message(
                        format!("Table {name} already exists."),
                        snapshot,
                        started.elapsed(),
                    ));
                }
                let mut editor = Editor::new(snapshot);
                editor.create_rel_table(
                    &name,
                    &connections,
                    properties,
                    multiplicity.as_deref(),
                )?;
                self.commit_editor(editor)?;
                Ok(QueryResult::message(
                    format!("Table {name} has been created."),
                    self.current_snapshot(),
                    started.elapsed(),
                ))
            }
            BoundStatement::DropTable { name, if_exists } => {
                let exists = snapshot.catalog().node_table(&name).is_some()
                    || snapshot.catalog().rel_table(&name).is_some();
                if !exists && if_exists {
                    return Ok(QueryResult::message(
                        format!("Table {name} does not exist."),
                        snapshot,
                        started.elapsed(),
                    ));
                }
                let node_table = snapshot.catalog().node_table(&name).map(|t| t.id);
                let mut editor = Editor::new(snapshot);
                editor.drop_table(&name)?;
                self.commit_editor(editor)?;
                if let Some(id) = node_table {
                    self.db.vector_indexes().forget(id, None);
                }
                Ok(QueryResult::message(
                    format!("Table {name} has been dropped."),
                    self.current_snapshot(),
                    started.elapsed(),
                ))
            }
            BoundStatement::AlterTable { table, action } => {
                let message = self.alter_table(&table, action, snapshot)?;
                Ok(QueryResult::message(
                    message,
                    self.current_snapshot(),
                    started.elapsed(),
                ))
            }
            BoundStatement::CopyFromQuery {
                table,
                query,
                options,
            } => {
                let mut result = self.run_query(query, snapshot, Duration::ZERO)?;
                let rows = result.collect_rows()?;
                if options.reorder.is_some() {
                    self.refuse_reorder_in_transaction("COPY with REORDER")?;
                }
                let mut editor = Editor::new(self.current_snapshot());
                let summary =
                    warren_storage::import::copy_from_rows(&mut editor, &table, &rows, &options)?;
                self.commit_editor(editor)?;
                Ok(self.copied(summary, started))
            }
            BoundStatement::Copy {
                table,
                files,
                options,
            } => {
                let summary = self.copy_files(snapshot, &table, &files, &options)?;
                Ok(self.copied(summary, started))
            }
            BoundStatement::Setting { name, value } => {
                match self.db.set_setting(&name, &value) {
                    Some(result) => result?,
                    None => self.settings.set(&name, &value)?,
                }
                Ok(QueryResult::empty(snapshot))
            }
            BoundStatement::ProjectedGraph(command) => {
                self.projected_graphs.apply(command)?;
                Ok(QueryResult::empty(snapshot))
            }
            BoundStatement::ClearWarnings => {
                self.warnings.clear();
                Ok(QueryResult::empty(snapshot))
            }
            BoundStatement::CreateVectorIndex(index) => {
                let name = index.name.clone();
                let mut editor = Editor::new(snapshot);
                editor.create_vector_index(index.clone())?;
                self.commit_editor(editor)?;
                if self.transaction.is_none() {
                    self.build_and_persist(&index)?;
                }
                Ok(QueryResult::message(
                    format!("Index {name} has been created."),
                    self.current_snapshot(),
                    started.elapsed(),
                ))
            }
            BoundStatement::ReorderNodes { table, order } => {
                let summary = self.reorder_nodes(snapshot, &table, order)?;
                Ok(QueryResult::message(
                    format!(
                        "Table {} has been reordered in {} order: {} rows, {} rel tables rewritten.",
                        summary.table,
                        order.name(),
                        summary.rows,
                        summary.rel_pairs
                    ),
                    self.current_snapshot(),
                    started.elapsed(),
                ))
            }
            BoundStatement::DropVectorIndex { table, name } => {
                let table_id = snapshot.catalog().node_table(&table).map(|t| t.id);
                let mut editor = Editor::new(snapshot);
                editor.drop_vector_index(&table, &name)?;
                self.commit_editor(editor)?;
                if let Some(id) = table_id {
                    self.db.vector_indexes().forget(id, Some(&name));
                }
                if self.transaction.is_none() {
                    // The checkpoint's manifest no longer names the graph file: it is removed.
                    self.db.checkpoint()?;
                }
                Ok(QueryResult::message(
                    format!("Index {name} has been dropped."),
                    self.current_snapshot(),
                    started.elapsed(),
                ))
            }
            BoundStatement::Explain(inner) => {
                let text = match &*inner {
                    BoundStatement::Query(plan) => warren_planner::explain::plan_text(&plan.plan),
                    other => format!("{other:?}"),
                };
                Ok(QueryResult::materialized(
                    vec!["explain".into()],
                    vec![warren_common::LogicalType::String],
                    vec![vec![Value::string(text)]],
                    snapshot,
                    started.elapsed(),
                    Duration::ZERO,
                ))
            }
            BoundStatement::Profile(inner) => self.profile(*inner, snapshot, started),
            BoundStatement::Transaction(command) => self.transaction_command(command, snapshot),
        }
    }

    fn alter_table(
        &mut self,
        table: &str,
        action: warren_planner::AlterTable,
        snapshot: Arc<Snapshot>,
    ) -> Result<String> {
        use warren_planner::AlterTable as A;
        let catalog = snapshot.catalog();
        let display = catalog
            .node_table(table)
            .map(|t| t.name.clone())
            .or_else(|| catalog.rel_table(table).map(|t| t.name.clone()))
            .ok_or_else(|| Error::binder(format!("Table {table} does not exist.")))?;
        let has = |name: &str| {
            catalog
                .node_table(table)
                .and_then(|t| t.property(name))
                .is_some()
                || catalog
                    .rel_table(table)
                    .and_then(|t| t.property(name))
                    .is_some()
        };
        let mut editor = Editor::new(snapshot.clone());
        let message = match action {
            A::AddProperty {
                property,
                if_not_exists,
            } => {
                if if_not_exists && has(&property.name) {
                    return Ok(format!(
                        "{display} table already has property {}.",
                        property.name
                    ));
                }
                let name = property.name.clone();
                editor.add_property(table, property)?;
                format!("Property {name} added to table {display}.")
            }
            A::DropProperty { name, if_exists } => {
                if if_exists && !has(&name) {
                    return Ok(format!("{display} table does not have property {name}."));
                }
                editor.drop_property(table, &name)?;
                format!("Property {name} has been dropped from table {display}.")
            }
            A::RenameTable(to) => {
                editor.rename_table(table, &to)?;
                format!("Table {display} renamed to {to}.")
            }
            A::RenameProperty { from, to } => {
                editor.rename_property(table, &from, &to)?;
                format!("Property {from} renamed to {to}.")
            }
        };
        self.commit_editor(editor)?;
        Ok(message)
    }

    fn run_query(
        &mut self,
        plan: QueryPlan,
        snapshot: Arc<Snapshot>,
        compile_time: Duration,
    ) -> Result<QueryResult> {
        let ctx = self.exec_context(snapshot.clone());
        if !plan.updates {
            return Ok(QueryResult::streaming(
                Arc::new(plan),
                ctx,
                snapshot,
                compile_time,
                self.settings.columnar,
            ));
        }
        let root = warren_exec::build(&plan.plan, plan.slots, None);
        let columns: Vec<String> = plan.columns.iter().map(|(name, ..)| name.clone()).collect();
        let types = plan.columns.iter().map(|(_, _, ty)| ty.clone()).collect();
        let slots: Vec<usize> = plan.columns.iter().map(|(_, slot, _)| *slot).collect();
        let started = Instant::now();
        let mut root = root;
        let mut rows = Vec::new();
        while let Some(row) = root.next(&ctx)? {
            // A query without RETURN yields no rows, however many it wrote.
            if !slots.is_empty() {
                rows.push(slots.iter().map(|&s| row[s].clone()).collect());
            }
        }
        drop(root);
        self.commit_query_edits(ctx, snapshot.generation())?;
        Ok(QueryResult::materialized(
            columns,
            types,
            rows,
            self.current_snapshot(),
            compile_time,
            started.elapsed(),
        ))
    }

    /// A `PROFILE` report of a statement that is not a query plan (COPY, reorder_nodes): one
    /// `profile` column holding the report's text.
    fn profile_report(&self, text: String, started: Instant) -> QueryResult {
        QueryResult::materialized(
            vec!["profile".into()],
            vec![warren_common::LogicalType::String],
            vec![vec![Value::string(text)]],
            self.current_snapshot(),
            Duration::ZERO,
            started.elapsed(),
        )
    }

    /// `PROFILE`: runs the query with every operator wrapped in a profiler and hardware
    /// counters around it (committing its edits, if it writes), and returns the report.
    fn profile(
        &mut self,
        inner: BoundStatement,
        snapshot: Arc<Snapshot>,
        started: Instant,
    ) -> Result<QueryResult> {
        let plan = match inner {
            BoundStatement::Query(plan) => plan,
            BoundStatement::Copy {
                table,
                files,
                options,
            } => {
                let summary = self.copy_files(snapshot, &table, &files, &options)?;
                let text = crate::profile::copy_report(&summary, started.elapsed());
                return Ok(self.profile_report(text, started));
            }
            BoundStatement::ReorderNodes { table, order } => {
                let summary = self.reorder_nodes(snapshot, &table, order)?;
                let text = crate::profile::reorder_report(&summary, started.elapsed());
                return Ok(self.profile_report(text, started));
            }
            other => {
                return Err(Error::binder(format!(
                    "PROFILE runs queries (MATCH, UNWIND, RETURN, CREATE, ...), COPY FROM files and reorder_nodes, not {}.",
                    crate::profile::statement_kind(&other)
                )))
            }
        };
        let compile_time = started.elapsed();
        let (mut root, operators) =
            warren_exec::operators::profiled::build_profiled(&plan.plan, plan.slots);
        // Opened before the query starts its worker threads, which inherit the counters: a
        // profiled query with counters runs on a pool of its own, whose threads start after
        // this (the database's pool's threads, started earlier, would not be counted).
        let mut counters = crate::hardware::CounterGroup::open();
        let mut ctx = self.exec_context(snapshot.clone());
        if counters.is_ok() {
            ctx = ctx.with_workers(Arc::default());
        }
        let execution = Instant::now();
        if let Ok(group) = &mut counters {
            group.enable();
        }
        let drained = drain_rows(&mut root, &ctx);
        if let Ok(group) = &mut counters {
            group.disable();
        }
        let execution_time = execution.elapsed();
        let result_rows = drained?;
        let report = crate::profile::ProfileReport {
            plan: &plan.plan,
            operators: operators.operators(),
            result_rows,
            compile_time,
            execution_time,
            peak_memory_bytes: ctx.memory.peak(),
            hardware: counters.map(|mut group| group.read()),
            traversals: ctx.traversal_summaries(),
        };
        let text = report.render();
        drop(root);
        if plan.updates {
            self.commit_query_edits(ctx, snapshot.generation())?;
        }
        Ok(QueryResult::materialized(
            vec!["profile".into()],
            vec![warren_common::LogicalType::String],
            vec![vec![Value::string(text)]],
            self.current_snapshot(),
            compile_time,
            execution_time,
        ))
    }

    /// Commits what an updating query's clauses installed in `ctx` (based on `base`).
    fn commit_query_edits(&mut self, ctx: ExecContext, base: u64) -> Result<()> {
        let changes = ctx.changes();
        if changes.is_empty() {
            return Ok(());
        }
        let after = ctx.snapshot();
        drop(ctx);
        let snapshot = Arc::try_unwrap(after).unwrap_or_else(|shared| (*shared).clone());
        self.commit_snapshot(base, snapshot, changes)
    }

    /// Runs `COPY table FROM files` on `snapshot` and commits it; the summary's phases end
    /// with the commit's (checksums, segment writes, `fdatasync`, the log record).
    fn copy_files(
        &mut self,
        snapshot: Arc<Snapshot>,
        table: &str,
        files: &[std::path::PathBuf],
        options: &warren_storage::import::CsvOptions,
    ) -> Result<warren_storage::import::CopySummary> {
        if options.reorder.is_some() {
            self.refuse_reorder_in_transaction("COPY with REORDER")?;
        }
        let mut editor = Editor::new(snapshot);
        let mut progress = CopyBar::new(self.settings.progress_bar, format!("COPY {table}"));
        let mut summary = warren_storage::import::copy_from_files(
            &mut editor,
            table,
            files,
            options,
            &mut progress,
        )?;
        let commit = "commit (checksums, segment writes, fdatasync, log record)";
        summary.phases.time(commit, || self.commit_editor(editor))?;
        Ok(summary)
    }

    /// Runs `CALL reorder_nodes(table, order := ...)` on `snapshot` and commits it (like a
    /// COPY: new segment files, one log record). Refused inside an explicit transaction, whose
    /// later statements would read offsets the reorder changed.
    fn reorder_nodes(
        &mut self,
        snapshot: Arc<Snapshot>,
        table: &str,
        order: warren_storage::reorder::NodeOrder,
    ) -> Result<warren_storage::reorder::ReorderSummary> {
        self.refuse_reorder_in_transaction("reorder_nodes")?;
        let mut editor = Editor::new(snapshot);
        let mut summary = warren_storage::reorder::reorder_nodes(&mut editor, table, order)?;
        let commit = "commit (checksums, segment writes, fdatasync, log record)";
        summary.phases.time(commit, || self.commit_editor(editor))?;
        Ok(summary)
    }

    /// A reorder (`reorder_nodes`, `COPY ... (REORDER=...)`) is refused inside an explicit
    /// transaction, whose later statements could hold offsets it changed.
    fn refuse_reorder_in_transaction(&self, what: &str) -> Result<()> {
        if self.transaction.is_some() {
            return Err(Error::runtime(format!(
                "{what} cannot run inside an explicit transaction; COMMIT or ROLLBACK first."
            )));
        }
        Ok(())
    }

    /// The message of a committed COPY, as Kùzu words it.
    /// COPY's answer: how many rows it copied and, when `IGNORE_ERRORS` skipped some, how many
    /// (Kùzu's two rows). The skipped rows become this statement's warnings, as many as
    /// `warning_limit` leaves room for.
    fn copied(
        &mut self,
        summary: warren_storage::import::CopySummary,
        started: Instant,
    ) -> QueryResult {
        let query_id = self.statements_run;
        let skipped = summary.warnings.len();
        self.warning_sink().record(summary.warnings);
        let mut lines = vec![format!(
            "{} tuples have been copied to the {} table.",
            summary.rows, summary.table
        )];
        if skipped > 0 {
            lines.push(format!(
                "{skipped} warnings encountered during copy. Use 'CALL show_warnings() RETURN *' to view the actual warnings. Query ID: {query_id}"
            ));
        }
        QueryResult::messages(lines, self.current_snapshot(), started.elapsed())
    }

    /// After `CREATE_VECTOR_INDEX` commits: builds the graph on this connection's threads and
    /// checkpoints, which writes it to its file (a database in memory only keeps it).
    fn build_and_persist(&mut self, index: &warren_storage::VectorIndexSchema) -> Result<()> {
        let snapshot = self.db.snapshot();
        let (column, dimension) = warren_exec::vector_index::column_of(snapshot.catalog(), index)?;
        let table = snapshot.node_table(index.table);
        self.db.vector_indexes().get_or_build(
            index,
            table,
            column,
            dimension,
            self.settings.threads,
        )?;
        self.db.checkpoint()
    }

    fn commit_editor(&mut self, editor: Editor) -> Result<()> {
        let base = editor.base().generation();
        let (snapshot, changes) = editor.finish()?;
        self.commit_snapshot(base, snapshot, changes)
    }

    /// Publishes a new snapshot built on generation `base`: into the open transaction, or to
    /// the database through the writer slot this statement holds.
    fn commit_snapshot(&mut self, base: u64, snapshot: Snapshot, changes: Changes) -> Result<()> {
        if let Some(transaction) = &mut self.transaction {
            transaction.snapshot = Arc::new(snapshot);
            transaction.changes.extend(changes);
            return Ok(());
        }
        let lock = match self.write_lock.take() {
            Some(lock) => lock,
            None => self.db.begin_write()?,
        };
        if lock.latest().generation() != base {
            return Err(Error::runtime(
                "Write-write conflict: another connection committed a change after this transaction started.",
            ));
        }
        self.db.commit(lock, snapshot, changes)
    }

    fn transaction_command(
        &mut self,
        command: TransactionCommand,
        snapshot: Arc<Snapshot>,
    ) -> Result<QueryResult> {
        match command {
            TransactionCommand::Begin { .. } => {
                if self.transaction.is_some() {
                    return Err(Error::runtime("Connection already has an active transaction. Cannot start a transaction within another one. For concurrent multiple transactions, please open other connections."));
                }
                self.transaction = Some(Transaction {
                    base: snapshot.generation(),
                    snapshot: snapshot.clone(),
                    changes: Changes::default(),
                });
            }
            TransactionCommand::Commit => {
                let transaction = self
                    .transaction
                    .take()
                    .ok_or_else(|| Error::runtime("No active transaction for COMMIT."))?;
                if !transaction.changes.is_empty() {
                    let snapshot = Arc::try_unwrap(transaction.snapshot)
                        .unwrap_or_else(|shared| (*shared).clone());
                    self.commit_snapshot(transaction.base, snapshot, transaction.changes)?;
                }
            }
            TransactionCommand::Rollback => {
                self.transaction
                    .take()
                    .ok_or_else(|| Error::runtime("No active transaction for ROLLBACK."))?;
            }
            TransactionCommand::Checkpoint => {
                if self.transaction.is_some() {
                    return Err(Error::runtime(
                        "CHECKPOINT cannot run inside an explicit transaction.",
                    ));
                }
                self.db.checkpoint()?;
            }
        }
        Ok(QueryResult::empty(self.current_snapshot()))
    }
}

/// Whether a bound statement writes (and so runs under the writer slot).
fn writes(bound: &BoundStatement) -> bool {
    match bound {
        BoundStatement::Query(plan) => plan.updates,
        BoundStatement::Profile(inner) => {
            matches!(&**inner, BoundStatement::Query(plan) if plan.updates)
        }
        BoundStatement::Explain(_) => false,
        BoundStatement::CreateNodeTable { .. }
        | BoundStatement::CreateRelTable { .. }
        | BoundStatement::DropTable { .. }
        | BoundStatement::AlterTable { .. }
        | BoundStatement::CopyFromQuery { .. }
        | BoundStatement::Copy { .. }
        | BoundStatement::CreateVectorIndex(_)
        | BoundStatement::ReorderNodes { .. }
        | BoundStatement::DropVectorIndex { .. } => true,
        BoundStatement::Setting { .. }
        | BoundStatement::ProjectedGraph(_)
        | BoundStatement::ClearWarnings
        | BoundStatement::Transaction(_) => false,
    }
}

/// Pulls every row of `root`; returns how many there were.
fn drain_rows(root: &mut warren_exec::BoxedOperator, ctx: &ExecContext) -> Result<u64> {
    let mut rows = 0u64;
    while root.next(ctx)?.is_some() {
        rows += 1;
    }
    Ok(rows)
}

/// What the binder reads of a connection while its statement binds.
struct SessionView<'a> {
    db: &'a Database,
    settings: &'a Settings,
    graphs: &'a ProjectedGraphs,
    functions: &'a UserFunctions,
    warnings: &'a WarningLog,
}

impl Session for SessionView<'_> {
    fn setting(&self, name: &str) -> Option<Value> {
        self.db.setting(name).or_else(|| self.settings.get(name))
    }

    fn projected_graphs(&self) -> &ProjectedGraphs {
        self.graphs
    }

    fn warnings(&self) -> Vec<(u64, CopyWarning)> {
        self.warnings.entries()
    }

    fn user_function(&self, name: &str) -> Option<Arc<dyn UserFunction>> {
        self.functions.get(name)
    }
}

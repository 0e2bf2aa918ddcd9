//! Table functions called inside a query: `CALL f(args) [YIELD col [AS x], ...] [WHERE p]`.
//! The call binds to a [`Plan::TableFunction`] that feeds its rows into the rest of the query,
//! so `CALL f() WHERE ... RETURN ...`, `WITH`, aggregation and joins with earlier clauses
//! compose as for any other clause. The rows describe the catalog and the connection the
//! statement is bound against (tables, properties, settings, projected graphs), so they are
//! computed here, as Kùzu computes a table function's bind data.

use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_cypher::ast;
use warren_storage::{Catalog, Property};

use super::projected_graph::{check_argument_count, is_standalone, text_of, Argument};
use super::projected_graph::{ProjectedGraph, ProjectedTable};
use super::scope::{Scope, Variable};
use super::Binder;
use crate::plan::Plan;

/// The name Kùzu gives the database a table lives in (`show_tables()`'s `database name`).
const LOCAL_DATABASE_NAME: &str = "local(kuzu)";

/// The table functions Warren provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TableFunction {
    ShowTables,
    TableInfo,
    ShowConnection,
    CurrentSetting,
    ShowProjectedGraphs,
    ProjectedGraphInfo,
    ShowWarnings,
    ShowIndexes,
}

/// A table function's result: named, typed columns and their rows.
#[derive(Clone, Debug, PartialEq)]
struct TableOutput {
    columns: Vec<(String, LogicalType)>,
    rows: Vec<Vec<Value>>,
}

impl TableOutput {
    fn new(columns: &[(&str, LogicalType)]) -> Self {
        Self {
            columns: columns
                .iter()
                .map(|(name, ty)| ((*name).to_string(), ty.clone()))
                .collect(),
            rows: Vec::new(),
        }
    }

    fn push(&mut self, row: Vec<Value>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "a row has one value per column"
        );
        self.rows.push(row);
    }
}

impl TableFunction {
    fn lookup(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "show_tables" => TableFunction::ShowTables,
            "table_info" => TableFunction::TableInfo,
            "show_connection" => TableFunction::ShowConnection,
            "current_setting" => TableFunction::CurrentSetting,
            "show_projected_graphs" => TableFunction::ShowProjectedGraphs,
            "projected_graph_info" => TableFunction::ProjectedGraphInfo,
            "show_warnings" => TableFunction::ShowWarnings,
            "show_indexes" => TableFunction::ShowIndexes,
            _ => return None,
        })
    }

    /// The argument types the function takes.
    fn parameters(self) -> &'static [&'static str] {
        match self {
            TableFunction::ShowTables
            | TableFunction::ShowProjectedGraphs
            | TableFunction::ShowWarnings
            | TableFunction::ShowIndexes => &[],
            _ => &["STRING"],
        }
    }
}

/// Kùzu's `READ_PANDAS(pointer)`, the scan `LOAD FROM df` stands for, takes the address of a
/// Python object, which no Cypher value is: a call by name fails as Kùzu's fails for arguments of
/// another type.
fn read_pandas(arguments: &[Argument]) -> Error {
    let actual: Vec<String> = arguments.iter().map(|(_, ty)| ty.to_string()).collect();
    Error::binder(format!(
        "Function READ_PANDAS did not receive correct arguments:\nActual:   ({})\nExpected: (POINTER)\n",
        actual.join(",")
    ))
}

/// Whether `name` is `CLEAR_WARNINGS`, which empties the connection's warnings and, like the
/// projected-graph functions, only a statement of its own may call.
pub(crate) fn is_clear_warnings(name: &str) -> bool {
    name.eq_ignore_ascii_case("clear_warnings")
}

/// Whether only a statement of its own may call function `name`.
fn is_standalone_function(name: &str) -> bool {
    is_standalone(name)
        || is_clear_warnings(name)
        || super::vector_index::is_vector_index_ddl(name)
        || super::reorder_nodes::is_reorder_nodes(name)
}

/// The single `CALL` of a statement that is nothing but a call to a standalone function
/// (`CALL PROJECT_GRAPH(...)`, `CALL clear_warnings()`), which binds to its own statement kind
/// rather than a query.
pub(crate) fn standalone_call(query: &ast::Query) -> Option<&ast::CallClause> {
    let [part] = query.parts.as_slice() else {
        return None;
    };
    match part.clauses.as_slice() {
        [ast::Clause::Call(call)]
            if is_standalone_function(&call.name)
                && call.yields.is_empty()
                && call.where_clause.is_none() =>
        {
            Some(call)
        }
        _ => None,
    }
}

impl Binder<'_> {
    /// Binds `CALL f(...)` inside a query over `input`; `is_last` when no clause follows it.
    pub(crate) fn bind_call(
        &mut self,
        input: Plan,
        call: &ast::CallClause,
        scope: &mut Scope,
        is_last: bool,
    ) -> Result<Plan> {
        if is_standalone_function(&call.name) {
            return Err(Error::binder(format!(
                "{} is not a table or algorithm function.",
                call.name
            )));
        }
        if super::procedure::is_procedure(&call.name) {
            if is_last {
                return Err(Error::binder(
                    "Only standalone table functions can be called without return statement.",
                ));
            }
            return self.bind_procedure(input, call, scope);
        }
        if call.name.eq_ignore_ascii_case("READ_PANDAS") {
            return Err(read_pandas(&self.constant_arguments(&call.args)?));
        }
        let function = TableFunction::lookup(&call.name)
            .ok_or_else(|| Error::Catalog(format!("function {} does not exist.", call.name)))?;
        if is_last {
            return Err(Error::binder(
                "Only standalone table functions can be called without return statement.",
            ));
        }
        let arguments = self.constant_arguments(&call.args)?;
        check_argument_count(&call.name, &arguments, function.parameters())?;
        let output = self.table_output(function, &arguments)?;
        let names = yield_names(&output.columns, &call.yields)?;
        let mut columns = Vec::with_capacity(names.len());
        for (name, (_, ty)) in names.into_iter().zip(&output.columns) {
            if scope.contains(&name) {
                return Err(Error::binder(format!("Variable {name} already exists.")));
            }
            let slot = self.new_slot();
            scope.insert(Variable {
                name,
                slot,
                kind: super::expression::kind_of(ty),
            });
            columns.push(slot);
        }
        let mut plan = Plan::TableFunction {
            input: Box::new(input),
            name: call.name.to_ascii_lowercase(),
            rows: Arc::from(output.rows),
            columns,
        };
        if let Some(predicate) = &call.where_clause {
            let (predicate, _) = self.bind_expr(predicate, scope)?;
            plan = Plan::Filter {
                input: Box::new(plan),
                predicate,
            };
        }
        Ok(plan)
    }

    fn table_output(&self, function: TableFunction, arguments: &[Argument]) -> Result<TableOutput> {
        let argument = || text_of(&arguments[0].0);
        match function {
            TableFunction::ShowTables => Ok(show_tables(self.catalog)),
            TableFunction::TableInfo => table_info(self.catalog, &argument()),
            TableFunction::ShowConnection => show_connection(self.catalog, &argument()),
            TableFunction::CurrentSetting => {
                let name = argument();
                let value = self
                    .session
                    .setting(&name)
                    .ok_or_else(|| Error::runtime(format!("Invalid option name: {name}.")))?;
                let mut output = TableOutput::new(&[(name.as_str(), LogicalType::String)]);
                output.push(vec![Value::string(text_of(&value))]);
                Ok(output)
            }
            TableFunction::ShowProjectedGraphs => Ok(self.show_projected_graphs()),
            TableFunction::ShowWarnings => Ok(self.show_warnings()),
            TableFunction::ShowIndexes => Ok(show_indexes(self.catalog)),
            TableFunction::ProjectedGraphInfo => {
                let name = argument();
                let graph = self
                    .session
                    .projected_graphs()
                    .get(&name)
                    .ok_or_else(|| Error::binder(format!("Graph {name} does not exist.")))?;
                Ok(projected_graph_info(graph))
            }
        }
    }

    fn show_warnings(&self) -> TableOutput {
        let mut output = TableOutput::new(&[
            ("query_id", LogicalType::UInt64),
            ("message", LogicalType::String),
            ("file_path", LogicalType::String),
            ("line_number", LogicalType::UInt64),
            ("skipped_line_or_record", LogicalType::String),
        ]);
        for (query, warning) in self.session.warnings() {
            output.push(vec![
                Value::UInt64(query),
                Value::string(warning.message.as_str()),
                Value::string(warning.file_path.as_str()),
                Value::UInt64(warning.line_number),
                Value::string(warning.record.as_str()),
            ]);
        }
        output
    }

    fn show_projected_graphs(&self) -> TableOutput {
        let mut output =
            TableOutput::new(&[("name", LogicalType::String), ("type", LogicalType::String)]);
        for graph in self.session.projected_graphs().iter() {
            output.push(vec![
                Value::string(graph.name()),
                Value::string(graph.kind_name()),
            ]);
        }
        output
    }
}

/// The variable names the columns bind to. Without YIELD, the column names; with YIELD, every
/// column must be named, in order, optionally with an alias (Kùzu's rules and messages).
pub(crate) fn yield_names(
    columns: &[(String, LogicalType)],
    yields: &[(String, Option<String>)],
) -> Result<Vec<String>> {
    if yields.is_empty() {
        return Ok(columns.iter().map(|(name, _)| name.clone()).collect());
    }
    if yields.len() > columns.len() {
        return Err(Error::binder(
            "The number of variables in the yield clause exceeds the number of output variables of the table function.",
        ));
    }
    if yields.len() < columns.len() {
        return Err(Error::binder(
            "Output variables must all appear in the yield clause.",
        ));
    }
    let mut names = Vec::with_capacity(yields.len());
    for ((column, alias), (name, _)) in yields.iter().zip(columns) {
        if !column.eq_ignore_ascii_case(name) {
            return Err(Error::binder(format!(
                "Unknown table function output variable name: {column}."
            )));
        }
        names.push(alias.clone().unwrap_or_else(|| column.clone()));
    }
    Ok(names)
}

/// `show_tables()`: every node and rel table, by id.
fn show_tables(catalog: &Catalog) -> TableOutput {
    let mut output = TableOutput::new(&[
        ("id", LogicalType::UInt64),
        ("name", LogicalType::String),
        ("type", LogicalType::String),
        ("database name", LogicalType::String),
        ("comment", LogicalType::String),
    ]);
    let nodes = catalog
        .node_tables()
        .iter()
        .map(|t| (t.id, t.name.as_str(), "NODE"));
    let rels = catalog
        .rel_tables()
        .iter()
        .map(|t| (t.id, t.name.as_str(), "REL"));
    let mut tables: Vec<_> = nodes.chain(rels).collect();
    tables.sort_unstable_by_key(|(id, ..)| *id);
    for (id, name, kind) in tables {
        output.push(vec![
            Value::UInt64(u64::from(id)),
            Value::string(name),
            Value::string(kind),
            Value::string(LOCAL_DATABASE_NAME),
            Value::string(""),
        ]);
    }
    output
}

/// `show_indexes()`: every index with Kùzu's columns; `index definition` is the call that
/// recreates it, with every option spelled out.
fn show_indexes(catalog: &Catalog) -> TableOutput {
    let mut output = TableOutput::new(&[
        ("table name", LogicalType::String),
        ("index name", LogicalType::String),
        ("index type", LogicalType::String),
        (
            "property names",
            LogicalType::List(LogicalType::String.into()),
        ),
        ("extension loaded", LogicalType::Bool),
        ("index definition", LogicalType::String),
    ]);
    for index in catalog.vector_indexes() {
        let table = catalog.label(index.table);
        let definition = format!(
            "CALL CREATE_VECTOR_INDEX('{table}', '{}', '{}', metric := '{}', mu := {}, ml := {}, pu := {}, efc := {});",
            index.name, index.property, index.metric, index.mu, index.ml, index.pu, index.efc
        );
        output.push(vec![
            Value::string(table),
            Value::string(index.name.as_str()),
            Value::string("HNSW"),
            Value::List(vec![Value::string(index.property.as_str())].into()),
            Value::Bool(true),
            Value::string(definition),
        ]);
    }
    output
}

fn missing_table(name: &str) -> Error {
    Error::Catalog(format!("{name} does not exist in catalog."))
}

/// `table_info('t')`: the properties of a node or rel table. A rel table's property ids start
/// at 1 (Kùzu's id 0 is the internal `_ID`), and its rels are stored in both directions.
fn table_info(catalog: &Catalog, name: &str) -> Result<TableOutput> {
    if let Some(table) = catalog.node_table(name) {
        let mut output = TableOutput::new(&[
            ("property id", LogicalType::Int32),
            ("name", LogicalType::String),
            ("type", LogicalType::String),
            ("default expression", LogicalType::String),
            ("primary key", LogicalType::Bool),
        ]);
        for (index, property) in table.properties.iter().enumerate() {
            let mut row = property_row(index, property);
            row.push(Value::Bool(index == table.primary_key));
            output.push(row);
        }
        return Ok(output);
    }
    let table = catalog.rel_table(name).ok_or_else(|| missing_table(name))?;
    let mut output = TableOutput::new(&[
        ("property id", LogicalType::Int32),
        ("name", LogicalType::String),
        ("type", LogicalType::String),
        ("default expression", LogicalType::String),
        ("storage_direction", LogicalType::String),
    ]);
    for (index, property) in table.properties.iter().enumerate() {
        let mut row = property_row(index + 1, property);
        row.push(Value::string("both"));
        output.push(row);
    }
    Ok(output)
}

/// `property id`, `name`, `type` and `default expression` of one property.
fn property_row(id: usize, property: &Property) -> Vec<Value> {
    let id = i32::try_from(id).expect("a table has fewer than 2^31 properties");
    vec![
        Value::Int32(id),
        Value::string(property.name.as_str()),
        Value::string(property.ty.to_string()),
        Value::string(default_text(property)),
    ]
}

/// A property's default as Kùzu prints it: `NULL` when there is none, a SERIAL's as empty,
/// strings quoted, booleans in lower case. Warren keeps the default's value, not the
/// expression that computed it, so `1 + 2` prints as `3`.
fn default_text(property: &Property) -> String {
    match (&property.ty, &property.default) {
        (LogicalType::Serial, _) => String::new(),
        (_, None) => "NULL".into(),
        (LogicalType::String, Some(text)) => format!("'{}'", text.replace('\'', "\\'")),
        (LogicalType::Bool, Some(text)) => text.to_ascii_lowercase(),
        (_, Some(text)) => text.clone(),
    }
}

/// `show_connection('r')`: the FROM/TO pairs of a rel table with their primary keys.
fn show_connection(catalog: &Catalog, name: &str) -> Result<TableOutput> {
    let Some(table) = catalog.rel_table(name) else {
        if catalog.node_table(name).is_some() {
            return Err(Error::binder(
                "Show connection can only be called on a rel table!",
            ));
        }
        return Err(missing_table(name));
    };
    let mut output = TableOutput::new(&[
        ("source table name", LogicalType::String),
        ("destination table name", LogicalType::String),
        ("source table primary key", LogicalType::String),
        ("destination table primary key", LogicalType::String),
    ]);
    for pair in &table.pairs {
        let from = catalog.node_table_by_id(pair.from).expect("pair endpoint");
        let to = catalog.node_table_by_id(pair.to).expect("pair endpoint");
        output.push(vec![
            Value::string(from.name.as_str()),
            Value::string(to.name.as_str()),
            Value::string(from.primary_key().name.as_str()),
            Value::string(to.primary_key().name.as_str()),
        ]);
    }
    Ok(output)
}

/// `PROJECTED_GRAPH_INFO('g')`: a native graph's tables with their predicates, or a Cypher
/// graph's query.
fn projected_graph_info(graph: &ProjectedGraph) -> TableOutput {
    match graph {
        ProjectedGraph::Native { nodes, rels, .. } => {
            let mut output = TableOutput::new(&[
                ("table type", LogicalType::String),
                ("table name", LogicalType::String),
                ("predicate", LogicalType::String),
            ]);
            let tables: [(&str, &[ProjectedTable]); 2] = [("NODE", nodes), ("REL", rels)];
            for (kind, tables) in tables {
                for table in tables {
                    output.push(vec![
                        Value::string(kind),
                        Value::string(table.name.as_str()),
                        Value::string(table.predicate.as_str()),
                    ]);
                }
            }
            output
        }
        ProjectedGraph::Cypher { query, .. } => {
            let mut output = TableOutput::new(&[("cypher statement", LogicalType::String)]);
            output.push(vec![Value::string(query.as_str())]);
            output
        }
    }
}

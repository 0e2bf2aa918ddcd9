//! The binder: turns a parsed statement into a bound statement against a catalog. Names become
//! slots and table ids, types are checked, recursive-pattern semantics are resolved, and queries
//! are planned clause by clause into a [`crate::plan::Plan`].

mod coercion;
mod expression;
mod load_table;
mod pattern;
mod procedure;
pub mod projected_graph;
mod projection;
mod query;
mod reorder_nodes;
pub mod scope;
pub mod session;
mod table_function;
mod update;
mod vector_index;

use std::collections::HashMap;
use std::path::PathBuf;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_cypher::ast;
use warren_storage::import::CsvOptions;
use warren_storage::{Catalog, Property};

use crate::plan::QueryPlan;
pub use projected_graph::{ProjectedGraph, ProjectedGraphCommand, ProjectedGraphs, ProjectedTable};
pub use session::{NoSession, Session};

/// Settings that change how statements bind.
#[derive(Clone, Debug, PartialEq)]
pub struct BindSettings {
    /// `var_length_extend_max_depth`.
    pub hops_max: u32,
    /// `recursive_pattern_semantic`: what a plain `*` means (WALK, TRAIL or ACYCLIC).
    pub default_semantic: DefaultSemantic,
    /// Directory relative file paths are resolved against.
    pub working_dir: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultSemantic {
    Walk,
    Trail,
    Acyclic,
}

impl Default for BindSettings {
    fn default() -> Self {
        Self {
            hops_max: warren_common::limits::HOPS_MAX_DEFAULT,
            default_semantic: DefaultSemantic::Walk,
            working_dir: PathBuf::from("."),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum BoundStatement {
    Query(QueryPlan),
    CreateNodeTable {
        name: String,
        properties: Vec<Property>,
        primary_key: String,
        if_not_exists: bool,
    },
    CreateRelTable {
        name: String,
        connections: Vec<(String, String)>,
        properties: Vec<Property>,
        multiplicity: Option<String>,
        if_not_exists: bool,
    },
    DropTable {
        name: String,
        if_exists: bool,
    },
    AlterTable {
        table: String,
        action: AlterTable,
    },
    Copy {
        table: String,
        files: Vec<PathBuf>,
        options: CsvOptions,
    },
    /// `COPY table FROM (query)`.
    CopyFromQuery {
        table: String,
        query: QueryPlan,
        /// COPY's options of `COPY t FROM df (options)`: the rel pair and `IGNORE_ERRORS`.
        options: CsvOptions,
    },
    /// `CALL name = value`.
    Setting {
        name: String,
        value: Value,
    },
    /// A standalone `CALL PROJECT_GRAPH(...)`, `PROJECT_GRAPH_CYPHER(...)` or
    /// `drop_projected_graph(...)`: changes the connection's projected graphs.
    ProjectedGraph(ProjectedGraphCommand),
    /// A standalone `CALL clear_warnings()`: empties the connection's warnings.
    ClearWarnings,
    /// A standalone `CALL CREATE_VECTOR_INDEX(...)`, checked against the catalog.
    CreateVectorIndex(warren_storage::VectorIndexSchema),
    /// A standalone `CALL reorder_nodes(table, order := ...)` of a node table that exists.
    ReorderNodes {
        table: String,
        order: warren_storage::reorder::NodeOrder,
    },
    /// A standalone `CALL DROP_VECTOR_INDEX(table, name)` of an index that exists.
    DropVectorIndex {
        table: String,
        name: String,
    },
    Explain(Box<BoundStatement>),
    Profile(Box<BoundStatement>),
    Transaction(ast::TransactionCommand),
}

/// A bound `ALTER TABLE` action.
#[derive(Clone, Debug, PartialEq)]
pub enum AlterTable {
    AddProperty {
        property: Property,
        if_not_exists: bool,
    },
    DropProperty {
        name: String,
        if_exists: bool,
    },
    RenameTable(String),
    RenameProperty {
        from: String,
        to: String,
    },
}

/// Binds one statement; `session` is what table functions read of the connection.
pub fn bind_statement(
    statement: &ast::Statement,
    catalog: &Catalog,
    parameters: &HashMap<String, Value>,
    settings: &BindSettings,
    session: &dyn Session,
) -> Result<BoundStatement> {
    let mut binder = Binder::new(catalog, parameters, settings, session);
    binder.bind_statement(statement)
}

pub(crate) struct Binder<'a> {
    catalog: &'a Catalog,
    parameters: &'a HashMap<String, Value>,
    settings: &'a BindSettings,
    session: &'a dyn Session,
    /// Slots allocated so far (the row width).
    slots: usize,
    /// Counter for names of anonymous pattern elements.
    anonymous: usize,
}

impl<'a> Binder<'a> {
    fn new(
        catalog: &'a Catalog,
        parameters: &'a HashMap<String, Value>,
        settings: &'a BindSettings,
        session: &'a dyn Session,
    ) -> Self {
        Self {
            catalog,
            parameters,
            settings,
            session,
            slots: 0,
            anonymous: 0,
        }
    }

    pub(crate) fn new_slot(&mut self) -> usize {
        self.slots += 1;
        self.slots - 1
    }

    pub(crate) fn anonymous_name(&mut self) -> String {
        self.anonymous += 1;
        format!("\0{}", self.anonymous)
    }

    fn bind_statement(&mut self, statement: &ast::Statement) -> Result<BoundStatement> {
        Ok(match statement {
            ast::Statement::Query(query) => match table_function::standalone_call(query) {
                Some(call) if table_function::is_clear_warnings(&call.name) => {
                    let arguments = self.constant_arguments(&call.args)?;
                    projected_graph::check_argument_count(&call.name, &arguments, &[])?;
                    BoundStatement::ClearWarnings
                }
                Some(call) if vector_index::is_vector_index_ddl(&call.name) => {
                    self.bind_vector_index_ddl(call)?
                }
                Some(call) if reorder_nodes::is_reorder_nodes(&call.name) => {
                    self.bind_reorder_nodes(call)?
                }
                Some(call) => self.bind_projected_graph_call(call)?,
                None => BoundStatement::Query(self.bind_query(query)?),
            },
            ast::Statement::CreateNodeTable(create) => self.bind_create_node_table(create)?,
            ast::Statement::CreateRelTable(create) => self.bind_create_rel_table(create)?,
            ast::Statement::DropTable { name, if_exists } => BoundStatement::DropTable {
                name: name.clone(),
                if_exists: *if_exists,
            },
            ast::Statement::Copy(copy) => self.bind_copy(copy)?,
            ast::Statement::CopyFromQuery {
                table,
                query,
                options,
                ..
            } => {
                if self.catalog.node_table(table).is_none()
                    && self.catalog.rel_table(table).is_none()
                {
                    return Err(Error::binder(format!("Table {table} does not exist.")));
                }
                let mut constants = Vec::with_capacity(options.len());
                for (name, expr) in options {
                    constants.push((name.clone(), self.constant(expr)?));
                }
                BoundStatement::CopyFromQuery {
                    table: table.clone(),
                    query: self.bind_query(query)?,
                    options: CsvOptions::from_pairs(&constants)?,
                }
            }
            ast::Statement::CopyTo { .. } => {
                return Err(Error::binder("COPY TO is not supported yet."))
            }
            ast::Statement::AlterTable { table, action, .. } => {
                let action = match action {
                    ast::AlterAction::AddProperty {
                        property,
                        if_not_exists,
                    } => AlterTable::AddProperty {
                        property: self
                            .bind_properties(std::slice::from_ref(property))?
                            .remove(0),
                        if_not_exists: *if_not_exists,
                    },
                    ast::AlterAction::DropProperty { name, if_exists } => {
                        AlterTable::DropProperty {
                            name: name.clone(),
                            if_exists: *if_exists,
                        }
                    }
                    ast::AlterAction::RenameTable(to) => AlterTable::RenameTable(to.clone()),
                    ast::AlterAction::RenameProperty { from, to } => AlterTable::RenameProperty {
                        from: from.clone(),
                        to: to.clone(),
                    },
                };
                BoundStatement::AlterTable {
                    table: table.clone(),
                    action,
                }
            }
            ast::Statement::CallSetting { name, value, .. } => {
                let value = self.constant(value)?;
                BoundStatement::Setting {
                    name: name.to_ascii_lowercase(),
                    value,
                }
            }
            ast::Statement::Explain(inner) => {
                BoundStatement::Explain(Box::new(self.bind_statement(inner)?))
            }
            ast::Statement::Profile(inner) => {
                BoundStatement::Profile(Box::new(self.bind_statement(inner)?))
            }
            ast::Statement::Transaction(command) => BoundStatement::Transaction(*command),
        })
    }

    /// Evaluates a constant expression (literals, parameters and pure functions of them).
    pub(crate) fn constant(&mut self, expr: &ast::Expr) -> Result<Value> {
        let scope = scope::Scope::default();
        let (bound, _) = self.bind_expr(expr, &scope)?;
        crate::constant::evaluate_constant(&bound)
            .ok_or_else(|| Error::binder("Expected a constant expression."))
    }

    /// A file path as written, resolved against the working directory when relative.
    pub(crate) fn resolve_path(&self, file: &str) -> PathBuf {
        let path = PathBuf::from(file);
        if path.is_absolute() {
            path
        } else {
            self.settings.working_dir.join(path)
        }
    }

    fn bind_properties(
        &mut self,
        definitions: &[ast::PropertyDefinition],
    ) -> Result<Vec<Property>> {
        let mut properties = Vec::with_capacity(definitions.len());
        for definition in definitions {
            let ty = LogicalType::parse(&definition.type_name).map_err(Error::Catalog)?;
            let default = match &definition.default {
                None => None,
                Some(expr) => {
                    let value = self.constant(expr)?;
                    if value.is_null() {
                        None
                    } else {
                        Some(warren_common::format::to_kuzu_string(
                            &value,
                            &warren_common::value::NoGraph,
                        ))
                    }
                }
            };
            properties.push(Property {
                name: definition.name.clone(),
                ty,
                default,
            });
        }
        Ok(properties)
    }

    fn bind_create_node_table(&mut self, create: &ast::CreateNodeTable) -> Result<BoundStatement> {
        let properties = self.bind_properties(&create.properties)?;
        let primary_key = create.primary_key.clone().ok_or_else(|| {
            Error::binder(format!(
                "Can not find primary key for node table {}.",
                create.name
            ))
        })?;
        Ok(BoundStatement::CreateNodeTable {
            name: create.name.clone(),
            properties,
            primary_key,
            if_not_exists: create.if_not_exists,
        })
    }

    fn bind_create_rel_table(&mut self, create: &ast::CreateRelTable) -> Result<BoundStatement> {
        let properties = self.bind_properties(&create.properties)?;
        Ok(BoundStatement::CreateRelTable {
            name: create.name.clone(),
            connections: create.connections.clone(),
            properties,
            multiplicity: create.multiplicity.clone(),
            if_not_exists: create.if_not_exists,
        })
    }

    fn bind_copy(&mut self, copy: &ast::CopyFrom) -> Result<BoundStatement> {
        if self.catalog.node_table(&copy.table).is_none()
            && self.catalog.rel_table(&copy.table).is_none()
        {
            return Err(Error::binder(format!(
                "Table {} does not exist.",
                copy.table
            )));
        }
        let mut options = Vec::with_capacity(copy.options.len());
        for (name, expr) in &copy.options {
            options.push((name.clone(), self.constant(expr)?));
        }
        let mut options = CsvOptions::from_pairs(&options)?;
        options.by_column = copy.by_column;
        let files = copy.files.iter().map(|f| self.resolve_path(f)).collect();
        Ok(BoundStatement::Copy {
            table: copy.table.clone(),
            files,
            options,
        })
    }
}

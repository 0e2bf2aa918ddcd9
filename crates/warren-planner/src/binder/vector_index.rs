//! Binding Kùzu's vector index procedures: the standalone `CALL CREATE_VECTOR_INDEX(table,
//! name, property, metric :=, mu :=, ml :=, pu :=, efc :=)` and `CALL DROP_VECTOR_INDEX(table,
//! name)`, which change the catalog, and `QUERY_VECTOR_INDEX(table, name, query, k, efs :=)`,
//! a graph procedure evaluated per input row. Names, options and their limits are checked
//! here, with Kùzu's messages where Kùzu has one.

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_cypher::ast;
use warren_storage::column::vector_layout;
use warren_storage::{NodeTableSchema, VectorIndexSchema};
use warren_vector::distance::Metric;
use warren_vector::hnsw::{HnswParams, EFS_DEFAULT};

use super::procedure::{at, split_arguments};
use super::projected_graph::ProjectedGraph;
use super::scope::{Scope, Variable, VariableKind};
use super::{Binder, BoundStatement};
use crate::expr::Expr;
use crate::procedure::{NodeFilter, ProcedureCall, ProcedureKind, QueryVectorIndex};

/// Whether `name` is a vector index procedure that only a statement of its own may call.
pub(crate) fn is_vector_index_ddl(name: &str) -> bool {
    name.eq_ignore_ascii_case("create_vector_index")
        || name.eq_ignore_ascii_case("drop_vector_index")
}

const CREATE_OPTIONS: &str = "metric, mu, ml, pu, efc";

/// The index property's vector length, or Kùzu's error for a column of another type.
fn vector_dimension(ty: &LogicalType) -> Result<usize> {
    match ty {
        LogicalType::Array(element, _)
            if matches!(**element, LogicalType::Float | LogicalType::Double) =>
        {
            let (_, dimension) = vector_layout(ty).expect("FLOAT[n]/DOUBLE[n] has a vector layout");
            Ok(dimension)
        }
        _ => Err(Error::binder(
            "VECTOR_INDEX only supports FLOAT/DOUBLE ARRAY columns.",
        )),
    }
}

impl Binder<'_> {
    /// Binds a standalone `CREATE_VECTOR_INDEX` or `DROP_VECTOR_INDEX` call.
    pub(crate) fn bind_vector_index_ddl(
        &mut self,
        call: &ast::CallClause,
    ) -> Result<BoundStatement> {
        if call.name.eq_ignore_ascii_case("drop_vector_index") {
            return self.bind_drop_vector_index(call);
        }
        self.bind_create_vector_index(call)
    }

    /// The node table a vector index procedure names.
    fn vector_index_table(&mut self, expr: &ast::Expr) -> Result<NodeTableSchema> {
        let name = self.constant_text(expr, "the table name")?;
        if let Some(table) = self.catalog.node_table(&name) {
            return Ok(table.clone());
        }
        if self.catalog.rel_table(&name).is_some() {
            return Err(Error::binder(format!(
                "Table {name} is not a node table; vector indexes index node tables{}.",
                at(expr.span)
            )));
        }
        Err(Error::binder(format!("Table {name} does not exist.")))
    }

    fn bind_create_vector_index(&mut self, call: &ast::CallClause) -> Result<BoundStatement> {
        let arguments = split_arguments(call)?;
        let [table, name, property] = arguments.positional.as_slice() else {
            return Err(Error::binder(format!(
                "Function CREATE_VECTOR_INDEX did not receive correct arguments: expected (table name, index name, property name) and named options ({CREATE_OPTIONS}), got {} positional arguments{}.",
                arguments.positional.len(),
                at(call.span)
            )));
        };
        let table = self.vector_index_table(table)?;
        let name = self.constant_text(name, "the index name")?;
        let property_name = self.constant_text(property, "the property name")?;
        let column = table.property(&property_name).ok_or_else(|| {
            Error::binder(format!(
                "Table {} doesn't have a property with name {property_name}.",
                table.name
            ))
        })?;
        let property = &table.properties[column];
        vector_dimension(&property.ty)?;
        let mut params = HnswParams::default();
        for &(option, value, span) in &arguments.named {
            let number = |binder: &mut Self| -> Result<Value> {
                let (bound, _) = binder.bind_expr(value, &Scope::default())?;
                crate::constant::evaluate_constant(&bound).ok_or_else(|| {
                    Error::binder(format!("{option} must be a constant{}.", at(span)))
                })
            };
            match option.to_ascii_lowercase().as_str() {
                "metric" => {
                    let text = self.constant_text(value, "metric")?;
                    params.metric = Metric::parse(&text).ok_or_else(|| {
                        Error::binder(format!(
                            "Metric {text} is not supported; use one of cosine, l2, l2sq, dotproduct{}.",
                            at(span)
                        ))
                    })?;
                }
                "mu" => params.mu = positive_integer(&number(self)?, option, span)?,
                "ml" => params.ml = positive_integer(&number(self)?, option, span)?,
                "efc" => params.efc = positive_integer(&number(self)?, option, span)?,
                "pu" => {
                    params.pu = number(self)?.as_f64().ok_or_else(|| {
                        Error::binder(format!("pu must be a number{}.", at(span)))
                    })?;
                }
                _ => {
                    return Err(Error::binder(format!(
                        "Unrecognized optional parameter {option} in CREATE_VECTOR_INDEX; it takes {CREATE_OPTIONS}{}.",
                        at(span)
                    )))
                }
            }
        }
        params
            .validate()
            .map_err(|e| Error::binder(format!("CREATE_VECTOR_INDEX: {e}.")))?;
        if self.catalog.vector_index(table.id, &name).is_some() {
            return Err(Error::binder(format!(
                "Index {name} already exists in table {}.",
                table.name
            )));
        }
        Ok(BoundStatement::CreateVectorIndex(VectorIndexSchema {
            table: table.id,
            name,
            property: property.name.clone(),
            metric: params.metric.name().to_string(),
            mu: params.mu as u64,
            ml: params.ml as u64,
            pu: params.pu,
            efc: params.efc as u64,
        }))
    }

    fn bind_drop_vector_index(&mut self, call: &ast::CallClause) -> Result<BoundStatement> {
        let arguments = split_arguments(call)?;
        let ([table, name], []) = (arguments.positional.as_slice(), arguments.named.as_slice())
        else {
            return Err(Error::binder(format!(
                "Function DROP_VECTOR_INDEX did not receive correct arguments: expected (table name, index name){}.",
                at(call.span)
            )));
        };
        let table = self.vector_index_table(table)?;
        let name = self.constant_text(name, "the index name")?;
        if self.catalog.vector_index(table.id, &name).is_none() {
            return Err(Error::binder(format!(
                "Table {} doesn't have an index with name {name}.",
                table.name
            )));
        }
        Ok(BoundStatement::DropVectorIndex {
            table: table.name,
            name,
        })
    }

    /// Binds `QUERY_VECTOR_INDEX(table, name, query, k, efs :=)`: the query vector, `k` and
    /// `efs` may come from earlier clauses.
    pub(crate) fn bind_query_vector_index(
        &mut self,
        call: &ast::CallClause,
        scope: &Scope,
    ) -> Result<ProcedureCall> {
        let arguments = split_arguments(call)?;
        let [table, name, query, k] = arguments.positional.as_slice() else {
            return Err(Error::binder(format!(
                "Function QUERY_VECTOR_INDEX did not receive correct arguments: expected (table name, index name, query vector, k) and named option efs, got {} positional arguments{}.",
                arguments.positional.len(),
                at(call.span)
            )));
        };
        let table_name = self.constant_text(table, "the table name")?;
        let graph = match self.catalog.node_table(&table_name) {
            Some(_) => None,
            None => self.session.projected_graphs().get(&table_name).cloned(),
        };
        let (table, filter) = match graph {
            Some(graph) => self.filtered_table(&graph)?,
            None => (self.vector_index_table(table)?, None),
        };
        let name = self.constant_text(name, "the index name")?;
        let index = self
            .catalog
            .vector_index(table.id, &name)
            .ok_or_else(|| {
                Error::binder(format!(
                    "Table {} doesn't have an index with name {name}.",
                    table.name
                ))
            })?
            .clone();
        let column = table
            .property(&index.property)
            .expect("the catalog keeps an index's property");
        let dimension = vector_dimension(&table.properties[column].ty)?;
        let (query, query_type) = self.bind_expr(query, scope)?;
        check_query_type(&query_type, dimension)?;
        let k = self.bind_number(k, scope, "k", true)?;
        let mut efs = Expr::Literal(Value::Int64(EFS_DEFAULT as i64));
        for &(option, value, span) in &arguments.named {
            if !option.eq_ignore_ascii_case("efs") {
                return Err(Error::binder(format!(
                    "Unrecognized optional parameter {option} in QUERY_VECTOR_INDEX; it takes efs{}.",
                    at(span)
                )));
            }
            efs = self.bind_number(value, scope, "efs", true)?;
        }
        Ok(ProcedureCall {
            name: call.name.clone(),
            kind: ProcedureKind::QueryVectorIndex(QueryVectorIndex {
                index,
                column,
                dimension,
                filter,
            }),
            arguments: vec![query, k, efs],
            columns: vec![
                ("node".into(), LogicalType::Node),
                ("distance".into(), LogicalType::Double),
            ],
        })
    }
}

impl Binder<'_> {
    /// The node table of a projected graph `QUERY_VECTOR_INDEX` searches, and its predicate
    /// bound over a node variable of its own.
    fn filtered_table(
        &mut self,
        graph: &ProjectedGraph,
    ) -> Result<(NodeTableSchema, Option<NodeFilter>)> {
        let ProjectedGraph::Native { name, nodes, .. } = graph else {
            return Err(Error::binder(format!(
                "QUERY_VECTOR_INDEX searches a projected graph of PROJECT_GRAPH; {} is one of PROJECT_GRAPH_CYPHER.",
                graph.name()
            )));
        };
        let [entry] = nodes.as_slice() else {
            return Err(Error::binder(format!(
                "QUERY_VECTOR_INDEX needs a projected graph with exactly one node table; {name} has {}.",
                nodes.len()
            )));
        };
        let table = self
            .catalog
            .node_table(&entry.name)
            .ok_or_else(|| Error::binder(format!("Table {} does not exist.", entry.name)))?
            .clone();
        if entry.predicate.is_empty() {
            return Ok((table, None));
        }
        let text = format!(
            "MATCH (n:`{}`) WHERE {} RETURN n",
            table.name, entry.predicate
        );
        let statement = warren_cypher::parse_statement(&text)?;
        let ast::Statement::Query(query) = &statement else {
            unreachable!("a MATCH ... RETURN text parses as a query")
        };
        let Some(ast::Clause::Match(clause)) = query.parts[0].clauses.first() else {
            unreachable!("the query starts with its MATCH")
        };
        let predicate = clause.where_clause.as_ref().expect("the MATCH has a WHERE");
        let slot = self.new_slot();
        let mut scope = Scope::default();
        scope.insert(Variable {
            name: "n".into(),
            slot,
            kind: VariableKind::Node {
                tables: vec![table.id],
            },
        });
        let (predicate, _) = self.bind_expr(predicate, &scope)?;
        Ok((table, Some(NodeFilter { slot, predicate })))
    }
}

/// The query vector must be a list or array of numbers; an array's length must match.
fn check_query_type(ty: &LogicalType, dimension: usize) -> Result<()> {
    let element = match ty {
        LogicalType::Any => return Ok(()),
        LogicalType::Array(element, length) => {
            if *length as usize != dimension {
                return Err(query_length_error(*length as usize, dimension));
            }
            element
        }
        LogicalType::List(element) => element,
        _ => {
            return Err(Error::binder(format!(
                "The query vector must be a FLOAT[{dimension}] or DOUBLE[{dimension}] array or a list of numbers, not {ty}."
            )))
        }
    };
    if element.is_numeric() || **element == LogicalType::Any {
        return Ok(());
    }
    Err(Error::binder(format!(
        "The query vector must hold numbers, not {element}."
    )))
}

/// The error for a query vector of the wrong length (also raised per row at run time).
pub fn query_length_error(length: usize, dimension: usize) -> Error {
    Error::binder(format!(
        "Query vector dimension {length} does not match the index's dimension {dimension}."
    ))
}

/// A positive integer option.
fn positive_integer(value: &Value, option: &str, span: ast::Span) -> Result<usize> {
    match value.as_i64() {
        Some(n) if n > 0 => Ok(n as usize),
        _ => Err(Error::binder(format!(
            "{option} must be a positive integer, not {value:?}{}.",
            at(span)
        ))),
    }
}

//! Projected graphs: the named subgraph definitions a connection keeps (Kùzu's
//! `PROJECT_GRAPH('g', nodes, rels)` and `PROJECT_GRAPH_CYPHER('g', query)`), the per-connection
//! registry that holds them, and the checks Kùzu makes when one is created: table kinds and
//! existence, rel tables whose endpoints are not projected, and filter predicates and queries
//! that must parse and bind. A definition keeps table names and predicates as written; Warren
//! has no graph algorithm that runs on a projected graph, so nothing reads one but
//! `SHOW_PROJECTED_GRAPHS` and `PROJECTED_GRAPH_INFO`.

use warren_common::types::LogicalType;
use warren_common::value::{NoGraph, Value};
use warren_common::{Error, Result, TableId};
use warren_cypher::ast;

use super::{Binder, BoundStatement};

/// The most projected graphs one connection may hold.
pub const PROJECTED_GRAPHS_MAX: usize = 4096;

/// One table of a native projected graph and its filter predicate (empty: none), as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectedTable {
    pub name: String,
    pub predicate: String,
}

/// A projected graph definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProjectedGraph {
    /// `PROJECT_GRAPH`: node tables and rel tables with optional predicates over `n` and `r`.
    Native {
        name: String,
        nodes: Vec<ProjectedTable>,
        rels: Vec<ProjectedTable>,
    },
    /// `PROJECT_GRAPH_CYPHER`: the graph a query returns.
    Cypher { name: String, query: String },
}

impl ProjectedGraph {
    pub fn name(&self) -> &str {
        match self {
            ProjectedGraph::Native { name, .. } | ProjectedGraph::Cypher { name, .. } => name,
        }
    }

    /// The `type` column of `SHOW_PROJECTED_GRAPHS`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            ProjectedGraph::Native { .. } => "NATIVE",
            ProjectedGraph::Cypher { .. } => "CYPHER",
        }
    }
}

/// What a standalone projected-graph call asks the connection to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProjectedGraphCommand {
    Create(ProjectedGraph),
    Drop(String),
}

/// The projected graphs of one connection, in creation order. Names are case-sensitive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectedGraphs {
    graphs: Vec<ProjectedGraph>,
}

impl ProjectedGraphs {
    pub fn get(&self, name: &str) -> Option<&ProjectedGraph> {
        self.graphs.iter().find(|g| g.name() == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ProjectedGraph> {
        self.graphs.iter()
    }

    pub fn len(&self) -> usize {
        self.graphs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.graphs.is_empty()
    }

    /// Creates or drops a graph, failing as Kùzu does on a taken or unknown name.
    pub fn apply(&mut self, command: ProjectedGraphCommand) -> Result<()> {
        match command {
            ProjectedGraphCommand::Create(graph) => self.create(graph),
            ProjectedGraphCommand::Drop(name) => self.drop_graph(&name),
        }
    }

    fn create(&mut self, graph: ProjectedGraph) -> Result<()> {
        if self.get(graph.name()).is_some() {
            return Err(Error::runtime(format!(
                "Projected graph {} already exists.",
                graph.name()
            )));
        }
        if self.graphs.len() >= PROJECTED_GRAPHS_MAX {
            return Err(Error::LimitExceeded(format!(
                "a connection holds at most {PROJECTED_GRAPHS_MAX} projected graphs; drop one with CALL drop_projected_graph('name')"
            )));
        }
        self.graphs.push(graph);
        Ok(())
    }

    fn drop_graph(&mut self, name: &str) -> Result<()> {
        let index = self
            .graphs
            .iter()
            .position(|g| g.name() == name)
            .ok_or_else(|| Error::runtime(format!("Projected graph {name} does not exists.")))?;
        self.graphs.remove(index);
        Ok(())
    }
}

/// Whether `name` is a standalone projected-graph function (one that only a statement of its
/// own may call).
pub(crate) fn is_standalone(name: &str) -> bool {
    [
        "project_graph",
        "project_graph_cypher",
        "drop_projected_graph",
    ]
    .iter()
    .any(|f| f.eq_ignore_ascii_case(name))
}

/// A constant argument: its value and type.
pub(crate) type Argument = (Value, LogicalType);

/// `Function f did not receive correct arguments: ...` when `arguments` do not number
/// `expected.len()`.
pub(crate) fn check_argument_count(
    function: &str,
    arguments: &[Argument],
    expected: &[&str],
) -> Result<()> {
    if arguments.len() == expected.len() {
        return Ok(());
    }
    let actual: Vec<String> = arguments.iter().map(|(_, ty)| ty.to_string()).collect();
    Err(Error::binder(format!(
        "Function {function} did not receive correct arguments:\nActual:   ({})\nExpected: ({})",
        actual.join(","),
        expected.join(",")
    )))
}

/// A constant argument as text (NULL is the empty string), as Kùzu casts names to STRING.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.to_string(),
        other => warren_common::format::to_kuzu_string(other, &NoGraph),
    }
}

/// The tables of a PROJECT_GRAPH argument: a list of names, or a struct `{'name': 'predicate'}`.
fn table_entries(argument: &Argument) -> Result<Vec<ProjectedTable>> {
    let string = |value: &Value| -> Result<String> {
        match value {
            Value::String(text) => Ok(text.to_string()),
            other => Err(Error::binder(format!(
                "{} has data type {} but STRING was expected.",
                text_of(other),
                other.logical_type()
            ))),
        }
    };
    match &argument.0 {
        Value::List(items) => items
            .iter()
            .map(|item| {
                Ok(ProjectedTable {
                    name: string(item)?,
                    predicate: String::new(),
                })
            })
            .collect(),
        Value::Struct(fields) => fields
            .fields
            .iter()
            .map(|(name, predicate)| {
                Ok(ProjectedTable {
                    name: name.to_string(),
                    predicate: string(predicate)?,
                })
            })
            .collect(),
        other => Err(Error::binder(format!(
            "Argument {} has data type {}. LIST or STRUCT was expected.",
            text_of(other),
            argument.1
        ))),
    }
}

impl Binder<'_> {
    /// Binds `CALL PROJECT_GRAPH(...)`, `CALL PROJECT_GRAPH_CYPHER(...)` or
    /// `CALL drop_projected_graph(...)` standing alone as a statement.
    pub(crate) fn bind_projected_graph_call(
        &mut self,
        call: &ast::CallClause,
    ) -> Result<BoundStatement> {
        let arguments = self.constant_arguments(&call.args)?;
        let command = match call.name.to_ascii_lowercase().as_str() {
            "project_graph" => {
                check_argument_count(&call.name, &arguments, &["STRING", "ANY", "ANY"])?;
                ProjectedGraphCommand::Create(self.bind_native_graph(&arguments)?)
            }
            "project_graph_cypher" => {
                check_argument_count(&call.name, &arguments, &["STRING", "STRING"])?;
                let query = text_of(&arguments[1].0);
                self.check_statements(&query)?;
                ProjectedGraphCommand::Create(ProjectedGraph::Cypher {
                    name: text_of(&arguments[0].0),
                    query,
                })
            }
            _ => {
                check_argument_count(&call.name, &arguments, &["STRING"])?;
                ProjectedGraphCommand::Drop(text_of(&arguments[0].0))
            }
        };
        Ok(BoundStatement::ProjectedGraph(command))
    }

    /// Evaluates the arguments of a table function call, which must be constants.
    pub(crate) fn constant_arguments(&mut self, args: &[ast::Expr]) -> Result<Vec<Argument>> {
        let mut arguments = Vec::with_capacity(args.len());
        for arg in args {
            let scope = super::scope::Scope::default();
            let (bound, ty) = self.bind_expr(arg, &scope)?;
            let value = crate::constant::evaluate_constant(&bound).ok_or_else(|| {
                Error::binder("The arguments of a table function must be constants.")
            })?;
            arguments.push((value, ty));
        }
        Ok(arguments)
    }

    fn bind_native_graph(&mut self, arguments: &[Argument]) -> Result<ProjectedGraph> {
        let nodes = table_entries(&arguments[1])?;
        let mut node_ids = Vec::with_capacity(nodes.len());
        for entry in &nodes {
            node_ids.push(self.projected_node_table(entry)?);
        }
        let rels = table_entries(&arguments[2])?;
        let mut rel_names = Vec::with_capacity(rels.len());
        for entry in &rels {
            rel_names.push(self.projected_rel_table(entry)?);
        }
        for rel in rel_names {
            self.check_endpoints_projected(&rel, &node_ids)?;
        }
        Ok(ProjectedGraph::Native {
            name: text_of(&arguments[0].0),
            nodes,
            rels,
        })
    }

    /// Checks one node entry; returns its table id.
    fn projected_node_table(&mut self, entry: &ProjectedTable) -> Result<TableId> {
        let Some(table) = self.catalog.node_table(&entry.name) else {
            if self.catalog.rel_table(&entry.name).is_some() {
                return Err(Error::binder(format!(
                    "{} is not a NODE table.",
                    entry.name
                )));
            }
            return Err(Error::Catalog(format!(
                "{} does not exist in catalog.",
                entry.name
            )));
        };
        let id = table.id;
        if !entry.predicate.is_empty() {
            self.check_statements(&format!(
                "MATCH (n:`{}`) RETURN n, {}",
                entry.name, entry.predicate
            ))?;
        }
        Ok(id)
    }

    /// Checks one rel entry; returns the rel table's catalog name.
    fn projected_rel_table(&mut self, entry: &ProjectedTable) -> Result<String> {
        let Some(table) = self.catalog.rel_table(&entry.name) else {
            if self.catalog.node_table(&entry.name).is_some() {
                return Err(Error::binder(format!(
                    "{} has catalog entry type. REL entry was expected.",
                    entry.name
                )));
            }
            return Err(Error::binder(format!("{} is not a REL table.", entry.name)));
        };
        let name = table.name.clone();
        if !entry.predicate.is_empty() {
            self.check_statements(&format!(
                "MATCH ()-[r:`{}`]->() RETURN r, {}",
                entry.name, entry.predicate
            ))?;
        }
        Ok(name)
    }

    /// Every FROM and TO table of rel table `rel` must be among the projected node tables.
    fn check_endpoints_projected(&self, rel: &str, node_ids: &[TableId]) -> Result<()> {
        let table = self.catalog.rel_table(rel).expect("checked rel table");
        for pair in &table.pairs {
            for end in [pair.from, pair.to] {
                if !node_ids.contains(&end) {
                    return Err(Error::binder(format!(
                        "{} is connected to {} but not projected.",
                        self.catalog.label(end),
                        table.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// Parses and binds every statement of `text` against this binder's catalog, as Kùzu
    /// checks predicates and queries when a projected graph is created.
    fn check_statements(&mut self, text: &str) -> Result<()> {
        for statement in warren_cypher::parse_script(text)? {
            let mut binder =
                Binder::new(self.catalog, self.parameters, self.settings, self.session);
            binder.bind_statement(&statement)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn native(name: &str) -> ProjectedGraph {
        ProjectedGraph::Native {
            name: name.into(),
            nodes: vec![ProjectedTable {
                name: "person".into(),
                predicate: "n.age > 35".into(),
            }],
            rels: Vec::new(),
        }
    }

    #[test]
    fn registry_rejects_taken_and_unknown_names() {
        let mut graphs = ProjectedGraphs::default();
        graphs
            .apply(ProjectedGraphCommand::Create(native("PK")))
            .unwrap();
        let taken = graphs.apply(ProjectedGraphCommand::Create(native("PK")));
        assert_eq!(
            taken.unwrap_err().to_string(),
            "Runtime exception: Projected graph PK already exists."
        );
        // Names are case-sensitive, as in Kùzu.
        graphs
            .apply(ProjectedGraphCommand::Create(native("pk")))
            .unwrap();
        assert_eq!(graphs.len(), 2);
        graphs
            .apply(ProjectedGraphCommand::Drop("PK".into()))
            .unwrap();
        let unknown = graphs.apply(ProjectedGraphCommand::Drop("PK".into()));
        assert_eq!(
            unknown.unwrap_err().to_string(),
            "Runtime exception: Projected graph PK does not exists."
        );
        assert_eq!(graphs.iter().map(|g| g.name()).collect::<Vec<_>>(), ["pk"]);
    }

    #[test]
    fn registry_is_bounded() {
        let mut graphs = ProjectedGraphs::default();
        for i in 0..PROJECTED_GRAPHS_MAX {
            graphs
                .apply(ProjectedGraphCommand::Create(native(&i.to_string())))
                .unwrap();
        }
        let over = graphs.apply(ProjectedGraphCommand::Create(native("one more")));
        assert!(matches!(over, Err(Error::LimitExceeded(_))));
    }

    #[test]
    fn table_entries_accept_lists_and_structs_of_strings() {
        let list = (
            Value::list(vec![Value::string("person"), Value::string("knows")]),
            LogicalType::list(LogicalType::String),
        );
        let names: Vec<String> = table_entries(&list)
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["person", "knows"]);
        let bad_element = (Value::list(vec![Value::Int64(1)]), LogicalType::Any);
        assert_eq!(
            table_entries(&bad_element).unwrap_err().to_string(),
            "Binder exception: 1 has data type INT64 but STRING was expected."
        );
        let null = (Value::Null, LogicalType::Any);
        assert_eq!(
            table_entries(&null).unwrap_err().to_string(),
            "Binder exception: Argument  has data type ANY. LIST or STRUCT was expected."
        );
    }

    #[test]
    fn argument_counts_are_reported_with_types() {
        let arguments = [
            (Value::string("g"), LogicalType::String),
            (Value::Null, LogicalType::list(LogicalType::String)),
        ];
        let error = check_argument_count("PROJECT_GRAPH", &arguments, &["STRING", "ANY", "ANY"]);
        assert_eq!(
            error.unwrap_err().to_string(),
            "Binder exception: Function PROJECT_GRAPH did not receive correct arguments:\nActual:   (STRING,STRING[])\nExpected: (STRING,ANY,ANY)"
        );
        assert!(is_standalone("Drop_Projected_Graph"));
        assert!(!is_standalone("show_tables"));
    }
}

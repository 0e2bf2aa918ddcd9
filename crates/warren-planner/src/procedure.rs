//! Graph procedures: `CALL` of a function that reads the graph with arguments evaluated per
//! input row (`MATCH ... WITH collect(p) AS seeds CALL spread_activation('Knows', seeds) ...`),
//! unlike the catalog table functions, whose rows are fixed when the call is bound. The binder
//! resolves what must be constant (table and property names, options) into a
//! [`ProcedureKind`]; the executor evaluates [`ProcedureCall::arguments`] for each input row,
//! runs the procedure, and joins its rows to that row. A new procedure adds a variant here and
//! an implementation of the executor's `GraphProcedure` trait.

use warren_common::types::LogicalType;
use warren_common::TableId;
use warren_storage::VectorIndexSchema;

use crate::expr::Expr;
use crate::plan::Step;

/// A bound call of a graph procedure.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcedureCall {
    /// The name as called, for EXPLAIN and errors.
    pub name: String,
    /// What the binder fixed.
    pub kind: ProcedureKind,
    /// Arguments evaluated per input row, in the order the procedure defines.
    pub arguments: Vec<Expr>,
    /// The output columns, in order: name and type.
    pub columns: Vec<(String, LogicalType)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ProcedureKind {
    SpreadActivation(SpreadActivation),
    QueryVectorIndex(QueryVectorIndex),
}

/// `QUERY_VECTOR_INDEX(table, index, query, k, efs :=)`. Its per-row arguments are, in order:
/// query, k, efs.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryVectorIndex {
    /// The index's definition as the statement was bound (its options key the built graph).
    pub index: VectorIndexSchema,
    /// The indexed property's column in the node table.
    pub column: usize,
    /// The vector length of the indexed `FLOAT[n]`/`DOUBLE[n]` property.
    pub dimension: usize,
    /// Called on a projected graph with a predicate on its node table: only nodes passing it
    /// are returned, `k` of them when `k` pass (Kùzu's filtered search).
    pub filter: Option<NodeFilter>,
}

/// A predicate over one node, bound to the variable in row slot `slot`.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeFilter {
    pub slot: usize,
    pub predicate: Expr,
}

impl QueryVectorIndex {
    pub const ARGUMENTS: [&'static str; 3] = ["query", "k", "efs"];
}

/// `spread_activation(rel_table, seeds, decay :=, threshold :=, max_hops :=, weight :=,
/// direction :=)`. Its per-row arguments are, in order: seeds, decay, threshold, max_hops.
#[derive(Clone, Debug, PartialEq)]
pub struct SpreadActivation {
    /// The rel table's name, for errors.
    pub rel_table: String,
    /// Each rel pair of the table, in the direction activation is pushed (forward for `out`
    /// and `both`, backward for `in`).
    pub steps: Vec<Step>,
    /// `direction := 'both'`: activation also flows against the steps.
    pub both: bool,
    /// The weight property's column in each rel pair; `None`: every rel weighs 1.
    pub weight: Option<Vec<(TableId, usize)>>,
    /// The node tables the rel table connects (the tables of `node` in the output).
    pub node_tables: Vec<TableId>,
}

impl SpreadActivation {
    /// The per-row arguments.
    pub const ARGUMENTS: [&'static str; 4] = ["seeds", "decay", "threshold", "max_hops"];
    /// Defaults of the optional arguments (Kùzu-style named arguments).
    pub const DECAY_DEFAULT: f64 = 0.5;
    pub const THRESHOLD_DEFAULT: f64 = 0.01;
    pub const MAX_HOPS_DEFAULT: i64 = 3;
}

//! The physical plan: a tree of operators over fixed-width rows. Every variable and computed
//! column of a query has a slot; an operator reads some slots and writes others. Leaves are
//! [`Plan::Unit`] (one empty row) and [`Plan::Argument`] (the outer row of a subquery).

use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::value::{Projection, Value};
use warren_common::TableId;
use warren_storage::Direction;

use crate::expr::{AggregateExpr, AggregateFunction, Expr, PropertyColumns};

/// One (rel pair, direction) an expansion follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    pub pair: TableId,
    pub direction: Direction,
}

/// The far end of an expansion.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// Bind the reached node to `slot` if its table is one of `tables`.
    Bind { slot: usize, tables: Vec<TableId> },
    /// Keep only expansions that reach the node already in `slot`.
    Check { slot: usize },
}

impl Target {
    pub fn slot(&self) -> usize {
        match self {
            Target::Bind { slot, .. } | Target::Check { slot } => *slot,
        }
    }
}

/// One value [`Plan::FoldColumns`] computes into `slot`: over the rows that pass,
/// `CountStar` their number, `Count` the non-NULL values of `property` (as an INT64), and
/// `Sum`, `Min`, `Max` and `Avg` of `property` what the aggregate of that name gives over
/// them (NULL when no value is non-NULL). The aggregation above folds it back: counts by
/// `SumCounts`, the others by the same function over this one value.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnFold {
    pub slot: usize,
    pub function: AggregateFunction,
    /// `None` only for `CountStar`.
    pub property: Option<PropertyColumns>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// A single row with every slot NULL.
    Unit,
    /// The outer row a subquery runs for.
    Argument,
    /// For each input row, every live node of `tables` (that passes `filter`) in `slot`.
    ScanNodes {
        input: Box<Plan>,
        tables: Vec<TableId>,
        slot: usize,
        filter: Option<Expr>,
    },
    /// For each input row, the node of one of `tables` whose primary key equals `key`.
    LookupNode {
        input: Box<Plan>,
        tables: Vec<TableId>,
        key: Expr,
        slot: usize,
        filter: Option<Expr>,
    },
    /// Single-hop expansion from the node in `from`.
    Expand {
        input: Box<Plan>,
        from: usize,
        steps: Vec<Step>,
        rel_slot: Option<usize>,
        target: Target,
    },
    /// Single-hop expansion counted, not enumerated: for each input row whose node in `from`
    /// has at least one entry along `steps` reaching a node of `tables`, one row with that
    /// number of entries in `count_slot` (rows with none are dropped, as the expansion yields
    /// nothing for them). What an aggregation that only counts the expansion's rows reads.
    CountExpand {
        input: Box<Plan>,
        from: usize,
        steps: Vec<Step>,
        tables: Vec<TableId>,
        count_slot: usize,
    },
    /// One row whose `count_slot` holds the number of live nodes of `tables` (`steps`
    /// empty), or of the entries a single-hop expansion from every live node of `tables`
    /// along `steps` to nodes of `targets` yields (the live rels of each step that starts at
    /// one of `tables` and ends at one of `targets`); no row when that number is 0. What an
    /// aggregation that only counts an unfiltered scan, or an unfiltered scan's single hop,
    /// reads (`optimizer/count_all.rs`).
    CountAll {
        tables: Vec<TableId>,
        steps: Vec<Step>,
        targets: Vec<TableId>,
        count_slot: usize,
    },
    /// One row per group of the live nodes of `tables` that pass `filter` (tested with the
    /// node in `slot`), in order of the group's first node, holding the group's `keys` (each
    /// an expression over the node alone, evaluated into its slot) and each fold's value over
    /// the group, read from the stored columns; without keys one group of every passing node;
    /// no row when no node passes. What an aggregation over a node scan of one input row reads
    /// (`optimizer/fold_columns.rs`): it then folds each group's one row into the same answer.
    FoldColumns {
        tables: Vec<TableId>,
        slot: usize,
        filter: Option<Expr>,
        keys: Vec<(usize, Expr)>,
        folds: Vec<ColumnFold>,
    },
    /// The live nodes of `tables` that pass `filter` (the node in `slot`) that a stable sort by
    /// `keys` (properties of the node, each descending or not) would put at positions
    /// `skip..skip + limit`, in that order, each a row with the node in `slot`: what
    /// `ORDER BY ... LIMIT` over a projection of a scan reads when every key is a property of
    /// the scanned node (`optimizer/top_k.rs`), found from the columns before any row is made.
    TopNodes {
        tables: Vec<TableId>,
        slot: usize,
        filter: Option<Expr>,
        keys: Vec<(PropertyColumns, bool)>,
        skip: Option<Expr>,
        limit: Expr,
    },
    Recursive(Box<RecursivePlan>),
    Filter {
        input: Box<Plan>,
        predicate: Expr,
    },
    /// Evaluates each expression and writes it to its slot, in order.
    Project {
        input: Box<Plan>,
        assignments: Vec<(usize, Expr)>,
    },
    /// Groups by `keys` and computes `aggregates`; output rows hold only those slots.
    Aggregate {
        input: Box<Plan>,
        keys: Vec<(usize, Expr)>,
        aggregates: Vec<(usize, AggregateExpr)>,
    },
    /// Keeps the first row of every distinct combination of `slots`.
    Distinct {
        input: Box<Plan>,
        slots: Vec<usize>,
    },
    OrderBy {
        input: Box<Plan>,
        keys: Vec<(Expr, bool)>,
    },
    /// `ORDER BY keys [SKIP skip] LIMIT limit`: the first `skip + limit` rows in order, kept
    /// in a bounded heap (never a sort of every row), then `skip` of them dropped.
    TopN {
        input: Box<Plan>,
        keys: Vec<(Expr, bool)>,
        skip: Option<Expr>,
        limit: Expr,
    },
    /// A node scan ordered by an array distance function of a vector column and a constant
    /// vector, limited: a parallel scan of the contiguous column with a bounded heap per thread.
    VectorTopK(Box<VectorTopK>),
    Skip {
        input: Box<Plan>,
        count: Expr,
    },
    Limit {
        input: Box<Plan>,
        count: Expr,
    },
    Unwind {
        input: Box<Plan>,
        expr: Expr,
        slot: usize,
    },
    /// `LOAD FROM`: for each input row, every row of the CSV files, its values in `columns`.
    LoadCsv {
        input: Box<Plan>,
        files: Vec<std::path::PathBuf>,
        options: warren_storage::import::CsvOptions,
        columns: Vec<(usize, LogicalType)>,
    },
    /// `CALL f(...)`: for each input row, every row of a table function's result, its values in
    /// `columns`. The rows are computed when the call is bound (from the catalog and the
    /// connection the statement is bound against), as Kùzu computes a table function's bind data.
    TableFunction {
        input: Box<Plan>,
        /// The function's name, for EXPLAIN.
        name: String,
        rows: Arc<[Vec<Value>]>,
        columns: Vec<usize>,
    },
    /// `CALL` of a graph procedure: for each input row, its arguments are evaluated and every
    /// row it returns is joined to the input row, its values in `columns`. `dead` are input
    /// slots no operator above reads (set by dead-slot pruning): they are set to NULL once the
    /// arguments are evaluated, so the output rows do not carry (clone) their values.
    /// `unread` are the procedure's own columns no operator above reads (the procedure may
    /// leave them NULL); `ordered` is false when nothing above depends on the order of its
    /// rows (set by `optimizer/procedure_order.rs`), so it may skip the order it documents.
    /// `top`: only rows that can be among the first `top` of the procedure's ranking are
    /// needed (ties at the boundary included), when a top-N above sorts by that ranking first
    /// (set by `optimizer/procedure_top.rs`).
    Procedure {
        input: Box<Plan>,
        call: Arc<crate::procedure::ProcedureCall>,
        columns: Vec<usize>,
        dead: Vec<usize>,
        unread: Vec<usize>,
        ordered: bool,
        top: Option<u64>,
    },
    /// Runs `inner` (whose leaf is [`Plan::Argument`]) per input row; if it yields nothing, emits
    /// the input row with `null_slots` set to NULL.
    Optional {
        input: Box<Plan>,
        inner: Box<Plan>,
        null_slots: Vec<usize>,
    },
    /// Concatenates the inputs; each input's `slots` are copied to `output` slots.
    Union {
        inputs: Vec<(Plan, Vec<usize>)>,
        output: Vec<usize>,
        all: bool,
    },
    Create {
        input: Box<Plan>,
        nodes: Vec<CreateNode>,
        rels: Vec<CreateRel>,
    },
    Merge {
        input: Box<Plan>,
        merge: Box<MergePlan>,
    },
    SetProperties {
        input: Box<Plan>,
        items: Vec<SetItem>,
    },
    Delete {
        input: Box<Plan>,
        targets: Vec<Expr>,
        detach: bool,
    },
}

/// `MATCH (n:T) [WHERE filter] RETURN ... ORDER BY f(n.column, query) [DESC] [SKIP s] LIMIT k`
/// as one operator: it emits the rows (with the node in `slot`) in the order the sort would,
/// ties broken by node offset.
#[derive(Clone, Debug, PartialEq)]
pub struct VectorTopK {
    /// The plan the scan ran over ([`Plan::Unit`]: one input row).
    pub input: Plan,
    pub table: TableId,
    pub slot: usize,
    /// The vector column's index in `table`.
    pub column: usize,
    pub function: crate::functions::ScalarFunction,
    /// The array type both arguments are cast to (`FLOAT[n]` or `DOUBLE[n]`).
    pub array_type: LogicalType,
    /// The constant vector (a literal or a parameter).
    pub query: Expr,
    pub descending: bool,
    /// The scan's filter on the node.
    pub filter: Option<Expr>,
    pub skip: Option<Expr>,
    pub limit: Expr,
}

/// A node to create for each input row.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateNode {
    pub table: TableId,
    pub slot: usize,
    /// (property index, value) pairs.
    pub properties: Vec<(usize, Expr)>,
}

/// A rel to create between two bound node slots.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateRel {
    /// Candidate pairs of the rel table; the one matching the endpoints' tables is used.
    pub pairs: Vec<TableId>,
    pub from: usize,
    pub to: usize,
    pub slot: Option<usize>,
    pub properties: Vec<(usize, Expr)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MergePlan {
    /// Finds existing matches; leaf is [`Plan::Argument`].
    pub matcher: Plan,
    pub create_nodes: Vec<CreateNode>,
    pub create_rels: Vec<CreateRel>,
    pub on_create: Vec<SetItem>,
    pub on_match: Vec<SetItem>,
    /// Slots the pattern binds (reset before creating).
    pub bound_slots: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SetItem {
    /// Sets property `name` of the node or rel in `target`; `columns` maps table -> column.
    Property {
        target: Expr,
        columns: Vec<(TableId, usize, LogicalType)>,
        name: String,
        value: Expr,
    },
}

/// What a recursive pattern computes.
#[derive(Clone, Debug, PartialEq)]
pub enum RecursiveKind {
    Walk,
    Trail,
    Acyclic,
    Shortest,
    AllShortest,
    /// Minimum total weight; `weights` gives the weight column of each rel pair.
    WeightedShortest {
        weights: Vec<(TableId, usize)>,
    },
    AllWeightedShortest {
        weights: Vec<(TableId, usize)>,
    },
}

impl RecursiveKind {
    pub fn is_shortest(&self) -> bool {
        matches!(self, RecursiveKind::Shortest | RecursiveKind::AllShortest)
    }

    pub fn is_weighted(&self) -> bool {
        matches!(
            self,
            RecursiveKind::WeightedShortest { .. } | RecursiveKind::AllWeightedShortest { .. }
        )
    }
}

/// Where the destination of a recursive pattern comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Destination {
    /// Bind every reached node of `tables` passing `filter` (which reads only `slot`).
    Bind {
        slot: usize,
        tables: Vec<TableId>,
        filter: Option<Expr>,
    },
    /// The destination is the node already in `slot`.
    Check { slot: usize },
}

/// What each result row of a recursive pattern carries.
#[derive(Clone, Debug, PartialEq)]
pub enum RecursiveOutput {
    /// One row per path: the recursive rel value (if needed), its length and cost.
    Paths {
        rel_slot: Option<usize>,
        length_slot: Option<usize>,
        cost_slot: Option<usize>,
    },
    /// Paths are counted, not enumerated: one row per input row (and per destination when
    /// `per_destination`), carrying the number of paths and their summed, minimum and maximum
    /// lengths.
    Counts {
        per_destination: bool,
        count_slot: usize,
        length_sum_slot: Option<usize>,
        length_min_slot: Option<usize>,
        length_max_slot: Option<usize>,
    },
}

/// A recursive join from the node in `source` over `steps`.
#[derive(Clone, Debug, PartialEq)]
pub struct RecursivePlan {
    pub input: Plan,
    pub source: usize,
    pub destination: Destination,
    /// The rel pairs and directions one hop may follow, in traversal direction.
    pub steps: Vec<Step>,
    pub kind: RecursiveKind,
    pub lower: u32,
    pub upper: u32,
    /// Predicate every rel must pass; reads `rel_filter_slot`.
    pub rel_filter: Option<(usize, Expr)>,
    /// Predicate every intermediate node must pass; reads `node_filter_slot`.
    pub node_filter: Option<(usize, Expr)>,
    /// Properties carried by intermediate nodes and rels of emitted paths (`None`: all).
    pub node_projection: Option<Projection>,
    pub rel_projection: Option<Projection>,
    /// True when traversal runs from the pattern's right node to its left one: emitted paths
    /// are reversed into pattern order.
    pub reversed: bool,
    pub output: RecursiveOutput,
    /// The variable name, for EXPLAIN.
    pub name: String,
}

/// A bound query: its plan and the columns it returns.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryPlan {
    pub plan: Plan,
    /// (column name, slot, type).
    pub columns: Vec<(String, usize, LogicalType)>,
    /// Row width: the number of slots.
    pub slots: usize,
    /// Whether the plan writes.
    pub updates: bool,
}

impl Plan {
    /// The direct children of this operator.
    pub fn children(&self) -> Vec<&Plan> {
        let mut children = Vec::new();
        self.for_each_child(&mut |child| children.push(child));
        children
    }

    /// Calls `visit` on each direct child of this operator (the children [`Plan::children`]
    /// lists and [`Plan::map_children`] rebuilds), without collecting them.
    pub fn for_each_child<'a>(&'a self, visit: &mut dyn FnMut(&'a Plan)) {
        match self {
            Plan::Unit
            | Plan::Argument
            | Plan::CountAll { .. }
            | Plan::FoldColumns { .. }
            | Plan::TopNodes { .. } => {}
            Plan::ScanNodes { input, .. }
            | Plan::LookupNode { input, .. }
            | Plan::Expand { input, .. }
            | Plan::CountExpand { input, .. }
            | Plan::Filter { input, .. }
            | Plan::Project { input, .. }
            | Plan::Aggregate { input, .. }
            | Plan::Distinct { input, .. }
            | Plan::OrderBy { input, .. }
            | Plan::TopN { input, .. }
            | Plan::Skip { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Unwind { input, .. }
            | Plan::LoadCsv { input, .. }
            | Plan::TableFunction { input, .. }
            | Plan::Procedure { input, .. }
            | Plan::Create { input, .. }
            | Plan::Merge { input, .. }
            | Plan::SetProperties { input, .. }
            | Plan::Delete { input, .. } => visit(input),
            Plan::Optional { input, inner, .. } => {
                visit(input);
                visit(inner);
            }
            Plan::Recursive(r) => visit(&r.input),
            Plan::VectorTopK(v) => visit(&v.input),
            Plan::Union { inputs, .. } => inputs.iter().for_each(|(p, _)| visit(p)),
        }
    }

    /// Whether this operator or one below it (through [`Plan::for_each_child`]) satisfies
    /// `test`.
    pub fn any(&self, test: &dyn Fn(&Plan) -> bool) -> bool {
        if test(self) {
            return true;
        }
        let mut found = false;
        self.for_each_child(&mut |child| found = found || child.any(test));
        found
    }

    /// Calls `visit` on every expression this operator itself evaluates (not its children's).
    pub fn for_each_expr(&self, visit: &mut dyn FnMut(&Expr)) {
        match self {
            Plan::Unit
            | Plan::Argument
            | Plan::CountAll { .. }
            | Plan::Distinct { .. }
            | Plan::Union { .. } => {}
            Plan::ScanNodes { filter, .. } => filter.iter().for_each(visit),
            Plan::FoldColumns { filter, keys, .. } => {
                filter.iter().for_each(&mut *visit);
                keys.iter().for_each(|(_, key)| visit(key));
            }
            Plan::TopNodes {
                filter,
                skip,
                limit,
                ..
            } => {
                filter.iter().for_each(&mut *visit);
                skip.iter().for_each(&mut *visit);
                visit(limit);
            }
            Plan::LookupNode { key, filter, .. } => {
                visit(key);
                filter.iter().for_each(visit);
            }
            Plan::Expand { from, .. } | Plan::CountExpand { from, .. } => {
                visit(&Expr::Slot(*from));
            }
            Plan::Recursive(r) => {
                visit(&Expr::Slot(r.source));
                match &r.destination {
                    Destination::Bind { filter, .. } => filter.iter().for_each(&mut *visit),
                    Destination::Check { slot } => visit(&Expr::Slot(*slot)),
                }
                r.rel_filter.iter().for_each(|(_, e)| visit(e));
                r.node_filter.iter().for_each(|(_, e)| visit(e));
            }
            Plan::Filter { predicate, .. } => visit(predicate),
            Plan::Project { assignments, .. } => assignments.iter().for_each(|(_, e)| visit(e)),
            Plan::Aggregate {
                keys, aggregates, ..
            } => {
                keys.iter().for_each(|(_, e)| visit(e));
                aggregates
                    .iter()
                    .filter_map(|(_, a)| a.arg.as_ref())
                    .for_each(visit);
            }
            Plan::OrderBy { keys, .. } => keys.iter().for_each(|(e, _)| visit(e)),
            Plan::TopN {
                keys, skip, limit, ..
            } => {
                keys.iter().for_each(|(e, _)| visit(e));
                skip.iter().for_each(&mut *visit);
                visit(limit);
            }
            Plan::VectorTopK(v) => {
                visit(&v.query);
                v.filter.iter().for_each(&mut *visit);
                v.skip.iter().for_each(&mut *visit);
                visit(&v.limit);
            }
            Plan::Skip { count, .. } | Plan::Limit { count, .. } => visit(count),
            Plan::Unwind { expr, .. } => visit(expr),
            Plan::Optional { .. } | Plan::LoadCsv { .. } | Plan::TableFunction { .. } => {}
            Plan::Procedure { call, .. } => call.arguments.iter().for_each(visit),
            Plan::Create { nodes, rels, .. } => {
                nodes
                    .iter()
                    .flat_map(|n| &n.properties)
                    .for_each(|(_, e)| visit(e));
                for rel in rels {
                    visit(&Expr::Slot(rel.from));
                    visit(&Expr::Slot(rel.to));
                    rel.properties.iter().for_each(|(_, e)| visit(e));
                }
            }
            Plan::Merge { merge, .. } => {
                merge
                    .create_nodes
                    .iter()
                    .flat_map(|n| &n.properties)
                    .for_each(|(_, e)| visit(e));
                for rel in &merge.create_rels {
                    visit(&Expr::Slot(rel.from));
                    visit(&Expr::Slot(rel.to));
                    rel.properties.iter().for_each(|(_, e)| visit(e));
                }
                for SetItem::Property { target, value, .. } in
                    merge.on_create.iter().chain(&merge.on_match)
                {
                    visit(target);
                    visit(value);
                }
            }
            Plan::SetProperties { items, .. } => {
                for SetItem::Property { target, value, .. } in items {
                    visit(target);
                    visit(value);
                }
            }
            Plan::Delete { targets, .. } => targets.iter().for_each(visit),
        }
    }

    /// Slots this operator itself writes.
    pub fn written_slots(&self) -> Vec<usize> {
        match self {
            Plan::ScanNodes { slot, .. }
            | Plan::LookupNode { slot, .. }
            | Plan::Unwind { slot, .. }
            | Plan::CountExpand {
                count_slot: slot, ..
            }
            | Plan::CountAll {
                count_slot: slot, ..
            } => vec![*slot],
            Plan::VectorTopK(v) => vec![v.slot],
            Plan::TopNodes { slot, .. } => vec![*slot],
            Plan::FoldColumns {
                slot, keys, folds, ..
            } => std::iter::once(*slot)
                .chain(keys.iter().map(|(key_slot, _)| *key_slot))
                .chain(folds.iter().map(|fold| fold.slot))
                .collect(),
            Plan::LoadCsv { columns, .. } => columns.iter().map(|(slot, _)| *slot).collect(),
            Plan::TableFunction { columns, .. } | Plan::Procedure { columns, .. } => {
                columns.clone()
            }
            Plan::Expand {
                rel_slot, target, ..
            } => {
                let mut slots = vec![target.slot()];
                slots.extend(rel_slot);
                slots
            }
            Plan::Recursive(r) => {
                let mut slots = Vec::new();
                if let Destination::Bind { slot, .. } = &r.destination {
                    slots.push(*slot);
                }
                slots.extend(r.rel_filter.iter().map(|(s, _)| *s));
                slots.extend(r.node_filter.iter().map(|(s, _)| *s));
                match &r.output {
                    RecursiveOutput::Paths {
                        rel_slot,
                        length_slot,
                        cost_slot,
                    } => {
                        slots.extend(rel_slot.iter().chain(length_slot).chain(cost_slot));
                    }
                    RecursiveOutput::Counts {
                        count_slot,
                        length_sum_slot,
                        length_min_slot,
                        length_max_slot,
                        ..
                    } => {
                        slots.push(*count_slot);
                        slots.extend(
                            length_sum_slot
                                .iter()
                                .chain(length_min_slot)
                                .chain(length_max_slot),
                        );
                    }
                }
                slots
            }
            Plan::Project { assignments, .. } => assignments.iter().map(|(s, _)| *s).collect(),
            Plan::Aggregate {
                keys, aggregates, ..
            } => keys
                .iter()
                .map(|(s, _)| *s)
                .chain(aggregates.iter().map(|(s, _)| *s))
                .collect(),
            Plan::Union { output, .. } => output.clone(),
            Plan::Create { nodes, rels, .. } => nodes
                .iter()
                .map(|n| n.slot)
                .chain(rels.iter().filter_map(|r| r.slot))
                .collect(),
            Plan::Merge { merge, .. } => merge.bound_slots.clone(),
            _ => Vec::new(),
        }
    }

    /// Every slot read anywhere in this plan, including lambda and comprehension variables.
    pub fn read_slots(&self, out: &mut Vec<usize>) {
        self.own_read_slots(out);
        self.for_each_child(&mut |child| child.read_slots(out));
    }

    /// Slots this operator itself reads (not its children): its expressions' slots, the slots
    /// it compares or copies, and what a MERGE's matcher reads.
    pub fn own_read_slots(&self, out: &mut Vec<usize>) {
        self.for_each_expr(&mut |e| out.extend(e.slots()));
        match self {
            Plan::Distinct { slots, .. } => out.extend(slots),
            Plan::Union { inputs, .. } => inputs.iter().for_each(|(_, slots)| out.extend(slots)),
            Plan::Merge { merge, .. } => merge.matcher.read_slots(out),
            _ => {}
        }
    }

    /// Every slot written anywhere in this plan.
    pub fn all_written_slots(&self, out: &mut Vec<usize>) {
        out.extend(self.written_slots());
        if let Plan::Merge { merge, .. } = self {
            merge.matcher.all_written_slots(out);
        }
        self.for_each_child(&mut |child| child.all_written_slots(out));
    }

    /// Slots of the outer row that a subquery plan reads: what it reads but does not write.
    pub fn outer_slots(&self) -> Vec<usize> {
        let mut reads = Vec::new();
        self.read_slots(&mut reads);
        let mut writes = Vec::new();
        self.all_written_slots(&mut writes);
        reads.retain(|s| !writes.contains(s));
        reads.sort_unstable();
        reads.dedup();
        reads
    }

    /// Rebuilds this operator with `f` applied to each child plan.
    pub fn map_children(self, f: &mut dyn FnMut(Plan) -> Plan) -> Plan {
        let mut boxed = |p: Box<Plan>| Box::new(f(*p));
        match self {
            Plan::Unit => Plan::Unit,
            Plan::Argument => Plan::Argument,
            count @ Plan::CountAll { .. } => count,
            fold @ Plan::FoldColumns { .. } => fold,
            top @ Plan::TopNodes { .. } => top,
            Plan::ScanNodes {
                input,
                tables,
                slot,
                filter,
            } => Plan::ScanNodes {
                input: boxed(input),
                tables,
                slot,
                filter,
            },
            Plan::LookupNode {
                input,
                tables,
                key,
                slot,
                filter,
            } => Plan::LookupNode {
                input: boxed(input),
                tables,
                key,
                slot,
                filter,
            },
            Plan::Expand {
                input,
                from,
                steps,
                rel_slot,
                target,
            } => Plan::Expand {
                input: boxed(input),
                from,
                steps,
                rel_slot,
                target,
            },
            Plan::CountExpand {
                input,
                from,
                steps,
                tables,
                count_slot,
            } => Plan::CountExpand {
                input: boxed(input),
                from,
                steps,
                tables,
                count_slot,
            },
            Plan::Recursive(mut r) => {
                let input = std::mem::replace(&mut r.input, Plan::Unit);
                r.input = f(input);
                Plan::Recursive(r)
            }
            Plan::Filter { input, predicate } => Plan::Filter {
                input: boxed(input),
                predicate,
            },
            Plan::Project { input, assignments } => Plan::Project {
                input: boxed(input),
                assignments,
            },
            Plan::Aggregate {
                input,
                keys,
                aggregates,
            } => Plan::Aggregate {
                input: boxed(input),
                keys,
                aggregates,
            },
            Plan::Distinct { input, slots } => Plan::Distinct {
                input: boxed(input),
                slots,
            },
            Plan::OrderBy { input, keys } => Plan::OrderBy {
                input: boxed(input),
                keys,
            },
            Plan::TopN {
                input,
                keys,
                skip,
                limit,
            } => Plan::TopN {
                input: boxed(input),
                keys,
                skip,
                limit,
            },
            Plan::VectorTopK(mut v) => {
                v.input = f(v.input);
                Plan::VectorTopK(v)
            }
            Plan::Skip { input, count } => Plan::Skip {
                input: boxed(input),
                count,
            },
            Plan::Limit { input, count } => Plan::Limit {
                input: boxed(input),
                count,
            },
            Plan::Unwind { input, expr, slot } => Plan::Unwind {
                input: boxed(input),
                expr,
                slot,
            },
            Plan::LoadCsv {
                input,
                files,
                options,
                columns,
            } => Plan::LoadCsv {
                input: boxed(input),
                files,
                options,
                columns,
            },
            Plan::TableFunction {
                input,
                name,
                rows,
                columns,
            } => Plan::TableFunction {
                input: boxed(input),
                name,
                rows,
                columns,
            },
            Plan::Procedure {
                input,
                call,
                columns,
                dead,
                unread,
                ordered,
                top,
            } => Plan::Procedure {
                input: boxed(input),
                call,
                columns,
                dead,
                unread,
                ordered,
                top,
            },
            Plan::Optional {
                input,
                inner,
                null_slots,
            } => {
                let input = boxed(input);
                Plan::Optional {
                    input,
                    inner: Box::new(f(*inner)),
                    null_slots,
                }
            }
            Plan::Union {
                inputs,
                output,
                all,
            } => Plan::Union {
                inputs: inputs.into_iter().map(|(p, slots)| (f(p), slots)).collect(),
                output,
                all,
            },
            Plan::Create { input, nodes, rels } => Plan::Create {
                input: boxed(input),
                nodes,
                rels,
            },
            Plan::Merge { input, merge } => Plan::Merge {
                input: boxed(input),
                merge,
            },
            Plan::SetProperties { input, items } => Plan::SetProperties {
                input: boxed(input),
                items,
            },
            Plan::Delete {
                input,
                targets,
                detach,
            } => Plan::Delete {
                input: boxed(input),
                targets,
                detach,
            },
        }
    }

    /// Whether this plan (or a child) writes to the database.
    pub fn updates(&self) -> bool {
        matches!(
            self,
            Plan::Create { .. }
                | Plan::Merge { .. }
                | Plan::SetProperties { .. }
                | Plan::Delete { .. }
        ) || {
            let mut found = false;
            self.for_each_child(&mut |child| found = found || child.updates());
            found
        }
    }
}

pub type SharedPlan = Arc<Plan>;

//! Bound expressions: names resolved to row slots, properties resolved to columns per table,
//! functions resolved to [`ScalarFunction`]s, parameters substituted. The executor evaluates
//! these against one row at a time.

use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::TableId;

use crate::functions::ScalarFunction;
use crate::plan::Plan;
use crate::user_function::UserFunctionRef;

pub use warren_cypher::ast::{BinaryOp, Quantifier, UnaryOp};

/// Where a named property lives in each table a node or rel variable may come from.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyColumns {
    pub name: Arc<str>,
    /// (table id, column index). A table absent here lacks the property: the value is NULL.
    pub columns: Vec<(TableId, usize)>,
}

impl PropertyColumns {
    #[inline]
    pub fn column(&self, table: TableId) -> Option<usize> {
        self.columns
            .iter()
            .find(|(t, _)| *t == table)
            .map(|(_, c)| *c)
    }
}

/// The built-in properties every node and rel has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InternalProperty {
    Id,
    Label,
    Source,
    Destination,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Literal(Value),
    /// The value in a row slot.
    Slot(usize),
    /// A stored property of a node or rel value.
    Property {
        base: Box<Expr>,
        property: PropertyColumns,
    },
    /// `_id`, `_label`, `_src`, `_dst` of a node or rel.
    InternalProperty {
        base: Box<Expr>,
        property: InternalProperty,
    },
    /// A field of a struct (or of a map-like value) by name.
    Field {
        base: Box<Expr>,
        name: Arc<str>,
    },
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    Function {
        function: ScalarFunction,
        args: Vec<Expr>,
    },
    /// A call of a connection's user function; the arguments have its parameter types.
    UserFunction {
        function: UserFunctionRef,
        args: Vec<Expr>,
    },
    /// A lambda argument of a list function: parameters are row slots set per element.
    Lambda {
        params: Vec<usize>,
        body: Box<Expr>,
    },
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    List(Vec<Expr>),
    Struct(Vec<(Arc<str>, Expr)>),
    Index {
        list: Box<Expr>,
        index: Box<Expr>,
    },
    Slice {
        list: Box<Expr>,
        start: Option<Box<Expr>>,
        end: Option<Box<Expr>>,
    },
    /// `[x IN list WHERE filter | map]`; `variable` is the slot x is written to.
    ListComprehension {
        list: Box<Expr>,
        variable: usize,
        filter: Option<Box<Expr>>,
        map: Option<Box<Expr>>,
    },
    Quantifier {
        kind: Quantifier,
        list: Box<Expr>,
        variable: usize,
        predicate: Box<Expr>,
    },
    /// `EXISTS { ... }` (count = false) or `COUNT { ... }` (count = true): the plan runs once per
    /// row with the outer row as its input.
    Subquery {
        plan: Arc<Plan>,
        count: bool,
    },
    /// Builds a named path from its parts, in pattern order.
    Path(Vec<PathPart>),
    Cast {
        expr: Box<Expr>,
        ty: LogicalType,
    },
}

/// One element of a named path.
#[derive(Clone, Debug, PartialEq)]
pub enum PathPart {
    /// A node slot.
    Node(usize),
    /// A single rel slot.
    Rel(usize),
    /// A recursive rel slot (its intermediate nodes and rels are spliced in).
    RecursiveRel(usize),
}

impl Expr {
    pub fn literal(value: impl Into<Value>) -> Self {
        Expr::Literal(value.into())
    }

    pub fn is_literal(&self) -> bool {
        matches!(self, Expr::Literal(_))
    }

    /// Calls `visit` on every direct child expression.
    pub fn for_each_child(&self, visit: &mut dyn FnMut(&Expr)) {
        match self {
            Expr::Literal(_) | Expr::Slot(_) | Expr::Subquery { .. } => {}
            Expr::Property { base, .. }
            | Expr::InternalProperty { base, .. }
            | Expr::Field { base, .. } => visit(base),
            Expr::Unary(_, e) | Expr::IsNull { expr: e, .. } | Expr::Cast { expr: e, .. } => {
                visit(e)
            }
            Expr::Binary(_, a, b) => {
                visit(a);
                visit(b);
            }
            Expr::Function { args, .. } | Expr::UserFunction { args, .. } | Expr::List(args) => {
                args.iter().for_each(visit)
            }
            Expr::Lambda { body, .. } => visit(body),
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                if let Some(o) = operand {
                    visit(o);
                }
                for (w, t) in whens {
                    visit(w);
                    visit(t);
                }
                if let Some(o) = otherwise {
                    visit(o);
                }
            }
            Expr::Struct(fields) => fields.iter().for_each(|(_, e)| visit(e)),
            Expr::Index { list, index } => {
                visit(list);
                visit(index);
            }
            Expr::Slice { list, start, end } => {
                visit(list);
                if let Some(s) = start {
                    visit(s);
                }
                if let Some(e) = end {
                    visit(e);
                }
            }
            Expr::ListComprehension {
                list, filter, map, ..
            } => {
                visit(list);
                if let Some(f) = filter {
                    visit(f);
                }
                if let Some(m) = map {
                    visit(m);
                }
            }
            Expr::Quantifier {
                list, predicate, ..
            } => {
                visit(list);
                visit(predicate);
            }
            Expr::Path(_) => {}
        }
    }

    /// Every slot this expression reads (subquery inputs included).
    pub fn slots(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_slots(&mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    fn collect_slots(&self, out: &mut Vec<usize>) {
        let local: &[usize] = match self {
            Expr::ListComprehension { variable, .. } | Expr::Quantifier { variable, .. } => {
                std::slice::from_ref(variable)
            }
            Expr::Lambda { params, .. } => params,
            _ => &[],
        };
        if !local.is_empty() {
            let mut inner = Vec::new();
            self.for_each_child(&mut |child| child.collect_slots(&mut inner));
            out.extend(inner.into_iter().filter(|s| !local.contains(s)));
            return;
        }
        match self {
            Expr::Slot(s) => out.push(*s),
            Expr::Path(parts) => out.extend(parts.iter().map(|p| match p {
                PathPart::Node(s) | PathPart::Rel(s) | PathPart::RecursiveRel(s) => *s,
            })),
            Expr::Subquery { plan, .. } => out.extend(plan.outer_slots()),
            _ => {}
        }
        self.for_each_child(&mut |child| child.collect_slots(out));
    }
}

/// An aggregate function call in a projection.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateExpr {
    pub function: AggregateFunction,
    pub distinct: bool,
    /// `None` for `count(*)`.
    pub arg: Option<Expr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggregateFunction {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    Collect,
    /// Internal: sums path counts produced by a counting recursive join (0 over no rows).
    SumCounts,
}

impl AggregateFunction {
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "count" => AggregateFunction::Count,
            "sum" => AggregateFunction::Sum,
            "min" => AggregateFunction::Min,
            "max" => AggregateFunction::Max,
            "avg" => AggregateFunction::Avg,
            "collect" => AggregateFunction::Collect,
            _ => return None,
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            AggregateFunction::CountStar => "COUNT_STAR",
            AggregateFunction::Count => "COUNT",
            AggregateFunction::Sum => "SUM",
            AggregateFunction::Min => "MIN",
            AggregateFunction::Max => "MAX",
            AggregateFunction::Avg => "AVG",
            AggregateFunction::Collect => "COLLECT",
            AggregateFunction::SumCounts => "SUM_COUNTS",
        }
    }
}

//! The columnar result path: plans of the shape
//!
//! ```text
//! [Project: properties or variables of a, e, b]
//!   [Filter]*
//!     [Expand a -> b over rel e]
//!       [Filter]*
//!         ScanNodes a
//!           Unit
//! ```
//!
//! (node scans with property projections and filters, and one-hop expansions) run as a loop
//! over node offsets and CSR entries that fills column batches directly: ids first, then one
//! gather per output column from the stored columns. Rows come out in the row path's order
//! (scan tables in order, node offsets ascending, each step's entries in CSR order) with the
//! row path's values; [`ColumnarPlan::recognize`] answers `None` for every other plan, which
//! then runs on the row operators unchanged.

mod gather;
mod scan;

pub use scan::ColumnarScan;

use warren_common::types::LogicalType;
use warren_common::TableId;
use warren_planner::expr::{Expr, PropertyColumns};
use warren_planner::plan::{Plan, QueryPlan, Step, Target};

/// Which bound variable a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The scanned node.
    Source,
    /// The expansion's rel.
    Rel,
    /// The expansion's far node.
    Target,
}

/// What one result column holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// A stored property of a bound variable.
    Property {
        of: Bound,
        property: PropertyColumns,
        ty: LogicalType,
    },
    /// The node or rel value itself.
    Variable { of: Bound, ty: LogicalType },
}

/// The one-hop part of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpandSpec {
    pub steps: Vec<Step>,
    pub rel_slot: Option<usize>,
    pub target_slot: usize,
    pub target_tables: Vec<TableId>,
    /// Predicates over the whole (source, rel, target) row, applied per entry.
    pub filters: Vec<Expr>,
    /// Whether an output or a filter reads the rel (else its ids are not collected).
    pub rel_read: bool,
}

/// A plan the columnar path runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnarPlan {
    pub tables: Vec<TableId>,
    pub source_slot: usize,
    /// The scan's own filter and the filters between the scan and the expansion.
    pub source_filters: Vec<Expr>,
    pub expand: Option<ExpandSpec>,
    pub outputs: Vec<Output>,
    /// Row width of the plan (the filters read rows of this width).
    pub width: usize,
}

impl ColumnarPlan {
    /// The columnar form of `plan`, or `None` when its shape needs the row operators.
    pub fn recognize(plan: &QueryPlan) -> Option<Self> {
        if plan.updates || plan.columns.is_empty() {
            return None;
        }
        let (assignments, mut node) = match &plan.plan {
            Plan::Project { input, assignments } => (assignments.as_slice(), &**input),
            other => (&[][..], other),
        };
        let mut upper = Vec::new();
        while let Plan::Filter { input, predicate } = node {
            upper.push(predicate.clone());
            node = input;
        }
        let mut expand = None;
        if let Plan::Expand {
            input,
            from,
            steps,
            rel_slot,
            target: Target::Bind { slot, tables },
        } = node
        {
            expand = Some((*from, steps.clone(), *rel_slot, *slot, tables.clone()));
            node = input;
        }
        let mut lower = Vec::new();
        while let Plan::Filter { input, predicate } = node {
            lower.push(predicate.clone());
            node = input;
        }
        let Plan::ScanNodes {
            input,
            tables,
            slot,
            filter,
        } = node
        else {
            return None;
        };
        if **input != Plan::Unit {
            return None;
        }
        let mut source_filters: Vec<Expr> = filter.iter().cloned().collect();
        // Filters below the expansion (or all of them, without one) see the scanned node only.
        source_filters.extend(lower.into_iter().rev());
        let expand = match expand {
            Some((from, steps, rel_slot, target_slot, target_tables)) => {
                if from != *slot || target_slot == *slot || rel_slot == Some(*slot) {
                    return None;
                }
                Some(ExpandSpec {
                    steps,
                    rel_slot,
                    target_slot,
                    target_tables,
                    filters: upper.into_iter().rev().collect(),
                    rel_read: true,
                })
            }
            None => {
                source_filters.extend(upper.into_iter().rev());
                None
            }
        };
        let bound = |s: usize| -> Option<Bound> {
            if s == *slot {
                return Some(Bound::Source);
            }
            let expand = expand.as_ref()?;
            if expand.rel_slot == Some(s) {
                Some(Bound::Rel)
            } else if expand.target_slot == s {
                Some(Bound::Target)
            } else {
                None
            }
        };
        let mut outputs = Vec::with_capacity(plan.columns.len());
        for (_, column_slot, ty) in &plan.columns {
            // The last assignment to a slot is the value it ends with.
            let assigned = assignments.iter().rev().find(|(s, _)| s == column_slot);
            let output = match assigned.map(|(_, e)| e) {
                None => Output::Variable {
                    of: bound(*column_slot)?,
                    ty: ty.clone(),
                },
                Some(Expr::Slot(s)) => Output::Variable {
                    of: bound(*s)?,
                    ty: ty.clone(),
                },
                Some(Expr::Property { base, property }) => match &**base {
                    Expr::Slot(s) if !property.columns.is_empty() => Output::Property {
                        of: bound(*s)?,
                        property: property.clone(),
                        ty: ty.clone(),
                    },
                    _ => return None,
                },
                Some(_) => return None,
            };
            outputs.push(output);
        }
        // An assignment that reads a slot another one writes would see the written value.
        if assignments
            .iter()
            .any(|(s, _)| bound(*s).is_some() || !plan.columns.iter().any(|c| c.1 == *s))
        {
            return None;
        }
        let mut expand = expand;
        if let Some(expand) = &mut expand {
            expand.rel_read = !expand.filters.is_empty()
                || outputs.iter().any(|o| match o {
                    Output::Property { of, .. } | Output::Variable { of, .. } => *of == Bound::Rel,
                });
        }
        Some(Self {
            tables: tables.clone(),
            source_slot: *slot,
            source_filters,
            expand,
            outputs,
            width: plan.slots,
        })
    }
}

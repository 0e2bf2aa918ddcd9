//! Prefilters: the conjuncts of a node filter of the form `n.property op constant` with an
//! INT64 property and constant, checked on the raw column before a row is built and the full
//! filter is evaluated. A row failing one fails the whole filter (the conjunct is false or
//! NULL), so skipping it early changes no result; rows passing still get the full filter.

use warren_common::value::Value;
use warren_common::TableId;
use warren_planner::expr::{BinaryOp, Expr, PropertyColumns};
use warren_storage::column::Column;

/// `property op constant` on the scanned node, with an INT64 constant: a row for which it is
/// false or NULL fails the whole (conjunctive) filter, so it can be skipped early.
#[derive(Debug)]
pub struct IntPrefilter {
    property: PropertyColumns,
    op: BinaryOp,
    constant: i64,
}

pub fn collect_prefilters(expr: &Expr, slot: usize, out: &mut Vec<IntPrefilter>) {
    let Expr::Binary(op, left, right) = expr else {
        return;
    };
    if *op == BinaryOp::And {
        collect_prefilters(left, slot, out);
        collect_prefilters(right, slot, out);
        return;
    }
    let flipped = match op {
        BinaryOp::Eq | BinaryOp::Ne => *op,
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        _ => return,
    };
    let property_of = |e: &Expr| match e {
        Expr::Property { base, property } if **base == Expr::Slot(slot) => Some(property.clone()),
        _ => None,
    };
    let constant_of = |e: &Expr| match e {
        Expr::Literal(Value::Int64(c)) => Some(*c),
        _ => None,
    };
    if let (Some(property), Some(constant)) = (property_of(left), constant_of(right)) {
        out.push(IntPrefilter {
            property,
            op: *op,
            constant,
        });
    } else if let (Some(constant), Some(property)) = (constant_of(left), property_of(right)) {
        out.push(IntPrefilter {
            property,
            op: flipped,
            constant,
        });
    }
}

/// A prefilter resolved against one table: the column's values and nulls.
pub enum ResolvedPrefilter<'a> {
    /// The table lacks the property: the comparison is NULL for every row.
    RejectAll,
    Column {
        column: &'a Column,
        values: &'a [i64],
        op: BinaryOp,
        constant: i64,
    },
}

impl ResolvedPrefilter<'_> {
    #[inline]
    pub fn passes(&self, row: usize) -> bool {
        match self {
            ResolvedPrefilter::RejectAll => false,
            ResolvedPrefilter::Column {
                column,
                values,
                op,
                constant,
            } => {
                if column.is_null(row) {
                    return false;
                }
                let value = values[row];
                match op {
                    BinaryOp::Eq => value == *constant,
                    BinaryOp::Ne => value != *constant,
                    BinaryOp::Lt => value < *constant,
                    BinaryOp::Le => value <= *constant,
                    BinaryOp::Gt => value > *constant,
                    BinaryOp::Ge => value >= *constant,
                    _ => true,
                }
            }
        }
    }
}

/// The prefilters of `table` over its stored columns, each column verified as a whole first
/// (a damaged block is a `corrupt database` error).
pub fn resolve_prefilters<'a>(
    prefilters: &[IntPrefilter],
    table_id: TableId,
    table: &'a warren_storage::NodeTable,
) -> warren_common::Result<Vec<ResolvedPrefilter<'a>>> {
    // Prefilters read the stored column in place; rows in a delta get the full filter only.
    if table.has_delta() {
        return Ok(Vec::new());
    }
    let mut resolved = Vec::with_capacity(prefilters.len());
    for prefilter in prefilters {
        let Some(index) = prefilter.property.column(table_id) else {
            resolved.push(ResolvedPrefilter::RejectAll);
            continue;
        };
        let column = table.column(index);
        column.try_verify()?;
        if let Some(values) = column.int64_values() {
            resolved.push(ResolvedPrefilter::Column {
                column,
                values,
                op: prefilter.op,
                constant: prefilter.constant,
            });
        }
    }
    Ok(resolved)
}

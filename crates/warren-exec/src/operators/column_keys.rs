//! A grouping key over a scanned node, read per node from the stored columns where it can be
//! (`FoldColumns` with keys): an INT64 expression of the node's stored INT64 properties
//! (`a.x`, `a.x % 4`; `eval::column_expr`), another property value by value from its table,
//! and any other expression by the evaluator over a row holding the node. Each gives, for
//! every node, the value or the error the evaluator gives over the scan's row: where the
//! compiled expression cannot decide a node (checked arithmetic that fails) the evaluator
//! does.

use warren_common::value::{NodeValue, Value};
use warren_common::{InternalId, Result, TableId};
use warren_planner::expr::{BinaryOp, Expr};
use warren_storage::column::Column;
use warren_storage::NodeTable;

use crate::eval::column_expr::{checked_int64, IntTerm};
use crate::eval::const_divisor::ConstDivisor;
use crate::eval::Evaluator;

/// How one key is read for the nodes of one table.
pub struct KeyReader<'a> {
    key: &'a Expr,
    table: &'a NodeTable,
    read: Read<'a>,
}

/// A stored INT64 column's values, and the column when it holds NULLs.
struct StoredInt64s<'a> {
    values: &'a [i64],
    nulls: Option<&'a Column>,
}

impl<'a> StoredInt64s<'a> {
    /// `expr` when it is an INT64 property of the node in `slot` stored in `table` without
    /// a delta (compiled by `IntTerm::compile` first, which verified the column).
    fn of(expr: &Expr, slot: usize, table_id: TableId, table: &'a NodeTable) -> Option<Self> {
        let Expr::Property { base, property } = expr else {
            return None;
        };
        if **base != Expr::Slot(slot) || table.has_delta() {
            return None;
        }
        let stored = table.column(property.column(table_id)?);
        Some(StoredInt64s {
            values: stored.int64_values()?,
            nulls: stored.has_nulls().then_some(stored),
        })
    }

    #[inline(always)]
    fn get(&self, node: u64) -> Option<i64> {
        match self.nulls {
            Some(column) if column.is_null(node as usize) => None,
            _ => Some(self.values[node as usize]),
        }
    }
}

enum Read<'a> {
    /// An INT64 property stored without a delta, from its array.
    Column(StoredInt64s<'a>),
    /// `property % literal` or `property / literal` over such a property, by a literal other
    /// than 0 and -1 (no check can fail): without a divide instruction per node.
    ColumnByConstant {
        property: StoredInt64s<'a>,
        divisor: ConstDivisor,
        remainder: bool,
    },
    /// `property op literal` (or `literal op property`) over such a property, in checked
    /// arithmetic (the common keys, read without walking a term).
    ColumnWithLiteral {
        property: StoredInt64s<'a>,
        op: BinaryOp,
        literal: i64,
        literal_first: bool,
    },
    /// Another INT64 expression over stored INT64 columns.
    Int64(IntTerm),
    /// A property of another type, or of a table with a delta, by its column.
    Property(usize),
    /// Anything else: the evaluator.
    Evaluated,
}

/// A key read without making a value: an INT64, NULL, or `Other` (read it as a value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuickKey {
    Int64(i64),
    Null,
    Other,
}

impl<'a> KeyReader<'a> {
    /// The reader of `key` (an expression over the node in `slot` alone) for the nodes of
    /// `table`. Verifies the stored columns it reads whole.
    pub fn new(
        key: &'a Expr,
        slot: usize,
        table_id: TableId,
        table: &'a NodeTable,
    ) -> Result<Self> {
        let read = match IntTerm::compile(key, slot, table_id, table)? {
            Some(term) => {
                Self::specialized(key, slot, table_id, table).unwrap_or(Read::Int64(term))
            }
            None => match key {
                Expr::Property { base, property } if **base == Expr::Slot(slot) => {
                    match property.column(table_id) {
                        Some(column) => Read::Property(column),
                        None => Read::Evaluated,
                    }
                }
                _ => Read::Evaluated,
            },
        };
        Ok(Self { key, table, read })
    }

    /// A compiled INT64 key of a common shape, read without walking its term.
    fn specialized(
        key: &Expr,
        slot: usize,
        table_id: TableId,
        table: &'a NodeTable,
    ) -> Option<Read<'a>> {
        if let Some(property) = StoredInt64s::of(key, slot, table_id, table) {
            return Some(Read::Column(property));
        }
        let Expr::Binary(op, left, right) = key else {
            return None;
        };
        let (property, literal, literal_first) = match (&**left, &**right) {
            (property, Expr::Literal(Value::Int64(literal))) => (property, *literal, false),
            (Expr::Literal(Value::Int64(literal)), property) => (property, *literal, true),
            _ => return None,
        };
        let divides = matches!(op, BinaryOp::Div | BinaryOp::Mod) && !literal_first;
        if let Some(divisor) = ConstDivisor::new(literal).filter(|_| divides) {
            return Some(Read::ColumnByConstant {
                property: StoredInt64s::of(property, slot, table_id, table)?,
                divisor,
                remainder: *op == BinaryOp::Mod,
            });
        }
        Some(Read::ColumnWithLiteral {
            property: StoredInt64s::of(property, slot, table_id, table)?,
            op: *op,
            literal,
            literal_first,
        })
    }

    /// The key of node `node` without making a value where it is an INT64 or NULL read from
    /// the arrays (`Other` where [`KeyReader::value`] must read it).
    #[inline(always)]
    pub fn quick(&self, node: u64) -> QuickKey {
        match &self.read {
            Read::Column(property) => property.get(node).map_or(QuickKey::Null, QuickKey::Int64),
            Read::ColumnByConstant {
                property,
                divisor,
                remainder,
            } => match property.get(node) {
                None => QuickKey::Null,
                Some(value) if *remainder => QuickKey::Int64(divisor.remainder(value)),
                Some(value) => QuickKey::Int64(divisor.quotient(value)),
            },
            Read::ColumnWithLiteral {
                property,
                op,
                literal,
                literal_first,
            } => match property.get(node) {
                None => QuickKey::Null,
                Some(value) => {
                    let (a, b) = if *literal_first {
                        (*literal, value)
                    } else {
                        (value, *literal)
                    };
                    checked_int64(*op, a, b).map_or(QuickKey::Other, QuickKey::Int64)
                }
            },
            Read::Int64(term) => match term.value(self.table, node) {
                Some(Some(value)) => QuickKey::Int64(value),
                Some(None) => QuickKey::Null,
                None => QuickKey::Other,
            },
            Read::Property(_) | Read::Evaluated => QuickKey::Other,
        }
    }

    /// The key of node `node` of table `table_id`; `row` (the scan's row, the node's slot
    /// `slot`) is written where the evaluator reads the key.
    pub fn value(
        &self,
        node: u64,
        (table_id, slot): (TableId, usize),
        evaluator: &Evaluator<'_>,
        row: &mut [Value],
    ) -> Result<Value> {
        match (&self.read, self.quick(node)) {
            (_, QuickKey::Int64(value)) => Ok(Value::Int64(value)),
            (_, QuickKey::Null) => Ok(Value::Null),
            (Read::Property(column), _) => Ok(self.table.try_value(node, *column)?),
            (
                Read::Column(_)
                | Read::ColumnByConstant { .. }
                | Read::ColumnWithLiteral { .. }
                | Read::Int64(_)
                | Read::Evaluated,
                _,
            ) => {
                row[slot] = Value::Node(NodeValue {
                    id: InternalId::new(table_id, node),
                    projection: None,
                });
                evaluator.eval(self.key, row)
            }
        }
    }
}

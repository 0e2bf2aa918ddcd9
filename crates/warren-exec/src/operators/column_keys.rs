//! A grouping key over a scanned node, read per node from the stored columns where it can be
//! (`FoldColumns` with keys): a property of the node from its INT64 array, that property with
//! an INT64 literal by `+ - * / %` in 64-bit checked arithmetic, another property value by
//! value from its table, and any other expression by the evaluator over a row holding the
//! node. Each gives, for every node, the value or the error the evaluator gives over the
//! scan's row: the arithmetic falls back to the evaluator's own operation where the checked
//! one fails (an overflow, a zero divisor), so its errors and edge cases are the evaluator's.

use warren_common::value::{NodeValue, Value};
use warren_common::{InternalId, Result, TableId};
use warren_planner::expr::{BinaryOp, Expr};
use warren_storage::column::Column;
use warren_storage::NodeTable;

use crate::eval::{ops, Evaluator};

/// How one key is read for the nodes of one table.
pub enum KeyReader<'a> {
    /// An INT64 property stored without a delta: its array.
    Int64(StoredInt64s<'a>),
    /// `property op literal` (or `literal op property`) over an INT64 property stored without
    /// a delta.
    Int64Arithmetic {
        property: StoredInt64s<'a>,
        op: BinaryOp,
        literal: i64,
        literal_first: bool,
    },
    /// A property of another type, or of a table with a delta, read value by value.
    Property { table: &'a NodeTable, column: usize },
    /// Anything else, evaluated over a row with the node in its slot.
    Evaluated(&'a Expr),
}

/// A stored INT64 column's values, and the column when it holds NULLs.
pub struct StoredInt64s<'a> {
    values: &'a [i64],
    nulls: Option<&'a Column>,
}

impl StoredInt64s<'_> {
    #[inline(always)]
    fn get(&self, node: u64) -> Option<i64> {
        match self.nulls {
            Some(column) if column.is_null(node as usize) => None,
            _ => Some(self.values[node as usize]),
        }
    }
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
    /// `table`. Verifies the stored columns it reads whole, as `node_batches::columns_in`
    /// does.
    pub fn new(
        key: &'a Expr,
        slot: usize,
        table_id: TableId,
        table: &'a NodeTable,
    ) -> Result<Self> {
        let stored_property = |expr: &Expr| -> Option<usize> {
            match expr {
                Expr::Property { base, property } if **base == Expr::Slot(slot) => {
                    property.column(table_id)
                }
                _ => None,
            }
        };
        let int64_array = |column: usize| -> Result<Option<StoredInt64s<'a>>> {
            if table.has_delta() {
                return Ok(None);
            }
            let stored = table.column(column);
            stored.try_verify()?;
            Ok(stored.int64_values().map(|values| StoredInt64s {
                values,
                nulls: stored.has_nulls().then_some(stored),
            }))
        };
        if let Some(column) = stored_property(key) {
            return Ok(match int64_array(column)? {
                Some(property) => KeyReader::Int64(property),
                None => KeyReader::Property { table, column },
            });
        }
        if let Expr::Binary(op, left, right) = key {
            let arithmetic = matches!(
                op,
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod
            );
            let operands = match (&**left, &**right) {
                (property, Expr::Literal(Value::Int64(literal))) => {
                    stored_property(property).map(|column| (column, *literal, false))
                }
                (Expr::Literal(Value::Int64(literal)), property) => {
                    stored_property(property).map(|column| (column, *literal, true))
                }
                _ => None,
            };
            if let (true, Some((column, literal, literal_first))) = (arithmetic, operands) {
                if let Some(property) = int64_array(column)? {
                    return Ok(KeyReader::Int64Arithmetic {
                        property,
                        op: *op,
                        literal,
                        literal_first,
                    });
                }
            }
        }
        Ok(KeyReader::Evaluated(key))
    }

    /// The key of node `node` without making a value where it is an INT64 or NULL read from
    /// the array (`Other` where [`KeyReader::value`] must read it).
    #[inline(always)]
    pub fn quick(&self, node: u64) -> QuickKey {
        match self {
            KeyReader::Int64(property) => {
                property.get(node).map_or(QuickKey::Null, QuickKey::Int64)
            }
            KeyReader::Int64Arithmetic {
                property,
                op,
                literal,
                literal_first,
            } => match property.get(node) {
                None => QuickKey::Null,
                Some(value) => {
                    let (a, b) = operands(value, *literal, *literal_first);
                    checked(*op, a, b).map_or(QuickKey::Other, QuickKey::Int64)
                }
            },
            KeyReader::Property { .. } | KeyReader::Evaluated(_) => QuickKey::Other,
        }
    }

    /// The key of node `node` of table `table_id`; `row` (the scan's row, the node's slot
    /// `slot`) is written for an evaluated key.
    pub fn value(
        &self,
        node: u64,
        (table_id, slot): (TableId, usize),
        evaluator: &Evaluator<'_>,
        row: &mut [Value],
    ) -> Result<Value> {
        match self {
            KeyReader::Int64(property) => Ok(property.get(node).map_or(Value::Null, Value::Int64)),
            KeyReader::Int64Arithmetic {
                property,
                op,
                literal,
                literal_first,
            } => {
                let Some(value) = property.get(node) else {
                    return Ok(Value::Null);
                };
                let (a, b) = operands(value, *literal, *literal_first);
                match checked(*op, a, b) {
                    Some(result) => Ok(Value::Int64(result)),
                    // The evaluator's operation decides (its error, or a value past i64's
                    // checked range such as `i64::MIN % -1`).
                    None => ops::binary(*op, Value::Int64(a), Value::Int64(b)),
                }
            }
            KeyReader::Property { table, column } => Ok(table.try_value(node, *column)?),
            KeyReader::Evaluated(key) => {
                row[slot] = Value::Node(NodeValue {
                    id: InternalId::new(table_id, node),
                    projection: None,
                });
                evaluator.eval(key, row)
            }
        }
    }
}

/// The operands of `value op literal`, or of `literal op value`.
#[inline(always)]
fn operands(value: i64, literal: i64, literal_first: bool) -> (i64, i64) {
    if literal_first {
        (literal, value)
    } else {
        (value, literal)
    }
}

/// `a op b` in checked 64-bit arithmetic: `None` where it overflows or divides by zero (the
/// evaluator then decides).
#[inline]
fn checked(op: BinaryOp, a: i64, b: i64) -> Option<i64> {
    match op {
        BinaryOp::Add => a.checked_add(b),
        BinaryOp::Sub => a.checked_sub(b),
        BinaryOp::Mul => a.checked_mul(b),
        BinaryOp::Div => a.checked_div(b),
        BinaryOp::Mod => a.checked_rem(b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const OPS: [BinaryOp; 5] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Mod,
    ];

    fn int64s() -> impl Strategy<Value = i64> {
        prop_oneof![
            Just(i64::MIN),
            Just(i64::MAX),
            Just(-1i64),
            Just(0i64),
            -100i64..100,
            any::<i64>(),
        ]
    }

    proptest! {
        /// Where the checked operation gives a value, it is the evaluator's.
        #[test]
        fn checked_arithmetic_is_the_evaluators(a in int64s(), b in int64s()) {
            for op in OPS {
                if let Some(result) = checked(op, a, b) {
                    let evaluated = ops::binary(op, Value::Int64(a), Value::Int64(b));
                    prop_assert_eq!(evaluated.ok(), Some(Value::Int64(result)), "{:?}", op);
                }
            }
        }
    }

    #[test]
    fn the_evaluator_decides_what_checked_arithmetic_cannot() {
        assert_eq!(checked(BinaryOp::Mod, i64::MIN, -1), None);
        assert_eq!(
            ops::binary(BinaryOp::Mod, Value::Int64(i64::MIN), Value::Int64(-1)).unwrap(),
            Value::Int64(0)
        );
        assert_eq!(checked(BinaryOp::Div, 5, 0), None);
        assert!(ops::binary(BinaryOp::Div, Value::Int64(5), Value::Int64(0)).is_err());
        assert_eq!(checked(BinaryOp::Add, i64::MAX, 1), None);
        assert!(ops::binary(BinaryOp::Add, Value::Int64(i64::MAX), Value::Int64(1)).is_err());
    }
}

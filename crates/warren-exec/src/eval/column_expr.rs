//! Expressions over a scanned node compiled, for one table, into reads of its stored INT64
//! arrays: INT64 terms ([`IntTerm`], a grouping key such as `a.x % 4`) and three-valued tests
//! ([`ColumnPredicate`], a filter that is no prefilter: `a.x % 1000 = 0`, `a.x > a.y`, `a.x < 5
//! OR a.x > 90`), decided per node without a row or an evaluator call.
//!
//! What compiles: a term is an INT64 property of the scanned node stored without a delta, an
//! INT64 or NULL literal, `-` or `+` of a term, or `+ - * / %` of two terms; a test is a comparison (`= <> < <= > >=`)
//! or `IS [NOT] NULL` of terms, `AND`, `OR` and `NOT` of tests, or a boolean or NULL literal.
//! Anything else leaves the whole expression to the evaluator. A node's value is the
//! evaluator's, or `None`: where checked 64-bit arithmetic fails (an overflow, a zero divisor,
//! `i64::MIN % -1`) the evaluator decides that node, so its errors and edge cases stay the
//! evaluator's. The three-valued logic is the evaluator's (`ops::and`, `ops::or`,
//! `ops::unary`: NULL with anything in arithmetic is NULL before any check), and a node passes
//! a test only when it is TRUE.

use warren_common::value::Value;
use warren_common::{Result, TableId};
use warren_planner::expr::{BinaryOp, Expr, UnaryOp};
use warren_storage::NodeTable;

use super::const_divisor::ConstDivisor;
use super::pass_bits::Compare;

/// A filter over the node in one slot, for one table's stored columns.
#[derive(Debug)]
pub struct ColumnPredicate {
    root: Test,
}

/// A boolean node of the filter.
#[derive(Debug)]
enum Test {
    Compare(Compare, Term, Term),
    IsNull {
        term: Term,
        negated: bool,
    },
    And(Box<Test>, Box<Test>),
    Or(Box<Test>, Box<Test>),
    Not(Box<Test>),
    /// TRUE, FALSE or NULL.
    Constant(Option<bool>),
}

/// An INT64 expression over the scanned node, compiled for one table's stored columns.
#[derive(Debug)]
pub struct IntTerm(Term);

impl IntTerm {
    /// `expr` over the node in `slot`, compiled for `table`, when it compiles (see the module).
    pub fn compile(
        expr: &Expr,
        slot: usize,
        table_id: TableId,
        table: &NodeTable,
    ) -> Result<Option<Self>> {
        match Compiler::for_table(slot, table_id, table) {
            Some(compiler) => Ok(compiler.term(expr)?.map(IntTerm)),
            None => Ok(None),
        }
    }

    /// The value at node `node` of `table` (the table this was compiled for): `Some` of the
    /// INT64 or NULL (`None` inside), or `None` where the evaluator must decide.
    #[inline]
    pub fn value(&self, table: &NodeTable, node: u64) -> Option<Option<i64>> {
        int(&self.0, table, node)
    }
}

/// An INT64 (or NULL) node of an expression.
#[derive(Debug)]
enum Term {
    /// A stored INT64 property without a delta, by its column.
    Column(usize),
    Literal(Option<i64>),
    Arithmetic(BinaryOp, Box<Term>, Box<Term>),
}

/// A three-valued truth, or `None`: the evaluator decides.
type Truth = Option<Option<bool>>;

/// An INT64 or NULL, or `None`: the evaluator decides.
type Int = Option<Option<i64>>;

impl ColumnPredicate {
    /// `filter` over the node in `slot`, compiled for `table`, when every part of it compiles
    /// (the table has no delta; every property it reads is a stored INT64 column, which is
    /// verified here).
    pub fn compile(
        filter: &Expr,
        slot: usize,
        table_id: TableId,
        table: &NodeTable,
    ) -> Result<Option<Self>> {
        match Compiler::for_table(slot, table_id, table) {
            Some(compiler) => Ok(compiler.test(filter)?.map(|root| ColumnPredicate { root })),
            None => Ok(None),
        }
    }

    /// Whether node `node` of `table` (the table this was compiled for) passes: `Some` of the
    /// evaluator's answer, or `None` where the evaluator must decide.
    #[inline]
    pub fn passes(&self, table: &NodeTable, node: u64) -> Option<bool> {
        truth(&self.root, table, node).map(|value| value == Some(true))
    }
}

/// A node's answer from [`ColumnPredicate::decide_batch`]: the filter is FALSE.
pub const BATCH_FALSE: u8 = 0;
/// ... TRUE (the node passes).
pub const BATCH_TRUE: u8 = 1;
/// ... NULL (the node fails).
const BATCH_NULL: u8 = 2;
/// ... the evaluator decides.
pub const BATCH_UNDECIDED: u8 = 3;

/// A term's state per node in a batch: a value, NULL, or the evaluator decides (the order
/// makes the combination of two operands their maximum).
const TERM_VALUE: u8 = 0;
const TERM_NULL: u8 = 1;
const TERM_UNDECIDED: u8 = 2;

impl ColumnPredicate {
    /// Decides the nodes `nodes` of `table` (the table this was compiled for) at once, a
    /// column operation at a time: `out[i]` is [`BATCH_TRUE`] when node `nodes[i]` passes,
    /// [`BATCH_UNDECIDED`] where the evaluator must decide, another code when it fails. The
    /// same answers as [`ColumnPredicate::passes`] node by node.
    pub fn decide_batch(&self, table: &NodeTable, nodes: &[u32], out: &mut Vec<u8>) {
        *out = truth_batch(&self.root, table, nodes);
    }
}

/// The batch code of a three-valued truth.
#[inline(always)]
fn code(value: Option<bool>) -> u8 {
    match value {
        Some(false) => BATCH_FALSE,
        Some(true) => BATCH_TRUE,
        None => BATCH_NULL,
    }
}

/// The three-valued truth of a batch code other than [`BATCH_UNDECIDED`].
fn value(code: u8) -> Option<bool> {
    match code {
        BATCH_FALSE => Some(false),
        BATCH_TRUE => Some(true),
        _ => None,
    }
}

/// `logic` over every pair of batch codes, as a table indexed by `4 * a + b`: undecided with
/// anything is undecided (the evaluator decides the node).
fn logic_table(logic: fn(Option<bool>, Option<bool>) -> Option<bool>) -> [u8; 16] {
    let mut table = [BATCH_UNDECIDED; 16];
    for a in [BATCH_FALSE, BATCH_TRUE, BATCH_NULL] {
        for b in [BATCH_FALSE, BATCH_TRUE, BATCH_NULL] {
            table[usize::from(4 * a + b)] = code(logic(value(a), value(b)));
        }
    }
    table
}

/// [`truth`] over a batch: a code per node.
fn truth_batch(test: &Test, table: &NodeTable, nodes: &[u32]) -> Vec<u8> {
    let n = nodes.len();
    let combine = |mut a: Vec<u8>, b: Vec<u8>, logic| {
        let table = logic_table(logic);
        for (x, &y) in a.iter_mut().zip(&b) {
            *x = table[usize::from(4 * *x + y) & 15];
        }
        a
    };
    match test {
        Test::Constant(constant) => vec![code(*constant); n],
        Test::Compare(compare, a, b) => {
            let (a, b) = (int_batch(a, table, nodes), int_batch(b, table, nodes));
            let mut out = compare_all(*compare, &a.values, &b.values, n);
            if a.states.is_some() || b.states.is_some() {
                for (i, out) in out.iter_mut().enumerate() {
                    match a.state(i).max(b.state(i)) {
                        TERM_VALUE => {}
                        TERM_NULL => *out = BATCH_NULL,
                        _ => *out = BATCH_UNDECIDED,
                    }
                }
            }
            out
        }
        Test::IsNull { term, negated } => {
            let term = int_batch(term, table, nodes);
            (0..n)
                .map(|i| match term.state(i) {
                    TERM_UNDECIDED => BATCH_UNDECIDED,
                    state => u8::from((state == TERM_NULL) != *negated),
                })
                .collect()
        }
        Test::And(a, b) => combine(
            truth_batch(a, table, nodes),
            truth_batch(b, table, nodes),
            and,
        ),
        Test::Or(a, b) => combine(
            truth_batch(a, table, nodes),
            truth_batch(b, table, nodes),
            or,
        ),
        Test::Not(inner) => {
            let mut codes = truth_batch(inner, table, nodes);
            for x in &mut codes {
                *x = match *x {
                    BATCH_UNDECIDED => BATCH_UNDECIDED,
                    other => code(not(value(other))),
                };
            }
            codes
        }
    }
}

/// `a[i] compare b[i]` as [`BATCH_TRUE`] or [`BATCH_FALSE`] for every `i` of `n`: one loop per
/// comparison and operand shape, so each vectorizes.
fn compare_all(compare: Compare, a: &Values, b: &Values, n: usize) -> Vec<u8> {
    fn each(a: &Values, b: &Values, n: usize, holds: impl Fn(i64, i64) -> bool) -> Vec<u8> {
        match (a, b) {
            (Values::Constant(x), Values::Constant(y)) => vec![u8::from(holds(*x, *y)); n],
            (a, Values::Constant(y)) => a.slice().iter().map(|&x| u8::from(holds(x, *y))).collect(),
            (Values::Constant(x), b) => b.slice().iter().map(|&y| u8::from(holds(*x, y))).collect(),
            (a, b) => {
                let (a, b) = (a.slice(), b.slice());
                a.iter()
                    .zip(b)
                    .map(|(&x, &y)| u8::from(holds(x, y)))
                    .collect()
            }
        }
    }
    match compare {
        Compare::Eq => each(a, b, n, |x, y| x == y),
        Compare::Ne => each(a, b, n, |x, y| x != y),
        Compare::Lt => each(a, b, n, |x, y| x < y),
        Compare::Le => each(a, b, n, |x, y| x <= y),
        Compare::Gt => each(a, b, n, |x, y| x > y),
        Compare::Ge => each(a, b, n, |x, y| x >= y),
    }
}

/// A term's values over a batch: read in place from a column (consecutive nodes), gathered or
/// computed, or one value for every node (a literal), so that a comparison with a literal
/// reads its column once, with no copy.
enum Values<'a> {
    Borrowed(&'a [i64]),
    Owned(Vec<i64>),
    Constant(i64),
}

impl Values<'_> {
    /// The values of a term that is not a constant.
    fn slice(&self) -> &[i64] {
        match self {
            Values::Borrowed(values) => values,
            Values::Owned(values) => values,
            Values::Constant(_) => unreachable!("constants are matched apart"),
        }
    }

    /// `f` of every value, for `n` nodes.
    fn map(&self, n: usize, f: impl Fn(i64) -> i64) -> Vec<i64> {
        match self {
            Values::Constant(value) => vec![f(*value); n],
            values => values.slice().iter().map(|&x| f(x)).collect(),
        }
    }
}

/// A term's values over a batch, and each node's state (`TERM_*`); `states` is `None` when
/// every node has a value (no NULL, no failed check: the usual case), which spares a pass
/// over the states per operation. A node's value means nothing unless its state is
/// `TERM_VALUE`.
struct IntBatch<'a> {
    values: Values<'a>,
    states: Option<Vec<u8>>,
}

impl IntBatch<'_> {
    #[inline(always)]
    fn state(&self, i: usize) -> u8 {
        self.states.as_ref().map_or(TERM_VALUE, |states| states[i])
    }
}

/// The first of `nodes` when they are consecutive (a scan's run of live rows).
fn consecutive(nodes: &[u32]) -> Option<usize> {
    let first = *nodes.first()?;
    let consecutive = nodes
        .iter()
        .enumerate()
        .all(|(i, &node)| node as usize == first as usize + i);
    consecutive.then_some(first as usize)
}

/// [`int`] over a batch.
fn int_batch<'a>(term: &Term, table: &'a NodeTable, nodes: &[u32]) -> IntBatch<'a> {
    let n = nodes.len();
    let uniform = |value: i64, state: u8| IntBatch {
        values: Values::Constant(value),
        states: (state != TERM_VALUE).then(|| vec![state; n]),
    };
    match term {
        Term::Literal(Some(value)) => uniform(*value, TERM_VALUE),
        Term::Literal(None) => uniform(0, TERM_NULL),
        Term::Column(column) => {
            let stored = table.column(*column);
            let Some(values) = stored.int64_values() else {
                return uniform(0, TERM_UNDECIDED);
            };
            let values = match consecutive(nodes) {
                Some(first) => Values::Borrowed(&values[first..first + n]),
                None => Values::Owned(nodes.iter().map(|&v| values[v as usize]).collect()),
            };
            let states = stored.has_nulls().then(|| {
                let state = |v: u32| {
                    if stored.is_null(v as usize) {
                        TERM_NULL
                    } else {
                        TERM_VALUE
                    }
                };
                nodes.iter().map(|&v| state(v)).collect()
            });
            IntBatch { values, states }
        }
        Term::Arithmetic(op @ (BinaryOp::Div | BinaryOp::Mod), a, divisor) if matches!(**divisor, Term::Literal(Some(d)) if ConstDivisor::new(d).is_some()) =>
        {
            // A constant divisor other than 0 and -1: no value fails the check, and NULL
            // stays NULL (a node without a value keeps its state).
            let Term::Literal(Some(d)) = **divisor else {
                unreachable!("matched above")
            };
            let divisor = ConstDivisor::new(d).expect("matched above");
            let batch = int_batch(a, table, nodes);
            let values = match op {
                BinaryOp::Div => batch.values.map(n, |x| divisor.quotient(x)),
                _ => batch.values.map(n, |x| divisor.remainder(x)),
            };
            IntBatch {
                values: Values::Owned(values),
                states: batch.states,
            }
        }
        Term::Arithmetic(op, a, b) => {
            let (a, b) = (int_batch(a, table, nodes), int_batch(b, table, nodes));
            let mut states = match (a.states, b.states) {
                (None, None) => None,
                (Some(x), None) | (None, Some(x)) => Some(x),
                (Some(mut x), Some(y)) => {
                    x.iter_mut().zip(&y).for_each(|(x, &y)| *x = (*x).max(y));
                    Some(x)
                }
            };
            let mut values = a.values.map(n, |x| x);
            let right = |i: usize| match &b.values {
                Values::Constant(value) => *value,
                values => values.slice()[i],
            };
            for (i, value) in values.iter_mut().enumerate() {
                if states.as_ref().is_some_and(|s| s[i] != TERM_VALUE) {
                    continue;
                }
                match checked_int64(*op, *value, right(i)) {
                    Some(result) => *value = result,
                    None => states.get_or_insert_with(|| vec![TERM_VALUE; n])[i] = TERM_UNDECIDED,
                }
            }
            IntBatch {
                values: Values::Owned(values),
                states,
            }
        }
    }
}

struct Compiler<'a> {
    slot: usize,
    table_id: TableId,
    table: &'a NodeTable,
}

impl<'a> Compiler<'a> {
    /// A compiler for expressions over the node in `slot` of `table`, which must have no delta
    /// (its values are then all in the stored arrays).
    fn for_table(slot: usize, table_id: TableId, table: &'a NodeTable) -> Option<Self> {
        (!table.has_delta()).then_some(Compiler {
            slot,
            table_id,
            table,
        })
    }

    fn test(&self, expr: &Expr) -> Result<Option<Test>> {
        let both = |a: &Expr, b: &Expr| -> Result<Option<(Box<Test>, Box<Test>)>> {
            Ok(match (self.test(a)?, self.test(b)?) {
                (Some(a), Some(b)) => Some((Box::new(a), Box::new(b))),
                _ => None,
            })
        };
        Ok(match expr {
            Expr::Literal(Value::Bool(value)) => Some(Test::Constant(Some(*value))),
            Expr::Literal(Value::Null) => Some(Test::Constant(None)),
            Expr::Binary(BinaryOp::And, a, b) => both(a, b)?.map(|(a, b)| Test::And(a, b)),
            Expr::Binary(BinaryOp::Or, a, b) => both(a, b)?.map(|(a, b)| Test::Or(a, b)),
            Expr::Unary(UnaryOp::Not, inner) => self.test(inner)?.map(|t| Test::Not(Box::new(t))),
            Expr::IsNull { expr, negated } => self.term(expr)?.map(|term| Test::IsNull {
                term,
                negated: *negated,
            }),
            Expr::Binary(op, a, b) => match Compare::of(*op) {
                Some(compare) => match (self.term(a)?, self.term(b)?) {
                    (Some(a), Some(b)) => Some(Test::Compare(compare, a, b)),
                    _ => None,
                },
                None => None,
            },
            _ => None,
        })
    }

    fn term(&self, expr: &Expr) -> Result<Option<Term>> {
        Ok(match expr {
            Expr::Literal(Value::Int64(value)) => Some(Term::Literal(Some(*value))),
            Expr::Literal(Value::Null) => Some(Term::Literal(None)),
            Expr::Property { base, property } if **base == Expr::Slot(self.slot) => {
                match property.column(self.table_id) {
                    Some(column) => {
                        let stored = self.table.column(column);
                        stored.try_verify()?;
                        stored.int64_values().map(|_| Term::Column(column))
                    }
                    None => None,
                }
            }
            // `-t` is `0 - t`: NULL stays NULL, and negating `i64::MIN` fails the check as
            // the evaluator's negation fails.
            Expr::Unary(UnaryOp::Minus, inner) => self.term(inner)?.map(|inner| {
                Term::Arithmetic(
                    BinaryOp::Sub,
                    Box::new(Term::Literal(Some(0))),
                    Box::new(inner),
                )
            }),
            Expr::Unary(UnaryOp::Plus, inner) => self.term(inner)?,
            Expr::Binary(
                op
                @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod),
                a,
                b,
            ) => match (self.term(a)?, self.term(b)?) {
                (Some(a), Some(b)) => Some(Term::Arithmetic(*op, Box::new(a), Box::new(b))),
                _ => None,
            },
            _ => None,
        })
    }
}

/// The three-valued value of `test` at `node`, as `ops::and`, `ops::or` and `ops::unary` give
/// it (an operand the evaluator must decide makes the whole test the evaluator's).
fn truth(test: &Test, table: &NodeTable, node: u64) -> Truth {
    Some(match test {
        Test::Constant(value) => *value,
        Test::Compare(compare, a, b) => match (int(a, table, node)?, int(b, table, node)?) {
            (Some(a), Some(b)) => Some(compare.holds(a, b)),
            _ => None,
        },
        Test::IsNull { term, negated } => Some(int(term, table, node)?.is_none() != *negated),
        Test::And(a, b) => and(truth(a, table, node)?, truth(b, table, node)?),
        Test::Or(a, b) => or(truth(a, table, node)?, truth(b, table, node)?),
        Test::Not(inner) => not(truth(inner, table, node)?),
    })
}

/// Three-valued NOT (NULL as `None`), as `ops::unary`.
#[inline]
fn not(a: Option<bool>) -> Option<bool> {
    a.map(|value| !value)
}

/// Three-valued AND (NULL as `None`), as `ops::and`.
#[inline]
fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// Three-valued OR (NULL as `None`), as `ops::or`.
#[inline]
fn or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

/// The INT64 value of `term` at `node` (NULL as `Some(None)`).
fn int(term: &Term, table: &NodeTable, node: u64) -> Int {
    Some(match term {
        Term::Literal(value) => *value,
        Term::Column(column) => {
            let stored = table.column(*column);
            if stored.is_null(node as usize) {
                None
            } else {
                Some(stored.int64_values()?[node as usize])
            }
        }
        Term::Arithmetic(op, a, b) => match (int(a, table, node)?, int(b, table, node)?) {
            (Some(a), Some(b)) => Some(checked_int64(*op, a, b)?),
            // NULL with anything is NULL, before any check of the other operand.
            _ => None,
        },
    })
}

/// `a op b` in checked 64-bit arithmetic: `None` where it overflows or divides by zero (the
/// evaluator then decides).
#[inline]
pub(crate) fn checked_int64(op: BinaryOp, a: i64, b: i64) -> Option<i64> {
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
    use crate::eval::ops;

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
                if let Some(result) = checked_int64(op, a, b) {
                    let evaluated = ops::binary(op, Value::Int64(a), Value::Int64(b));
                    prop_assert_eq!(evaluated.ok(), Some(Value::Int64(result)), "{:?}", op);
                }
            }
        }
    }

    #[test]
    fn the_evaluator_decides_what_checked_arithmetic_cannot() {
        assert_eq!(checked_int64(BinaryOp::Mod, i64::MIN, -1), None);
        assert_eq!(
            ops::binary(BinaryOp::Mod, Value::Int64(i64::MIN), Value::Int64(-1)).unwrap(),
            Value::Int64(0)
        );
        assert_eq!(checked_int64(BinaryOp::Div, 5, 0), None);
        assert!(ops::binary(BinaryOp::Div, Value::Int64(5), Value::Int64(0)).is_err());
        assert_eq!(checked_int64(BinaryOp::Add, i64::MAX, 1), None);
        assert!(ops::binary(BinaryOp::Add, Value::Int64(i64::MAX), Value::Int64(1)).is_err());
    }

    /// The three-valued logic is the evaluator's `and`, `or` and `not` over every pair.
    #[test]
    fn three_valued_logic_is_the_evaluators() {
        let values = [Some(true), Some(false), None];
        let as_value = |v: Option<bool>| v.map_or(Value::Null, Value::Bool);
        for x in values {
            for y in values {
                let expected_and = ops::and(&as_value(x), &as_value(y));
                let expected_or = ops::or(&as_value(x), &as_value(y));
                assert_eq!(as_value(and(x, y)), expected_and, "{x:?} AND {y:?}");
                assert_eq!(as_value(or(x, y)), expected_or, "{x:?} OR {y:?}");
            }
            let expected = ops::unary(UnaryOp::Not, as_value(x)).unwrap();
            assert_eq!(as_value(not(x)), expected, "NOT {x:?}");
        }
    }
}

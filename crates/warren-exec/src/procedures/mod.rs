//! Graph procedures at run time: a [`GraphProcedure`] turns one input row's evaluated
//! arguments into rows (`CALL spread_activation(...)`). The binder fixed everything constant in
//! a [`ProcedureKind`]; [`procedure_for`] picks the implementation. A new procedure adds a
//! variant there and an implementation here. A call returns its rows column by column
//! ([`ProcedureRows`]); the plan tells it which columns are read and whether their order is
//! ([`OutputShape`]).

mod query_vector_index;
mod spread_activation;

use warren_common::value::{NodeValue, Value};
use warren_common::{InternalId, Result};
use warren_planner::procedure::ProcedureKind;

use crate::context::ExecContext;

/// A procedure over the graph: bound arguments in, rows out (one value per output column).
pub trait GraphProcedure: Send + Sync {
    fn call(
        &self,
        arguments: &[Value],
        ctx: &ExecContext,
        shape: &OutputShape,
    ) -> Result<ProcedureRows>;
}

/// What the plan above a call needs of its rows: whether in the procedure's documented order,
/// which columns it reads (an unread column may be left [`ProcedureColumn::Unread`]), and
/// whether only the rows that can be among the first `top` of its documented ranking (ties at
/// the boundary included; a procedure without a ranking ignores it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputShape {
    pub ordered: bool,
    pub read: Vec<bool>,
    pub top: Option<u64>,
}

impl OutputShape {
    /// Every column read, in the documented order.
    pub fn all(width: usize) -> Self {
        Self {
            ordered: true,
            read: vec![true; width],
            top: None,
        }
    }
}

/// One output column of a procedure call: values, or a typed vector that makes its values on
/// demand (a spread returns one row per reached node, hundreds of thousands of them).
#[derive(Debug)]
pub enum ProcedureColumn {
    Values(Vec<Value>),
    Nodes(Vec<InternalId>),
    Doubles(Vec<f64>),
    Int64s(Vec<i64>),
    /// Not read above the call: every value NULL.
    Unread,
}

impl ProcedureColumn {
    fn len(&self) -> Option<usize> {
        match self {
            ProcedureColumn::Values(v) => Some(v.len()),
            ProcedureColumn::Nodes(v) => Some(v.len()),
            ProcedureColumn::Doubles(v) => Some(v.len()),
            ProcedureColumn::Int64s(v) => Some(v.len()),
            ProcedureColumn::Unread => None,
        }
    }

    /// Bytes per value held.
    fn value_bytes(&self) -> usize {
        match self {
            ProcedureColumn::Values(_) => std::mem::size_of::<Value>(),
            ProcedureColumn::Nodes(_) => std::mem::size_of::<InternalId>(),
            ProcedureColumn::Doubles(_) | ProcedureColumn::Int64s(_) => 8,
            ProcedureColumn::Unread => 0,
        }
    }
}

/// The rows of one procedure call, column by column.
#[derive(Debug)]
pub struct ProcedureRows {
    len: usize,
    columns: Vec<ProcedureColumn>,
}

impl ProcedureRows {
    /// Room for `rows` rows of `width` value columns, filled by [`ProcedureRows::push`].
    pub fn with_capacity(width: usize, rows: usize) -> Self {
        assert!(width > 0, "a procedure returns at least one column");
        Self {
            len: 0,
            columns: (0..width)
                .map(|_| ProcedureColumn::Values(Vec::with_capacity(rows)))
                .collect(),
        }
    }

    /// `len` rows made of `columns`, each of `len` values (or unread).
    pub fn from_columns(len: usize, columns: Vec<ProcedureColumn>) -> Self {
        assert!(
            !columns.is_empty(),
            "a procedure returns at least one column"
        );
        assert!(
            columns.iter().all(|c| c.len().is_none_or(|l| l == len)),
            "every column holds one value per row"
        );
        Self { len, columns }
    }

    /// Appends one row (to value columns).
    pub fn push(&mut self, row: impl IntoIterator<Item = Value>) {
        let mut width = 0;
        for (column, value) in self.columns.iter_mut().zip(row) {
            let ProcedureColumn::Values(values) = column else {
                panic!("rows are pushed into value columns");
            };
            values.push(value);
            width += 1;
        }
        assert_eq!(
            width,
            self.columns.len(),
            "a procedure row has one value per column"
        );
        self.len += 1;
    }

    pub fn width(&self) -> usize {
        self.columns.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the rows hold.
    pub fn bytes(&self) -> u64 {
        let per_row: usize = self.columns.iter().map(ProcedureColumn::value_bytes).sum();
        (self.len * per_row) as u64
    }

    /// Column `column` itself.
    pub fn column(&self, column: usize) -> &ProcedureColumn {
        &self.columns[column]
    }

    /// The value of `column` in `row` (a copy; see [`ProcedureRows::take`]).
    #[inline]
    pub fn value(&self, column: usize, row: usize) -> Value {
        match &self.columns[column] {
            ProcedureColumn::Values(v) => v[row].clone(),
            ProcedureColumn::Nodes(v) => node(v[row]),
            ProcedureColumn::Doubles(v) => Value::Double(v[row]),
            ProcedureColumn::Int64s(v) => Value::Int64(v[row]),
            ProcedureColumn::Unread => Value::Null,
        }
    }

    /// The value of `column` in `row`, moved out (each is taken once).
    #[inline]
    pub fn take(&mut self, column: usize, row: usize) -> Value {
        match &mut self.columns[column] {
            ProcedureColumn::Values(v) => std::mem::take(&mut v[row]),
            _ => self.value(column, row),
        }
    }
}

fn node(id: InternalId) -> Value {
    Value::Node(NodeValue {
        id,
        projection: None,
    })
}

/// The implementation of a bound procedure.
pub fn procedure_for(kind: &ProcedureKind) -> Box<dyn GraphProcedure> {
    match kind {
        ProcedureKind::SpreadActivation(spec) => Box::new(
            spread_activation::SpreadActivationProcedure::new(spec.clone()),
        ),
        ProcedureKind::QueryVectorIndex(spec) => Box::new(
            query_vector_index::QueryVectorIndexProcedure::new(spec.clone()),
        ),
    }
}

//! `QUERY_VECTOR_INDEX` at run time: checks one row's query vector, `k` and `efs`, takes the
//! index graph of the snapshot's table version from the database's [`VectorIndexCache`]
//! (building it when missing), searches it, and returns `(node, distance)` rows, nearest first.
//!
//! [`VectorIndexCache`]: crate::vector_index::VectorIndexCache

use warren_common::value::{NodeValue, Value};
use warren_common::{Error, InternalId, Result};
use warren_planner::procedure::{NodeFilter, QueryVectorIndex};
use warren_vector::hnsw::{RowMask, SearchScratch};

use super::{GraphProcedure, OutputShape, ProcedureRows};
use crate::context::ExecContext;
use crate::eval::Evaluator;
use crate::vector_index::BuiltIndex;

pub struct QueryVectorIndexProcedure {
    spec: QueryVectorIndex,
}

impl QueryVectorIndexProcedure {
    pub fn new(spec: QueryVectorIndex) -> Self {
        Self { spec }
    }
}

/// A `k` or `efs` argument: a positive integer.
fn count(value: &Value, name: &str) -> Result<usize> {
    match value.as_i64() {
        Some(n) if n > 0 => Ok(n as usize),
        _ => Err(Error::runtime(format!(
            "QUERY_VECTOR_INDEX: {name} must be a positive integer, got {value:?}"
        ))),
    }
}

impl QueryVectorIndexProcedure {
    /// The index rows whose node passes the projected graph's predicate (evaluated per live
    /// row, on this thread: O(rows) per call).
    fn passing(
        &self,
        filter: &NodeFilter,
        built: &BuiltIndex,
        ctx: &ExecContext,
    ) -> Result<RowMask> {
        let snapshot = ctx.snapshot();
        let evaluator = Evaluator::new(&snapshot, ctx);
        let mut row = vec![Value::Null; filter.slot + 1];
        let mut passes = vec![false; built.offsets.len()];
        for (index_row, &offset) in built.offsets.iter().enumerate() {
            if built.hnsw.is_deleted(index_row as u32) {
                continue;
            }
            ctx.tick()?;
            row[filter.slot] = Value::Node(NodeValue {
                id: InternalId {
                    table: self.spec.index.table,
                    offset,
                },
                projection: None,
            });
            passes[index_row] = evaluator.test(&filter.predicate, &row)?;
        }
        Ok(RowMask::from_fn(passes.len(), |r| passes[r as usize]))
    }
}

impl GraphProcedure for QueryVectorIndexProcedure {
    fn call(
        &self,
        arguments: &[Value],
        ctx: &ExecContext,
        _shape: &OutputShape,
    ) -> Result<ProcedureRows> {
        let [query, k, efs] = arguments else {
            return Err(Error::internal(
                "QUERY_VECTOR_INDEX takes three bound arguments",
            ));
        };
        if query.is_null() {
            return Ok(ProcedureRows::with_capacity(2, 0));
        }
        let dimension = self.spec.dimension;
        let query: Vec<f32> = crate::eval::array_functions::elements(query, dimension)?
            .into_iter()
            .map(|x| x as f32)
            .collect();
        let (k, efs) = (count(k, "k")?, count(efs, "efs")?);
        let snapshot = ctx.snapshot();
        let index = &self.spec.index;
        let table = snapshot.node_table(index.table);
        let built = ctx.vector_indexes.get_or_build(
            index,
            table,
            self.spec.column,
            dimension,
            ctx.threads(),
        )?;
        let mut scratch = SearchScratch::new();
        let mask = match &self.spec.filter {
            Some(filter) => Some(self.passing(filter, &built, ctx)?),
            None => None,
        };
        let efs = efs.max(k);
        let found = match &mask {
            Some(mask) => {
                built
                    .hnsw
                    .search_filtered(&built.vectors, &query, k, efs, mask, &mut scratch)
            }
            None => built
                .hnsw
                .search(&built.vectors, &query, k, efs, &mut scratch),
        }
        .map_err(|e| Error::runtime(format!("QUERY_VECTOR_INDEX: {e}")))?;
        let mut rows = ProcedureRows::with_capacity(2, found.len());
        for n in found {
            let id = InternalId {
                table: index.table,
                offset: built.offsets[n.row as usize],
            };
            rows.push([
                Value::Node(NodeValue {
                    id,
                    projection: None,
                }),
                Value::Double(f64::from(n.distance)),
            ]);
        }
        Ok(rows)
    }
}

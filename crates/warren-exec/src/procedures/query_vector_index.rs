//! `QUERY_VECTOR_INDEX` at run time: checks one row's query vector, `k` and `efs`, takes the
//! index graph of the snapshot's table version from the database's [`VectorIndexCache`]
//! (building it when missing), searches it, and returns `(node, distance)` rows, nearest first.
//!
//! [`VectorIndexCache`]: crate::vector_index::VectorIndexCache

use warren_common::value::{NodeValue, Value};
use warren_common::{Error, InternalId, Result};
use warren_planner::procedure::QueryVectorIndex;
use warren_vector::hnsw::SearchScratch;

use super::GraphProcedure;
use crate::context::ExecContext;

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

impl GraphProcedure for QueryVectorIndexProcedure {
    fn call(&self, arguments: &[Value], ctx: &ExecContext) -> Result<Vec<Vec<Value>>> {
        let [query, k, efs] = arguments else {
            return Err(Error::internal(
                "QUERY_VECTOR_INDEX takes three bound arguments",
            ));
        };
        if query.is_null() {
            return Ok(Vec::new());
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
        let found = built
            .hnsw
            .search(&built.vectors, &query, k, efs.max(k), &mut scratch)
            .map_err(|e| Error::runtime(format!("QUERY_VECTOR_INDEX: {e}")))?;
        Ok(found
            .into_iter()
            .map(|n| {
                let id = InternalId {
                    table: index.table,
                    offset: built.offsets[n.row as usize],
                };
                vec![
                    Value::Node(NodeValue {
                        id,
                        projection: None,
                    }),
                    Value::Double(f64::from(n.distance)),
                ]
            })
            .collect())
    }
}

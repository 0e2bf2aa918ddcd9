//! `spread_activation` at run time: checks one row's seeds and options, builds the traversal
//! graph of the rel table (the stored CSRs in place when one pair joins one node table), reads
//! the weight column in place when it can, runs [`crate::recursive::spread`] on the query's
//! threads, and returns `(node, activation, hops)` rows: ranked when the plan needs their
//! order, by node id otherwise, only the columns the plan reads, and only the rows that can be
//! in a top-N above by activation when there is one (`OutputShape::top`).

use warren_common::value::Value;
use warren_common::{Error, InternalId, Result};
use warren_planner::procedure::SpreadActivation;
use warren_storage::Snapshot;

use super::{GraphProcedure, OutputShape, ProcedureColumn, ProcedureRows};
use crate::context::ExecContext;
use crate::recursive::graph::{Adjacency, Graph};
use crate::recursive::spread::{
    ranked_top, spread_in_chunks, Activation, EdgeWeights, SpreadGraph, SpreadOrder,
    SpreadParameters, SpreadRun, SpreadStrategy, SPREAD_HOPS_MAX,
};
use crate::recursive::weighted::edge_weights;

pub struct SpreadActivationProcedure {
    spec: SpreadActivation,
}

impl SpreadActivationProcedure {
    pub fn new(spec: SpreadActivation) -> Self {
        Self { spec }
    }
}

fn invalid(message: impl std::fmt::Display) -> Error {
    Error::runtime(format!("spread_activation: {message}"))
}

/// A number option: present, finite, within `low..=high`.
fn option(value: &Value, name: &str, low: f64, high: f64) -> Result<f64> {
    let number = value.as_f64().ok_or_else(|| {
        invalid(format!(
            "{name} must be a number, not {}",
            value.logical_type()
        ))
    })?;
    if !(low..=high).contains(&number) {
        return Err(invalid(format!(
            "{name} must be between {low} and {high}, got {number}"
        )));
    }
    Ok(number)
}

/// The checked parameters; `hops_max` is the query's `var_length_extend_max_depth`.
fn parameters(arguments: &[Value], hops_max: u32) -> Result<SpreadParameters> {
    let [_, decay, threshold, max_hops] = arguments else {
        return Err(Error::internal(
            "spread_activation takes four bound arguments",
        ));
    };
    let hops_max = hops_max.min(SPREAD_HOPS_MAX);
    let hops = option(max_hops, "max_hops", 0.0, f64::from(hops_max))?;
    if hops.fract() != 0.0 {
        return Err(invalid(format!("max_hops must be an integer, got {hops}")));
    }
    Ok(SpreadParameters {
        decay: option(decay, "decay", 0.0, 1.0)?,
        threshold: option(threshold, "threshold", 0.0, f64::MAX)?,
        max_hops: hops as u32,
    })
}

/// One seed: a node or internal id (activation 1), or a struct/map with `node` (or `id`) and
/// `activation`.
fn seed(value: &Value) -> Result<(InternalId, f64)> {
    let id_of = |value: &Value| match value {
        Value::Node(node) => Ok(node.id),
        Value::InternalId(id) => Ok(*id),
        other => Err(invalid(format!(
            "a seed's node must be a node or an internal id, not {}",
            other.logical_type()
        ))),
    };
    let fields: Vec<(&str, &Value)> = match value {
        Value::Node(_) | Value::InternalId(_) => return Ok((id_of(value)?, 1.0)),
        Value::Struct(s) => s.fields.iter().map(|(k, v)| (k.as_ref(), v)).collect(),
        Value::Map(entries) => entries
            .iter()
            .filter_map(|(k, v)| match k {
                Value::String(k) => Some((k.as_ref(), v)),
                _ => None,
            })
            .collect(),
        other => {
            return Err(invalid(format!(
                "a seed must be a node, an internal id, or {{node: n, activation: a}}, not {}",
                other.logical_type()
            )))
        }
    };
    let field = |names: &[&str]| {
        fields
            .iter()
            .find(|(k, _)| names.iter().any(|n| k.eq_ignore_ascii_case(n)))
            .map(|(_, v)| *v)
    };
    let node = field(&["node", "id"])
        .ok_or_else(|| invalid("a seed struct needs a field 'node' (or 'id')"))?;
    let activation = match field(&["activation"]) {
        None => 1.0,
        Some(value) => option(value, "a seed's activation", 0.0, f64::MAX)?,
    };
    Ok((id_of(node)?, activation))
}

/// The seeds of one row: one seed or a list of them; NULL means none.
fn seeds(value: &Value) -> Result<Vec<(InternalId, f64)>> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::List(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => Err(invalid("a seed is NULL")),
                item => seed(item),
            })
            .collect(),
        single => Ok(vec![seed(single)?]),
    }
}

impl SpreadActivationProcedure {
    /// The weights, by the graph's edge ids: the DOUBLE column in place when the traversal
    /// reads one stored rel table without pending value changes, a copy otherwise.
    fn weights<'a>(
        &self,
        graph: &Graph,
        snapshot: &'a Snapshot,
        ctx: &ExecContext,
    ) -> Result<EdgeWeights<'a>> {
        let Some(columns) = &self.spec.weight else {
            return Ok(EdgeWeights::Unit);
        };
        if let (Adjacency::Stored { .. }, [(pair, property)]) = (&graph.forward, columns.as_slice())
        {
            let table = snapshot.rel_table(*pair);
            let column = &table.columns()[*property];
            // Read in place, whole: its blocks are verified first.
            column.try_verify()?;
            if let (false, Some(values)) = (table.has_delta(), column.double_values()) {
                return Ok(EdgeWeights::Column {
                    values,
                    nulls: column.null_bitmap(),
                });
            }
        }
        Ok(EdgeWeights::Values(edge_weights(graph, ctx, columns)?))
    }
}

impl GraphProcedure for SpreadActivationProcedure {
    fn call(
        &self,
        arguments: &[Value],
        ctx: &ExecContext,
        shape: &OutputShape,
    ) -> Result<ProcedureRows> {
        let parameters = parameters(arguments, ctx.settings.limits.hops_max)?;
        let seeds = seeds(&arguments[0])?;
        let snapshot = ctx.snapshot();
        let graph = Graph::build(&snapshot, &self.spec.steps, &self.spec.node_tables)?;
        let mut dense = Vec::with_capacity(seeds.len());
        for (id, activation) in seeds {
            let global = graph.global(id).ok_or_else(|| {
                invalid(format!(
                    "seed {}:{} is not a node of a table that {} connects",
                    id.table, id.offset, self.spec.rel_table
                ))
            })?;
            dense.push((global, activation));
        }
        let mut push = vec![graph.forward.view()];
        let mut pull = vec![graph.backward.view()];
        if self.spec.both {
            push.push(graph.backward.view());
            pull.push(graph.forward.view());
        }
        let spread_graph = SpreadGraph {
            push,
            pull,
            weights: self.weights(&graph, &snapshot, ctx)?,
            num_nodes: graph.num_nodes(),
        };
        let engine = &ctx.settings.engine;
        let run = SpreadRun {
            threads: ctx.settings.threads,
            morsel_size: engine.morsel_size,
            prefetch_distance: engine.prefetch_distance,
            strategy: SpreadStrategy::Auto,
            workers: &ctx.workers,
            interrupt: &ctx.interrupt,
            memory: &ctx.memory,
            states: Some(&ctx.spread_states),
        };
        // A top wants few rows, ranked: they are selected from the rows in id order (no sort
        // of every reached node).
        let order = if shape.ordered && shape.top.is_none() {
            SpreadOrder::Ranked
        } else {
            SpreadOrder::ById
        };
        let mut activations = spread_in_chunks(&spread_graph, &dense, parameters, &run, order)?;
        if let Some(top) = shape.top {
            let top = usize::try_from(top).unwrap_or(usize::MAX);
            activations = vec![ranked_top(&activations, top)];
        }
        graph.check_corruption()?;
        Ok(rows(&graph, &activations, &shape.read))
    }
}

/// The `(node, activation, hops)` columns of the reached nodes (consecutive chunks); a column
/// nothing reads is left unread.
fn rows(graph: &Graph, chunks: &[Vec<Activation>], read: &[bool]) -> ProcedureRows {
    let count = chunks.iter().map(Vec::len).sum();
    assert_eq!(read.len(), 3, "spread_activation returns three columns");
    let column = |index: usize, make: &dyn Fn() -> ProcedureColumn| {
        if read[index] {
            make()
        } else {
            ProcedureColumn::Unread
        }
    };
    let columns = vec![
        column(0, &|| {
            ProcedureColumn::Nodes(column_of(chunks, count, |a| graph.node(a.node)))
        }),
        column(1, &|| {
            ProcedureColumn::Doubles(column_of(chunks, count, |a| a.activation))
        }),
        column(2, &|| {
            ProcedureColumn::Int64s(column_of(chunks, count, |a| i64::from(a.hops)))
        }),
    ];
    ProcedureRows::from_columns(count, columns)
}

/// One value per activation of `chunks` (`count` in all), in order.
fn column_of<T>(
    chunks: &[Vec<Activation>],
    count: usize,
    value: impl Fn(&Activation) -> T,
) -> Vec<T> {
    let mut values = Vec::with_capacity(count);
    for chunk in chunks {
        values.extend(chunk.iter().map(&value));
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use warren_common::value::NodeValue;

    #[test]
    fn options_are_checked() {
        let args =
            |decay: Value, threshold: Value, hops: Value| vec![Value::Null, decay, threshold, hops];
        let ok = parameters(
            &args(Value::Double(0.5), Value::Int64(0), Value::Int64(3)),
            30,
        )
        .unwrap();
        assert_eq!(ok.max_hops, 3);
        for (bad, needle) in [
            (
                args(Value::Double(1.5), Value::Int64(0), Value::Int64(3)),
                "decay must be between 0 and 1",
            ),
            (
                args(Value::Double(0.5), Value::Double(-0.1), Value::Int64(3)),
                "threshold must be between 0",
            ),
            (
                args(Value::Double(0.5), Value::Int64(0), Value::Int64(31)),
                "max_hops must be between 0 and 30",
            ),
            (
                args(Value::Null, Value::Int64(0), Value::Int64(3)),
                "decay must be a number",
            ),
            (
                args(Value::Double(f64::NAN), Value::Int64(0), Value::Int64(3)),
                "decay must be between",
            ),
        ] {
            let error = parameters(&bad, 30).unwrap_err().to_string();
            assert!(error.contains(needle), "{error}");
        }
    }

    #[test]
    fn seeds_take_nodes_ids_and_structs() {
        let id = InternalId::new(0, 7);
        let node = Value::Node(NodeValue {
            id,
            projection: None,
        });
        assert_eq!(seeds(&node).unwrap(), vec![(id, 1.0)]);
        assert_eq!(seeds(&Value::Null).unwrap(), vec![]);
        let with_activation =
            Value::Struct(std::sync::Arc::new(warren_common::value::StructValue {
                fields: vec![
                    ("node".into(), node.clone()),
                    ("activation".into(), Value::Double(0.25)),
                ],
            }));
        let list = Value::list(vec![Value::InternalId(id), with_activation]);
        assert_eq!(seeds(&list).unwrap(), vec![(id, 1.0), (id, 0.25)]);
        for (bad, needle) in [
            (Value::Int64(3), "a seed must be a node"),
            (Value::list(vec![Value::Null]), "a seed is NULL"),
        ] {
            let error = seeds(&bad).unwrap_err().to_string();
            assert!(error.contains(needle), "{error}");
        }
    }
}

//! What a statement may read of the connection it runs on besides the catalog: its settings
//! (for `current_setting`), its projected graphs (for `SHOW_PROJECTED_GRAPHS` and
//! `PROJECTED_GRAPH_INFO`) and its user-defined functions. Kùzu keeps these in its client
//! context.

use std::sync::Arc;

use warren_common::value::Value;

use warren_storage::import::CopyWarning;

use super::projected_graph::ProjectedGraphs;
use crate::user_function::UserFunction;

pub trait Session {
    /// The value of setting `name` (case-insensitive), or `None` when there is no such setting.
    fn setting(&self, name: &str) -> Option<Value>;

    /// The connection's projected graphs.
    fn projected_graphs(&self) -> &ProjectedGraphs;

    /// The user-defined function `name` (case-insensitive), if the connection has one.
    fn user_function(&self, _name: &str) -> Option<Arc<dyn UserFunction>> {
        None
    }

    /// The rows COPY and LOAD FROM skipped with `IGNORE_ERRORS` on this connection, each with
    /// the id of its statement (for `show_warnings()`).
    fn warnings(&self) -> Vec<(u64, CopyWarning)> {
        Vec::new()
    }
}

/// A session with no settings and no projected graphs, for binding outside a connection.
#[derive(Debug, Default)]
pub struct NoSession {
    graphs: ProjectedGraphs,
}

impl Session for NoSession {
    fn setting(&self, _name: &str) -> Option<Value> {
        None
    }

    fn projected_graphs(&self) -> &ProjectedGraphs {
        &self.graphs
    }
}

//! What a statement may read of the connection it runs on besides the catalog: its settings
//! (for `current_setting`) and its projected graphs (for `SHOW_PROJECTED_GRAPHS` and
//! `PROJECTED_GRAPH_INFO`). Kùzu keeps both in its client context.

use warren_common::value::Value;

use super::projected_graph::ProjectedGraphs;

pub trait Session {
    /// The value of setting `name` (case-insensitive), or `None` when there is no such setting.
    fn setting(&self, name: &str) -> Option<Value>;

    /// The connection's projected graphs.
    fn projected_graphs(&self) -> &ProjectedGraphs;
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

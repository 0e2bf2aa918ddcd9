//! Binding `CALL reorder_nodes(table, order := 'bfs' | 'degree')`, which gives a node table's
//! rows new offsets for locality (`warren_storage::reorder`). Only a statement of its own may
//! call it; the table and the order are checked here.

use warren_common::{Error, Result};
use warren_cypher::ast;
use warren_storage::reorder::NodeOrder;

use super::procedure::{at, split_arguments};
use super::{Binder, BoundStatement};

/// Whether `name` is `reorder_nodes`.
pub(crate) fn is_reorder_nodes(name: &str) -> bool {
    name.eq_ignore_ascii_case("reorder_nodes")
}

impl Binder<'_> {
    /// Binds a standalone `CALL reorder_nodes(table, order := ...)` (BFS order by default).
    pub(crate) fn bind_reorder_nodes(&mut self, call: &ast::CallClause) -> Result<BoundStatement> {
        let arguments = split_arguments(call)?;
        let [table] = arguments.positional.as_slice() else {
            return Err(Error::binder(format!(
                "Function REORDER_NODES did not receive correct arguments: expected (table name) and the named option order, got {} positional arguments{}.",
                arguments.positional.len(),
                at(call.span)
            )));
        };
        let table = self.constant_text(table, "the table name")?;
        if self.catalog.node_table(&table).is_none() {
            if self.catalog.rel_table(&table).is_some() {
                return Err(Error::binder(format!(
                    "Table {table} is not a node table; reorder_nodes reorders node tables."
                )));
            }
            return Err(Error::binder(format!("Table {table} does not exist.")));
        }
        let mut order = NodeOrder::Bfs;
        for &(option, value, span) in &arguments.named {
            if !option.eq_ignore_ascii_case("order") {
                return Err(Error::binder(format!(
                    "Unrecognized optional parameter {option} in REORDER_NODES; it takes order{}.",
                    at(span)
                )));
            }
            let text = self.constant_text(value, "order")?;
            order = NodeOrder::parse(&text).ok_or_else(|| {
                Error::binder(format!(
                    "Order {text} is not supported; use one of {}{}.",
                    NodeOrder::NAMES,
                    at(span)
                ))
            })?;
        }
        Ok(BoundStatement::ReorderNodes { table, order })
    }
}

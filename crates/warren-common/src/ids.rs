//! Identifiers: table ids (one counter shared by node and rel tables, as Kùzu numbers them) and
//! internal ids `table:offset` of nodes and rels.

use std::fmt;

/// A table id, assigned in creation order from one counter shared by node tables, rel tables
/// (one id per FROM/TO pair) and rel groups.
pub type TableId = u32;

/// The identity of a stored node or rel: its table and its offset (row) in that table. Prints as
/// `table:offset`, as Kùzu prints `_ID`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct InternalId {
    pub table: TableId,
    pub offset: u64,
}

impl InternalId {
    pub const fn new(table: TableId, offset: u64) -> Self {
        Self { table, offset }
    }
}

impl fmt::Display for InternalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.table, self.offset)
    }
}

//! Node reordering for locality (`CALL reorder_nodes('T', order := 'bfs')`): gives the rows of
//! one node table new offsets in an order where neighbours sit close (BFS) or hubs sit
//! together (degree), and rewrites every rel pair that has the table as an endpoint. What a
//! user sees is unchanged (primary keys, properties, rels and their properties, query
//! answers); internal offsets, and so `ID()` values, change, as they may between loads.
//!
//! The new tables are staged in an [`Editor`] like a COPY's, so committing writes them to new
//! segment files and switches to them with one log record: a crash leaves the old database or
//! the new one. Rels keep their rel offsets (rel property columns are not rewritten); only
//! their endpoints are renamed and both CSRs rebuilt. Memory beyond the folded tables: the
//! order and its inverse (8 bytes a node), the BFS queue and visited bits (about 4 bytes a
//! node), the permuted node columns, and per rel pair its renamed endpoint arrays (8 bytes a
//! rel) and its two new CSRs.

use std::sync::Arc;

use warren_common::{Error, Result, TableId};

use crate::buffer::Bitmap;
use crate::column::{Column, ColumnBuilder};
use crate::csr::Csr;
use crate::editor::Editor;
use crate::import::phases::CopyPhases;
use crate::node_table::NodeTable;
use crate::pk_index::PrimaryKeyIndex;
use crate::rel_table::RelTable;

/// The orders `reorder_nodes` can give a node table's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeOrder {
    /// Breadth-first over the table's rels to itself (both directions), from the live node of
    /// highest degree, then from the highest-degree node not yet reached, until every node is.
    Bfs,
    /// By degree (over every rel pair touching the table, both directions), highest first.
    Degree,
}

impl NodeOrder {
    /// The orders' names, as `order :=` takes them.
    pub const NAMES: &'static str = "bfs, degree";

    /// The order named `name` (case-insensitive).
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "bfs" => Some(Self::Bfs),
            "degree" => Some(Self::Degree),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Bfs => "bfs",
            Self::Degree => "degree",
        }
    }
}

/// What a reorder did.
#[derive(Clone, Debug)]
pub struct ReorderSummary {
    pub table: String,
    pub rows: u64,
    /// The rel pairs rewritten (those with the table as FROM or TO).
    pub rel_pairs: usize,
    pub phases: CopyPhases,
}

/// The rel pairs of `catalog` with node table `table` as an endpoint: (pair, from, to).
fn touching_pairs(editor: &Editor, table: TableId) -> Vec<(TableId, TableId, TableId)> {
    editor
        .catalog()
        .rel_tables()
        .iter()
        .flat_map(|rel| rel.pairs.iter())
        .filter(|pair| pair.from == table || pair.to == table)
        .map(|pair| (pair.id, pair.from, pair.to))
        .collect()
}

/// Reorders node table `table` in `order`, staging it and every rel pair touching it in
/// `editor` (committing the editor makes it durable). Errors name a missing table, a rel
/// table, or a table with a vector index (whose graph names row offsets).
pub fn reorder_nodes(editor: &mut Editor, table: &str, order: NodeOrder) -> Result<ReorderSummary> {
    let Some(schema) = editor.catalog().node_table(table) else {
        if editor.catalog().rel_table(table).is_some() {
            return Err(Error::binder(format!(
                "Table {table} is not a node table; reorder_nodes reorders node tables."
            )));
        }
        return Err(Error::binder(format!("Table {table} does not exist.")));
    };
    let (id, name) = (schema.id, schema.name.clone());
    if let Some(index) = editor
        .catalog()
        .vector_indexes()
        .iter()
        .find(|index| index.table == id)
    {
        return Err(Error::binder(format!(
            "Cannot reorder table {name}: vector index {} names its rows by offset; drop it first.",
            index.name
        )));
    }
    let pairs = touching_pairs(editor, id);
    let mut phases = CopyPhases::default();
    phases.time("fold the table and its rel pairs", || {
        editor.fold(id)?;
        pairs.iter().try_for_each(|&(pair, _, _)| editor.fold(pair))
    })?;
    let nodes = editor.node_table(id).clone();
    let rels: Vec<(TableId, TableId, TableId, Arc<RelTable>)> = pairs
        .iter()
        .map(|&(pair, from, to)| (pair, from, to, editor.rel_table(pair).clone()))
        .collect();
    let new_to_old = phases.time("compute the order", || {
        locality_order(order, id, &nodes, &rels)
    });
    let old_to_new = phases.time("invert the order", || invert(&new_to_old));
    let reordered = phases.time("permute the node columns and rebuild the key index", || {
        permute_node_table(&nodes, &new_to_old)
    })?;
    editor.replace_node_table(id, reordered);
    for (pair, from, to, data) in rels {
        let ends = (editor.node_count(from), editor.node_count(to));
        let renamed = phases.time("rename rel endpoints and rebuild both CSRs", || {
            rename_endpoints(&data, &old_to_new, (from == id, to == id), ends)
        })?;
        editor.replace_rel_table(pair, renamed);
    }
    Ok(ReorderSummary {
        table: name,
        rows: nodes.num_rows(),
        rel_pairs: pairs.len(),
        phases,
    })
}

/// The new order of `nodes`' rows: entry `i` is the old offset of the row that gets offset `i`.
/// Deleted rows come last, in their old order. Deterministic: ties go to the lower offset.
pub fn locality_order(
    order: NodeOrder,
    table: TableId,
    nodes: &NodeTable,
    rels: &[(TableId, TableId, TableId, Arc<RelTable>)],
) -> Vec<u32> {
    let rows = nodes.num_rows() as usize;
    assert!(
        rows <= u32::MAX as usize,
        "a node table has at most 2^32 - 1 rows"
    );
    let degrees = degrees(table, rows, rels);
    let by_degree = live_by_degree(nodes, &degrees);
    let mut new_to_old = match order {
        NodeOrder::Degree => by_degree,
        NodeOrder::Bfs => {
            let own: Vec<&Csr> = rels
                .iter()
                .flat_map(|(_, from, to, data)| {
                    let mut own = Vec::new();
                    if *from == table && *to == table {
                        own.push(data.stored_csr(crate::Direction::Forward));
                        own.push(data.stored_csr(crate::Direction::Backward));
                    }
                    own
                })
                .collect();
            breadth_first(rows, &by_degree, &own)
        }
    };
    new_to_old.extend((0..rows as u32).filter(|&row| nodes.is_deleted(u64::from(row))));
    assert_eq!(new_to_old.len(), rows, "the order names every row once");
    new_to_old
}

/// Each row's number of live rel entries over every pair touching `table`, both directions
/// (a rel from the table to itself counts at both ends).
fn degrees(
    table: TableId,
    rows: usize,
    rels: &[(TableId, TableId, TableId, Arc<RelTable>)],
) -> Vec<u64> {
    let mut degrees = vec![0u64; rows];
    for (_, from, to, data) in rels {
        let directions = [
            (*from == table, crate::Direction::Forward),
            (*to == table, crate::Direction::Backward),
        ];
        for (touches, direction) in directions {
            if !touches {
                continue;
            }
            // The CSR may cover fewer rows than the table (rows added since it was built).
            let csr = data.stored_csr(direction);
            for (row, degree) in degrees.iter_mut().enumerate().take(csr.num_nodes()) {
                *degree += csr.range(row as u32).len() as u64;
            }
        }
    }
    degrees
}

/// The live rows, highest degree first, ties by offset.
fn live_by_degree(nodes: &NodeTable, degrees: &[u64]) -> Vec<u32> {
    let mut live: Vec<u32> = (0..degrees.len() as u32)
        .filter(|&row| !nodes.is_deleted(u64::from(row)))
        .collect();
    live.sort_by_key(|&row| (std::cmp::Reverse(degrees[row as usize]), row));
    live
}

/// Breadth-first visiting order over the union of `csrs` (each a node's neighbours in the same
/// table), each search starting at the first row of `starts` not yet visited. Only rows in
/// `starts` (the live ones) are visited.
fn breadth_first(rows: usize, starts: &[u32], csrs: &[&Csr]) -> Vec<u32> {
    let mut visited = vec![true; rows];
    for &row in starts {
        visited[row as usize] = false;
    }
    let mut order: Vec<u32> = Vec::with_capacity(starts.len());
    for &start in starts {
        if visited[start as usize] {
            continue;
        }
        visited[start as usize] = true;
        let mut head = order.len();
        order.push(start);
        while head < order.len() {
            let node = order[head];
            head += 1;
            for csr in csrs {
                for &neighbour in &csr.neighbours()[csr.range(node)] {
                    if !visited[neighbour as usize] {
                        visited[neighbour as usize] = true;
                        order.push(neighbour);
                    }
                }
            }
        }
    }
    order
}

/// `old_to_new[old] = new` for a permutation given as `new_to_old`.
fn invert(new_to_old: &[u32]) -> Vec<u32> {
    let mut old_to_new = vec![u32::MAX; new_to_old.len()];
    for (new, &old) in new_to_old.iter().enumerate() {
        assert_eq!(
            old_to_new[old as usize],
            u32::MAX,
            "row {old} ordered twice"
        );
        old_to_new[old as usize] = new as u32;
    }
    old_to_new
}

/// `nodes` (no delta) with row `new_to_old[i]` moved to offset `i`: every column, the deletion
/// bitmap, and a primary-key index built over the moved keys.
fn permute_node_table(nodes: &NodeTable, new_to_old: &[u32]) -> Result<NodeTable> {
    assert!(!nodes.has_delta(), "reorder a folded table");
    let columns = nodes
        .columns()
        .iter()
        .map(|column| permute_column(column, new_to_old))
        .collect::<std::result::Result<Vec<_>, String>>()
        .map_err(Error::internal)?;
    let deleted = nodes.deleted().map(|deleted| {
        let bits: Vec<bool> = new_to_old
            .iter()
            .map(|&old| deleted.get(old as usize))
            .collect();
        Bitmap::from_bits(&bits)
    });
    let primary_key = nodes.primary_key();
    let pk_index = PrimaryKeyIndex::build(&columns[primary_key], deleted.as_ref())
        .map_err(|_| Error::internal("a duplicate primary key appeared while reordering"))?;
    NodeTable::from_parts(columns, primary_key, pk_index, deleted, nodes.next_serial())
        .map_err(Error::internal)
}

/// `column` with row `new_to_old[i]` at row `i` (INT64 columns without NULLs are gathered
/// directly; others value by value).
fn permute_column(column: &Column, new_to_old: &[u32]) -> std::result::Result<Column, String> {
    let mut builder = ColumnBuilder::new(column.ty().clone());
    builder.reserve(new_to_old.len());
    match column.int64_values().filter(|_| !column.has_nulls()) {
        Some(values) => {
            for &old in new_to_old {
                builder.push_i64(values[old as usize]);
            }
        }
        None => {
            for &old in new_to_old {
                builder.push(&column.get(old as usize))?;
            }
        }
    }
    Ok(builder.finish())
}

/// `data` (no delta) with its FROM endpoints renamed by `old_to_new` when `from` is the
/// reordered table, its TO endpoints when `to` is, and both CSRs rebuilt over the endpoint
/// tables' current row counts. Rel offsets, their property columns and deletion bitmap stay
/// as they are.
fn rename_endpoints(
    data: &RelTable,
    old_to_new: &[u32],
    (from, to): (bool, bool),
    (from_rows, to_rows): (u64, u64),
) -> Result<RelTable> {
    assert!(!data.has_delta(), "reorder a folded rel table");
    let rename = |ends: &[u32], renamed: bool| -> Vec<u32> {
        if renamed {
            ends.iter().map(|&old| old_to_new[old as usize]).collect()
        } else {
            ends.to_vec()
        }
    };
    let sources = rename(data.sources(), from);
    let targets = rename(data.targets(), to);
    RelTable::build(
        sources,
        targets,
        data.columns().to_vec(),
        data.deleted().cloned(),
        from_rows,
        to_rows,
    )
    .map_err(Error::internal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use warren_common::types::LogicalType;
    use warren_common::value::Value;

    const TABLE: TableId = 1;
    const PAIR: TableId = 2;

    /// A node table of keys `10 * row` with the given rows deleted.
    fn node_table(rows: usize, deleted: &[bool]) -> NodeTable {
        let keys: Vec<Value> = (0..rows).map(|row| Value::Int64(10 * row as i64)).collect();
        let column = Column::from_values(LogicalType::Int64, &keys).unwrap();
        let deleted = deleted.contains(&true).then(|| Bitmap::from_bits(deleted));
        let index = PrimaryKeyIndex::build(&column, deleted.as_ref()).unwrap();
        NodeTable::from_parts(vec![column], 0, index, deleted, 0).unwrap()
    }

    fn self_pair(
        rows: usize,
        rels: &[(u32, u32)],
    ) -> Vec<(TableId, TableId, TableId, Arc<RelTable>)> {
        let (sources, targets) = rels.iter().copied().unzip();
        let data = RelTable::build(sources, targets, Vec::new(), None, rows as u64, rows as u64);
        vec![(PAIR, TABLE, TABLE, Arc::new(data.unwrap()))]
    }

    #[test]
    fn orders_have_names() {
        assert_eq!(NodeOrder::parse("BFS"), Some(NodeOrder::Bfs));
        assert_eq!(
            NodeOrder::parse("degree").map(NodeOrder::name),
            Some("degree")
        );
        assert_eq!(NodeOrder::parse("rcm"), None);
    }

    #[test]
    fn bfs_starts_at_the_hub_and_takes_components_in_turn() {
        // A star around row 3 (rels in both directions) and a separate pair 5-6; row 4 alone.
        let rels = [(0, 3), (3, 1), (2, 3), (5, 6)];
        let nodes = node_table(7, &[false; 7]);
        let order = locality_order(NodeOrder::Bfs, TABLE, &nodes, &self_pair(7, &rels));
        assert_eq!(order, vec![3, 1, 0, 2, 5, 6, 4]);
        let order = locality_order(NodeOrder::Degree, TABLE, &nodes, &self_pair(7, &rels));
        assert_eq!(order, vec![3, 0, 1, 2, 5, 6, 4]);
    }

    #[test]
    fn permuting_moves_every_column_the_tombstones_and_the_key_index() {
        let nodes = node_table(4, &[false, true, false, false]);
        let moved = permute_node_table(&nodes, &[2, 0, 3, 1]).unwrap();
        let keys: Vec<Value> = (0..4).map(|row| moved.value(row, 0)).collect();
        assert_eq!(keys, [20, 0, 30, 10].map(Value::Int64));
        assert!(moved.is_deleted(3) && !moved.is_deleted(1));
        assert_eq!(moved.lookup(&Value::Int64(30)), Some(2));
        assert_eq!(
            moved.lookup(&Value::Int64(10)),
            None,
            "a deleted row stays deleted"
        );
    }

    fn graphs() -> impl Strategy<Value = (usize, Vec<(u32, u32)>, Vec<bool>)> {
        (1usize..40).prop_flat_map(|rows| {
            (
                Just(rows),
                proptest::collection::vec((0..rows as u32, 0..rows as u32), 0..80),
                proptest::collection::vec(proptest::bool::weighted(0.1), rows),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Both orders name every row once, deleted rows last; degree order never rises; in
        /// BFS order every live row is a search's start (the highest-degree row not yet
        /// placed) or has a neighbour placed before it; renamed rels join the same keys.
        #[test]
        fn orders_are_permutations_with_their_shape((rows, rels, deleted) in graphs()) {
            // Rels never touch a deleted row (DETACH DELETE removed them).
            let rels: Vec<(u32, u32)> = rels
                .into_iter()
                .filter(|&(a, b)| !deleted[a as usize] && !deleted[b as usize])
                .collect();
            let nodes = node_table(rows, &deleted);
            let pairs = self_pair(rows, &rels);
            let mut degree = vec![0u64; rows];
            for &(a, b) in &rels {
                degree[a as usize] += 1;
                degree[b as usize] += 1;
            }
            let live = deleted.iter().filter(|&&d| !d).count();
            for order in [NodeOrder::Bfs, NodeOrder::Degree] {
                let new_to_old = locality_order(order, TABLE, &nodes, &pairs);
                let mut sorted = new_to_old.clone();
                sorted.sort_unstable();
                prop_assert_eq!(sorted, (0..rows as u32).collect::<Vec<_>>());
                prop_assert!(new_to_old[live..].iter().all(|&row| deleted[row as usize]));
                let placed = |row: u32, upto: usize| new_to_old[..upto].contains(&row);
                for (i, &row) in new_to_old[..live].iter().enumerate() {
                    match order {
                        NodeOrder::Degree => prop_assert!(
                            i == 0 || degree[new_to_old[i - 1] as usize] >= degree[row as usize]
                        ),
                        NodeOrder::Bfs => {
                            let reached = rels.iter().any(|&(a, b)| {
                                (a == row && placed(b, i)) || (b == row && placed(a, i))
                            });
                            let highest_left = new_to_old[i..live]
                                .iter()
                                .all(|&other| degree[other as usize] <= degree[row as usize]);
                            prop_assert!(reached || highest_left, "row {} at {}", row, i);
                        }
                    }
                }
                let old_to_new = invert(&new_to_old);
                let renamed =
                    rename_endpoints(&pairs[0].3, &old_to_new, (true, true), (rows as u64, rows as u64))
                        .unwrap();
                let moved = permute_node_table(&nodes, &new_to_old).unwrap();
                for (rel, &(a, b)) in rels.iter().enumerate() {
                    let (x, y) = renamed.endpoints(rel as u64);
                    prop_assert_eq!(moved.value(u64::from(x), 0), nodes.value(u64::from(a), 0));
                    prop_assert_eq!(moved.value(u64::from(y), 0), nodes.value(u64::from(b), 0));
                }
            }
        }
    }
}

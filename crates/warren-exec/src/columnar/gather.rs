//! Gathers a property column at a batch's row ids: straight from the stored INT64, DOUBLE and
//! STRING arrays when the table has no delta, through the table's `value` (which reads the
//! delta's updates and appended rows) otherwise. A stored column is verified as a whole before
//! its arrays are read; a damaged block is a `corrupt database` error.

use warren_common::column_batch::VectorBuilder;
use warren_common::{Result, TableId};
use warren_storage::column::Column;
use warren_storage::Snapshot;

/// Pushes property `column` (`None`: the table lacks it, so NULL) of the node or rel table
/// `table` at each of `rows`.
pub fn gather_property(
    builder: &mut VectorBuilder,
    snapshot: &Snapshot,
    is_rel: bool,
    table: TableId,
    column: Option<usize>,
    rows: &[u64],
) -> Result<()> {
    let Some(column) = column else {
        for _ in rows {
            builder.push_null();
        }
        return Ok(());
    };
    let stored = if is_rel {
        let rels = snapshot.rel_table(table);
        (!rels.has_delta()).then(|| &rels.columns()[column])
    } else {
        let nodes = snapshot.node_table(table);
        (!nodes.has_delta()).then(|| nodes.column(column))
    };
    if let Some(stored) = stored {
        stored.try_verify()?;
        if gather_stored(builder, stored, rows) {
            return Ok(());
        }
    }
    for &row in rows {
        let value = if is_rel {
            snapshot.rel_table(table).try_value(row, column)?
        } else {
            snapshot.node_table(table).try_value(row, column)?
        };
        builder.push(&value);
    }
    Ok(())
}

/// The stored-array fast paths; `false` when the column's type has none.
fn gather_stored(builder: &mut VectorBuilder, column: &Column, rows: &[u64]) -> bool {
    let nulls = column.has_nulls();
    if let Some(values) = column.int64_values() {
        if nulls {
            for &row in rows {
                if column.is_null(row as usize) {
                    builder.push_null();
                } else {
                    builder.push_i64(values[row as usize]);
                }
            }
        } else {
            builder.extend_i64(rows.iter().map(|&row| values[row as usize]));
        }
        return true;
    }
    if let Some(values) = column.double_values() {
        for &row in rows {
            if nulls && column.is_null(row as usize) {
                builder.push_null();
            } else {
                builder.push_f64(values[row as usize]);
            }
        }
        return true;
    }
    if *column.ty() == warren_common::LogicalType::String {
        for &row in rows {
            match column.str_at(row as usize) {
                Some(text) => builder.push_str(text),
                // NULL, or (never for a validated column) bytes that are not UTF-8.
                None => builder.push(&column.get(row as usize)),
            }
        }
        return true;
    }
    false
}

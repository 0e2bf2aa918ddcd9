//! Writing a table's data to a segment file and mapping it back: which sections a node table
//! and a rel table consist of. Everything read is validated before use.

use std::path::Path;

use warren_common::types::LogicalType;
use warren_common::{Error, Result};

use crate::buffer::Bitmap;
use crate::column::{Column, ColumnParts, PartsLayout};
use crate::csr::Csr;
use crate::io::FileSystem;
use crate::node_table::NodeTable;
use crate::pk_index::PrimaryKeyIndex;
use crate::rel_table::{Direction, RelTable};
use crate::segment::{write_segment, SectionData, SectionTag, Segment};

fn column_sections<'a>(columns: &'a [Column], parts: &'a [ColumnParts]) -> Vec<SectionData<'a>> {
    let mut sections = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        let index = index as u32;
        if part.layout == PartsLayout::Vector {
            sections.push(SectionData {
                tag: SectionTag::VectorValues,
                index,
                bytes: part.values.as_bytes(),
            });
            if !part.data.is_empty() {
                sections.push(SectionData {
                    tag: SectionTag::VectorElementNulls,
                    index,
                    bytes: part.data.as_bytes(),
                });
            }
        } else {
            sections.push(SectionData {
                tag: SectionTag::ColumnValues,
                index,
                bytes: part.values.as_bytes(),
            });
        }
        if part.layout == PartsLayout::Scalar
            && columns[index as usize].ty().fixed_width().is_none()
        {
            sections.push(SectionData {
                tag: SectionTag::ColumnData,
                index,
                bytes: part.data.as_bytes(),
            });
        }
        if let Some(nulls) = &part.nulls {
            sections.push(SectionData {
                tag: SectionTag::ColumnNulls,
                index,
                bytes: nulls.as_bytes(),
            });
        }
    }
    sections
}

fn read_columns(segment: &Segment, types: &[LogicalType], rows: usize) -> Result<Vec<Column>> {
    let mut columns = Vec::with_capacity(types.len());
    for (index, ty) in types.iter().enumerate() {
        let index = index as u32;
        let nulls = segment.section(SectionTag::ColumnNulls, index);
        // Vector columns written before the contiguous layout existed are variable-size ones.
        let parts = match segment.section(SectionTag::VectorValues, index) {
            Some(values) => ColumnParts {
                layout: PartsLayout::Vector,
                values,
                data: segment
                    .section(SectionTag::VectorElementNulls, index)
                    .unwrap_or_else(crate::buffer::Bytes::empty),
                nulls,
            },
            None => ColumnParts {
                layout: PartsLayout::Scalar,
                values: segment.required(SectionTag::ColumnValues, index)?,
                data: match ty.fixed_width() {
                    Some(_) => crate::buffer::Bytes::empty(),
                    None => segment.required(SectionTag::ColumnData, index)?,
                },
                nulls,
            },
        };
        let column = Column::from_parts(ty.clone(), rows, parts)
            .map_err(|e| Error::Corrupt(format!("column {index}: {e}")))?;
        columns.push(column);
    }
    Ok(columns)
}

fn read_deleted(segment: &Segment, rows: usize) -> Result<Option<Bitmap>> {
    match segment.section(SectionTag::Deleted, 0) {
        Some(bytes) if bytes.len() * 8 >= rows => Ok(Some(Bitmap::from_bytes(bytes, rows))),
        Some(_) => Err(Error::Corrupt(
            "deletion bitmap shorter than the table".into(),
        )),
        None => Ok(None),
    }
}

pub fn write_node_table(fs: &dyn FileSystem, path: &Path, table: &NodeTable) -> Result<()> {
    let parts: Vec<ColumnParts> = table.columns().iter().map(Column::parts).collect();
    let mut sections = column_sections(table.columns(), &parts);
    sections.push(SectionData {
        tag: SectionTag::PrimaryKeySlots,
        index: 0,
        bytes: table.pk_index().bytes().as_bytes(),
    });
    if let Some(deleted) = table.deleted() {
        sections.push(SectionData {
            tag: SectionTag::Deleted,
            index: 0,
            bytes: deleted.bytes().as_bytes(),
        });
    }
    write_segment(fs, path, &sections)
}

/// Maps a node table written by [`write_node_table`].
pub fn read_node_table(
    fs: &dyn FileSystem,
    path: &Path,
    types: &[LogicalType],
    rows: u64,
    primary_key: usize,
    next_serial: i64,
) -> Result<NodeTable> {
    let segment = Segment::open(fs, path)?;
    let columns = read_columns(&segment, types, rows as usize)?;
    let slots = segment.required(SectionTag::PrimaryKeySlots, 0)?;
    let pk_index = PrimaryKeyIndex::from_bytes(slots).map_err(Error::Corrupt)?;
    let deleted = read_deleted(&segment, rows as usize)?;
    NodeTable::from_parts(columns, primary_key, pk_index, deleted, next_serial)
        .map_err(|e| Error::Corrupt(format!("{}: {e}", path.display())))
}

pub fn write_rel_table(fs: &dyn FileSystem, path: &Path, table: &RelTable) -> Result<()> {
    assert!(!table.has_delta(), "a rel table is written folded");
    let parts: Vec<ColumnParts> = table.columns().iter().map(Column::parts).collect();
    let mut sections = column_sections(table.columns(), &parts);
    sections.push(SectionData {
        tag: SectionTag::RelSources,
        index: 0,
        bytes: table.source_bytes().as_bytes(),
    });
    sections.push(SectionData {
        tag: SectionTag::RelTargets,
        index: 0,
        bytes: table.target_bytes().as_bytes(),
    });
    let forward = table.stored_csr(Direction::Forward).parts();
    let backward = table.stored_csr(Direction::Backward).parts();
    let csr_sections = [
        (SectionTag::ForwardOffsets, &forward.0),
        (SectionTag::ForwardNeighbours, &forward.1),
        (SectionTag::ForwardRels, &forward.2),
        (SectionTag::BackwardOffsets, &backward.0),
        (SectionTag::BackwardNeighbours, &backward.1),
        (SectionTag::BackwardRels, &backward.2),
    ];
    for (tag, bytes) in csr_sections {
        sections.push(SectionData {
            tag,
            index: 0,
            bytes: bytes.as_bytes(),
        });
    }
    if let Some(deleted) = table.deleted() {
        sections.push(SectionData {
            tag: SectionTag::Deleted,
            index: 0,
            bytes: deleted.bytes().as_bytes(),
        });
    }
    write_segment(fs, path, &sections)
}

/// Maps a rel table written by [`write_rel_table`] and validates both CSRs against the sizes
/// of its endpoint tables.
pub fn read_rel_table(
    fs: &dyn FileSystem,
    path: &Path,
    types: &[LogicalType],
    rows: u64,
    from_rows: u64,
    to_rows: u64,
) -> Result<RelTable> {
    let segment = Segment::open(fs, path)?;
    let columns = read_columns(&segment, types, rows as usize)?;
    let sources = segment.required(SectionTag::RelSources, 0)?;
    let targets = segment.required(SectionTag::RelTargets, 0)?;
    if sources.len() as u64 != rows * 4 {
        return Err(Error::Corrupt(format!(
            "{}: rel count mismatch",
            path.display()
        )));
    }
    let csr = |offsets, neighbours, rels| -> Result<Csr> {
        Ok(Csr::from_parts(
            segment.required(offsets, 0)?,
            segment.required(neighbours, 0)?,
            segment.required(rels, 0)?,
        ))
    };
    let forward = csr(
        SectionTag::ForwardOffsets,
        SectionTag::ForwardNeighbours,
        SectionTag::ForwardRels,
    )?;
    let backward = csr(
        SectionTag::BackwardOffsets,
        SectionTag::BackwardNeighbours,
        SectionTag::BackwardRels,
    )?;
    let deleted = read_deleted(&segment, rows as usize)?;
    RelTable::from_parts(
        sources, targets, columns, forward, backward, deleted, from_rows, to_rows,
    )
    .map_err(|e| Error::Corrupt(format!("{}: {e}", path.display())))
}

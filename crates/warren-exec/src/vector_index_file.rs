//! The persisted form of a built vector index (`docs/format/vector_index.md`): the HNSW graph
//! with the table offset and the vector of every index row, in one checksummed little-endian
//! file. It holds the vectors (a copy of the column's) because a graph row that was deleted or
//! changed after the build keeps its old vector for traversal, and the column no longer has it.
//! Decoding checks everything it reads, so a torn, truncated or bit-flipped file, or one for
//! another definition, is an error, never a wrong graph; a file from another version of the
//! table is brought up to date like any older graph (`crate::vector_index`).

use warren_common::{Error, Result, TableId};
use warren_storage::VectorIndexSchema;
use warren_vector::hnsw::HnswIndex;

use crate::vector_index::{params_of, BuiltIndex};

const MAGIC: &[u8; 8] = b"WRNVIDX\0";
/// The version this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;
const HEADER_BYTES: usize = 64;

/// `built`, the graph of an index of table `table`, as the bytes of its file.
pub fn encode(built: &BuiltIndex, table: TableId) -> Vec<u8> {
    let graph = built.hnsw.to_bytes();
    let rows = built.offsets.len();
    let dim = built.hnsw.dim();
    assert_eq!(built.vectors.len(), rows * dim, "one vector per index row");
    let mut out = Vec::with_capacity(HEADER_BYTES + rows * (8 + 4 * dim) + graph.len() + 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    for value in [
        built.table_offsets() as u64,
        rows as u64,
        graph.len() as u64,
        u64::from(table),
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.resize(HEADER_BYTES, 0);
    for &offset in &built.offsets {
        out.extend_from_slice(&offset.to_le_bytes());
    }
    for &value in &built.vectors {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&graph);
    let checksum = crc32fast::hash(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

fn corrupt(why: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("vector index graph file: {why}"))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// The graph in `bytes`, checked against index `schema` of table `table` with vectors of
/// `dimension` values.
pub fn decode(bytes: &[u8], schema: &VectorIndexSchema, dimension: usize) -> Result<BuiltIndex> {
    if bytes.len() < HEADER_BYTES + 4 || &bytes[..8] != MAGIC {
        return Err(corrupt("not a graph file (bad magic or too short)"));
    }
    let (body, stored) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(body) != u32_at(stored, 0) {
        return Err(corrupt("checksum mismatch (torn or damaged file)"));
    }
    let version = u32_at(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(corrupt(format!(
            "format version {version}, expected {FORMAT_VERSION}"
        )));
    }
    let dim = u32_at(bytes, 12) as usize;
    let (table_offsets, rows, graph_bytes, table) = (
        u64_at(bytes, 16),
        u64_at(bytes, 24),
        u64_at(bytes, 32),
        u64_at(bytes, 40),
    );
    if dim != dimension || table != u64::from(schema.table) {
        return Err(corrupt(format!(
            "written for table {table} with {dim} dimensions, not table {} with {dimension}",
            schema.table
        )));
    }
    let expected = usize::try_from(rows)
        .ok()
        .and_then(|r| r.checked_mul(8 + 4 * dim))
        .and_then(|n| n.checked_add(usize::try_from(graph_bytes).ok()?))
        .and_then(|n| n.checked_add(HEADER_BYTES));
    if expected != Some(body.len()) {
        return Err(corrupt("section lengths do not add up to the file's"));
    }
    let rows = rows as usize;
    let vectors_at = HEADER_BYTES + 8 * rows;
    let graph_at = vectors_at + 4 * rows * dim;
    let offsets: Vec<u64> = (0..rows)
        .map(|r| u64_at(bytes, HEADER_BYTES + 8 * r))
        .collect();
    let vectors: Vec<f32> = bytes[vectors_at..graph_at]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let hnsw = HnswIndex::from_bytes(&body[graph_at..], &vectors).map_err(corrupt)?;
    if hnsw.rows() != rows || hnsw.dim() != dim {
        return Err(corrupt(
            "the graph's rows or dimension differ from the file's",
        ));
    }
    let params = params_of(schema)?;
    let held = hnsw.params();
    let same = held.metric == params.metric
        && held.mu == params.mu
        && held.ml == params.ml
        && held.efc == params.efc
        && held.pu == params.pu;
    if !same {
        return Err(corrupt("written for another definition of the index"));
    }
    BuiltIndex::from_parts(hnsw, vectors, offsets, table_offsets).map_err(corrupt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> VectorIndexSchema {
        VectorIndexSchema {
            table: 4,
            name: "i".into(),
            property: "v".into(),
            metric: "l2".into(),
            mu: 4,
            ml: 8,
            pu: 0.5,
            efc: 16,
        }
    }

    fn built() -> BuiltIndex {
        let vectors: Vec<f32> = (0..60).map(|i| (i * 7 % 13) as f32).collect();
        let params = params_of(&schema()).unwrap();
        let mut hnsw = HnswIndex::build(&vectors, 2, params, 1).unwrap();
        hnsw.delete(3).unwrap();
        let offsets: Vec<u64> = (0..30).map(|r| if r == 29 { 3 } else { r + 2 }).collect();
        // Row 3 (offset 5) is deleted; offset 3 is row 1's and, changed, row 29's: row 1 is
        // deleted too so that each offset has at most one live row.
        hnsw.delete(1).unwrap();
        BuiltIndex::from_parts(hnsw, vectors, offsets, 40).unwrap()
    }

    #[test]
    fn a_graph_round_trips() {
        let built = built();
        let bytes = encode(&built, 4);
        let back = decode(&bytes, &schema(), 2).unwrap();
        assert_eq!(back.offsets, built.offsets);
        assert_eq!(back.vectors, built.vectors);
        assert_eq!(back.hnsw.to_bytes(), built.hnsw.to_bytes());
        assert_eq!(back.table_offsets(), 40);
        assert_eq!(back.row_of_offset(3), Some(29));
        assert_eq!(back.row_of_offset(5), None);
    }

    #[test]
    fn every_flipped_bit_and_every_truncation_is_detected() {
        let bytes = encode(&built(), 4);
        for at in (0..bytes.len()).step_by(7) {
            let mut flipped = bytes.clone();
            flipped[at] ^= 1 << (at % 8);
            assert!(decode(&flipped, &schema(), 2).is_err(), "bit flip at {at}");
        }
        for len in [0, 10, HEADER_BYTES, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..len], &schema(), 2).is_err(), "cut at {len}");
        }
    }

    #[test]
    fn a_file_for_another_definition_or_table_is_refused() {
        let bytes = encode(&built(), 4);
        let mut other = schema();
        other.ml = 9;
        let error = decode(&bytes, &other, 2).unwrap_err().to_string();
        assert!(error.contains("another definition"), "{error}");
        let mut other = schema();
        other.table = 5;
        assert!(decode(&bytes, &other, 2).is_err());
        assert!(decode(&bytes, &schema(), 3).is_err());
    }
}

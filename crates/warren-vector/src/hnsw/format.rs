//! The serialized index: a versioned, checksummed little-endian byte buffer the engine writes
//! into a segment file. Layout (every integer little-endian; see `docs/VECTORS.md`):
//!
//! ```text
//! header, 64 bytes:
//!   magic "WRNHNSW\0" | version u32 | metric u32 | dim u32 | mu u32 | ml u32 | efc u32
//!   | pu f64 | seed u64 | rows u64 | upper_nodes u64
//! upper_rows      u32 x upper_nodes       (upper node -> row; node 0 is the entry)
//! upper_counts    u32 x upper_nodes
//! upper_slots     u32 x upper_nodes * mu  (EMPTY = 0xFFFF_FFFF)
//! lower_counts    u32 x rows
//! lower_slots     u32 x rows * ml
//! deleted         u64 x ceil(rows / 64)   (tombstone bitmap)
//! inverse_norms   f32 x rows              (cosine only: 1 / |row|; absent for other metrics)
//! crc32           u32 of every byte before it
//! ```
//!
//! Reading checks the magic, version, lengths, checksum, that every count and neighbour id is
//! in range and that the upper rows are in row order (as the build adds them), so a corrupt
//! buffer is an error, never a wrong graph. The vectors are not in
//! the buffer (the engine's file keeps them beside it): reading takes them as an argument and
//! codes them into the index's blocks (`measure`), under cosine with the stored inverse norms.

use super::index::{keeps_norms, HnswIndex};
use super::layer::{Layer, EMPTY};
use super::params::{HnswError, HnswParams, ROWS_MAX};
use crate::distance::Metric;

const MAGIC: &[u8; 8] = b"WRNHNSW\0";
/// The format version this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;
const HEADER_BYTES: usize = 64;
const METRICS: [Metric; 4] = [
    Metric::Cosine,
    Metric::L2,
    Metric::L2Squared,
    Metric::DotProduct,
];

impl HnswIndex {
    /// The index as a byte buffer (see the module's layout).
    pub fn to_bytes(&self) -> Vec<u8> {
        let upper_nodes = self.upper_rows.len();
        let mut out = Vec::with_capacity(
            HEADER_BYTES
                + 4 * (upper_nodes * (2 + self.params.mu) + self.rows * (1 + self.params.ml))
                + 8 * self.deleted.len()
                + 4 * self.rows * usize::from(keeps_norms(self.params))
                + 4,
        );
        out.extend_from_slice(MAGIC);
        let metric = METRICS.iter().position(|&m| m == self.params.metric);
        for value in [
            FORMAT_VERSION,
            metric.expect("every metric has a code") as u32,
            self.dim as u32,
            self.params.mu as u32,
            self.params.ml as u32,
            self.params.efc as u32,
        ] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        out.extend_from_slice(&self.params.pu.to_le_bytes());
        for value in [self.params.seed, self.rows as u64, upper_nodes as u64] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        assert_eq!(out.len(), HEADER_BYTES);
        let words = self
            .upper_rows
            .iter()
            .copied()
            .chain(self.upper.counts())
            .chain(self.upper.all_slots())
            .chain(self.lower.counts())
            .chain(self.lower.all_slots());
        for word in words {
            out.extend_from_slice(&word.to_le_bytes());
        }
        for word in &self.deleted {
            out.extend_from_slice(&word.to_le_bytes());
        }
        if keeps_norms(self.params) {
            for norm in self.lower.factor_column(1) {
                out.extend_from_slice(&norm.to_le_bytes());
            }
        }
        let checksum = crc32fast::hash(&out);
        out.extend_from_slice(&checksum.to_le_bytes());
        out
    }

    /// Reads a buffer written by `to_bytes`, validating all of it; `vectors` is the block the
    /// index was built from (at least its rows; the index keeps its own copy).
    pub fn from_bytes(bytes: &[u8], vectors: &[f32]) -> Result<Self, HnswError> {
        let corrupt = |message: String| HnswError::Format(message);
        if bytes.len() < HEADER_BYTES + 4 || &bytes[..8] != MAGIC {
            return Err(corrupt(
                "not a Warren vector index (bad magic or too short)".into(),
            ));
        }
        let (body, trailer) = bytes.split_at(bytes.len() - 4);
        let stored = u32::from_le_bytes(trailer.try_into().expect("four bytes"));
        if crc32fast::hash(body) != stored {
            return Err(corrupt("checksum mismatch".into()));
        }
        let mut reader = Reader { bytes: body, at: 8 };
        let version = reader.u32()?;
        if version != FORMAT_VERSION {
            return Err(corrupt(format!(
                "format version {version}; this build reads version {FORMAT_VERSION}"
            )));
        }
        let metric = *METRICS
            .get(reader.u32()? as usize)
            .ok_or_else(|| corrupt("unknown metric code".into()))?;
        let dim = reader.u32()? as usize;
        let (mu, ml, efc) = (
            reader.u32()? as usize,
            reader.u32()? as usize,
            reader.u32()? as usize,
        );
        let pu = f64::from_bits(reader.u64()?);
        let seed = reader.u64()?;
        let params = HnswParams {
            metric,
            mu,
            ml,
            pu,
            efc,
            seed,
        };
        let mut index =
            HnswIndex::empty(dim, params).map_err(|error| corrupt(error.to_string()))?;
        let rows = reader.length(ROWS_MAX)?;
        // Before the blocks are allocated: they will hold a copy of these rows.
        index.check_block(vectors, rows)?;
        let upper_nodes = reader.length(rows)?;
        if (rows == 0) != (upper_nodes == 0) {
            return Err(corrupt("an index with rows needs an entry".into()));
        }
        let upper_rows = reader.u32s(upper_nodes)?;
        let upper = read_layer(&mut reader, Layer::with_codes(mu, dim), upper_nodes)?;
        let lower_layer = Layer::with_codes(ml, dim);
        let lower = read_layer(&mut reader, lower_layer, rows)?;
        let deleted = reader.u64s(rows.div_ceil(64))?;
        let norm_rows = if keeps_norms(params) { rows } else { 0 };
        let inverse_norms: Vec<f32> = reader
            .u32s(norm_rows)?
            .into_iter()
            .map(f32::from_bits)
            .collect();
        if reader.at != body.len() {
            return Err(corrupt(format!(
                "{} trailing bytes",
                body.len() - reader.at
            )));
        }
        index.install(rows, upper_rows, upper, lower, deleted)?;
        index.code_rows(vectors, 0..rows, 1, |row, _| {
            inverse_norms.get(row).copied().unwrap_or(f32::NAN)
        });
        Ok(index)
    }

    /// Puts read parts in place after checking they agree with each other.
    fn install(
        &mut self,
        rows: usize,
        upper_rows: Vec<u32>,
        upper: Layer,
        lower: Layer,
        deleted: Vec<u64>,
    ) -> Result<(), HnswError> {
        // Strictly increasing: in row order, and no row twice.
        if upper_rows.windows(2).any(|pair| pair[0] >= pair[1]) {
            return Err(HnswError::Format("upper rows out of row order".into()));
        }
        let mut upper_node = vec![EMPTY; rows];
        for (node, &row) in upper_rows.iter().enumerate() {
            let slot = upper_node
                .get_mut(row as usize)
                .ok_or_else(|| HnswError::Format(format!("upper row {row} out of range")))?;
            *slot = node as u32;
        }
        let tail_bits = rows % 64;
        if tail_bits != 0 && deleted.last().is_some_and(|&word| word >> tail_bits != 0) {
            return Err(HnswError::Format("tombstones past the last row".into()));
        }
        self.rows = rows;
        self.upper_rows = upper_rows;
        self.upper_node = upper_node;
        self.upper = upper;
        self.lower = lower;
        self.deleted_rows = deleted.iter().map(|word| word.count_ones() as usize).sum();
        self.deleted = deleted;
        Ok(())
    }
}

/// Reads one layer's counts and slots, checking every count and id. The slots go from the
/// buffer straight into the layer's blocks (no intermediate copy: at 1M rows they are 240 MB).
/// `layer` is the new, empty layer to fill (it says the degree and whether it keeps vectors).
fn read_layer(reader: &mut Reader<'_>, layer: Layer, nodes: usize) -> Result<Layer, HnswError> {
    let degree = layer.degree();
    let counts = reader.u32s(nodes)?;
    let slot_bytes = reader.take(
        nodes
            .checked_mul(degree * 4)
            .ok_or_else(|| HnswError::Format("too long".into()))?,
    )?;
    let slot = |index: usize| {
        u32::from_le_bytes(
            slot_bytes[index * 4..index * 4 + 4]
                .try_into()
                .expect("four bytes"),
        )
    };
    for (node, &count) in counts.iter().enumerate() {
        let first = node * degree;
        let count = count as usize;
        let valid = count <= degree
            && (first..first + count)
                .map(slot)
                .all(|id| (id as usize) < nodes && id as usize != node)
            && (first + count..first + degree)
                .map(slot)
                .all(|id| id == EMPTY);
        if !valid {
            return Err(HnswError::Format(format!(
                "bad neighbour list at node {node}"
            )));
        }
    }
    Ok(Layer::from_parts(layer, &counts, slot))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, count: usize) -> Result<&[u8], HnswError> {
        let end = self
            .at
            .checked_add(count)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| HnswError::Format("truncated".into()))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u32(&mut self) -> Result<u32, HnswError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("four bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, HnswError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("eight bytes"),
        ))
    }

    /// A u64 length, at most `max`.
    fn length(&mut self, max: usize) -> Result<usize, HnswError> {
        let value = self.u64()?;
        usize::try_from(value)
            .ok()
            .filter(|&value| value <= max)
            .ok_or_else(|| HnswError::Format(format!("length {value} over {max}")))
    }

    fn u32s(&mut self, count: usize) -> Result<Vec<u32>, HnswError> {
        let bytes = self.take(
            count
                .checked_mul(4)
                .ok_or_else(|| HnswError::Format("too long".into()))?,
        )?;
        Ok(bytes
            .chunks_exact(4)
            .map(|chunk| u32::from_le_bytes(chunk.try_into().expect("four bytes")))
            .collect())
    }

    fn u64s(&mut self, count: usize) -> Result<Vec<u64>, HnswError> {
        let bytes = self.take(
            count
                .checked_mul(8)
                .ok_or_else(|| HnswError::Format("too long".into()))?,
        )?;
        Ok(bytes
            .chunks_exact(8)
            .map(|chunk| u64::from_le_bytes(chunk.try_into().expect("eight bytes")))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::clustered;

    /// The upper layer's nodes are in row order (the copies of their codes are found by row
    /// range): a buffer that lists them out of order, with a valid checksum, is corrupt.
    #[test]
    fn upper_rows_out_of_order_are_corrupt() {
        let dim = 8;
        let (vectors, _) = clustered(2_000, 1, dim, 5);
        let params = HnswParams {
            pu: 0.5,
            ..HnswParams::default()
        };
        let index = HnswIndex::build(&vectors, dim, params, 1).unwrap();
        assert!(index.upper_rows.len() >= 3);
        let mut bytes = index.to_bytes();
        assert!(HnswIndex::from_bytes(&bytes, &vectors).is_ok());
        // Swap the second and third upper rows, then seal the buffer again.
        let second = HEADER_BYTES + 4;
        let (first, rest) = bytes[second..second + 8].split_at_mut(4);
        first.swap_with_slice(rest);
        let body = bytes.len() - 4;
        let checksum = crc32fast::hash(&bytes[..body]);
        bytes[body..].copy_from_slice(&checksum.to_le_bytes());
        assert_eq!(
            HnswIndex::from_bytes(&bytes, &vectors).err(),
            Some(HnswError::Format("upper rows out of row order".into()))
        );
    }
}

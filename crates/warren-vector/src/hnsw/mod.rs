//! The HNSW vector index (Malkov & Yashunin), in Kùzu's two-layer form: a lower layer holding
//! every row with degree `ml`, and an upper layer holding a sample of the rows (probability
//! `pu`) with degree `mu`, entered at a fixed entry row. A search walks the upper layer to a
//! good start and then runs a beam of width `efs` in the lower layer.
//!
//! The caller keeps the rows in a contiguous block (`rows * dim` `f32`s, a `FLOAT[n]` column),
//! passed to every call: rows are appended to it and never change (a changed vector is a new
//! row). The index codes each row as int8 into its lower layer's blocks when the row is added,
//! beside the row's neighbour list, and measures graph distances on the codes (`measure`); a
//! search's final beam is ranked by exact distances from the caller's block, which exact scans
//! also read. See `docs/VECTORS.md`.

mod build;
mod exact;
mod filter;
mod format;
mod index;
mod layer;
mod measure;
mod pages;
mod params;
mod search;
mod select;

pub use exact::{exact_top_k, exact_top_k_parallel};
pub use filter::{scan_is_cheaper, AllRows, FnFilter, RowFilter, RowMask};
pub use index::{HnswIndex, REBUILD_DELETED_FRACTION};
pub use params::{
    validate_beam, HnswError, HnswParams, BEAM_MAX, DEGREE_MAX, DIMENSION_MAX, EFC_DEFAULT,
    EFS_DEFAULT, ML_DEFAULT, MU_DEFAULT, PU_DEFAULT, ROWS_MAX,
};
pub use search::{DistanceCounts, Neighbour, SearchScratch};

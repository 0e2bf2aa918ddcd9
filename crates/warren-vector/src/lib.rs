//! Vector search for Warren: distance kernels over contiguous `f32`/`f64` rows, a bounded
//! top-k selector, and the HNSW index. This crate depends on no engine crate: the engine hands
//! it slices of a fixed-size array column (`FLOAT[n]`/`DOUBLE[n]`, n values per row, no headers).

pub mod distance;
pub mod hnsw;
pub mod prefetch;
pub mod quantized;
pub mod sample;
pub mod topk;

//! Exact top-k cosine over an int8 copy of a `FLOAT[n]` block: the copy filters rows with a
//! proven bound and only the rows that can still beat the k-th best are scored in FLOAT, so
//! the answer is exactly the FLOAT scan's ([`plain_cosine_top_k`]), ties included.
//!
//! The copy ([`Int8Block`]) stores, per row `x`, its residual from the block's mean `μ` as
//! int8 codes `c` with a per-row scale `s` (`r = x - μ ≈ s·c`), so a row costs `n` bytes
//! instead of `4n`. For a query `q` with unit vector `u = q/|q|`:
//!
//! ```text
//! cos(q, x) = u·x / |x| = (u·μ + s·(u·c) + u·e) / |x|,   e = r - s·c,  |u·e| <= |e|
//! ```
//!
//! so `(u·μ + s·(u·c)) / |x|` is within `|e| / |x|` of the true cosine (Cauchy–Schwarz with
//! the row's stored error norm). The scan computes `u·c` in integers ([`int_dot`]): the
//! query's unit vector is itself quantized, `u = t·d + f` with `i16` codes `d`, step `t` and
//! error `f`, so `u·c = t·(d·c) + f·c` where `d·c` is an exact integer and `|f·c| <= |f|·|c|`
//! (each row stores `s·|c|/|x|`, the query brings `|f|`). The roundings of the f32 factors
//! times what they multiply are added to each row's half-width; a slack [`SLACK`] covers the
//! rest of the f32 rounding here and in the FLOAT kernel (whose cosine is within about
//! `(2n+8)ε` of the true one). Each thread keeps the k largest lower bounds; their smallest,
//! `T`, is at most the k-th best FLOAT score, so a row whose upper bound is below `T` cannot
//! be in the answer. Rows the bound cannot describe (a NaN or infinite value, a zero vector, a
//! norm that overflows) are always scored in FLOAT; a query that is zero or not finite is
//! answered by the plain scan.
//!
//! For rows of at least [`NIBBLE_DIM_MIN`] values the filter runs in three stages (shorter
//! rows are bounded from their int8 codes alone). The copy also holds each row as 4-bit codes
//! (`s₄ = max|r|/7`, two codes a byte, in blocks of 16 rows summed in vertical lanes:
//! [`nibble_blocks`]) with the same kind of bound, about 18 times wider; a row whose 4-bit
//! upper bound is below the threshold is skipped after reading about half the bytes, and only
//! the others are bounded again from their int8 codes. On clustered rows the 4-bit stage
//! leaves about the query's cluster (about 1,900 of 1M rows at 1M x 128); on unclustered
//! Gaussian rows about a tenth of the rows, which the int8 stage then reads as well.
//!
//! Before the 4-bit stage, each block of 16 rows is bounded as a whole from 2-bit codes
//! ([`crumb_blocks`]: the odd codes -3..=3 at a step of [`CRUMB_STEP_SHARE`] times the
//! residual's root mean square, four codes a byte) against a byte-coded query, with the
//! extremes of its rows' factors ([`CrumbFactors`]): a block whose every row's bound is below
//! the threshold is skipped after reading a quarter of the int8 bytes. The bound is about 3.4
//! times wider than the 4-bit one, which on clustered rows still leaves about the query's
//! cluster. Where it skips fewer than half the blocks it costs more than it saves, so each
//! thread turns it off (but for a sample of its rows) when a window of rows shows that
//! ([`CrumbSwitch`]).
//!
//! The copy is built from a block and answers for that block only: a caller keeps it with the
//! block's version and rebuilds it when the block changes.

use std::cmp::Ordering;

use crate::distance::cosine_similarity_f32;

mod crumb_blocks;
pub(crate) mod int_dot;
mod nibble_blocks;

/// Defines `fn $name(...)`, which runs `$body` (an `#[inline(always)]` function taking the same
/// arguments) compiled for the first of `$features` the CPU has, or for the baseline: the
/// loops vectorize at that width, and since they make the same operations in the same order
/// at every width, the result does not depend on it.
macro_rules! at_widest_vector_unit {
    (
        $(#[$attribute:meta])*
        fn $name:ident($($argument:ident: $type:ty),* $(,)?) => $body:ident,
        [$($feature:tt),+]
    ) => {
        $(#[$attribute])*
        fn $name($($argument: $type),*) {
            at_widest_vector_unit!(
                @dispatch [$($feature),+] ($($argument: $type),*) ($($argument),*) $body
            )
        }
    };
    (@dispatch [$($feature:tt),+] $parameters:tt $arguments:tt $body:ident) => {{
        #[cfg(target_arch = "x86_64")]
        {
            $(
                if std::arch::is_x86_feature_detected!($feature) {
                    #[target_feature(enable = $feature)]
                    fn widened $parameters {
                        $body $arguments
                    }
                    // SAFETY: the CPU has the feature `widened` is compiled for (checked
                    // above).
                    return unsafe { widened $arguments };
                }
            )+
        }
        $body $arguments
    }};
}

/// Added to every bound besides the rounding terms that grow with `n` ([`slack`]): covers the
/// f32 rounding of the stored factors and of the query's unit vector.
pub const SLACK: f64 = 1e-4;
/// Norms outside `[NORM_MIN, NORM_MAX]` are left to the FLOAT kernel (its f32 sums of
/// squares stay far from overflow and underflow inside).
const NORM_MIN: f64 = 1e-15;
const NORM_MAX: f64 = 1e15;

/// The slack of a bound for `n`-element rows: [`SLACK`] plus twice the FLOAT kernel's cosine
/// rounding (about `(2n+8)ε`, `ε = 2^-24`; see `distance`).
fn slack(n: usize) -> f64 {
    SLACK + 2.0 * (2 * n + 8) as f64 * f64::from(f32::EPSILON)
}
/// The largest int8 code used (symmetric, so that `-c` is a code whenever `c` is).
const CODE_MAX: f32 = 127.0;

/// One scored row: its FLOAT cosine and its row number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scored {
    pub row: u32,
    pub score: f32,
}

/// The answer's order: by score descending in IEEE total order (a positive NaN first, as the
/// engine's `ORDER BY ... DESC`), ties to the smaller row.
fn rank(a: &Scored, b: &Scored) -> Ordering {
    b.score.total_cmp(&a.score).then(a.row.cmp(&b.row))
}

/// What one query read and scored, for the benchmark's bytes-per-query figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanCounts {
    /// Wanted rows bounded by the filter's first stage that reads each row (2-bit or 4-bit
    /// codes, or int8 codes for rows shorter than [`NIBBLE_DIM_MIN`]).
    pub filtered: u64,
    /// Rows whose 2-bit codes were read (whole blocks).
    pub crumb_rows: u64,
    /// Rows whose 4-bit codes were read: those of the blocks the 2-bit stage kept or did not
    /// test (whole blocks, but for the last one).
    pub nibble_rows: u64,
    /// Rows whose own 4-bit factors were read: those of the blocks whose block-wide bound
    /// reached the threshold.
    pub factor_rows: u64,
    /// Rows whose 4-bit bound reached the threshold, bounded again from their int8 codes.
    pub refined: u64,
    /// Rows scored in FLOAT (candidates the bound kept and rows it cannot describe).
    pub rescored: u64,
}

impl ScanCounts {
    fn add(&mut self, other: &ScanCounts) {
        self.filtered += other.filtered;
        self.crumb_rows += other.crumb_rows;
        self.nibble_rows += other.nibble_rows;
        self.factor_rows += other.factor_rows;
        self.refined += other.refined;
        self.rescored += other.rescored;
    }

    /// Bytes read: the 2-bit and 4-bit codes with their blocks' extremes of the rows read
    /// (or, for rows shorter than [`NIBBLE_DIM_MIN`], the int8 codes and factors of every
    /// filtered row), the 4-bit factors of `factor_rows`, the int8 codes and factors of every
    /// refined row, `4n` per rescored row.
    pub fn bytes(&self, dim: usize) -> u64 {
        let int8_row = dim as u64 + ROW_META_BYTES;
        let blocks = |rows: u64, meta: u64| (rows * meta).div_ceil(BLOCK_ROWS as u64);
        let first_stages = match nibble_row_bytes(dim) {
            0 => self.filtered * int8_row,
            bytes => {
                self.crumb_rows * crumb_row_bytes(dim) as u64
                    + blocks(self.crumb_rows, CRUMB_BLOCK_META_BYTES)
                    + self.nibble_rows * bytes as u64
                    + blocks(self.nibble_rows, BLOCK_META_BYTES)
            }
        };
        first_stages
            + self.factor_rows * NIBBLE_META_BYTES
            + self.refined * int8_row
            + self.rescored * 4 * dim as u64
    }
}

/// Per-row data besides the codes: the four bound factors.
const ROW_META_BYTES: u64 = 16;
/// Per-row data besides the 4-bit codes: the three factors of their bound.
const NIBBLE_META_BYTES: u64 = 12;
/// Per block of 16 rows: the extremes of its rows' 4-bit factors.
const BLOCK_META_BYTES: u64 = 20;
/// Per block of 16 rows: the extremes of its rows' 2-bit factors.
const CRUMB_BLOCK_META_BYTES: u64 = 24;
/// Rows per block of the 2-bit and 4-bit codes.
const BLOCK_ROWS: usize = nibble_blocks::BLOCK_ROWS;
const _: () = assert!(crumb_blocks::BLOCK_ROWS == BLOCK_ROWS);
/// The 2-bit codes' step as a share of a row's residual root mean square `|r|/√n`: near the
/// step that minimizes a Gaussian residual's error with four levels, and measured best of
/// 0.45, 0.50 and 0.55 on the bench's clustered rows (`OPTIMIZATION_LOG` 175).
const CRUMB_STEP_SHARE: f64 = 0.45;
/// The largest 4-bit code.
const NIBBLE_CODE_MAX: f32 = nibble_blocks::CODE_MAX as f32;
/// The shortest rows the copy also keeps as 4-bit codes: from here a row's 4-bit codes and
/// factors (20 bytes at 16 values) are at most about two thirds of its int8 ones (32 bytes).
pub const NIBBLE_DIM_MIN: usize = 16;

/// Whether a copy of `dim`-value rows keeps 4-bit and 2-bit codes (rows of
/// [`NIBBLE_DIM_MIN`] to `nibble_blocks::DIM_MAX` values).
fn has_nibbles(dim: usize) -> bool {
    const _: () = assert!(nibble_blocks::DIM_MAX <= crumb_blocks::DIM_MAX);
    (NIBBLE_DIM_MIN..=nibble_blocks::DIM_MAX).contains(&dim)
}

/// Bytes of one row's 2-bit codes in a copy of `dim`-value rows (0 without them).
fn crumb_row_bytes(dim: usize) -> usize {
    if has_nibbles(dim) {
        crumb_blocks::block_bytes(dim) / BLOCK_ROWS
    } else {
        0
    }
}

/// Bytes of one row's 4-bit codes in a copy of `dim`-value rows (0 without them).
fn nibble_row_bytes(dim: usize) -> usize {
    if has_nibbles(dim) {
        nibble_blocks::block_bytes(dim) / nibble_blocks::BLOCK_ROWS
    } else {
        0
    }
}

/// The largest `i16` code of a query for `dim`-value rows: within the int8 kernels' overflow
/// limit and the 4-bit kernels' split.
fn query_code_max(dim: usize) -> Option<i16> {
    int_dot::query_code_max(dim).map(|limit| limit.min(nibble_blocks::QUERY_CODE_LIMIT))
}

/// The int8 copy of a block of `rows x dim` f32 values; see the module's documentation.
#[derive(Clone, Debug)]
pub struct Int8Block {
    dim: usize,
    mean: Vec<f32>,
    codes: Vec<i8>,
    /// Per row `[s/|x|, 1/|x|, the bound's half-width, s·|c|/|x|]`; a row the bound cannot
    /// describe has NaN factors.
    factors: Vec<[f32; 4]>,
    /// The 4-bit codes in blocks of 16 rows ([`nibble_blocks`], the last block padded);
    /// empty (and `nibble_factors` too) for rows shorter than [`NIBBLE_DIM_MIN`].
    nibbles: Vec<u8>,
    /// Per row `[s₄/|x|, 1/|x|, the 4-bit bound's half-width]`, the half-width widened for
    /// the error of any query's `i16` codes ([`nibble_query_error_max`]); NaN where the bound
    /// cannot describe the row.
    nibble_factors: Vec<[f32; 3]>,
    /// Per block of 16 rows the extremes of its rows' 4-bit factors (`BlockFactors`): a
    /// bound for the whole block that needs no per-row factors.
    block_factors: Vec<BlockFactors>,
    /// The 2-bit codes in blocks of 16 rows ([`crumb_blocks`]); empty when `nibbles` is.
    crumbs: Vec<u8>,
    /// Per block of 16 rows the extremes of its rows' 2-bit factors: the 2-bit stage's only
    /// factors.
    crumb_factors: Vec<CrumbFactors>,
}

/// The extremes of a block's 2-bit factors: `[min s₂/|x|, max s₂/|x|, min 1/|x|, max 1/|x|,
/// max half-width, max s₂·|c|/|x|]` (the last widens the bound for the error of the query's
/// byte codes); the half-width infinite when a row of the block has no bound.
type CrumbFactors = [f32; 6];

/// The extremes of `rows`' 2-bit factors (at most a block's worth; each as
/// [`quantize_row`] returns them).
fn crumb_factors(rows: &[[f32; 4]]) -> CrumbFactors {
    let [a_min, a_max, b_min, b_max, half_width] =
        block_factors(rows.iter().map(|&[a, b, half_width, _]| [a, b, half_width]));
    let code_norm = rows.iter().fold(0f32, |largest, row| largest.max(row[3]));
    [a_min, a_max, b_min, b_max, half_width, code_norm]
}

/// The extremes of a block's 4-bit factors: `[min s₄/|x|, max s₄/|x|, min 1/|x|, max 1/|x|,
/// max half-width]`, the last infinite when a row of the block has no bound (NaN factors),
/// so that such a block always takes the per-row bounds.
type BlockFactors = [f32; 5];

/// The extremes of `rows`' factors (at most a block's worth).
fn block_factors(rows: impl IntoIterator<Item = [f32; 3]>) -> BlockFactors {
    let mut extremes = [f32::INFINITY, 0.0, f32::INFINITY, 0.0, 0.0];
    for [scale, inverse_norm, half_width] in rows {
        if scale.is_nan() || inverse_norm.is_nan() || half_width.is_nan() {
            extremes[4] = f32::INFINITY;
            continue;
        }
        extremes[0] = extremes[0].min(scale);
        extremes[1] = extremes[1].max(scale);
        extremes[2] = extremes[2].min(inverse_norm);
        extremes[3] = extremes[3].max(inverse_norm);
        extremes[4] = extremes[4].max(half_width);
    }
    if extremes[0] > extremes[1] {
        // No row with a bound: the infinite half-width decides.
        extremes[0] = 0.0;
        extremes[2] = 0.0;
    }
    extremes
}

/// `values` in chunks of `size`, or endless empty slices when `values` is empty (a copy
/// without 4-bit codes).
fn split_or_empty<T>(values: &mut [T], size: usize) -> impl Iterator<Item = &mut [T]> {
    let empty = values.is_empty();
    let chunks = values.chunks_mut(size.max(1));
    let none = std::iter::repeat_with(|| &mut [][..]).take_while(move |_| empty);
    chunks.chain(none)
}

/// The most `|f|`, the error of a query's `i16` codes, can be for `dim`-element rows: each
/// value is within half a step of its code, and a step is at most `1/Q` (a unit vector's
/// largest value is at most 1) for the largest code `Q`; with a margin for rounding.
fn nibble_query_error_max(dim: usize) -> f64 {
    let code_max = query_code_max(dim).map_or(1.0, f64::from);
    1.01 * (dim as f64).sqrt() / (2.0 * code_max)
}

/// Where the quantization of a range of rows writes.
struct RowsOut<'a> {
    codes: &'a mut [i8],
    factors: &'a mut [[f32; 4]],
    nibbles: &'a mut [u8],
    nibble_factors: &'a mut [[f32; 3]],
    crumbs: &'a mut [u8],
    /// Per block of 16 rows, the extremes of its rows' 2-bit factors.
    crumb_factors: &'a mut [CrumbFactors],
}

impl Int8Block {
    /// The copy of `vectors` (`dim` values per row).
    pub fn build(vectors: &[f32], dim: usize) -> Self {
        Self::build_parallel(vectors, dim, 1)
    }

    /// [`Int8Block::build`] on up to `threads` threads (each pass split into contiguous
    /// ranges of rows; the mean is summed per range and the ranges added in order, so the copy
    /// depends on `threads` only through that rounding, never its answers).
    pub fn build_parallel(vectors: &[f32], dim: usize, threads: usize) -> Self {
        assert!(
            dim > 0 && vectors.len().is_multiple_of(dim),
            "a block of whole rows"
        );
        let rows = vectors.len() / dim;
        // Whole blocks of 4-bit rows per thread.
        let chunk_rows = rows
            .div_ceil(threads.max(1))
            .next_multiple_of(nibble_blocks::BLOCK_ROWS)
            .max(nibble_blocks::BLOCK_ROWS);
        let mean = column_mean(vectors, dim, chunk_rows);
        let chunk_blocks = chunk_rows / BLOCK_ROWS;
        let (mut nibbles, mut crumbs, nibble_rows) = if has_nibbles(dim) {
            let crumbs = crumb_blocks::zeroed(rows, dim);
            (nibble_blocks::zeroed(rows, dim), crumbs, rows)
        } else {
            (Vec::new(), Vec::new(), 0)
        };
        let chunk_nibble_bytes = chunk_blocks * nibble_blocks::block_bytes(dim);
        let chunk_crumb_bytes = chunk_blocks * crumb_blocks::block_bytes(dim);
        let mut codes = vec![0i8; vectors.len()];
        let mut factors = vec![[0f32; 4]; rows];
        let mut nibble_factors = vec![[0f32; 3]; nibble_rows];
        let mut crumb_factors = vec![[0f32; 6]; nibble_rows.div_ceil(BLOCK_ROWS)];
        std::thread::scope(|scope| {
            let parts = vectors
                .chunks(chunk_rows * dim)
                .zip(codes.chunks_mut(chunk_rows * dim))
                .zip(factors.chunks_mut(chunk_rows))
                .zip(split_or_empty(&mut nibbles, chunk_nibble_bytes))
                .zip(split_or_empty(&mut nibble_factors, chunk_rows))
                .zip(split_or_empty(&mut crumbs, chunk_crumb_bytes))
                .zip(split_or_empty(&mut crumb_factors, chunk_blocks));
            for (
                (((((values, codes), factors), nibbles), nibble_factors), crumbs),
                crumb_factors,
            ) in parts
            {
                let mean = &mean;
                let out = RowsOut {
                    codes,
                    factors,
                    nibbles,
                    nibble_factors,
                    crumbs,
                    crumb_factors,
                };
                scope.spawn(move || quantize_rows(values, mean, out));
            }
        });
        let block_factors = nibble_factors
            .chunks(BLOCK_ROWS)
            .map(|rows| block_factors(rows.iter().copied()))
            .collect();
        Int8Block {
            dim,
            mean,
            codes,
            factors,
            nibbles,
            nibble_factors,
            block_factors,
            crumbs,
            crumb_factors,
        }
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn rows(&self) -> usize {
        self.factors.len()
    }

    /// The copy's size in bytes.
    pub fn bytes(&self) -> usize {
        self.codes.len()
            + self.factors.len() * ROW_META_BYTES as usize
            + self.nibbles.len()
            + self.nibble_factors.len() * NIBBLE_META_BYTES as usize
            + self.block_factors.len() * BLOCK_META_BYTES as usize
            + self.crumbs.len()
            + self.crumb_factors.len() * CRUMB_BLOCK_META_BYTES as usize
            + self.mean.len() * 4
    }
}

/// The mean of each column, summed in f64 (ranges of `chunk_rows` rows summed in parallel,
/// then added in order).
fn column_mean(vectors: &[f32], dim: usize, chunk_rows: usize) -> Vec<f32> {
    let rows = vectors.len() / dim;
    let partial = |values: &[f32]| {
        let mut sums = vec![0f64; dim];
        for row in values.chunks_exact(dim) {
            for (sum, &value) in sums.iter_mut().zip(row) {
                if value.is_finite() {
                    *sum += f64::from(value);
                }
            }
        }
        sums
    };
    let parts: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let workers: Vec<_> = vectors
            .chunks(chunk_rows * dim)
            .map(|values| scope.spawn(move || partial(values)))
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("mean thread panicked"))
            .collect()
    });
    let mut sums = vec![0f64; dim];
    for part in parts {
        for (sum, value) in sums.iter_mut().zip(part) {
            *sum += value;
        }
    }
    sums.iter()
        .map(|&sum| (sum / rows.max(1) as f64) as f32)
        .collect()
}

at_widest_vector_unit!(
    /// Quantizes whole rows (`mean.len()` values each) into `out`, compiled for the widest vector
    /// unit the CPU has (the same operations in the same order at every width, so the copy does not
    /// depend on it).
    fn quantize_rows(values: &[f32], mean: &[f32], out: RowsOut<'_>) => quantize_rows_with,
    ["avx512f", "avx2"]
);

#[inline(always)]
fn quantize_rows_with(values: &[f32], mean: &[f32], out: RowsOut<'_>) {
    let dim = mean.len();
    let block_bytes = nibble_blocks::block_bytes(dim);
    let crumb_block_bytes = crumb_blocks::block_bytes(dim);
    let with_nibbles = !out.nibble_factors.is_empty();
    let mean_norm = mean
        .iter()
        .map(|&m| f64::from(m) * f64::from(m))
        .sum::<f64>()
        .sqrt();
    let query_error = nibble_query_error_max(dim);
    let mut small_codes = vec![0i8; dim];
    let rows = values.len() / dim;
    // The 2-bit factors of the current block's rows, for its extremes.
    let mut crumb_rows = [[f32::NAN; 4]; BLOCK_ROWS];
    for (index, (row, codes)) in values
        .chunks_exact(dim)
        .zip(out.codes.chunks_exact_mut(dim))
        .enumerate()
    {
        let shape = RowShape::of(row, mean, codes);
        out.factors[index] = match shape {
            Some(shape) => quantize_row(row, mean, mean_norm, shape, f64::from(CODE_MAX), codes),
            None => {
                codes.fill(0);
                [f32::NAN; 4]
            }
        };
        if !with_nibbles {
            continue;
        }
        let block = index / BLOCK_ROWS;
        let lane = index % BLOCK_ROWS;
        // (A row the bound cannot describe keeps the codes the blocks start with.)
        (out.nibble_factors[index], crumb_rows[lane]) = match shape {
            None => ([f32::NAN; 3], [f32::NAN; 4]),
            Some(shape) => {
                let crumb_factors =
                    quantize_crumb_row(row, mean, mean_norm, shape, &mut small_codes);
                let crumb_range = block * crumb_block_bytes..(block + 1) * crumb_block_bytes;
                crumb_blocks::put_row(&mut out.crumbs[crumb_range], lane, &small_codes);
                let [scale, inverse_norm, half_width, code_norm] = quantize_row(
                    row,
                    mean,
                    mean_norm,
                    shape,
                    f64::from(NIBBLE_CODE_MAX),
                    &mut small_codes,
                );
                let block_bytes_range = block * block_bytes..(block + 1) * block_bytes;
                nibble_blocks::put_row(&mut out.nibbles[block_bytes_range], lane, &small_codes);
                let widened = f64::from(half_width) + f64::from(code_norm) * query_error;
                let nibble_factors = [scale, inverse_norm, f32_at_least(widened)];
                (nibble_factors, crumb_factors)
            }
        };
        if lane == BLOCK_ROWS - 1 || index + 1 == rows {
            out.crumb_factors[block] = crumb_factors(&crumb_rows[..=lane]);
        }
    }
}

/// What both of a row's quantizations need: its norm and its largest residual.
#[derive(Clone, Copy)]
struct RowShape {
    norm: f64,
    largest: f64,
}

impl RowShape {
    /// `None` for a row the bound cannot describe (a value that is not finite, or a norm out
    /// of range). `scratch` is a row's worth of codes, read by the shared fold and ignored.
    #[inline(always)]
    fn of(row: &[f32], mean: &[f32], scratch: &[i8]) -> Option<RowShape> {
        let norm = lane_fold(row, mean, scratch, add, |v, _, _| v * v).sqrt();
        let finite = row.iter().all(|v| v.is_finite());
        if !finite || !(NORM_MIN..=NORM_MAX).contains(&norm) {
            return None;
        }
        let largest = lane_fold(row, mean, scratch, f64::max, |v, m, _| (v - m).abs());
        Some(RowShape { norm, largest })
    }
}

/// Writes `row`'s codes (at most `code_max` in magnitude) into `out` and returns its bound
/// factors. `mean_norm` is `|μ|`.
#[inline(always)]
fn quantize_row(
    row: &[f32],
    mean: &[f32],
    mean_norm: f64,
    RowShape { norm, largest }: RowShape,
    code_max: f64,
    out: &mut [i8],
) -> [f32; 4] {
    let scale = if largest == 0.0 {
        1.0
    } else {
        largest / code_max
    };
    // Any code is sound (the bound uses the error the codes leave); the nearest one keeps the
    // bound tight. Rounded half away from zero by truncation, which vectorizes (`f64::round`
    // is a library call per element).
    let inverse_scale = 1.0 / scale;
    for ((&v, &m), code) in row.iter().zip(mean).zip(out.iter_mut()) {
        let residual = f64::from(v) - f64::from(m);
        let scaled = (residual * inverse_scale).clamp(-code_max, code_max);
        *code = (scaled + 0.5f64.copysign(scaled)) as i32 as i8;
    }
    row_factors(row, mean, mean_norm, norm, scale, out)
}

/// Writes `row`'s odd 2-bit codes (-3, -1, 1, 3 at a step of [`CRUMB_STEP_SHARE`] times its
/// residual's root mean square) into `out` and returns its bound factors, as
/// [`quantize_row`].
#[inline(always)]
fn quantize_crumb_row(
    row: &[f32],
    mean: &[f32],
    mean_norm: f64,
    shape: RowShape,
    out: &mut [i8],
) -> [f32; 4] {
    let residual_norm = lane_fold(row, mean, out, add, |v, m, _| (v - m) * (v - m)).sqrt();
    let scale = CRUMB_STEP_SHARE * residual_norm / (row.len() as f64).sqrt();
    if scale == 0.0 {
        // The row is the mean: a zero step leaves no error whatever the codes.
        out.fill(1);
        return row_factors(row, mean, mean_norm, shape.norm, 0.0, out);
    }
    // The nearest odd code, `2·floor(y/2) + 1`, clamped to -3..=3 (`floor` is one
    // instruction where the CPU has SSE4.1 or wider).
    let half_inverse_scale = 0.5 / scale;
    for ((&v, &m), code) in row.iter().zip(mean).zip(out.iter_mut()) {
        let residual = f64::from(v) - f64::from(m);
        let pair = (residual * half_inverse_scale).floor().clamp(-2.0, 1.0);
        *code = (2.0 * pair + 1.0) as i32 as i8;
    }
    row_factors(row, mean, mean_norm, shape.norm, scale, out)
}

/// The bound factors of a row whose residual `r = x - μ` is approximated by `scale · codes`
/// (any codes: the bound uses the error they leave); `norm` is `|x|`, `mean_norm` `|μ|`.
#[inline(always)]
fn row_factors(
    row: &[f32],
    mean: &[f32],
    mean_norm: f64,
    norm: f64,
    scale: f64,
    out: &[i8],
) -> [f32; 4] {
    let n = row.len();
    let error = lane_fold(row, mean, out, add, |v, m, c| {
        let e = (v - m) - scale * c;
        e * e
    });
    let codes_squared = lane_fold(row, mean, out, add, |_, _, c| c * c);
    let code_norm = scale * codes_squared.sqrt() / norm;
    // The scan multiplies f32 roundings of `s/|x|` and `1/|x|` (each within 2^-24 of its
    // value, relatively) by `u·c` (at most `|c|`) and `u·μ` (at most `|μ|`): twice that error,
    // which matters when the row is small beside its residual or the mean.
    let factor_rounding = 2.0 * f64::from(f32::EPSILON) * (code_norm + mean_norm / norm);
    let half_width = error.sqrt() / norm + factor_rounding + slack(n);
    [
        (scale / norm) as f32,
        (1.0 / norm) as f32,
        f32_at_least(half_width),
        f32_at_least(code_norm),
    ]
}

/// The nearest `f32` at or above `value` (a bound's width must not shrink in the rounding).
fn f32_at_least(value: f64) -> f32 {
    let rounded = value as f32;
    if f64::from(rounded) < value {
        rounded.next_up()
    } else {
        rounded
    }
}

/// Independent partial results of the build's per-row sums and maxima, so that their
/// operations pipeline (and vectorize) instead of waiting on one another.
const BUILD_LANES: usize = 8;

/// `combine` over `term(value, mean, code)` (as f64) of every element of a row, its mean and
/// its codes, in [`BUILD_LANES`] partial results started at `identity` (0 for a sum and for a
/// maximum of non-negative terms), then combined in lane order.
#[inline(always)]
fn lane_fold(
    row: &[f32],
    mean: &[f32],
    codes: &[i8],
    combine: impl Fn(f64, f64) -> f64,
    term: impl Fn(f64, f64, f64) -> f64,
) -> f64 {
    let mut lanes = [0f64; BUILD_LANES];
    let (rows, means, codes_body) = (
        row.chunks_exact(BUILD_LANES),
        mean.chunks_exact(BUILD_LANES),
        codes.chunks_exact(BUILD_LANES),
    );
    let tail = rows
        .remainder()
        .iter()
        .zip(means.remainder())
        .zip(codes_body.remainder());
    for ((v, m), c) in rows.zip(means).zip(codes_body) {
        for (lane, acc) in lanes.iter_mut().enumerate() {
            let t = term(f64::from(v[lane]), f64::from(m[lane]), f64::from(c[lane]));
            *acc = combine(*acc, t);
        }
    }
    for ((&v, &m), &c) in tail {
        lanes[0] = combine(lanes[0], term(f64::from(v), f64::from(m), f64::from(c)));
    }
    lanes.iter().copied().fold(0.0, combine)
}

fn add(a: f64, b: f64) -> f64 {
    a + b
}

/// The exact top-`k` rows by cosine with `query`, best first ([`rank`]'s order), using the
/// int8 copy to skip rows; `vectors` must be the block `block` was built from. Splits the rows
/// across `threads` threads.
pub fn cosine_top_k(
    block: &Int8Block,
    vectors: &[f32],
    query: &[f32],
    k: usize,
    threads: usize,
) -> (Vec<Scored>, ScanCounts) {
    cosine_top_k_where(block, vectors, query, k, threads, |_| true, || false)
        .expect("a scan that is never stopped finishes")
}

/// Rows polled between two calls of a scan's `stop`.
const STOP_POLL_ROWS: usize = 16_384;

/// Whether the bound describes `query` (finite, with a norm in range): for any other query the
/// filtered scan is the plain scan.
pub fn describes_query(query: &[f32]) -> bool {
    let norm = query_norm(query);
    (NORM_MIN..=NORM_MAX).contains(&norm)
}

fn query_norm(query: &[f32]) -> f64 {
    query
        .iter()
        .map(|&v| f64::from(v) * f64::from(v))
        .sum::<f64>()
        .sqrt()
}

/// [`cosine_top_k`] over the rows `wanted` accepts (the others are neither scored nor
/// returned). `stop` is polled every few thousand rows on each thread; when it returns true
/// the scan ends early and the result is `None`.
pub fn cosine_top_k_where<W, S>(
    block: &Int8Block,
    vectors: &[f32],
    query: &[f32],
    k: usize,
    threads: usize,
    wanted: W,
    stop: S,
) -> Option<(Vec<Scored>, ScanCounts)>
where
    W: Fn(usize) -> bool + Sync,
    S: Fn() -> bool + Sync,
{
    let dim = block.dim;
    assert_eq!(query.len(), dim, "query of the wrong length");
    assert_eq!(
        vectors.len(),
        block.rows() * dim,
        "the block the copy was built from"
    );
    assert!(threads > 0);
    assert!(
        block.rows() <= u32::MAX as usize,
        "rows are numbered in u32"
    );
    let code_max = query_code_max(dim);
    if k == 0 || !describes_query(query) || code_max.is_none() {
        let top = plain_cosine_top_k_where(vectors, dim, query, k, &wanted);
        let rows = (0..block.rows()).filter(|&row| wanted(row)).count() as u64;
        let counts = ScanCounts {
            rescored: if k == 0 { 0 } else { rows },
            ..ScanCounts::default()
        };
        return Some((top, counts));
    }
    let norm = query_norm(query);
    let unit: Vec<f32> = query
        .iter()
        .map(|&v| (f64::from(v) / norm) as f32)
        .collect();
    let offset = block
        .mean
        .iter()
        .zip(&unit)
        .map(|(&m, &u)| f64::from(m) * f64::from(u))
        .sum::<f64>();
    let unit_codes = QueryCodes::of(&unit, code_max.expect("checked above"));
    assert!(
        unit_codes.error <= nibble_query_error_max(dim),
        "the 4-bit factors were widened for this query's error"
    );
    let rows = block.rows();
    // Whole blocks of 4-bit rows per thread.
    let chunk = rows
        .div_ceil(threads)
        .next_multiple_of(nibble_blocks::BLOCK_ROWS)
        .max(nibble_blocks::BLOCK_ROWS);
    let pass = FilterPass {
        block,
        unit: &unit_codes,
        offset,
        k,
        wanted: &wanted,
        stop: &stop,
    };
    let parts: Vec<Option<Filtered>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..rows)
            .step_by(chunk)
            .map(|start| {
                let end = (start + chunk).min(rows);
                let pass = &pass;
                scope.spawn(move || pass.run(start..end))
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("scan thread panicked"))
            .collect()
    });
    let parts: Vec<Filtered> = parts.into_iter().collect::<Option<_>>()?;
    // Every thread's threshold is at most the k-th best score of all wanted rows.
    let threshold = parts
        .iter()
        .map(|part| part.threshold)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut counts = ScanCounts::default();
    for part in &parts {
        counts.add(&part.counts);
    }
    let mut top: Vec<Scored> = Vec::new();
    for (row, upper) in parts.into_iter().flat_map(|part| part.kept) {
        if upper < threshold {
            continue;
        }
        counts.rescored += 1;
        let at = row as usize * dim;
        top.push(Scored {
            row,
            score: cosine_similarity_f32(query, &vectors[at..at + dim]),
        });
    }
    top.sort_unstable_by(rank);
    top.truncate(k);
    Some((top, counts))
}

/// One thread's result: the candidates (row, upper bound; `+inf` for rows the bound cannot
/// describe) whose bound reached the running threshold, the final threshold (the k-th largest
/// lower bound, `-inf` while fewer than `k` rows have one), and the rows bounded.
struct Filtered {
    threshold: f64,
    kept: Vec<(u32, f64)>,
    /// All but `rescored`.
    counts: ScanCounts,
}

/// The query's unit vector `u` as `i16` codes: `u = step·codes + f` with `|f| <= error`,
/// and again as byte codes for the 2-bit stage.
struct QueryCodes {
    codes: Vec<i16>,
    /// `codes` split for the 4-bit kernels.
    split: nibble_blocks::SplitQuery,
    step: f64,
    error: f64,
    /// The byte codes laid out for the 2-bit kernels.
    crumb: crumb_blocks::CrumbQuery,
    crumb_step: f64,
    crumb_error: f64,
}

impl QueryCodes {
    /// The nearest codes of `unit` (a unit vector, so some value is non-zero) with the largest
    /// magnitude mapped to `code_max`, and to [`crumb_blocks::QUERY_CODE_MAX`].
    fn of(unit: &[f32], code_max: i16) -> Self {
        let (codes, step, error) = unit_codes(unit, code_max);
        let (crumb_codes, crumb_step, crumb_error) =
            unit_codes(unit, i16::from(crumb_blocks::QUERY_CODE_MAX));
        let crumb_codes: Vec<i8> = crumb_codes.iter().map(|&d| d as i8).collect();
        QueryCodes {
            split: nibble_blocks::SplitQuery::of(&codes),
            codes,
            step,
            error,
            crumb: crumb_blocks::CrumbQuery::of(&crumb_codes),
            crumb_step,
            crumb_error,
        }
    }
}

/// The nearest codes of `unit` with the largest magnitude mapped to `code_max`, their step and
/// the norm of the error they leave.
fn unit_codes(unit: &[f32], code_max: i16) -> (Vec<i16>, f64, f64) {
    let largest = unit.iter().fold(0f64, |m, &u| m.max(f64::from(u).abs()));
    assert!(largest > 0.0, "a unit vector");
    let step = largest / f64::from(code_max);
    let limit = f64::from(code_max);
    let codes: Vec<i16> = unit
        .iter()
        .map(|&u| (f64::from(u) / step).round().clamp(-limit, limit) as i16)
        .collect();
    let error = unit
        .iter()
        .zip(&codes)
        .map(|(&u, &d)| {
            let e = f64::from(u) - step * f64::from(d);
            e * e
        })
        .sum::<f64>()
        .sqrt();
    (codes, step, error)
}

/// Rows whose integer dot products one kernel call computes.
const BATCH_ROWS: usize = 64;
/// Rows whose 2-bit sums one kernel call computes.
const CRUMB_BATCH_ROWS: usize = 256;
const _: () = assert!(STOP_POLL_ROWS.is_multiple_of(CRUMB_BATCH_ROWS));
const _: () = assert!(STOP_POLL_ROWS.is_multiple_of(BATCH_ROWS));

/// What the filtering threads share.
struct FilterPass<'a, W, S> {
    block: &'a Int8Block,
    unit: &'a QueryCodes,
    /// `u·μ`.
    offset: f64,
    k: usize,
    wanted: &'a W,
    stop: &'a S,
}

impl<W: Fn(usize) -> bool, S: Fn() -> bool> FilterPass<'_, W, S> {
    /// The pass over `rows`, `None` when `stop` asked to end: per batch of rows, the 2-bit
    /// block bounds, then the 4-bit dot products of the blocks kept, each wanted row's 4-bit
    /// bound against the running threshold, and for a row that reaches it, its int8 bound.
    fn run(&self, rows: std::ops::Range<usize>) -> Option<Filtered> {
        let mut stage = Stages {
            pass: self,
            dot_rows: int_dot::dot_rows_kernel(),
            lowers: LowerBounds::new(self.k),
            kept: Vec::new(),
            counts: ScanCounts::default(),
        };
        if self.block.nibbles.is_empty() {
            self.run_int8(rows, &mut stage)?;
        } else {
            self.run_blocks(rows, &mut stage)?;
        }
        Some(Filtered {
            threshold: stage.lowers.threshold(),
            kept: stage.kept,
            counts: stage.counts,
        })
    }

    /// The int8 stage alone, a batch of rows' dot products at a time.
    fn run_int8(
        &self,
        rows: std::ops::Range<usize>,
        stage: &mut Stages<'_, '_, W, S>,
    ) -> Option<()> {
        let dim = self.block.dim;
        let mut dots = [0i32; BATCH_ROWS];
        let mut start = rows.start;
        while start < rows.end {
            let end = (start + BATCH_ROWS).min(rows.end);
            if (start - rows.start).is_multiple_of(STOP_POLL_ROWS) && (self.stop)() {
                return None;
            }
            let dots = &mut dots[..end - start];
            (stage.dot_rows)(
                &self.block.codes[start * dim..end * dim],
                &self.unit.codes,
                dots,
            );
            for (row, &dot) in (start..end).zip(dots.iter()) {
                if (self.wanted)(row) {
                    stage.counts.filtered += 1;
                    stage.bound(row, dot);
                }
            }
            start = end;
        }
        Some(())
    }

    /// The 2-bit stage (while [`CrumbSwitch`] has it on), then the 4-bit stage for each run
    /// of blocks it keeps, a batch of rows at a time.
    fn run_blocks(
        &self,
        rows: std::ops::Range<usize>,
        stage: &mut Stages<'_, '_, W, S>,
    ) -> Option<()> {
        assert!(
            rows.start.is_multiple_of(BLOCK_ROWS),
            "ranges of whole blocks"
        );
        let block = self.block;
        let crumb_block_bytes = crumb_blocks::block_bytes(block.dim);
        let dot_crumbs = crumb_blocks::dot_blocks_kernel();
        let terms = [
            self.unit.crumb_step,
            self.unit.crumb.offset_share as f64,
            self.offset,
            self.unit.crumb_error,
        ];
        let mut nibbles = NibbleStage::new(self);
        let mut switch = CrumbSwitch::new();
        let mut sums = [0i32; CRUMB_BATCH_ROWS];
        let mut largest_sums = [0i32; CRUMB_BATCH_ROWS / BLOCK_ROWS];
        let mut uppers = [0f64; CRUMB_BATCH_ROWS / BLOCK_ROWS];
        let mut start = rows.start;
        while start < rows.end {
            let end = (start + CRUMB_BATCH_ROWS).min(rows.end);
            if (start - rows.start).is_multiple_of(STOP_POLL_ROWS) {
                if (self.stop)() {
                    return None;
                }
                switch.next_window();
            }
            // The blocks that hold rows `start..end` (the last one may run past `end`).
            let (first, count) = (start / BLOCK_ROWS, (end - start).div_ceil(BLOCK_ROWS));
            let batch = end - start;
            let mut kept = [true; CRUMB_BATCH_ROWS / BLOCK_ROWS];
            if switch.runs_next_batch() {
                let bytes =
                    &block.crumbs[first * crumb_block_bytes..(first + count) * crumb_block_bytes];
                let sums = &mut sums[..count * BLOCK_ROWS];
                let largest_sums = &mut largest_sums[..count];
                dot_crumbs(bytes, &self.unit.crumb, sums, largest_sums);
                if !batch.is_multiple_of(BLOCK_ROWS) {
                    // The kernel's largest sum of a last block counts its padding rows.
                    let lanes = (count - 1) * BLOCK_ROWS..batch;
                    largest_sums[count - 1] = sums[lanes].iter().fold(i32::MIN, |m, &s| m.max(s));
                }
                let uppers = &mut uppers[..count];
                let factors = &block.crumb_factors[first..first + count];
                crumb_upper_bounds(largest_sums, factors, terms, uppers);
                let threshold = stage.lowers.threshold();
                for (b, (kept, &upper)) in kept[..count].iter_mut().zip(uppers.iter()).enumerate() {
                    let lanes = b * BLOCK_ROWS..((b + 1) * BLOCK_ROWS).min(batch);
                    // (A block with a row the bound cannot describe has an infinite bound.)
                    *kept = upper.is_nan() || upper >= threshold;
                    if !*kept {
                        let rows = start + lanes.start..start + lanes.end;
                        stage.counts.filtered +=
                            rows.filter(|&row| (self.wanted)(row)).count() as u64;
                    }
                }
                stage.counts.crumb_rows += batch as u64;
                switch.tested(count, kept[..count].iter().filter(|&&k| k).count());
            }
            // Each run of kept blocks through the 4-bit stage.
            let mut b = 0;
            while b < count {
                if !kept[b] {
                    b += 1;
                    continue;
                }
                let run = kept[b..count]
                    .iter()
                    .take_while(|&&k| k)
                    .count()
                    .min(BATCH_ROWS / BLOCK_ROWS);
                let run_rows = start + b * BLOCK_ROWS..(start + (b + run) * BLOCK_ROWS).min(end);
                nibbles.run(run_rows, stage);
                b += run;
            }
            start = end;
        }
        Some(())
    }
}

/// Whether a thread runs the 2-bit stage on a batch of rows: on, or off after a window of
/// [`STOP_POLL_ROWS`] rows in which it kept more than half the blocks it tested (reading the
/// 2-bit codes then costs more than the 4-bit codes it spares). While off it still tests one
/// batch in [`CrumbSwitch::SAMPLE_EVERY`], so that each window decides the next from what
/// the stage would do now: rows where it does not pay cost little more than without it, and
/// a bad window (at the start, before the threshold rises) costs at most one window.
struct CrumbSwitch {
    on: bool,
    batches: usize,
    tested: usize,
    kept: usize,
}

impl CrumbSwitch {
    const SAMPLE_EVERY: usize = 8;

    fn new() -> Self {
        CrumbSwitch {
            on: true,
            batches: 0,
            tested: 0,
            kept: 0,
        }
    }

    /// Whether the next batch runs the stage.
    fn runs_next_batch(&mut self) -> bool {
        self.batches += 1;
        self.on || self.batches.is_multiple_of(Self::SAMPLE_EVERY)
    }

    fn tested(&mut self, blocks: usize, kept: usize) {
        self.tested += blocks;
        self.kept += kept;
    }

    /// At the start of each window: decides from the one that ended.
    fn next_window(&mut self) {
        if self.tested > 0 {
            self.on = 2 * self.kept <= self.tested;
        }
        self.tested = 0;
        self.kept = 0;
    }
}

/// A thread's 4-bit stage: per block of 16 rows, a bound from the block's factor extremes;
/// the rows of a block it cannot skip are bounded with their own factors, and those that
/// reach the threshold from their int8 codes.
struct NibbleStage {
    dot_blocks: nibble_blocks::DotBlocks,
    terms: [f64; 3],
    hi: [i32; BATCH_ROWS],
    lo: [i32; BATCH_ROWS],
    block_uppers: [f64; BATCH_ROWS],
    uppers: [f64; BATCH_ROWS],
}

impl NibbleStage {
    fn new<W, S>(pass: &FilterPass<'_, W, S>) -> Self {
        NibbleStage {
            dot_blocks: nibble_blocks::dot_blocks_kernel(),
            terms: [
                pass.unit.step,
                pass.unit.split.zero_share as f64,
                pass.offset,
            ],
            hi: [0; BATCH_ROWS],
            lo: [0; BATCH_ROWS],
            block_uppers: [0.0; BATCH_ROWS],
            uppers: [0.0; BATCH_ROWS],
        }
    }

    /// The stage over `rows` (at most a batch, from a block's first row).
    fn run<W: Fn(usize) -> bool, S>(
        &mut self,
        rows: std::ops::Range<usize>,
        stage: &mut Stages<'_, '_, W, S>,
    ) {
        let block = stage.pass.block;
        let wanted = stage.pass.wanted;
        let block_bytes = nibble_blocks::block_bytes(block.dim);
        let (start, end) = (rows.start, rows.end);
        assert!(start.is_multiple_of(BLOCK_ROWS) && end - start <= BATCH_ROWS);
        let (first, count) = (start / BLOCK_ROWS, (end - start).div_ceil(BLOCK_ROWS));
        let blocks = &block.nibbles[first * block_bytes..(first + count) * block_bytes];
        let lanes = count * BLOCK_ROWS;
        (self.dot_blocks)(
            blocks,
            &stage.pass.unit.split,
            &mut self.hi[..lanes],
            &mut self.lo[..lanes],
        );
        let batch = end - start;
        stage.counts.nibble_rows += batch as u64;
        block_upper_bounds(
            [&self.hi[..batch], &self.lo[..batch]],
            &block.block_factors[first..first + count],
            self.terms,
            &mut self.block_uppers[..batch],
        );
        for block_start in (start..end).step_by(BLOCK_ROWS) {
            let block_end = (block_start + BLOCK_ROWS).min(end);
            let lanes = block_start - start..block_end - start;
            let threshold = stage.lowers.threshold();
            if self.block_uppers[lanes.clone()]
                .iter()
                .all(|&u| u < threshold)
            {
                let wanted = (block_start..block_end).filter(|&row| wanted(row));
                stage.counts.filtered += wanted.count() as u64;
                continue;
            }
            stage.counts.factor_rows += (block_end - block_start) as u64;
            nibble_upper_bounds(
                [&self.hi[lanes.clone()], &self.lo[lanes.clone()]],
                &block.nibble_factors[block_start..block_end],
                self.terms,
                &mut self.uppers[lanes.clone()],
            );
            for (row, &upper) in (block_start..block_end).zip(&self.uppers[lanes]) {
                if !wanted(row) {
                    continue;
                }
                stage.counts.filtered += 1;
                // A row the bound cannot describe has NaN factors: the comparison fails
                // and the int8 stage keeps it.
                if upper < stage.lowers.threshold() {
                    continue;
                }
                stage.refine(row);
            }
        }
    }
}

at_widest_vector_unit!(
    /// The 2-bit bound of each block of a batch from its largest kernel sum (`Σ m·d`,
    /// [`crumb_blocks`]): `max(s₂/|x|)·x` (the smallest factor for a negative `x`, `x = step ·
    /// dot`) plus `offset` times the larger or smaller `1/|x|` as its sign asks, plus the largest
    /// half-width and the largest `s₂·|c|/|x|` times the query's error (`[step, offset_share,
    /// offset, query error]`): each term at least a row's own, so the bound holds for every row of
    /// the block with that sum. It grows with the sum (and its f64 rounding is monotone), so the
    /// bound at the block's largest sum holds for the whole block. Compiled for AVX-512F when the
    /// CPU has it (a loop without branches, so that it vectorizes).
    fn crumb_upper_bounds(
        largest: &[i32],
        blocks: &[CrumbFactors],
        terms: [f64; 4],
        out: &mut [f64],
    ) => crumb_upper_bounds_with,
    ["avx512f"]
);

#[inline(always)]
fn crumb_upper_bounds_with(
    largest: &[i32],
    blocks: &[CrumbFactors],
    [step, offset_share, offset, query_error]: [f64; 4],
    out: &mut [f64],
) {
    assert!(largest.len() == out.len() && blocks.len() == out.len());
    for ((upper, &sum), factors) in out.iter_mut().zip(largest).zip(blocks) {
        let [scale_min, scale_max, inverse_min, inverse_max, half_width, code_norm] =
            factors.map(f64::from);
        let inverse = if offset >= 0.0 {
            inverse_max
        } else {
            inverse_min
        };
        let x = step * (2.0 * f64::from(sum) - offset_share);
        let scale = if x >= 0.0 { scale_max } else { scale_min };
        *upper = (scale * x + offset * inverse) + (half_width + code_norm * query_error);
    }
}

at_widest_vector_unit!(
    /// The 4-bit upper bounds of a batch of rows, `centre + half-width` with `centre = (s₄/|x|) ·
    /// step · (dot - zero_share) + offset · (1/|x|)` (`[step, zero_share, offset]`), in f64 as the
    /// int8 stage's; compiled for the widest vector unit the CPU has (a loop without branches, so
    /// that it vectorizes; the same operations in the same order at every width).
    fn nibble_upper_bounds(
        sums: [&[i32]; 2],
        factors: &[[f32; 3]],
        terms: [f64; 3],
        out: &mut [f64],
    ) => nibble_upper_bounds_with,
    ["avx512f", "avx2"]
);

/// `sums` are the kernel's `[Σ n·hi, Σ n·lo]` per row (`nibble_blocks`): the codes' dot
/// product is `256·hi + lo - zero_share`, exact in f64.
#[inline(always)]
fn nibble_upper_bounds_with(
    [hi, lo]: [&[i32]; 2],
    factors: &[[f32; 3]],
    [step, zero_share, offset]: [f64; 3],
    out: &mut [f64],
) {
    assert!(hi.len() == out.len() && lo.len() == out.len() && factors.len() == out.len());
    let rows = out.iter_mut().zip(hi.iter().zip(lo)).zip(factors);
    for ((upper, (&hi, &lo)), &[scale, inverse_norm, half_width]) in rows {
        let dot = nibble_blocks::codes_dot(hi, lo, zero_share);
        let centre = f64::from(scale) * (step * dot) + offset * f64::from(inverse_norm);
        *upper = centre + f64::from(half_width);
    }
}

at_widest_vector_unit!(
    /// The block-wide 4-bit upper bounds of a batch of rows (whole blocks from the batch's first):
    /// each row's dot product with its block's factor extremes (`BlockFactors`), the larger or
    /// smaller factor as the term's sign asks, in the same order of operations as
    /// [`nibble_upper_bounds`], so that (rounding being monotone) a row's block-wide bound is never
    /// below its own.
    fn block_upper_bounds(
        sums: [&[i32]; 2],
        blocks: &[BlockFactors],
        terms: [f64; 3],
        out: &mut [f64],
    ) => block_upper_bounds_with,
    ["avx512f"]
);

#[inline(always)]
fn block_upper_bounds_with(
    [hi, lo]: [&[i32]; 2],
    blocks: &[BlockFactors],
    [step, zero_share, offset]: [f64; 3],
    out: &mut [f64],
) {
    const BLOCK_ROWS: usize = nibble_blocks::BLOCK_ROWS;
    assert!(hi.len() == out.len() && lo.len() == out.len());
    assert!(out.len() <= blocks.len() * BLOCK_ROWS);
    for (lanes, factors) in out
        .chunks_mut(BLOCK_ROWS)
        .zip(hi.chunks(BLOCK_ROWS).zip(lo.chunks(BLOCK_ROWS)))
        .zip(blocks)
    {
        let (out, (hi, lo)) = lanes;
        let [scale_min, scale_max, inverse_min, inverse_max, half_width] = factors.map(f64::from);
        let inverse = if offset >= 0.0 {
            inverse_max
        } else {
            inverse_min
        };
        let base = offset * inverse;
        for ((upper, &hi), &lo) in out.iter_mut().zip(hi).zip(lo) {
            let x = step * nibble_blocks::codes_dot(hi, lo, zero_share);
            let scale = if x >= 0.0 { scale_max } else { scale_min };
            *upper = (scale * x + base) + half_width;
        }
    }
}

/// One thread's int8 stage: the running threshold and the rows kept.
struct Stages<'p, 'a, W, S> {
    pass: &'p FilterPass<'a, W, S>,
    dot_rows: int_dot::DotRows,
    lowers: LowerBounds,
    kept: Vec<(u32, f64)>,
    counts: ScanCounts,
}

impl<W, S> Stages<'_, '_, W, S> {
    /// Bounds `row` from its int8 codes after the 4-bit stage kept it.
    fn refine(&mut self, row: usize) {
        let dim = self.pass.block.dim;
        self.counts.refined += 1;
        let mut dot = [0i32; 1];
        let codes = &self.pass.block.codes[row * dim..(row + 1) * dim];
        (self.dot_rows)(codes, &self.pass.unit.codes, &mut dot);
        self.bound(row, dot[0]);
    }

    /// Bounds `row` from the dot product `dot` of its int8 codes; keeps it when its upper
    /// bound reaches the threshold (and always when the bound cannot describe it).
    fn bound(&mut self, row: usize, dot: i32) {
        let [scale, inverse_norm, half_width, code_norm] = self.pass.block.factors[row];
        if scale.is_nan() {
            self.kept.push((row as u32, f64::INFINITY));
            return;
        }
        let centre = f64::from(scale) * (self.pass.unit.step * f64::from(dot))
            + self.pass.offset * f64::from(inverse_norm);
        let width = f64::from(half_width) + f64::from(code_norm) * self.pass.unit.error;
        let upper = centre + width;
        if upper < self.lowers.threshold() {
            return;
        }
        self.lowers.offer(centre - width);
        self.kept.push((row as u32, upper));
    }
}

/// The `k` largest lower bounds seen, smallest on top, and that smallest (`-inf` while
/// fewer than `k` were offered) kept beside the heap for the scan's per-row test.
struct LowerBounds {
    k: usize,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<OrdF64>>,
    threshold: f64,
}

impl LowerBounds {
    fn new(k: usize) -> Self {
        LowerBounds {
            k,
            heap: std::collections::BinaryHeap::with_capacity(k + 1),
            threshold: f64::NEG_INFINITY,
        }
    }

    #[inline]
    fn threshold(&self) -> f64 {
        self.threshold
    }

    fn offer(&mut self, lower: f64) {
        if self.heap.len() < self.k {
            self.heap.push(std::cmp::Reverse(OrdF64(lower)));
        } else if lower > self.threshold {
            self.heap.pop();
            self.heap.push(std::cmp::Reverse(OrdF64(lower)));
        } else {
            return;
        }
        if self.heap.len() == self.k {
            self.threshold = self.heap.peek().map_or(f64::NEG_INFINITY, |low| low.0 .0);
        }
    }
}

/// An f64 ordered by IEEE total order (bounds here are finite).
#[derive(Clone, Copy, PartialEq)]
struct OrdF64(f64);

impl Eq for OrdF64 {}

impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrdF64 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The reference: every row scored in FLOAT, the top `k` in [`rank`]'s order.
pub fn plain_cosine_top_k(vectors: &[f32], dim: usize, query: &[f32], k: usize) -> Vec<Scored> {
    plain_cosine_top_k_where(vectors, dim, query, k, |_| true)
}

/// [`plain_cosine_top_k`] over the rows `wanted` accepts.
pub fn plain_cosine_top_k_where(
    vectors: &[f32],
    dim: usize,
    query: &[f32],
    k: usize,
    wanted: impl Fn(usize) -> bool,
) -> Vec<Scored> {
    if k == 0 {
        return Vec::new();
    }
    let mut all: Vec<Scored> = vectors
        .chunks_exact(dim)
        .enumerate()
        .filter(|&(row, _)| wanted(row))
        .map(|(row, values)| Scored {
            row: row as u32,
            score: cosine_similarity_f32(query, values),
        })
        .collect();
    all.sort_unstable_by(rank);
    all.truncate(k);
    all
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A value from a few regimes: ordinary, large, tiny, zero, and (rarely) NaN or infinite.
    fn value() -> impl Strategy<Value = f32> {
        prop_oneof![
            20 => -2.0f32..2.0,
            2 => -1e6f32..1e6,
            2 => -1e-6f32..1e-6,
            3 => Just(0.0f32),
            1 => Just(f32::NAN),
            1 => Just(f32::INFINITY),
        ]
    }

    /// Short rows (the int8 stage alone) and rows long enough for the 4-bit stage.
    fn block_and_query() -> impl Strategy<Value = (usize, Vec<f32>, Vec<f32>)> {
        let shape = prop_oneof![(1usize..40, 1usize..120), (60usize..140, 1usize..60)];
        shape.prop_flat_map(|(dim, rows)| {
            (
                Just(dim),
                proptest::collection::vec(value(), dim * rows),
                proptest::collection::vec(value(), dim),
            )
        })
    }

    fn same(found: &[Scored], expected: &[Scored]) -> bool {
        found.len() == expected.len()
            && found
                .iter()
                .zip(expected)
                .all(|(a, b)| a.row == b.row && a.score.to_bits() == b.score.to_bits())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// The filtered scan returns exactly the plain FLOAT scan's rows and scores.
        #[test]
        fn equals_the_plain_scan((dim, vectors, query) in block_and_query(), k in 0usize..15,
                                 threads in 1usize..4, zero_rows in 0usize..3) {
            let mut vectors = vectors;
            for row in 0..zero_rows.min(vectors.len() / dim) {
                vectors[row * dim..(row + 1) * dim].fill(0.0);
            }
            let block = Int8Block::build(&vectors, dim);
            let (found, counts) = cosine_top_k(&block, &vectors, &query, k, threads);
            let expected = plain_cosine_top_k(&vectors, dim, &query, k);
            prop_assert!(same(&found, &expected), "{found:?} != {expected:?}");
            prop_assert!(counts.rescored <= (vectors.len() / dim) as u64);
        }

        /// Over the rows a mask accepts, with a copy built on several threads, the filtered
        /// scan still returns exactly the plain scan's rows and scores.
        #[test]
        fn a_masked_scan_equals_the_plain_masked_scan(
            (dim, vectors, query) in block_and_query(), k in 0usize..15, threads in 1usize..4,
            build_threads in 1usize..5, mask in proptest::collection::vec(any::<bool>(), 120)) {
            let block = Int8Block::build_parallel(&vectors, dim, build_threads);
            let wanted = |row: usize| mask[row];
            let (found, counts) =
                cosine_top_k_where(&block, &vectors, &query, k, threads, wanted, || false)
                    .expect("not stopped");
            let expected = plain_cosine_top_k_where(&vectors, dim, &query, k, wanted);
            prop_assert!(same(&found, &expected), "{found:?} != {expected:?}");
            prop_assert!(found.iter().all(|hit| mask[hit.row as usize]));
            let rows = vectors.len() / dim;
            prop_assert!(counts.filtered <= mask[..rows].iter().filter(|&&m| m).count() as u64);
        }

        /// Near-duplicate rows (scores within the quantization error) still come back exactly.
        #[test]
        fn near_ties_come_back_exactly(base in proptest::collection::vec(-1.0f32..1.0, 17),
                                       noise in proptest::collection::vec(-1e-4f32..1e-4, 17 * 60),
                                       k in 1usize..12) {
            let vectors: Vec<f32> = noise
                .chunks_exact(17)
                .flat_map(|delta| base.iter().zip(delta).map(|(b, d)| b + d))
                .collect();
            let block = Int8Block::build(&vectors, 17);
            let (found, _) = cosine_top_k(&block, &vectors, &base, k, 2);
            let expected = plain_cosine_top_k(&vectors, 17, &base, k);
            prop_assert!(same(&found, &expected), "{found:?} != {expected:?}");
        }

        /// The same with rows long enough for the 4-bit stage.
        #[test]
        fn near_ties_of_long_rows_come_back_exactly(
            base in proptest::collection::vec(-1.0f32..1.0, 96),
            noise in proptest::collection::vec(-1e-4f32..1e-4, 96 * 40),
            k in 1usize..12) {
            let vectors: Vec<f32> = noise
                .chunks_exact(96)
                .flat_map(|delta| base.iter().zip(delta).map(|(b, d)| b + d))
                .collect();
            let block = Int8Block::build(&vectors, 96);
            let (found, counts) = cosine_top_k(&block, &vectors, &base, k, 2);
            let expected = plain_cosine_top_k(&vectors, 96, &base, k);
            prop_assert!(same(&found, &expected), "{found:?} != {expected:?}");
            prop_assert!(counts.refined <= counts.filtered);
        }
    }

    /// On clustered data the bound skips most rows: few are scored in FLOAT.
    #[test]
    fn clustered_rows_are_mostly_filtered() {
        // 64 clusters of about 1,000 rows: a block of 16 rows holds one of the query's
        // cluster about one time in five.
        let rows = 64_000;
        let (vectors, queries) = crate::sample::clustered(rows, 5, 64, 3);
        let block = Int8Block::build_parallel(&vectors, 64, 2);
        assert_eq!(
            block.bytes(),
            rows * (64 + 16 + 32 + 12 + 16) + rows / 16 * (20 + 24) + 64 * 4
        );
        for query in queries.chunks_exact(64) {
            let (found, counts) = cosine_top_k(&block, &vectors, query, 10, 2);
            assert!(same(&found, &plain_cosine_top_k(&vectors, 64, query, 10)));
            let rows = rows as u64;
            assert_eq!(counts.filtered, rows);
            assert!(counts.crumb_rows > rows / 2, "{counts:?}");
            assert!(counts.nibble_rows < rows * 2 / 5, "{counts:?}");
            assert!(counts.refined < rows / 20, "{counts:?}");
            assert!(counts.rescored < 2_000, "{counts:?}");
        }
    }

    /// Where the 2-bit stage keeps most blocks (rows that do not cluster), each thread turns
    /// it off for most of its rows.
    #[test]
    fn the_2_bit_stage_is_turned_off_where_it_does_not_pay() {
        let (rows, dim) = (200_000, 32);
        let (vectors, queries) = crate::sample::clustered(rows, 1, dim, 5);
        let mut random = 0x2545_f491_4f6c_dd1du64;
        let mut noise = || {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            (random >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        let vectors: Vec<f32> = vectors.iter().map(|_| noise()).collect();
        let block = Int8Block::build_parallel(&vectors, dim, 2);
        let (found, counts) = cosine_top_k(&block, &vectors, &queries, 10, 2);
        assert!(same(
            &found,
            &plain_cosine_top_k(&vectors, dim, &queries, 10)
        ));
        assert!(counts.crumb_rows < rows as u64 / 2, "{counts:?}");
        assert_eq!(counts.filtered, rows as u64);
    }

    #[test]
    fn an_empty_block_answers_nothing() {
        for dim in [3usize, 16, 128] {
            let block = Int8Block::build_parallel(&[], dim, 2);
            assert_eq!(block.rows(), 0);
            let query = vec![0.5f32; dim];
            let (found, counts) = cosine_top_k(&block, &[], &query, 10, 2);
            assert!(found.is_empty());
            assert_eq!(counts, ScanCounts::default());
        }
    }

    #[test]
    fn a_stopped_scan_gives_nothing() {
        let (vectors, queries) = crate::sample::clustered(40_000, 3, 8, 1);
        let block = Int8Block::build_parallel(&vectors, 8, 3);
        let stopped = cosine_top_k_where(&block, &vectors, &queries[..8], 10, 2, |_| true, || true);
        assert!(stopped.is_none());
    }

    #[test]
    fn a_zero_or_nan_query_takes_the_plain_scan() {
        let vectors = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];
        let block = Int8Block::build(&vectors, 2);
        for query in [[0.0, 0.0], [f32::NAN, 1.0]] {
            let (found, counts) = cosine_top_k(&block, &vectors, &query, 2, 1);
            assert!(same(&found, &plain_cosine_top_k(&vectors, 2, &query, 2)));
            assert_eq!(
                counts,
                ScanCounts {
                    rescored: 3,
                    ..ScanCounts::default()
                }
            );
        }
    }
}

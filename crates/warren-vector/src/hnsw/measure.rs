//! The one place the index computes a distance. Inside the graph, rows are measured on int8
//! codes kept in the lower layer's blocks; the exact distance on the FLOAT rows
//! ([`distance`]) ranks a search's final beam (`index`) and answers scans.
//!
//! A row `x` is kept as codes `c` (`-127..=127`) and a scale `s`, `x̂ ≈ s·c`, where `x̂` is the
//! row itself, or under cosine the unit row `x / |x|`; `s = max|x̂_i| / 127`. Beside the scale
//! the block keeps the row's inverse norm (cosine; it is serialized with the index) or its
//! squared norm (the other metrics). A query is quantized the same way to `i16` codes, so a
//! distance is one exact integer dot product (`crate::quantized::int_dot`) and a few flops:
//!
//! ```text
//! p = (codes_q · codes_x) · (s_q · s_x)        ≈ q̂ · x̂
//! cosine 1 - p;  l2sq |q|² + |x|² - 2p;  l2 √l2sq;  dotproduct -p
//! ```
//!
//! Between two rows (the build's neighbour selection) both sides are int8 codes; the build's
//! searches use the inserted row's own codes as the query, so every distance of the build is
//! the same function of two rows' codes (copies of one vector measure the same from both
//! sides, and ties keep them linked, see `select`). Rows or queries with a value that is not
//! finite, and zero vectors under cosine, get a NaN scale: they measure NaN, counted as
//! farthest, as the exact distance does.
//!
//! Each code is within half a step of its value, so `p` is within
//! `(|x̂|₁ s_q + |q̂|₁ s_x) / 2 + n s_q s_x / 4` of `q̂ · x̂` (plus f32 rounding): for 128 unit
//! values at most about 0.01 and typically about 1e-3 (the roundings' signs vary). That is
//! small against the gaps a beam decides on, and the final ranking is exact.

use super::layer::{Layer, FACTOR_WORDS};
use crate::distance::Metric;
use crate::quantized::int_dot::{self, DotRows};

/// The largest row code.
const ROW_CODE_MAX: f32 = 127.0;

/// The inner product the norms use (the process's kernel).
#[inline]
fn inner_product(a: &[f32], b: &[f32]) -> f32 {
    crate::distance::inner_product_f32(a, b)
}

/// `1 / |vector|`: infinite for a zero vector.
pub fn inverse_norm(vector: &[f32]) -> f32 {
    1.0 / inner_product(vector, vector).sqrt()
}

#[inline]
fn not_nan(distance: f32) -> f32 {
    if distance.is_nan() {
        f32::INFINITY
    } else {
        distance
    }
}

/// `value`, or 0 where it is negative; NaN stays NaN.
#[inline]
fn non_negative(value: f32) -> f32 {
    if value < 0.0 {
        0.0
    } else {
        value
    }
}

/// `|a - b|²` from `|a|²`, `|b|²` and `a · b`. Rounding may take it below 0; NaN stays NaN
/// (`f32::max` would not).
#[inline(always)]
fn squared_difference(left_squared: f32, right_squared: f32, product: f32) -> f32 {
    non_negative(left_squared + right_squared - 2.0 * product)
}

/// `(x + ROUNDER) - ROUNDER` rounds `|x| < 2²²` to the nearest integer, ties to even, in
/// plain adds that vectorize at any SIMD width (`round_ties_even` calls `rintf` on baseline
/// x86-64).
const ROUNDER: f32 = 12_582_912.0;

/// A code type: the value a rounded, clamped f32 converts to.
trait Code: Copy + Default {
    fn from_rounded(value: f32) -> Self;
}

impl Code for i8 {
    #[inline(always)]
    fn from_rounded(value: f32) -> Self {
        value as i8
    }
}

impl Code for i16 {
    #[inline(always)]
    fn from_rounded(value: f32) -> Self {
        value as i16
    }
}

/// Codes of `values[i] · multiplier` scaled so that the largest magnitude maps to `code_max`,
/// and the scale (value per code unit); NaN and zero codes when a value is not finite, 0 and
/// zero codes when every value is 0. Two plain loops over slices that vectorize (rounding to
/// nearest, ties to even).
fn quantize<C: Code>(values: &[f32], multiplier: f32, code_max: f32, out: &mut [C]) -> f32 {
    assert_eq!(values.len(), out.len(), "a code per value");
    let mut largest = 0.0f32;
    let mut finite = true;
    for &value in values {
        let scaled = value * multiplier;
        finite &= scaled.is_finite();
        largest = largest.max(scaled.abs());
    }
    if !finite {
        out.fill(C::default());
        return f32::NAN;
    }
    if largest == 0.0 {
        out.fill(C::default());
        return 0.0;
    }
    let step = code_max / largest * multiplier;
    for (code, &value) in out.iter_mut().zip(values) {
        let scaled = (value * step).clamp(-code_max, code_max);
        *code = C::from_rounded((scaled + ROUNDER) - ROUNDER);
    }
    largest / code_max
}

/// The int8 codes of `vector` under `metric` (written to `codes`) and its factor words:
/// `[scale, inverse norm]` under cosine (`inverse_norm` is the row's, passed in so that a
/// stored one is used as it is), `[scale, squared norm]` otherwise.
pub fn encode_row(
    metric: Metric,
    vector: &[f32],
    inverse_norm: f32,
    codes: &mut [i8],
) -> [f32; FACTOR_WORDS] {
    assert_eq!(vector.len(), codes.len(), "a code per value");
    if metric == Metric::Cosine {
        // A zero vector's unit row is not finite (infinite inverse norm): the scale is NaN.
        let scale = quantize(vector, inverse_norm, ROW_CODE_MAX, codes);
        [scale, inverse_norm]
    } else {
        let scale = quantize(vector, 1.0, ROW_CODE_MAX, codes);
        [scale, inner_product(vector, vector)]
    }
}

/// The first four of `group` (one to four rows), the last repeated to fill four: the shape of
/// a four-row kernel call.
#[inline]
pub fn padded_four(group: &[u32]) -> [u32; 4] {
    let last = group.len() - 1;
    [
        group[0],
        group[1.min(last)],
        group[2.min(last)],
        group[3.min(last)],
    ]
}

/// The index's rows under a metric, as the lower layer keeps them (node = row).
#[derive(Clone, Copy)]
pub struct Space<'a> {
    pub metric: Metric,
    pub rows: &'a Layer,
    dot_rows: DotRows,
    /// The four-row distances (`distances_four`), compiled for the widest kernel this CPU
    /// runs.
    distances_four_kernel: DistancesFour,
    /// The distances of rows to a row query (`query_distances`), likewise.
    row_query_kernel: RowQueryDistances,
}

/// [`Space::distances_four`] as one kernel instance.
type DistancesFour = unsafe fn(&Space<'_>, &[i8], f32, f32, [u32; 4]) -> [f32; 4];

/// [`Space::query_distances`] for a row query as one kernel instance.
type RowQueryDistances = unsafe fn(&Space<'_>, &Query, &[u32], &mut [f32]);

/// Defines a module of kernel instances ([`DistancesFour`], [`RowQueryDistances`]) whose dot
/// products are `dot` (four rows by address against the codes), compiled with the attributes
/// given (a `target_feature` for the instance of a CPU feature).
macro_rules! distance_instances {
    ($(#[$attribute:meta])* mod $name:ident { $($dot:tt)* }) => {
        mod $name {
            use super::{int_dot, Query, Space};

            /// # Safety
            /// The CPU has the features the instance is compiled for.
            $(#[$attribute])*
            pub(super) unsafe fn distances_four(
                space: &Space<'_>,
                codes: &[i8],
                scale: f32,
                squared: f32,
                rows: [u32; 4],
            ) -> [f32; 4] {
                space.distances_four_by(|codes, rows| dot(codes, rows), codes, scale, squared, rows)
            }

            /// # Safety
            /// The CPU has the features the instance is compiled for.
            $(#[$attribute])*
            pub(super) unsafe fn row_query_distances(
                space: &Space<'_>,
                query: &Query,
                rows: &[u32],
                out: &mut [f32],
            ) {
                space.row_query_distances_by(|codes, rows| dot(codes, rows), query, rows, out)
            }

            $($dot)*
        }
    };
}

// The instances for CPUs without AVX-512 VNNI: the dot products by the widest four-row
// kernel (`int_dot::dot_four_codes_kernel`), over the rows' codes as slices.
distance_instances! {
    mod portable {
        #[inline]
        fn dot(codes: &[i8], rows: [*const i8; 4]) -> [i32; 4] {
            // SAFETY: `distances_four_by` hands over addresses of the layer's codes, as many as
            // `codes` holds (checked there).
            let rows = rows.map(|row| unsafe { std::slice::from_raw_parts(row, codes.len()) });
            int_dot::dot_four_codes_kernel()(codes, rows)
        }
    }
}

// The instances for CPUs with AVX-512 VNNI: the four-row VNNI kernel inlined into each, so
// that a group's dot products, its distances and the loop over groups are one function (a
// call per group through the kernel and its wrapper cost about 3% of a build).
#[cfg(target_arch = "x86_64")]
distance_instances! {
    #[target_feature(enable = "avx512bw,avx512vnni")]
    mod vnni {
        #[inline]
        #[target_feature(enable = "avx512bw,avx512vnni")]
        fn dot(codes: &[i8], rows: [*const i8; 4]) -> [i32; 4] {
            // SAFETY: the CPU has the features (this is only reached from the instances
            // above); `distances_four_by` hands over addresses of the layer's codes, as many as
            // `codes` holds (checked there), at most `CODES_DIM_MAX` (checked by `Space::new`).
            unsafe { int_dot::x86::dot_four_codes_avx512vnni_body(codes, rows) }
        }
    }
}

/// A query as the graph measures it: `i16` codes, their scale and, for the L2 metrics, the
/// squared norm.
#[derive(Clone, Debug, Default)]
pub struct Query {
    codes: Vec<i16>,
    /// A row's own codes when the query is a row (`prepare_row`); empty otherwise.
    row_codes: Vec<i8>,
    scale: f32,
    squared_norm: f32,
}

/// The widest [`DistancesFour`] instance this CPU runs.
fn distances_four_kernel() -> DistancesFour {
    #[cfg(target_arch = "x86_64")]
    if int_dot::x86::has_vnni() {
        return vnni::distances_four;
    }
    portable::distances_four
}

/// The widest [`RowQueryDistances`] instance this CPU runs.
fn row_query_kernel() -> RowQueryDistances {
    #[cfg(target_arch = "x86_64")]
    if int_dot::x86::has_vnni() {
        return vnni::row_query_distances;
    }
    portable::row_query_distances
}

impl<'a> Space<'a> {
    /// The rows of `rows` (a layer keeping codes) under `metric`, with the process's kernels.
    pub fn new(metric: Metric, rows: &'a Layer) -> Self {
        assert!(rows.dim() > 0, "the layer keeps codes");
        assert!(
            rows.dim() <= int_dot::CODES_DIM_MAX,
            "rows of at most {} values",
            int_dot::CODES_DIM_MAX
        );
        Space {
            metric,
            rows,
            dot_rows: int_dot::dot_rows_kernel(),
            distances_four_kernel: distances_four_kernel(),
            row_query_kernel: row_query_kernel(),
        }
    }

    /// A FLOAT query vector, quantized (into `query`, reusing its buffer).
    pub fn prepare(&self, vector: &[f32], query: &mut Query) {
        let dim = self.rows.dim();
        assert_eq!(vector.len(), dim, "a query of the index's length");
        let code_max = f32::from(int_dot::query_code_max(dim).expect("dim fits the codes"));
        query.codes.resize(dim, 0);
        query.row_codes.clear();
        if self.metric == Metric::Cosine {
            query.scale = quantize(vector, inverse_norm(vector), code_max, &mut query.codes);
            query.squared_norm = 1.0;
        } else {
            query.scale = quantize(vector, 1.0, code_max, &mut query.codes);
            query.squared_norm = inner_product(vector, vector);
        }
    }

    /// Row `row`'s own codes as a query (into `query`): the build measures a row it inserts
    /// exactly as `between` measures two rows.
    pub fn prepare_row(&self, row: u32, query: &mut Query) {
        query.codes.clear();
        query
            .codes
            .extend(self.rows.codes(row).iter().map(|&code| i16::from(code)));
        query.row_codes.clear();
        query.row_codes.extend_from_slice(self.rows.codes(row));
        let [scale, norm] = self.rows.factors(row);
        query.scale = scale;
        query.squared_norm = if self.metric == Metric::Cosine {
            1.0
        } else {
            norm
        };
    }

    /// The distance from `p`, the approximate product of two rows (or a query and a row),
    /// and the second side's squared norm factor.
    #[inline]
    fn distance_of_product(&self, product: f32, left_squared: f32, right_squared: f32) -> f32 {
        not_nan(match self.metric {
            Metric::Cosine => 1.0 - product,
            Metric::L2Squared => squared_difference(left_squared, right_squared, product),
            Metric::L2 => squared_difference(left_squared, right_squared, product).sqrt(),
            Metric::DotProduct => -product,
        })
    }

    /// The squared norm a row's factors give (1 under cosine, where codes are of unit rows).
    #[inline]
    fn squared_norm(&self, factors: [f32; FACTOR_WORDS]) -> f32 {
        if self.metric == Metric::Cosine {
            1.0
        } else {
            factors[1]
        }
    }

    /// The distance of row `row` to `query`.
    #[inline]
    pub fn query_distance(&self, query: &Query, row: u32) -> f32 {
        let mut dot = [0i32];
        (self.dot_rows)(self.rows.codes(row), &query.codes, &mut dot);
        let factors = self.rows.factors(row);
        let product = dot[0] as f32 * (query.scale * factors[0]);
        self.distance_of_product(product, query.squared_norm, self.squared_norm(factors))
    }

    /// The distances of `rows` to `query` into `out` (one per row). A row's own codes as the
    /// query (`prepare_row`, the build) are measured four rows per kernel call (a last group of
    /// fewer repeats its last row); a FLOAT query's `i16` codes one row at a time. Both give
    /// the exact integer dot products, so the two ways agree.
    #[inline]
    pub fn query_distances(&self, query: &Query, rows: &[u32], out: &mut [f32]) {
        assert_eq!(rows.len(), out.len(), "a distance per row");
        if query.row_codes.is_empty() {
            for (distance, &row) in out.iter_mut().zip(rows) {
                *distance = self.query_distance(query, row);
            }
            return;
        }
        assert_eq!(
            query.row_codes.len(),
            self.rows.dim(),
            "a row's codes as the query"
        );
        // SAFETY: `row_query_kernel` was chosen for this CPU by `Space::new`.
        unsafe { (self.row_query_kernel)(self, query, rows, out) }
    }

    /// The distances between row `a` and each of `others`.
    #[inline]
    pub fn between_four(&self, a: u32, others: [u32; 4]) -> [f32; 4] {
        let factors = self.rows.factors(a);
        let squared = self.squared_norm(factors);
        self.distances_four(self.rows.codes(a), factors[0], squared, others)
    }

    /// The distances of four rows to codes `codes` with scale `scale` and squared norm
    /// `squared` (a row's own, or a row query's).
    #[inline(always)]
    fn distances_four(&self, codes: &[i8], scale: f32, squared: f32, rows: [u32; 4]) -> [f32; 4] {
        // SAFETY: `distances_four_kernel` was chosen for this CPU by `Space::new`.
        unsafe { (self.distances_four_kernel)(self, codes, scale, squared, rows) }
    }

    /// [`distances_four`](Self::distances_four) with the dot products by `dot` (four rows by
    /// address against `codes`), inlined into each kernel instance.
    #[inline(always)]
    fn distances_four_by(
        &self,
        dot: impl FnOnce(&[i8], [*const i8; 4]) -> [i32; 4],
        codes: &[i8],
        scale: f32,
        squared: f32,
        rows: [u32; 4],
    ) -> [f32; 4] {
        let layer = self.rows;
        assert_eq!(codes.len(), layer.dim(), "codes of the layer's length");
        let dots = dot(
            codes,
            [
                layer.codes_ptr(rows[0]),
                layer.codes_ptr(rows[1]),
                layer.codes_ptr(rows[2]),
                layer.codes_ptr(rows[3]),
            ],
        );
        // Element by element: `[T; N]::map` here compiled to a call (`try_map`) per group.
        let factors = [
            layer.factors(rows[0]),
            layer.factors(rows[1]),
            layer.factors(rows[2]),
            layer.factors(rows[3]),
        ];
        let products: [f32; 4] =
            std::array::from_fn(|lane| dots[lane] as f32 * (scale * factors[lane][0]));
        // One metric per call, not per lane: the four distances are plain arithmetic.
        match self.metric {
            Metric::Cosine => std::array::from_fn(|lane| not_nan(1.0 - products[lane])),
            Metric::DotProduct => std::array::from_fn(|lane| not_nan(-products[lane])),
            Metric::L2Squared => std::array::from_fn(|lane| {
                not_nan(squared_difference(
                    squared,
                    factors[lane][1],
                    products[lane],
                ))
            }),
            Metric::L2 => std::array::from_fn(|lane| {
                not_nan(squared_difference(squared, factors[lane][1], products[lane]).sqrt())
            }),
        }
    }

    /// The distances of `rows` to a row query's codes, four rows per group (a last group of
    /// fewer repeats its last row), the dot products by `dot`.
    #[inline(always)]
    fn row_query_distances_by(
        &self,
        dot: impl Fn(&[i8], [*const i8; 4]) -> [i32; 4],
        query: &Query,
        rows: &[u32],
        out: &mut [f32],
    ) {
        for (group, out) in rows.chunks(4).zip(out.chunks_mut(4)) {
            let four = padded_four(group);
            let distances = self.distances_four_by(
                &dot,
                &query.row_codes,
                query.scale,
                query.squared_norm,
                four,
            );
            // Lane by lane: `copy_from_slice` of one to four floats is a `memcpy` call.
            for (slot, distance) in out.iter_mut().zip(distances) {
                *slot = distance;
            }
        }
    }

    #[inline]
    pub fn prefetch(&self, row: u32) {
        self.rows.prefetch_codes(row);
    }
}

/// The distance of `a` to `b` under `metric` (smaller is closer), never NaN.
#[inline]
pub fn distance(metric: Metric, a: &[f32], b: &[f32]) -> f32 {
    use crate::distance as kernels;
    not_nan(match metric {
        Metric::Cosine => 1.0 - kernels::cosine_similarity_f32(a, b),
        Metric::L2 => kernels::squared_distance_f32(a, b).sqrt(),
        Metric::L2Squared => kernels::squared_distance_f32(a, b),
        Metric::DotProduct => -kernels::inner_product_f32(a, b),
    })
}

/// Row `row` of a contiguous block of `dim`-long vectors.
#[inline]
pub fn row_vector(vectors: &[f32], dim: usize, row: u32) -> &[f32] {
    let start = row as usize * dim;
    &vectors[start..start + dim]
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn never_nan() {
        // The scalar reference gives NaN for a zero vector under cosine (counted as farthest);
        // Kùzu's convention in the SIMD kernels gives similarity 0. Neither may reach a heap.
        let zero = distance(Metric::Cosine, &[0.0, 0.0], &[1.0, 0.0]);
        assert!(!zero.is_nan() && zero >= 1.0);
        assert_eq!(distance(Metric::L2Squared, &[0.0, 3.0], &[4.0, 0.0]), 25.0);
        assert_eq!(row_vector(&[1.0, 2.0, 3.0, 4.0], 2, 1), &[3.0, 4.0]);
    }

    /// A layer keeping `rows` (of `dim` values) encoded under `metric`.
    fn coded(metric: Metric, rows: &[f32], dim: usize) -> Layer {
        let mut layer = Layer::with_codes(4, dim);
        let count = rows.len() / dim;
        layer.grow(count);
        layer.code_nodes(0..count, 1, |row, codes| {
            let vector = &rows[row * dim..(row + 1) * dim];
            encode_row(metric, vector, inverse_norm(vector), codes)
        });
        layer
    }

    const METRICS: [Metric; 4] = [
        Metric::Cosine,
        Metric::L2,
        Metric::L2Squared,
        Metric::DotProduct,
    ];

    #[test]
    fn zero_and_non_finite_rows_measure_farthest() {
        let rows = [
            0.0f32,
            0.0,
            0.0,
            1.0,
            f32::NAN,
            2.0,
            1.0,
            f32::INFINITY,
            0.0,
        ];
        for metric in METRICS {
            let layer = coded(metric, &rows, 3);
            let space = Space::new(metric, &layer);
            let mut query = Query::default();
            space.prepare(&[0.3, -0.2, 0.9], &mut query);
            for row in 1..3 {
                assert_eq!(
                    space.query_distance(&query, row),
                    f32::INFINITY,
                    "{metric:?}"
                );
                assert_eq!(
                    space.between_four(0, [row; 4]),
                    [f32::INFINITY; 4],
                    "{metric:?}"
                );
            }
            let zero = space.query_distance(&query, 0);
            if metric == Metric::Cosine {
                // No direction: farthest in the graph (the exact kernel's similarity is 0).
                assert_eq!(zero, f32::INFINITY);
            } else {
                let exact = distance(metric, &[0.3, -0.2, 0.9], &rows[..3]);
                assert!(
                    (zero - exact).abs() <= 1e-6 * exact,
                    "{metric:?}: a zero row"
                );
            }
            space.prepare(&[0.0, 0.0, 0.0], &mut query);
            if metric == Metric::Cosine {
                assert_eq!(space.query_distance(&query, 0), f32::INFINITY);
            }
        }
    }

    #[test]
    fn copies_of_a_row_measure_the_same_from_both_sides() {
        let rows = [0.5f32, -1.25, 3.0, 0.5, -1.25, 3.0, 2.0, 0.0, -1.0];
        for metric in METRICS {
            let layer = coded(metric, &rows, 3);
            let space = Space::new(metric, &layer);
            let mut query = Query::default();
            space.prepare_row(0, &mut query);
            let between = |a: u32, b: u32| space.between_four(a, [b; 4])[0];
            assert_eq!(space.query_distance(&query, 1), between(0, 1));
            assert_eq!(space.query_distance(&query, 2), between(0, 2));
            assert_eq!(between(0, 1), between(1, 0));
            assert_eq!(between(1, 2), between(0, 2));
        }
    }

    fn rows_and_query() -> impl Strategy<Value = (usize, Vec<f32>, Vec<f32>)> {
        (1usize..160, 1usize..6).prop_flat_map(|(dim, rows)| {
            (
                Just(dim),
                proptest::collection::vec(-4.0f32..4.0, dim * rows),
                proptest::collection::vec(-4.0f32..4.0, dim),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The graph's distances are within the stated error of the exact ones, for every
        /// metric and length.
        #[test]
        fn coded_distances_are_near_the_exact_ones((dim, rows, query) in rows_and_query()) {
            for metric in METRICS {
                let layer = coded(metric, &rows, dim);
                let space = Space::new(metric, &layer);
                let mut prepared = Query::default();
                space.prepare(&query, &mut prepared);
                // The largest magnitude of a row as it is coded (unit rows under cosine).
                let largest = |vector: &[f32]| {
                    let norm: f32 = if metric == Metric::Cosine {
                        vector.iter().map(|v| v * v).sum::<f32>().sqrt()
                    } else {
                        1.0
                    };
                    vector.iter().fold(0.0f32, |m, v| m.max(v.abs())) / norm
                };
                let n = dim as f32;
                let query_code_max = f32::from(int_dot::query_code_max(dim).unwrap());
                for (row, vector) in rows.chunks(dim).enumerate() {
                    let exact = distance(metric, &query, vector);
                    let coded = space.query_distance(&prepared, row as u32);
                    if !exact.is_finite() || !coded.is_finite() {
                        prop_assert_eq!(exact.is_finite(), coded.is_finite());
                        continue;
                    }
                    // The module's bound with |v|₁ <= n max|v|, and room for f32 rounding.
                    let (mx, mq) = (largest(vector), largest(&query));
                    let (sx, sq) = (mx / 127.0, mq / query_code_max);
                    let bound = n * (mx * sq + mq * sx) / 2.0 + n * sq * sx / 4.0;
                    let squares: f32 = query.iter().chain(vector).map(|v| v * v).sum();
                    let rounding = 1e-5 * (1.0 + n * mx * mq + squares);
                    let allowed = match metric {
                        Metric::L2 => (2.0 * bound + rounding).sqrt(),
                        Metric::L2Squared => 2.0 * bound + rounding,
                        _ => bound + rounding,
                    };
                    prop_assert!(
                        (coded - exact).abs() <= allowed,
                        "{:?} dim {}: coded {} exact {} allowed {}", metric, dim, coded, exact, allowed
                    );
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]

        /// A row as the query measures every row the same by the four-row kernel
        /// (`query_distances`, `between_four`) as by the one-row `i16` kernel, for every
        /// metric, length and group size (rows with NaN and zero vectors included).
        #[test]
        fn four_row_distances_equal_one_row_distances(
            (dim, mut rows, _query) in rows_and_query(),
            spoiled in prop::option::of((0usize..6, prop::sample::select(vec![f32::NAN, 0.0]))),
        ) {
            if let Some((row, value)) = spoiled {
                let row = row % (rows.len() / dim);
                for v in &mut rows[row * dim..(row + 1) * dim] {
                    *v = value;
                }
            }
            let count = (rows.len() / dim) as u32;
            for metric in METRICS {
                let layer = coded(metric, &rows, dim);
                let space = Space::new(metric, &layer);
                let mut prepared = Query::default();
                let all: Vec<u32> = (0..count).collect();
                for row in 0..count {
                    space.prepare_row(row, &mut prepared);
                    let one: Vec<f32> =
                        all.iter().map(|&other| space.query_distance(&prepared, other)).collect();
                    let mut grouped = vec![0.0f32; all.len()];
                    space.query_distances(&prepared, &all, &mut grouped);
                    prop_assert_eq!(
                        one.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                        grouped.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
                    );
                    // The portable instance (the one a CPU without VNNI runs) agrees.
                    let mut portable_grouped = vec![0.0f32; all.len()];
                    // SAFETY: the portable instance needs no CPU feature.
                    unsafe {
                        portable::row_query_distances(
                            &space,
                            &prepared,
                            &all,
                            &mut portable_grouped,
                        )
                    };
                    prop_assert_eq!(
                        portable_grouped.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                        grouped.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
                    );
                    for (other, &expected) in one.iter().enumerate() {
                        let four = space.between_four(row, [other as u32; 4]);
                        prop_assert_eq!(four[0].to_bits(), expected.to_bits());
                    }
                }
            }
        }
    }
}

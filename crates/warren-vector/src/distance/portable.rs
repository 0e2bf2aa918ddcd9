//! The portable kernels: plain Rust over eight independent accumulators, which the compiler
//! turns into whatever vector instructions the build target guarantees (SSE2 on x86-64). Also
//! the remainder loops of the wider kernels.

/// Lanes summed independently, so that the additions do not wait on each other.
const LANES: usize = 8;

macro_rules! portable_kernels {
    ($float:ty, $inner:ident, $squared:ident, $cosine:ident) => {
        pub fn $inner(a: &[$float], b: &[$float]) -> $float {
            assert_eq!(a.len(), b.len(), "vectors of different lengths");
            let mut sums = [0.0 as $float; LANES];
            let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
            let (a_rest, b_rest) = (a_chunks.remainder(), b_chunks.remainder());
            for (x, y) in a_chunks.zip(b_chunks) {
                for lane in 0..LANES {
                    sums[lane] += x[lane] * y[lane];
                }
            }
            let tail: $float = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
            sums.iter().sum::<$float>() + tail
        }

        pub fn $squared(a: &[$float], b: &[$float]) -> $float {
            assert_eq!(a.len(), b.len(), "vectors of different lengths");
            let mut sums = [0.0 as $float; LANES];
            let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
            let (a_rest, b_rest) = (a_chunks.remainder(), b_chunks.remainder());
            for (x, y) in a_chunks.zip(b_chunks) {
                for lane in 0..LANES {
                    let d = x[lane] - y[lane];
                    sums[lane] += d * d;
                }
            }
            let tail: $float = a_rest
                .iter()
                .zip(b_rest)
                .map(|(x, y)| (x - y) * (x - y))
                .sum();
            sums.iter().sum::<$float>() + tail
        }

        pub fn $cosine(a: &[$float], b: &[$float]) -> $float {
            assert_eq!(a.len(), b.len(), "vectors of different lengths");
            let mut dot = [0.0 as $float; LANES];
            let mut aa = [0.0 as $float; LANES];
            let mut bb = [0.0 as $float; LANES];
            let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
            let (a_rest, b_rest) = (a_chunks.remainder(), b_chunks.remainder());
            for (x, y) in a_chunks.zip(b_chunks) {
                for lane in 0..LANES {
                    dot[lane] += x[lane] * y[lane];
                    aa[lane] += x[lane] * x[lane];
                    bb[lane] += y[lane] * y[lane];
                }
            }
            let (mut d, mut na, mut nb) = (
                dot.iter().sum::<$float>(),
                aa.iter().sum::<$float>(),
                bb.iter().sum::<$float>(),
            );
            for (x, y) in a_rest.iter().zip(b_rest) {
                d += x * y;
                na += x * x;
                nb += y * y;
            }
            super::cosine_from_sums(d, na, nb)
        }
    };
}

portable_kernels!(
    f32,
    inner_product_f32,
    squared_distance_f32,
    cosine_similarity_f32
);
portable_kernels!(
    f64,
    inner_product_f64,
    squared_distance_f64,
    cosine_similarity_f64
);

//! Statistics over repeated measurements: the min/median/max summary a report records, and the
//! two-sided Mann–Whitney U test `warren compare` uses to tell a change from noise.
//!
//! The U test is exact (the null distribution counted by dynamic programming) when both samples
//! are small and have no ties, and the normal approximation with tie and continuity corrections
//! otherwise.

use serde::{Deserialize, Serialize};

/// The largest sample size (per side) for which the exact distribution of U is counted.
pub const EXACT_SAMPLES_MAX: usize = 30;

/// Repeated measurements of one figure: min, median, max, and every sample in run order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub samples: Vec<f64>,
}

impl Summary {
    /// Summarizes `samples` (in run order). Panics on an empty slice or a non-finite sample:
    /// both would be bugs in the caller.
    pub fn of(samples: &[f64]) -> Summary {
        assert!(!samples.is_empty(), "a summary needs at least one sample");
        assert!(
            samples.iter().all(|s| s.is_finite()),
            "samples must be finite: {samples:?}"
        );
        let sorted = sorted(samples);
        Summary {
            min: sorted[0],
            median: median_of_sorted(&sorted),
            max: sorted[sorted.len() - 1],
            samples: samples.to_vec(),
        }
    }
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The median of sorted values: the middle one, or the mean of the two middle ones.
fn median_of_sorted(sorted: &[f64]) -> f64 {
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}

/// The result of a two-sided Mann–Whitney U test of `a` against `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UTest {
    /// U of the first sample: pairs (x in a, y in b) with x > y, ties counting one half.
    pub u_a: f64,
    /// The two-sided p-value.
    pub p_value: f64,
    /// Whether `p_value` comes from the exact distribution (else the normal approximation).
    pub exact: bool,
}

/// The two-sided Mann–Whitney U test. Both samples must be non-empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> UTest {
    assert!(
        !a.is_empty() && !b.is_empty(),
        "the U test needs two samples"
    );
    let (rank_sum_a, tie_groups) = rank_sum_first(a, b);
    let m = a.len() as f64;
    let u_a = rank_sum_a - m * (m + 1.0) / 2.0;
    let ties = tie_groups.iter().any(|&t| t > 1);
    if !ties && a.len() <= EXACT_SAMPLES_MAX && b.len() <= EXACT_SAMPLES_MAX {
        let p_value = exact_two_sided(a.len(), b.len(), u_a);
        return UTest {
            u_a,
            p_value,
            exact: true,
        };
    }
    let p_value = normal_two_sided(a.len(), b.len(), u_a, &tie_groups);
    UTest {
        u_a,
        p_value,
        exact: false,
    }
}

/// The sum of the mid-ranks of `a` in the pooled sample, and the sizes of the tie groups.
fn rank_sum_first(a: &[f64], b: &[f64]) -> (f64, Vec<usize>) {
    let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).collect();
    pooled.extend(b.iter().map(|&y| (y, false)));
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut rank_sum = 0.0;
    let mut groups = Vec::new();
    let mut start = 0;
    while start < pooled.len() {
        let mut end = start + 1;
        while end < pooled.len() && pooled[end].0 == pooled[start].0 {
            end += 1;
        }
        // Ranks start+1 ..= end share their mean.
        let mid_rank = (start + 1 + end) as f64 / 2.0;
        let firsts = pooled[start..end].iter().filter(|p| p.1).count();
        rank_sum += mid_rank * firsts as f64;
        groups.push(end - start);
        start = end;
    }
    (rank_sum, groups)
}

/// Counts, for sizes `m` and `n`, how many of the C(m+n, m) orderings give each U = 0..=m*n.
fn exact_u_counts(m: usize, n: usize) -> Vec<f64> {
    // counts[j][u] for the current i: orderings of i firsts and j seconds with U = u, built by
    // the recurrence f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u) (the largest value is either a
    // first, beating all j seconds, or a second).
    let width = m * n + 1;
    let mut previous: Vec<Vec<f64>> = (0..=n)
        .map(|_| {
            let mut row = vec![0.0; width];
            row[0] = 1.0;
            row
        })
        .collect();
    for i in 1..=m {
        let mut current: Vec<Vec<f64>> = vec![vec![0.0; width]; n + 1];
        current[0][0] = 1.0;
        for j in 1..=n {
            for u in 0..=i * j {
                let with_first = if u >= j { previous[j][u - j] } else { 0.0 };
                current[j][u] = with_first + current[j - 1][u];
            }
        }
        previous = current;
    }
    previous.swap_remove(n)
}

fn exact_two_sided(m: usize, n: usize, u_a: f64) -> f64 {
    let counts = exact_u_counts(m, n);
    let total: f64 = counts.iter().sum();
    // Without ties U is an integer; the distribution is symmetric about m*n/2.
    let u = u_a.round() as usize;
    let u_low = u.min(m * n - u);
    let tail: f64 = counts[..=u_low].iter().sum();
    (2.0 * tail / total).min(1.0)
}

fn normal_two_sided(m: usize, n: usize, u_a: f64, tie_groups: &[usize]) -> f64 {
    let (m, n) = (m as f64, n as f64);
    let total = m + n;
    let mean = m * n / 2.0;
    let tie_term: f64 = tie_groups
        .iter()
        .map(|&t| {
            let t = t as f64;
            t * t * t - t
        })
        .sum();
    let variance = m * n / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
    if variance <= 0.0 {
        // Every value is the same: no evidence of a difference.
        return 1.0;
    }
    let distance = ((u_a - mean).abs() - 0.5).max(0.0);
    let z = distance / variance.sqrt();
    (2.0 * standard_normal_upper_tail(z)).min(1.0)
}

/// P(Z > z) for a standard normal Z, from the complementary error function.
fn standard_normal_upper_tail(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let polynomial = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let value = t * polynomial.exp();
    if x >= 0.0 {
        value
    } else {
        2.0 - value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_odd_and_even_samples() {
        let odd = Summary::of(&[3.0, 1.0, 2.0]);
        assert_eq!((odd.min, odd.median, odd.max), (1.0, 2.0, 3.0));
        assert_eq!(odd.samples, vec![3.0, 1.0, 2.0], "samples keep run order");
        let even = Summary::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(even.median, 2.5);
        let one = Summary::of(&[7.0]);
        assert_eq!((one.min, one.median, one.max), (7.0, 7.0, 7.0));
    }

    #[test]
    #[should_panic(expected = "at least one sample")]
    fn summary_of_nothing_is_a_bug() {
        let _ = Summary::of(&[]);
    }

    #[test]
    fn exact_counts_sum_to_binomial() {
        let counts = exact_u_counts(5, 5);
        assert_eq!(counts.iter().sum::<f64>(), 252.0);
        assert_eq!(counts[0], 1.0);
        assert_eq!(counts[25], 1.0);
        // The distribution is symmetric.
        for u in 0..=25 {
            assert_eq!(counts[u], counts[25 - u]);
        }
        // U = 1 for (m, n) = (3, 2): one ordering.
        assert_eq!(exact_u_counts(3, 2)[1], 1.0);
        assert_eq!(exact_u_counts(3, 2).iter().sum::<f64>(), 10.0);
    }

    #[test]
    fn complete_separation_of_five_and_five() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let test = mann_whitney(&a, &b);
        assert!(test.exact);
        assert_eq!(test.u_a, 0.0);
        // 2 / C(10, 5).
        assert!((test.p_value - 2.0 / 252.0).abs() < 1e-12);
        let reverse = mann_whitney(&b, &a);
        assert_eq!(reverse.u_a, 25.0);
        assert!((reverse.p_value - test.p_value).abs() < 1e-12);
    }

    #[test]
    fn three_and_three_can_never_reach_five_percent() {
        let test = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert!((test.p_value - 0.1).abs() < 1e-12);
    }

    #[test]
    fn interleaved_samples_are_not_significant() {
        let a = [1.0, 3.0, 5.0, 7.0, 9.0];
        let b = [2.0, 4.0, 6.0, 8.0, 10.0];
        let test = mann_whitney(&a, &b);
        assert!(test.p_value > 0.5, "{test:?}");
    }

    #[test]
    fn exact_p_value_matches_a_table_value() {
        // m = n = 4, U = 1: P(U <= 1) = 2/70, two-sided 4/70.
        let test = mann_whitney(&[1.0, 2.0, 3.0, 5.0], &[4.0, 6.0, 7.0, 8.0]);
        assert_eq!(test.u_a, 1.0);
        assert!((test.p_value - 4.0 / 70.0).abs() < 1e-12);
    }

    #[test]
    fn ties_use_the_normal_approximation() {
        let a = [1.0, 1.0, 1.0, 1.0, 1.0];
        let b = [1.0, 1.0, 1.0, 1.0, 1.0];
        let test = mann_whitney(&a, &b);
        assert!(!test.exact);
        assert_eq!(test.p_value, 1.0);
        let separated = mann_whitney(
            &[1.0, 1.0, 2.0, 2.0, 2.0, 2.0],
            &[5.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        );
        assert!(!separated.exact);
        assert!(separated.p_value < 0.01, "{separated:?}");
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let a: Vec<f64> = (0..40).map(f64::from).collect();
        let b: Vec<f64> = (0..40).map(|x| f64::from(x) + 100.0).collect();
        let test = mann_whitney(&a, &b);
        assert!(!test.exact);
        assert!(test.p_value < 1e-10);
    }

    #[test]
    fn erfc_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-6);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-6);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-6);
        assert!((standard_normal_upper_tail(1.959_964) - 0.025).abs() < 1e-5);
    }
}

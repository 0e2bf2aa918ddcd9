//! Filtered search: which rows may be returned, and when scanning the passing rows beats
//! searching the graph.
//!
//! The rule: with `p` passing rows out of `n` indexed, a filtered graph search computes about
//! `efs * ml / 2` distances per accepted row it needs and so, with selectivity `p / n`, about
//! `efs * ml / 2 * n / p` in all, while a scan of the passing rows computes `p`. The index
//! scans when `p * p <= n * efs * ml / 2`, and also whenever the graph search returns fewer
//! than `k` rows (a filter whose passing rows the graph cannot reach).

/// A predicate on row ids. `passing_rows` (when known) lets the index choose the scan.
pub trait RowFilter: Sync {
    fn passes(&self, row: u32) -> bool;

    /// How many rows pass, when known cheaply; `None` makes the index search the graph first.
    fn passing_rows(&self) -> Option<usize> {
        None
    }

    /// Whether every row passes (the search then takes the unfiltered beam).
    fn passes_all(&self) -> bool {
        false
    }
}

/// Every row passes (the unfiltered search).
#[derive(Clone, Copy, Debug, Default)]
pub struct AllRows;

impl RowFilter for AllRows {
    fn passes(&self, _row: u32) -> bool {
        true
    }

    fn passes_all(&self) -> bool {
        true
    }
}

/// A closure over row ids; its count is unknown.
#[derive(Clone, Copy, Debug)]
pub struct FnFilter<F>(pub F);

impl<F: Fn(u32) -> bool + Sync> RowFilter for FnFilter<F> {
    fn passes(&self, row: u32) -> bool {
        (self.0)(row)
    }
}

/// A bitmap of passing rows (the engine's semi-mask), with its count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowMask {
    words: Vec<u64>,
    passing: usize,
}

impl RowMask {
    /// A mask over `rows` rows with none passing.
    pub fn new(rows: usize) -> Self {
        RowMask {
            words: vec![0; rows.div_ceil(64)],
            passing: 0,
        }
    }

    /// The rows of `0..rows` for which `passes` holds.
    pub fn from_fn(rows: usize, passes: impl Fn(u32) -> bool) -> Self {
        let mut mask = RowMask::new(rows);
        for row in 0..rows as u32 {
            if passes(row) {
                mask.insert(row);
            }
        }
        mask
    }

    pub fn insert(&mut self, row: u32) {
        let word = &mut self.words[row as usize / 64];
        let bit = 1u64 << (row % 64);
        if *word & bit == 0 {
            *word |= bit;
            self.passing += 1;
        }
    }

    /// The passing rows in increasing order.
    pub fn rows(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(index, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                Some(index as u32 * 64 + bit)
            })
        })
    }
}

impl RowFilter for RowMask {
    fn passes(&self, row: u32) -> bool {
        self.words
            .get(row as usize / 64)
            .is_some_and(|word| word & (1u64 << (row % 64)) != 0)
    }

    fn passing_rows(&self) -> Option<usize> {
        Some(self.passing)
    }
}

/// The rule of this module: scan `passing` rows rather than search a graph of `rows` rows.
pub fn scan_is_cheaper(passing: usize, rows: usize, efs: usize, ml: usize) -> bool {
    let graph_distances_per_row = (efs * ml / 2).max(1) as u128;
    (passing as u128) * (passing as u128) <= rows as u128 * graph_distances_per_row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_counts_and_iterates() {
        let mask = RowMask::from_fn(200, |row| row % 3 == 0);
        assert_eq!(mask.passing_rows(), Some(67));
        assert!(mask.passes(129) && !mask.passes(130) && !mask.passes(10_000));
        assert_eq!(mask.rows().take(3).collect::<Vec<_>>(), [0, 3, 6]);
        assert_eq!(mask.rows().count(), 67);
    }

    #[test]
    fn scan_rule() {
        // 1M rows, efs 200, ml 60: sqrt(1e6 * 6000) ~ 77k passing rows is the break-even.
        assert!(scan_is_cheaper(50_000, 1_000_000, 200, 60));
        assert!(!scan_is_cheaper(100_000, 1_000_000, 200, 60));
    }
}

//! Path statistics for counting mode: how many paths, and their summed, smallest and largest
//! lengths. Counts are exact; exceeding INT64 is a `LimitExceeded` error, never a wrap.

use warren_common::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathStats {
    pub count: u64,
    pub length_sum: u128,
    pub length_min: u32,
    pub length_max: u32,
}

impl Default for PathStats {
    fn default() -> Self {
        Self {
            count: 0,
            length_sum: 0,
            length_min: u32::MAX,
            length_max: 0,
        }
    }
}

fn overflow() -> Error {
    Error::LimitExceeded("the number of paths exceeds the INT64 range".into())
}

impl PathStats {
    /// Adds `paths` paths of `length` hops.
    #[inline]
    pub fn add(&mut self, length: u32, paths: u64) -> Result<()> {
        if paths == 0 {
            return Ok(());
        }
        self.count = self
            .count
            .checked_add(paths)
            .filter(|&c| c <= i64::MAX as u64)
            .ok_or_else(overflow)?;
        self.length_sum += u128::from(length) * u128::from(paths);
        self.length_min = self.length_min.min(length);
        self.length_max = self.length_max.max(length);
        Ok(())
    }

    pub fn merge(&mut self, other: &PathStats) -> Result<()> {
        if other.count == 0 {
            return Ok(());
        }
        self.count = self
            .count
            .checked_add(other.count)
            .filter(|&c| c <= i64::MAX as u64)
            .ok_or_else(overflow)?;
        self.length_sum += other.length_sum;
        self.length_min = self.length_min.min(other.length_min);
        self.length_max = self.length_max.max(other.length_max);
        Ok(())
    }

    /// The summed length as an INT64.
    pub fn length_sum_i64(&self) -> Result<i64> {
        i64::try_from(self.length_sum).map_err(|_| overflow())
    }
}

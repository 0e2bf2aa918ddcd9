//! The index parameters, with Kùzu's names and defaults (`CREATE_VECTOR_INDEX(..., mu, ml, pu,
//! efc)` and `QUERY_VECTOR_INDEX(..., efs)`), their limits, and the index's error type.

use crate::distance::Metric;

/// Kùzu's default upper-layer degree.
pub const MU_DEFAULT: usize = 30;
/// Kùzu's default lower-layer degree.
pub const ML_DEFAULT: usize = 60;
/// Kùzu's default probability that a row is sampled into the upper layer.
pub const PU_DEFAULT: f64 = 0.05;
/// Kùzu's default construction beam width.
pub const EFC_DEFAULT: usize = 200;
/// Kùzu's default search beam width.
pub const EFS_DEFAULT: usize = 200;
/// The largest degree of either layer: a neighbour list is a fixed stride of this many u32s.
pub const DEGREE_MAX: usize = 1024;
/// The largest beam width (`efc`, `efs`) and the largest `k`.
pub const BEAM_MAX: usize = 100_000;
/// The largest vector length.
pub const DIMENSION_MAX: usize = 65_536;
/// Row ids are below 2^31: a search's beam keeps a row and a flag in 32 bits (and `u32::MAX`
/// marks an empty neighbour slot).
pub const ROWS_MAX: usize = (1 << 31) - 1;

/// The errors of the index: bad parameters, bad input shapes, or a corrupt serialized index.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HnswError {
    #[error("{0}")]
    Parameter(String),
    #[error("{0}")]
    Input(String),
    #[error("corrupt vector index: {0}")]
    Format(String),
}

/// How the index is built. `seed` makes the upper-layer sampling reproducible.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HnswParams {
    pub metric: Metric,
    /// Maximum degree of a node in the upper layer.
    pub mu: usize,
    /// Maximum degree of a node in the lower layer (all rows).
    pub ml: usize,
    /// Probability that a row is also in the upper layer.
    pub pu: f64,
    /// Beam width while inserting.
    pub efc: usize,
    pub seed: u64,
}

impl Default for HnswParams {
    fn default() -> Self {
        HnswParams {
            metric: Metric::Cosine,
            mu: MU_DEFAULT,
            ml: ML_DEFAULT,
            pu: PU_DEFAULT,
            efc: EFC_DEFAULT,
            seed: 0x5eed_0f4a_11ce,
        }
    }
}

impl HnswParams {
    /// Checks every parameter against its limit; the messages name Kùzu's option.
    pub fn validate(&self) -> Result<(), HnswError> {
        let parameter = |message: String| Err(HnswError::Parameter(message));
        if self.mu == 0 || self.mu > DEGREE_MAX {
            return parameter(format!("mu must be in [1, {DEGREE_MAX}], got {}", self.mu));
        }
        if self.ml == 0 || self.ml > DEGREE_MAX {
            return parameter(format!("ml must be in [1, {DEGREE_MAX}], got {}", self.ml));
        }
        if !(0.0..=1.0).contains(&self.pu) {
            return parameter(format!("pu must be in [0, 1], got {}", self.pu));
        }
        validate_beam("efc", self.efc)
    }
}

/// Checks a beam width (`efc`, `efs`) or a `k`.
pub fn validate_beam(name: &str, value: usize) -> Result<(), HnswError> {
    if value == 0 || value > BEAM_MAX {
        return Err(HnswError::Parameter(format!(
            "{name} must be in [1, {BEAM_MAX}], got {value}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kuzus_and_valid() {
        let params = HnswParams::default();
        assert_eq!((params.mu, params.ml, params.efc), (30, 60, 200));
        assert_eq!(params.metric, Metric::Cosine);
        assert!(params.validate().is_ok());
    }

    #[test]
    fn limits_are_enforced() {
        let bad_mu = HnswParams {
            mu: 0,
            ..HnswParams::default()
        };
        assert!(bad_mu.validate().is_err());
        let bad_pu = HnswParams {
            pu: 1.5,
            ..HnswParams::default()
        };
        assert!(bad_pu.validate().is_err());
        assert!(validate_beam("efs", BEAM_MAX + 1).is_err());
    }
}

//! Deterministic dataset generators behind `warren generate` (design §5 and §6).
//!
//! Three graphs, all over one node table `Person(ID)` and one relationship table `Knows`:
//!
//! - [`DatasetKind::Graph500`]: the Graph500 Kronecker graph ([`graph500`]);
//! - [`DatasetKind::Dense`]: a uniform random graph of fixed out-degree ([`dense`]);
//! - [`DatasetKind::Social`]: a power-law graph with communities and reciprocity ([`social`]).
//!
//! [`generate`] writes a dataset directory ([`output`]); the `*_edges` functions build the same
//! graphs in memory. Every random choice comes from [`rng`], seeded by the user's seed and
//! independent of thread count, so one seed gives byte-identical files on every machine.

pub mod dedup;
pub mod dense;
pub mod graph500;
pub mod output;
mod parallel;
pub mod permutation;
pub mod rng;
pub mod social;
pub mod stats;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use dense::dense_edges;
pub use graph500::graph500_edges;
pub use social::social_edges;

/// The seed used when the user gives none. Seed 2 because with seed 1 the Graph500 vertex that
/// receives ID 0 has no out-edges at scale 18, which would make the seed queries that start
/// from `a.ID = 0` (one-source SHORTEST and ALL SHORTEST) measure nothing.
pub const DEFAULT_SEED: u64 = 2;
/// The most edge draws one dataset may ask for (each takes 8 bytes in memory, twice over).
pub const EDGE_DRAWS_MAX: u64 = 1 << 32;

/// Which graph to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetKind {
    /// The Graph500 Kronecker graph: `--scale`, `--edge-factor`.
    Graph500,
    /// The dense uniform random graph: `--nodes`, `--degree`.
    Dense,
    /// The social-network-like power-law graph: `--nodes`, `--degree`.
    Social,
}

impl DatasetKind {
    /// Every kind, in the order the command line lists them.
    pub const ALL: [DatasetKind; 3] = [
        DatasetKind::Graph500,
        DatasetKind::Dense,
        DatasetKind::Social,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DatasetKind::Graph500 => "graph500",
            DatasetKind::Dense => "dense",
            DatasetKind::Social => "social",
        }
    }
}

impl fmt::Display for DatasetKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

impl FromStr for DatasetKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        DatasetKind::ALL
            .into_iter()
            .find(|kind| kind.name() == text)
            .ok_or_else(|| format!("unknown dataset '{text}' (expected graph500, dense or social)"))
    }
}

/// The parameters of `warren generate`. Graph500 reads `scale` and `edge_factor`; the dense and
/// social graphs read `nodes` and `degree`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerateOptions {
    /// Which graph.
    pub kind: DatasetKind,
    /// Graph500: `2^scale` vertices.
    pub scale: u32,
    /// Graph500: edge draws per vertex.
    pub edge_factor: u32,
    /// Dense and social: the node count.
    pub nodes: u64,
    /// Dense and social: the average out-degree.
    pub degree: u32,
    /// The seed of every random choice.
    pub seed: u64,
}

impl GenerateOptions {
    /// The documented defaults: scale 18 and edge factor 16; 20,000 nodes of degree 500 for the
    /// dense graph; 200,000 nodes of degree 20 for the social graph; seed [`DEFAULT_SEED`].
    pub fn defaults(kind: DatasetKind) -> Self {
        let (nodes, degree) = match kind {
            DatasetKind::Graph500 => (1 << 18, 16),
            DatasetKind::Dense => (20_000, 500),
            DatasetKind::Social => (200_000, 20),
        };
        Self {
            kind,
            scale: 18,
            edge_factor: 16,
            nodes,
            degree,
            seed: DEFAULT_SEED,
        }
    }

    /// Checks the parameters the chosen kind reads; the error says which one is wrong.
    pub fn validate(&self) -> io::Result<()> {
        let draws = match self.kind {
            DatasetKind::Graph500 => {
                if !(1..=graph500::SCALE_MAX).contains(&self.scale) {
                    return Err(invalid(format!(
                        "scale must be between 1 and {}, got {}",
                        graph500::SCALE_MAX,
                        self.scale
                    )));
                }
                u64::from(self.edge_factor) << self.scale
            }
            DatasetKind::Dense | DatasetKind::Social => {
                if !(1..=1 << 32).contains(&self.nodes) {
                    return Err(invalid(format!(
                        "nodes must be between 1 and 2^32, got {}",
                        self.nodes
                    )));
                }
                if u64::from(self.degree) >= self.nodes {
                    return Err(invalid(format!(
                        "degree must be below the node count {}, got {}",
                        self.nodes, self.degree
                    )));
                }
                self.nodes * u64::from(self.degree)
            }
        };
        if draws > EDGE_DRAWS_MAX {
            return Err(invalid(format!(
                "{draws} edges asked for, at most {EDGE_DRAWS_MAX} allowed"
            )));
        }
        Ok(())
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// What [`generate`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedDataset {
    /// The absolute path of the dataset directory.
    pub dir: PathBuf,
    /// The number of nodes, ids `0..nodes`.
    pub nodes: u64,
    /// The number of edges in `edges.csv`.
    pub edges: u64,
}

impl GeneratedDataset {
    /// The absolute path of `nodes.csv`.
    pub fn nodes_path(&self) -> PathBuf {
        self.dir.join(output::NODES_FILE)
    }

    /// The absolute path of `edges.csv`.
    pub fn edges_path(&self) -> PathBuf {
        self.dir.join(output::EDGES_FILE)
    }

    /// The absolute path of `schema.cypher`.
    pub fn schema_path(&self) -> PathBuf {
        self.dir.join(output::SCHEMA_FILE)
    }

    /// The absolute path of `copy.cypher`.
    pub fn copy_path(&self) -> PathBuf {
        self.dir.join(output::COPY_FILE)
    }
}

/// Builds the graph `options` describe in memory: the node count and the edges, in file order.
pub fn generate_edges(options: &GenerateOptions) -> io::Result<(u64, Vec<(u32, u32)>)> {
    options.validate()?;
    Ok(match options.kind {
        DatasetKind::Graph500 => graph500_edges(options.scale, options.edge_factor, options.seed),
        DatasetKind::Dense => dense_edges(options.nodes, options.degree, options.seed),
        DatasetKind::Social => social_edges(options.nodes, options.degree, options.seed),
    })
}

/// Generates the dataset `options` describe and writes it into `out_dir` (created if needed).
pub fn generate(options: &GenerateOptions, out_dir: &Path) -> io::Result<GeneratedDataset> {
    let (nodes, edges) = generate_edges(options)?;
    let dir = output::write_dataset(out_dir, nodes, &edges)?;
    Ok(GeneratedDataset {
        dir,
        nodes,
        edges: edges.len() as u64,
    })
}

#[cfg(test)]
mod tests;

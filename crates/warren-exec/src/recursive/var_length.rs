//! Variable-length paths (WALK, TRAIL, ACYCLIC) built level by level, in parallel: level i+1
//! holds one entry (node, parent entry, rel) per admissible extension of a level-i entry. Each
//! level takes two phases of morsels: *find* (every morsel of level i collects its extensions)
//! and, once the new level is allocated at its exact size, *place* (every morsel writes its
//! extensions into its own range, so entries keep morsel order, and pushes each entry that ends
//! at a destination onto that node's list for the level with compare-and-swap). Paths are then
//! rebuilt backwards from the destinations' lists, one at a time. Extensions that cannot reach a
//! destination within the remaining hops are pruned.
//!
//! Memory grows with the number of admissible path prefixes, so every level reserves its bytes
//! against the query's memory limit first; the depth-first enumerator in `walks` needs only the
//! path depth and is the default (`varlen_paths = dfs`, see `docs/OPTIMIZATION_LOG.md`).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use warren_common::Result;

use super::graph::Graph;
use super::masks::Masks;
use super::scheduler::PhasedSearch;
use super::walks::Semantic;
use crate::context::MemoryTracker;

/// No entry (list end, or the source's parent).
const NONE: u32 = u32::MAX;
/// Bytes one entry takes: (node, parent) and (rel, next) words.
const ENTRY_BYTES: u64 = 16;

/// One level's entries: `(node << 32 | parent)` and `(rel << 32 | next)` per entry, where
/// `parent` indexes the previous level and `next` links the node's list at this level.
#[derive(Debug, Default)]
struct Level {
    words: Vec<[AtomicU64; 2]>,
    /// Per destination node: the first entry of its list (`NONE`: empty).
    heads: Vec<AtomicU32>,
}

impl Level {
    fn new(len: usize, nodes: usize) -> Self {
        Self {
            words: (0..len)
                .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
                .collect(),
            heads: (0..nodes).map(|_| AtomicU32::new(NONE)).collect(),
        }
    }

    fn len(&self) -> usize {
        self.words.len()
    }

    #[inline]
    fn entry(&self, index: usize) -> (u32, u32, u32, u32) {
        let first = self.words[index][0].load(Ordering::Relaxed);
        let second = self.words[index][1].load(Ordering::Relaxed);
        (
            (first >> 32) as u32,
            first as u32,
            (second >> 32) as u32,
            second as u32,
        )
    }
}

/// The levels of one source, reused from source to source.
#[derive(Debug)]
pub struct LevelPaths {
    semantic: Semantic,
    lower: u32,
    upper: u32,
    morsel_size: usize,
    construction: RwLock<Construction>,
    /// Bytes reserved against the memory limit for the current source.
    reserved: AtomicU64,
}

/// The levels built so far, and the level under construction.
#[derive(Debug, Default)]
struct Construction {
    levels: Vec<Level>,
    /// False while the last level's morsels find extensions; true while they place them.
    placing: bool,
    /// Per morsel of the last level: the extensions it found (node, parent entry, rel).
    found: Vec<Mutex<Vec<(u32, u32, u32)>>>,
    /// Per morsel: where its extensions start in the new level.
    offsets: Vec<usize>,
}

impl LevelPaths {
    pub fn new(semantic: Semantic, (lower, upper): (u32, u32), morsel_size: usize) -> Self {
        Self {
            semantic,
            lower,
            upper,
            morsel_size: morsel_size.max(1),
            construction: RwLock::new(Construction::default()),
            reserved: AtomicU64::new(0),
        }
    }
}

/// One source's construction over a graph: what the scheduler runs.
pub struct LevelPathsSearch<'a> {
    pub paths: &'a LevelPaths,
    pub graph: &'a Graph,
    pub masks: &'a Masks,
    /// Hops from each node to the nearest destination (pruning).
    pub distance: &'a [u32],
    pub memory: &'a MemoryTracker,
}

impl LevelPathsSearch<'_> {
    /// Whether the prefix ending at `entry` of level `depth` admits one more hop from its last
    /// node: the source always; others when they may be intermediate (and, for ACYCLIC, do
    /// not repeat an earlier intermediate node).
    fn admits(&self, levels: &[Level], depth: usize, node: u32, parent: u32) -> bool {
        if depth == 0 {
            return true;
        }
        if !self.masks.expandable(node) {
            return false;
        }
        if self.paths.semantic == Semantic::Acyclic {
            return !chain(levels, depth - 1, parent)
                .take(depth - 1)
                .any(|(n, _)| n == node);
        }
        true
    }

    /// Whether `edge` may follow the prefix ending at entry `index` of level `depth`.
    fn accepts(&self, levels: &[Level], depth: usize, index: u32, edge: u32) -> bool {
        self.paths.semantic != Semantic::Trail
            || !chain(levels, depth, index)
                .take(depth)
                .any(|(_, rel)| rel == edge)
    }

    /// Starts finding the extensions of the last level (or ends the search): its morsels.
    fn open_level(&self, construction: &mut Construction) -> usize {
        let depth = construction.levels.len() - 1;
        let current = construction.levels[depth].len();
        construction.placing = false;
        if depth as u32 >= self.paths.upper || current == 0 {
            construction.found.clear();
            return 0;
        }
        let morsels = current.div_ceil(self.paths.morsel_size);
        construction.found = (0..morsels).map(|_| Mutex::new(Vec::new())).collect();
        morsels
    }

    /// The extensions of morsel `morsel` of the last level (memory reserved as they are held).
    fn find(&self, levels: &[Level], morsel: usize) -> Result<Vec<(u32, u32, u32)>> {
        let depth = levels.len() - 1;
        let current = &levels[depth];
        let start = morsel * self.paths.morsel_size;
        let end = (start + self.paths.morsel_size).min(current.len());
        let remaining = self.paths.upper - depth as u32 - 1;
        let forward = self.graph.forward.view();
        let mut found = Vec::new();
        for index in start..end {
            let (node, parent, ..) = current.entry(index);
            if !self.admits(levels, depth, node, parent) {
                continue;
            }
            let (targets, edges) = forward.entries(node);
            for (&v, &edge) in targets.iter().zip(edges) {
                if !self.masks.follows(edge)
                    || self.distance[v as usize] > remaining
                    || !self.accepts(levels, depth, index as u32, edge)
                {
                    continue;
                }
                found.push((v, index as u32, edge));
            }
        }
        let bytes = (found.len() * std::mem::size_of::<(u32, u32, u32)>()) as u64;
        self.memory
            .reserve(bytes, "the path prefixes of a variable-length pattern")?;
        self.paths.reserved.fetch_add(bytes, Ordering::Relaxed);
        Ok(found)
    }

    /// Allocates the new level at its exact size (every morsel's extensions are known).
    fn allocate_level(&self, construction: &mut Construction) -> Result<usize> {
        let mut offsets = Vec::with_capacity(construction.found.len());
        let mut total = 0usize;
        for found in &construction.found {
            offsets.push(total);
            total += found.lock().expect("found lock").len();
        }
        if total == 0 {
            return Ok(0);
        }
        let nodes = self.graph.num_nodes() as usize;
        let bytes = total as u64 * ENTRY_BYTES + nodes as u64 * 4;
        self.memory
            .reserve(bytes, "the path prefixes of a variable-length pattern")?;
        self.paths.reserved.fetch_add(bytes, Ordering::Relaxed);
        construction.levels.push(Level::new(total, nodes));
        construction.offsets = offsets;
        construction.placing = true;
        Ok(construction.found.len())
    }

    /// Writes morsel `morsel`'s extensions into the new level, pushing each one that ends at a
    /// destination onto the destination's list with compare-and-swap.
    fn place(&self, construction: &Construction, morsel: usize) {
        let found = std::mem::take(&mut *construction.found[morsel].lock().expect("found lock"));
        let level = construction.levels.last().expect("the new level");
        let depth = construction.levels.len() - 1;
        let counting = depth as u32 >= self.paths.lower;
        let first = construction.offsets[morsel];
        for (offset, (v, parent, edge)) in found.into_iter().enumerate() {
            let index = first + offset;
            let words = &level.words[index];
            words[0].store(u64::from(v) << 32 | u64::from(parent), Ordering::Relaxed);
            if !(counting && self.masks.is_destination(v)) {
                words[1].store(u64::from(edge) << 32 | u64::from(NONE), Ordering::Relaxed);
                continue;
            }
            let head = &level.heads[v as usize];
            let mut old = head.load(Ordering::Relaxed);
            loop {
                words[1].store(u64::from(edge) << 32 | u64::from(old), Ordering::Release);
                match head.compare_exchange_weak(
                    old,
                    index as u32,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break,
                    Err(actual) => old = actual,
                }
            }
        }
    }
}

/// The (node, rel) pairs of a prefix, from entry `index` of level `depth` back to level 1.
fn chain(levels: &[Level], depth: usize, index: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
    let mut position = Some((depth, index));
    std::iter::from_fn(move || {
        let (depth, index) = position?;
        if depth == 0 {
            return None;
        }
        let (node, parent, rel, _) = levels[depth].entry(index as usize);
        position = Some((depth - 1, parent));
        Some((node, rel))
    })
}

impl PhasedSearch for LevelPathsSearch<'_> {
    type Task = u32;
    type Output = ();

    fn start(&self, &source: &u32) -> Result<usize> {
        let mut construction = self.paths.construction.write().expect("construction lock");
        *construction = Construction::default();
        self.memory
            .release(self.paths.reserved.swap(0, Ordering::Relaxed));
        let root = Level::new(1, 0);
        root.words[0][0].store(u64::from(source) << 32 | u64::from(NONE), Ordering::Relaxed);
        root.words[0][1].store(u64::from(NONE) << 32 | u64::from(NONE), Ordering::Relaxed);
        construction.levels.push(root);
        Ok(self.open_level(&mut construction))
    }

    fn process(&self, morsel: usize) -> Result<()> {
        let construction = self.paths.construction.read().expect("construction lock");
        if construction.placing {
            self.place(&construction, morsel);
        } else {
            let found = self.find(&construction.levels, morsel)?;
            *construction.found[morsel].lock().expect("found lock") = found;
        }
        Ok(())
    }

    fn advance(&self) -> Result<usize> {
        let mut construction = self.paths.construction.write().expect("construction lock");
        if construction.placing {
            // The extensions are placed: their buffers' reservation goes back.
            let buffers = construction.levels.last().map_or(0, Level::len) as u64;
            let bytes = buffers * std::mem::size_of::<(u32, u32, u32)>() as u64;
            self.memory.release(bytes);
            self.paths.reserved.fetch_sub(bytes, Ordering::Relaxed);
            return Ok(self.open_level(&mut construction));
        }
        self.allocate_level(&mut construction)
    }

    fn finish(&self) -> Result<()> {
        Ok(())
    }
}

/// Streams the paths of a finished construction: destinations ascending, then lengths.
#[derive(Debug)]
pub struct LevelPathStream {
    source: u32,
    /// Destinations with at least one path (ascending), and the next one to visit.
    destinations: Vec<u32>,
    next_destination: usize,
    /// (destination, length, next entry of its list).
    cursor: Option<(u32, u32, u32)>,
    pending_empty: bool,
}

impl LevelPathStream {
    pub fn new(paths: &LevelPaths, masks: &Masks, source: u32) -> Self {
        let construction = paths.construction.read().expect("construction lock");
        let levels = &construction.levels;
        let mut destinations: Vec<u32> = levels
            .iter()
            .skip(1)
            .flat_map(|level| {
                (0..level.len())
                    .map(|i| level.entry(i))
                    .filter(|&(node, ..)| {
                        level.heads[node as usize].load(Ordering::Relaxed) != NONE
                    })
                    .map(|(node, ..)| node)
            })
            .collect();
        destinations.sort_unstable();
        destinations.dedup();
        Self {
            source,
            destinations,
            next_destination: 0,
            cursor: None,
            pending_empty: paths.lower == 0 && masks.is_destination(source),
        }
    }

    /// The next path as (destination, intermediate nodes, rels).
    pub fn next_path(&mut self, paths: &LevelPaths) -> Option<(u32, Vec<u32>, Vec<u32>)> {
        if std::mem::take(&mut self.pending_empty) {
            return Some((self.source, Vec::new(), Vec::new()));
        }
        let construction = paths.construction.read().expect("construction lock");
        let levels = &construction.levels;
        loop {
            if let Some((destination, length, entry)) = self.cursor {
                if entry != NONE {
                    let (.., next) = levels[length as usize].entry(entry as usize);
                    self.cursor = Some((destination, length, next));
                    return Some(rebuild(levels, length as usize, entry, destination));
                }
                let following = length + 1;
                self.cursor = ((following as usize) < levels.len() && following <= paths.upper)
                    .then(|| {
                        let head = levels[following as usize].heads[destination as usize]
                            .load(Ordering::Acquire);
                        (destination, following, head)
                    });
                continue;
            }
            let &destination = self.destinations.get(self.next_destination)?;
            self.next_destination += 1;
            let first = paths.lower.max(1);
            if (first as usize) < levels.len() {
                let head =
                    levels[first as usize].heads[destination as usize].load(Ordering::Acquire);
                self.cursor = Some((destination, first, head));
            }
        }
    }
}

/// The path ending at entry `index` of level `length`: (destination, intermediate nodes, rels)
/// in forward order.
fn rebuild(
    levels: &[Level],
    length: usize,
    index: u32,
    destination: u32,
) -> (u32, Vec<u32>, Vec<u32>) {
    let mut nodes = Vec::with_capacity(length);
    let mut rels = Vec::with_capacity(length);
    for (node, rel) in chain(levels, length, index) {
        nodes.push(node);
        rels.push(rel);
    }
    nodes.reverse();
    rels.reverse();
    // `nodes` holds positions 1..=length; the intermediate ones exclude the destination.
    nodes.pop();
    (destination, nodes, rels)
}

/// Releases the memory a construction reserved (call when its paths are consumed).
pub fn release(paths: &LevelPaths, memory: &MemoryTracker) {
    memory.release(paths.reserved.swap(0, Ordering::Relaxed));
}

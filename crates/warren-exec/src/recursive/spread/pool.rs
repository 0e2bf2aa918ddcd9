//! Spread states kept between queries. A spread's per-node arrays (two arrival arrays, the
//! totals, the first hops, one private arrival array per worker) cost O(nodes) to allocate
//! and fill (about 10 MB at Graph500 scale 18), while a spread resets only the entries of the
//! nodes it reached. The pool lends a state sized for a graph's node count and takes it back
//! after a successful spread, cleared; idle states are bounded in bytes
//! ([`SPREAD_IDLE_BYTES_MAX`] by default), the oldest going first.

use super::super::idle_pool::{HeldBytes, IdlePool};
use super::State;

/// The default bound on the bytes of idle spread states one pool keeps (a database's pool
/// holds them between queries; 256 MiB keeps one two-worker state at Graph500 scale 22).
pub const SPREAD_IDLE_BYTES_MAX: u64 = 256 << 20;

/// Idle spread states, each lent to one spread at a time; every idle state is clear (as
/// [`State::new`] makes it).
#[derive(Debug)]
pub struct SpreadStatePool {
    idle: IdlePool<State>,
}

impl HeldBytes for State {
    fn held_bytes(&self) -> u64 {
        State::held_bytes(self)
    }
}

impl Default for SpreadStatePool {
    fn default() -> Self {
        Self::new(SPREAD_IDLE_BYTES_MAX)
    }
}

impl SpreadStatePool {
    /// A pool keeping at most `limit_bytes` of idle states.
    pub fn new(limit_bytes: u64) -> Self {
        Self {
            idle: IdlePool::new(limit_bytes),
        }
    }

    /// A clear state for a graph of `nodes` nodes: the newest idle one of that size, or a new
    /// one.
    pub(super) fn take(&self, nodes: u32) -> State {
        self.idle
            .take_newest(|state| state.num_nodes() == nodes as usize)
            .unwrap_or_else(|| State::new(nodes))
    }

    /// Keeps the clear `state` for a later spread (see [`IdlePool::give_back`]).
    pub(super) fn give_back(&self, state: State) {
        self.idle.give_back(state);
    }

    /// Bytes the idle states hold.
    pub fn idle_bytes(&self) -> u64 {
        self.idle.idle_bytes()
    }

    /// Idle states.
    pub fn idle_states(&self) -> usize {
        self.idle.idle_states()
    }

    /// Whether every idle state is as new (for tests: O(nodes)).
    #[cfg(test)]
    pub(super) fn all_idle_clear(&self) -> bool {
        self.idle.all_idle(State::is_clear)
    }
}

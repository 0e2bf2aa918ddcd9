//! Spread states kept between queries. A spread's per-node arrays (two arrival arrays, the
//! totals, the first hops, one private arrival array per worker) cost O(nodes) to allocate
//! and fill (about 10 MB at Graph500 scale 18), while a spread resets only the entries of the
//! nodes it reached. The pool lends a state sized for a graph's node count and takes it back
//! after a successful spread, cleared; idle states are bounded in bytes
//! ([`SPREAD_IDLE_BYTES_MAX`] by default), the oldest going first.

use std::sync::Mutex;

use super::State;

/// The default bound on the bytes of idle spread states one pool keeps (a database's pool
/// holds them between queries; 256 MiB keeps one two-worker state at Graph500 scale 22).
pub const SPREAD_IDLE_BYTES_MAX: u64 = 256 << 20;

/// Idle spread states, each lent to one spread at a time.
pub struct SpreadStatePool {
    /// Oldest first; every state is clear (as [`State::new`] makes it).
    idle: Mutex<Vec<State>>,
    limit_bytes: u64,
}

impl std::fmt::Debug for SpreadStatePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpreadStatePool")
            .field("idle_states", &self.idle_states())
            .field("limit_bytes", &self.limit_bytes)
            .finish()
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
            idle: Mutex::new(Vec::new()),
            limit_bytes,
        }
    }

    /// A clear state for a graph of `nodes` nodes: the newest idle one of that size, or a new
    /// one.
    pub(super) fn take(&self, nodes: u32) -> State {
        let mut idle = self.idle.lock().expect("spread state pool lock");
        match idle
            .iter()
            .rposition(|state| state.num_nodes() == nodes as usize)
        {
            Some(at) => idle.remove(at),
            None => State::new(nodes),
        }
    }

    /// Keeps the clear `state` for a later spread, dropping the oldest idle states while the
    /// total would exceed the bound (and `state` itself when it alone does).
    pub(super) fn give_back(&self, state: State) {
        let bytes = state.held_bytes();
        if bytes > self.limit_bytes {
            return;
        }
        let mut idle = self.idle.lock().expect("spread state pool lock");
        let mut total: u64 = idle.iter().map(State::held_bytes).sum::<u64>() + bytes;
        while total > self.limit_bytes {
            let oldest = idle.remove(0);
            total -= oldest.held_bytes();
        }
        idle.push(state);
    }

    /// Bytes the idle states hold.
    pub fn idle_bytes(&self) -> u64 {
        let idle = self.idle.lock().expect("spread state pool lock");
        idle.iter().map(State::held_bytes).sum()
    }

    /// Idle states.
    pub fn idle_states(&self) -> usize {
        self.idle.lock().expect("spread state pool lock").len()
    }

    /// Whether every idle state is as new (for tests: O(nodes)).
    #[cfg(test)]
    pub(super) fn all_idle_clear(&self) -> bool {
        let idle = self.idle.lock().expect("spread state pool lock");
        idle.iter().all(State::is_clear)
    }
}

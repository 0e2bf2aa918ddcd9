//! Idle per-query states kept between queries, bounded in bytes: the shared mechanism of the
//! BFS state pool ([`super::state_pool`]) and the spread state pool (`spread::pool`). A state
//! is lent to one query at a time; when a returned state would push the idle total past the
//! bound, the oldest idle states go first (and a state larger than the bound is not kept).

use std::sync::Mutex;

/// A state whose arrays a pool counts against its bound.
pub trait HeldBytes {
    fn held_bytes(&self) -> u64;
}

/// Idle states, oldest first, holding at most `limit_bytes` in all.
pub struct IdlePool<T> {
    idle: Mutex<Vec<T>>,
    limit_bytes: u64,
}

impl<T> std::fmt::Debug for IdlePool<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdlePool")
            .field("idle_states", &self.idle().len())
            .field("limit_bytes", &self.limit_bytes)
            .finish()
    }
}

impl<T> IdlePool<T> {
    /// A pool keeping at most `limit_bytes` of idle states.
    pub fn new(limit_bytes: u64) -> Self {
        Self {
            idle: Mutex::new(Vec::new()),
            limit_bytes,
        }
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<T>> {
        self.idle.lock().expect("idle pool lock")
    }

    /// The newest idle state that `fits` accepts, taken out of the pool.
    pub fn take_newest(&self, fits: impl Fn(&T) -> bool) -> Option<T> {
        let mut idle = self.idle();
        idle.iter().rposition(fits).map(|at| idle.remove(at))
    }

    /// Idle states.
    pub fn idle_states(&self) -> usize {
        self.idle().len()
    }

    /// Whether `check` holds for every idle state (for tests).
    pub fn all_idle(&self, check: impl Fn(&T) -> bool) -> bool {
        self.idle().iter().all(check)
    }
}

impl<T: HeldBytes> IdlePool<T> {
    /// Keeps `state` for a later query, dropping the oldest idle states while the total would
    /// exceed the bound (and `state` itself when it alone does).
    pub fn give_back(&self, state: T) {
        let bytes = state.held_bytes();
        if bytes > self.limit_bytes {
            return;
        }
        let mut idle = self.idle();
        let mut total: u64 = idle.iter().map(T::held_bytes).sum::<u64>() + bytes;
        while total > self.limit_bytes {
            let oldest = idle.remove(0);
            total -= oldest.held_bytes();
        }
        idle.push(state);
    }

    /// Bytes the idle states hold.
    pub fn idle_bytes(&self) -> u64 {
        self.idle().iter().map(T::held_bytes).sum()
    }
}

//! The two lanes of query threads: light queries (key lookups, one hop, counted hops) and
//! heavy ones (recursive joins, table scans, multi-hop rows: `warren_planner::cost`), each with
//! its own bounded queue and threads, so that a light query never waits behind heavy ones.
//!
//! A query's lane is known once it is compiled, which happens on a query thread. A request
//! whose text the server has not yet seen heavy goes to the light lane; a light thread that
//! compiles it into a heavy plan remembers the text and hands the request to the heavy lane
//! before running it, so later requests with that text (parameters do not change a plan's
//! class) go to the heavy lane directly.
//!
//! The same kind of set remembers the texts whose answers were small and quick, which the I/O
//! threads may answer themselves (`crate::inline`).

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::sync::Mutex;

/// Query texts remembered in a [`Texts`] set, at most this many (later ones are classified
/// again on the light lane each time they come).
pub const TEXTS_MAX: usize = 4_096;

/// Which lane a query runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Light,
    Heavy,
}

/// A bounded set of query texts, by hash: those compiled into heavy plans (a collision only
/// sends a light query to the heavy lane), or those answered small and quick (a collision
/// only starts a query on an I/O thread, which hands it over when it is not small).
#[derive(Debug, Default)]
pub struct Texts {
    hasher: std::collections::hash_map::RandomState,
    hashes: Mutex<HashSet<u64>>,
}

impl Texts {
    pub fn contains(&self, text: &str) -> bool {
        let hash = self.hasher.hash_one(text);
        self.lock().contains(&hash)
    }

    /// The lane of `text` when this set holds the heavy texts.
    pub fn lane(&self, text: &str) -> Lane {
        if self.contains(text) {
            Lane::Heavy
        } else {
            Lane::Light
        }
    }

    /// Remembers `text` while there is room.
    pub fn insert(&self, text: &str) {
        let hash = self.hasher.hash_one(text);
        let mut hashes = self.lock();
        if hashes.len() < TEXTS_MAX {
            hashes.insert(hash);
        }
    }

    /// Forgets `text`.
    pub fn remove(&self, text: &str) {
        let hash = self.hasher.hash_one(text);
        self.lock().remove(&hash);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<u64>> {
        self.hashes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_light_until_remembered_heavy_until_forgotten_and_the_memory_is_bounded() {
        let texts = Texts::default();
        assert_eq!(texts.lane("MATCH (a) RETURN a"), Lane::Light);
        texts.insert("MATCH (a) RETURN a");
        assert_eq!(texts.lane("MATCH (a) RETURN a"), Lane::Heavy);
        assert_eq!(texts.lane("RETURN 1"), Lane::Light);
        texts.remove("MATCH (a) RETURN a");
        assert_eq!(texts.lane("MATCH (a) RETURN a"), Lane::Light);
        for i in 0..2 * TEXTS_MAX {
            texts.insert(&format!("RETURN {i}"));
        }
        assert_eq!(texts.lock().len(), TEXTS_MAX);
    }
}

//! The morsel results ("pieces") of one level of a level-synchronous search: workers hand in a
//! piece per morsel and the thread that ends the level takes them all. Ended pieces are kept,
//! cleared, for the next level's morsels. A piece's lists are allocated on one worker and,
//! without reuse, freed on the thread that merges the level: malloc's cross-thread frees then
//! took its arena locks on every morsel, and a worker that waited for one slept (a futex) in
//! the middle of a level (docs/OPTIMIZATION_LOG.md, entry 196).

use std::sync::{Mutex, MutexGuard};

/// A morsel's result that can be cleared for reuse, keeping the capacity of its lists.
pub trait LevelPiece: Default {
    /// Clears the piece and gives it to `morsel`.
    fn reuse(&mut self, morsel: usize);
    /// Bytes its lists hold.
    fn held_bytes(&self) -> u64;
}

/// `list` emptied and taken out, its capacity kept: what a [`LevelPiece::reuse`] puts back into
/// the cleared piece.
pub fn emptied<T>(list: &mut Vec<T>) -> Vec<T> {
    list.clear();
    std::mem::take(list)
}

/// The pieces of the running level and the spare ones.
#[derive(Debug)]
pub struct LevelPieces<P> {
    lists: Mutex<Lists<P>>,
}

#[derive(Debug)]
struct Lists<P> {
    /// Handed in during the running level, in no order.
    done: Vec<P>,
    /// Ended and cleared on reuse.
    spare: Vec<P>,
}

impl<P: LevelPiece> Default for LevelPieces<P> {
    fn default() -> Self {
        Self {
            lists: Mutex::new(Lists {
                done: Vec::new(),
                spare: Vec::new(),
            }),
        }
    }
}

impl<P: LevelPiece> LevelPieces<P> {
    fn lock(&self) -> MutexGuard<'_, Lists<P>> {
        self.lists.lock().expect("level pieces lock")
    }

    /// A cleared piece for `morsel`: a spare one when there is one, else a new one.
    pub fn take(&self, morsel: usize) -> P {
        let mut piece = self.lock().spare.pop().unwrap_or_default();
        piece.reuse(morsel);
        piece
    }

    /// Hands in the piece of a finished morsel.
    pub fn hand_in(&self, piece: P) {
        self.lock().done.push(piece);
    }

    /// The pieces handed in since the last call (one level's), in no order.
    pub fn take_done(&self) -> Vec<P> {
        std::mem::take(&mut self.lock().done)
    }

    /// Keeps ended pieces for the next morsels (and the emptied list for the next level's).
    pub fn recycle(&self, mut pieces: Vec<P>) {
        let mut lists = self.lock();
        lists.spare.append(&mut pieces);
        if lists.done.capacity() < pieces.capacity() {
            lists.done = pieces;
        }
    }

    /// Runs `f` over the pieces of a level that ended without being taken (an error ended
    /// the search), then keeps them as spare ones.
    pub fn with_unfinished<R>(&self, f: impl FnOnce(&[P]) -> R) -> R {
        let mut lists = self.lock();
        let result = f(&lists.done);
        let Lists { done, spare } = &mut *lists;
        spare.append(done);
        result
    }

    /// Bytes the lists of every piece hold.
    pub fn held_bytes(&self) -> u64 {
        let lists = self.lock();
        lists
            .done
            .iter()
            .chain(&lists.spare)
            .map(P::held_bytes)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Found {
        morsel: usize,
        nodes: Vec<u32>,
    }

    impl LevelPiece for Found {
        fn reuse(&mut self, morsel: usize) {
            self.morsel = morsel;
            self.nodes.clear();
        }
        fn held_bytes(&self) -> u64 {
            self.nodes.capacity() as u64 * 4
        }
    }

    #[test]
    fn ended_pieces_come_back_cleared_with_their_capacity() {
        let pieces = LevelPieces::<Found>::default();
        let mut first = pieces.take(3);
        assert_eq!((first.morsel, first.nodes.len()), (3, 0));
        first.nodes.extend(0..100);
        pieces.hand_in(first);
        pieces.hand_in(pieces.take(4));
        let done = pieces.take_done();
        assert_eq!(done.len(), 2);
        assert!(pieces.take_done().is_empty());
        pieces.recycle(done);
        assert!(pieces.held_bytes() >= 400);
        let again: Vec<Found> = (0..3).map(|m| pieces.take(m)).collect();
        assert!(again.iter().all(|p| p.nodes.is_empty()));
        assert_eq!(
            again.iter().map(|p| p.morsel).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert!(again.iter().any(|p| p.nodes.capacity() >= 100));
    }

    #[test]
    fn an_unfinished_level_is_seen_then_kept() {
        let pieces = LevelPieces::<Found>::default();
        let mut piece = pieces.take(0);
        piece.nodes.push(7);
        pieces.hand_in(piece);
        let seen = pieces.with_unfinished(|done| {
            done.iter()
                .flat_map(|p| p.nodes.clone())
                .collect::<Vec<_>>()
        });
        assert_eq!(seen, [7]);
        assert!(pieces.take_done().is_empty());
        assert!(pieces.take(1).nodes.is_empty());
    }
}

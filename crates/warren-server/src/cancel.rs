//! Queries a client may stop by id (`POST /cancel`): the id a request chose, its cancel
//! request, and the interrupt flag of the engine connection running it once it has started.
//!
//! A query whose client goes away is stopped the same way: [`StopOnDrop`] travels with the
//! request's handler and then with its response body, and requests the cancel when either is
//! dropped before the answer is complete (hyper drops them when the connection closes).
//!
//! The id belongs to the request until its answer is complete (the registration travels with
//! the response body); the engine flag is attached only while the query thread runs the query
//! ([`Attached`] detaches it), so a late cancel never reaches the thread's next query.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// One registered query's cancel state.
#[derive(Debug, Default)]
pub struct Cancel {
    requested: AtomicBool,
    /// The running connection's interrupt flag while the query runs.
    engine: Mutex<Option<Arc<AtomicBool>>>,
}

impl Cancel {
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// Until the returned guard is dropped, a cancel also interrupts the engine through
    /// `flag`; if one came first, `flag` is set at once.
    pub fn attach(self: &Arc<Self>, flag: Arc<AtomicBool>) -> Attached {
        self.reassert(&flag);
        *self.engine() = Some(flag.clone());
        Attached {
            cancel: self.clone(),
            flag,
        }
    }

    /// The engine clears its flag when a statement starts: sets it again if a cancel came.
    pub fn reassert(&self, flag: &AtomicBool) {
        if self.requested() {
            flag.store(true, Ordering::SeqCst);
        }
    }

    pub fn request(&self) {
        self.requested.store(true, Ordering::SeqCst);
        if let Some(flag) = self.engine().as_ref() {
            flag.store(true, Ordering::SeqCst);
        }
    }

    fn engine(&self) -> std::sync::MutexGuard<'_, Option<Arc<AtomicBool>>> {
        self.engine.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A query thread's engine flag attached to a query's cancel; detached when dropped, unless
/// another thread's flag was attached since (the query moved to the heavy lane's thread).
#[derive(Debug)]
pub struct Attached {
    cancel: Arc<Cancel>,
    flag: Arc<AtomicBool>,
}

impl Drop for Attached {
    fn drop(&mut self) {
        let mut engine = self.cancel.engine();
        if engine.as_ref().is_some_and(|f| Arc::ptr_eq(f, &self.flag)) {
            *engine = None;
        }
    }
}

/// Requests its query's cancel when dropped, unless [`StopOnDrop::complete`] said the answer
/// is complete: a client that disconnects stops its query, queued or running.
#[derive(Debug)]
pub struct StopOnDrop {
    cancel: Option<Arc<Cancel>>,
}

impl StopOnDrop {
    pub fn new(cancel: Arc<Cancel>) -> Self {
        Self {
            cancel: Some(cancel),
        }
    }

    /// The answer is complete (or the query ended by itself): nothing to stop.
    pub fn complete(&mut self) {
        self.cancel = None;
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel.request();
        }
    }
}

/// The registered queries by id.
#[derive(Debug, Default)]
pub struct Cancels {
    running: Mutex<HashMap<u64, Arc<Cancel>>>,
}

impl Cancels {
    /// Registers query `id` until the returned registration is dropped; refuses an id that a
    /// query in flight already has.
    pub fn register(self: &Arc<Self>, id: u64) -> Result<Registration, String> {
        let mut running = self.lock();
        if running.contains_key(&id) {
            return Err(format!("query id {id} is already in use"));
        }
        let cancel = Arc::new(Cancel::default());
        running.insert(id, cancel.clone());
        Ok(Registration {
            cancels: self.clone(),
            id,
            cancel,
        })
    }

    /// Asks query `id` to stop; false when no query in flight has that id.
    pub fn cancel(&self, id: u64) -> bool {
        let running = self.lock();
        match running.get(&id) {
            Some(cancel) => {
                cancel.request();
                true
            }
            None => false,
        }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Cancel>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A query's place in the registry; dropping it takes the query out.
#[derive(Debug)]
pub struct Registration {
    cancels: Arc<Cancels>,
    id: u64,
    pub cancel: Arc<Cancel>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.cancels.lock().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_reaches_the_engine_flag_before_and_after_it_is_attached() {
        let cancels = Arc::new(Cancels::default());
        let early = cancels.register(1).unwrap();
        assert!(cancels.cancel(1));
        let flag = Arc::new(AtomicBool::new(false));
        let _attached = early.cancel.attach(flag.clone());
        assert!(flag.load(Ordering::SeqCst));

        let late = cancels.register(2).unwrap();
        let flag = Arc::new(AtomicBool::new(false));
        let attached = late.cancel.attach(flag.clone());
        assert!(!flag.load(Ordering::SeqCst));
        assert!(cancels.cancel(2));
        assert!(flag.load(Ordering::SeqCst));
        // The engine clears its flag at a statement's start; the cancel still holds.
        flag.store(false, Ordering::SeqCst);
        late.cancel.reassert(&flag);
        assert!(flag.load(Ordering::SeqCst));
        // Detached (the query ended): a cancel no longer reaches the thread's flag.
        drop(attached);
        flag.store(false, Ordering::SeqCst);
        assert!(cancels.cancel(2));
        assert!(!flag.load(Ordering::SeqCst));
    }

    #[test]
    fn a_query_handed_to_another_thread_keeps_that_threads_flag_attached() {
        let cancel = Arc::new(Cancel::default());
        let first = Arc::new(AtomicBool::new(false));
        let second = Arc::new(AtomicBool::new(false));
        let handed_over = cancel.attach(first.clone());
        let running = cancel.attach(second.clone());
        drop(handed_over);
        cancel.request();
        assert!(second.load(Ordering::SeqCst) && !first.load(Ordering::SeqCst));
        drop(running);
        assert!(cancel.engine().is_none());
    }

    #[test]
    fn a_dropped_request_stops_its_query_unless_complete() {
        let flag = Arc::new(AtomicBool::new(false));
        let gone = Arc::new(Cancel::default());
        let _attached = gone.attach(flag.clone());
        drop(StopOnDrop::new(gone.clone()));
        assert!(gone.requested() && flag.load(Ordering::SeqCst));

        let answered = Arc::new(Cancel::default());
        let mut stop = StopOnDrop::new(answered.clone());
        stop.complete();
        drop(stop);
        assert!(!answered.requested());
    }

    #[test]
    fn ids_are_unique_while_in_flight_and_leave_when_dropped() {
        let cancels = Arc::new(Cancels::default());
        let first = cancels.register(7).unwrap();
        assert!(cancels.register(7).unwrap_err().contains("already in use"));
        drop(first);
        assert!(cancels.is_empty());
        assert!(!cancels.cancel(7));
        assert!(cancels.register(7).is_ok());
    }
}

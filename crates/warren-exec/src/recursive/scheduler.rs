//! nTkS scheduling: n worker threads run the searches of many tasks (sources, or batches of
//! sources), at most k at a time. Each active search exposes the morsels of its current phase
//! (a BFS level, or a step of one); a free thread joins the active search that has unclaimed
//! morsels and the fewest threads, and the thread that completes a phase's last morsel advances
//! the search to its next phase. When a search finishes, the same thread starts the next task in
//! its slot. Claiming a morsel is one atomic add; the scheduler takes no lock on the hot path.
//! The calling thread runs the searches alone while it meets only single-morsel phases (a search
//! that reaches little never waits for a thread to be scheduled); the first time it claims a
//! morsel while another is unclaimed, it starts n - 1 threads of the database's worker pool
//! (`crate::workers`) and works on beside them (OPTIMIZATION_LOG entries 84 and 219).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use warren_common::{Error, Result};

use crate::context::Interrupt;
use crate::workers::WorkerPool;

/// A search that proceeds in barrier-separated phases, each cut into morsels.
///
/// `start`, `advance` and `finish` run exclusively (no `process` call is in flight on the
/// same search); `process` runs concurrently on many threads.
pub trait PhasedSearch: Sync {
    type Task: Sync;
    type Output: Send;

    /// Prepares the search of `task`; returns the morsels of its first phase (0: nothing to do).
    fn start(&self, task: &Self::Task) -> Result<usize>;
    /// Processes morsel `morsel` of the current phase.
    fn process(&self, morsel: usize) -> Result<()>;
    /// Completes the current phase; returns the morsels of the next one (0: finished).
    fn advance(&self) -> Result<usize>;
    /// The result of the finished search.
    fn finish(&self) -> Result<Self::Output>;
}

/// A search slot: the search object, reused from task to task, and its morsel counters.
struct Slot<'s, S> {
    search: &'s S,
    /// `morsels << 32 | next unclaimed morsel`: one word, so a claim sees a consistent phase.
    claim: AtomicU64,
    /// Morsels of the current phase not yet processed.
    remaining: AtomicUsize,
    /// Threads working on this slot now.
    threads: AtomicUsize,
    /// The task index running in the slot (`usize::MAX`: idle).
    task: AtomicUsize,
}

impl<S> Slot<'_, S> {
    fn publish(&self, morsels: usize) {
        assert!(
            morsels < u32::MAX as usize,
            "a phase has fewer than 2^32 morsels"
        );
        self.remaining.store(morsels, Ordering::Release);
        self.claim.store((morsels as u64) << 32, Ordering::Release);
    }

    fn has_work(&self) -> bool {
        let claim = self.claim.load(Ordering::Acquire);
        (claim & 0xffff_ffff) < (claim >> 32)
    }

    fn try_claim(&self) -> Option<usize> {
        let claim = self.claim.fetch_add(1, Ordering::AcqRel);
        let (morsels, next) = (claim >> 32, claim & 0xffff_ffff);
        (next < morsels).then_some(next as usize)
    }
}

/// Runs every task with `threads` threads and at most `slots.len()` searches active; the
/// outputs come back in task order.
pub fn run_tasks<S: PhasedSearch>(
    slots: &[S],
    tasks: &[S::Task],
    threads: usize,
    workers: &WorkerPool,
    interrupt: &Interrupt,
) -> Result<Vec<S::Output>> {
    assert!(!slots.is_empty(), "at least one search slot");
    let scheduler = Scheduler {
        slots: slots
            .iter()
            .map(|search| Slot {
                search,
                claim: AtomicU64::new(0),
                remaining: AtomicUsize::new(0),
                threads: AtomicUsize::new(0),
                task: AtomicUsize::new(usize::MAX),
            })
            .collect(),
        tasks,
        next_task: AtomicUsize::new(0),
        idle_slots: AtomicUsize::new(0),
        outputs: tasks.iter().map(|_| Mutex::new(None)).collect(),
        failed: AtomicBool::new(false),
        error: Mutex::new(None),
        interrupt,
    };
    for slot in &scheduler.slots {
        if let Err(error) = scheduler.activate(slot) {
            scheduler.fail(error);
        }
    }
    let threads = threads.max(1);
    if threads == 1 {
        scheduler.work(&mut None);
    } else {
        // The calling thread works alone until it meets more than its own morsel of work, then
        // beside `threads - 1` pool threads.
        let worker_loop = || scheduler.work(&mut None);
        workers.scope(|scope| {
            let mut workers: StartWorkers<'_> =
                Some(Box::new(|| scope.start(threads - 1, &worker_loop)));
            scheduler.work(&mut workers);
        });
    }
    if let Some(error) = scheduler.error.into_inner().expect("error lock") {
        return Err(error);
    }
    scheduler
        .outputs
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .expect("output lock")
                .ok_or_else(|| Error::internal("a scheduled search produced no result"))
        })
        .collect()
}

/// Starts the worker threads; taken (called once) by the calling thread when it first sees an
/// unclaimed morsel beside the one it claimed. `None`: nothing to start.
type StartWorkers<'f> = Option<Box<dyn FnOnce() + 'f>>;

struct Scheduler<'a, S: PhasedSearch> {
    slots: Vec<Slot<'a, S>>,
    tasks: &'a [S::Task],
    next_task: AtomicUsize,
    idle_slots: AtomicUsize,
    outputs: Vec<Mutex<Option<S::Output>>>,
    failed: AtomicBool,
    error: Mutex<Option<Error>>,
    interrupt: &'a Interrupt,
}

impl<S: PhasedSearch> Scheduler<'_, S> {
    fn fail(&self, error: Error) {
        let mut slot = self.error.lock().expect("error lock");
        if slot.is_none() {
            *slot = Some(error);
        }
        self.failed.store(true, Ordering::Release);
    }

    fn finished(&self) -> bool {
        self.failed.load(Ordering::Acquire)
            || self.idle_slots.load(Ordering::Acquire) == self.slots.len()
    }

    /// Starts the next task in `slot` (exclusive: the slot has no work in flight), or marks the
    /// slot idle when no task is left. Tasks with nothing to do finish on the spot.
    fn activate(&self, slot: &Slot<'_, S>) -> Result<()> {
        loop {
            let index = self.next_task.fetch_add(1, Ordering::AcqRel);
            let Some(task) = self.tasks.get(index) else {
                slot.task.store(usize::MAX, Ordering::Release);
                self.idle_slots.fetch_add(1, Ordering::AcqRel);
                return Ok(());
            };
            slot.task.store(index, Ordering::Release);
            let morsels = slot.search.start(task)?;
            if morsels > 0 {
                slot.publish(morsels);
                return Ok(());
            }
            self.store_output(slot)?;
        }
    }

    fn store_output(&self, slot: &Slot<'_, S>) -> Result<()> {
        let index = slot.task.load(Ordering::Acquire);
        let output = slot.search.finish()?;
        *self.outputs[index].lock().expect("output lock") = Some(output);
        Ok(())
    }

    /// The active slot with unclaimed morsels and the fewest threads.
    fn pick(&self) -> Option<&Slot<'_, S>> {
        self.slots
            .iter()
            .filter(|slot| slot.has_work())
            .min_by_key(|slot| slot.threads.load(Ordering::Relaxed))
    }

    fn work(&self, workers: &mut StartWorkers<'_>) {
        let mut idle_rounds = 0u32;
        while !self.finished() {
            let Some(slot) = self.pick() else {
                // Another thread is completing a phase or starting a task: wait briefly.
                idle_rounds += 1;
                if idle_rounds < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
                continue;
            };
            idle_rounds = 0;
            slot.threads.fetch_add(1, Ordering::AcqRel);
            let result = self.drain(slot, workers);
            slot.threads.fetch_sub(1, Ordering::AcqRel);
            if let Err(error) = result {
                self.fail(error);
            }
        }
    }

    /// Processes morsels of `slot` while it has some; the thread completing a phase advances it.
    /// When `workers` holds the workers and a claimed morsel left others unclaimed, starts them.
    fn drain(&self, slot: &Slot<'_, S>, workers: &mut StartWorkers<'_>) -> Result<()> {
        while let Some(morsel) = slot.try_claim() {
            if self.failed.load(Ordering::Acquire) {
                return Ok(());
            }
            if workers.is_some() && self.pick().is_some() {
                let start = workers.take().expect("workers not started yet");
                start();
            }
            self.interrupt.check()?;
            slot.search.process(morsel)?;
            if slot.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                self.complete_phase(slot)?;
            }
        }
        Ok(())
    }

    fn complete_phase(&self, slot: &Slot<'_, S>) -> Result<()> {
        let morsels = slot.search.advance()?;
        if morsels > 0 {
            slot.publish(morsels);
            return Ok(());
        }
        self.store_output(slot)?;
        self.activate(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Sums 0..n over `phases` phases of `morsels` morsels each, checking the barrier: every
    /// morsel of a phase sees the phase number its start or advance published.
    struct Summer {
        phase: AtomicUsize,
        phases: usize,
        morsels: usize,
        done_in_phase: AtomicUsize,
        total: AtomicU64,
    }

    impl PhasedSearch for Summer {
        type Task = u64;
        type Output = (u64, u64);

        fn start(&self, _task: &u64) -> Result<usize> {
            self.phase.store(0, Ordering::Relaxed);
            self.total.store(0, Ordering::Relaxed);
            self.done_in_phase.store(0, Ordering::Relaxed);
            Ok(self.morsels)
        }

        fn process(&self, morsel: usize) -> Result<()> {
            assert!(morsel < self.morsels);
            self.total.fetch_add(morsel as u64 + 1, Ordering::Relaxed);
            self.done_in_phase.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }

        fn advance(&self) -> Result<usize> {
            assert_eq!(self.done_in_phase.swap(0, Ordering::Relaxed), self.morsels);
            let phase = self.phase.fetch_add(1, Ordering::Relaxed) + 1;
            Ok(if phase < self.phases { self.morsels } else { 0 })
        }

        fn finish(&self) -> Result<(u64, u64)> {
            Ok((
                self.total.load(Ordering::Relaxed),
                self.phase.load(Ordering::Relaxed) as u64,
            ))
        }
    }

    fn summer(phases: usize, morsels: usize) -> Summer {
        Summer {
            phase: AtomicUsize::new(0),
            phases,
            morsels,
            done_in_phase: AtomicUsize::new(0),
            total: AtomicU64::new(0),
        }
    }

    #[test]
    fn every_task_runs_every_phase_with_any_threads_and_slots() {
        for threads in [1, 2, 4, 8] {
            for slots in [1, 2, 3, 8] {
                let tasks: Vec<u64> = (0..13).collect();
                let searches: Vec<Summer> = (0..slots).map(|_| summer(5, 37)).collect();
                let outputs = run_tasks(
                    &searches,
                    &tasks,
                    threads,
                    &WorkerPool::new(),
                    &Interrupt::none(),
                )
                .unwrap();
                assert_eq!(outputs.len(), tasks.len());
                for (total, phases) in outputs {
                    assert_eq!(total, 5 * (37 * 38 / 2));
                    assert_eq!(phases, 5);
                }
            }
        }
    }

    #[test]
    fn no_tasks_and_empty_tasks() {
        let outputs = run_tasks(
            &[summer(1, 1)],
            &[],
            4,
            &WorkerPool::new(),
            &Interrupt::none(),
        )
        .unwrap();
        assert!(outputs.is_empty());
        let outputs = run_tasks(
            &[summer(1, 0)],
            &[1, 2],
            4,
            &WorkerPool::new(),
            &Interrupt::none(),
        )
        .unwrap();
        assert_eq!(outputs, vec![(0, 0), (0, 0)]);
    }

    /// Records the threads that processed its morsels.
    struct ThreadRecorder {
        morsels: usize,
        threads: Mutex<Vec<std::thread::ThreadId>>,
    }

    impl PhasedSearch for ThreadRecorder {
        type Task = u32;
        type Output = ();

        fn start(&self, _task: &u32) -> Result<usize> {
            Ok(self.morsels)
        }

        fn process(&self, _morsel: usize) -> Result<()> {
            let id = std::thread::current().id();
            self.threads.lock().unwrap().push(id);
            Ok(())
        }

        fn advance(&self) -> Result<usize> {
            Ok(0)
        }

        fn finish(&self) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn single_morsel_phases_run_on_the_calling_thread() {
        let search = ThreadRecorder {
            morsels: 1,
            threads: Mutex::new(Vec::new()),
        };
        run_tasks(
            std::slice::from_ref(&search),
            &[1, 2, 3],
            4,
            &WorkerPool::new(),
            &Interrupt::none(),
        )
        .unwrap();
        let threads = search.threads.into_inner().unwrap();
        assert_eq!(threads.len(), 3);
        assert!(threads.iter().all(|&id| id == std::thread::current().id()));
    }

    #[test]
    fn the_caller_works_beside_pool_threads_on_a_phase_of_many_morsels() {
        let search = ThreadRecorder {
            morsels: 64,
            threads: Mutex::new(Vec::new()),
        };
        let pool = WorkerPool::new();
        run_tasks(
            std::slice::from_ref(&search),
            &[1],
            3,
            &pool,
            &Interrupt::none(),
        )
        .unwrap();
        let threads = search.threads.into_inner().unwrap();
        assert_eq!(threads.len(), 64);
        let caller = std::thread::current().id();
        assert!(
            threads.contains(&caller),
            "the caller took the first morsel"
        );
        assert_eq!(pool.threads(), 2, "two pool threads beside the caller");
    }

    struct Failing;

    impl PhasedSearch for Failing {
        type Task = u32;
        type Output = ();

        fn start(&self, _task: &u32) -> Result<usize> {
            Ok(4)
        }

        fn process(&self, morsel: usize) -> Result<()> {
            if morsel == 2 {
                return Err(Error::LimitExceeded("too big".into()));
            }
            Ok(())
        }

        fn advance(&self) -> Result<usize> {
            Ok(4)
        }

        fn finish(&self) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_first_error_stops_every_thread() {
        for threads in [1, 3] {
            let result = run_tasks(
                &[Failing, Failing],
                &[1, 2, 3],
                threads,
                &WorkerPool::new(),
                &Interrupt::none(),
            );
            assert!(matches!(result, Err(Error::LimitExceeded(_))));
        }
    }
}

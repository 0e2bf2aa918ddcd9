//! The worker threads that parallel loops run on, kept between loops and between queries.
//!
//! A query's parallel loop (`recursive::scheduler::run_tasks`, `recursive::morsels`) used to
//! spawn its threads and join them at the end. On a virtual machine whose idle vCPUs halt, a
//! new thread often waits for its vCPU to be scheduled again by the host, or is queued behind
//! its busy creator, before it runs: measured on the project's 2-vCPU guest, 0.2-2 ms from
//! `pthread_create` to the thread's first instruction after a 1-100 ms idle gap, against about
//! 45 µs when the other vCPU had just been busy (docs/OPTIMIZATION_LOG.md, entry 219). A
//! 2-ms query ran its first parallel level on one thread.
//!
//! Here a loop hands its closure to `n` threads of a pool and waits for them. A thread that
//! finished its part keeps polling for the next job for [`SPIN`] before it sleeps on a
//! condition variable, so back-to-back loops and queries find it running; every poll round
//! yields the CPU (`sched_yield`), so a spinning thread gives way at once to any other
//! runnable thread. A job never waits for a busy thread: when fewer threads are free than it
//! asks for, the pool starts more (a loop inside a job therefore cannot deadlock), and the
//! pool keeps at most [`IDLE_THREADS_MAX`] idle threads, the others exit.
//!
//! Limits: at most [`SPIN`] of CPU per thread after each job; threads in all are bounded by the
//! jobs running at once times their `n` (each at most `limits::THREADS_MAX`).

use std::any::Any;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// How long a thread that finished a part polls for the next before it sleeps.
pub const SPIN: Duration = Duration::from_micros(500);
/// Idle threads kept; a thread that would be one more exits.
pub const IDLE_THREADS_MAX: usize = 64;

/// A job's closure with its borrow's lifetime erased; the [`Scope`] that started it does not
/// end before every thread that took the job is done with it.
#[derive(Clone, Copy)]
struct Work(*const (dyn Fn() + Sync));

// SAFETY: the closure is `Sync`, so calling it from several threads through a shared pointer
// is sound; the scope that started it keeps it alive until every call returned.
unsafe impl Send for Work {}
// SAFETY: as for `Send`: the pointee is `Sync`.
unsafe impl Sync for Work {}

/// One job: its closure, the parts not finished, the first panic and who waits.
struct Job {
    work: Work,
    unfinished: AtomicUsize,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    caller: Thread,
}

#[derive(Default)]
struct Queue {
    /// Parts of jobs not taken yet (a job asking for `n` threads is here `n` times).
    parts: VecDeque<Arc<Job>>,
    /// Threads not running a part (polling or asleep).
    idle: usize,
    /// Of the idle threads, those asleep on the condition variable.
    sleeping: usize,
    /// Threads in the pool.
    threads: usize,
    /// The process the threads run in: a child forked from it has none of them.
    process: u32,
    shutdown: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    posted: Condvar,
    /// Parts in the queue, readable without the lock by polling threads.
    waiting_parts: AtomicUsize,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().expect("worker queue lock")
    }

    /// Takes a part if one waits, marking the thread busy.
    fn try_take(&self) -> Option<Arc<Job>> {
        if self.waiting_parts.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut queue = self.queue();
        let part = queue.parts.pop_front()?;
        self.waiting_parts.fetch_sub(1, Ordering::AcqRel);
        queue.idle -= 1;
        Some(part)
    }
}

/// Threads that run the parallel loops of one database's queries.
pub struct WorkerPool {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let queue = self.shared.queue();
        f.debug_struct("WorkerPool")
            .field("threads", &queue.threads)
            .field("idle", &queue.idle)
            .finish()
    }
}

impl Default for WorkerPool {
    fn default() -> Self {
        Self::new()
    }
}

impl WorkerPool {
    /// An empty pool; threads start with the first job that needs them.
    pub fn new() -> Self {
        WorkerPool {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue::default()),
                posted: Condvar::new(),
                waiting_parts: AtomicUsize::new(0),
            }),
        }
    }

    /// Threads in the pool now (busy or idle).
    pub fn threads(&self) -> usize {
        self.shared.queue().threads
    }

    /// Runs `work` once on each of `threads` pool threads at the same time and returns when
    /// all calls returned; a panic in one is raised again here once all are done.
    pub fn run(&self, threads: usize, work: &(dyn Fn() + Sync)) {
        self.scope(|scope| scope.start(threads, work));
    }

    /// Calls `body` with a [`Scope`] whose [`Scope::start`] hands closures that borrow from
    /// outside the scope to pool threads, and returns when `body` and every closure started
    /// in it returned (as `std::thread::scope` does for threads it spawns). A panic in
    /// `body` or in a started closure is raised again here, after all of them are done.
    pub fn scope<'env, T>(
        &'env self,
        body: impl for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
    ) -> T {
        let scope = Scope {
            pool: self,
            jobs: Mutex::new(Vec::new()),
            scope: PhantomData,
            env: PhantomData,
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| body(&scope)));
        let jobs = std::mem::take(&mut *scope.jobs.lock().expect("scope jobs lock"));
        for job in &jobs {
            wait_until_done(job);
        }
        let outcome = outcome.unwrap_or_else(|panic| resume_unwind(panic));
        for job in &jobs {
            if let Some(panic) = job.panic.lock().expect("job panic lock").take() {
                resume_unwind(panic);
            }
        }
        outcome
    }

    /// Queues `threads` parts of `job`, starting threads for the parts no idle thread can
    /// take first (a thread that cannot be started panics before any part is queued, so no
    /// caller waits for a part nobody takes), and wakes the sleeping ones.
    fn post(&self, job: &Arc<Job>, threads: usize) {
        let mut queue = self.shared.queue();
        if queue.process != std::process::id() {
            // A new pool, or a child forked from the process that started the threads: none
            // of them runs here, and parts left by the parent's callers have no one waiting.
            *queue = Queue {
                process: std::process::id(),
                ..Queue::default()
            };
            self.shared.waiting_parts.store(0, Ordering::Release);
        }
        let parts = queue.parts.len() + threads;
        // Polling threads take parts by themselves; wake sleepers for the rest.
        let to_wake = parts
            .saturating_sub(queue.idle - queue.sleeping)
            .min(queue.sleeping);
        for _ in queue.idle..parts {
            let shared = self.shared.clone();
            let started = thread::Builder::new()
                .name("warren-worker".into())
                .spawn(move || work_loop(&shared));
            if let Err(error) = started {
                drop(queue);
                panic!("cannot start a worker thread: {error}");
            }
            queue.threads += 1;
            queue.idle += 1;
        }
        for _ in 0..threads {
            queue.parts.push_back(job.clone());
        }
        self.shared
            .waiting_parts
            .fetch_add(threads, Ordering::AcqRel);
        drop(queue);
        for _ in 0..to_wake {
            self.shared.posted.notify_one();
        }
    }
}

/// Closures started on pool threads that must return before [`WorkerPool::scope`] does.
pub struct Scope<'scope, 'env: 'scope> {
    pool: &'env WorkerPool,
    jobs: Mutex<Vec<Arc<Job>>>,
    /// Invariant over `'scope` and `'env`, as `std::thread::Scope` is.
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

impl<'scope> Scope<'scope, '_> {
    /// Starts `work` on `threads` pool threads at once and returns without waiting; the
    /// scope waits for them before it ends.
    pub fn start(&'scope self, threads: usize, work: &'scope (dyn Fn() + Sync)) {
        if threads == 0 {
            return;
        }
        // SAFETY: only the lifetime is erased. The closure outlives `'scope`, and the scope
        // does not end before every part of this job is done (`WorkerPool::scope` waits for
        // each job it recorded, also when its body panicked); no part is left untaken, since
        // a thread is started for every part no idle thread takes.
        let work = Work(unsafe {
            std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync)>(work)
        });
        let job = Arc::new(Job {
            work,
            unfinished: AtomicUsize::new(threads),
            panic: Mutex::new(None),
            caller: thread::current(),
        });
        self.pool.post(&job, threads);
        self.jobs.lock().expect("scope jobs lock").push(job);
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shared.queue().shutdown = true;
        self.shared.posted.notify_all();
    }
}

/// Sleeps until the job's every part is done. The caller does not poll: its job's threads
/// hold the CPUs meanwhile (a polling caller took CPU from them: walk counts at scale 18 were
/// slower), and the thread that wakes it goes on polling for the next job, so the caller's
/// CPU is not idle when it is woken.
fn wait_until_done(job: &Job) {
    let done = || job.unfinished.load(Ordering::Acquire) == 0;
    while !done() {
        // The last part's thread unparks the caller after its count reached 0; a stray
        // unpark only makes this loop test again.
        thread::park();
    }
}

/// A pool thread: runs parts, polling for [`SPIN`] after each before it sleeps; exits at
/// shutdown or when it would be one idle thread too many.
fn work_loop(shared: &Shared) {
    loop {
        let mut polled_until = Instant::now() + SPIN;
        loop {
            if let Some(job) = shared.try_take() {
                run_part(&job, shared);
                polled_until = Instant::now() + SPIN;
                continue;
            }
            if Instant::now() >= polled_until {
                break;
            }
            thread::yield_now();
        }
        let mut queue = shared.queue();
        while queue.parts.is_empty() && !queue.shutdown {
            if queue.idle > IDLE_THREADS_MAX {
                queue.idle -= 1;
                queue.threads -= 1;
                return;
            }
            queue.sleeping += 1;
            queue = shared.posted.wait(queue).expect("worker queue lock");
            queue.sleeping -= 1;
        }
        if queue.shutdown && queue.parts.is_empty() {
            queue.idle -= 1;
            queue.threads -= 1;
            return;
        }
    }
}

/// Runs one part of `job`, then counts the thread idle before the part done, so that a job
/// posted as soon as this one ends finds the thread free instead of starting another.
fn run_part(job: &Job, shared: &Shared) {
    // SAFETY: the scope that started the job keeps the closure alive until this part is
    // counted done.
    let work = unsafe { &*job.work.0 };
    if let Err(panic) = catch_unwind(AssertUnwindSafe(work)) {
        job.panic
            .lock()
            .expect("job panic lock")
            .get_or_insert(panic);
    }
    shared.queue().idle += 1;
    let caller = job.caller.clone();
    if job.unfinished.fetch_sub(1, Ordering::AcqRel) == 1 {
        // `job` may be dropped by the caller from here on: only the clone is used.
        caller.unpark();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Barrier;

    #[test]
    fn every_thread_runs_the_closure_at_the_same_time() {
        let pool = WorkerPool::new();
        for threads in [1, 2, 4, 8] {
            // The barrier passes only when all `threads` calls run at once.
            let barrier = Barrier::new(threads);
            let calls = AtomicU64::new(0);
            pool.run(threads, &|| {
                barrier.wait();
                calls.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(calls.load(Ordering::Relaxed), threads as u64);
        }
        assert!(pool.threads() >= 8);
    }

    #[test]
    fn threads_are_kept_between_jobs() {
        let pool = WorkerPool::new();
        for _ in 0..100 {
            pool.run(2, &|| {});
        }
        assert_eq!(pool.threads(), 2);
    }

    #[test]
    fn a_job_inside_a_job_gets_its_own_threads() {
        let pool = WorkerPool::new();
        let inner_calls = AtomicU64::new(0);
        pool.run(2, &|| {
            pool.run(2, &|| {
                inner_calls.fetch_add(1, Ordering::Relaxed);
            });
        });
        assert_eq!(inner_calls.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn a_panic_is_raised_in_the_caller_after_the_other_parts() {
        let pool = WorkerPool::new();
        let finished = AtomicU64::new(0);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            pool.run(3, &|| {
                if finished.fetch_add(1, Ordering::SeqCst) == 0 {
                    panic!("part failed");
                }
            });
        }));
        assert!(outcome.is_err());
        assert_eq!(finished.load(Ordering::SeqCst), 3);
        // The pool still works.
        let calls = AtomicU64::new(0);
        pool.run(2, &|| {
            calls.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(calls.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn threads_counted_for_another_process_are_not_waited_for() {
        // As in a child forked after the pool's threads started: the pool counts two idle,
        // sleeping threads that do not run in this process. Without the reset the job would
        // wait for them forever.
        let pool = Arc::new(WorkerPool::new());
        {
            let mut queue = pool.shared.queue();
            queue.process = std::process::id().wrapping_add(1);
            queue.threads = 2;
            queue.idle = 2;
            queue.sleeping = 2;
        }
        let (done, finished) = std::sync::mpsc::channel();
        let runner = pool.clone();
        thread::spawn(move || {
            let calls = AtomicU64::new(0);
            runner.run(2, &|| {
                calls.fetch_add(1, Ordering::Relaxed);
            });
            done.send(calls.load(Ordering::Relaxed)).unwrap();
        });
        let calls = finished
            .recv_timeout(Duration::from_secs(10))
            .expect("the job ran on threads of this process");
        assert_eq!(calls, 2);
        assert_eq!(pool.threads(), 2);
    }

    #[test]
    fn concurrent_jobs_from_many_callers() {
        let pool = WorkerPool::new();
        let total = AtomicU64::new(0);
        thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        pool.run(3, &|| {
                            total.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 4 * 50 * 3);
    }
}

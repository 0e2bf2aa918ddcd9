//! Bounded polling before an I/O thread parks: halt-polling done in user space.
//!
//! This VM's guest halts an idle vCPU at once (`haltpoll`, `guest_halt_poll_ns = 0`), so a
//! request that arrives while its I/O thread sleeps in `epoll_wait` pays a VM exit and an
//! interprocessor interrupt before the thread runs (tens of microseconds). For a bounded
//! `window` after the thread finished answering a request, its runtime's park hook
//! ([`before_park`], tokio's `on_thread_park`) polls the sockets of the thread's connections
//! (and the listener, on the accepting thread) with `poll(.., 0)` instead of letting the
//! thread sleep, and returns at once when one is readable (or closed) or the window ends: a
//! client's next request on a keep-alive connection finds the thread awake.
//!
//! Cost and limits: at most `window` of one CPU per request answered, none once a thread has
//! been idle longer than the window. The window adapts as the kernel's halt-polling does
//! ([`adapt`]): it shrinks to 0 on a thread whose requests come further apart. No spin while
//! one of the thread's requests is in flight (its wake-up comes from a query thread or the
//! client's reading, not a readable socket); at most one I/O thread of a server spins at a
//! time (a 2-core machine keeps a core for the query threads), and only while the server has
//! a single client connection (one client's request-answer loop, not a load); every round
//! yields the CPU (`sched_yield`), and a yield that let another thread run with nothing
//! readable after it ends the spin and pauses spinning for [`CONTENDED_PAUSE`]: that vCPU is
//! busy, so it will not halt. What the spin cannot see (an answer from a query thread handed
//! to this thread's runtime, a connection handed over by the accepting thread, a timer) waits
//! at most until the window ends.

use std::cell::RefCell;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The window unless `--io-spin-us` says otherwise. On a guest that halts idle vCPUs at once a
/// 100 µs window brings the one-row overhead from about 100 to 60 µs for a blocking client and
/// to about 30 µs for a polling one (`warren-client` polls by default). It spins only while
/// the server has a single client connection (OPTIMIZATION_LOG 260): spinning for every
/// connection cost the mix at 5,000/s about 3% on its P99 on a 2-vCPU machine shared with the
/// load generator (161, 202).
pub const SPIN_US_DEFAULT: u64 = 100;
/// The largest window accepted: beyond it the spin would cost more CPU than a wake-up saves.
pub const SPIN_US_MAX: u64 = 1_000;
/// A `sched_yield` that took longer than this gave the CPU to another thread: the vCPU is
/// not idle, so it will not halt, and spinning on would only spend the thread's share of it
/// (a thread that wakes from sleep is scheduled sooner than one that has been running).
const YIELD_LOST: Duration = Duration::from_micros(20);
/// After a spin gave way to another thread, the thread does not spin for this long: each
/// such yield may hand a whole time slice to another process while a request waits. Short
/// enough that one stray contention (a timer, another thread's wake-up) does not switch the
/// spin off for a whole run of requests, as 1 s did (OPTIMIZATION_LOG 202).
pub const CONTENDED_PAUSE: Duration = Duration::from_millis(10);

/// What a server's I/O threads share: the rule that one spins at a time, and counts of how
/// spins ended.
#[derive(Debug, Default)]
pub struct Spinners {
    spinning: AtomicBool,
    /// Client connections open on the server's I/O threads ([`watch_connection`]).
    connections: AtomicUsize,
    /// Spins that ended because a watched socket became readable.
    pub woken: AtomicU64,
    /// Spins that ran to the end of the window.
    pub expired: AtomicU64,
    /// Spins given up because another thread wanted the CPU.
    pub contended: AtomicU64,
    /// Time spent spinning, all spins together, in microseconds (an upper bound of their CPU
    /// time: a yield that let another thread run counts too).
    pub spun_us: AtomicU64,
}

/// One I/O thread's spin state, shared with the requests it serves (their guards may be
/// dropped on another thread, hence the atomics).
#[derive(Debug)]
pub struct Spin {
    window: Duration,
    epoch: Instant,
    in_flight: AtomicUsize,
    /// Nanoseconds from `epoch` to the end of the last request, plus one; 0: none yet.
    last_done: AtomicU64,
    spinners: Arc<Spinners>,
}

impl Spin {
    pub fn new(window: Duration, spinners: Arc<Spinners>) -> Arc<Self> {
        assert!(
            window <= Duration::from_micros(SPIN_US_MAX),
            "the spin window is bounded"
        );
        Arc::new(Spin {
            window,
            epoch: Instant::now(),
            in_flight: AtomicUsize::new(0),
            last_done: AtomicU64::new(0),
            spinners,
        })
    }

    /// A request of this thread arrived.
    pub fn request_started(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// A request of this thread was answered (its body dropped) at `now`.
    pub fn request_done(&self, now: Instant) {
        let previous = self.in_flight.fetch_sub(1, Ordering::Relaxed);
        assert!(previous > 0, "a request ends only once it started");
        let nanos = now.saturating_duration_since(self.epoch).as_nanos();
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX - 1) + 1;
        self.last_done.fetch_max(nanos, Ordering::Relaxed);
    }

    /// Until when the thread may poll instead of parking at `now` with a window of `window`
    /// (at most the configured one); `None`: park at once (a zero window, a request in
    /// flight, none answered yet, or the window is over).
    pub fn deadline(&self, now: Instant, window: Duration) -> Option<Instant> {
        let window = window.min(self.window);
        if window.is_zero() || self.in_flight.load(Ordering::Relaxed) > 0 {
            return None;
        }
        let last_done = self.last_done.load(Ordering::Relaxed);
        if last_done == 0 {
            return None;
        }
        let deadline = self.epoch + Duration::from_nanos(last_done - 1) + window;
        (now < deadline).then_some(deadline)
    }
}

/// The smallest window a grown window starts from; a window halved below it becomes 0.
const WINDOW_START: Duration = Duration::from_micros(10);

/// The next park's window after a park that could have spun (the configured window allowed
/// it) and was left after `idle` (from the park hook to the runtime's wake-up), as the
/// kernel's halt-polling adapts its own (`halt_poll_ns`): a wake-up that a spin of at most
/// `max` would have caught grows the window (doubled, from [`WINDOW_START`]); a spin that
/// ran out halves it, down to 0; one that gave way to another thread sets it to 0 (the
/// caller also pauses spinning for [`CONTENDED_PAUSE`]). So a thread whose requests come
/// further apart than `max`, or whose vCPU is busy, soon stops spending CPU on spins, and
/// one whose requests come close together soon spins again.
pub fn adapt(current: Duration, max: Duration, spun: Option<Ended>, idle: Duration) -> Duration {
    let grow = || (current * 2).max(WINDOW_START).min(max);
    let shrink = || {
        let half = current / 2;
        if half < WINDOW_START {
            Duration::ZERO
        } else {
            half
        }
    };
    match spun {
        Some(Ended::Contended) => Duration::ZERO,
        Some(Ended::Ready) => grow(),
        _ if idle <= max => grow(),
        Some(Ended::Expired) => shrink(),
        None => current,
    }
}

/// The current thread's spin state and the sockets it watches.
struct ThreadSpin {
    spin: Arc<Spin>,
    fds: Vec<RawFd>,
    /// The window of the next spin, adapted at every wake-up ([`adapt`]).
    window: Duration,
    /// When the park hook of a park that could have spun began; taken at the wake-up.
    eligible_since: Option<Instant>,
    /// How that park's spin ended (`None`: it did not spin).
    spun: Option<Ended>,
    /// `poll`'s array, kept between spins.
    polled: Vec<libc::pollfd>,
    /// No spin before this (set when a spin gave way to another thread).
    paused_until: Option<Instant>,
}

thread_local! {
    static THREAD: RefCell<Option<ThreadSpin>> = const { RefCell::new(None) };
}

/// Makes `spin` the current thread's (an I/O thread, once, before it runs its runtime).
pub fn install(spin: Arc<Spin>) {
    THREAD.with(|thread| {
        let mut thread = thread.borrow_mut();
        assert!(thread.is_none(), "an I/O thread installs its spin once");
        let window = spin.window;
        *thread = Some(ThreadSpin {
            spin,
            fds: Vec::new(),
            window,
            eligible_since: None,
            spun: None,
            polled: Vec::new(),
            paused_until: None,
        });
    });
}

/// The current thread's spin state, if it is an I/O thread.
pub fn current() -> Option<Arc<Spin>> {
    THREAD.with(|thread| thread.borrow().as_ref().map(|t| t.spin.clone()))
}

/// A socket watched by the current thread's spin while this lives.
#[must_use]
pub struct Watched {
    fd: Option<RawFd>,
    /// A client connection's: the count of open connections it is in.
    connection: Option<Arc<Spinners>>,
}

/// Watches `fd` (the listener) on the current thread; nothing on a thread without a spin
/// state.
pub fn watch(fd: RawFd) -> Watched {
    watch_as(fd, false)
}

/// Watches a client connection's socket `fd` on the current thread and counts it among the
/// server's open connections while the guard lives (the spin serves a lone connection only).
pub fn watch_connection(fd: RawFd) -> Watched {
    watch_as(fd, true)
}

fn watch_as(fd: RawFd, connection: bool) -> Watched {
    let spinners = THREAD.with(|thread| {
        thread.borrow_mut().as_mut().map(|t| {
            t.fds.push(fd);
            t.spin.spinners.clone()
        })
    });
    let fd = spinners.is_some().then_some(fd);
    let connection = spinners.filter(|_| connection);
    if let Some(spinners) = &connection {
        spinners.connections.fetch_add(1, Ordering::Relaxed);
    }
    Watched { fd, connection }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(spinners) = self.connection.take() {
            let before = spinners.connections.fetch_sub(1, Ordering::Relaxed);
            assert!(before > 0, "a connection is counted once");
        }
        let Some(fd) = self.fd else { return };
        // `try_with`: a thread's locals may already be gone when its runtime drops a task.
        let _ = THREAD.try_with(|thread| {
            if let Some(t) = thread.borrow_mut().as_mut() {
                if let Some(at) = t.fds.iter().position(|&f| f == fd) {
                    t.fds.swap_remove(at);
                }
            }
        });
    }
}

/// How a spin ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// A watched socket is readable, closed or in error (or `poll` failed).
    Ready,
    /// The deadline passed with nothing readable.
    Expired,
    /// Yielding the CPU between rounds let another thread run: the CPU is not idle.
    Contended,
}

/// The runtime's park hook: polls the current thread's sockets until one is readable, the
/// spin's deadline passes or another thread wants the CPU; returns at once where no spin is
/// due or another I/O thread spins.
pub fn before_park() {
    let _ = THREAD.try_with(|thread| {
        let mut thread = thread.borrow_mut();
        let Some(t) = thread.as_mut() else { return };
        let now = Instant::now();
        t.eligible_since = None;
        t.spun = None;
        if t.paused_until.is_some_and(|until| now < until) {
            return;
        }
        // Only a server with one client connection spins: that client's next request is the
        // one to catch, and with more connections the server is under concurrent load, where
        // a core spent spinning is one taken from the queries (OPTIMIZATION_LOG 260).
        if t.spin.spinners.connections.load(Ordering::Relaxed) != 1 {
            return;
        }
        if t.spin.deadline(now, t.spin.window).is_none() {
            return;
        }
        t.eligible_since = Some(now);
        let Some(deadline) = t.spin.deadline(now, t.window) else {
            return;
        };
        let spinners = &t.spin.spinners;
        if spinners
            .spinning
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        t.polled.clear();
        t.polled.extend(t.fds.iter().map(|&fd| readable(fd)));
        let ended = poll_until(&mut t.polled, deadline);
        spinners.spinning.store(false, Ordering::Release);
        let spun_us = u64::try_from(now.elapsed().as_micros()).unwrap_or(u64::MAX);
        spinners.spun_us.fetch_add(spun_us, Ordering::Relaxed);
        let counter = match ended {
            Ended::Ready => &spinners.woken,
            Ended::Expired => &spinners.expired,
            Ended::Contended => &spinners.contended,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        t.spun = Some(ended);
    });
}

/// The runtime's wake-up hook: adapts the thread's window to how long the park that could
/// have spun lasted ([`adapt`]).
pub fn after_unpark() {
    let _ = THREAD.try_with(|thread| {
        let mut thread = thread.borrow_mut();
        let Some(t) = thread.as_mut() else { return };
        let Some(since) = t.eligible_since.take() else {
            return;
        };
        let spun = t.spun.take();
        if spun == Some(Ended::Contended) {
            t.paused_until = Some(Instant::now() + CONTENDED_PAUSE);
        }
        t.window = adapt(t.window, t.spin.window, spun, since.elapsed());
    });
}

fn readable(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// Polls `fds` without blocking, yielding the CPU between rounds, until one has an event,
/// `deadline` passes (at least one round) or a yield lets another thread run and nothing is
/// readable after it. (The thread the yield let run may be the client, on the same vCPU,
/// sending the next request: the kernel puts a thread woken by a socket beside its waker.)
pub fn poll_until(fds: &mut [libc::pollfd], deadline: Instant) -> Ended {
    let count = libc::nfds_t::try_from(fds.len()).expect("a thread's sockets fit poll's count");
    let mut poll = || {
        // SAFETY: `fds` is a valid, exclusively borrowed array of `count` pollfd structures.
        unsafe { libc::poll(fds.as_mut_ptr(), count, 0) != 0 }
    };
    loop {
        if poll() {
            return Ended::Ready;
        }
        let before_yield = Instant::now();
        if before_yield >= deadline {
            return Ended::Expired;
        }
        std::thread::yield_now();
        if before_yield.elapsed() > YIELD_LOST {
            return if poll() {
                Ended::Ready
            } else {
                Ended::Contended
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    fn spin(window_us: u64) -> Arc<Spin> {
        Spin::new(
            Duration::from_micros(window_us),
            Arc::new(Spinners::default()),
        )
    }

    #[test]
    fn no_spin_before_a_request_was_answered_nor_while_one_is_in_flight() {
        let spin = spin(100);
        let now = Instant::now();
        assert_eq!(spin.deadline(now, spin.window), None);
        spin.request_started();
        spin.request_done(now);
        assert_eq!(
            spin.deadline(now, spin.window),
            Some(now + Duration::from_micros(100))
        );
        spin.request_started();
        assert_eq!(spin.deadline(now, spin.window), None, "a request in flight");
        spin.request_done(now);
        assert!(spin.deadline(now, spin.window).is_some());
    }

    #[test]
    fn the_window_runs_from_the_last_answer_and_ends() {
        let spin = spin(100);
        let done = Instant::now();
        spin.request_started();
        spin.request_done(done);
        let deadline = done + Duration::from_micros(100);
        assert_eq!(
            spin.deadline(done + Duration::from_micros(99), spin.window),
            Some(deadline)
        );
        assert_eq!(spin.deadline(deadline, spin.window), None);
        assert_eq!(
            spin.deadline(done + Duration::from_secs(1), spin.window),
            None
        );
        // An earlier answer ending later (guards drop in any order) does not move it back.
        spin.request_started();
        spin.request_done(done - Duration::from_micros(50));
        assert_eq!(spin.deadline(done, spin.window), Some(deadline));
    }

    #[test]
    fn a_zero_window_never_spins() {
        let spin = spin(0);
        let now = Instant::now();
        spin.request_started();
        spin.request_done(now);
        assert_eq!(spin.deadline(now, spin.window), None);
    }

    #[test]
    fn the_window_grows_when_a_spin_would_catch_the_wake_up_and_shrinks_when_it_ran_out() {
        let us = Duration::from_micros;
        let max = us(100);
        // Woken within the configured window: grow, from the start size, doubling, capped.
        assert_eq!(adapt(us(0), max, None, us(40)), WINDOW_START);
        assert_eq!(adapt(us(10), max, Some(Ended::Expired), us(40)), us(20));
        assert_eq!(adapt(us(80), max, Some(Ended::Ready), us(0)), max);
        assert_eq!(adapt(max, max, Some(Ended::Ready), us(0)), max);
        // Ran out and slept past the window, or gave way to another thread: halve, then 0.
        assert_eq!(adapt(max, max, Some(Ended::Expired), us(5_000)), us(50));
        assert_eq!(
            adapt(us(50), max, Some(Ended::Contended), us(1)),
            Duration::ZERO
        );
        assert_eq!(
            adapt(us(15), max, Some(Ended::Expired), us(5_000)),
            Duration::ZERO
        );
        // Did not spin and slept long: unchanged.
        assert_eq!(adapt(us(0), max, None, us(5_000)), Duration::ZERO);
        assert_eq!(adapt(us(40), max, None, us(5_000)), us(40));
        // A window adapted to zero never spins; a shorter one ends sooner.
        let spin = spin(100);
        let now = Instant::now();
        spin.request_started();
        spin.request_done(now);
        assert_eq!(spin.deadline(now, Duration::ZERO), None);
        assert_eq!(spin.deadline(now, us(30)), Some(now + us(30)));
        assert_eq!(
            spin.deadline(now, us(500)),
            Some(now + max),
            "capped at the configured"
        );
    }

    #[test]
    #[should_panic(expected = "bounded")]
    fn a_window_beyond_the_limit_is_refused() {
        spin(SPIN_US_MAX + 1);
    }

    #[test]
    fn polling_stops_at_once_on_a_readable_socket_and_at_the_deadline_otherwise() {
        let (mut writer, reader) = UnixStream::pair().unwrap();
        let (_quiet_writer, quiet) = UnixStream::pair().unwrap();
        let far = Instant::now() + Duration::from_secs(3600);
        writer.write_all(b"x").unwrap();
        let mut fds = [readable(quiet.as_raw_fd()), readable(reader.as_raw_fd())];
        assert_eq!(poll_until(&mut fds, far), Ended::Ready);

        let mut fds = [readable(quiet.as_raw_fd())];
        let window = Duration::from_millis(2);
        let started = Instant::now();
        // On a busy machine a yield may let another thread run first: the spin gives up.
        match poll_until(&mut fds, started + window) {
            Ended::Expired => assert!(started.elapsed() >= window),
            ended => assert_eq!(ended, Ended::Contended),
        }
        // A closed peer is an event too: the connection's task must run.
        drop(_quiet_writer);
        assert_eq!(poll_until(&mut fds, far), Ended::Ready);
    }

    /// Spins that saw no readable socket: expired, or given up on a busy machine.
    fn ended_without_data(spinners: &Spinners) -> u64 {
        spinners.expired.load(Ordering::Relaxed) + spinners.contended.load(Ordering::Relaxed)
    }

    /// How far ahead the park hook test stamps its answers, so that a test thread scheduled
    /// late on a busy machine still finds the window open when it calls the hook (the window
    /// runs from the answer's stamp, not from the call).
    const STAMP_AHEAD: Duration = Duration::from_millis(200);

    #[test]
    fn the_park_hook_spins_only_on_an_installed_thread_and_only_after_an_answer() {
        std::thread::spawn(|| {
            // Not an I/O thread: nothing happens.
            before_park();
            assert!(current().is_none());
            let spinners = Arc::new(Spinners::default());
            install(Spin::new(
                Duration::from_micros(SPIN_US_MAX),
                spinners.clone(),
            ));
            let (mut writer, reader) = UnixStream::pair().unwrap();
            let _watched = watch_connection(reader.as_raw_fd());
            before_park();
            assert_eq!(ended_without_data(&spinners), 0, "nothing answered yet");
            let spin = current().unwrap();
            spin.request_started();
            spin.request_done(Instant::now() + STAMP_AHEAD);
            before_park();
            assert_eq!(ended_without_data(&spinners), 1);
            // The spin saw nothing and the thread slept past the window: the window halves.
            std::thread::sleep(Duration::from_millis(2));
            let contended = spinners.contended.load(Ordering::Relaxed) == 1;
            after_unpark();
            THREAD.with(|t| {
                let mut t = t.borrow_mut();
                let t = t.as_mut().unwrap();
                if contended {
                    // Another thread took the CPU (a busy machine): no spin for a while.
                    assert_eq!(t.window, Duration::ZERO);
                    assert!(t.paused_until.is_some());
                    t.window = Duration::from_micros(SPIN_US_MAX / 2);
                    t.paused_until = None;
                }
                assert_eq!(t.window, Duration::from_micros(SPIN_US_MAX / 2));
            });
            // The window is over: no second spin.
            std::thread::sleep(STAMP_AHEAD + Duration::from_millis(3));
            before_park();
            assert_eq!(ended_without_data(&spinners), 1);
            spin.request_started();
            spin.request_done(Instant::now() + STAMP_AHEAD);
            writer.write_all(b"x").unwrap();
            before_park();
            assert_eq!(spinners.woken.load(Ordering::Relaxed), 1);
            // A second client connection open: no spin while it is.
            let (_other_writer, other) = UnixStream::pair().unwrap();
            let second = watch_connection(other.as_raw_fd());
            assert_eq!(spinners.connections.load(Ordering::Relaxed), 2);
            spin.request_started();
            spin.request_done(Instant::now() + STAMP_AHEAD);
            before_park();
            assert_eq!(spinners.woken.load(Ordering::Relaxed), 1);
            assert_eq!(ended_without_data(&spinners), 1);
            drop(second);
            assert_eq!(spinners.connections.load(Ordering::Relaxed), 1);
            // Another thread spinning: this one parks at once.
            spinners.spinning.store(true, Ordering::Relaxed);
            spin.request_started();
            spin.request_done(Instant::now() + STAMP_AHEAD);
            before_park();
            assert_eq!(spinners.woken.load(Ordering::Relaxed), 1);
            assert_eq!(ended_without_data(&spinners), 1);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_watched_socket_is_forgotten_when_its_guard_drops() {
        std::thread::spawn(|| {
            install(Spin::new(Duration::from_micros(10), Arc::default()));
            let first = watch(3);
            let second = watch(4);
            drop(first);
            THREAD.with(|t| assert_eq!(t.borrow().as_ref().unwrap().fds, [4]));
            drop(second);
            THREAD.with(|t| assert!(t.borrow().as_ref().unwrap().fds.is_empty()));
        })
        .join()
        .unwrap();
    }
}

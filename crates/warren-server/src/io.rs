//! The I/O threads: [`crate::IO_THREADS`] OS threads, each running its own single-threaded
//! tokio runtime. The first also accepts; each accepted connection is handed to the thread
//! serving the fewest connections and stays there until it closes, so a connection's task
//! never migrates and serving a request wakes no other I/O thread (a multi-threaded runtime
//! requeues a task woken while it runs and wakes a parked worker to steal it: a third wake-up
//! per request on a machine whose idle vCPUs halt).
//!
//! The rules that span threads are shared values, not a runtime's: the connection cap and the
//! refused-connection cap are semaphores, the stop is a watch channel every connection
//! listens to. On stop the acceptor ends, which closes the hand-over channels; each thread
//! then lets its connections finish their requests in flight and returns.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use warren::Error;

use crate::http;
use crate::spin;

/// One I/O thread's runtime: single-threaded, with I/O, timers and signals.
pub fn runtime() -> Result<Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(spin::before_park)
        .on_thread_unpark(spin::after_unpark)
        .build()
        .map_err(|e| Error::Io(format!("starting the server's runtime: {e}")))
}

/// What the accepting thread needs.
pub struct Acceptor {
    pub listener: TcpListener,
    pub stopped: watch::Receiver<bool>,
    pub connections_max: usize,
}

/// An accepted connection on its way to its I/O thread.
struct Accepted {
    /// Taken out of the acceptor's runtime; registered again with the serving thread's.
    stream: std::net::TcpStream,
    slot: Slot,
    /// The serving thread's count of connections, held until the connection closes.
    served: Served,
}

/// Starts one thread per runtime (the first also accepts from `acceptor`), each polling its
/// sockets for up to `spin`'s window after an answer before it parks (`crate::spin`); the
/// threads return once a stop was requested and every connection they served has closed.
pub fn start(
    runtimes: Vec<Runtime>,
    acceptor: Acceptor,
    state: Arc<http::State>,
    spin: (Duration, Arc<spin::Spinners>),
) -> Result<Vec<JoinHandle<()>>, Error> {
    assert!(!runtimes.is_empty(), "the server needs an I/O thread");
    let mut senders = Vec::with_capacity(runtimes.len());
    let mut receivers = Vec::with_capacity(runtimes.len());
    for _ in &runtimes {
        let (sender, receiver) = mpsc::unbounded_channel::<Accepted>();
        senders.push(sender);
        receivers.push(receiver);
    }
    let counts: Arc<[AtomicUsize]> = runtimes.iter().map(|_| AtomicUsize::new(0)).collect();
    let stopped = acceptor.stopped.clone();
    let mut acceptor = Some((acceptor, senders));
    let mut threads = Vec::with_capacity(runtimes.len());
    for (index, (runtime, incoming)) in runtimes.into_iter().zip(receivers).enumerate() {
        let accepting = acceptor.take();
        let state = state.clone();
        let counts = counts.clone();
        let stopped = stopped.clone();
        let (window, spinners) = (spin.0, spin.1.clone());
        let thread = std::thread::Builder::new()
            .name(format!("warren-io-{index}"))
            .spawn(move || {
                spin::install(spin::Spin::new(window, spinners));
                let served = serve(incoming, state, stopped);
                match accepting {
                    Some((acceptor, senders)) => {
                        let accepted = accept(acceptor, senders, counts);
                        runtime.block_on(async { tokio::join!(accepted, served) });
                    }
                    None => runtime.block_on(served),
                }
                // Tasks spawned on the runtime beside the connections (the signal watch).
                runtime.shutdown_timeout(Duration::from_secs(1));
            })
            .map_err(|e| Error::Io(format!("starting an I/O thread: {e}")))?;
        threads.push(thread);
    }
    Ok(threads)
}

/// Serves the connections handed to this thread until the hand-over channel closes (the
/// acceptor stopped), then waits for them to close.
async fn serve(
    mut incoming: mpsc::UnboundedReceiver<Accepted>,
    state: Arc<http::State>,
    stopped: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    while let Some(accepted) = incoming.recv().await {
        connections.spawn(connection(accepted, state.clone(), stopped.clone()));
        while connections.try_join_next().is_some() {}
    }
    while connections.join_next().await.is_some() {}
}

/// Serves one connection on the current thread until it closes, or until a stop is requested
/// and its request in flight is answered.
async fn connection(
    accepted: Accepted,
    state: Arc<http::State>,
    mut stopped: watch::Receiver<bool>,
) {
    let Accepted {
        stream,
        slot,
        served: _served,
    } = accepted;
    let _watched = spin::watch_connection(stream.as_raw_fd());
    let Ok(stream) = TcpStream::from_std(stream) else {
        return;
    };
    let refuse = slot.refuse;
    let _slot = slot;
    let service = service_fn(move |request| {
        let state = state.clone();
        async move {
            if refuse {
                http::too_many_connections(request, state).await
            } else {
                http::handle(request, state).await
            }
        }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(crate::HEADER_READ_TIMEOUT)
        .keep_alive(!refuse)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => {}
        () = stop_requested(&mut stopped) => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// Returns once a stop was requested (at once if it already was).
async fn stop_requested(stopped: &mut watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}

/// Accepts until a stop is requested, handing each connection to the I/O thread serving the
/// fewest; dropping `senders` at the end closes every thread's hand-over channel.
async fn accept(
    acceptor: Acceptor,
    senders: Vec<mpsc::UnboundedSender<Accepted>>,
    counts: Arc<[AtomicUsize]>,
) {
    let Acceptor {
        listener,
        mut stopped,
        connections_max,
    } = acceptor;
    let _watched = spin::watch(listener.as_raw_fd());
    let slots = Arc::new(Semaphore::new(connections_max));
    let refusals = Arc::new(Semaphore::new(crate::REFUSED_CONNECTIONS_MAX));
    let mut next = 0;
    loop {
        // A slot to serve the next connection, or one to refuse it with a 503.
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => Slot::serve(slot.expect("the semaphore is never closed")),
            refusal = refusals.clone().acquire_owned(), if slots.available_permits() == 0 => Slot {
                refuse: true,
                _permit: refusal.expect("the semaphore is never closed"),
            },
            () = stop_requested(&mut stopped) => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors and the like: wait a little rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = stop_requested(&mut stopped) => break,
        };
        // A slot freed while this one waited for the connection: serve rather than refuse.
        let slot = match slots.clone().try_acquire_owned() {
            Ok(permit) if slot.refuse => Slot::serve(permit),
            _ => slot,
        };
        let _ = stream.set_nodelay(true);
        // Out of this runtime's reactor, to be registered with the serving thread's.
        let Ok(stream) = stream.into_std() else {
            continue;
        };
        let target = fewest(&counts, next);
        next = (target + 1) % counts.len();
        let accepted = Accepted {
            stream,
            slot,
            served: Served::new(counts.clone(), target),
        };
        // A thread's channel closes only when its runtime stopped: the connection is dropped.
        let _ = senders[target].send(accepted);
    }
}

/// The index of the smallest count, the first such from `start` on (ties go round).
fn fewest(counts: &[AtomicUsize], start: usize) -> usize {
    let n = counts.len();
    (0..n)
        .map(|offset| (start + offset) % n)
        .min_by_key(|&index| counts[index].load(Ordering::Relaxed))
        .expect("at least one I/O thread")
}

/// One connection counted on its serving thread while it lives.
struct Served {
    counts: Arc<[AtomicUsize]>,
    index: usize,
}

impl Served {
    fn new(counts: Arc<[AtomicUsize]>, index: usize) -> Self {
        counts[index].fetch_add(1, Ordering::Relaxed);
        Served { counts, index }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.counts[self.index].fetch_sub(1, Ordering::Relaxed);
    }
}

/// What an accepted connection holds until it closes: a permit of the served connections, or
/// of those refused with a 503.
struct Slot {
    refuse: bool,
    _permit: OwnedSemaphorePermit,
}

impl Slot {
    fn serve(permit: OwnedSemaphorePermit) -> Self {
        Slot {
            refuse: false,
            _permit: permit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_goes_to_the_thread_serving_fewest_and_ties_go_round() {
        let counts: Arc<[AtomicUsize]> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        assert_eq!(fewest(&counts, 0), 0);
        assert_eq!(fewest(&counts, 1), 1);
        assert_eq!(fewest(&counts, 2), 2);
        let first = Served::new(counts.clone(), 0);
        let _second = Served::new(counts.clone(), 1);
        assert_eq!(fewest(&counts, 0), 2);
        drop(first);
        assert_eq!(fewest(&counts, 1), 2);
        assert_eq!(fewest(&counts, 0), 0);
        assert_eq!(counts[0].load(Ordering::Relaxed), 0);
    }
}

//! `warren serve`: Warren over HTTP/1.1.
//!
//! `POST /query` takes `{"query": "...", "parameters": {...}}` and answers JSON, or the binary
//! wire format (`docs/format/wire.md`) when the request says
//! `Accept: application/x-warren-bincode`; a binary body (`warren_wire::QueryRequest`) carries
//! typed parameters and may ask for every statement's result. `POST /cancel` stops a query in
//! flight by the id its request carried. `GET /health` answers `ok`; `GET /metrics` the
//! Prometheus text exposition. Queries run on a fixed pool of query threads fed by a bounded
//! queue (full: 503 with `Retry-After`); the I/O threads (`io`: one single-threaded tokio
//! runtime each, a connection never leaves its thread) move bytes, and answer themselves the
//! queries known to be small and quick (`inline`). See `docs/SERVER.md`.

mod body;
pub mod cancel;
pub mod config;
pub mod guard;
mod http;
pub mod inline;
mod io;
pub mod lane;
pub mod metrics;
pub mod pool;
pub mod request;
pub mod spin;

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::StatusCode;
use tokio::net::TcpListener;
use tokio::sync::watch;
use warren::{Database, DatabaseOptions, Error};

pub use config::Config;
pub use http::{equal_in_constant_time, WIRE_CONTENT_TYPE};
pub use metrics::Metrics;

/// Threads that accept connections and move bytes, each with its own single-threaded runtime
/// (queries run on the query threads; see `io`).
pub const IO_THREADS: usize = 2;
/// A client must send a request's headers within this time.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections accepted beyond `--max-connections` only to be answered 503 and closed; more
/// than this wait in the kernel's backlog.
pub const REFUSED_CONNECTIONS_MAX: usize = 64;

/// The line the command line prints after `Error: ` for an error: a syntax error's first line
/// (without the quoted statement and caret), other errors' lines joined.
pub fn error_line(error: &Error) -> String {
    let text = error.to_string();
    if matches!(error, Error::Syntax { .. }) {
        text.split('\n').next().unwrap_or_default().to_string()
    } else {
        text.split('\n')
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The HTTP status of a query that failed before its first row.
pub fn status(error: &Error) -> StatusCode {
    match error {
        Error::Interrupted(_) => StatusCode::REQUEST_TIMEOUT,
        Error::Corrupt(_) | Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// Opens the database as the server uses it: read-only with `--read-only`.
pub fn open_database(path: &std::path::Path, read_only: bool) -> Result<Database, Error> {
    let options = DatabaseOptions {
        read_only,
        ..DatabaseOptions::default()
    };
    Database::open_with(path, options)
}

/// A running server: its address, and the way to stop it.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Arc<watch::Sender<bool>>,
    /// The runtime of the first I/O thread (which also accepts): where the signal watch runs.
    runtime: tokio::runtime::Handle,
    metrics: Arc<Metrics>,
    spinners: Arc<spin::Spinners>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `config.listen` and starts serving `db` on background threads.
    pub fn start(config: &Config, db: &Database) -> Result<Server, Error> {
        let files = config.validate()?;
        if config.read_only && !db.is_read_only() {
            return Err(Error::Runtime(
                "--read-only needs the database opened read-only".into(),
            ));
        }
        let runtimes = (0..IO_THREADS)
            .map(|_| io::runtime())
            .collect::<Result<Vec<_>, _>>()?;
        let listener = runtimes[0]
            .block_on(TcpListener::bind(config.listen))
            .map_err(|e| Error::Io(format!("listening on {}: {e}", config.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Io(e.to_string()))?;
        let metrics = Arc::new(Metrics::default());
        let pool = pool::Pool::start(
            db,
            pool::PoolSettings {
                threads: config.threads,
                heavy_threads: config.heavy_threads,
                queue: config.queue,
                timeout: Duration::from_millis(config.timeout_ms),
                files: files.clone(),
            },
            metrics.clone(),
        );
        let inline = inline::Inline::new(
            db,
            pool.small_texts(),
            files,
            Duration::from_millis(config.timeout_ms),
        );
        let state = Arc::new(http::State {
            pool,
            inline,
            metrics: metrics.clone(),
            token: config.token.clone(),
            body_bytes_max: config.body_bytes_max,
            cancels: Arc::new(cancel::Cancels::default()),
        });
        let (stop, stopped) = watch::channel(false);
        let handle = runtimes[0].handle().clone();
        let acceptor = io::Acceptor {
            listener,
            stopped,
            connections_max: config.connections_max,
        };
        let spinners = Arc::new(spin::Spinners::default());
        let spin_window = Duration::from_micros(config.io_spin_us);
        let threads = io::start(
            runtimes,
            acceptor,
            state.clone(),
            (spin_window, spinners.clone()),
        )?;
        let thread = std::thread::Builder::new()
            .name("warren-server".into())
            .spawn(move || {
                for thread in threads {
                    let _ = thread.join();
                }
                // Every connection is closed: the queue holds no job a client waits for.
                state.pool.stop();
            })
            .map_err(|e| Error::Io(format!("starting the server thread: {e}")))?;
        Ok(Server {
            addr,
            stop: Arc::new(stop),
            runtime: handle,
            metrics,
            spinners,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// How the I/O threads' spins before parking ended (`spin`).
    pub fn spins(&self) -> &spin::Spinners {
        &self.spinners
    }

    /// Stops accepting, lets the requests in flight finish, and returns once all is done.
    pub fn shutdown(mut self) {
        let _ = self.stop.send(true);
        self.join();
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully.
    pub fn run_until_signal(mut self) -> Result<(), Error> {
        let stop = self.stop.clone();
        self.runtime.spawn(async move {
            wait_for_signal().await;
            let _ = stop.send(true);
        });
        self.join();
        Ok(())
    }

    fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        self.join();
    }
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate()).ok();
    let terminated = async {
        match terminate.as_mut() {
            Some(terminate) => {
                terminate.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminated => {}
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

//! The server's settings and the checks that keep its defaults safe.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use warren::Error;

/// Request bodies larger than this are refused with 413 unless `--max-body` says otherwise.
pub const BODY_BYTES_MAX_DEFAULT: usize = 1 << 20;
/// A query runs at most this long unless `--timeout-ms` says otherwise.
pub const TIMEOUT_MS_DEFAULT: u64 = 30_000;
pub const CONNECTIONS_MAX_DEFAULT: usize = 256;
pub const QUEUE_DEFAULT: usize = 256;
/// Threads of the heavy lane unless `--heavy-threads` says otherwise.
pub const HEAVY_THREADS_DEFAULT: usize = 1;
pub const LISTEN_DEFAULT: &str = "127.0.0.1:7878";

#[derive(Clone, Debug)]
pub struct Config {
    pub listen: SocketAddr,
    /// Query threads of the light lane (key lookups, one hop; every query when
    /// `heavy_threads` is 0): at most this many light queries run at once.
    pub threads: usize,
    /// Query threads of the heavy lane (recursive joins, scans, multi-hop rows: see
    /// `crate::lane`); 0: one lane for every query.
    pub heavy_threads: usize,
    /// Required as `Authorization: Bearer <token>` on every request but `GET /health`.
    pub token: Option<String>,
    pub read_only: bool,
    /// `COPY ... FROM`, `LOAD FROM` and `COPY ... TO` may name files inside this directory
    /// only; without it they are refused.
    pub files: Option<PathBuf>,
    pub connections_max: usize,
    /// Queries waiting for a query thread, per lane; one more is answered 503 at once.
    pub queue: usize,
    pub timeout_ms: u64,
    pub body_bytes_max: usize,
    /// Microseconds an I/O thread polls its sockets after answering a request before it
    /// sleeps (`crate::spin`); 0: it sleeps at once.
    pub io_spin_us: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: LISTEN_DEFAULT.parse().expect("the default address parses"),
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            heavy_threads: HEAVY_THREADS_DEFAULT,
            token: None,
            read_only: false,
            files: None,
            connections_max: CONNECTIONS_MAX_DEFAULT,
            queue: QUEUE_DEFAULT,
            timeout_ms: TIMEOUT_MS_DEFAULT,
            body_bytes_max: BODY_BYTES_MAX_DEFAULT,
            io_spin_us: crate::spin::SPIN_US_DEFAULT,
        }
    }
}

impl Config {
    /// Refuses settings that would expose the database: a non-loopback address without a
    /// token, no query thread, a files directory that does not exist. Returns the files
    /// directory canonicalized.
    pub fn validate(&self) -> Result<Option<PathBuf>, Error> {
        if !self.listen.ip().is_loopback() && self.token.is_none() {
            return Err(Error::Runtime(format!(
                "refusing to listen on {} (not loopback) without --token-file",
                self.listen
            )));
        }
        if self.token.as_deref().is_some_and(str::is_empty) {
            return Err(Error::Runtime("the token file is empty".into()));
        }
        if self.threads == 0 || self.connections_max == 0 {
            return Err(Error::Runtime(
                "--threads and --max-connections must be at least 1".into(),
            ));
        }
        if self.io_spin_us > crate::spin::SPIN_US_MAX {
            return Err(Error::Runtime(format!(
                "--io-spin-us must be at most {} (got {})",
                crate::spin::SPIN_US_MAX,
                self.io_spin_us
            )));
        }
        match &self.files {
            None => Ok(None),
            Some(dir) => {
                let canonical = dir
                    .canonicalize()
                    .map_err(|e| Error::io(dir.display(), e))?;
                if !canonical.is_dir() {
                    return Err(Error::Io(format!("{}: not a directory", dir.display())));
                }
                Ok(Some(canonical))
            }
        }
    }
}

/// Reads a bearer token: the file's first line, without surrounding white space.
pub fn read_token(path: &Path) -> Result<String, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
    Ok(text.lines().next().unwrap_or_default().trim().to_string())
}

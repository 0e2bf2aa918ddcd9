//! `warren._warren.RemoteConnection`: a connection to `warren serve` through `warren-client`.
//! Each query's answer is read by a thread of its own, which decodes the wire's chunks into
//! column batches and hands them over through a channel of [`READ_AHEAD_BATCHES`]: the
//! thread reads ahead that far and no further (then TCP holds the server back), so a large
//! result's first rows are readable at once. Clients (kept-alive HTTP connections) are reused
//! through a small pool, so that several results can stream at the same time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyConnectionError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use warren_client::{Client, ClientError};
use warren_common::column_batch::ColumnBatch;
use warren_common::types::LogicalType;
use warren_wire::{ColumnData, Header, Trailer};

use crate::remote_result::PyRemoteResult;
use crate::wire_values::{column_batch, logical_type, WireGraph};

/// Decoded batches a result's reader thread may hold ahead of the Python side.
pub const READ_AHEAD_BATCHES: usize = 4;
/// Idle clients (connections) a remote connection keeps for the next queries.
const IDLE_CLIENTS_MAX: usize = 4;
/// An idle client is reused only within this time: `warren serve` closes a connection that
/// sends no request for 10 s (`warren_server::HEADER_READ_TIMEOUT`), and a request sent on a
/// connection the server is closing may fail after the server has run it, so it cannot be
/// retried safely.
const IDLE_REUSE_MAX: Duration = Duration::from_secs(5);

/// One batch of rows as it leaves the reader thread, with the nodes and rels it carried.
#[derive(Debug)]
pub struct WireBatch {
    pub batch: ColumnBatch,
    pub graph: WireGraph,
}

/// What a reader thread sends: the header, batches, then the trailer or an error.
#[derive(Debug)]
pub enum Event {
    Header(Header),
    Batch(WireBatch),
    End(Trailer),
    Failed(Failure),
}

/// Where the server is and the clients connected to it.
#[derive(Debug)]
pub struct Endpoint {
    url: String,
    token: Option<String>,
    timeout: Option<Duration>,
    /// Idle clients with the time each was given back.
    idle: Mutex<Vec<(Client, Instant)>>,
    closed: AtomicBool,
}

impl Endpoint {
    /// A recently used idle client, or a new connection.
    fn client(&self) -> Result<Client, ClientError> {
        let reusable = {
            let mut idle = self.idle.lock().expect("client pool lock");
            idle.retain(|(_, since)| since.elapsed() < IDLE_REUSE_MAX);
            idle.pop()
        };
        if let Some((client, _)) = reusable {
            return Ok(client);
        }
        Client::connect_with_timeout(&self.url, self.token.as_deref(), self.timeout)
    }

    /// Keeps `client` for a later query (a client whose last answer was not read to its end
    /// opens a new connection by itself when used); after `close`, drops it.
    fn give_back(&self, client: Client) {
        let mut idle = self.idle.lock().expect("client pool lock");
        if idle.len() < IDLE_CLIENTS_MAX && !self.closed.load(Ordering::Relaxed) {
            idle.push((client, Instant::now()));
        }
    }

    /// Runs `query` and returns its whole answer (for small internal queries).
    pub fn query(&self, query: &str) -> Result<warren_client::Answer, ClientError> {
        let mut client = self.client()?;
        let answer = client.query(query, "{}");
        self.give_back(client);
        answer
    }

    /// Starts `query` on a reader thread; the first event (header or error) tells how it went.
    pub fn start(self: &Arc<Self>, query: String, parameters: String) -> Receiver<Event> {
        let (events, receiver) = sync_channel(READ_AHEAD_BATCHES);
        let endpoint = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("warren-remote-reader".into())
            .spawn(move || endpoint.read_answer(&query, &parameters, &events));
        if let Err(error) = spawned {
            let (events, receiver) = sync_channel(1);
            let failure = self.failure(ClientError::Io(error));
            let _ = events.send(Event::Failed(failure));
            return receiver;
        }
        receiver
    }

    fn read_answer(&self, query: &str, parameters: &str, events: &SyncSender<Event>) {
        let mut client = match self.client() {
            Ok(client) => client,
            Err(error) => {
                let _ = events.send(Event::Failed(self.failure(error)));
                return;
            }
        };
        match stream_batches(&mut client, query, parameters, events) {
            Ok(Read::Whole) => self.give_back(client),
            // The result was dropped before its end: closing the connection tells the server
            // to stop sending (and stop the query) rather than wait for a reader.
            Ok(Read::Abandoned) => drop(client),
            Err(error) => {
                let _ = events.send(Event::Failed(self.failure(error)));
                self.give_back(client);
            }
        }
    }

    /// A client-side error as the Python exception to raise.
    pub fn python_error(&self, error: ClientError) -> PyErr {
        self.failure(error).into_py_err()
    }

    pub fn failure(&self, error: ClientError) -> Failure {
        Failure::from_client(error, &self.url)
    }
}

/// A failed request as the Python exception it raises: the server's and the engine's errors
/// as `RuntimeError` with the embedded API's text (`Binder exception: ...`), network failures
/// as `ConnectionError` naming the URL.
#[derive(Clone, Debug)]
pub enum Failure {
    Runtime(String),
    Connection(String),
    Value(String),
}

impl Failure {
    pub fn from_client(error: ClientError, url: &str) -> Failure {
        match error {
            ClientError::Status { status, text } => {
                let line = text.trim_end();
                let line = line.strip_prefix("Error: ").unwrap_or(line);
                if line.is_empty() {
                    Failure::Runtime(format!("the server answered HTTP status {status}"))
                } else {
                    Failure::Runtime(line.to_string())
                }
            }
            ClientError::Query { message, .. } => Failure::Runtime(message),
            ClientError::Io(error) => {
                Failure::Connection(format!("Cannot reach the Warren server at {url}: {error}"))
            }
            ClientError::Url(url) => Failure::Value(format!(
                "Not a Warren server URL: {url:?} (expected http://host:port)"
            )),
            ClientError::Protocol(message) => Failure::Runtime(format!(
                "The Warren server at {url} answered something unexpected: {message}"
            )),
        }
    }

    pub fn into_py_err(self) -> PyErr {
        match self {
            Failure::Runtime(text) => PyRuntimeError::new_err(text),
            Failure::Connection(text) => PyConnectionError::new_err(text),
            Failure::Value(text) => PyValueError::new_err(text),
        }
    }
}

/// How far an answer was read.
enum Read {
    Whole,
    /// The receiver went away first.
    Abandoned,
}

/// Reads one answer, sending its events; stops early (without an error) when the receiver is
/// gone. A batch is one chunk per column, column 0 first, all with the same first row.
fn stream_batches(
    client: &mut Client,
    query: &str,
    parameters: &str,
    events: &SyncSender<Event>,
) -> Result<Read, ClientError> {
    let protocol = |m: String| ClientError::Protocol(m);
    let mut stream = client.query_stream(query, parameters)?;
    let types: Vec<LogicalType> = stream
        .header
        .columns
        .iter()
        .map(|c| logical_type(&c.ty))
        .collect();
    if events.send(Event::Header(stream.header.clone())).is_err() {
        return Ok(Read::Abandoned);
    }
    let mut pending: Vec<ColumnData> = Vec::with_capacity(types.len());
    let mut rows_received = 0u64;
    while let Some(chunk) = stream.next_chunk()? {
        if chunk.column as usize != pending.len() || chunk.first_row != rows_received {
            return Err(protocol(format!(
                "chunk of column {} at row {} out of order",
                chunk.column, chunk.first_row
            )));
        }
        pending.push(chunk.data);
        if pending.len() < types.len() {
            continue;
        }
        let rows = pending[0].rows();
        let mut graph = WireGraph::default();
        let batch = column_batch(std::mem::take(&mut pending), &types, rows, &mut graph)
            .map_err(protocol)?;
        rows_received += rows as u64;
        if events
            .send(Event::Batch(WireBatch { batch, graph }))
            .is_err()
        {
            return Ok(Read::Abandoned);
        }
    }
    if !pending.is_empty() {
        return Err(protocol("the answer ended inside a batch".into()));
    }
    let trailer = *stream
        .trailer()
        .expect("a stream that ended has its trailer");
    if trailer.rows != rows_received {
        return Err(protocol(format!(
            "the trailer counts {} rows, {rows_received} arrived",
            trailer.rows
        )));
    }
    let _ = events.send(Event::End(trailer));
    Ok(Read::Whole)
}

#[pyclass(name = "RemoteConnection", module = "warren._warren")]
pub struct PyRemoteConnection {
    endpoint: Arc<Endpoint>,
}

#[pymethods]
impl PyRemoteConnection {
    /// Connects to `url` (`http://host:port`); `timeout_s` bounds connecting and each wait for
    /// the server's bytes (`None` waits for ever).
    #[new]
    #[pyo3(signature = (url, token=None, timeout_s=None))]
    fn new(
        py: Python<'_>,
        url: String,
        token: Option<String>,
        timeout_s: Option<f64>,
    ) -> PyResult<Self> {
        let timeout = match timeout_s {
            None => None,
            Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
            Some(s) => {
                return Err(PyValueError::new_err(format!(
                    "timeout must be a positive number of seconds, got {s}"
                )))
            }
        };
        let endpoint = Arc::new(Endpoint {
            url,
            token,
            timeout,
            idle: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        });
        let client = py
            .detach(|| {
                Client::connect_with_timeout(
                    &endpoint.url,
                    endpoint.token.as_deref(),
                    endpoint.timeout,
                )
            })
            .map_err(|e| endpoint.python_error(e))?;
        endpoint.give_back(client);
        Ok(Self { endpoint })
    }

    /// Runs `query` with `parameters` (a JSON object as text) and returns its result once the
    /// server has answered with its header (or raises the server's error).
    fn execute(
        &self,
        py: Python<'_>,
        query: String,
        parameters: String,
    ) -> PyResult<PyRemoteResult> {
        let receiver = self.endpoint.start(query, parameters);
        let (receiver, first) = py.detach(move || {
            let first = receiver.recv();
            (receiver, first)
        });
        match first {
            Ok(Event::Header(header)) => Ok(PyRemoteResult::new(
                &header,
                receiver,
                Arc::clone(&self.endpoint),
            )),
            Ok(Event::Failed(failure)) => Err(failure.into_py_err()),
            Ok(other) => Err(PyRuntimeError::new_err(format!(
                "a remote answer began with {other:?}"
            ))),
            Err(_) => Err(PyRuntimeError::new_err(
                "the remote answer's reader stopped without a word",
            )),
        }
    }

    /// Drops the idle connections, and those of results still being read when they end.
    fn close(&self) {
        self.endpoint.closed.store(true, Ordering::Relaxed);
        self.endpoint.idle.lock().expect("client pool lock").clear();
    }

    #[getter]
    fn url(&self) -> String {
        self.endpoint.url.clone()
    }
}

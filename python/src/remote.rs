//! `warren._warren.RemoteConnection`: a connection to `warren serve` through `warren-client`.
//! Each query's answer is read by a thread of its own, which decodes the wire's chunks into
//! column batches and hands them over through a channel of [`READ_AHEAD_BATCHES`]: the
//! thread reads ahead that far and no further (then TCP holds the server back), so a large
//! result's first rows are readable at once. Clients (kept-alive HTTP connections) are reused
//! through a small pool, so that several results can stream at the same time.
//!
//! Every query goes as a binary request (`warren_wire::QueryRequest`): its parameters converted
//! as the embedded connection converts them, then sent as typed wire values; every statement's
//! result is asked for (the server answers `Results(n)`, then `n` results, as the embedded
//! `execute` returns a list for several statements); and it carries a random id, by which
//! `interrupt()` asks the server (`POST /cancel`) to stop the queries still in flight.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyConnectionError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use warren_client::{Client, ClientError, ResultStream};
use warren_common::column_batch::ColumnBatch;
use warren_common::types::LogicalType;
use warren_common::value::NoGraph;
use warren_wire::{ColumnData, Header, Property, QueryRequest, Trailer};

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
/// How long `interrupt` keeps asking for a query the server does not know yet (its request
/// may still be on the way).
const CANCEL_RETRY_FOR: Duration = Duration::from_millis(500);
const CANCEL_RETRY_EVERY: Duration = Duration::from_millis(20);

/// One batch of rows as it leaves the reader thread, with the nodes and rels it carried.
#[derive(Debug)]
pub struct WireBatch {
    pub batch: ColumnBatch,
    pub graph: WireGraph,
}

/// What a reader thread sends: the number of results, then for each the header, batches and
/// the trailer; or an error, which ends the answer.
#[derive(Debug)]
pub enum Event {
    Results(u64),
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
    /// The ids of the queries whose answers are still being read.
    running: Mutex<HashSet<u64>>,
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

    /// Starts `query` on a reader thread; the first event (result count or error) tells how
    /// it went.
    pub fn start(self: &Arc<Self>, query: String, parameters: Vec<Property>) -> Receiver<Event> {
        let (events, receiver) = sync_channel(READ_AHEAD_BATCHES);
        let request = QueryRequest {
            query,
            parameters,
            every_statement: true,
            query_id: new_query_id(),
        };
        self.running_ids().insert(request.query_id);
        let endpoint = Arc::clone(self);
        let id = request.query_id;
        let spawned = std::thread::Builder::new()
            .name("warren-remote-reader".into())
            .spawn(move || endpoint.read_answer(&request, &events));
        if let Err(error) = spawned {
            self.running_ids().remove(&id);
            let (events, receiver) = sync_channel(1);
            let failure = self.failure(ClientError::Io(error));
            let _ = events.send(Event::Failed(failure));
            return receiver;
        }
        receiver
    }

    fn running_ids(&self) -> std::sync::MutexGuard<'_, HashSet<u64>> {
        self.running.lock().expect("running queries lock")
    }

    fn read_answer(&self, request: &QueryRequest, events: &SyncSender<Event>) {
        let read = self.client().map(|mut client| {
            let read = stream_results(&mut client, request, events);
            (client, read)
        });
        self.running_ids().remove(&request.query_id);
        match read {
            Ok((client, Ok(Read::Whole))) => self.give_back(client),
            // The result was dropped before its end: closing the connection tells the server
            // to stop sending (and stop the query) rather than wait for a reader.
            Ok((client, Ok(Read::Abandoned))) => drop(client),
            Ok((client, Err(error))) => {
                let _ = events.send(Event::Failed(self.failure(error)));
                self.give_back(client);
            }
            Err(error) => {
                let _ = events.send(Event::Failed(self.failure(error)));
            }
        }
    }

    /// Asks the server to stop every query of this connection still in flight.
    pub fn interrupt(&self) -> Result<(), ClientError> {
        let ids: Vec<u64> = self.running_ids().iter().copied().collect();
        if ids.is_empty() {
            return Ok(());
        }
        let mut client = self.client()?;
        for id in ids {
            let since = Instant::now();
            // A query the server does not know yet may be on its way; one it no longer knows
            // has ended (and leaves `running` when its reader is done).
            while !client.cancel(id)?
                && self.running_ids().contains(&id)
                && since.elapsed() < CANCEL_RETRY_FOR
            {
                std::thread::sleep(CANCEL_RETRY_EVERY);
            }
        }
        self.give_back(client);
        Ok(())
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

/// A random id for a query, so that clients of one server do not collide (never 0, which
/// means none).
fn new_query_id() -> u64 {
    use std::hash::BuildHasher;
    let salt = (std::process::id(), std::time::SystemTime::now());
    std::collections::hash_map::RandomState::new()
        .hash_one(salt)
        .max(1)
}

/// Reads a whole answer, sending its events; stops early (without an error) when the receiver
/// is gone.
fn stream_results(
    client: &mut Client,
    request: &QueryRequest,
    events: &SyncSender<Event>,
) -> Result<Read, ClientError> {
    let mut stream = client.request_stream(request)?;
    if events
        .send(Event::Results(stream.results_left() + 1))
        .is_err()
    {
        return Ok(Read::Abandoned);
    }
    loop {
        if let Read::Abandoned = stream_batches(&mut stream, events)? {
            return Ok(Read::Abandoned);
        }
        if !stream.next_result()? {
            return Ok(Read::Whole);
        }
    }
}

/// Reads one result of an answer. A batch is one chunk per column, column 0 first, all with
/// the same first row.
fn stream_batches(
    stream: &mut ResultStream<'_>,
    events: &SyncSender<Event>,
) -> Result<Read, ClientError> {
    let protocol = |m: String| ClientError::Protocol(m);
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

/// The next event (called with the GIL released).
fn next_event(receiver: &Receiver<Event>) -> Result<Event, Failure> {
    receiver
        .recv()
        .map_err(|_| Failure::Runtime("the remote answer's reader stopped before its end".into()))
}

/// An event where a result's header must come.
fn header(event: Event) -> Result<Header, Failure> {
    match event {
        Event::Header(header) => Ok(header),
        Event::Failed(failure) => Err(failure),
        other => Err(Failure::Runtime(format!(
            "a remote result began with {other:?}"
        ))),
    }
}

/// Reads a result that another follows to its end (as the embedded API runs every statement
/// but the last to its end), as the events of a result that needs no reader.
fn whole_result(receiver: &Receiver<Event>) -> Result<Received, Failure> {
    let header = header(next_event(receiver)?)?;
    let (sender, events) = channel();
    loop {
        let event = next_event(receiver)?;
        match event {
            Event::Batch(_) => {}
            Event::End(_) => {
                let _ = sender.send(event);
                return Ok(Received {
                    header,
                    events,
                    first: None,
                });
            }
            Event::Failed(failure) => return Err(failure),
            other => {
                return Err(Failure::Runtime(format!(
                    "a remote result went on with {other:?}"
                )))
            }
        }
        let _ = sender.send(event);
    }
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
            running: Mutex::new(HashSet::new()),
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

    /// Runs every statement of `query` with `parameters` (a dict, converted as the embedded
    /// connection converts it, sent typed) and returns one result per statement, once the
    /// last one's first rows (or its end) have arrived; raises the first error.
    #[pyo3(signature = (query, parameters=None))]
    fn execute(
        &self,
        py: Python<'_>,
        query: String,
        parameters: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<PyRemoteResult>> {
        let parameters = crate::connection::convert_parameters(parameters)?
            .into_iter()
            .map(|(name, value)| Property {
                name,
                value: warren::wire::wire_value(&value, &NoGraph),
            })
            .collect();
        let receiver = self.endpoint.start(query, parameters);
        let received = py
            .detach(move || receive_results(receiver))
            .map_err(Failure::into_py_err)?;
        Ok(received
            .into_iter()
            .map(|r| PyRemoteResult::new(&r.header, r.events, r.first, self.endpoint.clone()))
            .collect())
    }

    /// Stops the queries of this connection still running on the server (from any thread):
    /// each raises Kùzu's interrupt error.
    fn interrupt(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.endpoint.interrupt())
            .map_err(|e| self.endpoint.python_error(e))
    }

    /// The parse error of `query`, or `None` when it parses (as the embedded connection's).
    fn check_syntax(&self, query: &str) -> Option<String> {
        warren_cypher::parse_script(query)
            .err()
            .map(|e| e.to_string())
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

/// One result of an answer as `execute` hands it over: its header, its events, and the first
/// of them when it was taken already.
struct Received {
    header: Header,
    events: Receiver<Event>,
    first: Option<Event>,
}

/// The results of an answer (called with the GIL released): all but the last read whole; the
/// last streams, its first event (a batch, its end or its error) already received.
fn receive_results(receiver: Receiver<Event>) -> Result<Vec<Received>, Failure> {
    let count = match next_event(&receiver)? {
        Event::Results(count) => count,
        Event::Failed(failure) => return Err(failure),
        other => {
            return Err(Failure::Runtime(format!(
                "a remote answer began with {other:?}"
            )))
        }
    };
    let mut results = Vec::new();
    for _ in 1..count {
        results.push(whole_result(&receiver)?);
    }
    let header = header(next_event(&receiver)?)?;
    let first = next_event(&receiver)?;
    if let Event::Failed(failure) = first {
        return Err(failure);
    }
    results.push(Received {
        header,
        events: receiver,
        first: Some(first),
    });
    Ok(results)
}

//! The query threads: a fixed number of OS threads, each with its own `Connection`, fed from a
//! bounded queue. A query's result goes back batch by batch through a bounded channel, so a
//! large result never sits whole in the server's memory, and a slow reader holds back the
//! query rather than growing a buffer.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender, TrySendError};
use tokio::sync::{mpsc, oneshot};
use warren::{Connection, Database, Error, QueryResult, Value};
use warren_cypher::ast::Statement;

use crate::lane::{Lane, Texts};
use crate::metrics::Metrics;

/// Result bytes are handed to the I/O side in pieces of about this size (a small result is
/// one piece).
pub const PIECE_BYTES: usize = 64 * 1024;
/// Pieces buffered between a query thread and its response.
pub const PIECES_IN_FLIGHT: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Wire,
}

/// What a response body receives: bytes, then `End` once the result is complete. A channel
/// that closes without `End` means the result was cut short (timeout, client gone).
#[derive(Debug)]
pub enum Piece {
    Data(Bytes),
    End,
}

#[derive(Debug)]
pub struct Job {
    pub query: String,
    pub parameters: HashMap<String, Value>,
    pub format: Format,
    /// Send `Results(n)` and every statement's result (wire format only).
    pub every_statement: bool,
    /// The query's cancel state, when the request gave an id `POST /cancel` can stop it by.
    pub cancel: Option<Arc<crate::cancel::Cancel>>,
    /// Ok once the query compiled and its result streams, or the error that stopped it.
    pub started: oneshot::Sender<Result<(), Error>>,
    pub body: mpsc::Sender<Piece>,
}

#[derive(Debug)]
pub struct PoolSettings {
    /// Threads of the light lane (every query when `heavy_threads` is 0).
    pub threads: usize,
    /// Threads of the heavy lane; 0: one lane for all queries.
    pub heavy_threads: usize,
    /// Queued jobs per lane.
    pub queue: usize,
    pub timeout: Duration,
    pub files: Option<PathBuf>,
}

/// The query threads of both lanes (`crate::lane`).
#[derive(Debug)]
pub struct Pool {
    light: Queue,
    heavy: Option<Queue>,
    heavy_texts: Arc<Texts>,
    /// Texts whose answers came small and quick from a light-lane thread (`crate::inline`).
    small_texts: Arc<Texts>,
    metrics: Arc<Metrics>,
}

/// One lane: a bounded queue and the threads that take jobs from it.
#[derive(Debug)]
struct Queue {
    sender: Mutex<Option<Sender<Job>>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    load: Arc<Load>,
}

/// How busy a lane is: jobs in its queue, and threads waiting for one.
#[derive(Debug)]
struct Load {
    capacity: usize,
    queued: AtomicUsize,
    idle: AtomicUsize,
}

impl Load {
    /// Whether a job sent now would probably be taken (a thread waits, or the queue has
    /// room); a hint, since threads take and finish jobs meanwhile.
    fn has_room(&self) -> bool {
        self.idle.load(Ordering::Relaxed) > 0 || self.queued.load(Ordering::Relaxed) < self.capacity
    }
}

/// What a light-lane thread needs to hand heavy queries over.
struct Forward {
    heavy: Sender<Job>,
    heavy_load: Arc<Load>,
    heavy_texts: Arc<Texts>,
}

impl Pool {
    pub fn start(db: &Database, settings: PoolSettings, metrics: Arc<Metrics>) -> Pool {
        let settings = Arc::new(settings);
        let heavy_texts = Arc::new(Texts::default());
        let small_texts = Arc::new(Texts::default());
        let start = |lane: Lane, threads: usize, forward: &dyn Fn() -> Option<Forward>| {
            // A multi-consumer channel: idle threads wait on it together and a job wakes one
            // of them (a receiver behind a mutex woke the other thread at every job taken).
            let (sender, receiver) = crossbeam_channel::bounded::<Job>(settings.queue);
            let load = Arc::new(Load {
                capacity: settings.queue,
                queued: AtomicUsize::new(0),
                idle: AtomicUsize::new(0),
            });
            let workers = (0..threads)
                .map(|index| {
                    let worker = Worker {
                        db: db.clone(),
                        conn: db.connect(),
                        receiver: receiver.clone(),
                        load: load.clone(),
                        settings: settings.clone(),
                        metrics: metrics.clone(),
                        forward: forward(),
                        small_texts: small_texts.clone(),
                    };
                    let name = match lane {
                        Lane::Light => format!("warren-query-{index}"),
                        Lane::Heavy => format!("warren-heavy-{index}"),
                    };
                    std::thread::Builder::new()
                        .name(name)
                        .spawn(move || worker.run())
                        .expect("spawning a query thread")
                })
                .collect();
            (
                Queue {
                    sender: Mutex::new(Some(sender.clone())),
                    workers: Mutex::new(workers),
                    load,
                },
                sender,
            )
        };
        let heavy = (settings.heavy_threads > 0)
            .then(|| start(Lane::Heavy, settings.heavy_threads, &|| None));
        let forward = || {
            heavy.as_ref().map(|(queue, sender)| Forward {
                heavy: sender.clone(),
                heavy_load: queue.load.clone(),
                heavy_texts: heavy_texts.clone(),
            })
        };
        let (light, _) = start(Lane::Light, settings.threads, &forward);
        Pool {
            light,
            heavy: heavy.map(|(queue, _)| queue),
            heavy_texts,
            small_texts,
            metrics,
        }
    }

    /// The texts of single read-only light statements whose last answer from a query thread
    /// was one piece, computed within [`crate::inline::BUDGET`].
    pub fn small_texts(&self) -> Arc<Texts> {
        self.small_texts.clone()
    }

    /// Queues a job in its lane; gives it back when the lane's queue is full (or the pool has
    /// stopped).
    pub fn submit(&self, job: Job) -> Result<(), Job> {
        let queue = match (&self.heavy, self.heavy_texts.lane(&job.query)) {
            (Some(heavy), Lane::Heavy) => heavy,
            _ => &self.light,
        };
        let sender = queue.sender.lock().unwrap_or_else(|e| e.into_inner());
        let Some(sender) = sender.as_ref() else {
            return Err(job);
        };
        queue_job(sender, job, &self.metrics, &queue.load)
    }

    /// Whether the light lane would probably take a job now: the I/O threads answer small
    /// queries themselves only then, so that an overloaded server still refuses the excess.
    pub fn light_has_room(&self) -> bool {
        self.light.load.has_room()
    }

    /// Lets the queued jobs finish, then stops the threads: the light lane's first, since
    /// they may still hand jobs to the heavy lane.
    pub fn stop(&self) {
        self.light.stop();
        if let Some(heavy) = &self.heavy {
            heavy.stop();
        }
    }
}

impl Queue {
    fn stop(&self) {
        drop(self.sender.lock().unwrap_or_else(|e| e.into_inner()).take());
        let workers = std::mem::take(&mut *self.workers.lock().unwrap_or_else(|e| e.into_inner()));
        for worker in workers {
            let _ = worker.join();
        }
    }
}

/// Queues `job` without waiting; gives it back when the queue is full or closed.
fn queue_job(sender: &Sender<Job>, job: Job, metrics: &Metrics, load: &Load) -> Result<(), Job> {
    metrics.queue_depth.fetch_add(1, Ordering::Relaxed);
    load.queued.fetch_add(1, Ordering::Relaxed);
    match sender.try_send(job) {
        Ok(()) => Ok(()),
        Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => {
            metrics.queue_depth.fetch_sub(1, Ordering::Relaxed);
            load.queued.fetch_sub(1, Ordering::Relaxed);
            Err(job)
        }
    }
}

/// A query thread's runtime: only a timer, driven by the thread itself while it waits.
fn waiting_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime with a timer (no I/O driver) always builds")
}

/// A connection as the server's threads run queries on: file statements inside `files`, one
/// engine thread (the server's threads, not the query, are the parallelism), and `timeout`.
pub(crate) fn server_connection(
    db: &Database,
    files: Option<&std::path::Path>,
    timeout: Duration,
) -> Connection {
    let mut conn = db.connect();
    if let Some(dir) = files {
        conn.set_working_dir(dir.to_path_buf());
    }
    conn.settings_mut().threads = 1;
    conn.settings_mut().timeout_ms = timeout.as_millis() as u64;
    conn
}

struct Worker {
    db: Database,
    conn: Connection,
    receiver: Receiver<Job>,
    load: Arc<Load>,
    settings: Arc<PoolSettings>,
    metrics: Arc<Metrics>,
    /// Set on the light lane's threads when there is a heavy lane.
    forward: Option<Forward>,
    small_texts: Arc<Texts>,
}

impl Worker {
    /// A fresh connection with the server's settings.
    fn connect(&self) -> Connection {
        server_connection(
            &self.db,
            self.settings.files.as_deref(),
            self.settings.timeout,
        )
    }

    fn run(mut self) {
        // This thread's own timer, for the wait on a slow reader (`PieceWriter::send`): the
        // query threads depend on no I/O thread's runtime.
        let runtime = waiting_runtime();
        self.conn = self.connect();
        let defaults = self.conn.settings().clone();
        loop {
            let Some(job) = self.next_job() else { return };
            self.metrics.queue_depth.fetch_sub(1, Ordering::Relaxed);
            self.load.queued.fetch_sub(1, Ordering::Relaxed);
            // A statement of the previous request may have changed a setting.
            *self.conn.settings_mut() = defaults.clone();
            // A bug in the engine must not take a query thread with it: the request fails
            // (its channels close: 500, or a cut-short body) and the thread goes on with a
            // fresh connection.
            let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.serve(job, &runtime)
            }));
            if served.is_err() {
                self.metrics.error("Internal error");
                self.conn = self.connect();
            }
        }
    }

    /// The next job of this lane; `None` once the lane has stopped.
    fn next_job(&self) -> Option<Job> {
        self.load.idle.fetch_add(1, Ordering::Relaxed);
        let job = self.receiver.recv().ok();
        self.load.idle.fetch_sub(1, Ordering::Relaxed);
        job
    }

    /// Runs the statements the check parsed, as `Connection::query_with` runs a script: all
    /// but the last to their end, and returns the last one's result.
    fn execute(&mut self, statements: &[Statement], job: &Job) -> Result<QueryResult, Error> {
        let Some((last, rest)) = statements.split_last() else {
            // The engine's own error for an empty query.
            return self.conn.query_with(&job.query, &job.parameters);
        };
        for statement in rest {
            let mut result = self.execute_one(statement, job)?;
            while result.next_row()?.is_some() {}
        }
        self.execute_one(last, job)
    }

    /// Binds and starts one statement; a cancel that came in the meantime still holds (the
    /// engine clears its interrupt flag when a statement starts).
    fn execute_one(&mut self, statement: &Statement, job: &Job) -> Result<QueryResult, Error> {
        self.start_statement(statement, &job.parameters, job.cancel.as_deref())
    }

    fn start_statement(
        &mut self,
        statement: &Statement,
        parameters: &HashMap<String, Value>,
        cancel: Option<&crate::cancel::Cancel>,
    ) -> Result<QueryResult, Error> {
        let result = self.conn.execute(statement, parameters);
        if let Some(cancel) = cancel {
            cancel.reassert(&self.conn.interrupt_flag());
        }
        result
    }

    fn serve(&mut self, job: Job, runtime: &tokio::runtime::Runtime) {
        let began = Instant::now();
        let deadline = began + self.settings.timeout;
        // Detached when this function returns, before the thread takes its next job.
        let _attached = match &job.cancel {
            Some(cancel) if cancel.requested() => {
                self.fail(job.started, interrupted());
                return;
            }
            Some(cancel) => Some(cancel.attach(self.conn.interrupt_flag())),
            None => None,
        };
        let checked = crate::guard::check(&job.query, self.settings.files.as_deref());
        if job.every_statement {
            match checked {
                Ok(statements) => self.serve_every_statement(&statements, job, deadline, runtime),
                Err(error) => {
                    self.fail(job.started, error);
                }
            }
            return;
        }
        let result = checked.and_then(|statements| {
            let result = self.execute(&statements, &job)?;
            Ok((result, statements.len()))
        });
        let (mut result, job, statements) = match result {
            Ok((result, statements)) => {
                let job = match self.hand_over_heavy(job, &result, statements) {
                    Ok(()) => return,
                    Err(job) => job,
                };
                (result, job, statements)
            }
            Err(error) => {
                self.fail(job.started, error);
                return;
            }
        };
        // Read-only, light, one statement: the I/O threads may answer it if it stays small.
        let inline_candidate = statements == 1 && result.can_rerun() && !result.is_heavy();
        let first = match first_batch(&mut result, job.format) {
            Ok(first) => first,
            Err(error) => {
                self.fail(job.started, error);
                return;
            }
        };
        let mut writer = PieceWriter::new(job.body, job.started, runtime, deadline);
        let written = write_answer(&mut result, first, &mut writer);
        let pieces = self.finish(writer, written);
        if inline_candidate && pieces == Some(1) && began.elapsed() < crate::inline::BUDGET {
            self.small_texts.insert(&job.query);
        }
    }

    /// On a light-lane thread, a request of one read-only statement whose plan is heavy goes
    /// to the heavy lane before it runs (its text remembered, so that the next ones go there
    /// at once); gives the job back to run here otherwise, or when the heavy queue is full.
    fn hand_over_heavy(
        &self,
        job: Job,
        result: &QueryResult,
        statements: usize,
    ) -> Result<(), Job> {
        let Some(forward) = &self.forward else {
            return Err(job);
        };
        if statements != 1 || job.every_statement || !result.is_heavy() {
            return Err(job);
        }
        forward.heavy_texts.insert(&job.query);
        queue_job(&forward.heavy, job, &self.metrics, &forward.heavy_load)
    }

    /// Answers a request with `error`; counts a client that went away before its answer.
    fn fail(&self, started: oneshot::Sender<Result<(), Error>>, error: Error) {
        if started.send(Err(error)).is_err() {
            self.metrics.error("Disconnected");
        }
    }

    /// Answers `Results(n)`, then each statement's result in turn (each run to its end before
    /// the next starts, as the embedded API runs a script). The status waits for the first
    /// statement's first batch; a later statement's error ends the stream with an `Error`.
    fn serve_every_statement(
        &mut self,
        statements: &[Statement],
        job: Job,
        deadline: Instant,
        runtime: &tokio::runtime::Runtime,
    ) {
        let Some(first_statement) = statements.first() else {
            let error = self
                .conn
                .query_with(&job.query, &job.parameters)
                .err()
                .unwrap_or_else(|| Error::runtime("Connection Exception: Query is empty."));
            self.fail(job.started, error);
            return;
        };
        let started = self
            .execute_one(first_statement, &job)
            .and_then(|mut result| {
                let first = result.next_columns(warren::wire::CHUNK_ROWS)?;
                Ok((result, first))
            });
        let (mut result, first) = match started {
            Ok(started) => started,
            Err(error) => {
                self.fail(job.started, error);
                return;
            }
        };
        let mut writer = PieceWriter::new(job.body, job.started, runtime, deadline);
        let count = warren_wire::Message::Results(statements.len() as u64);
        let mut written = warren_wire::write_frame(&mut writer, &count).map_err(io_error);
        if written.is_ok() {
            written =
                warren::wire::write_result_from(&mut result, Ok(first), &mut writer).map(|_| ());
        }
        drop(result);
        for statement in &statements[1..] {
            if written.is_err() {
                break;
            }
            let started = self.start_statement(statement, &job.parameters, job.cancel.as_deref());
            written = match started {
                Ok(mut result) => warren::wire::write_result(&mut result, &mut writer).map(|_| ()),
                Err(error) => write_error(&mut writer, error),
            };
        }
        self.finish(writer, written);
    }

    /// Ends an answer: its last bytes and `End`, unless the reader went away or the deadline
    /// passed (then the body ends cut short). Returns how many pieces of bytes the complete
    /// answer took, `None` when it was cut short.
    fn finish(&self, mut writer: PieceWriter<'_>, written: Result<(), Error>) -> Option<usize> {
        if writer.failed {
            return None;
        }
        if let Err(error) = written {
            self.metrics.error(error.kind());
        }
        writer.flush().ok()?;
        writer.send(Piece::End).ok()?;
        Some(writer.pieces)
    }
}

/// The error of a query cancelled before it started (the engine's text for an interrupt).
fn interrupted() -> Error {
    Error::Interrupted("the query was interrupted".into())
}

/// Sends `error` as the stream's `Error` message and returns it.
fn write_error(out: &mut dyn Write, error: Error) -> Result<(), Error> {
    let message = warren_wire::Message::Error(warren_wire::ErrorMessage {
        kind: error.kind().to_string(),
        message: error.to_string(),
    });
    warren_wire::write_frame(&mut *out, &message).map_err(io_error)?;
    Err(error)
}

/// The batch pulled before answering, in the form the answer's format reads.
pub(crate) enum FirstBatch {
    Columns(Option<warren_common::column_batch::ColumnBatch>),
    Rows(Vec<Vec<Value>>),
}

/// The first batch before the answer's status: an error in it (a timeout, a runtime error) is
/// a 4xx, not a 200 with an error at its end.
pub(crate) fn first_batch(result: &mut QueryResult, format: Format) -> Result<FirstBatch, Error> {
    match format {
        Format::Wire => result
            .next_columns(warren::wire::CHUNK_ROWS)
            .map(FirstBatch::Columns),
        Format::Json => result
            .next_batch(warren::wire::CHUNK_ROWS)
            .map(FirstBatch::Rows),
    }
}

/// Writes the whole answer after its first batch; an error is also written into it (the
/// JSON's `"error"`, the wire's `Error` frame) unless writing itself failed.
pub(crate) fn write_answer(
    result: &mut QueryResult,
    first: FirstBatch,
    out: &mut dyn Write,
) -> Result<(), Error> {
    match first {
        FirstBatch::Columns(first) => {
            warren::wire::write_result_from(result, Ok(first), out).map(|_| ())
        }
        FirstBatch::Rows(first) => write_json(result, first, out),
    }
}

/// Buffers result bytes and hands them to the response in pieces; fails once the response
/// is gone or the query's deadline has passed.
///
/// The request learns that its answer streams (`started`) as late as possible: once the
/// result's `End` is queued, or when the next piece would have to wait for the reader. A
/// result that fits in the pieces in flight thus wakes the request's task once, and finds the
/// whole answer there, instead of once for the status and again for the bytes.
struct PieceWriter<'a> {
    buffer: Vec<u8>,
    sender: mpsc::Sender<Piece>,
    /// Taken when the request is told that its answer streams.
    started: Option<oneshot::Sender<Result<(), Error>>>,
    runtime: &'a tokio::runtime::Runtime,
    deadline: Instant,
    failed: bool,
    /// Pieces of bytes sent.
    pieces: usize,
}

impl<'a> PieceWriter<'a> {
    fn new(
        sender: mpsc::Sender<Piece>,
        started: oneshot::Sender<Result<(), Error>>,
        runtime: &'a tokio::runtime::Runtime,
        deadline: Instant,
    ) -> Self {
        PieceWriter {
            buffer: Vec::with_capacity(PIECE_BYTES),
            sender,
            started: Some(started),
            runtime,
            deadline,
            failed: false,
            pieces: 0,
        }
    }

    /// Tells the request that its answer streams (once); fails when the request is gone.
    fn announce(&mut self) -> io::Result<()> {
        let Some(started) = self.started.take() else {
            return Ok(());
        };
        if started.send(Ok(())).is_err() {
            return Err(self.closed());
        }
        Ok(())
    }

    fn closed(&mut self) -> io::Error {
        self.failed = true;
        io::Error::other("the response was closed or timed out")
    }

    fn send(&mut self, piece: Piece) -> io::Result<()> {
        let end = matches!(piece, Piece::End);
        // Nobody reads the pieces before the announcement, so these never wait.
        let piece = match self.sender.try_send(piece) {
            Ok(()) if end => return self.announce(),
            Ok(()) => return Ok(()),
            Err(mpsc::error::TrySendError::Full(piece)) => piece,
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(self.closed()),
        };
        self.announce()?;
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        let sender = &self.sender;
        // The timer is made inside the runtime's context (block_on enters it and drives it).
        let sent = self
            .runtime
            .block_on(async { tokio::time::timeout(remaining, sender.send(piece)).await });
        if matches!(sent, Ok(Ok(()))) {
            if end {
                self.announce()?;
            }
            Ok(())
        } else {
            Err(self.closed())
        }
    }
}

impl Write for PieceWriter<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.failed {
            return Err(io::Error::other("the response was closed or timed out"));
        }
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= PIECE_BYTES {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let bytes = Bytes::from(std::mem::replace(
            &mut self.buffer,
            Vec::with_capacity(PIECE_BYTES),
        ));
        self.pieces += 1;
        self.send(Piece::Data(bytes))
    }
}

fn io_error(error: io::Error) -> Error {
    Error::Io(error.to_string())
}

/// Writes a result as `{"columns": [...], "types": [...], "rows": [[...], ...],
/// "compile_time_ms": .., "execution_time_ms": ..}`, values as `warren query --format json`
/// prints them. An engine error after the first row ends the object with `"error": "..."`.
fn write_json(
    result: &mut QueryResult,
    first_batch: Vec<Vec<Value>>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let types: Vec<String> = result
        .column_types()
        .iter()
        .map(|t| t.to_string())
        .collect();
    let columns =
        serde_json::to_string(result.column_names()).map_err(|e| Error::Io(e.to_string()))?;
    let types = serde_json::to_string(&types).map_err(|e| Error::Io(e.to_string()))?;
    write!(
        out,
        "{{\"columns\": {columns}, \"types\": {types}, \"rows\": ["
    )
    .map_err(io_error)?;
    let mut first = true;
    let mut next = Some(first_batch);
    let outcome = loop {
        let batch = match next
            .take()
            .map_or_else(|| result.next_batch(warren::wire::CHUNK_ROWS), Ok)
        {
            Ok(batch) if batch.is_empty() => break Ok(()),
            Ok(batch) => batch,
            Err(error) => break Err(error),
        };
        let graph = result.snapshot().clone();
        for row in &batch {
            let values: Vec<serde_json::Value> = row
                .iter()
                .map(|v| warren::json::to_json(v, graph.as_ref()))
                .collect();
            out.write_all(if first { b"\n" } else { b",\n" })
                .map_err(io_error)?;
            serde_json::to_writer(&mut *out, &values).map_err(|e| Error::Io(e.to_string()))?;
            first = false;
        }
    };
    let milliseconds = |d: Duration| d.as_secs_f64() * 1e3;
    write!(
        out,
        "{}], \"compile_time_ms\": {}, \"execution_time_ms\": {}",
        if first { "" } else { "\n" },
        milliseconds(result.compile_time()),
        milliseconds(result.execution_time())
    )
    .map_err(io_error)?;
    if let Err(error) = &outcome {
        let text = serde_json::to_string(&crate::error_line(error))
            .map_err(|e| Error::Io(e.to_string()))?;
        write!(out, ", \"error\": {text}").map_err(io_error)?;
    }
    out.write_all(b"}\n").map_err(io_error)?;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        waiting_runtime()
    }

    #[test]
    fn a_small_answer_is_announced_once_it_is_complete() {
        let runtime = runtime();
        let (body, mut pieces) = mpsc::channel(PIECES_IN_FLIGHT);
        let (started, mut announced) = oneshot::channel();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut writer = PieceWriter::new(body, started, &runtime, deadline);
        writer.write_all(b"one row").unwrap();
        writer.flush().unwrap();
        assert!(announced.try_recv().is_err(), "announced before the end");
        writer.send(Piece::End).unwrap();
        assert!(matches!(announced.try_recv(), Ok(Ok(()))));
        assert!(matches!(pieces.try_recv(), Ok(Piece::Data(bytes)) if &bytes[..] == b"one row"));
        assert!(matches!(pieces.try_recv(), Ok(Piece::End)));
    }

    #[test]
    fn a_large_answer_is_announced_before_its_writer_would_wait() {
        const PIECES: usize = 3 * PIECES_IN_FLIGHT;
        let runtime = runtime();
        let (body, mut pieces) = mpsc::channel(PIECES_IN_FLIGHT);
        let (started, announced) = oneshot::channel();
        let writer = std::thread::spawn(move || {
            let runtime = super::waiting_runtime();
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut writer = PieceWriter::new(body, started, &runtime, deadline);
            for _ in 0..PIECES {
                writer.write_all(&[7; PIECE_BYTES]).unwrap();
            }
            writer.send(Piece::End).unwrap();
        });
        // The reader starts only once announced, as the HTTP side does.
        let received = runtime.block_on(async {
            assert!(matches!(announced.await, Ok(Ok(()))));
            let mut received = 0;
            while let Some(piece) = pieces.recv().await {
                match piece {
                    Piece::Data(bytes) => received += bytes.len(),
                    Piece::End => break,
                }
            }
            received
        });
        writer.join().unwrap();
        assert_eq!(received, PIECES * PIECE_BYTES);
    }

    #[test]
    fn a_writer_whose_request_is_gone_fails() {
        let runtime = runtime();
        let (body, pieces) = mpsc::channel(PIECES_IN_FLIGHT);
        let (started, announced) = oneshot::channel();
        drop((pieces, announced));
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut writer = PieceWriter::new(body, started, &runtime, deadline);
        writer.write_all(b"row").unwrap();
        assert!(writer.flush().is_err());
        assert!(writer.failed);
    }
}

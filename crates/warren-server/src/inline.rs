//! Small answers computed on the I/O thread that received the request, without handing the
//! query to a query thread and waiting for it (two thread wake-ups fewer per request, which
//! is most of a one-row answer's cost when the machine is idle).
//!
//! Only a text that a query thread last answered as one read-only, light statement, in one
//! piece and within [`BUDGET`], is tried here (`Pool::small_texts`), on at most [`SLOTS`] I/O
//! threads at once (the others keep moving bytes). The try is bounded: the engine's deadline
//! is [`BUDGET`], and the answer must fit in one piece ([`crate::pool::PIECE_BYTES`]), so an
//! I/O thread is never held longer than that and never waits on a channel. A try that passes
//! either bound is dropped before anything was sent, the text is forgotten, and the request
//! goes to the query threads as any other (the statement reads only, so running it again
//! there is safe). A cancel by id stops a query running here as it does on a query thread.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use warren::{Connection, Database, Error, Value};

use crate::cancel::Cancel;
use crate::lane::Texts;
use crate::metrics::Metrics;
use crate::pool::{self, Format, PIECE_BYTES};

/// The most time a query may take on an I/O thread (the engine's deadline there).
pub const BUDGET: Duration = Duration::from_millis(1);
/// I/O threads that may run a query at once; the others keep moving bytes.
pub const SLOTS: usize = crate::IO_THREADS - 1;

/// What a try on the I/O thread gave.
#[derive(Debug)]
pub enum Outcome {
    /// The query's answer: its bytes (an engine error after the first batch is written into
    /// them, and given beside, to count), or the error that is its status.
    Answered(Result<(Bytes, Option<Error>), Error>),
    /// Not run here, or run too long or too large: the query threads answer it.
    HandOver,
    /// The engine panicked (the request fails as when a query thread stops).
    Panicked,
}

/// The engine connections of the I/O threads (one per slot) and the texts they may run.
#[derive(Debug)]
pub struct Inline {
    db: Database,
    connections: Mutex<Vec<Connection>>,
    texts: Arc<Texts>,
    files: Option<PathBuf>,
}

impl Inline {
    /// `SLOTS` connections over `db`, trying the texts in `texts`; none (every query goes to
    /// the query threads) when the server's `timeout` is within the budget, since a query
    /// interrupted here is run again there.
    pub fn new(
        db: &Database,
        texts: Arc<Texts>,
        files: Option<PathBuf>,
        timeout: Duration,
    ) -> Self {
        let mut inline = Inline {
            db: db.clone(),
            connections: Mutex::new(Vec::new()),
            texts,
            files,
        };
        let slots = if timeout > BUDGET { SLOTS } else { 0 };
        let connections = (0..slots).map(|_| inline.connect()).collect();
        inline.connections = Mutex::new(connections);
        inline
    }

    /// A fresh connection with the server's settings but the budget as its timeout.
    fn connect(&self) -> Connection {
        pool::server_connection(&self.db, self.files.as_deref(), BUDGET)
    }

    /// Answers `query` here when its text is known small and a slot is free.
    pub fn try_answer(
        &self,
        query: &str,
        parameters: &HashMap<String, Value>,
        format: Format,
        cancel: &Arc<Cancel>,
        metrics: &Metrics,
    ) -> Outcome {
        if !self.texts.contains(query) {
            return Outcome::HandOver;
        }
        let Some(mut conn) = self.lock().pop() else {
            return Outcome::HandOver;
        };
        let defaults = conn.settings().clone();
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(
                &mut conn,
                query,
                parameters,
                format,
                cancel,
                self.files.as_deref(),
            )
        }));
        let outcome = match ran {
            Ok(outcome) => {
                *conn.settings_mut() = defaults;
                outcome
            }
            // A bug in the engine: the request fails as on a query thread, with a fresh
            // connection for the next.
            Err(_) => {
                conn = self.connect();
                Outcome::Panicked
            }
        };
        self.lock().push(conn);
        if matches!(outcome, Outcome::HandOver) {
            self.texts.remove(query);
            metrics.inline_handed_over.fetch_add(1, Ordering::Relaxed);
        } else {
            metrics.inline_answered.fetch_add(1, Ordering::Relaxed);
        }
        outcome
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs one request's query on `conn` within the budget and one piece.
fn run(
    conn: &mut Connection,
    query: &str,
    parameters: &HashMap<String, Value>,
    format: Format,
    cancel: &Arc<Cancel>,
    files: Option<&std::path::Path>,
) -> Outcome {
    if cancel.requested() {
        return Outcome::Answered(Err(Error::Interrupted("the query was interrupted".into())));
    }
    let _attached = cancel.attach(conn.interrupt_flag());
    let statements = match crate::guard::check(query, files) {
        Ok(statements) => statements,
        Err(error) => return Outcome::Answered(Err(error)),
    };
    let [statement] = &statements[..] else {
        return Outcome::HandOver;
    };
    let started = conn.execute(statement, parameters);
    cancel.reassert(&conn.interrupt_flag());
    let over_budget = |error: &Error| matches!(error, Error::Interrupted(_)) && !cancel.requested();
    let mut result = match started {
        Ok(result) => result,
        Err(error) if over_budget(&error) => return Outcome::HandOver,
        Err(error) => return Outcome::Answered(Err(error)),
    };
    // A statement that wrote has run: it is answered here. A plan that became heavy (the
    // schema changed) has not started: the lanes take it.
    if result.can_rerun() && result.is_heavy() {
        return Outcome::HandOver;
    }
    let first = match pool::first_batch(&mut result, format) {
        Ok(first) => first,
        Err(error) if over_budget(&error) => return Outcome::HandOver,
        Err(error) => return Outcome::Answered(Err(error)),
    };
    let mut out = OnePiece::default();
    let written = pool::write_answer(&mut result, first, &mut out);
    match written {
        _ if out.overflowed => Outcome::HandOver,
        Err(error) if over_budget(&error) => Outcome::HandOver,
        written => Outcome::Answered(Ok((Bytes::from(out.bytes), written.err()))),
    }
}

/// A buffer of at most one piece; a write past it fails and marks it overflowed.
#[derive(Default)]
struct OnePiece {
    bytes: Vec<u8>,
    overflowed: bool,
}

impl Write for OnePiece {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.overflowed || self.bytes.len() + data.len() > PIECE_BYTES {
            self.overflowed = true;
            return Err(io::Error::other("the answer is larger than one piece"));
        }
        self.bytes.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_piece_takes_up_to_a_piece_and_refuses_more() {
        let mut out = OnePiece::default();
        out.write_all(&vec![1; PIECE_BYTES - 1]).unwrap();
        out.write_all(&[2]).unwrap();
        assert!(!out.overflowed);
        assert!(out.write_all(&[3]).is_err());
        assert!(out.overflowed);
        assert_eq!(out.bytes.len(), PIECE_BYTES);
    }
}

//! A client for `warren serve`, depending on `warren-wire` alone: a minimal HTTP/1.1 client
//! over `std::net::TcpStream` (one kept-alive connection per [`Client`]) that asks for the
//! binary wire format and decodes it frame by frame.
//!
//! ```no_run
//! let mut client = warren_client::Client::connect("http://127.0.0.1:7878", None)?;
//! let answer = client.query("MATCH (a:Person) RETURN a.ID LIMIT 3", "{}")?;
//! println!("{} rows", answer.trailer.rows);
//! # Ok::<(), warren_client::ClientError>(())
//! ```

mod http;

use std::fmt;
use std::io::{self, Read};
use std::time::{Duration, Instant};

use warren_wire::{Chunk, Encode, Header, Message, QueryRequest, Trailer};

pub use http::{HttpResponse, ResponseBody};

#[derive(Debug)]
pub enum ClientError {
    /// The URL is not `http://host:port[/]`.
    Url(String),
    Io(io::Error),
    /// The server answered with an error status; `text` is its `Error: <kind>: <message>` line.
    Status {
        status: u16,
        text: String,
    },
    /// The response is not a well-formed HTTP response or wire stream.
    Protocol(String),
    /// The query failed after its header was sent: the engine's error.
    Query {
        kind: String,
        message: String,
    },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Url(url) => write!(f, "not an http://host:port URL: {url}"),
            ClientError::Io(error) => write!(f, "{error}"),
            ClientError::Status { status, text } => write!(f, "HTTP {status}: {}", text.trim_end()),
            ClientError::Protocol(message) => write!(f, "protocol error: {message}"),
            ClientError::Query { kind, message } => write!(f, "Error: {message} ({kind})"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<io::Error> for ClientError {
    fn from(error: io::Error) -> Self {
        ClientError::Io(error)
    }
}

/// A whole decoded result.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub header: Header,
    pub chunks: Vec<Chunk>,
    pub trailer: Trailer,
}

#[derive(Debug)]
pub struct Client {
    host: String,
    token: Option<String>,
    /// The limit on connecting and on each read and write; `None` waits for ever.
    timeout: Option<Duration>,
    /// The longest poll for an answer before blocking ([`Client::set_poll_window`]).
    poll_max: Duration,
    /// The next request's poll, adapted to how soon answers come ([`next_poll_window`]).
    poll_window: Duration,
    /// Answers whose first bytes the poll found, and answers it did not (it ran out).
    polls: PollCounts,
    connection: Option<http::Connection>,
}

/// What the client's polls before blocking found ([`Client::set_poll_window`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PollCounts {
    /// Answers that arrived while the client polled.
    pub caught: u64,
    /// Polls that ran out before the answer came (the client then blocked).
    pub missed: u64,
}

/// The longest poll window [`Client::set_poll_window`] accepts.
pub const POLL_WINDOW_MAX: Duration = Duration::from_millis(1);

/// The poll window of a new client: an answer that comes within it is read without the
/// wake-up of a blocked thread (OPTIMIZATION_LOG 260: a one-row round trip on a 2-vCPU guest
/// from about 60 to about 30 µs beside the server's own spin).
pub const POLL_WINDOW_DEFAULT: Duration = Duration::from_micros(200);

/// The smallest window a grown poll starts from; a poll halved below it becomes 0.
const POLL_WINDOW_START: Duration = Duration::from_micros(10);

/// The next request's poll window after one that polled for `current` (at most `max`) and
/// whose answer came after `wait` (`caught`: while polling), as the kernel's halt-polling
/// adapts: an answer the longest poll would have caught grows the window (doubled, from
/// [`POLL_WINDOW_START`]); one that came later halves it, to 0 below the start. A client
/// whose queries take longer than `max` soon stops spending CPU on polls, and one whose
/// answers come quickly again soon polls again.
pub fn next_poll_window(
    current: Duration,
    max: Duration,
    caught: bool,
    wait: Duration,
) -> Duration {
    if caught || wait <= max {
        (current * 2).max(POLL_WINDOW_START).min(max)
    } else if current / 2 < POLL_WINDOW_START {
        Duration::ZERO
    } else {
        current / 2
    }
}

impl Client {
    /// Parses `http://host:port` and connects.
    pub fn connect(url: &str, token: Option<&str>) -> Result<Client, ClientError> {
        Client::connect_with_timeout(url, token, None)
    }

    /// As [`Client::connect`], with a limit on connecting and on each read and write (a
    /// query's answer must start, and then keep coming, within it).
    pub fn connect_with_timeout(
        url: &str,
        token: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<Client, ClientError> {
        if timeout == Some(Duration::ZERO) {
            return Err(ClientError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a timeout must be longer than zero",
            )));
        }
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| ClientError::Url(url.to_string()))?;
        let host = rest.trim_end_matches('/');
        if host.is_empty() || host.contains('/') || !host.contains(':') {
            return Err(ClientError::Url(url.to_string()));
        }
        let mut client = Client {
            host: host.to_string(),
            token: token.map(str::to_string),
            timeout,
            poll_max: POLL_WINDOW_DEFAULT,
            poll_window: POLL_WINDOW_DEFAULT,
            polls: PollCounts::default(),
            connection: None,
        };
        client.connection = Some(http::Connection::open(&client.host, timeout)?);
        Ok(client)
    }

    /// After sending a request, poll the socket without blocking for up to `window` before
    /// blocking on it ([`POLL_WINDOW_DEFAULT`] unless set; zero: block at once). For latency
    /// on a machine whose idle CPUs sleep: a thread blocked in `recv` on an idle CPU is woken
    /// by an interrupt, which on a virtual machine that halts idle vCPUs costs tens of
    /// microseconds, while a polling thread sees the answer as it lands. It spends a CPU for
    /// up to `window` per request, less as answers come later ([`next_poll_window`]), and
    /// gives the poll up when another thread wants the CPU; at most [`POLL_WINDOW_MAX`]. A
    /// load generator with many clients on few cores sets 0.
    pub fn set_poll_window(&mut self, window: Duration) -> Result<(), ClientError> {
        if window > POLL_WINDOW_MAX {
            return Err(ClientError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a poll window of at most {POLL_WINDOW_MAX:?}"),
            )));
        }
        self.poll_max = window;
        self.poll_window = window;
        Ok(())
    }

    /// What the polls before blocking found so far.
    pub fn poll_counts(&self) -> PollCounts {
        self.polls
    }

    /// Sends one request and returns the response with its body unread; the connection is
    /// reused for the next request once that body has been read to its end.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<HttpResponse<'_>, ClientError> {
        let authorization = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut all: Vec<(&str, &str)> = headers.to_vec();
        if let Some(value) = &authorization {
            all.push(("Authorization", value));
        }
        let reusable = self
            .connection
            .as_ref()
            .is_some_and(http::Connection::reusable);
        if !reusable {
            self.connection = Some(http::Connection::open(&self.host, self.timeout)?);
        }
        let connection = self
            .connection
            .as_mut()
            .expect("a connection was just opened");
        if connection
            .send(method, &self.host, path, &all, body)
            .is_err()
        {
            // The server may have closed a kept-alive connection: one fresh try.
            *connection = http::Connection::open(&self.host, self.timeout)?;
            connection.send(method, &self.host, path, &all, body)?;
        }
        let sent = Instant::now();
        let (response, polled) = connection.response(self.poll_window)?;
        if !self.poll_window.is_zero() {
            if polled {
                self.polls.caught += 1;
            } else {
                self.polls.missed += 1;
            }
        }
        if !self.poll_max.is_zero() {
            self.poll_window =
                next_poll_window(self.poll_window, self.poll_max, polled, sent.elapsed());
        }
        Ok(response)
    }

    /// Runs a query, `parameters` a JSON object as text (`"{}"` for none), and streams its
    /// result: the header first, then [`ResultStream::next_chunk`] until it returns `None`.
    pub fn query_stream(
        &mut self,
        query: &str,
        parameters: &str,
    ) -> Result<ResultStream<'_>, ClientError> {
        let body = format!(
            "{{\"query\": {}, \"parameters\": {parameters}}}",
            json_string(query)
        );
        self.start(body.as_bytes(), "application/json", false)
    }

    /// Runs a binary request (typed parameters; with `every_statement`, one result per
    /// statement: read each with [`ResultStream::next_chunk`], then move to the next with
    /// [`ResultStream::next_result`]).
    pub fn request_stream(
        &mut self,
        request: &QueryRequest,
    ) -> Result<ResultStream<'_>, ClientError> {
        self.start(
            &request.to_bytes(),
            warren_wire::CONTENT_TYPE,
            request.every_statement,
        )
    }

    /// Asks the server to stop the query in flight with id `query_id` (as sent in a
    /// [`QueryRequest`]); `false` when no query in flight has it (it may have ended).
    pub fn cancel(&mut self, query_id: u64) -> Result<bool, ClientError> {
        let body = format!("{{\"query_id\": {query_id}}}");
        let response = self.request(
            "POST",
            "/cancel",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )?;
        let status = response.status;
        let text = String::from_utf8_lossy(&response.into_bytes()?).into_owned();
        match status {
            200 => Ok(true),
            404 => Ok(false),
            _ => Err(ClientError::Status { status, text }),
        }
    }

    fn start(
        &mut self,
        body: &[u8],
        content_type: &str,
        every_statement: bool,
    ) -> Result<ResultStream<'_>, ClientError> {
        let response = self.request(
            "POST",
            "/query",
            &[
                ("Accept", warren_wire::CONTENT_TYPE),
                ("Content-Type", content_type),
            ],
            body,
        )?;
        if response.status != 200 {
            let status = response.status;
            let mut text = String::new();
            let mut body = response.body;
            body.read_to_string(&mut text)?;
            return Err(ClientError::Status { status, text });
        }
        let mut body = response.body;
        let mut results = 1;
        if every_statement {
            results = match read_message(&mut body)? {
                Some(Message::Results(n)) if n > 0 => n,
                other => return Err(unexpected("a result count", other)),
            };
        }
        let header = read_header(&mut body)?;
        Ok(ResultStream {
            header,
            body,
            trailer: None,
            results_left: results - 1,
        })
    }

    /// Runs a query and collects its whole result.
    pub fn query(&mut self, query: &str, parameters: &str) -> Result<Answer, ClientError> {
        let mut stream = self.query_stream(query, parameters)?;
        let mut chunks = Vec::new();
        while let Some(chunk) = stream.next_chunk()? {
            chunks.push(chunk);
        }
        let trailer = stream
            .trailer
            .take()
            .expect("the stream ended with its trailer");
        Ok(Answer {
            header: stream.header,
            chunks,
            trailer,
        })
    }
}

fn unexpected(expected: &str, got: Option<Message>) -> ClientError {
    match got {
        Some(Message::Error(error)) => ClientError::Query {
            kind: error.kind,
            message: error.message,
        },
        other => ClientError::Protocol(format!("expected {expected}, got {other:?}")),
    }
}

fn read_header(body: &mut ResponseBody<'_>) -> Result<Header, ClientError> {
    match read_message(body)? {
        Some(Message::Header(header)) => Ok(header),
        other => Err(unexpected("a header", other)),
    }
}

fn read_message(body: &mut ResponseBody<'_>) -> Result<Option<Message>, ClientError> {
    warren_wire::read_frame(body).map_err(|e| match e.kind() {
        io::ErrorKind::InvalidData => ClientError::Protocol(e.to_string()),
        _ => ClientError::Io(e),
    })
}

/// A result being received: chunks one at a time, so a large result need not fit in memory.
#[derive(Debug)]
pub struct ResultStream<'a> {
    pub header: Header,
    body: ResponseBody<'a>,
    trailer: Option<Trailer>,
    /// Results that follow this one (a request for every statement's result).
    results_left: u64,
}

impl ResultStream<'_> {
    /// The next chunk, or `None` after the trailer (then [`ResultStream::trailer`] has it).
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>, ClientError> {
        if self.trailer.is_some() {
            return Ok(None);
        }
        match read_message(&mut self.body)? {
            Some(Message::Chunk(chunk)) => Ok(Some(chunk)),
            Some(Message::End(trailer)) => {
                self.trailer = Some(trailer);
                if self.results_left == 0 {
                    // Read to the body's end so the connection can carry the next request.
                    io::copy(&mut self.body, &mut io::sink())?;
                }
                Ok(None)
            }
            Some(Message::Error(error)) => Err(ClientError::Query {
                kind: error.kind,
                message: error.message,
            }),
            Some(Message::Header(_) | Message::Results(_)) => Err(ClientError::Protocol(
                "a header or result count inside a result".into(),
            )),
            None => Err(ClientError::Protocol(
                "the result ended without a trailer".into(),
            )),
        }
    }

    pub fn trailer(&self) -> Option<&Trailer> {
        self.trailer.as_ref()
    }

    /// Results after this one.
    pub fn results_left(&self) -> u64 {
        self.results_left
    }

    /// Moves to the next statement's result once this one has been read to its trailer:
    /// `false` when this was the last.
    pub fn next_result(&mut self) -> Result<bool, ClientError> {
        if self.trailer.is_none() {
            return Err(ClientError::Protocol(
                "next_result before the current result's end".into(),
            ));
        }
        if self.results_left == 0 {
            return Ok(false);
        }
        self.header = read_header(&mut self.body)?;
        self.trailer = None;
        self.results_left -= 1;
        Ok(true)
    }
}

/// `text` as a JSON string literal.
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_silent_server_times_out() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        // Accepts and reads nothing, answers nothing; the connection stays open until the end.
        let holder = std::thread::spawn(move || listener.accept().map(|(stream, _)| stream));
        let timeout = Some(Duration::from_millis(200));
        let mut client = Client::connect_with_timeout(&url, None, timeout).unwrap();
        let started = std::time::Instant::now();
        let error = client.query("RETURN 1", "{}").unwrap_err();
        let ClientError::Io(error) = error else {
            panic!("expected an IO error, got {error:?}")
        };
        assert!(
            matches!(
                error.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{error:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        drop(holder.join().unwrap());
    }

    /// A server that writes `answers` one-line HTTP answers, each `delay` after reading a
    /// request (or, with no delay, at once on accepting, before any request comes).
    fn scripted_server(answers: usize, delay: Option<Duration>) -> String {
        use std::io::{Read as _, Write as _};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            let mut buffer = [0u8; 4096];
            for _ in 0..answers {
                match delay {
                    None => stream.write_all(answer).unwrap(),
                    Some(delay) => {
                        let _ = stream.read(&mut buffer).unwrap();
                        std::thread::sleep(delay);
                        stream.write_all(answer).unwrap();
                    }
                }
            }
            // Holds the connection until the client is done.
            let _ = stream.read(&mut buffer);
        });
        url
    }

    fn get_ok(client: &mut Client) {
        let response = client.request("GET", "/health", &[], b"").unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.into_bytes().unwrap(), b"ok");
    }

    #[test]
    fn a_poll_finds_an_answer_already_there() {
        let url = scripted_server(1, None);
        let mut client = Client::connect(&url, None).unwrap();
        client.set_poll_window(POLL_WINDOW_MAX).unwrap();
        // The answer is written on accepting: it is in the socket before the request goes.
        std::thread::sleep(Duration::from_millis(50));
        get_ok(&mut client);
        assert_eq!(
            client.poll_counts(),
            PollCounts {
                caught: 1,
                missed: 0
            }
        );
    }

    #[test]
    fn no_poll_when_set_to_zero_and_no_long_windows() {
        let url = scripted_server(1, Some(Duration::ZERO));
        let mut client = Client::connect(&url, None).unwrap();
        assert_eq!(
            client.poll_window, POLL_WINDOW_DEFAULT,
            "a new client polls"
        );
        client.set_poll_window(Duration::ZERO).unwrap();
        get_ok(&mut client);
        assert_eq!(client.poll_counts(), PollCounts::default());
        let error = client
            .set_poll_window(POLL_WINDOW_MAX + Duration::from_micros(1))
            .unwrap_err();
        assert!(error.to_string().contains("at most"), "{error}");
    }

    #[test]
    fn the_poll_window_grows_on_quick_answers_and_shrinks_to_zero_on_slow_ones() {
        let max = Duration::from_micros(200);
        let quick = Duration::from_micros(50);
        let slow = Duration::from_millis(5);
        assert_eq!(
            next_poll_window(max, max, true, quick),
            max,
            "capped at max"
        );
        assert_eq!(next_poll_window(max, max, false, slow), max / 2);
        let mut window = max;
        let mut halvings = 0;
        while !window.is_zero() {
            window = next_poll_window(window, max, false, slow);
            halvings += 1;
            assert!(halvings < 10, "slow answers stop the polls");
        }
        // At 0 the client blocks; an answer that a poll would have caught starts it again.
        assert_eq!(
            next_poll_window(window, max, false, quick),
            POLL_WINDOW_START
        );
        assert_eq!(
            next_poll_window(POLL_WINDOW_START, max, false, quick),
            POLL_WINDOW_START * 2
        );
        assert_eq!(next_poll_window(window, max, false, slow), Duration::ZERO);
    }

    #[test]
    fn a_poll_that_runs_out_blocks_and_late_answers_stop_the_polls() {
        let url = scripted_server(6, Some(Duration::from_millis(20)));
        let mut client = Client::connect(&url, None).unwrap();
        client.set_poll_window(Duration::from_micros(40)).unwrap();
        for _ in 0..6 {
            get_ok(&mut client);
        }
        // 40, 20, 10 µs missed (each answer then read blocking), then no poll at all.
        assert_eq!(
            client.poll_counts(),
            PollCounts {
                caught: 0,
                missed: 3
            }
        );
        assert_eq!(client.poll_window, Duration::ZERO);
    }

    #[test]
    fn a_zero_timeout_is_refused() {
        let error = Client::connect_with_timeout("http://127.0.0.1:1", None, Some(Duration::ZERO))
            .unwrap_err();
        assert!(error.to_string().contains("longer than zero"), "{error}");
    }
}

//! Just enough HTTP/1.1: requests with a `Content-Length` body; responses with a
//! `Content-Length` or chunked body, read incrementally.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::ClientError;

/// Response header lines are limited to this many bytes each, and to this many lines.
const HEADER_LINE_BYTES_MAX: usize = 16 * 1024;
const HEADER_LINES_MAX: usize = 100;
/// A `sched_yield` that took longer than this gave the CPU to another thread: the CPU is busy,
/// so it will not halt, and the poll would only take its share.
const YIELD_LOST: Duration = Duration::from_micros(20);

#[derive(Debug)]
pub(crate) struct Connection {
    reader: BufReader<TcpStream>,
    /// Whether the last response was read to its end and the server keeps the connection.
    idle: bool,
}

impl Connection {
    /// Connects to `host` (`name:port`); with a `timeout`, connecting and each read and write
    /// on the connection fail with `TimedOut`/`WouldBlock` after it.
    pub(crate) fn open(host: &str, timeout: Option<Duration>) -> Result<Connection, ClientError> {
        let stream = match timeout {
            None => TcpStream::connect(host)?,
            Some(timeout) => connect_timeout(host, timeout)?,
        };
        stream.set_nodelay(true)?;
        stream.set_read_timeout(timeout)?;
        stream.set_write_timeout(timeout)?;
        Ok(Connection {
            reader: BufReader::with_capacity(64 * 1024, stream),
            idle: true,
        })
    }

    pub(crate) fn reusable(&self) -> bool {
        self.idle
    }

    pub(crate) fn send(
        &mut self,
        method: &str,
        host: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<()> {
        self.idle = false;
        let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n");
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        let stream = self.reader.get_mut();
        stream.write_all(&bytes)?;
        stream.flush()
    }

    fn line(&mut self) -> Result<String, ClientError> {
        let mut line = Vec::new();
        let read = (&mut self.reader)
            .take(HEADER_LINE_BYTES_MAX as u64)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            return Err(ClientError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )));
        }
        if line.last() != Some(&b'\n') {
            return Err(ClientError::Protocol("a header line too long".into()));
        }
        let text = String::from_utf8(line)
            .map_err(|_| ClientError::Protocol("a header line is not UTF-8".into()))?;
        Ok(text.trim_end_matches(['\r', '\n']).to_string())
    }

    /// Reads the response's status line and headers. With a `poll_window`, first polls the
    /// socket without blocking for up to that long (see [`crate::Client::set_poll_window`]);
    /// returns whether that poll found the answer's first bytes.
    pub(crate) fn response(
        &mut self,
        poll_window: Duration,
    ) -> Result<(HttpResponse<'_>, bool), ClientError> {
        let polled = self.poll_readable(poll_window)?;
        Ok((self.read_head()?, polled))
    }

    /// Polls the socket without blocking, yielding the CPU between peeks, until it has bytes
    /// (or its end, or an error: the blocking read that follows reports those), `window` has
    /// passed or a yield let another thread run. `false` at once with a zero window or bytes
    /// already buffered.
    fn poll_readable(&mut self, window: Duration) -> io::Result<bool> {
        if window.is_zero() || !self.reader.buffer().is_empty() {
            return Ok(false);
        }
        let stream = self.reader.get_ref();
        stream.set_nonblocking(true)?;
        let started = Instant::now();
        let mut byte = [0u8; 1];
        let found = loop {
            match stream.peek(&mut byte) {
                Ok(_) => break true,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => break false,
            }
            if started.elapsed() >= window {
                break false;
            }
            // Yield between peeks: a thread that wants this CPU (the server's, on a machine
            // with one free core) runs at once, and a yield that lost the CPU ends the poll.
            let yielded = Instant::now();
            std::thread::yield_now();
            if yielded.elapsed() > YIELD_LOST {
                break stream.peek(&mut byte).is_ok();
            }
        };
        stream.set_nonblocking(false)?;
        Ok(found)
    }

    fn read_head(&mut self) -> Result<HttpResponse<'_>, ClientError> {
        let status_line = self.line()?;
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .filter(|_| status_line.starts_with("HTTP/1."))
            .ok_or_else(|| ClientError::Protocol(format!("bad status line {status_line:?}")))?;
        let mut headers = Vec::new();
        loop {
            let line = self.line()?;
            if line.is_empty() {
                break;
            }
            if headers.len() == HEADER_LINES_MAX {
                return Err(ClientError::Protocol("too many header lines".into()));
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| ClientError::Protocol(format!("bad header line {line:?}")))?;
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let keep_alive = !header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let framing =
            if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
                Framing::Chunked {
                    left: 0,
                    done: false,
                }
            } else if let Some(length) = header("content-length") {
                let length = length
                    .parse::<u64>()
                    .map_err(|_| ClientError::Protocol(format!("bad content-length {length:?}")))?;
                Framing::Length(length)
            } else {
                Framing::UntilClose
            };
        if matches!(framing, Framing::Length(0)) {
            self.idle = keep_alive;
        }
        Ok(HttpResponse {
            status,
            headers,
            body: ResponseBody {
                connection: self,
                framing,
                keep_alive,
            },
        })
    }
}

/// Tries each address `host` resolves to, each for at most `timeout`.
fn connect_timeout(host: &str, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = io::Error::new(
        io::ErrorKind::NotFound,
        format!("{host} resolves to nothing"),
    );
    for address in host.to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(stream) => return Ok(stream),
            Err(error) => last = error,
        }
    }
    Err(last)
}

#[derive(Debug)]
pub struct HttpResponse<'a> {
    pub status: u16,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: ResponseBody<'a>,
}

impl HttpResponse<'_> {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Reads the whole body.
    pub fn into_bytes(mut self) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.body.read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

#[derive(Debug)]
enum Framing {
    Length(u64),
    Chunked { left: u64, done: bool },
    UntilClose,
}

/// A response body being read; reading it to its end frees the connection for reuse.
#[derive(Debug)]
pub struct ResponseBody<'a> {
    connection: &'a mut Connection,
    framing: Framing,
    keep_alive: bool,
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

impl ResponseBody<'_> {
    fn finished(&mut self) {
        self.connection.idle = self.keep_alive && !matches!(self.framing, Framing::UntilClose);
    }

    fn chunk_size(&mut self) -> io::Result<u64> {
        let line = self.connection.line().map_err(|e| match e {
            ClientError::Io(e) => e,
            other => invalid(&other.to_string()),
        })?;
        let size = line.split(';').next().unwrap_or_default().trim();
        u64::from_str_radix(size, 16).map_err(|_| invalid("a bad chunk size"))
    }
}

impl Read for ResponseBody<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.framing {
            Framing::Length(0) => Ok(0),
            Framing::Length(left) => {
                let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                let read = self.connection.reader.read(&mut buf[..want])?;
                if read == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                self.framing = Framing::Length(left - read as u64);
                if left == read as u64 {
                    self.finished();
                }
                Ok(read)
            }
            Framing::Chunked { done: true, .. } => Ok(0),
            Framing::Chunked { left: 0, .. } => {
                let size = self.chunk_size()?;
                if size == 0 {
                    // Trailer lines, up to the empty line.
                    loop {
                        let line = self
                            .connection
                            .line()
                            .map_err(|e| invalid(&e.to_string()))?;
                        if line.is_empty() {
                            break;
                        }
                    }
                    self.framing = Framing::Chunked {
                        left: 0,
                        done: true,
                    };
                    self.finished();
                    return Ok(0);
                }
                self.framing = Framing::Chunked {
                    left: size,
                    done: false,
                };
                self.read(buf)
            }
            Framing::Chunked { left, .. } => {
                let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                let read = self.connection.reader.read(&mut buf[..want])?;
                if read == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                let left = left - read as u64;
                if left == 0 {
                    let mut crlf = [0u8; 2];
                    self.connection.reader.read_exact(&mut crlf)?;
                    if &crlf != b"\r\n" {
                        return Err(invalid("a chunk without its CRLF"));
                    }
                }
                self.framing = Framing::Chunked { left, done: false };
                Ok(read)
            }
            Framing::UntilClose => self.connection.reader.read(buf),
        }
    }
}

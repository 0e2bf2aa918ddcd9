//! Standard output that notices when its reader went away (`warren query ... | head -1`): the
//! write fails with a broken pipe, the error travels up as usual, and `main` then exits with
//! status 0 and no message, as `cat` and `grep` do.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a write to standard output found the pipe closed.
pub fn stdout_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// A writer that records broken pipes before returning them.
#[derive(Debug)]
pub struct Watched<W: Write>(pub W);

fn watch<T>(result: io::Result<T>) -> io::Result<T> {
    if let Err(error) = &result {
        if error.kind() == io::ErrorKind::BrokenPipe {
            CLOSED.store(true, Ordering::Relaxed);
        }
    }
    result
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        watch(self.0.write(bytes))
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        watch(self.0.write_all(bytes))
    }

    fn flush(&mut self) -> io::Result<()> {
        watch(self.0.flush())
    }
}

/// Buffered, watched standard output.
pub fn stdout() -> io::BufWriter<Watched<io::StdoutLock<'static>>> {
    io::BufWriter::with_capacity(64 << 10, Watched(io::stdout().lock()))
}

//! The one error enum of Warren. Each variant says who is to blame, and its text follows
//! Kùzu's wording (`Binder exception: ...`) so that messages compare equal to Kùzu's tests.

use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A position in query text (1-based line and column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum Error {
    /// The query text does not parse. `message` already names the position.
    #[error("Parser exception: {message}")]
    Syntax { message: String, position: Position },
    /// The query parses but is not valid against the catalog or the type rules.
    #[error("Binder exception: {0}")]
    Binder(String),
    /// Catalog operations: creating a table that exists, dropping one that does not.
    #[error("Catalog exception: {0}")]
    Catalog(String),
    /// A value could not be converted (a bad literal, a bad cast).
    #[error("Conversion exception: {0}")]
    Conversion(String),
    /// A bad input row during COPY. `location` is `file:line`, empty when no row is to blame.
    #[error("Copy exception: {}", located(location, message))]
    Copy { location: String, message: String },
    /// A failure while running a valid query (division by zero, index out of range, ...).
    #[error("Runtime exception: {0}")]
    Runtime(String),
    /// The operating system refused a file operation.
    #[error("IO exception: {0}")]
    Io(String),
    /// A configured limit (memory, hops, rows, time) would be exceeded.
    #[error("LimitExceeded: {0}")]
    LimitExceeded(String),
    /// The query was interrupted (timeout or cancellation).
    #[error("Interrupted: {0}")]
    Interrupted(String),
    /// A database file is damaged or of an unknown version.
    #[error("Storage exception: {0}")]
    Corrupt(String),
    /// A bug in Warren: an invariant did not hold.
    #[error("Internal error: {0}")]
    Internal(String),
}

fn located(location: &str, message: &str) -> String {
    if location.is_empty() {
        message.to_string()
    } else {
        format!("{location}: {message}")
    }
}

impl Error {
    /// The short kind name printed by the command line as `Error: <kind>: <message>`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Syntax { .. } => "Parser exception",
            Error::Binder(_) => "Binder exception",
            Error::Catalog(_) => "Catalog exception",
            Error::Conversion(_) => "Conversion exception",
            Error::Copy { .. } => "Copy exception",
            Error::Runtime(_) => "Runtime exception",
            Error::Io(_) => "IO exception",
            Error::LimitExceeded(_) => "LimitExceeded",
            Error::Interrupted(_) => "Interrupted",
            Error::Corrupt(_) => "Storage exception",
            Error::Internal(_) => "Internal error",
        }
    }

    /// The same error with `suffix` appended to its message (e.g. a script location).
    pub fn with_suffix(self, suffix: &str) -> Self {
        let extend = |message: String| format!("{message}{suffix}");
        match self {
            // The suffix goes on the first line, before the quoted statement and caret lines.
            Error::Syntax { message, position } => {
                let message = match message.split_once('\n') {
                    Some((first, rest)) => format!("{first}{suffix}\n{rest}"),
                    None => extend(message),
                };
                Error::Syntax { message, position }
            }
            Error::Binder(m) => Error::Binder(extend(m)),
            Error::Catalog(m) => Error::Catalog(extend(m)),
            Error::Conversion(m) => Error::Conversion(extend(m)),
            Error::Copy { location, message } => Error::Copy {
                location,
                message: extend(message),
            },
            Error::Runtime(m) => Error::Runtime(extend(m)),
            Error::Io(m) => Error::Io(extend(m)),
            Error::LimitExceeded(m) => Error::LimitExceeded(extend(m)),
            Error::Interrupted(m) => Error::Interrupted(extend(m)),
            Error::Corrupt(m) => Error::Corrupt(extend(m)),
            Error::Internal(m) => Error::Internal(extend(m)),
        }
    }

    pub fn binder(message: impl Into<String>) -> Self {
        Error::Binder(message.into())
    }

    pub fn runtime(message: impl Into<String>) -> Self {
        Error::Runtime(message.into())
    }

    pub fn conversion(message: impl Into<String>) -> Self {
        Error::Conversion(message.into())
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Error::Internal(message.into())
    }

    pub fn io(context: impl fmt::Display, error: std::io::Error) -> Self {
        Error::Io(format!("{context}: {error}"))
    }
}

//! Warren: an embeddable graph database for recursive path queries.
//!
//! ```
//! let db = warren::Database::in_memory();
//! let mut conn = db.connect();
//! conn.query("CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID))").unwrap();
//! conn.query("CREATE REL TABLE Knows(FROM Person TO Person)").unwrap();
//! conn.query("CREATE (:Person {ID: 0})-[:Knows]->(:Person {ID: 1})").unwrap();
//! let mut result = conn
//!     .query("MATCH (a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) RETURN a.ID, b.ID, length(r)")
//!     .unwrap();
//! assert_eq!(result.to_strings().unwrap(), vec!["0|1|1"]);
//! ```

mod connection;
mod database;
pub mod hardware;
pub mod json;
mod profile;
mod progress;
mod result;
mod settings;
pub mod wire;
pub mod wire_parameter;

pub use connection::Connection;
pub use database::{Database, DatabaseOptions};
pub use result::QueryResult;
pub use settings::Settings;
pub use warren_common::column_batch;
pub use warren_common::{Error, LogicalType, Result, Value};
pub use warren_exec::recursive::counters::{LevelSummary, TraversalSummary};
pub use warren_planner::UserFunction;
pub use warren_storage::Snapshot;

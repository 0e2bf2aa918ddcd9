//! Warren's storage: the catalog, typed columns, CSR adjacency, the primary-key index, immutable
//! snapshots and the editor that builds the next one, CSV import, and the database directory
//! that persists snapshots atomically. `docs/format/storage.md` gives the byte layout.

pub mod adjacency;
pub mod buffer;
pub mod catalog;
pub mod changes;
pub mod column;
pub mod csr;
pub mod database_dir;
pub mod delta;
pub mod editor;
pub mod import;
pub mod io;
pub mod log_record;
pub mod node_table;
pub mod pk_index;
pub mod rel_table;
pub mod reorder;
pub mod section_check;
pub mod segment;
pub mod snapshot;
pub mod table_files;
pub mod value_codec;
pub mod wal;

pub use catalog::{
    Catalog, NodeTableSchema, Property, RelPairSchema, RelTableSchema, VectorIndexSchema,
};
pub use database_dir::{DatabaseDir, IndexGraphEntry};
pub use editor::Editor;
pub use node_table::NodeTable;
pub use rel_table::{Direction, RelTable};
pub use snapshot::{Snapshot, TableData};

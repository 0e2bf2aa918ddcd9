//! Import: `COPY table FROM 'file'` for CSV files and `COPY table FROM (query)`, and the CSV
//! reading behind `LOAD FROM`. Options and dialect detection live in [`options`], file reading
//! in [`csv_reader`], conversion of rows into table data in [`copy`]. A bad row stops the COPY
//! with its location and the reason, and the table is left as it was.

pub mod copy;
pub mod csv_reader;
pub mod npy;
pub mod options;
pub mod parallel_rels;
pub mod phases;
mod plain_pairs;

pub use copy::{copy_from_files, copy_from_rows, CopySummary, CopyWarning};
pub use csv_reader::{read_rows, read_rows_ignoring_errors, sniff_columns, CopyProgress};
pub use options::CsvOptions;
pub use phases::{CopyPhases, PhaseCost};

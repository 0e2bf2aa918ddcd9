//! Import: `COPY table FROM 'file'` for CSV files. Options and dialect detection live in
//! [`options`], reading and type conversion of rows in [`copy`]. A bad row stops the COPY with
//! `file:line` and the reason, and the table is left as it was.

pub mod copy;
pub mod options;

pub use copy::{copy_from_files, CopyProgress, CopySummary};
pub use options::CsvOptions;

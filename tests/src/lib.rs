//! Warren's integration-test machinery: a reader and runner for Kùzu's end-to-end `.test`
//! format, shared by two test targets.
//!
//! * `conformance` runs Kùzu's own test files (`shared/conformance/kuzu`) against Warren and
//!   guards the number of passing statements with `conformance_baseline.txt`.
//! * `golden` runs Warren's own `.test` files under `tests/golden/` the same way, and can
//!   rewrite their expectations from Warren's answers (`WARREN_GOLDEN_REWRITE=1`).
//!
//! The pieces, one per module: [`test_file`] parses the format, [`variables`] fills in
//! `${NAME}`, [`dataset`] loads `-DATASET`s, [`execute`] runs one statement (catching panics
//! with [`panic_capture`]), [`compare`] checks a result against its expected blocks
//! ([`block_text`] writes both in the file's notation), [`case_runner`] runs a whole `-CASE`
//! under a watchdog, [`suite`] runs every file, [`skip_list`], [`baseline`] and
//! [`recursive_index`] read the side files, [`report`] prints and writes the results, and
//! [`rewrite`] regenerates expectations.

pub mod baseline;
pub mod block_text;
pub mod case_runner;
pub mod compare;
pub mod dataset;
pub mod execute;
pub mod panic_capture;
pub mod recursive_index;
pub mod report;
pub mod rewrite;
pub mod skip_list;
pub mod suite;
pub mod test_file;
pub mod variables;

//! The parallel read of a rel COPY's endpoints: the CSV files are cut into chunks at line breaks
//! ([`SplitFiles`]), workers resolve each chunk's endpoint keys into the chunk's own range of the
//! source and target arrays, and the arrays are then closed up where blank lines left room
//! unused. Rows keep their file order, so the rel ids, the CSRs and the first error reported
//! (the first failing row in file order) are those of the one-reader path.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use warren_common::Result;

use crate::buffer::U32Words;
use crate::import::csv_reader::{Chunk, CopyProgress, RowReader, SplitFiles};
use crate::import::plain_pairs::{read_plain_pairs, PlainResolve};

/// The most worker threads one COPY starts.
pub const COPY_THREADS_MAX: usize = 16;
/// How often the progress bar is advanced while workers read.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// The worker threads for a COPY: one per core, at most [`COPY_THREADS_MAX`].
pub fn copy_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(COPY_THREADS_MAX)
}

/// The endpoint arrays of a rel table: the stored rels' followed by the files' rows.
pub(crate) struct Endpoints {
    pub(crate) sources: U32Words,
    pub(crate) targets: U32Words,
}

/// Turns a row into its (source, target) node offsets or fails with the row's error.
pub(crate) type ResolveCsvRow<'a> = dyn Fn(&RowReader<'_>) -> Result<(u32, u32)> + Sync + 'a;

/// How a worker resolves rows: `plain`, where given, reads chunks of plain integer pairs
/// ([`read_plain_pairs`]); `resolve` reads the chunks it gives up on, and all of them without it.
pub(crate) struct Resolvers<'a> {
    pub(crate) resolve: &'a ResolveCsvRow<'a>,
    pub(crate) plain: Option<&'a PlainResolve<'a>>,
}

/// Reads every row of `split` with `threads` workers through `resolvers`. The first `stored`
/// entries of the result are `stored_sources` and `stored_targets`.
pub(crate) fn read_endpoints(
    split: &SplitFiles,
    (stored_sources, stored_targets): (&[u32], &[u32]),
    threads: usize,
    progress: &mut dyn CopyProgress,
    resolvers: &Resolvers<'_>,
) -> Result<Endpoints> {
    assert!(threads >= 1, "a COPY needs a thread");
    let chunks = split.chunks();
    let stored = stored_sources.len();
    let capacity = stored + chunks.iter().map(|c| c.rows_max).sum::<usize>();
    let mut sources = U32Words::zeroed(capacity);
    let mut targets = U32Words::zeroed(capacity);
    sources.as_mut_slice()[..stored].copy_from_slice(stored_sources);
    targets.as_mut_slice()[..stored].copy_from_slice(stored_targets);
    let slots = chunk_slots(
        &mut sources.as_mut_slice()[stored..],
        &mut targets.as_mut_slice()[stored..],
        chunks.iter().map(|c| c.rows_max),
    );
    let outcomes: Vec<Mutex<Option<Result<usize>>>> =
        chunks.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let first_failure = AtomicUsize::new(usize::MAX);
    let bytes_read = AtomicU64::new(0);
    let workers_left = AtomicUsize::new(threads);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                // Counts the worker out even when it panics, so the progress loop ends and the
                // scope passes the panic on instead of waiting for it forever.
                let _leaving = LeavesOnDrop(&workers_left);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    // Chunks after a failing one are not needed: its error is reported.
                    if index >= chunks.len() || index > first_failure.load(Ordering::Relaxed) {
                        break;
                    }
                    let (chunk_sources, chunk_targets) = slots[index]
                        .lock()
                        .expect("slot lock")
                        .take()
                        .expect("each chunk is taken once");
                    let outcome = read_chunk(
                        split,
                        &chunks[index],
                        resolvers,
                        chunk_sources,
                        chunk_targets,
                    );
                    if outcome.is_err() {
                        first_failure.fetch_min(index, Ordering::Relaxed);
                    }
                    bytes_read.fetch_add(chunks[index].range.len() as u64, Ordering::Relaxed);
                    *outcomes[index].lock().expect("outcome lock") = Some(outcome);
                }
            });
        }
        report_progress(progress, split.total_bytes(), &bytes_read, &workers_left);
    });
    let mut rows = Vec::with_capacity(chunks.len());
    for outcome in outcomes {
        match outcome.into_inner().expect("outcome lock") {
            Some(Ok(count)) => rows.push(count),
            Some(Err(error)) => return Err(error),
            None => unreachable!("every chunk before the first failing one is read"),
        }
    }
    let capacities: Vec<usize> = chunks.iter().map(|c| c.rows_max).collect();
    let len = close_up(sources.as_mut_slice(), stored, &capacities, &rows);
    close_up(targets.as_mut_slice(), stored, &capacities, &rows);
    sources.truncate(len);
    targets.truncate(len);
    Ok(Endpoints { sources, targets })
}

/// A reading worker's count in `workers_left`, taken off when the worker ends, by return or by
/// panic.
struct LeavesOnDrop<'a>(&'a AtomicUsize);

impl Drop for LeavesOnDrop<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// Reads `chunk`'s rows into `sources` and `targets` (its slots): by the plain reader where it
/// can, else by the CSV reader; returns the rows.
fn read_chunk(
    split: &SplitFiles,
    chunk: &Chunk,
    resolvers: &Resolvers<'_>,
    sources: &mut [u32],
    targets: &mut [u32],
) -> Result<usize> {
    if let Some(plain) = resolvers.plain {
        let (text, delimiter) = split.chunk_text(chunk);
        if let Some(rows) = read_plain_pairs(text, delimiter, plain, sources, targets) {
            split.release_chunk(chunk);
            return Ok(rows);
        }
    }
    let mut rows = 0;
    split.read_chunk(chunk, |row| {
        let (source, target) = (resolvers.resolve)(row)?;
        assert!(rows < sources.len(), "a chunk has more rows than lines");
        sources[rows] = source;
        targets[rows] = target;
        rows += 1;
        Ok(())
    })?;
    Ok(rows)
}

type Slot<'a> = Mutex<Option<(&'a mut [u32], &'a mut [u32])>>;

/// Cuts `sources` and `targets` into consecutive pieces of the given sizes, one per chunk.
fn chunk_slots<'a>(
    mut sources: &'a mut [u32],
    mut targets: &'a mut [u32],
    sizes: impl Iterator<Item = usize>,
) -> Vec<Slot<'a>> {
    sizes
        .map(|size| {
            let (chunk_sources, rest_sources) = std::mem::take(&mut sources).split_at_mut(size);
            let (chunk_targets, rest_targets) = std::mem::take(&mut targets).split_at_mut(size);
            sources = rest_sources;
            targets = rest_targets;
            Mutex::new(Some((chunk_sources, chunk_targets)))
        })
        .collect()
}

/// Moves each chunk's `rows[i]` values (written at the start of its `capacities[i]` slots,
/// after the first `stored` values) down so that they follow each other; returns the length.
fn close_up(values: &mut [u32], stored: usize, capacities: &[usize], rows: &[usize]) -> usize {
    let (mut from, mut to) = (stored, stored);
    for (&capacity, &count) in capacities.iter().zip(rows) {
        assert!(count <= capacity, "a chunk wrote past its slots");
        values.copy_within(from..from + count, to);
        from += capacity;
        to += count;
    }
    to
}

/// Advances `progress` from `bytes_read` until no worker is left.
fn report_progress(
    progress: &mut dyn CopyProgress,
    total: u64,
    bytes_read: &AtomicU64,
    workers_left: &AtomicUsize,
) {
    progress.start(total);
    let mut reported = 0;
    loop {
        let done = workers_left.load(Ordering::Acquire) == 0;
        let now = bytes_read.load(Ordering::Relaxed);
        progress.advance(now - reported);
        reported = now;
        if done {
            break;
        }
        std::thread::sleep(PROGRESS_INTERVAL);
    }
    progress.finish();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_up_removes_the_unused_room_in_order() {
        // Two stored values, then chunks of capacity 3, 2, 3 holding 2, 2 and 1 rows.
        let mut values = vec![7, 8, 1, 2, 0, 3, 4, 5, 0, 0];
        let len = close_up(&mut values, 2, &[3, 2, 3], &[2, 2, 1]);
        assert_eq!(&values[..len], &[7, 8, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn chunk_slots_cover_the_arrays_in_order() {
        let (mut sources, mut targets) = (vec![0u32; 5], vec![0u32; 5]);
        let slots = chunk_slots(&mut sources, &mut targets, [2, 0, 3].into_iter());
        let sizes: Vec<usize> = slots
            .into_iter()
            .map(|slot| slot.into_inner().unwrap().unwrap().0.len())
            .collect();
        assert_eq!(sizes, [2, 0, 3]);
    }

    use std::path::PathBuf;

    use proptest::prelude::*;
    use warren_common::types::LogicalType;

    use crate::import::csv_reader::{for_each_row, parse_i64};
    use crate::import::options::CsvOptions;

    /// Resolves both fields as keys of a node table of `nodes` dense keys, as COPY does.
    fn resolver(nodes: u32) -> impl Fn(&RowReader<'_>) -> Result<(u32, u32)> + Sync {
        move |row: &RowReader<'_>| {
            row.check_width(2)?;
            let key = |index: usize| {
                let text = row.field(index)?;
                match parse_i64(text.as_bytes()) {
                    Some(key) if (0..i64::from(nodes)).contains(&key) => Ok(key as u32),
                    _ => Err(row.error(format!("Unable to find primary key value {text}."))),
                }
            };
            Ok((key(0)?, key(1)?))
        }
    }

    /// A row's text: `a,b`, or for `odd` below 6 a form the plain reader gives up on.
    fn row_text(a: u32, b: u32, odd: u8) -> String {
        match odd {
            0 => format!(" {a},{b}"),
            1 => format!("+{a},{b}"),
            2 => format!("{a},{b},1"),
            3 => format!("{a}"),
            4 => format!("-{a},{b}"),
            5 => format!("{a},0{b}x"),
            _ => format!("{a},{b}"),
        }
    }

    /// The files' text: rows with blank lines where `blank` says, LF or CRLF breaks.
    fn file_text(
        header: bool,
        rows: &[(u32, u32, bool, u8)],
        crlf: bool,
        last_break: bool,
    ) -> String {
        let newline = if crlf { "\r\n" } else { "\n" };
        let mut text = String::new();
        if header {
            text.push_str("from,to");
            text.push_str(newline);
        }
        for (i, &(a, b, blank, odd)) in rows.iter().enumerate() {
            if blank {
                text.push_str(newline);
            }
            text.push_str(&row_text(a, b, odd));
            if i + 1 < rows.len() || last_break {
                text.push_str(newline);
            }
        }
        text
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The parallel read gives the one-reader path's arrays, or its error, for any chunk
        /// size and thread count.
        #[test]
        fn parallel_read_equals_the_one_reader_path(
            files in proptest::collection::vec(
                (proptest::collection::vec(
                    (0u32..60, 0u32..60, proptest::bool::weighted(0.1), 0u8..200),
                    0..40,
                ),
                 any::<bool>(), any::<bool>()),
                1..4),
            header in any::<bool>(),
            nodes in 50u32..60,
            chunk_bytes in 1usize..48,
            threads in 1usize..5,
            stored in proptest::collection::vec((0u32..50, 0u32..50), 0..5),
            with_plain in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let paths: Vec<PathBuf> = files
                .iter()
                .enumerate()
                .map(|(i, (rows, crlf, last_break))| {
                    let path = dir.path().join(format!("e{i}.csv"));
                    std::fs::write(&path, file_text(header, rows, *crlf, *last_break)).unwrap();
                    path
                })
                .collect();
            let options = CsvOptions { header: Some(header), ..CsvOptions::default() };
            let types = [LogicalType::Int64, LogicalType::Int64];
            let resolve = resolver(nodes);
            let (stored_sources, stored_targets): (Vec<u32>, Vec<u32>) =
                stored.iter().copied().unzip();
            let mut expected = (stored_sources.clone(), stored_targets.clone());
            let one_reader = for_each_row(&paths, &options, &types, &mut (), |row| {
                let (a, b) = resolve(row)?;
                expected.0.push(a);
                expected.1.push(b);
                Ok(())
            });
            let split = SplitFiles::split(&paths, &options, &types, chunk_bytes).unwrap().unwrap();
            let plain = |a: i64, b: i64| {
                let nodes = 0..i64::from(nodes);
                (nodes.contains(&a) && nodes.contains(&b)).then_some((a as u32, b as u32))
            };
            let resolvers = Resolvers {
                resolve: &resolve,
                plain: with_plain.then_some(&plain as &PlainResolve<'_>),
            };
            let parallel = read_endpoints(
                &split,
                (&stored_sources, &stored_targets),
                threads,
                &mut (),
                &resolvers,
            );
            match (one_reader, parallel) {
                (Ok(()), Ok(endpoints)) => {
                    prop_assert_eq!(endpoints.sources.as_slice(), &expected.0[..]);
                    prop_assert_eq!(endpoints.targets.as_slice(), &expected.1[..]);
                }
                (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                (a, b) => prop_assert!(false, "one reader {:?}, parallel {:?}", a.err(), b.err()),
            }
        }
    }

    #[test]
    fn files_with_quotes_are_not_split() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.csv");
        std::fs::write(&path, "1,\"2\"\n").unwrap();
        let options = CsvOptions {
            header: Some(false),
            ..CsvOptions::default()
        };
        let types = [LogicalType::Int64, LogicalType::Int64];
        assert!(SplitFiles::split(&[path], &options, &types, 4)
            .unwrap()
            .is_none());
    }
}

//! Property test of crash recovery: commits from one or several threads, a crash at a random
//! operation (unsynced writes torn at sector granularity, by a random seed), then recovery.
//! The recovered log must be a prefix of the committed sequence holding every acknowledged
//! commit.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::io::{FaultPlan, SimulatedFileSystem};

const DB: DatabaseId = *b"crash-test-db-id";

/// The payload of a thread's `index`-th commit: identifies both and has the given size.
fn payload(thread: usize, index: usize, bytes: usize) -> Vec<u8> {
    let mut payload = vec![(thread * 31 + index) as u8; bytes.max(16)];
    payload[..8].copy_from_slice(&(thread as u64).to_le_bytes());
    payload[8..16].copy_from_slice(&(index as u64).to_le_bytes());
    payload
}

/// (thread, index) of a payload, checking that its bytes are the ones committed.
fn identify(frame: &RecoveredFrame, sizes: &[Vec<usize>]) -> (usize, usize) {
    assert!(
        frame.payload.len() >= 16,
        "a recovered payload is one that was committed"
    );
    let thread = u64::from_le_bytes(frame.payload[..8].try_into().unwrap()) as usize;
    let index = u64::from_le_bytes(frame.payload[8..16].try_into().unwrap()) as usize;
    assert_eq!(frame.payload, payload(thread, index, sizes[thread][index]));
    assert_eq!(frame.txn_id, thread as u64);
    (thread, index)
}

/// Each thread commits its payloads in order until one fails; returns the acknowledged
/// (LSN, index) pairs of each thread.
fn run_commits(wal: &Wal, sizes: &[Vec<usize>]) -> Vec<Vec<(u64, usize)>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = sizes
            .iter()
            .enumerate()
            .map(|(thread, sizes)| {
                scope.spawn(move || {
                    let mut acknowledged = Vec::new();
                    for (index, &bytes) in sizes.iter().enumerate() {
                        match wal.commit(thread as u64, &payload(thread, index, bytes)) {
                            Ok(lsn) => acknowledged.push((lsn, index)),
                            Err(_) => break,
                        }
                    }
                    acknowledged
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn check_recovery(recovered: &Recovered, sizes: &[Vec<usize>], acked: &[Vec<(u64, usize)>]) {
    let mut next_index = vec![0usize; sizes.len()];
    let mut by_lsn = BTreeMap::new();
    for frame in &recovered.frames {
        let (thread, index) = identify(frame, sizes);
        // A thread commits in order, so its recovered frames are its first ones, in order.
        assert_eq!(
            index, next_index[thread],
            "thread {thread}'s frames form a prefix"
        );
        next_index[thread] += 1;
        by_lsn.insert(frame.lsn, (thread, index));
    }
    for (thread, acknowledged) in acked.iter().enumerate() {
        for &(lsn, index) in acknowledged {
            assert_eq!(
                by_lsn.get(&lsn),
                Some(&(thread, index)),
                "acknowledged LSN {lsn}"
            );
        }
        // At most the one commit that failed may have survived beyond the acknowledged ones.
        assert!(next_index[thread] <= acknowledged.len() + 1);
    }
}

/// The faults of one case, counted from the end of `Wal::create`.
#[derive(Clone, Copy, Debug)]
struct Faults {
    seed: u64,
    crash_after: u64,
    sync_failure_after: Option<u64>,
    short_writes: bool,
}

fn crash_and_recover(faults: Faults, sizes: &[Vec<usize>]) -> Result<(), TestCaseError> {
    let Faults {
        seed,
        crash_after,
        sync_failure_after,
        short_writes,
    } = faults;
    let path = Path::new("db/warren.wal");
    let sim = SimulatedFileSystem::new(FaultPlan {
        seed,
        ..FaultPlan::default()
    });
    let fs: Arc<dyn FileSystem> = Arc::new(sim.clone());
    let wal = Wal::create(Arc::clone(&fs), path, DB, 1).unwrap();
    sim.set_faults(FaultPlan {
        seed,
        short_writes,
        crash_at_operation: Some(sim.stats().operations + crash_after),
        sync_failure_at: sync_failure_after.map(|after| sim.stats().syncs + after),
        // Long enough for concurrent commits to queue up into multi-frame batches.
        sync_latency: std::time::Duration::from_micros(200),
        ..FaultPlan::default()
    });
    let acked = run_commits(&wal, sizes);
    drop(wal);
    if sim.stats().crashes == 0 {
        sim.crash();
    }
    sim.set_faults(FaultPlan::default());
    let (wal, recovered) = Wal::open(Arc::clone(&fs), path, DB).unwrap();
    check_recovery(&recovered, sizes, &acked);
    // The recovered log takes new commits after its last frame, and nothing a torn batch
    // left in the preallocated space follows them.
    let lsn = wal.commit(99, b"after recovery").unwrap();
    prop_assert_eq!(lsn, recovered.next_lsn());
    drop(wal);
    let reread = Wal::read(fs.as_ref(), path, DB).unwrap();
    prop_assert_eq!(
        &reread.frames[..recovered.frames.len()],
        &recovered.frames[..]
    );
    prop_assert_eq!(reread.frames.len(), recovered.frames.len() + 1);
    prop_assert_eq!(reread.tail_bytes, 0);
    Ok(())
}

fn sizes_strategy() -> impl Strategy<Value = Vec<Vec<usize>>> {
    let sizes = prop::collection::vec(prop_oneof![0usize..64, 0usize..200, 64usize..1200], 1..25);
    prop::collection::vec(sizes, 1..9)
}

/// Payloads large enough that the commits fill the first allocation: crashes also land while
/// the file is being extended.
fn large_sizes_strategy() -> impl Strategy<Value = Vec<Vec<usize>>> {
    let sizes = prop::collection::vec(8_000usize..60_000, 4..16);
    prop::collection::vec(sizes, 1..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn recovery_after_a_crash_during_extensions_keeps_every_acknowledged_commit(
        seed in any::<u64>(),
        crash_after in 1u64..80,
        sync_failure_after in proptest::option::weighted(0.25, 1u64..40),
        short_writes in any::<bool>(),
        sizes in large_sizes_strategy(),
    ) {
        let faults = Faults { seed, crash_after, sync_failure_after, short_writes };
        crash_and_recover(faults, &sizes)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn recovery_after_a_crash_keeps_every_acknowledged_commit(
        seed in any::<u64>(),
        crash_after in 1u64..80,
        sync_failure_after in proptest::option::weighted(0.25, 1u64..40),
        short_writes in any::<bool>(),
        sizes in sizes_strategy(),
    ) {
        let faults = Faults { seed, crash_after, sync_failure_after, short_writes };
        crash_and_recover(faults, &sizes)?;
    }
}

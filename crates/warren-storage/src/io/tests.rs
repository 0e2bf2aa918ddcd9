//! Tests of the I/O layer: the simulated file system's durability model and its faults, and the
//! real file system's basic operations.

use std::path::Path;

use super::*;

fn simulated(plan: FaultPlan) -> SimulatedFileSystem {
    SimulatedFileSystem::new(plan)
}

fn create_with(fs: &dyn FileSystem, path: &Path, bytes: &[u8]) -> Box<dyn FileHandle> {
    let file = fs.open(path, OpenMode::CreateNew).unwrap();
    write_all_at(file.as_ref(), 0, bytes).unwrap();
    file
}

#[test]
fn synced_bytes_survive_a_crash_and_unsynced_names_do_not() {
    let fs = simulated(FaultPlan::default());
    let path = Path::new("db/a");
    let file = create_with(&fs, path, b"hello");
    file.sync_data().unwrap();
    fs.crash();
    // The name was never made durable by sync_dir.
    assert!(!fs.exists(path).unwrap() || fs.file_bytes(path).unwrap() == b"hello");
    let fs = simulated(FaultPlan::default());
    let file = create_with(&fs, path, b"hello");
    file.sync_data().unwrap();
    fs.sync_dir(Path::new("db")).unwrap();
    write_all_at(file.as_ref(), 5, &[7u8; 2000]).unwrap();
    fs.crash();
    assert!(file.len().is_err(), "a handle from before the crash fails");
    let bytes = fs.file_bytes(path).unwrap();
    assert_eq!(&bytes[..5], b"hello");
    assert!(bytes.len() <= 2005);
    assert!(bytes[5..].iter().all(|&b| b == 0 || b == 7));
}

#[test]
fn a_process_that_died_in_a_crash_cannot_touch_the_rebooted_disk() {
    let fs = simulated(FaultPlan::default());
    let process = fs.process();
    let path = Path::new("db/a");
    create_with(&process, path, b"before").sync_data().unwrap();
    process.sync_dir(Path::new("db")).unwrap();
    fs.crash();
    // A thread of the dead process (a background checkpoint) still running: refused.
    let later = Path::new("db/b");
    assert!(process.open(later, OpenMode::CreateNew).is_err());
    assert!(process.remove(path).is_err());
    assert!(process.sync_dir(Path::new("db")).is_err());
    assert!(process.exists(path).is_err());
    // The test's view and a new process see the rebooted disk and may write.
    assert!(fs.exists(path).unwrap() && !fs.exists(later).unwrap());
    let next = fs.process();
    create_with(&next, later, b"after");
    assert!(next.exists(later).unwrap());
}

#[test]
fn a_crash_tears_unsynced_writes_at_sector_granularity() {
    for seed in 0..20 {
        let fs = simulated(FaultPlan {
            seed,
            ..FaultPlan::default()
        });
        let path = Path::new("f");
        let file = create_with(&fs, path, &[]);
        file.sync_data().unwrap();
        fs.sync_dir(Path::new(".")).unwrap();
        let data: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8 + 1).collect();
        write_all_at(file.as_ref(), 0, &data).unwrap();
        fs.crash();
        let bytes = fs.file_bytes(path).unwrap();
        for (sector, chunk) in bytes.chunks(SECTOR_BYTES as usize).enumerate() {
            let start = sector * SECTOR_BYTES as usize;
            let whole = chunk == &data[start..start + chunk.len()];
            let zeros = chunk.iter().all(|&b| b == 0);
            assert!(
                whole || zeros,
                "seed {seed}: sector {sector} is neither kept nor lost"
            );
        }
    }
}

#[test]
fn a_crash_tears_an_overwrite_of_synced_zeros_by_sector_and_keeps_the_length() {
    // The write-ahead log's case: zeros written and synced ahead, then overwritten by frames.
    let mut kept_and_lost = (false, false);
    for seed in 0..20 {
        let fs = simulated(FaultPlan {
            seed,
            ..FaultPlan::default()
        });
        let path = Path::new("f");
        let file = create_with(&fs, path, &[0u8; 8192]);
        file.sync_data().unwrap();
        fs.sync_dir(Path::new(".")).unwrap();
        let data: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8 + 1).collect();
        write_all_at(file.as_ref(), 700, &data).unwrap();
        fs.crash();
        let bytes = fs.file_bytes(path).unwrap();
        assert_eq!(bytes.len(), 8192, "seed {seed}: the synced length stays");
        let mut image = vec![0u8; 8192];
        image[700..3700].copy_from_slice(&data);
        for (sector, chunk) in bytes.chunks(SECTOR_BYTES as usize).enumerate() {
            let start = sector * SECTOR_BYTES as usize;
            let whole = chunk == &image[start..start + chunk.len()];
            let zeros = chunk.iter().all(|&b| b == 0);
            assert!(
                whole || zeros,
                "seed {seed}: sector {sector} is neither kept nor lost"
            );
            let written = start < 3700 && start + chunk.len() > 700;
            if written {
                kept_and_lost.0 |= whole;
                kept_and_lost.1 |= zeros && !whole;
            }
        }
    }
    assert_eq!(
        kept_and_lost,
        (true, true),
        "crashes kept some sectors and lost others"
    );
}

#[test]
fn short_writes_are_completed_by_write_all_at() {
    let fs = simulated(FaultPlan {
        seed: 3,
        short_writes: true,
        ..FaultPlan::default()
    });
    let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
    let file = fs.open(Path::new("f"), OpenMode::CreateNew).unwrap();
    assert!(file.write_at(0, &data).unwrap() < data.len());
    write_all_at(file.as_ref(), 0, &data).unwrap();
    assert!(fs.stats().writes > 2);
    assert_eq!(read_all(file.as_ref()).unwrap(), data);
}

#[test]
fn a_failed_sync_loses_the_unsynced_writes() {
    let fs = simulated(FaultPlan {
        sync_failure_at: Some(2),
        ..FaultPlan::default()
    });
    let path = Path::new("f");
    let file = create_with(&fs, path, b"durable");
    file.sync_data().unwrap();
    fs.sync_dir(Path::new(".")).unwrap();
    write_all_at(file.as_ref(), 7, b" lost").unwrap();
    let error = file.sync_data().unwrap_err();
    assert!(error.to_string().contains("os error 5"), "{error}");
    assert_eq!(fs.file_bytes(path).unwrap(), b"durable lost");
    assert_eq!(fs.durable_bytes(path).unwrap(), b"durable");
    fs.crash();
    assert_eq!(fs.file_bytes(path).unwrap(), b"durable");
}

#[test]
fn the_planned_write_fails_with_its_error() {
    let fs = simulated(FaultPlan {
        write_failure_at: Some((2, WriteFault::NoSpace)),
        ..FaultPlan::default()
    });
    let file = create_with(&fs, Path::new("f"), b"one");
    let error = write_all_at(file.as_ref(), 3, b"two").unwrap_err();
    assert!(error.to_string().contains("os error 28"), "{error}");
    assert_eq!(fs.file_bytes(Path::new("f")).unwrap(), b"one");
}

#[test]
fn the_planned_operation_crashes_the_machine() {
    let fs = simulated(FaultPlan {
        crash_at_operation: Some(3),
        ..FaultPlan::default()
    });
    // Operations: create (1), write (2), sync (3: crashes instead).
    let file = create_with(&fs, Path::new("f"), b"x");
    assert!(file.sync_data().is_err());
    assert_eq!(fs.stats().crashes, 1);
    assert!(file.len().is_err());
}

#[test]
fn renames_become_durable_with_sync_dir() {
    let fs = simulated(FaultPlan::default());
    let dir = Path::new("d");
    let (old, new) = (Path::new("d/log"), Path::new("d/log.tmp"));
    create_with(&fs, old, b"old").sync_data().unwrap();
    create_with(&fs, new, b"new").sync_data().unwrap();
    fs.sync_dir(dir).unwrap();
    fs.rename(new, old).unwrap();
    assert_eq!(fs.file_bytes(old).unwrap(), b"new");
    fs.sync_dir(dir).unwrap();
    fs.crash();
    assert_eq!(fs.file_bytes(old).unwrap(), b"new");
    assert!(!fs.exists(new).unwrap());
}

#[test]
fn the_real_file_system_reads_writes_and_renames() {
    let dir = tempfile::tempdir().unwrap();
    let fs = RealFileSystem;
    let path = dir.path().join("f");
    let file = create_with(&fs, &path, b"hello world");
    file.sync_data().unwrap();
    assert!(fs.open(&path, OpenMode::CreateNew).is_err());
    file.set_len(5).unwrap();
    assert_eq!(read_all(file.as_ref()).unwrap(), b"hello");
    let moved = dir.path().join("g");
    fs.rename(&path, &moved).unwrap();
    fs.sync_dir(dir.path()).unwrap();
    assert!(!fs.exists(&path).unwrap());
    let reader = fs.open(&moved, OpenMode::Read).unwrap();
    assert_eq!(read_all(reader.as_ref()).unwrap(), b"hello");
    assert!(reader.write_at(0, b"x").is_err());
    fs.remove(&moved).unwrap();
    assert!(!fs.exists(&moved).unwrap());
}

#[test]
fn a_buffered_writer_goes_through_the_layer() {
    use std::io::Write;
    let fs = simulated(FaultPlan {
        seed: 5,
        short_writes: true,
        ..FaultPlan::default()
    });
    let file = fs.open(Path::new("seg"), OpenMode::CreateNew).unwrap();
    let data: Vec<u8> = (0..70_000u32).map(|i| (i % 241) as u8).collect();
    let mut out = std::io::BufWriter::new(FileWriter::new(file.as_ref(), 0));
    out.write_all(&data).unwrap();
    let writer = out.into_inner().unwrap();
    assert_eq!(writer.offset(), data.len() as u64);
    assert_eq!(read_all(file.as_ref()).unwrap(), data);
    let failing = simulated(FaultPlan {
        write_failure_at: Some((1, WriteFault::NoSpace)),
        ..FaultPlan::default()
    });
    let file = failing.open(Path::new("seg"), OpenMode::CreateNew).unwrap();
    let error = FileWriter::new(file.as_ref(), 0)
        .write_all(b"x")
        .unwrap_err();
    assert!(error.to_string().contains("os error 28"), "{error}");
}

#[test]
fn a_new_file_whose_directory_was_not_synced_may_vanish_at_a_crash() {
    let mut vanished = 0;
    for seed in 0..32 {
        let fs = simulated(FaultPlan {
            seed,
            ..FaultPlan::default()
        });
        fs.create_dir_all(Path::new("db/data")).unwrap();
        fs.sync_dir(Path::new(".")).unwrap();
        fs.sync_dir(Path::new("db")).unwrap();
        let old = create_with(&fs, Path::new("db/data/old"), b"old");
        old.sync_data().unwrap();
        fs.sync_dir(Path::new("db/data")).unwrap();
        let new = create_with(&fs, Path::new("db/data/new"), b"new");
        new.sync_data().unwrap();
        fs.remove(Path::new("db/data/old")).unwrap();
        fs.crash();
        // Directory changes survive as a prefix: the removal never without the creation.
        let has_new = fs.exists(Path::new("db/data/new")).unwrap();
        let has_old = fs.exists(Path::new("db/data/old")).unwrap();
        assert!(has_new || has_old, "seed {seed}");
        vanished += u32::from(!has_new);
        assert!(fs.is_dir(Path::new("db/data")).unwrap());
    }
    assert!(vanished > 0, "no crash made an unsynced creation vanish");
}

#[test]
fn an_injected_eio_fails_one_operation_of_any_kind() {
    let fs = simulated(FaultPlan::default());
    fs.create_dir_all(Path::new("d")).unwrap();
    let file = create_with(&fs, Path::new("d/f"), b"durable");
    file.sync_data().unwrap();
    fs.sync_dir(Path::new("d")).unwrap();
    let operations = fs.stats().operations;
    fs.set_faults(FaultPlan {
        eio_at_operation: Some(operations + 2),
        ..FaultPlan::default()
    });
    write_all_at(file.as_ref(), 7, b" and lost").unwrap();
    let error = file.sync_data().unwrap_err().to_string();
    assert!(error.contains("Input/output error"), "{error}");
    assert_eq!(fs.stats().injected_eio, 1);
    // The failed sync lost the write to the disk, as a failed fsync does.
    assert_eq!(fs.durable_bytes(Path::new("d/f")).unwrap(), b"durable");
    fs.set_faults(FaultPlan {
        eio_at_operation: Some(fs.stats().operations + 1),
        ..FaultPlan::default()
    });
    assert!(fs.rename(Path::new("d/f"), Path::new("d/g")).is_err());
    assert!(
        fs.exists(Path::new("d/f")).unwrap(),
        "a failed rename does nothing"
    );
}

#[test]
fn maps_listings_and_locks_work_on_both_file_systems() {
    let temp = tempfile::tempdir().unwrap();
    let simulated_fs = simulated(FaultPlan::default());
    let systems: [(&dyn FileSystem, &Path); 2] = [
        (&RealFileSystem, temp.path()),
        (&simulated_fs, Path::new("/sim")),
    ];
    for (fs, root) in systems {
        let dir = root.join("db/data");
        fs.create_dir_all(&dir).unwrap();
        assert!(fs.is_dir(&dir).unwrap());
        let bytes: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let file = create_with(fs, &dir.join("a.seg"), &bytes);
        file.sync_data().unwrap();
        let map = fs.map(&dir.join("a.seg")).unwrap();
        assert_eq!(&map[..], &bytes[..]);
        assert_eq!(map.as_ptr() as usize % 8, 0, "maps are 8-byte aligned");
        assert_eq!(fs.list_dir(&dir).unwrap(), vec![dir.join("a.seg")]);
        let lock = root.join("db/warren.lock");
        let held = fs.try_lock(&lock).unwrap().expect("a free lock is taken");
        // flock conflicts between two open files even within one process.
        assert!(
            fs.try_lock(&lock).unwrap().is_none(),
            "a held lock is refused"
        );
        drop(held);
        assert!(
            fs.try_lock(&lock).unwrap().is_some(),
            "a released lock is taken"
        );
    }
}

#[test]
fn a_new_directory_whose_parent_was_not_synced_may_vanish_with_its_files() {
    let mut vanished = 0;
    for seed in 0..32 {
        let fs = simulated(FaultPlan {
            seed,
            ..FaultPlan::default()
        });
        fs.create_dir_all(Path::new("db")).unwrap();
        fs.sync_dir(Path::new(".")).unwrap();
        fs.create_dir_all(Path::new("db/data")).unwrap();
        let file = create_with(&fs, Path::new("db/data/f"), b"f");
        file.sync_data().unwrap();
        // The file's name is durable in its directory, the directory's name is not.
        fs.sync_dir(Path::new("db/data")).unwrap();
        fs.crash();
        assert!(fs.is_dir(Path::new("db")).unwrap(), "seed {seed}");
        let has_dir = fs.is_dir(Path::new("db/data")).unwrap();
        let has_file = fs.exists(Path::new("db/data/f")).unwrap();
        assert!(
            has_dir || !has_file,
            "seed {seed}: a file outlived its directory"
        );
        vanished += u32::from(!has_dir);
    }
    assert!(vanished > 0, "no crash made an unsynced directory vanish");
    // Synced, the directory and its file survive every crash.
    let fs = simulated(FaultPlan::default());
    fs.create_dir_all(Path::new("db/data")).unwrap();
    fs.sync_dir(Path::new(".")).unwrap();
    fs.sync_dir(Path::new("db")).unwrap();
    let file = create_with(&fs, Path::new("db/data/f"), b"f");
    file.sync_data().unwrap();
    fs.sync_dir(Path::new("db/data")).unwrap();
    fs.crash();
    assert!(fs.exists(Path::new("db/data/f")).unwrap());
}

#[test]
fn read_faults_fail_shorten_or_flip_a_read_and_leave_the_file_alone() {
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    let fs = simulated(FaultPlan::default());
    create_with(&fs, Path::new("f"), &bytes)
        .sync_data()
        .unwrap();
    let reads = fs.stats().reads;
    fs.set_faults(FaultPlan {
        seed: 5,
        read_failure_at: Some(reads + 1),
        bit_flip_at_read: Some(reads + 2),
        short_reads: true,
        ..FaultPlan::default()
    });
    let file = fs.open(Path::new("f"), OpenMode::Read).unwrap();
    let error = read_all(file.as_ref()).unwrap_err();
    assert!(error.to_string().contains("Input/output error"), "{error}");
    // Short reads are completed by the loop; one of them has a bit flipped.
    let flipped = read_all(file.as_ref()).unwrap();
    assert_eq!(flipped.len(), bytes.len());
    let differing: u32 = flipped
        .iter()
        .zip(&bytes)
        .map(|(a, b)| (a ^ b).count_ones())
        .sum();
    assert_eq!(differing, 1);
    assert!(fs.stats().reads > reads + 2, "short reads make more reads");
    assert_eq!(read_all(file.as_ref()).unwrap(), bytes);
    assert_eq!(fs.stats().injected_read_faults, 2);
    // A map is a read too.
    let reads = fs.stats().reads;
    fs.set_faults(FaultPlan {
        bit_flip_at_read: Some(reads + 1),
        ..FaultPlan::default()
    });
    assert_ne!(&fs.map(Path::new("f")).unwrap()[..], &bytes[..]);
    assert_eq!(&fs.map(Path::new("f")).unwrap()[..], &bytes[..]);
}

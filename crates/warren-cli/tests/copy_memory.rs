//! The memory bound of COPY (docs/format/storage.md, "COPY's memory"): loading a generated
//! graph, the `warren` process's peak resident memory stays within 1.5 times the size of the
//! database it leaves plus a fixed allowance, so it grows with the data COPY keeps, not with the
//! files it reads.

use std::path::Path;
use std::process::Command;

/// What a `warren` process holds before it reads anything (code, allocator, buffers).
const BASE_ALLOWANCE_BYTES: u64 = 8 << 20;

fn warren() -> Command {
    Command::new(env!("CARGO_BIN_EXE_warren"))
}

/// Runs `command` to completion; returns its peak resident set in bytes. The child is reaped by
/// `wait4` (which `Child::wait` cannot do while also returning the resource usage).
#[allow(clippy::zombie_processes)]
fn peak_rss(mut command: Command) -> u64 {
    let child = command.stdout(std::process::Stdio::null()).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value, and wait4 writes one for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status}"
    );
    usage.ru_maxrss as u64 * 1024
}

fn directory_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                directory_bytes(&entry.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

#[test]
fn copy_peak_memory_stays_within_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("g");
    let db = dir.path().join("db");
    let status = warren()
        .args(["generate", "graph500", "--scale", "16", "--out"])
        .arg(&data)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let mut schema = warren();
    schema.arg("run").arg(&db).arg(data.join("schema.cypher"));
    peak_rss(schema);
    let mut copy = warren();
    copy.arg("run").arg(&db).arg(data.join("copy.cypher"));
    let peak = peak_rss(copy);
    let database = directory_bytes(&db);
    let input = directory_bytes(&data);
    assert!(database > 20 << 20, "{database} bytes");
    let bound = database * 3 / 2 + BASE_ALLOWANCE_BYTES;
    assert!(
        peak <= bound,
        "COPY peaked at {peak} bytes; the bound is {bound} (database {database}, input {input})"
    );
}

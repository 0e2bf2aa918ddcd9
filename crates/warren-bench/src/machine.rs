//! Where a benchmark ran: the machine (CPU, cores, memory, OS, kernel), the source revision,
//! the start time, and the process's peak resident memory. Everything is read from the system
//! (Linux `/proc`, `uname`, `getrusage`, `git`); what cannot be read is recorded as `unknown`.

use std::path::Path;
use std::process::Command;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// The text recorded for anything the system would not tell.
pub const UNKNOWN: &str = "unknown";

/// The machine a report was measured on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    pub cpu: String,
    pub logical_cores: usize,
    pub memory_bytes: u64,
    pub os: String,
    pub kernel: String,
}

impl Machine {
    /// Reads the current machine's description.
    pub fn current() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
        Machine {
            cpu: cpu_model(&cpuinfo).unwrap_or_else(|| UNKNOWN.to_string()),
            logical_cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: memory_total_bytes(&meminfo).unwrap_or(0),
            os: os_name(&os_release).unwrap_or_else(|| std::env::consts::OS.to_string()),
            kernel: kernel_release().unwrap_or_else(|| UNKNOWN.to_string()),
        }
    }
}

/// The first `model name` of `/proc/cpuinfo`.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|line| line.starts_with("model name"))
        .and_then(|line| line.split_once(':'))
        .map(|(_, model)| model.trim().to_string())
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn memory_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `PRETTY_NAME` of `/etc/os-release`, unquoted.
fn os_name(os_release: &str) -> Option<String> {
    let line = os_release.lines().find(|l| l.starts_with("PRETTY_NAME="))?;
    let value = line.trim_start_matches("PRETTY_NAME=").trim_matches('"');
    Some(value.to_string())
}

fn kernel_release() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
}

/// The source revision, `abc1234` or `abc1234-dirty` (tracked files changed), of the working
/// tree this crate was built from; else of the current directory; else `unknown`.
pub fn git_revision() -> String {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [Some(built_from.to_path_buf()), std::env::current_dir().ok()];
    candidates
        .into_iter()
        .flatten()
        .filter(|dir| dir.is_dir())
        .find_map(|dir| revision_in(&dir))
        .unwrap_or_else(|| UNKNOWN.to_string())
}

fn revision_in(dir: &Path) -> Option<String> {
    let head = git(dir, &["rev-parse", "--short=7", "HEAD"])?;
    let changes = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    Some(if changes.is_empty() {
        head
    } else {
        format!("{head}-dirty")
    })
}

fn git(dir: &Path, arguments: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(arguments)
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// The current time as RFC 3339 in UTC, to the second.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// The peak resident set size of this process so far, in bytes (`getrusage`).
pub fn peak_rss_bytes() -> u64 {
    // SAFETY: `usage` is a plain C struct that getrusage fills; zeroed is a valid value for it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer to a rusage is the documented use.
    let status = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(status, 0, "getrusage(RUSAGE_SELF) cannot fail");
    // Linux reports kilobytes.
    u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024
}

/// Resets the kernel's peak-resident-memory mark of this process to its current resident size
/// (`/proc/self/clear_refs`, Linux 4.0 and later), so that [`peak_rss_bytes`] afterwards
/// covers only what follows (setup such as loading and the reference answer is left out).
/// Returns false where the kernel does not allow it; the peak then covers the whole process.
pub fn reset_peak_rss() -> bool {
    /// Slack between the peak after a reset and the resident size read just before it.
    const RESET_SLACK_BYTES: u64 = 16 << 20;
    release_free_heap();
    if std::fs::write("/proc/self/clear_refs", "5").is_err() {
        return false;
    }
    // The kernel also keeps the peak of threads that have exited (in the process's signal
    // state), which no reset clears: the reset counts only if the peak fell to about the
    // resident size.
    match current_rss_bytes() {
        Some(resident) => peak_rss_bytes() <= resident + RESET_SLACK_BYTES,
        None => false,
    }
}

/// The process's resident size now (`/proc/self/statm`), if readable.
pub fn current_rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

/// Returns freed heap memory to the kernel, so that the resident size a reset starts from does
/// not include what setup allocated and freed (glibc keeps freed pages otherwise).
fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only releases free memory of the allocator's own heaps.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let cpuinfo = "processor\t: 0\nmodel name\t: Example CPU @ 3.00GHz\nflags\t: x\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("Example CPU @ 3.00GHz"));
        assert_eq!(cpu_model("processor: 0\n"), None);
        let meminfo = "MemTotal:       16318040 kB\nMemFree: 1 kB\n";
        assert_eq!(memory_total_bytes(meminfo), Some(16_318_040 * 1024));
        let os = "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04 LTS\"\n";
        assert_eq!(os_name(os).as_deref(), Some("Ubuntu 24.04 LTS"));
    }

    #[test]
    fn current_machine_and_process() {
        let machine = Machine::current();
        assert!(machine.logical_cores >= 1);
        assert!(!machine.kernel.is_empty());
        assert!(peak_rss_bytes() > 0);
        let started = now_rfc3339();
        assert!(started.ends_with('Z') && started.len() == 20, "{started}");
        // The peak reset is tested in tests/peak_rss.rs, alone in its process: other tests
        // running beside this one allocate too.
        let revision = git_revision();
        assert!(!revision.is_empty());
    }
}

//! The faults a [`super::SimulatedFileSystem`] injects, and the seeded random numbers that decide
//! how a crash tears unsynced writes, so that every failure replays from its seed.

/// How a write fails when the plan says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteFault {
    /// `EIO`: the device failed.
    Eio,
    /// `ENOSPC`: the device is full.
    NoSpace,
}

impl WriteFault {
    pub fn os_error(self) -> std::io::Error {
        match self {
            WriteFault::Eio => std::io::Error::from_raw_os_error(libc::EIO),
            WriteFault::NoSpace => std::io::Error::from_raw_os_error(libc::ENOSPC),
        }
    }
}

/// The faults of one test. Operations are counted from 1 over the whole simulated file system.
#[derive(Clone, Debug, Default)]
pub struct FaultPlan {
    /// Seeds the random choices: short-write lengths and which unsynced sectors a crash keeps.
    pub seed: u64,
    /// The `sync_data` call with this number fails with `EIO`, and the writes it was to make
    /// durable are lost (as on Linux, where the page cache keeps showing them until a restart).
    pub sync_failure_at: Option<u64>,
    /// The `write_at` call with this number fails with the given error and writes nothing.
    pub write_failure_at: Option<(u64, WriteFault)>,
    /// The mutating operation (as counted for `crash_at_operation`) with this number fails
    /// with `EIO`: a write, length change, creation, rename or removal does nothing; a
    /// `sync_data` loses the writes it was to make durable (as `sync_failure_at`); a `sync_dir`
    /// leaves the directory changes it was to make durable pending.
    pub eio_at_operation: Option<u64>,
    /// Every write of more than one byte writes only a random non-empty prefix of its bytes.
    pub short_writes: bool,
    /// The mutating operation (write, set_len, sync, create, rename, remove, sync_dir) with this
    /// number does not happen: the machine crashes instead, as if [`super::SimulatedFileSystem::crash`]
    /// had been called, and the operation fails.
    pub crash_at_operation: Option<u64>,
    /// The read (a `read_at` call or a `map`, counted from 1) with this number fails with
    /// `EIO` and reads nothing.
    pub read_failure_at: Option<u64>,
    /// The read with this number returns its bytes with one (seeded) bit flipped, as a failing
    /// device or bus would; the file itself is unchanged, so reading again reads it right.
    pub bit_flip_at_read: Option<u64>,
    /// Every `read_at` of more than one byte reads only a random non-empty prefix.
    pub short_reads: bool,
    /// How long each `sync_data` takes (a real disk's flush takes from microseconds to
    /// milliseconds); lets tests see concurrent committers queue behind a sync.
    pub sync_latency: std::time::Duration,
}

/// SplitMix64: a small, fast, seedable generator (quality is ample for fault injection). Public
/// so that fault tests derive every choice of a case (workload, faults) from one seed.
#[derive(Clone, Debug)]
pub struct SeededRng {
    state: u64,
}

impl SeededRng {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    pub fn range_inclusive(&mut self, low: u64, high: u64) -> u64 {
        assert!(low <= high);
        let span = high - low;
        if span == u64::MAX {
            return self.next_u64();
        }
        low + self.next_u64() % (span + 1)
    }

    pub fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
}

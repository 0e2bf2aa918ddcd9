//! The cost of each phase of one COPY (reading and resolving the input, the range check, the CSR
//! builds, the commit), in the order they ran, for `PROFILE COPY`: its wall time and, where the
//! phase ran alone, the CPU time the whole process spent in it (user and system, all threads),
//! which a machine shared with other work changes far less than the wall time.

use std::time::{Duration, Instant};

/// The most phases one COPY records; a COPY has a fixed handful, so more is a bug.
const PHASES_MAX: usize = 16;

/// One phase's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseCost {
    pub wall: Duration,
    /// `None` for a phase timed on one of several threads that ran at once.
    pub cpu: Option<Duration>,
}

/// Named costs, in the order they were recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyPhases {
    phases: Vec<(&'static str, PhaseCost)>,
}

impl CopyPhases {
    /// Records the wall time of `name`, a phase that ran beside others (no CPU time of its own).
    pub fn record_wall(&mut self, name: &'static str, wall: Duration) {
        self.push(name, PhaseCost { wall, cpu: None });
    }

    /// Runs `work` and records its wall time and the process's CPU time in it as `name`.
    pub fn time<T>(&mut self, name: &'static str, work: impl FnOnce() -> T) -> T {
        let clock = PhaseClock::start();
        let result = work();
        self.push(name, clock.stop());
        result
    }

    /// Records a phase measured with a [`PhaseClock`] (when it cannot be a closure).
    pub fn record(&mut self, name: &'static str, cost: PhaseCost) {
        self.push(name, cost);
    }

    fn push(&mut self, name: &'static str, cost: PhaseCost) {
        assert!(
            self.phases.len() < PHASES_MAX,
            "a COPY records at most {PHASES_MAX} phases"
        );
        self.phases.push((name, cost));
    }

    /// The phases in the order they were recorded.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, PhaseCost)> + '_ {
        self.phases.iter().copied()
    }
}

/// The wall clock and the process's CPU clock at a phase's start.
pub struct PhaseClock {
    wall: Instant,
    cpu: Duration,
}

impl PhaseClock {
    pub fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: process_cpu_time(),
        }
    }

    /// The cost since [`PhaseClock::start`].
    pub fn stop(&self) -> PhaseCost {
        PhaseCost {
            wall: self.wall.elapsed(),
            cpu: Some(process_cpu_time().saturating_sub(self.cpu)),
        }
    }
}

/// The user and system CPU time of every thread of this process so far (`getrusage`).
fn process_cpu_time() -> Duration {
    // SAFETY: `getrusage` only writes the `rusage` it is given, which is plain data.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let status = libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        assert_eq!(status, 0, "getrusage(RUSAGE_SELF) cannot fail");
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_keep_their_order_and_costs() {
        let mut phases = CopyPhases::default();
        let value = phases.time("first", || 7);
        phases.record_wall("second", Duration::from_millis(3));
        assert_eq!(value, 7);
        let names: Vec<_> = phases.iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["first", "second"]);
        let second = phases.iter().nth(1).unwrap().1;
        assert_eq!(second.wall, Duration::from_millis(3));
        assert_eq!(second.cpu, None);
        assert!(phases.iter().next().unwrap().1.cpu.is_some());
    }

    #[test]
    fn cpu_time_counts_work() {
        let mut phases = CopyPhases::default();
        let sum = phases.time("spin", || {
            let started = Instant::now();
            let mut sum = 0u64;
            while started.elapsed() < Duration::from_millis(30) {
                sum = std::hint::black_box(sum.wrapping_add(1));
            }
            sum
        });
        assert!(sum > 0);
        let cost = phases.iter().next().unwrap().1;
        assert!(cost.wall >= Duration::from_millis(30));
        assert!(cost.cpu.expect("timed alone") > Duration::ZERO);
    }
}

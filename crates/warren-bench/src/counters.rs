//! Hardware counters around one measured run: wraps `warren::hardware::CounterGroup` so that a
//! workload asks for counts per run and gets `None` (with the reason recorded once) where the
//! kernel refuses them. Counts are never estimated or invented.

use warren::hardware::{CounterGroup, Counts};

/// The counters of one benchmark invocation, opened before its first query so that they also
/// count the worker threads the queries spawn.
#[derive(Debug)]
pub struct HardwareCounters {
    group: Result<CounterGroup, String>,
}

impl HardwareCounters {
    /// Opens the counters on the calling thread.
    pub fn open() -> HardwareCounters {
        HardwareCounters {
            group: CounterGroup::open(),
        }
    }

    /// Counters that were not opened, for `reason` (tests and `--no-counters` style callers).
    pub fn unavailable(reason: &str) -> HardwareCounters {
        assert!(!reason.is_empty(), "an unavailable counter needs a reason");
        HardwareCounters {
            group: Err(reason.to_string()),
        }
    }

    pub fn is_available(&self) -> bool {
        self.group.is_ok()
    }

    /// `available`, or `unavailable: <reason>`, as a report records it.
    pub fn status(&self) -> String {
        match &self.group {
            Ok(_) => "available".to_string(),
            Err(reason) => format!("unavailable: {reason}"),
        }
    }

    /// Runs `work` with the counters enabled; the counts are those of `work` alone.
    pub fn measure<R>(&mut self, work: impl FnOnce() -> R) -> (R, Option<Counts>) {
        let Ok(group) = &mut self.group else {
            return (work(), None);
        };
        let before = group.read();
        group.enable();
        let result = work();
        group.disable();
        let counts = group.read().since(before);
        (result, Some(counts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailable_counters_run_the_work_and_count_nothing() {
        let mut counters = HardwareCounters::unavailable("not here");
        assert!(!counters.is_available());
        assert_eq!(counters.status(), "unavailable: not here");
        let (value, counts) = counters.measure(|| 41 + 1);
        assert_eq!(value, 42);
        assert!(counts.is_none());
    }

    #[test]
    fn opened_counters_report_their_status() {
        let mut counters = HardwareCounters::open();
        let status = counters.status();
        assert!(
            status == "available" || status.starts_with("unavailable: "),
            "{status}"
        );
        let (_, counts) = counters.measure(|| std::hint::black_box((0..10_000u64).sum::<u64>()));
        assert_eq!(counts.is_some(), counters.is_available());
    }
}

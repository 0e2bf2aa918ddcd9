//! Hardware counters for a query: CPU cycles, retired instructions, and last-level-cache read
//! accesses and misses, counted by Linux `perf_event_open` (through the `perf-event2` crate).
//!
//! * Threads: each counter is opened on the calling thread with `inherit`, so it also counts
//!   every thread that thread spawns after [`CounterGroup::open`] (the query's workers). The
//!   kernel refuses `inherit` for counters read as one group, so the four counters are opened
//!   individually; they are enabled and disabled one after the other, a few syscalls apart.
//! * Privilege: user space only (kernel and hypervisor excluded), which needs
//!   `kernel.perf_event_paranoid` <= 2 and no capability.
//! * Multiplexing: when the PMU has fewer counters than requested events the kernel timeshares
//!   them; counts are then scaled by `time_enabled / time_running`, as `perf stat` does.
//! * Where the kernel refuses (no PMU in a virtual machine, paranoid level 3, seccomp) or the
//!   platform is not Linux, [`CounterGroup::open`] returns the reason and nothing is counted.

/// Totals of the four events since [`CounterGroup::open`], over all counted threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub cycles: u64,
    pub instructions: u64,
    pub llc_loads: u64,
    pub llc_misses: u64,
}

impl Counts {
    /// The counts between an `earlier` read and this one. Reads are cumulative: the kernel's
    /// reset does not clear what exited inherited threads added, so intervals are differences.
    pub fn since(self, earlier: Counts) -> Counts {
        Counts {
            cycles: self.cycles.saturating_sub(earlier.cycles),
            instructions: self.instructions.saturating_sub(earlier.instructions),
            llc_loads: self.llc_loads.saturating_sub(earlier.llc_loads),
            llc_misses: self.llc_misses.saturating_sub(earlier.llc_misses),
        }
    }
}

/// The four counters of one measurement. Opened disabled; count between [`CounterGroup::enable`]
/// and [`CounterGroup::disable`].
pub struct CounterGroup {
    counters: platform::Counters,
}

impl std::fmt::Debug for CounterGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CounterGroup").finish_non_exhaustive()
    }
}

impl CounterGroup {
    /// Opens the counters on the calling thread (and the threads it spawns from now on).
    /// `Err` carries why the kernel or the platform refused them.
    pub fn open() -> Result<CounterGroup, String> {
        platform::Counters::open_hardware().map(|counters| CounterGroup { counters })
    }

    pub fn enable(&mut self) {
        self.counters.enable();
    }

    pub fn disable(&mut self) {
        self.counters.disable();
    }

    /// Totals since [`CounterGroup::open`] (enabled periods only).
    pub fn read(&mut self) -> Counts {
        self.counters.read()
    }
}

#[cfg(target_os = "linux")]
mod platform {
    use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Event, Hardware};
    use perf_event::{Builder, Counter};

    use super::Counts;

    /// Iterations of the loop [`Counters::open_events`] runs to check that counting works.
    const PROBE_ITERATIONS: u64 = 100_000;

    /// The four counters, in the order of the fields of [`Counts`].
    pub struct Counters {
        counters: [Counter; 4],
        /// What the probe run at open counted; subtracted from every read.
        baseline: Counts,
    }

    impl Counters {
        pub fn open_hardware() -> Result<Counters, String> {
            let llc_loads = Cache {
                which: CacheId::LL,
                operation: CacheOp::READ,
                result: CacheResult::ACCESS,
            };
            let llc_misses = Cache {
                result: CacheResult::MISS,
                ..llc_loads.clone()
            };
            Self::open_events([
                open_counter("cycles", Hardware::CPU_CYCLES)?,
                open_counter("instructions", Hardware::INSTRUCTIONS)?,
                open_counter("LLC loads", llc_loads)?,
                open_counter("LLC load misses", llc_misses)?,
            ])
        }

        /// Takes four opened counters and checks that they count: a short loop must register
        /// on the second one (instructions, or whatever a test put there).
        pub fn open_events(counters: [Counter; 4]) -> Result<Counters, String> {
            let mut opened = Counters {
                counters,
                baseline: Counts::default(),
            };
            opened.enable();
            probe_work(PROBE_ITERATIONS);
            opened.disable();
            let probe = opened.try_read()?;
            if probe.instructions == 0 {
                return Err(
                    "perf_event_open succeeded but the counters counted nothing (a virtual \
                     machine without a virtual PMU?)"
                        .into(),
                );
            }
            opened.baseline = probe;
            Ok(opened)
        }

        pub fn enable(&mut self) {
            for counter in &mut self.counters {
                counter
                    .enable()
                    .expect("enabling an open perf counter cannot fail");
            }
        }

        pub fn disable(&mut self) {
            for counter in &mut self.counters {
                counter
                    .disable()
                    .expect("disabling an open perf counter cannot fail");
            }
        }

        pub fn read(&mut self) -> Counts {
            self.try_read()
                .expect("reading an open, non-pinned perf counter cannot fail")
                .since(self.baseline)
        }

        fn try_read(&mut self) -> Result<Counts, String> {
            let [cycles, instructions, llc_loads, llc_misses] = &mut self.counters;
            Ok(Counts {
                cycles: read_scaled(cycles)?,
                instructions: read_scaled(instructions)?,
                llc_loads: read_scaled(llc_loads)?,
                llc_misses: read_scaled(llc_misses)?,
            })
        }
    }

    /// Opens one disabled, inherited, user-space-only counter of `event` on this thread.
    pub fn open_counter(name: &str, event: impl Event) -> Result<Counter, String> {
        Builder::new(event)
            .inherit(true)
            .exclude_kernel(true)
            .exclude_hv(true)
            .enabled(false)
            .build()
            .map_err(|error| refusal(name, &error))
    }

    /// Why the kernel refused a counter, with the paranoid level that often explains it.
    fn refusal(name: &str, error: &std::io::Error) -> String {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|text| text.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let hint = match error.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::Unsupported => {
                "; the CPU or hypervisor exposes no such event"
            }
            std::io::ErrorKind::PermissionDenied => "; not permitted for this process",
            _ => "",
        };
        format!(
            "perf_event_open for {name} failed: {error}{hint}; kernel.perf_event_paranoid={paranoid}"
        )
    }

    /// A counter's value, scaled up when the kernel timeshared it with other events.
    fn read_scaled(counter: &mut Counter) -> Result<u64, String> {
        let data = counter
            .read_count_and_time()
            .map_err(|error| format!("reading a perf counter failed: {error}"))?;
        if data.time_running == 0 || data.time_running >= data.time_enabled {
            return Ok(data.count);
        }
        let scaled =
            u128::from(data.count) * u128::from(data.time_enabled) / u128::from(data.time_running);
        Ok(u64::try_from(scaled).unwrap_or(u64::MAX))
    }

    /// A loop the optimizer cannot remove: at least `iterations` instructions.
    pub fn probe_work(iterations: u64) -> u64 {
        let mut sum = 0u64;
        for i in 0..iterations {
            sum = std::hint::black_box(sum.wrapping_add(i));
        }
        sum
    }
}

#[cfg(not(target_os = "linux"))]
mod platform {
    use super::Counts;

    /// No value of this type exists: without perf_event_open no counters can be opened.
    enum Never {}

    pub struct Counters(Never);

    impl Counters {
        pub fn open_hardware() -> Result<Counters, String> {
            Err("hardware counters need Linux perf_event_open, which this platform lacks".into())
        }

        pub fn enable(&mut self) {
            match self.0 {}
        }

        pub fn disable(&mut self) {
            match self.0 {}
        }

        pub fn read(&mut self) -> Counts {
            match self.0 {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_subtracts_field_by_field() {
        let earlier = Counts {
            cycles: 10,
            instructions: 20,
            llc_loads: 3,
            llc_misses: 1,
        };
        let later = Counts {
            cycles: 15,
            instructions: 50,
            llc_loads: 3,
            llc_misses: 2,
        };
        let delta = later.since(earlier);
        assert_eq!(
            delta,
            Counts {
                cycles: 5,
                instructions: 30,
                llc_loads: 0,
                llc_misses: 1
            }
        );
        assert_eq!(earlier.since(later), Counts::default());
    }

    /// Runs where the kernel grants hardware counters; prints why and returns elsewhere.
    #[test]
    fn hardware_counters_count_spawned_threads() {
        let mut group = match CounterGroup::open() {
            Ok(group) => group,
            Err(reason) => {
                eprintln!("skipped: hardware counters unavailable here ({reason})");
                assert!(!reason.is_empty());
                return;
            }
        };
        assert_eq!(
            group.read(),
            Counts::default(),
            "opened counters start at zero"
        );
        let iterations = 20_000_000;
        group.enable();
        let worker = std::thread::spawn(move || platform_probe(iterations));
        worker.join().expect("worker");
        group.disable();
        let counts = group.read();
        assert!(
            counts.instructions >= iterations,
            "the spawned thread's {iterations} loop iterations are counted: {counts:?}"
        );
        assert!(counts.cycles > 0, "{counts:?}");
        assert_eq!(group.read(), counts, "disabled counters do not move");
    }

    #[cfg(target_os = "linux")]
    fn platform_probe(iterations: u64) -> u64 {
        platform::probe_work(iterations)
    }

    #[cfg(not(target_os = "linux"))]
    fn platform_probe(iterations: u64) -> u64 {
        (0..iterations).fold(0, |a, b| std::hint::black_box(a + b))
    }

    #[cfg(not(target_os = "linux"))]
    #[test]
    fn unavailable_off_linux() {
        let reason = CounterGroup::open().expect_err("no counters off Linux");
        assert!(reason.contains("Linux"));
    }

    /// The machinery of the hardware path (inherit, enable/disable, baseline, scaling) with
    /// software clocks, which every Linux kernel grants: the "cycles" slot counts task-clock
    /// nanoseconds, so a spawned thread's busy time must show up in it.
    #[cfg(target_os = "linux")]
    #[test]
    fn inherited_counters_include_spawned_threads_software_clock() {
        use perf_event::events::Software;
        let opened = [
            platform::open_counter("task-clock", Software::TASK_CLOCK),
            platform::open_counter("cpu-clock", Software::CPU_CLOCK),
            platform::open_counter("page faults", Software::PAGE_FAULTS),
            platform::open_counter("context switches", Software::CONTEXT_SWITCHES),
        ];
        let counters = match opened {
            [Ok(a), Ok(b), Ok(c), Ok(d)] => [a, b, c, d],
            other => {
                let reason: Vec<String> = other.into_iter().filter_map(|r| r.err()).collect();
                eprintln!(
                    "skipped: software counters unavailable ({})",
                    reason.join("; ")
                );
                return;
            }
        };
        let counters = platform::Counters::open_events(counters).expect("software clocks");
        let mut group = CounterGroup { counters };
        assert_eq!(group.read().cycles, 0);
        let busy_ns = 20_000_000;
        group.enable();
        let worker_ns = std::thread::spawn(move || {
            while thread_cpu_ns() < busy_ns {
                std::hint::black_box(platform::probe_work(1000));
            }
            thread_cpu_ns()
        })
        .join()
        .expect("worker");
        group.disable();
        let counts = group.read();
        // The worker's CPU time shows up in the inherited task clock (nanoseconds), less what
        // it spent before the counter's inherited copy started (thread start-up, microseconds).
        assert!(
            counts.cycles >= busy_ns,
            "worker {worker_ns} ns, counted {counts:?}"
        );
        assert_eq!(group.read(), counts, "disabled counters do not move");
    }

    /// CPU time the calling thread has used.
    #[cfg(target_os = "linux")]
    fn thread_cpu_ns() -> u64 {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid, writable timespec for the duration of the call.
        let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
        assert_eq!(
            status, 0,
            "CLOCK_THREAD_CPUTIME_ID is always available on Linux"
        );
        let seconds = u64::try_from(now.tv_sec).expect("non-negative");
        let nanos = u64::try_from(now.tv_nsec).expect("non-negative");
        seconds * 1_000_000_000 + nanos
    }
}

//! Counters exported at `GET /metrics` in Prometheus' text format.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency histogram's buckets, in seconds.
pub const LATENCY_BUCKETS_SECONDS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<u16, u64>>,
    errors: Mutex<BTreeMap<String, u64>>,
    pub in_flight: AtomicI64,
    pub queue_depth: AtomicI64,
    /// One count per bucket, then the overflow (+Inf) count.
    latency_counts: [AtomicU64; LATENCY_BUCKETS_SECONDS.len() + 1],
    latency_sum_ns: AtomicU64,
    /// Queries an I/O thread answered itself, and those it tried and handed over.
    pub inline_answered: AtomicU64,
    pub inline_handed_over: AtomicU64,
}

impl Metrics {
    pub fn request_done(&self, status: u16, latency: Duration) {
        *lock(&self.requests).entry(status).or_default() += 1;
        let seconds = latency.as_secs_f64();
        let bucket = LATENCY_BUCKETS_SECONDS
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(LATENCY_BUCKETS_SECONDS.len());
        self.latency_counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_ns
            .fetch_add(latency.as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn error(&self, kind: &str) {
        *lock(&self.errors).entry(kind.to_string()).or_default() += 1;
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str("# HELP warren_requests_total HTTP requests answered, by status.\n");
        out.push_str("# TYPE warren_requests_total counter\n");
        for (status, count) in lock(&self.requests).iter() {
            let _ = writeln!(out, "warren_requests_total{{status=\"{status}\"}} {count}");
        }
        out.push_str("# HELP warren_errors_total Failed requests, by error kind.\n");
        out.push_str("# TYPE warren_errors_total counter\n");
        for (kind, count) in lock(&self.errors).iter() {
            let kind = kind.replace('\\', "\\\\").replace('"', "\\\"");
            let _ = writeln!(out, "warren_errors_total{{kind=\"{kind}\"}} {count}");
        }
        let gauges = [
            (
                "warren_requests_in_flight",
                "Requests being answered.",
                &self.in_flight,
            ),
            (
                "warren_queue_depth",
                "Queries waiting for a query thread.",
                &self.queue_depth,
            ),
        ];
        for (name, help, value) in gauges {
            let value = value.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        }
        out.push_str(
            "# HELP warren_inline_total Queries tried on an I/O thread: answered there, or handed to the query threads.\n# TYPE warren_inline_total counter\n",
        );
        for (outcome, count) in [
            ("answered", &self.inline_answered),
            ("handed_over", &self.inline_handed_over),
        ] {
            let count = count.load(Ordering::Relaxed);
            let _ = writeln!(out, "warren_inline_total{{outcome=\"{outcome}\"}} {count}");
        }
        let name = "warren_request_duration_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} Time from a request's arrival to its response's last byte.\n# TYPE {name} histogram"
        );
        let mut cumulative = 0u64;
        for (index, count) in self.latency_counts.iter().enumerate() {
            cumulative += count.load(Ordering::Relaxed);
            let bound = LATENCY_BUCKETS_SECONDS
                .get(index)
                .map_or_else(|| "+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        let sum = self.latency_sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {cumulative}");
        out
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

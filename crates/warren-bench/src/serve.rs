//! The `serve` workload: `warren serve` in-process on a loopback port over `--db` (read-only),
//! driven by an open-loop load generator. Requests leave on a precomputed schedule at a
//! constant rate, spread round-robin over many kept-alive connections, and each latency is
//! measured from the request's intended start, so a stall of the server shows as the latency
//! of every request it delayed (no coordinated omission). Workloads: point lookups, one-hop
//! neighbour lists, two-hop counts, one-source SHORTEST and a mix; at one `--rate` or, with
//! `--sweep`, at increasing rates until the knee (bounded time per step). Also the server's
//! overhead over the embedded call for a one-row result: the P50 of a request's round trip
//! minus the P50 of the same statement through `Connection::query_with`, in the same run.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use warren::Value;

use crate::bench::{new_report, settings_info, Header};
use crate::error::{BenchError, BenchResult};
use crate::report::{Figures, KSetting, Report, Run};
use crate::stats::Summary;
use crate::workload::BenchOptions;

pub const POINT: &str = "MATCH (a:Person {ID: $id}) RETURN a.ID";

/// (name, statement), each with one parameter `$id`.
pub const QUERIES: [(&str, &str); 4] = [
    ("point", POINT),
    (
        "neighbours",
        "MATCH (a:Person {ID: $id})-[:Knows]->(b:Person) RETURN b.ID",
    ),
    (
        "twohop",
        "MATCH (a:Person {ID: $id})-[:Knows]->(:Person)-[:Knows]->(c:Person) RETURN count(*)",
    ),
    (
        "shortest",
        "MATCH p = (a:Person {ID: $id})-[r:Knows* SHORTEST 1..30]->(b:Person) RETURN count(*)",
    ),
];
/// The mix's share of each query, in percent, in `QUERIES` order.
pub const MIX_PERCENT: [u64; 4] = [50, 30, 15, 5];

/// The rates a sweep tries, in requests per second, until the knee.
pub const SWEEP_RATES: [f64; 7] = [
    500.0, 1_000.0, 2_000.0, 5_000.0, 10_000.0, 20_000.0, 40_000.0,
];
pub const RATE_DEFAULT: f64 = 1_000.0;

#[derive(Clone, Debug)]
struct Sizes {
    /// How long each (workload, rate) step sends requests.
    step: Duration,
    connections: usize,
    /// Round trips (and embedded calls) measured for the overhead.
    overhead_samples: usize,
    /// Embedded calls timed per query (random ids) for the queries' own time.
    embedded_samples: usize,
    /// How long the overload phase runs, and over how many connections (more than the server's
    /// query threads plus its queue, so that requests beyond them are refused).
    overload: Duration,
    overload_connections: usize,
    /// How late past twice its step a request may still be sent (later ones count as unsent).
    /// `--quick`, which the tests run on machines that may be busy, waits longer: every query
    /// of a short step must still be sent there.
    late_grace: Duration,
}

const FULL: Sizes = Sizes {
    step: Duration::from_secs(5),
    connections: 32,
    overhead_samples: 5_000,
    embedded_samples: 1_000,
    overload: Duration::from_secs(30),
    overload_connections: 256,
    late_grace: Duration::from_secs(1),
};

const QUICK: Sizes = Sizes {
    step: Duration::from_millis(300),
    connections: 4,
    overhead_samples: 200,
    embedded_samples: 20,
    overload: Duration::from_millis(600),
    overload_connections: 32,
    late_grace: Duration::from_secs(20),
};

/// The queue of the server the overload run starts (`--queue`): requests beyond the query
/// threads and this many get 503 at once.
const OVERLOAD_QUEUE: usize = 64;

/// A deterministic generator of node ids (xorshift64*).
struct Ids(u64);

impl Ids {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % below
    }
}

/// What one (workload, rate) step measured.
#[derive(Clone, Debug)]
pub struct Step {
    pub workload: String,
    pub rate_target: f64,
    pub rate_achieved: f64,
    pub requests: u64,
    pub ok: u64,
    pub errors: u64,
    pub rejected_503: u64,
    /// Requests never sent because the step's time ran out (the server fell behind).
    pub unsent: u64,
    pub latency_us: [u64; 5],
    /// How late the load generator sent its requests (P50, P99, µs): its own wake-ups, part
    /// of every latency above.
    pub lag_us: [u64; 2],
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid histogram bounds")
}

fn micros(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_micros())
        .unwrap_or(u64::MAX)
        .max(1)
}

fn body(statement: &str, id: u64) -> String {
    format!(
        "{{\"query\": {}, \"parameters\": {{\"id\": {id}}}}}",
        warren_client::json_string(statement)
    )
}

/// The requests of a step, in schedule order: each one's query (an index into `QUERIES`) and
/// body.
fn schedule(workload: Option<usize>, count: usize, nodes: u64, seed: u64) -> Vec<(usize, String)> {
    let mut ids = Ids(seed | 1);
    (0..count)
        .map(|_| {
            let query = workload.unwrap_or_else(|| {
                let mut pick = ids.next(100);
                MIX_PERCENT
                    .iter()
                    .position(|&share| {
                        let hit = pick < share;
                        pick = pick.saturating_sub(share);
                        hit
                    })
                    .unwrap_or(0)
            });
            (query, body(QUERIES[query].1, ids.next(nodes)))
        })
        .collect()
}

/// Makes this thread's sleeps end when asked (Linux: a timer slack of 1 ns instead of the
/// default 50 µs), so that the load generator's own lateness does not inflate every latency it
/// measures from the intended start (`docs/OPTIMIZATION_LOG.md`, entry 108).
fn sleep_precisely() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and changes only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// What one connection's requests of one query got.
struct Tally {
    latency: Histogram<u64>,
    ok: u64,
    errors: u64,
    rejected_503: u64,
}

impl Tally {
    fn new() -> Self {
        Tally {
            latency: histogram(),
            ok: 0,
            errors: 0,
            rejected_503: 0,
        }
    }

    fn add(&mut self, other: &Tally) {
        self.latency
            .add(&other.latency)
            .expect("same histogram bounds");
        self.ok += other.ok;
        self.errors += other.errors;
        self.rejected_503 += other.rejected_503;
    }
}

/// What one connection's requests got, by query (`QUERIES` order).
struct ConnectionOutcome {
    by_query: Vec<Tally>,
    unsent: u64,
    /// How late each request left after its intended start.
    lag: Histogram<u64>,
}

/// A load generator's client: it blocks for its answers at once (many clients polling on the
/// server's cores would take them from the queries they time).
fn generator_client(url: &str) -> Option<warren_client::Client> {
    let mut client = warren_client::Client::connect(url, None).ok()?;
    client
        .set_poll_window(Duration::ZERO)
        .expect("a zero poll window is allowed");
    Some(client)
}

/// Sends request `i` of `requests` at `start + i / rate` over connection `i % connections`.
/// Returns the step's figures, then, when it mixes several queries, each query's figures
/// within it (workload `NAME/QUERY`, its rate its share of the step's).
fn run_step(
    url: &str,
    name: &str,
    requests: &[(usize, String)],
    rate: f64,
    sizes: &Sizes,
) -> Vec<Step> {
    let period = Duration::from_secs_f64(1.0 / rate);
    let connections = sizes.connections.min(requests.len()).max(1);
    // The schedule lies ahead of every thread's first request.
    let start = Instant::now() + Duration::from_millis(20);
    let deadline = start + sizes.step * 2 + sizes.late_grace;
    let outcomes: Vec<ConnectionOutcome> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..connections)
            .map(|first| {
                scope.spawn(move || {
                    let mut outcome = ConnectionOutcome {
                        by_query: (0..QUERIES.len()).map(|_| Tally::new()).collect(),
                        unsent: 0,
                        lag: histogram(),
                    };
                    sleep_precisely();
                    let mut client = generator_client(url);
                    for index in (first..requests.len()).step_by(connections) {
                        let (query, body) = &requests[index];
                        let intended = start + period * index as u32;
                        let now = Instant::now();
                        if now >= deadline {
                            outcome.unsent += 1;
                            continue;
                        }
                        if intended > now {
                            std::thread::sleep(intended - now);
                        }
                        outcome.lag.saturating_record(micros(intended.elapsed()));
                        let status = client.as_mut().and_then(|client| {
                            let response = client
                                .request("POST", "/query", &[], body.as_bytes())
                                .ok()?;
                            let status = response.status;
                            response.into_bytes().ok().map(|_| status)
                        });
                        let tally = &mut outcome.by_query[*query];
                        tally.latency.saturating_record(micros(intended.elapsed()));
                        match status {
                            Some(200) => tally.ok += 1,
                            Some(503) => tally.rejected_503 += 1,
                            Some(_) => tally.errors += 1,
                            None => {
                                tally.errors += 1;
                                client = generator_client(url);
                            }
                        }
                    }
                    outcome
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a load thread panicked"))
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64().max(1e-9);
    let unsent = outcomes.iter().map(|o| o.unsent).sum();
    let mut lag = histogram();
    for outcome in &outcomes {
        lag.add(&outcome.lag).expect("same histogram bounds");
    }
    let lag_us = [lag.value_at_quantile(0.5), lag.value_at_quantile(0.99)];
    let mut by_query: Vec<Tally> = (0..QUERIES.len()).map(|_| Tally::new()).collect();
    for outcome in &outcomes {
        for (total, tally) in by_query.iter_mut().zip(&outcome.by_query) {
            total.add(tally);
        }
    }
    let mut whole = Tally::new();
    by_query.iter().for_each(|tally| whole.add(tally));
    let figures = |workload: String, tally: &Tally, requests: u64, unsent: u64, rate: f64| Step {
        workload,
        rate_target: rate,
        rate_achieved: tally.ok as f64 / elapsed,
        requests,
        ok: tally.ok,
        errors: tally.errors,
        rejected_503: tally.rejected_503,
        unsent,
        latency_us: [
            tally.latency.value_at_quantile(0.50),
            tally.latency.value_at_quantile(0.90),
            tally.latency.value_at_quantile(0.99),
            tally.latency.value_at_quantile(0.999),
            tally.latency.max(),
        ],
        lag_us,
    };
    let mut steps = vec![figures(
        name.to_string(),
        &whole,
        requests.len() as u64,
        unsent,
        rate,
    )];
    let counts: Vec<u64> = (0..QUERIES.len())
        .map(|q| requests.iter().filter(|(query, _)| *query == q).count() as u64)
        .collect();
    if counts.iter().filter(|&&n| n > 0).count() > 1 {
        for (q, tally) in by_query.iter().enumerate().filter(|(q, _)| counts[*q] > 0) {
            let share = counts[q] as f64 / requests.len() as f64;
            // Unsent requests are counted for the whole step only.
            steps.push(figures(
                format!("{name}/{}", QUERIES[q].0),
                tally,
                counts[q],
                0,
                rate * share,
            ));
        }
    }
    steps
}

/// A query's own time: the embedded call (one engine thread, as on a query thread) from
/// `samples` random ids, one after another, each run to its last row.
#[derive(Clone, Debug)]
pub struct Embedded {
    pub query: String,
    pub samples: u64,
    /// The mean, in µs (with the rate, how busy the query keeps its threads).
    pub mean_us: u64,
    /// P50, P90, P99, P99.9 and max, in µs.
    pub latency_us: [u64; 5],
}

fn embedded_times(
    db: &warren::Database,
    query: usize,
    nodes: u64,
    samples: usize,
) -> BenchResult<Embedded> {
    let mut conn = db.connect();
    conn.settings_mut().threads = 1;
    let mut latency = histogram();
    let mut ids = Ids(11 + query as u64);
    for _ in 0..samples {
        let id = ids.next(nodes) as i64;
        let parameters = HashMap::from([("id".to_string(), Value::Int64(id))]);
        let started = Instant::now();
        let rows = conn
            .query_with(QUERIES[query].1, &parameters)?
            .collect_rows()?;
        latency.saturating_record(micros(started.elapsed()));
        std::hint::black_box(rows);
    }
    Ok(Embedded {
        query: QUERIES[query].0.to_string(),
        samples: samples as u64,
        mean_us: latency.mean().round() as u64,
        latency_us: [0.50, 0.90, 0.99, 0.999, 1.0].map(|q| latency.value_at_quantile(q)),
    })
}

/// The embedded table: each query's own time.
fn embedded_table(rows: &[Embedded]) -> String {
    let mut out = format!(
        "embedded, one thread, random ids:\n{:<14} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9}\n",
        "query", "samples", "mean us", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us"
    );
    for row in rows {
        let [p50, p90, p99, p999, max] = row.latency_us;
        out.push_str(&format!(
            "{:<14} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9}\n",
            row.query, row.samples, row.mean_us, p50, p90, p99, p999, max
        ));
    }
    out
}

fn embedded_from_json(rows: &serde_json::Value) -> Vec<Embedded> {
    rows.as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|v| Embedded {
            query: v["query"].as_str().unwrap_or_default().to_string(),
            samples: v["samples"].as_u64().unwrap_or(0),
            mean_us: v["latency_us_mean"].as_u64().unwrap_or(0),
            latency_us: ["p50", "p90", "p99", "p999", "max"]
                .map(|name| v[format!("latency_us_{name}")].as_u64().unwrap_or(0)),
        })
        .collect()
}

/// The overhead loop's result: the P50s of the embedded call and of the request round trip,
/// and what the client's polls before blocking found.
struct Overhead {
    embedded_us: u64,
    served_us: u64,
    polls: warren_client::PollCounts,
}

/// The P50s of the embedded call and of the request round trip for a one-row point lookup,
/// each answer checked, the client polling `client_poll` before it blocks.
fn overhead(
    db: &warren::Database,
    url: &str,
    nodes: u64,
    samples: usize,
    client_poll: Duration,
) -> BenchResult<Overhead> {
    let mut conn = db.connect();
    conn.settings_mut().threads = 1;
    let (mut embedded, mut served) = (histogram(), histogram());
    let mut client = warren_client::Client::connect(url, None)
        .map_err(|e| BenchError::Result(format!("connecting to the server: {e}")))?;
    client
        .set_poll_window(client_poll)
        .map_err(|e| BenchError::Usage(format!("--client-poll-us: {e}")))?;
    let mut ids = Ids(7);
    for _ in 0..samples {
        let id = ids.next(nodes);
        let parameters = HashMap::from([("id".to_string(), Value::Int64(id as i64))]);
        let started = Instant::now();
        let rows = conn.query_with(POINT, &parameters)?.collect_rows()?;
        embedded.saturating_record(micros(started.elapsed()));
        if rows != [vec![Value::Int64(id as i64)]] {
            return Err(BenchError::Result(format!(
                "point lookup of {id}: {rows:?}"
            )));
        }
        let request = body(POINT, id);
        let started = Instant::now();
        let response = client
            .request("POST", "/query", &[], request.as_bytes())
            .map_err(|e| BenchError::Result(format!("request: {e}")))?;
        let status = response.status;
        let bytes = response
            .into_bytes()
            .map_err(|e| BenchError::Result(format!("response: {e}")))?;
        served.saturating_record(micros(started.elapsed()));
        let text = String::from_utf8_lossy(&bytes);
        if status != 200 || !text.contains(&format!("\"rows\": [\n[{id}]\n]")) {
            return Err(BenchError::Result(format!(
                "served point lookup of {id}: {status} {text}"
            )));
        }
    }
    Ok(Overhead {
        embedded_us: embedded.value_at_quantile(0.5),
        served_us: served.value_at_quantile(0.5),
        polls: client.poll_counts(),
    })
}

/// The table `warren bench serve` prints.
pub fn table(steps: &[Step]) -> String {
    let mut out = format!(
        "{:<14} {:>8} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9} {:>7} {:>6} {:>7} {:>8} {:>8}\n",
        "workload",
        "rate/s",
        "achieved",
        "p50 us",
        "p90 us",
        "p99 us",
        "p99.9 us",
        "max us",
        "errors",
        "503s",
        "unsent",
        "lag50 us",
        "lag99 us"
    );
    for s in steps {
        out.push_str(&format!(
            "{:<14} {:>8.0} {:>9.0} {:>8} {:>8} {:>8} {:>9} {:>9} {:>7} {:>6} {:>7} {:>8} {:>8}\n",
            s.workload,
            s.rate_target,
            s.rate_achieved,
            s.latency_us[0],
            s.latency_us[1],
            s.latency_us[2],
            s.latency_us[3],
            s.latency_us[4],
            s.errors,
            s.rejected_503,
            s.unsent,
            s.lag_us[0],
            s.lag_us[1]
        ));
    }
    out
}

fn steps_from_json(steps: &serde_json::Value) -> Vec<Step> {
    let number = |v: &serde_json::Value, name: &str| v[name].as_f64().unwrap_or(0.0);
    steps
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|v| Step {
            workload: v["workload"].as_str().unwrap_or_default().to_string(),
            rate_target: number(v, "rate_target"),
            rate_achieved: number(v, "rate_achieved"),
            requests: number(v, "requests") as u64,
            ok: number(v, "ok") as u64,
            errors: number(v, "errors") as u64,
            rejected_503: number(v, "rejected_503") as u64,
            unsent: number(v, "unsent") as u64,
            latency_us: [
                "latency_us_p50",
                "latency_us_p90",
                "latency_us_p99",
                "latency_us_p999",
                "latency_us_max",
            ]
            .map(|name| number(v, name) as u64),
            lag_us: ["lag_us_p50", "lag_us_p99"].map(|name| number(v, name) as u64),
        })
        .collect()
}

/// How the server's I/O threads' spins before parking have ended so far: [woken, expired,
/// contended, microseconds spent spinning].
fn spin_counts(spinners: &warren_server::spin::Spinners) -> [u64; 4] {
    use std::sync::atomic::Ordering::Relaxed;
    [
        spinners.woken.load(Relaxed),
        spinners.expired.load(Relaxed),
        spinners.contended.load(Relaxed),
        spinners.spun_us.load(Relaxed),
    ]
}

/// The table, the overhead line and the overload run (when there was one), from a report's
/// answer.
pub fn text(report: &Report) -> String {
    let answer = &report.answer;
    let mut text = format!(
        "{}overhead for a one-row result (P50): server {} us - embedded {} us = {} us\n",
        table(&steps_from_json(&answer["steps"])),
        answer["server_us_p50"],
        answer["embedded_us_p50"],
        answer["overhead_us_p50"]
    );
    if answer["client_poll_us"].as_u64().unwrap_or(0) > 0 {
        text.push_str(&format!(
            "client's polls before blocking (window {} us): {} answers caught, {} missed\n",
            answer["client_poll_us"],
            answer["client_polls"]["caught"],
            answer["client_polls"]["missed"],
        ));
    }
    if answer["io_spin_us"].is_u64() {
        let spins = |phase: &str, how: &str| answer[phase][how].as_u64().unwrap_or(0);
        text.push_str(&format!(
            "I/O threads' spins before parking (window {} us): overhead round trips {} woken, {} \
             expired, {} contended, {} us spinning; whole run {} woken, {} expired, {} \
             contended, {} us spinning\n",
            answer["io_spin_us"],
            spins("io_spins_overhead", "woken"),
            spins("io_spins_overhead", "expired"),
            spins("io_spins_overhead", "contended"),
            spins("io_spins_overhead", "spun_us"),
            spins("io_spins_total", "woken"),
            spins("io_spins_total", "expired"),
            spins("io_spins_total", "contended"),
            spins("io_spins_total", "spun_us"),
        ));
    }
    let embedded = embedded_from_json(&answer["embedded"]);
    if !embedded.is_empty() {
        text.push_str(&embedded_table(&embedded));
    }
    let run = &answer["overload"];
    if run.is_object() {
        let bytes = |name: &str| run[name].as_u64().unwrap_or(0);
        text.push_str(&overload_text(&Overload {
            knee: run["knee"].as_f64().unwrap_or(0.0),
            phases: steps_from_json(&run["phases"]),
            rss_before: bytes("rss_before_bytes"),
            rss_peak: bytes("rss_peak_bytes"),
            bound_bytes: bytes("bound_bytes"),
        }));
    }
    text
}

/// The resident memory of this process (server and load generator) sampled every 20 ms while
/// `work` runs: (resident before, peak while it ran).
fn sample_memory<T>(work: impl FnOnce() -> T) -> (T, u64, u64) {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let before = crate::machine::current_rss_bytes().unwrap_or(0);
    let peak = AtomicU64::new(before);
    let done = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if let Some(now) = crate::machine::current_rss_bytes() {
                    peak.fetch_max(now, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let result = work();
        done.store(true, Ordering::Relaxed);
        result
    });
    (result, before, peak.load(Ordering::Relaxed))
}

/// What the overload run measured: the mix at half the knee, at twice it, and at half it again.
pub struct Overload {
    pub knee: f64,
    pub phases: Vec<Step>,
    pub rss_before: u64,
    pub rss_peak: u64,
    /// The most the server may hold beyond its resident size before the run, from its limits.
    pub bound_bytes: u64,
}

/// Memory the server may add under any load, from its limits: per open connection (at most
/// `connections_max` served and 64 being refused) a request body of at most `body_bytes_max`
/// (a queued or running query holds its connection's) and the response pieces in flight plus
/// one being filled; plus 64 MiB of slack for the allocator, the load generator's threads and
/// the engine's per-query state.
fn memory_bound(config: &warren_server::Config, connections: usize) -> u64 {
    let pieces = (warren_server::pool::PIECES_IN_FLIGHT + 1) * warren_server::pool::PIECE_BYTES;
    let open = connections.min(config.connections_max + warren_server::REFUSED_CONNECTIONS_MAX);
    (open * (config.body_bytes_max + pieces)) as u64 + (64 << 20)
}

/// The overload run's server: the default limits but a queue of [`OVERLOAD_QUEUE`], with the
/// query threads of both lanes that the run was given.
fn overload_config(measured: &warren_server::Config) -> warren_server::Config {
    warren_server::Config {
        listen: measured.listen,
        threads: measured.threads,
        heavy_threads: measured.heavy_threads,
        io_spin_us: measured.io_spin_us,
        queue: OVERLOAD_QUEUE,
        ..warren_server::Config::default()
    }
}

/// The overload run: a server of [`overload_config`], the mix sent at half the knee, then at
/// twice the knee for `sizes.overload` over more connections than the server can queue, then
/// at half the knee again.
fn overload(
    db: &warren::Database,
    measured: &warren_server::Config,
    knee: f64,
    nodes: u64,
    sizes: &Sizes,
) -> BenchResult<Overload> {
    let config = overload_config(measured);
    let server = warren_server::Server::start(&config, db)?;
    let url = format!("http://{}", server.addr());
    let calm = |seed: u64| {
        let rate = knee / 2.0;
        let count = ((rate * sizes.step.as_secs_f64()) as usize).max(1);
        let mut step = run_step(
            &url,
            "mix",
            &schedule(None, count, nodes, seed),
            rate,
            sizes,
        )
        .swap_remove(0);
        step.workload = if seed == 1 { "before" } else { "after" }.into();
        step
    };
    let before = calm(1);
    let loud = Sizes {
        step: sizes.overload,
        connections: sizes.overload_connections,
        ..sizes.clone()
    };
    let rate = knee * 2.0;
    let count = ((rate * loud.step.as_secs_f64()) as usize).max(1);
    let bodies = schedule(None, count, nodes, 2);
    let (mut during, rss_before, rss_peak) =
        sample_memory(|| run_step(&url, "mix", &bodies, rate, &loud).swap_remove(0));
    during.workload = "overload".into();
    let after = calm(3);
    drop(server);
    Ok(Overload {
        knee,
        phases: vec![before, during, after],
        rss_before,
        rss_peak,
        bound_bytes: memory_bound(&config, loud.connections),
    })
}

/// The overload table: the three phases, then the memory line and the verdicts.
pub fn overload_text(overload: &Overload) -> String {
    let [before, during, after] = &overload.phases[..] else {
        panic!("an overload run has three phases")
    };
    let growth = overload.rss_peak.saturating_sub(overload.rss_before);
    let refused = during.rejected_503 > 0;
    // Recovered: keeps up with half the knee again (no 503s, nothing unsent, at least 90% of
    // the rate achieved) with a median latency within 1.5x of the one before the overload.
    let recovered = after.rejected_503 == 0
        && after.unsent == 0
        && after.rate_achieved >= 0.9 * after.rate_target
        && after.latency_us[0] * 2 <= before.latency_us[0].max(100) * 3;
    format!(
        "overload at twice the knee ({:.0}/s, knee {:.0}/s):\n{}\
         memory: {} MiB resident before, {} MiB peak during (+{} MiB; bound +{} MiB): {}\n\
         excess refused with 503: {}; P99 of the accepted during overload: {} us; \
         recovered at half the knee (keeps up, no 503s, P50 within 1.5x of before): {} \
         (P99 {} us before, {} us after)\n",
        overload.knee * 2.0,
        overload.knee,
        table(&overload.phases),
        overload.rss_before >> 20,
        overload.rss_peak >> 20,
        growth >> 20,
        overload.bound_bytes >> 20,
        if growth <= overload.bound_bytes {
            "within"
        } else {
            "OVER"
        },
        if refused { "yes" } else { "no" },
        during.latency_us[2],
        if recovered { "yes" } else { "NO" },
        before.latency_us[2],
        after.latency_us[2],
    )
}

/// The knee of the mix: the highest sweep rate it kept up with (achieved at least 90% of the
/// rate, P99 under 100 ms, nothing unsent).
fn mix_knee(steps: &[Step]) -> Option<f64> {
    steps
        .iter()
        .filter(|s| s.workload == "mix")
        .take_while(|s| {
            s.rate_achieved >= 0.9 * s.rate_target && s.latency_us[2] <= 100_000 && s.unsent == 0
        })
        .map(|s| s.rate_target)
        .last()
}

fn step_json(s: &Step) -> serde_json::Value {
    serde_json::json!({
        "workload": s.workload, "rate_target": s.rate_target, "rate_achieved": s.rate_achieved,
        "requests": s.requests, "ok": s.ok, "errors": s.errors, "rejected_503": s.rejected_503,
        "unsent": s.unsent, "latency_us_p50": s.latency_us[0], "latency_us_p90": s.latency_us[1],
        "latency_us_p99": s.latency_us[2], "latency_us_p999": s.latency_us[3],
        "latency_us_max": s.latency_us[4], "lag_us_p50": s.lag_us[0], "lag_us_p99": s.lag_us[1],
    })
}

fn summary(value: f64) -> Option<Summary> {
    Some(Summary::of(&[value]))
}

pub fn run(options: &BenchOptions, header: &Header) -> BenchResult<(Report, Option<String>)> {
    let sizes = if options.quick { QUICK } else { FULL };
    let names: Vec<&str> = QUERIES
        .iter()
        .map(|(name, _)| *name)
        .chain(["mix"])
        .collect();
    if let Some(unknown) = options
        .scenarios
        .iter()
        .find(|s| !names.contains(&s.as_str()))
    {
        return Err(BenchError::Result(format!(
            "serve has no workload {unknown:?} (it has {})",
            names.join(", ")
        )));
    }
    let (db_path, dir) = crate::bench::database_at(options, 0);
    // Loaded first when new (as the other workloads do), then served read-only.
    let info = crate::dataset::open(db_path, dir)?.info;
    let db = warren_server::open_database(db_path, true)?;
    let config = warren_server::Config {
        listen: "127.0.0.1:0".parse().expect("a loopback address"),
        threads: options.threads.unwrap_or(2),
        heavy_threads: options
            .heavy_threads
            .unwrap_or(warren_server::config::HEAVY_THREADS_DEFAULT),
        queue: 4_096,
        connections_max: 1_024,
        io_spin_us: options
            .io_spin_us
            .unwrap_or(warren_server::spin::SPIN_US_DEFAULT),
        ..warren_server::Config::default()
    };
    let server = warren_server::Server::start(&config, &db)?;
    let url = format!("http://{}", server.addr());
    let nodes = info.nodes.max(1);
    let client_poll = options
        .client_poll_us
        .map_or(warren_client::POLL_WINDOW_DEFAULT, Duration::from_micros);
    let Overhead {
        embedded_us,
        served_us,
        polls,
    } = overhead(&db, &url, nodes, sizes.overhead_samples, client_poll)?;
    let spins_overhead = spin_counts(server.spins());
    let rates: Vec<f64> = if options.sweep {
        SWEEP_RATES.to_vec()
    } else {
        vec![options.rate.unwrap_or(RATE_DEFAULT)]
    };
    let selected =
        |name: &str| options.scenarios.is_empty() || options.scenarios.iter().any(|s| s == name);
    let embedded = (0..QUERIES.len())
        .filter(|&q| selected(QUERIES[q].0) || selected("mix"))
        .map(|q| embedded_times(&db, q, nodes, sizes.embedded_samples))
        .collect::<BenchResult<Vec<_>>>()?;
    let mut steps = Vec::new();
    let workloads = (0..QUERIES.len()).map(Some).chain([None]);
    for (seed, workload) in workloads.enumerate() {
        let name = workload.map_or("mix", |w| QUERIES[w].0);
        if !selected(name) {
            continue;
        }
        for &rate in &rates {
            let count = ((rate * sizes.step.as_secs_f64()) as usize).max(1);
            let bodies = schedule(workload, count, nodes, seed as u64 + 1);
            let measured = run_step(&url, name, &bodies, rate, &sizes);
            let step = &measured[0];
            // The knee: the server no longer keeps up, or its P99 passed 100 ms.
            let knee =
                step.rate_achieved < 0.9 * rate || step.latency_us[2] > 100_000 || step.unsent > 0;
            steps.extend(measured);
            if knee {
                break;
            }
        }
    }
    let spins_total = spin_counts(server.spins());
    drop(server);
    let overload = if options.overload {
        let knee = match (options.rate, mix_knee(&steps)) {
            (Some(rate), _) if !options.sweep => rate,
            (_, Some(knee)) => knee,
            (_, None) => {
                return Err(BenchError::Result(
                    "overload: the mix kept up with no rate of the sweep; give --rate".into(),
                ))
            }
        };
        Some(overload(&db, &config, knee, nodes, &sizes)?)
    } else {
        None
    };
    let runs = steps
        .iter()
        .map(|s| Run {
            dataset: format!("{} @{}/s", s.workload, s.rate_target),
            k: KSetting::Auto,
            k_chosen: None,
            answer: serde_json::json!({"ok": s.ok, "errors": s.errors, "rejected_503": s.rejected_503, "unsent": s.unsent}),
            answer_checked: true,
            figures: Figures {
                ops_per_s: summary(s.rate_achieved),
                latency_us_p50: summary(s.latency_us[0] as f64),
                latency_us_p99: summary(s.latency_us[2] as f64),
                latency_us_p999: summary(s.latency_us[3] as f64),
                latency_us_max: summary(s.latency_us[4] as f64),
                ..Figures::default()
            },
            traversal: None,
            hardware_counts: None,
        })
        .collect();
    let threads = config.threads;
    let mut report = new_report(
        options,
        header,
        POINT,
        info,
        settings_info(options, threads, KSetting::Auto),
    );
    report.answer = serde_json::json!({
        "embedded_us_p50": embedded_us,
        "server_us_p50": served_us,
        "overhead_us_p50": served_us as i64 - embedded_us as i64,
        "io_spin_us": config.io_spin_us,
        "client_poll_us": client_poll.as_micros() as u64,
        "client_polls": {"caught": polls.caught, "missed": polls.missed},
        "io_spins_overhead": {"woken": spins_overhead[0], "expired": spins_overhead[1], "contended": spins_overhead[2], "spun_us": spins_overhead[3]},
        "io_spins_total": {"woken": spins_total[0], "expired": spins_total[1], "contended": spins_total[2], "spun_us": spins_total[3]},
        "connections": sizes.connections,
        "step_s": sizes.step.as_secs_f64(),
        "steps": steps.iter().map(step_json).collect::<Vec<_>>(),
        "embedded": embedded.iter().map(|e| {
            let [p50, p90, p99, p999, max] = e.latency_us;
            serde_json::json!({
                "query": e.query, "samples": e.samples, "latency_us_mean": e.mean_us,
                "latency_us_p50": p50,
                "latency_us_p90": p90, "latency_us_p99": p99, "latency_us_p999": p999,
                "latency_us_max": max,
            })
        }).collect::<Vec<_>>(),
    });
    if let Some(overload) = &overload {
        report.answer["overload"] = serde_json::json!({
            "knee": overload.knee,
            "rss_before_bytes": overload.rss_before,
            "rss_peak_bytes": overload.rss_peak,
            "bound_bytes": overload.bound_bytes,
            "queue": OVERLOAD_QUEUE,
            "connections": sizes.overload_connections,
            "phases": overload.phases.iter().map(step_json).collect::<Vec<_>>(),
        });
    }
    report.answer_checked = true;
    report.check =
        "every overhead sample's point lookup returned its id, embedded and served".into();
    report.figures.latency_us_p50 = summary(served_us as f64);
    report.runs = runs;
    Ok((report, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_schedule_tags_each_request_with_its_query_in_the_mix_shares() {
        let requests = schedule(None, 10_000, 1_000, 1);
        for (query, percent) in MIX_PERCENT.iter().enumerate() {
            let count = requests.iter().filter(|(q, _)| *q == query).count() as u64;
            assert!(count.abs_diff(percent * 100) < 150, "{query}: {count}");
        }
        for (query, body) in &requests {
            assert!(body.contains(&warren_client::json_string(QUERIES[*query].1)));
        }
        let alone = schedule(Some(2), 100, 1_000, 1);
        assert!(alone.iter().all(|(q, _)| *q == 2));
    }

    #[test]
    fn the_embedded_table_reads_back_from_the_report() {
        let rows = vec![Embedded {
            query: "shortest".into(),
            samples: 1_000,
            mean_us: 3_010,
            latency_us: [1_362, 9_767, 14_063, 18_127, 21_695],
        }];
        let json = serde_json::json!([{
            "query": "shortest", "samples": 1_000, "latency_us_mean": 3_010, "latency_us_p50": 1_362,
            "latency_us_p90": 9_767, "latency_us_p99": 14_063, "latency_us_p999": 18_127,
            "latency_us_max": 21_695,
        }]);
        assert_eq!(
            embedded_table(&embedded_from_json(&json)),
            embedded_table(&rows)
        );
        assert!(
            embedded_table(&rows).contains("shortest           1000     3010     1362     9767")
        );
    }

    #[test]
    fn the_overload_server_has_the_runs_query_threads_and_the_overload_queue() {
        let measured = warren_server::Config {
            threads: 3,
            heavy_threads: warren_server::config::HEAVY_THREADS_DEFAULT + 2,
            queue: 4_096,
            connections_max: 1_024,
            ..warren_server::Config::default()
        };
        let config = overload_config(&measured);
        assert_eq!(config.threads, 3);
        assert_eq!(
            config.heavy_threads,
            warren_server::config::HEAVY_THREADS_DEFAULT + 2
        );
        assert_eq!(config.queue, OVERLOAD_QUEUE);
        let defaults = warren_server::Config::default();
        assert_eq!(config.connections_max, defaults.connections_max);
        assert_eq!(config.timeout_ms, defaults.timeout_ms);
        assert_eq!(config.body_bytes_max, defaults.body_bytes_max);
    }
}

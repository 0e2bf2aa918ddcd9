//! The `wire` workload (design §6): the wire format's encoder and decoder next to `memcpy` of the
//! same bytes, in the same run.
//!
//! * `chunk`: INT64, DOUBLE and STRING chunks of 4 KiB, 128 KiB, 1 MiB and 16 MiB; GB/s of
//!   Warren's encoder, of `memcpy` of the chunk's payload to the same destination, and of
//!   Warren's decoder.
//! * `placement`: the 128 KiB INT64 chunk with its values landing at chosen distances past the
//!   source modulo 4 KiB; `memcpy`, the encoder, and the encoder with a plain `memcpy` (no
//!   aliasing guard).
//! * `frame`: 100,000 rows x 8 mixed columns as a stream of 2,048-row chunks; Warren's encode and
//!   decode, and the conversion from engine values.
//! * The bincode 1.3.3 peer (`bench/peers/wire-bincode`, a child process: bincode may not be a
//!   dependency here) times bincode's serde path on the same values: the chunks, the columnar
//!   frame, and the same rows as a row-per-`Vec<value>` frame.
//!
//! The answer check: every encoded chunk and frame decodes back to its values, and the peer
//! reports that bincode's bytes equal Warren's.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use warren::Value;
use warren_common::types::LogicalType;
use warren_wire::sample::{self, RowFrame};
use warren_wire::{ColumnData, Encode, Message, Sink, WireValue};

use crate::bench::{new_report, settings_info, Header};
use crate::error::{BenchError, BenchResult};
use crate::report::{DatasetInfo, Figures, KSetting, Report, Run};
use crate::stats::Summary;
use crate::workload::BenchOptions;

/// Chunk payload sizes, full and `--quick`.
const SIZES: [(usize, &str); 4] = [
    (4 << 10, "4KiB"),
    (128 << 10, "128KiB"),
    (1 << 20, "1MiB"),
    (16 << 20, "16MiB"),
];
const QUICK_SIZES: [(usize, &str); 2] = [(4 << 10, "4KiB"), (128 << 10, "128KiB")];
/// Destination minus source, modulo 4 KiB, of the placement runs.
pub const PLACEMENTS: [usize; 12] = [0, 1, 4, 8, 12, 15, 16, 32, 64, 256, 2048, 4088];
const FRAME_ROWS: usize = 100_000;
const QUICK_FRAME_ROWS: usize = 5_000;
const FRAME_CHUNK_ROWS: usize = 2_048;
/// Bytes one sample processes (iterations = this / size, at least 3).
const SAMPLE_BYTES: usize = 32 << 20;
const QUICK_SAMPLE_BYTES: usize = 4 << 20;
/// Where `bench/peers/wire.sh` builds the bincode peer, relative to the repository root.
pub const PEER_PATH: &str = "bench/peers/wire-bincode/target/release/wire-bincode";

struct Plan {
    sizes: &'static [(usize, &'static str)],
    frame_rows: usize,
    sample_bytes: usize,
    repeat: usize,
}

/// Times `variants` operations side by side: a warm-up of up to 16 iterations each, then
/// `repeat` rounds in which every variant runs `iterations` times in turn, so that a burst of
/// load from other processes on a shared machine hits all of them alike. Returns, per variant,
/// the seconds per iteration of each round.
fn time_side_by_side(
    repeat: usize,
    iterations: usize,
    variants: usize,
    mut run: impl FnMut(usize),
) -> Vec<Vec<f64>> {
    for variant in 0..variants {
        for _ in 0..iterations.min(16) {
            run(variant);
        }
    }
    let mut samples = vec![Vec::with_capacity(repeat); variants];
    for _ in 0..repeat {
        for (variant, samples) in samples.iter_mut().enumerate() {
            let started = Instant::now();
            for _ in 0..iterations {
                run(variant);
            }
            samples.push(started.elapsed().as_secs_f64() / iterations as f64);
        }
    }
    samples
}

fn run_of(name: String, bytes: usize, samples_s: &[f64]) -> Run {
    let gb_per_s: Vec<f64> = samples_s.iter().map(|s| bytes as f64 / s / 1e9).collect();
    Run {
        dataset: name,
        k: KSetting::Auto,
        k_chosen: None,
        answer: serde_json::json!({ "bytes": bytes }),
        answer_checked: true,
        figures: Figures {
            time_s: Some(Summary::of(samples_s)),
            gb_per_s: Some(Summary::of(&gb_per_s)),
            ..Figures::default()
        },
        traversal: None,
        hardware_counts: None,
    }
}

/// The payload slices of a chunk and where the encoder writes each, relative to its start.
fn payload(data: &ColumnData) -> Vec<(usize, &[u8])> {
    match data {
        ColumnData::Int64(v) => vec![(12, bytemuck::cast_slice(v))],
        ColumnData::Double(v) => vec![(12, bytemuck::cast_slice(v))],
        ColumnData::String(c) => {
            let offsets: &[u8] = bytemuck::cast_slice(&c.offsets);
            vec![(12, offsets), (20 + offsets.len(), c.text.as_bytes())]
        }
        other => unreachable!("no payload for {other:?}"),
    }
}

/// Copies each payload slice to its place in `out` (whose capacity holds the chunk).
fn memcpy_payload(out: &mut Vec<u8>, slices: &[(usize, &[u8])]) {
    for (at, bytes) in slices {
        assert!(at + bytes.len() <= out.capacity());
        // SAFETY: the destination lies within `out`'s capacity (asserted); the source is a
        // different allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().add(*at), bytes.len());
        }
    }
    black_box(out.as_ptr());
}

fn check_roundtrip<T: Encode + warren_wire::Decode + PartialEq>(
    value: &T,
    bytes: &[u8],
) -> BenchResult<()> {
    match warren_wire::decode::<T>(bytes) {
        Ok(decoded) if decoded == *value => Ok(()),
        _ => Err(BenchError::Result(
            "a chunk did not decode to its values".into(),
        )),
    }
}

fn chunk_runs(plan: &Plan, runs: &mut Vec<Run>) -> BenchResult<()> {
    for (kind, make) in [
        ("int64", sample::int64_chunk as fn(usize) -> ColumnData),
        ("double", sample::double_chunk),
        ("string", sample::string_chunk),
    ] {
        for &(size, size_name) in plan.sizes {
            let data = make(size);
            let encoded = data.to_bytes();
            check_roundtrip(&data, &encoded)?;
            let bytes = encoded.len();
            let iterations = (plan.sample_bytes / bytes).max(3);
            let mut out = Vec::with_capacity(bytes);
            let slices = payload(&data);
            let samples = time_side_by_side(plan.repeat, iterations, 3, |variant| match variant {
                0 => {
                    out.clear();
                    black_box(&data).encode(&mut out);
                    black_box(out.as_ptr());
                }
                1 => memcpy_payload(&mut out, &slices),
                _ => {
                    let decoded = warren_wire::decode::<ColumnData>(black_box(&encoded));
                    black_box(decoded.is_ok());
                }
            });
            for (what, samples) in ["encode", "memcpy", "decode"].iter().zip(&samples) {
                let name = format!("chunk {kind} {size_name} {what}");
                runs.push(run_of(name, bytes, samples));
            }
        }
    }
    Ok(())
}

/// `Vec<u8>` with plain `memcpy` for bulk payloads (no aliasing guard).
struct Plain<'a>(&'a mut Vec<u8>);

impl Sink for Plain<'_> {
    fn put(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

/// `Vec<u8>` with the aliasing guard on every bulk payload, whatever the machine.
struct Guarded<'a>(&'a mut Vec<u8>);

impl Sink for Guarded<'_> {
    fn put(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    fn put_bulk(&mut self, bytes: &[u8]) {
        warren_wire::copy::append_guarded(self.0, bytes);
    }
}

/// The prefix length that puts a chunk's values `distance` bytes past the source mod 4 KiB.
fn prefix_for(out: &[u8], source: *const u8, distance: usize) -> usize {
    let values_at = out.as_ptr() as usize + 12;
    let now = values_at.wrapping_sub(source as usize) % 4096;
    (distance + 4096 - now) % 4096
}

fn placement_runs(plan: &Plan, runs: &mut Vec<Run>) {
    let size = 128 << 10;
    let data = sample::int64_chunk(size);
    let ColumnData::Int64(values) = &data else {
        unreachable!()
    };
    let source: &[u8] = bytemuck::cast_slice(values);
    let bytes = data.encoded_len();
    let iterations = (plan.sample_bytes / bytes).max(3);
    let mut out: Vec<u8> = Vec::with_capacity(bytes + 8192);
    let capacity = out.capacity();
    for distance in PLACEMENTS {
        let prefix = prefix_for(&out, source.as_ptr(), distance);
        out.clear();
        out.resize(prefix, 0);
        let destination = out.as_ptr() as usize + prefix + 12;
        debug_assert_eq!(
            destination.wrapping_sub(source.as_ptr() as usize) % 4096,
            distance
        );
        let samples = time_side_by_side(plan.repeat, iterations, 4, |variant| {
            match variant {
                // SAFETY: `prefix + 12 + size` fits the capacity reserved above.
                0 => unsafe {
                    std::ptr::copy_nonoverlapping(
                        source.as_ptr(),
                        out.as_mut_ptr().add(prefix + 12),
                        source.len(),
                    );
                },
                1 => {
                    out.truncate(prefix);
                    black_box(&data).encode(&mut out);
                }
                2 => {
                    out.truncate(prefix);
                    black_box(&data).encode(&mut Plain(&mut out));
                }
                _ => {
                    out.truncate(prefix);
                    black_box(&data).encode(&mut Guarded(&mut out));
                }
            }
            black_box(out.as_ptr());
        });
        let names = ["memcpy", "encode", "encode-plain", "encode-guarded"];
        for (what, samples) in names.iter().zip(&samples) {
            runs.push(run_of(
                format!("placement {distance} {what}"),
                bytes,
                samples,
            ));
        }
        assert_eq!(out.capacity(), capacity, "the buffer must not move");
    }
}

/// The mixed rows as engine values (what a query result holds).
fn engine_rows(frame: &RowFrame) -> Vec<Vec<Value>> {
    fn value(v: &WireValue) -> Value {
        match v {
            WireValue::Int64(x) => Value::Int64(*x),
            WireValue::Int32(x) => Value::Int32(*x),
            WireValue::Double(x) => Value::Double(*x),
            WireValue::String(s) => Value::string(s.as_str()),
            WireValue::Bool(b) => Value::Bool(*b),
            WireValue::Date(d) => Value::Date(*d),
            WireValue::List(items) => Value::list(items.iter().map(value).collect()),
            _ => Value::Null,
        }
    }
    frame
        .rows
        .iter()
        .map(|row| row.iter().map(value).collect())
        .collect()
}

fn engine_types() -> Vec<LogicalType> {
    vec![
        LogicalType::Int64,
        LogicalType::Double,
        LogicalType::String,
        LogicalType::Bool,
        LogicalType::Date,
        LogicalType::Int64,
        LogicalType::list(LogicalType::Int64),
        LogicalType::Int32,
    ]
}

fn frame_runs(plan: &Plan, runs: &mut Vec<Run>) -> BenchResult<()> {
    let rows = sample::mixed_rows(plan.frame_rows);
    let messages = sample::mixed_messages(&rows, FRAME_CHUNK_ROWS);
    let encode = |out: &mut Vec<u8>, messages: &[Message]| {
        for message in messages {
            warren_wire::encode_frame(out, message);
        }
    };
    let mut framed = Vec::new();
    encode(&mut framed, &messages);
    if warren_wire::decode_frames(&framed).ok().as_deref() != Some(&messages[..]) {
        return Err(BenchError::Result(
            "the frame did not decode to its messages".into(),
        ));
    }
    let bytes = framed.len();
    let mut out = Vec::with_capacity(bytes);
    let values = engine_rows(&rows);
    let types = engine_types();
    let graph = warren_common::value::NoGraph;
    let samples = time_side_by_side(plan.repeat, 5, 4, |variant| {
        match variant {
            0 => {
                out.clear();
                encode(&mut out, black_box(&messages));
            }
            1 => {
                let decoded = warren_wire::decode_frames(black_box(&framed));
                black_box(decoded.is_ok());
            }
            2 => {
                out.clear();
                out.extend_from_slice(black_box(&framed));
            }
            _ => {
                out.clear();
                for batch in values.chunks(FRAME_CHUNK_ROWS) {
                    for data in warren::wire::batch_chunks(&types, batch, &graph) {
                        let chunk = warren_wire::Chunk {
                            column: 0,
                            first_row: 0,
                            data,
                        };
                        warren_wire::encode_frame(&mut out, &Message::Chunk(chunk));
                    }
                }
            }
        }
        black_box(out.as_ptr());
    });
    let names = [
        "frame columnar encode",
        "frame columnar decode",
        "frame memcpy",
        "frame convert+encode",
    ];
    for (name, samples) in names.iter().zip(&samples) {
        runs.push(run_of(name.to_string(), bytes, samples));
    }
    Ok(())
}

/// The peer's figures, or why there are none.
fn peer_runs(peer: &Path, repeat: usize, runs: &mut Vec<Run>) -> Result<bool, String> {
    let output = std::process::Command::new(peer)
        .args(["--repeat", &repeat.to_string()])
        .output()
        .map_err(|e| format!("{}: {e}", peer.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed: {}",
            peer.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("peer output: {e}"))?;
    let figures = json["figures"]
        .as_array()
        .ok_or("peer output has no figures")?;
    for figure in figures {
        let name = figure["name"].as_str().ok_or("a peer figure has no name")?;
        let bytes = figure["bytes"]
            .as_u64()
            .ok_or("a peer figure has no bytes")?;
        let samples: Vec<f64> = figure["samples_s"]
            .as_array()
            .ok_or("a peer figure has no samples")?
            .iter()
            .filter_map(serde_json::Value::as_f64)
            .collect();
        if samples.is_empty() {
            return Err(format!("peer figure {name} has no samples"));
        }
        runs.push(run_of(name.to_string(), bytes as usize, &samples));
    }
    Ok(json["bytes_identical"].as_bool() == Some(true))
}

/// The peer binary: `WARREN_WIRE_PEER`, else [`PEER_PATH`] under the current directory.
fn peer_path() -> PathBuf {
    std::env::var_os("WARREN_WIRE_PEER").map_or_else(|| PathBuf::from(PEER_PATH), PathBuf::from)
}

/// Runs the workload.
pub fn run(options: &BenchOptions, header: &Header) -> BenchResult<(Report, Option<String>)> {
    let plan = Plan {
        sizes: if options.quick { &QUICK_SIZES } else { &SIZES },
        frame_rows: if options.quick {
            QUICK_FRAME_ROWS
        } else {
            FRAME_ROWS
        },
        sample_bytes: if options.quick {
            QUICK_SAMPLE_BYTES
        } else {
            SAMPLE_BYTES
        },
        repeat: options.repeat,
    };
    let mut runs = Vec::new();
    chunk_runs(&plan, &mut runs)?;
    placement_runs(&plan, &mut runs);
    frame_runs(&plan, &mut runs)?;
    let peer = peer_path();
    let (peer_status, identical) = if options.quick || !peer.exists() {
        let why = if options.quick {
            "skipped (--quick)"
        } else {
            "not built"
        };
        (
            format!("{why}: {} (bench/peers/wire.sh builds it)", peer.display()),
            None,
        )
    } else {
        match peer_runs(&peer, plan.repeat, &mut runs) {
            Ok(identical) => (
                "bincode 1.3.3 and wincode 0.6, same run".to_string(),
                Some(identical),
            ),
            Err(problem) => (format!("failed: {problem}"), None),
        }
    };
    let dataset = DatasetInfo {
        db: String::new(),
        dir: None,
        name: format!("synthetic ({} frame rows)", plan.frame_rows),
        nodes: 0,
        edges: 0,
    };
    let mut report = new_report(
        options,
        header,
        "(no query: encode/decode of generated chunks)",
        dataset,
        settings_info(options, 1, KSetting::Auto),
    );
    report.answer = serde_json::json!({
        "roundtrips_checked": true,
        "peer": peer_status,
        "bincode_bytes_identical": identical,
        "copy_guard": if warren_wire::copy::guard_enabled() { "on" } else { "off (memcpy)" },
    });
    report.answer_checked = identical != Some(false);
    report.check =
        "every chunk and the frame decode to their values; the peer's bincode and wincode bytes \
                    equal Warren's"
            .into();
    report.runs = runs;
    let mismatch = (identical == Some(false)).then(|| {
        "bincode 1.3.3 or wincode wrote different bytes than Warren's encoder".to_string()
    });
    Ok((report, mismatch))
}

/// The best round's GB/s. The tables show the best of the rounds, not the median: on a shared
/// machine a round is either undisturbed or slowed by other processes, and the undisturbed
/// rounds are the ones that compare one copy with another. The JSON report keeps every round.
fn best_gb_per_s(report: &Report, name: &str) -> Option<f64> {
    report
        .runs
        .iter()
        .find(|r| r.dataset == name)
        .and_then(|r| r.figures.gb_per_s.as_ref().map(|s| s.max))
}

/// The best round's seconds per operation.
fn time_of(report: &Report, name: &str) -> Option<f64> {
    report
        .runs
        .iter()
        .find(|r| r.dataset == name)
        .and_then(|r| r.figures.time_s.as_ref().map(|s| s.min))
}

fn cell(value: Option<f64>, digits: usize) -> String {
    value.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.zip(b).map(|(a, b)| a / b)
}

fn met(value: Option<f64>, goal: f64) -> String {
    value.map_or("-".into(), |v| if v >= goal { "yes" } else { "NO" }.into())
}

fn chunk_table(report: &Report) -> String {
    let mut rows = vec![[
        "chunk",
        "size",
        "encode GB/s",
        "memcpy GB/s",
        "enc/memcpy",
        "decode GB/s",
        "bincode enc",
        "bincode dec",
        "wincode enc",
        "wincode dec",
    ]
    .map(String::from)];
    for kind in ["int64", "double", "string"] {
        for (_, size) in SIZES {
            let name = |what: &str| format!("chunk {kind} {size} {what}");
            let encode = best_gb_per_s(report, &name("encode"));
            if encode.is_none() {
                continue;
            }
            let memcpy = best_gb_per_s(report, &name("memcpy"));
            rows.push([
                kind.to_string(),
                size.to_string(),
                cell(encode, 1),
                cell(memcpy, 1),
                ratio(encode, memcpy).map_or("-".into(), |r| format!("{:.0}%", r * 100.0)),
                cell(best_gb_per_s(report, &name("decode")), 1),
                cell(best_gb_per_s(report, &name("bincode-encode")), 1),
                cell(best_gb_per_s(report, &name("bincode-decode")), 1),
                cell(best_gb_per_s(report, &name("wincode-encode")), 1),
                cell(best_gb_per_s(report, &name("wincode-decode")), 1),
            ]);
        }
    }
    let mut text = crate::print::aligned(&rows);
    text.push_str("(GB/s; wincode's default configuration refuses the 16 MiB chunks)\n");
    text
}

fn placement_table(report: &Report) -> String {
    let mut rows = vec![[
        "128KiB int64, dst-src mod 4096",
        "memcpy GB/s",
        "encode GB/s",
        "enc/memcpy",
        "goal >= 95%",
        "memcpy-only encode",
        "guarded encode",
        "guarded/memcpy",
    ]
    .map(String::from)];
    for distance in PLACEMENTS {
        let name = |what: &str| format!("placement {distance} {what}");
        let memcpy = best_gb_per_s(report, &name("memcpy"));
        let encode = best_gb_per_s(report, &name("encode"));
        let plain = best_gb_per_s(report, &name("encode-plain"));
        let guarded = best_gb_per_s(report, &name("encode-guarded"));
        let percent = |r: Option<f64>| r.map_or("-".into(), |r| format!("{:.0}%", r * 100.0));
        rows.push([
            distance.to_string(),
            cell(memcpy, 1),
            cell(encode, 1),
            percent(ratio(encode, memcpy)),
            met(ratio(encode, memcpy), 0.95),
            cell(plain, 1),
            cell(guarded, 1),
            percent(ratio(guarded, memcpy)),
        ]);
    }
    crate::print::aligned(&rows)
}

fn frame_table(report: &Report) -> String {
    let ms = |name: &str| time_of(report, name).map(|t| t * 1e3);
    let mut rows = vec![[
        "frame (100,000 rows x 8 columns)",
        "ms",
        "ratio",
        "goal",
        "met",
    ]
    .map(String::from)];
    let warren_encode = ms("frame columnar encode");
    let bincode_rows = ms("frame rows bincode-encode");
    let bincode_columnar = ms("frame columnar bincode-encode");
    let client_columnar = ms("frame columnar bincode-decode");
    let client_rows = ms("frame rows bincode-decode");
    let speedup = ratio(bincode_rows, warren_encode);
    let decode_speedup = ratio(client_rows, client_columnar);
    let mut row = |name: &str, value: Option<f64>, ratio: Option<f64>, goal: &str, ok: String| {
        rows.push([
            name.to_string(),
            cell(value, 2),
            ratio.map_or(String::new(), |r| format!("{r:.1}x")),
            goal.to_string(),
            ok,
        ]);
    };
    row(
        "warren encode (columnar frames)",
        warren_encode,
        None,
        "",
        String::new(),
    );
    row(
        "bincode encode, row-per-Vec<value> frame",
        bincode_rows,
        speedup,
        ">= 3x warren",
        met(speedup, 3.0),
    );
    row(
        "bincode encode, same columnar frames",
        bincode_columnar,
        ratio(bincode_columnar, warren_encode),
        "",
        String::new(),
    );
    row(
        "warren decode (columnar frames)",
        ms("frame columnar decode"),
        None,
        "",
        String::new(),
    );
    row(
        "bincode client decode, columnar frames",
        client_columnar,
        None,
        "",
        String::new(),
    );
    row(
        "bincode client decode, row frame",
        client_rows,
        decode_speedup,
        ">= 5x columnar",
        met(decode_speedup, 5.0),
    );
    row(
        "wincode client decode, columnar frames",
        ms("frame columnar wincode-decode"),
        None,
        "",
        String::new(),
    );
    row(
        "wincode encode, row frame",
        ms("frame rows wincode-encode"),
        None,
        "",
        String::new(),
    );
    row(
        "wincode client decode, row frame",
        ms("frame rows wincode-decode"),
        None,
        "",
        String::new(),
    );
    row(
        "memcpy of the columnar frames",
        ms("frame memcpy"),
        None,
        "",
        String::new(),
    );
    row(
        "convert engine rows + encode",
        ms("frame convert+encode"),
        None,
        "",
        String::new(),
    );
    crate::print::aligned(&rows)
}

/// The report's tables as text.
pub fn table(report: &Report) -> String {
    let mut text = format!(
        "best of {} rounds (every round is in the JSON report); aliasing guard {}\n",
        report.settings.repeat,
        report.answer["copy_guard"].as_str().unwrap_or("-")
    );
    text.push_str(&chunk_table(report));
    text.push('\n');
    text.push_str(&placement_table(report));
    text.push('\n');
    text.push_str(&frame_table(report));
    text.push_str(&format!(
        "peer: {}\n",
        report.answer["peer"].as_str().unwrap_or("-")
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workload runs small inside `cargo test` and checks its answers.
    #[test]
    fn quick_run_checks_and_prints() {
        let dir = tempfile::tempdir().unwrap();
        let mut options = BenchOptions::new(
            crate::Workload::Wire,
            PathBuf::new(),
            dir.path().join("wire.json"),
        );
        options.quick = true;
        options.repeat = 1;
        let outcome = crate::run(&options).unwrap();
        assert!(outcome.mismatch.is_none());
        let text = crate::print::report_text(&outcome.report);
        assert!(text.contains("128KiB"), "{text}");
        assert!(
            text.contains("placement") || text.contains("dst-src"),
            "{text}"
        );
        assert!(text.contains("warren encode (columnar frames)"), "{text}");
    }

    #[test]
    fn prefix_places_the_values() {
        let source = [0u8; 64];
        let out: Vec<u8> = Vec::with_capacity(8192);
        for distance in PLACEMENTS {
            let prefix = prefix_for(&out, source.as_ptr(), distance);
            let at = out.as_ptr() as usize + prefix + 12;
            assert_eq!(at.wrapping_sub(source.as_ptr() as usize) % 4096, distance);
        }
    }
}

//! `wire-bincode [--repeat R]`: times bincode 1.3.3 (serde) and wincode (its derived schemas,
//! default configuration) on the wire benchmark's values and prints JSON: `{"peer": ..., "bytes_identical": bool, "figures": [{"name", "bytes",
//! "samples_s"}]}`, one sample per repeat, in seconds per operation.

use std::hint::black_box;
use std::time::Instant;

use warren_wire::sample::{self, RowFrame};
use warren_wire::{ColumnData, Message};

const SIZES: [(usize, &str); 4] = [
    (4 << 10, "4KiB"),
    (128 << 10, "128KiB"),
    (1 << 20, "1MiB"),
    (16 << 20, "16MiB"),
];
/// Bytes processed per sample (iterations = this / size, at least 3).
const SAMPLE_BYTES: usize = 256 << 20;

struct Figure {
    name: String,
    bytes: usize,
    samples_s: Vec<f64>,
}

fn time(repeat: usize, iterations: usize, mut run: impl FnMut()) -> Vec<f64> {
    for _ in 0..iterations.min(16) {
        run();
    }
    (0..repeat)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..iterations {
                run();
            }
            started.elapsed().as_secs_f64() / iterations as f64
        })
        .collect()
}

fn chunk_figures(repeat: usize, figures: &mut Vec<Figure>) {
    for (kind, make) in [
        ("int64", sample::int64_chunk as fn(usize) -> ColumnData),
        ("double", sample::double_chunk),
        ("string", sample::string_chunk),
    ] {
        for (size, size_name) in SIZES {
            let data = make(size);
            let bytes = bincode::serialize(&data).unwrap();
            let iterations = (SAMPLE_BYTES / bytes.len()).max(3);
            let mut out = Vec::with_capacity(bytes.len());
            let samples_s = time(repeat, iterations, || {
                out.clear();
                bincode::serialize_into(&mut out, black_box(&data)).unwrap();
                black_box(&out);
            });
            let name = format!("chunk {kind} {size_name} bincode-encode");
            figures.push(Figure { name, bytes: bytes.len(), samples_s });
            let samples_s = time(repeat, iterations, || {
                let data: ColumnData = bincode::deserialize(black_box(&bytes)).unwrap();
                black_box(data);
            });
            let name = format!("chunk {kind} {size_name} bincode-decode");
            figures.push(Figure { name, bytes: bytes.len(), samples_s });
            // wincode's default configuration refuses sequences over 4 MiB.
            if size > 4 << 20 {
                continue;
            }
            assert_eq!(wincode::serialize(&data).unwrap(), bytes);
            let samples_s = time(repeat, iterations, || {
                wincode::serialize_into(wincode::io::Cursor::new(&mut out), black_box(&data))
                    .unwrap();
                black_box(&out);
            });
            let name = format!("chunk {kind} {size_name} wincode-encode");
            figures.push(Figure { name, bytes: bytes.len(), samples_s });
            let samples_s = time(repeat, iterations, || {
                let data: ColumnData = wincode::deserialize(black_box(&bytes)).unwrap();
                black_box(data);
            });
            let name = format!("chunk {kind} {size_name} wincode-decode");
            figures.push(Figure { name, bytes: bytes.len(), samples_s });
        }
    }
}

fn frame_figures(repeat: usize, figures: &mut Vec<Figure>) -> bool {
    let rows = sample::mixed_rows(100_000);
    let messages = sample::mixed_messages(&rows, 2048);
    let mut framed = Vec::new();
    let encode = |out: &mut Vec<u8>, messages: &[Message]| {
        for message in messages {
            let len = bincode::serialized_size(message).unwrap();
            out.extend_from_slice(&len.to_le_bytes());
            bincode::serialize_into(&mut *out, message).unwrap();
        }
    };
    encode(&mut framed, &messages);
    let mut warren_bytes = Vec::new();
    for message in &messages {
        warren_wire::encode_frame(&mut warren_bytes, message);
    }
    let mut wincode_framed = Vec::new();
    for message in &messages {
        let len = wincode::serialized_size(message).unwrap();
        wincode_framed.extend_from_slice(&len.to_le_bytes());
        wincode_framed.extend_from_slice(&wincode::serialize(message).unwrap());
    }
    let identical = warren_bytes == framed && wincode_framed == framed;
    let mut out = Vec::with_capacity(framed.len());
    let samples_s = time(repeat, 5, || {
        out.clear();
        encode(&mut out, black_box(&messages));
        black_box(&out);
    });
    figures.push(Figure { name: "frame columnar bincode-encode".into(), bytes: framed.len(), samples_s });
    let row_bytes = bincode::serialize(&rows).unwrap();
    let mut out = Vec::with_capacity(row_bytes.len());
    let samples_s = time(repeat, 5, || {
        out.clear();
        bincode::serialize_into(&mut out, black_box(&rows)).unwrap();
        black_box(&out);
    });
    figures.push(Figure { name: "frame rows bincode-encode".into(), bytes: row_bytes.len(), samples_s });
    // A client keeps the messages it decodes (as Warren's `decode_frames` does): dropping each
    // one at once would let the allocator hand the same hot memory back every time.
    let samples_s = time(repeat, 5, || {
        let mut rest = &framed[..];
        let mut messages = Vec::new();
        while !rest.is_empty() {
            let len = u64::from_le_bytes(rest[..8].try_into().unwrap()) as usize;
            let message: Message = bincode::deserialize(&rest[8..8 + len]).unwrap();
            messages.push(message);
            rest = &rest[8 + len..];
        }
        black_box(messages);
    });
    figures.push(Figure { name: "frame columnar bincode-decode".into(), bytes: framed.len(), samples_s });
    let samples_s = time(repeat, 5, || {
        let frame: RowFrame = bincode::deserialize(black_box(&row_bytes)).unwrap();
        black_box(frame);
    });
    figures.push(Figure { name: "frame rows bincode-decode".into(), bytes: row_bytes.len(), samples_s });
    // A client keeps the messages it decodes (as Warren's `decode_frames` does): dropping each
    // one at once would let the allocator hand the same hot memory back every time.
    let samples_s = time(repeat, 5, || {
        let mut rest = &framed[..];
        let mut messages = Vec::new();
        while !rest.is_empty() {
            let len = u64::from_le_bytes(rest[..8].try_into().unwrap()) as usize;
            let message: Message = wincode::deserialize(&rest[8..8 + len]).unwrap();
            messages.push(message);
            rest = &rest[8 + len..];
        }
        black_box(messages);
    });
    figures.push(Figure { name: "frame columnar wincode-decode".into(), bytes: framed.len(), samples_s });
    let identical = identical && wincode::serialize(&rows).unwrap() == row_bytes;
    let samples_s = time(repeat, 5, || {
        out.clear();
        wincode::serialize_into(wincode::io::Cursor::new(&mut out), black_box(&rows)).unwrap();
        black_box(&out);
    });
    figures.push(Figure { name: "frame rows wincode-encode".into(), bytes: row_bytes.len(), samples_s });
    let samples_s = time(repeat, 5, || {
        let frame: RowFrame = wincode::deserialize(black_box(&row_bytes)).unwrap();
        black_box(frame);
    });
    figures.push(Figure { name: "frame rows wincode-decode".into(), bytes: row_bytes.len(), samples_s });
    identical
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let repeat = args
        .iter()
        .position(|a| a == "--repeat")
        .and_then(|i| args.get(i + 1))
        .and_then(|r| r.parse().ok())
        .unwrap_or(5usize)
        .max(1);
    let mut figures = Vec::new();
    chunk_figures(repeat, &mut figures);
    let identical = frame_figures(repeat, &mut figures);
    let rows: Vec<String> = figures
        .iter()
        .map(|f| {
            let samples: Vec<String> = f.samples_s.iter().map(|s| format!("{s:e}")).collect();
            format!(
                "{{\"name\": \"{}\", \"bytes\": {}, \"samples_s\": [{}]}}",
                f.name,
                f.bytes,
                samples.join(", ")
            )
        })
        .collect();
    println!(
        "{{\"peer\": \"bincode 1.3.3 (serde, default options) and wincode 0.6 (derived schemas, default configuration)\", \"bytes_identical\": {identical}, \"figures\": [\n  {}\n]}}",
        rows.join(",\n  ")
    );
}

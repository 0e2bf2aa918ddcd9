//! Generates a dataset and reports how long it took, with the `warren generate` arguments:
//! `cargo run --release -p warren-bench --example generate -- graph500 --out DIR --scale 18`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use warren_bench::generate::{generate, DatasetKind, GenerateOptions};

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(arguments: Vec<String>) -> Result<(), String> {
    let (kind, rest) = arguments
        .split_first()
        .ok_or("usage: generate KIND --out DIR ...")?;
    let mut options = GenerateOptions::defaults(kind.parse::<DatasetKind>()?);
    let mut out_dir = None;
    for pair in rest.chunks(2) {
        let [flag, value] = pair else {
            return Err(format!("{} needs a value", pair[0]));
        };
        let number = || {
            value
                .parse::<u64>()
                .map_err(|error| format!("{flag}: {error}"))
        };
        match flag.as_str() {
            "--out" => out_dir = Some(PathBuf::from(value)),
            "--scale" => options.scale = narrow(number()?)?,
            "--edge-factor" => options.edge_factor = narrow(number()?)?,
            "--nodes" => options.nodes = number()?,
            "--degree" => options.degree = narrow(number()?)?,
            "--seed" => options.seed = number()?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let out_dir = out_dir.ok_or("--out DIR is required")?;
    let started = Instant::now();
    let dataset = generate(&options, &out_dir).map_err(|error| error.to_string())?;
    println!(
        "{kind}: {} nodes, {} edges in {:.3} s -> {}",
        dataset.nodes,
        dataset.edges,
        started.elapsed().as_secs_f64(),
        dataset.dir.display()
    );
    Ok(())
}

fn narrow(value: u64) -> Result<u32, String> {
    u32::try_from(value).map_err(|_| format!("{value} is too large"))
}

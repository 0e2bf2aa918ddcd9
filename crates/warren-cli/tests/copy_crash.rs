//! COPY is atomic: a `warren run` that is copying is killed (SIGKILL) at random moments, many
//! times, and after every kill the database opens, passes its integrity checks, and holds either
//! the old or the new data, never a mix; no leftover files survive the next open.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use warren::Database;

const KILLS: u64 = 30;

fn warren() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_warren"));
    command.stdout(Stdio::null());
    command
}

/// The number of Knows rels, or `None` when the table does not exist.
fn rels(db: &Path) -> Option<u64> {
    let database = Database::open(db).unwrap_or_else(|e| panic!("database does not open: {e}"));
    let mut conn = database.connect();
    let rels = conn
        .query("MATCH ()-[r:Knows]->() RETURN count(*)")
        .ok()?
        .to_strings()
        .unwrap()[0]
        .parse()
        .unwrap();
    // The adjacency in both directions agrees with the rel count.
    for query in [
        "MATCH (a:Person)-[:Knows]->(b:Person) RETURN count(*)",
        "MATCH (a:Person)<-[:Knows]-(b:Person) RETURN count(*)",
    ] {
        let count: u64 = conn.query(query).unwrap().to_strings().unwrap()[0]
            .parse()
            .unwrap();
        assert_eq!(count, rels, "{query}");
    }
    Some(rels)
}

fn assert_no_leftovers(db: &Path) {
    let manifest = std::fs::read_to_string(db.join("warren.manifest")).unwrap();
    for entry in std::fs::read_dir(db.join("data")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            manifest.contains(&name),
            "unreferenced file {name} survived an open"
        );
    }
    assert!(!db.join("warren.manifest.tmp").exists());
}

/// A small deterministic generator for kill delays.
fn next_random(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state >> 33
}

#[test]
fn killed_copies_leave_the_old_or_the_new_database() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = dir.path().join("db");
    let generate = warren()
        .args(["generate", "graph500", "--scale", "15", "--out"])
        .arg(&data)
        .status();
    assert!(generate.unwrap().success());
    assert!(warren()
        .arg("run")
        .arg(&db)
        .arg(data.join("schema.cypher"))
        .status()
        .unwrap()
        .success());
    assert!(warren()
        .arg("run")
        .arg(&db)
        .arg(data.join("copy.cypher"))
        .status()
        .unwrap()
        .success());
    let edges = rels(&db).expect("Knows exists");
    assert!(edges > 0);
    let nodes_before = std::fs::read_to_string(data.join("nodes.csv"))
        .unwrap()
        .lines()
        .count() as u64
        - 1;

    // Each run replaces the rel table: drop it, create it, copy into it (three commits). A
    // kill between the drop and the create leaves no table, and the next run starts from there
    // (`IF EXISTS`) instead of failing at its first statement for every later kill.
    let copy = std::fs::read_to_string(data.join("copy.cypher")).unwrap();
    let copy_edges = copy.lines().find(|l| l.contains("Knows")).unwrap();
    let script = dir.path().join("recopy.cypher");
    std::fs::write(
        &script,
        format!(
            "DROP TABLE IF EXISTS Knows;\nCREATE REL TABLE Knows(FROM Person TO Person);\n{copy_edges}\n"
        ),
    )
    .unwrap();
    let started = Instant::now();
    assert!(warren()
        .arg("run")
        .arg(&db)
        .arg(&script)
        .status()
        .unwrap()
        .success());
    let run_time = started.elapsed();
    assert_eq!(rels(&db), Some(edges));

    let mut random = 7u64;
    let mut states = [0u64; 3];
    // Delays up to 5/4 of the measured run. A machine whose speed changes after the measure can
    // leave a phase unvisited after KILLS kills: then more kills follow (at most KILLS more),
    // each bound doubled (up to 64 runs) while no run completed, or halved while none was cut short.
    let measured = run_time.as_micros() as u64 + 1;
    let mut delay_max = measured * 5 / 4;
    for kill in 0..2 * KILLS {
        let phases_missing = [states[2] == 0, states[0] + states[1] == 0];
        if kill >= KILLS {
            match phases_missing {
                [false, false] => break,
                [true, _] => delay_max = (delay_max * 2).min(measured * 64),
                [false, true] => delay_max = delay_max / 2 + 1,
            }
        }
        let delay = Duration::from_micros(next_random(&mut random) % delay_max);
        let mut child = warren().arg("run").arg(&db).arg(&script).spawn().unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        match rels(&db) {
            None => states[0] += 1,
            Some(0) => states[1] += 1,
            Some(n) if n == edges => states[2] += 1,
            Some(n) => panic!("a partial COPY is visible: {n} rels instead of 0 or {edges}"),
        }
        let database = Database::open(&db).unwrap();
        let nodes: u64 = database
            .connect()
            .query("MATCH (n:Person) RETURN count(*)")
            .unwrap()
            .to_strings()
            .unwrap()[0]
            .parse()
            .unwrap();
        assert_eq!(nodes, nodes_before);
        drop(database);
        assert_no_leftovers(&db);
    }
    eprintln!(
        "{} kills: {} left no Knows table, {} an empty one, {} the full one",
        states.iter().sum::<u64>(),
        states[0],
        states[1],
        states[2]
    );
    assert!(
        states[2] > 0 && states[0] + states[1] > 0,
        "kills did not land in different phases: {states:?}"
    );
}

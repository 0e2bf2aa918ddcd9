//! `CALL reorder_nodes(table, order := ...)`: on random graphs (two node tables, a rel table
//! from P to itself with a weight, one from P to C, deleted nodes and rels, rows in the delta
//! or folded by a checkpoint), every query kind answers the same before and after a reorder
//! of P in BFS or degree order, after reopening, and after writes that follow it; the errors
//! name a missing table, a rel table, an unknown order and an explicit transaction.

use proptest::prelude::*;
use warren::{Connection, Database};

/// A random graph: P nodes 0..p (some deleted), C nodes 0..c, rels P->P with weights, rels
/// P->C, and whether a checkpoint folds the rows before the deletions.
#[derive(Clone, Debug)]
struct Graph {
    p: u32,
    c: u32,
    knows: Vec<(u32, u32, u32)>,
    likes: Vec<(u32, u32)>,
    deleted: Vec<u32>,
    checkpoint: bool,
}

fn graphs() -> impl Strategy<Value = Graph> {
    (1u32..14, 1u32..5).prop_flat_map(|(p, c)| {
        (
            proptest::collection::vec((0..p, 0..p, 1u32..9), 0..30),
            proptest::collection::vec((0..p, 0..c), 0..10),
            proptest::collection::vec(0..p, 0..3),
            any::<bool>(),
        )
            .prop_map(move |(knows, likes, deleted, checkpoint)| Graph {
                p,
                c,
                knows,
                likes,
                deleted,
                checkpoint,
            })
    })
}

fn run(conn: &mut Connection, statement: &str) {
    conn.query(statement)
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
}

fn load(conn: &mut Connection, graph: &Graph) {
    run(
        conn,
        "CREATE NODE TABLE P(id INT64, name STRING, age INT64, PRIMARY KEY(id))",
    );
    run(conn, "CREATE NODE TABLE C(id INT64, PRIMARY KEY(id))");
    run(conn, "CREATE REL TABLE K(FROM P TO P, w INT64)");
    run(conn, "CREATE REL TABLE L(FROM P TO C, since INT64)");
    for i in 0..graph.p {
        // Every third age NULL: a column with NULLs is permuted value by value.
        let age = if i % 3 == 0 {
            "NULL".to_string()
        } else {
            (20 + i).to_string()
        };
        run(
            conn,
            &format!("CREATE (:P {{id: {i}, name: 'p{i}', age: {age}}})"),
        );
    }
    for i in 0..graph.c {
        run(conn, &format!("CREATE (:C {{id: {i}}})"));
    }
    for &(a, b, w) in &graph.knows {
        run(
            conn,
            &format!("MATCH (a:P {{id: {a}}}), (b:P {{id: {b}}}) CREATE (a)-[:K {{w: {w}}}]->(b)"),
        );
    }
    for (since, &(a, c)) in graph.likes.iter().enumerate() {
        run(
            conn,
            &format!(
                "MATCH (a:P {{id: {a}}}), (c:C {{id: {c}}}) CREATE (a)-[:L {{since: {since}}}]->(c)"
            ),
        );
    }
    if graph.checkpoint {
        run(conn, "CHECKPOINT");
    }
    for &d in &graph.deleted {
        run(conn, &format!("MATCH (p:P {{id: {d}}}) DETACH DELETE p"));
    }
    // A deleted rel too, so the rel tables carry a tombstone.
    run(conn, "MATCH (:P)-[k:K]->(:P) WHERE k.w = 8 DELETE k");
}

/// Queries whose rows are compared as multisets (sorted here) or in order (ORDER BY).
fn queries(graph: &Graph) -> Vec<String> {
    let mut out: Vec<String> = [
        "MATCH (p:P) RETURN p.id, p.name, p.age",
        "MATCH (c:C) RETURN c.id",
        "MATCH (p:P) RETURN p.id ORDER BY p.age, p.id",
        "MATCH (a:P)-[k:K]->(b:P) RETURN a.id, k.w, b.id",
        "MATCH (a:P)<-[k:K]-(b:P) RETURN a.id, k.w, b.id",
        "MATCH (a:P)-[l:L]->(c:C) RETURN a.name, l.since, c.id",
        "MATCH (c:C)<-[:L]-(a:P)-[:K]->(b:P) RETURN c.id, a.id, b.id",
        "MATCH (a:P)-[:K*1..3]->(b:P) RETURN a.id, b.id, count(*)",
        "MATCH p = (a:P)-[:K*1..2]-(b:P) RETURN [n IN nodes(p) | n.id], [r IN rels(p) | r.w]",
        "MATCH (a:P)-[e:K* SHORTEST 1..6]->(b:P) RETURN a.id, b.id, length(e)",
        "MATCH p = (a:P)-[e:K* ALL SHORTEST 1..6]->(b:P) RETURN [n IN nodes(p) | n.name], [r IN rels(p) | r.w]",
        "MATCH (a:P)-[e:K* WSHORTEST(w)]->(b:P) RETURN a.id, b.id, cost(e)",
        "MATCH (a:P)-[:K]->(b:P) RETURN b.id, count(*) ORDER BY count(*) DESC, b.id",
        "MATCH (p:P) RETURN count(*), sum(p.age)",
    ]
    .iter()
    .map(|q| q.to_string())
    .collect();
    for key in [0, graph.p / 2, graph.p - 1, graph.p + 3] {
        out.push(format!(
            "MATCH (p:P {{id: {key}}}) OPTIONAL MATCH (p)-[:K]->(q:P) RETURN p.name, q.id"
        ));
    }
    out
}

fn answer(conn: &mut Connection, query: &str) -> Vec<String> {
    let mut rows = conn
        .query(query)
        .and_then(|mut result| result.to_strings())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    if !query.contains("ORDER BY") {
        rows.sort();
    }
    rows
}

fn answers(conn: &mut Connection, graph: &Graph) -> Vec<(String, Vec<String>)> {
    queries(graph)
        .into_iter()
        .map(|q| {
            let rows = answer(conn, &q);
            (q, rows)
        })
        .collect()
}

/// Writes after a reorder, replayed on the database that was not reordered too.
fn writes(conn: &mut Connection, graph: &Graph) {
    let next = graph.p + 100;
    run(
        conn,
        &format!("CREATE (:P {{id: {next}, name: 'new', age: 1}})"),
    );
    run(
        conn,
        &format!("MATCH (a:P {{id: {next}}}), (b:P) WHERE b.id < 3 CREATE (a)-[:K {{w: 5}}]->(b)"),
    );
    run(conn, "MATCH (p:P) WHERE p.id = 1 SET p.name = 'renamed'");
    run(conn, "MATCH (p:P {id: 2}) DETACH DELETE p");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn reordering_changes_no_answer(graph in graphs(), bfs in any::<bool>()) {
        let order = if bfs { "bfs" } else { "degree" };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let plain = Database::in_memory();
        let mut reference = plain.connect();
        load(&mut reference, &graph);
        let expected = answers(&mut reference, &graph);

        let db = Database::open(&path).unwrap();
        let mut conn = db.connect();
        load(&mut conn, &graph);
        let message = answer(&mut conn, &format!("CALL reorder_nodes('P', order := '{order}')"));
        prop_assert!(message[0].contains("has been reordered"), "{message:?}");
        prop_assert_eq!(&answers(&mut conn, &graph), &expected);
        drop(conn);
        drop(db);

        let db = Database::open(&path).unwrap();
        let mut conn = db.connect();
        prop_assert_eq!(&answers(&mut conn, &graph), &expected, "after reopening");
        writes(&mut conn, &graph);
        writes(&mut reference, &graph);
        prop_assert_eq!(answers(&mut conn, &graph), answers(&mut reference, &graph), "after writes");
        run(&mut conn, "CHECKPOINT");
        run(&mut reference, "CHECKPOINT");
        prop_assert_eq!(answers(&mut conn, &graph), answers(&mut reference, &graph), "after a checkpoint");
    }
}

#[test]
fn bfs_order_puts_neighbours_next_to_each_other() {
    // A path 0-1-...-9 whose keys were loaded in a scrambled row order: BFS from the
    // highest-degree node (the lowest row among the inner nodes of degree 2) numbers the path
    // outward, so after the reorder every rel joins rows at most two offsets apart.
    let db = Database::in_memory();
    let mut conn = db.connect();
    run(&mut conn, "CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))");
    run(&mut conn, "CREATE REL TABLE E(FROM N TO N)");
    for id in [7, 2, 9, 0, 5, 3, 8, 1, 6, 4] {
        run(&mut conn, &format!("CREATE (:N {{id: {id}}})"));
    }
    for id in 0..9 {
        run(
            &mut conn,
            &format!(
                "MATCH (a:N {{id: {id}}}), (b:N {{id: {}}}) CREATE (a)-[:E]->(b)",
                id + 1
            ),
        );
    }
    let gap = "MATCH (a:N)-[:E]->(b:N) RETURN max(abs(offset(id(a)) - offset(id(b))))";
    assert_eq!(answer(&mut conn, gap), vec!["8".to_string()]);
    run(&mut conn, "CALL reorder_nodes('N')");
    assert_eq!(answer(&mut conn, gap), vec!["2".to_string()]);
    assert_eq!(
        answer(&mut conn, "MATCH (a:N)-[:E*9..9]->(b:N) RETURN a.id, b.id"),
        vec!["0|9".to_string()]
    );
}

#[test]
fn errors_name_the_table_the_order_and_the_transaction() {
    let db = Database::in_memory();
    let mut conn = db.connect();
    run(&mut conn, "CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))");
    run(&mut conn, "CREATE REL TABLE E(FROM N TO N)");
    let error = |conn: &mut Connection, query: &str| conn.query(query).err().unwrap().to_string();
    assert!(error(&mut conn, "CALL reorder_nodes('Nope')").contains("Table Nope does not exist."));
    assert!(error(&mut conn, "CALL reorder_nodes('E')").contains("is not a node table"));
    assert!(error(&mut conn, "CALL reorder_nodes('N', order := 'rcm')")
        .contains("Order rcm is not supported; use one of bfs, degree"));
    assert!(error(&mut conn, "CALL reorder_nodes('N', sort := 'bfs')")
        .contains("Unrecognized optional parameter sort"));
    assert!(error(&mut conn, "CALL reorder_nodes()").contains("did not receive correct arguments"));
    run(&mut conn, "BEGIN TRANSACTION");
    assert!(error(&mut conn, "CALL reorder_nodes('N')").contains("inside an explicit transaction"));
    run(&mut conn, "ROLLBACK");
    // An empty table reorders to itself.
    let message = answer(&mut conn, "CALL reorder_nodes('N', order := 'DEGREE')");
    assert!(message[0].contains("0 rows"), "{message:?}");
}

#[test]
fn copy_with_reorder_loads_the_same_graph_in_locality_order() {
    // A ring of 12 nodes whose keys are written in a scrambled order, plus chords.
    let dir = tempfile::tempdir().unwrap();
    let keys = [5, 11, 0, 7, 3, 9, 1, 10, 6, 2, 8, 4];
    let nodes: String = keys.iter().map(|k| format!("{k},n{k}\n")).collect();
    let mut rels: String = (0..12)
        .map(|k| format!("{k},{},{k}\n", (k + 1) % 12))
        .collect();
    rels.push_str("0,6,100\n3,9,101\n");
    std::fs::write(dir.path().join("nodes.csv"), nodes).unwrap();
    std::fs::write(dir.path().join("rels.csv"), rels).unwrap();
    let load = |reorder: &str| {
        let db = Database::in_memory();
        let mut conn = db.connect();
        run(
            &mut conn,
            "CREATE NODE TABLE N(id INT64, name STRING, PRIMARY KEY(id))",
        );
        run(&mut conn, "CREATE REL TABLE E(FROM N TO N, w INT64)");
        let path = dir.path().display();
        run(&mut conn, &format!("COPY N FROM '{path}/nodes.csv'"));
        run(
            &mut conn,
            &format!("COPY E FROM '{path}/rels.csv'{reorder}"),
        );
        (db, conn)
    };
    let (_plain_db, mut plain) = load("");
    let (_db, mut reordered) = load(" (REORDER='bfs')");
    for query in [
        "MATCH (a:N)-[e:E]->(b:N) RETURN a.name, e.w, b.name",
        "MATCH (a:N)-[e:E* SHORTEST 1..12]->(b:N) WHERE a.id = 4 RETURN b.id, length(e)",
        "MATCH (n:N {id: 7}) RETURN n.name",
    ] {
        assert_eq!(
            answer(&mut reordered, query),
            answer(&mut plain, query),
            "{query}"
        );
    }
    let gap =
        "MATCH (a:N)-[e:E]->(b:N) WHERE e.w < 12 RETURN max(abs(offset(id(a)) - offset(id(b))))";
    let (before, after) = (answer(&mut plain, gap), answer(&mut reordered, gap));
    assert!(
        after[0].parse::<i64>().unwrap() < before[0].parse::<i64>().unwrap(),
        "{before:?} {after:?}"
    );
    let error = |conn: &mut Connection, query: &str| conn.query(query).err().unwrap().to_string();
    let path = dir.path().display();
    assert!(error(
        &mut plain,
        &format!("COPY N FROM '{path}/nodes.csv' (REORDER='bfs')")
    )
    .contains("applies to a rel table's COPY"));
    assert!(error(
        &mut plain,
        &format!("COPY E FROM '{path}/rels.csv' (REORDER='rcm')")
    )
    .contains("Order rcm is not supported"));
    run(&mut plain, "BEGIN TRANSACTION");
    assert!(error(
        &mut plain,
        &format!("COPY E FROM '{path}/rels.csv' (REORDER='degree')")
    )
    .contains("inside an explicit transaction"));
}

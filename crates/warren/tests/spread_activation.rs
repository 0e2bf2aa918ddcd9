//! `CALL spread_activation(...)` through the public API: standalone with parameters, in-query
//! with seeds from earlier clauses, YIELD, weights (stored, NULL, after writes), directions,
//! threads, and argument errors. The definition is in docs/SEMANTICS.md; the engine's property
//! tests against a reference are in `warren-exec` (`recursive::spread::tests`).

use std::collections::HashMap;

use warren::{Connection, Database, Value};

/// 0 -> 1 -> 2 -> 3 -> 4 (weight 1) and 0 -> 2 (weight 2); 5 is isolated.
fn chain() -> Connection {
    connection_after(&[
        "CREATE NODE TABLE Person(id INT64, PRIMARY KEY(id))",
        "CREATE REL TABLE Knows(FROM Person TO Person, w DOUBLE)",
        "UNWIND range(0, 5) AS i CREATE (:Person {id: i})",
        "MATCH (a:Person), (b:Person) WHERE b.id = a.id + 1 AND b.id < 5 CREATE (a)-[:Knows {w: 1.0}]->(b)",
        "MATCH (a:Person {id: 0}), (b:Person {id: 2}) CREATE (a)-[:Knows {w: 2.0}]->(b)",
    ])
}

/// A connection to a new in-memory database after `statements` ran on it.
fn connection_after(statements: &[&str]) -> Connection {
    let db = Database::in_memory();
    let mut conn = db.connect();
    for statement in statements {
        conn.query(statement).unwrap();
    }
    conn
}

fn rows(conn: &mut Connection, query: &str) -> Vec<String> {
    conn.query(query)
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .to_strings()
        .unwrap()
}

fn error(conn: &mut Connection, query: &str) -> String {
    match conn.query(query).and_then(|mut r| r.to_strings()) {
        Ok(rows) => panic!("{query} returned {rows:?}"),
        Err(e) => e.to_string(),
    }
}

const FROM_ZERO: &str = "MATCH (p:Person) WHERE p.id = 0 WITH collect(p) AS seeds ";

#[test]
fn in_query_seeds_from_collect() {
    let mut conn = chain();
    let query = format!(
        "{FROM_ZERO}CALL spread_activation('Knows', seeds, max_hops := 2) RETURN node.id, activation, hops"
    );
    // Node 2 gets 0.5 (direct) + 0.25 (via 1) over hops 1 and 2; node 3 is reached at hop 2
    // from node 2's hop-1 arrival only.
    assert_eq!(
        rows(&mut conn, &query),
        [
            "0|1.000000|0",
            "2|0.750000|1",
            "1|0.500000|1",
            "3|0.250000|2"
        ]
    );
}

#[test]
fn weights_threshold_and_yield() {
    let mut conn = chain();
    let query = format!(
        "{FROM_ZERO}CALL spread_activation('Knows', seeds, weight := 'w', threshold := 0.6) \
         YIELD node AS n, activation AS a, hops AS h RETURN n.id, a, h ORDER BY n.id"
    );
    // 0 sends 1.0 * 2 * 0.5 = 1.0 to 2 and 0.5 to 1; 1 (0.5) is under the threshold; 2 sends
    // 0.5 to 3 at hop 2, which is under it too.
    assert_eq!(
        rows(&mut conn, &query),
        [
            "0|1.000000|0",
            "1|0.500000|1",
            "2|1.000000|1",
            "3|0.500000|2"
        ]
    );
}

#[test]
fn per_row_calls_with_struct_seeds_and_both_directions() {
    let mut conn = chain();
    let query = "MATCH (p:Person) WHERE p.id IN [1, 5] \
                 CALL spread_activation('Knows', {node: p, activation: 2.0}, max_hops := 1, direction := 'both') \
                 RETURN p.id, node.id, activation, hops ORDER BY p.id, node.id";
    assert_eq!(
        rows(&mut conn, query),
        [
            "1|0|1.000000|1",
            "1|1|2.000000|0",
            "1|2|1.000000|1",
            "5|5|2.000000|0"
        ]
    );
}

#[test]
fn standalone_with_a_parameter_and_in_direction() {
    let mut conn = chain();
    let id = rows(&mut conn, "MATCH (p:Person {id: 3}) RETURN id(p)");
    assert_eq!(id, ["0:3"]);
    let mut parameters = HashMap::new();
    parameters.insert(
        "seeds".to_string(),
        Value::list(vec![Value::InternalId(warren_common::InternalId::new(
            0, 3,
        ))]),
    );
    let result = conn
        .query_with(
            "CALL spread_activation('Knows', $seeds, direction := 'in', decay := 1.0) RETURN node.id, activation, hops",
            &parameters,
        )
        .unwrap()
        .to_strings()
        .unwrap();
    // Backwards from 3: 2 at hop 1, then 1 and 0 at hop 2, then 0 again (via 1) at hop 3.
    assert_eq!(
        result,
        [
            "0|2.000000|2",
            "1|1.000000|2",
            "2|1.000000|1",
            "3|1.000000|0"
        ]
    );
}

#[test]
fn writes_are_seen_and_null_weights_are_not_followed() {
    let mut conn = chain();
    conn.query("MATCH (a:Person {id: 4}), (b:Person {id: 5}) CREATE (a)-[:Knows]->(b)")
        .unwrap();
    conn.query("MATCH (a:Person {id: 3}), (b:Person {id: 5}) CREATE (a)-[:Knows {w: 4.0}]->(b)")
        .unwrap();
    let query = "MATCH (p:Person {id: 3}) CALL spread_activation('Knows', p, weight := 'w') \
                 RETURN node.id, activation, hops";
    // 3 -> 4 (w 1) and 3 -> 5 (w 4); 4 -> 5 has a NULL weight and is not followed.
    assert_eq!(
        rows(&mut conn, query),
        ["5|2.000000|1", "3|1.000000|0", "4|0.500000|1"]
    );
}

#[test]
fn threads_give_the_same_answer() {
    let mut conn = chain();
    let query = format!(
        "{FROM_ZERO}CALL spread_activation('Knows', seeds, max_hops := 4, threshold := 0) RETURN node.id, activation, hops"
    );
    let one = rows(&mut conn, &query);
    conn.query("CALL threads = 4").unwrap();
    assert_eq!(rows(&mut conn, &query), one);
}

#[test]
fn argument_errors_are_clear() {
    let mut conn = chain();
    for (query, needle) in [
        (
            "CALL spread_activation('Nope', []) RETURN *",
            "Binder exception: Table Nope does not exist (line 1, column 24).",
        ),
        (
            "CALL spread_activation('Person', []) RETURN *",
            "Table Person is a node table; spread_activation needs a rel table",
        ),
        (
            "CALL spread_activation('Knows', [1, 2]) RETURN *",
            "seeds must be nodes, internal ids, or {node: n, activation: a} structs (or a list of them), not INT64[] (line 1, column 33)",
        ),
        (
            "CALL spread_activation('Knows', [], foo := 1) RETURN *",
            "Unknown argument foo of spread_activation (line 1, column 37); it takes decay, threshold, max_hops, weight, direction.",
        ),
        (
            "CALL spread_activation('Knows', [], decay := 'x') RETURN *",
            "decay must be a number, not STRING",
        ),
        (
            "CALL spread_activation('Knows', [], weight := 'zz') RETURN *",
            "Cannot find property zz for Knows",
        ),
        (
            "CALL spread_activation('Knows', [], direction := 'up') RETURN *",
            "direction must be 'out', 'in' or 'both', not 'up'",
        ),
        (
            "CALL spread_activation('Knows', [], decay := 0.1, decay := 0.2) RETURN *",
            "Duplicate argument decay",
        ),
        (
            "CALL spread_activation('Knows') RETURN *",
            "did not receive correct arguments",
        ),
        (
            "CALL spread_activation('Knows', [])",
            "Only standalone table functions can be called without return statement.",
        ),
        (
            "MATCH (p:Person) WITH collect(p) AS s CALL spread_activation('Knows', s, decay := 2.0) RETURN *",
            "Runtime exception: spread_activation: decay must be between 0 and 1, got 2",
        ),
        (
            "MATCH (p:Person) WITH collect(p) AS s CALL spread_activation('Knows', s, max_hops := 31) RETURN *",
            "max_hops must be between 0 and 30",
        ),
        (
            "MATCH (p:Person) CALL spread_activation('Knows', p) YIELD node AS p, activation, hops RETURN *",
            "Variable p already exists.",
        ),
    ] {
        let message = error(&mut conn, query);
        assert!(message.contains(needle), "{query}: {message}");
    }
}

#[test]
fn a_negative_weight_is_an_error() {
    let mut conn = chain();
    conn.query("MATCH (a:Person {id: 4}), (b:Person {id: 5}) CREATE (a)-[:Knows {w: -1.5}]->(b)")
        .unwrap();
    let message = error(
        &mut conn,
        "MATCH (p:Person {id: 4}) CALL spread_activation('Knows', p, weight := 'w') RETURN *",
    );
    assert!(message.contains("Found negative weight -1.5"), "{message}");
}

#[test]
fn the_memory_limit_applies() {
    let mut conn = chain();
    conn.query("CALL memory_limit = 100").unwrap();
    let message = error(
        &mut conn,
        &format!("{FROM_ZERO}CALL spread_activation('Knows', seeds) RETURN *"),
    );
    assert!(message.contains("LimitExceeded"), "{message}");
}

#[test]
fn a_rel_table_with_several_pairs_and_integer_weights() {
    let db = Database::in_memory();
    let mut conn = db.connect();
    for statement in [
        "CREATE NODE TABLE A(id INT64, PRIMARY KEY(id))",
        "CREATE NODE TABLE B(id INT64, PRIMARY KEY(id))",
        "CREATE REL TABLE Link(FROM A TO B, FROM B TO A, w INT64)",
        "CREATE (:A {id: 1}), (:A {id: 2}), (:B {id: 10}), (:B {id: 20})",
        "MATCH (a:A {id: 1}), (b:B {id: 10}) CREATE (a)-[:Link {w: 2}]->(b)",
        "MATCH (b:B {id: 10}), (a:A {id: 2}) CREATE (b)-[:Link {w: 1}]->(a)",
        "MATCH (a:A {id: 2}), (b:B {id: 20}) CREATE (a)-[:Link {w: 3}]->(b)",
    ] {
        conn.query(statement).unwrap();
    }
    let query =
        "MATCH (a:A {id: 1}) CALL spread_activation('Link', a, weight := 'w', decay := 0.5) \
                 RETURN label(node), node.id, activation, hops";
    // 1 -> 10 (w 2): 1.0; 10 -> 2 (w 1): 0.5; 2 -> 20 (w 3): 0.75.
    assert_eq!(
        rows(&mut conn, query),
        [
            "A|1|1.000000|0",
            "B|10|1.000000|1",
            "B|20|0.750000|3",
            "A|2|0.500000|2"
        ]
    );
}

/// The text of the plan of `query`.
fn plan(conn: &mut Connection, query: &str) -> String {
    rows(conn, &format!("EXPLAIN {query}")).join("\n")
}

#[test]
fn input_slots_nothing_above_reads_are_dropped_from_the_rows() {
    let mut conn = chain();
    // `seeds` and `p` are read by nothing above the call: the plan drops them.
    let grouped = format!(
        "{FROM_ZERO}CALL spread_activation('Knows', seeds, max_hops := 2) \
         RETURN hops, count(*), sum(activation) ORDER BY hops"
    );
    assert!(
        plan(&mut conn, &grouped).contains(" drops ["),
        "{}",
        plan(&mut conn, &grouped)
    );
    assert_eq!(
        rows(&mut conn, &grouped),
        ["0|1|1.000000", "1|2|1.250000", "2|1|0.250000"]
    );
    // Read above the call (by RETURN, by an OPTIONAL MATCH's inner plan, by a later WHERE),
    // they are kept.
    let kept = format!(
        "{FROM_ZERO}CALL spread_activation('Knows', seeds, max_hops := 1) \
         WITH seeds, node, hops WHERE size(seeds) = 1 \
         OPTIONAL MATCH (node)-[:Knows]->(m:Person) \
         RETURN size(seeds), node.id, hops, m.id ORDER BY node.id, m.id"
    );
    assert!(!plan(&mut conn, &kept).contains(" drops [1"));
    assert_eq!(
        rows(&mut conn, &kept),
        ["1|0|0|1", "1|0|0|2", "1|1|1|2", "1|2|1|3"]
    );
    let outer = "MATCH (p:Person) WHERE p.id IN [1, 3] \
                 CALL spread_activation('Knows', {node: p, activation: 1.0}, max_hops := 1) \
                 OPTIONAL MATCH (p)-[:Knows]->(q:Person) \
                 RETURN node.id, q.id ORDER BY node.id";
    assert_eq!(rows(&mut conn, outer), ["1|2", "2|2", "3|4", "4|4"]);
}

#[test]
fn rows_whose_order_nothing_reads_come_unranked_and_fold_to_the_same_groups() {
    let mut conn = chain();
    let call = format!("{FROM_ZERO}CALL spread_activation('Knows', seeds, max_hops := 3) ");
    // Groups sorted by their key: the spread's order is not needed, nor is `node`.
    let grouped = format!("{call}RETURN hops, count(*), sum(activation) ORDER BY hops");
    let text = plan(&mut conn, &grouped);
    assert!(
        text.contains(" unordered") && text.contains(" unread [3]"),
        "{text}"
    );
    // The same groups through a LIMIT, which keeps the first rows: ranked, one row at a time.
    let limited = format!(
        "{call}WITH hops, activation LIMIT 100 RETURN hops, count(*), sum(activation) ORDER BY hops"
    );
    assert!(!plan(&mut conn, &limited).contains(" unordered"));
    let expected = [
        "0|1|1.000000",
        "1|2|1.250000",
        "2|1|0.375000",
        "3|1|0.125000",
    ];
    assert_eq!(rows(&mut conn, &grouped), expected);
    assert_eq!(rows(&mut conn, &limited), expected);
    // Rows returned as they are, or collected, keep the ranking.
    let returned = format!("{call}RETURN node.id, hops");
    assert!(!plan(&mut conn, &returned).contains(" unordered"));
    assert_eq!(
        rows(&mut conn, &returned),
        ["0|0", "2|1", "1|1", "3|2", "4|3"]
    );
    let collected = format!("{call}RETURN collect(node.id)");
    assert!(!plan(&mut conn, &collected).contains(" unordered"));
    assert_eq!(rows(&mut conn, &collected), ["[0,2,1,3,4]"]);
    // Keys and arguments from the input row and from the node column, DISTINCT included.
    let distinct = format!("{call}RETURN count(DISTINCT node), min(hops), max(activation)");
    assert!(plan(&mut conn, &distinct).contains(" unordered"));
    assert_eq!(rows(&mut conn, &distinct), ["5|0|1.000000"]);
    let by_input = "MATCH (p:Person) WHERE p.id < 2 WITH p.id AS pid, collect(p) AS seeds \
                    CALL spread_activation('Knows', seeds, max_hops := 1) \
                    RETURN pid, count(node), sum(hops) ORDER BY pid";
    assert_eq!(rows(&mut conn, by_input), ["0|3|2", "1|2|1"]);
}

/// A star of hubs with many tied activations: node 0 points at 1..=8; each of those at
/// `10 * i + 1 ..= 10 * i + 6`; the leaves of even hubs also point at 100.
fn ties() -> Connection {
    connection_after(&[
        "CREATE NODE TABLE Person(id INT64, PRIMARY KEY(id))",
        "CREATE REL TABLE Knows(FROM Person TO Person)",
        "UNWIND range(0, 100) AS i CREATE (:Person {id: i})",
        "MATCH (a:Person), (b:Person) WHERE a.id = 0 AND b.id >= 1 AND b.id <= 8 \
         CREATE (a)-[:Knows]->(b)",
        "MATCH (a:Person), (b:Person) WHERE a.id >= 1 AND a.id <= 8 \
         AND b.id > 10 * a.id AND b.id <= 10 * a.id + 6 CREATE (a)-[:Knows]->(b)",
        "MATCH (a:Person), (b:Person) WHERE a.id > 10 AND a.id < 90 AND (a.id / 10) % 2 = 0 \
         AND b.id = 100 CREATE (a)-[:Knows]->(b)",
    ])
}

#[test]
fn a_top_n_by_activation_gets_only_the_rows_it_can_keep() {
    let mut conn = ties();
    let call = format!("{FROM_ZERO}CALL spread_activation('Knows', seeds, max_hops := 3) ");
    for (skip, limit) in [
        (0, 1),
        (0, 3),
        (0, 9),
        (0, 10),
        (2, 8),
        (5, 20),
        (0, 100),
        (0, 0),
    ] {
        let skip_text = if skip > 0 {
            format!("SKIP {skip} ")
        } else {
            String::new()
        };
        let order = format!("ORDER BY activation DESC, node.id {skip_text}LIMIT {limit}");
        let top = format!("{call}RETURN node.id, activation, hops {order}");
        let text = plan(&mut conn, &top);
        assert!(text.contains(&format!(" top {}", skip + limit)), "{text}");
        // A filter between the call and the top-N keeps the call whole: the reference.
        let whole = format!(
            "{call}WITH node, activation, hops WHERE hops >= 0 \
             RETURN node.id, activation, hops {order}"
        );
        assert!(!plan(&mut conn, &whole).contains(" top "));
        assert_eq!(rows(&mut conn, &top), rows(&mut conn, &whole), "{order}");
    }
    // Sorted by something else first, or ascending: every row may matter.
    for order in [
        "ORDER BY node.id LIMIT 3",
        "ORDER BY activation, node.id LIMIT 3",
        "ORDER BY hops DESC, node.id LIMIT 3",
    ] {
        let query = format!("{call}RETURN node.id, activation, hops {order}");
        assert!(!plan(&mut conn, &query).contains(" top "), "{order}");
    }
    // The top ten: node 100 (24 leaves send it 0.125 each), the seed, then the eight tied
    // nodes of hop 1 by id (the 48 leaves tie at 0.25 below them).
    let ten = format!("{call}RETURN node.id ORDER BY activation DESC, node.id LIMIT 10");
    assert_eq!(
        rows(&mut conn, &ten),
        ["100", "0", "1", "2", "3", "4", "5", "6", "7", "8"]
    );
}

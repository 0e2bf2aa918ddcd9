//! The parser never panics: random bytes, random soups of Cypher fragments, and random
//! truncations and mutations of the corpus statements all give `Ok` or an error. A fixed-seed
//! generator keeps every run the same; a failure prints the input that panicked.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{corpus_cases, corpus_root};
use warren_cypher::{is_complete, parse_script, parse_statement, split_statements};

/// SplitMix64: small, fast and good enough to pick inputs.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (0 when `bound` is 0).
    fn below(&mut self, bound: usize) -> usize {
        if bound == 0 {
            return 0;
        }
        (self.next() % bound as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Pieces of Cypher that reach deep into the grammar when strung together at random.
const FRAGMENTS: &[&str] = &[
    "MATCH",
    "OPTIONAL",
    "WHERE",
    "RETURN",
    "WITH",
    "UNWIND",
    "AS",
    "CREATE",
    "MERGE",
    "ON",
    "SET",
    "DELETE",
    "DETACH",
    "CALL",
    "YIELD",
    "LOAD",
    "FROM",
    "COPY",
    "TO",
    "NODE",
    "REL",
    "TABLE",
    "PRIMARY",
    "KEY",
    "DROP",
    "IF",
    "EXISTS",
    "NOT",
    "AND",
    "OR",
    "XOR",
    "IN",
    "IS",
    "NULL",
    "STARTS",
    "ENDS",
    "CONTAINS",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "COUNT",
    "ALL",
    "ANY",
    "SHORTEST",
    "WSHORTEST",
    "TRAIL",
    "ACYCLIC",
    "HINT",
    "JOIN",
    "MULTI_JOIN",
    "ORDER",
    "BY",
    "DESC",
    "SKIP",
    "LIMIT",
    "DISTINCT",
    "UNION",
    "EXPLAIN",
    "PROFILE",
    "BEGIN",
    "TRANSACTION",
    "COMMIT",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "-",
    "->",
    "<-",
    "--",
    "*",
    "..",
    ".",
    ",",
    ":",
    ";",
    "|",
    "||",
    "=",
    "<>",
    "!=",
    "+=",
    "=~",
    "+",
    "/",
    "%",
    "^",
    "&",
    "<<",
    ">>",
    "$p",
    "$1",
    "$",
    "a",
    "b",
    "r",
    "n",
    "_",
    "`q`",
    "`",
    "'s'",
    "\"t\"",
    "'",
    "\\",
    "0",
    "1",
    "2..3",
    "1.5",
    ".5",
    "1e9",
    "99999999999999999999999999999999999999999",
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "é",
    "x ->",
    "(x, y) ->",
    ":=",
];

fn parse_everything(input: &str) {
    let _ = parse_statement(input);
    let _ = parse_script(input);
    let _ = split_statements(input);
    let _ = is_complete(input);
}

/// Runs the parser on `input`, recording it in `panicked` if anything panics.
fn check(input: &str, panicked: &mut Vec<String>) {
    if catch_unwind(AssertUnwindSafe(|| parse_everything(input))).is_err() {
        panicked.push(input.to_string());
    }
}

fn random_bytes(random: &mut Random) -> String {
    let length = random.below(64);
    let bytes: Vec<u8> = (0..length).map(|_| (random.next() & 0xFF) as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn fragment_soup(random: &mut Random) -> String {
    let count = random.below(40);
    let mut text = String::new();
    for _ in 0..count {
        text.push_str(random.pick(FRAGMENTS));
        if random.below(3) > 0 {
            text.push(' ');
        }
    }
    text
}

/// The char boundary at or before `index`.
fn boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// One random edit: cut the end, cut a piece out, repeat a piece, or insert a fragment.
fn mutate(text: &str, random: &mut Random) -> String {
    let a = boundary(text, random.below(text.len() + 1));
    let b = boundary(text, random.below(text.len() + 1));
    let (low, high) = (a.min(b), a.max(b));
    match random.below(4) {
        0 => text[..low].to_string(),
        1 => format!("{}{}", &text[..low], &text[high..]),
        2 => format!("{}{}", &text[..high], &text[low..]),
        _ => format!(
            "{} {} {}",
            &text[..low],
            random.pick(FRAGMENTS),
            &text[low..]
        ),
    }
}

#[test]
fn random_bytes_and_fragment_soups_never_panic() {
    let mut random = Random(0x5EED_CAFE);
    let mut panicked = Vec::new();
    for _ in 0..4000 {
        check(&random_bytes(&mut random), &mut panicked);
        check(&fragment_soup(&mut random), &mut panicked);
    }
    assert!(
        panicked.is_empty(),
        "the parser panicked on:\n{}",
        panicked.join("\n---\n")
    );
}

#[test]
fn mutated_corpus_statements_never_panic() {
    let Some(root) = corpus_root() else {
        println!("robustness: corpus not found; only random inputs were checked");
        return;
    };
    let mut random = Random(0xC0FF_EE00);
    let mut panicked = Vec::new();
    let mut inputs = 0;
    for case in corpus_cases(&root) {
        for _ in 0..6 {
            let mut text = mutate(&case.text, &mut random);
            if random.below(2) == 0 {
                text = mutate(&text, &mut random);
            }
            check(&text, &mut panicked);
            inputs += 1;
        }
    }
    println!("robustness: {inputs} mutated corpus statements");
    assert!(
        panicked.is_empty(),
        "the parser panicked on:\n{}",
        panicked.join("\n---\n")
    );
}

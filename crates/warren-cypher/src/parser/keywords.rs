//! The reserved words: keywords that cannot name a variable unless quoted with backticks,
//! because a clause or an operator gives them a meaning where a variable could stand.
//! Every other keyword (`count`, `order` as a label, `desc` as a property) stays usable as a name.

const RESERVED: &[&str] = &[
    "AND",
    "AS",
    "ASC",
    "ASCENDING",
    "BY",
    "CALL",
    "CASE",
    "CONTAINS",
    "CREATE",
    "DELETE",
    "DESC",
    "DESCENDING",
    "DETACH",
    "DISTINCT",
    "ELSE",
    "END",
    "ENDS",
    "FALSE",
    "HINT",
    "IN",
    "IS",
    "JOIN",
    "LIMIT",
    "LOAD",
    "MATCH",
    "MERGE",
    "MULTI_JOIN",
    "NOT",
    "NULL",
    "ON",
    "OPTIONAL",
    "OR",
    "ORDER",
    "RETURN",
    "SET",
    "SKIP",
    "STARTS",
    "THEN",
    "TRUE",
    "UNION",
    "UNWIND",
    "WHEN",
    "WHERE",
    "WITH",
    "XOR",
    "YIELD",
];

/// Whether `word` (any case) is reserved.
pub(super) fn is_reserved(word: &str) -> bool {
    RESERVED
        .iter()
        .any(|reserved| reserved.eq_ignore_ascii_case(word))
}

//! Random bytes and random JSON never make the request decoder panic.

use proptest::prelude::*;

fn json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        any::<u64>().prop_map(|n| serde_json::json!(n)),
        any::<f64>().prop_map(|n| serde_json::json!(n)),
        ".{0,12}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z$]{0,6}", inner, 0..8)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = warren_server::request::decode(&bytes);
    }

    #[test]
    fn random_json_never_panics(value in json(), query in ".{0,40}") {
        let _ = warren_server::request::decode(value.to_string().as_bytes());
        let body = serde_json::json!({"query": query, "parameters": value});
        let _ = warren_server::request::decode(body.to_string().as_bytes());
    }

    #[test]
    fn random_queries_never_panic_the_guard(query in ".{0,80}") {
        let _ = warren_server::guard::check(&query, None);
    }
}

#[test]
fn deep_nesting_is_refused_not_recursed() {
    let deep = format!(
        "{{\"query\": \"RETURN 1\", \"parameters\": {{\"p\": {}1{}}}}}",
        "[".repeat(100),
        "]".repeat(100)
    );
    assert!(warren_server::request::decode(deep.as_bytes()).is_err());
    let deeper = "[".repeat(100_000);
    assert!(warren_server::request::decode(deeper.as_bytes()).is_err());
}

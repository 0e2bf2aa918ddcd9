//! Random bytes, random JSON and mutated binary requests never make the request decoders
//! panic.

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
    fn random_bytes_never_panic_the_binary_decoder(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = warren_server::request::decode_wire(&bytes);
        let _ = warren_server::request::decode_cancel(&bytes);
    }

    #[test]
    fn mutated_binary_requests_never_panic(at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let request = warren_wire::QueryRequest {
            query: "RETURN $a, $b".into(),
            parameters: vec![
                warren_wire::Property { name: "a".into(), value: warren_wire::WireValue::List(vec![warren_wire::WireValue::Date(3), warren_wire::WireValue::Null]) },
                warren_wire::Property { name: "b".into(), value: warren_wire::WireValue::Decimal(warren_wire::Decimal { value: 12, precision: 4, scale: 1 }) },
            ],
            every_statement: true,
            query_id: 9,
        };
        let mut bytes = warren_wire::Encode::to_bytes(&request);
        let i = at.index(bytes.len());
        bytes[i] = byte;
        let _ = warren_server::request::decode_wire(&bytes);
        let _ = warren_server::request::decode_wire(&bytes[..cut.index(bytes.len())]);
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

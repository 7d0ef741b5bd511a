use super::*;
use serde_json::json;

fn rec(v: Value) -> ActionRecord {
    ActionRecord::from_map(v.as_object().cloned().unwrap_or_default())
}

#[test]
fn a_plain_record_is_its_canonical_text_and_reads_back_whole() {
    let v = json!({
        "tool": "deploy_release", "actor": "a", "channel": "http",
        "target": "t/x", "intent_scope": "run:1", "z_unknown": [1, {"b": null}],
        "arguments": {"service": "catalog", "n": 3}
    });
    let r = rec(v.clone());
    assert_eq!(
        r.canonical_bytes().map(<[u8]>::to_vec),
        Some(crate::canonical::to_string(&v).into_bytes())
    );
    assert_eq!(Value::Object(r.to_map()), v);
    assert_eq!(r.tool(), Some("deploy_release"));
    assert_eq!(r.actor(), Some("a"));
    assert_eq!(r.channel(), Some("http"));
    assert_eq!(r.target(), Some("t/x"));
    assert_eq!(r.intent_scope(), Some("run:1"));
    assert_eq!(
        r.arguments().map(Value::Object),
        Some(v["arguments"].clone())
    );
    assert_eq!(r.argument_count(), 2);
    assert_eq!(r.get("z_unknown"), Some(v["z_unknown"].clone()));
    assert_eq!(serde_json::to_value(&r).ok(), Some(v));
}

#[test]
fn only_records_with_nothing_to_drop_are_plain() {
    let plain = rec(json!({"tool": "t", "arguments": {"a": 1}}));
    assert_eq!(plain.plain_canonical_bytes(), plain.canonical_bytes());
    assert!(plain.plain_canonical_bytes().is_some());
    for v in [
        json!({"tool": "t"}),
        json!({"tool": "t", "arguments": null}),
        json!({"tool": "t", "arguments": {"a": 1}, "trace_id": "x"}),
        json!({"tool": "t", "arguments": {"a": 1, "_meta": {}}}),
        json!({"tool": "t", "arguments": {"a": 1.5}}),
    ] {
        assert!(rec(v.clone()).plain_canonical_bytes().is_none(), "{v}");
    }
}

#[test]
fn records_whose_text_is_not_canonical_stay_as_recorded() {
    for v in [
        json!({"tool": "t", "arguments": {"amount": 1.0}}),
        json!({"tool": "t", "arguments": {"n": 18446744073709551615u64}}),
        json!({"tool": "t\"quoted\"", "arguments": {}}),
        json!({"tool": "t", "\u{e000}": 1}),
    ] {
        let r = rec(v.clone());
        assert!(r.canonical_bytes().is_none(), "{v}");
        assert_eq!(Value::Object(r.to_map()), v);
        assert_eq!(r.tool(), v["tool"].as_str());
        assert_eq!(
            serde_json::to_string(&r).ok(),
            serde_json::to_string(&v).ok()
        );
    }
}

#[test]
fn a_record_too_deep_to_parse_back_stays_a_map() {
    let mut deep = json!("bottom");
    for _ in 0..150 {
        deep = json!([deep]);
    }
    let v = json!({"tool": "t", "arguments": {"deep": deep}});
    let r = rec(v.clone());
    assert!(r.canonical_bytes().is_none());
    assert_eq!(Value::Object(r.to_map()), v);
    let shallow = json!({"tool": "t", "arguments": {"a": [[["x"]]]}});
    assert!(rec(shallow).canonical_bytes().is_some());
}

#[test]
fn fields_of_other_types_read_as_absent_but_survive() {
    let v = json!({"tool": 7, "arguments": "x", "actor": null});
    let r = rec(v.clone());
    assert_eq!(r.tool(), None);
    assert_eq!(r.actor(), None);
    assert_eq!(r.arguments(), None);
    assert_eq!(r.argument_count(), 0);
    assert_eq!(Value::Object(r.to_map()), v);
    assert_eq!(r.get("tool"), Some(json!(7)));
}

#[test]
fn equal_records_compare_equal_and_the_default_is_empty() {
    assert_eq!(
        rec(json!({"a": 1, "b": "x"})),
        rec(json!({"b": "x", "a": 1}))
    );
    assert_ne!(rec(json!({"a": 1})), rec(json!({"a": 2})));
    assert_eq!(ActionRecord::default().to_map(), Map::new());
    assert_eq!(ActionRecord::default().canonical_bytes(), Some(&b"{}"[..]));
}

/// What a reader gets for an object's RFC 8785 text: the record built from
/// the text when it can be, else the record of the parsed map.
fn from_text(text: &str) -> ActionRecord {
    ActionRecord::from_canonical_json(text)
        .unwrap_or_else(|| ActionRecord::from_map(serde_json::from_str(text).unwrap_or_default()))
}

/// The record built from the canonical text is byte for byte the record of
/// the map (same text, same field ranges, same plain flag), or is declined.
fn same_as_map(v: &Value) -> Option<ActionRecord> {
    // What a journal line holds, and the map a reader parses from it (the
    // canonical form rounds integers beyond 2^53, so not always `v`).
    let text = serde_json_canonicalizer::to_string(v).unwrap();
    let from_map = ActionRecord::from_map(serde_json::from_str(&text).unwrap());
    assert_eq!(from_text(&text), from_map, "{text}");
    ActionRecord::from_canonical_json(&text)
}

#[test]
fn a_record_from_its_canonical_text_is_the_record_of_its_map() {
    let deep = |n: usize| {
        let mut v = json!(1);
        for _ in 0..n {
            v = json!([v]);
        }
        v
    };
    // Taken from the text: what a journal's accepted events mostly hold.
    for v in [
        json!({"actor": "a", "tool": "t", "channel": "http", "target": "x/y",
               "intent_scope": "run:1", "method": "POST",
               "arguments": {"region": "eu", "n": -12, "ok": true, "none": null}}),
        json!({"tool": "t", "arguments": {"_meta": {"k": 1}}}),
        json!({"tool": "t", "trace_id": "abc", "arguments": {}}),
        json!({"tool": "t", "arguments": [1, 2]}),
        json!({"tool": 7, "actor": ["a"], "arguments": "x"}),
        json!({"tool": "t"}),
        json!({}),
        json!({"tool": "déploiement 中", "arguments": {"q": "a\"b\\c\n\u{1}", "}]{,": "\"}"}}),
        json!({"a\nb": 1, "tool": "t", "arguments": {"x\"y": [{"z": "}"}, [], {}]}}),
        json!({"tool": "t", "arguments": {"n": 9007199254740991_i64}}),
        json!({"tool": "t", "arguments": {"d": deep(98)}}),
    ] {
        assert!(same_as_map(&v).is_some(), "{v}");
    }
    // Declined, and read through the map: what must stay a map, or text
    // whose names might sort differently.
    for v in [
        json!({"actor": "a\"b", "tool": "t"}),
        json!({"tool": "t\\u"}),
        json!({"tool": "t", "arguments": {"f": 1.5}}),
        json!({"tool": "t", "arguments": {"f": 1e30}}),
        json!({"tool": "t", "arguments": {"big": 9007199254740993_u64}}),
        json!({"tool": "t", "arguments": {"e": "\u{e000}"}}),
        json!({"tool": "t", "\u{1F600}": 1}),
        json!({"tool": "t", "arguments": {"d": deep(100)}}),
    ] {
        same_as_map(&v);
    }
    for text in ["null", "[1]", "\"x\"", "3"] {
        assert!(ActionRecord::from_canonical_json(text).is_none(), "{text}");
    }
}

fn arb_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-(1_i64 << 53)..(1_i64 << 53)).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z_\"\\\\\u{0}-\u{1f}é中\u{e000}\u{1F600}{}\\[\\],:]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 24, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("tool".to_string()),
                    Just("actor".to_string()),
                    Just("arguments".to_string()),
                    Just("_meta".to_string()),
                    "[a-z_\"\u{1}é\u{e000}]{0,5}"
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    /// Any object: the record from its canonical text equals the record of
    /// its map.
    #[test]
    fn any_canonical_text_gives_the_record_of_its_map(
        m in proptest::collection::btree_map(
            proptest::prop_oneof![
                proptest::strategy::Just("tool".to_string()),
                proptest::strategy::Just("actor".to_string()),
                proptest::strategy::Just("intent_scope".to_string()),
                proptest::strategy::Just("arguments".to_string()),
                proptest::strategy::Just("trace_id".to_string()),
                "[a-z_\"\u{1}é\u{e000}]{0,5}",
            ],
            arb_value(),
            0..6,
        )
    ) {
        same_as_map(&Value::Object(m.into_iter().collect()));
    }
}

use super::*;
use crate::journal::{JournalSource, LoadedJournal, load};
use crate::model::{EventKind, Model, Pairing};

fn req(ms: u32, tool: &str, args: &str) -> String {
    format!(
        r#"{{"timestamp":"2026-05-21T21:36:{:02}.{:03}Z","direction":"OUT","type":"REQUEST","server_id":"github","method":"tools/call","payload":{{"jsonrpc":"2.0","method":"tools/call","params":{{"arguments":{args},"name":"{tool}"}}}}}}"#,
        ms / 1000,
        ms % 1000
    )
}

fn resp(ms: u32, error: bool, text: &str) -> String {
    format!(
        r#"{{"timestamp":"2026-05-21T21:36:{:02}.{:03}Z","direction":"IN","type":"RESPONSE","server_id":"github","payload":{{"id":1,"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":{}}}],"isError":{error}}}}}}}"#,
        ms / 1000,
        ms % 1000,
        serde_json::to_string(text).unwrap()
    )
}

fn read(lines: &[String]) -> (LoadedJournal, Model) {
    let text = lines.join("\n") + "\n";
    let (mut j, m) = load(
        vec![JournalSource::memory(
            "rpc-messages.jsonl",
            text.into_bytes(),
        )],
        None,
        &mut |_| {},
    )
    .unwrap();
    (j.remove(0), m)
}

/// Per request line: the answer's line and how it was paired
/// (`id`, `position`, `uncertain`, `content`), or `None` without one.
fn pairings(m: &Model) -> Vec<(u32, Option<(u32, &'static str)>)> {
    let mut out: Vec<_> = m
        .to_executions()
        .into_iter()
        .map(|x| {
            let request = x.events[0].source.position();
            let answer = x.events.iter().find_map(|e| match e.kind {
                EventKind::Outcome { .. } => Some((
                    e.source.position(),
                    match &e.facts().pairing {
                        Pairing::ById => "id",
                        Pairing::ByPosition {
                            uncertain: false, ..
                        } => "position",
                        Pairing::ByPosition { .. } => "uncertain",
                        Pairing::ByContent { .. } => "content",
                    },
                )),
                _ => None,
            });
            (request, answer)
        })
        .collect();
    out.sort_unstable();
    out
}

/// docs/design.md §2.5: answers that differ within a burst make every
/// pairing by position uncertain, the successes too.
#[test]
fn differing_answers_make_every_positional_pairing_uncertain() {
    let (_, m) = read(&[
        req(1000, "list_releases", r#"{"n":1}"#),
        req(1100, "list_tags", r#"{"n":2}"#),
        resp(1200, true, "403 Forbidden"),
        resp(1300, false, "[]"),
    ]);
    assert_eq!(
        pairings(&m),
        [(1, Some((3, "uncertain"))), (2, Some((4, "uncertain")))]
    );
    // Like answers: position cannot mislead.
    let (j, m) = read(&[
        req(1000, "list_releases", r#"{"n":1}"#),
        req(1100, "list_tags", r#"{"n":2}"#),
        resp(1200, true, "403 Forbidden"),
        resp(1300, true, "403 Forbidden"),
    ]);
    assert_eq!(
        pairings(&m),
        [(1, Some((3, "position"))), (2, Some((4, "position")))]
    );
    assert!(
        j.notes
            .iter()
            .any(|n| n == "2 response(s) paired by position while several requests were in flight"),
        "{:?}",
        j.notes
    );
}

/// The error names one call's operation: it pairs by content, and the
/// successes left are alike, so nothing is uncertain.
#[test]
fn an_error_naming_its_call_pairs_by_content() {
    let repo = r#"{"owner":"acme","repo":"widgets"}"#;
    let (j, m) = read(&[
        req(1000, "list_releases", repo),
        req(1010, "get_me", "{}"),
        req(1020, "list_issues", repo),
        resp(
            1100,
            true,
            "failed to get user: GET https://api.example/user: 403",
        ),
        resp(1110, false, "[]"),
        resp(1120, false, r#"{"issues":[]}"#),
    ]);
    assert_eq!(
        pairings(&m),
        [
            (1, Some((5, "position"))),
            (2, Some((4, "content"))),
            (3, Some((6, "position")))
        ]
    );
    assert!(
        j.notes
            .iter()
            .any(|n| n == "1 response(s) paired by content: the answer names its request"),
        "{:?}",
        j.notes
    );
}

/// A call sent after the failure came cannot have got it.
#[test]
fn a_call_sent_after_an_answer_cannot_have_got_it() {
    let (_, m) = read(&[
        req(1000, "list_releases", r#"{"n":1}"#),
        req(1100, "list_tags", r#"{"n":2}"#),
        resp(1200, true, "403 Forbidden"),
        req(1300, "list_forks", r#"{"n":3}"#),
        resp(1400, false, "[]"),
        resp(1500, false, "[]"),
    ]);
    assert_eq!(
        pairings(&m),
        [
            (1, Some((3, "uncertain"))),
            (2, Some((5, "uncertain"))),
            (4, Some((6, "position")))
        ]
    );
}

/// At the end of the journal a call is still waiting: the answer
/// another call got may be its.
#[test]
fn an_answer_may_be_that_of_a_call_never_answered() {
    let (j, m) = read(&[
        req(1000, "list_releases", r#"{"n":1}"#),
        req(1100, "list_tags", r#"{"n":2}"#),
        resp(1200, false, "[]"),
    ]);
    assert_eq!(pairings(&m), [(1, Some((3, "uncertain"))), (2, None)]);
    assert!(
        j.notes
            .iter()
            .any(|n| n.contains("never got a response (lines 2)")),
        "{:?}",
        j.notes
    );
}

/// A tools/list in flight: its answer may name any tool, so the burst
/// goes by position.
#[test]
fn a_burst_with_other_requests_is_paired_by_position() {
    let list = r#"{"timestamp":"2026-05-21T21:36:00.900Z","direction":"OUT","type":"REQUEST","server_id":"github","method":"tools/list","payload":{"jsonrpc":"2.0","method":"tools/list"}}"#;
    let (_, m) = read(&[
        list.to_string(),
        req(1000, "list_releases", "{}"),
        req(1010, "get_me", "{}"),
        resp(1100, false, r#"{"tools":[]}"#),
        resp(1110, true, "failed to get user"),
        resp(1120, false, "[]"),
    ]);
    assert_eq!(
        pairings(&m),
        [(2, Some((5, "uncertain"))), (3, Some((6, "uncertain")))]
    );
}

#[test]
fn classifies_errors() {
    let env = Map::new();
    let ok = json!({"result":{"content":[{"type":"text","text":"{}"}]}});
    assert_eq!(classify(&env, &ok).0, OutcomeKind::Success);
    let tool_err = json!({"result":{"isError":true,"content":[{"type":"text","text":"403"}]}});
    assert_eq!(
        classify(&env, &tool_err),
        (OutcomeKind::Failure, Some("403".into()))
    );
    let rpc_err = json!({"error":{"code":-32602,"message":"unknown tool"}});
    assert_eq!(
        classify(&env, &rpc_err),
        (OutcomeKind::Failure, Some("unknown tool".into()))
    );
    let safe = json!({"result":{"content":[{"type":"text","text":"{\"result\":\"error\",\"error\":\"No changes\"}"}]}});
    assert_eq!(
        classify(&env, &safe),
        (OutcomeKind::Failure, Some("No changes".into()))
    );
    let mut env = Map::new();
    env.insert("error".into(), json!("calling tools/call: empty"));
    assert_eq!(classify(&env, &Value::Null).0, OutcomeKind::Failure);
}

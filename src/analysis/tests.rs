//! Analysis over small hand-written journals: resolutions, windows, classes,
//! provenance, and robustness against odd input.

use super::*;
use crate::journal::{JournalSource, LoadOptions, LoadedJournal};
use chrono::{TimeZone, Utc};

const CONTRACTS: &str = r#"
[tools.deploy]
class = "recoverable_by_status"
attach_window = "10m"
[tools.read]
class = "read_only"
"#;

fn ev(seq: u32, at: &str, x: &str, event: &str, extra: &str) -> String {
    format!(
        r#"{{"kind":"event","seq":{seq},"at":"2026-09-01T{at}Z","execution_id":"{x}","event":"{event}"{extra}}}"#
    )
}

fn accepted(seq: u32, at: &str, x: &str, tool: &str, session: &str) -> String {
    ev(
        seq,
        at,
        x,
        "accepted",
        &format!(
            r#","call":{{"call_id":"c{seq}","session_id":"{session}","jsonrpc_id":{seq}}},"action":{{"actor":"a","tool":"{tool}","arguments":{{"v":1}},"intent_scope":"run:1"}}"#
        ),
    )
}

fn session(id: &str, pid: u32) -> String {
    format!(
        r#"{{"kind":"session","session_id":"{id}","actor":"a","process":{{"pid":{pid},"started_at":"2026-09-01T09:00:00Z"}}}}"#
    )
}

/// A journal read and analysed, without the query layer.
struct Investigation {
    journals: Vec<LoadedJournal>,
    model: Model,
    analysis: Analysis,
}

impl Investigation {
    fn open(lines: &[String], config: &Config) -> Investigation {
        let text: &'static [u8] = Box::leak(lines.join("\n").into_bytes().into_boxed_slice());
        let (journals, model) = crate::journal::load_with(
            vec![JournalSource::embedded("t.jsonl", text)],
            &LoadOptions::default(),
            &mut |_| {},
        )
        .unwrap();
        let analysis = analyze(&model, &journals, config);
        Investigation {
            journals,
            model,
            analysis,
        }
    }

    fn explain(&self, g: &Group) -> Explanation {
        explain(&self.model, &self.analysis, &self.journals, g)
    }
}

fn investigate(lines: &[String], resolutions: Vec<Resolution>) -> Investigation {
    let config = Config {
        contracts: Contracts::parse(CONTRACTS, "test").unwrap(),
        key: FingerprintKey::none(),
        resolutions,
    };
    Investigation::open(lines, &config)
}

/// An unknown outcome, then a fresh retry that the target performed.
fn unknown_then_retry(extra_first: &[String]) -> Vec<String> {
    let mut l = vec![
        session("s1", 1),
        accepted(1, "10:00:00", "x1", "deploy", "s1"),
        ev(2, "10:00:01", "x1", "dispatched", ""),
        ev(3, "10:01:01", "x1", "outcome", r#","outcome":"unknown""#),
        accepted(4, "10:02:00", "x2", "deploy", "s1"),
        ev(5, "10:02:01", "x2", "dispatched", ""),
        ev(
            6,
            "10:02:05",
            "x2",
            "outcome",
            r#","outcome":"success","target_status":201"#,
        ),
        ev(7, "10:02:06", "x2", "delivered", ""),
    ];
    l.extend_from_slice(extra_first);
    l
}

fn only_group(inv: &Investigation) -> &Group {
    assert_eq!(inv.analysis.groups.len(), 1, "{:#?}", inv.analysis.groups);
    &inv.analysis.groups[0]
}

#[test]
fn unknown_outcome_then_fresh_retry_is_a_possible_duplicate() {
    let inv = investigate(&unknown_then_retry(&[]), vec![]);
    let g = only_group(&inv);
    let ex = inv.explain(g);
    assert_eq!(g.verdict, Verdict::PossibleDuplicate);
    assert!(
        ex.answers[2]
            .text
            .starts_with("No: the gateway recorded the outcome as unknown")
    );
}

#[test]
fn a_status_query_that_finds_it_done_makes_it_a_duplicate() {
    let late = ev(
        8,
        "10:30:00",
        "x1",
        "outcome",
        r#","outcome":"success","target_status":200,"observed_via":"status_query""#,
    );
    let inv = investigate(&unknown_then_retry(&[late]), vec![]);
    let g = only_group(&inv);
    let ex = inv.explain(g);
    assert_eq!(g.verdict, Verdict::DuplicateSideEffect);
    assert!(ex.reason.contains("still unresolved"), "{}", ex.reason);
    assert!(
        ex.answers[2]
            .text
            .starts_with("Not before the second call; later"),
        "{}",
        ex.answers[2].text
    );
}

#[test]
fn a_status_query_that_finds_no_record_makes_it_safe() {
    let late = ev(
        8,
        "10:30:00",
        "x1",
        "outcome",
        r#","outcome":"not_executed","observed_via":"status_query""#,
    );
    let inv = investigate(&unknown_then_retry(&[late]), vec![]);
    assert_eq!(only_group(&inv).verdict, Verdict::SafeRetry);
}

fn resolution(x: &str, d: Decision) -> Resolution {
    Resolution {
        execution_id: x.into(),
        decision: d,
        reviewer: "alice".into(),
        at: Utc.with_ymd_and_hms(2026, 9, 2, 8, 0, 0).unwrap(),
        note: "checked the deploy API".into(),
        source: "case entry 1".into(),
    }
}

#[test]
fn reviewer_decisions_resolve_unknown_outcomes_with_provenance() {
    let inv = investigate(
        &unknown_then_retry(&[]),
        vec![resolution("x1", Decision::ConfirmedCompleted)],
    );
    let g = only_group(&inv);
    let ex = inv.explain(g);
    assert_eq!(g.verdict, Verdict::DuplicateSideEffect);
    let q3 = &ex.answers[2].text;
    assert!(
        q3.contains(
            "Reviewer alice decided confirmed_completed at 2026-09-02 08:00:00Z (case entry 1)"
        ),
        "{q3}"
    );

    let inv = investigate(
        &unknown_then_retry(&[]),
        vec![resolution("x1", Decision::ConfirmedNotExecuted)],
    );
    assert_eq!(only_group(&inv).verdict, Verdict::SafeRetry);

    let inv = investigate(
        &unknown_then_retry(&[]),
        vec![resolution("x1", Decision::Escalated)],
    );
    assert_eq!(only_group(&inv).verdict, Verdict::PossibleDuplicate);
}

#[test]
fn a_decision_never_overrides_the_journal() {
    let inv = investigate(
        &unknown_then_retry(&[]),
        vec![resolution("x2", Decision::ConfirmedNotExecuted)],
    );
    assert_eq!(only_group(&inv).verdict, Verdict::PossibleDuplicate);
    assert!(
        inv.analysis
            .notes
            .iter()
            .any(|n| n.contains("the journal stands")),
        "{:?}",
        inv.analysis.notes
    );
    let inv = investigate(
        &unknown_then_retry(&[]),
        vec![resolution("nope", Decision::ConfirmedCompleted)],
    );
    assert!(
        inv.analysis
            .notes
            .iter()
            .any(|n| n.contains("not in these journals"))
    );
}

#[test]
fn a_single_pending_execution_resolved_as_completed_was_never_delivered() {
    let l = vec![
        accepted(1, "10:00:00", "x1", "deploy", "s1"),
        ev(2, "10:00:01", "x1", "dispatched", ""),
    ];
    let inv = investigate(&l, vec![]);
    assert_eq!(only_group(&inv).verdict, Verdict::PendingVerification);
    let inv = investigate(&l, vec![resolution("x1", Decision::ConfirmedCompleted)]);
    assert_eq!(only_group(&inv).verdict, Verdict::UndeliveredResult);
}

fn completed_then_retry(tool: &str, retry_at: &str, s2: &str) -> Vec<String> {
    vec![
        session("s1", 1),
        session("s2", 2),
        accepted(1, "10:00:00", "x1", tool, "s1"),
        ev(2, "10:00:01", "x1", "dispatched", ""),
        ev(
            3,
            "10:00:02",
            "x1",
            "outcome",
            r#","outcome":"success","target_status":201"#,
        ),
        ev(
            4,
            "10:00:02.5",
            "x1",
            "delivery_failed",
            r#","error":"stream closed""#,
        ),
        accepted(5, retry_at, "x2", tool, s2),
        ev(6, retry_at, "x2", "dispatched", ""),
        ev(
            7,
            retry_at,
            "x2",
            "outcome",
            r#","outcome":"success","target_status":201"#,
        ),
        ev(8, retry_at, "x2", "delivered", ""),
    ]
}

#[test]
fn the_attach_window_bounds_a_retry() {
    let inside = investigate(&completed_then_retry("deploy", "10:09:00", "s1"), vec![]);
    assert_eq!(only_group(&inside).verdict, Verdict::DuplicateSideEffect);
    let outside = investigate(&completed_then_retry("deploy", "10:11:00", "s1"), vec![]);
    let g = only_group(&outside);
    let ex = outside.explain(g);
    assert_eq!(g.verdict, Verdict::DistinctIntent);
    assert!(
        ex.reason.contains("outside the attach window"),
        "{}",
        ex.reason
    );
}

#[test]
fn distinct_processes_are_distinct_intents() {
    let inv = investigate(&completed_then_retry("deploy", "10:01:00", "s2"), vec![]);
    let g = only_group(&inv);
    let ex = inv.explain(g);
    assert_eq!(g.verdict, Verdict::DistinctIntent);
    assert!(
        ex.answers[0].text.starts_with("Two distinct processes"),
        "{}",
        ex.answers[0].text
    );
    // Both session records are cited.
    assert_eq!(
        ex.answers[0]
            .evidence
            .iter()
            .filter(|e| matches!(e, EvidenceRef::Session { .. }))
            .count(),
        2
    );
}

/// One call's session is known, the other's not (an OpenTelemetry server
/// span whose caller exported nothing): question 1 said "the calls carry
/// no session id" while citing the one session.
#[test]
fn a_session_known_for_one_call_only_is_named() {
    let mut lines = completed_then_retry("deploy", "10:01:00", "s2");
    lines[2] = lines[2].replace(r#""session_id":"s1","#, "");
    let inv = investigate(&lines, vec![]);
    let ex = inv.explain(only_group(&inv));
    assert!(
        ex.answers[0]
            .text
            .starts_with("unknown: the later call came from session s2")
            && ex.answers[0]
                .text
                .ends_with("and the earlier one carries no session id"),
        "{}",
        ex.answers[0].text
    );
}

#[test]
fn two_sessions_of_one_process_are_one_process() {
    let mut l = completed_then_retry("deploy", "10:01:00", "s2");
    l[1] = session("s2", 1); // same pid and start time as s1
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    let ex = inv.explain(g);
    assert!(
        ex.answers[0].text.starts_with("One process"),
        "{}",
        ex.answers[0].text
    );
    assert_eq!(g.verdict, Verdict::DuplicateSideEffect);
}

/// In a group of three calls, Q1 names the two calls its answer compares
/// and says where the third came from: "both calls came from s1" read as
/// if every call had, when the third came from another process.
#[test]
fn a_third_calls_process_is_named_in_q1() {
    let mut l = completed_then_retry("deploy", "10:01:00", "s1");
    l.push(session("s3", 3));
    l.extend([
        accepted(9, "10:02:00", "x3", "deploy", "s3"),
        ev(10, "10:02:00", "x3", "dispatched", ""),
    ]);
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!(g.executions.len(), 3);
    let ex = inv.explain(g);
    let q1 = &ex.answers[0];
    assert!(!q1.text.contains("both calls"), "{}", q1.text);
    assert!(
        q1.text
            .starts_with("One process: x1 and x2 came from session s1"),
        "{}",
        q1.text
    );
    assert!(
        q1.text
            .contains("The group's other call: x3 came from session s3 (pid 3, started 2026-09-01 09:00:00), another process."),
        "{}",
        q1.text
    );
    // Two later executions acted, but only x2 duplicated x1's effect: x3
    // came from another process, a distinct intent (docs/design.md §5.3).
    assert_eq!(g.verdict, Verdict::DuplicateSideEffect);
    assert_eq!(g.duplicates, 1);
    // The third call's accepted record and session are cited too.
    let sessions = q1
        .evidence
        .iter()
        .filter(|e| matches!(e, EvidenceRef::Session { .. }))
        .count();
    assert_eq!(sessions, 2, "{:?}", q1.evidence);
    assert_eq!(q1.evidence.len(), 5, "{:?}", q1.evidence);
}

/// Calls that name only their MCP session (wire logs) are said to have
/// come over it in Q1, not to "name no session".
#[test]
fn other_calls_known_by_their_mcp_session_are_named_in_q1() {
    // The unknown answer before the sentence ends with a full stop.
    let mcp_call = |seq: u32, at: &str, x: &str, mcp: &str| {
        ev(
            seq,
            at,
            x,
            "accepted",
            &format!(
                r#","call":{{"call_id":"c{seq}","mcp_session_id":"{mcp}","jsonrpc_id":{seq}}},"action":{{"actor":"a","tool":"deploy","arguments":{{"v":1}},"intent_scope":"run:1"}}"#
            ),
        )
    };
    let l = vec![
        mcp_call(1, "10:00:00", "x1", "m1"),
        ev(2, "10:00:01", "x1", "dispatched", ""),
        mcp_call(3, "10:01:00", "x2", "m2"),
        ev(4, "10:01:01", "x2", "dispatched", ""),
        mcp_call(5, "10:02:00", "x3", "m1"),
    ];
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!(g.executions.len(), 3);
    let q1 = &inv.explain(g).answers[0];
    assert!(
        q1.text.contains(
            "a reconnecting process opens a new MCP session, and the journal names no process. The group's other call: x3 came over MCP session m1, as x1 did."
        ),
        "{}",
        q1.text
    );
}

/// When the pair Q1 compares is an execution and a call attached to it,
/// and the group has more calls, the attached call is named by its time.
#[test]
fn an_attached_pair_is_named_by_its_time_in_q1() {
    let l = vec![
        session("s1", 1),
        accepted(1, "10:00:00", "x1", "deploy", "s1"),
        ev(2, "10:00:01", "x1", "dispatched", ""),
        ev(
            3,
            "10:00:02",
            "x1",
            "outcome",
            r#","outcome":"failure","target_status":400"#,
        ),
        ev(
            4,
            "10:00:30",
            "x1",
            "attached",
            r#","call":{"call_id":"c4","session_id":"s1","jsonrpc_id":4},"recovery":"queried_status""#,
        ),
        accepted(5, "10:01:00", "x2", "deploy", "s1"),
        ev(6, "10:01:01", "x2", "dispatched", ""),
        ev(
            7,
            "10:01:02",
            "x2",
            "outcome",
            r#","outcome":"success","target_status":201"#,
        ),
        ev(8, "10:01:03", "x2", "delivered", ""),
    ];
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!(g.verdict, Verdict::AttachedRetry);
    let q1 = &inv.explain(g).answers[0];
    assert!(
        q1.text.starts_with(
            "One process: x1 and the call attached to it at 10:00:30 came from session s1."
        ) && q1
            .text
            .contains("The group's other call: x2 came from session s1"),
        "{}",
        q1.text
    );
}

/// One execution dispatched three times, the target acting on each: two
/// duplicate side effects, not one.
#[test]
fn each_acting_dispatch_beyond_the_first_is_a_duplicate() {
    let acted = r#","outcome":"success","target_status":201"#;
    let l = vec![
        session("s1", 1),
        accepted(1, "10:00:00", "x1", "deploy", "s1"),
        ev(2, "10:00:01", "x1", "dispatched", ""),
        ev(3, "10:00:02", "x1", "outcome", acted),
        ev(4, "10:00:03", "x1", "dispatched", ""),
        ev(5, "10:00:04", "x1", "outcome", acted),
        ev(6, "10:00:05", "x1", "dispatched", ""),
        ev(7, "10:00:06", "x1", "outcome", acted),
    ];
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!(g.verdict, Verdict::DuplicateSideEffect);
    assert_eq!(g.duplicates, 2);
}

/// Where the first call's session names no process, Q1 does not say the
/// other call's process is unnamed: its own session names it.
#[test]
fn an_other_call_whose_process_cannot_be_matched_says_why() {
    let mut l = completed_then_retry("deploy", "10:01:00", "s4");
    l[0] = r#"{"kind":"session","session_id":"s4","actor":"a"}"#.to_string();
    l[2] = accepted(1, "10:00:00", "x1", "deploy", "s4");
    l.push(session("s3", 3));
    l.push(accepted(9, "10:02:00", "x3", "deploy", "s3"));
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!(g.executions.len(), 3);
    let q1 = &inv.explain(g).answers[0];
    assert!(
        q1.text.contains(
            "x3 came from session s3 (pid 3, started 2026-09-01 09:00:00), and whether that is the process of x1 is not known: a session names no process."
        ),
        "{}",
        q1.text
    );
}

/// A call attached to the first execution is one of the group's calls
/// too: Q1 names it by its execution and time.
#[test]
fn a_call_attached_beside_the_pair_is_named_in_q1() {
    let mut l = completed_then_retry("deploy", "10:01:00", "s1");
    l.push(session("s3", 3));
    l.push(ev(
        9,
        "10:00:30",
        "x1",
        "attached",
        r#","call":{"call_id":"c9","session_id":"s3","jsonrpc_id":9},"recovery":"queried_status""#,
    ));
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!((g.executions.len(), g.calls), (2, 3));
    let q1 = &inv.explain(g).answers[0];
    assert!(
        q1.text.contains("x1 and x2 came from session s1")
            && q1.text.contains(
                "The group's other call: the call attached to x1 at 10:00:30 came from session s3 (pid 3, started 2026-09-01 09:00:00), another process."
            ),
        "{}",
        q1.text
    );
}

/// What a group's pairs find of Q1 from each execution's known facts is
/// what the question itself finds, for every pair: one session, two
/// sessions of one process, two processes, a session with no process, a
/// session with no record, a call with no session, and no accepted record.
#[test]
fn pairs_find_the_processes_the_question_finds() {
    let call = |seq: u32, x: &str, call: &str| {
        ev(
            seq,
            &format!("10:00:{seq:02}"),
            x,
            "accepted",
            &format!(
                r#","call":{{"call_id":"c{seq}"{call}}},"action":{{"actor":"a","tool":"deploy","arguments":{{"v":1}},"intent_scope":"run:1"}}"#
            ),
        )
    };
    let mut lines = vec![
        session("s1", 1),
        session("s2", 1),
        session("s3", 2),
        r#"{"kind":"session","session_id":"s4","actor":"a"}"#.to_string(),
    ];
    for (i, s) in ["s1", "s1", "s2", "s3", "s4", "s5"].iter().enumerate() {
        lines.push(call(
            i as u32 + 1,
            &format!("x{i}"),
            &format!(r#","session_id":"{s}""#),
        ));
    }
    lines.push(call(7, "x6", ""));
    lines.push(ev(8, "10:00:08", "x7", "dispatched", ""));
    let inv = investigate(&lines, vec![]);
    let ctx = questions::Ctx {
        model: &inv.model,
        lifecycles: &inv.analysis.lifecycles,
        journals: &inv.journals,
    };
    let w = std::time::Duration::from_secs(600);
    let n = inv.model.execution_count();
    assert_eq!(n, 8);
    let mut seen = std::collections::BTreeSet::new();
    for e in (0..n).map(ExecIdx::new) {
        for f in (0..n).map(ExecIdx::new) {
            let (ke, kf) = (group::Known::of(&ctx, e, w), group::Known::of(&ctx, f, w));
            let v = ctx.processes_value(e, f);
            assert_eq!(ke.processes(&kf), v, "{e:?} and {f:?}");
            seen.insert(format!("{v:?}"));
        }
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
}

#[test]
fn read_only_repeats_cannot_duplicate_an_effect() {
    let inv = investigate(&completed_then_retry("read", "10:00:30", "s1"), vec![]);
    assert_eq!(only_group(&inv).verdict, Verdict::DistinctIntent);
    assert!(!only_group(&inv).has(FindingKind::NoReplayContract));
}

#[test]
fn events_without_an_accepted_record_still_form_a_group() {
    let l = vec![
        ev(1, "10:00:01", "ghost", "dispatched", ""),
        ev(2, "10:00:02", "ghost", "outcome", r#","outcome":"success""#),
        accepted(3, "10:00:00", "x1", "deploy", "s1"),
    ];
    let inv = investigate(&l, vec![]);
    assert_eq!(inv.analysis.groups.len(), 2);
    let ghost = inv
        .analysis
        .groups
        .iter()
        .find(|g| &*g.tool == "?")
        .expect("orphan group");
    assert_eq!(ghost.calls, 0);
    assert!(!ghost.has(FindingKind::NoReplayContract));
    // It cannot be compared with anything: shown, and said why.
    assert!(ghost.has(FindingKind::NoAcceptedRecord));
    assert!(ghost.worth_a_look());
}

#[test]
fn groups_are_sorted_worst_first_and_ids_are_stable() {
    let mut l = completed_then_retry("deploy", "10:05:00", "s1");
    l.push(accepted(20, "09:00:00", "r1", "read", "s1"));
    let a = investigate(&l, vec![]);
    let b = investigate(&l, vec![]);
    let verdicts: Vec<Verdict> = a.analysis.groups.iter().map(|g| g.verdict).collect();
    let mut sorted = verdicts.clone();
    sorted.sort();
    assert_eq!(verdicts, sorted);
    let ids = |i: &Investigation| {
        i.analysis
            .groups
            .iter()
            .map(|g| g.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&a), ids(&b));
    // execution_group points at the sorted positions.
    for (x, &gi) in a.analysis.execution_group.iter().enumerate() {
        assert!(
            a.analysis.groups[gi.get()]
                .executions
                .contains(&ExecIdx::new(x))
        );
    }
}

/// A retry that leaves out an argument the contract would default: without
/// the contract the two calls are different groups, and drift says why.
#[test]
fn a_left_out_default_shows_as_drift() {
    let with = |seq, at, x, args: &str| {
        ev(
            seq,
            at,
            x,
            "accepted",
            &format!(
                r#","call":{{"session_id":"s1"}},"action":{{"actor":"a","tool":"ship","arguments":{args},"intent_scope":"run:1"}}"#
            ),
        )
    };
    let l = vec![
        with(1, "10:00:00", "x1", r#"{"v":1,"region":"us-east-1"}"#),
        with(2, "10:00:05", "x2", r#"{"v":1}"#),
        with(3, "10:00:06", "x3", r#"{"v":2}"#),
    ];
    let inv = investigate(&l, vec![]);
    let drifted: Vec<&Group> = inv
        .analysis
        .groups
        .iter()
        .filter(|g| g.has(FindingKind::FingerprintDrift))
        .collect();
    assert_eq!(drifted.len(), 2, "{:#?}", inv.analysis.groups);
    let detail = |x: &str| {
        let g = &inv.analysis.groups
            [inv.analysis.execution_group[inv.model.execution_index(x).unwrap()].get()];
        g.findings
            .iter()
            .find(|f| f.kind == FindingKind::FingerprintDrift)
            .map(|f| f.detail.clone())
    };
    assert!(
        detail("x2")
            .unwrap()
            .contains("region, defaults to \"us-east-1\""),
        "{:?}",
        detail("x2")
    );
    assert!(
        detail("x1")
            .unwrap()
            .contains("leaves out region = \"us-east-1\"")
    );
    assert!(detail("x3").is_none(), "v:2 is another intent");
}

#[test]
fn notes_say_when_contracts_or_key_are_missing() {
    let lines = [accepted(1, "10:00:00", "x1", "deploy", "s1").replace(
        r#""event":"accepted""#,
        r#""event":"accepted","fingerprint":"hmac-sha256:00""#,
    )];
    let inv = Investigation::open(&lines, &Config::default());
    let notes = inv.analysis.notes.join("\n");
    assert!(notes.contains("no tool contracts"), "{notes}");
    assert!(
        notes.contains("1 execution(s) carry hmac-sha256 fingerprints but no --key-file"),
        "{notes}"
    );

    // A contract field no call carries is named.
    let config = Config {
        contracts: Contracts::parse(
            "[tools.deploy]\nclass = \"irreversible\"\nfingerprint_fields = [\"regoin\", \"v\"]\n",
            "c",
        )
        .unwrap(),
        ..Config::default()
    };
    let inv = Investigation::open(&lines, &config);
    let notes = inv.analysis.notes.join("\n");
    assert!(
        notes.contains("fingerprint field(s) regoin that no call of deploy carries"),
        "{notes}"
    );
    assert!(!notes.contains("no tool contracts"));
}

/// One execution, from accepted to the given tail events.
fn exec(seq: &mut u32, x: &str, at: &str, tail: &[(&str, &str, &str)]) -> Vec<String> {
    *seq += 1;
    let mut l = vec![accepted(*seq, at, x, "deploy", "s1")];
    for (t, event, extra) in tail {
        *seq += 1;
        l.push(ev(*seq, t, x, event, extra));
    }
    l
}

const OK201: &str = r#","outcome":"success","target_status":201"#;

/// An older delivered call must not hide a later lost delivery followed by
/// a fresh retry (adversarial test: the pair scan once skipped it).
#[test]
fn a_delivered_call_does_not_hide_a_later_duplicate() {
    let mut s = 0;
    let mut l = vec![session("s1", 1)];
    l.extend(exec(
        &mut s,
        "A",
        "10:00:00",
        &[
            ("10:00:01", "dispatched", ""),
            ("10:00:02", "outcome", OK201),
            ("10:00:03", "delivered", ""),
        ],
    ));
    l.extend(exec(
        &mut s,
        "B",
        "10:05:00",
        &[
            ("10:05:01", "dispatched", ""),
            ("10:05:02", "outcome", OK201),
            ("10:05:03", "delivery_failed", r#","error":"reset""#),
        ],
    ));
    l.extend(exec(
        &mut s,
        "C",
        "10:06:00",
        &[("10:06:01", "dispatch_failed", r#","error":"refused""#)],
    ));
    l.extend(exec(
        &mut s,
        "D",
        "10:07:00",
        &[
            ("10:07:01", "dispatched", ""),
            ("10:07:02", "outcome", OK201),
            ("10:07:03", "delivered", ""),
        ],
    ));
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!(g.verdict, Verdict::DuplicateSideEffect);
    let ex = inv.explain(g);
    assert!(
        ex.reason
            .starts_with("D was dispatched after B had completed"),
        "{}",
        ex.reason
    );
}

/// A later outcome resolves an unknown one; it does not overwrite a
/// definite answer the gateway already had.
#[test]
fn a_later_outcome_does_not_rewrite_a_known_one() {
    let mut s = 0;
    let mut l = vec![session("s1", 1)];
    l.extend(exec(
        &mut s,
        "A",
        "10:00:00",
        &[
            ("10:00:01", "dispatched", ""),
            ("10:00:02", "outcome", OK201),
            ("10:00:03", "delivery_failed", r#","error":"reset""#),
            (
                "10:03:00",
                "outcome",
                r#","outcome":"not_executed","observed_via":"status_query""#,
            ),
        ],
    ));
    l.extend(exec(
        &mut s,
        "B",
        "10:01:00",
        &[
            ("10:01:01", "dispatched", ""),
            ("10:01:02", "outcome", OK201),
            ("10:01:03", "delivered", ""),
        ],
    ));
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!(g.verdict, Verdict::DuplicateSideEffect);
    assert!(g.has(FindingKind::OutcomeContradiction));

    // A reconciliation query after the retry does not make the earlier,
    // delivered execution "unresolved" at the time of the retry.
    let mut s = 0;
    let mut l = vec![session("s1", 1)];
    l.extend(exec(
        &mut s,
        "A",
        "10:00:00",
        &[
            ("10:00:01", "dispatched", ""),
            ("10:00:02", "outcome", OK201),
            ("10:00:03", "delivered", ""),
            (
                "10:09:00",
                "outcome",
                r#","outcome":"success","observed_via":"status_query""#,
            ),
        ],
    ));
    l.extend(exec(
        &mut s,
        "B",
        "10:01:00",
        &[
            ("10:01:01", "dispatched", ""),
            ("10:01:02", "outcome", OK201),
            ("10:01:03", "delivered", ""),
        ],
    ));
    let inv = investigate(&l, vec![]);
    assert_eq!(only_group(&inv).verdict, Verdict::DistinctIntent);
}

/// One execution dispatched twice is two attempts at the target.
#[test]
fn a_second_dispatch_of_one_execution_is_judged() {
    let mut s = 0;
    let mut l = vec![session("s1", 1)];
    l.extend(exec(
        &mut s,
        "A",
        "10:00:00",
        &[
            ("10:00:01", "dispatched", ""),
            ("10:01:01", "outcome", r#","outcome":"unknown""#),
            ("10:01:30", "dispatched", ""),
            ("10:01:31", "outcome", OK201),
            ("10:01:32", "delivered", ""),
        ],
    ));
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!(g.verdict, Verdict::PossibleDuplicate);
    assert!(
        inv.explain(g).reason.contains("dispatched A 2 times"),
        "{}",
        inv.explain(g).reason
    );

    // Both dispatches answered success: the target acted twice.
    let mut s = 0;
    let mut l = vec![session("s1", 1)];
    l.extend(exec(
        &mut s,
        "A",
        "10:00:00",
        &[
            ("10:00:01", "dispatched", ""),
            ("10:00:02", "outcome", OK201),
            ("10:00:03", "dispatched", ""),
            ("10:00:04", "outcome", OK201),
            ("10:00:05", "delivered", ""),
        ],
    ));
    let inv = investigate(&l, vec![]);
    assert_eq!(only_group(&inv).verdict, Verdict::DuplicateSideEffect);
}

/// Different session ids without process identity are not proof of two
/// processes: a reconnecting process can start a new run.
#[test]
fn sessions_without_process_identity_are_unknown_processes() {
    let mut l = completed_then_retry("deploy", "10:01:00", "s2");
    l.remove(1);
    l.remove(0); // no session records at all
    let inv = investigate(&l, vec![]);
    let g = only_group(&inv);
    assert_eq!(g.verdict, Verdict::DuplicateSideEffect);
    assert!(
        inv.explain(g).answers[0].text.starts_with("unknown:"),
        "{}",
        inv.explain(g).answers[0].text
    );
}

/// The attach window runs from acceptance; a stray early event of another
/// kind does not move an execution out of it.
#[test]
fn the_attach_window_runs_from_acceptance() {
    let mut l = completed_then_retry("deploy", "10:09:00", "s1");
    l.push(
        ev(
            99,
            "10:00:00",
            "x1",
            "authorized",
            r#","decision":"session_grant""#,
        )
        .replace("2026-09-01T10:00:00Z", "0001-01-01T00:00:00Z"),
    );
    let inv = investigate(&l, vec![]);
    assert_eq!(only_group(&inv).verdict, Verdict::DuplicateSideEffect);
}

/// A large group of unknown outcomes is judged (the pair scan is bounded).
#[test]
fn a_large_group_of_unknown_outcomes_is_judged() {
    let mut s = 0;
    let mut l = vec![session("s1", 1)];
    for i in 0..2000 {
        let at = format!("10:{:02}:{:02}", (i / 60) % 60, i % 60);
        l.extend(exec(
            &mut s,
            &format!("x{i}"),
            &at,
            &[
                (&at, "dispatched", ""),
                (&at, "outcome", r#","outcome":"unknown""#),
            ],
        ));
    }
    let inv = investigate(&l, vec![]);
    assert_eq!(only_group(&inv).verdict, Verdict::PossibleDuplicate);
    assert_eq!(only_group(&inv).executions.len(), 2000);
}

/// A group larger than one run of the parallel pair walk is judged as one
/// walk judges it: the worst verdict wins wherever it is, and among equals
/// the first found. Here two unknown outcomes, one in each run, make
/// equally severe pairs with the calls after them; the first run's pair is
/// the group's basis (merging the runs in another order named the second).
/// Then a duplicate side effect in the second run beats them both.
#[test]
fn a_group_judged_in_runs_keeps_the_first_of_the_worst() {
    let build = |duplicate_at: Option<usize>| {
        let mut s = 0;
        let mut l = vec![session("s1", 1)];
        for i in 0..5000usize {
            let at = format!("{:02}:{:02}:{:02}", 10 + i / 3600, (i / 60) % 60, i % 60);
            let outcome = if i == 100 || i == 4500 {
                r#","outcome":"unknown""#
            } else {
                OK201
            };
            let mut tail = vec![
                (at.as_str(), "dispatched", ""),
                (at.as_str(), "outcome", outcome),
            ];
            // A completed call whose result never reached the agent, and a
            // fresh retry right after it: the retry acted twice.
            if duplicate_at != Some(i) && outcome == OK201 {
                tail.push((at.as_str(), "delivered", ""));
            }
            l.extend(exec(&mut s, &format!("x{i:05}"), &at, &tail));
        }
        investigate(&l, vec![])
    };
    let basis = |inv: &Investigation| match &only_group(inv).cause {
        Cause::Lifecycle(b) => (
            inv.model.execution(b.earlier).id().to_string(),
            inv.model.execution(b.later).id().to_string(),
        ),
        Cause::KeyConflict { .. } => (String::new(), String::new()),
    };
    let inv = build(None);
    assert_eq!(only_group(&inv).executions.len(), 5000);
    assert_eq!(only_group(&inv).verdict, Verdict::PossibleDuplicate);
    assert_eq!(basis(&inv), ("x00100".to_string(), "x00101".to_string()));
    let inv = build(Some(4800));
    assert_eq!(only_group(&inv).verdict, Verdict::DuplicateSideEffect);
    assert_eq!(basis(&inv), ("x04800".to_string(), "x04801".to_string()));
}

/// A lone call whose answer did not tell (HTTP 502), settled by a reviewer:
/// the reason names the reviewer's decision first and says the journal's
/// answer did not tell (it once read "completed and delivered (failure …
/// 502)").
#[test]
fn a_reviewed_ambiguous_answer_is_worded_as_the_reviewers() {
    let lines = vec![
        session("s1", 1),
        accepted(1, "10:00:00", "x1", "deploy", "s1"),
        ev(2, "10:00:01", "x1", "dispatched", ""),
        ev(
            3,
            "10:00:05",
            "x1",
            "outcome",
            r#","outcome":"failure","target_status":502"#,
        ),
        ev(4, "10:00:06", "x1", "delivered", ""),
    ];
    let inv = investigate(&lines, vec![resolution("x1", Decision::ConfirmedCompleted)]);
    let g = only_group(&inv);
    assert_eq!(g.verdict, Verdict::Clean);
    let reason = inv.explain(g).reason;
    assert!(
        reason.contains("completed and delivered (reviewer alice decided confirmed_completed at 2026-09-02 08:00:00Z; the journal's answer, HTTP 502 (failure)"),
        "{reason}"
    );
    assert!(reason.contains("did not tell"), "{reason}");
}

/// One completed call of `tool` with `args` at `at` (execution `x`).
fn call_with(seq: &mut u32, x: &str, at: &str, tool: &str, args: &str) -> Vec<String> {
    call_as(seq, x, at, ("a", tool, "run:1"), args)
}

/// One completed call of (actor, tool, intent scope) with `args` at `at`
/// (execution `x`).
fn call_as(
    seq: &mut u32,
    x: &str,
    at: &str,
    (actor, tool, scope): (&str, &str, &str),
    args: &str,
) -> Vec<String> {
    let n = *seq;
    *seq += 4;
    vec![
        ev(
            n,
            at,
            x,
            "accepted",
            &format!(
                r#","call":{{"call_id":"c{n}","session_id":"s1"}},"action":{{"actor":"{actor}","tool":"{tool}","arguments":{args},"intent_scope":"{scope}"}}"#
            ),
        ),
        ev(n + 1, at, x, "dispatched", ""),
        ev(n + 2, at, x, "outcome", r#","outcome":"success""#),
        ev(n + 3, at, x, "delivered", ""),
    ]
}

/// The near-duplicate links (design §5.13): (group's argument `v`, linked
/// group's, field), sorted.
fn near_links(inv: &Investigation) -> Vec<(String, String, String)> {
    let v = |g: &Group| {
        inv.model
            .execution(g.executions[0])
            .action()
            .and_then(|a| a.arguments())
            .map(|a| serde_json::Value::Object(a).to_string())
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for g in &inv.analysis.groups {
        assert_eq!(
            g.near_duplicates.len(),
            g.findings
                .iter()
                .filter(|f| f.kind == FindingKind::NearDuplicate)
                .count()
        );
        for n in &g.near_duplicates {
            let o = inv
                .analysis
                .groups
                .iter()
                .find(|o| o.id == n.group_id)
                .unwrap();
            out.push((v(g), v(o), n.field.clone()));
        }
    }
    out.sort();
    out
}

/// Calls of one tool, actor and scope, some one argument apart, some not
/// (what [`groups_one_argument_field_apart_are_linked`] links).
fn near_duplicate_calls() -> Vec<String> {
    let mut seq = 1;
    let mut l = vec![session("s1", 1)];
    l.extend(call_with(
        &mut seq,
        "x1",
        "10:00:00",
        "deploy",
        r#"{"service":"api","body":"v1"}"#,
    ));
    l.extend(call_with(
        &mut seq,
        "x2",
        "10:01:00",
        "deploy",
        r#"{"service":"api","body":"v2"}"#,
    ));
    // One leaf deep: the path names it.
    l.extend(call_with(
        &mut seq,
        "x3",
        "10:02:00",
        "deploy",
        r#"{"o":{"region":"eu","n":1}}"#,
    ));
    l.extend(call_with(
        &mut seq,
        "x4",
        "10:03:00",
        "deploy",
        r#"{"o":{"region":"us","n":1}}"#,
    ));
    // Two fields apart, other argument names: no link.
    l.extend(call_with(
        &mut seq,
        "x5",
        "10:04:00",
        "deploy",
        r#"{"a":1,"b":1}"#,
    ));
    l.extend(call_with(
        &mut seq,
        "x6",
        "10:04:30",
        "deploy",
        r#"{"a":2,"b":2}"#,
    ));
    l.extend(call_with(
        &mut seq,
        "x7",
        "10:05:00",
        "deploy",
        r#"{"a":1,"c":1}"#,
    ));
    // "7" and 7 are one value written twice: drift, not a near duplicate.
    l.extend(call_with(
        &mut seq,
        "x8",
        "10:06:00",
        "deploy",
        r#"{"id":"7"}"#,
    ));
    l.extend(call_with(
        &mut seq,
        "x9",
        "10:06:30",
        "deploy",
        r#"{"id":7}"#,
    ));
    // A read-only tool links nothing.
    l.extend(call_with(
        &mut seq,
        "x10",
        "10:07:00",
        "read",
        r#"{"p":"a"}"#,
    ));
    l.extend(call_with(
        &mut seq,
        "x11",
        "10:07:10",
        "read",
        r#"{"p":"b"}"#,
    ));
    l
}

/// docs/design.md §5.13: groups of one tool, actor and scope whose
/// arguments differ in exactly one field are linked, both ways, naming the
/// field; the verdicts do not move. (The first create_pull_request of a
/// real gateway log, whose body a retry rewrote, once stood apart as a
/// clean group of its own.)
#[test]
fn groups_one_argument_field_apart_are_linked() {
    let l = near_duplicate_calls();
    let inv = investigate(&l, vec![]);
    assert_eq!(
        near_links(&inv),
        [
            (
                r#"{"body":"v1","service":"api"}"#.to_string(),
                r#"{"body":"v2","service":"api"}"#.to_string(),
                "body".to_string()
            ),
            (
                r#"{"body":"v2","service":"api"}"#.to_string(),
                r#"{"body":"v1","service":"api"}"#.to_string(),
                "body".to_string()
            ),
            (
                r#"{"o":{"n":1,"region":"eu"}}"#.to_string(),
                r#"{"o":{"n":1,"region":"us"}}"#.to_string(),
                "o.region".to_string()
            ),
            (
                r#"{"o":{"n":1,"region":"us"}}"#.to_string(),
                r#"{"o":{"n":1,"region":"eu"}}"#.to_string(),
                "o.region".to_string()
            ),
        ]
    );
    let g = inv
        .analysis
        .groups
        .iter()
        .find(|g| !g.near_duplicates.is_empty())
        .unwrap();
    let f = g
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::NearDuplicate)
        .unwrap();
    assert!(
        f.detail.starts_with(&format!(
            "one argument away from {} (clean, 1 call)",
            g.near_duplicates[0].group_id
        )) && f.detail.ends_with("differ only in body"),
        "{}",
        f.detail
    );
    assert!(
        inv.analysis
            .groups
            .iter()
            .all(|g| g.verdict == Verdict::Clean)
    );
}

/// Analysis to follow keeps each draft's near-duplicate entries for the
/// follower; analysis alone drops them as soon as the links are found,
/// and both find the same groups and links.
#[test]
fn near_duplicate_entries_are_kept_only_to_follow() {
    let lines = near_duplicate_calls();
    let inv = investigate(&lines, vec![]);
    let config = Config {
        contracts: Contracts::parse(CONTRACTS, "test").unwrap(),
        key: FingerprintKey::none(),
        resolutions: vec![],
    };
    let (alone, parts) = whole(&inv.model, &inv.journals, &config, false);
    assert!(parts.near.is_empty());
    let (followed, parts) = whole(&inv.model, &inv.journals, &config, true);
    assert_eq!(alone.groups, followed.groups);
    assert_eq!(alone.groups, inv.analysis.groups);
    assert!(!near_links(&inv).is_empty());
    // Each draft's entries, the draft at each rank given by `order`.
    assert_eq!(parts.near.len(), followed.groups.len());
    for (rank, &draft) in parts.order.iter().enumerate() {
        let want = near::entries_of(&inv.model, &config, &followed.groups[rank]);
        assert_eq!(parts.near[draft], want, "group at rank {rank}");
    }
    assert!(parts.near.iter().any(|e| !e.is_empty()));
}

/// Outside the attach window, or in a sweep over one argument (more than
/// `MAX_CLASS` groups differing in it), nothing is linked.
#[test]
fn near_duplicates_stay_in_the_window_and_skip_sweeps() {
    let mut seq = 1;
    let mut l = vec![session("s1", 1)];
    // deploy's window is 10 minutes.
    l.extend(call_with(
        &mut seq,
        "x1",
        "10:00:00",
        "deploy",
        r#"{"v":1}"#,
    ));
    l.extend(call_with(
        &mut seq,
        "x2",
        "10:30:00",
        "deploy",
        r#"{"v":2}"#,
    ));
    let inv = investigate(&l, vec![]);
    assert!(near_links(&inv).is_empty());
    let sweep = |n: usize| {
        let mut seq = 1;
        let mut l = vec![session("s1", 1)];
        for i in 0..n {
            l.extend(call_with(
                &mut seq,
                &format!("x{i}"),
                &format!("10:00:{i:02}"),
                "deploy",
                &format!(r#"{{"issue":{}}}"#, 100 + i),
            ));
        }
        near_links(&investigate(&l, vec![])).len()
    };
    assert_eq!(
        sweep(near::MAX_CLASS),
        near::MAX_CLASS * (near::MAX_CLASS - 1)
    );
    assert_eq!(sweep(near::MAX_CLASS + 1), 0);
}

/// Another tool, actor or intent scope is another action, however close
/// the arguments (docs/design.md §5.13).
#[test]
fn near_duplicates_share_tool_actor_and_scope() {
    let mut seq = 1;
    let mut l = vec![session("s1", 1)];
    let base = ("a", "deploy", "run:1");
    l.extend(call_as(&mut seq, "x1", "10:00:00", base, r#"{"v":1}"#));
    l.extend(call_as(
        &mut seq,
        "x2",
        "10:00:10",
        ("a", "publish", "run:1"),
        r#"{"v":2}"#,
    ));
    l.extend(call_as(
        &mut seq,
        "x3",
        "10:00:20",
        ("b", "deploy", "run:1"),
        r#"{"v":3}"#,
    ));
    l.extend(call_as(
        &mut seq,
        "x4",
        "10:00:30",
        ("a", "deploy", "run:2"),
        r#"{"v":4}"#,
    ));
    let inv = investigate(&l, vec![]);
    assert_eq!(inv.analysis.groups.len(), 4);
    assert!(near_links(&inv).is_empty(), "{:?}", near_links(&inv));
    // The same four with the base tool, actor and scope: every pair.
    let mut seq = 1;
    let mut l = vec![session("s1", 1)];
    for (i, at) in ["10:00:00", "10:00:10", "10:00:20", "10:00:30"]
        .iter()
        .enumerate()
    {
        l.extend(call_as(
            &mut seq,
            &format!("x{i}"),
            at,
            base,
            &format!(r#"{{"v":{i}}}"#),
        ));
    }
    assert_eq!(near_links(&investigate(&l, vec![])).len(), 12);
}

/// Many groups of one tool, actor, scope and argument names (a bucket of
/// 600): the 300 retries that changed one field are linked to their
/// attempt and to nothing else; the sweep over the other field links
/// nothing (docs/design.md §5.13).
#[test]
fn a_large_bucket_links_only_its_retries() {
    let mut seq = 1;
    let mut l = vec![session("s1", 1)];
    for i in 0..600 {
        l.extend(call_with(
            &mut seq,
            &format!("x{i}"),
            &format!("10:{:02}:{:02}", i / 2 / 60, i / 2 % 60),
            "deploy",
            &format!(r#"{{"service":"s{}","body":"v{}"}}"#, i / 2, i % 2),
        ));
    }
    let inv = investigate(&l, vec![]);
    assert_eq!(inv.analysis.groups.len(), 600);
    let links = near_links(&inv);
    assert_eq!(links.len(), 600);
    assert!(
        links.iter().all(|(a, b, f)| f == "body"
            && a.replace("v0", "v1") == b.replace("v0", "v1")
            && a != b),
        "{links:?}"
    );
}

/// Keys seen in one group are left out, however often; keys seen in two
/// or more come with every group they were seen in; among many thousands
/// of keys, as a map of every key found them.
#[test]
fn shared_keys_are_those_of_two_groups_or_more() {
    let g = GroupIdx::new;
    let names: Vec<String> = (0..20_000).map(|i| format!("key-{i}")).collect();
    let mut pairs: Vec<(&str, GroupIdx)> = Vec::new();
    for (i, k) in names.iter().enumerate() {
        // Every key three times; each seventh in a second group, each
        // eleventh in a third.
        pairs.push((k, g(i)));
        pairs.push((k, if i % 7 == 0 { g(i + 1) } else { g(i) }));
        pairs.push((k, if i % 11 == 0 { g(i + 2) } else { g(i) }));
    }
    let mut want: std::collections::BTreeMap<&str, BTreeSet<GroupIdx>> = Default::default();
    for &(k, gi) in &pairs {
        want.entry(k).or_default().insert(gi);
    }
    want.retain(|_, s| s.len() > 1);
    // Items without a key among them.
    let items: Vec<Option<(&str, GroupIdx)>> = pairs
        .iter()
        .copied()
        .map(Some)
        .chain([None, None])
        .collect();
    let mut got = super::shared_keys(items.len(), |i| items[i]);
    got.sort();
    let want: Vec<(&str, BTreeSet<GroupIdx>)> = want.into_iter().collect();
    assert_eq!(got, want);
    assert!(got.iter().any(|(_, s)| s.len() == 3));
    assert!(super::shared_keys(3, |_| None::<(&str, GroupIdx)>).is_empty());
}

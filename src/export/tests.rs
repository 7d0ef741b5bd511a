//! A report built for a document ([`Request::abridge`]) renders as the one
//! built whole: the rows left out at build time are counted exactly where
//! the renderer would have left them out.

use super::*;
use crate::query::{DecisionRequest, GroupFilter, Setup};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Markdown of every group of `inv`, built whole and built abridged, for
/// plain and anonymized reports; both must be the same text.
fn assert_abridged_build_renders_the_same(inv: &Investigation, what: &str) {
    for anonymize in [false, true] {
        let build = |abridge: bool| {
            Report::build(
                inv,
                &Request {
                    groups: inv.groups(&GroupFilter::default()),
                    case: inv.case(),
                    anonymize,
                    chain_check: None,
                    abridge,
                },
            )
        };
        let (whole, abridged) = (build(false), build(true));
        assert_eq!(
            Format::Markdown.render(&whole),
            Format::Markdown.render(&abridged),
            "{what}, anonymize {anonymize}"
        );
        for (w, a) in whole.groups.iter().zip(&abridged.groups) {
            assert_eq!(w.sequence_diagram, a.sequence_diagram, "{what}");
            assert_eq!(w.abridged, a.abridged, "{what}");
            assert!(w.left_out.is_none());
            assert_eq!(a.left_out.is_some(), a.abridged, "{what}");
        }
    }
}

fn open(journals: Vec<PathBuf>, case: Option<PathBuf>) -> Investigation {
    let setup = Setup {
        journals,
        case,
        reviewer: Some("alice".into()),
        ..Setup::default()
    };
    Investigation::open(&setup, &mut |_| {}).unwrap()
}

#[test]
fn every_scenario_renders_the_same_abridged_at_build() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-journals/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() > 10);
    let inv = Investigation::open(&Setup::default(), &mut |_| {}).unwrap();
    assert_abridged_build_renders_the_same(&inv, "the sample");
    for f in files {
        let inv = open(vec![f.clone()], Some(f.with_extension("case.sqlite")));
        assert_abridged_build_renders_the_same(&inv, &f.display().to_string());
    }
}

/// One intent repeated `n` times; every seventh execution is left with
/// its outcome unknown (dispatched, nothing after), the rest answered and
/// delivered. Executions overlap in time, so the rows of shown and left
/// out executions interleave.
fn one_intent(dir: &Path, n: usize) -> PathBuf {
    let mut out = String::new();
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-07-22T00:00:00Z").unwrap();
    let mut seq = 0;
    for i in 0..n {
        let x = format!("act_{i:04}");
        let at = |k: usize| (t0 + chrono::Duration::seconds((i * 3 + k * 2) as i64)).to_rfc3339();
        let mut events = vec![
            json!({"event":"accepted","at":at(0),
                "call":{"call_id":format!("call_{i}"),"jsonrpc_id":i,"session_id":"ses_1"},
                "action":{"actor":"agent","tool":"rotate_credential","channel":"http",
                    "target":"vault/credentials","intent_scope":"run:1",
                    "arguments":{"name":"db"}}}),
            json!({"event":"authorized","at":at(1),"decision":"session_grant"}),
            json!({"event":"dispatched","at":at(2)}),
        ];
        if i % 7 != 3 {
            events.push(json!({"event":"outcome","at":at(3),"outcome":"success",
                "observed_via":"response","target_status":200}));
            events.push(json!({"event":"delivered","at":at(4)}));
        }
        for mut v in events {
            seq += 1;
            v["kind"] = "event".into();
            v["seq"] = seq.into();
            v["execution_id"] = x.clone().into();
            out.push_str(&v.to_string());
            out.push('\n');
        }
    }
    let p = dir.join("one-intent.jsonl");
    std::fs::write(&p, out).unwrap();
    p
}

#[test]
fn a_large_group_with_decisions_renders_the_same_abridged_at_build() {
    let d = tempfile::tempdir().unwrap();
    let j = one_intent(d.path(), 150);
    let case = d.path().join("case.sqlite");
    let mut inv = open(vec![j.clone()], Some(case.clone()));
    // Decisions about an execution in the middle (left out) and one near
    // the end (shown).
    for x in ["act_0073", "act_0143"] {
        inv.decide(
            &DecisionRequest {
                execution_id: x.into(),
                decision: Decision::ConfirmedCompleted,
                note: format!("the vault log shows {x}"),
            },
            chrono::Utc::now(),
        )
        .unwrap();
    }
    let inv = open(vec![j], Some(case));
    let groups = inv.groups(&GroupFilter::default());
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].execution_ids().count(), 150);
    assert_abridged_build_renders_the_same(&inv, "one intent, 150 executions");
    let report = Report::build(
        &inv,
        &Request {
            groups,
            case: inv.case(),
            anonymize: false,
            chain_check: None,
            abridge: true,
        },
    );
    let g = &report.groups[0];
    let left_out = g.left_out.as_deref().unwrap();
    let hidden: usize = left_out.iter().map(|l| l.events).sum();
    assert!(g.timeline.len() < 200, "{} rows worded", g.timeline.len());
    // Every event and decision is a row or counted in a gap.
    assert_eq!(g.timeline.len() + hidden, 150 * 5 - 21 * 2 + 2);
    assert!(
        g.timeline.iter().any(
            |r| r.stage == "reviewer_decision" && r.execution_id.as_deref() == Some("act_0143")
        )
    );
    assert!(
        g.timeline
            .iter()
            .all(|r| r.execution_id.as_deref() != Some("act_0073"))
    );
}

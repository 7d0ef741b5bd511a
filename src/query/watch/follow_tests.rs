//! Follow mode's refreshes against opening the journals afresh
//! (docs/design.md §7.7 "Follow mode").

use super::*;
use crate::query::{ExecIdx, GroupFilter};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What the views show of an investigation, as JSON: every group's row
/// (`groups --all --json`) and detail (`investigate --json`, with each
/// execution's events), the journals' reports, the notes, the sessions and
/// their executions, the verdict counts, the call rate, the review queue
/// and every raw line evidence points at.
fn shown(inv: &Investigation) -> serde_json::Value {
    let groups: Vec<_> = inv
        .groups(&GroupFilter {
            all: true,
            ..GroupFilter::default()
        })
        .iter()
        .map(|g| {
            let d = g.detail();
            let events: Vec<_> = d
                .executions_detail
                .iter()
                .map(|x| {
                    let ev = inv.events(x.index);
                    let raw: Vec<_> = ev
                        .iter()
                        .map(|e| inv.raw_line(e.record.source).map_err(|e| e.to_string()))
                        .collect();
                    serde_json::json!({"events": ev, "raw": raw})
                })
                .collect();
            serde_json::json!({"summary": g.summary(), "detail": d, "events": events})
        })
        .collect();
    let sessions: Vec<Vec<&str>> = inv
        .session_executions()
        .iter()
        .map(|xs| xs.iter().map(|&x: &ExecIdx| inv.execution_id(x)).collect())
        .collect();
    serde_json::json!({
        "groups": groups,
        "journals": inv.journals(),
        "notes": inv.notes(),
        "sessions": inv.sessions().iter().map(|s| &s.session_id).collect::<Vec<_>>(),
        "session_executions": sessions,
        "verdict_counts": inv.verdict_counts(),
        "call_rate": inv.call_rate(64),
        "queue": inv.review_queue(),
    })
}

/// Writes `journals` (paths from the repository root, or absolute) into a
/// folder `chunk` lines at a time, the first one first; after every chunk
/// the follow refreshes, and what its investigation shows must be what
/// opening the journals afresh shows. Returns how the refreshes were made.
fn refreshes_as_a_fresh_open(journals: &[&Path], chunk: usize) -> Refreshes {
    followed_refreshes(journals, chunk).0
}

/// [`refreshes_as_a_fresh_open`], also counting the refreshes whose
/// analysis followed the new records rather than analysing everything
/// again.
fn followed_refreshes(journals: &[&Path], chunk: usize) -> (Refreshes, u64) {
    let d = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = journals
        .iter()
        .map(|j| d.path().join(j.file_name().unwrap()))
        .collect();
    let texts: Vec<String> = journals
        .iter()
        .map(|j| std::fs::read_to_string(j).unwrap())
        .collect();
    let mut files: Vec<std::fs::File> = paths
        .iter()
        .map(|p| std::fs::File::create(p).unwrap())
        .collect();
    // Every journal holds its first line when following begins.
    let mut lines: Vec<Vec<&str>> = texts.iter().map(|t| t.lines().rev().collect()).collect();
    for (f, l) in files.iter_mut().zip(&mut lines) {
        if let Some(first) = l.pop() {
            writeln!(f, "{first}").unwrap();
        }
    }
    let mut setup = Setup::new(paths.clone());
    setup.case = Some(d.path().join("none.sqlite"));
    let mut follow = Follow::start(&setup).unwrap();
    let long_ago = Instant::now() - MIN_REFRESH * 10;
    let mut step = 0;
    let (mut followed, mut follows) = (0u64, 0);
    loop {
        follow.poll();
        follow.last_open = Some(long_ago);
        let inv = follow.investigation();
        let now = follow.follows();
        if now > follows {
            followed += 1;
        }
        follows = now;
        match Investigation::open(&setup, &mut |_| {}) {
            Ok(fresh) => assert_eq!(
                shown(&inv.unwrap()),
                shown(&fresh),
                "{journals:?} after chunk {step} ({:?})",
                follow.refreshes()
            ),
            // A first line that is no record yet (a request whose answer
            // is still to come).
            Err(e) => assert_eq!(
                inv.map(|_| ()).map_err(|e| e.to_string()),
                Err(e.to_string())
            ),
        }
        // Journal after journal, a chunk at a time.
        let Some(j) = lines.iter().position(|l| !l.is_empty()) else {
            break;
        };
        for _ in 0..chunk {
            if let Some(l) = lines[j].pop() {
                writeln!(files[j], "{l}").unwrap();
            }
        }
        step += 1;
    }
    (follow.refreshes(), followed)
}

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// Every scenario, written a few lines at a time, refreshes to what a
/// fresh open shows, and by adding the new records, not by reading the
/// journal again.
#[test]
fn every_scenario_refreshes_as_a_fresh_open_by_adding_what_it_gained() {
    let scenarios = scenarios();
    assert!(scenarios.len() > 5);
    let (mut grown, mut followed) = (0, 0);
    for s in &scenarios {
        for chunk in [1, 3] {
            let (r, f) = followed_refreshes(&[s], chunk);
            grown += r.grown;
            followed += f;
        }
    }
    assert!(grown > 100, "{grown} refreshes added records");
    // Most refreshes follow the new records (the others add a session
    // record the calls before named, or come after a reopening).
    assert!(
        followed * 2 > grown,
        "{followed} of {grown} followed the new records"
    );
}

/// The line-based fixtures of every format, and journals read together,
/// refresh to what a fresh open shows (formats that pair lines, and the
/// records of a journal before the last, by opening again).
#[test]
fn every_line_based_fixture_refreshes_as_a_fresh_open() {
    let sample = "sample-journals/deploy-release-incident";
    let cases: Vec<Vec<PathBuf>> = vec![
        vec![repo(&format!("{sample}/activity.jsonl"))],
        vec![
            repo(&format!("{sample}/sessions.jsonl")),
            repo(&format!("{sample}/activity.jsonl")),
        ],
        vec![repo("tests/fixtures/pending-retry.jsonl")],
        vec![repo("tests/fixtures/near-duplicate.jsonl")],
        vec![repo("tests/fixtures/mcpproxy/activity-export.jsonl")],
        vec![
            repo("tests/fixtures/mcp-acp/operations.jsonl"),
            repo("tests/fixtures/mcp-acp/decisions.jsonl"),
        ],
        vec![repo("tests/fixtures/lab/mcp-audit-gateway/audit-log.jsonl")],
        vec![repo("tests/fixtures/lab/otel-sdk/traces.jsonl")],
        vec![repo("tests/fixtures/gh-aw/repeat-after-result.jsonl")],
        vec![repo("tests/fixtures/mcp-audit/checkpoint-chain.jsonl")],
    ];
    for files in cases {
        let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        refreshes_as_a_fresh_open(&refs, 2);
    }
}

/// An execution the model held gains, in one refresh, two events out of
/// time order with each other (a `delivery_failed` at :09 written before a
/// `delivered` at :07): they are put in time order as a fresh open puts
/// them, and the verdict is the fresh open's (`undelivered_result`, not
/// `clean`).
#[test]
fn new_events_out_of_order_with_each_other_refresh_as_a_fresh_open() {
    let journal = repo("tests/fixtures/deliveries-out-of-order.jsonl");
    for chunk in [1, 2, 3, 5] {
        refreshes_as_a_fresh_open(&[&journal], chunk);
    }
}

/// An execution the model held gains its `accepted` record, which moves
/// its start back to the start of one that came after it in the journal:
/// the two are tied, and a fresh open puts them in the order their first
/// records came in the journal, so the refresh must too (it once kept the
/// order they had in the model before).
#[test]
fn an_execution_moved_to_a_tied_start_keeps_the_fresh_opens_order() {
    let journal = repo("tests/fixtures/tied-starts-out-of-order.jsonl");
    for chunk in [1, 2, 3] {
        refreshes_as_a_fresh_open(&[&journal], chunk);
    }
}

/// A real journal from a real gateway, appended to a few lines at a time,
/// refreshes to what a fresh open shows (where the real journals are;
/// under CI they must be).
#[test]
fn a_real_journal_refreshes_as_a_fresh_open() {
    let real = repo("../shared/real-journals/mcp-acp/core-client-wire-e2e.jsonl");
    if !real.exists() {
        let why = format!("{} is not there", real.display());
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("SKIPPED a_real_journal_refreshes_as_a_fresh_open: {why}");
        return;
    }
    refreshes_as_a_fresh_open(&[&real], 25);
}

/// A decision recorded, a bad line and a rotation are not shown by adding
/// records: the journals are opened again.
#[test]
fn a_bad_line_opens_the_journals_again() {
    let super::super::tests::SampleJournal {
        dir: _dir,
        file: mut f,
        lines,
        setup,
    } = super::super::tests::sample_journal(1);
    let mut follow = Follow::start(&setup).unwrap();
    follow.poll();
    follow.investigation().unwrap();
    writeln!(f, "{}", lines[1]).unwrap();
    follow.poll();
    follow.investigation().unwrap();
    assert_eq!(
        follow.refreshes(),
        Refreshes {
            grown: 1,
            reopened: 1
        }
    );
    writeln!(f, "not json").unwrap();
    follow.poll();
    let inv = follow.investigation().unwrap();
    assert_eq!(inv.journals()[0].bad_line_count, 1);
    assert_eq!(
        follow.refreshes(),
        Refreshes {
            grown: 1,
            reopened: 2
        }
    );
    follow.refresh_soon();
    follow.investigation().unwrap();
    assert_eq!(
        follow.refreshes(),
        Refreshes {
            grown: 1,
            reopened: 3
        }
    );
}

/// A poll that read only a session record, or a blank line, changes what
/// the journals show as much as an event does. Only events and bad lines
/// used to make a refresh due, so the view kept the old actors, groups
/// and line counts until the next event.
#[test]
fn lines_without_events_make_a_refresh_due() {
    let super::super::tests::SampleJournal {
        dir: _dir,
        file: mut f,
        lines: _,
        setup,
    } = super::super::tests::sample_journal(6);
    let mut follow = Follow::start(&setup).unwrap();
    follow.poll();
    follow.investigation().unwrap();
    let long_ago = Instant::now() - MIN_REFRESH * 10;
    follow.last_open = Some(long_ago);
    follow.poll();
    assert!(!follow.due(), "nothing was written");
    for line in [
        r#"{"kind":"session","session_id":"ses_late","actor":"signed-process:late","started_at":"2026-07-22T14:00:00Z"}"#,
        "",
    ] {
        writeln!(f, "{line}").unwrap();
        follow.poll();
        follow.last_open = Some(long_ago);
        assert!(follow.due(), "after {line:?}");
        let inv = follow.investigation().unwrap();
        let fresh = Investigation::open(&setup, &mut |_| {}).unwrap();
        assert_eq!(shown(&inv), shown(&fresh), "after {line:?}");
        follow.poll();
        follow.last_open = Some(long_ago);
        assert!(!follow.due(), "refreshed after {line:?}");
    }
}

/// Journals without an audit chain (every scenario with its chain fields
/// taken out) refresh to what a fresh open shows: their reports are
/// counted on rather than read again.
#[test]
fn unchained_journals_refresh_as_a_fresh_open() {
    let d = tempfile::tempdir().unwrap();
    let scenarios = scenarios();
    for s in &scenarios {
        let text = std::fs::read_to_string(s).unwrap();
        let unchained: String = text
            .lines()
            .map(|l| match serde_json::from_str::<serde_json::Value>(l) {
                Ok(serde_json::Value::Object(mut m)) => {
                    m.remove("prev_hash");
                    m.remove("hash");
                    serde_json::Value::Object(m).to_string() + "\n"
                }
                _ => format!("{l}\n"),
            })
            .collect();
        let p = d.path().join(s.file_name().unwrap());
        std::fs::write(&p, unchained).unwrap();
        let inv = Investigation::open(&Setup::new(vec![p.clone()]), &mut |_| {}).unwrap();
        assert!(
            matches!(
                inv.journals()[0].chain,
                crate::journal::chain::ChainStatus::NoChain { .. }
            ),
            "{s:?}"
        );
        let r = refreshes_as_a_fresh_open(&[&p], 2);
        assert!(r.grown > 0, "{s:?}: {r:?}");
    }
}

/// A journal whose later lines reach what the earlier ones made in every
/// way the analysis follows (docs/design.md §7.7): a late outcome and an
/// attached call on held executions, a retry joining a held group, a new
/// intent sharing a held group's idempotency key, a new group that ranks
/// above the held ones, a near duplicate of a held group and a JSON-RPC id
/// of a held call used again. Written a line at a time, every refresh is
/// what a fresh open gives, and the analysis follows the new lines.
#[test]
fn new_lines_that_reach_held_groups_refresh_as_a_fresh_open() {
    let session = r#"{"kind":"session","session_id":"s1","actor":"a","process":{"pid":7,"name":"agent","started_at":"2026-08-04T09:00:00Z"},"mcp_session_id":"m1","authorization":"per_session","started_at":"2026-08-04T09:00:00Z"}"#;
    let mut seq = 0;
    let mut ev = |at: &str, x: &str, event: &str, extra: &str| {
        seq += 1;
        format!(
            r#"{{"kind":"event","seq":{seq},"at":"2026-08-04T{at}Z","execution_id":"{x}","event":"{event}"{extra}}}"#
        )
    };
    let accepted = |id: u32, tool: &str, args: &str, key: &str| {
        let key = if key.is_empty() {
            String::new()
        } else {
            format!(r#","idempotency_key":"{key}""#)
        };
        format!(
            r#","call":{{"call_id":"c{id}","session_id":"s1","jsonrpc_id":{id},"mcp_session_id":"m1","transport":"streamable-http"}},"action":{{"actor":"a","tool":"{tool}","target":"api.example/{tool}","arguments":{args},"intent_scope":"run:1"}}{key}"#
        )
    };
    let done = r#","outcome":"success","target_status":200,"observed_via":"response""#;
    let lines = [
        session.to_string(),
        ev(
            "10:00:00",
            "x1",
            "accepted",
            &accepted(1, "deploy", r#"{"v":1}"#, ""),
        ),
        ev(
            "10:00:01",
            "x1",
            "authorized",
            r#","decision":"session_grant""#,
        ),
        ev("10:00:02", "x1", "dispatched", ""),
        ev(
            "10:01:00",
            "x2",
            "accepted",
            &accepted(2, "charge", r#"{"amount":1}"#, "k"),
        ),
        ev("10:01:01", "x2", "dispatched", r#","idempotency_key":"k""#),
        ev("10:01:02", "x2", "outcome", done),
        ev("10:01:03", "x2", "delivered", ""),
        ev(
            "10:02:00",
            "x3",
            "accepted",
            &accepted(3, "read", r#"{"q":1,"n":5}"#, ""),
        ),
        ev("10:02:01", "x3", "dispatched", ""),
        ev("10:02:02", "x3", "outcome", done),
        ev(
            "10:02:03",
            "x3",
            "delivery_failed",
            r#","error":"stream closed""#,
        ),
        // Held executions reached: a late outcome, an attached call.
        ev(
            "10:03:00",
            "x1",
            "outcome",
            r#","outcome":"unknown","observed_via":"response""#,
        ),
        ev(
            "10:03:10",
            "x3",
            "attached",
            r#","call":{"call_id":"c30","session_id":"s1","jsonrpc_id":30,"mcp_session_id":"m1","transport":"streamable-http"},"recovery":"returned_stored_result""#,
        ),
        ev("10:03:11", "x3", "delivered", ""),
        // A retry joining a held group.
        ev(
            "10:04:00",
            "x4",
            "accepted",
            &accepted(4, "deploy", r#"{"v":1}"#, ""),
        ),
        ev("10:04:01", "x4", "dispatched", ""),
        ev("10:04:02", "x4", "outcome", done),
        // A new intent with the held group's idempotency key.
        ev(
            "10:05:00",
            "x5",
            "accepted",
            &accepted(5, "charge", r#"{"amount":2}"#, "k"),
        ),
        ev("10:05:01", "x5", "dispatched", r#","idempotency_key":"k""#),
        // A new group of two dispatches: it ranks above the held ones.
        ev(
            "10:06:00",
            "x6",
            "accepted",
            &accepted(6, "pay", r#"{"to":"b"}"#, ""),
        ),
        ev("10:06:01", "x6", "dispatched", ""),
        ev("10:06:02", "x6", "outcome", done),
        ev("10:06:03", "x6", "delivered", ""),
        ev(
            "10:06:30",
            "x7",
            "accepted",
            &accepted(7, "pay", r#"{"to":"b"}"#, ""),
        ),
        ev("10:06:31", "x7", "dispatched", ""),
        ev("10:06:32", "x7", "outcome", done),
        // One argument away from a held group; a held call's JSON-RPC id
        // used again for another intent.
        ev(
            "10:07:00",
            "x8",
            "accepted",
            &accepted(8, "read", r#"{"q":2,"n":5}"#, ""),
        ),
        ev("10:07:01", "x8", "dispatched", ""),
        ev(
            "10:08:00",
            "x9",
            "accepted",
            &accepted(3, "list", r#"{"all":true}"#, ""),
        ),
    ];
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("reach.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let (r, followed) = followed_refreshes(&[&p], 1);
    assert_eq!(r.reopened, 1, "{r:?}");
    assert!(r.grown as usize >= lines.len() - 2, "{r:?}");
    assert_eq!(
        followed, r.grown,
        "every refresh that added records followed them"
    );
    let inv = Investigation::open(&Setup::new(vec![p.clone()]), &mut |_| {}).unwrap();
    let flags: Vec<&str> = inv
        .groups(&GroupFilter {
            all: true,
            ..GroupFilter::default()
        })
        .iter()
        .flat_map(|g| g.summary().flags)
        .collect();
    for f in [
        "key_reused_across_intents",
        "near_duplicate",
        "jsonrpc_id_reuse",
    ] {
        assert!(flags.contains(&f), "{f} not in {flags:?}");
    }
}

/// The scenario journals, in name order.
fn scenarios() -> Vec<PathBuf> {
    super::super::tests::scenario_files()
        .iter()
        .map(|s| repo(s))
        .collect()
}

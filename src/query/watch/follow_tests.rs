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
    loop {
        follow.poll();
        follow.last_open = Some(long_ago);
        let inv = follow.investigation();
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
    follow.refreshes()
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
    let mut grown = 0;
    for s in &scenarios {
        for chunk in [1, 3] {
            let r = refreshes_as_a_fresh_open(&[s], chunk);
            grown += r.grown;
        }
    }
    assert!(grown > 100, "{grown} refreshes added records");
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

/// The scenario journals, in name order.
fn scenarios() -> Vec<PathBuf> {
    let mut s: Vec<PathBuf> = std::fs::read_dir(repo("sample-journals/scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    s.sort();
    s
}

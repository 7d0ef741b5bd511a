use super::*;
use std::io::Write;
use std::path::Path;

fn changes(n: &[Notice]) -> Vec<(Verdict, Option<Verdict>, u32)> {
    n.iter()
        .filter_map(|n| match n {
            Notice::Change(c) => Some((
                c.verdict,
                c.previous_verdict,
                c.changed_by.as_ref().map_or(0, |e| e.line),
            )),
            _ => None,
        })
        .collect()
}

/// The sample incident written line by line: the duplicate is
/// reported when the second execution's dispatch is read, at its line.
#[test]
fn the_sample_incident_is_reported_as_it_is_written() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("activity.jsonl");
    let text = include_str!("../../../sample-journals/deploy-release-incident/activity.jsonl");
    let mut f = std::fs::File::create(&p).unwrap();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sample-journals");
    let sessions = d.path().join("sessions.jsonl");
    std::fs::copy(
        format!("{dir}/deploy-release-incident/sessions.jsonl"),
        &sessions,
    )
    .unwrap();
    let mut setup = Setup::new(vec![sessions, p.clone()]);
    setup.contracts = vec![format!("{dir}/contracts.toml").into()];
    setup.key_file = Some(format!("{dir}/sample.key").into());
    setup.case = Some(d.path().join("none.sqlite"));
    let mut w = Watch::open(
        &setup,
        WatchOptions {
            settle: Duration::ZERO,
        },
    )
    .unwrap();
    let mut all = Vec::new();
    for line in text.lines() {
        writeln!(f, "{line}").unwrap();
        let (n, _) = w.poll();
        all.extend(changes(&n));
    }
    // The second execution's dispatch makes it a possible duplicate at
    // once; its outcome (the target acted again) a duplicate.
    let first = all
        .iter()
        .find(|(v, _, _)| v.severity() <= Severity::High)
        .unwrap_or_else(|| panic!("{all:?}"));
    assert_eq!(first.0, Verdict::PossibleDuplicate, "{all:?}");
    let line = |n: u32| text.lines().nth(n as usize - 1).unwrap();
    assert!(line(first.2).contains("dispatched"), "{all:?}");
    assert!(
        all.iter()
            .any(|c| c.0 == Verdict::DuplicateSideEffect
                && c.1 == Some(Verdict::PossibleDuplicate)),
        "{all:?}"
    );
    assert_eq!(w.stats().events, text.lines().count() as u64);
}

/// Writes `journals` (paths from the repository root) into a folder a
/// line at a time, polling after each, and checks that the verdicts
/// the watch ends on are those `retrace groups` gives the whole files.
fn ends_as_groups_does(journals: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let paths: Vec<PathBuf> = journals
        .iter()
        .map(|j| d.path().join(Path::new(j).file_name().unwrap()))
        .collect();
    for p in &paths {
        std::fs::File::create(p).unwrap();
    }
    let mut setup = Setup::new(paths.clone());
    setup.case = Some(d.path().join("none.sqlite"));
    let mut w = Watch::open(
        &setup,
        WatchOptions {
            settle: Duration::ZERO,
        },
    )
    .unwrap();
    let mut last: HashMap<String, Verdict> = HashMap::new();
    for (j, p) in journals.iter().zip(&paths) {
        let text = std::fs::read_to_string(format!("{root}/{j}")).unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
        for line in text.lines() {
            writeln!(f, "{line}").unwrap();
            for n in w.poll().0 {
                match n {
                    Notice::Change(c) => {
                        last.insert(c.group_id.clone(), c.verdict);
                    }
                    Notice::Withdrawn { group_id, .. } => {
                        last.remove(&group_id);
                    }
                    _ => {}
                }
            }
        }
    }
    let inv = crate::query::Investigation::from_sources(
        paths.iter().map(JournalSource::file).collect(),
        &crate::journal::LoadOptions::default(),
        Config::default(),
        &mut |_| {},
    )
    .unwrap();
    let whole: HashMap<String, Verdict> = inv
        .all_groups()
        .map(|g| (g.id().to_string(), g.verdict()))
        .collect();
    for (id, v) in &whole {
        match last.get(id) {
            Some(got) => assert_eq!(got, v, "{journals:?}: group {id}"),
            None => assert_eq!(
                *v,
                Verdict::Clean,
                "{journals:?}: group {id} never reported"
            ),
        }
    }
    for (id, v) in &last {
        assert!(
            whole.contains_key(id) || *v == Verdict::Clean,
            "{journals:?}: group {id} ({v}) is not in the whole files' analysis"
        );
    }
}

/// A gh-aw log written a line at a time, each request and its answer
/// read in different polls, ends as `retrace groups` reads it.
#[test]
fn a_pairing_format_pairs_answers_read_in_a_later_poll() {
    ends_as_groups_does(&["tests/fixtures/gh-aw/repeat-after-result.jsonl"]);
}

/// Every scenario and every line-based format of the fixtures, written
/// a line at a time, ends as `retrace groups` reads it.
#[test]
fn every_line_based_format_ends_as_groups_reads_it() {
    let mut scenarios: Vec<String> = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/sample-journals/scenarios"
    ))
    .unwrap()
    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
    .filter(|n| n.ends_with(".jsonl"))
    .map(|n| format!("sample-journals/scenarios/{n}"))
    .collect();
    scenarios.sort();
    for s in &scenarios {
        ends_as_groups_does(&[s]);
    }
    ends_as_groups_does(&["tests/fixtures/mcpproxy/activity-export.jsonl"]);
    ends_as_groups_does(&[
        "tests/fixtures/mcp-acp/operations.jsonl",
        "tests/fixtures/mcp-acp/decisions.jsonl",
    ]);
    ends_as_groups_does(&["tests/fixtures/lab/mcp-audit-gateway/audit-log.jsonl"]);
    ends_as_groups_does(&["tests/fixtures/lab/otel-sdk/traces.jsonl"]);
    ends_as_groups_does(&["tests/fixtures/lab/openllmetry/traces.jsonl"]);
    ends_as_groups_does(&["tests/fixtures/mcp-audit/checkpoint-chain.jsonl"]);
}

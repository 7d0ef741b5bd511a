use super::*;
use crate::query::Investigation;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A journal in a fresh folder holding the sample incident's first `n`
/// lines, open for appending, with the incident's lines and a setup that
/// reads it (and no case file).
pub(super) struct SampleJournal {
    pub dir: tempfile::TempDir,
    pub file: std::fs::File,
    pub lines: Vec<&'static str>,
    pub setup: Setup,
}

pub(super) fn sample_journal(n: usize) -> SampleJournal {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("activity.jsonl");
    let text = include_str!("../../../sample-journals/deploy-release-incident/activity.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let mut file = std::fs::File::create(&path).unwrap();
    for l in &lines[..n] {
        writeln!(file, "{l}").unwrap();
    }
    let mut setup = Setup::new(vec![path.clone()]);
    setup.case = Some(dir.path().join("none.sqlite"));
    SampleJournal {
        dir,
        file,
        lines,
        setup,
    }
}

/// Every scenario journal, as a path from the repository root
/// (`sample-journals/scenarios/NAME.jsonl`), sorted.
pub(super) fn scenario_files() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/sample-journals/scenarios"
    ))
    .unwrap()
    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
    .filter(|n| n.ends_with(".jsonl"))
    .map(|n| format!("sample-journals/scenarios/{n}"))
    .collect();
    names.sort();
    names
}

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
    let mut w = settled(&setup);
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

/// Writes `journals` (paths from the repository root, or absolute) into a folder a
/// line at a time, polling after each, and checks that the verdicts
/// the watch ends on are those `retrace groups` gives the whole files.
fn ends_as_groups_does(journals: &[&str]) {
    ends_as_groups_does_with(
        journals,
        WatchOptions {
            settle: Duration::ZERO,
            ..WatchOptions::default()
        },
    );
}

/// As [`ends_as_groups_does`], with these options; every change the
/// watch reported, in order, and its counts at the end.
fn ends_as_groups_does_with(
    journals: &[&str],
    options: WatchOptions,
) -> (Vec<Reported>, WatchStats) {
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
    let mut w = Watch::open(&setup, options).unwrap();
    let mut last: HashMap<String, Verdict> = HashMap::new();
    let mut reported = Vec::new();
    for (j, p) in journals.iter().zip(&paths) {
        let text = if Path::new(j).is_absolute() {
            std::fs::read_to_string(j).unwrap()
        } else {
            std::fs::read_to_string(format!("{root}/{j}")).unwrap()
        };
        let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
        for line in text.lines() {
            writeln!(f, "{line}").unwrap();
            for n in w.poll().0 {
                reported.push(reported_of(&n, d.path()));
                match n {
                    Notice::Change(c) => {
                        // Every change names the event behind it (§7.7).
                        assert!(c.changed_by.is_some(), "{journals:?}: {c:?}");
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
    (reported, w.stats())
}

/// Splits an OTLP JSON line export into one file per service in `dir`
/// (each `resourceSpans` entry a line of `<service.name>.jsonl`), as when
/// each service exports its own spans; the files, by service name.
fn split_by_service(traces: &Path, dir: &Path) -> Vec<PathBuf> {
    let mut by_service: std::collections::BTreeMap<String, String> = Default::default();
    for line in std::fs::read_to_string(traces).unwrap().lines() {
        let data: serde_json::Value = serde_json::from_str(line).unwrap();
        for rs in data["resourceSpans"].as_array().unwrap() {
            let service = rs["resource"]["attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["key"] == "service.name")
                .and_then(|a| a["value"]["stringValue"].as_str())
                .unwrap_or("unknown_service")
                .to_string();
            let text = by_service.entry(service).or_default();
            text.push_str(&serde_json::json!({ "resourceSpans": [rs] }).to_string());
            text.push('\n');
        }
    }
    by_service
        .into_iter()
        .map(|(service, text)| {
            let path = dir.join(format!("{service}.jsonl"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect()
}

/// The client's spans and the server's in two files, followed as each
/// grows (the client's file first, then the server's, a line a poll):
/// the watch ends on the verdicts `groups` gives both files, which are
/// one file's. It kept the verdicts of the client's spans read alone
/// (`duplicate_side_effect` for a retry whose first handler was
/// cancelled, `undelivered_result` for a call still to be reviewed).
#[test]
fn a_trace_in_one_file_per_service_is_watched_as_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for system in ["otel-sdk", "openllmetry"] {
        let d = tempfile::tempdir().unwrap();
        let traces = root.join(format!("tests/fixtures/lab/{system}/traces.jsonl"));
        let files = split_by_service(&traces, d.path());
        let mut names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        // The client's file first: its calls are read before their
        // servers' spans arrive.
        names.sort_by_key(|n| !n.ends_with("lab-agent.jsonl"));
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        ends_as_groups_does(&names);
    }
}

/// A watch of `setup` that reports each change at once (no settling).
fn settled(setup: &Setup) -> Watch {
    Watch::open(
        setup,
        WatchOptions {
            settle: Duration::ZERO,
            ..WatchOptions::default()
        },
    )
    .unwrap()
}

/// Every group's verdict as the watch holds it, sorted by id.
fn held_verdicts(w: &Watch) -> Verdicts {
    let mut v: Verdicts = w
        .groups
        .iter()
        .filter_map(|(k, g)| Some((k.id(), g.current?)))
        .filter(|(_, v)| *v != Verdict::Clean)
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The split traces of `system`, followed to their end in `d`: the watch
/// and the files (the client's first).
fn watching_split(system: &str, d: &Path) -> (Watch, Vec<PathBuf>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let traces = root.join(format!("tests/fixtures/lab/{system}/traces.jsonl"));
    let mut files = split_by_service(&traces, d);
    files.sort_by_key(|f| !f.ends_with("lab-agent.jsonl"));
    let mut setup = Setup::new(files.clone());
    setup.case = Some(d.join("none.sqlite"));
    let mut w = settled(&setup);
    while w.poll().1 {}
    (w, files)
}

/// A busy server's file moves on while the client's stays quiet: the
/// client's calls, read again each time a file grows, keep the server
/// spans that answered them after those left the server file's recent
/// lines. They were read as unanswered again (OpenLLMetry's server write,
/// which says the tool finished, was lost), and a server's window read
/// alone before it was read with the client's spans left its spans read
/// alone: a retry whose first handler was cancelled turned
/// `duplicate_side_effect`, a call to review `undelivered_result`.
#[test]
fn a_quiet_clients_calls_keep_their_answers_from_a_busy_servers_file() {
    for system in ["otel-sdk", "openllmetry"] {
        let d = tempfile::tempdir().unwrap();
        let (mut w, files) = watching_split(system, d.path());
        let before = held_verdicts(&w);
        assert!(before.len() >= 4, "{system}: {before:?}");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&files[1])
            .unwrap();
        // Spans of other requests (a health check), each its own trace.
        let lines = crate::journal::follow::PAIRING_WINDOW_LINES as usize + 200;
        let filler = |n: usize| {
            format!(
                r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"lab-tools"}}}}]}},"scopeSpans":[{{"scope":{{"name":"health"}},"spans":[{{"traceId":"{n:032x}","spanId":"{n:016x}","name":"GET /healthz","kind":2,"startTimeUnixNano":"1764586800000000000","endTimeUnixNano":"1764586800001000000"}}]}}]}}]}}"#
            )
        };
        for poll in 0..6 {
            let text: String = (0..lines / 6)
                .map(|k| filler(poll * lines + k + 1) + "\n")
                .collect();
            f.write_all(text.as_bytes()).unwrap();
            while w.poll().1 {}
        }
        assert_eq!(held_verdicts(&w), before, "{system}");
    }
}

/// OpenLLMetry's server write, read with its client's span in the other
/// file, is taken back with the client's window each time it is read
/// again: it was kept, and added again on every poll that read a file's
/// new lines (13 events more each poll).
#[test]
fn a_span_read_with_another_files_is_not_added_again_by_each_poll() {
    let d = tempfile::tempdir().unwrap();
    let (mut w, files) = watching_split("openllmetry", d.path());
    let events = w.stats().events;
    let verdicts = held_verdicts(&w);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&files[1])
        .unwrap();
    for _ in 0..5 {
        f.write_all(b"\n").unwrap();
        while w.poll().1 {}
    }
    assert_eq!(w.stats().events, events);
    assert_eq!(held_verdicts(&w), verdicts);
}

/// OpenLLMetry's server write, read with its client's span in another
/// followed file, is cited at its own line of its own file: a chunk's
/// sources are moved to their place in the file only when they are the
/// chunk's own.
#[test]
fn a_span_read_with_another_files_is_cited_in_its_own_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let traces = root.join("tests/fixtures/lab/openllmetry/traces.jsonl");
    let mut files = split_by_service(&traces, d.path());
    files.sort_by_key(|f| !f.ends_with("lab-agent.jsonl"));
    // Lines before the client's recent ones (blank here), so that the
    // lines read again start far from the file's first line.
    let client = std::fs::read_to_string(&files[0]).unwrap();
    let before = "\n".repeat(crate::journal::follow::PAIRING_WINDOW_LINES as usize + 100);
    std::fs::write(&files[0], format!("{before}{client}")).unwrap();
    let mut setup = Setup::new(files.clone());
    setup.case = Some(d.path().join("none.sqlite"));
    let mut w = Watch::open(&setup, WatchOptions::default()).unwrap();
    w.keep_records();
    for _ in 0..100 {
        if !w.poll().1 {
            break;
        }
    }
    let server = std::fs::read_to_string(&files[1]).unwrap();
    let server: Vec<&str> = server.lines().collect();
    let mut cited = 0;
    for r in w.take_records() {
        let Record::Event { event, .. } = r else {
            continue;
        };
        if event.facts().layer != Some(crate::model::Layer::Server) {
            continue;
        }
        let span = event.extra()["otel.span_id"].as_str().unwrap().to_string();
        let crate::model::SourceRef::Line { journal, line, .. } = event.source else {
            panic!("{:?}", event.source);
        };
        assert_eq!(journal, 1, "span {span}");
        assert!(
            server
                .get(line as usize - 1)
                .is_some_and(|l| l.contains(&span)),
            "span {span} cited at line {line} of the server's {} lines",
            server.len()
        );
        cited += 1;
    }
    assert!(cited >= 13, "{cited} server writes");
}

/// A notice as a test compares it: a change's executions as a set (the
/// order of executions that began at the same instant is not fixed).
pub(super) type Reported = String;

pub(super) fn reported_of(n: &Notice, dir: &Path) -> Reported {
    let text = match n {
        Notice::Change(c) => {
            let mut c = (**c).clone();
            c.execution_ids.sort();
            format!("{c:?}")
        }
        n => format!("{n:?}"),
    };
    text.replace(&dir.display().to_string(), "")
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
    let scenarios = scenario_files();
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

/// Follow mode's query side (docs/design.md §7.7 "Follow mode"): what the
/// journal holds when following begins is not counted as new; lines
/// appended after are, with the newest event's time and the bad lines;
/// a new investigation is due then, and holds the new group, which
/// `verdict_changes` names.
#[test]
fn follow_counts_what_the_journal_gains_and_says_when_to_refresh() {
    let SampleJournal {
        dir: _dir,
        file: mut f,
        lines,
        setup,
    } = sample_journal(8);
    let before = Investigation::open(&setup, &mut |_| {}).unwrap();
    let mut follow = Follow::start(&setup).unwrap();
    let first = follow.poll();
    assert_eq!((first.events, first.bad_lines), (0, 0), "{first:?}");
    // Due once at the start: the journal may have grown since it was
    // opened.
    assert!(follow.due());
    let same = follow.investigation().unwrap();
    assert!(verdict_changes(&before, &same).is_empty());
    assert!(!follow.due(), "nothing new");
    for l in &lines[8..] {
        writeln!(f, "{l}").unwrap();
    }
    writeln!(f, "not json").unwrap();
    let grown = follow.poll();
    assert_eq!(grown.events, (lines.len() - 8) as u64, "{grown:?}");
    assert_eq!(grown.bad_lines, 1);
    assert_eq!(grown.bad[0].line, lines.len() as u32 + 1);
    let newest = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["at"].as_str().map(str::to_string))
        .filter_map(|s| s.parse::<DateTime<Utc>>().ok())
        .max();
    assert_eq!(grown.newest, newest);
    // Not again within the first second.
    assert!(!follow.due());
    follow.last_open = Some(Instant::now() - super::follow::MIN_REFRESH);
    assert!(follow.due());
    let after = follow.investigation().unwrap();
    let changed = verdict_changes(&before, &after);
    assert!(!changed.is_empty());
    for id in &changed {
        let g = after.group(id).unwrap();
        assert_ne!(
            before.group(id).ok().map(|b| b.verdict()),
            Some(g.verdict())
        );
    }
}

/// A native SQLite journal another connection writes is followed by
/// rowid (docs/design.md §7.7 "SQLite journals"): the TUI's follow mode
/// counts its new rows, and the investigation opened again holds them.
#[test]
fn follow_reads_new_rows_of_a_sqlite_journal() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("gateway.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE events (at TEXT, execution_id TEXT, event TEXT, extra JSON);")
        .unwrap();
    let text = include_str!("../../../sample-journals/deploy-release-incident/activity.jsonl");
    let insert = |l: &str| {
        let mut m: serde_json::Map<String, serde_json::Value> = serde_json::from_str(l).unwrap();
        m.remove("kind");
        let mut s = |k: &str| m.remove(k).and_then(|v| v.as_str().map(str::to_string));
        let (at, x, ev) = (s("at"), s("execution_id"), s("event"));
        conn.execute(
            "INSERT INTO events VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![at, x, ev, serde_json::Value::Object(m).to_string()],
        )
        .unwrap();
    };
    let lines: Vec<&str> = text.lines().collect();
    for l in &lines[..5] {
        insert(l);
    }
    let mut setup = Setup::new(vec![db.clone()]);
    setup.case = Some(d.path().join("none.sqlite"));
    let mut follow = Follow::start(&setup).unwrap();
    assert_eq!(follow.poll().events, 0);
    for l in &lines[5..] {
        insert(l);
    }
    let p = follow.poll();
    assert_eq!(p.events, (lines.len() - 5) as u64, "{p:?}");
    assert_eq!(p.bad_lines, 0, "{p:?}");
    let inv = follow.investigation().unwrap();
    let events: usize = inv
        .all_groups()
        .flat_map(|g| g.executions().collect::<Vec<_>>())
        .map(|x| inv.events(x).len())
        .sum();
    assert_eq!(events, lines.len());
}

/// Group ids with their verdicts, sorted by id.
type Verdicts = Vec<(String, Verdict)>;

/// Every group's verdict once the watch has read the journals to their
/// end, and as `retrace groups` gives them.
fn watched_and_loaded(files: &[std::path::PathBuf]) -> (Verdicts, Verdicts) {
    let mut setup = Setup::new(files.to_vec());
    let d = tempfile::tempdir().unwrap();
    setup.case = Some(d.path().join("none.sqlite"));
    let mut w = settled(&setup);
    for _ in 0..10_000 {
        if !w.poll().1 {
            break;
        }
    }
    let mut watched: Verdicts = w
        .groups
        .iter()
        .filter_map(|(k, g)| Some((k.id(), g.current?)))
        .collect();
    watched.sort_by(|a, b| a.0.cmp(&b.0));
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    let mut loaded: Verdicts = inv
        .groups(&crate::query::GroupFilter {
            all: true,
            ..Default::default()
        })
        .iter()
        .map(|g| (g.id().to_string(), g.verdict()))
        .collect();
    loaded.sort_by(|a, b| a.0.cmp(&b.0));
    (watched, loaded)
}

/// An mcp-acp wire log said `possible_duplicate` (a high alert) under
/// watch and `distinct_intent` under groups: the watch judged it with the
/// capabilities of the format in general, not those the reader found in
/// the log (a wire log records delivery).
#[test]
fn a_journal_read_to_its_end_gets_the_verdicts_groups_gives() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases: Vec<Vec<std::path::PathBuf>> = vec![
        vec![root.join("tests/fixtures/mcp-acp/operations.jsonl")],
        vec![root.join("tests/fixtures/mcp-acp/decisions.jsonl")],
        vec![root.join("tests/fixtures/pending-retry.jsonl")],
        vec![root.join("tests/fixtures/near-duplicate.jsonl")],
    ];
    // The real wire log that showed it, where the real journals are.
    let real = root.join("../shared/real-journals/mcp-acp/core-client-wire-e2e.jsonl");
    // The fixtures hold 7 groups; the real log more.
    let mut least = 5;
    if real.exists() {
        cases.push(vec![real]);
        least = 10;
    } else {
        let why = format!("{} is not there", real.display());
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("SKIPPED the real wire log of a_journal_read_to_its_end: {why}");
    }
    let mut groups = 0;
    for files in cases {
        let (watched, loaded) = watched_and_loaded(&files);
        groups += loaded.len();
        assert_eq!(watched, loaded, "{files:?}");
    }
    assert!(groups > least, "{groups} groups");
}

/// While following, a line still being written showed as a bad line and
/// the chain as broken until its newline came, and bad lines alone never
/// brought a new investigation (the journals panel kept saying 0 bad).
#[test]
fn follow_waits_for_a_line_being_written_and_refreshes_for_bad_lines() {
    let SampleJournal {
        dir: _dir,
        file: mut f,
        lines,
        setup,
    } = sample_journal(5);
    let mut follow = Follow::start(&setup).unwrap();
    follow.poll();
    follow.investigation().unwrap();
    let long_ago = Instant::now() - super::follow::PARTIAL_LINE_WAIT;
    // A whole line and half of the next.
    writeln!(f, "{}", lines[5]).unwrap();
    write!(f, "{}", &lines[6][..40]).unwrap();
    f.flush().unwrap();
    assert_eq!(follow.poll().events, 1);
    follow.last_open = Some(long_ago);
    assert!(!follow.due(), "the half-written line is waited for");
    writeln!(f, "{}", &lines[6][40..]).unwrap();
    // Events are counted from the start of following.
    assert_eq!(follow.poll().events, 2);
    assert!(follow.due());
    let inv = follow.investigation().unwrap();
    assert_eq!(inv.journals()[0].bad_line_count, 0);
    // A bad line alone: due, and the new investigation counts it.
    writeln!(f, "garbage three").unwrap();
    let p = follow.poll();
    assert_eq!((p.events, p.bad_lines), (2, 1), "{p:?}");
    follow.last_open = Some(long_ago);
    assert!(follow.due());
    let inv = follow.investigation().unwrap();
    assert_eq!(inv.journals()[0].bad_line_count, 1);
}

/// Options that evict every group at the end of the poll it went quiet
/// in, so that every later event of it is judged on lines read back.
pub(super) fn evicting() -> WatchOptions {
    WatchOptions {
        settle: Duration::ZERO,
        evict_after: Some(Duration::ZERO),
    }
}

pub(super) fn holding() -> WatchOptions {
    WatchOptions {
        settle: Duration::ZERO,
        evict_after: None,
    }
}

/// Every scenario written a line at a time, each group evicted as soon as
/// it is quiet: each late outcome, retry, attached call, shared
/// idempotency key and reviewer-relevant event after the first reads its
/// group back from the file, and the watch reports exactly what a watch
/// holding every event reports, and ends as `retrace groups` does.
#[test]
fn an_evicting_watch_reports_what_a_holding_watch_reports() {
    let mut scenarios = scenario_files();
    scenarios.push("sample-journals/deploy-release-incident/activity.jsonl".into());
    let mut read_back = 0;
    for s in &scenarios {
        let (held, all) = ends_as_groups_does_with(&[s], holding());
        let (evicted, stats) = ends_as_groups_does_with(&[s], evicting());
        assert_eq!(held, evicted, "{s}");
        assert!(stats.evicted_groups > 0, "{s}: {stats:?}");
        // What the summary counts: every execution and group seen, held or
        // let go of.
        assert_eq!(
            (all.executions, all.groups),
            (
                stats.executions + stats.evicted_executions,
                stats.groups + stats.evicted_groups
            ),
            "{s}"
        );
        read_back += stats.read_back;
    }
    assert!(read_back > 50, "{read_back} groups read back");
    // Formats whose reader pairs lines are never evicted.
    for j in [
        "tests/fixtures/gh-aw/repeat-after-result.jsonl",
        "tests/fixtures/lab/otel-sdk/traces.jsonl",
    ] {
        let (held, _) = ends_as_groups_does_with(&[j], holding());
        let (evicted, stats) = ends_as_groups_does_with(&[j], evicting());
        assert_eq!(held, evicted, "{j}");
        assert_eq!(stats.evicted_groups, 0, "{j}");
    }
}

/// The idempotency-key conflict scenario and the duplicate scenario in
/// one journal, a line at a time: the group that carried a key first is
/// evicted when the one sharing it comes, and read back to be judged with
/// it.
#[test]
fn a_key_shared_with_an_evicted_group_reads_it_back() {
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!(
        "{root}/sample-journals/scenarios/idempotency-key-conflict.jsonl"
    ))
    .unwrap();
    let (held, _) = ends_as_groups_does_with(
        &["sample-journals/scenarios/idempotency-key-conflict.jsonl"],
        holding(),
    );
    let (evicted, stats) = ends_as_groups_does_with(
        &["sample-journals/scenarios/idempotency-key-conflict.jsonl"],
        evicting(),
    );
    assert_eq!(held, evicted);
    assert!(stats.read_back > 0, "{stats:?}");
    assert!(
        evicted.iter().any(|c| c.contains("IdempotencyKeyConflict")),
        "{evicted:?}\n{text}"
    );
}

/// Writes `lines` to `path` a line at a time, polling after each; after
/// `rotate_at` lines the file is renamed and a new one is created.
fn write_rotating(lines: &[&str], rotate_at: usize, options: WatchOptions) -> Vec<Reported> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("live.jsonl");
    std::fs::File::create(&p).unwrap();
    let mut setup = Setup::new(vec![p.clone()]);
    setup.case = Some(d.path().join("none.sqlite"));
    let mut w = Watch::open(&setup, options).unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i == rotate_at {
            std::fs::rename(&p, d.path().join("live.jsonl.1")).unwrap();
            f = std::fs::File::create(&p).unwrap();
        }
        writeln!(f, "{line}").unwrap();
        for _ in 0..4 {
            let (n, more) = w.poll();
            out.extend(n.iter().map(|n| reported_of(n, d.path())));
            if !more {
                break;
            }
        }
    }
    out
}

/// A journal whose reader pairs lines, rotated halfway: reading the new
/// file's window again took back the events with the same line numbers in
/// the rotated file too, and a group whose calls straddle the rotation
/// ended withdrawn. The watch ends on what `groups` gives both files.
#[test]
fn a_pairing_window_read_again_keeps_what_the_rotated_file_gave() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text =
        std::fs::read_to_string(root.join("tests/fixtures/lab/otel-sdk/traces.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("live.jsonl");
    std::fs::File::create(&p).unwrap();
    let mut setup = Setup::new(vec![p.clone()]);
    setup.case = Some(d.path().join("none.sqlite"));
    let mut w = settled(&setup);
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    for (i, line) in lines.iter().enumerate() {
        if i == lines.len() / 2 {
            std::fs::rename(&p, d.path().join("live.jsonl.1")).unwrap();
            f = std::fs::File::create(&p).unwrap();
        }
        writeln!(f, "{line}").unwrap();
        while w.poll().1 {}
    }
    let watched = held_verdicts(&w);
    let both = [d.path().join("live.jsonl.1"), p];
    let (_, loaded) = watched_and_loaded(&both);
    let loaded: Verdicts = loaded
        .into_iter()
        .filter(|(_, v)| *v != Verdict::Clean)
        .collect();
    assert!(loaded.len() >= 4, "{loaded:?}");
    assert_eq!(watched, loaded);
}

/// A journal rotated between the first execution of a group and its
/// retry: the evicted group's lines are read back from the renamed file,
/// and the watch reports what a holding watch reports.
#[test]
fn an_evicted_group_is_read_back_from_a_rotated_file() {
    let root = env!("CARGO_MANIFEST_DIR");
    for s in [
        "sample-journals/scenarios/duplicate-side-effect-snapshots.jsonl",
        "sample-journals/scenarios/idempotency-key-conflict.jsonl",
        "sample-journals/scenarios/findings-late-and-cancel.jsonl",
        "sample-journals/deploy-release-incident/activity.jsonl",
    ] {
        let text = std::fs::read_to_string(format!("{root}/{s}")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for at in [lines.len() / 3, lines.len() / 2] {
            let held = write_rotating(&lines, at, holding());
            let evicted = write_rotating(&lines, at, evicting());
            assert_eq!(held, evicted, "{s}, rotated at line {at}");
            assert!(
                held.iter().any(|n| n.starts_with("Rotated")),
                "{s}: {held:?}"
            );
        }
    }
}

/// A long journal of short calls, each its own group: the executions held
/// stay bounded by what one poll reads, while a holding watch holds them
/// all.
#[test]
fn the_executions_held_stay_bounded_on_a_long_journal() {
    let root = env!("CARGO_MANIFEST_DIR");
    let text =
        std::fs::read_to_string(format!("{root}/sample-journals/scenarios/clean.jsonl")).unwrap();
    let template: Vec<&str> = text.lines().filter(|l| l.contains("\"act_CL1\"")).collect();
    assert!(template.len() >= 4, "{template:?}");
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("long.jsonl");
    std::fs::File::create(&p).unwrap();
    let mut setup = Setup::new(vec![p.clone()]);
    setup.case = Some(d.path().join("none.sqlite"));
    let mut evicting = Watch::open(&setup, evicting()).unwrap();
    let mut holding = Watch::open(&setup, holding()).unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    let calls = 3_000;
    let mut most = 0;
    for i in 0..calls {
        for l in &template {
            let l = l
                .replace("act_CL1", &format!("act_{i}"))
                .replace("call_101", &format!("call_{i}"))
                .replace("run:c1", &format!("run:c{i}"));
            writeln!(f, "{l}").unwrap();
        }
        if i % 10 == 9 {
            evicting.poll();
            holding.poll();
            most = most.max(evicting.stats().executions);
        }
    }
    let (e, h) = (evicting.stats(), holding.stats());
    assert_eq!(e.events, h.events);
    assert_eq!(h.executions, calls);
    assert!(most <= 10, "held at most {most} executions: {e:?}");
    assert!(e.evicted_groups >= calls - 10, "{e:?}");
}

/// What an evicted group keeps of its lines reads back as it was.
#[test]
fn line_positions_are_coded_and_read_back_as_they_were() {
    let mut lines = vec![
        evict::LinePos {
            journal: 1,
            generation: 0,
            offset: 10,
            line: 2,
            len: 300,
            hash: 0,
        },
        evict::LinePos {
            journal: 0,
            generation: 2,
            offset: 5_000_000_000,
            line: 40_000_000,
            len: 7,
            hash: 0xdead_beef,
        },
        evict::LinePos {
            journal: 0,
            generation: 2,
            offset: 4_999_999_000,
            line: 39_999_999,
            len: 0,
            hash: 7,
        },
        evict::LinePos {
            journal: 0,
            generation: 0,
            offset: 0,
            line: 1,
            len: u32::MAX,
            hash: u32::MAX,
        },
    ];
    let coded = evict::encode(&mut lines);
    // A few bytes of place a line, and its 4-byte hash.
    assert!(coded.len() < lines.len() * 14, "{} bytes", coded.len());
    assert_eq!(evict::decode(&coded), lines);
}

/// With `keep_records`, a caller gets the records each poll read (a view
/// that refreshes from them), and never the lines read back for an
/// evicted group (they were handed on when first read); without, none are
/// kept.
#[test]
fn the_records_a_poll_read_are_kept_when_asked() {
    let root = env!("CARGO_MANIFEST_DIR");
    let text =
        std::fs::read_to_string(format!("{root}/sample-journals/scenarios/clean.jsonl")).unwrap();
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("j.jsonl");
    std::fs::write(&p, &text).unwrap();
    let mut setup = Setup::new(vec![p.clone()]);
    setup.case = Some(d.path().join("none.sqlite"));
    let mut kept = Watch::open(&setup, evicting()).unwrap();
    kept.keep_records();
    let mut not = Watch::open(&setup, evicting()).unwrap();
    kept.poll();
    not.poll();
    let records = kept.take_records();
    assert_eq!(records.len(), text.lines().count());
    assert!(kept.take_records().is_empty());
    assert!(not.take_records().is_empty());
    // A late event of the evicted execution: its group is read back, and
    // only the new line is handed on.
    assert!(kept.stats().evicted_groups > 0);
    let late = text.lines().rfind(|l| l.contains("\"act_CL1\"")).unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    writeln!(f, "{late}").unwrap();
    kept.poll();
    assert!(kept.stats().read_back > 0, "{:?}", kept.stats());
    assert_eq!(kept.take_records().len(), 1);
}

/// A copy of a journal beside it is followed too: either may be the one
/// that grows (one-shot commands read it once; a watch that dropped the
/// live file for its backup missed every call written after it started).
#[test]
fn a_watch_follows_both_of_two_alike_journals() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tui-follow-before.jsonl"
    ))
    .unwrap();
    // The backup sorts first.
    std::fs::write(d.path().join("backup.jsonl"), &text).unwrap();
    std::fs::write(d.path().join("gateway.jsonl"), &text).unwrap();
    let mut setup = Setup::new(vec![d.path().to_path_buf()]);
    setup.case = Some(d.path().join("none.sqlite"));
    let w = Watch::open(&setup, WatchOptions::default()).unwrap();
    let names = w.journal_names();
    assert_eq!(names.len(), 2, "{names:?}");
    // One-shot, the copy is read once.
    let p = setup.prepare().unwrap();
    assert_eq!(p.sources.len(), 1, "{:?}", p.warnings);
    assert!(
        p.warnings.iter().any(|w| w.contains("is a copy of")),
        "{:?}",
        p.warnings
    );
}

/// A ContextForge-shaped `tool.invoke` span for each client `tools/call`
/// span of `client` (one span a line, as the line export writes them):
/// each in a trace of its own (the gateway does not pass the client's
/// trace context on), naming the client's tool and starting a millisecond
/// into the client's span, written to `gateway.jsonl` in `dir`.
fn gateway_file(client: &Path, dir: &Path) -> PathBuf {
    let mut out = String::new();
    let mut n = 0u64;
    for line in std::fs::read_to_string(client).unwrap().lines() {
        let data: serde_json::Value = serde_json::from_str(line).unwrap();
        for rs in data["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for s in ss["spans"].as_array().unwrap() {
                    let name = s["name"].as_str().unwrap();
                    let Some(tool) = name.split("tools/call ").nth(1) else {
                        continue;
                    };
                    if s["kind"] != 3 {
                        continue;
                    }
                    n += 1;
                    let start: u64 = s["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
                    let end: u64 = s["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
                    let span = serde_json::json!({
                        "traceId": format!("{:032x}", 0xfeed_0000_u64 + n),
                        "spanId": format!("{:016x}", 0xfeed_0000_u64 + n),
                        "name": "tool.invoke",
                        "kind": 1,
                        "startTimeUnixNano": (start + 1_000_000).to_string(),
                        "endTimeUnixNano": end.saturating_sub(1_000_000).max(start + 1_000_000).to_string(),
                        "attributes": [
                            {"key": "tool.name", "value": {"stringValue": tool}},
                            {"key": "success", "value": {"boolValue": true}},
                        ],
                        "status": {"code": 1},
                    });
                    let line = serde_json::json!({"resourceSpans": [{
                        "resource": {"attributes": [
                            {"key": "service.name", "value": {"stringValue": "mcp-gateway"}}
                        ]},
                        "scopeSpans": [{"scope": {"name": "mcpgateway"}, "spans": [span]}],
                    }]});
                    out.push_str(&line.to_string());
                    out.push('\n');
                }
            }
        }
    }
    assert!(n >= 5, "{n} tools/call client spans");
    let p = dir.join("gateway.jsonl");
    std::fs::write(&p, out).unwrap();
    p
}

/// A span of another request (a health check) of `service`, in a trace of
/// its own numbered `n`.
fn health_span(service: &str, n: u64) -> String {
    format!(
        r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"{service}"}}}}]}},"scopeSpans":[{{"scope":{{"name":"health"}},"spans":[{{"traceId":"{n:032x}","spanId":"{n:016x}","name":"GET /healthz","kind":2,"startTimeUnixNano":"1764586800000000000","endTimeUnixNano":"1764586800001000000"}}]}}]}}]}}"#
    )
}

/// The client's file rotated while a gateway's file, whose `tool.invoke`
/// spans are in traces of their own, goes on growing: the gateway's spans,
/// read again with each poll, keep the client spans they were joined to.
/// Kept only while a span of their own trace was still recent, those left
/// with the rotation, and the gateway's spans were read again unjoined:
/// two groups more than `groups` gives the same files.
#[test]
fn a_gateways_spans_keep_their_clients_after_the_clients_file_rotates() {
    let d = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let traces = root.join("tests/fixtures/lab/otel-sdk/traces.jsonl");
    let mut files = split_by_service(&traces, d.path());
    files.sort_by_key(|f| !f.ends_with("lab-agent.jsonl"));
    let client = files[0].clone();
    files.push(gateway_file(&client, d.path()));
    let mut setup = Setup::new(files.clone());
    setup.case = Some(d.path().join("none.sqlite"));
    let mut w = settled(&setup);
    while w.poll().1 {}
    let (_, loaded) = watched_and_loaded(&files);
    let non_clean = |v: Verdicts| -> Verdicts {
        v.into_iter()
            .filter(|(_, v)| *v != Verdict::Clean)
            .collect()
    };
    assert_eq!(held_verdicts(&w), non_clean(loaded), "before the rotation");

    let rotated = d.path().join("lab-agent.jsonl.1");
    std::fs::rename(&client, &rotated).unwrap();
    std::fs::write(&client, health_span("lab-agent", 1) + "\n").unwrap();
    while w.poll().1 {}
    let mut gateway = std::fs::OpenOptions::new()
        .append(true)
        .open(&files[2])
        .unwrap();
    for n in 2..8 {
        writeln!(gateway, "{}", health_span("mcp-gateway", n)).unwrap();
        while w.poll().1 {}
    }
    let mut all = vec![rotated];
    all.extend(files);
    let (_, loaded) = watched_and_loaded(&all);
    let loaded = non_clean(loaded);
    assert!(loaded.len() >= 4, "{loaded:?}");
    assert_eq!(held_verdicts(&w), loaded, "after the rotation");
}

/// One OpenTelemetry file rotated between a call's client spans and the
/// server spans that answer it: the new file's server spans are read with
/// the rotated file's client spans, as `groups` reads both files. They
/// were read alone (partners were looked up only across two or more
/// followed files): the server's spans became calls of an unknown caller,
/// a critical `duplicate_side_effect` no file holds, never withdrawn.
#[test]
fn a_rotated_files_spans_answer_the_new_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text =
        std::fs::read_to_string(root.join("tests/fixtures/lab/otel-sdk/traces.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // (client spans, their server's): deploy_release; send_invoice and
    // get_status.
    for (client, server) in [(1, 2), (7, 8)] {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("traces.jsonl");
        std::fs::write(&p, format!("{}\n", lines[client])).unwrap();
        let mut setup = Setup::new(vec![p.clone()]);
        setup.case = Some(d.path().join("none.sqlite"));
        let mut w = settled(&setup);
        while w.poll().1 {}
        let rotated = d.path().join("traces.jsonl.1");
        std::fs::rename(&p, &rotated).unwrap();
        std::fs::write(&p, "").unwrap();
        while w.poll().1 {}
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        writeln!(f, "{}", lines[server]).unwrap();
        while w.poll().1 {}
        let (_, loaded) = watched_and_loaded(&[rotated, p]);
        let loaded: Verdicts = loaded
            .into_iter()
            .filter(|(_, v)| *v != Verdict::Clean)
            .collect();
        assert!(!loaded.is_empty(), "lines {client}, {server}");
        assert_eq!(held_verdicts(&w), loaded, "lines {client}, {server}");
    }
}

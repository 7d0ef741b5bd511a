//! `retrace watch` on real growing files: the binary follows a journal
//! while the test appends to it (with pauses, a line written in two
//! pieces), rotates it and truncates it, and its stdout is read line by
//! line with generous timeouts. Every child a test starts, it stops.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/sample-journals");
const TIMEOUT: Duration = Duration::from_secs(60);

fn incident() -> Vec<String> {
    std::fs::read_to_string(format!("{SAMPLE}/deploy-release-incident/activity.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A running `retrace watch`, killed when dropped.
struct Watching {
    child: Child,
    out: Receiver<String>,
    err: Receiver<String>,
    /// Lines read so far.
    seen_out: Vec<String>,
    seen_err: Vec<String>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines_of(r: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for l in BufReader::new(r).lines() {
            let Ok(l) = l else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

impl Watching {
    fn start(dir: &Path, journals: &[&Path], extra: &[&str]) -> Watching {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_retrace"));
        cmd.current_dir(dir)
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", dir)
            .arg("watch")
            .args(journals)
            .args([
                "--contracts",
                &format!("{SAMPLE}/contracts.toml"),
                "--key-file",
                &format!("{SAMPLE}/sample.key"),
                "--settle",
                "1s",
                "--interval",
                "100ms",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let out = lines_of(child.stdout.take().unwrap());
        let err = lines_of(child.stderr.take().unwrap());
        let mut w = Watching {
            child,
            out,
            err,
            seen_out: Vec::new(),
            seen_err: Vec::new(),
        };
        // Following has begun once it says so.
        w.wait_err(|l| l.contains("watching"));
        w
    }

    /// The next stdout line that `f` accepts (earlier ones are kept).
    fn wait_out(&mut self, f: impl Fn(&str) -> bool) -> String {
        self.wait(false, f)
    }

    /// The next stderr line that `f` accepts.
    fn wait_err(&mut self, f: impl Fn(&str) -> bool) -> String {
        self.wait(true, f)
    }

    fn wait(&mut self, stderr: bool, f: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + TIMEOUT;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let rx = if stderr { &self.err } else { &self.out };
            match rx.recv_timeout(left) {
                Ok(l) => {
                    let seen = if stderr {
                        &mut self.seen_err
                    } else {
                        &mut self.seen_out
                    };
                    seen.push(l.clone());
                    if f(&l) {
                        return l;
                    }
                }
                Err(_) => panic!(
                    "no such line on {} within {TIMEOUT:?}; stdout {:#?}, stderr {:#?}",
                    if stderr { "stderr" } else { "stdout" },
                    self.seen_out,
                    self.seen_err
                ),
            }
        }
    }

    /// Sends SIGINT (Ctrl-C) and returns the exit status.
    fn interrupt(&mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        self.exit_code()
    }

    fn exit_code(&mut self) -> Option<i32> {
        let end = Instant::now() + TIMEOUT;
        while Instant::now() < end {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("retrace watch did not exit within {TIMEOUT:?}");
    }
}

fn json(l: &str) -> serde_json::Value {
    serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))
}

fn append(p: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(p)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

fn pause() {
    std::thread::sleep(Duration::from_millis(150));
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let sessions = d.path().join("sessions.jsonl");
    std::fs::copy(
        format!("{SAMPLE}/deploy-release-incident/sessions.jsonl"),
        &sessions,
    )
    .unwrap();
    let activity = d.path().join("activity.jsonl");
    std::fs::write(&activity, "").unwrap();
    (d, sessions, activity)
}

/// The incident written line by line, one line in two pieces: the
/// duplicate is reported at the second execution's dispatch, then its
/// outcome; a bad line is reported with its line and following goes on;
/// Ctrl-C exits 0, and nothing was written beside the journals.
#[test]
fn a_growing_journal_is_reported_as_it_grows() {
    let (d, _, activity) = setup();
    let lines = incident();
    let mut w = Watching::start(
        d.path(),
        &[Path::new("sessions.jsonl"), Path::new("activity.jsonl")],
        &["--json"],
    );
    for (i, l) in lines.iter().enumerate() {
        if i == 12 {
            // The second dispatch, written in two pieces.
            let (a, b) = l.split_at(l.len() / 2);
            append(&activity, a);
            pause();
            pause();
            append(&activity, &format!("{b}\n"));
        } else if i == 14 {
            append(&activity, "{\"kind\":\"event\", not json\n");
            append(&activity, &format!("{l}\n"));
        } else {
            append(&activity, &format!("{l}\n"));
        }
        pause();
    }
    let first = json(&w.wait_out(|l| l.contains("possible_duplicate")));
    assert_eq!(first["verdict"], "possible_duplicate");
    assert_eq!(first["previous_verdict"], serde_json::Value::Null);
    assert_eq!(first["severity"], "high");
    assert_eq!(first["tool"], "deploy_release");
    assert_eq!(first["executions"], 2);
    assert_eq!(first["changed_by"]["event"], "dispatched");
    assert_eq!(first["position"], "activity.jsonl:13");
    let dup = json(&w.wait_out(|l| l.contains("duplicate_side_effect")));
    assert_eq!(dup["previous_verdict"], "possible_duplicate");
    assert_eq!(dup["severity"], "critical");
    assert_eq!(dup["group_id"], first["group_id"]);
    assert_eq!(dup["changed_by"]["event"], "outcome");
    let bad = w.wait_err(|l| l.contains("bad line"));
    assert!(bad.contains("activity.jsonl:15:"), "{bad}");
    assert_eq!(w.interrupt(), Some(0));
    let summary = w.wait_err(|l| l.contains("bad lines"));
    assert!(summary.contains("1 bad lines"), "{summary}");
    // Lines after the bad one were still read: every event.
    assert!(summary.contains("watched 20 events"), "{summary}");
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["activity.jsonl", "sessions.jsonl"]);
}

/// Rotation: the first half of the incident in a file renamed away, the
/// rest in a new file under the same name; the duplicate across the two
/// is found, at its line in the new file.
#[test]
fn a_rotated_journal_is_followed_into_its_new_file() {
    let (d, _, activity) = setup();
    let lines = incident();
    let mut w = Watching::start(
        d.path(),
        &[Path::new("sessions.jsonl"), Path::new("activity.jsonl")],
        &["--json"],
    );
    for l in &lines[..10] {
        append(&activity, &format!("{l}\n"));
        pause();
    }
    // Give the watch time to read the old file before it moves.
    std::thread::sleep(Duration::from_millis(400));
    std::fs::rename(&activity, d.path().join("activity.jsonl.1")).unwrap();
    for l in &lines[10..] {
        append(&activity, &format!("{l}\n"));
        pause();
    }
    w.wait_err(|l| l.contains("rotated"));
    let first = json(&w.wait_out(|l| l.contains("possible_duplicate")));
    // Line 13 of the incident is line 3 of the new file.
    assert_eq!(first["position"], "activity.jsonl:3");
    w.wait_out(|l| l.contains("duplicate_side_effect"));
    assert_eq!(w.interrupt(), Some(0));
}

/// Truncation is reported, and the file is followed again from its start;
/// `--exit-on critical` exits 3 at the duplicate; text output names the
/// group and its position.
#[test]
fn a_truncated_journal_is_reported_and_followed_again() {
    let (d, _, activity) = setup();
    let lines = incident();
    // Something that is not the incident, then cut away.
    append(&activity, &format!("{}\n{}\n", lines[0], lines[1]));
    let mut w = Watching::start(
        d.path(),
        &[Path::new("sessions.jsonl"), Path::new("activity.jsonl")],
        &["--exit-on", "critical"],
    );
    std::thread::sleep(Duration::from_millis(400));
    std::fs::write(&activity, "").unwrap();
    w.wait_err(|l| l.contains("truncated"));
    for l in &lines[5..] {
        append(&activity, &format!("{l}\n"));
        pause();
    }
    let high = w.wait_out(|l| l.contains("possible_duplicate"));
    assert!(high.starts_with("HIGH"), "{high}");
    assert!(high.contains("deploy_release"), "{high}");
    assert!(high.contains("activity.jsonl:8"), "{high}");
    let crit = w.wait_out(|l| l.contains("duplicate_side_effect"));
    assert!(crit.starts_with("CRITICAL"), "{crit}");
    assert!(crit.contains("(was possible_duplicate)"), "{crit}");
    assert_eq!(w.exit_code(), Some(3));
}

/// A truncation that takes a printed duplicate's executions away
/// (docs/design.md §7.7 "Truncation and rewrites"): the group is said to
/// be withdrawn, as the file as it now is holds no such duplicate, rather
/// than left standing because it was still held (this test is quicker
/// than the 5 s after which a quiet group is let go of, which dropped its
/// lines); its retry written again is a group of one execution, and the
/// summary counts what the file holds now.
#[test]
fn a_truncation_that_takes_a_duplicate_away_withdraws_it() {
    let (d, _, activity) = setup();
    let lines = incident();
    let mut w = Watching::start(
        d.path(),
        &[Path::new("sessions.jsonl"), Path::new("activity.jsonl")],
        &["--json"],
    );
    for l in &lines[..15] {
        append(&activity, &format!("{l}\n"));
        pause();
    }
    let dup = json(&w.wait_out(|l| l.contains("duplicate_side_effect")));
    std::thread::sleep(Duration::from_millis(400));
    std::fs::write(&activity, "").unwrap();
    w.wait_err(|l| l.contains("truncated"));
    let gone = json(&w.wait_out(|l| l.contains("withdrawn")));
    assert_eq!(gone["group_id"], dup["group_id"]);
    assert_eq!(gone["previous_verdict"], "duplicate_side_effect");
    // The retry alone.
    for l in &lines[10..15] {
        append(&activity, &format!("{l}\n"));
        pause();
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(w.interrupt(), Some(0));
    let summary = w.wait_err(|l| l.contains("bad lines"));
    assert!(summary.contains("1 executions in 1 groups"), "{summary}");
    while let Ok(l) = w.out.recv_timeout(Duration::from_millis(300)) {
        w.seen_out.push(l);
    }
    assert!(
        !w.seen_out
            .iter()
            .skip_while(|l| !l.contains("withdrawn"))
            .any(|l| l.contains("duplicate") && !l.contains("withdrawn")),
        "{:#?}",
        w.seen_out
    );
}

/// A journal rewritten with other lines, longer than what was read, between
/// two polls: said to be rewritten (not read on from the middle of a
/// line), and read again from its start.
#[test]
fn a_journal_rewritten_longer_is_said_and_read_again() {
    let (d, _, activity) = setup();
    let lines = incident();
    append(&activity, &format!("{}\n", lines[..5].join("\n")));
    let mut w = Watching::start(
        d.path(),
        &[Path::new("sessions.jsonl"), Path::new("activity.jsonl")],
        &["--json"],
    );
    std::thread::sleep(Duration::from_millis(400));
    // The same inode, written over from its start: the incident from its
    // second call on.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(&activity)
        .unwrap();
    f.write_all(format!("{}\n", lines[5..].join("\n")).as_bytes())
        .unwrap();
    drop(f);
    let said = w.wait_err(|l| l.contains("rewritten"));
    assert!(said.contains("activity.jsonl"), "{said}");
    let dup = json(&w.wait_out(|l| l.contains("duplicate_side_effect")));
    // Read in one poll: the group's newest event, the retry's delivery,
    // line 15 of the incident and 10 of the file now.
    assert_eq!(dup["position"], "activity.jsonl:10");
    assert_eq!(w.interrupt(), Some(0));
    let summary = w.wait_err(|l| l.contains("bad lines"));
    assert!(summary.contains("; 0 bad lines"), "{summary}");
}

/// Text from journals is escaped before it reaches the terminal.
#[test]
fn journal_text_is_escaped() {
    let (d, _, activity) = setup();
    let lines = incident();
    let mut w = Watching::start(
        d.path(),
        &[Path::new("sessions.jsonl"), Path::new("activity.jsonl")],
        &[],
    );
    for l in &lines[5..15] {
        // The escape sequence as JSON writes it: the actor holds a real ESC.
        let l = l.replace(
            "signed-process:com.example.agent",
            "signed-process:\\u001b[31mevil",
        );
        append(&activity, &format!("{l}\n"));
        pause();
    }
    let crit = w.wait_out(|l| l.contains("duplicate_side_effect"));
    assert!(!crit.contains('\u{1b}'), "{crit:?}");
    assert!(crit.contains("evil"), "{crit}");
    assert_eq!(w.interrupt(), Some(0));
}

/// Inserts a native record as a row of `table`: its `seq`, `at`,
/// `execution_id` and `event` as columns, every other field in `extra`.
fn insert_row(conn: &rusqlite::Connection, table: &str, record: &str) {
    let mut m: serde_json::Map<String, serde_json::Value> = serde_json::from_str(record).unwrap();
    m.remove("kind");
    let mut take = |k: &str| match m.remove(k) {
        Some(serde_json::Value::String(s)) => Some(s),
        Some(v) => Some(v.to_string()),
        None => None,
    };
    if table == "sessions" {
        let id = take("session_id");
        conn.execute(
            "INSERT INTO sessions (session_id, extra) VALUES (?1, ?2)",
            rusqlite::params![id, serde_json::Value::Object(m).to_string()],
        )
        .unwrap();
    } else {
        let (seq, at, x, ev) = (take("seq"), take("at"), take("execution_id"), take("event"));
        let seq: Option<i64> = seq.map(|s| s.parse().unwrap());
        conn.execute(
            "INSERT INTO events (seq, at, execution_id, event, extra) VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![seq, at, x, ev, serde_json::Value::Object(m).to_string()],
        )
        .unwrap();
    }
}

/// A native SQLite journal another process writes (docs/design.md §7.7
/// "SQLite journals"): the incident inserted a row at a time from another
/// connection while `watch --json` runs; the duplicate is reported at the
/// second dispatch's row, then its outcome; a bad row is reported with its
/// row and following goes on.
#[test]
fn a_sqlite_journal_written_by_another_connection_is_followed() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("gateway.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE sessions (session_id TEXT, extra JSON);
         CREATE TABLE events (seq INTEGER, at TEXT, execution_id TEXT, event TEXT, extra JSON);",
    )
    .unwrap();
    let sessions =
        std::fs::read_to_string(format!("{SAMPLE}/deploy-release-incident/sessions.jsonl"))
            .unwrap();
    for l in sessions.lines() {
        insert_row(&conn, "sessions", l);
    }
    let mut w = Watching::start(d.path(), &[Path::new("gateway.db")], &["--json"]);
    for (i, l) in incident().iter().enumerate() {
        if i == 14 {
            conn.execute(
                "INSERT INTO events (seq, at, execution_id, event) VALUES (99, 'not a time', 'act_x', 'accepted')",
                [],
            )
            .unwrap();
        }
        insert_row(&conn, "events", l);
        pause();
    }
    let first = json(&w.wait_out(|l| l.contains("possible_duplicate")));
    assert_eq!(first["verdict"], "possible_duplicate");
    assert_eq!(first["tool"], "deploy_release");
    assert_eq!(first["executions"], 2);
    assert_eq!(first["changed_by"]["event"], "dispatched");
    assert_eq!(first["changed_by"]["journal"], "gateway.db");
    assert_eq!(first["position"], "gateway.db:13");
    let dup = json(&w.wait_out(|l| l.contains("duplicate_side_effect")));
    assert_eq!(dup["previous_verdict"], "possible_duplicate");
    assert_eq!(dup["group_id"], first["group_id"]);
    let bad = w.wait_err(|l| l.contains("bad line"));
    assert!(bad.contains("gateway.db:15:"), "{bad}");
    assert_eq!(w.interrupt(), Some(0));
    let summary = w.wait_err(|l| l.contains("bad lines"));
    assert!(summary.contains("watched 20 events"), "{summary}");
    assert!(summary.contains("1 bad lines"), "{summary}");
}

//! Reviewer decisions and exports in the TUI, driven headlessly: actions
//! in, screens out (TestBackend); background jobs are run here, one
//! message at a time, as the event loop would run them on their thread.
//!
//! Every test works on a copy of tests/fixtures/pending-retry.jsonl in a
//! temporary folder, so that the case file is created beside it.

mod tui_support;

use ratatui::layout::Rect;
use retrace::journal::chain::ChainStatus;
use retrace::query::{Investigation, Setup};
use retrace::review::case;
use retrace::tui::app::Effect;
use retrace::tui::dialog::Dialog;
use retrace::tui::jobs;
use retrace::tui::theme::Theme;
use retrace::tui::{Action, App};
use std::path::{Path, PathBuf};
use tui_support::{assert_safe, draw, text};

const J: &str = "pending-retry.jsonl";
const W: u16 = 160;
const H: u16 = 48;

fn common(reviewer: Option<&str>, read_only: bool, case: Option<PathBuf>) -> Setup {
    Setup {
        case,
        reviewer: reviewer.map(str::to_string),
        read_only,
        ..Setup::default()
    }
}

/// A temporary folder with a copy of the fixture.
fn folder() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join(J);
    std::fs::copy(tui_support::fixture(J), &j).unwrap();
    (d, j)
}

/// The App as `retrace JOURNAL` builds it: the setup (case file beside the
/// journal, its decisions applied), analysis; exports go to the journal's
/// folder.
fn open_app(journal: &Path, c: &Setup) -> App {
    let setup = Setup {
        journals: vec![journal.to_path_buf()],
        ..c.clone()
    };
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    let mut a = App::ready(inv, Theme::dark(), Rect::new(0, 0, W, H));
    a.export_dir = journal.parent().unwrap().to_path_buf();
    a
}

fn screen(a: &App) -> String {
    let buf = draw(a, W, H);
    assert_safe(&buf, "screen");
    text(&buf)
}

/// Runs the jobs the App asked for, handing each message over as the event
/// loop does, and returns the screen after each message.
fn run_jobs(a: &mut App) -> Vec<String> {
    let mut screens = Vec::new();
    let effects: Vec<Effect> = a.effects.drain(..).collect();
    for e in effects {
        let Effect::Job(job) = e else { continue };
        let data = a.shared_data().unwrap();
        let mut msgs = Vec::new();
        let last = jobs::run(*job, &data, &mut |m| msgs.push(m));
        drop(data);
        msgs.extend(last);
        for m in msgs {
            a.on_job(m);
            screens.push(screen(a));
        }
    }
    screens
}

fn type_text(a: &mut App, s: &str) {
    for c in s.chars() {
        a.update(Action::TextChar(c));
    }
}

const NOTE: &str = "vault audit log shows the rotation at 09:02:07";

#[test]
fn a_decision_is_recorded_the_verdict_changes_and_a_new_start_shows_it() {
    let (d, journal) = folder();
    let c = common(Some("alice"), false, None);
    let mut a = open_app(&journal, &c);
    let case_path = d.path().join(case::DEFAULT_FILE_NAME);

    // The overview points at the queue.
    let s = screen(&a);
    assert!(s.contains("Review queue: 1 waiting"), "{s}");

    // The queue shows the original activity record.
    a.update(Action::ShowReview);
    let s = screen(&a);
    for want in [
        "act_R1",
        "outcome_unknown",
        "possible_duplicate",
        "vault.acme.example/credentials",
        "2026-08-03 09:02:05.000Z",
        "timeout after 30s",
        "call_7",
        "act_R2",
        "did not attach to it",
        "decisions       none yet",
    ] {
        assert!(s.contains(want), "{want:?} missing:\n{s}");
    }

    // Select → note → confirm.
    a.update(Action::Decide);
    assert!(matches!(a.dialog, Some(Dialog::Decide(_))));
    a.update(Action::Submit); // confirmed_completed, the first choice
    type_text(&mut a, NOTE);
    let s = screen(&a);
    assert!(s.contains(NOTE), "{s}");
    a.update(Action::Submit);
    let s = screen(&a);
    assert!(
        s.contains("Record confirmed_completed for act_R1 as alice?"),
        "{s}"
    );
    assert!(s.contains("duplicate side effect"), "{s}");
    // Nothing is written before the explicit confirmation.
    assert!(!case_path.exists());
    assert!(a.effects.is_empty());

    a.update(Action::Confirm);
    let s = screen(&a);
    assert!(s.contains("Recording confirmed_completed"), "{s}");
    let screens = run_jobs(&mut a);
    assert!(
        screens
            .iter()
            .any(|s| s.contains("Recorded confirmed_completed as case file entry 1")),
        "{screens:#?}"
    );
    assert!(
        screens.iter().any(|s| s.contains("analysing again")),
        "{screens:#?}"
    );
    assert!(a.dialog.is_none());
    assert!(a.job.is_none());

    // The case file holds one decision, chain intact, guards in place.
    let v = case::verify(&case_path).unwrap();
    assert!(
        matches!(&v.chain.status, ChainStatus::Intact { lines: 1, .. }),
        "{v:?}"
    );
    assert!(v.append_only_guards);

    // The verdict changed, and the screen says who decided and when.
    let s = screen(&a);
    let last = message(&s);
    assert!(
        last.contains("recorded act_R1 confirmed_completed · group"),
        "{last}"
    );
    assert!(
        last.contains("possible_duplicate → duplicate_side_effect · by alice at"),
        "{last}"
    );
    // Whole, wrapped onto more lines when it is longer than the screen.
    assert!(last.contains(", case entry 1"), "{last}");
    assert!(s.contains("Nothing waits for a reviewer"), "{s}");
    assert!(s.contains("Decisions in the case file (1)"), "{s}");
    assert!(s.contains("by alice at"), "{s}");
    assert!(s.contains("now duplicate_side_effect"), "{s}");
    assert!(s.contains(NOTE), "{s}");
    // The decided execution left the queue: d has nothing to decide.
    a.update(Action::Decide);
    assert!(a.dialog.is_none());
    let s = screen(&a);
    assert!(message(&s).contains("nothing waits for a reviewer"), "{s}");
    assert_verdict_with_provenance(&mut a);

    // A new start on the same journal and case file shows the decision.
    let mut b = open_app(&journal, &common(Some("bob"), false, None));
    let s = screen(&b);
    assert!(s.contains("No execution waits for a reviewer"), "{s}");
    assert!(s.contains("1 decision in the case file"), "{s}");
    assert!(s.contains("reviewed by alice"), "{s}");
    b.update(Action::ShowReview);
    let s = screen(&b);
    assert!(s.contains("act_R1 confirmed_completed by alice"), "{s}");
    assert_verdict_with_provenance(&mut b);
    drop(d);
}

/// Groups → detail → execution: each says the verdict rests on alice's
/// decision.
fn assert_verdict_with_provenance(a: &mut App) {
    a.update(Action::ShowGroups);
    let s = screen(a);
    let row = s
        .lines()
        .find(|l| l.contains("rotate_credential"))
        .unwrap_or_default();
    assert!(row.contains("duplicate_side_effect"), "{s}");
    assert!(row.contains("✎ alice"), "{s}");
    a.update(Action::Open);
    let s = screen(a);
    assert!(s.contains("DUPLICATE_SIDE_EFFECT"), "{s}");
    assert!(
        s.contains("✎ act_R1: alice decided confirmed_completed at"),
        "{s}"
    );
    // The settled lane says so, with no unknown badge or dotted line.
    // (the decision may go on the lane head's second line).
    let lines: Vec<&str> = s.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.contains("▶ act_R1 "))
        .unwrap_or_default();
    let lane = lines[head..(head + 2).min(lines.len())].join(" ");
    assert!(lane.contains("✎ confirmed completed by alice 20"), "{s}");
    assert!(!s.contains("OUTCOME UNKNOWN"), "{s}");
    assert!(!s.contains('┄'), "{s}");
    a.update(Action::Open);
    let s = screen(a);
    assert!(s.contains("execution act_R1"), "{s}");
    assert!(s.contains("✎ alice decided confirmed_completed at"), "{s}");
    a.update(Action::ShowOverview);
}

#[test]
fn read_only_mode_refuses_decisions_and_exports() {
    let (d, journal) = folder();
    let mut a = open_app(&journal, &common(Some("alice"), true, None));
    a.update(Action::ShowReview);
    let s = screen(&a);
    assert!(s.contains("READ-ONLY: decisions disabled"), "{s}");
    a.update(Action::Decide);
    assert!(a.dialog.is_none());
    let s = screen(&a);
    assert!(
        message(&s).contains("read-only mode (--read-only): decisions are disabled"),
        "{s}"
    );
    a.update(Action::ShowGroups);
    a.update(Action::Export);
    assert!(a.dialog.is_none());
    let s = screen(&a);
    assert!(s.contains("exports are disabled"), "{s}");
    assert!(a.effects.is_empty());
    // Nothing was written.
    let names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from(J)]);
}

#[test]
fn cancel_and_refusals_write_nothing() {
    let (d, journal) = folder();
    let mut a = open_app(&journal, &common(Some("alice"), false, None));
    a.update(Action::ShowReview);
    // Esc in the note cancels.
    a.update(Action::Decide);
    a.update(Action::Submit);
    type_text(&mut a, "half a thought");
    a.update(Action::Cancel);
    assert!(a.dialog.is_none());
    assert!(screen(&a).contains("decision cancelled: nothing was recorded"));
    // An empty note is refused by the flow, in the dialog.
    a.update(Action::Decide);
    a.update(Action::Down);
    a.update(Action::Down); // escalated
    a.update(Action::Submit);
    a.update(Action::Submit);
    let s = screen(&a);
    assert!(s.contains("a decision needs a note"), "{s}");
    // n in the confirmation goes back to the note, keeping it.
    type_text(&mut a, "ask the vault team");
    a.update(Action::Submit);
    a.update(Action::Back);
    let s = screen(&a);
    assert!(s.contains("ask the vault team"), "{s}");
    assert!(s.contains("Note (required)"), "{s}");
    a.update(Action::Cancel);
    assert!(!d.path().join(case::DEFAULT_FILE_NAME).exists());
    assert!(a.effects.is_empty());

    // Without a reviewer name, the key says what to do.
    let mut b = open_app(&journal, &common(None, false, None));
    b.update(Action::ShowReview);
    b.update(Action::Decide);
    assert!(b.dialog.is_none());
    assert!(screen(&b).contains("--reviewer NAME"));
}

#[test]
fn a_case_file_that_cannot_be_written_is_a_message_not_a_crash() {
    let (d, journal) = folder();
    // A case file in a folder that does not exist.
    let bad = d.path().join("no-such-folder").join("case.sqlite");
    let mut a = open_app(&journal, &common(Some("alice"), false, Some(bad.clone())));
    a.update(Action::ShowReview);
    a.update(Action::Decide);
    a.update(Action::Submit);
    type_text(&mut a, "seen in the vault log");
    a.update(Action::Submit);
    a.update(Action::Confirm);
    run_jobs(&mut a);
    let s = screen(&a);
    // The dialog is back at the confirmation with the error; y retries.
    assert!(s.contains("not recorded"), "{s}");
    assert!(s.contains("no-such-folder"), "{s}");
    assert!(s.contains("Confirm the decision"), "{s}");
    assert!(a.job.is_none());
    assert!(!bad.exists());
    // The verdict did not change.
    a.update(Action::Cancel);
    a.update(Action::ShowGroups);
    assert!(screen(&a).contains("possible_duplicate"));
}

#[test]
fn a_broken_case_file_chain_refuses_decisions() {
    let (d, journal) = folder();
    // An escalation recorded, then rewritten around the triggers.
    let setup = Setup {
        journals: vec![journal.clone()],
        ..common(Some("alice"), false, None)
    };
    let mut inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    let id = inv.review_queue()[0].execution_id.clone();
    let request = retrace::query::DecisionRequest {
        execution_id: id,
        decision: retrace::query::Decision::Escalated,
        note: "ask the vault team".into(),
    };
    inv.decide(&request, chrono::Utc::now()).unwrap();
    let conn = rusqlite::Connection::open(d.path().join(case::DEFAULT_FILE_NAME)).unwrap();
    conn.execute_batch(
        "DROP TRIGGER entries_append_only_update;
         UPDATE entries SET payload = replace(payload, 'vault', 'other') WHERE seq = 1;",
    )
    .unwrap();
    drop(conn);
    let mut a = open_app(&journal, &common(Some("alice"), false, None));
    let s = screen(&a);
    assert!(
        s.contains("Case file chain broken at entry 1 (changed_line)"),
        "{s}"
    );
    a.update(Action::ShowReview);
    a.update(Action::Decide);
    assert!(a.dialog.is_none());
    let s = screen(&a);
    assert!(
        message(&s).contains("a broken case file chain is never extended"),
        "{s}"
    );
}

#[test]
fn export_writes_the_markdown_postmortem_of_the_group_and_of_the_list() {
    let (d, journal) = folder();
    let mut a = open_app(&journal, &common(Some("alice"), false, None));
    // From the group detail: the default name is retrace-<group>.md.
    a.update(Action::ShowGroups);
    a.update(Action::Open);
    let gid = match a.current::<retrace::tui::screens::detail::Detail>() {
        Some(st) => st.detail.summary.group_id.clone(),
        None => panic!("not on the detail screen"),
    };
    a.update(Action::Export);
    let s = screen(&a);
    assert!(s.contains(&format!("retrace-{gid}.md")), "{s}");
    a.update(Action::Submit);
    run_jobs(&mut a);
    let path = d.path().join(format!("retrace-{gid}.md"));
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(md.contains(&gid), "{md}");
    assert!(md.contains("sequenceDiagram"), "{md}");
    let s = screen(&a);
    assert!(s.contains("wrote the Markdown postmortem of group"), "{s}");
    assert!(s.contains(&format!("retrace-{gid}.md")), "{s}");

    // Again: the file exists, so Enter asks once more before replacing it.
    a.update(Action::Export);
    a.update(Action::Submit);
    assert!(a.effects.is_empty());
    assert!(screen(&a).contains("Enter again replaces it"));
    a.update(Action::Submit);
    assert_eq!(a.effects.len(), 1);
    assert!(a.dialog.is_none(), "the export runs in the background");
    assert!(screen(&a).contains("⧗ writing"));
    run_jobs(&mut a);

    // From the groups table, under another name: every listed group.
    a.update(Action::Back);
    a.update(Action::Export);
    for _ in 0.."retrace-groups.md".len() {
        a.update(Action::TextBackspace);
    }
    type_text(&mut a, "all.md");
    a.update(Action::Submit);
    run_jobs(&mut a);
    let md = std::fs::read_to_string(d.path().join("all.md")).unwrap();
    assert!(md.contains(&gid), "{md}");
    // Esc cancels without writing.
    a.update(Action::Export);
    a.update(Action::Cancel);
    assert!(a.effects.is_empty());
    assert!(!d.path().join("retrace-groups.md").exists());
}

#[test]
fn a_job_that_stops_on_an_internal_error_does_not_leave_the_ui_waiting() {
    let (_d, journal) = folder();
    let mut a = open_app(&journal, &common(Some("alice"), false, None));
    a.update(Action::ShowReview);
    a.update(Action::Decide);
    a.update(Action::Submit);
    type_text(&mut a, "seen");
    a.update(Action::Submit);
    a.update(Action::Confirm);
    assert!(a.job.is_some());
    // What the job thread sends when the job panics.
    a.effects.clear();
    a.on_job(jobs::JobMsg::Failed("index out of bounds".into()));
    assert!(a.dialog.is_none());
    assert!(a.job.is_none());
    let s = screen(&a);
    assert!(
        message(&s).contains("the background job stopped (index out of bounds)"),
        "{s}"
    );
    // Keys work again.
    a.update(Action::ShowGroups);
    assert!(screen(&a).contains("possible_duplicate"));
}

#[test]
fn the_job_thread_lets_go_of_the_data_before_its_last_message() {
    let (_d, journal) = folder();
    let mut a = open_app(&journal, &common(Some("alice"), false, None));
    a.update(Action::ShowReview);
    a.update(Action::Decide);
    a.update(Action::Submit);
    type_text(&mut a, NOTE);
    a.update(Action::Submit);
    a.update(Action::Confirm);
    let Some(Effect::Job(job)) = a.effects.pop() else {
        panic!("no job")
    };
    // As the event loop does: the job on its thread, messages over a
    // channel, applied one by one as they arrive.
    let (tx, rx) = std::sync::mpsc::channel();
    jobs::spawn(*job, a.shared_data().unwrap(), move |m| {
        let _ = tx.send(m);
    });
    for m in rx {
        a.on_job(m);
    }
    let s = screen(&a);
    let last = message(&s);
    assert!(
        last.contains("possible_duplicate → duplicate_side_effect"),
        "{last}"
    );
    assert!(a.dialog.is_none() && a.job.is_none());
}

#[test]
fn an_export_never_writes_over_the_journal() {
    let (_d, journal) = folder();
    let before = std::fs::read(&journal).unwrap();
    let mut a = open_app(&journal, &common(Some("alice"), false, None));
    a.update(Action::ShowGroups);
    a.update(Action::Export);
    for _ in 0.."retrace-groups.md".len() {
        a.update(Action::TextBackspace);
    }
    type_text(&mut a, J);
    a.update(Action::Submit);
    // The file exists: Enter again would replace it.
    a.update(Action::Submit);
    run_jobs(&mut a);
    let s = screen(&a);
    let last = message(&s);
    assert!(
        last.contains("which retrace reads: refusing to write over it"),
        "{last}"
    );
    assert_eq!(std::fs::read(&journal).unwrap(), before);
}

/// The message at the bottom of the screen, whole: it starts with `▸` and
/// wraps onto the lines below (else the key line).
fn message(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    match lines.iter().rposition(|l| l.starts_with(" ▸ ")) {
        Some(p) if lines[p..].iter().all(|l| l.starts_with(' ')) => lines[p..]
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" "),
        _ => lines.last().copied().unwrap_or_default().to_string(),
    }
}

/// The queue's STATUS column and the record's heading say what waits, as
/// `retrace review list` does: an execution whose delivery nobody can see
/// has status `clean` on its own, and was shown as `clean`, though a
/// reviewer is asked whether its result reached the agent.
#[test]
fn the_queue_says_what_waits_not_the_executions_own_verdict() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("operations.jsonl");
    std::fs::copy(tui_support::fixture("mcp-acp/operations.jsonl"), &j).unwrap();
    let mut a = open_app(&j, &common(Some("alice"), false, None));
    a.update(Action::ShowReview);
    let s = screen(&a);
    let row = s
        .lines()
        .find(|l| l.contains("acp:s-1:1"))
        .unwrap_or_else(|| panic!("no queue row for acp:s-1:1:\n{s}"));
    assert!(row.contains("delivery_unknown"), "{row}\n{s}");
    assert!(!row.contains("clean"), "{row}\n{s}");
    let heading = s
        .lines()
        .filter(|l| l.contains("acp:s-1:1"))
        .find(|l| l.contains("group "))
        .unwrap_or_else(|| panic!("no record heading:\n{s}"));
    assert!(heading.contains("delivery_unknown"), "{heading}");
}

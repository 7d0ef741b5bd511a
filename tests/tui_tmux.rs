//! End to end: the real binary in tmux, walked through overview → groups →
//! filter → detail → evidence → execution → back → quit; and a reviewer
//! decision and an export made through the real binary on a copy of a
//! fixture. Each test says `SKIPPED <test>: <why>` when tmux is not
//! installed, and fails then under `CI=true` (tests/common/skip.rs).

use std::process::{Command, Output};

mod common;
use std::thread::sleep;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
    session: &'static str,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", self.session]).stdout)
            .into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.cmd(&["send-keys", "-t", self.session, k]);
            // One key at a time, as a person types.
            sleep(Duration::from_millis(40));
        }
    }

    /// Waits until the screen holds every `want` (and none of `not`).
    fn wait_for(&self, want: &[&str], not: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if want.iter().all(|w| s.contains(w)) && !not.iter().any(|n| s.contains(n)) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "waited for {want:?} (and not {not:?}); the screen is:\n{s}"
            );
            sleep(Duration::from_millis(50));
        }
    }

    /// Types text literally (no key names).
    fn type_text(&self, text: &str) {
        self.cmd(&["send-keys", "-t", self.session, "-l", text]);
        sleep(Duration::from_millis(40));
    }

    /// Waits until the program has ended.
    fn wait_gone(&self) {
        let start = Instant::now();
        while self.alive() {
            assert!(start.elapsed() < Duration::from_secs(10), "q did not quit");
            sleep(Duration::from_millis(50));
        }
    }

    fn alive(&self) -> bool {
        self.cmd(&["has-session", "-t", self.session])
            .status
            .success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

#[test]
fn walk_the_tui_in_tmux() {
    if !common::skip::tmux("walk_the_tui_in_tmux") {
        return;
    }
    let t = Tmux {
        socket: format!("retrace-e2e-{}", std::process::id()),
        session: "walk",
    };
    let bin = env!("CARGO_BIN_EXE_retrace");
    let run = format!("{bin} tests/fixtures/tui-incident.jsonl");
    let out = t.cmd(&[
        "new-session",
        "-d",
        "-s",
        t.session,
        "-x",
        "100",
        "-y",
        "30",
        &run,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Overview.
    t.wait_for(&["Journals (1)", "Worst groups", "chain: none"], &[]);
    // Groups.
    t.keys(&["2"]);
    t.wait_for(
        &["Groups: 3 worth a look", "deploy_release", "create_ticket"],
        &[],
    );
    // Filter.
    t.keys(&["/", "t", "i", "c", "k", "e", "t", "Enter"]);
    t.wait_for(
        &["1 match", "create_ticket", "/ ticket"],
        &["deploy_release"],
    );
    // Detail.
    t.keys(&["Enter"]);
    t.wait_for(&["POSSIBLE_DUPLICATE", "Timeline", "OUTCOME UNKNOWN"], &[]);
    // Evidence: the first piece cites act_T1's accepted line.
    t.keys(&["Tab", "Enter"]);
    let s = t.wait_for(&["execution act_T1", "raw line"], &[]);
    assert!(s.contains("accepted"), "{s}");
    // Back to the detail.
    t.keys(&["Escape"]);
    t.wait_for(&["POSSIBLE_DUPLICATE", "The five questions"], &["raw line"]);
    // Quit.
    t.keys(&["q"]);
    let start = Instant::now();
    while t.alive() {
        assert!(start.elapsed() < Duration::from_secs(10), "q did not quit");
        sleep(Duration::from_millis(50));
    }
}

/// Starts `retrace` in `dir` with `args` in a detached tmux session.
fn start(t: &Tmux, dir: &std::path::Path, args: &str) {
    let bin = env!("CARGO_BIN_EXE_retrace");
    let run = format!("{bin} {args}");
    let out = t.cmd(&[
        "new-session",
        "-d",
        "-s",
        t.session,
        "-x",
        "150",
        "-y",
        "40",
        "-c",
        &dir.display().to_string(),
        &run,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn decide_and_export_through_the_real_binary() {
    if !common::skip::tmux("decide_and_export_through_the_real_binary") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/pending-retry.jsonl"
        ),
        dir.path().join("pending-retry.jsonl"),
    )
    .unwrap();
    let t = Tmux {
        socket: format!("retrace-e2e-review-{}", std::process::id()),
        session: "review",
    };
    start(&t, dir.path(), "pending-retry.jsonl --reviewer alice");

    // The overview points at the queue; 4 opens it.
    t.wait_for(&["Review queue: 1 waiting", "[4] opens it"], &[]);
    t.keys(&["4"]);
    t.wait_for(
        &[
            "Original activity record",
            "act_R1",
            "vault.acme.example/credentials",
        ],
        &[],
    );
    // d → choose confirmed_completed → note → confirmation → y.
    t.keys(&["d"]);
    t.wait_for(&["Decide act_R1", "What does the target show?"], &[]);
    t.keys(&["Enter"]);
    t.type_text("vault audit log shows the rotation; y and q are just letters");
    t.wait_for(&["y and q are just letters"], &[]);
    t.keys(&["Enter"]);
    t.wait_for(&["Record confirmed_completed for act_R1 as alice?"], &[]);
    assert!(!dir.path().join("retrace-case.sqlite").exists());
    t.keys(&["y"]);
    t.wait_for(
        &[
            "possible_duplicate → duplicate_side_effect",
            "Decisions in the case file (1)",
            "Nothing waits for a reviewer",
        ],
        &[],
    );
    // The groups table and the detail say whose decision it is.
    t.keys(&["2"]);
    t.wait_for(&["duplicate_side_effect", "✎ alice"], &[]);
    t.keys(&["Enter"]);
    t.wait_for(
        &[
            "DUPLICATE_SIDE_EFFECT",
            "✎ act_R1: alice decided confirmed_completed",
        ],
        &[],
    );
    // Export the group's postmortem under the default name.
    t.keys(&["E"]);
    let s = t.wait_for(&["Export a postmortem", "retrace-g"], &[]);
    let name = s
        .split_whitespace()
        .find(|w| w.starts_with("retrace-g") && w.contains(".md"))
        .map(|w| w.trim_end_matches('▏').to_string())
        .expect("a default file name");
    t.keys(&["Enter"]);
    t.wait_for(&["wrote the Markdown postmortem of group"], &[]);
    let md = std::fs::read_to_string(dir.path().join(&name)).unwrap();
    assert!(md.contains("duplicate_side_effect"), "{md}");
    assert!(md.contains("alice"), "{md}");
    t.keys(&["q"]);
    t.wait_gone();

    // The case file's chain is intact.
    let v = retrace::review::case::verify(&dir.path().join("retrace-case.sqlite")).unwrap();
    assert!(v.chain.is_intact(), "{v:?}");

    // A new start shows the decision.
    start(&t, dir.path(), "pending-retry.jsonl");
    t.wait_for(
        &[
            "1 decision in the case file",
            "reviewed by alice",
            "duplicate_side_effect",
        ],
        &["possible_duplicate"],
    );
    t.keys(&["q"]);
    t.wait_gone();
}

/// Journals that cannot be loaded: the TUI says why, and after `q` the
/// process exits 2 with the reason on stderr, as every command does for
/// unreadable input (docs/design.md §7).
#[test]
fn unreadable_journals_exit_2_after_quit() {
    if !common::skip::tmux("unreadable_journals_exit_2_after_quit") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.jsonl"), "not a journal\n").unwrap();
    let t = Tmux {
        socket: format!("retrace-e2e-fail-{}", std::process::id()),
        session: "fail",
    };
    let bin = env!("CARGO_BIN_EXE_retrace");
    let run = format!("sh -c '{bin} notes.jsonl 2>err.txt; echo exit=$?; sleep 30'");
    let out = t.cmd(&[
        "new-session",
        "-d",
        "-s",
        t.session,
        "-x",
        "80",
        "-y",
        "24",
        "-c",
        &dir.path().display().to_string(),
        &run,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.wait_for(&["Could not load the journals", "notes.jsonl:1"], &[]);
    t.keys(&["q"]);
    t.wait_for(&["exit=2"], &["Could not load the journals"]);
    let err = std::fs::read_to_string(dir.path().join("err.txt")).unwrap();
    assert!(
        err.contains("could not load the journals: notes.jsonl:1"),
        "{err}"
    );
}

/// A 120,000-character bracketed paste into the groups filter, and a
/// 2,000-character paste sent as plain keys (tmux hands a longer unbracketed
/// paste to the pane only bit by bit): the filter is capped and says so,
/// and Esc drops it.
#[test]
fn a_huge_paste_into_the_filter_does_not_stall() {
    if !common::skip::tmux("a_huge_paste_into_the_filter_does_not_stall") {
        return;
    }
    let t = Tmux {
        socket: format!("retrace-e2e-paste-{}", std::process::id()),
        session: "paste",
    };
    let bin = env!("CARGO_BIN_EXE_retrace");
    let run = format!("{bin} tests/fixtures/tui-incident.jsonl");
    let out = t.cmd(&[
        "new-session",
        "-d",
        "-s",
        t.session,
        "-x",
        "80",
        "-y",
        "24",
        &run,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.wait_for(&["Worst groups"], &[]);
    t.keys(&["2"]);
    t.wait_for(&["deploy_release"], &[]);
    let dir = tempfile::tempdir().unwrap();
    // -p: as a bracketed paste (the TUI asks for it); without: as keys.
    for (n, bracketed) in [(120_000, true), (2_000, false)] {
        let file = dir.path().join(format!("paste-{n}.txt"));
        std::fs::write(&file, "x".repeat(n)).unwrap();
        let o = t.cmd(&["load-buffer", "-b", "big", &file.display().to_string()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        t.keys(&["/"]);
        t.wait_for(&["Enter keeps"], &[]);
        let mut args = vec!["paste-buffer", "-b", "big", "-t", t.session];
        if bracketed {
            args.push("-p");
        }
        t.cmd(&args);
        t.wait_for(&["at most 256 characters", "No group matches"], &[]);
        t.keys(&["Escape"]);
        t.wait_for(&["deploy_release"], &["No group matches"]);
    }
    t.keys(&["q"]);
    t.wait_gone();
}

/// The real binary honours the chain keys in the TUI: a Sallyport journal
/// opened with its audit identity and signer key shows decrypted calls and
/// checked signatures.
#[test]
fn a_sallyport_journal_opens_with_its_keys_in_the_real_binary() {
    if !common::skip::tmux("a_sallyport_journal_opens_with_its_keys_in_the_real_binary") {
        return;
    }
    let t = Tmux {
        socket: format!("retrace-e2e-sallyport-{}", std::process::id()),
        session: "sallyport",
    };
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sallyport"
    ));
    start(
        &t,
        dir,
        "--signer-key signer.pub.hex --audit-identity audit-identity.hex audit-000001.jsonl",
    );
    t.wait_for(&["chain: intact, signed", "github.create_iss"], &[]);
    t.keys(&["2", "a"]);
    t.wait_for(&["github.create_issue", "ssh.exec"], &[]);
    t.keys(&["q"]);
    t.wait_gone();
}

/// The mouse is captured only while the TUI runs with it on, and let go
/// when it quits (tmux's `mouse_any_flag` says whether the program in the
/// pane asked for mouse reports); without colour (`NO_COLOR`) nothing on
/// the screen is coloured and the selection is reverse video.
#[test]
fn the_mouse_is_let_go_on_quit_and_no_color_draws_no_colour() {
    if !common::skip::tmux("the_mouse_is_let_go_on_quit_and_no_color_draws_no_colour") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_retrace");
    for (i, (flags, env, mouse)) in [
        ("", "", "1"),
        ("--no-mouse", "", "0"),
        ("", "NO_COLOR=1", "1"),
    ]
    .into_iter()
    .enumerate()
    {
        let t = Tmux {
            socket: format!("retrace-e2e-mouse-{}-{i}", std::process::id()),
            session: "mouse",
        };
        // An empty settings file, so that a user's own cannot change the
        // defaults.
        std::fs::write(dir.path().join("config.toml"), "").unwrap();
        let run =
            format!("sh -c '{env} {bin} --config config.toml {flags}; echo exit=$?; sleep 30'");
        let out = t.cmd(&[
            "new-session",
            "-d",
            "-s",
            t.session,
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            &dir.path().display().to_string(),
            &run,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        t.wait_for(&["Worst groups"], &[]);
        let flag = |t: &Tmux| {
            String::from_utf8_lossy(
                &t.cmd(&[
                    "display-message",
                    "-p",
                    "-t",
                    t.session,
                    "#{mouse_any_flag}",
                ])
                .stdout,
            )
            .trim()
            .to_string()
        };
        assert_eq!(
            flag(&t),
            mouse,
            "{flags} {env}: mouse reporting while running"
        );
        if !env.is_empty() {
            let styled = String::from_utf8_lossy(
                &t.cmd(&["capture-pane", "-p", "-e", "-t", t.session]).stdout,
            )
            .into_owned();
            // SGR colour codes: 30–37, 38;…, 40–47, 48;…, 90–97, 100–107.
            let coloured = styled.split("\x1b[").skip(1).any(|sgr| {
                let codes = sgr.split('m').next().unwrap_or("");
                codes.split(';').any(|c| {
                    matches!(
                        c.parse::<u16>(),
                        Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
                    )
                })
            });
            assert!(!coloured, "NO_COLOR drew colour:\n{styled:?}");
            assert!(styled.contains("\x1b[7m"), "no reverse video:\n{styled:?}");
        }
        t.keys(&["q"]);
        t.wait_for(&["exit=0"], &["Worst groups"]);
        assert_eq!(
            flag(&t),
            "0",
            "{flags} {env}: the mouse was not let go on quit"
        );
    }
}

/// Follow mode through the real binary (docs/design.md §7.7 "Follow
/// mode"): `F` on the groups table sorted newest first with create_ticket
/// selected, lines
/// appended to the journal (the second ticket call and its timeout, a
/// restart with an attached retry, and a bad line), and the screen shows
/// the new group, create_ticket's new verdict, both marked, the bad line
/// counted, and the selection still on create_ticket, now a row down
/// (Enter opens it).
/// Esc stops following.
#[test]
fn follow_a_growing_journal_in_tmux() {
    use std::io::Write;
    if !common::skip::tmux("follow_a_growing_journal_in_tmux") {
        return;
    }
    let full = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tui-incident.jsonl"
    ))
    .unwrap();
    let lines: Vec<&str> = full.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("incident.jsonl");
    std::fs::write(&path, lines[..14].join("\n") + "\n").unwrap();
    let t = Tmux {
        socket: format!("retrace-e2e-follow-{}", std::process::id()),
        session: "follow",
    };
    start(&t, dir.path(), "incident.jsonl");
    t.wait_for(&["Journals (1)", "Worst groups"], &[]);
    t.keys(&["2"]);
    t.wait_for(&["safe_retry", "create_ticket"], &[]);
    // Sorted newest first, create_ticket is the first row; the group the
    // appended lines start (restart_service) will come in above it.
    t.keys(&["s", "s", "s", "s", "S", "g", "F"]);
    t.wait_for(&["[following 0.0 ev/s"], &["reading…"]);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    for l in &lines[14..] {
        writeln!(f, "{l}").unwrap();
    }
    writeln!(f, "this line is not JSON").unwrap();
    f.flush().unwrap();
    let s = t.wait_for(
        &[
            "● possible_duplicate",
            "● attached_retry",
            "restart_service",
            "1 bad line",
        ],
        &["safe_retry"],
    );
    assert!(s.contains("incident.jsonl:33"), "{s}");
    let at = |what: &str| s.find(what).unwrap_or_else(|| panic!("{what}: {s}"));
    assert!(
        at("restart_service") < at("create_ticket"),
        "newest first: {s}"
    );
    // The selection stayed on create_ticket's group.
    t.keys(&["Enter"]);
    t.wait_for(&["group gca8ffdb10e", "POSSIBLE_DUPLICATE"], &[]);
    // Esc stops following first, then goes back.
    t.keys(&["Escape"]);
    t.wait_for(&["stopped following after 18 new events"], &["[following"]);
    t.keys(&["Escape"]);
    t.wait_for(&["Groups: 3 worth a look"], &[]);
    t.keys(&["q"]);
    t.wait_gone();
}

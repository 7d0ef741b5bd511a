//! End to end: the real binary in tmux, walked through overview → groups →
//! filter → detail → evidence → execution → back → quit. Skipped with a
//! notice when tmux is not installed.

use std::process::{Command, Output};
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
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("notice: tmux is not installed; skipping the end-to-end TUI test");
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

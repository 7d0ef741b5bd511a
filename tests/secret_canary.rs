//! A secret argument never leaves retrace (docs/design.md §4.1, §4.4
//! `secret_fields`): a canary value placed in secret fields — top level,
//! nested under another name and written in another case, and at a dotted
//! path — occurs zero times in every command's output, every TUI screen and
//! every clipboard payload.

mod tui_support;

use assert_cmd::Command;
use retrace::tui::Action;
use retrace::tui::app::Effect;
use retrace::tui::theme::Theme;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

const CANARY: &str = "CANARYx9q7";
/// A numeric secret, beyond ±2^53 so that verify notes it as ambiguous.
const NUMERIC: &str = "90071992547409931";
/// The same name as a dotted path's last part, elsewhere: not a secret.
const VISIBLE: &str = "visible-password-hint";

fn retrace() -> Command {
    Command::cargo_bin("retrace").unwrap()
}

/// The SSH scenario, its arguments carrying canaries, chained again.
fn journal(dir: &Path) -> (PathBuf, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-journals/scenarios/possible-duplicate-ssh.jsonl");
    let mut prev = "0".repeat(64);
    let mut out = String::new();
    for line in std::fs::read_to_string(src).unwrap().lines() {
        let mut m: Map<String, Value> = serde_json::from_str(line).unwrap();
        m.remove("prev_hash");
        m.remove("hash");
        if let Some(args) = m
            .get_mut("action")
            .and_then(|a| a.get_mut("arguments"))
            .and_then(Value::as_object_mut)
        {
            args.insert("token".into(), Value::String(format!("{CANARY}-top")));
            args.insert(
                "auth".into(),
                serde_json::json!({"Token": format!("{CANARY}-nested"), "user": "deploy"}),
            );
            args.insert(
                "db".into(),
                serde_json::json!({"password": format!("{CANARY}-path")}),
            );
            args.insert("hint".into(), serde_json::json!({"password": VISIBLE}));
            args.insert(
                "extra".into(),
                serde_json::json!({"TOKEN": NUMERIC.parse::<u64>().unwrap()}),
            );
        }
        let hash = retrace::journal::native_chain_hash(&prev, &m);
        m.insert("prev_hash".into(), Value::String(prev.clone()));
        m.insert("hash".into(), Value::String(hash.clone()));
        prev = hash;
        out.push_str(&serde_json::to_string(&m).unwrap());
        out.push('\n');
    }
    let j = dir.join("secrets.jsonl");
    std::fs::write(&j, out).unwrap();
    let c = dir.join("contracts.toml");
    std::fs::write(
        &c,
        "[tools.run_migration]\nclass = \"irreversible\"\nsecret_fields = [\"token\", \"db.password\"]\n",
    )
    .unwrap();
    (j, c)
}

fn count(s: &str) -> usize {
    s.matches(CANARY).count() + s.matches(NUMERIC).count()
}

#[test]
fn the_canary_shows_in_no_command_output() {
    let dir = tempfile::tempdir().unwrap();
    let (j, c) = journal(dir.path());
    let run = |args: &[&str]| {
        let mut cmd = retrace();
        cmd.args(args).arg(&j);
        // verify reads no contracts: it shows no arguments.
        if args[0] != "verify" {
            cmd.arg("--contracts").arg(&c).arg("--read-only");
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + "\n"
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code(), text)
    };
    let (code, groups) = run(&["groups", "--all", "--json"]);
    assert_eq!(code, Some(0), "{groups}");
    let v: Value = serde_json::Deserializer::from_str(&groups)
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    let id = v[0]["group_id"].as_str().unwrap().to_string();
    let mut checked = 0;
    let mut shown_visible = false;
    for args in [
        vec!["groups"],
        vec!["groups", "--all", "--json"],
        vec!["investigate", "--group", &id],
        vec!["investigate", "--group", &id, "--json"],
        vec!["review", "list"],
        vec!["review", "list", "--json"],
        vec!["export", "--all", "--format", "markdown", "-o", "-"],
        vec!["export", "--all", "--format", "json", "-o", "-"],
        vec!["export", "--all", "--format", "csv", "-o", "-"],
        vec!["export", "--group", &id, "--format", "markdown", "-o", "-"],
        vec!["verify"],
        vec!["verify", "--json"],
    ] {
        let (code, text) = run(&args);
        assert!(code.is_some_and(|c| c <= 1), "{args:?}: {text}");
        assert_eq!(count(&text), 0, "{args:?} shows the secret:\n{text}");
        shown_visible |= text.contains(VISIBLE);
        checked += 1;
    }
    assert_eq!(checked, 12);
    // A dotted path names one place: the same name elsewhere is shown.
    assert!(shown_visible, "a non-secret field was redacted too");
    // The markdown export holds the Mermaid diagram.
    let (_, md) = run(&["export", "--all", "--format", "markdown", "-o", "-"]);
    assert!(md.contains("sequenceDiagram"), "{md}");
}

#[test]
fn the_canary_shows_on_no_screen_and_in_no_copy() {
    let dir = tempfile::tempdir().unwrap();
    let (j, c) = journal(dir.path());
    let setup = retrace::query::Setup {
        contracts: vec![c],
        ..retrace::query::Setup::new(vec![j])
    };
    let open = || {
        let inv = retrace::query::Investigation::open(&setup, &mut |_| {}).unwrap();
        retrace::tui::App::ready(
            inv,
            Theme::dark(),
            ratatui::layout::Rect::new(0, 0, 200, 60),
        )
    };
    let ev = |n: usize| {
        let mut v = vec![Action::ShowGroups, Action::Open, Action::Open];
        v.extend(std::iter::repeat_n(Action::Down, n));
        v
    };
    let mut navs: Vec<(String, Vec<Action>)> = vec![
        ("overview".into(), vec![]),
        ("groups".into(), vec![Action::ShowGroups]),
        ("detail".into(), vec![Action::ShowGroups, Action::Open]),
        (
            "detail evidence".into(),
            vec![Action::ShowGroups, Action::Open, Action::FocusNext],
        ),
        (
            "sessions".into(),
            vec![Action::ShowSessions, Action::FocusNext],
        ),
        ("review".into(), vec![Action::ShowReview]),
        ("review next".into(), vec![Action::ShowReview, Action::Down]),
        ("help".into(), vec![Action::ShowGroups, Action::ToggleHelp]),
    ];
    for n in 0..8 {
        navs.push((format!("execution event {n}"), ev(n)));
        let mut raw = ev(n);
        raw.push(Action::FocusNext);
        navs.push((format!("execution event {n} record"), raw.clone()));
        raw.push(Action::ScrollDown);
        raw.push(Action::ScrollDown);
        navs.push((format!("execution event {n} record scrolled"), raw));
    }
    let mut screens = 0;
    let mut copies = 0;
    for (name, actions) in navs {
        let mut a = open();
        for act in actions {
            a.update(act);
        }
        let buf = tui_support::draw(&a, 200, 60);
        let t = tui_support::text(&buf);
        assert_eq!(count(&t), 0, "{name} shows the secret:\n{t}");
        screens += 1;
        for copy in [Action::Copy, Action::CopyAlt] {
            a.effects.clear();
            a.update(copy);
            for e in a.effects.drain(..) {
                if let Effect::Clipboard(text) = e {
                    copies += 1;
                    assert_eq!(count(&text), 0, "{name}: y copies the secret: {text}");
                }
            }
        }
    }
    assert!(
        screens >= 30 && copies >= 20,
        "{screens} screens, {copies} copies"
    );
}

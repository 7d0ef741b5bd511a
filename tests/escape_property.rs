//! Property: any string — C0 and C1 controls, escape sequences, bidi
//! controls, zero-width characters, invalid UTF-8 bytes — placed in journal
//! fields comes out escaped on every output (docs/design.md §8.5): command
//! text and JSON, the Markdown, JSON and CSV exports, every TUI screen and
//! every clipboard payload. No output holds an unsafe character other than
//! its own line breaks, and every output is valid UTF-8.

mod tui_support;

use assert_cmd::Command;
use proptest::prelude::*;
use retrace::sanitize::is_unsafe;
use retrace::tui::Action;
use retrace::tui::app::Effect;
use retrace::tui::theme::Theme;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Pieces a hostile string is made of.
fn piece() -> impl Strategy<Value = String> {
    let fixed: Vec<&'static str> = vec![
        "\x1b[2J",
        "\x1b]0;pwned\x07",
        "\x1b]52;c;aGk=\x07",
        "\x1bP+q\x1b\\",
        "\x1b[31m",
        "\u{9b}2J",
        "\u{9d}8;;x\u{9c}",
        "\u{202e}",
        "\u{2066}",
        "\u{2069}",
        "\u{200f}",
        "\u{61c}",
        "\u{200b}",
        "\u{200d}",
        "\u{2060}",
        "\u{feff}",
        "\u{ad}",
        "\u{2028}",
        "\r",
        "\n",
        "\t",
        "\u{7f}",
        "\"",
        "\\",
        "|",
        ",",
        "`",
        "<script>",
        "[x](javascript:1)",
    ];
    prop_oneof![
        3 => "[a-zA-Z0-9 _.-]{1,6}",
        3 => proptest::sample::select(fixed).prop_map(str::to_string),
        2 => (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap_or('?').to_string()),
        2 => (0x80u32..0xa0).prop_map(|c| char::from_u32(c).unwrap_or('?').to_string()),
        1 => any::<char>().prop_map(|c| c.to_string()),
    ]
}

fn hostile() -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 1..6).prop_map(|v| v.concat())
}

/// The SSH scenario, unchained, with `s` in many fields; with `invalid`,
/// one line also carries bytes that are not UTF-8.
fn journal(dir: &Path, s: &str, invalid: bool) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-journals/scenarios/possible-duplicate-ssh.jsonl");
    let mut out = Vec::new();
    for (i, line) in std::fs::read_to_string(src).unwrap().lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        let m = v.as_object_mut().unwrap();
        m.remove("prev_hash");
        m.remove("hash");
        if m.get("execution_id").and_then(Value::as_str) == Some("act_MIG1") {
            m.insert("execution_id".into(), Value::String(format!("act_{s}")));
        }
        m.insert("note".into(), Value::String(s.to_string()));
        if let Some(e) = m.get_mut("error") {
            *e = Value::String(format!("reset {s}"));
        }
        if let Some(a) = m.get_mut("action").and_then(Value::as_object_mut) {
            a.insert("target".into(), Value::String(format!("db{s}")));
            a.insert("actor".into(), Value::String(format!("agent{s}")));
            if let Some(args) = a.get_mut("arguments").and_then(Value::as_object_mut) {
                args.insert("migration".into(), Value::String(s.to_string()));
                args.insert(format!("k{s}"), Value::String("v".into()));
            }
        }
        let mut bytes = serde_json::to_vec(&v).unwrap();
        if invalid && i == 5 {
            // `"note":"…"` with raw bytes that are not UTF-8 inside.
            let at = bytes.len() - 1;
            bytes.splice(at..at, br#","raw":"\xff\xfe\x1b[2J\xc0""#.iter().copied());
        }
        out.extend(bytes);
        out.push(b'\n');
    }
    let p = dir.join("hostile.jsonl");
    std::fs::write(&p, out).unwrap();
    p
}

/// Asserts an output is valid UTF-8 and holds no unsafe character except
/// line breaks.
fn check(what: &str, bytes: &[u8]) -> Result<(), TestCaseError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| TestCaseError::fail(format!("{what}: not UTF-8: {e}")))?;
    for (n, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(c) = line.chars().find(|&c| is_unsafe(c)) {
            return Err(TestCaseError::fail(format!(
                "{what}, line {}: unescaped {c:?} in {line:?}",
                n + 1
            )));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_command_output_is_escaped(s in hostile(), invalid in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let j = journal(dir.path(), &s, invalid);
        let run = |args: &[&str]| {
            Command::cargo_bin("retrace")
                .unwrap()
                .args(args)
                .arg(&j)
                .arg("--read-only")
                .output()
                .unwrap()
        };
        let g = run(&["groups", "--all", "--json"]);
        check("groups --json", &g.stdout)?;
        check("groups --json stderr", &g.stderr)?;
        let groups: Value = serde_json::from_slice(&g.stdout).unwrap_or(Value::Null);
        let ids: Vec<String> = groups
            .as_array()
            .map(|a| a.iter().filter_map(|g| g["group_id"].as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        // The journal loads: the hostile strings reach the outputs.
        prop_assert!(!ids.is_empty(), "no group: {}", String::from_utf8_lossy(&g.stderr));
        let mut cmds: Vec<Vec<String>> = [
            &["groups", "--all"][..],
            &["review", "list"],
            &["review", "list", "--json"],
            &["export", "--all", "--format", "markdown", "-o", "-"],
            &["export", "--all", "--format", "json", "-o", "-"],
            &["export", "--all", "--format", "csv", "-o", "-"],
            &["export", "--all", "--format", "markdown", "-o", "-", "--anonymize"],
        ]
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
        for id in &ids {
            cmds.push(vec!["investigate".into(), "--group".into(), id.clone()]);
            cmds.push(vec!["investigate".into(), "--group".into(), id.clone(), "--json".into()]);
        }
        for cmd in &cmds {
            let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
            let out = run(&args);
            check(&format!("{cmd:?}"), &out.stdout)?;
            check(&format!("{cmd:?} stderr"), &out.stderr)?;
        }
        for args in [&["verify"][..], &["verify", "--json"]] {
            let out = Command::cargo_bin("retrace").unwrap().args(args).arg(&j).output().unwrap();
            check(&format!("{args:?}"), &out.stdout)?;
            check(&format!("{args:?} stderr"), &out.stderr)?;
        }
    }

    #[test]
    fn every_screen_and_copy_is_escaped(s in hostile(), invalid in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let j = journal(dir.path(), &s, invalid);
        let Ok(inv) = retrace::query::Investigation::open(
            &retrace::query::Setup::new(vec![j]),
            &mut |_| {},
        ) else {
            return Ok(());
        };
        drop(inv);
        let navs: Vec<Vec<Action>> = vec![
            vec![],
            vec![Action::ShowGroups],
            vec![Action::ShowGroups, Action::Open],
            vec![Action::ShowGroups, Action::Open, Action::FocusNext],
            vec![Action::ShowGroups, Action::Open, Action::Open],
            vec![Action::ShowGroups, Action::Open, Action::Open, Action::FocusNext],
            vec![Action::ShowGroups, Action::Open, Action::Open, Action::Bottom],
            vec![Action::ShowGroups, Action::Down, Action::Open, Action::Open],
            vec![Action::ShowSessions, Action::FocusNext],
            vec![Action::ShowReview],
            vec![Action::ShowReview, Action::FocusNext],
        ];
        for (n, actions) in navs.into_iter().enumerate() {
            let inv = retrace::query::Investigation::open(
                &retrace::query::Setup::new(vec![dir.path().join("hostile.jsonl")]),
                &mut |_| {},
            )
            .unwrap();
            let mut a = retrace::tui::App::ready(
                inv,
                Theme::dark(),
                ratatui::layout::Rect::new(0, 0, 140, 40),
            );
            for act in actions {
                a.update(act);
            }
            let buf = tui_support::draw(&a, 140, 40);
            for c in buf.content() {
                if let Some(ch) = c.symbol().chars().find(|&ch| is_unsafe(ch)) {
                    return Err(TestCaseError::fail(format!("screen {n}: cell holds {ch:?}")));
                }
            }
            for copy in [Action::Copy, Action::CopyAlt] {
                a.effects.clear();
                a.update(copy);
                for e in a.effects.drain(..) {
                    if let Effect::Clipboard(text) = e {
                        check(&format!("screen {n} copy"), text.as_bytes())?;
                    }
                }
            }
        }
    }
}

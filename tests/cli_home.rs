//! At home in the terminal: completions and a man page from the binary, a
//! settings file that flags override, colour as the ecosystem does it, and
//! options before the command name.

mod common;

use common::*;
use std::process::Command;

fn retrace(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(BIN);
    c.args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("XDG_CONFIG_HOME", dir.join("xdg"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn completions_for_every_shell_and_a_man_page() {
    let d = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = retrace(d.path(), &["completions", shell], &[]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let s = stdout(&o);
        for word in ["groups", "investigate", "verify", "export", "input-format"] {
            assert!(s.contains(word), "{shell} completion lacks {word}");
        }
    }
    let o = retrace(d.path(), &["completions", "tcsh"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let o = retrace(d.path(), &["man"], &[]);
    assert!(o.status.success());
    let man = stdout(&o);
    assert!(
        man.starts_with(".ie") || man.contains(".TH retrace"),
        "{man}"
    );
    assert!(man.contains("investigate"), "{man}");
}

#[test]
fn the_settings_file_and_flags() {
    let d = tempfile::tempdir().unwrap();
    let xdg = d.path().join("xdg/retrace");
    std::fs::create_dir_all(&xdg).unwrap();
    std::fs::write(
        xdg.join("config.toml"),
        "reviewer = \"bob\"\ntheme = \"light\"\ncontracts = [\"contracts.toml\"]\n",
    )
    .unwrap();
    let o = retrace(d.path(), &["config"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("reviewer") && s.contains("bob"), "{s}");
    assert!(s.contains("settings file"), "{s}");
    // Relative paths in the file are relative to its folder.
    assert!(
        s.contains(&xdg.join("contracts.toml").display().to_string()),
        "{s}"
    );
    // A flag wins, and says so.
    let o = retrace(d.path(), &["config", "--reviewer", "carol"], &[]);
    let s = stdout(&o);
    let line = s.lines().find(|l| l.starts_with("reviewer")).unwrap();
    assert!(line.contains("carol") && line.contains("(flag)"), "{line}");
    // A bad file names its line and key, exit 2.
    std::fs::write(
        xdg.join("config.toml"),
        "theme = \"dark\"\nreveiwer = \"bob\"\n",
    )
    .unwrap();
    let o = retrace(d.path(), &["groups"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("config.toml: line 2") && e.contains("reveiwer"),
        "{e}"
    );
    // --config names another file.
    let other = d.path().join("other.toml");
    std::fs::write(&other, "read_only = true\n").unwrap();
    let o = retrace(
        d.path(),
        &["--config", other.to_str().unwrap(), "config"],
        &[],
    );
    let s = stdout(&o);
    let line = s.lines().find(|l| l.starts_with("read_only")).unwrap();
    assert!(
        line.contains("true") && line.contains("other.toml"),
        "{line}"
    );
}

#[test]
fn colour_on_a_terminal_only_and_never_under_no_color() {
    let d = tempfile::tempdir().unwrap();
    // Into a pipe: no colour.
    let o = retrace(d.path(), &["groups"], &[]);
    assert!(!stdout(&o).contains('\u{1b}'), "{}", stdout(&o));
    // Forced: the verdict is coloured.
    let o = retrace(d.path(), &["groups", "--color", "always"], &[]);
    assert!(
        stdout(&o).contains("\u{1b}[1m\u{1b}[31mduplicate_side_effect"),
        "{:?}",
        stdout(&o)
    );
    // NO_COLOR wins over the default, a flag over NO_COLOR.
    let o = retrace(d.path(), &["config"], &[("NO_COLOR", "1")]);
    let s = stdout(&o);
    let line = s.lines().find(|l| l.starts_with("color")).unwrap();
    assert!(
        line.contains("never") && line.contains("NO_COLOR"),
        "{line}"
    );
    // JSON never carries styles.
    let o = retrace(d.path(), &["groups", "--json", "--color", "always"], &[]);
    assert!(!stdout(&o).contains('\u{1b}'));
}

/// Options written before the command name still apply to it, and only a
/// command's own options are accepted after it.
#[test]
fn options_before_the_command_name() {
    let (d, _) = copy_fixture("pending-retry.jsonl");
    let o = retrace(
        d.path(),
        &[
            "--read-only",
            "export",
            "pending-retry.jsonl",
            "--all",
            "--format",
            "json",
            "-o",
            "x.json",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("read-only"), "{}", stderr(&o));
    let o = retrace(d.path(), &["verify", "--theme", "dark"], &[]);
    assert_eq!(o.status.code(), Some(2), "verify takes no --theme");
}

/// Two contracts files: the later one's contract for a tool wins, and the
/// override is said.
#[test]
fn contracts_files_merge_in_order() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a.toml");
    let b = d.path().join("b.toml");
    let defaults = "defaults = { region = \"us-east-1\" }\n";
    std::fs::write(
        &a,
        format!("[tools.deploy_release]\nclass = \"irreversible\"\n{defaults}"),
    )
    .unwrap();
    std::fs::write(
        &b,
        format!("[tools.deploy_release]\nclass = \"read_only\"\n{defaults}"),
    )
    .unwrap();
    let o = retrace(
        d.path(),
        &[
            "groups",
            "--json",
            "--contracts",
            a.to_str().unwrap(),
            "--contracts",
            b.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the contract for deploy_release in")
            && stderr(&o).contains("replaces"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Read-only: repeats are distinct intents.
    assert_eq!(v[0]["verdict"], "distinct_intent", "{v:#}");
}

/// `--since`/`--until` narrow every command that reads executions to those
/// that began in the window (each kept whole), and say so on stderr;
/// `verify` checks whole chains and does not take them.
#[test]
fn since_and_until_narrow_to_the_executions_that_began_in_the_window() {
    let d = tempfile::tempdir().unwrap();
    // The sample: list_releases 14:01:02, the two deploy_release calls
    // 14:03:18 and 14:04:02, get_release_status 14:05:30.
    let both = [
        "--since",
        "2026-07-22T14:03:00Z",
        "--until",
        "2026-07-22T14:04:30Z",
    ];
    let mut args = vec!["groups", "--all", "--json"];
    args.extend(both);
    let o = retrace(d.path(), &args, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let groups = v.as_array().unwrap();
    assert_eq!(groups.len(), 1, "{v}");
    assert_eq!(groups[0]["verdict"], "duplicate_side_effect", "{v}");
    assert!(
        stderr(&o).contains("only the 2 of 4 executions that began from 2026-07-22 14:03:00Z until 2026-07-22 14:04:30Z"),
        "{}",
        stderr(&o)
    );
    // Only the second deploy_release began in the window: the first one,
    // within its attach window before it, is read with it, and the pair
    // is still the duplicate it is (a window never turns a duplicate
    // clean, docs/design.md §7.2).
    let o = retrace(
        d.path(),
        &[
            "groups",
            "--all",
            "--json",
            "--since",
            "2026-07-22T14:04:00Z",
        ],
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let deploy = v
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "deploy_release")
        .unwrap();
    assert_eq!(deploy["verdict"], "duplicate_side_effect", "{v}");
    assert_eq!(
        deploy["before_window"],
        serde_json::json!(["act_01J4K8J7DX7V"]),
        "{v}"
    );
    // Investigate, review list and export take them too, before or after
    // the command name.
    let mut args = vec!["investigate", "--group", "gfc4a6c60d4"];
    args.extend(both);
    let o = retrace(d.path(), &args, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = retrace(
        d.path(),
        &[
            "--until",
            "2026-07-22T14:02:00Z",
            "export",
            "--all",
            "--format",
            "json",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("only the 1 of 4 executions"),
        "{}",
        stderr(&o)
    );
    let o = retrace(d.path(), &["review", "list", "--since", "1h"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    // An age before now: the sample lies months back, nothing is left.
    let o = retrace(d.path(), &["groups", "--since", "2h"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("No execution began at or after"),
        "{}",
        stdout(&o)
    );
    // A bad time says what is accepted; verify does not take the option.
    let o = retrace(d.path(), &["groups", "--since", "yesterday"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("RFC 3339"), "{}", stderr(&o));
    let o = retrace(d.path(), &["verify", "--help"], &[]);
    assert!(!stdout(&o).contains("--since"), "{}", stdout(&o));
    let o = retrace(d.path(), &["verify", "--since", "2h"], &[]);
    assert_eq!(o.status.code(), Some(2));
    // Before the command name they are not silently ignored either.
    let o = retrace(d.path(), &["--since", "2h", "verify"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("verify checks whole chains"),
        "{}",
        stderr(&o)
    );
}

/// A repeat in a `--since` window is judged with the call it repeats from
/// before the window (docs/design.md §7.2): that call is read within the
/// longest attach window before the window's start, marked as begun
/// before it, and counted apart; an intent with no call in the window
/// stays out. Without this, `--since` between the two deploys showed the
/// duplicate as `clean`.
#[test]
fn a_repeat_in_the_window_is_judged_with_the_call_it_repeats_before_it() {
    let d = tempfile::tempdir().unwrap();
    // The sample: list_releases 14:01:02, deploy_release 14:03:18 and
    // 14:04:02, get_release_status 14:05:30; deploy_release's contract has
    // a 2h attach window.
    let since = ["--since", "2026-07-22T14:03:30Z"];
    let mut args = vec!["groups", "--all", "--json"];
    args.extend(since);
    let o = retrace(d.path(), &args, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let tools: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["tool"].as_str().unwrap())
        .collect();
    // list_releases began before the window and nothing repeats it in it.
    assert_eq!(tools, ["deploy_release", "get_release_status"], "{v}");
    assert_eq!(v[0]["verdict"], "duplicate_side_effect", "{v}");
    assert_eq!(v[0]["executions"], 2, "{v}");
    assert_eq!(
        v[0]["before_window"],
        serde_json::json!(["act_01J4K8J7DX7V"]),
        "{v}"
    );
    assert!(v[1].get("before_window").is_none(), "{v}");
    let err = stderr(&o);
    assert!(
        err.contains(
            "only the 2 of 4 executions that began at or after 2026-07-22 14:03:30Z (--since/--until), with 1 earlier execution of their intents"
        ),
        "{err}"
    );
    assert!(
        err.contains("left out 5 of 20 records (1 call(s) that began outside it; 1 earlier call(s) of intents called in it were read with them)"),
        "{err}"
    );
    // investigate marks the earlier call, and its JSON says it too.
    let mut args = vec!["investigate", "--group", "gfc4a6c60d4"];
    args.extend(since);
    let o = retrace(d.path(), &args, &[]);
    assert!(
        stdout(&o).contains("act_01J4K8J7DX7V  completed_result_not_delivered  (before the window"),
        "{}",
        stdout(&o)
    );
    args.push("--json");
    let o = retrace(d.path(), &args, &[]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let marks: Vec<bool> = v["executions_detail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.get("before_window").is_some_and(|b| b == true))
        .collect();
    assert_eq!(marks, [true, false], "{v:#}");
    // With the window's start after every deploy, neither is read: the
    // lookback only brings earlier calls of intents called in the window.
    let o = retrace(
        d.path(),
        &[
            "groups",
            "--all",
            "--json",
            "--since",
            "2026-07-22T14:05:00Z",
        ],
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v[0]["tool"], "get_release_status", "{v}");
}

/// `retrace completions bash | head -2` once panicked with a backtrace
/// (exit 101) when the pipe closed: the script is written like any output.
#[test]
fn completions_into_a_closed_pipe_do_not_panic() {
    for cmd in [&["completions", "bash"][..], &["man"][..]] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_retrace"))
            .args(cmd)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(101), "{cmd:?}: {err}");
        assert!(!err.contains("panicked"), "{cmd:?}: {err}");
    }
}

/// `retrace groups -` once said "-: no such journal file": `-` is standard
/// input, as for cat and jq.
#[test]
fn a_dash_reads_standard_input() {
    let j = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/sample-journals/deploy-release-incident/activity.jsonl"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrace"))
        .args(["groups", "--json", "-"])
        .stdin(std::fs::File::open(j).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!v.as_array().unwrap().is_empty(), "{v}");
}

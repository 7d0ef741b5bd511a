//! `retrace contracts draft` and `retrace contracts lint` (docs/design.md
//! §4.6) through the real binary.

mod common;

use common::*;
use std::path::Path;

const J: &str = "gh-aw/repeat-after-result.jsonl";

fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    run(dir, args)
}

#[test]
fn a_draft_is_a_contracts_file_with_its_evidence() {
    let d = tempfile::tempdir().unwrap();
    let j = fixture(J);
    let o = run_in(d.path(), &["contracts", "draft", j.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let toml = stdout(&o);
    // The server declared list_releases read-only, create_issue not.
    assert!(toml.contains("[tools.\"list_releases\"]\n"), "{toml}");
    let list = toml.split("[tools.\"list_releases\"]").nth(1).unwrap();
    assert!(list.contains("class = \"read_only\""), "{toml}");
    assert!(list.contains("readOnlyHint: true"), "{toml}");
    let create = toml
        .split("[tools.\"create_issue\"]")
        .nth(1)
        .unwrap()
        .split("[tools.")
        .next()
        .unwrap();
    assert!(create.contains("class = \"irreversible\""), "{create}");
    assert!(create.contains("readOnlyHint: false"), "{create}");
    // It was repeated 32 s after a call whose delivery the log cannot
    // show: twice that, at least five minutes.
    assert!(create.contains("attach_window = \"5m\""), "{create}");
    assert!(
        create.contains("the longest 31s after the first"),
        "{create}"
    );
    assert!(
        create.contains("fingerprint_fields = [\"owner\", \"repo\", \"title\"]"),
        "{create}"
    );
    // --contracts takes it as it is, and lint finds nothing against it.
    let c = d.path().join("contracts.toml");
    std::fs::write(&c, &toml).unwrap();
    let o = run_in(
        d.path(),
        &[
            "contracts",
            "lint",
            j.to_str().unwrap(),
            "--contracts",
            c.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("nothing to report"));
}

#[test]
fn a_draft_writes_atomically_and_names_secret_looking_fields() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("rpc.jsonl");
    std::fs::write(
        &j,
        concat!(
            r#"{"timestamp":"2026-04-28T10:48:58.3Z","direction":"OUT","type":"REQUEST","server_id":"vault","method":"tools/call","payload":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"account":"svc","api_token":"t0k","request_id":"r-1"},"name":"rotate"}}}"#,
            "\n",
            r#"{"timestamp":"2026-04-28T10:48:59.1Z","direction":"IN","type":"RESPONSE","server_id":"vault","payload":{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"ok","type":"text"}]}}}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = d.path().join("draft.toml");
    let o = run_in(
        d.path(),
        &[
            "contracts",
            "draft",
            j.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let toml = std::fs::read_to_string(&out).unwrap();
    assert!(toml.contains("secret_fields = [\"api_token\"]"), "{toml}");
    assert!(
        toml.contains("fingerprint_fields = [\"account\", \"api_token\"]"),
        "{toml}"
    );
    assert!(
        toml.contains("left out, as they change on every call"),
        "{toml}"
    );
    let v = json(&run_in(
        d.path(),
        &["contracts", "draft", "--json", j.to_str().unwrap()],
    ));
    assert_eq!(v[0]["tool"], "rotate");
    assert_eq!(v[0]["secret_fields"], serde_json::json!(["api_token"]));
}

#[test]
fn lint_finds_what_the_calls_contradict_and_exits_1() {
    let d = tempfile::tempdir().unwrap();
    let j = fixture(J);
    let c = d.path().join("contracts.toml");
    std::fs::write(
        &c,
        r#"
[tools.create_issue]
class = "irreversible"
attach_window = "10s"
fingerprint_fields = ["owner", "repo", "title", "labels"]
defaults = { owner = 7 }

[tools.list_releases]
class = "irreversible"

[tools.delete_repo]
class = "irreversible"
"#,
    )
    .unwrap();
    let o = run_in(
        d.path(),
        &[
            "contracts",
            "lint",
            "--json",
            j.to_str().unwrap(),
            "--contracts",
            c.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let kinds: Vec<(&str, &str)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap(), f["tool"].as_str().unwrap()))
        .collect();
    for want in [
        ("never_seen", "delete_repo"),
        ("field_never_seen", "create_issue"),
        ("default_contradicted", "create_issue"),
        ("class_contradicted", "list_releases"),
        ("window_too_short", "create_issue"),
    ] {
        assert!(kinds.contains(&want), "{want:?} in {kinds:?}");
    }
    // Without contracts: the side-effecting tool is named, the read-only one
    // (by its server's word) is not.
    let o = run_in(d.path(), &["contracts", "lint", j.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains("no_contract") && text.contains("create_issue"),
        "{text}"
    );
    assert!(!text.contains("list_releases"), "{text}");
}

/// Two answers listed list_releases, one read-only and one without
/// annotations; the draft once said "its server's annotations do not say
/// it is read-only", as if none had. It gives the count.
#[test]
fn a_split_hint_is_counted_in_the_draft() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture(J)).unwrap();
    let bare = text
        .replace(
            r#"{"name":"list_releases","annotations":{"readOnlyHint":true,"title":"List releases"}}"#,
            r#"{"name":"list_releases"}"#,
        )
        .replace("2026-", "2027-");
    assert_ne!(bare, text.replace("2026-", "2027-"));
    std::fs::write(d.path().join("a.jsonl"), &text).unwrap();
    std::fs::write(d.path().join("b.jsonl"), &bare).unwrap();
    let o = run_in(d.path(), &["contracts", "draft", "a.jsonl", "b.jsonl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let toml = stdout(&o);
    let list = toml
        .split("[tools.\"list_releases\"]")
        .nth(1)
        .unwrap()
        .split("[tools.")
        .next()
        .unwrap();
    assert!(list.contains("class = \"irreversible\""), "{list}");
    assert!(
        list.contains("1 of 2 tools/list answers that listed it say readOnlyHint: true"),
        "{list}"
    );
}

/// The sample's contracts cover tools its journals never call: lint lists
/// them (`never_seen`) and exits 0, as nothing contradicts the calls. It
/// exited 1, which the README says means a contradiction.
#[test]
fn a_contract_of_a_tool_never_called_is_no_contradiction() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let o = run_in(
        d.path(),
        &[
            "contracts",
            "lint",
            root.join("sample-journals/deploy-release-incident")
                .to_str()
                .unwrap(),
            "--contracts",
            root.join("sample-journals/contracts.toml")
                .to_str()
                .unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("never_seen"), "{}", stdout(&o));
}

//! Every sample scenario gives the verdict its manifest expects
//! (sample-journals/scenarios.toml), through the real binary.

use assert_cmd::Command;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
struct Manifest {
    scenario: Vec<Scenario>,
}

#[derive(Deserialize)]
struct Scenario {
    file: String,
    #[serde(default)]
    also: Vec<String>,
    story: String,
    groups: usize,
    expect: Vec<Expect>,
}

#[derive(Deserialize)]
struct Expect {
    execution: String,
    verdict: String,
    #[serde(default)]
    flags: Vec<String>,
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-journals")
}

fn groups_json(files: &[PathBuf]) -> Vec<Value> {
    let s = samples();
    let out = Command::cargo_bin("retrace")
        .unwrap()
        .arg("groups")
        .args(files)
        .arg("--all")
        .arg("--json")
        .arg("--contracts")
        .arg(s.join("contracts.toml"))
        .arg("--key-file")
        .arg(s.join("sample.key"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

#[test]
fn every_scenario_gives_its_expected_verdict() {
    let text = std::fs::read_to_string(samples().join("scenarios.toml")).unwrap();
    let manifest: Manifest = toml::from_str(&text).unwrap();
    let mut seen_verdicts = std::collections::BTreeSet::new();
    for sc in &manifest.scenario {
        assert!(!sc.story.is_empty());
        let mut files = vec![samples().join(&sc.file)];
        files.extend(sc.also.iter().map(|f| samples().join(f)));
        let groups = groups_json(&files);
        assert_eq!(groups.len(), sc.groups, "{}: groups {groups:#?}", sc.file);
        for e in &sc.expect {
            let g = groups
                .iter()
                .find(|g| {
                    g["execution_ids"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|x| x == e.execution.as_str())
                })
                .unwrap_or_else(|| panic!("{}: no group holds {}", sc.file, e.execution));
            assert_eq!(g["verdict"], e.verdict.as_str(), "{}: {g:#}", sc.file);
            let flags: Vec<&str> = g["flags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect();
            for f in &e.flags {
                assert!(
                    flags.contains(&f.as_str()),
                    "{}: {} lacks flag {f}: {flags:?}",
                    sc.file,
                    e.execution
                );
            }
            seen_verdicts.insert(e.verdict.clone());
        }
    }
    // At least one scenario per verdict of docs/design.md §5.
    for v in retrace::analysis::Verdict::ALL {
        assert!(seen_verdicts.contains(v.as_str()), "no scenario for {v}");
    }
}

#[test]
fn sample_fingerprints_match_their_actions() {
    // The samples carry the fingerprints a gateway with sample.key writes;
    // only the scenario built to show a mismatch may disagree.
    for entry in std::fs::read_dir(samples().join("scenarios")).unwrap() {
        let path = entry.unwrap().path();
        let groups = groups_json(std::slice::from_ref(&path));
        let mismatched = groups
            .iter()
            .filter(|g| {
                g["flags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f == "fingerprint_mismatch")
            })
            .count();
        let expected = usize::from(path.ends_with("findings-fingerprints.jsonl"));
        assert_eq!(mismatched, expected, "{}", path.display());
    }
}

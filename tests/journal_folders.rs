//! Journals as incidents leave them: a folder of journals (rotated,
//! compressed, with notes and binaries beside them), gzip and zstd read by
//! their magic bytes, and evidence read back from compressed journals.

mod common;

use assert_cmd::Command;
use common::stderr;
use retrace::query::{Investigation, Setup};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

fn retrace() -> Command {
    Command::cargo_bin("retrace").unwrap()
}

fn incident() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-journals/deploy-release-incident")
}

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-journals/scenarios")
        .join(name)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

const ELF: &[u8] = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0";

/// The sample incident as a rotated, compressed folder: the sessions
/// journal gzip'd under a name that does not say so, the activity journal
/// zstd'd, with a note, a binary, a hidden file and a subfolder beside
/// them.
fn incident_folder() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let read = |n: &str| std::fs::read(incident().join(n)).unwrap();
    std::fs::write(
        d.path().join("sessions.jsonl.1"),
        gzip(&read("sessions.jsonl")),
    )
    .unwrap();
    std::fs::write(
        d.path().join("activity.jsonl.zst"),
        zstd(&read("activity.jsonl")),
    )
    .unwrap();
    std::fs::write(d.path().join("NOTES.txt"), "on call: alice\nticket INC-7\n").unwrap();
    std::fs::write(d.path().join("gateway"), ELF).unwrap();
    std::fs::write(d.path().join(".activity.jsonl.swp"), ELF).unwrap();
    std::fs::create_dir(d.path().join("older")).unwrap();
    std::fs::copy(
        scenario("rejected.jsonl"),
        d.path().join("older/rejected.jsonl"),
    )
    .unwrap();
    d
}

fn groups(args: &[&std::ffi::OsStr]) -> (Value, String) {
    let o = retrace()
        .args(["groups", "--all", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    (serde_json::from_slice(&o.stdout).unwrap(), stderr(&o))
}

fn verdicts(v: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["group_id"].as_str().unwrap().to_string(),
                g["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_folder_reads_its_journals_compressed_or_not_and_notes_the_rest() {
    let d = incident_folder();
    let (plain, _) = groups(&[
        incident().join("sessions.jsonl").as_os_str(),
        incident().join("activity.jsonl").as_os_str(),
    ]);
    let (folder, err) = groups(&[d.path().as_os_str()]);
    assert_eq!(verdicts(&folder), verdicts(&plain), "{err}");
    assert!(verdicts(&folder).len() >= 2, "{folder}");
    // What was left out, each with why; hidden files silently.
    let shown = |n: &str| d.path().join(n).display().to_string();
    assert!(
        err.contains(&format!(
            "note: {}: skipped: not a journal retrace reads (first line starts \"on call: alice\")",
            shown("NOTES.txt")
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "note: {}: skipped: a binary file (starts with bytes 7f 45 4c 46), not a journal",
            shown("gateway")
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "note: {}: 1 folder inside not read (-r reads them)",
            d.path().display()
        )),
        "{err}"
    );
    assert!(!err.contains(".activity.jsonl.swp"), "{err}");
    // -r reads the subfolder too.
    let (deep, err) = groups(&[std::ffi::OsStr::new("-r"), d.path().as_os_str()]);
    assert!(!err.contains("folder inside not read"), "{err}");
    assert!(
        verdicts(&deep).iter().any(|(_, v)| v == "rejected"),
        "{deep}"
    );
    assert_eq!(verdicts(&deep).len(), verdicts(&folder).len() + 1);
}

#[test]
fn a_folder_loads_in_sorted_order_and_reads_evidence_back() {
    let d = incident_folder();
    let setup = Setup {
        recursive: true,
        ..Setup::new(vec![d.path().to_path_buf()])
    };
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    let names: Vec<String> = inv.journals().iter().map(|j| j.name.clone()).collect();
    let want: Vec<String> = [
        "activity.jsonl.zst",
        "older/rejected.jsonl",
        "sessions.jsonl.1",
    ]
    .iter()
    .map(|n| d.path().join(n).display().to_string())
    .collect();
    assert_eq!(names, want);
    assert_eq!(inv.skipped().len(), 2, "{:?}", inv.skipped());
    // Every event's raw line, read back from the decompressed journals,
    // is the line as the plain journal holds it.
    let plain: Vec<String> = [
        "activity.jsonl",
        "sessions.jsonl",
        "../scenarios/rejected.jsonl",
    ]
    .iter()
    .flat_map(|n| {
        std::fs::read_to_string(incident().join(n))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    })
    .collect();
    let mut checked = 0;
    for g in inv.all_groups() {
        for x in g.detail().executions_detail {
            for e in inv.events(x.index) {
                let raw = inv.raw_line(e.evidence.source).unwrap();
                assert!(plain.contains(&raw), "{raw:?} is no line of the journals");
                checked += 1;
            }
        }
    }
    assert!(checked >= 8, "{checked}");
}

#[test]
fn a_compressed_journal_is_told_by_its_bytes_not_its_name() {
    let d = tempfile::tempdir().unwrap();
    let activity = std::fs::read(incident().join("activity.jsonl")).unwrap();
    // Gzip under a plain name, zstd under a .gz name, and plain text
    // under a .gz name: each read for what it is.
    let a = d.path().join("activity.jsonl.2");
    std::fs::write(&a, gzip(&activity)).unwrap();
    let b = d.path().join("activity.jsonl.3.gz");
    std::fs::write(&b, zstd(&activity)).unwrap();
    let c = d.path().join("activity.jsonl.4.gz");
    std::fs::write(&c, &activity).unwrap();
    let (plain, _) = groups(&[incident().join("activity.jsonl").as_os_str()]);
    for p in [&a, &b, &c] {
        let (v, err) = groups(&[p.as_os_str()]);
        assert_eq!(verdicts(&v), verdicts(&plain), "{}: {err}", p.display());
    }
    // Several gzip members one after the other (`cat a.gz b.gz`) are one
    // journal.
    let lines: Vec<&[u8]> = activity.split_inclusive(|&b| b == b'\n').collect();
    let half = lines.len() / 2;
    let mut two = gzip(&lines[..half].concat());
    two.extend(gzip(&lines[half..].concat()));
    let m = d.path().join("activity-members.jsonl.gz");
    std::fs::write(&m, two).unwrap();
    let (v, err) = groups(&[m.as_os_str()]);
    assert_eq!(verdicts(&v), verdicts(&plain), "{err}");
    // A pipe of gzip bytes.
    let o = retrace()
        .args(["groups", "--all", "--json", "/dev/stdin"])
        .write_stdin(gzip(&activity))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(verdicts(&v), verdicts(&plain));
}

/// A compressed journal cut before anything decompressed is an error
/// naming the decompressor; one cut part way gives the lines before the
/// cut, with a note, and in a folder the other journals are read beside it
/// (a damaged file never hides the good lines).
#[test]
fn a_corrupt_or_cut_compressed_journal_says_so() {
    let d = tempfile::tempdir().unwrap();
    let activity = std::fs::read(incident().join("activity.jsonl")).unwrap();
    let gz = gzip(&activity);
    let p = d.path().join("activity.jsonl.gz");
    std::fs::write(&p, &gz[..12]).unwrap();
    let o = retrace().args(["groups"]).arg(&p).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("cannot decompress it (gzip)") && err.contains("cut short"),
        "{err}"
    );

    // Cut part way, in a folder with the sessions journal.
    let folder = d.path().join("incident");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(
        incident().join("sessions.jsonl"),
        folder.join("sessions.jsonl"),
    )
    .unwrap();
    let (whole, _) = groups(&[incident().as_os_str()]);
    std::fs::write(folder.join("activity.jsonl.gz"), &gz[..gz.len() * 3 / 4]).unwrap();
    // `groups` asserts the run succeeds (exit 0).
    let (v, err) = groups(&[folder.as_os_str()]);
    assert!(
        err.contains("activity.jsonl.gz: its gzip stream ends early"),
        "{err}"
    );
    let calls = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|g| g["calls"].as_u64().unwrap())
            .sum::<u64>()
    };
    assert!(calls(&v) >= 1, "no call read before the cut: {v:#}\n{err}");
    assert!(calls(&v) <= calls(&whole), "{v:#}");
    // verify checked only its first part: not a whole check (exit 1).
    let o = retrace()
        .arg("verify")
        .arg(folder.join("activity.jsonl.gz"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", common::stdout(&o));
}

/// A file that no reader takes stays an error when it is named on its
/// own; only in a folder is it a note. A folder with no journal says so.
#[test]
fn an_unknown_file_named_alone_is_an_error_and_an_empty_folder_too() {
    let d = tempfile::tempdir().unwrap();
    let notes = d.path().join("NOTES.txt");
    std::fs::write(&notes, "on call: alice\n").unwrap();
    let o = retrace().arg("groups").arg(&notes).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown journal format"),
        "{}",
        stderr(&o)
    );
    let o = retrace().arg("groups").arg(d.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "retrace: {}: no journal file in this folder (1 file(s) skipped: not journals)\n",
            d.path().display()
        )
    );
    let sub = d.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::copy(scenario("clean.jsonl"), sub.join("clean.jsonl")).unwrap();
    std::fs::remove_file(&notes).unwrap();
    let o = retrace().arg("groups").arg(d.path()).output().unwrap();
    assert!(
        stderr(&o)
            .contains("no journal file in this folder (it has folders inside: -r reads them)"),
        "{}",
        stderr(&o)
    );
    let o = retrace()
        .args(["groups", "-r"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `retrace verify` on a folder verifies each journal in it, and the case
/// file beside them is checked as a case file, not read as a journal.
#[test]
fn verify_reads_a_folder_and_leaves_its_case_file_to_itself() {
    let d = incident_folder();
    let o = retrace()
        .args(["--reviewer", "alice", "review", "list", "--json"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let queue: Value = serde_json::from_slice(&o.stdout).unwrap();
    let Some(x) = queue[0]["execution_id"].as_str() else {
        panic!("nothing waits: {queue}");
    };
    let o = retrace()
        .args(["review", "decide", x])
        .arg(d.path())
        .args([
            "--decision",
            "escalated",
            "--note",
            "asked the deploy team",
            "--reviewer",
            "alice",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.path().join("retrace-case.sqlite").is_file());
    // The case file now sits in the folder; the folder still loads.
    let (v, err) = groups(&[d.path().as_os_str()]);
    assert!(!verdicts(&v).is_empty(), "{err}");
    assert!(!err.contains("retrace-case.sqlite"), "{err}");
    let o = retrace()
        .args(["verify", "--json"])
        .arg(d.path())
        .output()
        .unwrap();
    let reports: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = reports
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["journal"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names[0].ends_with("activity.jsonl.zst"), "{names:?}");
    assert!(names[1].ends_with("sessions.jsonl.1"), "{names:?}");
    assert!(names[2].ends_with("retrace-case.sqlite"), "{names:?}");
    assert!(stderr(&o).contains("NOTES.txt: skipped"), "{}", stderr(&o));
}

/// A copy of a journal beside it (a `.1` copied rather than rotated, a
/// `.bak` snapshot taken before the journal grew) is read once, as the
/// journal: a gateway log whose ids carry the journal's identity made each
/// of its calls a second call of the same intent, every group a duplicate.
#[test]
fn a_copy_of_a_journal_in_its_folder_is_read_once() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lab/mcp-audit-gateway/audit-log.jsonl");
    let bytes = std::fs::read(&log).unwrap();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("audit-log.jsonl"), &bytes).unwrap();
    std::fs::write(d.path().join("audit-log.jsonl.1"), &bytes).unwrap();
    let cut = bytes
        .iter()
        .take(bytes.len() / 2)
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    std::fs::write(d.path().join("audit-log.jsonl.bak"), &bytes[..cut]).unwrap();
    // And compressed, as rotation leaves it.
    std::fs::write(d.path().join("audit-log.jsonl.2.gz"), gzip(&bytes)).unwrap();
    let (alone, _) = groups(&[log.as_os_str()]);
    let (folder, err) = groups(&[d.path().as_os_str()]);
    assert_eq!(folder, alone, "{err}");
    assert!(err.contains("audit-log.jsonl.1 is a copy of"), "{err}");
    assert!(
        err.contains("audit-log.jsonl.bak is a copy of the start of"),
        "{err}"
    );
    assert!(err.contains("audit-log.jsonl.2.gz is a copy of"), "{err}");
    // Whole once decompressed, whatever its size on disk.
    assert!(
        !err.contains("audit-log.jsonl.2.gz is a copy of the start"),
        "{err}"
    );
}

/// A folder of OpenTelemetry exports whose rotation left a file holding
/// one line cut short (the export was renamed mid-write), and a file of
/// nothing but bad lines that open like an export: each is skipped with a
/// note naming it and its first bad line, and the folder's other journal
/// gives the verdicts it gives alone. The whole folder failed on either.
/// Named on its own, such a file stays an error.
#[test]
fn a_file_of_a_folder_with_no_readable_line_is_skipped_with_a_note() {
    let d = tempfile::tempdir().unwrap();
    let traces =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lab/otel-sdk/traces.jsonl");
    let text = std::fs::read_to_string(&traces).unwrap();
    std::fs::write(d.path().join("traces.jsonl"), &text).unwrap();
    let first = text.lines().next().unwrap();
    // The start of a line, no newline: a write cut short by the rotation.
    std::fs::write(d.path().join("traces.jsonl.2"), &first[..first.len() / 2]).unwrap();
    std::fs::write(
        d.path().join("zz-bad.jsonl"),
        format!("{}\nnot json\n{{\"resourceSpans\":[{{\"scopeSpans\":[{{\"spans\":[{{\"traceId\":\"zz\"}}]}}]}}]}}\n", &first[..first.len() / 3]),
    )
    .unwrap();
    let (folder, err) = groups(&[d.path().as_os_str()]);
    for (name, why) in [
        ("traces.jsonl.2", "line 1 is cut short"),
        (
            "zz-bad.jsonl",
            "zz-bad.jsonl:1: not an OTLP TracesData object",
        ),
    ] {
        let skipped = format!("{name}: skipped: not one of its lines can be read");
        assert!(
            err.lines()
                .any(|l| l.starts_with("note: ") && l.contains(&skipped) && l.contains(why)),
            "{name}: {err}"
        );
    }
    let (alone, _) = groups(&[traces.as_os_str()]);
    assert_eq!(verdicts(&folder), verdicts(&alone));
    assert!(
        verdicts(&folder)
            .iter()
            .any(|(_, v)| v == "duplicate_side_effect"),
        "{folder}"
    );
    let o = retrace()
        .args(["groups"])
        .arg(d.path().join("zz-bad.jsonl"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("zz-bad.jsonl:1:"), "{}", stderr(&o));
}

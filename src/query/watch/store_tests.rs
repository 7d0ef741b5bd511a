//! The evicted groups' index on disk, and in memory when no temporary
//! file can be made (docs/design.md §7.7 "Memory").

use super::tests::{evicting, holding};
use super::*;
use std::io::Write;

/// `calls` clean calls, one execution each, appended ten at a time, each
/// poll evicting the groups gone quiet; the watches are polled after
/// each ten.
fn long_journal(calls: usize, watches: &mut [&mut Watch], p: &std::path::Path) {
    let root = env!("CARGO_MANIFEST_DIR");
    let text =
        std::fs::read_to_string(format!("{root}/sample-journals/scenarios/clean.jsonl")).unwrap();
    let template: Vec<&str> = text.lines().filter(|l| l.contains("\"act_CL1\"")).collect();
    assert!(template.len() >= 4, "{template:?}");
    let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
    for i in 0..calls {
        for l in &template {
            let l = l
                .replace("act_CL1", &format!("act_{i}"))
                .replace("call_101", &format!("call_{i}"))
                .replace("run:c1", &format!("run:c{i}"));
            writeln!(f, "{l}").unwrap();
        }
        if i % 10 == 9 {
            for w in watches.iter_mut() {
                w.poll();
            }
        }
    }
}

fn setup(d: &tempfile::TempDir) -> (Setup, std::path::PathBuf) {
    let p = d.path().join("long.jsonl");
    std::fs::File::create(&p).unwrap();
    let mut setup = Setup::new(vec![p.clone()]);
    setup.case = Some(d.path().join("none.sqlite"));
    (setup, p)
}

/// Thousands of evicted groups: on disk, the index holds nothing of them
/// in memory, where an index in memory holds an entry a group and more;
/// the temporary file is deleted when the watch ends.
#[test]
fn the_evicted_groups_index_is_on_disk_and_holds_nothing_in_memory() {
    let d = tempfile::tempdir().unwrap();
    let (setup, p) = setup(&d);
    let mut disk = Watch::open(&setup, evicting()).unwrap();
    assert!(disk.index_on_disk(), "{:?}", disk.index_note());
    let mut memory = Watch::open(&setup, evicting()).unwrap();
    memory.evictions = evict::Evictions::default();
    let mut held = Watch::open(&setup, holding()).unwrap();
    assert!(!held.index_on_disk());
    let calls = 3_000;
    long_journal(calls, &mut [&mut disk, &mut memory, &mut held], &p);
    let (s, m, h) = (disk.stats(), memory.stats(), held.stats());
    assert_eq!(s, m);
    assert_eq!((s.events, h.executions), (h.events, calls));
    assert!(s.evicted_groups >= calls - 10, "{s:?}");
    assert!(
        disk.evictions.in_memory() <= 10,
        "{}",
        disk.evictions.in_memory()
    );
    assert!(memory.evictions.in_memory() >= 2 * (calls - 10));
    assert_eq!(disk.index_fault(), None);
    let file = disk.evictions.path().unwrap().to_path_buf();
    // On Unix the file has no name while the watch runs (nothing is left
    // if the process is killed); elsewhere it is there until the end.
    assert_eq!(file.exists(), !cfg!(unix), "{}", file.display());
    drop(disk);
    assert!(!file.exists(), "{} left behind", file.display());
}

/// A watch killed outright (SIGKILL: no destructor runs) leaves no
/// temporary file behind, and its index was written and read back through
/// the open database all the same.
#[cfg(unix)]
#[test]
fn a_killed_watch_leaves_no_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let (store, why) = super::store::Store::on_disk_in(d.path());
    assert!(store.on_disk(), "{why:?}");
    let names = || std::fs::read_dir(d.path()).unwrap().count();
    assert_eq!(names(), 0);
    // What a kill does to the store: it is never dropped.
    std::mem::forget(store);
    assert_eq!(names(), 0);
}

/// Groups evicted on disk are read back whole: a retry of an evicted
/// call, much later, is the group's second execution, as with the index
/// in memory.
#[test]
fn a_retry_of_a_group_evicted_on_disk_is_judged_with_it() {
    let d = tempfile::tempdir().unwrap();
    let (setup, p) = setup(&d);
    let mut disk = Watch::open(&setup, evicting()).unwrap();
    let mut memory = Watch::open(&setup, evicting()).unwrap();
    memory.evictions = evict::Evictions::default();
    long_journal(200, &mut [&mut disk, &mut memory], &p);
    assert!(disk.stats().evicted_groups >= 190);
    // The first call again, under another execution id.
    let root = env!("CARGO_MANIFEST_DIR");
    let text =
        std::fs::read_to_string(format!("{root}/sample-journals/scenarios/clean.jsonl")).unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    for l in text.lines().filter(|l| l.contains("\"act_CL1\"")) {
        let l = l
            .replace("act_CL1", "act_again")
            .replace("call_101", "call_0")
            .replace("run:c1", "run:c0");
        writeln!(f, "{l}").unwrap();
    }
    let (a, b) = (disk.poll().0, memory.poll().0);
    assert_eq!(a, b);
    assert_eq!(disk.stats(), memory.stats());
    assert!(disk.stats().read_back >= 1, "{:?}", disk.stats());
}

/// No temporary file can be made (a directory that is not there, as a
/// read-only one): the index is in memory, with why, and the watch
/// evicts and reads back as on disk.
#[test]
fn without_a_temporary_file_the_index_is_in_memory() {
    let d = tempfile::tempdir().unwrap();
    let (setup, p) = setup(&d);
    let (fallback, why) = evict::Evictions::on_disk_in(&d.path().join("not-there"));
    assert!(!fallback.on_disk());
    assert!(
        why.as_deref().is_some_and(|w| w.contains("not-there")),
        "{why:?}"
    );
    let mut memory = Watch::open(&setup, evicting()).unwrap();
    memory.evictions = fallback;
    memory.index_note = why;
    let mut disk = Watch::open(&setup, evicting()).unwrap();
    long_journal(500, &mut [&mut disk, &mut memory], &p);
    assert!(memory.index_note().is_some());
    assert!(!memory.index_on_disk());
    assert_eq!(memory.stats(), disk.stats());
    assert!(memory.stats().evicted_groups >= 490);
    assert!(memory.evictions.in_memory() >= 490);
}

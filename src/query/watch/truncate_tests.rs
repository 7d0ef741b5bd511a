//! Truncations and rewrites give one answer whatever the eviction timing
//! (docs/design.md §7.7 "Truncation and rewrites"): a watch that lets go
//! of every group as soon as it is quiet and a watch that holds every
//! event print the same lines, and end on the verdicts `retrace groups`
//! gives the file as it ends.

use super::tests::{Reported, evicting, holding, reported_of};
use super::*;
use std::io::Write;

/// What a test does to the followed file, a poll after each.
enum Step<'a> {
    /// Appends a line.
    Line(&'a str),
    /// Cuts the file to nothing (`copytruncate`).
    Truncate,
    /// Replaces `from` with `to` (same length) in line `line` (1-based),
    /// in place: the file keeps its size and inode.
    Edit {
        line: usize,
        from: &'a str,
        to: &'a str,
    },
    /// Writes the file anew with these lines (same inode), longer than
    /// what was read, between two polls.
    Rewrite(&'a [&'a str]),
}

/// What a watch printed, its counts, and the verdicts it ended on.
struct Run {
    reported: Vec<Reported>,
    stats: WatchStats,
    /// The last verdict printed per group (withdrawn groups removed).
    last: HashMap<String, Verdict>,
    /// The verdicts `retrace groups` gives the file as it ends.
    whole: HashMap<String, Verdict>,
    /// Its executions.
    whole_executions: usize,
}

fn run(steps: &[Step], options: WatchOptions) -> Run {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("live.jsonl");
    std::fs::File::create(&p).unwrap();
    let mut setup = Setup::new(vec![p.clone()]);
    setup.case = Some(d.path().join("none.sqlite"));
    let mut w = Watch::open(&setup, options).unwrap();
    let mut reported = Vec::new();
    let mut last = HashMap::new();
    for step in steps {
        match step {
            Step::Line(l) => {
                let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
                writeln!(f, "{l}").unwrap();
            }
            Step::Truncate => {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&p)
                    .unwrap()
                    .set_len(0)
                    .unwrap();
            }
            Step::Edit { line, from, to } => {
                assert_eq!(from.len(), to.len());
                let text = std::fs::read_to_string(&p).unwrap();
                let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
                assert!(lines[line - 1].contains(from), "{}", lines[line - 1]);
                lines[line - 1] = lines[line - 1].replacen(from, to, 1);
                let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
                f.write_all(format!("{}\n", lines.join("\n")).as_bytes())
                    .unwrap();
            }
            Step::Rewrite(lines) => {
                let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
                f.write_all(format!("{}\n", lines.join("\n")).as_bytes())
                    .unwrap();
            }
        }
        for _ in 0..8 {
            let (notices, more) = w.poll();
            for n in notices {
                reported.push(reported_of(&n, d.path()));
                match n {
                    Notice::Change(c) => {
                        last.insert(c.group_id.clone(), c.verdict);
                    }
                    Notice::Withdrawn { group_id, .. } => {
                        last.remove(&group_id);
                    }
                    _ => {}
                }
            }
            if !more {
                break;
            }
        }
    }
    let inv = crate::query::Investigation::from_sources(
        vec![JournalSource::file(&p)],
        &crate::journal::LoadOptions::default(),
        Config::default(),
        &mut |_| {},
    )
    .unwrap();
    let whole: HashMap<String, Verdict> = inv
        .all_groups()
        .map(|g| (g.id().to_string(), g.verdict()))
        .collect();
    let whole_executions = inv.all_groups().map(|g| g.executions().count()).sum();
    Run {
        reported,
        stats: w.stats(),
        last,
        whole,
        whole_executions,
    }
}

/// The verdicts a watch ended on are those `retrace groups` gives.
fn assert_ends_as_groups_does(r: &Run, what: &str) {
    for (id, v) in &r.whole {
        match r.last.get(id) {
            Some(got) => assert_eq!(got, v, "{what}: group {id}: {:#?}", r.reported),
            None => assert_eq!(
                *v,
                Verdict::Clean,
                "{what}: group {id} never reported: {:#?}",
                r.reported
            ),
        }
    }
    for (id, v) in &r.last {
        assert!(
            r.whole.contains_key(id) || *v == Verdict::Clean,
            "{what}: group {id} ({v}) is not in the file as it ends: {:#?}",
            r.reported
        );
    }
}

fn scenario(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/sample-journals/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// The SSH scenario truncated after its first execution, then given the
/// retry: a group still held at the truncation kept its first execution
/// (`possible_duplicate`), one evicted lost it (`clean`). Now both drop
/// what the truncation removed, print the same, and end as `retrace
/// groups` reads the file as it ends; so does every scenario cut in two.
#[test]
fn a_truncation_drops_its_lines_from_held_and_evicted_groups_alike() {
    let text = scenario("scenarios/possible-duplicate-ssh.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let retry = lines
        .iter()
        .position(|l| l.contains("\"act_MIG2\""))
        .unwrap();
    let mut steps: Vec<Step> = lines[..retry].iter().map(|l| Step::Line(l)).collect();
    steps.push(Step::Truncate);
    steps.extend(lines[retry..].iter().map(|l| Step::Line(l)));
    let held = run(&steps, holding());
    let evicted = run(&steps, evicting());
    assert_eq!(held.reported, evicted.reported);
    assert!(evicted.stats.evicted_groups > 0 || evicted.stats.read_back > 0);
    assert!(
        held.reported.iter().any(|n| n.starts_with("Truncated")),
        "{:#?}",
        held.reported
    );
    assert!(
        !held
            .reported
            .iter()
            .any(|n| n.contains("PossibleDuplicate")),
        "{:#?}",
        held.reported
    );
    assert_ends_as_groups_does(&held, "ssh, held");
    assert_ends_as_groups_does(&evicted, "ssh, evicted");

    let mut names: Vec<String> = super::tests::scenario_files()
        .into_iter()
        .map(|n| n.trim_start_matches("sample-journals/").to_string())
        .collect();
    names.push("deploy-release-incident/activity.jsonl".into());
    for name in &names {
        let text = scenario(name);
        let lines: Vec<&str> = text.lines().collect();
        for cut in [lines.len() / 3, lines.len() / 2] {
            let mut steps: Vec<Step> = lines[..cut].iter().map(|l| Step::Line(l)).collect();
            steps.push(Step::Truncate);
            steps.extend(lines[cut..].iter().map(|l| Step::Line(l)));
            let held = run(&steps, holding());
            let evicted = run(&steps, evicting());
            assert_eq!(held.reported, evicted.reported, "{name} cut at {cut}");
            assert_ends_as_groups_does(&held, name);
            assert_ends_as_groups_does(&evicted, name);
        }
    }
}

/// The SSH scenario written whole (a possible duplicate printed), then
/// truncated and given its retry again: the group printed as a possible
/// duplicate is said to be withdrawn (its first execution is gone), not
/// left standing. (With an earlier execution kept, in a rotated file, it
/// would be judged again and its new verdict printed as a change.)
#[test]
fn a_duplicate_whose_first_execution_is_truncated_away_is_withdrawn() {
    let text = scenario("scenarios/possible-duplicate-ssh.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let retry = lines
        .iter()
        .position(|l| l.contains("\"act_MIG2\""))
        .unwrap();
    let mut steps: Vec<Step> = lines.iter().map(|l| Step::Line(l)).collect();
    steps.push(Step::Truncate);
    steps.extend(lines[retry..].iter().map(|l| Step::Line(l)));
    for options in [holding(), evicting()] {
        let r = run(&steps, options);
        let dup = r
            .reported
            .iter()
            .position(|n| n.contains("verdict: PossibleDuplicate"))
            .unwrap_or_else(|| panic!("{:#?}", r.reported));
        let gone = r
            .reported
            .iter()
            .position(|n| {
                n.starts_with("Withdrawn") && n.contains("previous_verdict: PossibleDuplicate")
            })
            .unwrap_or_else(|| panic!("{:#?}", r.reported));
        assert!(dup < gone, "{:#?}", r.reported);
        assert_ends_as_groups_does(&r, "ssh truncated");
    }
}

/// The summary's counts after a truncation: every execution and group the
/// watch holds or has let go of, exactly, which are those of the file as
/// it ends (a group read back with its lines gone left its executions
/// counted).
#[test]
fn the_counts_after_a_truncation_are_those_of_the_file_as_it_ends() {
    let text = scenario("scenarios/possible-duplicate-ssh.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let retry = lines
        .iter()
        .position(|l| l.contains("\"act_MIG2\""))
        .unwrap();
    let mut steps: Vec<Step> = lines[..retry].iter().map(|l| Step::Line(l)).collect();
    steps.push(Step::Truncate);
    steps.extend(lines[retry..].iter().map(|l| Step::Line(l)));
    for options in [holding(), evicting()] {
        let r = run(&steps, options);
        let s = r.stats;
        assert_eq!(
            s.executions + s.evicted_executions,
            r.whole_executions,
            "{s:?}"
        );
        assert_eq!(s.groups + s.evicted_groups, r.whole.len(), "{s:?}");
    }
}

/// A line of an evicted group edited in place (same length, so the file
/// keeps its size): read back, it was read as it reads now, and could
/// move its execution to another group while a holding watch kept the
/// old reading. Its hash no longer matches: the file is taken as
/// rewritten, reported, and read again from its start, so the watch ends
/// as `retrace groups` reads the file as it now is.
#[test]
fn a_line_edited_after_its_group_was_evicted_is_a_rewrite() {
    let text = scenario("scenarios/possible-duplicate-ssh.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let retry = lines
        .iter()
        .position(|l| l.contains("\"act_MIG2\""))
        .unwrap();
    let accepted = lines
        .iter()
        .position(|l| l.contains("\"act_MIG1\"") && l.contains("\"accepted\""))
        .unwrap();
    let mut steps: Vec<Step> = lines[..retry].iter().map(|l| Step::Line(l)).collect();
    // The first execution's intent now another run's: another group.
    let scope = lines[accepted]
        .split("\"intent_scope\":\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap();
    let other: String = scope
        .chars()
        .rev()
        .map(|c| if c == 'z' { 'y' } else { 'z' })
        .collect();
    steps.push(Step::Edit {
        line: accepted + 1,
        from: scope,
        to: &other,
    });
    steps.extend(lines[retry..].iter().map(|l| Step::Line(l)));
    let r = run(&steps, evicting());
    assert!(r.stats.read_back > 0, "{:?}", r.stats);
    assert!(
        r.reported.iter().any(|n| n.starts_with("Truncated")),
        "{:#?}",
        r.reported
    );
    assert_ends_as_groups_does(&r, "edited in place");
}

/// A file rewritten with other lines between two polls, to a greater size
/// than was read: the follower read on from the old offset, in the middle
/// of a line. Now it is a truncation: reported, what was read before is
/// dropped, and the new file is read from its start.
#[test]
fn a_file_rewritten_longer_within_one_poll_is_a_truncation() {
    let ssh = scenario("scenarios/possible-duplicate-ssh.jsonl");
    let incident = scenario("deploy-release-incident/activity.jsonl");
    let ssh: Vec<&str> = ssh.lines().collect();
    let incident: Vec<&str> = incident.lines().collect();
    let mut steps: Vec<Step> = ssh.iter().map(|l| Step::Line(l)).collect();
    steps.push(Step::Rewrite(&incident));
    for options in [holding(), evicting()] {
        let r = run(&steps, options);
        assert!(
            r.reported.iter().any(|n| n.starts_with("Truncated")),
            "{:#?}",
            r.reported
        );
        assert_eq!(r.stats.bad_lines, 0, "{:#?}", r.reported);
        assert_ends_as_groups_does(&r, "rewritten longer");
    }
}

//! Classification of chain breaks by sequence shape, and evidence marks.

use super::*;

fn params(first_seq: Option<u64>) -> RuleParams {
    RuleParams {
        rule: ChainRule::Native,
        genesis: "G".into(),
        first_seq,
        signatures: SignatureCheck::NotApplicable,
        require_newline: false,
    }
}

/// Line i (1-based) of an abstract chain: seq i, hash "h{i}", links h{i-1}.
fn feed(t: &mut ChainTracker, lines: &[(u32, u64)]) {
    for &(line, seq) in lines {
        let prev = if seq == 1 {
            "G".to_string()
        } else {
            format!("h{}", seq - 1)
        };
        let h = format!("h{seq}");
        t.link(LinkInput {
            line,
            seq: Some(seq),
            prev: prev.as_bytes(),
            stored: Some(h.as_bytes()),
            computed: h.as_bytes(),
            terminated: true,
            sig: SigResult::NotChecked,
        });
    }
}

fn kind_at(order: &[u64]) -> (FailureKind, u32) {
    let mut t = ChainTracker::new(params(Some(1)));
    let lines: Vec<(u32, u64)> = order
        .iter()
        .enumerate()
        .map(|(i, &s)| (i as u32 + 1, s))
        .collect();
    feed(&mut t, &lines);
    let st = t.finish();
    let f = st.failure().expect("broken").clone();
    (f.kind, f.line)
}

#[test]
fn classifies_by_sequence_shape() {
    assert_eq!(kind_at(&[1, 2, 4, 5]), (FailureKind::DeletedLine, 3));
    assert_eq!(kind_at(&[1, 2, 4, 3, 5]), (FailureKind::ReorderedLines, 3));
    assert_eq!(kind_at(&[1, 3, 4, 2]), (FailureKind::ReorderedLines, 2));
    assert_eq!(kind_at(&[2, 3]), (FailureKind::DeletedLine, 1));
    assert_eq!(kind_at(&[2, 1, 3]), (FailureKind::ReorderedLines, 1));
    assert_eq!(kind_at(&[1, 2, 2, 3]), (FailureKind::InsertedLine, 3));
    let mut t = ChainTracker::new(params(Some(1)));
    feed(&mut t, &[(1, 1), (2, 2), (3, 3)]);
    assert!(t.finish().is_intact());
}

#[test]
fn marks_evidence_after_the_break() {
    let st = ChainStatus::Broken {
        rule: ChainRule::Native,
        lines_checked: 3,
        lines: 9,
        failure: ChainFailure {
            kind: FailureKind::ChangedLine,
            line: 3,
            seq: Some(3),
            message: String::new(),
            unverified_from: 3,
        },
        signatures: SignatureCheck::NotApplicable,
    };
    assert_eq!(st.mark(2), ChainMark::Verified);
    assert_eq!(st.mark(3), ChainMark::Unverified);
    assert_eq!(st.mark(9), ChainMark::Unverified);
    assert_eq!(ChainStatus::no_chain("x").mark(1), ChainMark::NoChain);
}

/// A line of seq `seq` as [`feed`] writes it, `(prev, stored)`; a
/// `forged` one stores another hash ("x{seq}"): a line rewritten, or a
/// second line linked to the same one.
fn hashes((seq, forged): (u64, bool)) -> (String, String) {
    let prev = if seq == 1 {
        "G".to_string()
    } else {
        format!("h{}", seq - 1)
    };
    let stored = if forged {
        format!("x{seq}")
    } else {
        format!("h{seq}")
    };
    (prev, stored)
}

/// Links line `i` (0-based) of `order` alone.
fn link_one(t: &mut ChainTracker, order: &[(u64, bool)], i: usize) {
    let (prev, h) = hashes(order[i]);
    t.link(LinkInput {
        line: i as u32 + 1,
        seq: Some(order[i].0),
        prev: prev.as_bytes(),
        stored: Some(h.as_bytes()),
        computed: h.as_bytes(),
        terminated: true,
        sig: SigResult::NotChecked,
    });
}

/// The lines of `order`, in pieces that start at `starts`, fed as the
/// native verify feeds them: a line that links to the stored hash of the
/// line before it in its piece, with the next `seq`, joins a run, taken
/// with [`ChainTracker::link_run`] while the chain is intact; any other
/// line is linked alone.
fn feed_in_runs(t: &mut ChainTracker, order: &[(u64, bool)], starts: &[usize]) {
    // (lines, last index) of the run being gathered.
    let mut run: Option<(u64, usize)> = None;
    let flush = |t: &mut ChainTracker, run: &mut Option<(u64, usize)>| {
        if let Some((lines, last)) = run.take() {
            let last_stored = hashes(order[last]).1;
            let before = hashes(order[last - 1]).1;
            let took = t.link_run(Run {
                lines,
                last_line: last as u32 + 1,
                last_seq: Some(order[last].0),
                last: last_stored.as_bytes(),
                before_last: before.as_bytes(),
            });
            assert!(took, "a run gathered while the chain was intact");
        }
    };
    for i in 0..order.len() {
        let follows = i > 0
            && !starts.contains(&i)
            && order[i - 1].0 + 1 == order[i].0
            && hashes(order[i]).0 == hashes(order[i - 1]).1;
        if follows && (run.is_some() || !t.broken()) {
            run = Some((run.map_or(0, |r| r.0) + 1, i));
            continue;
        }
        flush(t, &mut run);
        link_one(t, order, i);
    }
    flush(t, &mut run);
}

/// Every order of up to five lines of seq 1 to 4, each as written or
/// forged (deleted, repeated, moved, rewritten and forked lines), cut into
/// pieces every way: runs taken at once end in the status, failure and
/// message linking line by line gives.
#[test]
fn a_run_taken_at_once_is_what_its_lines_give_one_by_one() {
    let mut compared = 0u64;
    let mut broken = 0u64;
    for n in 1..=5usize {
        for code in 0..8u64.pow(n as u32) {
            let order: Vec<(u64, bool)> = (0..n)
                .map(|k| {
                    let c = code / 8u64.pow(k as u32) % 8;
                    (c % 4 + 1, c >= 4)
                })
                .collect();
            let mut one = ChainTracker::new(params(Some(1)));
            for i in 0..n {
                link_one(&mut one, &order, i);
            }
            let want = one.finish();
            broken += u64::from(!want.is_intact());
            let want = format!("{want:?}");
            for cuts in 0..1u32 << (n - 1) {
                let starts: Vec<usize> = (1..n).filter(|k| cuts >> (k - 1) & 1 == 1).collect();
                let mut runs = ChainTracker::new(params(Some(1)));
                feed_in_runs(&mut runs, &order, &starts);
                assert_eq!(
                    format!("{:?}", runs.finish()),
                    want,
                    "{order:?} cut at {starts:?}"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 8 + 64 * 2 + 512 * 4 + 4096 * 8 + 32768 * 16);
    assert!(broken > 0);
}
/// A run after a break is refused, and one before any line too: the
/// caller links those lines one by one.
#[test]
fn a_run_is_refused_after_a_break_or_before_any_line() {
    let run = Run {
        lines: 1,
        last_line: 2,
        last_seq: Some(2),
        last: b"h2",
        before_last: b"h1",
    };
    let mut t = ChainTracker::new(params(Some(1)));
    assert!(!t.link_run(run));
    feed(&mut t, &[(1, 2)]);
    assert!(t.broken());
    assert!(!t.link_run(run));
    let mut t = ChainTracker::new(params(Some(1)));
    feed(&mut t, &[(1, 1)]);
    assert!(t.link_run(run));
    assert!(t.finish().is_intact());
}

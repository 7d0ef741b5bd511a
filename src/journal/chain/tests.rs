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

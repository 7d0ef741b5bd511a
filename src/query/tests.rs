use super::*;

fn sample() -> Investigation {
    Investigation::open(&Setup::default(), &mut |_| {}).unwrap()
}

#[test]
fn group_indices_follow_groups() {
    let inv = sample();
    for f in [
        GroupFilter::default(),
        GroupFilter {
            all: true,
            ..GroupFilter::default()
        },
    ] {
        let by_ref: Vec<&str> = inv.groups(&f).iter().map(|g| g.id()).collect();
        let by_index: Vec<&str> = inv
            .group_indices(&f)
            .into_iter()
            .map(|i| inv.group_at(i).unwrap().id())
            .collect();
        assert_eq!(by_ref, by_index);
    }
}

#[test]
fn every_execution_belongs_to_its_group() {
    let inv = sample();
    for xi in 0..inv.model.execution_count() {
        let x = ExecIdx::new(xi);
        let g = inv.group_of(x).unwrap();
        assert!(g.executions().any(|e| e == x));
    }
}

#[test]
fn session_executions_come_from_calls() {
    let inv = sample();
    let per = inv.session_executions();
    assert_eq!(per.len(), inv.sessions().len());
    let expected: std::collections::BTreeSet<ExecIdx> = inv
        .model
        .calls
        .iter()
        .filter(|c| inv.model.call_ref(c).session_id == Some(inv.sessions()[0].session_id.as_str()))
        .map(|c| c.execution)
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(
        per[0]
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        expected
    );
}

#[test]
fn call_rate_counts_every_call() {
    let inv = sample();
    for n in [1, 7, 64] {
        let r = inv.call_rate(n);
        assert_eq!(r.counts.len(), n);
        assert_eq!(r.counts.iter().sum::<u64>(), inv.model.calls.len() as u64);
    }
    let r = inv.call_rate(10);
    assert!(r.counts[0] > 0 && r.counts[9] > 0, "{r:?}");
}

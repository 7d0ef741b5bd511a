//! [`reanalyze`] against [`analyze`]: a model grown in random steps is
//! analysed as a model read whole is.

use super::super::{Analysis, Config, analyze};
use super::{Grown, analyze_followed, reanalyze};
use crate::journal::{JournalSource, LoadOptions, LoadedJournal};
use crate::model::{Model, ModelBuilder, Record};
use std::path::{Path, PathBuf};

/// The records a model was read from, in the order read (sessions once,
/// with what all their records said).
fn records_of(model: &Model) -> Vec<Record> {
    let mut all: Vec<((crate::model::JournalId, u64), Record)> = Vec::new();
    for s in &model.sessions {
        let at = (s.source.journal(), u64::from(s.source.position()));
        all.push((at, Record::Session(Box::new(s.clone()))));
    }
    for h in &model.tool_hints {
        let at = (h.source.journal(), u64::from(h.source.position()));
        all.push((at, Record::ToolHint(h.clone())));
    }
    for x in model.executions() {
        for e in x.events() {
            let at = (e.source().journal(), u64::from(e.source().position()));
            all.push((
                at,
                Record::Event {
                    execution_id: x.id().to_string(),
                    event: e.to_event(),
                },
            ));
        }
    }
    all.sort_by_key(|(at, _)| *at);
    all.into_iter().map(|(_, r)| r).collect()
}

fn whole(records: &[Record]) -> Model {
    let mut b = ModelBuilder::new();
    for r in records {
        b.push(r.clone());
    }
    b.finish()
}

/// What the views read of an analysis.
fn same(got: &Analysis, want: &Analysis, what: &str) {
    assert_eq!(got.groups, want.groups, "{what}: groups");
    assert_eq!(got.lifecycles, want.lifecycles, "{what}: lifecycles");
    assert_eq!(
        got.execution_group, want.execution_group,
        "{what}: group of each execution"
    );
    assert_eq!(got.notes, want.notes, "{what}: notes");
    assert_eq!(got.scheme, want.scheme, "{what}: scheme");
}

/// A small deterministic generator (xorshift64).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// Grows a model of `records` in the steps `cuts` (ascending positions),
/// analysing it by [`reanalyze`] after each, and checks every analysis
/// against [`analyze`] of the model so far; how many steps followed.
fn grow(
    records: &[Record],
    cuts: &[usize],
    journals: &Vec<LoadedJournal>,
    config: &Config,
) -> usize {
    let first = cuts.first().copied().unwrap_or(records.len());
    let mut model = whole(&records[..first]);
    let mut a = analyze_followed(&model, journals, config);
    same(&a, &analyze(&model, journals, config), "first part");
    let mut from = first;
    for &to in cuts.iter().skip(1).chain([&records.len()]) {
        let part = &records[from..to];
        let mut new_sessions = Vec::new();
        let mut quiet = true;
        for r in part {
            match r {
                Record::Session(s) if model.session(&s.session_id).is_none() => {
                    new_sessions.push(s.session_id.clone());
                }
                Record::Session(_) | Record::ToolHint(_) => quiet = false,
                Record::Event { .. } => {}
            }
        }
        let mut b = match model.into_builder() {
            Ok(b) => b,
            Err(_) => return 0,
        };
        for r in part {
            b.push(r.clone());
        }
        let (m, growth) = b.finish_grown();
        model = m;
        let grown = growth.as_ref().filter(|_| quiet).map(|g| Grown {
            growth: g,
            new_sessions: &new_sessions,
        });
        a = reanalyze(a, &model, journals, config, grown);
        let what = format!("records {from}..{to} of {}", records.len());
        same(&a, &analyze(&model, journals, config), &what);
        assert_eq!(model.calls, whole(&records[..to]).calls, "{what}: calls");
        from = to;
    }
    a.carried.follows()
}

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn journals_to_grow() -> Vec<PathBuf> {
    let mut s: Vec<PathBuf> = std::fs::read_dir(repo("sample-journals/scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    s.sort();
    s.push(repo(
        "sample-journals/deploy-release-incident/activity.jsonl",
    ));
    s.push(repo("tests/fixtures/pending-retry.jsonl"));
    s.push(repo("tests/fixtures/near-duplicate.jsonl"));
    s
}

/// Every scenario, cut at random places into two to five parts, with no
/// contracts and with the sample's: each part's analysis is the whole one.
#[test]
fn reanalysis_is_the_whole_analysis_for_random_splits_of_every_scenario() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut followed = 0;
    for path in journals_to_grow() {
        let (journals, full) = crate::journal::load_with(
            vec![JournalSource::file(&path)],
            &LoadOptions::default(),
            &mut |_| {},
        )
        .unwrap();
        let records = records_of(&full);
        for config in [Config::default(), crate::sample::config()] {
            for parts in [2, 3, 5] {
                for _ in 0..6 {
                    let mut cuts: Vec<usize> =
                        (1..parts).map(|_| 1 + rng.below(records.len())).collect();
                    cuts.sort_unstable();
                    followed += grow(&records, &cuts, &journals, &config);
                }
            }
            // One record at a time.
            let cuts: Vec<usize> = (1..records.len()).collect();
            followed += grow(&records, &cuts, &journals, &config);
        }
    }
    assert!(followed > 500, "{followed} steps followed the new records");
}

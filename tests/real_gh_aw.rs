//! The real gh-aw gateway logs in ../shared/real-journals/gh-aw-mcpg, read
//! for what their README says about them: which answer belongs to which
//! request (docs/design.md §2.5). Each test says `SKIPPED <test>: <why>`
//! when the folder is absent, and fails then under `CI=true`
//! (tests/common/skip.rs).

use retrace::journal::{JournalSource, load};
use retrace::model::{EventKind, Model, OutcomeKind, Pairing};
use retrace::query::{Investigation, Setup, Verdict};

mod common;

use common::skip::real_journal;

/// The answer paired with a request: its line, the outcome, and how it was
/// paired (`id`, `position`, `uncertain`, `content`).
type Paired = (u32, OutcomeKind, &'static str);

/// Per request line: its tool and the answer paired with it, in line order.
fn pairings(model: &Model) -> Vec<(u32, String, Option<Paired>)> {
    let mut out: Vec<_> = model
        .to_executions()
        .into_iter()
        .map(|x| {
            let request = x.events[0].source.position();
            let tool = x.action().and_then(|a| a.tool()).unwrap_or("?").to_string();
            let answer = x.events.iter().find_map(|e| match &e.kind {
                EventKind::Outcome { outcome, .. } => Some((
                    e.source.position(),
                    *outcome,
                    match &e.facts().pairing {
                        Pairing::ById => "id",
                        Pairing::ByPosition {
                            uncertain: false, ..
                        } => "position",
                        Pairing::ByPosition { .. } => "uncertain",
                        Pairing::ByContent { .. } => "content",
                    },
                )),
                _ => None,
            });
            (request, tool, answer)
        })
        .collect();
    out.sort_by_key(|(line, _, _)| *line);
    out
}

/// README: "in daily-repo-status, the first github response after five
/// concurrent requests (lines 7-11) is the `get_me` 403 for line 8". By
/// position the 403 went to list_releases (line 7), which was then the one
/// group worth a look, and get_me was clean with a success that was not
/// its own. The 403 names get_me's operation ("failed to get user"): it is
/// paired by content, and the answers left are all results, so nothing is
/// in doubt.
#[test]
fn the_403_of_daily_repo_status_is_get_me_s() {
    let Some(p) = real_journal(
        "the_403_of_daily_repo_status_is_get_me_s",
        "gh-aw-mcpg/daily-repo-status-gateway-error.jsonl",
    ) else {
        return;
    };
    let (j, model) = load(vec![JournalSource::file(&p)], None, &mut |_| {}).unwrap();
    let p = pairings(&model);
    let line = |n: u32| {
        p.iter()
            .find(|(r, _, _)| *r == n)
            .unwrap_or_else(|| panic!("no request at line {n}: {p:?}"))
    };
    assert_eq!(
        line(8),
        &(
            8,
            "get_me".to_string(),
            Some((12, OutcomeKind::Failure, "content"))
        )
    );
    let (_, tool, answer) = line(7);
    assert_eq!(tool, "list_releases");
    let (at, outcome, how) = answer.unwrap();
    assert_ne!(at, 12);
    assert_eq!((outcome, how), (OutcomeKind::Success, "position"));
    // No answer of the log is in doubt, and only the 403 is a failure
    // among github's answers.
    assert!(
        p.iter()
            .all(|(_, _, a)| a.is_some_and(|a| a.2 != "uncertain")),
        "{p:?}"
    );
    assert!(
        j[0].notes
            .iter()
            .any(|n| n == "1 response(s) paired by content: the answer names its request"),
        "{:?}",
        j[0].notes
    );
    // The content pairing says what matched.
    let x = model
        .to_executions()
        .into_iter()
        .find(|x| x.events[0].source.position() == 8)
        .unwrap();
    let why = x
        .events
        .iter()
        .find_map(|e| match &e.facts().pairing {
            Pairing::ByContent { why } => Some(why.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        why.starts_with("the error names \"get\" (a word of the tool name get_me)"),
        "{why}"
    );
}

/// The other real logs: every answer paired by content is the one the
/// README's transcription shows for that request, and no pairing is
/// uncertain (no burst of them mixes failures and results).
#[test]
fn the_other_real_logs_pair_as_their_readme_says() {
    let Some(dir) = real_journal(
        "the_other_real_logs_pair_as_their_readme_says",
        "gh-aw-mcpg",
    ) else {
        return;
    };
    // (file, request line, answer line) paired by content.
    let expected = [
        ("ci-failure-analysis-repeated-pr-reads.jsonl", 9, 11),
        ("ci-failure-analysis-repeated-pr-reads.jsonl", 10, 12),
        ("star-list-maintainer-403s.jsonl", 5, 7),
        ("star-list-maintainer-403s.jsonl", 6, 8),
    ];
    for f in [
        "ci-failure-analysis-repeated-pr-reads.jsonl",
        "docs-unbloat-create-pr-retries.jsonl",
        "star-list-maintainer-403s.jsonl",
        "work-item-eval-missing-server.jsonl",
    ] {
        let (_, model) = load(vec![JournalSource::file(dir.join(f))], None, &mut |_| {}).unwrap();
        let p = pairings(&model);
        let content: Vec<(u32, u32)> = p
            .iter()
            .filter_map(|(r, _, a)| a.filter(|a| a.2 == "content").map(|a| (*r, a.0)))
            .collect();
        let want: Vec<(u32, u32)> = expected
            .iter()
            .filter(|e| e.0 == f)
            .map(|e| (e.1, e.2))
            .collect();
        assert_eq!(content, want, "{f}: {p:?}");
        assert!(
            p.iter()
                .all(|(_, _, a)| a.is_some_and(|a| a.2 != "uncertain")),
            "{f}: {p:?}"
        );
    }
}

/// README: in docs-unbloat the agent called `create_pull_request` three
/// times (lines 9, 11, 13); the first body differs from the other two. The
/// first once stood apart as a clean group with nothing pointing at the
/// retries; now the two groups name each other, and the field
/// (docs/design.md §5.13).
#[test]
fn the_first_create_pull_request_of_docs_unbloat_is_linked_to_its_retries() {
    let Some(p) = real_journal(
        "the_first_create_pull_request_of_docs_unbloat_is_linked_to_its_retries",
        "gh-aw-mcpg/docs-unbloat-create-pr-retries.jsonl",
    ) else {
        return;
    };
    let inv = Investigation::open(&Setup::new(vec![p]), &mut |_| {}).unwrap();
    // Where each execution begins (ids made from content do not say).
    let lines = |g: &retrace::query::GroupRef<'_>| -> Vec<u32> {
        g.detail()
            .executions_detail
            .iter()
            .filter_map(|x| x.first_event.as_ref().map(|e| e.line))
            .collect()
    };
    let pr: Vec<_> = inv
        .all_groups()
        .filter(|g| g.tool() == "create_pull_request")
        .collect();
    assert_eq!(pr.len(), 2);
    let first = pr.iter().find(|g| lines(g) == [9]).unwrap();
    let retries = pr.iter().find(|g| lines(g) == [11, 13]).unwrap();
    assert_eq!(
        (first.verdict(), retries.verdict()),
        (Verdict::Clean, Verdict::SafeRetry)
    );
    for (this, other) in [(first, retries), (retries, first)] {
        let n = this.near_duplicates();
        assert_eq!(
            n.iter()
                .map(|n| (n.group_id.as_str(), n.verdict, n.field.as_str()))
                .collect::<Vec<_>>(),
            [(other.id(), other.verdict(), "body")],
            "{}",
            this.id()
        );
    }
    // Nothing else of the log is one field away from anything.
    assert_eq!(
        inv.all_groups()
            .filter(|g| !g.near_duplicates().is_empty())
            .count(),
        2
    );
}

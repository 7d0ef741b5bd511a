//! The groups table: one row per group of calls that share an intent, worst
//! first by default, sortable, filtered by verdict, tool and a fuzzy query
//! over tool, actor, scope, target, arguments and ids with the matched
//! characters highlighted.
//!
//! The query's characters must appear in order within one field (the
//! SkimMatcherV2 rule). Where some group holds them side by side (`cat` in
//! `catalog`), only such groups are shown and counted: a match with the
//! letters scattered (`c…a…t` in `com.example.agent`) is weaker, and is
//! shown only when no group matches better (the filter line says how many
//! weaker matches it leaves out). The table keeps its sort.
//!
//! The rows are index vectors kept in the state and rebuilt when a filter
//! or the sort changes, never per frame; a frame builds only the rows on
//! screen.

use crate::query::{GroupFilter, GroupIdx, GroupRef, Investigation, Verdict};
use crate::tui::action::Action;
use crate::tui::app::{Data, Nav, View};
use crate::tui::screens::detail;
use crate::tui::theme::Theme;
use crate::tui::widgets::text::{clip_left, esc, highlighted, select_if};
use crate::tui::widgets::{Cursor, Move};
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};
use std::sync::OnceLock;

/// The fuzzy matcher (smart case: a capital in the query matches case).
pub fn matcher() -> &'static SkimMatcherV2 {
    static M: OnceLock<SkimMatcherV2> = OnceLock::new();
    M.get_or_init(SkimMatcherV2::default)
}

/// Number of fields the filter searches.
pub const FIELDS: usize = 7;

/// The fields the filter searches, sanitized, in haystack order: tool,
/// actor, intent scope, target, arguments (as the first execution's
/// accepted record holds them, compact JSON), group id, execution ids.
pub fn fields(g: &GroupRef<'_>) -> [String; FIELDS] {
    let args = g.arguments().map(|a| a.to_string()).unwrap_or_default();
    [
        esc(g.tool()).into_owned(),
        esc(g.actor()).into_owned(),
        esc(g.intent_scope()).into_owned(),
        esc(g.target().unwrap_or("")).into_owned(),
        esc(&args).into_owned(),
        g.id().to_string(),
        esc(&g.execution_ids().collect::<Vec<_>>().join(" ")).into_owned(),
    ]
}

/// How well a query matches a field (or a group: its best field).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fit {
    /// The characters are not all there in order.
    #[default]
    None,
    /// The characters appear in order, apart (`c…a…t`).
    Scattered,
    /// The characters appear side by side (`cat` in `catalog`).
    Contiguous,
}

/// How well `query` fits `haystack` (fields joined by [`SEP`]): with the
/// characters side by side within one field, apart within one field, or
/// not at all. Smart case, as [`matches`].
pub fn fit(haystack: &str, query: &str) -> Fit {
    if query.is_empty() {
        return Fit::Contiguous;
    }
    // The one-pass subsequence test first: most fields fail it, and a
    // side-by-side match passes it too.
    if !matches(haystack, query) {
        Fit::None
    } else if side_by_side(haystack, query) {
        Fit::Contiguous
    } else {
        Fit::Scattered
    }
}

/// Whether `query` occurs side by side in `haystack` ([`find`] without the
/// position; on bytes when the query is ASCII, as UTF-8 never encodes
/// another character with an ASCII byte).
fn side_by_side(haystack: &str, query: &str) -> bool {
    if !query.is_ascii() {
        return find(haystack, query).is_some();
    }
    let (h, q) = (haystack.as_bytes(), query.as_bytes());
    if q.len() > h.len() {
        return false;
    }
    let case_sensitive = q.iter().any(u8::is_ascii_uppercase);
    if case_sensitive {
        h.windows(q.len()).any(|w| w == q)
    } else {
        h.windows(q.len()).any(|w| w.eq_ignore_ascii_case(q))
    }
}

/// The character index where `query` occurs side by side in `haystack`
/// (smart case: ASCII case is ignored unless the query holds an ASCII
/// capital). A query holds no [`SEP`], so a hit never spans two fields.
pub fn find(haystack: &str, query: &str) -> Option<usize> {
    let case_sensitive = query.chars().any(|c| c.is_ascii_uppercase());
    let eq = |a: char, b: char| {
        if case_sensitive {
            a == b
        } else {
            a.eq_ignore_ascii_case(&b)
        }
    };
    let Some(first) = query.chars().next() else {
        return Some(0);
    };
    // No allocation: this runs for every group on every key.
    haystack
        .char_indices()
        .enumerate()
        .find(|&(_, (at, c))| {
            eq(c, first) && {
                let mut h = haystack[at..].chars();
                query.chars().all(|q| h.next().is_some_and(|x| eq(x, q)))
            }
        })
        .map(|(n, _)| n)
}

/// Separates fields in a haystack (a control character, so it never
/// occurs in sanitized text).
const SEP: char = '\u{1f}';

/// The fields joined by [`SEP`].
pub fn haystack(fields: &[String; FIELDS]) -> String {
    fields.join(&SEP.to_string())
}

/// Whether the query matches any one field of a haystack. Fields are
/// matched one by one so that a short query does not match characters
/// scattered over tool, actor and scope together.
///
/// SkimMatcherV2 (smart case) matches a field exactly when the query's
/// characters appear in it in order, compared case-insensitively (ASCII)
/// unless the query holds an ASCII capital (fuzzy-matcher 0.3
/// `SkimMatcherV2::fuzzy`: it returns `None` only when its `cheap_matches`
/// subsequence test fails). This function makes that test alone, in one
/// pass and without allocating, so that filtering hundreds of thousands of
/// groups stays fast; the matcher itself scores and highlights the rows on
/// screen. A unit test checks that both agree.
pub fn matches(haystack: &str, query: &str) -> bool {
    if query.is_empty() {
        return true;
    }
    let case_sensitive = query.chars().any(|c| c.is_ascii_uppercase());
    let eq = |a: char, b: char| {
        if case_sensitive {
            a == b
        } else {
            a.eq_ignore_ascii_case(&b)
        }
    };
    let mut want = query.chars();
    let mut next = want.next();
    for c in haystack.chars() {
        if c == SEP {
            want = query.chars();
            next = want.next();
            continue;
        }
        if let Some(p) = next
            && eq(c, p)
        {
            next = want.next();
            if next.is_none() {
                return true;
            }
        }
    }
    false
}

/// What the fuzzy filter searches, built once at load. Tool, actor, scope,
/// target and arguments repeat across many groups, so each distinct value
/// is stored and matched once per query; only the group and execution ids
/// are matched group by group.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    /// Distinct sanitized values of tool, actor, scope, target and
    /// arguments.
    pub values: Vec<String>,
    /// Per group (aligned with the analysis's groups): its tool, actor,
    /// scope, target and arguments as indexes into `values`.
    pub shared: Vec<[u32; 5]>,
    /// Per group: its id and execution ids, joined by [`SEP`].
    pub ids: Vec<String>,
}

impl SearchIndex {
    /// Indexes the first `n` groups.
    pub fn build(inv: &Investigation, n: usize) -> SearchIndex {
        let mut ix = SearchIndex::default();
        let mut interned: std::collections::HashMap<String, u32> = Default::default();
        for i in 0..n {
            let Some(g) = inv.group_at(GroupIdx::new(i)) else {
                ix.shared.push([0; 5]);
                ix.ids.push(String::new());
                continue;
            };
            let [tool, actor, scope, target, args, id, execs] = fields(&g);
            let mut slot = |v: String| {
                let next = u32::try_from(ix.values.len()).unwrap_or(u32::MAX);
                *interned.entry(v).or_insert_with_key(|v| {
                    ix.values.push(v.clone());
                    next
                })
            };
            let shared = [
                slot(tool),
                slot(actor),
                slot(scope),
                slot(target),
                slot(args),
            ];
            ix.shared.push(shared);
            ix.ids
                .push(format!("{id}{SEP}{}", execs.replace(' ', &SEP.to_string())));
        }
        ix
    }

    /// Follows a new group order: `order[new] = old` index (a permutation
    /// of every group).
    pub fn reorder(&mut self, order: &[GroupIdx]) {
        self.shared = order
            .iter()
            .map(|&o| self.shared.get(o.get()).copied().unwrap_or([0; 5]))
            .collect();
        let mut ids = std::mem::take(&mut self.ids);
        self.ids = order
            .iter()
            .map(|&o| ids.get_mut(o.get()).map(std::mem::take).unwrap_or_default())
            .collect();
    }

    /// Number of groups indexed.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no group is indexed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How well `query` fits each distinct value.
    pub fn match_values(&self, query: &str) -> Vec<Fit> {
        self.values.iter().map(|v| fit(v, query)).collect()
    }

    /// As [`SearchIndex::match_values`], given the fits of a query that
    /// `query` extends: a value that did not match it cannot match now.
    pub fn narrow_values(&self, query: &str, before: &mut [Fit]) {
        for (f, v) in before.iter_mut().zip(&self.values) {
            if *f != Fit::None {
                *f = fit(v, query);
            }
        }
    }

    /// How well group `i` fits (its best field), given
    /// [`SearchIndex::match_values`].
    pub fn group_fit(&self, i: GroupIdx, values: &[Fit], query: &str) -> Fit {
        let i = i.get();
        let shared = self
            .shared
            .get(i)
            .and_then(|s| s.iter().filter_map(|&v| values.get(v as usize)).max())
            .copied()
            .unwrap_or_default();
        if shared == Fit::Contiguous {
            return shared;
        }
        let ids = self.ids.get(i).map_or(Fit::None, |h| fit(h, query));
        shared.max(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_index_matches_like_the_fields() {
        let inv = crate::query::Investigation::open(&crate::query::Setup::default(), &mut |_| {})
            .unwrap();
        let n = inv.group_indices(&GroupFilter {
            all: true,
            ..GroupFilter::default()
        });
        let ix = SearchIndex::build(&inv, n.len());
        assert_eq!(ix.len(), n.len());
        for q in [
            "d",
            "dpl",
            "list",
            "act_01J4K8P",
            "gfc",
            "5f8",
            "zzz",
            "EXAMPLE",
            "releases",
            "cat",
            "catalog",
            "\"service\"",
        ] {
            let values = ix.match_values(q);
            for i in (0..ix.len()).map(GroupIdx::new) {
                let g = inv.group_at(i).unwrap();
                let f = fields(&g);
                let expected = f[..FIELDS - 1]
                    .iter()
                    .map(|x| fit(x, q))
                    .chain(f[FIELDS - 1].split(' ').map(|x| fit(x, q)))
                    .max()
                    .unwrap();
                assert_eq!(
                    ix.group_fit(i, &values, q),
                    expected,
                    "group {i} query {q:?}"
                );
            }
        }
    }

    #[test]
    fn find_is_a_smart_case_substring_search() {
        assert_eq!(find("deploy_release", "release"), Some(7));
        assert_eq!(find("Ünïcödé_Tool", "cöd"), Some(3));
        assert_eq!(find("{\"service\":\"catalog\"}", "CAT"), None);
        assert_eq!(find("{\"service\":\"catalog\"}", "cat"), Some(12));
        assert_eq!(find("com.example.agent", "cat"), None);
        assert_eq!(find("ab", "abc"), None);
        assert_eq!(find("x", ""), Some(0));
        assert_eq!(fit("com.example.agent", "cat"), Fit::Scattered);
        assert_eq!(fit("catalog", "CAT"), Fit::None);
        assert_eq!(fit("catalog", "cat"), Fit::Contiguous);
        // The byte path agrees with the character path.
        for h in [
            "deploy_release",
            "Ünïcödé_Tool",
            "wipe\\x1b[2Jdisk",
            "aéb",
            "CaTalog",
        ] {
            for q in [
                "e", "re", "RE", "cöd", "x1b", "[2J", "[2j", "é", "ab", "cat", "CaT", "zz",
            ] {
                assert_eq!(side_by_side(h, q), find(h, q).is_some(), "{h:?} {q:?}");
            }
        }
    }

    #[test]
    fn matches_agrees_with_skim_matcher_v2() {
        let fields = [
            "deploy_release",
            "signed-process:com.example.agent",
            "run:5f8097",
            "deploy-api.internal.example/releases",
            "gfc4a6c60d4",
            "act_01J4K8J7DX7V act_01J4K8M3QF2Z",
            "Ünïcödé_Tool",
            "wipe\\x1b[2Jdisk",
            "{\"service\":\"catalog\"}",
        ];
        let queries = [
            "d",
            "dr",
            "dpl",
            "DPL",
            "Dpl",
            "release",
            "xyz",
            "a",
            "act_01j",
            "ACT",
            "5f8",
            "ü",
            "Ü",
            "cöd",
            "\\x1b",
            "[2j",
            "[2J",
            "zz",
            "e e",
            "-",
            "deploy_releasee",
        ];
        let m = matcher();
        for q in queries {
            for f in fields {
                assert_eq!(
                    matches(f, q),
                    m.fuzzy_match(f, q).is_some(),
                    "field {f:?} query {q:?}"
                );
            }
            // Across fields: a match must lie within one field.
            let h = haystack(
                &fields.map(String::from)[..FIELDS]
                    .to_vec()
                    .try_into()
                    .unwrap(),
            );
            let any = fields[..FIELDS]
                .iter()
                .any(|f| m.fuzzy_match(f, q).is_some());
            assert_eq!(matches(&h, q), any, "haystack, query {q:?}");
        }
    }
}

/// The longest filter, in characters: a longer paste is cut here (and the
/// filter line says so), so that a pasted page cannot stall the table.
pub const MAX_QUERY: usize = 256;

/// Adds typed or pasted text to the query, up to [`MAX_QUERY`] characters;
/// line breaks and other controls become spaces. Returns whether some of
/// it did not fit.
fn push_query(query: &mut String, text: &str) -> bool {
    let room = MAX_QUERY.saturating_sub(query.chars().count());
    query.extend(
        text.chars()
            .take(room)
            .map(|c| if c.is_control() { ' ' } else { c }),
    );
    text.chars().nth(room).is_some()
}

/// Sortable columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Worst first (the analysis order: severity, then first event).
    #[default]
    Severity,
    /// Calls.
    Calls,
    /// Executions.
    Executions,
    /// Dispatches.
    Dispatches,
    /// First event time.
    First,
    /// Tool name.
    Tool,
    /// Group id.
    Group,
}

impl SortKey {
    const ORDER: [SortKey; 7] = [
        SortKey::Severity,
        SortKey::Calls,
        SortKey::Executions,
        SortKey::Dispatches,
        SortKey::First,
        SortKey::Tool,
        SortKey::Group,
    ];

    fn next(self) -> SortKey {
        let i = Self::ORDER.iter().position(|k| *k == self).unwrap_or(0);
        Self::ORDER[(i + 1) % Self::ORDER.len()]
    }

    /// Column header it sorts.
    pub fn header(self) -> &'static str {
        match self {
            SortKey::Severity => "VERDICT",
            SortKey::Calls => "CALLS",
            SortKey::Executions => "EXECS",
            SortKey::Dispatches => "DISP",
            SortKey::First => "FIRST (UTC)",
            SortKey::Tool => "TOOL",
            SortKey::Group => "GROUP",
        }
    }
}

/// Rows shown, filters, sort and selection.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Indexes into the analysis's groups after verdict/tool filters and
    /// sort, before the fuzzy query.
    pub base: Vec<GroupIdx>,
    /// How well each base row fits the query.
    pub fits: Vec<Fit>,
    /// The best fit of any base row: rows that fit less well are left out.
    pub best: Fit,
    /// Rows that match, but less well than the best, and are left out.
    pub looser: usize,
    /// Rows shown (indexes into the analysis's groups).
    pub rows: Vec<GroupIdx>,
    /// Positions in `rows` that match the query as well as the best row.
    pub matches: Vec<usize>,
    /// Every group, not only those worth a look.
    pub all: bool,
    /// Only this verdict.
    pub verdict: Option<Verdict>,
    /// Only this tool (exact name).
    pub tool: Option<String>,
    /// Sort column.
    pub sort: SortKey,
    /// Reverse the sort.
    pub reverse: bool,
    /// The fuzzy query.
    pub query: String,
    /// The query being typed.
    pub editing: bool,
    /// Hide rows that do not match the query (else only highlight them).
    pub hide_unmatched: bool,
    /// Selection.
    pub cursor: Cursor,
    /// The query `fits` was computed for, to narrow instead of redo.
    matched_for: String,
    /// How well `matched_for` fits each distinct value of the search index.
    value_fits: Vec<Fit>,
}

impl State {
    /// The groups worth a look, worst first; every group when none is.
    pub fn new(data: &Data) -> State {
        let mut st = State {
            hide_unmatched: true,
            all: data.worst.is_empty(),
            ..State::default()
        };
        st.rebuild(data);
        st
    }

    /// The selected group's index, if any.
    pub fn selected_group(&self) -> Option<GroupIdx> {
        self.rows.get(self.cursor.selected).copied()
    }

    /// Whether any filter narrows the table.
    pub fn filtered(&self) -> bool {
        self.verdict.is_some() || self.tool.is_some() || !self.query.is_empty()
    }

    /// Rebuilds base rows (filters and sort) and then the query match.
    pub fn rebuild(&mut self, data: &Data) {
        let inv = &data.inv;
        let keep = self.selected_group();
        let mut base = inv.group_indices(&GroupFilter {
            all: self.all,
            verdicts: self.verdict.into_iter().collect(),
            tool: self.tool.clone(),
        });
        if let Some(t) = &self.tool {
            base.retain(|&i| inv.group_at(i).is_some_and(|g| g.tool() == t));
        }
        let key = |i: GroupIdx| inv.group_at(i);
        match self.sort {
            SortKey::Severity => {}
            SortKey::Calls => base.sort_by_key(|&i| std::cmp::Reverse(key(i).map(|g| g.calls()))),
            SortKey::Executions => {
                base.sort_by_key(|&i| std::cmp::Reverse(key(i).map(|g| g.execution_count())))
            }
            SortKey::Dispatches => {
                base.sort_by_key(|&i| std::cmp::Reverse(key(i).map(|g| g.dispatches())))
            }
            SortKey::First => base.sort_by_key(|&i| key(i).and_then(|g| g.first_at())),
            SortKey::Tool => {
                base.sort_by(|&a, &b| key(a).map(|g| g.tool()).cmp(&key(b).map(|g| g.tool())))
            }
            SortKey::Group => {
                base.sort_by(|&a, &b| key(a).map(|g| g.id()).cmp(&key(b).map(|g| g.id())))
            }
        }
        if self.reverse {
            base.reverse();
        }
        self.base = base;
        self.matched_for.clear();
        self.fits.clear();
        self.refilter(data, keep);
    }

    /// Recomputes how well each base row fits the query (narrowing the
    /// previous result when the query only grew: a longer query never fits
    /// better), then the shown rows: those that fit as well as the best.
    pub fn refilter(&mut self, data: &Data, keep: Option<GroupIdx>) {
        let q = self.query.as_str();
        let ix = &data.search;
        let narrowing = !self.matched_for.is_empty()
            && q.starts_with(self.matched_for.as_str())
            && self.fits.len() == self.base.len()
            && self.value_fits.len() == ix.values.len();
        if q.is_empty() {
            self.fits = vec![Fit::Contiguous; self.base.len()];
            self.value_fits.clear();
        } else {
            if narrowing {
                ix.narrow_values(q, &mut self.value_fits);
            } else {
                self.value_fits = ix.match_values(q);
            }
            let values = &self.value_fits;
            if narrowing {
                for (f, &i) in self.fits.iter_mut().zip(&self.base) {
                    if *f != Fit::None {
                        *f = ix.group_fit(i, values, q);
                    }
                }
            } else {
                self.fits = self
                    .base
                    .iter()
                    .map(|&i| ix.group_fit(i, values, q))
                    .collect();
            }
        }
        self.matched_for = q.to_string();
        self.best = self.fits.iter().copied().max().unwrap_or_default();
        let best = self.best;
        let kept = |f: &Fit| best != Fit::None && *f == best;
        self.looser = if q.is_empty() {
            0
        } else {
            self.fits
                .iter()
                .filter(|f| **f != Fit::None && !kept(f))
                .count()
        };
        if self.hide_unmatched && !q.is_empty() {
            self.rows = self
                .base
                .iter()
                .zip(&self.fits)
                .filter(|(_, f)| kept(f))
                .map(|(&i, _)| i)
                .collect();
            self.matches = (0..self.rows.len()).collect();
        } else {
            self.rows = self.base.clone();
            self.matches = if q.is_empty() {
                Vec::new()
            } else {
                self.fits
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| kept(f))
                    .map(|(p, _)| p)
                    .collect()
            };
        }
        let len = self.rows.len();
        let pos = keep
            .and_then(|g| self.rows.iter().position(|&r| r == g))
            .unwrap_or(0);
        self.cursor = Cursor::default();
        self.cursor.select(pos, len);
    }

    fn step_match(&mut self, forward: bool) -> bool {
        if self.matches.is_empty() {
            return false;
        }
        let cur = self.cursor.selected;
        let next = if forward {
            self.matches
                .iter()
                .find(|&&p| p > cur)
                .or(self.matches.first())
        } else {
            self.matches
                .iter()
                .rev()
                .find(|&&p| p < cur)
                .or(self.matches.last())
        };
        if let Some(&p) = next {
            self.cursor.select(p, self.rows.len());
        }
        true
    }
}

/// Table and filter-line areas.
fn areas(body: Rect, st: &State) -> [Rect; 2] {
    let line = u16::from(st.editing || !st.query.is_empty() || st.filtered());
    Layout::vertical([Constraint::Fill(1), Constraint::Length(line)]).areas(body)
}

/// Rows of the table that fit in the body.
pub fn page(body: Rect, st: &State) -> usize {
    usize::from(areas(body, st)[0].height.saturating_sub(3))
}

/// Applies an action.
pub fn update(data: &Data, st: &mut State, action: Action, body: Rect) -> Nav {
    let keep = st.selected_group();
    let mut nav = Nav::Stay;
    if let Some(m) = Move::of(&action) {
        let page = page(body, st);
        st.cursor.apply(m, st.rows.len(), page);
        st.cursor.settle(page.max(1), st.rows.len());
        return nav;
    }
    match action {
        Action::Open => {
            if let Some(d) = st
                .selected_group()
                .and_then(|g| detail::State::new(data, g))
            {
                nav = Nav::Push(View::Detail(Box::new(d)));
            }
        }
        Action::Back => {
            if st.filtered() {
                st.query.clear();
                st.verdict = None;
                st.tool = None;
                st.rebuild(data);
                nav = Nav::Say("filters cleared".into());
            } else {
                nav = Nav::Back;
            }
        }
        Action::StartFilter => st.editing = true,
        Action::FilterChar(c) => {
            if push_query(&mut st.query, c.encode_utf8(&mut [0; 4])) {
                nav = Nav::Say(format!(
                    "the filter holds at most {MAX_QUERY} characters; the rest was dropped"
                ));
            } else {
                st.refilter(data, keep);
            }
        }
        Action::Paste(text) if st.editing => {
            let cut = push_query(&mut st.query, &text);
            st.refilter(data, keep);
            if cut {
                nav = Nav::Say(format!(
                    "the filter holds at most {MAX_QUERY} characters; the rest of the paste was dropped"
                ));
            }
        }
        Action::FilterBackspace => {
            st.query.pop();
            st.refilter(data, keep);
        }
        Action::FilterConfirm => st.editing = false,
        Action::FilterCancel => {
            st.editing = false;
            st.query.clear();
            st.refilter(data, keep);
        }
        Action::NextMatch | Action::PrevMatch if !st.step_match(action == Action::NextMatch) => {
            nav = Nav::Say("no filter: / starts one".into());
        }
        Action::ToggleFilterMode => {
            st.hide_unmatched = !st.hide_unmatched;
            st.refilter(data, keep);
            nav = Nav::Say(
                if st.hide_unmatched {
                    "filter hides rows that do not match"
                } else {
                    "filter highlights matches; n/N step through them"
                }
                .into(),
            );
        }
        Action::SortNext => {
            st.sort = st.sort.next();
            st.reverse = false;
            st.rebuild(data);
        }
        Action::SortReverse => {
            st.reverse = !st.reverse;
            st.rebuild(data);
        }
        Action::CycleVerdict => {
            let present: Vec<Verdict> = data
                .verdict_counts
                .clone()
                .into_iter()
                .map(|(v, _)| v)
                .collect();
            st.verdict = match st.verdict {
                None => present.first().copied(),
                Some(v) => present
                    .iter()
                    .position(|p| *p == v)
                    .and_then(|i| present.get(i + 1))
                    .copied(),
            };
            st.rebuild(data);
        }
        Action::CycleTool => {
            st.tool = match &st.tool {
                None => data.tools.first().cloned(),
                Some(t) => data
                    .tools
                    .iter()
                    .position(|x| x == t)
                    .and_then(|i| data.tools.get(i + 1))
                    .cloned(),
            };
            st.rebuild(data);
        }
        Action::ToggleAll => {
            st.all = !st.all;
            st.rebuild(data);
        }
        Action::Copy => {
            if let Some(g) = st.selected_group().and_then(|g| data.inv.group_at(g)) {
                nav = Nav::Copy("the group id", g.id().to_string());
            }
        }
        _ => {}
    }
    st.cursor.settle(page(body, st).max(1), st.rows.len());
    nav
}

fn header_cell(name: &'static str, st: &State) -> String {
    if st.sort.header() == name && st.sort != SortKey::Severity
        || (name == "VERDICT" && st.sort == SortKey::Severity)
    {
        let arrow = if st.reverse { "▲" } else { "▼" };
        format!("{name}{arrow}")
    } else {
        name.to_string()
    }
}

/// Draws the table and, when filtering, the filter line.
pub fn draw(data: &Data, st: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let inv = &data.inv;
    let [table_area, filter_area] = areas(area, st);
    let total = st.rows.len();
    let mut title = format!(
        " Groups: {total} {}",
        if st.all { "(all)" } else { "worth a look" }
    );
    if let Some(v) = st.verdict {
        title.push_str(&format!(" · verdict {v}"));
    }
    if let Some(t) = &st.tool {
        title.push_str(&format!(" · tool {}", esc(t)));
    }
    if !st.query.is_empty() {
        let n = st.matches.len();
        title.push_str(&format!(
            " · {n} {}",
            if n == 1 { "match" } else { "matches" }
        ));
    }
    if inv.has_resolutions() {
        title.push_str(" · ✎ reviewer decided");
    }
    title.push(' ');
    let block = Block::bordered().title(title).border_style(theme.muted);
    if !st.query.is_empty() || st.editing || st.filtered() {
        // A long query shows its end, where the typing happens, and leaves
        // room for the note that it is at its longest.
        let full = st.query.chars().count() >= MAX_QUERY;
        let note = if full {
            format!("  (at most {MAX_QUERY} characters)")
        } else {
            String::new()
        };
        let room = usize::from(filter_area.width).saturating_sub(4 + note.chars().count());
        let mut spans = vec![
            Span::styled(" / ", theme.accent),
            Span::raw(clip_left(&esc(&st.query), room).into_owned()),
        ];
        let looser = (st.looser > 0).then(|| {
            Span::styled(
                format!(
                    "  {} looser {} left out (letters apart)",
                    st.looser,
                    if st.looser == 1 { "match" } else { "matches" }
                ),
                theme.muted,
            )
        });
        if st.editing {
            spans.push(Span::styled("▏", theme.accent));
            if full {
                spans.push(Span::styled(note, theme.warn));
            }
            spans.extend(looser);
            spans.push(Span::styled("  Enter keeps · Esc drops", theme.muted));
        } else {
            spans.extend(looser);
            spans.push(Span::styled(
                if st.hide_unmatched {
                    "  n/N next/previous · f highlight only · Esc clears"
                } else {
                    "  n/N next/previous match · f hide others · Esc clears"
                },
                theme.muted,
            ));
        }
        frame.render_widget(Paragraph::new(Line::from(spans)), filter_area);
    }
    if total == 0 {
        let every = inv.group_count();
        let msg = if st.filtered() {
            "No group matches the filters. Esc clears them.".to_string()
        } else if every > 0 && !st.all {
            format!(
                "No group worth a look: {every} group(s), each one call with a clean verdict. Press a to list every group."
            )
        } else {
            "No group: the journals hold no tool call.".to_string()
        };
        frame.render_widget(Paragraph::new(msg).block(block), table_area);
        return;
    }
    let wide = table_area.width >= 110;
    let widest = table_area.width >= 150;
    // Below 96 columns the first time loses its date, so that the group id
    // (what `retrace investigate --group` takes) fits beside the tool.
    let dated = table_area.width >= 96;
    // A column saying which verdicts rest on a reviewer's decision, once
    // any decision was applied.
    let reviewed = inv.has_resolutions();
    let mut header = vec![String::new(), header_cell("VERDICT", st)];
    // As wide as the longest verdict present (and its header), so that
    // narrow terminals leave the room to the tool.
    let verdict_w = data
        .verdict_counts
        .iter()
        .map(|(v, _)| v.as_str().len())
        .max()
        .unwrap_or(0)
        .max("VERDICT▼".chars().count());
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(u16::try_from(verdict_w + usize::from(wide)).unwrap_or(25)),
    ];
    if reviewed {
        header.push(if wide { "REVIEWED BY" } else { "✎" }.into());
        widths.push(Constraint::Length(if wide { 14 } else { 1 }));
    }
    header.extend([
        header_cell("TOOL", st),
        header_cell("CALLS", st),
        header_cell("EXECS", st),
    ]);
    widths.extend([
        Constraint::Fill(2),
        Constraint::Length(6),
        Constraint::Length(6),
    ]);
    let first_fmt = if wide {
        "%Y-%m-%d %H:%M:%S"
    } else if dated {
        "%m-%d %H:%M:%S"
    } else {
        "%H:%M:%S"
    };
    if wide {
        header.push(header_cell("DISP", st));
        widths.push(Constraint::Length(5));
    }
    let first = header_cell("FIRST (UTC)", st);
    header.push(if dated {
        first
    } else {
        first.replace(" (UTC)", "")
    });
    widths.push(Constraint::Length(if wide {
        20
    } else if dated {
        14
    } else {
        8
    }));
    header.push(header_cell("GROUP", st));
    widths.push(Constraint::Length(if wide { 12 } else { 11 }));
    if widest {
        header.push("SCOPE".into());
        widths.push(Constraint::Fill(2));
        header.push("ACTOR".into());
        widths.push(Constraint::Fill(3));
    }
    let height = usize::from(table_area.height.saturating_sub(3));
    let window = st.cursor.window(height, total);
    let q = st.query.as_str();
    let rows = window.map(|i| {
        let Some(g) = inv.group_at(st.rows[i]) else {
            return Row::new(Vec::<Cell>::new());
        };
        let selected = i == st.cursor.selected;
        let base = if selected {
            theme.selection
        } else {
            Style::default()
        };
        let hl = theme.highlight;
        // Matched characters, by field (only for rows on screen).
        let f = fields(&g);
        // Only the kind of match that keeps rows is highlighted: side by
        // side where the best rows hold the query so.
        let cell = |field: usize| {
            let idx: Vec<usize> = match st.best {
                _ if q.is_empty() => Vec::new(),
                Fit::Contiguous => find(&f[field], q)
                    .map(|at| (at..at + q.chars().count()).collect())
                    .unwrap_or_default(),
                _ => matcher()
                    .fuzzy_indices(&f[field], q)
                    .map(|(_, mut v)| {
                        v.sort_unstable();
                        v
                    })
                    .unwrap_or_default(),
            };
            Cell::from(highlighted(&f[field], 0, &idx, base, hl))
        };
        let sev = theme.severity(g.severity());
        let plain = |l: Line<'static>| Cell::from(select_if(l, selected, theme.selection));
        let mut cells = vec![
            Cell::from(Span::styled("▌", sev)),
            plain(Line::styled(g.verdict().as_str(), sev)),
        ];
        if reviewed {
            let who = g
                .resolutions()
                .last()
                .map(|r| {
                    if wide {
                        format!(
                            "✎ {}",
                            crate::tui::widgets::text::clip(&esc(&r.reviewer), 12)
                        )
                    } else {
                        "✎".into()
                    }
                })
                .unwrap_or_default();
            cells.push(plain(Line::styled(who, theme.review)));
        }
        cells.extend([
            cell(0),
            plain(Line::from(g.calls().to_string()).right_aligned()),
            plain(Line::from(g.execution_count().to_string()).right_aligned()),
        ]);
        if wide {
            cells.push(plain(
                Line::from(g.dispatches().to_string()).right_aligned(),
            ));
        }
        cells.push(plain(Line::styled(
            g.first_at()
                .map_or_else(|| "-".into(), |t| t.format(first_fmt).to_string()),
            theme.muted,
        )));
        cells.push(cell(5));
        if widest {
            cells.push(cell(2));
            cells.push(cell(1));
        }
        let row = Row::new(cells);
        if selected {
            row.style(theme.selection)
        } else {
            row
        }
    });
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.accent))
        .column_spacing(1)
        .block(block);
    frame.render_widget(table, table_area);
}

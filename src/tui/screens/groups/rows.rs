//! The groups table's state: the rows shown (index vectors rebuilt when a
//! filter or the sort changes, never per frame), the verdict, tool and
//! fuzzy filters, the sort, and the selection.

use crate::query::{GroupFilter, GroupIdx, Verdict};
use crate::tui::data::Data;
use crate::tui::search::Fit;
use crate::tui::widgets::Cursor;

/// The longest filter, in characters: a longer paste is cut here (and the
/// filter line says so), so that a pasted page cannot stall the table.
pub const MAX_QUERY: usize = 256;

/// Adds typed or pasted text to the query, up to [`MAX_QUERY`] characters;
/// line breaks and other controls become spaces. Returns whether some of
/// it did not fit.
pub(super) fn push_query(query: &mut String, text: &str) -> bool {
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

    pub(super) fn next(self) -> SortKey {
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

/// The groups table's state: rows shown, filters, sort and selection.
#[derive(Debug, Clone, Default)]
pub struct Groups {
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

impl Groups {
    /// The groups worth a look, worst first; every group when none is.
    pub fn new(data: &Data) -> Groups {
        let mut st = Groups {
            hide_unmatched: true,
            all: data.worst.is_empty(),
            ..Groups::default()
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

    pub(super) fn step_match(&mut self, forward: bool) -> bool {
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

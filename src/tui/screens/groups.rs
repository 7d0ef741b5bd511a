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

use crate::query::{GroupFilter, GroupIdx, Verdict};
use crate::tui::action::Action;
use crate::tui::data::Data;
use crate::tui::dialog;
use crate::tui::keys::table::{GLOBAL, MOVE};
use crate::tui::keys::{Bind, Ctx, KeyTable, Part, Typing, bind, code, ctrl, k};
use crate::tui::screen::{Anchor, Context, Jump, Nav, Opens, Registration, Screen};
use crate::tui::screens::detail::Detail;
use crate::tui::search::{Fit, fields, find, matcher};
use crate::tui::theme::Theme;
use crate::tui::widgets::text::{clip_left, esc, highlighted, select_if};
use crate::tui::widgets::{Cursor, Move};
use fuzzy_matcher::FuzzyMatcher;
use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

const KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected group",
        Some("open"),
    ),
    bind(
        &[k('/')],
        Action::StartFilter,
        "filter: tool, actor, scope, target, arguments, ids",
        Some("filter"),
    ),
    bind(&[k('n')], Action::NextMatch, "next match", None),
    bind(&[k('N')], Action::PrevMatch, "previous match", None),
    bind(
        &[k('f')],
        Action::ToggleFilterMode,
        "filter hides rows / only highlights matches",
        None,
    ),
    bind(
        &[k('s')],
        Action::SortNext,
        "sort by the next column",
        Some("sort"),
    ),
    bind(&[k('S')], Action::SortReverse, "reverse the sort", None),
    bind(
        &[k('v')],
        Action::CycleVerdict,
        "show one verdict (cycles; back to all)",
        Some("verdict"),
    ),
    bind(
        &[k('t')],
        Action::CycleTool,
        "show one tool (cycles; back to all)",
        None,
    ),
    bind(
        &[k('a')],
        Action::ToggleAll,
        "every group / only those worth a look",
        None,
    ),
    bind(&[k('y')], Action::Copy, "copy the group id (OSC 52)", None),
    bind(
        &[k('E')],
        Action::Export,
        "export a Markdown postmortem of every listed group to a file",
        Some("export"),
    ),
    bind(
        &[code(KeyCode::Esc), k('h'), code(KeyCode::Left)],
        Action::Back,
        "clear filters, then back to the overview",
        None,
    ),
];

/// The groups table.
pub const TABLE: KeyTable = KeyTable {
    ctx: Ctx::new("groups", "groups"),
    parts: &[
        Part::Keys(KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

const FILTER_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter)],
        Action::FilterConfirm,
        "keep the filter",
        Some("keep"),
    ),
    bind(
        &[code(KeyCode::Esc)],
        Action::FilterCancel,
        "drop the filter",
        Some("drop"),
    ),
    bind(
        &[code(KeyCode::Backspace)],
        Action::FilterBackspace,
        "delete a character",
        None,
    ),
    bind(&[code(KeyCode::Down)], Action::Down, "next row", None),
    bind(&[code(KeyCode::Up)], Action::Up, "previous row", None),
    bind(&[ctrl('c')], Action::Quit, "quit", None),
];

/// Typing the groups filter.
pub const FILTER_TABLE: KeyTable = KeyTable {
    ctx: Ctx::new("groups_filter", "groups filter").typing(Typing::Filter),
    parts: &[Part::Keys(FILTER_KEYS)],
};

/// The groups table, `2` from anywhere; it keeps its filters, sort and
/// selection while the user is elsewhere.
pub const SCREEN: Registration = Registration {
    keys: &[TABLE, FILTER_TABLE],
    jump: Some(Jump {
        bind: bind(&[k('2')], Action::ShowGroups, "groups table", None),
        opens: Opens::Kept(open),
    }),
};

fn open(cx: &Context<'_>) -> Box<dyn Screen> {
    Box::new(Groups::new(cx.data))
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
fn areas(body: Rect, st: &Groups) -> [Rect; 2] {
    let line = u16::from(st.editing || !st.query.is_empty() || st.filtered());
    Layout::vertical([Constraint::Fill(1), Constraint::Length(line)]).areas(body)
}

/// Rows of the table that fit in the body.
pub fn page(body: Rect, st: &Groups) -> usize {
    usize::from(areas(body, st)[0].height.saturating_sub(3))
}

impl Screen for Groups {
    fn ctx(&self) -> Ctx {
        if self.editing {
            FILTER_TABLE.ctx
        } else {
            TABLE.ctx
        }
    }

    fn crumb(&self) -> String {
        "groups".into()
    }

    fn update(&mut self, cx: &Context<'_>, action: Action) -> Nav {
        update(cx, self, action)
    }

    fn draw(&self, cx: &Context<'_>, frame: &mut Frame<'_>) {
        draw(cx.data, self, cx.theme, frame, cx.body);
    }

    fn anchor(&self, data: &Data) -> Anchor {
        self.selected_group()
            .and_then(|g| data.inv.group_at(g))
            .map_or(Anchor::Nothing, |g| Anchor::Group(g.id().to_string()))
    }

    fn refresh(&mut self, cx: &Context<'_>, anchor: Anchor) {
        let data = cx.data;
        self.rebuild(data);
        let Anchor::Group(id) = anchor else {
            return;
        };
        if let Some(pos) = data
            .inv
            .group(&id)
            .ok()
            .map(|g| g.index())
            .and_then(|g| self.rows.iter().position(|&r| r == g))
        {
            self.cursor.select(pos, self.rows.len());
        }
    }
}

/// Applies an action.
fn update(cx: &Context<'_>, st: &mut Groups, action: Action) -> Nav {
    let (data, body) = (cx.data, cx.body);
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
            if let Some(d) = st.selected_group().and_then(|g| Detail::new(data, g)) {
                nav = Nav::Push(Box::new(d));
            }
        }
        Action::Export => {
            // Every listed group, in the table's order.
            let ids = || {
                st.rows
                    .iter()
                    .filter_map(|&g| data.inv.group_at(g).map(|g| g.id().to_string()))
                    .collect()
            };
            return match dialog::start_export(&data.inv, cx.job, ids, false, cx.export_dir) {
                Ok(d) => Nav::Dialog(d),
                Err(why) => Nav::Say(why.to_string()),
            };
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

fn header_cell(name: &'static str, st: &Groups) -> String {
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
fn draw(data: &Data, st: &Groups, theme: &Theme, frame: &mut Frame, area: Rect) {
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

//! One execution: its lifecycle stages, every event the journals hold for
//! it, and for the selected event the raw journal line and the canonical
//! action record, pretty-printed and scrollable. `y` copies the raw line
//! (OSC 52).

use crate::query::{ChainMark, EventIdx, EventView, ExecIdx, ExecutionSummary, GroupIdx};
use crate::tui::action::Action;
use crate::tui::data::Data;
use crate::tui::keys::table::{BACK, GLOBAL, MOVE};
use crate::tui::keys::{Bind, Ctx, KeyTable, Part, bind, code, k};
use crate::tui::screen::{Anchor, Context, Nav, Registration, Screen};
use crate::tui::theme::Theme;
use crate::tui::widgets::stages::{records, stage_units};
use crate::tui::widgets::text::{
    clip_left, column_widths, esc, file_name, fit, fit_all, flow, provenance, select_if,
    short_cite, time, wrap,
};
use crate::tui::widgets::mouse::{Hit, Pointer, on_list, table_rows, wheel_scroll};
use crate::tui::widgets::{Cursor, Move, scroll};
use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

const KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between events and the record",
        Some("pane"),
    ),
    bind(
        &[k('J')],
        Action::ScrollDown,
        "scroll the record down",
        Some("scroll"),
    ),
    bind(&[k('K')], Action::ScrollUp, "scroll the record up", None),
    bind(
        &[k('y')],
        Action::Copy,
        "copy the selected event's raw JSON line (OSC 52)",
        Some("copy"),
    ),
    bind(
        &[k('Y')],
        Action::CopyAlt,
        "copy the execution id (OSC 52)",
        None,
    ),
    BACK,
];

/// One execution's events.
pub const TABLE: KeyTable = KeyTable {
    ctx: Ctx::new("execution", "execution"),
    parts: &[
        Part::Keys(KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

/// One execution, opened from a group, a session or the review queue.
pub const SCREEN: Registration = Registration {
    keys: &[TABLE],
    jump: None,
};

/// Which pane has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    /// The events.
    #[default]
    Events,
    /// The raw line and the action record.
    Record,
}

/// The execution screen's state.
#[derive(Debug, Clone)]
pub struct Execution {
    /// The execution.
    pub xi: ExecIdx,
    /// Its summary.
    pub summary: ExecutionSummary,
    /// Its events.
    pub events: Vec<EventView>,
    /// Selected event.
    pub cursor: Cursor,
    /// The group it belongs to.
    pub group: Option<GroupIdx>,
    /// Focused pane.
    pub focus: Focus,
    /// The selected event's raw line as written.
    pub raw: String,
    /// The record pane: the raw line pretty-printed, then the canonical
    /// action record (unsanitized; sanitized when drawn).
    pub record: Vec<String>,
    /// First line shown in the record pane.
    pub scroll: usize,
}

impl Execution {
    /// Opens execution `xi`, with event `event` selected.
    pub fn new(data: &Data, xi: ExecIdx, event: Option<EventIdx>) -> Execution {
        let events = data.inv.events(xi);
        let mut cursor = Cursor::default();
        cursor.select(event.map_or(0, EventIdx::get), events.len());
        let mut st = Execution {
            xi,
            summary: data.inv.execution_summary(xi),
            events,
            cursor,
            group: data.inv.group_of(xi).map(|g| g.index()),
            focus: Focus::Events,
            raw: String::new(),
            record: Vec::new(),
            scroll: 0,
        };
        st.load_record(data);
        st
    }

    /// Takes the execution's summary and group from a new analysis (after
    /// a decision); events and their lines do not change.
    fn take_analysis(&mut self, data: &Data) {
        self.summary = data.inv.execution_summary(self.xi);
        self.group = data.inv.group_of(self.xi).map(|g| g.index());
    }

    /// Reads the selected event's line back and lays out the record pane.
    fn load_record(&mut self, data: &Data) {
        self.scroll = 0;
        self.record.clear();
        let Some(e) = self.events.get(self.cursor.selected) else {
            return;
        };
        let cite = short_cite(&e.evidence);
        match data.inv.raw_line(e.evidence.source) {
            Ok(raw) => {
                // docs/design.md §6: evidence after a chain break is marked.
                let mark = if e.evidence.chain == ChainMark::Unverified {
                    " · UNVERIFIED: at or after a chain break"
                } else {
                    ""
                };
                self.record.push(format!("── raw line {cite}{mark} ──"));
                match serde_json::from_str::<serde_json::Value>(&raw) {
                    Ok(v) => self.record.extend(pretty(&v)),
                    Err(_) => self.record.push(raw.clone()),
                }
                self.raw = raw;
            }
            Err(err) => {
                self.record
                    .push(format!("── raw line {cite}: cannot read it back: {err}"));
                self.raw.clear();
            }
        }
        if let Some(g) = self.group.and_then(|g| data.inv.group_at(g)) {
            self.record.push(String::new());
            self.record.push(format!(
                "── canonical action record of group {} (what was fingerprinted) ──",
                g.id()
            ));
            self.record.extend(pretty(&g.canonical_action()));
        }
    }
}

fn pretty(v: &serde_json::Value) -> Vec<String> {
    serde_json::to_string_pretty(v)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The header's lines for a pane `width` wide (borders included): the
/// execution, its group and key, flowed onto as many lines as they need;
/// the reviewer's decision, wrapped; the stage chain.
fn head_lines(data: &Data, st: &Execution, theme: &Theme, width: u16) -> Vec<Line<'static>> {
    let x = &st.summary;
    let w = usize::from(width.saturating_sub(2)).max(1);
    let group = st.group.and_then(|g| data.inv.group_at(g));
    let mut units = vec![vec![
        Span::styled(esc(&x.execution_id).into_owned(), theme.accent),
        Span::raw("  "),
        Span::raw(x.state),
        Span::raw("  "),
    ]];
    if x.before_window {
        units.push(vec![
            Span::styled("before the window", theme.muted),
            Span::raw("  "),
        ]);
    }
    if let Some(g) = group {
        units.push(vec![
            Span::styled("group ", theme.muted),
            Span::raw(g.id().to_string()),
            Span::raw(" "),
            Span::styled(g.verdict().as_str(), theme.severity(g.severity())),
            Span::raw(format!(" · {}  ", esc(g.tool()))),
        ]);
    }
    if let Some(k) = &x.idempotency_key {
        units.push(vec![Span::styled(format!("key {}", esc(k)), theme.muted)]);
    }
    let mut lines: Vec<Line<'static>> = flow(units, w, "")
        .into_iter()
        .map(|l| fit(l, w))
        .collect();
    if let Some(r) = &x.resolution {
        for l in wrap(&format!("✎ {}: {}", provenance(r), esc(&r.note)), w) {
            lines.push(Line::styled(l, theme.review));
        }
    }
    lines.extend(flow(stage_units(x, records(data), theme), w, ""));
    lines
}

/// Header, events and record areas, the header `head` lines high
/// (`head_lines`).
pub fn areas(st: &Execution, body: Rect, head: usize) -> [Rect; 3] {
    let head = u16::try_from(head).unwrap_or(u16::MAX).saturating_add(2);
    let [head, rest] =
        Layout::vertical([Constraint::Length(head.min(body.height / 3).max(3)), Constraint::Fill(1)])
            .areas(body);
    if body.width >= 140 {
        let [e, r] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Fill(1)]).areas(rest);
        return [head, e, r];
    }
    let want = (st.events.len() as u16).saturating_add(3);
    let share = if st.focus == Focus::Events { 3 } else { 2 };
    let cap = (rest.height * share / 5).max(4);
    let [e, r] =
        Layout::vertical([Constraint::Length(want.min(cap)), Constraint::Fill(1)]).areas(rest);
    [head, e, r]
}

/// The areas as drawn now.
fn laid_out(cx: &Context<'_>, st: &Execution) -> [Rect; 3] {
    let head = head_lines(cx.data, st, cx.theme, cx.body.width).len();
    areas(st, cx.body, head)
}

/// The record pane's lines for an inner `width`: each line of the record
/// wrapped (a JSON value longer than the pane goes on below, indented
/// like its line), so that nothing is cut.
fn record_rows(st: &Execution, width: u16) -> Vec<(String, bool)> {
    let w = usize::from(width).max(8);
    let mut out = Vec::new();
    for l in &st.record {
        let l = esc(l);
        // A heading (`── raw line … ──`) wraps between words.
        if l.starts_with("──") {
            out.extend(wrap(&l, w).into_iter().map(|h| (h, true)));
            continue;
        }
        let indent = l.len() - l.trim_start().len();
        let mut first = true;
        let mut rest: &str = &l;
        loop {
            let room = if first { w } else { w.saturating_sub(indent + 2).max(4) };
            let cut = rest
                .char_indices()
                .nth(room)
                .map_or(rest.len(), |(i, _)| i);
            let (head, tail) = rest.split_at(cut);
            out.push((
                if first {
                    head.to_string()
                } else {
                    format!("{}  {head}", " ".repeat(indent))
                },
                false,
            ));
            if tail.is_empty() {
                break;
            }
            rest = tail;
            first = false;
        }
    }
    out
}

fn pages(cx: &Context<'_>, st: &Execution) -> (usize, usize) {
    let [_, e, r] = laid_out(cx, st);
    (
        usize::from(e.height.saturating_sub(3)).max(1),
        usize::from(r.height.saturating_sub(2)).max(1),
    )
}

impl Screen for Execution {
    fn ctx(&self) -> Ctx {
        TABLE.ctx
    }

    fn crumb(&self) -> String {
        format!("execution {}", esc(&self.summary.execution_id))
    }

    fn update(&mut self, cx: &Context<'_>, action: Action) -> Nav {
        update(cx, self, action)
    }

    fn draw(&self, cx: &Context<'_>, frame: &mut Frame<'_>) {
        draw(cx.data, self, cx.theme, frame, cx.body);
    }

    fn anchor(&self, _: &Data) -> Anchor {
        Anchor::Execution(self.summary.execution_id.clone())
    }

    /// After a decision the execution's index and events are as they
    /// were; the journals read again while following may have moved it
    /// and given it events, so it is found again by id.
    fn refresh(&mut self, cx: &Context<'_>, anchor: Anchor) {
        let data = cx.data;
        if let Anchor::Execution(id) = anchor
            && let Ok(xi) = data.inv.execution(&id)
        {
            let events = data.inv.events(xi);
            if xi != self.xi || events.len() != self.events.len() {
                self.xi = xi;
                self.events = events;
                let len = self.events.len();
                let keep = self.cursor.selected;
                self.cursor.select(keep, len);
            }
        }
        self.take_analysis(data);
    }
}

/// Applies an action.
fn update(cx: &Context<'_>, st: &mut Execution, action: Action) -> Nav {
    let data = cx.data;
    let len = st.events.len();
    let (page, rpage) = pages(cx, st);
    let before = st.cursor.selected;
    let rec_width = laid_out(cx, st)[2].width.saturating_sub(2);
    let max_scroll = record_rows(st, rec_width).len().saturating_sub(rpage);
    // The mouse: a click on an event selects it; the wheel moves the
    // events or scrolls the record, whichever is under it; a click
    // focuses the pane under it.
    if let Some(p) = Pointer::of(&action) {
        let [_, list, rec] = laid_out(cx, st);
        if on_list(&mut st.cursor, list, table_rows(list), len, p) != Hit::Miss {
            st.focus = Focus::Events;
        } else if p.within(rec) {
            match p.wheel() {
                0 => st.focus = Focus::Record,
                dir => wheel_scroll(&mut st.scroll, dir, max_scroll),
            }
        }
    }
    match (Move::of(&action), st.focus) {
        (Some(m), Focus::Events) => st.cursor.apply(m, len, page),
        (Some(m), Focus::Record) => scroll(&mut st.scroll, m, rpage, max_scroll),
        (None, _) => {}
    }
    match (action, st.focus) {
        (Action::Back, _) => return Nav::Back,
        (Action::FocusNext, _) => {
            st.focus = match st.focus {
                Focus::Events => Focus::Record,
                Focus::Record => Focus::Events,
            }
        }
        (Action::ScrollDown, _) => scroll(&mut st.scroll, Move::Down, rpage, max_scroll),
        (Action::ScrollUp, _) => scroll(&mut st.scroll, Move::Up, rpage, max_scroll),
        (Action::Copy, _) if !st.raw.is_empty() => {
            // JSON stays JSON, with the same meaning; nothing in it runs.
            return Nav::Copy(
                "the raw journal line",
                crate::sanitize::escape_json_text(&st.raw).into_owned(),
            );
        }
        (Action::CopyAlt, _) => {
            return Nav::Copy("the execution id", st.summary.execution_id.clone());
        }
        _ => {}
    }
    if st.cursor.selected != before {
        st.load_record(data);
    }
    let (page, rpage) = pages(cx, st);
    st.cursor.settle(page, len);
    let rec_width = laid_out(cx, st)[2].width.saturating_sub(2);
    st.scroll = st
        .scroll
        .min(record_rows(st, rec_width).len().saturating_sub(rpage));
    Nav::Stay
}

fn focus_style(theme: &Theme, on: bool) -> Style {
    if on { theme.accent } else { theme.muted }
}

/// Draws the screen.
fn draw(data: &Data, st: &Execution, theme: &Theme, frame: &mut Frame, body: Rect) {
    let mut lines = head_lines(data, st, theme, body.width);
    let [head, list, rec] = areas(st, body, lines.len());
    // A header taller than its pane: the last line shown ends with `…`
    // (the events below show every stage whole).
    let rows = usize::from(head.height.saturating_sub(2));
    if lines.len() > rows && rows > 0 {
        lines.truncate(rows);
        if let Some(last) = lines.pop() {
            let w = usize::from(head.width.saturating_sub(2));
            let mut spans = fit(last, w.saturating_sub(2)).spans;
            if spans.last().is_none_or(|s| !s.content.ends_with('…')) {
                spans.push(Span::styled(" …", theme.muted));
            }
            lines.push(Line::from(spans));
        }
    }
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(" Execution ")
                .border_style(theme.muted),
        ),
        head,
    );
    // Events. The LINE column takes what its citations need, up to a third
    // of the room DETAIL shares with it; a citation that does not fit loses
    // the start of its file name, never its line number.
    let len = st.events.len();
    let height = usize::from(list.height.saturating_sub(3));
    let window = st.cursor.window(height, len);
    let cite = |e: &EventView| {
        format!(
            "{}:{}",
            esc(file_name(&e.evidence.journal)),
            e.evidence.line
        )
    };
    // Inner width less SEQ, TIME, EVENT and the four column gaps.
    let shared = usize::from(list.width.saturating_sub(2)).saturating_sub(5 + 12 + 15 + 4);
    let needed = window
        .clone()
        .map(|i| {
            let e = &st.events[i];
            cite(e).chars().count() + usize::from(e.evidence.chain == ChainMark::Unverified)
        })
        .max()
        .unwrap_or(4)
        .max(4);
    let line_w = needed.min((shared / 3).max(8));
    let widths = [
        Constraint::Length(5),
        Constraint::Length(12),
        Constraint::Length(15),
        Constraint::Fill(1),
        Constraint::Length(u16::try_from(line_w).unwrap_or(u16::MAX)),
    ];
    let cols = column_widths(list.width.saturating_sub(2), &widths, 1);
    let rows = window.map(|i| {
        let e = &st.events[i];
        let sel = i == st.cursor.selected;
        let cells = [
            Line::from(e.evidence.seq.map(|s| s.to_string()).unwrap_or_default()).right_aligned(),
            Line::styled(e.evidence.at.map(time).unwrap_or_default(), theme.muted),
            Line::raw(e.event),
            Line::raw(esc(&e.summary).into_owned()),
            if e.evidence.chain == ChainMark::Unverified {
                Line::styled(
                    format!("✗{}", clip_left(&cite(e), line_w.saturating_sub(1))),
                    theme.critical,
                )
            } else {
                Line::styled(clip_left(&cite(e), line_w).into_owned(), theme.muted)
            },
        ];
        // Cut to their columns with `…`: the record pane shows the line whole.
        Row::new(
            fit_all(cells, &cols)
                .into_iter()
                .map(|l| Cell::from(select_if(l, sel, theme.selection))),
        )
    });
    frame.render_widget(
        Table::new(rows, widths)
            .header(Row::new(["SEQ", "TIME (UTC)", "EVENT", "DETAIL", "LINE"]).style(theme.accent))
            .block(
                Block::bordered()
                    .title(events_title(&st.events))
                    .border_style(focus_style(theme, st.focus == Focus::Events)),
            ),
        list,
    );
    // Record: raw line and canonical action record, wrapped to the pane.
    let h = usize::from(rec.height.saturating_sub(2));
    let rows = record_rows(st, rec.width.saturating_sub(2));
    let start = st.scroll.min(rows.len().saturating_sub(h));
    let lines: Vec<Line> = rows
        .iter()
        .skip(start)
        .take(h)
        .map(|(l, heading)| {
            if *heading {
                Line::styled(l.clone(), theme.accent)
            } else {
                Line::raw(l.clone())
            }
        })
        .collect();
    let pos = if rows.len() > h {
        format!(
            " {}–{} of {} ",
            start + 1,
            (start + h).min(rows.len()),
            rows.len()
        )
    } else {
        String::new()
    };
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(" Record: raw JSON and action record ")
                .title_bottom(Line::from(pos).right_aligned())
                .border_style(focus_style(theme, st.focus == Focus::Record)),
        ),
        rec,
    );
}

/// The events pane title: the count, and a warning when any event lies at or
/// after a chain break (its LINE cell then starts with `✗`).
fn events_title(events: &[EventView]) -> String {
    let unverified = events
        .iter()
        .filter(|e| e.evidence.chain == ChainMark::Unverified)
        .count();
    if unverified > 0 {
        format!(
            " Events ({}) · ✗ {unverified} unverified (after a chain break) ",
            events.len()
        )
    } else {
        format!(" Events ({}) ", events.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::screens::testing::{assert_binds, shared};

    /// The screen's keys ask for exactly what its update answers to.
    #[test]
    fn binds_what_it_answers_to() {
        use Action::*;
        let own = [FocusNext, ScrollDown, ScrollUp, Copy, CopyAlt, Back];
        assert_binds(TABLE, &[&own[..], &shared()].concat());
    }
}

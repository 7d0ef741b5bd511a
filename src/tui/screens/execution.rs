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
    clip_left, esc, file_name, flow, provenance, select_if, short_cite, time,
};
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

/// Header, events and record areas.
pub fn areas(st: &Execution, body: Rect) -> [Rect; 3] {
    let reviewed = u16::from(st.summary.resolution.is_some());
    let [head, rest] =
        Layout::vertical([Constraint::Length(5 + reviewed), Constraint::Fill(1)]).areas(body);
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

fn pages(st: &Execution, body: Rect) -> (usize, usize) {
    let [_, e, r] = areas(st, body);
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

    /// The execution's index survives a new analysis.
    fn refresh(&mut self, cx: &Context<'_>, _: Anchor) {
        self.take_analysis(cx.data);
    }
}

/// Applies an action.
fn update(cx: &Context<'_>, st: &mut Execution, action: Action) -> Nav {
    let (data, body) = (cx.data, cx.body);
    let len = st.events.len();
    let (page, rpage) = pages(st, body);
    let before = st.cursor.selected;
    let max_scroll = st.record.len().saturating_sub(rpage);
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
    let (page, rpage) = pages(st, body);
    st.cursor.settle(page, len);
    st.scroll = st.scroll.min(st.record.len().saturating_sub(rpage));
    Nav::Stay
}

fn focus_style(theme: &Theme, on: bool) -> Style {
    if on { theme.accent } else { theme.muted }
}

/// Draws the screen.
fn draw(data: &Data, st: &Execution, theme: &Theme, frame: &mut Frame, body: Rect) {
    let [head, list, rec] = areas(st, body);
    let x = &st.summary;
    let group = st.group.and_then(|g| data.inv.group_at(g));
    let mut first = vec![
        Span::styled(esc(&x.execution_id).into_owned(), theme.accent),
        Span::raw("  "),
        Span::raw(x.state),
    ];
    if let Some(g) = group {
        first.push(Span::styled("  group ", theme.muted));
        first.push(Span::raw(g.id().to_string()));
        first.push(Span::raw(" "));
        first.push(Span::styled(
            g.verdict().as_str(),
            theme.severity(g.severity()),
        ));
        first.push(Span::raw(format!(" · {}", esc(g.tool()))));
    }
    if let Some(k) = &x.idempotency_key {
        first.push(Span::styled(format!("  key {}", esc(k)), theme.muted));
    }
    let mut lines = vec![Line::from(first)];
    if let Some(r) = &x.resolution {
        lines.push(Line::styled(
            format!("✎ {}: {}", provenance(r), esc(&r.note)),
            theme.review,
        ));
    }
    lines.extend(flow(
        stage_units(x, records(data), theme),
        usize::from(head.width.saturating_sub(2)),
        "",
    ));
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
        Row::new(cells.map(|l| Cell::from(select_if(l, sel, theme.selection))))
    });
    let widths = [
        Constraint::Length(5),
        Constraint::Length(12),
        Constraint::Length(15),
        Constraint::Fill(1),
        Constraint::Length(u16::try_from(line_w).unwrap_or(u16::MAX)),
    ];
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
    // Record: raw line and canonical action record.
    let h = usize::from(rec.height.saturating_sub(2));
    let start = st.scroll.min(st.record.len().saturating_sub(h));
    let lines: Vec<Line> = st
        .record
        .iter()
        .skip(start)
        .take(h)
        .map(|l| {
            if l.starts_with("──") {
                Line::styled(esc(l).into_owned(), theme.accent)
            } else {
                Line::raw(esc(l).into_owned())
            }
        })
        .collect();
    let pos = if st.record.len() > h {
        format!(
            " {}–{} of {} ",
            start + 1,
            (start + h).min(st.record.len()),
            st.record.len()
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

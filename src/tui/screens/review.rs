//! The review queue (docs/design.md §8): every execution that waits for a
//! reviewer (its own status `pending_verification` or
//! `undelivered_result`, not yet settled), oldest first, exactly as
//! the query layer's review queue lists them, each under what waits
//! (`outcome_unknown`, `pairing_uncertain`, `undelivered`,
//! `delivery_unknown`, as `retrace review list` says). For the selected one the
//! reviewer sees the original activity record, not a fresh approval: the
//! target, the first dispatch, the known outcome, the calls that reached
//! it, why the gateway did not send it again, and earlier decisions. Below
//! it, every decision of the case file with who, when and the group's
//! verdict now.
//!
//! `d` opens the decision dialog ([`crate::tui::dialog`]); Enter opens the
//! execution.

use crate::query::{Investigation, QueueItem};
use crate::tui::action::Action;
use crate::tui::data::Data;
use crate::tui::dialog;
use crate::tui::keys::table::{BACK, GLOBAL, MOVE};
use crate::tui::keys::{Bind, Ctx, KeyTable, Part, bind, code, k};
use crate::tui::screen::{Anchor, Context, Jump, Nav, Opens, Registration, Screen};
use crate::tui::screens::execution::Execution;
use crate::tui::theme::Theme;
use crate::tui::widgets::text::{
    column_widths, esc, fit, fit_all, flow, select_if, short_cite, widest, wrap,
};
use crate::tui::widgets::mouse::{Hit, Pointer, on_list, table_rows, wheel_scroll};
use crate::tui::widgets::{Cursor, Move, scroll};
use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

const KEYS: &[Bind] = &[
    bind(
        &[k('d')],
        Action::Decide,
        "decide about the selected execution (confirmed_completed, confirmed_not_executed, escalated)",
        Some("decide"),
    ),
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected execution",
        Some("open"),
    ),
    bind(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between the queue and the activity record",
        Some("pane"),
    ),
    bind(
        &[k('J')],
        Action::ScrollDown,
        "scroll the activity record down",
        None,
    ),
    bind(
        &[k('K')],
        Action::ScrollUp,
        "scroll the activity record up",
        None,
    ),
    bind(
        &[k('y')],
        Action::Copy,
        "copy the execution id (OSC 52)",
        None,
    ),
    BACK,
];

/// The review queue.
pub const TABLE: KeyTable = KeyTable {
    ctx: Ctx::new("review", "review queue"),
    parts: &[
        Part::Keys(KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

/// The review queue, `4` from anywhere (each time from the oldest item).
pub const SCREEN: Registration = Registration {
    keys: &[TABLE],
    jump: Some(Jump {
        bind: bind(
            &[k('4')],
            Action::ShowReview,
            "review queue (executions that wait for a reviewer)",
            None,
        ),
        opens: Opens::Fresh(open),
    }),
};

fn open(_: &Context<'_>) -> Box<dyn Screen> {
    Box::new(Review::default())
}

/// Which pane has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    /// The queue.
    #[default]
    Queue,
    /// The activity record of the selected item.
    Record,
}

/// The review queue screen's state.
#[derive(Debug, Clone, Default)]
pub struct Review {
    /// Selected queue item.
    pub cursor: Cursor,
    /// Focused pane.
    pub focus: Focus,
    /// First line shown in the record pane.
    pub scroll: usize,
}

impl Review {
    /// Keeps the selection inside a queue that changed (a decided item
    /// leaves it: the next one is selected).
    fn keep_inside(&mut self, data: &Data) {
        let n = data.queue.len();
        self.cursor.select(self.cursor.selected, n);
        self.scroll = 0;
        if n == 0 {
            self.focus = Focus::Record;
        }
    }
}

/// Case line, queue, record.
fn areas(body: Rect, n: usize) -> [Rect; 3] {
    let [banner, rest] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(body);
    if body.width >= 150 {
        let [q, r] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Fill(1)]).areas(rest);
        return [banner, q, r];
    }
    let want = (n.max(1) as u16).saturating_add(3);
    let cap = (rest.height / 3).max(4);
    let [q, r] =
        Layout::vertical([Constraint::Length(want.min(cap)), Constraint::Fill(1)]).areas(rest);
    [banner, q, r]
}

fn pages(body: Rect, n: usize) -> (usize, usize, u16) {
    let [_, q, r] = areas(body, n);
    (
        usize::from(q.height.saturating_sub(3)).max(1),
        usize::from(r.height.saturating_sub(2)).max(1),
        r.width.saturating_sub(2),
    )
}

impl Screen for Review {
    fn ctx(&self) -> Ctx {
        TABLE.ctx
    }

    fn crumb(&self) -> String {
        "review queue".into()
    }

    fn update(&mut self, cx: &Context<'_>, action: Action) -> Nav {
        update(cx, self, action)
    }

    fn draw(&self, cx: &Context<'_>, frame: &mut Frame<'_>) {
        draw(cx.data, self, cx.theme, frame, cx.body);
    }

    /// A decided item leaves the queue: the selection stays where it was,
    /// on the next one.
    fn refresh(&mut self, cx: &Context<'_>, _: Anchor) {
        self.keep_inside(cx.data);
    }
}

/// Applies an action (the theme lays out the record pane, to bound its
/// scroll).
fn update(cx: &Context<'_>, st: &mut Review, action: Action) -> Nav {
    let (data, body) = (cx.data, cx.body);
    let n = data.queue.len();
    let (page, rpage, _) = pages(body, n);
    let before = st.cursor.selected;
    // The mouse: the queue selects (a second click opens); the record
    // scrolls under the wheel; a click focuses the pane under it.
    let action = match Pointer::of(&action) {
        None => action,
        Some(p) => {
            let [_, qa, ra] = areas(body, n);
            match on_list(&mut st.cursor, qa, table_rows(qa), n, p) {
                Hit::Open if st.focus == Focus::Queue => Action::Open,
                Hit::Open | Hit::Moved if n == 0 => return settle(cx, st, before),
                Hit::Open | Hit::Moved => {
                    st.focus = Focus::Queue;
                    return settle(cx, st, before);
                }
                Hit::Miss if p.within(ra) => {
                    match p.wheel() {
                        0 => st.focus = Focus::Record,
                        dir => wheel_scroll(&mut st.scroll, dir, usize::MAX),
                    }
                    return settle(cx, st, before);
                }
                Hit::Miss => return Nav::Stay,
            }
        }
    };
    match (Move::of(&action), st.focus) {
        (Some(m), Focus::Queue) => st.cursor.apply(m, n, page),
        (Some(m), Focus::Record) => scroll(&mut st.scroll, m, rpage, usize::MAX),
        (None, _) => {}
    }
    match (action, st.focus) {
        (Action::Back, _) => return Nav::Back,
        (Action::Decide, _) => {
            let item = data.queue.get(st.cursor.selected);
            return match dialog::start_decision(&data.inv, item, cx.job) {
                Ok(d) => Nav::Dialog(d),
                Err(why) => Nav::Say(why.to_string()),
            };
        }
        (Action::FocusNext, _) => {
            st.focus = match st.focus {
                Focus::Queue => Focus::Record,
                Focus::Record if n > 0 => Focus::Queue,
                Focus::Record => Focus::Record,
            }
        }
        (Action::ScrollDown, _) => scroll(&mut st.scroll, Move::Down, rpage, usize::MAX),
        (Action::ScrollUp, _) => scroll(&mut st.scroll, Move::Up, rpage, usize::MAX),
        (Action::Open, _) => {
            if let Some(it) = data.queue.get(st.cursor.selected) {
                return Nav::Push(Box::new(Execution::new(data, it.execution_index, None)));
            }
        }
        (Action::Copy, _) => {
            if let Some(it) = data.queue.get(st.cursor.selected) {
                return Nav::Copy("the execution id", it.execution_id.clone());
            }
        }
        _ => {}
    }
    settle(cx, st, before)
}

/// After an update: a new selection shows its record from the top; the
/// selection stays on screen and the record's scroll inside its text.
fn settle(cx: &Context<'_>, st: &mut Review, before: usize) -> Nav {
    let data = cx.data;
    let n = data.queue.len();
    let (page, rpage, rwidth) = pages(cx.body, n);
    if st.cursor.selected != before {
        st.scroll = 0;
    }
    st.cursor.settle(page, n);
    let lines = record_lines(data, data.queue.get(st.cursor.selected), cx.theme, rwidth);
    st.scroll = st.scroll.min(lines.len().saturating_sub(rpage));
    Nav::Stay
}

fn utc(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "-".into(),
        |t| t.format("%Y-%m-%d %H:%M:%S%.3fZ").to_string(),
    )
}

/// `label          text` lines, the text (already safe) wrapped after a
/// label column of 16.
fn field(
    out: &mut Vec<Line<'static>>,
    label: &str,
    text: &str,
    width: usize,
    style: Style,
    muted: Style,
) {
    let w = width.saturating_sub(16).max(8);
    for (i, l) in wrap(text, w).into_iter().enumerate() {
        out.push(Line::from(vec![
            Span::styled(format!("{:<16}", if i == 0 { label } else { "" }), muted),
            Span::styled(l, style),
        ]));
    }
}

/// The record pane for an inner width: the selected item's original
/// activity record, then the case file's decisions. Pure; shared by
/// update (to bound the scroll) and draw.
pub fn record_lines(
    data: &Data,
    item: Option<&QueueItem>,
    theme: &Theme,
    width: u16,
) -> Vec<Line<'static>> {
    let w = usize::from(width).max(8);
    let mut out = Vec::new();
    let m = theme.muted;
    match item {
        None => {
            for l in wrap(
                "Nothing waits for a reviewer: no execution is pending verification or holds an undelivered result that nobody settled.",
                w,
            ) {
                out.push(Line::styled(l, theme.ok));
            }
        }
        Some(it) => {
            // Cut with `…` when the pane is narrower, never mid-word unsaid.
            out.push(fit(
                Line::from(vec![
                    Span::styled(esc(&it.execution_id).into_owned(), theme.accent),
                    Span::raw("  "),
                    Span::styled(it.asks.topic(), theme.severity(it.waiting_severity())),
                    Span::styled(format!("  group {} ", it.group_id), m),
                    Span::styled(
                        format!("{} [{}]", it.group_verdict, it.severity),
                        theme.severity(it.severity),
                    ),
                ]),
                w,
            ));
            let b = theme.base;
            field(&mut out, "tool", &esc(&it.tool), w, b, m);
            field(
                &mut out,
                "target",
                &esc(it.target.as_deref().unwrap_or("(not recorded)")),
                w,
                b,
                m,
            );
            field(&mut out, "actor", &esc(&it.actor), w, b, m);
            field(&mut out, "intent scope", &esc(&it.intent_scope), w, b, m);
            field(
                &mut out,
                "arguments",
                &esc(&crate::query::words::arguments_words(
                    &it.arguments.to_string(),
                    it.arguments_recorded.as_deref(),
                )),
                w,
                b,
                m,
            );
            field(&mut out, "accepted", &utc(it.accepted_at), w, b, m);
            field(
                &mut out,
                "first dispatch",
                &utc(it.first_dispatch_at),
                w,
                b,
                m,
            );
            field(&mut out, "state", it.state, w, b, m);
            field(
                &mut out,
                "known outcome",
                &esc(&it.known_outcome),
                w,
                theme.review,
                m,
            );
            for (i, c) in it.calls.iter().enumerate() {
                let mut bits = Vec::new();
                if let Some(s) = &c.session_id {
                    bits.push(format!("session {}", esc(s)));
                }
                if let Some(j) = &c.jsonrpc_id {
                    bits.push(format!("JSON-RPC id {}", esc(j)));
                }
                if let Some(s) = &c.mcp_session_id {
                    bits.push(format!("MCP session {}", esc(s)));
                }
                field(
                    &mut out,
                    if i == 0 { "calls" } else { "" },
                    &format!(
                        "{} {} call {}{}",
                        utc(Some(c.at)),
                        c.role,
                        esc(c.call_id.as_deref().unwrap_or("-")),
                        if bits.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", bits.join(", "))
                        }
                    ),
                    w,
                    b,
                    m,
                );
            }
            for (i, a) in it.later_attempts.iter().enumerate() {
                field(
                    &mut out,
                    if i == 0 { "later attempts" } else { "" },
                    &format!(
                        "{} accepted {}, dispatched {}, {}",
                        esc(&a.execution_id),
                        utc(a.at),
                        utc(a.dispatched_at),
                        a.state
                    ),
                    w,
                    b,
                    m,
                );
            }
            field(
                &mut out,
                "not sent again?",
                &esc(&it.why_not_sent_again),
                w,
                b,
                m,
            );
            if it.decisions.is_empty() {
                field(&mut out, "decisions", "none yet", w, m, m);
            }
            for (i, d) in it.decisions.iter().enumerate() {
                field(
                    &mut out,
                    if i == 0 { "decisions" } else { "" },
                    &format!(
                        "{} by {} at {} (case entry {}): {}",
                        d.payload.decision,
                        esc(&d.payload.reviewer),
                        utc(Some(d.at)),
                        d.seq,
                        esc(&d.payload.note)
                    ),
                    w,
                    theme.review,
                    m,
                );
            }
            for (i, e) in it.evidence.iter().enumerate() {
                field(
                    &mut out,
                    if i == 0 { "evidence" } else { "" },
                    &format!("{} {}", esc(&short_cite(e)), e.record),
                    w,
                    theme.info,
                    m,
                );
            }
            let allowed: Vec<&str> = it.allowed.iter().map(|d| d.as_str()).collect();
            let how = match data.inv.cannot_decide() {
                None => format!("{} (d decides)", allowed.join(" · ")),
                Some(why) => format!("{} — {why}", allowed.join(" · ")),
            };
            field(&mut out, "may decide", &how, w, theme.accent, m);
        }
    }
    // Every decision of the case file, newest first.
    let decisions = &data.inv.case().decisions;
    out.push(Line::raw(""));
    out.push(Line::styled(
        format!("Decisions in the case file ({})", decisions.len()),
        theme.accent,
    ));
    if decisions.is_empty() {
        out.push(Line::styled("  none yet", m));
    }
    for d in decisions.iter().rev() {
        let now = data
            .inv
            .execution(&d.payload.execution_id)
            .ok()
            .and_then(|x| data.inv.group_of(x));
        let mut units = vec![
            vec![
                Span::styled(format!("#{} ", d.seq), m),
                Span::styled(esc(&d.payload.execution_id).into_owned(), theme.accent),
                Span::raw(format!(" {} ", d.payload.decision)),
            ],
            vec![Span::styled(
                format!("by {} ", esc(&d.payload.reviewer)),
                theme.review,
            )],
            vec![Span::styled(
                format!("at {} ", utc(Some(d.at))),
                theme.review,
            )],
        ];
        if let Some(g) = now {
            units.push(vec![
                Span::styled(format!("· group {} now ", g.id()), m),
                Span::styled(g.verdict().as_str(), theme.severity(g.severity())),
            ]);
        }
        out.extend(flow(units, w, "  "));
        for l in wrap(&esc(&d.payload.note), w.saturating_sub(4).max(8)) {
            out.push(Line::styled(format!("    {l}"), m));
        }
    }
    out
}

/// The case file and its chain in one line, escaped.
pub fn case_line(inv: &Investigation) -> String {
    let case = inv.case();
    match (case.name(), &case.chain) {
        (None, _) => "no case file (the bundled sample; start with --case FILE to decide)".into(),
        (Some(n), None) => format!("case file {} (created by the first decision)", esc(&n)),
        (Some(n), Some(c)) => format!("case file {}: {}", esc(&n), esc(&c.describe())),
    }
}

fn focus_style(theme: &Theme, on: bool) -> Style {
    if on { theme.accent } else { theme.muted }
}

/// Draws the screen.
fn draw(data: &Data, st: &Review, theme: &Theme, frame: &mut Frame, body: Rect) {
    let queue = &data.queue;
    let n = queue.len();
    let [banner, qa, ra] = areas(body, n);
    // Read-only or the reviewer first (short, and they must not be cut
    // off), then the case file (cut with `…` when narrow: the decision
    // dialog names it whole).
    let inv = &data.inv;
    let mut spans = vec![Span::raw(" ")];
    if inv.read_only() {
        spans.push(Span::styled(
            " READ-ONLY: decisions disabled ",
            theme.warn.add_modifier(ratatui::style::Modifier::REVERSED),
        ));
        spans.push(Span::raw(" "));
    } else if let Some(r) = inv.reviewer() {
        spans.push(Span::styled(format!("reviewer {} · ", esc(r)), theme.muted));
    }
    spans.push(Span::styled(case_line(inv), theme.muted));
    frame.render_widget(
        Paragraph::new(fit(Line::from(spans), usize::from(banner.width))),
        banner,
    );
    // Queue.
    let wide = qa.width >= 100;
    let h = usize::from(qa.height.saturating_sub(3));
    let window = st.cursor.window(h, n);
    // The execution id gets its whole width; other cells are cut with `…`
    // (the record below shows them whole).
    let id_w = widest(
        queue[window.clone()].iter().map(|it| it.execution_id.as_str()),
        9,
    )
    .saturating_add(2)
    .min(qa.width.saturating_sub(2) / 2);
    let mut header = vec!["", "STATUS", "EXECUTION", "TOOL", "DISPATCHED"];
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(20),
        Constraint::Length(id_w),
        Constraint::Fill(2),
        Constraint::Length(14),
    ];
    if wide {
        header.push("GROUP VERDICT");
        widths.push(Constraint::Length(22));
    }
    let cols = column_widths(qa.width.saturating_sub(2), &widths, 1);
    let rows = window.map(|i| {
        let it = &queue[i];
        let sel = i == st.cursor.selected;
        let sev = theme.severity(it.waiting_severity());
        let mut id = esc(&it.execution_id).into_owned();
        if !it.decisions.is_empty() {
            id.push_str(" ✎");
        }
        let mut cells = vec![
            Line::styled(it.asks.topic(), sev),
            Line::raw(id),
            Line::raw(esc(&it.tool).into_owned()),
            Line::styled(
                it.first_dispatch_at
                    .or(it.accepted_at)
                    .map_or_else(|| "-".into(), |t| t.format("%m-%d %H:%M:%S").to_string()),
                theme.muted,
            ),
        ];
        if wide {
            cells.push(Line::styled(
                it.group_verdict.as_str(),
                theme.severity(it.severity),
            ));
        }
        let bar = Cell::from(Span::styled("▌", theme.severity(it.severity)));
        Row::new(
            std::iter::once(bar).chain(
                fit_all(cells, &cols[1..])
                    .into_iter()
                    .map(|l| Cell::from(select_if(l, sel, theme.selection))),
            ),
        )
    });
    let title = format!(
        " Review queue: {n} waiting, oldest first{} ",
        if queue.iter().any(|i| !i.decisions.is_empty()) {
            " · ✎ escalated"
        } else {
            ""
        }
    );
    if n == 0 {
        frame.render_widget(
            Paragraph::new(Line::styled("  Nothing waits for a reviewer.", theme.ok)).block(
                Block::bordered()
                    .title(title)
                    .border_style(focus_style(theme, st.focus == Focus::Queue)),
            ),
            qa,
        );
    } else {
        frame.render_widget(
            Table::new(rows, widths)
                .header(Row::new(header).style(theme.accent))
                .column_spacing(1)
                .block(
                    Block::bordered()
                        .title(title)
                        .border_style(focus_style(theme, st.focus == Focus::Queue)),
                ),
            qa,
        );
    }
    // The record.
    let inner_w = ra.width.saturating_sub(2);
    let lines = record_lines(data, queue.get(st.cursor.selected), theme, inner_w);
    let h = usize::from(ra.height.saturating_sub(2));
    let start = st.scroll.min(lines.len().saturating_sub(h));
    let pos = if lines.len() > h {
        format!(
            " {}–{} of {} ",
            start + 1,
            (start + h).min(lines.len()),
            lines.len()
        )
    } else {
        String::new()
    };
    frame.render_widget(
        Paragraph::new(lines.into_iter().skip(start).take(h).collect::<Vec<_>>()).block(
            Block::bordered()
                .title(" Original activity record ")
                .title_bottom(Line::from(pos).right_aligned())
                .border_style(focus_style(theme, st.focus == Focus::Record)),
        ),
        ra,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::screens::testing::{assert_binds, shared};

    /// A record's header wider than the pane ends with `…`: it was cut
    /// mid-word with nothing to say so (`possible_duplicate [h`).
    #[test]
    fn a_cut_header_says_it_was_cut() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/pending-retry.jsonl");
        let d = tempfile::tempdir().unwrap();
        let mut setup = crate::query::Setup::new(vec![p]);
        setup.case = Some(d.path().join("case.sqlite"));
        let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
        let data = Data::new(inv);
        let item = data.queue.first();
        assert!(item.is_some(), "the fixture has an execution to review");
        let theme = Theme::dark();
        let whole = record_lines(&data, item, &theme, 200)[0].to_string();
        assert!(!whole.ends_with('…'), "{whole}");
        let cut = record_lines(&data, item, &theme, 40)[0].to_string();
        assert!(cut.ends_with('…') && cut.chars().count() <= 40, "{cut}");
    }

    /// The screen's keys ask for exactly what its update answers to.
    #[test]
    fn binds_what_it_answers_to() {
        use Action::*;
        let own = [Decide, Open, FocusNext, ScrollDown, ScrollUp, Copy, Back];
        assert_binds(TABLE, &[&own[..], &shared()].concat());
    }
}

//! One execution: its lifecycle stages and every event the journals hold
//! for it, in time order.

use crate::query::{EventView, ExecutionSummary};
use crate::tui::action::Action;
use crate::tui::app::{Data, Nav};
use crate::tui::screens::detail::stage_units;
use crate::tui::theme::Theme;
use crate::tui::widgets::Cursor;
use crate::tui::widgets::text::{esc, flow, time};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

/// State of the execution screen.
#[derive(Debug, Clone)]
pub struct State {
    /// Execution index.
    pub xi: usize,
    /// Its summary.
    pub summary: ExecutionSummary,
    /// Its events.
    pub events: Vec<EventView>,
    /// Selected event.
    pub cursor: Cursor,
    /// The group it belongs to.
    pub group: Option<usize>,
}

impl State {
    /// Opens execution `xi`, with event `event` selected.
    pub fn new(data: &Data, xi: usize, event: Option<usize>) -> State {
        let events = data.inv.events(xi);
        let mut cursor = Cursor::default();
        cursor.select(event.unwrap_or(0), events.len());
        State {
            xi,
            summary: data.inv.execution_summary(xi),
            events,
            cursor,
            group: data.inv.execution_group(xi),
        }
    }
}

/// Header and events areas.
pub fn areas(body: Rect) -> [Rect; 2] {
    Layout::vertical([Constraint::Length(5), Constraint::Fill(1)]).areas(body)
}

fn page(body: Rect) -> usize {
    usize::from(areas(body)[1].height.saturating_sub(3)).max(1)
}

/// Applies an action.
pub fn update(_data: &Data, st: &mut State, action: Action, body: Rect) -> Nav {
    let len = st.events.len();
    let page = page(body);
    match action {
        Action::Back => return Nav::Back,
        Action::Down => st.cursor.step(1, len),
        Action::Up => st.cursor.step(-1, len),
        Action::PageDown => st.cursor.step(page as isize, len),
        Action::PageUp => st.cursor.step(-(page as isize), len),
        Action::Top => st.cursor.select(0, len),
        Action::Bottom => st.cursor.select(len.saturating_sub(1), len),
        _ => {}
    }
    st.cursor.settle(page, len);
    Nav::Stay
}

/// Draws the screen.
pub fn draw(data: &Data, st: &State, theme: &Theme, frame: &mut Frame, body: Rect) {
    let [head, list] = areas(body);
    let x = &st.summary;
    let verdict = st.group.and_then(|g| data.inv.group_at(g));
    let mut first = vec![
        Span::styled(esc(&x.execution_id).into_owned(), theme.accent),
        Span::raw("  "),
        Span::raw(x.state),
    ];
    if let Some(g) = verdict {
        first.push(Span::styled("  group ", theme.muted));
        first.push(Span::raw(g.id.clone()));
        first.push(Span::raw(" "));
        first.push(Span::styled(
            g.verdict.as_str(),
            theme.severity(g.severity()),
        ));
    }
    let mut lines = vec![Line::from(first)];
    lines.extend(flow(
        stage_units(x, theme),
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
    let len = st.events.len();
    let height = usize::from(list.height.saturating_sub(3));
    let window = st.cursor.window(height, len);
    let rows = window.map(|i| {
        let e = &st.events[i];
        let row = Row::new(vec![
            Cell::from(
                Line::from(e.evidence.seq.map(|s| s.to_string()).unwrap_or_default())
                    .right_aligned(),
            ),
            Cell::from(Span::styled(
                e.evidence.at.map(time).unwrap_or_default(),
                theme.muted,
            )),
            Cell::from(e.event),
            Cell::from(esc(&e.summary).into_owned()),
            Cell::from(Span::styled(
                format!("{}:{}", esc(&e.evidence.journal), e.evidence.line),
                theme.muted,
            )),
        ]);
        if i == st.cursor.selected {
            row.style(theme.selection)
        } else {
            row
        }
    });
    let widths = [
        Constraint::Length(5),
        Constraint::Length(12),
        Constraint::Length(15),
        Constraint::Fill(3),
        Constraint::Fill(1),
    ];
    frame.render_widget(
        Table::new(rows, widths)
            .header(Row::new(["SEQ", "TIME (UTC)", "EVENT", "DETAIL", "LINE"]).style(theme.accent))
            .block(
                Block::bordered()
                    .title(format!(" Events ({len}) "))
                    .border_style(theme.accent),
            ),
        list,
    );
}

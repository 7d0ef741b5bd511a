//! The groups table: worst first, one row per group of calls that share an
//! intent. Only the rows on screen are built.

use crate::query::GroupFilter;
use crate::tui::action::Action;
use crate::tui::app::{Data, Nav, View};
use crate::tui::screens::detail;
use crate::tui::theme::Theme;
use crate::tui::widgets::Cursor;
use crate::tui::widgets::text::{datetime, esc};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

/// Rows shown (group indexes in display order) and the selection.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Indexes into the analysis's groups, in display order.
    pub rows: Vec<usize>,
    /// Whether every group is listed, not only those worth a look.
    pub all: bool,
    /// Selection.
    pub cursor: Cursor,
}

impl State {
    /// The groups worth a look, worst first; every group when none is.
    pub fn new(data: &Data) -> State {
        let rows = data.inv.group_indices(&GroupFilter::default());
        if rows.is_empty() {
            return State {
                rows: data.inv.group_indices(&GroupFilter {
                    all: true,
                    ..GroupFilter::default()
                }),
                all: true,
                cursor: Cursor::default(),
            };
        }
        State {
            rows,
            all: false,
            cursor: Cursor::default(),
        }
    }

    /// The selected group's index, if any.
    pub fn selected_group(&self) -> Option<usize> {
        self.rows.get(self.cursor.selected).copied()
    }
}

/// Rows of the table that fit in the body.
pub fn page(body: Rect) -> usize {
    usize::from(body.height.saturating_sub(3))
}

/// Applies an action.
pub fn update(data: &Data, st: &mut State, action: Action, body: Rect) -> Nav {
    let len = st.rows.len();
    let page = page(body).max(1);
    match action {
        Action::Down => st.cursor.step(1, len),
        Action::Up => st.cursor.step(-1, len),
        Action::PageDown => st.cursor.step(page as isize, len),
        Action::PageUp => st.cursor.step(-(page as isize), len),
        Action::Top => st.cursor.select(0, len),
        Action::Bottom => st.cursor.select(len.saturating_sub(1), len),
        Action::Open => {
            if let Some(d) = st
                .selected_group()
                .and_then(|g| detail::State::new(data, g))
            {
                return Nav::Push(View::Detail(Box::new(d)));
            }
        }
        _ => {}
    }
    st.cursor.settle(page, len);
    Nav::Stay
}

/// Draws the table.
pub fn draw(data: &Data, st: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let inv = &data.inv;
    let total = st.rows.len();
    let title = format!(
        " Groups: {total} {} ",
        if st.all { "(all)" } else { "worth a look" }
    );
    let block = Block::bordered().title(title).border_style(theme.muted);
    if total == 0 {
        frame.render_widget(
            Paragraph::new("No group: the journals hold no tool call.").block(block),
            area,
        );
        return;
    }
    let wide = area.width >= 110;
    let widest = area.width >= 150;
    let mut header = vec!["", "VERDICT", "TOOL", "CALLS", "EXECS"];
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(24),
        Constraint::Fill(2),
        Constraint::Length(5),
        Constraint::Length(5),
    ];
    if wide {
        header.push("DISP");
        widths.push(Constraint::Length(4));
    }
    header.push("FIRST (UTC)");
    widths.push(Constraint::Length(19));
    if wide {
        header.push("GROUP");
        widths.push(Constraint::Length(11));
    }
    if widest {
        header.push("SCOPE");
        widths.push(Constraint::Fill(1));
        header.push("ACTOR");
        widths.push(Constraint::Fill(2));
    }
    let height = page(area);
    let window = st.cursor.window(height, total);
    let rows = window.map(|i| {
        let Some(g) = inv.group_at(st.rows[i]) else {
            return Row::new(Vec::<Cell>::new());
        };
        let sev = theme.severity(g.severity());
        let mut cells = vec![
            Cell::from(Span::styled("▌", sev)),
            Cell::from(Span::styled(g.verdict.as_str(), sev)),
            Cell::from(esc(&g.tool).into_owned()),
            Cell::from(Line::from(g.calls.to_string()).right_aligned()),
            Cell::from(Line::from(g.executions.len().to_string()).right_aligned()),
        ];
        if wide {
            cells.push(Cell::from(
                Line::from(g.dispatches.to_string()).right_aligned(),
            ));
        }
        cells.push(Cell::from(Span::styled(datetime(g.first_at), theme.muted)));
        if wide {
            cells.push(Cell::from(Span::styled(g.id.clone(), theme.muted)));
        }
        if widest {
            cells.push(Cell::from(esc(&g.intent_scope).into_owned()));
            cells.push(Cell::from(esc(&g.actor).into_owned()));
        }
        let row = Row::new(cells);
        if i == st.cursor.selected {
            row.style(theme.selection)
        } else {
            row
        }
    });
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.accent))
        .column_spacing(1)
        .block(block);
    frame.render_widget(table, area);
}

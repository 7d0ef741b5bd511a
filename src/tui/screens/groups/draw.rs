//! Drawing the groups table and its filter line; only the rows on screen
//! are built.

use super::rows::{Groups, MAX_QUERY, SortKey};
use crate::tui::screen::Context;
use crate::tui::screens::overview::change_mark;
use crate::tui::search::{Fit, fields, find, matcher};
use crate::tui::widgets::text::{clip_left, column_widths, esc, fit_all, highlighted, select_if};
use fuzzy_matcher::FuzzyMatcher;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

/// Table and filter-line areas.
fn areas(body: Rect, st: &Groups) -> [Rect; 2] {
    let line = u16::from(st.editing || !st.query.is_empty() || st.filtered());
    Layout::vertical([Constraint::Fill(1), Constraint::Length(line)]).areas(body)
}

/// The table's area (the filter line below it left out).
pub(super) fn table_area(body: Rect, st: &Groups) -> Rect {
    areas(body, st)[0]
}

/// Rows of the table that fit in the body.
pub fn page(body: Rect, st: &Groups) -> usize {
    usize::from(areas(body, st)[0].height.saturating_sub(3))
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
pub(super) fn draw(cx: &Context<'_>, st: &Groups, frame: &mut Frame) {
    let (data, theme, area) = (cx.data, cx.theme, cx.body);
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
    // Below 96 columns the first times lose their date (see below): when
    // every call is on one day, the day is said once, at the bottom.
    let one_day = match (data.rate.start, data.rate.end) {
        (Some(s), Some(e)) if s.date_naive() == e.date_naive() => Some(s.date_naive()),
        _ => None,
    };
    let mut block = Block::bordered().title(title).border_style(theme.muted);
    if table_area.width < 96
        && let Some(day) = one_day
    {
        block = block.title_bottom(Line::from(format!(" {} UTC ", day.format("%Y-%m-%d"))).right_aligned());
    }
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
        let msg = if let Some(m) = inv.narrowed().and_then(|n| n.empty_window()) {
            m
        } else if st.filtered() {
            "No group matches the filters. Esc clears them.".to_string()
        } else if every > 0 && !st.all {
            format!(
                "No group worth a look: {every} group(s), each one call with a clean verdict. Press a to list every group."
            )
        } else {
            crate::tui::screens::overview::NO_RECORD_YET.to_string()
        };
        frame.render_widget(Paragraph::new(msg).block(block), table_area);
        return;
    }
    let wide = table_area.width >= 110;
    let widest = table_area.width >= 150;
    // Below 96 columns the first time loses its date, so that the group id
    // (what `retrace investigate --group` takes) fits beside the tool: its
    // day is then at the bottom of the table when all calls share one, or
    // the time gives month, day, hours and minutes when they do not.
    let dated = table_area.width >= 96;
    let days_apart = !dated && one_day.is_none();
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
    } else if days_apart {
        "%m-%d %H:%M"
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
    } else if days_apart {
        11
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
    let cols = column_widths(table_area.width.saturating_sub(2), &widths, 1);
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
            highlighted(&f[field], 0, &idx, base, hl)
        };
        let sev = theme.severity(g.severity());
        let plain = |l: Line<'static>| select_if(l, selected, theme.selection);
        let mut cells = vec![
            Line::from(Span::styled(change_mark(cx, g.id()), sev)),
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
        // Cut to their columns with `…` (the group detail shows them whole).
        let row = Row::new(fit_all(cells, &cols).into_iter().map(Cell::from));
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

//! The group detail's timeline: every execution of the group as a lane on
//! one time axis, with its stage marks and, where there is room, its stage
//! times.

use super::state::{Areas, Detail, Focus, focus_style, inner};
use crate::query::{ExecutionSummary, StageStatus};
use crate::tui::theme::Theme;
use crate::tui::widgets::lanes::{self, Axis};
use crate::tui::widgets::stages::stage_units;
use crate::tui::widgets::text::{delta, esc, fit, flow, selected, time, wrap};
use ratatui::Frame;
use ratatui::style::Modifier;
use ratatui::layout::Position;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

/// Most lines one execution takes in the lanes pane when every part of
/// it fits on one line: its head (id, state, outcome), the bar on the time
/// axis, and the stage times on two lines. A head or a stage chain that
/// does not fit the pane's width wraps onto more (`lane_lines`).
pub const LANE_HEIGHT: usize = 4;

/// Lines of a compact lane (the first line of its head, the bar): used
/// for the lanes other than the selected one when not every lane fits in
/// full.
pub const COMPACT_LANE: usize = 2;

/// How the lanes are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lanes {
    /// Every lane in full (its stage times, its head whole).
    AllFull,
    /// The selected lane in full, the others compact.
    SelectedFull,
    /// Every lane compact (the questions have the focus).
    AllCompact,
}

/// The legend's lines inside a lanes pane of inner `width`: none when it
/// fits the pane's bottom border, else the legend wrapped above it (so
/// that it is never cut).
pub(super) fn legend_rows(width: usize) -> Vec<String> {
    if lanes::LEGEND.chars().count() <= width {
        Vec::new()
    } else {
        wrap(lanes::LEGEND.trim(), width.max(1))
    }
}

/// Lines of lane `i` in full at inner `width`.
fn full_rows(st: &Detail, i: usize, width: usize, theme: &Theme) -> usize {
    st.detail
        .executions_detail
        .get(i)
        .map_or(0, |x| lane_lines(st, x, false, true, width, theme).len())
}

/// Rows the lanes pane needs to show every lane drawn as `mode` at inner
/// `width`: borders, the axis line, the legend where it wraps, the lanes.
/// Lanes in full are measured only when they could fit (at most `budget`
/// rows); more is `u16::MAX`.
pub(super) fn lanes_rows(st: &Detail, mode: Lanes, width: usize, budget: u16, theme: &Theme) -> u16 {
    let n = st.detail.executions_detail.len();
    let fixed = 3 + legend_rows(width).len();
    let compact = n * COMPACT_LANE;
    let rows = match mode {
        Lanes::AllCompact => compact,
        _ if fixed + compact > usize::from(budget) => return u16::MAX,
        Lanes::AllFull => (0..n).map(|i| full_rows(st, i, width, theme)).sum(),
        Lanes::SelectedFull => {
            let sel = st.lanes.selected.min(n.saturating_sub(1));
            compact.saturating_sub(COMPACT_LANE) + full_rows(st, sel, width, theme)
        }
    };
    u16::try_from(rows + fixed).unwrap_or(u16::MAX)
}

/// How the lanes are drawn in the pane, and how many a page holds.
fn lanes_fit(st: &Detail, a: &Areas, theme: &Theme) -> (Lanes, usize) {
    let n = st.detail.executions_detail.len();
    let li = inner(a.lanes);
    let width = usize::from(li.width);
    let rows = li.height.saturating_add(2);
    if lanes_rows(st, Lanes::AllFull, width, rows, theme) <= rows {
        return (Lanes::AllFull, n.max(1));
    }
    // The selected lane is drawn in full only when every lane still fits:
    // no lane is hidden for the sake of detail.
    if st.focus == Focus::Lanes && lanes_rows(st, Lanes::SelectedFull, width, rows, theme) <= rows
    {
        return (Lanes::SelectedFull, n.max(1));
    }
    // Compact lanes, with the legend wrapped below them when all fit so;
    // else as many as fit with the legend in the border ([`draw`]).
    let room = usize::from(rows).saturating_sub(3);
    let with_legend = room.saturating_sub(legend_rows(width).len());
    let page = if n * COMPACT_LANE <= with_legend {
        n
    } else {
        room / COMPACT_LANE
    };
    (Lanes::AllCompact, page.max(1))
}

/// The lanes a page holds.
pub(super) fn lanes_page(st: &Detail, a: &Areas, theme: &Theme) -> usize {
    lanes_fit(st, a, theme).1
}

/// Whether lane `i` is drawn in full in `mode`.
fn is_full(st: &Detail, mode: Lanes, i: usize) -> bool {
    mode == Lanes::AllFull || (mode == Lanes::SelectedFull && i == st.lanes.selected)
}

/// The lane drawn at `at` in the lanes pane, if one is (the same layout
/// [`draw`] uses).
pub(super) fn lane_at(st: &Detail, a: &Areas, at: Position, theme: &Theme) -> Option<usize> {
    let li = inner(a.lanes);
    if !li.contains(at) {
        return None;
    }
    let n = st.detail.executions_detail.len();
    let (mode, page) = lanes_fit(st, a, theme);
    let width = usize::from(li.width);
    // The axis line comes first.
    let mut y = li.y.saturating_add(1);
    for i in st.lanes.window(page, n) {
        let h = if is_full(st, mode, i) {
            full_rows(st, i, width, theme)
        } else {
            COMPACT_LANE
        };
        let h = u16::try_from(h).unwrap_or(u16::MAX);
        if (y..y.saturating_add(h)).contains(&at.y) {
            return Some(i);
        }
        y = y.saturating_add(h);
    }
    None
}

/// The head of one execution as units for [`flow`]: its id, its state, a
/// reviewer's decision, the badges that cannot be missed (unknown outcome,
/// gaps in the record), and its outcome, part by part.
fn head_units(st: &Detail, x: &ExecutionSummary, theme: &Theme) -> Vec<Vec<Span<'static>>> {
    let marks = x.stages.marks();
    let has = |s: StageStatus| marks.iter().any(|(_, m)| m.is_some_and(|m| m.status == s));
    let unknown = lanes::outcome_unknown(x);
    let state_style = if unknown || has(StageStatus::Unknown) {
        theme.review
    } else if has(StageStatus::Failed) {
        theme.warn
    } else {
        theme.ok
    };
    let mut units = vec![
        vec![
            Span::styled(esc(&x.execution_id).into_owned(), theme.accent),
            Span::raw(" "),
        ],
        vec![Span::styled(x.state, state_style), Span::raw(" ")],
    ];
    if x.before_window {
        units.push(vec![
            Span::styled("before the window", theme.muted),
            Span::raw(" "),
        ]);
    }
    // A reviewer's decision, in words: it settles the outcome (no unknown
    // badge, no dotted line) unless it is an escalation.
    if let Some(r) = &x.resolution {
        units.push(vec![
            Span::styled(
                format!(
                    "✎ {} by {} {}",
                    r.decision.as_str().replace('_', " "),
                    esc(&r.reviewer),
                    r.at.format("%Y-%m-%d %H:%MZ")
                ),
                theme.review,
            ),
            Span::raw(" "),
        ]);
    }
    if unknown {
        units.push(vec![
            Span::styled(
                " ? OUTCOME UNKNOWN ",
                theme.review.add_modifier(Modifier::REVERSED),
            ),
            Span::raw(" "),
        ]);
    }
    let gaps = lanes::gaps(x, st.records.0, st.records.1);
    if !gaps.is_empty() {
        units.push(vec![
            Span::styled(
                format!(" gap: no {} ", gaps.join(", no ")),
                theme.warn.add_modifier(Modifier::REVERSED),
            ),
            Span::raw(" "),
        ]);
    }
    if let Some(o) = &x.outcome {
        let o = esc(o).into_owned();
        let parts: Vec<&str> = o.split(" · ").collect();
        for (i, part) in parts.iter().enumerate() {
            let sep = if i + 1 < parts.len() { " · " } else { " " };
            units.push(vec![Span::raw(format!("{part}{sep}"))]);
        }
    }
    units
}

/// The lines of one execution at inner `width`: its head, flowed onto as
/// many lines as it needs (compact: its first line, with `…` when more
/// follows); its bar on the shared axis; in full, the stage chain, flowed.
/// No line is wider than `width`: a part longer than a line is cut with
/// `…` (the execution screen shows it whole).
fn lane_lines(
    st: &Detail,
    x: &ExecutionSummary,
    selected: bool,
    full: bool,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut head = flow(head_units(st, x, theme), width, "  ");
    if selected && let Some(first) = head.first_mut().and_then(|l| l.spans.first_mut()) {
        *first = Span::styled("▶ ", theme.accent);
    }
    let more = head.len() > 1;
    if !full {
        head.truncate(1);
        if more && let Some(l) = head.first_mut() {
            l.spans.push(Span::styled("…", theme.muted));
        }
    }
    let mut lines: Vec<Line<'static>> = head.into_iter().map(|l| fit(l, width)).collect();
    let bar_w = width.saturating_sub(2);
    lines.push(match &st.axis {
        Some(axis) => {
            let mut b = lanes::bar(x, axis, bar_w, theme);
            b.spans.insert(0, Span::raw("  "));
            b
        }
        None => Line::raw(""),
    });
    if full {
        lines.extend(
            flow(stage_units(x, st.records, theme), width, "  ")
                .into_iter()
                .map(|l| fit(l, width)),
        );
    }
    lines
}

/// The axis line: start and end times, and the span.
fn axis_line(axis: Option<&Axis>, width: usize, theme: &Theme) -> Line<'static> {
    let Some(a) = axis else {
        return Line::styled("  no times recorded", theme.muted);
    };
    let left = format!("  {}", time(a.start));
    let right = time(a.end);
    let mid = format!(" {} ", delta(a.end - a.start).trim_start_matches('+'));
    let room = width.saturating_sub(left.chars().count() + right.chars().count());
    let dashes = room.saturating_sub(mid.chars().count());
    Line::from(vec![
        Span::styled(left, theme.muted),
        Span::styled(
            "╶".to_string() + &"─".repeat(dashes.saturating_sub(2) / 2),
            theme.muted,
        ),
        Span::styled(mid, theme.muted),
        Span::styled(
            "─".repeat(dashes.saturating_sub(2) - dashes.saturating_sub(2) / 2) + "╴",
            theme.muted,
        ),
        Span::styled(right, theme.muted),
    ])
}

/// Draws the lanes pane.
pub(super) fn draw(st: &Detail, a: &Areas, theme: &Theme, frame: &mut Frame) {
    let d = &st.detail;
    // Executions as lanes on one time axis.
    let n = d.executions_detail.len();
    let li = inner(a.lanes);
    let width = usize::from(li.width);
    let (mode, page) = lanes_fit(st, a, theme);
    let window = st.lanes.window(page, n);
    let mut lines = vec![axis_line(st.axis.as_ref(), width, theme)];
    for i in window.clone() {
        let mut l = lane_lines(
            st,
            &d.executions_detail[i],
            i == st.lanes.selected,
            is_full(st, mode, i),
            width,
            theme,
        );
        if i == st.lanes.selected && st.focus == Focus::Lanes {
            l[0] = selected(l[0].clone(), theme.selection);
        }
        lines.extend(l);
    }
    // The legend: in the bottom border when it fits; else wrapped at the
    // bottom of the pane when the lanes leave room for it; else in the
    // border, cut with `…` (a pane this short shows it whole when wider).
    let legend = legend_rows(width);
    let wrapped = !legend.is_empty() && lines.len() + legend.len() <= usize::from(li.height);
    if wrapped {
        let room = usize::from(li.height).saturating_sub(legend.len());
        lines.resize(room, Line::raw(""));
        lines.extend(legend.into_iter().map(|l| Line::styled(l, theme.muted)));
    } else {
        lines.truncate(usize::from(li.height));
    }
    let mut title = format!(" Timeline: {n} execution{} ", if n == 1 { "" } else { "s" });
    if window.end < n || window.start > 0 {
        title = format!("{title}({}–{}) ", window.start + 1, window.end);
    }
    let mut block = Block::bordered()
        .title(title)
        .border_style(focus_style(theme, st.focus == Focus::Lanes));
    if !wrapped {
        block = block.title_bottom(fit(
            Line::styled(lanes::LEGEND, theme.muted),
            usize::from(a.lanes.width.saturating_sub(2)),
        ));
    }
    frame.render_widget(Paragraph::new(lines).block(block), a.lanes);
}

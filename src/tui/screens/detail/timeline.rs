//! The group detail's timeline: every execution of the group as a lane on
//! one time axis, with its stage marks and, where there is room, its stage
//! times.

use super::state::{Areas, Detail, Focus, focus_style, inner};
use crate::query::{ExecutionSummary, StageStatus};
use crate::tui::theme::Theme;
use crate::tui::widgets::lanes::{self, Axis};
use crate::tui::widgets::stages::stage_units;
use crate::tui::widgets::text::{delta, esc, flow, selected, time};
use ratatui::Frame;
use ratatui::layout::Position;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

/// Lines one execution takes in the lanes pane: id and state, the bar on
/// the time axis, and the stage times on up to two lines.
pub const LANE_HEIGHT: usize = 4;

/// Lines of a compact lane (id and state, the bar): used for the lanes
/// other than the selected one when not every lane fits in full.
pub const COMPACT_LANE: usize = 2;

/// How the lanes are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lanes {
    /// Every lane with its stage times.
    AllFull,
    /// The selected lane with its stage times, the others compact.
    SelectedFull,
    /// Every lane compact (the questions have the focus).
    AllCompact,
}

/// Rows the lanes pane needs to show `n` lanes drawn as `mode`: borders,
/// the axis line and the lanes.
pub(super) fn lanes_rows(n: usize, mode: Lanes) -> u16 {
    let lanes = match mode {
        Lanes::AllFull => n * LANE_HEIGHT,
        Lanes::SelectedFull => {
            n.saturating_sub(1) * COMPACT_LANE + LANE_HEIGHT.min(n * LANE_HEIGHT)
        }
        Lanes::AllCompact => n * COMPACT_LANE,
    };
    u16::try_from(lanes + 3).unwrap_or(u16::MAX)
}

/// How the lanes are drawn in the pane, and how many a page holds.
fn lanes_fit(a: &Areas, n: usize, focus: Focus) -> (Lanes, usize) {
    let rows = usize::from(inner(a.lanes).height.saturating_sub(1));
    if rows >= n * LANE_HEIGHT {
        return (Lanes::AllFull, n.max(1));
    }
    // The selected lane keeps its stage times only when every lane still
    // fits: no lane is hidden for the sake of detail.
    let selected_full = LANE_HEIGHT + n.saturating_sub(1) * COMPACT_LANE;
    match focus {
        Focus::Lanes if rows >= selected_full => (Lanes::SelectedFull, n.max(1)),
        _ => (Lanes::AllCompact, (rows / COMPACT_LANE).max(1)),
    }
}

/// The lanes a page holds.
pub(super) fn lanes_page(a: &Areas, n: usize, focus: Focus) -> usize {
    lanes_fit(a, n, focus).1
}

/// The lane drawn at `at` in the lanes pane, if one is (the same layout
/// [`draw`] uses).
pub(super) fn lane_at(st: &Detail, a: &Areas, at: Position) -> Option<usize> {
    let li = inner(a.lanes);
    if !li.contains(at) {
        return None;
    }
    let n = st.detail.executions_detail.len();
    let (mode, page) = lanes_fit(a, n, st.focus);
    // The axis line comes first.
    let mut y = li.y.saturating_add(1);
    for i in st.lanes.window(page, n) {
        let full = mode == Lanes::AllFull || (mode == Lanes::SelectedFull && i == st.lanes.selected);
        let h = u16::try_from(if full { LANE_HEIGHT } else { COMPACT_LANE }).unwrap_or(u16::MAX);
        if (y..y.saturating_add(h)).contains(&at.y) {
            return Some(i);
        }
        y = y.saturating_add(h);
    }
    None
}

/// The lines of one execution: id, state, outcome and warnings; its bar on
/// the shared axis; the stage chain on two lines.
fn lane_lines(
    st: &Detail,
    x: &ExecutionSummary,
    selected: bool,
    full: bool,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
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
    let mut head = vec![
        Span::styled(if selected { "▶ " } else { "  " }, theme.accent),
        Span::styled(esc(&x.execution_id).into_owned(), theme.accent),
        Span::raw(" "),
        Span::styled(x.state, state_style),
    ];
    // A reviewer's decision, in words: it settles the outcome (no unknown
    // badge, no dotted line) unless it is an escalation.
    if let Some(r) = &x.resolution {
        head.push(Span::raw(" "));
        head.push(Span::styled(
            format!(
                "✎ {} by {} {}",
                r.decision.as_str().replace('_', " "),
                esc(&r.reviewer),
                r.at.format("%Y-%m-%d %H:%MZ")
            ),
            theme.review,
        ));
    }
    if unknown {
        head.push(Span::raw(" "));
        head.push(Span::styled(
            " ? OUTCOME UNKNOWN ",
            theme
                .review
                .add_modifier(ratatui::style::Modifier::REVERSED),
        ));
    }
    let gaps = lanes::gaps(x, st.records.0, st.records.1);
    if !gaps.is_empty() {
        head.push(Span::raw(" "));
        head.push(Span::styled(
            format!(" gap: no {} ", gaps.join(", no ")),
            theme.warn.add_modifier(ratatui::style::Modifier::REVERSED),
        ));
    }
    if let Some(o) = &x.outcome {
        head.push(Span::raw("  "));
        head.push(Span::raw(esc(o).into_owned()));
    }
    let mut lines = vec![Line::from(head)];
    let bar_w = width.saturating_sub(2);
    lines.push(match &st.axis {
        Some(axis) => {
            let mut b = lanes::bar(x, axis, bar_w, theme);
            b.spans.insert(0, Span::raw("  "));
            b
        }
        None => Line::raw(""),
    });
    if !full {
        return lines;
    }
    let mut chain = flow(stage_units(x, st.records, theme), width, "  ");
    chain.truncate(LANE_HEIGHT - 2);
    lines.extend(chain);
    lines.resize(LANE_HEIGHT, Line::raw(""));
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
    let (mode, page) = lanes_fit(a, n, st.focus);
    let window = st.lanes.window(page, n);
    let mut lines = vec![axis_line(st.axis.as_ref(), usize::from(li.width), theme)];
    for i in window.clone() {
        let mut l = lane_lines(
            st,
            &d.executions_detail[i],
            i == st.lanes.selected,
            mode == Lanes::AllFull || (mode == Lanes::SelectedFull && i == st.lanes.selected),
            usize::from(li.width),
            theme,
        );
        if i == st.lanes.selected && st.focus == Focus::Lanes {
            l[0] = selected(l[0].clone(), theme.selection);
        }
        lines.extend(l);
    }
    let mut title = format!(" Timeline: {n} execution{} ", if n == 1 { "" } else { "s" });
    if window.end < n || window.start > 0 {
        title = format!("{title}({}–{}) ", window.start + 1, window.end);
    }
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(title)
                .title_bottom(Span::styled(lanes::LEGEND, theme.muted))
                .border_style(focus_style(theme, st.focus == Focus::Lanes)),
        ),
        a.lanes,
    );
}

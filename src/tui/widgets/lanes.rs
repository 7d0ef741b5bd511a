//! Lifecycle lanes: one execution on a time axis shared by its group, with
//! a mark per stage (accepted, authorized, dispatched, outcome, delivered),
//! the calls that attached to it, and an unknown outcome drawn as a dotted
//! line running to the end of the axis so it cannot be missed. An outcome
//! a reviewer settled (`confirmed_completed`, `confirmed_not_executed`) is
//! drawn as `✎` where the unknown mark was (or at the decision's time),
//! with no dotted line: it is no longer unknown.

use crate::query::{ExecutionSummary, StageStatus};
use crate::tui::theme::Theme;
use chrono::{DateTime, Utc};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The legend for the marks.
pub const LEGEND: &str =
    " A accept U auth D dispatch O outcome R deliver ✗ failed ? unknown + attached ";

/// A time axis: `start..=end` over `width` columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// Left end.
    pub start: DateTime<Utc>,
    /// Right end.
    pub end: DateTime<Utc>,
}

impl Axis {
    /// The axis spanning every stage mark and attached call of `xs`.
    pub fn of<'a>(xs: impl IntoIterator<Item = &'a ExecutionSummary>) -> Option<Axis> {
        let mut lo: Option<DateTime<Utc>> = None;
        let mut hi: Option<DateTime<Utc>> = None;
        for x in xs {
            let times = x
                .stages
                .marks()
                .into_iter()
                .filter_map(|(_, m)| m.map(|m| m.at))
                .chain(x.attached.iter().map(|a| a.at));
            for t in times {
                lo = Some(lo.map_or(t, |l| l.min(t)));
                hi = Some(hi.map_or(t, |h| h.max(t)));
            }
        }
        Some(Axis {
            start: lo?,
            end: hi?,
        })
    }

    /// Column of `t` in a bar `width` wide.
    pub fn col(&self, t: DateTime<Utc>, width: usize) -> usize {
        if width <= 1 {
            return 0;
        }
        let span = (self.end - self.start).num_milliseconds();
        if span <= 0 {
            return 0;
        }
        let f = (t - self.start).num_milliseconds() as f64 / span as f64;
        ((f * (width - 1) as f64).round().max(0.0) as usize).min(width - 1)
    }
}

/// The reviewer decision that settled the execution's outcome, if one did
/// (an escalation settles nothing).
pub fn settled_by(x: &ExecutionSummary) -> Option<&crate::query::Resolution> {
    x.resolution
        .as_ref()
        .filter(|r| r.decision != crate::query::Decision::Escalated)
}

/// Whether the outcome is unknown: dispatched with no outcome, or an
/// outcome the target did not settle, and no reviewer settled it.
pub fn outcome_unknown(x: &ExecutionSummary) -> bool {
    if settled_by(x).is_some() {
        return false;
    }
    match (x.stages.dispatched, x.stages.outcome) {
        (_, Some(o)) => o.status == StageStatus::Unknown,
        (Some(d), None) => d.status == StageStatus::Done,
        (None, None) => false,
    }
}

/// Stages missing from the record while a later stage is present, given
/// what the journals can record (`authorization`, `delivery`).
pub fn gaps(x: &ExecutionSummary, authorization: bool, delivery: bool) -> Vec<&'static str> {
    let marks = x.stages.marks();
    let last = marks.iter().rposition(|(_, m)| m.is_some()).unwrap_or(0);
    let mut out = Vec::new();
    for (i, (name, m)) in marks.iter().enumerate() {
        if m.is_some() || (i == 1 && !authorization) || (i == 4 && !delivery) {
            continue;
        }
        let ended = marks[..i]
            .iter()
            .any(|(_, m)| m.is_some_and(|m| matches!(m.event, "rejected" | "dispatch_failed")));
        if ended {
            break;
        }
        // A missing stage before a present one is a hole in the record; a
        // missing delivery after a settled outcome is one too.
        let outcome_settled = x
            .stages
            .outcome
            .is_some_and(|o| o.status != StageStatus::Unknown);
        if i < last || (i == 4 && outcome_settled) {
            out.push(*name);
        }
    }
    out
}

/// The bar of one execution, `width` columns.
pub fn bar(x: &ExecutionSummary, axis: &Axis, width: usize, theme: &Theme) -> Line<'static> {
    if width == 0 {
        return Line::default();
    }
    let mut cells: Vec<(char, Style)> = vec![(' ', theme.muted); width];
    let settled = settled_by(x);
    let mut marks: Vec<(usize, char, Style)> = x
        .stages
        .marks()
        .into_iter()
        .zip(['A', 'U', 'D', 'O', 'R'])
        .filter_map(|((_, m), letter)| {
            let m = m?;
            let (c, s) = match m.status {
                StageStatus::Unknown if settled.is_some() => ('✎', theme.review),
                StageStatus::Done => (
                    letter,
                    if letter == 'A' {
                        theme.accent
                    } else {
                        theme.ok
                    },
                ),
                StageStatus::Failed => ('✗', theme.critical),
                StageStatus::Unknown => ('?', theme.review),
            };
            Some((axis.col(m.at, width), c, s))
        })
        .collect();
    // Settled with no outcome mark to stand in for: the decision's own
    // mark, at its time (usually past the end of the axis: the last cell).
    if let Some(r) = settled
        && x.stages.outcome.is_none()
        && x.stages.dispatched.is_some()
    {
        let col = if r.at > axis.end {
            width - 1
        } else {
            axis.col(r.at, width)
        };
        marks.push((col, '✎', theme.review));
    }
    let attached: Vec<usize> = x.attached.iter().map(|a| axis.col(a.at, width)).collect();
    let (Some(lo), Some(hi)) = (
        marks
            .iter()
            .map(|m| m.0)
            .chain(attached.iter().copied())
            .min(),
        marks
            .iter()
            .map(|m| m.0)
            .chain(attached.iter().copied())
            .max(),
    ) else {
        return Line::default();
    };
    for c in cells.iter_mut().take(hi + 1).skip(lo) {
        *c = ('─', theme.muted);
    }
    if outcome_unknown(x) {
        let from = x
            .stages
            .outcome
            .or(x.stages.dispatched)
            .map_or(hi, |m| axis.col(m.at, width));
        for c in cells.iter_mut().skip(from + 1) {
            *c = ('┄', theme.review);
        }
        if let Some(last) = cells.last_mut() {
            *last = ('?', theme.review);
        }
    }
    for &a in &attached {
        if matches!(cells[a].0, '─' | ' ' | '┄') {
            cells[a] = ('+', theme.info);
        }
    }
    // Every stage gets its own cell: marks that would share a column are
    // nudged right (or left at the end of the bar), keeping their order.
    // Only when the bar is narrower than the marks do they overlap; then
    // failed and unknown marks win.
    let mut pos: Vec<usize> = marks.iter().map(|m| m.0).collect();
    for i in 1..pos.len() {
        pos[i] = pos[i].max(pos[i - 1] + 1);
    }
    if let Some(last) = pos.last_mut() {
        *last = (*last).min(width - 1);
    }
    for i in (0..pos.len().saturating_sub(1)).rev() {
        pos[i] = pos[i].min(pos[i + 1].saturating_sub(1));
    }
    let placed: Vec<(usize, char, Style)> = marks
        .iter()
        .zip(&pos)
        .map(|(&(_, ch, s), &p)| (p.min(width - 1), ch, s))
        .collect();
    let strong = |ch: char| matches!(ch, '✗' | '?' | '✎');
    for &(c, ch, s) in placed.iter().filter(|m| !strong(m.1)) {
        cells[c] = (ch, s);
    }
    for &(c, ch, s) in placed.iter().filter(|m| strong(m.1)) {
        cells[c] = (ch, s);
    }
    // Merge runs of one style into spans.
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut cur = String::new();
    let mut cur_style = cells[0].1;
    for (ch, s) in cells {
        if s != cur_style && !cur.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut cur), cur_style));
        }
        cur_style = s;
        cur.push(ch);
    }
    spans.push(Span::styled(cur, cur_style));
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{AttachedCall, StageMark, Stages};
    use chrono::TimeZone;

    fn t(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_700_000_000 + s, 0).unwrap()
    }

    fn mark(s: i64, status: StageStatus, event: &'static str) -> Option<StageMark> {
        Some(StageMark {
            at: t(s),
            status,
            event,
        })
    }

    fn exec(stages: Stages) -> ExecutionSummary {
        ExecutionSummary {
            index: crate::query::ExecIdx::new(0),
            execution_id: "x".into(),
            state: "s",
            stages,
            outcome: None,
            idempotency_key: None,
            session_id: None,
            attached: Vec::new(),
            events: 0,
            first_event: None,
            resolution: None,
            before_window: false,
        }
    }

    fn text(l: &Line) -> String {
        l.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn marks_sit_on_the_shared_axis() {
        let x = exec(Stages {
            accepted: mark(0, StageStatus::Done, "accepted"),
            authorized: mark(2, StageStatus::Done, "authorized"),
            dispatched: mark(4, StageStatus::Done, "dispatched"),
            outcome: mark(8, StageStatus::Done, "outcome"),
            delivered: mark(10, StageStatus::Failed, "delivery_failed"),
        });
        let axis = Axis {
            start: t(0),
            end: t(20),
        };
        let s = text(&bar(&x, &axis, 21, &Theme::dark()));
        assert_eq!(s, "A─U─D───O─✗          ");
        // Marks closer than a column apart each keep a cell, in order.
        let narrow = text(&bar(&x, &axis, 6, &Theme::dark()));
        assert_eq!(narrow, "AUDO✗ ");
        let tiny = text(&bar(&x, &axis, 3, &Theme::dark()));
        assert_eq!(tiny.chars().count(), 3);
        assert!(tiny.contains('✗'), "{tiny}");
    }

    #[test]
    fn unknown_outcome_runs_to_the_end() {
        let mut x = exec(Stages {
            accepted: mark(0, StageStatus::Done, "accepted"),
            authorized: mark(1, StageStatus::Done, "authorized"),
            dispatched: mark(2, StageStatus::Done, "dispatched"),
            outcome: None,
            delivered: None,
        });
        x.attached.push(AttachedCall {
            at: t(6),
            recovery: "awaiting_review",
            call_id: None,
            session_id: None,
        });
        let axis = Axis {
            start: t(0),
            end: t(10),
        };
        assert!(outcome_unknown(&x));
        let s = text(&bar(&x, &axis, 11, &Theme::dark()));
        assert_eq!(s, "AUD┄┄┄+┄┄┄?");
        assert!(gaps(&x, true, true).is_empty());
    }

    #[test]
    fn a_settled_outcome_is_no_longer_unknown() {
        let mut x = exec(Stages {
            accepted: mark(0, StageStatus::Done, "accepted"),
            authorized: mark(1, StageStatus::Done, "authorized"),
            dispatched: mark(2, StageStatus::Done, "dispatched"),
            outcome: mark(4, StageStatus::Unknown, "outcome"),
            delivered: None,
        });
        let axis = Axis {
            start: t(0),
            end: t(10),
        };
        let theme = Theme::dark();
        assert_eq!(text(&bar(&x, &axis, 11, &theme)), "AUD─?┄┄┄┄┄?");
        let resolution = |d| crate::query::Resolution {
            execution_id: "x".into(),
            decision: d,
            reviewer: "alice".into(),
            at: t(100),
            note: "seen".into(),
            source: "case file c entry 1".into(),
        };
        // Escalated: still unknown.
        x.resolution = Some(resolution(crate::query::Decision::Escalated));
        assert!(outcome_unknown(&x));
        assert_eq!(text(&bar(&x, &axis, 11, &theme)), "AUD─?┄┄┄┄┄?");
        // Confirmed: settled where the unknown mark was, no dotted line.
        x.resolution = Some(resolution(crate::query::Decision::ConfirmedCompleted));
        assert!(!outcome_unknown(&x));
        assert_eq!(text(&bar(&x, &axis, 11, &theme)), "AUD─✎      ");
        // No outcome event: the decision's mark at the end of the axis.
        x.stages.outcome = None;
        assert_eq!(text(&bar(&x, &axis, 11, &theme)), "AUD───────✎");
    }

    #[test]
    fn gaps_are_holes_before_later_stages() {
        let x = exec(Stages {
            accepted: mark(0, StageStatus::Done, "accepted"),
            authorized: None,
            dispatched: mark(2, StageStatus::Done, "dispatched"),
            outcome: mark(3, StageStatus::Done, "outcome"),
            delivered: None,
        });
        assert_eq!(gaps(&x, true, true), vec!["authorized", "delivered"]);
        assert!(gaps(&x, false, false).is_empty());
        let rejected = exec(Stages {
            accepted: mark(0, StageStatus::Done, "accepted"),
            authorized: mark(1, StageStatus::Failed, "rejected"),
            ..Stages::default()
        });
        assert!(gaps(&rejected, true, true).is_empty());
    }

    #[test]
    fn tiny_widths_do_not_panic() {
        let x = exec(Stages {
            accepted: mark(0, StageStatus::Done, "accepted"),
            ..Stages::default()
        });
        let axis = Axis {
            start: t(0),
            end: t(0),
        };
        for w in 0..4 {
            let _ = bar(&x, &axis, w, &Theme::dark());
        }
    }
}

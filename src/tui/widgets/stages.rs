//! An execution's lifecycle stages as text: the chain `accepted
//! 14:03:18.000 → authorized +0.210s → …`, with failed and unknown stages
//! in their colors and missing ones named, shared by the group detail's
//! lanes and the execution screen's header.

use crate::query::{Capabilities, ExecutionSummary, StageStatus};
use crate::tui::data::Data;
use crate::tui::theme::Theme;
use crate::tui::widgets::text::{delta, time};
use ratatui::style::Style;
use ratatui::text::Span;

/// Whether any loaded journal can record authorization and delivery; a
/// missing stage is only a gap where it could have been recorded.
pub fn records(data: &Data) -> (bool, bool) {
    let any = |f: fn(&Capabilities) -> bool| data.inv.journals().iter().any(|j| f(&j.capabilities));
    (any(|c| c.authorization), any(|c| c.delivery))
}

fn status_style(theme: &Theme, s: StageStatus) -> Style {
    match s {
        StageStatus::Done => theme.ok,
        StageStatus::Failed => theme.critical,
        StageStatus::Unknown => theme.review,
    }
}

/// The stage chain of one execution as units for [`flow`](crate::tui::widgets::text::flow): `accepted
/// 14:03:18.000`, `→ authorized +0.210s`, …; failed and unknown stages in
/// their colors, missing ones named.
pub fn stage_units(
    x: &ExecutionSummary,
    records: (bool, bool),
    theme: &Theme,
) -> Vec<Vec<Span<'static>>> {
    let mut units = Vec::new();
    let start = x.stages.accepted.map(|m| m.at);
    let mut ended = false;
    for (i, (name, mark)) in x.stages.marks().into_iter().enumerate() {
        let mut u = Vec::new();
        if i > 0 {
            u.push(Span::styled("→ ", theme.muted));
        }
        match mark {
            Some(m) => {
                let t = match (i, start) {
                    (0, _) | (_, None) => time(m.at),
                    (_, Some(s)) => delta(m.at - s),
                };
                let label = match m.status {
                    StageStatus::Done => m.event.to_string(),
                    StageStatus::Failed => format!("✗ {}", m.event),
                    StageStatus::Unknown => format!("? {}", m.event),
                };
                u.push(Span::styled(label, status_style(theme, m.status)));
                u.push(Span::styled(format!(" {t} "), theme.muted));
                if matches!(m.event, "rejected" | "dispatch_failed") {
                    ended = true;
                }
            }
            None if ended => break,
            None if (i == 1 && !records.0) || (i == 4 && !records.1) => u.push(Span::styled(
                format!("{name}: not in this journal format "),
                theme.muted,
            )),
            None => u.push(Span::styled(format!("{name} not recorded "), theme.warn)),
        }
        units.push(u);
    }
    for a in &x.attached {
        let t = start.map_or_else(|| time(a.at), |s| delta(a.at - s));
        units.push(vec![
            Span::styled("+ attached ", theme.info),
            Span::styled(a.recovery, theme.info),
            Span::styled(format!(" {t} "), theme.muted),
        ]);
    }
    units
}

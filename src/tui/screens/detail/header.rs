//! The group detail's header: the verdict, its reason (whole up to a few
//! lines), the reviewer decisions it rests on, and what the group is.

use crate::query::GroupDetail;
use crate::tui::theme::Theme;
use crate::tui::widgets::text::{clip, esc, provenance, wrap};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

/// Most lines the verdict's reason takes in the header; it is cut (with
/// `…`) only beyond this, and the questions pane's Group section holds it
/// whole.
const REASON_LINES: usize = 5;

fn reason_lines(d: &GroupDetail, width: u16) -> Vec<String> {
    wrap(&esc(&d.reason), usize::from(width.saturating_sub(2)).max(1))
}

/// Header lines saying which executions a reviewer decided, who, when and
/// why, wrapped to the header's width (at most three lines).
fn reviewed_lines(d: &GroupDetail, width: u16) -> Vec<String> {
    let w = usize::from(width.saturating_sub(2)).max(1);
    let mut out: Vec<String> = d
        .executions_detail
        .iter()
        .filter_map(|x| {
            x.resolution.as_ref().map(|r| {
                format!(
                    "✎ {}: {}: {}",
                    esc(&x.execution_id),
                    provenance(r),
                    esc(&r.note)
                )
            })
        })
        .flat_map(|l| wrap(&l, w))
        .collect();
    if out.len() > 3 {
        out.truncate(3);
        if let Some(l) = out.last_mut() {
            l.push('…');
        }
    }
    out
}

/// What the group is, under the reason (as `retrace investigate` heads it):
/// from 120 columns two lines, actor, intent scope and target, then the
/// intent fingerprint and the contract applied; narrower one line, actor
/// and intent scope. Each line is cut to `width`, its last value with `…`.
fn identity_lines(d: &GroupDetail, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let s = &d.summary;
    let w = usize::from(width.saturating_sub(2));
    let contract = format!(
        "{} · attach window {}{}",
        d.contract.class.as_str(),
        humantime::format_duration(d.contract.attach_window),
        if d.contract.configured {
            String::new()
        } else {
            format!(" ({})", d.contract.basis_words())
        }
    );
    let rows: Vec<Vec<(&str, String)>> = if width >= 120 {
        let mut first = vec![
            ("actor", esc(&s.actor).into_owned()),
            ("intent scope", esc(&s.intent_scope).into_owned()),
        ];
        if let Some(t) = &d.target {
            first.push(("target", esc(t).into_owned()));
        }
        vec![
            first,
            vec![
                ("fingerprint", esc(&s.fingerprint).into_owned()),
                ("contract", contract),
            ],
        ]
    } else {
        vec![vec![
            ("actor", esc(&s.actor).into_owned()),
            ("scope", esc(&s.intent_scope).into_owned()),
        ]]
    };
    rows.into_iter()
        .map(|pairs| {
            let mut spans = Vec::new();
            let mut used = 0usize;
            for (i, (label, value)) in pairs.into_iter().enumerate() {
                let label = if i == 0 {
                    format!("{label} ")
                } else {
                    format!(" · {label} ")
                };
                let lw = label.chars().count();
                if used + lw >= w {
                    break;
                }
                used += lw;
                let v = clip(&value, w - used).into_owned();
                used += v.chars().count();
                spans.push(Span::styled(label, theme.muted));
                spans.push(Span::raw(v));
            }
            Line::from(spans)
        })
        .collect()
}

/// Number of [`identity_lines`] at a width.
fn identity_height(width: u16) -> u16 {
    if width >= 120 { 2 } else { 1 }
}

/// Rows the header takes in a body of `width` × `rows`: borders and the
/// verdict line, the reason (up to [`REASON_LINES`], fewer on a short
/// terminal: it is whole in the questions pane's Group section), the
/// reviewer lines and the identity.
pub(super) fn height(d: &GroupDetail, width: u16, rows: u16) -> u16 {
    let most = usize::from(rows / 6).clamp(2, REASON_LINES);
    let reason = reason_lines(d, width).len().min(most) as u16;
    let reviewed = reviewed_lines(d, width).len() as u16;
    3 + reason + reviewed + identity_height(width)
}

/// Draws the header into `area`, laid out for a body `width` wide.
pub(super) fn draw(d: &GroupDetail, theme: &Theme, frame: &mut Frame, area: Rect, width: u16) {
    let sev = theme.severity(d.summary.severity);
    // Header: verdict and reason.
    let mut head = vec![Line::from(vec![
        Span::styled(d.summary.verdict.as_str().to_uppercase(), sev),
        Span::styled(format!("  [{}]", d.summary.severity), sev),
        Span::styled(
            format!(
                "   calls {} · executions {} · dispatches {}",
                d.summary.calls, d.summary.executions, d.summary.dispatches
            ),
            theme.muted,
        ),
    ])];
    let reason = reason_lines(d, width);
    let reviewed = reviewed_lines(d, width);
    let identity = identity_lines(d, width, theme);
    let total = reason.len();
    let shown = usize::from(area.height.saturating_sub(3))
        .saturating_sub(reviewed.len() + identity.len())
        .min(REASON_LINES);
    for (i, l) in reason.into_iter().take(shown).enumerate() {
        let l = if i + 1 == shown && shown < total {
            format!("{l}…")
        } else {
            l
        };
        head.push(Line::raw(l));
    }
    for l in reviewed {
        head.push(Line::styled(l, theme.review));
    }
    head.extend(identity);
    frame.render_widget(
        Paragraph::new(head).block(
            Block::bordered()
                .title(format!(
                    " Group {} · {} ",
                    d.summary.group_id,
                    esc(&d.summary.tool)
                ))
                .border_style(sev),
        ),
        area,
    );
}

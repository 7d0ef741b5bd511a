//! The group detail's questions pane: the five questions with their
//! answers and evidence, the findings, and the group's fields.

use super::state::{Detail, Focus, focus_style, inner};
use crate::query::ChainMark;
use crate::tui::theme::Theme;
use crate::tui::widgets::text::{esc, select_if, short_cite, wrap};
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

/// One line of the questions pane.
#[derive(Debug, Clone, PartialEq)]
pub enum QLine {
    /// A section title.
    Section(String),
    /// (A wrapped part of) a question.
    Ask(String),
    /// (A wrapped part of) an answer; unknown answers stand out.
    Answer(String, bool),
    /// A piece of evidence: index into [`Detail::evidence`].
    Evidence(usize),
    /// Other text.
    Text(String),
    /// Nothing.
    Blank,
}

/// The questions pane as lines for a width; pure, shared by draw and update.
pub fn qlines(st: &Detail, width: u16) -> Vec<QLine> {
    let w = usize::from(width).max(8);
    let d = &st.detail;
    let mut out = Vec::new();
    let mut ev = 0usize;
    for a in &d.questions {
        for (i, l) in wrap(&format!("{}. {}", a.question, a.asks), w)
            .into_iter()
            .enumerate()
        {
            out.push(QLine::Ask(if i == 0 { l } else { format!("   {l}") }));
        }
        for l in wrap(&esc(&a.answer), w.saturating_sub(3)) {
            out.push(QLine::Answer(format!("   {l}"), a.unknown));
        }
        for _ in &a.evidence {
            out.push(QLine::Evidence(ev));
            ev += 1;
        }
        out.push(QLine::Blank);
    }
    if !d.findings.is_empty() {
        out.push(QLine::Section("Findings".into()));
        for f in &d.findings {
            for (i, l) in wrap(
                &format!("{}: {}", f.kind, esc(&f.detail)),
                w.saturating_sub(2),
            )
            .into_iter()
            .enumerate()
            {
                out.push(QLine::Text(format!(
                    "{} {l}",
                    if i == 0 { "•" } else { " " }
                )));
            }
            for _ in &f.evidence {
                out.push(QLine::Evidence(ev));
                ev += 1;
            }
        }
        out.push(QLine::Blank);
    }
    out.push(QLine::Section("Group".into()));
    let s = &d.summary;
    let mut fields = vec![
        ("verdict", format!("{} [{}]", s.verdict, s.severity)),
        ("why", esc(&d.reason).into_owned()),
        ("tool", esc(&s.tool).into_owned()),
        ("actor", esc(&s.actor).into_owned()),
        ("intent scope", esc(&s.intent_scope).into_owned()),
        ("fingerprint", esc(&s.fingerprint).into_owned()),
        (
            "contract",
            format!(
                "{}{} · attach window {}",
                d.contract.class.as_str(),
                if d.contract.configured {
                    ""
                } else {
                    " (default: no contract)"
                },
                humantime::format_duration(d.contract.attach_window)
            ),
        ),
    ];
    if let Some(t) = &d.target {
        fields.insert(3, ("target", esc(t).into_owned()));
    }
    for (k, v) in fields {
        for (i, l) in wrap(&v, w.saturating_sub(14)).into_iter().enumerate() {
            out.push(QLine::Text(format!(
                "{:<13} {l}",
                if i == 0 { k } else { "" }
            )));
        }
    }
    out
}

/// The line of the questions pane that shows evidence `ev`.
pub(super) fn evidence_line_of(lines: &[QLine], ev: usize) -> Option<usize> {
    lines.iter().position(|l| *l == QLine::Evidence(ev))
}

/// The line of the questions pane drawn at `at`, if any (the same window
/// [`draw`] shows).
pub(super) fn line_at(st: &Detail, area: Rect, at: Position) -> Option<QLine> {
    let qi = inner(area);
    if !qi.contains(at) {
        return None;
    }
    let ql = qlines(st, qi.width);
    let start = st.qscroll.min(ql.len().saturating_sub(usize::from(qi.height)));
    ql.into_iter().nth(start + usize::from(at.y - qi.y))
}

/// Draws the questions pane into `area`.
pub(super) fn draw(st: &Detail, area: Rect, theme: &Theme, frame: &mut Frame) {
    // Questions.
    let qi = inner(area);
    let ql = qlines(st, qi.width);
    let h = usize::from(qi.height);
    let start = st.qscroll.min(ql.len().saturating_sub(h));
    let mut out = Vec::new();
    for l in ql.iter().skip(start).take(h) {
        out.push(match l {
            QLine::Section(s) => Line::styled(s.clone(), theme.accent),
            QLine::Ask(s) => Line::styled(s.clone(), theme.accent),
            QLine::Answer(s, unknown) => {
                Line::styled(s.clone(), if *unknown { theme.review } else { theme.base })
            }
            QLine::Text(s) => Line::raw(s.clone()),
            QLine::Blank => Line::raw(""),
            QLine::Evidence(i) => {
                let e = &st.evidence[*i];
                let sel = *i == st.ev.selected && st.focus == Focus::Evidence;
                let mut spans = vec![Span::styled(if sel { " ▶ " } else { "   " }, theme.accent)];
                // docs/design.md §6: evidence at or after a chain break is marked,
                // first on the line so that a narrow pane cannot cut it off.
                if e.chain == ChainMark::Unverified {
                    spans.push(Span::styled("unverified ", theme.critical));
                }
                spans.extend([
                    Span::styled(esc(&short_cite(e)).into_owned(), theme.info),
                    Span::styled(
                        format!(
                            " {}{}",
                            e.record,
                            e.execution_id
                                .as_deref()
                                .map(|x| format!(" {}", esc(x)))
                                .unwrap_or_default()
                        ),
                        theme.muted,
                    ),
                ]);
                let line = Line::from(spans);
                select_if(line, sel, theme.selection)
            }
        });
    }
    frame.render_widget(
        Paragraph::new(out).block(
            Block::bordered()
                .title(" The five questions ")
                .border_style(focus_style(theme, st.focus == Focus::Evidence)),
        ),
        area,
    );
}

//! The group detail's questions pane: the five questions with their
//! answers and evidence, the findings, and the group's fields.

use super::state::{Detail, Focus, focus_style, inner};
use crate::query::{ChainMark, EvidenceView};
use crate::tui::theme::Theme;
use crate::tui::widgets::text::{esc, flow, select_if, short_cite, wrap};
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
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
    /// A piece of evidence: index into [`Detail::evidence`] (its first
    /// line).
    Evidence(usize),
    /// A near duplicate: index into the detail's `near_duplicates`
    /// (selectable after the evidence; Enter opens that group).
    Near(usize),
    /// The `k`th line (from 1) of a piece of evidence that did not fit on
    /// one: ids and citations are never cut, the line wraps between them.
    EvidenceMore(usize, usize),
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
        for e in &a.evidence {
            push_evidence(&mut out, ev, e, w);
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
            for e in &f.evidence {
                push_evidence(&mut out, ev, e, w);
                ev += 1;
            }
        }
        out.push(QLine::Blank);
    }
    // docs/design.md §5.13: the groups one argument field away, to open.
    if !d.near_duplicates.is_empty() {
        out.push(QLine::Section("Near duplicates (one argument field away)".into()));
        out.extend((0..d.near_duplicates.len()).map(QLine::Near));
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
                    String::new()
                } else {
                    format!(" ({})", d.contract.basis_words())
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

/// The lines of evidence `i` ([`evidence_lines`]) as [`QLine`]s.
fn push_evidence(out: &mut Vec<QLine>, i: usize, e: &EvidenceView, width: usize) {
    let plain = Style::default();
    let n = evidence_lines(e, (plain, plain, plain), width).len();
    out.push(QLine::Evidence(i));
    out.extend((1..n).map(|k| QLine::EvidenceMore(i, k)));
}

/// A piece of evidence as lines of `width`: the mark of a chain break
/// first (docs/design.md §6: at or after a break it is unverified, and a
/// narrow pane must not cut the mark off), the citation, what the record
/// is and the execution it belongs to, each word kept whole: a line breaks
/// between words, never inside an id. Every line starts with three
/// columns for the selection mark. `styles` are (unverified, citation,
/// the rest).
fn evidence_lines(
    e: &EvidenceView,
    (unverified, cite, rest): (Style, Style, Style),
    width: usize,
) -> Vec<Line<'static>> {
    let mut units: Vec<Vec<Span<'static>>> = Vec::new();
    if e.chain == ChainMark::Unverified {
        units.push(vec![Span::styled("unverified ", unverified)]);
    }
    let word = |w: &str, style| vec![Span::styled(format!("{w} "), style)];
    for w in esc(&short_cite(e)).split(' ') {
        units.push(word(w, cite));
    }
    units.push(word(e.record, rest));
    if let Some(x) = &e.execution_id {
        units.push(word(&esc(x), rest));
    }
    flow(units, width, "   ")
}

/// The line of the questions pane that shows selectable item `ev`: a piece
/// of evidence, or past the last one (`evidence` of them) a near duplicate.
pub(super) fn evidence_line_of(lines: &[QLine], ev: usize, evidence: usize) -> Option<usize> {
    let want = match ev.checked_sub(evidence) {
        Some(n) => QLine::Near(n),
        None => QLine::Evidence(ev),
    };
    lines.iter().position(|l| *l == want)
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
            QLine::Near(i) => {
                let n = &st.detail.near_duplicates[*i];
                let sel = st.ev.selected == st.evidence.len() + *i && st.focus == Focus::Evidence;
                let line = Line::from(vec![
                    Span::styled(if sel { " ▶ " } else { "   " }, theme.accent),
                    Span::styled(n.group_id.clone(), theme.info),
                    Span::raw(" "),
                    Span::styled(n.verdict.as_str(), theme.severity(n.severity)),
                    Span::styled(
                        format!(
                            " · {} call{} · differs in {}",
                            n.calls,
                            if n.calls == 1 { "" } else { "s" },
                            esc(&n.field)
                        ),
                        theme.muted,
                    ),
                ]);
                select_if(line, sel, theme.selection)
            }
            QLine::Evidence(i) | QLine::EvidenceMore(i, _) => {
                let k = match l {
                    QLine::EvidenceMore(_, k) => *k,
                    _ => 0,
                };
                let e = &st.evidence[*i];
                let sel = *i == st.ev.selected && st.focus == Focus::Evidence;
                let styles = (theme.critical, theme.info, theme.muted);
                let mut line = evidence_lines(e, styles, usize::from(qi.width))
                    .into_iter()
                    .nth(k)
                    .unwrap_or_default();
                if k == 0
                    && sel
                    && let Some(first) = line.spans.first_mut()
                {
                    *first = Span::styled(" ▶ ", theme.accent);
                }
                select_if(line, sel, theme.selection)
            }
        });
    }
    let mut block = Block::bordered()
        .title(title(&ql, start, h))
        .border_style(focus_style(theme, st.focus == Focus::Evidence));
    if ql.len() > h {
        block = block.title_bottom(
            Line::styled(
                scroll_note(start, h, ql.len(), st.focus == Focus::Evidence),
                theme.accent,
            )
            .right_aligned(),
        );
    }
    frame.render_widget(Paragraph::new(out).block(block), area);
}

/// The pane's title: when not every line fits, which of the questions
/// are in view (`The five questions: 1–2 of 5`), so that the user sees
/// there are more.
fn title(lines: &[QLine], start: usize, height: usize) -> String {
    if lines.len() <= height {
        return " The five questions ".into();
    }
    let mut n = 0;
    let mut shown: Vec<usize> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let QLine::Ask(s) = l
            && !s.starts_with(' ')
        {
            n += 1;
        }
        if (start..start + height).contains(&i) && n > 0 && shown.last() != Some(&n) {
            shown.push(n);
        }
    }
    match (shown.first(), shown.last()) {
        (Some(a), Some(b)) if a == b => format!(" The five questions: {a} of {n} "),
        (Some(a), Some(b)) => format!(" The five questions: {a}–{b} of {n} "),
        _ => format!(" The five questions ({n}) "),
    }
}

/// The bottom border's note when the pane scrolls: the lines in view and
/// which way there is more and how to get there (`lines 1–6 of 42 ↓ PgDn`;
/// with the lanes focused, `Tab` first).
fn scroll_note(start: usize, height: usize, total: usize, focused: bool) -> String {
    let end = (start + height).min(total);
    let tab = if focused { "" } else { " Tab," };
    let up = if start > 0 { format!(" ↑{tab} PgUp") } else { String::new() };
    let down = if end < total { format!(" ↓{tab} PgDn") } else { String::new() };
    format!(" lines {}–{end} of {total}{up}{down} ", start + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines() -> Vec<QLine> {
        let mut out = Vec::new();
        for q in 1..=5 {
            out.push(QLine::Ask(format!("{q}. Did it?")));
            out.push(QLine::Ask("   more of the question".into()));
            out.push(QLine::Answer("   yes".into(), false));
            out.push(QLine::Blank);
        }
        out
    }

    #[test]
    fn a_pane_too_short_for_every_question_says_which_show_and_that_more_follow() {
        let l = lines();
        assert_eq!(title(&l, 0, 40), " The five questions ");
        assert_eq!(title(&l, 0, 6), " The five questions: 1–2 of 5 ");
        assert_eq!(title(&l, 4, 3), " The five questions: 2 of 5 ");
        assert_eq!(scroll_note(0, 6, 20, true), " lines 1–6 of 20 ↓ PgDn ");
        assert_eq!(scroll_note(6, 6, 20, false), " lines 7–12 of 20 ↑ Tab, PgUp ↓ Tab, PgDn ");
        assert_eq!(scroll_note(14, 6, 20, true), " lines 15–20 of 20 ↑ PgUp ");
    }
}

//! Text helpers: sanitizing journal strings, times, durations, wrapping.

use crate::sanitize;
use chrono::{DateTime, TimeDelta, Utc};
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use std::borrow::Cow;
use unicode_width::UnicodeWidthStr;

/// A journal string made safe for the terminal ([`sanitize::escape`]).
/// Every string that comes from a journal goes through here before drawing.
pub fn esc(s: &str) -> Cow<'_, str> {
    sanitize::escape(s)
}

/// Where a verdict's resolution came from, in one escaped line: `alice
/// decided confirmed_completed at 2026-08-03 09:40:12Z (case file … entry
/// 1)`. Reviewer names and case file names are not journal text, but they
/// are typed by people and pass through [`esc`] too.
pub fn provenance(r: &crate::query::Resolution) -> String {
    format!(
        "{} decided {} at {} ({})",
        esc(&r.reviewer),
        r.decision,
        r.at.format("%Y-%m-%d %H:%M:%SZ"),
        esc(&r.source)
    )
}

/// `n` and the noun in the right number: `1 call`, `2 calls`, `0 calls`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `HH:MM:SS.mmm` (UTC).
pub fn time(t: DateTime<Utc>) -> String {
    t.format("%H:%M:%S%.3f").to_string()
}

/// `YYYY-MM-DD HH:MM:SS` (UTC), or `-`.
pub fn datetime(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(|| "-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

/// A short duration: `+0.210s`, `+6s`, `+1m02s`, `+2h05m`.
pub fn delta(d: TimeDelta) -> String {
    let ms = d.num_milliseconds();
    let sign = if ms < 0 { "-" } else { "+" };
    let ms = ms.unsigned_abs();
    if ms < 10_000 && !ms.is_multiple_of(1000) {
        format!("{sign}{}.{:03}s", ms / 1000, ms % 1000)
    } else if ms < 60_000 {
        format!("{sign}{}s", ms / 1000)
    } else if ms < 3_600_000 {
        format!("{sign}{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    } else {
        format!("{sign}{}h{:02}m", ms / 3_600_000, (ms / 60_000) % 60)
    }
}

/// Cuts `s` to at most `width` columns, ending with `…` when cut.
pub fn clip(s: &str, width: usize) -> Cow<'_, str> {
    if s.width() <= width {
        return Cow::Borrowed(s);
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    if width > 0 {
        out.push('…');
    }
    Cow::Owned(out)
}

/// `line` cut to at most `width` columns: when it is wider, it ends with
/// `…` (its styles kept), so that a cut never passes for the whole text.
pub fn fit(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut out: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    let mut last_style = line.style;
    'spans: for span in line.spans {
        let mut text = String::new();
        for c in span.content.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if used + cw + 1 > width {
                if !text.is_empty() {
                    out.push(Span::styled(text, span.style));
                }
                last_style = span.style;
                break 'spans;
            }
            text.push(c);
            used += cw;
        }
        last_style = span.style;
        out.push(Span::styled(text, span.style));
    }
    if width > 0 {
        out.push(Span::styled("…", last_style));
    }
    Line::from(out)
        .style(line.style)
        .alignment(line.alignment.unwrap_or_default())
}

/// The widths ratatui's `Table` gives columns of `constraints` in a table
/// `width` columns wide with `spacing` between them (its layout: flex
/// start, no selection column), so that cells can be cut to their column
/// with [`fit`] before the table cuts them silently.
pub fn column_widths(width: u16, constraints: &[Constraint], spacing: u16) -> Vec<usize> {
    Layout::horizontal(constraints.iter().copied())
        .flex(Flex::Start)
        .spacing(spacing)
        .split(Rect::new(0, 0, width, 1))
        .iter()
        .map(|r| usize::from(r.width))
        .collect()
}

/// Each of `cells` [`fit`] to its column of `widths` (a cell without a
/// width stays as it is).
pub fn fit_all(
    cells: impl IntoIterator<Item = Line<'static>>,
    widths: &[usize],
) -> Vec<Line<'static>> {
    cells
        .into_iter()
        .enumerate()
        .map(|(i, l)| match widths.get(i) {
            Some(&w) => fit(l, w),
            None => l,
        })
        .collect()
}

/// The widest of `texts` in columns, at least `min` (a column as wide as
/// its widest id, so that no id is cut).
pub fn widest<'a>(texts: impl IntoIterator<Item = &'a str>, min: usize) -> u16 {
    let w = texts
        .into_iter()
        .map(UnicodeWidthStr::width)
        .max()
        .unwrap_or(0);
    u16::try_from(w.max(min)).unwrap_or(u16::MAX)
}

/// Cuts `s` to at most `width` columns from the left, starting with `…`
/// when cut, so that its end stays: `…tivity.jsonl:10`.
pub fn clip_left(s: &str, width: usize) -> Cow<'_, str> {
    if s.width() <= width {
        return Cow::Borrowed(s);
    }
    if width == 0 {
        return Cow::Owned(String::new());
    }
    let mut tail: Vec<char> = Vec::new();
    let mut w = 0;
    for c in s.chars().rev() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw + 1 > width {
            break;
        }
        tail.push(c);
        w += cw;
    }
    let mut out = String::from("…");
    out.extend(tail.into_iter().rev());
    Cow::Owned(out)
}

/// Greedy word wrap of already-safe text to `width` columns; words longer
/// than a line are broken. Always returns at least one line.
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut cur = String::new();
    let mut cur_w = 0;
    for word in s.split(' ') {
        let mut word = word.to_string();
        loop {
            let ww = word.width();
            let need = if cur.is_empty() { ww } else { cur_w + 1 + ww };
            if need <= width {
                if !cur.is_empty() {
                    cur.push(' ');
                    cur_w += 1;
                }
                cur.push_str(&word);
                cur_w += ww;
                break;
            }
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
                cur_w = 0;
                continue;
            }
            // A word longer than the line: break it.
            let mut head = String::new();
            let mut hw = 0;
            let mut rest = String::new();
            for c in word.chars() {
                let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if rest.is_empty() && hw + cw <= width {
                    head.push(c);
                    hw += cw;
                } else {
                    rest.push(c);
                }
            }
            if head.is_empty() {
                // A character wider than the line: give it a line anyway.
                let mut it = rest.chars();
                head.extend(it.next());
                rest = it.collect();
            }
            lines.push(head);
            if rest.is_empty() {
                word.clear();
                break;
            }
            word = rest;
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A line of `label: value` with the label muted.
pub fn field<'a>(
    label: &'a str,
    value: impl Into<Cow<'a, str>>,
    muted: ratatui::style::Style,
) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!("{label:<13}"), muted),
        Span::raw(value.into()),
    ])
}

/// Lays out units of spans (each kept whole when it fits) into lines of at
/// most `width` columns, each line starting with `indent`.
pub fn flow(units: Vec<Vec<Span<'static>>>, width: usize, indent: &str) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut cur: Vec<Span<'static>> = vec![Span::raw(indent.to_string())];
    let mut w = indent.width();
    for u in units {
        let uw: usize = u.iter().map(|s| s.content.width()).sum();
        if w + uw > width && cur.len() > 1 {
            lines.push(Line::from(std::mem::take(&mut cur)));
            cur.push(Span::raw(indent.to_string()));
            w = indent.width();
        }
        w += uw;
        cur.extend(u);
    }
    if cur.len() > 1 || lines.is_empty() {
        lines.push(Line::from(cur));
    }
    lines
}

/// `text` (already safe) with the characters whose haystack index (counted
/// from `offset`) is in `matched` drawn in `hl`, the rest in `base`.
pub fn highlighted(
    text: &str,
    offset: usize,
    matched: &[usize],
    base: ratatui::style::Style,
    hl: ratatui::style::Style,
) -> Line<'static> {
    if matched.is_empty() {
        return Line::from(Span::styled(text.to_string(), base));
    }
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut cur = String::new();
    let mut cur_hl = false;
    for (i, c) in text.chars().enumerate() {
        let h = matched.binary_search(&(offset + i)).is_ok();
        if h != cur_hl && !cur.is_empty() {
            let style = if cur_hl { base.patch(hl) } else { base };
            spans.push(Span::styled(std::mem::take(&mut cur), style));
        }
        cur_hl = h;
        cur.push(c);
    }
    if !cur.is_empty() {
        spans.push(Span::styled(
            cur,
            if cur_hl { base.patch(hl) } else { base },
        ));
    }
    Line::from(spans)
}

/// `line` drawn as the selected row: the selection's colors over every
/// span (a span's own color would otherwise show on the selection's
/// background).
pub fn selected(mut line: Line<'static>, sel: ratatui::style::Style) -> Line<'static> {
    for s in &mut line.spans {
        s.style = s.style.patch(sel);
    }
    line.style = line.style.patch(sel);
    line
}

/// `line`, as the selected row when `on`.
pub fn select_if(line: Line<'static>, on: bool, sel: ratatui::style::Style) -> Line<'static> {
    if on { selected(line, sel) } else { line }
}

/// The file name of a journal name (a path as given).
pub fn file_name(journal: &str) -> &str {
    std::path::Path::new(journal)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(journal)
}

/// `file:line seq N` with the journal's file name only (the full path is
/// on the overview and the execution screen).
pub fn short_cite(e: &crate::query::EvidenceView) -> String {
    let name = file_name(&e.journal);
    match e.seq {
        Some(s) => format!("{name}:{} seq {s}", e.line),
        None => format!("{name}:{}", e.line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas() {
        assert_eq!(delta(TimeDelta::milliseconds(210)), "+0.210s");
        assert_eq!(delta(TimeDelta::milliseconds(6000)), "+6s");
        assert_eq!(delta(TimeDelta::milliseconds(62_000)), "+1m02s");
        assert_eq!(delta(TimeDelta::milliseconds(7_500_000)), "+2h05m");
        assert_eq!(delta(TimeDelta::milliseconds(-4)), "-0.004s");
    }

    #[test]
    fn clip_and_wrap() {
        assert_eq!(clip("deploy_release", 20), "deploy_release");
        assert_eq!(clip("deploy_release", 7), "deploy…");
        assert_eq!(clip_left("activity.jsonl:10", 20), "activity.jsonl:10");
        assert_eq!(clip_left("activity.jsonl:10", 16), "…tivity.jsonl:10");
        assert_eq!(clip_left("activity.jsonl:10", 1), "…");
        assert_eq!(clip_left("activity.jsonl:10", 0), "");
        for w in 0..20 {
            assert!(clip_left("activity.jsonl:10", w).width() <= w);
        }
        assert_eq!(wrap("one two three", 7), vec!["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), vec![""]);
        for w in 1..12 {
            for l in wrap("the quick brown fox jumps over", w) {
                assert!(l.width() <= w, "{l:?} wider than {w}");
            }
        }
    }

    #[test]
    fn a_cut_line_ends_with_an_ellipsis_and_keeps_its_styles() {
        let bold = ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let l = Line::from(vec![Span::raw("act_01 "), Span::styled("completed", bold)]);
        assert_eq!(fit(l.clone(), 40).to_string(), "act_01 completed");
        let cut = fit(l.clone(), 10);
        assert_eq!(cut.to_string(), "act_01 co…");
        assert_eq!(cut.width(), 10);
        assert_eq!(cut.spans.last().map(|s| s.style), Some(bold));
        assert_eq!(fit(l, 1).to_string(), "…");
        let w = column_widths(
            20,
            &[
                Constraint::Length(5),
                Constraint::Fill(1),
                Constraint::Fill(1),
            ],
            1,
        );
        assert_eq!(w, vec![5, 7, 6]);
    }

    #[test]
    fn counts_agree_in_number() {
        assert_eq!(count(1, "call", "calls"), "1 call");
        assert_eq!(count(2, "exec", "execs"), "2 execs");
        assert_eq!(count(0, "match", "matches"), "0 matches");
    }

    #[test]
    fn esc_escapes() {
        assert_eq!(esc("a\x1b[2Jb"), "a\\x1b[2Jb");
    }
}

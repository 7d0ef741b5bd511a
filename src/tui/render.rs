//! Drawing: a pure function of the [`App`]. Nothing here changes state; the
//! screens compute their scroll windows from the state they are given.

use super::app::App;
use super::data::{Data, Load, LoadProgress};
use super::dialog;
use super::keys::Binding;
use super::screen::{Context, frame_areas_with, message_wrapped};
use super::widgets::keyline::{help_lines, keyline};
use super::widgets::text::{clip, esc, file_name, fit, wrap};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Gauge, Paragraph, Wrap};

/// The smallest terminal the screens are laid out for, in columns and
/// rows; below it the screen says so instead of cutting everything.
pub const MIN_SIZE: (u16, u16) = (60, 18);

/// Draws the whole screen.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    let theme = &app.theme;
    frame.render_widget(Block::default().style(theme.base), area);
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        too_small(app, frame, area);
        return;
    }
    let message = message_lines(app, area.width);
    let [title, body, keys_area] = frame_areas_with(area, message.len());
    frame.render_widget(Paragraph::new(title_line(app, title.width)), title);
    match &app.load {
        Load::Loading(lp) => loading(app, lp, frame, body),
        Load::Failed(msg) => {
            let p = Paragraph::new(vec![
                Line::styled("Could not load the journals", theme.critical),
                Line::raw(""),
                Line::raw(esc(&msg.to_string()).into_owned()),
            ])
            .wrap(Wrap { trim: false })
            .block(Block::bordered().border_style(theme.muted));
            frame.render_widget(p, body);
        }
        Load::Ready(data) => {
            if let Some(screen) = app.top() {
                let cx = Context {
                    data,
                    theme,
                    body,
                    job: app.job.as_deref(),
                    export_dir: &app.export_dir,
                    marked: &app.marked,
                };
                screen.draw(&cx, frame);
            }
        }
    }
    if let (Some(d), Load::Ready(_)) = (&app.dialog, &app.load) {
        dialog::draw(d, theme, frame, body);
    }
    frame.render_widget(Paragraph::new(message), keys_area);
    if let Some(scroll) = app.help {
        help(app, scroll, frame, body);
    }
}

/// A terminal smaller than [`MIN_SIZE`]: the title line (with the chain
/// status), then what size is needed, wrapped to the width.
fn too_small(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let (w, h) = MIN_SIZE;
    let text = format!(
        "terminal too small: need at least {w}×{h}, have {}×{}; enlarge it, or q quits",
        area.width, area.height
    );
    let mut lines = vec![title_line(app, area.width)];
    lines.extend(
        wrap(&text, usize::from(area.width.saturating_sub(1)))
            .into_iter()
            .map(|l| Line::styled(format!(" {l}"), theme.warn)),
    );
    frame.render_widget(Paragraph::new(lines), area);
}

/// The bottom line: the last message (it stays until the next key, and
/// wraps onto up to [`MESSAGE_LINES`](super::screen::MESSAGE_LINES) lines so that it can be read whole),
/// else what a background job is doing, else the keys of the screen.
fn message_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let theme = &app.theme;
    if let Some(s) = &app.status {
        return message_wrapped(s, width)
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                Line::from(vec![
                    Span::styled(if i == 0 { " ▸ " } else { "   " }, theme.accent),
                    Span::styled(l, theme.accent),
                ])
            })
            .collect();
    }
    if let (Some(j), None) = (&app.job, &app.dialog) {
        return vec![Line::from(vec![
            Span::styled(" ⧗ ", theme.review),
            Span::styled(
                clip(
                    &format!("{}…", esc(j).trim_end_matches('…')),
                    usize::from(width.saturating_sub(3)),
                )
                .into_owned(),
                theme.review,
            ),
        ])];
    }
    let bindings: Vec<&Binding> = app.keys.bindings(app.ctx()).collect();
    vec![keyline(&bindings, theme, width)]
}

/// The title line: `retrace`, the chain status, and the breadcrumbs. When
/// the width runs short, the leading crumbs give way first (`…`), then the
/// chain status shrinks to a word (`[intact]`, `[BROKEN]`), then the
/// current place is cut (with `…`): the chain status always shows
/// (docs/design.md §8.1).
fn title_line(app: &App, width: u16) -> Line<'static> {
    let theme = &app.theme;
    let head = Span::styled(" retrace ", theme.accent.add_modifier(Modifier::REVERSED));
    let crumbs: Vec<String> = match app.data() {
        None => vec!["loading".into()],
        Some(_) => app.stack.screens().map(|s| s.crumb()).collect(),
    };
    // docs/design.md §6: the chain status shows on every screen.
    let badge = app.data().map(|d| chain_badge(d, theme));
    let room = usize::from(width);
    let crumb_width = |from: usize| -> usize {
        let shown: usize = crumbs
            .iter()
            .enumerate()
            .skip(from)
            .map(|(i, c)| c.chars().count() + if i == 0 { 1 } else { 3 })
            .sum();
        shown + if from > 0 { 2 } else { 0 }
    };
    let full = badge.as_ref().map(|b| (b.text.clone(), b.style));
    let short = badge.as_ref().map(|b| (b.short.to_string(), b.style));
    // docs/design.md §7.7: follow mode says so, with its rate and the
    // newest event; it shrinks after the chain status does.
    let follow = |fit: Fit| {
        app.follow
            .as_ref()
            .map(|f| (follow_badge(f, fit), theme.review))
    };
    let choices = [
        (full, follow(Fit::Full)),
        (short.clone(), follow(Fit::Full)),
        (short.clone(), follow(Fit::NoFile)),
        (short, follow(Fit::Short)),
    ];
    let last = crumbs.len().saturating_sub(1);
    let badge_width = |b: &Option<(String, ratatui::style::Style)>| {
        b.as_ref().map_or(0, |(t, _)| t.chars().count() + 1)
    };
    type Shown = Option<(String, ratatui::style::Style)>;
    let fits = |from: usize, (b, f): &(Shown, Shown)| {
        head.width() + badge_width(b) + badge_width(f) + crumb_width(from) <= room
    };
    let (from, (shown, shown_follow)) = choices
        .iter()
        .find_map(|c| (0..=last).find(|&f| fits(f, c)).map(|f| (f, c.clone())))
        .unwrap_or_else(|| (last, choices[3].clone()));
    let mut spans = vec![head];
    let mut used = spans[0].width();
    for (text, style) in [shown, shown_follow].into_iter().flatten() {
        used += text.chars().count() + 1;
        spans.push(Span::raw(" "));
        spans.push(Span::styled(text, style.add_modifier(Modifier::BOLD)));
    }
    if from > 0 {
        used += 2;
        spans.push(Span::styled(" …", theme.muted));
    }
    for (i, c) in crumbs.into_iter().enumerate().skip(from) {
        let sep = if i == 0 { " " } else { " › " };
        used += sep.chars().count();
        spans.push(Span::styled(sep, theme.muted));
        // The current place keeps what is left, cut with `…`.
        let c = clip(&c, room.saturating_sub(used)).into_owned();
        used += c.chars().count();
        spans.push(Span::raw(c));
    }
    Line::from(spans)
}

/// How much of the follow badge fits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fit {
    Full,
    NoFile,
    Short,
}

/// Follow mode as the title line shows it (docs/design.md §7.7 "Follow
/// mode"): `[following 12.5 ev/s · newest 14:03:07Z · 2 bad lines, last
/// app.jsonl:7]`; `[following: reading…]` until the journals as they were
/// are read. Narrower, the last bad line's place goes first, then all
/// but the rate: `[F 12.5/s]`.
fn follow_badge(f: &super::app::Following, fit: Fit) -> String {
    let short = fit == Fit::Short;
    if !f.started {
        return if short {
            "[F…]"
        } else {
            "[following: reading…]"
        }
        .into();
    }
    let p = &f.poll;
    if short {
        return format!("[F {:.1}/s]", p.rate);
    }
    let newest = p.newest.map_or_else(
        || "no event yet".to_string(),
        |t| format!("newest {}", t.format("%H:%M:%SZ")),
    );
    let mut s = format!("[following {:.1} ev/s · {newest}", p.rate);
    if p.bad_lines > 0 && fit == Fit::NoFile {
        s.push_str(&format!(" · {} bad", p.bad_lines));
    } else if p.bad_lines > 0 {
        s.push_str(&format!(
            " · {}",
            super::widgets::text::count(
                usize::try_from(p.bad_lines).unwrap_or(usize::MAX),
                "bad line",
                "bad lines"
            )
        ));
        if let (Some((journal, line)), Fit::Full) = (&f.last_bad, fit) {
            s.push_str(&format!(", last {}:{line}", esc(file_name(journal))));
        }
    }
    s.push(']');
    s
}

/// The chain status as the title line shows it.
struct Badge {
    /// In full: `[chain intact]`, `[chain BROKEN: 1 of 2]`,
    /// `[chain BROKEN: 1 of 8, 7 without a chain]`.
    text: String,
    /// In a word, for a narrow terminal: `[intact]`, `[BROKEN]`.
    short: &'static str,
    style: ratatui::style::Style,
}

/// The header's chain status: `chain BROKEN` (critical) when any journal's
/// chain, or the case file's, broke; `chain intact` (ok) when every journal
/// has a chain and all verified; `chain intact: n of m` when some journals
/// have none; `no chain` (muted) when none has one.
fn chain_badge(d: &Data, theme: &super::theme::Theme) -> Badge {
    let js = d.inv.journals();
    let broken = js.iter().filter(|j| j.chain.is_broken()).count();
    let intact = js.iter().filter(|j| j.chain.is_intact()).count();
    let case_broken = d.inv.case().chain.as_ref().is_some_and(|c| !c.is_intact());
    // Journals with no chain at all are said apart: "1 of 8" alone reads
    // as if the other seven had verified.
    let unchained = match js.len() - broken - intact {
        0 => String::new(),
        n => format!(", {n} without a chain"),
    };
    let (text, short) = match (broken, case_broken) {
        (0, true) => ("[case file chain BROKEN]".to_string(), "[BROKEN]"),
        (n, false) if n > 0 => (
            format!("[chain BROKEN: {n} of {}{unchained}]", js.len()),
            "[BROKEN]",
        ),
        (n, _) if n > 0 => (
            format!("[chain BROKEN: {n} of {}{unchained} + case file]", js.len()),
            "[BROKEN]",
        ),
        _ if intact > 0 && intact == js.len() => ("[chain intact]".into(), "[intact]"),
        _ if intact > 0 => (
            format!("[chain intact: {intact} of {}{unchained}]", js.len()),
            "[partly chained]",
        ),
        _ => ("[no chain]".into(), "[no chain]"),
    };
    let alarm = broken > 0 || case_broken;
    let style = if alarm {
        theme.critical
    } else if intact > 0 {
        theme.ok
    } else {
        theme.muted
    };
    Badge { text, short, style }
}

fn loading(app: &App, lp: &LoadProgress, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let [_, msg, gauge, _] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(area);
    let (ratio, label) = match lp.progress {
        _ if lp.analysing => (1.0, "analysing…".to_string()),
        Some(p) => {
            let name = lp
                .journals
                .get(p.journal as usize)
                .map(|n| esc(file_name(n)).into_owned())
                .unwrap_or_default();
            match p.total_size {
                Some(t) if t > 0 => (
                    (p.total_bytes as f64 / t as f64).clamp(0.0, 1.0),
                    format!("reading {name}: {} of {}", mib(p.total_bytes), mib(t)),
                ),
                _ => (0.0, format!("reading {name}: {}", mib(p.total_bytes))),
            }
        }
        None => (0.0, "opening…".to_string()),
    };
    let n = lp.journals.len();
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!("Loading {n} journal{}", if n == 1 { "" } else { "s" }),
            theme.accent,
        ))
        .centered(),
        msg,
    );
    let [_, g, _] = Layout::horizontal([
        Constraint::Percentage(10),
        Constraint::Percentage(80),
        Constraint::Percentage(10),
    ])
    .areas(gauge);
    frame.render_widget(
        Gauge::default()
            .ratio(ratio)
            .label(label)
            .gauge_style(theme.accent)
            .style(theme.muted),
        g,
    );
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

/// The help screen: every key of the screen under it.
fn help(app: &App, scroll: usize, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let ctx = app.screen_ctx();
    let bindings: Vec<&Binding> = app.keys.bindings(ctx).collect();
    let w = area.width.min(100);
    let lines = wrap_help(
        help_lines(&bindings, ctx, theme),
        usize::from(w.saturating_sub(2)),
    );
    let h = area.height.min(
        u16::try_from(lines.len())
            .unwrap_or(u16::MAX)
            .saturating_add(2),
    );
    let popup = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    frame.render_widget(Clear, popup);
    let rows = usize::from(h.saturating_sub(2));
    let total = lines.len();
    let scroll = scroll.min(total.saturating_sub(rows));
    let mut block = Block::bordered()
        .title(format!(" Keys: {} ", ctx.name))
        .border_style(theme.accent);
    // More keys than rows: say which are shown and that j scrolls.
    if total > rows {
        let end = (scroll + rows).min(total);
        let up = if scroll > 0 { " ↑ k" } else { "" };
        let down = if end < total { " ↓ j" } else { "" };
        block = block.title_bottom(
            Line::from(format!(" lines {}–{end} of {total}{up}{down} ", scroll + 1))
                .right_aligned(),
        );
    }
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
            .style(theme.base)
            .block(block),
        popup,
    );
}

/// The help lines wrapped to `width`: a binding's help text that does not
/// fit goes on below, under itself (the keys column stays clear); any
/// other line too wide is cut with `…`.
fn wrap_help(lines: Vec<Line<'static>>, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for line in lines {
        if line.width() <= width {
            out.push(line);
            continue;
        }
        let [keys, text] = line.spans.as_slice() else {
            out.push(fit(line, width));
            continue;
        };
        let indent = keys.width();
        let parts = wrap(&text.content, width.saturating_sub(indent).max(8));
        for (i, p) in parts.into_iter().enumerate() {
            let head = if i == 0 {
                keys.clone()
            } else {
                Span::raw(" ".repeat(indent))
            };
            out.push(fit(
                Line::from(vec![head, Span::styled(p, text.style)]),
                width,
            ));
        }
    }
    out
}

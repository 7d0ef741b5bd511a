//! Drawing: a pure function of the [`App`]. Nothing here changes state; the
//! screens compute their scroll windows from the state they are given.

use super::app::App;
use super::data::{Data, Load, LoadProgress};
use super::dialog;
use super::keys::Binding;
use super::screen::{Context, frame_areas};
use super::widgets::keyline::{help_lines, keyline};
use super::widgets::text::{esc, file_name};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Gauge, Paragraph, Wrap};

/// Draws the whole screen.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    let theme = &app.theme;
    frame.render_widget(Block::default().style(theme.base), area);
    let [title, body, keys_area] = frame_areas(area);
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
                };
                screen.draw(&cx, frame);
            }
        }
    }
    if let (Some(d), Load::Ready(_)) = (&app.dialog, &app.load) {
        dialog::draw(d, theme, frame, body);
    }
    frame.render_widget(
        Paragraph::new(message_line(app, keys_area.width)),
        keys_area,
    );
    if let Some(scroll) = app.help {
        help(app, scroll, frame, body);
    }
}

/// The bottom line: the last message (it stays until the next key), else
/// what a background job is doing, else the keys of the screen.
fn message_line(app: &App, width: u16) -> Line<'static> {
    let theme = &app.theme;
    if let Some(s) = &app.status {
        return Line::from(vec![
            Span::styled(" ▸ ", theme.accent),
            Span::styled(esc(s).into_owned(), theme.accent),
        ]);
    }
    if let (Some(j), None) = (&app.job, &app.dialog) {
        return Line::from(vec![
            Span::styled(" ⧗ ", theme.review),
            Span::styled(format!("{}…", esc(j).trim_end_matches('…')), theme.review),
        ]);
    }
    let bindings: Vec<&Binding> = app.keys.bindings(app.ctx()).collect();
    keyline(&bindings, theme, width)
}

/// The title line: `retrace`, the chain status, and the breadcrumbs. When
/// the width runs short, the leading crumbs give way first (`…`), then the
/// chain status: a broken chain shrinks to `[BROKEN]` and always shows,
/// any other status is left out; the current place keeps what is left.
fn title_line(app: &App, width: u16) -> Line<'static> {
    let theme = &app.theme;
    let head = Span::styled(" retrace ", theme.accent.add_modifier(Modifier::REVERSED));
    let crumbs: Vec<String> = match app.data() {
        None => vec!["loading".into()],
        Some(_) => app.stack.screens().map(|s| s.crumb()).collect(),
    };
    // docs/design.md §6: the chain status shows on every screen.
    let badge = app.data().map(|d| chain_badge(d, theme));
    let alarm = badge.as_ref().is_some_and(|(_, _, broken)| *broken);
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
    // The badge in full; else a broken chain as `[BROKEN]`, anything else
    // left out.
    let full = badge.as_ref().map(|(t, s, _)| (t.clone(), *s));
    let short = badge
        .as_ref()
        .filter(|_| alarm)
        .map(|(_, s, _)| ("[BROKEN]".to_string(), *s));
    let choices = [full, short];
    let last = crumbs.len().saturating_sub(1);
    let fits = |from: usize, b: &Option<(String, ratatui::style::Style)>| {
        let bw = b.as_ref().map_or(0, |(t, _)| t.chars().count() + 1);
        head.width() + bw + crumb_width(from) <= room
    };
    let (from, shown) = choices
        .iter()
        .find_map(|b| (0..=last).find(|&f| fits(f, b)).map(|f| (f, b.clone())))
        .unwrap_or_else(|| (last, choices[1].clone()));
    let mut spans = vec![head];
    if let Some((text, style)) = shown {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(text, style.add_modifier(Modifier::BOLD)));
    }
    if from > 0 {
        spans.push(Span::styled(" …", theme.muted));
    }
    for (i, c) in crumbs.into_iter().enumerate().skip(from) {
        spans.push(Span::styled(if i == 0 { " " } else { " › " }, theme.muted));
        spans.push(Span::raw(c));
    }
    Line::from(spans)
}

/// The header's chain status: `chain BROKEN` (critical) when any journal's
/// chain, or the case file's, broke; `chain intact` (ok) when every journal
/// has a chain and all verified; `chain intact: n of m` when some journals
/// have none; `no chain` (muted) when none has one.
fn chain_badge(d: &Data, theme: &super::theme::Theme) -> (String, ratatui::style::Style, bool) {
    let js = d.inv.journals();
    let broken = js.iter().filter(|j| j.chain.is_broken()).count();
    let intact = js.iter().filter(|j| j.chain.is_intact()).count();
    let case_broken = d.inv.case().chain.as_ref().is_some_and(|c| !c.is_intact());
    let text = match (broken, case_broken) {
        (0, true) => "[case file chain BROKEN]".to_string(),
        (n, false) if n > 0 => format!("[chain BROKEN: {n} of {}]", js.len()),
        (n, _) if n > 0 => format!("[chain BROKEN: {n} of {} + case file]", js.len()),
        _ if intact > 0 && intact == js.len() => "[chain intact]".into(),
        _ if intact > 0 => format!("[chain intact: {intact} of {}]", js.len()),
        _ => "[no chain]".into(),
    };
    let alarm = broken > 0 || case_broken;
    let style = if alarm {
        theme.critical
    } else if intact > 0 {
        theme.ok
    } else {
        theme.muted
    };
    (text, style, alarm)
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
    let lines = help_lines(&bindings, ctx, theme);
    let w = area.width.min(100);
    let h = area.height.min(lines.len() as u16 + 2);
    let popup = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    frame.render_widget(Clear, popup);
    let scroll = scroll.min(lines.len().saturating_sub(h.saturating_sub(2) as usize));
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
            .style(theme.base)
            .block(
                Block::bordered()
                    .title(format!(" Keys: {} ", ctx.name))
                    .border_style(theme.accent),
            ),
        popup,
    );
}

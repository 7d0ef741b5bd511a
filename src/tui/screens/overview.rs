//! The overview, shown on start: the journals loaded (format, lines, bad
//! lines, chain status), counts by verdict, calls over time, what waits for
//! a reviewer, and the worst groups.

use crate::query::LoadedJournal;
use crate::tui::action::Action;
use crate::tui::data::Data;
use crate::tui::keys::table::{GLOBAL, MOVE};
use crate::tui::keys::{Bind, Ctx, KeyTable, Part, bind, code, k};
use crate::tui::screen::{Anchor, Context, Jump, Nav, Opens, Registration, Screen};
use crate::tui::screens::detail::Detail;
use crate::tui::theme::Theme;
use crate::tui::widgets::text::{count, datetime, esc, fit, select_if};
use crate::tui::widgets::mouse::{Hit, Pointer, inside, on_list};
use crate::tui::widgets::{Cursor, Move};
use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Sparkline};

const KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected group",
        Some("open"),
    ),
    bind(
        &[k('2')],
        Action::ShowGroups,
        "groups table",
        Some("groups"),
    ),
    bind(
        &[k('3')],
        Action::ShowSessions,
        "sessions",
        Some("sessions"),
    ),
    bind(
        &[k('4')],
        Action::ShowReview,
        "review queue (executions that wait for a reviewer)",
        Some("review"),
    ),
    bind(&[k('1')], Action::ShowOverview, "overview", None),
];

/// The overview.
pub const TABLE: KeyTable = KeyTable {
    ctx: Ctx::new("overview", "overview"),
    parts: &[
        Part::Keys(KEYS),
        Part::Keys(MOVE),
        Part::Keys(GLOBAL),
    ],
};

/// The overview: the first screen, the one `1` returns to.
pub const SCREEN: Registration = Registration {
    keys: &[TABLE],
    jump: Some(Jump {
        bind: bind(&[k('1')], Action::ShowOverview, "overview", None),
        opens: Opens::Root(open),
    }),
};

fn open(_: &Context<'_>) -> Box<dyn Screen> {
    Box::new(Overview::default())
}

/// The overview's state: the selection in the worst groups.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    /// Selected worst group.
    pub cursor: Cursor,
}

/// The chain status of a journal in a few words, as verified while it was
/// loaded (`retrace verify` says the same at length).
pub fn chain_status(journal: &LoadedJournal) -> String {
    journal.chain.short()
}

/// Whether the overview has a line about the review queue: when something
/// waits, or a case file holds decisions or is broken.
fn has_review_line(data: &Data) -> bool {
    let case = data.inv.case();
    !data.queue.is_empty()
        || !case.decisions.is_empty()
        || case.chain.as_ref().is_some_and(|c| !c.is_intact())
}

/// Lines the files skipped in folders take in the journals pane: up to
/// three, or two and a count of the rest.
fn skipped_lines(n: usize) -> usize {
    n.min(3)
}

/// Areas: journals, verdict counts, sparkline, review line, worst groups.
fn areas(data: &Data, body: Rect, review_line: bool) -> [Rect; 5] {
    let notes: usize = data
        .inv
        .journals()
        .iter()
        .take(6)
        .map(|j| j.notes.len().min(2))
        .sum();
    let skipped = skipped_lines(data.inv.skipped().len()) + usize::from(data.inv.narrowed().is_some());
    let n = data.inv.journals().len();
    let more = usize::from(n > 6);
    let journals = ((n.min(6) + more + notes + skipped).min(12) as u16) + 2;
    let counts = (data.verdict_counts.len().max(3) as u16 + 2).min(8);
    let review = u16::from(review_line);
    let [j, mid, r, worst] = Layout::vertical([
        Constraint::Length(journals),
        Constraint::Length(counts),
        Constraint::Length(review),
        Constraint::Fill(1),
    ])
    .areas(body);
    let [c, s] = Layout::horizontal([Constraint::Length(34), Constraint::Fill(1)]).areas(mid);
    [j, c, s, r, worst]
}

fn page(data: &Data, body: Rect) -> usize {
    // The review line takes at most one row; paging a row short is harmless.
    usize::from(areas(data, body, false)[4].height.saturating_sub(2)).max(1)
}

impl Screen for Overview {
    fn ctx(&self) -> Ctx {
        TABLE.ctx
    }

    fn crumb(&self) -> String {
        "overview".into()
    }

    fn update(&mut self, cx: &Context<'_>, action: Action) -> Nav {
        let (data, st) = (cx.data, self);
        let len = data.worst.len();
        let page = page(data, cx.body);
        let mut open = action == Action::Open;
        if let Some(m) = Move::of(&action) {
            st.cursor.apply(m, len, page);
        } else if let Some(p) = Pointer::of(&action) {
            // The mouse over the worst groups: select, or open the selected.
            let pane = areas(data, cx.body, has_review_line(data))[4];
            open = on_list(&mut st.cursor, pane, inside(pane), len, p) == Hit::Open;
        }
        if open
            && let Some(d) = data
                .worst
                .get(st.cursor.selected)
                .and_then(|&g| Detail::new(data, g))
        {
            return Nav::Push(Box::new(d));
        }
        st.cursor.settle(page, len);
        Nav::Stay
    }

    fn draw(&self, cx: &Context<'_>, frame: &mut Frame<'_>) {
        draw(cx, self, frame);
    }

    fn anchor(&self, data: &Data) -> Anchor {
        data.worst
            .get(self.cursor.selected)
            .and_then(|&g| data.inv.group_at(g))
            .map_or(Anchor::Nothing, |g| Anchor::Group(g.id().to_string()))
    }

    fn refresh(&mut self, cx: &Context<'_>, anchor: Anchor) {
        let data = cx.data;
        let pos = match anchor {
            Anchor::Group(id) => data
                .inv
                .group(&id)
                .ok()
                .map(|g| g.index())
                .and_then(|g| data.worst.iter().position(|&w| w == g)),
            Anchor::Nothing | Anchor::Execution(_) => None,
        }
        .unwrap_or(self.cursor.selected);
        self.cursor.select(pos, data.worst.len());
    }
}

/// What the overview and the groups table say when the journals hold no
/// tool call yet (an empty journal a gateway has just begun).
pub(crate) const NO_RECORD_YET: &str =
    "No tool call in the journals yet: press F to follow them as they grow.";

/// The bar in front of a group's row: `●` when its verdict changed while
/// following since it was last selected (docs/design.md §7.7 "Follow
/// mode"), else `▌`. One column either way.
pub(crate) fn change_mark(cx: &Context<'_>, group_id: &str) -> &'static str {
    if cx.marked.contains(group_id) {
        "●"
    } else {
        "▌"
    }
}

/// The end of `s` that fits in `width` columns, with `…` in front when cut.
fn clip_left(s: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    if s.width() <= width {
        return s.to_string();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut w = 1;
    for c in s.chars().rev() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw > width {
            break;
        }
        w += cw;
        tail.push(c);
    }
    if width == 0 {
        return String::new();
    }
    std::iter::once('…').chain(tail.into_iter().rev()).collect()
}

/// ` 2026-07-22 14:01:02 → 14:05:30 UTC `, with the end's date only when
/// it differs; within `width` columns: without seconds, then without
/// times, rather than cut (a border title is cut from the left, which took
/// the year's digits).
fn span_label(
    start: Option<chrono::DateTime<chrono::Utc>>,
    end: Option<chrono::DateTime<chrono::Utc>>,
    width: usize,
) -> String {
    let (Some(s), Some(e)) = (start, end) else {
        return format!(" {} → {} UTC ", datetime(start), datetime(end));
    };
    let same_day = s.date_naive() == e.date_naive();
    let forms: [(&str, &str); 3] = if same_day {
        [
            ("%Y-%m-%d %H:%M:%S", "%H:%M:%S"),
            ("%Y-%m-%d %H:%M", "%H:%M"),
            ("%Y-%m-%d", ""),
        ]
    } else {
        [
            ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S"),
            ("%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M"),
            ("%Y-%m-%d", "%Y-%m-%d"),
        ]
    };
    let label = |(a, b): (&str, &str)| {
        if b.is_empty() {
            format!(" {} UTC ", s.format(a))
        } else {
            format!(" {} → {} UTC ", s.format(a), e.format(b))
        }
    };
    forms
        .iter()
        .map(|&f| label(f))
        .find(|l| l.chars().count() <= width)
        .unwrap_or_else(|| label(forms[2]))
}

/// Folds `counts` into `width` buckets by summing.
pub fn fold(counts: &[u64], width: usize) -> Vec<u64> {
    if width == 0 || counts.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u64; width.min(counts.len())];
    let n = out.len();
    for (i, c) in counts.iter().enumerate() {
        out[i * n / counts.len()] += c;
    }
    out
}

/// The line about the review queue.
fn review_line(data: &Data, theme: &Theme) -> Line<'static> {
    let case = data.inv.case();
    if let Some(c) = &case.chain
        && !c.is_intact()
    {
        return Line::from(vec![
            Span::styled("▌", theme.critical),
            Span::styled(
                format!(
                    "Case file chain {}: decisions disabled (run `retrace verify`)",
                    esc(&c.describe())
                ),
                theme.critical,
            ),
            Span::styled(" · [4] opens the review queue", theme.muted),
        ]);
    }
    let n = data.queue.len();
    let decisions = case.decisions.len();
    let recorded = match decisions {
        0 => String::new(),
        1 => " · 1 decision in the case file".into(),
        d => format!(" · {d} decisions in the case file"),
    };
    if n == 0 {
        return Line::from(vec![
            Span::styled("▌", theme.ok),
            Span::styled(
                format!("No execution waits for a reviewer{recorded}"),
                theme.muted,
            ),
            Span::styled(" · [4] opens the review queue", theme.muted),
        ]);
    }
    let oldest = data.queue[0]
        .first_dispatch_at
        .or(data.queue[0].accepted_at);
    Line::from(vec![
        Span::styled("▌", theme.review),
        Span::styled(
            format!(
                "Review queue: {n} waiting (oldest dispatched {}){recorded}",
                datetime(oldest)
            ),
            theme.review,
        ),
        Span::styled(" · [4] opens it", theme.accent),
    ])
}

/// Draws the overview.
fn draw(cx: &Context<'_>, st: &Overview, frame: &mut Frame) {
    let (data, theme, body) = (cx.data, cx.theme, cx.body);
    let inv = &data.inv;
    let [ja, ca, sa, ra, wa] = areas(data, body, has_review_line(data));
    if ra.height > 0 {
        frame.render_widget(Paragraph::new(review_line(data, theme)), ra);
    }
    // Journals.
    let mut lines = Vec::new();
    for j in inv.journals().iter().take(6) {
        let bad = if j.bad_line_count > 0 {
            Span::styled(format!("{:>4} bad", j.bad_line_count), theme.warn)
        } else {
            Span::styled("   0 bad", theme.muted)
        };
        let mut spans = vec![
            Span::styled(format!("{:<11}", j.format.name()), theme.info),
            // A database has rows, not lines: what it gave is counted.
            Span::raw(if j.lines == 0 && j.records > 0 {
                format!(
                    "{:>9} record{} ",
                    j.records,
                    if j.records == 1 { " " } else { "s" }
                )
            } else {
                format!(
                    "{:>9} line{} ",
                    j.lines,
                    if j.lines == 1 { " " } else { "s" }
                )
            }),
            bad,
            Span::styled(
                format!("  chain: {}  ", chain_status(j)),
                if j.chain.is_broken() {
                    theme.critical
                } else {
                    theme.muted
                },
            ),
        ];
        let used: usize = spans.iter().map(|s| s.width()).sum();
        let room = usize::from(ja.width.saturating_sub(2)).saturating_sub(used);
        spans.push(Span::raw(clip_left(&esc(&j.name), room)));
        lines.push(Line::from(spans));
        for n in j.notes.iter().take(2) {
            // Cut with `…`, not mid-word (the notes are long sentences).
            lines.push(fit(
                Line::styled(format!("  note: {}", esc(n)), theme.muted),
                usize::from(ja.width.saturating_sub(2)),
            ));
        }
    }
    if inv.journals().len() > 6 {
        lines.push(Line::styled(
            format!("… and {} more", inv.journals().len() - 6),
            theme.muted,
        ));
    }
    // Files left out of the folders given (not journals, binary files).
    let skipped = inv.skipped();
    let shown = if skipped.len() > 3 { 2 } else { skipped.len() };
    for n in &skipped[..shown] {
        lines.push(fit(
            Line::styled(format!("note: {}", esc(n)), theme.muted),
            usize::from(ja.width.saturating_sub(2)),
        ));
    }
    if skipped.len() > shown {
        lines.push(Line::styled(
            format!(
                "note: {} more files skipped (retrace groups lists them)",
                skipped.len() - shown
            ),
            theme.muted,
        ));
    }
    // --since/--until: what the screens leave out.
    if let Some(n) = inv.narrowed() {
        lines.push(fit(
            Line::styled(format!("window: {}", n.describe()), theme.warn),
            usize::from(ja.width.saturating_sub(2)),
        ));
    }
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(format!(" Journals ({}) ", inv.journals().len()))
                .border_style(theme.muted),
        ),
        ja,
    );
    // Counts by verdict.
    let counts = &data.verdict_counts;
    let inner_h = usize::from(ca.height.saturating_sub(2));
    let mut lines: Vec<Line> = counts
        .iter()
        .take(inner_h)
        .map(|(v, n)| {
            let s = theme.severity(v.severity());
            Line::from(vec![
                Span::styled(format!("{:>6} ", n), s),
                Span::styled(v.as_str(), s),
            ])
        })
        .collect();
    if counts.len() > inner_h && inner_h > 0 {
        lines.truncate(inner_h - 1);
        let rest: usize = counts.iter().skip(inner_h - 1).map(|(_, n)| n).sum();
        lines.push(Line::styled(format!("{rest:>6} other"), theme.muted));
    }
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(" Groups by verdict ")
                .border_style(theme.muted),
        ),
        ca,
    );
    // Call rate.
    let block = Block::bordered()
        .title(format!(
            " Calls over time: {} ",
            data.rate.counts.iter().sum::<u64>()
        ))
        .title_bottom(
            Line::from(span_label(
                data.rate.start,
                data.rate.end,
                usize::from(sa.width.saturating_sub(2)),
            ))
            .right_aligned(),
        )
        .border_style(theme.muted);
    let spark_area = block.inner(sa);
    let folded = fold(&data.rate.counts, usize::from(spark_area.width));
    frame.render_widget(block, sa);
    frame.render_widget(
        Sparkline::default().data(&folded).style(theme.accent),
        spark_area,
    );
    // Worst groups.
    let h = usize::from(wa.height.saturating_sub(2));
    let window = st.cursor.window(h, data.worst.len());
    let shown: Vec<_> = window
        .clone()
        .filter_map(|i| inv.group_at(data.worst[i]).map(|g| (i, g)))
        .collect();
    let tail = |g: &crate::query::GroupRef<'_>| {
        format!(
            " {} · {} · {}",
            count(g.calls(), "call", "calls"),
            count(g.execution_count(), "exec", "execs"),
            g.id()
        )
    };
    // The tool column is as wide as the widest tool shown, as far as the
    // pane allows: a long tool name is cut (with …) only when it must be.
    let widest_tool = shown
        .iter()
        .map(|(_, g)| esc(g.tool()).chars().count())
        .max()
        .unwrap_or(0);
    let widest_tail = shown
        .iter()
        .map(|(_, g)| tail(g).chars().count())
        .max()
        .unwrap_or(0);
    let room = usize::from(wa.width.saturating_sub(2)).saturating_sub(1 + 24 + 1 + widest_tail);
    let tool_w = widest_tool.min(room).max(8);
    let mut lines = Vec::new();
    for (i, g) in shown {
        let sev = theme.severity(g.severity());
        let mut spans = vec![
            Span::styled(change_mark(cx, g.id()), sev),
            Span::styled(format!("{:<24}", g.verdict().as_str()), sev),
            Span::raw(format!(
                " {:<tool_w$}",
                crate::tui::widgets::text::clip(&esc(g.tool()), tool_w)
            )),
            // What does not fit ends with …, never cut mid-word silently.
            Span::styled(
                crate::tui::widgets::text::clip(
                    &tail(&g),
                    usize::from(wa.width.saturating_sub(2)).saturating_sub(1 + 24 + 1 + tool_w),
                )
                .into_owned(),
                theme.muted,
            ),
        ];
        if let Some(r) = g.resolutions().last() {
            spans.push(Span::styled(
                format!(" · ✎ reviewed by {}", esc(&r.reviewer)),
                theme.review,
            ));
        }
        let line = Line::from(spans);
        lines.push(select_if(line, i == st.cursor.selected, theme.selection));
    }
    if data.worst.is_empty() {
        lines.push(match inv.narrowed().and_then(|n| n.empty_window()) {
            Some(m) => Line::styled(m, theme.warn),
            // A journal a gateway has just begun (docs/design.md §7.7
            // "Follow mode").
            None if inv.group_count() == 0 => Line::styled(NO_RECORD_YET, theme.muted),
            None => Line::styled(
                "No group worth a look: every group is one call with a clean verdict.",
                theme.ok,
            ),
        });
    }
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(format!(" Worst groups ({}) ", data.worst.len()))
                .border_style(theme.accent),
        ),
        wa,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::screens::testing::{assert_binds, shared};

    #[test]
    fn fold_keeps_the_total() {
        let c: Vec<u64> = (0..1024).map(|i| i % 7).collect();
        for w in [1, 3, 80, 1024, 2000] {
            let f = fold(&c, w);
            assert_eq!(f.iter().sum::<u64>(), c.iter().sum::<u64>());
            assert!(f.len() <= w);
        }
        assert!(fold(&c, 0).is_empty());
    }

    /// A span too long for its box loses its seconds, then its times,
    /// rather than the year's digits (a border title is cut from the left:
    /// `26-02-13 12:37:36 → …` at 80 columns).
    #[test]
    fn the_span_label_fits_its_box() {
        let t = |s: &str| Some(s.parse::<chrono::DateTime<chrono::Utc>>().unwrap());
        let (a, b) = (t("2026-02-13T12:37:36Z"), t("2026-05-21T21:37:10Z"));
        assert_eq!(
            span_label(a, b, 60),
            " 2026-02-13 12:37:36 → 2026-05-21 21:37:10 UTC "
        );
        assert_eq!(span_label(a, b, 44), " 2026-02-13 12:37 → 2026-05-21 21:37 UTC ");
        assert_eq!(span_label(a, b, 30), " 2026-02-13 → 2026-05-21 UTC ");
        let c = t("2026-02-13T14:05:30Z");
        assert_eq!(span_label(a, c, 40), " 2026-02-13 12:37:36 → 14:05:30 UTC ");
        assert_eq!(span_label(a, c, 20), " 2026-02-13 UTC ");
    }

    /// The screen's keys ask for exactly what its update answers to.
    #[test]
    fn binds_what_it_answers_to() {
        use Action::*;
        let own = [Open];
        assert_binds(TABLE, &[&own[..], &shared()].concat());
    }
}

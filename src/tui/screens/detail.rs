//! One group: the verdict and its reason, every execution with its
//! lifecycle stages and times, and the five questions with their answers
//! and evidence. Enter on an execution opens it; Enter on evidence jumps to
//! the event it cites.

use crate::query::{
    ChainMark, EvidenceTarget, EvidenceView, ExecutionSummary, GroupDetail, GroupIdx, StageStatus,
};
use crate::tui::action::Action;
use crate::tui::data::Data;
use crate::tui::dialog;
use crate::tui::keys::table::{BACK, GLOBAL, MOVE};
use crate::tui::keys::{Bind, Ctx, KeyTable, Part, bind, code, k};
use crate::tui::screen::{Anchor, Context, Nav, Registration, Screen};
use crate::tui::screens::execution::Execution;
use crate::tui::screens::sessions::Sessions;
use crate::tui::theme::Theme;
use crate::tui::widgets::lanes::{self, Axis};
use crate::tui::widgets::stages::{records, stage_units};
use crate::tui::widgets::text::{
    clip, delta, esc, flow, provenance, select_if, selected, short_cite, time, wrap,
};
use crate::tui::widgets::{Cursor, Move, scroll};
use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

const KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the execution, or the event the evidence cites",
        Some("open"),
    ),
    bind(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between timeline and questions",
        Some("pane"),
    ),
    bind(
        &[k('y')],
        Action::Copy,
        "copy the execution id or the evidence citation (OSC 52)",
        None,
    ),
    bind(
        &[k('E')],
        Action::Export,
        "export a Markdown postmortem of this group to a file",
        Some("export"),
    ),
    BACK,
];

/// One group's detail.
pub const TABLE: KeyTable = KeyTable {
    ctx: Ctx::new("detail", "group detail"),
    parts: &[
        Part::Keys(KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

/// One group, opened from the overview or the groups table.
pub const SCREEN: Registration = Registration {
    keys: &[TABLE],
    jump: None,
};

/// Which pane has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    /// The executions.
    #[default]
    Lanes,
    /// The five questions and their evidence.
    Evidence,
}

/// The group detail screen's state.
#[derive(Debug, Clone)]
pub struct Detail {
    /// The group.
    pub group: GroupIdx,
    /// Everything the query layer says about it.
    pub detail: GroupDetail,
    /// Focused pane.
    pub focus: Focus,
    /// Selected execution.
    pub lanes: Cursor,
    /// Every piece of evidence, answers first, then findings.
    pub evidence: Vec<EvidenceView>,
    /// Selected evidence.
    pub ev: Cursor,
    /// First line shown in the questions pane.
    pub qscroll: usize,
    /// The time axis shared by the lanes.
    pub axis: Option<Axis>,
    /// Whether the journals record authorization and delivery (a missing
    /// stage is a gap only where it could have been recorded).
    pub records: (bool, bool),
}

impl Detail {
    /// Opens group `g`; `None` when there is no such group.
    pub fn new(data: &Data, g: GroupIdx) -> Option<Detail> {
        let detail = data.inv.group_at(g)?.detail();
        let evidence = detail
            .questions
            .iter()
            .flat_map(|a| a.evidence.iter().cloned())
            .chain(
                detail
                    .findings
                    .iter()
                    .flat_map(|f| f.evidence.iter().cloned()),
            )
            .collect();
        let axis = Axis::of(&detail.executions_detail);
        Some(Detail {
            axis,
            records: records(data),
            group: g,
            detail,
            focus: Focus::Lanes,
            lanes: Cursor::default(),
            evidence,
            ev: Cursor::default(),
            qscroll: 0,
        })
    }

    /// Takes the content of `new` (the same group after a new analysis)
    /// and keeps the focus, selections and scroll.
    fn keep_place(&mut self, new: Detail) {
        let (focus, lanes, ev, qscroll) = (self.focus, self.lanes, self.ev, self.qscroll);
        *self = new;
        self.focus = focus;
        self.lanes = lanes;
        self.lanes
            .select(lanes.selected, self.detail.executions_detail.len());
        self.ev = ev;
        self.ev.select(ev.selected, self.evidence.len());
        self.qscroll = qscroll;
    }
}

/// Areas of the screen: header, executions, questions.
pub struct Areas {
    /// Verdict and reason.
    pub header: Rect,
    /// Executions.
    pub lanes: Rect,
    /// The five questions.
    pub questions: Rect,
}

/// Lines one execution takes in the lanes pane: id and state, the bar on
/// the time axis, and the stage times on up to two lines.
pub const LANE_HEIGHT: usize = 4;

/// Lines of a compact lane (id and state, the bar): used for the lanes
/// other than the selected one when not every lane fits in full.
pub const COMPACT_LANE: usize = 2;

/// Most lines the verdict's reason takes in the header; it is cut (with
/// `…`) only beyond this, and the questions pane's Group section holds it
/// whole.
const REASON_LINES: usize = 5;

/// Fewest rows the questions pane keeps when the screen is stacked.
const MIN_QUESTIONS: u16 = 6;

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
            ""
        } else {
            " (default: no contract)"
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

/// How the lanes are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lanes {
    /// Every lane with its stage times.
    AllFull,
    /// The selected lane with its stage times, the others compact.
    SelectedFull,
    /// Every lane compact (the questions have the focus).
    AllCompact,
}

/// Rows the lanes pane needs to show `n` lanes drawn as `mode`: borders,
/// the axis line and the lanes.
fn lanes_rows(n: usize, mode: Lanes) -> u16 {
    let lanes = match mode {
        Lanes::AllFull => n * LANE_HEIGHT,
        Lanes::SelectedFull => {
            n.saturating_sub(1) * COMPACT_LANE + LANE_HEIGHT.min(n * LANE_HEIGHT)
        }
        Lanes::AllCompact => n * COMPACT_LANE,
    };
    u16::try_from(lanes + 3).unwrap_or(u16::MAX)
}

/// Splits the body: side by side from 120 columns, stacked below. Stacked,
/// the lanes pane takes the rows that show every lane in full when they
/// fit (beside at least a few rows of questions), else every lane compact
/// but the selected one, else every lane compact, else what is left; with
/// the questions focused it gives them more room (every lane compact), but
/// never fewer lanes than fit.
pub fn areas(st: &Detail, body: Rect) -> Areas {
    let d = &st.detail;
    let reason = reason_lines(d, body.width).len().min(REASON_LINES) as u16;
    let reviewed = reviewed_lines(d, body.width).len() as u16;
    let [header, rest] = Layout::vertical([
        Constraint::Length(3 + reason + reviewed + identity_height(body.width)),
        Constraint::Fill(1),
    ])
    .areas(body);
    let [lanes, questions] = if body.width >= 120 {
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(rest)
    } else {
        let n = d.executions_detail.len();
        let room = rest.height.saturating_sub(MIN_QUESTIONS);
        let full = lanes_rows(n, Lanes::AllFull);
        let h = match st.focus {
            Focus::Lanes if full <= room => full,
            Focus::Lanes if lanes_rows(n, Lanes::SelectedFull) <= room => {
                lanes_rows(n, Lanes::SelectedFull)
            }
            Focus::Lanes => lanes_rows(n, Lanes::AllCompact).min(room),
            Focus::Evidence => {
                let compact = lanes_rows(n, Lanes::AllCompact);
                if compact <= room {
                    compact.max(full.min(rest.height * 2 / 5))
                } else {
                    room
                }
            }
        }
        .max(lanes_rows(1, Lanes::AllCompact).min(rest.height));
        Layout::vertical([Constraint::Length(h), Constraint::Fill(1)]).areas(rest)
    };
    Areas {
        header,
        lanes,
        questions,
    }
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
fn lanes_page(a: &Areas, n: usize, focus: Focus) -> usize {
    lanes_fit(a, n, focus).1
}

fn inner(r: Rect) -> Rect {
    Block::bordered().inner(r)
}

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

fn evidence_line_of(lines: &[QLine], ev: usize) -> Option<usize> {
    lines.iter().position(|l| *l == QLine::Evidence(ev))
}

impl Screen for Detail {
    fn ctx(&self) -> Ctx {
        TABLE.ctx
    }

    fn crumb(&self) -> String {
        format!("group {}", self.detail.summary.group_id)
    }

    fn update(&mut self, cx: &Context<'_>, action: Action) -> Nav {
        update(cx, self, action)
    }

    fn draw(&self, cx: &Context<'_>, frame: &mut Frame<'_>) {
        draw(cx.data, self, cx.theme, frame, cx.body);
    }

    /// The group id is the anchor, and it is kept in the state.
    fn refresh(&mut self, cx: &Context<'_>, _: Anchor) {
        let data = cx.data;
        if let Some(n) = data
            .inv
            .group(&self.detail.summary.group_id)
            .ok()
            .map(|g| g.index())
            .and_then(|g| Detail::new(data, g))
        {
            self.keep_place(n);
        }
    }
}

/// Applies an action.
fn update(cx: &Context<'_>, st: &mut Detail, action: Action) -> Nav {
    let (data, body) = (cx.data, cx.body);
    let a = areas(st, body);
    let n_lanes = st.detail.executions_detail.len();
    let page = lanes_page(&a, n_lanes, st.focus);
    let qi = inner(a.questions);
    let q_page = usize::from(qi.height).max(1);
    let n_ev = st.evidence.len();
    match Move::of(&action) {
        Some(m) if st.focus == Focus::Lanes => st.lanes.apply(m, n_lanes, page),
        // Pages scroll the questions; the other moves go from evidence to
        // evidence (the top also scrolls back to the first question).
        Some(m @ (Move::PageUp | Move::PageDown)) => scroll(&mut st.qscroll, m, q_page, usize::MAX),
        Some(m) => {
            st.ev.apply(m, n_ev, 1);
            if m == Move::Top {
                st.qscroll = 0;
            }
        }
        None => {}
    }
    match (&action, st.focus) {
        (Action::Back, _) => return Nav::Back,
        (Action::Export, _) => {
            let ids = || vec![st.detail.summary.group_id.clone()];
            return match dialog::start_export(&data.inv, cx.job, ids, true, cx.export_dir) {
                Ok(d) => Nav::Dialog(d),
                Err(why) => Nav::Say(why.to_string()),
            };
        }
        (Action::FocusNext, _) => {
            st.focus = match st.focus {
                Focus::Lanes if n_ev > 0 => Focus::Evidence,
                _ => Focus::Lanes,
            }
        }
        (Action::Open, Focus::Lanes) => {
            if let Some(x) = st.detail.executions_detail.get(st.lanes.selected) {
                return Nav::Push(Box::new(Execution::new(data, x.index, None)));
            }
        }
        (Action::Open, Focus::Evidence) => {
            if let Some(e) = st.evidence.get(st.ev.selected) {
                match e.target() {
                    EvidenceTarget::Event { execution, event } => {
                        return Nav::Push(Box::new(Execution::new(data, execution, Some(event))));
                    }
                    EvidenceTarget::Session(index) => {
                        return Nav::Push(Box::new(Sessions::new(data, Some(index))));
                    }
                }
            }
        }
        (Action::Copy, Focus::Lanes) => {
            if let Some(x) = st.detail.executions_detail.get(st.lanes.selected) {
                return Nav::Copy("the execution id", x.execution_id.clone());
            }
        }
        (Action::Copy, Focus::Evidence) => {
            if let Some(e) = st.evidence.get(st.ev.selected) {
                return Nav::Copy("the evidence citation", e.cite());
            }
        }
        _ => {}
    }
    // The layout depends on the focus; measure the panes again.
    let a = areas(st, body);
    st.lanes.settle(lanes_page(&a, n_lanes, st.focus), n_lanes);
    let qi = inner(a.questions);
    let q_page = usize::from(qi.height).max(1);
    // Keep the selected evidence on screen after a move; page keys scroll freely.
    let lines = qlines(st, qi.width);
    let max_scroll = lines.len().saturating_sub(q_page);
    if matches!(
        action,
        Action::Down | Action::Up | Action::Top | Action::Bottom
    ) && st.focus == Focus::Evidence
        && let Some(l) = evidence_line_of(&lines, st.ev.selected)
    {
        let c = Cursor {
            selected: l,
            offset: st.qscroll,
        };
        st.qscroll = c.offset_for(q_page, lines.len());
    }
    st.qscroll = st.qscroll.min(max_scroll);
    Nav::Stay
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

fn focus_style(theme: &Theme, focused: bool) -> Style {
    if focused { theme.accent } else { theme.muted }
}

/// Draws the screen.
fn draw(data: &Data, st: &Detail, theme: &Theme, frame: &mut Frame, body: Rect) {
    let _ = data;
    let d = &st.detail;
    let a = areas(st, body);
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
    let reason = reason_lines(d, body.width);
    let reviewed = reviewed_lines(d, body.width);
    let identity = identity_lines(d, body.width, theme);
    let total = reason.len();
    let shown = usize::from(a.header.height.saturating_sub(3))
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
        a.header,
    );
    // Executions as lanes on one time axis.
    let n = d.executions_detail.len();
    let li = inner(a.lanes);
    let (mode, page) = lanes_fit(&a, n, st.focus);
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
    // Questions.
    let qi = inner(a.questions);
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
                // DESIGN.md §6: evidence at or after a chain break is marked,
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
        a.questions,
    );
}

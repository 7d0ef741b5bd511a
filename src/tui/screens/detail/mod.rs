//! One group: the verdict and its reason, every execution with its
//! lifecycle stages and times, and the five questions with their answers
//! and evidence, and the groups one argument field away (near duplicates,
//! docs/design.md §5.13). Enter on an execution opens it; Enter on evidence
//! jumps to the event it cites; Enter on a near duplicate opens its group.

mod header;
mod questions;
mod state;
mod timeline;

pub use questions::{QLine, qlines};
pub use state::{Areas, Detail, Focus};
pub use timeline::{COMPACT_LANE, LANE_HEIGHT};

use crate::query::EvidenceTarget;
use crate::tui::action::Action;
use crate::tui::dialog;
use crate::tui::keys::table::{BACK, GLOBAL, MOVE};
use crate::tui::keys::{Bind, Ctx, KeyTable, Part, bind, code, k};
use crate::tui::screen::{Anchor, Context, Nav, Registration, Screen};
use crate::tui::screens::execution::Execution;
use crate::tui::screens::sessions::Sessions;
use crate::tui::theme::Theme;
use crate::tui::widgets::mouse::{Pointer, wheel_scroll};
use crate::tui::widgets::{Cursor, Move, scroll};
use questions::{evidence_line_of, line_at};
use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use state::inner;
use timeline::{Lanes, lane_at, lanes_page, lanes_rows};

const KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the execution, the event the evidence cites, or the near duplicate's group",
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
        "copy the execution id, the evidence citation or the group id (OSC 52)",
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

/// Fewest rows the questions pane keeps when the screen is stacked (four
/// lines inside its borders).
const MIN_QUESTIONS: u16 = 6;

/// Rows the questions pane keeps when the lanes would take more for their
/// stage times (six lines: a question, its answer and its evidence).
const QUESTIONS_ROOM: u16 = 8;

/// Rows of a lanes pane showing one compact lane (borders, the axis, the
/// lane); the legend then goes in the bottom border ([`timeline::draw`]).
const ONE_LANE: u16 = 5;

/// Splits the body: side by side from 120 columns, stacked below. Stacked,
/// the lanes pane takes the rows that show every lane in full, else every
/// lane compact but the selected one, when that leaves the questions
/// `QUESTIONS_ROOM` rows; else every lane compact (the questions keep at
/// least `MIN_QUESTIONS`); else what is left. With the questions focused
/// it gives them more room (every lane compact), but never fewer lanes
/// than fit.
pub fn areas(st: &Detail, body: Rect, theme: &Theme) -> Areas {
    let d = &st.detail;
    let [header, rest] = Layout::vertical([
        Constraint::Length(header::height(d, body.width, body.height)),
        Constraint::Fill(1),
    ])
    .areas(body);
    let [lanes, questions] = if body.width >= 120 {
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(rest)
    } else {
        let width = usize::from(rest.width.saturating_sub(2));
        let rows = |mode| lanes_rows(st, mode, width, rest.height, theme);
        let room = rest.height.saturating_sub(QUESTIONS_ROOM);
        let least = rest.height.saturating_sub(MIN_QUESTIONS);
        let (full, compact) = (rows(Lanes::AllFull), rows(Lanes::AllCompact));
        let h = match st.focus {
            Focus::Lanes if full <= room => full,
            Focus::Lanes if rows(Lanes::SelectedFull) <= room => rows(Lanes::SelectedFull),
            Focus::Lanes => compact.min(least),
            Focus::Evidence if compact <= least => compact.max(full.min(rest.height * 2 / 5)),
            Focus::Evidence => least,
        }
        .max(ONE_LANE.min(rest.height));
        Layout::vertical([Constraint::Length(h), Constraint::Fill(1)]).areas(rest)
    };
    Areas {
        header,
        lanes,
        questions,
    }
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
        draw(self, cx.theme, frame, cx.body);
    }

    fn anchor(&self, _: &crate::tui::data::Data) -> Anchor {
        Anchor::Group(self.detail.summary.group_id.clone())
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
    let a = areas(st, body, cx.theme);
    let n_lanes = st.detail.executions_detail.len();
    let page = lanes_page(st, &a, cx.theme);
    let qi = inner(a.questions);
    let q_page = usize::from(qi.height).max(1);
    let n_ev = st.items();
    // The mouse: a click on a lane selects it (a second click opens the
    // execution), a click on a cited evidence line jumps to the event it
    // cites, as Enter on it does; the wheel moves the lanes or scrolls
    // the questions, whichever is under it.
    if let Some(p) = Pointer::of(&action) {
        match p {
            Pointer::Click(at) if p.within(a.lanes) => {
                if let Some(i) = lane_at(st, &a, at, cx.theme) {
                    let again = st.focus == Focus::Lanes && st.lanes.selected == i;
                    st.focus = Focus::Lanes;
                    st.lanes.select(i, n_lanes);
                    if again {
                        return update(cx, st, Action::Open);
                    }
                }
            }
            Pointer::Click(at) if p.within(a.questions) => match line_at(st, a.questions, at) {
                Some(QLine::Evidence(i) | QLine::EvidenceMore(i, _)) => {
                    st.focus = Focus::Evidence;
                    st.ev.select(i, n_ev);
                    return update(cx, st, Action::Open);
                }
                Some(QLine::Near(n)) => {
                    st.focus = Focus::Evidence;
                    st.ev.select(st.evidence.len() + n, n_ev);
                    return update(cx, st, Action::Open);
                }
                _ if n_ev > 0 => st.focus = Focus::Evidence,
                _ => {}
            },
            _ if p.within(a.lanes) => st.lanes.step(p.wheel(), n_lanes),
            _ if p.within(a.questions) => wheel_scroll(&mut st.qscroll, p.wheel(), usize::MAX),
            _ => {}
        }
    }
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
            // A near duplicate opens its group (docs/design.md §5.13).
            if let Some(n) = st.selected_near() {
                return match Detail::new(data, n.index) {
                    Some(d) => Nav::Push(Box::new(d)),
                    None => Nav::Say(format!("group {} is gone", n.group_id)),
                };
            }
            if let Some(e) = st.evidence.get(st.ev.selected) {
                match e.target() {
                    EvidenceTarget::Event { execution, event } => {
                        return Nav::Push(Box::new(Execution::new(data, execution, Some(event))));
                    }
                    EvidenceTarget::Session(index) => {
                        return Nav::Push(Box::new(Sessions::new(data, Some(index))));
                    }
                    EvidenceTarget::Record(_) => {
                        return Nav::Say(format!("{}: {}", e.cite(), e.record));
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
            if let Some(n) = st.selected_near() {
                return Nav::Copy("the group id", n.group_id.clone());
            }
            if let Some(e) = st.evidence.get(st.ev.selected) {
                return Nav::Copy("the evidence citation", e.cite());
            }
        }
        _ => {}
    }
    // The layout depends on the focus; measure the panes again.
    let a = areas(st, body, cx.theme);
    st.lanes.settle(lanes_page(st, &a, cx.theme), n_lanes);
    let qi = inner(a.questions);
    let q_page = usize::from(qi.height).max(1);
    // Keep the selected evidence on screen after a move; page keys scroll freely.
    let lines = qlines(st, qi.width);
    let max_scroll = lines.len().saturating_sub(q_page);
    if matches!(
        action,
        Action::Down | Action::Up | Action::Top | Action::Bottom
    ) && st.focus == Focus::Evidence
        && let Some(l) = evidence_line_of(&lines, st.ev.selected, st.evidence.len())
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

/// Draws the screen: the header, the timeline, the questions.
fn draw(st: &Detail, theme: &Theme, frame: &mut Frame, body: Rect) {
    let a = areas(st, body, theme);
    header::draw(&st.detail, theme, frame, a.header, body.width);
    timeline::draw(st, &a, theme, frame);
    questions::draw(st, a.questions, theme, frame);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::screens::testing::{assert_binds, shared};

    /// The screen's keys ask for exactly what its update answers to.
    #[test]
    fn binds_what_it_answers_to() {
        use Action::*;
        let own = [Open, FocusNext, Copy, Export, Back];
        assert_binds(TABLE, &[&own[..], &shared()].concat());
    }
}

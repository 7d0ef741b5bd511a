//! Agent runs (the Sessions journal): each run's process identity,
//! authorization and end reason, and the executions its calls created or
//! attached to. Enter opens an execution.

use crate::query::SessionIdx;
use crate::tui::action::Action;
use crate::tui::data::Data;
use crate::tui::keys::table::{BACK, GLOBAL, MOVE};
use crate::tui::keys::{Bind, Ctx, KeyTable, Part, bind, code, k};
use crate::tui::screen::{Context, Jump, Nav, Opens, Registration, Screen};
use crate::tui::screens::execution::Execution;
use crate::tui::theme::Theme;
use crate::tui::widgets::text::{column_widths, datetime, esc, fit_all, select_if, widest, wrap};
use crate::tui::widgets::mouse::{Hit, Pointer, on_list, table_rows};
use crate::tui::widgets::{Cursor, Move};
use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

const KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected execution",
        Some("open"),
    ),
    bind(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between sessions and their executions",
        Some("pane"),
    ),
    bind(
        &[k('y')],
        Action::Copy,
        "copy the session id (OSC 52)",
        None,
    ),
    BACK,
];

/// Agent runs.
pub const TABLE: KeyTable = KeyTable {
    ctx: Ctx::new("sessions", "sessions"),
    parts: &[
        Part::Keys(KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

/// Agent runs, `3` from anywhere (each time from the first session), or
/// opened on one session from the evidence that cites it.
pub const SCREEN: Registration = Registration {
    keys: &[TABLE],
    jump: Some(Jump {
        bind: bind(
            &[k('3')],
            Action::ShowSessions,
            "sessions (agent runs)",
            None,
        ),
        opens: Opens::Fresh(open),
    }),
};

fn open(cx: &Context<'_>) -> Box<dyn Screen> {
    Box::new(Sessions::new(cx.data, None))
}

/// Which list has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    /// The sessions.
    #[default]
    Sessions,
    /// The selected session's executions.
    Executions,
}

/// The sessions screen's state.
#[derive(Debug, Clone, Default)]
pub struct Sessions {
    /// Selected session.
    pub sessions: Cursor,
    /// Selected execution of that session.
    pub execs: Cursor,
    /// Focused list.
    pub focus: Focus,
}

impl Sessions {
    /// Opens the screen, with session `select` selected.
    pub fn new(data: &Data, select: Option<SessionIdx>) -> Sessions {
        let mut st = Sessions::default();
        st.sessions
            .select(select.map_or(0, SessionIdx::get), data.inv.sessions().len());
        st
    }
}

/// Areas: sessions list, the selected session's fields, its executions.
fn areas(body: Rect, n: usize) -> [Rect; 3] {
    if body.width >= 120 {
        let [l, r] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Fill(1)]).areas(body);
        let [f, x] = Layout::vertical([Constraint::Length(10), Constraint::Fill(1)]).areas(r);
        [l, f, x]
    } else {
        let want = (n as u16).saturating_add(3);
        let cap = (body.height / 3).max(4);
        let [l, f, x] = Layout::vertical([
            Constraint::Length(want.min(cap)),
            Constraint::Length(7),
            Constraint::Fill(1),
        ])
        .areas(body);
        [l, f, x]
    }
}

fn pages(data: &Data, body: Rect) -> (usize, usize) {
    let [l, _, x] = areas(body, data.inv.sessions().len());
    (
        usize::from(l.height.saturating_sub(3)).max(1),
        usize::from(x.height.saturating_sub(3)).max(1),
    )
}

impl Screen for Sessions {
    fn ctx(&self) -> Ctx {
        TABLE.ctx
    }

    fn crumb(&self) -> String {
        "sessions".into()
    }

    fn update(&mut self, cx: &Context<'_>, action: Action) -> Nav {
        update(cx, self, action)
    }

    fn draw(&self, cx: &Context<'_>, frame: &mut Frame<'_>) {
        draw(cx.data, self, cx.theme, frame, cx.body);
    }
}

/// Applies an action.
fn update(cx: &Context<'_>, st: &mut Sessions, action: Action) -> Nav {
    let (data, body) = (cx.data, cx.body);
    let n = data.inv.sessions().len();
    let (sp, xp) = pages(data, body);
    let execs = |st: &Sessions| {
        data.session_execs
            .get(st.sessions.selected)
            .map_or(0, Vec::len)
    };
    let before = st.sessions.selected;
    // The mouse: a click focuses the list under it and selects a row (a
    // second click opens it); the wheel moves the list under it.
    let action = match Pointer::of(&action) {
        None => action,
        Some(p) => {
            let [la, _, xa] = areas(body, n);
            let was = st.focus;
            let mut hit = on_list(&mut st.sessions, la, table_rows(la), n, p);
            if hit != Hit::Miss {
                st.focus = Focus::Sessions;
            } else {
                let l = execs(st);
                hit = on_list(&mut st.execs, xa, table_rows(xa), l, p);
                if hit != Hit::Miss && l > 0 {
                    st.focus = Focus::Executions;
                }
            }
            // A first click on a list without the focus only focuses it.
            if hit != Hit::Open || st.focus != was {
                return settle(cx, st, before);
            }
            Action::Open
        }
    };
    let (cur, len, page) = match st.focus {
        Focus::Sessions => (&mut st.sessions, n, sp),
        Focus::Executions => {
            let l = execs(st);
            (&mut st.execs, l, xp)
        }
    };
    if let Some(m) = Move::of(&action) {
        cur.apply(m, len, page);
    }
    match action {
        Action::Back => return Nav::Back,
        Action::FocusNext => {
            st.focus = match st.focus {
                Focus::Sessions if execs(st) > 0 => Focus::Executions,
                _ => Focus::Sessions,
            }
        }
        Action::Open => {
            if st.focus == Focus::Sessions && execs(st) > 0 {
                st.focus = Focus::Executions;
            } else if let Some(&xi) = data
                .session_execs
                .get(st.sessions.selected)
                .and_then(|v| v.get(st.execs.selected))
            {
                return Nav::Push(Box::new(Execution::new(data, xi, None)));
            }
        }
        Action::Copy => {
            if let Some(s) = data.inv.sessions().get(st.sessions.selected) {
                return Nav::Copy("the session id", s.session_id.clone());
            }
        }
        _ => {}
    }
    settle(cx, st, before)
}

/// After an update: another session starts its executions from the first;
/// both selections stay on screen.
fn settle(cx: &Context<'_>, st: &mut Sessions, before: usize) -> Nav {
    let data = cx.data;
    let n = data.inv.sessions().len();
    let (sp, xp) = pages(data, cx.body);
    if st.sessions.selected != before {
        st.execs = Cursor::default();
    }
    st.sessions.settle(sp, n);
    let l = data
        .session_execs
        .get(st.sessions.selected)
        .map_or(0, Vec::len);
    st.execs.settle(xp, l);
    Nav::Stay
}

fn focus_style(theme: &Theme, on: bool) -> Style {
    if on { theme.accent } else { theme.muted }
}

/// Draws the screen.
fn draw(data: &Data, st: &Sessions, theme: &Theme, frame: &mut Frame, body: Rect) {
    let inv = &data.inv;
    let sessions = inv.sessions();
    let [la, fa, xa] = areas(body, sessions.len());
    if sessions.is_empty() {
        let formats: Vec<String> = inv
            .journals()
            .iter()
            .map(|j| j.format.to_string())
            .collect();
        frame.render_widget(
            Paragraph::new(vec![
                Line::raw(
                    "No session records: the journals do not say which agent run sent each call.",
                ),
                Line::styled(
                    format!("Formats loaded: {}", formats.join(", ")),
                    theme.muted,
                ),
            ])
            .block(
                Block::bordered()
                    .title(" Sessions (0) ")
                    .border_style(theme.muted),
            ),
            body,
        );
        return;
    }
    // Sessions: the id column as wide as the longest id (an id is never
    // cut); other cells cut with `…`, whole in the fields pane.
    let h = usize::from(la.height.saturating_sub(3));
    let session_w = widest(sessions.iter().map(|s| s.session_id.as_str()), 7)
        .min(la.width.saturating_sub(2) / 2);
    // How a session ended as wide as the longest (up to 14 columns); the
    // actor takes the rest.
    let end_w = widest(
        sessions.iter().map(|s| s.end_reason.as_deref().unwrap_or("-")),
        3,
    )
    .min(14);
    let widths = [
        Constraint::Length(session_w),
        Constraint::Length(7),
        Constraint::Length(end_w),
        Constraint::Length(5),
        Constraint::Fill(1),
    ];
    let cols = column_widths(la.width.saturating_sub(2), &widths, 1);
    let rows = st.sessions.window(h, sessions.len()).map(|i| {
        let s = &sessions[i];
        let pid = s
            .process
            .as_ref()
            .and_then(|p| p.pid)
            .map(|p| p.to_string())
            .unwrap_or_else(|| "-".into());
        let sel = i == st.sessions.selected;
        let cells = [
            Line::raw(esc(&s.session_id).into_owned()),
            Line::from(pid).right_aligned(),
            Line::raw(esc(s.end_reason.as_deref().unwrap_or("-")).into_owned()),
            Line::from(data.session_execs.get(i).map_or(0, Vec::len).to_string()).right_aligned(),
            Line::raw(esc(s.actor.as_deref().unwrap_or("-")).into_owned()),
        ];
        Row::new(
            fit_all(cells, &cols)
                .into_iter()
                .map(|l| Cell::from(select_if(l, sel, theme.selection))),
        )
    });
    frame.render_widget(
        Table::new(rows, widths)
        .header(Row::new(["SESSION", "PID", "END", "EXECS", "ACTOR"]).style(theme.accent))
        .block(
            Block::bordered()
                .title(format!(" Sessions ({}) ", sessions.len()))
                .border_style(focus_style(theme, st.focus == Focus::Sessions)),
        ),
        la,
    );
    // The selected session.
    let Some(s) = sessions.get(st.sessions.selected) else {
        return;
    };
    let opt = |v: Option<&str>| esc(v.unwrap_or("-")).into_owned();
    let process = s.process.as_ref().map_or_else(
        || "not recorded".to_string(),
        |p| {
            format!(
                "pid {} · {} · started {}",
                p.pid.map_or_else(|| "-".into(), |x| x.to_string()),
                esc(p.name.as_deref().unwrap_or("-")),
                datetime(p.started_at)
            )
        },
    );
    // A value wider than the pane goes on below itself, under the values.
    let room = usize::from(fa.width.saturating_sub(2)).saturating_sub(14).max(8);
    let field = |k: &str, v: String| -> Vec<Line<'static>> {
        wrap(&v, room)
            .into_iter()
            .enumerate()
            .map(|(i, part)| {
                let key = if i == 0 { format!("{k:<14}") } else { " ".repeat(14) };
                Line::from(vec![Span::styled(key, theme.muted), Span::raw(part)])
            })
            .collect()
    };
    let mut lines = [
        field("process", process),
        field("actor", opt(s.actor.as_deref())),
        field("authorization", opt(s.authorization.as_deref())),
        field(
            "run",
            format!(
                "{} → {} · ended: {}",
                datetime(s.started_at),
                datetime(s.ended_at),
                opt(s.end_reason.as_deref())
            ),
        ),
        field(
            "client",
            format!(
                "{} · MCP session {}",
                opt(s.client.as_deref()),
                opt(s.mcp_session_id.as_deref())
            ),
        ),
    ]
    .concat();
    for (k, v) in s.extra.iter().take(3) {
        lines.extend(field(&esc(k), esc(&v.to_string()).into_owned()));
    }
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(format!(" Session {} ", esc(&s.session_id)))
                .border_style(theme.muted),
        ),
        fa,
    );
    // Its executions.
    let execs = data
        .session_execs
        .get(st.sessions.selected)
        .map_or(&[][..], Vec::as_slice);
    let h = usize::from(xa.height.saturating_sub(3));
    let window = st.execs.window(h, execs.len());
    let ids: Vec<String> = window
        .clone()
        .map(|i| esc(&inv.execution_summary(execs[i]).execution_id).into_owned())
        .collect();
    let id_w = widest(ids.iter().map(String::as_str), 9).min(xa.width.saturating_sub(2) / 2);
    // The tool as wide as the longest one (up to a quarter of the pane)
    // and the verdict as wide as its longest: the state takes the rest.
    let tools: Vec<String> = window
        .clone()
        .filter_map(|i| inv.group_of(execs[i]).map(|g| esc(g.tool()).into_owned()))
        .collect();
    let tool_w = widest(tools.iter().map(String::as_str), 4).min(xa.width / 4);
    let verdict_w = widest(
        window.clone().filter_map(|i| inv.group_of(execs[i]).map(|g| g.verdict().as_str())),
        13,
    )
    .saturating_add(2);
    let widths = [
        Constraint::Length(id_w),
        Constraint::Length(tool_w),
        Constraint::Fill(1),
        Constraint::Length(verdict_w),
    ];
    let cols = column_widths(xa.width.saturating_sub(2), &widths, 1);
    let rows = window.map(|i| {
        let xi = execs[i];
        let x = inv.execution_summary(xi);
        let g = inv.group_of(xi);
        let sel = i == st.execs.selected && st.focus == Focus::Executions;
        let cells = [
            Line::raw(esc(&x.execution_id).into_owned()),
            Line::raw(g.map(|g| esc(g.tool()).into_owned()).unwrap_or_default()),
            Line::raw(x.state),
            g.map_or_else(Line::default, |g| {
                let mark = if x.resolution.is_some() { " ✎" } else { "" };
                Line::styled(
                    format!("{}{mark}", g.verdict().as_str()),
                    theme.severity(g.severity()),
                )
            }),
        ];
        Row::new(
            fit_all(cells, &cols)
                .into_iter()
                .map(|l| Cell::from(select_if(l, sel, theme.selection))),
        )
    });
    frame.render_widget(
        Table::new(rows, widths)
        .header(Row::new(["EXECUTION", "TOOL", "STATE", "GROUP VERDICT"]).style(theme.accent))
        .block(
            Block::bordered()
                .title(format!(" Executions of this run ({}) ", execs.len()))
                .border_style(focus_style(theme, st.focus == Focus::Executions)),
        ),
        xa,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::screens::testing::{assert_binds, shared};

    /// The screen's keys ask for exactly what its update answers to.
    #[test]
    fn binds_what_it_answers_to() {
        use Action::*;
        let own = [Open, FocusNext, Copy, Back];
        assert_binds(TABLE, &[&own[..], &shared()].concat());
    }
}

//! The groups table: one row per group of calls that share an intent, worst
//! first by default, sortable, filtered by verdict, tool and a fuzzy query
//! over tool, actor, scope, target, arguments and ids with the matched
//! characters highlighted.
//!
//! The query's characters must appear in order within one field (the
//! SkimMatcherV2 rule). Where some group holds them side by side (`cat` in
//! `catalog`), only such groups are shown and counted: a match with the
//! letters scattered (`c…a…t` in `com.example.agent`) is weaker, and is
//! shown only when no group matches better (the filter line says how many
//! weaker matches it leaves out). The table keeps its sort.
//!
//! The rows are index vectors kept in the state and rebuilt when a filter
//! or the sort changes, never per frame; a frame builds only the rows on
//! screen.

mod draw;
mod rows;

pub use rows::{Groups, MAX_QUERY, SortKey};

use crate::query::Verdict;
use crate::tui::action::Action;
use crate::tui::data::Data;
use crate::tui::dialog;
use crate::tui::keys::table::{GLOBAL, MOVE};
use crate::tui::keys::{Bind, Ctx, KeyTable, Part, Typing, bind, code, ctrl, k};
use crate::tui::screen::{Anchor, Context, Jump, Nav, Opens, Registration, Screen};
use crate::tui::screens::detail::Detail;
use crate::tui::widgets::Move;
use crate::tui::widgets::mouse::{Hit, Pointer, on_list, table_rows};
use draw::{draw, page, table_area};
use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use rows::push_query;

const KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected group",
        Some("open"),
    ),
    bind(
        &[k('/')],
        Action::StartFilter,
        "filter: tool, actor, scope, target, arguments, ids",
        Some("filter"),
    ),
    bind(&[k('n')], Action::NextMatch, "next match", None),
    bind(&[k('N')], Action::PrevMatch, "previous match", None),
    bind(
        &[k('f')],
        Action::ToggleFilterMode,
        "filter hides rows / only highlights matches",
        None,
    ),
    bind(
        &[k('s')],
        Action::SortNext,
        "sort by the next column",
        Some("sort"),
    ),
    bind(&[k('S')], Action::SortReverse, "reverse the sort", None),
    bind(
        &[k('v')],
        Action::CycleVerdict,
        "show one verdict (cycles; back to all)",
        Some("verdict"),
    ),
    bind(
        &[k('t')],
        Action::CycleTool,
        "show one tool (cycles; back to all)",
        None,
    ),
    bind(
        &[k('a')],
        Action::ToggleAll,
        "every group / only those worth a look",
        None,
    ),
    bind(&[k('y')], Action::Copy, "copy the group id (OSC 52)", None),
    bind(
        &[k('E')],
        Action::Export,
        "export a Markdown postmortem of every listed group to a file",
        Some("export"),
    ),
    bind(
        &[code(KeyCode::Esc), k('h'), code(KeyCode::Left)],
        Action::Back,
        "clear filters, then back to the overview",
        None,
    ),
];

/// The groups table.
pub const TABLE: KeyTable = KeyTable {
    ctx: Ctx::new("groups", "groups"),
    parts: &[
        Part::Keys(KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

const FILTER_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter)],
        Action::FilterConfirm,
        "keep the filter",
        Some("keep"),
    ),
    bind(
        &[code(KeyCode::Esc)],
        Action::FilterCancel,
        "drop the filter",
        Some("drop"),
    ),
    bind(
        &[code(KeyCode::Backspace)],
        Action::FilterBackspace,
        "delete a character",
        None,
    ),
    bind(&[code(KeyCode::Down)], Action::Down, "next row", None),
    bind(&[code(KeyCode::Up)], Action::Up, "previous row", None),
    bind(&[ctrl('c')], Action::Quit, "quit", None),
];

/// Typing the groups filter.
pub const FILTER_TABLE: KeyTable = KeyTable {
    ctx: Ctx::new("groups_filter", "groups filter").typing(Typing::Filter),
    parts: &[Part::Keys(FILTER_KEYS)],
};

/// The groups table, `2` from anywhere; it keeps its filters, sort and
/// selection while the user is elsewhere.
pub const SCREEN: Registration = Registration {
    keys: &[TABLE, FILTER_TABLE],
    jump: Some(Jump {
        bind: bind(&[k('2')], Action::ShowGroups, "groups table", None),
        opens: Opens::Kept(open),
    }),
};

fn open(cx: &Context<'_>) -> Box<dyn Screen> {
    Box::new(Groups::new(cx.data))
}

impl Screen for Groups {
    fn ctx(&self) -> Ctx {
        if self.editing {
            FILTER_TABLE.ctx
        } else {
            TABLE.ctx
        }
    }

    fn crumb(&self) -> String {
        "groups".into()
    }

    fn update(&mut self, cx: &Context<'_>, action: Action) -> Nav {
        update(cx, self, action)
    }

    fn draw(&self, cx: &Context<'_>, frame: &mut Frame<'_>) {
        draw(cx, self, frame);
    }

    fn anchor(&self, data: &Data) -> Anchor {
        self.selected_group()
            .and_then(|g| data.inv.group_at(g))
            .map_or(Anchor::Nothing, |g| Anchor::Group(g.id().to_string()))
    }

    fn refresh(&mut self, cx: &Context<'_>, anchor: Anchor) {
        let data = cx.data;
        self.rebuild(data);
        let Anchor::Group(id) = anchor else {
            return;
        };
        if let Some(pos) = data
            .inv
            .group(&id)
            .ok()
            .map(|g| g.index())
            .and_then(|g| self.rows.iter().position(|&r| r == g))
        {
            self.cursor.select(pos, self.rows.len());
        }
    }
}

/// Applies an action.
fn update(cx: &Context<'_>, st: &mut Groups, action: Action) -> Nav {
    let (data, body) = (cx.data, cx.body);
    let keep = st.selected_group();
    let mut nav = Nav::Stay;
    if let Some(p) = Pointer::of(&action) {
        let pane = table_area(body, st);
        if on_list(&mut st.cursor, pane, table_rows(pane), st.rows.len(), p) == Hit::Open {
            return update(cx, st, Action::Open);
        }
        st.cursor.settle(page(body, st).max(1), st.rows.len());
        return nav;
    }
    if let Some(m) = Move::of(&action) {
        let page = page(body, st);
        st.cursor.apply(m, st.rows.len(), page);
        st.cursor.settle(page.max(1), st.rows.len());
        return nav;
    }
    match action {
        Action::Open => {
            if let Some(d) = st.selected_group().and_then(|g| Detail::new(data, g)) {
                nav = Nav::Push(Box::new(d));
            }
        }
        Action::Export => {
            // Every listed group, in the table's order.
            let ids = || {
                st.rows
                    .iter()
                    .filter_map(|&g| data.inv.group_at(g).map(|g| g.id().to_string()))
                    .collect()
            };
            return match dialog::start_export(&data.inv, cx.job, ids, false, cx.export_dir) {
                Ok(d) => Nav::Dialog(d),
                Err(why) => Nav::Say(why.to_string()),
            };
        }
        Action::Back => {
            if st.filtered() {
                st.query.clear();
                st.verdict = None;
                st.tool = None;
                st.rebuild(data);
                nav = Nav::Say("filters cleared".into());
            } else {
                nav = Nav::Back;
            }
        }
        Action::StartFilter => st.editing = true,
        Action::FilterChar(c) => {
            if push_query(&mut st.query, c.encode_utf8(&mut [0; 4])) {
                nav = Nav::Say(format!(
                    "the filter holds at most {MAX_QUERY} characters; the rest was dropped"
                ));
            } else {
                st.refilter(data, keep);
            }
        }
        Action::Paste(text) if st.editing => {
            let cut = push_query(&mut st.query, &text);
            st.refilter(data, keep);
            if cut {
                nav = Nav::Say(format!(
                    "the filter holds at most {MAX_QUERY} characters; the rest of the paste was dropped"
                ));
            }
        }
        Action::FilterBackspace => {
            st.query.pop();
            st.refilter(data, keep);
        }
        Action::FilterConfirm => st.editing = false,
        Action::FilterCancel => {
            st.editing = false;
            st.query.clear();
            st.refilter(data, keep);
        }
        Action::NextMatch | Action::PrevMatch if !st.step_match(action == Action::NextMatch) => {
            nav = Nav::Say("no filter: / starts one".into());
        }
        Action::ToggleFilterMode => {
            st.hide_unmatched = !st.hide_unmatched;
            st.refilter(data, keep);
            nav = Nav::Say(
                if st.hide_unmatched {
                    "filter hides rows that do not match"
                } else {
                    "filter highlights matches; n/N step through them"
                }
                .into(),
            );
        }
        Action::SortNext => {
            st.sort = st.sort.next();
            st.reverse = false;
            st.rebuild(data);
        }
        Action::SortReverse => {
            st.reverse = !st.reverse;
            st.rebuild(data);
        }
        Action::CycleVerdict => {
            let present: Vec<Verdict> = data
                .verdict_counts
                .clone()
                .into_iter()
                .map(|(v, _)| v)
                .collect();
            st.verdict = match st.verdict {
                None => present.first().copied(),
                Some(v) => present
                    .iter()
                    .position(|p| *p == v)
                    .and_then(|i| present.get(i + 1))
                    .copied(),
            };
            st.rebuild(data);
        }
        Action::CycleTool => {
            st.tool = match &st.tool {
                None => data.tools.first().cloned(),
                Some(t) => data
                    .tools
                    .iter()
                    .position(|x| x == t)
                    .and_then(|i| data.tools.get(i + 1))
                    .cloned(),
            };
            st.rebuild(data);
        }
        Action::ToggleAll => {
            st.all = !st.all;
            st.rebuild(data);
        }
        Action::Copy => {
            if let Some(g) = st.selected_group().and_then(|g| data.inv.group_at(g)) {
                nav = Nav::Copy("the group id", g.id().to_string());
            }
        }
        _ => {}
    }
    st.cursor.settle(page(body, st).max(1), st.rows.len());
    nav
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::screens::testing::{assert_binds, shared};

    /// The screen's keys ask for exactly what its update answers to.
    #[test]
    fn binds_what_it_answers_to() {
        use Action::*;
        let own = [
                Open,
                StartFilter,
                NextMatch,
                PrevMatch,
                ToggleFilterMode,
                SortNext,
                SortReverse,
                CycleVerdict,
                CycleTool,
                ToggleAll,
                Copy,
                Export,
                Back,
            ];
        assert_binds(TABLE, &[&own[..], &shared()].concat());
        assert_binds(
            FILTER_TABLE,
            &[FilterConfirm, FilterCancel, FilterBackspace, Down, Up, Quit],
        );    }
}

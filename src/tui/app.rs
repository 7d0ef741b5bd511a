//! The TUI state and how actions change it. Drawing lives in
//! [`super::render`] and the screen modules; it only reads this state.

use super::action::Action;
use super::data::{Data, Load, LoadMsg, LoadProgress};
use super::dialog::{self, Dialog, DialogNav};
use super::jobs::{Job, JobMsg};
use super::keys::{Ctx, KeyMap, table};
use super::screens::{detail, execution, groups, overview, review, sessions};
use super::theme::Theme;
use super::widgets::{Move, scroll};
use crate::query::{GroupIdx, Investigation, QueryError, Reanalysis};
use crate::sanitize::escape;
use ratatui::layout::Rect;
use std::path::PathBuf;
use std::sync::Arc;

/// Something the event loop must do outside the state: the state asks,
/// the driver performs.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Put this text on the clipboard (OSC 52).
    Clipboard(String),
    /// Run this job off the UI thread ([`super::jobs::spawn`]) and feed
    /// its messages to [`App::on_job`].
    Job(Box<Job>),
}

/// A screen on the navigation stack with its own state.
#[derive(Debug)]
pub enum View {
    /// The overview (its state lives in [`App::overview`]).
    Overview,
    /// The groups table (its state lives in [`App::groups`]).
    Groups,
    /// One group.
    Detail(Box<detail::State>),
    /// One execution.
    Execution(Box<execution::State>),
    /// Agent runs.
    Sessions(Box<sessions::State>),
    /// The review queue.
    Review(Box<review::State>),
}

/// The whole TUI state.
#[derive(Debug)]
pub struct App {
    /// Styles.
    pub theme: Theme,
    /// The key table: what each key does where; help and the key line
    /// show it.
    pub keys: KeyMap,
    /// Loading or loaded data.
    pub load: Load,
    /// Screens, the current one last. Never empty; the overview is first.
    pub stack: Vec<View>,
    /// The overview.
    pub overview: overview::State,
    /// The groups table.
    pub groups: groups::State,
    /// Help is open, with its scroll position.
    pub help: Option<usize>,
    /// The terminal size, for page lengths.
    pub area: Rect,
    /// A one-line message for the key line (cleared by the next action).
    pub status: Option<String>,
    /// Work for the event loop (clipboard writes, background jobs).
    pub effects: Vec<Effect>,
    /// The folder export file names are relative to (the current one,
    /// absolute so that the dialog can say where).
    pub export_dir: PathBuf,
    /// A dialog over the screen (a decision, an export), if open.
    pub dialog: Option<Dialog>,
    /// What the background job is doing, while one runs (one at a time).
    pub job: Option<String>,
    /// Set by [`Action::Quit`].
    pub quit: bool,
}

/// What a screen's update asks of the app.
#[derive(Debug)]
pub enum Nav {
    /// Stay on this screen.
    Stay,
    /// Go back one screen.
    Back,
    /// Open another screen on top.
    Push(View),
    /// Copy a value to the clipboard, naming it in the status line.
    Copy(&'static str, String),
    /// Show a message on the key line.
    Say(String),
}

impl App {
    /// A new app waiting for journals with these names.
    pub fn new(journals: Vec<String>, theme: Theme, area: Rect) -> App {
        App {
            theme,
            keys: table::keymap(),
            load: Load::Loading(LoadProgress {
                journals,
                ..LoadProgress::default()
            }),
            stack: vec![View::Overview],
            overview: overview::State::default(),
            groups: groups::State::default(),
            help: None,
            area,
            status: None,
            effects: Vec::new(),
            export_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            dialog: None,
            job: None,
            quit: false,
        }
    }

    /// A ready app over an investigation (tests and benches use this).
    pub fn ready(inv: Investigation, theme: Theme, area: Rect) -> App {
        let mut app = App::new(Vec::new(), theme, area);
        app.on_load(LoadMsg::Done(Ok(Box::new(Data::new(inv)))));
        app
    }

    /// The loaded data, if ready.
    pub fn data(&self) -> Option<&Data> {
        match &self.load {
            Load::Ready(d) => Some(d),
            _ => None,
        }
    }

    /// Why the journals could not be loaded, if they could not (the
    /// error names file and line; the TUI exits 2 with it).
    pub fn load_error(&self) -> Option<&QueryError> {
        match &self.load {
            Load::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Takes the load error out, for the caller to return once the TUI
    /// ends (the loading screen then shows no message; nothing draws it).
    pub fn take_load_error(&mut self) -> Option<QueryError> {
        match std::mem::replace(&mut self.load, Load::Loading(LoadProgress::default())) {
            Load::Failed(e) => Some(e),
            other => {
                self.load = other;
                None
            }
        }
    }

    /// The loaded data for a background job to read.
    pub fn shared_data(&self) -> Option<Arc<Data>> {
        match &self.load {
            Load::Ready(d) => Some(Arc::clone(d)),
            _ => None,
        }
    }

    /// The current screen.
    pub fn view(&self) -> &View {
        self.stack.last().unwrap_or(&View::Overview)
    }

    /// Which key table applies now.
    pub fn ctx(&self) -> Ctx {
        if self.help.is_some() {
            return table::HELP.ctx;
        }
        self.screen_ctx()
    }

    /// Which key table the current screen (or its dialog) uses, under
    /// help if help is open.
    pub fn screen_ctx(&self) -> Ctx {
        if self.data().is_none() {
            return table::LOADING.ctx;
        }
        if let Some(d) = &self.dialog {
            return d.ctx();
        }
        match self.view() {
            View::Overview => table::OVERVIEW.ctx,
            View::Groups if self.groups.editing => table::FILTER_INPUT.ctx,
            View::Groups => table::GROUPS.ctx,
            View::Detail(_) => table::DETAIL.ctx,
            View::Execution(_) => table::EXECUTION.ctx,
            View::Sessions(_) => table::SESSIONS.ctx,
            View::Review(_) => table::REVIEW.ctx,
        }
    }

    /// Applies a loader message.
    pub fn on_load(&mut self, msg: LoadMsg) {
        match msg {
            LoadMsg::Progress(p) => {
                if let Load::Loading(lp) = &mut self.load {
                    lp.progress = Some(p);
                }
            }
            LoadMsg::Analysing => {
                if let Load::Loading(lp) = &mut self.load {
                    lp.analysing = true;
                }
            }
            LoadMsg::Done(Err(e)) => self.load = Load::Failed(e),
            LoadMsg::Done(Ok(d)) => {
                self.groups = groups::State::new(&d);
                self.overview = overview::State::default();
                self.load = Load::Ready(Arc::from(d));
            }
        }
    }

    /// Applies an action.
    pub fn update(&mut self, action: Action) {
        self.status = None;
        match action {
            Action::Quit => {
                self.quit = true;
                return;
            }
            Action::Resize(w, h) => {
                self.area = Rect::new(0, 0, w, h);
                return;
            }
            Action::ToggleHelp => {
                self.help = if self.help.is_some() { None } else { Some(0) };
                return;
            }
            Action::CycleTheme => {
                self.theme = self.theme.next_builtin();
                self.status = Some(format!("theme {}", self.theme.name));
                return;
            }
            _ => {}
        }
        if let Some(offset) = &mut self.help {
            match Move::of(&action) {
                _ if action == Action::Back => self.help = None,
                Some(m @ (Move::Up | Move::Down)) => scroll(offset, m, 1, usize::MAX),
                _ => {}
            }
            return;
        }
        let body = super::render::body_area(self.area);
        let Load::Ready(data) = &self.load else {
            return;
        };
        if let Some(d) = &mut self.dialog {
            match dialog::update(d, action) {
                DialogNav::Stay => {}
                DialogNav::Close(msg) => {
                    self.dialog = None;
                    self.status = msg;
                }
                DialogNav::Start(job) => {
                    // A decision dialog stays to show its progress; an
                    // export runs while the user reads on.
                    if matches!(job, Job::Export(_)) {
                        self.dialog = None;
                    }
                    self.job = Some(job.describe());
                    self.effects.push(Effect::Job(Box::new(job)));
                }
            }
            return;
        }
        match (&action, self.view()) {
            (Action::Decide, View::Review(st)) => {
                let item = data.queue.get(st.cursor.selected);
                match dialog::start_decision(&data.inv, item, self.job.as_deref()) {
                    Ok(d) => self.dialog = Some(d),
                    Err(why) => self.status = Some(why.to_string()),
                }
                return;
            }
            (Action::Export, View::Groups | View::Detail(_)) => {
                let single = matches!(self.view(), View::Detail(_));
                let ids = || match self.view() {
                    View::Detail(st) => vec![st.detail.summary.group_id.clone()],
                    View::Groups => self
                        .groups
                        .rows
                        .iter()
                        .filter_map(|&g| data.inv.group_at(g).map(|g| g.id().to_string()))
                        .collect(),
                    _ => Vec::new(),
                };
                match dialog::start_export(
                    &data.inv,
                    self.job.as_deref(),
                    ids,
                    single,
                    &self.export_dir,
                ) {
                    Ok(d) => self.dialog = Some(d),
                    Err(why) => self.status = Some(why.to_string()),
                }
                return;
            }
            _ => {}
        }
        match action {
            Action::ShowReview => {
                self.stack.truncate(1);
                self.stack.push(View::Review(Box::default()));
                return;
            }
            Action::ShowOverview => {
                self.stack.truncate(1);
                return;
            }
            Action::ShowGroups => {
                self.stack.truncate(1);
                self.stack.push(View::Groups);
                return;
            }
            Action::ShowSessions => {
                self.stack.truncate(1);
                self.stack
                    .push(View::Sessions(Box::new(sessions::State::new(data, None))));
                return;
            }
            _ => {}
        }
        let top = self.stack.len() - 1;
        let nav = match &mut self.stack[top] {
            View::Overview => overview::update(data, &mut self.overview, action, body),
            View::Groups => groups::update(data, &mut self.groups, action, body),
            View::Detail(st) => detail::update(data, st, action, body),
            View::Execution(st) => execution::update(data, st, action, body),
            View::Sessions(st) => sessions::update(data, st, action, body),
            View::Review(st) => review::update(data, st, action, body, &self.theme),
        };
        match nav {
            Nav::Stay => {}
            Nav::Back => {
                if self.stack.len() > 1 {
                    self.stack.pop();
                }
            }
            Nav::Push(v) => self.stack.push(v),
            Nav::Copy(what, text) => {
                self.status = Some(format!(
                    "copied {what} ({}) to the clipboard via OSC 52, where the terminal allows it",
                    crate::tui::widgets::text::count(text.len(), "byte", "bytes")
                ));
                self.effects.push(Effect::Clipboard(text));
            }
            Nav::Say(s) => self.status = Some(s),
        }
    }

    /// Applies a background job's message: progress, a decision written
    /// (or not), the new analysis, an export written (or not).
    pub fn on_job(&mut self, msg: JobMsg) {
        match msg {
            JobMsg::Progress(p) => {
                if let Some(Dialog::Decide(d)) = &mut self.dialog {
                    d.progress = Some(p.clone());
                }
                self.job = Some(p);
            }
            JobMsg::Written(w) => {
                let super::jobs::Written { event, record } = *w;
                let failed = match &event {
                    crate::review::Event::WriteFailed(e) => Some(e.clone()),
                    _ => None,
                };
                if let Some(Dialog::Decide(d)) = &mut self.dialog {
                    d.flow.handle(event);
                    d.record = record;
                    d.progress = None;
                }
                if let Some(e) = failed {
                    self.job = None;
                    self.status = Some(format!("not recorded: {}", escape(&e)));
                }
            }
            JobMsg::Reanalysed(r) => {
                self.job = None;
                let msg = self.apply_reanalysis(*r);
                self.dialog = None;
                self.status = Some(msg);
            }
            JobMsg::Failed(why) => {
                self.job = None;
                self.dialog = None;
                self.status = Some(format!(
                    "the background job stopped ({}); a case file entry is written whole or not at all: reopen retrace to see where it stands",
                    escape(&why)
                ));
            }
            JobMsg::Exported(res) => {
                self.job = None;
                self.status = Some(match res {
                    Ok(done) => format!(
                        "wrote the Markdown postmortem of {} to {} ({})",
                        done.what,
                        escape(&done.path.display().to_string()),
                        crate::tui::widgets::text::count(done.bytes, "byte", "bytes")
                    ),
                    Err(e) => escape(&e.to_string()).into_owned(),
                });
            }
        }
    }

    /// Swaps in a new analysis, keeps every screen on the same group,
    /// execution and queue item, and says what changed.
    fn apply_reanalysis(&mut self, r: Reanalysis) -> String {
        let Load::Ready(arc) = &mut self.load else {
            return "the journals are not loaded".into();
        };
        // Ids of what is selected, before the group order changes.
        let id_of = |d: &Data, g: Option<GroupIdx>| {
            g.and_then(|g| d.inv.group_at(g))
                .map(|g| g.id().to_string())
        };
        let groups_sel = id_of(arc, self.groups.selected_group());
        let worst_sel = id_of(arc, arc.worst.get(self.overview.cursor.selected).copied());
        let Some(data) = Arc::get_mut(arc) else {
            return "the new verdicts could not be shown (the data is still in use); reopen retrace to see them"
                .into();
        };
        data.reanalysed(r);
        let data: &Data = data;
        // Screens.
        self.groups.rebuild(data);
        if let Some(pos) = groups_sel
            .and_then(|id| data.inv.group(&id).ok().map(|g| g.index()))
            .and_then(|g| self.groups.rows.iter().position(|&r| r == g))
        {
            self.groups.cursor.select(pos, self.groups.rows.len());
        }
        let worst_pos = worst_sel
            .and_then(|id| data.inv.group(&id).ok().map(|g| g.index()))
            .and_then(|g| data.worst.iter().position(|&w| w == g))
            .unwrap_or(self.overview.cursor.selected);
        self.overview.cursor.select(worst_pos, data.worst.len());
        for v in &mut self.stack {
            match v {
                View::Detail(st) => {
                    if let Some(n) = data
                        .inv
                        .group(&st.detail.summary.group_id)
                        .ok()
                        .map(|g| g.index())
                        .and_then(|g| detail::State::new(data, g))
                    {
                        st.refresh(n);
                    }
                }
                View::Execution(st) => st.refresh(data),
                View::Review(st) => st.refresh(data),
                View::Overview | View::Groups | View::Sessions(_) => {}
            }
        }
        // What changed.
        let Some(Dialog::Decide(d)) = &self.dialog else {
            return "analysed again".into();
        };
        let item = &d.item;
        let after = data
            .inv
            .group(&item.group_id)
            .map(|g| g.verdict())
            .unwrap_or(item.group_verdict);
        let change = if after == item.group_verdict {
            format!("{after} (unchanged)")
        } else {
            format!("{} → {after}", item.group_verdict)
        };
        // The verdict change first: the line may be cut on a narrow terminal.
        let mut msg = format!("recorded {}", escape(&item.execution_id));
        if let Some(r) = &d.record {
            msg.push_str(&format!(" {}", r.payload.decision));
        }
        msg.push_str(&format!(" · group {}: {change}", item.group_id));
        if let Some(r) = &d.record {
            msg.push_str(&format!(
                " · by {} at {}, case entry {}",
                escape(&r.payload.reviewer),
                r.at.format("%Y-%m-%d %H:%M:%SZ"),
                r.seq
            ));
        }
        if let Some(n) = data
            .inv
            .notes()
            .iter()
            .find(|n| n.contains(item.execution_id.as_str()))
        {
            msg.push_str(&format!(" · note: {}", escape(n)));
        }
        msg
    }
}

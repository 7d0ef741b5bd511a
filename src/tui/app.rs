//! The TUI state and how actions change it. Drawing lives in
//! [`super::render`] and the screen modules; it only reads this state.

use super::action::Action;
use super::keys::Ctx;
use super::screens::{detail, execution, groups, overview, sessions};
use super::theme::Theme;
use crate::journal::Progress;
use crate::query::{CallRate, GroupFilter, Investigation};
use ratatui::layout::Rect;

/// Buckets of the call-rate series kept for the overview sparkline; the
/// sparkline folds them to its width.
pub const RATE_BUCKETS: usize = 1024;

/// Loaded journals with the views the screens keep over them. Built once,
/// on the loader thread.
#[derive(Debug)]
pub struct Data {
    /// The investigation (read only through the query layer).
    pub inv: Investigation,
    /// What the fuzzy filter searches.
    pub search: groups::SearchIndex,
    /// Tool names, most groups first, for the tool filter.
    pub tools: Vec<String>,
    /// Groups worth a look, worst first.
    pub worst: Vec<usize>,
    /// Calls over time.
    pub rate: CallRate,
    /// Per session, its executions.
    pub session_execs: Vec<Vec<usize>>,
    /// Groups per verdict, most severe first.
    pub verdict_counts: Vec<(crate::analysis::Verdict, usize)>,
}

impl Data {
    /// Prepares what the screens need once.
    pub fn new(inv: Investigation) -> Data {
        let all = inv.group_indices(&GroupFilter {
            all: true,
            ..GroupFilter::default()
        });
        let search = groups::SearchIndex::build(&inv, all.len());
        let mut counts: std::collections::HashMap<&str, usize> = Default::default();
        for &i in &all {
            if let Some(g) = inv.group_at(i) {
                *counts.entry(g.tool.as_str()).or_default() += 1;
            }
        }
        let mut tools: Vec<(&str, usize)> = counts.into_iter().collect();
        tools.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let tools = tools.into_iter().map(|(t, _)| t.to_string()).collect();
        let worst = inv.group_indices(&GroupFilter::default());
        let rate = inv.call_rate(RATE_BUCKETS);
        let session_execs = inv.session_executions();
        let verdict_counts = inv.verdict_counts();
        Data {
            verdict_counts,
            inv,
            search,
            tools,
            worst,
            rate,
            session_execs,
        }
    }
}

/// How far loading has come.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadProgress {
    /// Names of the journals being loaded.
    pub journals: Vec<String>,
    /// The latest progress report, if any.
    pub progress: Option<Progress>,
    /// Reading is done; the analysis runs.
    pub analysing: bool,
}

/// Loading, failed, or ready.
#[derive(Debug)]
pub enum Load {
    /// Journals are being read.
    Loading(LoadProgress),
    /// Loading failed (the message names file and line).
    Failed(String),
    /// Ready.
    Ready(Box<Data>),
}

/// What the background loader reports.
#[derive(Debug)]
pub enum LoadMsg {
    /// Bytes read so far.
    Progress(Progress),
    /// Reading is done; analysis runs.
    Analysing,
    /// The result.
    Done(Result<Box<Data>, String>),
}

/// Something the event loop must do outside the state: the state asks,
/// the driver performs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Put this text on the clipboard (OSC 52).
    Clipboard(String),
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
}

/// The whole TUI state.
#[derive(Debug)]
pub struct App {
    /// Styles.
    pub theme: Theme,
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
    /// Work for the event loop (clipboard writes).
    pub effects: Vec<Effect>,
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

    /// The current screen.
    pub fn view(&self) -> &View {
        self.stack.last().unwrap_or(&View::Overview)
    }

    /// Which key table applies now.
    pub fn ctx(&self) -> Ctx {
        if self.help.is_some() {
            return Ctx::Help;
        }
        self.screen_ctx()
    }

    /// Which key table the current screen uses (under help, if open).
    pub fn screen_ctx(&self) -> Ctx {
        if self.data().is_none() {
            return Ctx::Loading;
        }
        match self.view() {
            View::Overview => Ctx::Overview,
            View::Groups if self.groups.editing => Ctx::FilterInput,
            View::Groups => Ctx::Groups,
            View::Detail(_) => Ctx::Detail,
            View::Execution(_) => Ctx::Execution,
            View::Sessions(_) => Ctx::Sessions,
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
                self.load = Load::Ready(d);
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
        if let Some(scroll) = &mut self.help {
            match action {
                Action::Back => self.help = None,
                Action::Down => *scroll += 1,
                Action::Up => *scroll = scroll.saturating_sub(1),
                _ => {}
            }
            return;
        }
        let body = super::render::body_area(self.area);
        let Load::Ready(data) = &self.load else {
            return;
        };
        match action {
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
                    "copied {what} ({} bytes) to the clipboard via OSC 52, where the terminal allows it",
                    text.len()
                ));
                self.effects.push(Effect::Clipboard(text));
            }
            Nav::Say(s) => self.status = Some(s),
        }
    }
}

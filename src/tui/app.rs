//! The TUI state and how actions change it: the app-wide keys (quit,
//! help, theme), the dialog over the screen, the jump keys, and the
//! screen stack, whose current screen takes every other action
//! ([`Screen::update`]) and says what it asks of the app ([`Nav`]).
//! Drawing lives in [`super::render`] and the screens; it only reads
//! this state.

use super::action::Action;
use super::data::{Data, Load, LoadMsg, LoadProgress};
use super::dialog::{self, Dialog, DialogNav};
use super::follow::{Control, FollowKind, FollowMsg};
use super::jobs::{Job, JobMsg};
use super::keys::{Ctx, Key, KeyMap, table};
use super::screen::{Anchor, Context, Nav, Screen, body_area, drawn_body};
use super::screens;
use super::stack::Stack;
use super::theme::Theme;
use super::widgets::mouse::{Pointer, wheel_scroll};
use super::widgets::{Move, scroll};
use crate::query::{FollowPoll, Investigation, QueryError, Reanalysis, verdict_changes};
use crate::sanitize::escape;
use ratatui::layout::Rect;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Something the event loop must do outside the state: the state asks,
/// the driver performs.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Put this text on the clipboard (OSC 52).
    Clipboard(String),
    /// Run this job off the UI thread ([`super::jobs::spawn`]) and feed
    /// its messages to [`App::on_job`].
    Job(Box<Job>),
    /// Start following the journals ([`super::follow::spawn`]) and feed
    /// its messages to [`App::on_follow`].
    Follow {
        /// Which start of follow mode this is.
        generation: u64,
        /// How the UI thread stops it.
        control: Arc<Control>,
    },
}

/// Follow mode as the title line shows it (docs/design.md §7.7 "Follow
/// mode").
#[derive(Debug)]
pub struct Following {
    /// Which start of follow mode this is (messages of another are
    /// ignored).
    pub generation: u64,
    /// How the UI thread stops the follow thread.
    pub control: Arc<Control>,
    /// The journals as they were are read, and new events are awaited.
    pub started: bool,
    /// What the last poll found (counts since following began).
    pub poll: FollowPoll,
    /// The last bad line read while following: journal and line.
    pub last_bad: Option<(String, u32)>,
    /// A new analysis that came while a background job read the data:
    /// applied when the job ends.
    pending: Option<Box<Data>>,
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
    /// The screens, the current one on top; the overview first. Empty
    /// until the journals are loaded.
    pub stack: Stack,
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
    /// Whether the screen is drawn in colour: false under `NO_COLOR` or
    /// `--color never`, and every theme the theme key brings is then
    /// [`Theme::without_color`].
    pub color: bool,
    /// Whether the mouse selects and scrolls (`mouse = false` in the
    /// settings file or `--no-mouse` turn it off; mouse events are then
    /// ignored).
    pub mouse: bool,
    /// Follow mode, while it is on.
    pub follow: Option<Following>,
    /// Starts of follow mode so far.
    follow_starts: u64,
    /// Ids of the groups whose verdict changed while following since the
    /// user last had them selected (docs/design.md §7.7 "Follow mode").
    pub marked: HashSet<String>,
    /// Set by [`Action::Quit`].
    pub quit: bool,
}

impl App {
    /// A new app waiting for journals with these names.
    pub fn new(journals: Vec<String>, theme: Theme, area: Rect) -> App {
        App {
            theme,
            keys: screens::keymap(),
            load: Load::Loading(LoadProgress {
                journals,
                ..LoadProgress::default()
            }),
            stack: Stack::default(),
            help: None,
            area,
            status: None,
            effects: Vec::new(),
            export_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            dialog: None,
            job: None,
            color: true,
            mouse: true,
            follow: None,
            follow_starts: 0,
            marked: HashSet::new(),
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

    /// The current screen, once the journals are loaded.
    pub fn top(&self) -> Option<&dyn Screen> {
        self.stack.top()
    }

    /// The current screen, if it is a `T`.
    pub fn current<T: Screen>(&self) -> Option<&T> {
        self.stack
            .top()
            .and_then(|s| (s as &dyn std::any::Any).downcast_ref::<T>())
    }

    /// The topmost screen of type `T` on the stack, else the one kept off
    /// it (the groups table keeps its state while the user is elsewhere).
    pub fn screen<T: Screen>(&self) -> Option<&T> {
        self.stack.find::<T>()
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
        self.stack.top().map_or(table::LOADING.ctx, |s| s.ctx())
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
                let data: Arc<Data> = Arc::from(d);
                self.stack = Stack::open(&Context {
                    data: &data,
                    theme: &self.theme,
                    body: body_area(self.area),
                    job: self.job.as_deref(),
                    export_dir: &self.export_dir,
                    marked: &self.marked,
                });
                self.load = Load::Ready(data);
            }
        }
    }

    /// Says on the key line that `key` does nothing where the keys are
    /// read now (`x: no such key here, ? for help`, naming the help key of
    /// the context when it has one); the next action clears it.
    pub fn unbound_key(&mut self, key: Key) {
        // Esc stops following where it does nothing else.
        if key.code == ratatui::crossterm::event::KeyCode::Esc && self.follow.is_some() {
            self.status = None;
            self.stop_follow();
            return;
        }
        let help = self
            .keys
            .bindings(self.ctx())
            .find(|b| b.action == Action::ToggleHelp)
            .and_then(|b| b.keys.first())
            .map(|k| format!(", {} for help", k.label()))
            .unwrap_or_default();
        self.status = Some(format!("{}: no such key here{help}", key.label()));
    }

    /// Applies an action. First the group the current screen has selected
    /// is no longer marked as changed: the key was pressed with it, and
    /// its mark, on screen (docs/design.md §7.7 "Follow mode"). A group
    /// the key moves onto keeps its mark until the next key, so that it is
    /// seen selected and marked.
    pub fn update(&mut self, action: Action) {
        if !matches!(action, Action::Resize(..)) {
            self.acknowledge();
        }
        self.apply(action);
    }

    /// Unmarks the group the current screen has selected.
    fn acknowledge(&mut self) {
        if self.marked.is_empty() || self.help.is_some() {
            return;
        }
        if let (Some(data), Some(top)) = (self.data(), self.stack.top())
            && let Anchor::Group(id) = top.anchor(data)
        {
            self.marked.remove(&id);
        }
    }

    fn apply(&mut self, action: Action) {
        // A click lands on the screen as drawn, a long message included.
        let drawn = drawn_body(self.area, self.status.as_deref());
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
            Action::ToggleFollow if self.help.is_none() && self.dialog.is_none() => {
                self.toggle_follow();
                return;
            }
            Action::CycleTheme => {
                let next = self.theme.next_builtin();
                self.theme = if self.color {
                    next
                } else {
                    next.without_color()
                };
                self.status = Some(format!("theme {}", self.theme.name));
                return;
            }
            _ => {}
        }
        let pointer = Pointer::of(&action);
        if let Some(offset) = &mut self.help {
            match Move::of(&action) {
                _ if action == Action::Back => self.help = None,
                Some(m @ (Move::Up | Move::Down)) => scroll(offset, m, 1, usize::MAX),
                _ => {}
            }
            if let (Some(p), Some(offset)) = (pointer, &mut self.help) {
                wheel_scroll(offset, p.wheel(), usize::MAX);
            }
            return;
        }
        let Load::Ready(data) = &self.load else {
            return;
        };
        if let Some(d) = &mut self.dialog {
            // In a dialog the wheel moves the choice; a click does nothing
            // (a decision is chosen with the keys, on purpose).
            let action = match pointer.map(Pointer::wheel) {
                Some(1) => Action::Down,
                Some(-1) => Action::Up,
                Some(_) => return,
                None => action,
            };
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
        // Esc stops following before it goes back.
        if action == Action::Back && self.follow.is_some() {
            self.stop_follow();
            return;
        }
        let cx = Context {
            data,
            theme: &self.theme,
            body: if pointer.is_some() {
                drawn
            } else {
                body_area(self.area)
            },
            job: self.job.as_deref(),
            export_dir: &self.export_dir,
            marked: &self.marked,
        };
        if let Some(i) = Stack::jump_for(&action) {
            self.stack.jump(i, &cx);
            return;
        }
        let Some(top) = self.stack.top_mut() else {
            return;
        };
        match top.update(&cx, action) {
            Nav::Stay => {}
            Nav::Back => self.stack.back(),
            Nav::Push(s) => self.stack.push(s),
            Nav::Copy(what, text) => {
                // Pasted into a terminal, the copy must be as harmless as
                // the screen (docs/design.md §8.5): escaped the same way.
                let text = crate::sanitize::escape(&text).into_owned();
                self.status = Some(format!(
                    "copied {what} ({}) to the clipboard via OSC 52, where the terminal allows it",
                    crate::tui::widgets::text::count(text.len(), "byte", "bytes")
                ));
                self.effects.push(Effect::Clipboard(text));
            }
            Nav::Say(s) => self.status = Some(s),
            Nav::Dialog(d) => self.dialog = Some(d),
        }
    }

    /// Applies a background job's message: progress, a decision written
    /// (or not), the new analysis, an export written (or not).
    pub fn on_job(&mut self, msg: JobMsg) {
        // A decision changes the case file: an analysis opened before it
        // was written would take it back.
        let decided = !matches!(msg, JobMsg::Exported(_) | JobMsg::Progress(_));
        self.on_job_msg(msg);
        if self.job.is_none()
            && let Some(f) = &mut self.follow
            && let Some(d) = f.pending.take()
        {
            if decided {
                f.control.refresh.store(true, Ordering::Relaxed);
            } else {
                self.apply_follow(d);
            }
        }
    }

    fn on_job_msg(&mut self, msg: JobMsg) {
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

    /// Starts following the loaded journals, or stops.
    pub fn toggle_follow(&mut self) {
        if self.follow.is_some() {
            self.stop_follow();
            return;
        }
        if self.data().is_none() {
            return;
        }
        self.follow_starts += 1;
        let control = Arc::new(Control::default());
        self.follow = Some(Following {
            generation: self.follow_starts,
            control: Arc::clone(&control),
            started: false,
            poll: FollowPoll::default(),
            last_bad: None,
            pending: None,
        });
        self.effects.push(Effect::Follow {
            generation: self.follow_starts,
            control,
        });
        self.status = Some(
            "following the journals: new events flow in; F or Esc stops (nothing is written unless you decide)"
                .into(),
        );
    }

    /// Stops following (the marks stay until the groups are selected).
    pub fn stop_follow(&mut self) {
        if let Some(f) = self.follow.take() {
            f.control.stop.store(true, Ordering::Relaxed);
            if let Some(d) = f.pending {
                std::thread::spawn(move || drop(d));
            }
            self.status = Some(format!(
                "stopped following after {}",
                crate::tui::widgets::text::count(
                    usize::try_from(f.poll.events).unwrap_or(usize::MAX),
                    "new event",
                    "new events"
                )
            ));
        }
    }

    /// Applies a follow thread's message: a poll's counts, a new analysis
    /// (kept until a running job ends), or why following cannot go on.
    pub fn on_follow(&mut self, msg: FollowMsg) {
        let Some(f) = &mut self.follow else {
            return;
        };
        if f.generation != msg.generation {
            return;
        }
        match msg.kind {
            FollowKind::Started => f.started = true,
            FollowKind::Poll(p) => {
                if let Some(b) = p.bad.last() {
                    f.last_bad = Some((b.journal.clone(), b.line));
                    // Said whole on the key line; the title keeps the count.
                    self.status = Some(format!(
                        "skipped a bad line while following, {b}; {} so far, following goes on",
                        crate::tui::widgets::text::count(
                            usize::try_from(p.bad_lines).unwrap_or(usize::MAX),
                            "bad line",
                            "bad lines"
                        )
                    ));
                }
                if let Some(n) = p.notes.last() {
                    self.status = Some(n.clone());
                }
                f.poll = *p;
            }
            FollowKind::Data(d) => {
                if self.job.is_some() {
                    f.pending = Some(d);
                } else {
                    self.apply_follow(d);
                }
            }
            FollowKind::Trouble(why) => self.status = Some(why),
            FollowKind::Failed(why) => {
                self.follow = None;
                self.status = Some(format!("cannot follow: {why}"));
            }
        }
    }

    /// Swaps in the analysis of the journals as they grew: every screen
    /// stays on the same group (by id), and the groups whose verdict
    /// changed are marked.
    pub fn apply_follow(&mut self, new: Box<Data>) {
        let Load::Ready(arc) = &mut self.load else {
            return;
        };
        let anchors: Vec<Anchor> = self.stack.all().map(|s| s.anchor(arc)).collect();
        self.marked.extend(verdict_changes(&arc.inv, &new.inv));
        let old = std::mem::replace(arc, Arc::from(new));
        // Freeing a large analysis is not the UI thread's work.
        std::thread::spawn(move || drop(old));
        let data: &Data = arc;
        let cx = Context {
            data,
            theme: &self.theme,
            body: body_area(self.area),
            job: self.job.as_deref(),
            export_dir: &self.export_dir,
            marked: &self.marked,
        };
        for (screen, anchor) in self.stack.all_mut().zip(anchors) {
            screen.refresh(&cx, anchor);
        }
    }

    /// Swaps in a new analysis, keeps every screen on the same group,
    /// execution and queue item, and says what changed.
    fn apply_reanalysis(&mut self, r: Reanalysis) -> String {
        let Load::Ready(arc) = &mut self.load else {
            return "the journals are not loaded".into();
        };
        // What each screen's selection points at, before the group order
        // changes.
        let anchors: Vec<Anchor> = self.stack.all().map(|s| s.anchor(arc)).collect();
        let Some(data) = Arc::get_mut(arc) else {
            return "the new verdicts could not be shown (the data is still in use); reopen retrace to see them"
                .into();
        };
        data.reanalysed(r);
        let data: &Data = data;
        let cx = Context {
            data,
            theme: &self.theme,
            body: body_area(self.area),
            job: self.job.as_deref(),
            export_dir: &self.export_dir,
            marked: &self.marked,
        };
        for (screen, anchor) in self.stack.all_mut().zip(anchors) {
            screen.refresh(&cx, anchor);
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

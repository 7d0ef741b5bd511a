//! The one boundary between the app and its screens: the [`Screen`] trait,
//! the read-only [`Context`] a screen is given, what it asks of the app in
//! return ([`Nav`]), and how a screen registers itself ([`Registration`]).
//!
//! Screens import this module and never the app; the app imports the
//! screens (through [`super::screens::REGISTRY`]) and never the reverse.
//! A screen owns its state and lives on the app's stack (the overview
//! first); it changes only in [`Screen::update`] and [`Screen::refresh`],
//! and [`Screen::draw`] reads it.

use super::action::Action;
use super::data::Data;
use super::dialog::Dialog;
use super::keys::{Bind, Ctx, KeyTable};
use super::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use std::any::Any;
use std::collections::HashSet;
use std::fmt::Debug;
use std::path::Path;

/// The title line, the body and the key line of a terminal of `area`.
pub fn frame_areas(area: Rect) -> [Rect; 3] {
    frame_areas_with(area, 1)
}

/// The title line, the body and a key line of `rows` rows (a message
/// wrapped onto more than one).
pub fn frame_areas_with(area: Rect, rows: usize) -> [Rect; 3] {
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(u16::try_from(rows).unwrap_or(1)),
    ])
    .areas(area)
}

/// The area screens draw in: the terminal minus the title and key lines.
pub fn body_area(area: Rect) -> Rect {
    frame_areas(area)[1]
}

/// Most lines a message on the key line takes (a long one wraps).
pub const MESSAGE_LINES: usize = 4;

/// A message's lines on a key line `width` wide: wrapped, with room for
/// the `▸` in front; at most [`MESSAGE_LINES`], the last then ending with
/// `…`. The same for the drawing and for reading a click.
pub fn message_wrapped(message: &str, width: u16) -> Vec<String> {
    let esc = crate::sanitize::escape(message);
    let mut lines = super::widgets::text::wrap(&esc, usize::from(width.saturating_sub(4)).max(1));
    if lines.len() > MESSAGE_LINES {
        lines.truncate(MESSAGE_LINES);
        if let Some(l) = lines.last_mut() {
            l.push('…');
        }
    }
    lines
}

/// The body as drawn while `message` (if any) shows at the bottom.
pub fn drawn_body(area: Rect, message: Option<&str>) -> Rect {
    let rows = message.map_or(1, |m| message_wrapped(m, area.width).len().max(1));
    frame_areas_with(area, rows)[1]
}

/// What a screen may read while it updates or draws. Nothing in it can be
/// changed by the screen: a screen asks for changes with a [`Nav`].
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The loaded journals and the views over them.
    pub data: &'a Data,
    /// Styles.
    pub theme: &'a Theme,
    /// The area the screen draws in (for an update: the area it will be
    /// drawn in, for page lengths).
    pub body: Rect,
    /// What the background job does, while one runs (one at a time).
    pub job: Option<&'a str>,
    /// The folder export file names are relative to.
    pub export_dir: &'a Path,
    /// Ids of the groups whose verdict changed while following since the
    /// user last had them selected (docs/design.md §7.7 "Follow mode"):
    /// lists mark them.
    pub marked: &'a HashSet<String>,
}

/// What a screen's update asks of the app.
#[derive(Debug)]
pub enum Nav {
    /// Stay on this screen.
    Stay,
    /// Go back one screen (the first screen stays).
    Back,
    /// Open another screen on top.
    Push(Box<dyn Screen>),
    /// Copy a value to the clipboard (OSC 52), naming it (`the group id`)
    /// in the status line.
    Copy(&'static str, String),
    /// Show a message on the key line.
    Say(String),
    /// Open a dialog over the screen.
    Dialog(Dialog),
}

/// What a screen's selection points at, in terms that survive a new
/// analysis (ids, not indexes: the group order changes when verdicts do).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Anchor {
    /// Nothing to keep, or the screen keeps its place by itself.
    #[default]
    Nothing,
    /// The group with this id.
    Group(String),
    /// The execution with this id.
    Execution(String),
}

/// A screen: its state, how actions change it, how it is drawn.
pub trait Screen: Any + Debug {
    /// The key table that applies now: the screen's context, or a mode of
    /// it (the groups filter being typed).
    fn ctx(&self) -> Ctx;

    /// The screen's place in the title line's breadcrumbs (`groups`,
    /// `group g4c2…`); escaped where it holds journal text.
    fn crumb(&self) -> String;

    /// Applies an action; returns what the screen asks of the app.
    fn update(&mut self, cx: &Context<'_>, action: Action) -> Nav;

    /// Draws the screen into `cx.body`. Pure: it reads the state and
    /// changes nothing; only the rows on screen are built.
    fn draw(&self, cx: &Context<'_>, frame: &mut Frame<'_>);

    /// Asked just before a new analysis replaces `data` (after a
    /// decision): what the selection points at, for [`Screen::refresh`].
    fn anchor(&self, data: &Data) -> Anchor {
        let _ = data;
        Anchor::Nothing
    }

    /// Takes the new analysis in `cx.data`, keeping the selection on what
    /// `anchor` names and the scroll where it was.
    fn refresh(&mut self, cx: &Context<'_>, anchor: Anchor) {
        let _ = (cx, anchor);
    }
}

/// Opens a screen.
pub type Open = fn(&Context<'_>) -> Box<dyn Screen>;

/// How a jump key opens its screen.
#[derive(Debug, Clone, Copy)]
pub enum Opens {
    /// The first screen, opened when the journals are loaded; the jump
    /// goes back to it.
    Root(Open),
    /// A new screen on top of the first, each time.
    Fresh(Open),
    /// The same screen each time, with the state it had (the groups table
    /// keeps its filters and sort): opened when the journals are loaded,
    /// kept by the app while it is off the stack.
    Kept(Open),
}

/// A key that opens a screen from anywhere (`2`: the groups table).
#[derive(Debug, Clone)]
pub struct Jump {
    /// The key, its action (a `Show…` action) and help.
    pub bind: Bind,
    /// How the screen is opened.
    pub opens: Opens,
}

/// What a screen tells the app about itself: its key tables (one per
/// context it uses) and, for a top-level screen, its jump key. Each
/// screen module has one, listed in [`super::screens::REGISTRY`].
#[derive(Debug, Clone)]
pub struct Registration {
    /// The default key tables of the screen's contexts.
    pub keys: &'static [KeyTable],
    /// The jump key that opens it, if it is a top-level screen.
    pub jump: Option<Jump>,
}

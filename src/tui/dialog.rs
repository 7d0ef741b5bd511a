//! Dialogs over a screen: a reviewer decision and a postmortem export.
//!
//! The decision dialog is a view of one [`Flow`] (the pure decision state
//! machine of [`crate::review::fsm`]): keys become flow [`Event`]s, the
//! flow's state is drawn, and the confirmation shows
//! [`Flow::confirmation`]. Which decisions are allowed, what a decision
//! changes and why a draft is refused all come from the flow; the dialog
//! only adds the two steps of typing (choose, then write the note). The
//! flow's [`crate::review::Effect::Append`] becomes a
//! [`Job::Record`] that runs off the UI thread.
//!
//! Drawing is pure: [`draw`] reads the dialog and changes nothing.

use super::action::Action;
use super::jobs::{ExportJob, Job, RecordJob};
use super::keys::{Ctx, table};
use super::theme::Theme;
use super::widgets::text::{esc, fit, wrap};
use super::widgets::{Cursor, Move};
use crate::query::{Decision, DecisionError, DecisionRecord, Flow, Investigation, QueueItem};
use crate::review::fsm::{NoteEdit, consequence};
use crate::review::{Event, State};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use std::path::{Path, PathBuf};

/// A dialog over the screen.
#[derive(Debug, Clone)]
pub enum Dialog {
    /// A reviewer decision about one queue item.
    Decide(Box<Decide>),
    /// Writing a Markdown postmortem to a file.
    Export(Export),
}

/// Which part of the selecting state has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Choosing the decision.
    Choose,
    /// Typing the note.
    Note,
}

/// The decision dialog.
#[derive(Debug, Clone)]
pub struct Decide {
    /// The decision flow (state machine).
    pub flow: Flow,
    /// The queue item decided about, as it was when the dialog opened.
    pub item: QueueItem,
    /// The case file the decision goes to, for the confirmation.
    pub case_name: String,
    /// Choosing or typing, while the flow is selecting.
    pub step: Step,
    /// The highlighted decision: its cursor selects in the item's offered
    /// decisions.
    pub choice: Cursor,
    /// What the background job is doing, while it runs.
    pub progress: Option<String>,
    /// The case file entry, once written.
    pub record: Option<DecisionRecord>,
}

/// What an export covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportScope {
    /// One group (from its detail screen).
    Group(String),
    /// The groups listed on the groups screen, in their order.
    Listed(Vec<String>),
}

/// The export dialog: the file name being typed.
#[derive(Debug, Clone)]
pub struct Export {
    /// What is exported.
    pub scope: ExportScope,
    /// The file name (relative names are under `dir`).
    pub name: String,
    /// The folder relative names are under.
    pub dir: PathBuf,
    /// Why the last Enter did not write, if it did not.
    pub problem: Option<String>,
    /// The named file exists and the user has been told; Enter replaces it.
    pub replace: bool,
}

/// What a dialog's update asks of the app.
#[derive(Debug)]
pub enum DialogNav {
    /// Keep the dialog open.
    Stay,
    /// Close it, with a message for the key line.
    Close(Option<String>),
    /// Run a job off the UI thread (the dialog stays open for a decision).
    Start(Job),
}

/// Why a dialog cannot be opened now; said on the key line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No decision can be recorded (read-only, no case file, no reviewer
    /// name, a broken case file chain).
    #[error(transparent)]
    Decision(#[from] DecisionError),
    /// The review queue is empty.
    #[error("nothing waits for a reviewer")]
    NothingWaits,
    /// A background job runs (what it does); one runs at a time.
    #[error("busy: {0}; wait for it to finish")]
    Busy(String),
    /// `--read-only`: nothing is written, exports neither.
    #[error("read-only mode (--read-only): exports are disabled; nothing is written")]
    ExportsDisabled,
    /// The screen lists no group.
    #[error("no group is listed: nothing to export")]
    NothingListed,
}

/// The decision dialog for the selected queue item (`None`: the queue is
/// empty), unless `job` (what the running background job does) or the
/// investigation forbids it.
///
/// # Errors
/// [`Refusal`]: nothing to decide, busy, or why decisions are disabled.
pub fn start_decision(
    inv: &Investigation,
    item: Option<&QueueItem>,
    job: Option<&str>,
) -> Result<Dialog, Refusal> {
    let Some(item) = item else {
        return Err(match inv.cannot_decide() {
            Some(e @ DecisionError::ReadOnly) => Refusal::Decision(e),
            _ => Refusal::NothingWaits,
        });
    };
    if let Some(j) = job {
        return Err(Refusal::Busy(j.to_string()));
    }
    let flow = inv.decision_flow(item)?;
    let case_name = inv.case().name().unwrap_or_default();
    Ok(Dialog::decide(item.clone(), flow, case_name))
}

/// The export dialog for the groups `ids` gives (asked only when an export
/// is possible; one group when `single`), file names relative to `dir`,
/// unless `job` (the running background job) or read-only mode forbids it.
///
/// # Errors
/// [`Refusal`]: read-only, busy, or no group listed.
pub fn start_export(
    inv: &Investigation,
    job: Option<&str>,
    ids: impl FnOnce() -> Vec<String>,
    single: bool,
    dir: &Path,
) -> Result<Dialog, Refusal> {
    if inv.read_only() {
        return Err(Refusal::ExportsDisabled);
    }
    if let Some(j) = job {
        return Err(Refusal::Busy(j.to_string()));
    }
    let ids = ids();
    if ids.is_empty() {
        return Err(Refusal::NothingListed);
    }
    Ok(Dialog::export(ids, single, dir.to_path_buf()))
}

impl Dialog {
    /// A decision dialog for `item`, driving `flow` (from the query
    /// layer's decision service), recording into the case file `case_name`.
    pub fn decide(item: QueueItem, flow: Flow, case_name: String) -> Dialog {
        let choice = item
            .offered
            .iter()
            .position(|d| item.allowed.contains(d))
            .unwrap_or(0);
        Dialog::Decide(Box::new(Decide {
            flow,
            item,
            case_name,
            step: Step::Choose,
            choice: Cursor {
                selected: choice,
                offset: 0,
            },
            progress: None,
            record: None,
        }))
    }

    /// An export dialog for the groups `ids` (one group when `single`),
    /// with a default file name: `retrace-<group>.md` or
    /// `retrace-groups.md`.
    pub fn export(ids: Vec<String>, single: bool, dir: PathBuf) -> Dialog {
        let (scope, name) = match (single, ids.as_slice()) {
            (true, [id]) => (ExportScope::Group(id.clone()), format!("retrace-{id}.md")),
            _ => (ExportScope::Listed(ids), "retrace-groups.md".to_string()),
        };
        Dialog::Export(Export {
            scope,
            name,
            dir,
            problem: None,
            replace: false,
        })
    }

    /// The key table while the dialog is open.
    pub fn ctx(&self) -> Ctx {
        match self {
            Dialog::Export(_) => table::EXPORT_NAME.ctx,
            Dialog::Decide(d) => match (&d.flow.state, d.step) {
                (State::Selecting { .. }, Step::Choose) => table::DECIDE_CHOOSE.ctx,
                (State::Selecting { .. }, Step::Note) => table::DECIDE_NOTE.ctx,
                (State::Confirming { .. }, _) => table::DECIDE_CONFIRM.ctx,
                _ => table::DECIDE_BUSY.ctx,
            },
        }
    }
}

impl ExportScope {
    /// `group g…` or `3 groups`.
    pub fn describe(&self) -> String {
        match self {
            ExportScope::Group(id) => format!("group {id}"),
            ExportScope::Listed(ids) if ids.len() == 1 => format!("group {}", ids[0]),
            ExportScope::Listed(ids) => format!("{} groups", ids.len()),
        }
    }

    /// The group ids.
    pub fn ids(&self) -> Vec<String> {
        match self {
            ExportScope::Group(id) => vec![id.clone()],
            ExportScope::Listed(ids) => ids.clone(),
        }
    }
}

/// The file an export name stands for: relative names are under `dir`.
pub fn export_path(dir: &Path, name: &str) -> PathBuf {
    let p = Path::new(name.trim());
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// Applies an action to the open dialog.
pub fn update(d: &mut Dialog, action: Action) -> DialogNav {
    match d {
        Dialog::Decide(d) => update_decide(d, action),
        Dialog::Export(e) => update_export(e, action),
    }
}

const CANCELLED: &str = "decision cancelled: nothing was recorded";

/// Pasted text for a one-line field: line breaks and other controls
/// become spaces.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn update_decide(d: &mut Decide, action: Action) -> DialogNav {
    let n = d.item.offered.len().max(1);
    match (&d.flow.state, d.step, action) {
        (State::Selecting { .. } | State::Confirming { .. }, _, Action::Cancel) => {
            d.flow.handle(Event::Cancel);
            DialogNav::Close(Some(CANCELLED.into()))
        }
        (State::Selecting { .. }, Step::Choose, a @ (Action::Down | Action::Up)) => {
            if let Some(m) = Move::of(&a) {
                d.choice.cycle(m, n);
            }
            DialogNav::Stay
        }
        (State::Selecting { .. }, Step::Choose, Action::Submit) => {
            let choice = d
                .item
                .offered
                .get(d.choice.selected.min(n - 1))
                .copied()
                .unwrap_or(Decision::Escalated);
            d.flow.handle(Event::Choose(choice));
            if matches!(&d.flow.state, State::Selecting { problem: None, .. }) {
                d.step = Step::Note;
            }
            DialogNav::Stay
        }
        (State::Selecting { .. }, Step::Note, Action::TextChar(c)) => {
            d.flow.handle(Event::EditNote(NoteEdit::Insert(c)));
            DialogNav::Stay
        }
        (State::Selecting { draft, .. }, Step::Note, Action::Paste(text)) => {
            let note = format!("{}{}", draft.note, one_line(&text));
            d.flow.handle(Event::EditNote(NoteEdit::Set(note)));
            DialogNav::Stay
        }
        (State::Selecting { .. }, Step::Note, Action::TextBackspace) => {
            d.flow.handle(Event::EditNote(NoteEdit::Backspace));
            DialogNav::Stay
        }
        (State::Selecting { .. }, Step::Note, Action::Back) => {
            d.step = Step::Choose;
            DialogNav::Stay
        }
        (State::Selecting { .. }, Step::Note, Action::Submit) => {
            d.flow.handle(Event::Submit);
            DialogNav::Stay
        }
        (State::Confirming { .. }, _, Action::Back) => {
            d.flow.handle(Event::Back);
            d.step = Step::Note;
            DialogNav::Stay
        }
        (State::Confirming { .. }, _, Action::Confirm) => {
            let Some(effect) = d.flow.handle(Event::Confirm).into_iter().next() else {
                // Refused (read-only): the flow says why.
                return DialogNav::Stay;
            };
            d.progress = Some("writing the case file…".into());
            DialogNav::Start(Job::Record(Box::new(RecordJob {
                item: d.item.clone(),
                effect,
            })))
        }
        _ => DialogNav::Stay,
    }
}

fn update_export(e: &mut Export, action: Action) -> DialogNav {
    match action {
        Action::Cancel => DialogNav::Close(Some("export cancelled: nothing was written".into())),
        Action::TextChar(c) => {
            e.name.push(c);
            e.problem = None;
            e.replace = false;
            DialogNav::Stay
        }
        Action::Paste(text) => {
            e.name.push_str(&one_line(&text));
            e.problem = None;
            e.replace = false;
            DialogNav::Stay
        }
        Action::TextBackspace => {
            e.name.pop();
            e.problem = None;
            e.replace = false;
            DialogNav::Stay
        }
        Action::Submit => {
            if e.name.trim().is_empty() {
                e.problem = Some("type a file name".into());
                return DialogNav::Stay;
            }
            let path = export_path(&e.dir, &e.name);
            if path.is_dir() {
                e.problem = Some("that is a folder: type a file name".into());
                return DialogNav::Stay;
            }
            if path.exists() && !e.replace {
                e.replace = true;
                e.problem = Some("the file exists: Enter again replaces it".into());
                return DialogNav::Stay;
            }
            DialogNav::Start(Job::Export(Box::new(ExportJob {
                path,
                groups: e.scope.ids(),
                what: e.scope.describe(),
            })))
        }
        _ => DialogNav::Stay,
    }
}

/// A centered popup of at most `w`×`h` inside `area`, cleared.
fn popup(frame: &mut Frame, area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    frame.render_widget(Clear, r);
    r
}

/// Draws the dialog over `area` (the screen body).
pub fn draw(d: &Dialog, theme: &Theme, frame: &mut Frame, area: Rect) {
    match d {
        Dialog::Decide(d) => draw_decide(d, theme, frame, area),
        Dialog::Export(e) => draw_export(e, theme, frame, area),
    }
}

/// Lines of `text` (already safe) wrapped to `width`, each after a
/// `label` column of 11.
fn labelled(
    label: &str,
    text: &str,
    width: usize,
    style: ratatui::style::Style,
) -> Vec<Line<'static>> {
    wrap(text, width.saturating_sub(11).max(1))
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            Line::from(vec![
                Span::raw(format!("{:<11}", if i == 0 { label } else { "" })),
                Span::styled(l, style),
            ])
        })
        .collect()
}

/// The decision dialog's lines for an inner width (pure).
pub fn decide_lines(d: &Decide, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let it = &d.item;
    let mut lines = vec![fit(
        Line::from(vec![
            Span::styled(esc(&it.execution_id).into_owned(), theme.accent),
            Span::styled(
                // What the reviewer is asked, as the queue's row says it (the
                // execution's own status read `clean` for an open delivery).
                format!(
                    " · {} · group {} {}",
                    it.asks.topic(),
                    it.group_id,
                    it.group_verdict
                ),
                theme.muted,
            ),
        ]),
        width,
    )];
    lines.extend(labelled(
        "outcome",
        &esc(&it.known_outcome),
        width,
        theme.review,
    ));
    lines.push(Line::raw(""));
    if let Some(c) = d.flow.confirmation() {
        lines.push(Line::styled(
            esc(&c.question).into_owned(),
            theme.accent.add_modifier(Modifier::BOLD),
        ));
        lines.push(Line::raw(""));
        lines.extend(labelled("decision", c.decision.as_str(), width, theme.base));
        lines.extend(labelled("reviewer", &esc(&c.reviewer), width, theme.base));
        lines.extend(labelled("note", &esc(&c.note), width, theme.base));
        lines.extend(labelled("changes", c.consequence, width, theme.base));
        lines.extend(labelled(
            "case file",
            &format!(
                "{} (append-only: a recorded decision stays)",
                esc(&d.case_name)
            ),
            width,
            theme.muted,
        ));
        if let Some(p) = &c.problem {
            lines.push(Line::raw(""));
            lines.extend(labelled("problem", &esc(p), width, theme.critical));
        }
        lines.push(Line::raw(""));
        lines.push(Line::from(vec![
            Span::styled(" y ", theme.accent.add_modifier(Modifier::REVERSED)),
            Span::raw(" record   "),
            Span::styled(" n ", theme.accent.add_modifier(Modifier::REVERSED)),
            Span::raw(" back to the note   "),
            Span::styled(" Esc ", theme.accent.add_modifier(Modifier::REVERSED)),
            Span::raw(" cancel"),
        ]));
        return lines;
    }
    match &d.flow.state {
        State::Selecting { draft, problem } => {
            lines.push(Line::styled(
                "What does the target show?",
                if d.step == Step::Choose {
                    theme.accent
                } else {
                    theme.muted
                },
            ));
            for (i, dec) in it.offered.iter().enumerate() {
                let allowed = it.allowed.contains(dec);
                let here = i == d.choice.selected;
                let chosen = draft.decision == Some(*dec);
                let mark = match (here && d.step == Step::Choose, chosen) {
                    (true, _) => "▶ ",
                    (false, true) => "✓ ",
                    _ => "  ",
                };
                let style = if !allowed {
                    theme.muted
                } else if here && d.step == Step::Choose {
                    theme.selection
                } else {
                    theme.base
                };
                let mut spans = vec![
                    Span::styled(mark, theme.accent),
                    Span::styled(format!("{:<23}", dec.as_str()), style),
                ];
                if !allowed {
                    spans.push(Span::styled(
                        " not possible: the journal shows its outcome",
                        theme.muted,
                    ));
                }
                lines.push(Line::from(spans));
                if here && allowed && d.step == Step::Choose {
                    for l in wrap(consequence(*dec), width.saturating_sub(4).max(1)) {
                        lines.push(Line::styled(format!("    {l}"), theme.muted));
                    }
                }
            }
            lines.push(Line::raw(""));
            let note_style = if d.step == Step::Note {
                theme.accent
            } else {
                theme.muted
            };
            lines.push(Line::styled(
                "Note (required): what does the target show?",
                note_style,
            ));
            let mut note = esc(&draft.note).into_owned();
            if d.step == Step::Note {
                note.push('▏');
            }
            let wrapped = wrap(&note, width.saturating_sub(2).max(1));
            let skip = wrapped.len().saturating_sub(4);
            for l in wrapped.into_iter().skip(skip) {
                lines.push(Line::from(vec![
                    Span::styled("│ ", note_style),
                    Span::raw(l),
                ]));
            }
            if let Some(p) = problem {
                lines.push(Line::raw(""));
                for l in wrap(&esc(p), width.max(1)) {
                    lines.push(Line::styled(l, theme.critical));
                }
            }
        }
        State::Recording { decision, .. } => {
            lines.push(Line::styled(
                format!("Recording {decision}…"),
                theme.accent.add_modifier(Modifier::BOLD),
            ));
            lines.push(Line::styled(
                esc(d.progress.as_deref().unwrap_or("writing the case file…")).into_owned(),
                theme.muted,
            ));
        }
        State::Recorded { decision, seq, .. } => {
            lines.push(Line::styled(
                format!("Recorded {decision} as case file entry {seq}."),
                theme.ok.add_modifier(Modifier::BOLD),
            ));
            lines.push(Line::styled(
                esc(d.progress.as_deref().unwrap_or("analysing again…")).into_owned(),
                theme.muted,
            ));
        }
        State::Cancelled | State::Confirming { .. } => {}
    }
    lines
}

fn draw_decide(d: &Decide, theme: &Theme, frame: &mut Frame, area: Rect) {
    let w = area.width.min(84);
    let inner_w = usize::from(w.saturating_sub(2));
    let lines = decide_lines(d, theme, inner_w);
    let h = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let r = popup(frame, area, w, h);
    let title = if d.flow.confirmation().is_some() {
        " Confirm the decision ".to_string()
    } else {
        format!(" Decide {} ", esc(&d.item.execution_id))
    };
    frame.render_widget(
        Paragraph::new(lines)
            .style(theme.base)
            .block(Block::bordered().title(title).border_style(theme.review)),
        r,
    );
}

fn draw_export(e: &Export, theme: &Theme, frame: &mut Frame, area: Rect) {
    let w = area.width.min(84);
    let width = usize::from(w.saturating_sub(2)).max(1);
    let mut lines: Vec<Line<'static>> = wrap(
        &format!(
            "A Markdown postmortem of {}: verdicts, timelines, the five questions with evidence, reviewer decisions.",
            e.scope.describe()
        ),
        width,
    )
    .into_iter()
    .map(Line::raw)
    .collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled("File name:", theme.accent));
    let mut name = esc(&e.name).into_owned();
    name.push('▏');
    for l in wrap(&name, width.saturating_sub(2).max(1)) {
        lines.push(Line::from(vec![
            Span::styled("│ ", theme.accent),
            Span::raw(l),
        ]));
    }
    let dir = esc(&e.dir.display().to_string()).into_owned();
    for l in wrap(&format!("in {dir}; written whole or not at all"), width) {
        lines.push(Line::styled(l, theme.muted));
    }
    if let Some(p) = &e.problem {
        lines.push(Line::raw(""));
        for l in wrap(&esc(p), width) {
            lines.push(Line::styled(l, theme.warn));
        }
    }
    let h = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let r = popup(frame, area, w, h);
    frame.render_widget(
        Paragraph::new(lines).style(theme.base).block(
            Block::bordered()
                .title(" Export a postmortem ")
                .border_style(theme.accent),
        ),
        r,
    );
}

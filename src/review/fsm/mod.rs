//! The decision flow as a pure state machine (after atuin's tool-approval
//! FSM, docs/design.md §9.4: events in, effects out as data, a driver does
//! the I/O).
//!
//! ```text
//!             Choose / EditNote            Confirm                 Recorded
//!   Selecting ─────────── Submit ──▶ Confirming ──────▶ Recording ─────────▶ Recorded
//!      ▲  │                            │    │                │
//!      │  └── Cancel ──▶ Cancelled ◀───┘    └── Back ──▶ Selecting
//!      │                                                     │ WriteFailed
//!      └───────────────────────────── Confirming ◀──────────┘ (with the error)
//! ```
//!
//! A decision needs an explicit confirmation (docs/design.md §8.4:
//! confirmation for approving actions), a non-empty note and a reviewer,
//! and it must be one the queue item allows (a decision never contradicts
//! what the journal shows). In read-only mode nothing can be confirmed.
//! Terminal states ([`State::Recorded`], [`State::Cancelled`]) ignore every
//! event; [`State::Recording`] ignores everything but the driver's answer,
//! because a write in flight cannot be taken back.
//!
//! The TUI keeps one [`Flow`] per open decision dialog, maps keys to
//! [`Event`]s, performs the returned [`Effect`]s (append to the case file)
//! and feeds the outcome back as [`Event::Recorded`] or
//! [`Event::WriteFailed`]. `retrace review decide` drives the same machine.

use crate::analysis::Decision;
use serde::Serialize;

/// What the flow is about: one queue item, fixed for the life of the flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Subject {
    /// The execution decided about.
    pub execution_id: String,
    /// Its group.
    pub group_id: String,
    /// Decisions the item allows (see `crate::review::queue::QueueItem::allowed`).
    pub allowed: Vec<Decision>,
    /// Who decides.
    pub reviewer: String,
    /// Read-only mode: nothing can be confirmed.
    pub read_only: bool,
}

/// The decision being prepared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Draft {
    /// The chosen decision, if any yet.
    pub decision: Option<Decision>,
    /// The note typed so far.
    pub note: String,
}

/// Where the flow is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum State {
    /// Choosing a decision and writing the note. `problem` says why the
    /// last event was refused, if it was.
    Selecting {
        /// The draft.
        draft: Draft,
        /// Why the last Submit or Choose was refused.
        problem: Option<String>,
    },
    /// Asking "record this decision?". `problem` holds a failed write's
    /// error, so that the reviewer can retry or go back.
    Confirming {
        /// The draft (decision chosen, note non-empty).
        draft: Draft,
        /// The decision that will be recorded.
        decision: Decision,
        /// A refusal or a failed write, if any.
        problem: Option<String>,
    },
    /// The append is in flight; waiting for the driver.
    Recording {
        /// What is being written.
        decision: Decision,
        /// The note.
        note: String,
    },
    /// Written: the case file entry.
    Recorded {
        /// What was written.
        decision: Decision,
        /// The note.
        note: String,
        /// The case file entry seq.
        seq: u64,
    },
    /// Given up; nothing was written.
    Cancelled,
}

/// How the note changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum NoteEdit {
    /// Type one character.
    Insert(char),
    /// Delete the last character.
    Backspace,
    /// Replace the whole note.
    Set(String),
}

/// What can happen to the flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Event {
    /// Pick a decision.
    Choose(Decision),
    /// Edit the note.
    EditNote(NoteEdit),
    /// Ask to record (Selecting → Confirming).
    Submit,
    /// The explicit confirmation (Confirming → Recording).
    Confirm,
    /// Back from Confirming to Selecting, keeping the draft.
    Back,
    /// Give up.
    Cancel,
    /// The driver wrote the entry.
    Recorded {
        /// Its seq.
        seq: u64,
    },
    /// The driver could not write it.
    WriteFailed(String),
}

impl Event {
    /// One instance of every event variant (for exhaustive tests and for
    /// documentation of the vocabulary).
    pub fn samples() -> Vec<Event> {
        vec![
            Event::Choose(Decision::ConfirmedCompleted),
            Event::Choose(Decision::ConfirmedNotExecuted),
            Event::Choose(Decision::ConfirmedDelivered),
            Event::Choose(Decision::ConfirmedNotDelivered),
            Event::Choose(Decision::Escalated),
            Event::EditNote(NoteEdit::Insert('x')),
            Event::EditNote(NoteEdit::Backspace),
            Event::EditNote(NoteEdit::Set("target shows it".into())),
            Event::Submit,
            Event::Confirm,
            Event::Back,
            Event::Cancel,
            Event::Recorded { seq: 7 },
            Event::WriteFailed("disk full".into()),
        ]
    }
}

/// What the driver must do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Effect {
    /// Append this decision to the case file (one transaction), then send
    /// [`Event::Recorded`] or [`Event::WriteFailed`].
    Append {
        /// The execution.
        execution_id: String,
        /// The decision.
        decision: Decision,
        /// Who.
        reviewer: String,
        /// The note.
        note: String,
    },
}

/// One decision flow: its subject and state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flow {
    /// What it is about.
    pub subject: Subject,
    /// Where it is.
    pub state: State,
}

impl Flow {
    /// A new flow in [`State::Selecting`] with an empty draft.
    pub fn new(subject: Subject) -> Flow {
        Flow {
            subject,
            state: State::Selecting {
                draft: Draft::default(),
                problem: None,
            },
        }
    }

    /// Applies an event; returns the effects to perform.
    pub fn handle(&mut self, event: Event) -> Vec<Effect> {
        let state = std::mem::replace(&mut self.state, State::Cancelled);
        let (next, effects) = step(&self.subject, state, event);
        self.state = next;
        effects
    }

    /// Whether the flow has ended (recorded or cancelled).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Recorded { .. } | State::Cancelled)
    }

    /// What a confirmation dialog shows, while the flow is in
    /// [`State::Confirming`]: a plain view model for the TUI (and any
    /// other front end) to draw.
    pub fn confirmation(&self) -> Option<Confirmation> {
        let State::Confirming {
            draft,
            decision,
            problem,
        } = &self.state
        else {
            return None;
        };
        Some(Confirmation {
            question: format!(
                "Record {decision} for {} as {}?",
                self.subject.execution_id, self.subject.reviewer
            ),
            execution_id: self.subject.execution_id.clone(),
            group_id: self.subject.group_id.clone(),
            decision: *decision,
            reviewer: self.subject.reviewer.clone(),
            note: draft.note.clone(),
            consequence: consequence(*decision),
            problem: problem.clone(),
        })
    }
}

/// What recording a decision does to the analysis, in words for the
/// confirmation (resolution.rs: a decision resolves an unknown outcome;
/// escalated changes nothing).
pub fn consequence(d: Decision) -> &'static str {
    match d {
        Decision::ConfirmedCompleted => {
            "the unknown outcome becomes performed: a later fresh dispatch of the same intent is a duplicate side effect"
        }
        Decision::ConfirmedNotExecuted => {
            "the unknown outcome becomes not performed: dispatching once more is safe"
        }
        Decision::ConfirmedDelivered => {
            "the result counts as delivered: a later call of the same intent is a new request (distinct intent)"
        }
        Decision::ConfirmedNotDelivered => {
            "the result counts as lost: a later fresh dispatch of the same intent is a duplicate side effect"
        }
        Decision::Escalated => "the question stays open and the execution stays in the queue",
    }
}

/// The confirmation dialog's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Confirmation {
    /// `Record confirmed_completed for act_1 as alice?`
    pub question: String,
    /// The execution.
    pub execution_id: String,
    /// Its group.
    pub group_id: String,
    /// The decision.
    pub decision: Decision,
    /// Who.
    pub reviewer: String,
    /// The note.
    pub note: String,
    /// What recording it will do ([`consequence`]).
    pub consequence: &'static str,
    /// A refusal or failed write to show, if any.
    pub problem: Option<String>,
}

fn edit(note: &mut String, e: NoteEdit) {
    match e {
        NoteEdit::Insert(c) => note.push(c),
        NoteEdit::Backspace => {
            note.pop();
        }
        NoteEdit::Set(s) => *note = s,
    }
}

/// Why `draft` cannot be submitted, if it cannot.
fn refusal(subject: &Subject, draft: &Draft) -> Option<String> {
    if subject.reviewer.trim().is_empty() {
        return Some("a decision needs a reviewer name (--reviewer)".into());
    }
    match draft.decision {
        None => Some("choose a decision first".into()),
        Some(d) if !subject.allowed.contains(&d) => Some(not_allowed(subject, d)),
        Some(_) if draft.note.trim().is_empty() => {
            Some("a decision needs a note: what did the target show?".into())
        }
        Some(_) => None,
    }
}

fn not_allowed(subject: &Subject, d: Decision) -> String {
    if subject.allowed.is_empty() {
        return format!(
            "{d} is not possible for {}: the journal already shows what a decision would settle",
            subject.execution_id
        );
    }
    let allowed: Vec<&str> = subject.allowed.iter().map(|a| a.as_str()).collect();
    format!(
        "{d} is not possible for {}: what it waits for allows {}",
        subject.execution_id,
        allowed.join(", ")
    )
}

/// The transition function: pure, total over (state, event).
pub fn step(subject: &Subject, state: State, event: Event) -> (State, Vec<Effect>) {
    use State as S;
    match (state, event) {
        // Terminal states ignore everything.
        (s @ (S::Recorded { .. } | S::Cancelled), _) => (s, vec![]),

        // Selecting.
        (S::Selecting { .. }, Event::Cancel) => (S::Cancelled, vec![]),
        (S::Selecting { mut draft, .. }, Event::Choose(d)) => {
            let problem = if subject.allowed.contains(&d) {
                draft.decision = Some(d);
                None
            } else {
                Some(not_allowed(subject, d))
            };
            (S::Selecting { draft, problem }, vec![])
        }
        (S::Selecting { mut draft, problem }, Event::EditNote(e)) => {
            edit(&mut draft.note, e);
            (S::Selecting { draft, problem }, vec![])
        }
        (
            S::Selecting {
                draft,
                problem: earlier,
            },
            Event::Submit,
        ) => {
            match (refusal(subject, &draft), draft.decision) {
                (None, Some(decision)) => (
                    S::Confirming {
                        draft,
                        decision,
                        problem: None,
                    },
                    vec![],
                ),
                // A decision that was refused when chosen keeps its reason
                // (which names the decisions allowed), not "choose one".
                (Some(_), None) if earlier.is_some() => (
                    S::Selecting {
                        draft,
                        problem: earlier,
                    },
                    vec![],
                ),
                (problem, _) => (
                    S::Selecting {
                        draft,
                        problem: problem.or_else(|| Some("choose a decision first".into())),
                    },
                    vec![],
                ),
            }
        }
        (
            s @ S::Selecting { .. },
            Event::Confirm | Event::Back | Event::Recorded { .. } | Event::WriteFailed(_),
        ) => (s, vec![]),

        // Confirming.
        (S::Confirming { .. }, Event::Cancel) => (S::Cancelled, vec![]),
        (S::Confirming { draft, .. }, Event::Back) => (
            S::Selecting {
                draft,
                problem: None,
            },
            vec![],
        ),
        (
            S::Confirming {
                draft, decision, ..
            },
            Event::Confirm,
        ) => {
            if subject.read_only {
                return (
                    S::Confirming {
                        draft,
                        decision,
                        problem: Some("read-only mode: decisions cannot be recorded".into()),
                    },
                    vec![],
                );
            }
            let effect = Effect::Append {
                execution_id: subject.execution_id.clone(),
                decision,
                reviewer: subject.reviewer.clone(),
                note: draft.note.clone(),
            };
            (
                S::Recording {
                    decision,
                    note: draft.note,
                },
                vec![effect],
            )
        }
        (
            s @ S::Confirming { .. },
            Event::Choose(_)
            | Event::EditNote(_)
            | Event::Submit
            | Event::Recorded { .. }
            | Event::WriteFailed(_),
        ) => (s, vec![]),

        // Recording: only the driver's answer counts.
        (S::Recording { decision, note }, Event::Recorded { seq }) => (
            S::Recorded {
                decision,
                note,
                seq,
            },
            vec![],
        ),
        (S::Recording { decision, note }, Event::WriteFailed(err)) => (
            S::Confirming {
                draft: Draft {
                    decision: Some(decision),
                    note,
                },
                decision,
                problem: Some(format!("not recorded: {err}")),
            },
            vec![],
        ),
        (
            s @ S::Recording { .. },
            Event::Choose(_)
            | Event::EditNote(_)
            | Event::Submit
            | Event::Confirm
            | Event::Back
            | Event::Cancel,
        ) => (s, vec![]),
    }
}

#[cfg(test)]
mod tests;

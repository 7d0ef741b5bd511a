use super::*;

fn subject(read_only: bool) -> Subject {
    Subject {
        execution_id: "act_1".into(),
        group_id: "g1".into(),
        allowed: vec![Decision::ConfirmedCompleted, Decision::Escalated],
        reviewer: "alice".into(),
        read_only,
    }
}

fn draft(d: Option<Decision>, note: &str) -> Draft {
    Draft {
        decision: d,
        note: note.into(),
    }
}

/// Representative states: every variant, with drafts that are and are
/// not ready.
fn states() -> Vec<State> {
    vec![
        State::Selecting {
            draft: Draft::default(),
            problem: None,
        },
        State::Selecting {
            draft: draft(Some(Decision::ConfirmedCompleted), "201 in the deploy log"),
            problem: None,
        },
        State::Selecting {
            draft: draft(Some(Decision::Escalated), ""),
            problem: Some("x".into()),
        },
        State::Confirming {
            draft: draft(Some(Decision::Escalated), "ask the owners"),
            decision: Decision::Escalated,
            problem: None,
        },
        State::Recording {
            decision: Decision::ConfirmedCompleted,
            note: "n".into(),
        },
        State::Recorded {
            decision: Decision::ConfirmedCompleted,
            note: "n".into(),
            seq: 3,
        },
        State::Cancelled,
    ]
}

fn name(s: &State) -> &'static str {
    match s {
        State::Selecting { .. } => "selecting",
        State::Confirming { .. } => "confirming",
        State::Recording { .. } => "recording",
        State::Recorded { .. } => "recorded",
        State::Cancelled => "cancelled",
    }
}

fn ev(e: &Event) -> &'static str {
    match e {
        Event::Choose(_) => "choose",
        Event::EditNote(_) => "edit",
        Event::Submit => "submit",
        Event::Confirm => "confirm",
        Event::Back => "back",
        Event::Cancel => "cancel",
        Event::Recorded { .. } => "recorded",
        Event::WriteFailed(_) => "failed",
    }
}

/// The allowed moves between state kinds, written out by hand from the
/// diagram in the module documentation. Every (state, event) pair of
/// the product is checked against it.
fn allowed_move(from: &str, event: &str, to: &str) -> bool {
    match (from, event) {
        ("recorded" | "cancelled", _) => to == from,
        ("selecting", "cancel") | ("confirming", "cancel") => to == "cancelled",
        ("selecting", "submit") => to == "confirming" || to == "selecting",
        ("selecting", _) => to == "selecting",
        ("confirming", "back") => to == "selecting",
        ("confirming", "confirm") => to == "recording" || to == "confirming",
        ("confirming", _) => to == "confirming",
        ("recording", "recorded") => to == "recorded",
        ("recording", "failed") => to == "confirming",
        ("recording", _) => to == "recording",
        _ => false,
    }
}

#[test]
fn every_state_and_event_moves_as_the_diagram_says() {
    for read_only in [false, true] {
        let sub = subject(read_only);
        for s in states() {
            for e in Event::samples() {
                let (from, en) = (name(&s), ev(&e));
                let (next, effects) = step(&sub, s.clone(), e.clone());
                let to = name(&next);
                assert!(
                    allowed_move(from, en, to),
                    "{from} --{en}--> {to} (read_only {read_only})"
                );
                // Only a confirmation that moves to Recording writes.
                let writes = to == "recording" && from == "confirming";
                assert_eq!(effects.len(), usize::from(writes), "{from} --{en}--> {to}");
                if read_only {
                    assert_ne!((from, to), ("confirming", "recording"));
                }
            }
        }
    }
}

/// `review decide --decision confirmed_delivered` on an execution that
/// waits for its outcome once said "choose a decision first": the
/// refusal names the decisions it allows.
#[test]
fn a_refused_choice_says_what_is_allowed_when_submitted() {
    let mut f = Flow::new(subject(false));
    f.handle(Event::Choose(Decision::ConfirmedDelivered));
    for c in "seen".chars() {
        f.handle(Event::EditNote(NoteEdit::Insert(c)));
    }
    f.handle(Event::Submit);
    let State::Selecting {
        problem: Some(p), ..
    } = &f.state
    else {
        panic!("{:?}", f.state)
    };
    assert!(
        p.contains("confirmed_delivered is not possible")
            && p.contains("confirmed_completed, escalated"),
        "{p}"
    );
}

#[test]
fn happy_path_records_with_one_append() {
    let mut f = Flow::new(subject(false));
    assert!(
        f.handle(Event::Choose(Decision::ConfirmedCompleted))
            .is_empty()
    );
    for c in "HTTP 201".chars() {
        f.handle(Event::EditNote(NoteEdit::Insert(c)));
    }
    f.handle(Event::EditNote(NoteEdit::Backspace));
    assert!(f.handle(Event::Submit).is_empty());
    assert!(matches!(f.state, State::Confirming { .. }));
    let fx = f.handle(Event::Confirm);
    assert_eq!(
        fx,
        vec![Effect::Append {
            execution_id: "act_1".into(),
            decision: Decision::ConfirmedCompleted,
            reviewer: "alice".into(),
            note: "HTTP 20".into(),
        }]
    );
    // A second confirm or a cancel while writing does nothing.
    assert!(f.handle(Event::Confirm).is_empty());
    f.handle(Event::Cancel);
    assert!(matches!(f.state, State::Recording { .. }));
    f.handle(Event::Recorded { seq: 4 });
    assert_eq!(
        f.state,
        State::Recorded {
            decision: Decision::ConfirmedCompleted,
            note: "HTTP 20".into(),
            seq: 4
        }
    );
    assert!(f.is_done());
}

#[test]
fn submit_needs_decision_and_note() {
    let mut f = Flow::new(subject(false));
    f.handle(Event::Submit);
    let State::Selecting { problem, .. } = &f.state else {
        panic!()
    };
    assert!(problem.as_deref().unwrap().contains("choose"));
    f.handle(Event::Choose(Decision::Escalated));
    f.handle(Event::EditNote(NoteEdit::Set("   ".into())));
    f.handle(Event::Submit);
    let State::Selecting { problem, .. } = &f.state else {
        panic!()
    };
    assert!(problem.as_deref().unwrap().contains("note"));
}

#[test]
fn a_disallowed_decision_is_refused() {
    let mut f = Flow::new(subject(false));
    f.handle(Event::Choose(Decision::ConfirmedNotExecuted));
    let State::Selecting { draft, problem } = &f.state else {
        panic!()
    };
    assert_eq!(draft.decision, None);
    assert!(
        problem
            .as_deref()
            .unwrap()
            .contains("allows confirmed_completed, escalated")
    );
}

#[test]
fn no_reviewer_no_submit() {
    let mut s = subject(false);
    s.reviewer = String::new();
    let mut f = Flow::new(s);
    f.handle(Event::Choose(Decision::Escalated));
    f.handle(Event::EditNote(NoteEdit::Set("n".into())));
    f.handle(Event::Submit);
    assert!(matches!(f.state, State::Selecting { .. }));
}

#[test]
fn read_only_never_appends() {
    let mut f = Flow::new(subject(true));
    f.handle(Event::Choose(Decision::Escalated));
    f.handle(Event::EditNote(NoteEdit::Set("n".into())));
    f.handle(Event::Submit);
    assert!(f.handle(Event::Confirm).is_empty());
    let State::Confirming { problem, .. } = &f.state else {
        panic!()
    };
    assert!(problem.as_deref().unwrap().contains("read-only"));
}

#[test]
fn a_failed_write_returns_to_confirming_with_the_error() {
    let mut f = Flow::new(subject(false));
    f.handle(Event::Choose(Decision::Escalated));
    f.handle(Event::EditNote(NoteEdit::Set("n".into())));
    f.handle(Event::Submit);
    f.handle(Event::Confirm);
    f.handle(Event::WriteFailed("database is locked".into()));
    let State::Confirming { problem, draft, .. } = &f.state else {
        panic!()
    };
    assert!(problem.as_deref().unwrap().contains("locked"));
    assert_eq!(draft.note, "n");
    // Retry works.
    assert_eq!(f.handle(Event::Confirm).len(), 1);
}

#[test]
fn confirmation_only_while_confirming() {
    let mut f = Flow::new(subject(false));
    assert!(f.confirmation().is_none());
    f.handle(Event::Choose(Decision::ConfirmedCompleted));
    f.handle(Event::EditNote(NoteEdit::Set(
        "201 in the deploy log".into(),
    )));
    f.handle(Event::Submit);
    let c = f.confirmation().unwrap();
    assert_eq!(c.question, "Record confirmed_completed for act_1 as alice?");
    assert_eq!(c.note, "201 in the deploy log");
    assert!(c.consequence.contains("duplicate side effect"));
    f.handle(Event::Confirm);
    assert!(f.confirmation().is_none());
}

#[test]
fn back_keeps_the_draft() {
    let mut f = Flow::new(subject(false));
    f.handle(Event::Choose(Decision::ConfirmedCompleted));
    f.handle(Event::EditNote(NoteEdit::Set("seen in logs".into())));
    f.handle(Event::Submit);
    f.handle(Event::Back);
    assert_eq!(
        f.state,
        State::Selecting {
            draft: draft(Some(Decision::ConfirmedCompleted), "seen in logs"),
            problem: None
        }
    );
}

//! Folds a stream of records from any number of journals into executions,
//! calls and sessions.

use super::{Call, CallRole, Event, EventKind, Execution, Session};
use std::collections::HashMap;

/// One record as a journal reader produces it.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// An agent run.
    Session(Session),
    /// A lifecycle event of the named execution.
    Event {
        /// Execution id the event belongs to.
        execution_id: String,
        /// The event.
        event: Event,
    },
}

/// Everything the journals say, folded by execution. Plain data.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Executions in order of when they began (`accepted`, else first event).
    pub executions: Vec<Execution>,
    /// Calls (created and attached) in time order.
    pub calls: Vec<Call>,
    /// Agent runs in order of appearance.
    pub sessions: Vec<Session>,
    session_index: HashMap<String, usize>,
    execution_index: HashMap<String, usize>,
}

impl Model {
    /// The execution at a position of [`Model::executions`].
    ///
    /// # Panics
    /// When `x` is not a position of this model (indexes come from the
    /// analysis of this very model).
    pub fn execution(&self, x: super::ExecIdx) -> &Execution {
        &self.executions[x.get()]
    }

    /// Looks a session up by its id.
    pub fn session(&self, id: &str) -> Option<&Session> {
        self.session_index.get(id).map(|&i| &self.sessions[i])
    }
    /// Looks an execution up by its id; returns its index.
    pub fn execution_index(&self, id: &str) -> Option<usize> {
        self.execution_index.get(id).copied()
    }
    /// Number of lifecycle events over all executions.
    pub fn event_count(&self) -> usize {
        self.executions.iter().map(|e| e.events.len()).sum()
    }

    /// The model narrowed to the executions `keep` says yes to, each whole
    /// (every event of it), with their calls; and the sessions their calls
    /// came over, or that `keep_session` says yes to. Ids of the executions
    /// left out are no longer found.
    pub fn retain(
        self,
        keep: impl Fn(&Execution) -> bool,
        keep_session: impl Fn(&Session) -> bool,
    ) -> Model {
        let mut new_index = vec![None; self.executions.len()];
        let mut executions = Vec::new();
        for (i, x) in self.executions.into_iter().enumerate() {
            if keep(&x) {
                new_index[i] = Some(executions.len());
                executions.push(x);
            }
        }
        let calls: Vec<Call> = self
            .calls
            .into_iter()
            .filter_map(|c| {
                new_index
                    .get(c.execution)
                    .copied()
                    .flatten()
                    .map(|execution| Call { execution, ..c })
            })
            .collect();
        let execution_index = self
            .execution_index
            .into_iter()
            .filter_map(|(id, i)| new_index.get(i).copied().flatten().map(|n| (id, n)))
            .collect();
        let used: std::collections::HashSet<&str> = calls
            .iter()
            .filter_map(|c| c.call.session_id.as_deref())
            .collect();
        let sessions: Vec<Session> = self
            .sessions
            .into_iter()
            .filter(|s| used.contains(s.session_id.as_str()) || keep_session(s))
            .collect();
        let session_index = sessions
            .iter()
            .enumerate()
            .map(|(i, s)| (s.session_id.clone(), i))
            .collect();
        Model {
            executions,
            calls,
            sessions,
            session_index,
            execution_index,
        }
    }
}

/// Accumulates records; [`ModelBuilder::finish`] sorts and indexes them.
///
/// Records may arrive from several journals in any order: each execution's
/// events are sorted by time at the end (stable, so journal order breaks
/// ties), which is how several files are merged by time (docs/design.md §3).
#[derive(Debug, Default)]
pub struct ModelBuilder {
    executions: Vec<Execution>,
    index: HashMap<String, usize>,
    sessions: Vec<Session>,
    session_index: HashMap<String, usize>,
}

impl ModelBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one record.
    pub fn push(&mut self, record: Record) {
        match record {
            Record::Session(s) => self.push_session(s),
            Record::Event {
                execution_id,
                event,
            } => self.push_event(execution_id, event),
        }
    }

    /// Adds one event of the named execution.
    pub fn push_event(&mut self, execution_id: String, event: Event) {
        if let Some(&i) = self.index.get(&execution_id) {
            self.executions[i].events.push(event);
        } else {
            self.index
                .insert(execution_id.clone(), self.executions.len());
            self.executions.push(Execution {
                id: execution_id,
                events: vec![event],
            });
        }
    }

    /// Adds a session. A second record for the same session id fills in the
    /// fields the first one lacked (a start record, then an end record).
    pub fn push_session(&mut self, s: Session) {
        match self.session_index.get(&s.session_id) {
            Some(&i) => {
                let old = &mut self.sessions[i];
                macro_rules! fill {
                    ($($f:ident),*) => { $( if old.$f.is_none() { old.$f = s.$f; } )* };
                }
                fill!(
                    actor,
                    process,
                    mcp_session_id,
                    client,
                    authorization,
                    started_at,
                    ended_at,
                    end_reason
                );
                for (k, v) in s.extra {
                    old.extra.entry(k).or_insert(v);
                }
            }
            None => {
                self.session_index
                    .insert(s.session_id.clone(), self.sessions.len());
                self.sessions.push(s);
            }
        }
    }

    /// Number of events pushed so far.
    pub fn event_count(&self) -> usize {
        self.executions.iter().map(|e| e.events.len()).sum()
    }

    /// Joins the records of one call made by several layers or journals
    /// (docs/design.md §5.12), sorts events by time, orders executions by
    /// when they began ([`Execution::started_at`]) and derives the call
    /// list.
    pub fn finish(self) -> Model {
        let (mut executions, aliases) = super::join::join(self.executions);
        for e in &mut executions {
            e.events.sort_by_key(|ev| ev.at);
        }
        executions.sort_by_key(|e| e.started_at());
        let mut execution_index: HashMap<String, usize> = executions
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.clone(), i))
            .collect();
        // An execution joined into another is still found by its own id.
        for (alias, id) in aliases {
            if let Some(&i) = execution_index.get(&id) {
                execution_index.entry(alias).or_insert(i);
            }
        }
        let mut calls = Vec::new();
        for (xi, x) in executions.iter().enumerate() {
            let mut created = false;
            for (ei, ev) in x.events.iter().enumerate() {
                let (call, role) = match &ev.kind {
                    // One call created the execution: another layer's
                    // record of the same call is not a second call.
                    EventKind::Accepted { .. } if created => continue,
                    EventKind::Accepted { call, .. } => {
                        created = true;
                        (call, CallRole::Created)
                    }
                    EventKind::Attached { call, recovery } => (call, CallRole::Attached(*recovery)),
                    _ => continue,
                };
                calls.push(Call {
                    call: call.clone(),
                    at: ev.at,
                    role,
                    execution: xi,
                    event: ei,
                });
            }
        }
        calls.sort_by_key(|c| c.at);
        Model {
            executions,
            calls,
            sessions: self.sessions,
            session_index: self.session_index,
            execution_index,
        }
    }
}

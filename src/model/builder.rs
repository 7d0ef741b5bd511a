//! Folds a stream of records from any number of journals into executions,
//! calls and sessions.

use super::{Call, CallRef, CallRole, Event, EventKind, Execution, Session, ToolHint, ToolHints};
// Keys come from journals; foldhash's per-process random seed keeps a
// crafted journal from picking colliding keys (see `FastMap`).
use super::FastMap as HashMap;

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
    /// What a server declared about one of its tools (a `tools/list`
    /// answer's annotations): an untrusted hint (docs/design.md §4.5).
    ToolHint(ToolHint),
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
    /// What servers declared about their tools, in time order.
    pub tool_hints: Vec<ToolHint>,
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
    /// The protocol correlation of a call of this model: its `accepted` or
    /// `attached` event's (an empty one for a call that points at another
    /// kind of event, which [`ModelBuilder::finish`] never makes).
    pub fn call_ref(&self, c: &Call) -> &CallRef {
        static NONE: CallRef = CallRef {
            call_id: None,
            session_id: None,
            jsonrpc_id: None,
            mcp_session_id: None,
            transport: None,
        };
        match self
            .executions
            .get(c.execution)
            .and_then(|x| x.events.get(c.event))
            .map(|e| &e.kind)
        {
            Some(EventKind::Accepted { call, .. } | EventKind::Attached { call, .. }) => call,
            _ => &NONE,
        }
    }
    /// Number of lifecycle events over all executions.
    pub fn event_count(&self) -> usize {
        self.executions.iter().map(|e| e.events.len()).sum()
    }

    /// What the servers declared about `tool`, every answer that listed it
    /// (empty when none did).
    pub fn hints(&self, tool: &str) -> ToolHints<'_> {
        ToolHints {
            all: self.tool_hints.iter().filter(|h| h.tool == tool).collect(),
        }
    }
}

impl Model {
    /// A builder holding everything this model holds, so that records read
    /// after it (a journal that grew) can be added and the model finished
    /// again; finishing gives the model a builder fed every record in the
    /// order read would give, provided the new records come after the old
    /// ones in that order (the same journal, read on). `Err` gives the model
    /// back when it holds executions joined from several layers' records
    /// (docs/design.md §5.12): those cannot be taken apart again.
    pub fn into_builder(self) -> Result<ModelBuilder, Box<Model>> {
        if self.execution_index.len() != self.executions.len() {
            return Err(Box::new(self));
        }
        let mut b = ModelBuilder {
            executions: Vec::with_capacity(self.executions.len()),
            index: HashMap::with_capacity_and_hasher(self.executions.len(), Default::default()),
            sessions: self.sessions,
            session_index: self.session_index,
            tool_hints: self.tool_hints,
        };
        for x in self.executions {
            b.index.insert(x.id.clone(), b.executions.len());
            b.executions.push(x);
        }
        Ok(b)
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
    tool_hints: Vec<ToolHint>,
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
            Record::ToolHint(h) => self.tool_hints.push(h),
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
            // Pushing one by one leaves up to half of each list unused; a
            // model of a million events is kept for the whole session.
            e.events.shrink_to_fit();
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
                let role = match &ev.kind {
                    // One call created the execution: another layer's
                    // record of the same call is not a second call.
                    EventKind::Accepted { .. } if created => continue,
                    EventKind::Accepted { .. } => {
                        created = true;
                        CallRole::Created
                    }
                    EventKind::Attached { recovery, .. } => CallRole::Attached(*recovery),
                    _ => continue,
                };
                calls.push(Call {
                    at: ev.at,
                    role,
                    execution: xi,
                    event: ei,
                });
            }
        }
        calls.sort_by_key(|c| c.at);
        let mut tool_hints = self.tool_hints;
        tool_hints.sort_by_key(|h| h.at);
        Model {
            executions,
            calls,
            sessions: self.sessions,
            tool_hints,
            session_index: self.session_index,
            execution_index,
        }
    }
}

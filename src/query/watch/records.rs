//! The executions a watch holds: records added as they are read, events
//! taken back when a pairing window is read again, executions left with
//! no event forgotten (docs/design.md §7.7).

use super::*;

impl Watch {
    /// Takes back the events of journal `journal` from line `from` on, of
    /// the executions `ids` (a pairing window about to be read again).
    pub(super) fn retract(&mut self, journal: JournalId, from: u32, ids: &HashSet<String>) {
        for id in ids {
            if let Some(x) = self.executions.get_mut(id) {
                let before = x.events.len();
                x.events
                    .retain(|e| e.source.journal() != journal || e.source.position() < from);
                self.stats.events = self
                    .stats
                    .events
                    .saturating_sub((before - x.events.len()) as u64);
            }
        }
    }

    /// Drops an execution with no event left, and its place in its group.
    pub(super) fn forget(&mut self, id: &str, seen: &mut HashMap<String, Seen>) {
        self.executions.remove(id);
        self.positions.remove(id);
        seen.remove(id);
        let key = self
            .key_of
            .remove(id)
            .unwrap_or_else(|| analysis::GroupKey {
                fingerprint: format!("orphan:{id}"),
                actor: "unknown".into(),
                intent_scope: "unscoped".into(),
            });
        if let Some(g) = self.groups.get_mut(&key) {
            g.executions.retain(|x| x != id);
            if g.executions.is_empty() {
                if let Some(v) = g.reported.filter(|&v| v != Verdict::Clean) {
                    self.withdrawn.push(Notice::Withdrawn {
                        group_id: key.id(),
                        previous_verdict: v,
                    });
                }
                self.groups.remove(&key);
                self.waiting.remove(&key);
            } else {
                self.retouched.insert(key);
            }
        }
    }

    /// Adds one record to the executions.
    /// `generation`: the file of its journal it was read from (its count
    /// of rotations and truncations); `seen`: where this poll's events
    /// are, `None` for lines read back for an evicted group (not new:
    /// neither counted nor the event that changed a group).
    pub(super) fn add_read(
        &mut self,
        r: Record,
        generation: u32,
        seen: Option<&mut HashMap<String, Seen>>,
    ) {
        // Lines read back for an evicted group were handed on when they
        // were first read.
        if seen.is_some()
            && let Some(kept) = self.kept.as_mut()
        {
            kept.push(r.clone());
        }
        match r {
            Record::Session(s) => {
                // A second record of a session fills in what the first lacked.
                let mut b = ModelBuilder::new();
                if let Some(old) = self.sessions.remove(&s.session_id) {
                    b.push_session(old);
                }
                let id = s.session_id.clone();
                b.push_session(s);
                if let Some(merged) = b.finish().sessions.pop() {
                    self.sessions.insert(id, merged);
                }
            }
            Record::ToolHint(h) => self.hints.push(h),
            Record::Event {
                execution_id,
                event,
            } => {
                if let Some(seen) = seen {
                    self.stats.events += 1;
                    if self.stats.newest.is_none_or(|n| n < event.at) {
                        self.stats.newest = Some(event.at);
                    }
                    let s = Seen {
                        execution_id: execution_id.clone(),
                        event: event.kind.name(),
                        at: event.at,
                        journal: event.source.journal(),
                        line: event.source.position(),
                    };
                    match seen.get(&execution_id) {
                        Some(old) if old.at > s.at => {}
                        _ => {
                            seen.insert(execution_id.clone(), s);
                        }
                    }
                }
                if self.options.evict_after.is_some()
                    && let Some(at) = self.line_pos(generation, &event.source)
                {
                    self.positions
                        .entry(execution_id.clone())
                        .or_default()
                        .push(at);
                }
                if let crate::model::EventKind::Accepted {
                    idempotency_key: Some(k),
                    ..
                }
                | crate::model::EventKind::Dispatched {
                    idempotency_key: Some(k),
                } = &event.kind
                    && self
                        .carried
                        .entry(k.clone())
                        .or_default()
                        .insert(execution_id.clone())
                {
                    self.keys_of
                        .entry(execution_id.clone())
                        .or_default()
                        .push(k.clone());
                }
                self.executions
                    .entry(execution_id.clone())
                    .or_insert_with(|| Execution {
                        id: execution_id,
                        events: Vec::new(),
                    })
                    .events
                    .push(event);
            }
        }
    }
}

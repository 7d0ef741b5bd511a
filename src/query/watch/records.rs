//! The executions a watch holds: records added as they are read, events
//! taken back when a pairing window is read again, executions left with
//! no event forgotten, and the rows of SQLite journals read
//! (docs/design.md §7.7).

use super::*;

impl Watch {
    /// Reads one SQLite journal's new rows into the executions
    /// (docs/design.md §7.7 "SQLite journals").
    pub(super) fn poll_sqlite(
        &mut self,
        j: usize,
        notices: &mut Vec<Notice>,
        seen: &mut HashMap<String, Seen>,
    ) -> bool {
        let file = &mut self.files[j];
        let Some(tail) = file.sqlite.as_mut() else {
            return false;
        };
        let read = match tail.poll() {
            Ok(r) => r,
            Err(e) => {
                notices.push(Notice::Note {
                    journal: file.name.clone(),
                    text: format!("cannot read it: {e}; trying again"),
                });
                return false;
            }
        };
        if let Some((table, was, now)) = read.shrunk {
            notices.push(Notice::Note {
                journal: file.name.clone(),
                text: format!(
                    "its {table} table ends at row {now}, before row {was} read: rows were deleted or the file replaced; following on from row {now}"
                ),
            });
        }
        self.stats.bad_lines += read.bad.len() as u64;
        notices.extend(read.bad.into_iter().map(Notice::BadLine));
        for r in read.records {
            self.add_read(r, 0, None, Some(seen));
        }
        read.more
    }

    /// Takes back the events of journal `journal` from line `from` on of
    /// its current file, of the executions `ids` (a pairing window about to
    /// be read again): those read there, and those read with a request
    /// there (a span of another file, read with its client's span in this
    /// window). Events read from the file before a rotation (another
    /// generation, whose lines have the same numbers) stay.
    pub(super) fn retract(&mut self, journal: JournalId, from: u32, ids: &HashSet<String>) {
        let current = self
            .files
            .get(usize::from(journal))
            .map_or(0, |f| f.generation);
        let in_window =
            |s: &crate::model::SourceRef| s.journal() == journal && s.position() >= from;
        for id in ids {
            let before = self.executions.get(id).map_or(0, |x| x.events.len());
            self.retain_events(id, |e, generation| {
                generation != current
                    || (!in_window(&e.source) && !e.facts().request.as_ref().is_some_and(in_window))
            });
            let after = self.executions.get(id).map_or(0, |x| x.events.len());
            self.stats.events = self.stats.events.saturating_sub((before - after) as u64);
        }
    }

    /// Keeps the events of a held execution that `keep` accepts (given
    /// each event and the file of its journal it was read from), with
    /// where they were read from in step; whether one of those dropped was
    /// its accepted record.
    pub(super) fn retain_events(
        &mut self,
        id: &str,
        mut keep: impl FnMut(&crate::model::Event, u32) -> bool,
    ) -> bool {
        let (Some(x), Some(gens)) = (self.executions.get_mut(id), self.origin.get_mut(id)) else {
            return false;
        };
        let mut lost_accepted = false;
        let events = std::mem::take(&mut x.events);
        let old = std::mem::take(gens);
        for (e, g) in events.into_iter().zip(old) {
            if keep(&e, g) {
                x.events.push(e);
                gens.push(g);
            } else if matches!(e.kind, crate::model::EventKind::Accepted(_)) {
                lost_accepted = true;
            }
        }
        lost_accepted
    }

    /// The group an execution held is in: its key, or the group of its
    /// own it is in until its accepted record is read.
    pub(super) fn group_key_of(&self, id: &str) -> GroupKey {
        self.key_of
            .get(id)
            .cloned()
            .unwrap_or_else(|| analysis::GroupKey {
                fingerprint: format!("orphan:{id}"),
                actor: "unknown".into(),
                intent_scope: "unscoped".into(),
            })
    }

    /// The idempotency keys an execution carries, found again from its
    /// events (some were dropped).
    pub(super) fn refresh_keys(&mut self, id: &str) {
        for k in self.keys_of.remove(id).unwrap_or_default() {
            if let Some(c) = self.carried.get_mut(&k) {
                c.remove(id);
                if c.is_empty() {
                    self.carried.remove(&k);
                }
            }
        }
        let Some(x) = self.executions.get(id) else {
            return;
        };
        for e in &x.events {
            if let Some(k) = e.kind.idempotency_key()
                && self
                    .carried
                    .entry(k.to_string())
                    .or_default()
                    .insert(id.to_string())
            {
                self.keys_of
                    .entry(id.to_string())
                    .or_default()
                    .push(k.to_string());
            }
        }
    }

    /// Takes a held execution out of its group, to be placed again by
    /// [`Watch::place`] (it lost its accepted record, so its group key
    /// may be another now).
    pub(super) fn unplace(&mut self, id: &str) {
        let key = self.group_key_of(id);
        self.key_of.remove(id);
        self.rekey.insert(id.to_string());
        self.leave_group(id, key);
    }

    /// Takes an execution out of group `key`: a group left with none is
    /// gone (withdrawn, if it was printed not clean), another is judged
    /// again.
    fn leave_group(&mut self, id: &str, key: GroupKey) {
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

    /// Drops an execution with no event left, and its place in its group.
    pub(super) fn forget(&mut self, id: &str, seen: &mut HashMap<String, Seen>) {
        self.executions.remove(id);
        self.origin.remove(id);
        self.positions.remove(id);
        self.rekey.remove(id);
        self.refresh_keys(id);
        seen.remove(id);
        let key = self.group_key_of(id);
        self.key_of.remove(id);
        self.leave_group(id, key);
    }

    /// Adds one record to the executions.
    /// `generation`: the file of its journal it was read from (its count
    /// of rotations and truncations); `hash`: its line's
    /// ([`evict::line_hash`]), where its line can be read back; `seen`:
    /// where this poll's events are, `None` for lines read back for an
    /// evicted group (not new: neither counted nor the event that changed
    /// a group).
    pub(super) fn add_read(
        &mut self,
        r: Record,
        generation: u32,
        hash: Option<u32>,
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
                self.session_parts.entry(id.clone()).or_default().push((
                    s.source.journal(),
                    generation,
                    (*s).clone(),
                ));
                b.push_session(*s);
                if let Some(merged) = b.finish().sessions.pop() {
                    self.sessions.insert(id, merged);
                }
            }
            Record::ToolHint(h) => {
                self.hints.push(h);
                self.hint_generations.push(generation);
            }
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
                    && let Some(at) = self.line_pos(generation, hash, &event.source)
                {
                    match self.positions.get_mut(&execution_id) {
                        Some(p) => p.push(at),
                        None => {
                            self.positions.insert(execution_id.clone(), vec![at]);
                        }
                    }
                }
                if let Some(k) = event.kind.idempotency_key()
                    && self
                        .carried
                        .entry(k.to_string())
                        .or_default()
                        .insert(execution_id.clone())
                {
                    self.keys_of
                        .entry(execution_id.clone())
                        .or_default()
                        .push(k.to_string());
                }
                // Most events are of an execution already held: its id is
                // not copied for them.
                match self.origin.get_mut(&execution_id) {
                    Some(o) => o.push(generation),
                    None => {
                        self.origin.insert(execution_id.clone(), vec![generation]);
                    }
                }
                match self.executions.get_mut(&execution_id) {
                    Some(x) => x.events.push(event),
                    None => {
                        self.executions.insert(
                            execution_id.clone(),
                            Execution {
                                id: execution_id,
                                events: vec![event],
                            },
                        );
                    }
                }
            }
        }
    }
}

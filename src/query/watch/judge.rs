//! Judging the groups a poll touched (docs/design.md §7.7): a model of
//! just their executions, the same analysis `retrace groups` runs, and
//! what is news against what was reported.

use super::*;

impl Watch {
    /// A model of these executions, with the sessions their calls name and
    /// the tools' hints: what analysis sees of them.
    pub(super) fn model_of<'a>(
        &self,
        ids: impl Iterator<Item = &'a String>,
    ) -> crate::model::Model {
        let mut b = ModelBuilder::new();
        let mut sessions = HashSet::new();
        for id in ids {
            let Some(x) = self.executions.get(id) else {
                continue;
            };
            for e in &x.events {
                if let Some(call) = e.kind.call()
                    && let Some(s) = call.session_id.as_deref()
                    && sessions.insert(s.to_string())
                    && let Some(session) = self.sessions.get(s)
                {
                    b.push_session(session.clone());
                }
                b.push_event(x.id.clone(), e.clone());
            }
        }
        for h in &self.hints {
            b.push(Record::ToolHint(h.clone()));
        }
        b.finish()
    }

    /// Puts the executions that got events into their groups; the groups
    /// touched.
    pub(super) fn place(&mut self, seen: &HashMap<String, Seen>) -> HashSet<GroupKey> {
        // Executions that lost their accepted record to a truncation are
        // placed again, as new ones are.
        let rekey = std::mem::take(&mut self.rekey);
        let unkeyed: Vec<&String> = seen
            .keys()
            .chain(rekey.iter().filter(|id| !seen.contains_key(*id)))
            .filter(|id| !self.key_of.contains_key(*id) && self.executions.contains_key(*id))
            .collect();
        let mut new_keys = Vec::new();
        if !unkeyed.is_empty() {
            let model = self.model_of(unkeyed.iter().copied());
            let keys = incremental::group_keys(&model, &self.config);
            for id in unkeyed {
                if let Some(i) = model.execution_index(id)
                    && let Some(k) = keys.get(i)
                {
                    new_keys.push((id.clone(), k.clone()));
                }
            }
        }
        let mut touched = HashSet::new();
        for (id, key) in new_keys {
            if key.is_orphan() {
                // No accepted record yet: a group of its own until one comes.
                let g = self.groups.entry(key.clone()).or_default();
                if g.executions.is_empty() {
                    g.executions.push(id.clone());
                }
                touched.insert(key);
                continue;
            }
            // An orphan whose accepted record came later joins its group.
            let orphan = analysis::GroupKey {
                fingerprint: format!("orphan:{id}"),
                actor: "unknown".into(),
                intent_scope: "unscoped".into(),
            };
            self.groups.remove(&orphan);
            self.waiting.remove(&orphan);
            // A retry of a group evicted: its executions come back first.
            self.read_back_key(&key);
            self.groups
                .entry(key.clone())
                .or_default()
                .executions
                .push(id.clone());
            self.key_of.insert(id, key);
        }
        for id in seen.keys().chain(&rekey) {
            if let Some(k) = self.key_of.get(id) {
                touched.insert(k.clone());
            }
        }
        let now = Instant::now();
        for k in &touched {
            if let Some(g) = self.groups.get_mut(k) {
                g.touched = Some(now);
            }
        }
        touched
    }

    /// Judges the touched groups, together, and reports what changed.
    pub(super) fn judge(
        &mut self,
        touched: &HashSet<GroupKey>,
        seen: &HashMap<String, Seen>,
        notices: &mut Vec<Notice>,
    ) {
        if touched.is_empty() {
            return;
        }
        let judged = self.sharing_keys_read_back(touched);
        let ids = judged
            .iter()
            .filter_map(|k| self.groups.get(k))
            .flat_map(|g| g.executions.iter());
        let model = self.model_of(ids);
        let analysis = analysis::analyze(&model, &self.caps, &self.config);
        self.stats.judged += judged.len() as u64;
        let by_id: HashMap<String, &GroupKey> = judged.iter().map(|k| (k.id(), k)).collect();
        let mut changes = Vec::new();
        for g in &analysis.groups {
            let Some(&key) = by_id.get(&g.id) else {
                continue;
            };
            let execution_ids: Vec<String> = g
                .executions
                .iter()
                .map(|&x| model.execution(x).id().to_string())
                .collect();
            let changed_by = execution_ids
                .iter()
                .filter_map(|id| seen.get(id))
                .max_by_key(|s| (s.at, s.line))
                .map(|s| ChangeEvent {
                    execution_id: s.execution_id.clone(),
                    event: s.event,
                    at: s.at,
                    journal: self
                        .files
                        .get(s.journal as usize)
                        .map_or_else(String::new, |f| f.name.clone()),
                    line: s.line,
                })
                // A group judged with no event of its own this poll (it
                // shares an idempotency key with one that had): its newest
                // event, from the model it was judged on.
                .or_else(|| {
                    g.executions
                        .iter()
                        .flat_map(|&x| {
                            let ex = model.execution(x);
                            ex.events().map(move |e| (ex, e))
                        })
                        .max_by_key(|(_, e)| (e.at(), e.source().position()))
                        .map(|(ex, e)| ChangeEvent {
                            execution_id: ex.id().to_string(),
                            event: e.kind().name(),
                            at: e.at(),
                            journal: self
                                .files
                                .get(e.source().journal() as usize)
                                .map_or_else(String::new, |f| f.name.clone()),
                            line: e.source().position(),
                        })
                });
            let Some(live) = self.groups.get_mut(key) else {
                continue;
            };
            live.current = Some(g.verdict);
            let change = Change {
                group_id: g.id.clone(),
                verdict: g.verdict,
                previous_verdict: live.reported,
                severity: g.verdict.severity(),
                tool: g.tool.to_string(),
                actor: g.actor.clone(),
                intent_scope: g.intent_scope.clone(),
                executions: g.executions.len(),
                calls: g.calls,
                execution_ids,
                changed_by,
            };
            if !worth_reporting(live.reported, g.verdict) {
                live.waiting = None;
                self.waiting.remove(key);
                continue;
            }
            if g.verdict.severity() <= Severity::High {
                live.reported = Some(g.verdict);
                live.waiting = None;
                self.waiting.remove(key);
                changes.push(change);
            } else {
                live.waiting = Some(change);
                self.waiting.insert(key.clone());
            }
        }
        notices.extend(changes.into_iter().map(|c| Notice::Change(Box::new(c))));
        // A group whose executions the model joined into others' (one call
        // recorded by several layers, docs/design.md §5.12) is no group now.
        let judged_ids: HashSet<&str> = analysis.groups.iter().map(|g| g.id.as_str()).collect();
        for k in &judged {
            let id = k.id();
            if judged_ids.contains(id.as_str()) {
                continue;
            }
            if let Some(live) = self.groups.get_mut(k) {
                live.current = None;
                live.waiting = None;
                if let Some(v) = live.reported.take().filter(|&v| v != Verdict::Clean) {
                    notices.push(Notice::Withdrawn {
                        group_id: id,
                        previous_verdict: v,
                    });
                }
            }
            self.waiting.remove(k);
        }
    }

    /// [`Watch::sharing_keys`], with the evicted groups that share a key
    /// read back first (docs/design.md §7.7 "Memory").
    fn sharing_keys_read_back(&mut self, touched: &HashSet<GroupKey>) -> HashSet<GroupKey> {
        loop {
            let all = self.sharing_keys(touched);
            if self.evictions.len() == 0 {
                return all;
            }
            let keys: Vec<String> = all
                .iter()
                .filter_map(|k| self.groups.get(k))
                .flat_map(|g| g.executions.iter())
                .filter_map(|x| self.keys_of.get(x))
                .flatten()
                .cloned()
                .collect();
            if !self.read_back_idempotency(&keys) {
                return all;
            }
        }
    }

    /// The touched groups and every group that shares an idempotency key
    /// with one of them, through any chain of shared keys.
    fn sharing_keys(&self, touched: &HashSet<GroupKey>) -> HashSet<GroupKey> {
        let mut all = touched.clone();
        let mut work: Vec<GroupKey> = touched.iter().cloned().collect();
        while let Some(g) = work.pop() {
            let Some(live) = self.groups.get(&g) else {
                continue;
            };
            for x in &live.executions {
                for k in self.keys_of.get(x).into_iter().flatten() {
                    for other in self.carried.get(k).into_iter().flatten() {
                        // An execution with no accepted record is in a
                        // group of its own, and shares its keys too.
                        let og = match self.key_of.get(other) {
                            Some(k) if all.contains(k) => continue,
                            Some(k) => k.clone(),
                            None => {
                                let o = self.group_key_of(other);
                                if !self.groups.contains_key(&o) {
                                    continue;
                                }
                                o
                            }
                        };
                        if all.insert(og.clone()) {
                            work.push(og);
                        }
                    }
                }
            }
        }
        all
    }

    /// Reports the waiting changes of groups that have been quiet long
    /// enough.
    pub(super) fn settle(&mut self, notices: &mut Vec<Notice>) {
        if self.waiting.is_empty() {
            return;
        }
        let settle = self.options.settle;
        let now = Instant::now();
        let mut done = Vec::new();
        for k in &self.waiting {
            let Some(g) = self.groups.get_mut(k) else {
                done.push(k.clone());
                continue;
            };
            if g.touched.is_some_and(|t| now.duration_since(t) < settle) {
                continue;
            }
            done.push(k.clone());
            if let Some(mut c) = g.waiting.take() {
                c.previous_verdict = g.reported;
                g.reported = Some(c.verdict);
                notices.push(Notice::Change(Box::new(c)));
            }
        }
        for k in done {
            self.waiting.remove(&k);
        }
    }
}

/// Whether a verdict is news against the one last reported: a group
/// becomes worth a look (its verdict is not `clean`), or its verdict
/// changed.
fn worth_reporting(reported: Option<Verdict>, now: Verdict) -> bool {
    match reported {
        None => now != Verdict::Clean,
        Some(r) => r != now,
    }
}

//! What a truncation or a rewrite takes away (docs/design.md §7.7
//! "Truncation and rewrites"): the lines of a file that is gone are
//! dropped from every group that had them, held or evicted, and those
//! groups are judged again, so that the verdicts are those of the files
//! as they now are, whenever the groups were let go of.

use super::*;

impl Watch {
    /// Drops what was read from file `generation` of journal `j` (its
    /// count of rotations and truncations then): the held events, session
    /// records and hints read from it, the handle kept on it, and its
    /// lines in the evicted groups' index. A group that lost events is
    /// judged again at this poll; one left with no execution is gone, and
    /// said to be withdrawn if it was printed with a verdict other than
    /// `clean`; an execution that lost its accepted record is placed in a
    /// group again.
    pub(super) fn drop_file(
        &mut self,
        j: usize,
        generation: u32,
        seen: &mut HashMap<String, Seen>,
    ) {
        let journal = JournalId::try_from(j).unwrap_or(JournalId::MAX);
        let from = move |jj: u32, g: u32| jj == u32::from(journal) && g == generation;
        if let Some(f) = self.files.get_mut(j) {
            f.generations.retain(|h| h.generation != generation);
            f.window_executions.clear();
        }
        let hit: Vec<String> = self
            .origin
            .iter()
            .filter(|(id, gens)| {
                self.executions.get(*id).is_some_and(|x| {
                    x.events
                        .iter()
                        .zip(gens.iter())
                        .any(|(e, &g)| from(e.source.journal().into(), g))
                })
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in hit {
            let lost_accepted = self.retain_events(&id, |e, g| !from(e.source.journal().into(), g));
            if let Some(p) = self.positions.get_mut(&id) {
                p.retain(|l| !from(l.journal, l.generation));
            }
            self.refresh_keys(&id);
            if self.executions.get(&id).is_none_or(|x| x.events.is_empty()) {
                self.forget(&id, seen);
            } else if lost_accepted {
                self.unplace(&id);
            } else {
                let key = self.group_key_of(&id);
                self.retouched.insert(key);
            }
        }
        // Sessions and hints read from the file.
        let mut changed = Vec::new();
        for (sid, parts) in &mut self.session_parts {
            let before = parts.len();
            parts.retain(|(jj, g, _)| !from((*jj).into(), *g));
            if parts.len() != before {
                changed.push(sid.clone());
            }
        }
        for sid in changed {
            let parts = self.session_parts.get(&sid).cloned().unwrap_or_default();
            self.sessions.remove(&sid);
            if parts.is_empty() {
                self.session_parts.remove(&sid);
                continue;
            }
            let mut b = ModelBuilder::new();
            for (_, _, s) in parts {
                b.push_session(s);
            }
            if let Some(merged) = b.finish().sessions.pop() {
                self.sessions.insert(sid, merged);
            }
        }
        if self.hint_generations.len() == self.hints.len() {
            let gens = std::mem::take(&mut self.hint_generations);
            let hints = std::mem::take(&mut self.hints);
            for (h, g) in hints.into_iter().zip(gens) {
                if !from(h.source.journal().into(), g) {
                    self.hints.push(h);
                    self.hint_generations.push(g);
                }
            }
        }
        self.drop_evicted_lines(journal.into(), generation);
    }

    /// Takes the files whose lines read back were found changed as
    /// rewritten (docs/design.md §7.7 "Truncation and rewrites"): the one
    /// a journal is now is read again from its start (a
    /// [`Notice::Truncated`]), one it was before a rotation is no longer
    /// read back (a [`Notice::Note`]), and what either held is dropped
    /// ([`Watch::drop_file`]); whether there was any.
    pub(super) fn apply_rewrites(
        &mut self,
        notices: &mut Vec<Notice>,
        seen: &mut HashMap<String, Seen>,
    ) -> bool {
        let mut any = false;
        // Dropping a file reads back groups, which may find another.
        while let Some((journal, generation)) = self.rewritten.pop() {
            any = true;
            let j = journal as usize;
            let Some(file) = self.files.get_mut(j) else {
                continue;
            };
            if generation == file.generation {
                match file.follower.rewind() {
                    Ok((was, now)) => notices.push(Notice::Truncated {
                        journal: file.name.clone(),
                        was,
                        now,
                    }),
                    Err(e) => notices.push(Notice::Note {
                        journal: file.name.clone(),
                        text: format!("cannot read it: {e}; trying again"),
                    }),
                }
                if let Some(r) = file.reader.as_mut() {
                    r.restart();
                }
                file.generation += 1;
            } else if file.generations.iter().any(|g| g.generation == generation) {
                notices.push(Notice::Note {
                    journal: file.name.clone(),
                    text: "a line of a file it was before a rotation changed since it was read: what that file held is left out".into(),
                });
            } else {
                continue;
            }
            self.drop_file(j, generation, seen);
        }
        any
    }
}

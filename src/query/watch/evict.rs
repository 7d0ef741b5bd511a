//! Flat memory while watching (docs/design.md §7.7 "Memory"): a group
//! quiet for [`WatchOptions::evict_after`] gives up its executions' events
//! and keeps only where their lines are in the journal files; when a later
//! event touches it (a late outcome, a retry, a reviewer's call shares its
//! key), its lines are read back from the files and it is judged whole,
//! exactly as before it was evicted.
//!
//! What an evicted group keeps: its key's 128-bit hash, its verdicts (the
//! one judged and the one reported), its count of executions, and per
//! event line the file, line number, byte offset, length (a few bytes
//! each, delta-coded) and a 32-bit hash of the line's bytes, checked when
//! it is read back (a line changed since is a file rewritten). What
//! finds it again: 64-bit hashes of its executions' ids and of the
//! idempotency keys they carried. A hash is only a pointer to a group to
//! read back: what is read back is placed by what its lines say, so a
//! collision costs one read, never a verdict.

use super::store::{Map, Store, Stored};
use super::*;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Reads bytes at an offset without moving the handle's position (the
/// follower reads on through a handle on the same open file).
#[cfg(unix)]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> Option<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset).ok()
}

#[cfg(not(unix))]
fn read_at(_: &std::fs::File, _: &mut [u8], _: u64) -> Option<()> {
    None
}

/// A line's bytes (without its newline) as [`LinePos::hash`] keeps them:
/// SipHash-1-3 with fixed keys, cut to 32 bits (a line changed in place
/// passes unseen once in 4 billion).
pub(super) fn line_hash(bytes: &[u8]) -> u32 {
    let mut h = DefaultHasher::new();
    h.write(bytes);
    h.finish() as u32
}

/// The hash of the line a record was read from, in the chunk it was read
/// from.
pub(super) fn chunk_line_hash(chunk: &crate::journal::follow::Chunk, r: &Record) -> Option<u32> {
    let Record::Event { event, .. } = r else {
        return None;
    };
    let crate::model::SourceRef::Line { offset, len, .. } = event.source else {
        return None;
    };
    let from = usize::try_from(offset.get().checked_sub(chunk.first_offset)?).ok()?;
    let bytes = chunk.bytes.get(from..from.checked_add(len as usize)?)?;
    Some(line_hash(bytes))
}

/// What reading a line back gave.
enum LineRead {
    /// Its records, as when it was first read.
    Records(Vec<Record>),
    /// Its file is no longer kept (dropped at a truncation).
    Gone,
    /// The line there now is not the one read (another length, other
    /// bytes): the file was rewritten.
    Changed,
}

/// Where an event's line is in a followed file: enough to read it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct LinePos {
    /// The journal (index of [`Watch::files`]).
    pub journal: u32,
    /// The file of the journal it is in: its count of rotations and
    /// truncations before the line was read.
    pub generation: u32,
    /// Byte offset of the line in that file.
    pub offset: u64,
    /// 1-based line number.
    pub line: u32,
    /// Length without its newline.
    pub len: u32,
    /// [`line_hash`] of its bytes when it was read.
    pub hash: u32,
}

/// An open handle on one file a journal was, kept so that an evicted
/// group's lines can be read back after the journal was rotated (the
/// renamed or unlinked file stays readable through it).
pub(super) struct Generation {
    pub generation: u32,
    pub file: std::fs::File,
}

/// The evicted groups, and what finds them again.
#[derive(Default)]
pub(super) struct Evictions {
    store: Store,
    /// Slots never used yet start here.
    next: u32,
    /// Slots used and given back.
    free: Vec<u32>,
    /// How many groups are evicted.
    groups: usize,
    /// The ids of the evicted groups last printed with a verdict other
    /// than `clean`, by slot: to say they are withdrawn if a truncation
    /// takes all their lines.
    printed: HashMap<u32, String>,
    /// How many executions the evicted groups have.
    executions: usize,
    /// When groups were last looked at for eviction.
    last_scan: Option<Instant>,
    /// Groups read back since the watch began.
    pub read_back: u64,
    /// The first error of the index on disk, if any (said once; the
    /// index then holds what it could write).
    pub fault: Option<String>,
}

impl Evictions {
    /// What the index holds in memory whatever its store: entries of an
    /// index in memory, slots given back, groups printed not clean.
    #[cfg(test)]
    pub fn in_memory(&self) -> usize {
        self.store.in_memory() + self.free.len() + self.printed.len()
    }

    /// The index's temporary file, if it is on disk.
    #[cfg(test)]
    pub fn path(&self) -> Option<&std::path::Path> {
        self.store.path()
    }

    /// An empty index on disk, in a temporary file in `dir`; in memory if
    /// none can be made there, with why.
    pub fn on_disk_in(dir: &std::path::Path) -> (Evictions, Option<String>) {
        let (store, why) = Store::on_disk_in(dir);
        (
            Evictions {
                store,
                ..Evictions::default()
            },
            why,
        )
    }

    /// Whether the index is kept on disk.
    pub fn on_disk(&self) -> bool {
        self.store.on_disk()
    }

    /// How many groups are evicted.
    pub fn len(&self) -> usize {
        self.groups
    }

    /// How many executions the evicted groups hold.
    pub fn executions(&self) -> usize {
        self.executions
    }

    /// Keeps the first error of the store.
    fn ok<T: Default>(&mut self, r: rusqlite::Result<T>) -> T {
        r.unwrap_or_else(|e| {
            self.fault.get_or_insert_with(|| e.to_string());
            T::default()
        })
    }

    /// Commits what this poll wrote to the index.
    pub fn flush(&mut self) {
        let r = self.store.flush();
        self.ok(r);
    }

    /// Takes a slot's group out of the index (its pointers from hashes
    /// are left to [`Evictions::sweep`]).
    fn take(&mut self, slot: u32) -> Option<Stored> {
        let r = self.store.take(slot);
        let e = self.ok(r)?;
        self.free.push(slot);
        self.groups = self.groups.saturating_sub(1);
        self.printed.remove(&slot);
        self.executions = self.executions.saturating_sub(e.executions as usize);
        Some(e)
    }

    /// Drops every pointer from a hash to a slot that holds no group.
    fn sweep(&mut self) {
        let r = self.store.sweep();
        self.ok(r);
    }

    fn point(&mut self, m: Map, h: u64, slot: u32) {
        let r = self.store.point(m, h, slot);
        self.ok(r);
    }

    fn unpoint(&mut self, m: Map, h: u64, slot: u32) {
        let r = self.store.unpoint(m, h, slot);
        self.ok(r);
    }

    fn slots(&mut self, m: Map, h: u64) -> Vec<u32> {
        let r = self.store.slots(m, h);
        self.ok(r)
    }

    fn slot_of_key(&mut self, key: u128) -> Option<u32> {
        let r = self.store.slot_of_key(key);
        self.ok(r)
    }
}

fn hash64(seed: u64, s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    seed.hash(&mut h);
    s.hash(&mut h);
    h.finish()
}

fn hash_key(k: &GroupKey) -> u128 {
    let one = |seed: u64| {
        let mut h = DefaultHasher::new();
        seed.hash(&mut h);
        k.hash(&mut h);
        h.finish()
    };
    (u128::from(one(1)) << 64) | u128::from(one(2))
}

fn execution_hash(id: &str) -> u64 {
    hash64(3, id)
}

fn idempotency_hash(k: &str) -> u64 {
    hash64(4, k)
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn take(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Sorted lines as varints: journal and generation, then offset and line
/// as deltas from the line before in the same file, then length.
pub(super) fn encode(lines: &mut [LinePos]) -> Vec<u8> {
    lines.sort_unstable();
    let mut out = Vec::with_capacity(lines.len() * 6);
    let mut prev: Option<LinePos> = None;
    for l in lines.iter() {
        put(&mut out, u64::from(l.journal));
        put(&mut out, u64::from(l.generation));
        let (o, n) = match prev {
            Some(p) if p.journal == l.journal && p.generation == l.generation => {
                (l.offset - p.offset, u64::from(l.line.wrapping_sub(p.line)))
            }
            _ => (l.offset, u64::from(l.line)),
        };
        put(&mut out, o);
        put(&mut out, n & 0xffff_ffff);
        put(&mut out, u64::from(l.len));
        out.extend_from_slice(&l.hash.to_le_bytes());
        prev = Some(*l);
    }
    out
}

pub(super) fn decode(bytes: &[u8]) -> Vec<LinePos> {
    let mut out: Vec<LinePos> = Vec::new();
    let mut at = 0;
    let mut next = || -> Option<LinePos> {
        let journal = u32::try_from(take(bytes, &mut at)?).ok()?;
        let generation = u32::try_from(take(bytes, &mut at)?).ok()?;
        let o = take(bytes, &mut at)?;
        let n = u32::try_from(take(bytes, &mut at)?).ok()?;
        let len = u32::try_from(take(bytes, &mut at)?).ok()?;
        let hash = u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?);
        at += 4;
        Some(LinePos {
            journal,
            generation,
            offset: o,
            line: n,
            len,
            hash,
        })
    };
    while let Some(mut l) = next() {
        if let Some(p) = out.last()
            && p.journal == l.journal
            && p.generation == l.generation
        {
            l.offset += p.offset;
            l.line = l.line.wrapping_add(p.line);
        }
        out.push(l);
    }
    out
}

impl Watch {
    /// Where an event just read is, if its journal's lines can be read
    /// back: a native JSONL journal, whose records each come from one line
    /// and carry their own ids (docs/design.md §7.7 "Memory").
    pub(super) fn line_pos(
        &self,
        generation: u32,
        hash: Option<u32>,
        source: &crate::model::SourceRef,
    ) -> Option<LinePos> {
        let hash = hash?;
        let crate::model::SourceRef::Line {
            journal,
            line,
            offset,
            len,
        } = *source
        else {
            return None;
        };
        let file = self.files.get(journal as usize)?;
        // Elsewhere than on Unix a read at an offset moves the handle the
        // follower reads through, and a renamed file cannot be kept open:
        // nothing is evicted there.
        let readable = cfg!(unix)
            && file.sqlite.is_none()
            && file
                .reader
                .as_ref()
                .is_some_and(|r| r.format() == Format::Native);
        readable.then_some(LinePos {
            journal: u32::from(journal),
            generation,
            offset: offset.get(),
            line,
            len,
            hash,
        })
    }

    /// Evicts the groups quiet for longer than
    /// [`WatchOptions::evict_after`] whose every event's line can be read
    /// back and that have no change waiting to be reported.
    pub(super) fn evict_quiet(&mut self) {
        let Some(after) = self.options.evict_after else {
            return;
        };
        let now = Instant::now();
        if self
            .evictions
            .last_scan
            .is_some_and(|t| now.duration_since(t) < after / 2)
        {
            return;
        }
        self.evictions.last_scan = Some(now);
        let quiet: Vec<GroupKey> = self
            .groups
            .iter()
            .filter(|(k, g)| {
                g.touched.is_some_and(|t| now.duration_since(t) >= after)
                    && g.waiting.is_none()
                    && !self.waiting.contains(*k)
                    && !self.retouched.contains(*k)
                    && g.executions.iter().all(|x| self.readable(x))
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in quiet {
            self.evict(k);
        }
    }

    /// Whether every event of an execution can be read back.
    fn readable(&self, id: &str) -> bool {
        let (Some(x), Some(at)) = (self.executions.get(id), self.positions.get(id)) else {
            return false;
        };
        x.events.len() == at.len()
            && at.iter().all(|l| {
                self.files
                    .get(l.journal as usize)
                    .is_some_and(|f| f.generations.iter().any(|g| g.generation == l.generation))
            })
    }

    fn evict(&mut self, key: GroupKey) {
        let Some(g) = self.groups.remove(&key) else {
            return;
        };
        let slot = match self.evictions.free.pop() {
            Some(s) => s,
            None => {
                let s = self.evictions.next;
                self.evictions.next = s.saturating_add(1);
                s
            }
        };
        let mut lines = Vec::new();
        for id in &g.executions {
            self.executions.remove(id);
            self.origin.remove(id);
            lines.extend(self.positions.remove(id).unwrap_or_default());
            self.key_of.remove(id);
            self.evictions
                .point(Map::Execution, execution_hash(id), slot);
            for k in self.keys_of.remove(id).unwrap_or_default() {
                if let Some(c) = self.carried.get_mut(&k) {
                    c.remove(id);
                    if c.is_empty() {
                        self.carried.remove(&k);
                    }
                }
                self.evictions
                    .point(Map::Idempotency, idempotency_hash(&k), slot);
            }
        }
        lines.dedup();
        let executions = u32::try_from(g.executions.len()).unwrap_or(u32::MAX);
        self.evictions.executions += executions as usize;
        if g.reported.is_some_and(|v| v != Verdict::Clean) {
            self.evictions.printed.insert(slot, key.id());
        }
        let r = self.evictions.store.insert(
            slot,
            Stored {
                key: hash_key(&key),
                executions,
                lines: encode(&mut lines),
                current: g.current,
                reported: g.reported,
            },
        );
        self.evictions.ok(r);
        self.evictions.groups += 1;
    }

    /// Reads back the evicted groups an execution id may belong to.
    pub(super) fn read_back_execution(&mut self, id: &str) {
        if self.executions.contains_key(id) {
            return;
        }
        for s in self.evictions.slots(Map::Execution, execution_hash(id)) {
            self.read_back(s);
        }
    }

    /// Reads back the evicted group of a key, if it is evicted.
    pub(super) fn read_back_key(&mut self, key: &GroupKey) {
        if self.evictions.len() == 0 {
            return;
        }
        if let Some(s) = self.evictions.slot_of_key(hash_key(key)) {
            self.read_back(s);
        }
    }

    /// Reads back the evicted groups whose executions carried one of
    /// these idempotency keys; whether any was.
    pub(super) fn read_back_idempotency(&mut self, keys: &[String]) -> bool {
        let mut slots = Vec::new();
        for k in keys {
            slots.extend(self.evictions.slots(Map::Idempotency, idempotency_hash(k)));
        }
        let mut any = false;
        for s in slots {
            any |= self.read_back(s);
        }
        any
    }

    /// Reads one evicted group's lines back from the files and puts its
    /// executions, verdicts and keys back where they were; whether the
    /// slot held a group.
    fn read_back(&mut self, slot: u32) -> bool {
        self.read_back_slot(slot).is_some()
    }

    /// [`Watch::read_back`]; the keys of the groups its executions are in
    /// now.
    pub(super) fn read_back_slot(&mut self, slot: u32) -> Option<Vec<GroupKey>> {
        let printed = self.evictions.printed.get(&slot).cloned();
        let e = self.evictions.take(slot)?;
        self.evictions.read_back += 1;
        let mut records = Vec::new();
        let mut lost = false;
        for l in decode(&e.lines) {
            match self.read_line(l) {
                LineRead::Records(r) => {
                    records.extend(r.into_iter().map(|r| (l.generation, l.hash, r)));
                }
                LineRead::Gone => lost = true,
                LineRead::Changed => {
                    lost = true;
                    if !self.rewritten.contains(&(l.journal, l.generation)) {
                        self.rewritten.push((l.journal, l.generation));
                    }
                }
            }
        }
        let mut ids: Vec<String> = Vec::new();
        for (generation, hash, r) in records {
            if let Record::Event { execution_id, .. } = &r {
                if !ids.contains(execution_id) {
                    ids.push(execution_id.clone());
                }
                self.evictions
                    .unpoint(Map::Execution, execution_hash(execution_id), slot);
            }
            self.add_read(r, generation, Some(hash), None);
        }
        for id in &ids {
            for k in self.keys_of.get(id).cloned().unwrap_or_default() {
                self.evictions
                    .unpoint(Map::Idempotency, idempotency_hash(&k), slot);
            }
        }
        if lost {
            // Executions whose every line is gone leave pointers behind.
            self.evictions.sweep();
        }
        let model = self.model_of(ids.iter());
        let keys = incremental::group_keys(&model, &self.config);
        let now = Instant::now();
        let mut placed = Vec::new();
        for id in &ids {
            let Some(key) = model.execution_index(id).and_then(|i| keys.get(i)).cloned() else {
                continue;
            };
            let g = self.groups.entry(key.clone()).or_default();
            if !g.executions.contains(id) {
                g.executions.push(id.clone());
            }
            // The verdicts are the group's, not those of a group of its
            // own an execution that lost its accepted record is in now.
            if g.current.is_none() && g.reported.is_none() && hash_key(&key) == e.key {
                g.current = e.current;
                g.reported = e.reported;
            }
            g.touched = Some(now);
            if !placed.contains(&key) {
                placed.push(key.clone());
            }
            if !key.is_orphan() {
                self.key_of.insert(id.clone(), key);
            }
        }
        // Its executions all left it (their lines gone, or changed).
        if !placed.iter().any(|k| hash_key(k) == e.key)
            && let (Some(group_id), Some(v)) =
                (printed, e.reported.filter(|&v| v != Verdict::Clean))
        {
            self.withdrawn.push(Notice::Withdrawn {
                group_id,
                previous_verdict: v,
            });
        }
        Some(placed)
    }

    /// Drops the lines of file `generation` of journal `journal` from the
    /// evicted groups (a truncation took them): a group left with none
    /// is gone (withdrawn, if it was printed not clean), one left with
    /// some is read back and judged again at this poll.
    pub(super) fn drop_evicted_lines(&mut self, journal: u32, generation: u32) {
        let r = self.evictions.store.changed_lines(|bytes| {
            let lines = decode(bytes);
            let before = lines.len();
            let mut kept: Vec<LinePos> = lines
                .into_iter()
                .filter(|l| l.journal != journal || l.generation != generation)
                .collect();
            (kept.len() != before).then(|| encode(&mut kept))
        });
        let changed = self.evictions.ok(r);
        let mut back = Vec::new();
        let mut gone = false;
        for (slot, kept) in changed {
            if kept.is_empty() {
                gone = true;
                let printed = self.evictions.printed.get(&slot).cloned();
                if let (Some(e), Some(group_id)) = (self.evictions.take(slot), printed)
                    && let Some(v) = e.reported.filter(|&v| v != Verdict::Clean)
                {
                    self.withdrawn.push(Notice::Withdrawn {
                        group_id,
                        previous_verdict: v,
                    });
                }
            } else {
                let r = self.evictions.store.set_lines(slot, kept);
                self.evictions.ok(r);
                back.push(slot);
            }
        }
        if gone {
            self.evictions.sweep();
        }
        for s in back {
            if let Some(keys) = self.read_back_slot(s) {
                self.retouched.extend(keys);
            }
        }
    }

    /// The records of one line, read back from its file, if it is still
    /// kept and the line there is the one read (its length, its newline,
    /// its hash; docs/design.md §7.7 "Truncation and rewrites").
    fn read_line(&self, l: LinePos) -> LineRead {
        let Some(file) = self.files.get(l.journal as usize) else {
            return LineRead::Gone;
        };
        let Some(handle) = file
            .generations
            .iter()
            .find(|g| g.generation == l.generation)
            .map(|g| &g.file)
        else {
            return LineRead::Gone;
        };
        let len = l.len as usize;
        let mut bytes = vec![0u8; len + 1];
        let whole = match read_at(handle, &mut bytes, l.offset) {
            // The line and its newline.
            Some(()) => bytes[len] == b'\n',
            // A last line never finished (a rotated file's): the file
            // must end where it does.
            None => {
                bytes.truncate(len);
                read_at(handle, &mut bytes, l.offset).is_some()
                    && handle
                        .metadata()
                        .is_ok_and(|m| m.len() == l.offset + l.len as u64)
            }
        };
        if !whole || line_hash(&bytes[..len]) != l.hash {
            return LineRead::Changed;
        }
        bytes.truncate(len);
        bytes.push(b'\n');
        let chunk = crate::journal::follow::Chunk {
            bytes,
            first_line: l.line,
            first_offset: l.offset,
        };
        match file
            .reader
            .as_ref()
            .map(|r| r.read_again(&chunk, &self.keys))
        {
            Some(Ok(read)) => LineRead::Records(read.records),
            _ => LineRead::Gone,
        }
    }
}

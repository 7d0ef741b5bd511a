//! Following journals for a view that shows a whole investigation (the
//! TUI's follow mode, docs/design.md §7.7 "Follow mode"): a [`Watch`]
//! reads what the journals gained since the last poll, counts the events
//! and bad lines, and says when a new [`Investigation`] is due. The new
//! investigation is the last one with the records of the new lines added
//! ([`Investigation::grown`]: no journal is read again), or, when that
//! could not give what a fresh open gives (a rotation, a truncation, a bad
//! line, a decision recorded, a journal format that pairs lines), opened
//! again from the same setup (journals, contracts, case file).
//! [`verdict_changes`] says which groups' verdicts differ from the one
//! before.

use super::{Notice, Watch, WatchOptions};
use crate::journal::LineError;
use crate::model::Record;
use crate::query::{Investigation, QueryError, ReadTo, Setup, Verdict};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The span the events-per-second figure is measured over.
pub const RATE_WINDOW: Duration = Duration::from_secs(5);

/// The shortest time between two new investigations: a journal growing
/// fast is shown at most this often (and never more often than twice the
/// time the last one took to open, so that a large journal is not read
/// again without a pause).
pub const MIN_REFRESH: Duration = Duration::from_secs(1);

/// How long a new investigation waits for a journal whose last line is
/// still being written (no newline yet): read now, that line would show
/// as a bad line and the chain as broken until the writer finishes it.
pub const PARTIAL_LINE_WAIT: Duration = Duration::from_secs(3);

/// Journals followed for a view of the whole investigation
/// (docs/design.md §7.7 "Follow mode").
pub struct Follow {
    watch: Watch,
    setup: Setup,
    /// (when, events read so far), the last [`RATE_WINDOW`] of polls.
    samples: VecDeque<(Instant, u64)>,
    /// Events and bad lines read before following began (the journals as
    /// they were when it began).
    base_events: u64,
    base_bad: u64,
    /// The journals changed since the last investigation (since when).
    dirty: bool,
    dirty_since: Option<Instant>,
    pub(super) last_open: Option<Instant>,
    open_took: Duration,
    /// The last investigation made, to add the next records to.
    base: Option<Investigation>,
    /// Something happened that adding records cannot show (a rotation, a
    /// truncation, a bad line, a changed case file): open again.
    reopen: bool,
    /// Where each journal's report in `base` ends, when known.
    read_to: Vec<Option<ReadTo>>,
    refreshes: Refreshes,
    /// Complete lines read at the last poll ([`Follow::lines_read`]).
    lines: u64,
}

/// How the investigations of a [`Follow`] were made, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refreshes {
    /// The last one with what the journals gained added.
    pub grown: u64,
    /// Opened again from the setup, every journal read from its start.
    pub reopened: u64,
}

/// What one poll of a [`Follow`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FollowPoll {
    /// Events read since following began.
    pub events: u64,
    /// Events per second over the last `RATE_WINDOW` (0 until two polls
    /// have been made).
    pub rate: f64,
    /// The time of the newest event read, as the journal says.
    pub newest: Option<DateTime<Utc>>,
    /// Bad lines read since following began (skipped, and counted).
    pub bad_lines: u64,
    /// This poll's bad lines, as many as the watch shows (file and line
    /// in each).
    pub bad: Vec<LineError>,
    /// What happened to the files this poll (rotated, truncated, missing),
    /// in words naming the journal; journal text is not escaped.
    pub notes: Vec<String>,
}

impl Follow {
    /// Starts following the setup's journals from where they end now:
    /// what they hold already is read first (and not counted as new).
    ///
    /// # Errors
    /// As [`Watch::open`]: a journal that is not a plain file (standard
    /// input, a compressed file), or no journal named (the bundled
    /// sample).
    pub fn start(setup: &Setup) -> Result<Follow, QueryError> {
        if setup.journals.is_empty() {
            return Err(QueryError::Journal(crate::journal::JournalError::Invalid {
                journal: "the bundled sample".into(),
                message: "it does not grow; name journal files to follow them".into(),
            }));
        }
        let mut watch = Watch::open(setup, WatchOptions::default())?;
        // What the journals hold now was shown by the investigation
        // already: read it, say nothing of it.
        loop {
            let (_, more) = watch.poll();
            if !more {
                break;
            }
        }
        // What is read from now on goes into the investigations.
        watch.keep_records();
        let stats = watch.stats();
        let now = Instant::now();
        let lines = watch.read_to().iter().map(|r| r.lines).sum();
        Ok(Follow {
            watch,
            setup: setup.clone(),
            samples: VecDeque::from([(now, stats.events)]),
            base_events: stats.events,
            base_bad: stats.bad_lines,
            // The journals may have grown since the investigation shown
            // was opened.
            dirty: true,
            dirty_since: Some(now),
            last_open: None,
            open_took: Duration::ZERO,
            base: None,
            reopen: true,
            read_to: Vec::new(),
            refreshes: Refreshes::default(),
            lines,
        })
    }

    /// Reads what the journals gained since the last poll.
    pub fn poll(&mut self) -> FollowPoll {
        let mut out = FollowPoll::default();
        loop {
            let (notices, more) = self.watch.poll();
            for n in notices {
                match n {
                    // A bad line changes the journal's counts and chain
                    // status as much as an event does.
                    Notice::BadLine(e) => {
                        self.mark_dirty();
                        self.reopen = true;
                        out.bad.push(e);
                    }
                    Notice::MoreBadLines { .. } => {
                        self.mark_dirty();
                        self.reopen = true;
                    }
                    Notice::Rotated { journal } => {
                        self.mark_dirty();
                        self.reopen = true;
                        out.notes.push(format!(
                            "{journal} was rotated: only its new file is shown now; open the old one beside it to see what it held"
                        ));
                    }
                    Notice::Truncated { journal, .. } => {
                        self.mark_dirty();
                        self.reopen = true;
                        out.notes.push(format!(
                            "{journal} got shorter: what it held before is no longer shown"
                        ));
                    }
                    Notice::Note { journal, text } => {
                        self.reopen = true;
                        out.notes.push(format!("{journal}: {text}"));
                    }
                    Notice::Change(_) | Notice::Withdrawn { .. } => {}
                }
            }
            if !more {
                break;
            }
        }
        let stats = self.watch.stats();
        let now = Instant::now();
        if let Some(&(_, last)) = self.samples.back()
            && stats.events != last
        {
            self.mark_dirty();
        }
        // A line that is no event (a session record, a tool hint, a blank
        // line) changes what the journals show too.
        let lines = self.lines_read();
        if lines != self.lines {
            self.lines = lines;
            self.mark_dirty();
        }
        self.samples.push_back((now, stats.events));
        while self
            .samples
            .front()
            .is_some_and(|(t, _)| now.duration_since(*t) > RATE_WINDOW)
            && self.samples.len() > 2
        {
            self.samples.pop_front();
        }
        if let (Some(&(t0, e0)), Some(&(t1, e1))) = (self.samples.front(), self.samples.back()) {
            let secs = t1.duration_since(t0).as_secs_f64();
            if secs > 0.0 {
                out.rate = e1.saturating_sub(e0) as f64 / secs;
            }
        }
        out.events = stats.events.saturating_sub(self.base_events);
        out.bad_lines = stats.bad_lines.saturating_sub(self.base_bad);
        out.newest = stats.newest;
        out
    }

    /// Whether a new investigation is due: the journals changed since the
    /// last one, and `MIN_REFRESH` (or twice the time the last one took
    /// to open) has passed.
    /// While a journal's last line is still being written, it waits up to
    /// `PARTIAL_LINE_WAIT` for the newline.
    pub fn due(&self) -> bool {
        let wait = MIN_REFRESH.max(self.open_took * 2);
        self.dirty
            && self.last_open.is_none_or(|t| t.elapsed() >= wait)
            && (!self.mid_line()
                || self
                    .dirty_since
                    .is_none_or(|t| t.elapsed() >= PARTIAL_LINE_WAIT))
    }

    /// Asks for a new investigation at the next [`Follow::due`] (the case
    /// file changed: a decision was recorded).
    pub fn refresh_soon(&mut self) {
        self.mark_dirty();
        self.reopen = true;
    }

    /// How many analyses were made by following the records added since
    /// the last whole one (the one kept to add records to).
    #[cfg(test)]
    pub(super) fn follows(&self) -> usize {
        self.base
            .as_ref()
            .map_or(0, |b| b.analysis.carried.follows())
    }

    /// How the investigations so far were made.
    pub fn refreshes(&self) -> Refreshes {
        self.refreshes
    }

    /// Complete lines read of the journals' current files, in all.
    fn lines_read(&self) -> u64 {
        self.watch.read_to().iter().map(|r| r.lines).sum()
    }

    fn mark_dirty(&mut self) {
        if !self.dirty {
            self.dirty = true;
            self.dirty_since = Some(Instant::now());
        }
    }

    /// Whether a followed journal file ends in the middle of a line (a
    /// writer has not finished it yet).
    fn mid_line(&self) -> bool {
        use std::io::{Read, Seek, SeekFrom};
        self.watch.files.iter().any(|f| {
            f.sqlite.is_none()
                && std::fs::File::open(&f.path)
                    .and_then(|mut file| {
                        let len = file.metadata()?.len();
                        if len == 0 {
                            return Ok(false);
                        }
                        file.seek(SeekFrom::End(-1))?;
                        let mut last = [0u8; 1];
                        file.read_exact(&mut last)?;
                        Ok(last[0] != b'\n')
                    })
                    .unwrap_or(false)
        })
    }

    /// The investigation of the journals as they are now: the last one
    /// with the records of the lines read since added
    /// ([`Investigation::grown`]), or, the first time, after a rotation,
    /// a truncation, a bad line or a decision, and whenever adding could
    /// not give what a fresh open gives, opened again from the setup (the
    /// case file as it is now).
    ///
    /// # Errors
    /// As [`Investigation::open`]. The journals are tried again at the
    /// next due time.
    pub fn investigation(&mut self) -> Result<Investigation, QueryError> {
        let began = Instant::now();
        self.dirty = false;
        self.dirty_since = None;
        // A line still being written would be read as a bad line.
        let reopen = std::mem::take(&mut self.reopen) || self.mid_line();
        let records = self.watch.take_records();
        let now = self.watch.read_to();
        let grown = match self.base.take() {
            Some(base) if !reopen => match self.setup.load_options() {
                Ok(options) => match base.grown(records, &now, &self.read_to, &options) {
                    Ok(inv) => Some(inv),
                    Err(base) => {
                        std::thread::spawn(move || drop(base));
                        None
                    }
                },
                Err(_) => None,
            },
            Some(base) => {
                std::thread::spawn(move || drop(base));
                None
            }
            None => None,
        };
        let inv = match grown {
            Some(inv) => {
                self.refreshes.grown += 1;
                Ok(inv)
            }
            None => {
                self.refreshes.reopened += 1;
                Investigation::open_to_follow(&self.setup)
            }
        };
        let inv = match inv {
            // Kept only when records can be added to it: a copy of a large
            // investigation is memory and time. The one kept is the
            // original, which holds what following its analysis needs (a
            // copy does not).
            Ok(inv) if inv.growable() => {
                let shown = inv.clone();
                self.base = Some(inv);
                Ok(shown)
            }
            other => other,
        };
        match &inv {
            Ok(inv) => {
                // A report that counts the lines the watch had read ends
                // where the watch was.
                self.read_to = inv
                    .journals()
                    .iter()
                    .zip(&now)
                    .map(|(j, to)| (j.lines == to.lines).then_some(*to))
                    .collect();
            }
            Err(_) => {
                self.mark_dirty();
                self.reopen = true;
            }
        }
        self.last_open = Some(Instant::now());
        self.open_took = began.elapsed();
        inv
    }
}

/// What the TUI's follow mode asks of a [`Watch`] beyond `retrace watch`.
impl Watch {
    /// From now on, keeps a copy of every record read, for
    /// [`Watch::take_records`] (the TUI's follow mode adds them to the
    /// investigation it shows, docs/design.md §7.7 "Follow mode").
    pub fn keep_records(&mut self) {
        self.kept.get_or_insert_with(Vec::new);
    }

    /// The records read since the last call (since [`Watch::keep_records`]),
    /// in the order read; empty unless asked to keep them.
    pub fn take_records(&mut self) -> Vec<Record> {
        self.kept.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// For each journal followed, in order, how far its current file has
    /// been read: bytes, and the complete lines in them.
    pub fn read_to(&self) -> Vec<ReadTo> {
        self.files
            .iter()
            .map(|f| {
                let (bytes, lines) = f.follower.position();
                ReadTo {
                    bytes,
                    lines: u64::from(lines),
                }
            })
            .collect()
    }
}

/// The ids of the groups of `after` whose verdict is not what it was in
/// `before`, and of the groups new in `after` that are worth a look (not
/// `clean`), in `after`'s order (docs/design.md §7.7 "Follow mode").
pub fn verdict_changes(before: &Investigation, after: &Investigation) -> Vec<String> {
    let was: HashMap<&str, Verdict> = before.all_groups().map(|g| (g.id(), g.verdict())).collect();
    after
        .all_groups()
        .filter(|g| match was.get(g.id()) {
            Some(&v) => v != g.verdict(),
            None => g.verdict() != Verdict::Clean,
        })
        .map(|g| g.id().to_string())
        .collect()
}

#[cfg(test)]
#[path = "follow_tests.rs"]
mod tests;

//! Watching journals as they grow (`retrace watch`, docs/design.md §7.7):
//! followers read what each file gained since the last poll, the new
//! events are added to the executions they belong to, and only the groups
//! whose executions got new events are judged again. A [`Watch`] says when
//! a group becomes worth a look or its verdict changes.
//!
//! The work of a poll is what the journals gained and the groups it
//! touched: no file is read again from its start, no untouched group is
//! judged again.

use super::{Capabilities, Format, LineError, Prepared, QueryError, Setup, Severity, Verdict};
use crate::analysis::{self, Config, GroupKey, incremental};
use crate::journal::follow::{ChunkRead, ChunkReader, Followed, FollowedSpans, Follower};
use crate::journal::{ChainKeys, JournalError, JournalSource, SourceData, SqliteTail, detect};
use crate::model::{Execution, JournalId, ModelBuilder, Record, Session, ToolHint};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How a [`Watch`] reports (docs/design.md §7.7).
#[derive(Debug, Clone, Copy)]
pub struct WatchOptions {
    /// How long a group must have been quiet (no new event read) before a
    /// verdict below `high` is reported: a call still in flight is not yet
    /// an unknown outcome, nor a call not yet dispatched a safe retry.
    pub settle: Duration,
    /// How long a group must have been quiet before its executions' events
    /// are let go of, only where their lines are in the files kept, to be
    /// read back when a later event touches the group (docs/design.md §7.7
    /// "Memory"); `None`: every event is held for the whole watch.
    /// Verdicts are the same either way.
    pub evict_after: Option<Duration>,
}

/// The quiet time after which `retrace watch` lets go of a group's events
/// by default (docs/design.md §7.7 "Memory").
pub const EVICT_AFTER: Duration = Duration::from_secs(5);

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            settle: Duration::from_secs(10),
            evict_after: Some(EVICT_AFTER),
        }
    }
}

/// The event that changed a group's verdict, and where it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangeEvent {
    /// The execution it belongs to.
    pub execution_id: String,
    /// Its kind (`accepted`, `dispatched`, `outcome`…).
    pub event: &'static str,
    /// When the journal says it happened.
    pub at: DateTime<Utc>,
    /// The journal, as named on the command line.
    pub journal: String,
    /// Its line (or row) in the journal.
    pub line: u32,
}

/// A group that became worth a look, or whose verdict changed
/// (docs/design.md §7.7). Strings from journals are as written: escape
/// them before display.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The group id (as `retrace groups` prints it).
    pub group_id: String,
    /// The verdict now.
    pub verdict: Verdict,
    /// The verdict last reported (`None`: the group is new to the watch,
    /// or was clean).
    pub previous_verdict: Option<Verdict>,
    /// The severity of the verdict now.
    pub severity: Severity,
    /// The tool.
    pub tool: String,
    /// The actor.
    pub actor: String,
    /// The intent scope.
    pub intent_scope: String,
    /// How many executions the group has.
    pub executions: usize,
    /// How many calls.
    pub calls: usize,
    /// Its executions' ids.
    pub execution_ids: Vec<String>,
    /// The newest event of the group when it was judged.
    pub changed_by: Option<ChangeEvent>,
}

/// What a poll found: changes, and what happened to the files.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A group's verdict.
    Change(Box<Change>),
    /// A group printed before is gone: its executions were read again,
    /// with the lines after them, as other groups' (a format whose reader
    /// pairs lines: the server's spans of a call joined to its client's),
    /// or its lines were truncated away.
    Withdrawn {
        /// The group's id.
        group_id: String,
        /// The verdict last printed for it.
        previous_verdict: Verdict,
    },
    /// A line that could not be read: skipped and counted.
    BadLine(LineError),
    /// Bad lines beyond those shown, in one journal and poll.
    MoreBadLines {
        /// The journal.
        journal: String,
        /// How many more.
        count: u64,
    },
    /// A journal was rotated: its new file is read from the start.
    Rotated {
        /// The journal.
        journal: String,
    },
    /// A journal got shorter than what was read of it, or no longer holds
    /// what was read (rewritten: the last bytes read, or a line read back,
    /// are not what they were; `now` may then be `was` or more): read
    /// again from its start, and what was read of it before is dropped
    /// (docs/design.md §7.7 "Truncation and rewrites").
    Truncated {
        /// The journal.
        journal: String,
        /// Bytes read before.
        was: u64,
        /// Its size now.
        now: u64,
    },
    /// Something about one journal worth saying once (missing, its format
    /// cannot be told, cannot be read).
    Note {
        /// The journal.
        journal: String,
        /// What.
        text: String,
    },
}

/// Counts since the watch began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WatchStats {
    /// Events read.
    pub events: u64,
    /// Bad lines.
    pub bad_lines: u64,
    /// Groups judged (one per touched group per poll).
    pub judged: u64,
    /// Executions whose events are held in memory.
    pub executions: usize,
    /// Groups held in memory.
    pub groups: usize,
    /// Groups evicted: only where their lines are is held
    /// ([`WatchOptions::evict_after`]).
    pub evicted_groups: usize,
    /// Executions of the evicted groups (with [`WatchStats::executions`],
    /// every execution the watch has seen).
    pub evicted_executions: usize,
    /// Evicted groups read back from the files (a later event touched
    /// them), since the watch began.
    pub read_back: u64,
    /// The time of the newest event read (as its journal says), if any.
    pub newest: Option<DateTime<Utc>>,
}

/// One followed journal.
struct File {
    name: String,
    path: PathBuf,
    /// A SQLite journal: read by rowid, not by the follower.
    sqlite: Option<SqliteTail>,
    follower: Follower,
    reader: Option<ChunkReader>,
    /// The format cannot be told: the journal is no longer read.
    given_up: bool,
    /// The executions the last read of a pairing window gave records of.
    window_executions: HashSet<String>,
    /// The file now read is the journal's how many-th (each rotation and
    /// truncation starts another).
    generation: u32,
    /// Handles on the files read, for lines read back.
    generations: Vec<evict::Generation>,
}

/// One group as the watch knows it.
#[derive(Default)]
struct LiveGroup {
    executions: Vec<String>,
    /// The verdict when it was last judged.
    current: Option<Verdict>,
    /// The verdict last reported.
    reported: Option<Verdict>,
    /// The change waiting for the group to settle.
    waiting: Option<Change>,
    /// When the group last got an event (wall clock).
    touched: Option<Instant>,
}

/// Capabilities of the watched journals, by id.
struct Caps(Vec<(Format, Capabilities)>);

impl analysis::JournalCaps for Caps {
    fn caps(&self, id: JournalId) -> Capabilities {
        self.0
            .get(id as usize)
            .map_or(Format::Native.capabilities(), |c| c.1)
    }
    fn name(&self, id: JournalId) -> &str {
        self.0
            .get(id as usize)
            .map_or("the journal", |c| c.0.noun())
    }
    fn delivery_layer(&self, id: JournalId) -> Option<crate::model::Layer> {
        self.0
            .get(id as usize)
            .and_then(|c| c.0.facts().delivery_layer)
    }
}

/// Journals followed as they grow, and the groups judged from them
/// (docs/design.md §7.7).
pub struct Watch {
    files: Vec<File>,
    forced: Option<Format>,
    keys: ChainKeys,
    config: Config,
    options: WatchOptions,
    caps: Caps,
    executions: HashMap<String, Execution>,
    /// The file of its journal each held event was read from, in the
    /// order of its execution's events (a truncation drops a file's).
    origin: HashMap<String, Vec<u32>>,
    /// Executions to place in a group again (they lost their accepted
    /// record to a truncation).
    rekey: HashSet<String>,
    /// Files whose lines read back were not what was read (journal,
    /// generation): taken as rewritten at the next safe point of the poll.
    rewritten: Vec<(u32, u32)>,
    /// Executions whose group key is known (an accepted record was seen).
    key_of: HashMap<String, GroupKey>,
    groups: HashMap<GroupKey, LiveGroup>,
    sessions: HashMap<String, Session>,
    /// Each session's records, with the journal and file each came from.
    session_parts: HashMap<String, Vec<(JournalId, u32, Session)>>,
    hints: Vec<ToolHint>,
    /// The file of its journal each hint was read from.
    hint_generations: Vec<u32>,
    /// Groups with a change waiting to settle.
    waiting: HashSet<GroupKey>,
    /// Groups that lost an execution when a pairing window was read again.
    retouched: HashSet<GroupKey>,
    /// The idempotency keys each execution carried, and the executions
    /// that carried each key: a key two groups share makes both
    /// `idempotency_key_conflict`, so they are judged together.
    keys_of: HashMap<String, Vec<String>>,
    carried: HashMap<String, HashSet<String>>,
    /// Groups printed before that are gone, to say so.
    withdrawn: Vec<Notice>,
    stats: WatchStats,
    /// Where the events of each execution held are in the files, for those
    /// whose lines can be read back.
    positions: HashMap<String, Vec<evict::LinePos>>,
    evictions: evict::Evictions,
    /// Why the evicted groups' index is in memory, not on disk, if it
    /// could not be made there.
    index_note: Option<String>,
    /// Records read since [`Watch::keep_records`] (follow.rs), if asked.
    kept: Option<Vec<Record>>,
    /// The followed OpenTelemetry files' recent spans, and those of their
    /// traces that left them ([`FollowedSpans`]).
    partners: FollowedSpans,
    /// Whether an OpenTelemetry file got lines this poll: the others'
    /// recent spans are then read again with its (a client's span and the
    /// server's that answers it may be in two files).
    otlp_grew: bool,
}

/// Where an event of this poll is, for [`ChangeEvent`].
#[derive(Clone)]
struct Seen {
    execution_id: String,
    event: &'static str,
    at: DateTime<Utc>,
    journal: JournalId,
    line: u32,
}

impl Watch {
    /// Prepares the setup and starts following its journals from their
    /// start (what they hold already is read by the first polls).
    ///
    /// # Errors
    /// [`QueryError::Setup`] for a file the setup names that cannot be
    /// used; [`QueryError::Journal`] for a journal that is not a plain file
    /// (a pipe, a compressed file), or when none is given. A native SQLite
    /// journal is followed by rowid (docs/design.md §7.7 "SQLite
    /// journals").
    pub fn open(setup: &Setup, options: WatchOptions) -> Result<Watch, QueryError> {
        if setup.journals.is_empty() {
            return Err(QueryError::Journal(JournalError::Invalid {
                journal: "watch".into(),
                message: "name the journal files to follow".into(),
            }));
        }
        // A copy beside a journal may be the one that grows: both are
        // followed.
        let setup = Setup {
            keep_copies: true,
            ..setup.clone()
        };
        Self::from_prepared(setup.prepare()?, options)
    }

    fn from_prepared(p: Prepared, options: WatchOptions) -> Result<Watch, QueryError> {
        crate::journal::check_journal_count(&p.sources)?;
        let mut files = Vec::new();
        for (j, s) in p.sources.iter().enumerate() {
            let path = plain_file(s)?;
            let sqlite = match p.options.forced {
                Some(f) => f == Format::NativeSqlite,
                None => SqliteTail::is_sqlite(&path),
            };
            let id = JournalId::try_from(j).unwrap_or(JournalId::MAX);
            files.push(File {
                name: s.name.clone(),
                sqlite: sqlite.then(|| SqliteTail::new(&path, &s.name, id)),
                path: path.clone(),
                follower: Follower::new(path),
                reader: None,
                given_up: false,
                window_executions: HashSet::new(),
                generation: 0,
                generations: Vec::new(),
            });
        }
        let caps = Caps(
            files
                .iter()
                .map(|file| {
                    let f = match &file.sqlite {
                        Some(_) => Format::NativeSqlite,
                        None => p.options.forced.unwrap_or(Format::Native),
                    };
                    (f, f.capabilities())
                })
                .collect(),
        );
        // The evicted groups' index on disk, in the temporary directory
        // (docs/design.md §7.7 "Memory"); in memory when nothing is
        // evicted.
        let (evictions, index_note) = match options.evict_after {
            Some(_) => evict::Evictions::on_disk_in(&std::env::temp_dir()),
            None => (evict::Evictions::default(), None),
        };
        Ok(Watch {
            files,
            forced: p.options.forced,
            keys: p.options.keys,
            config: p.config,
            options,
            caps,
            executions: HashMap::new(),
            origin: HashMap::new(),
            rekey: HashSet::new(),
            rewritten: Vec::new(),
            key_of: HashMap::new(),
            groups: HashMap::new(),
            sessions: HashMap::new(),
            session_parts: HashMap::new(),
            hints: Vec::new(),
            hint_generations: Vec::new(),
            waiting: HashSet::new(),
            retouched: HashSet::new(),
            keys_of: HashMap::new(),
            carried: HashMap::new(),
            withdrawn: Vec::new(),
            stats: WatchStats::default(),
            positions: HashMap::new(),
            evictions,
            index_note,
            kept: None,
            partners: FollowedSpans::default(),
            otlp_grew: false,
        })
    }

    /// Counts since the watch began.
    pub fn stats(&self) -> WatchStats {
        WatchStats {
            executions: self.executions.len(),
            groups: self.groups.len(),
            evicted_groups: self.evictions.len(),
            evicted_executions: self.evictions.executions(),
            read_back: self.evictions.read_back,
            ..self.stats
        }
    }

    /// Why the evicted groups' index is kept in memory, where it grows
    /// with the executions seen, rather than in a temporary file: the
    /// file could not be made (docs/design.md §7.7 "Memory"). To say
    /// once.
    pub fn index_note(&self) -> Option<&str> {
        self.index_note.as_deref()
    }

    /// The first error writing or reading the evicted groups' index on
    /// disk, if any: the verdicts of groups it could not keep may be
    /// missed.
    pub fn index_fault(&self) -> Option<&str> {
        self.evictions.fault.as_deref()
    }

    /// Whether the evicted groups' index is on disk.
    pub fn index_on_disk(&self) -> bool {
        self.evictions.on_disk()
    }

    /// The names of the journals followed.
    pub fn journal_names(&self) -> Vec<&str> {
        self.files.iter().map(|f| f.name.as_str()).collect()
    }

    /// Reads what the journals gained since the last poll, judges the
    /// groups it touched, and returns what changed; the `bool` is true when
    /// a journal has more to read at once (a large journal being caught
    /// up with). Changes come in the order they were found, worst first
    /// within a poll.
    pub fn poll(&mut self) -> (Vec<Notice>, bool) {
        let mut notices = Vec::new();
        let mut more = false;
        let mut seen: HashMap<String, Seen> = HashMap::new();
        for j in 0..self.files.len() {
            more |= self.poll_file(j, &mut notices, &mut seen);
        }
        if std::mem::take(&mut self.otlp_grew) {
            self.read_spans_again(&mut notices, &mut seen);
        }
        let mut touched = self.place(&seen);
        if self.apply_rewrites(&mut notices, &mut seen) {
            // The files found rewritten are read again from their start
            // at once; the groups are judged then, as the files now are.
            self.retouched.extend(touched);
            notices.append(&mut self.withdrawn);
            return (notices, true);
        }
        touched.extend(std::mem::take(&mut self.retouched));
        self.judge(&touched, &seen, &mut notices);
        more |= self.apply_rewrites(&mut notices, &mut seen);
        self.settle(&mut notices);
        notices.append(&mut self.withdrawn);
        self.evict_quiet();
        self.evictions.flush();
        (notices, more)
    }

    /// Reads one journal's new lines into the executions.
    fn poll_file(
        &mut self,
        j: usize,
        notices: &mut Vec<Notice>,
        seen: &mut HashMap<String, Seen>,
    ) -> bool {
        let file = &mut self.files[j];
        if file.given_up {
            return false;
        }
        if file.sqlite.is_some() {
            return self.poll_sqlite(j, notices, seen);
        }
        file.keep_handle();
        let (found, more) = match file.follower.poll() {
            Ok(r) => r,
            Err(e) => {
                notices.push(Notice::Note {
                    journal: file.name.clone(),
                    text: format!("cannot read it: {e}; trying again"),
                });
                return false;
            }
        };
        let mut records: Vec<(u32, Option<u32>, Record)> = Vec::new();
        let mut retract: Vec<(u32, HashSet<String>)> = Vec::new();
        let mut truncated = Vec::new();
        let self_evicting = self.options.evict_after.is_some();
        for f in found {
            let file = &mut self.files[j];
            match f {
                Followed::Lines(chunk) => {
                    if file.reader.is_none() {
                        let format = match self.forced {
                            Some(f) => f,
                            None => {
                                let head = JournalSource::memory(&file.name, chunk.bytes.clone());
                                match detect(&head) {
                                    Ok(f) => f,
                                    Err(e) => {
                                        file.given_up = true;
                                        notices.push(Notice::Note {
                                            journal: file.name.clone(),
                                            text: format!("{e}; no longer followed"),
                                        });
                                        return false;
                                    }
                                }
                            }
                        };
                        if format == Format::NativeSqlite {
                            // A database that was empty when the watch
                            // began: read by rowid from the next poll.
                            let id = JournalId::try_from(j).unwrap_or(JournalId::MAX);
                            file.sqlite = Some(SqliteTail::new(&file.path, &file.name, id));
                            self.caps.0[j] = (format, format.capabilities());
                            return true;
                        }
                        let companions = self
                            .caps
                            .0
                            .iter()
                            .enumerate()
                            .filter(|&(k, _)| k != j)
                            .map(|(_, c)| c.0)
                            .collect();
                        let id = JournalId::try_from(j).unwrap_or(JournalId::MAX);
                        file.reader = Some(ChunkReader::new(id, &file.name, format, companions));
                        self.caps.0[j] = (format, format.capabilities());
                    }
                    let Some(reader) = file.reader.as_mut() else {
                        continue;
                    };
                    let format = reader.format();
                    self.otlp_grew |= format == Format::OtlpJson;
                    // OpenTelemetry spans are read with the partners the
                    // other files' spans gave at the last poll: a window
                    // read alone would leave its spans' readings, wrong,
                    // to the lines about to leave it.
                    let id = JournalId::try_from(j).unwrap_or(JournalId::MAX);
                    let partners = (format == Format::OtlpJson)
                        .then_some(&self.partners)
                        .filter(|p| p.has_others(id));
                    match reader.read_with(&chunk, &self.keys, partners) {
                        Ok(r) => {
                            let first = chunk.first_line;
                            let hash = |rec: &Record| {
                                (self_evicting && format == Format::Native)
                                    .then(|| evict::chunk_line_hash(&chunk, rec))
                                    .flatten()
                            };
                            self.take_read(
                                j,
                                r,
                                first,
                                &hash,
                                (&mut records, &mut retract),
                                notices,
                            );
                        }
                        Err(e) => notices.push(Notice::Note {
                            journal: file.name.clone(),
                            text: e.to_string(),
                        }),
                    }
                }
                Followed::Rotated => {
                    if let Some(r) = file.reader.as_mut() {
                        r.restart();
                    }
                    // The old file stays readable through its handle.
                    file.generation += 1;
                    notices.push(Notice::Rotated {
                        journal: file.name.clone(),
                    });
                }
                Followed::Truncated { was, now } => {
                    if let Some(r) = file.reader.as_mut() {
                        r.restart();
                    }
                    // Its spans are gone, as partners too.
                    let id = JournalId::try_from(j).unwrap_or(JournalId::MAX);
                    self.partners.forget(id);
                    // What was read of it is gone: dropped below.
                    truncated.push(file.generation);
                    file.generation += 1;
                    notices.push(Notice::Truncated {
                        journal: file.name.clone(),
                        was,
                        now,
                    });
                }
                Followed::Missing(why) => notices.push(Notice::Note {
                    journal: file.name.clone(),
                    text: format!("cannot open it ({why}); waiting for it"),
                }),
            }
        }
        for g in truncated {
            self.drop_file(j, g, seen);
        }
        self.apply_reads(j, records, retract, seen);
        more
    }

    /// Reads the recent lines of every followed OpenTelemetry file again,
    /// each looking its spans' partners up among the others' recent spans
    /// too (docs/formats.md#otlp-json, "Several files"): a server span
    /// that just arrived in one file changes how the client span it
    /// answers in another reads (delivered or not, cancelled or
    /// finished). Nothing is done for fewer than two such files.
    fn read_spans_again(&mut self, notices: &mut Vec<Notice>, seen: &mut HashMap<String, Seen>) {
        let readers: Vec<&ChunkReader> = self
            .files
            .iter()
            .filter_map(|f| f.reader.as_ref())
            .collect();
        if !self.partners.update(&readers) {
            return;
        }
        let partners = std::mem::take(&mut self.partners);
        for j in 0..self.files.len() {
            let file = &mut self.files[j];
            if file.given_up {
                continue;
            }
            let Some(reader) = file
                .reader
                .as_mut()
                .filter(|r| r.format() == Format::OtlpJson)
            else {
                continue;
            };
            match reader.read_again_with(&self.keys, &partners) {
                Some(Ok(r)) => {
                    let mut records = Vec::new();
                    let mut retract = Vec::new();
                    // Only the window is read: every line was seen.
                    let first = r.replaces_from.map_or(0, |_| u32::MAX);
                    self.take_read(
                        j,
                        r,
                        first,
                        &|_| None,
                        (&mut records, &mut retract),
                        notices,
                    );
                    self.apply_reads(j, records, retract, seen);
                }
                Some(Err(e)) => notices.push(Notice::Note {
                    journal: file.name.clone(),
                    text: e.to_string(),
                }),
                None => {}
            }
        }
        self.partners = partners;
    }

    /// Takes what reading file `j` gave, whose lines from `first` on are
    /// new: what the journal can show, its bad lines as notices, its
    /// records into `records` with the file they came from and their line
    /// hash (`hash`, for lines read back), and the window they replace
    /// into `retract`. A reader's notes sum up what it read (spans seen,
    /// pairings made): of one poll's lines they say little, and would
    /// repeat every poll, so they are not shown.
    #[allow(clippy::type_complexity)]
    fn take_read(
        &mut self,
        j: usize,
        r: ChunkRead,
        first: u32,
        hash: &dyn Fn(&Record) -> Option<u32>,
        (records, retract): (
            &mut Vec<(u32, Option<u32>, Record)>,
            &mut Vec<(u32, HashSet<String>)>,
        ),
        notices: &mut Vec<Notice>,
    ) {
        // What this journal can show is known from its records (a format
        // of several kinds of log), as `retrace groups` knows it.
        if !r.records.is_empty() {
            self.caps.0[j].1 = r.capabilities;
        }
        let file = &mut self.files[j];
        if let Some(from) = r.replaces_from {
            let ids = std::mem::take(&mut file.window_executions);
            retract.push((from, ids));
        }
        if file.reader.as_ref().is_some_and(ChunkReader::pairs_lines) {
            for rec in &r.records {
                if let Record::Event { execution_id, .. } = rec {
                    file.window_executions.insert(execution_id.clone());
                }
            }
        }
        self.stats.bad_lines += r.bad_count;
        let shown = r.bad.len() as u64;
        notices.extend(r.bad.into_iter().map(Notice::BadLine));
        if r.bad_count > shown {
            notices.push(Notice::MoreBadLines {
                journal: file.name.clone(),
                count: r.bad_count - shown,
            });
        }
        let generation = file.generation;
        let replaces = r.replaces_from.is_some();
        records.extend(
            r.records
                .into_iter()
                .filter(|rec| match rec {
                    // A server's hints, read again, are not new.
                    Record::ToolHint(h) => !replaces || h.source.position() >= first,
                    _ => true,
                })
                .map(|rec| (generation, hash(&rec), rec)),
        );
    }

    /// Puts what reading file `j` gave into the executions: the windows
    /// read again are retracted, then the records added, and an execution
    /// left with no event leaves its group.
    fn apply_reads(
        &mut self,
        j: usize,
        records: Vec<(u32, Option<u32>, Record)>,
        retract: Vec<(u32, HashSet<String>)>,
        seen: &mut HashMap<String, Seen>,
    ) {
        let id = JournalId::try_from(j).unwrap_or(JournalId::MAX);
        let mut retracted = Vec::new();
        for (from, ids) in retract {
            self.retract(id, from, &ids);
            retracted.extend(ids);
        }
        self.files[j].keep_handle();
        for (generation, hash, r) in records {
            if let Record::Event { execution_id, .. } = &r {
                self.read_back_execution(execution_id);
            }
            self.add_read(r, generation, hash, Some(seen));
        }
        // An execution left with no event (an answer now paired with its
        // request) leaves its group.
        let emptied: Vec<String> = self.files[j]
            .window_executions
            .iter()
            .chain(&retracted)
            .chain(seen.keys())
            .filter(|x| self.executions.get(*x).is_some_and(|e| e.events.is_empty()))
            .cloned()
            .collect();
        for x in emptied {
            self.forget(&x, seen);
        }
    }
}

impl File {
    /// Keeps a handle on the file now read, if none is kept for it yet.
    fn keep_handle(&mut self) {
        let g = self.generation;
        if self.generations.iter().any(|h| h.generation == g) {
            return;
        }
        if let Some(f) = self.follower.file().and_then(|f| f.try_clone().ok()) {
            self.generations.push(evict::Generation {
                generation: g,
                file: f,
            });
        }
    }
}

/// The file a watched journal is.
fn plain_file(s: &JournalSource) -> Result<PathBuf, QueryError> {
    let refuse = |why: &str| {
        QueryError::Journal(JournalError::Invalid {
            journal: s.name.clone(),
            message: format!("watch follows plain files that grow; this is {why}"),
        })
    };
    match &s.data {
        SourceData::File(p) => {
            if s.compression().is_some() {
                return Err(refuse("compressed (read it with `retrace groups`)"));
            }
            match std::fs::metadata(p) {
                Ok(m) if m.is_file() => Ok(p.clone()),
                Ok(_) => Err(refuse("not a regular file (a pipe or a device)")),
                Err(e) => Err(QueryError::Journal(JournalError::Open {
                    journal: s.name.clone(),
                    source: e,
                })),
            }
        }
        _ => Err(refuse("not a file")),
    }
}

mod evict;
mod follow;
mod judge;
mod records;
mod store;
mod truncate;

pub use follow::{Follow, FollowPoll, Refreshes, verdict_changes};

#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod truncate_tests;

//! Following journals as they grow (`retrace watch`, docs/design.md §7.7):
//! a [`Follower`] per file reads what was appended since the last poll,
//! keeps a last line that is still being written until its newline comes,
//! and notices rotation (the path now names another file) and truncation
//! (the file got shorter); a [`ChunkReader`] turns the complete lines of a
//! poll into records with the journal's reader, at their place in the file.
//!
//! Nothing here re-reads a file from its start: each poll costs what was
//! appended since the one before.

use super::{
    ChainKeys, Format, JournalError, JournalSource, LineError,
    read::{Read, ReadCtx},
};
use crate::model::{JournalId, LineOffset, Record, SourceRef};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read as _, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The most bytes one poll reads from one file (a large journal already
/// there when following starts is read over several polls, each handed on
/// at once, so memory stays bounded).
pub const MAX_POLL_BYTES: usize = 8 << 20;

/// Complete lines appended to a followed file, with where they start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The lines, each ending with `\n` (the last may lack it only when the
    /// file was rotated or truncated under a line never finished).
    pub bytes: Vec<u8>,
    /// 1-based number of the first line in the file.
    pub first_line: u32,
    /// Byte offset of the first line in the file.
    pub first_offset: u64,
}

/// What one poll of a followed file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Followed {
    /// Complete lines.
    Lines(Chunk),
    /// The path now names another file (log rotation: renamed, recreated):
    /// the old file was read to its end, the new one is read from its start.
    Rotated,
    /// The file got shorter than what was read of it (`copytruncate`, or
    /// rewritten): it is read again from its start.
    Truncated {
        /// Bytes read before.
        was: u64,
        /// Its size now.
        now: u64,
    },
    /// The file cannot be opened (not there yet, or removed and not yet
    /// recreated); following goes on.
    Missing(String),
}

/// One file followed by polling (docs/design.md §7.7): its size and
/// identity (device and inode) are checked on every poll.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    file: Option<File>,
    identity: Option<(u64, u64)>,
    /// Bytes read of the current file (the partial tail included).
    offset: u64,
    /// A last line still being written.
    tail: Vec<u8>,
    /// Lines completed in the current file.
    lines: u32,
    /// The last bytes read (at most [`CHECKED_BYTES`], ending at
    /// `offset`): read again at each poll, so that a file rewritten
    /// with other lines while it was not looked at is told from one that
    /// only grew.
    last: Vec<u8>,
    /// Whether a missing file was already reported.
    reported_missing: bool,
}

/// How many of the last bytes read are checked at each poll to tell a
/// file rewritten from one that only grew (docs/design.md §7.7
/// "Following").
pub const CHECKED_BYTES: usize = 64;

#[cfg(unix)]
fn file_identity(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_identity(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

impl Follower {
    /// A follower of `path`, from its start.
    pub fn new(path: impl Into<PathBuf>) -> Follower {
        Follower {
            path: path.into(),
            file: None,
            identity: None,
            offset: 0,
            tail: Vec::new(),
            lines: 0,
            last: Vec::new(),
            reported_missing: false,
        }
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file being read, when it is open: a handle on it stays valid
    /// (on Unix) after the path is renamed or unlinked, so that its lines
    /// can be read again after a rotation.
    pub fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }

    /// Bytes read of the current file, and lines completed in it.
    pub fn position(&self) -> (u64, u32) {
        (self.offset, self.lines)
    }

    fn restart(&mut self) {
        self.offset = 0;
        self.tail.clear();
        self.lines = 0;
        self.last.clear();
    }

    /// Reads the open file again from its start at the next poll (its
    /// lines were found changed since they were read, docs/design.md §7.7
    /// "Memory"); the bytes read before and the file's size now.
    ///
    /// # Errors
    /// The file's size or position cannot be had.
    pub fn rewind(&mut self) -> io::Result<(u64, u64)> {
        let was = self.offset;
        let mut now = 0;
        if let Some(file) = self.file.as_mut() {
            now = file.metadata()?.len();
            file.seek(SeekFrom::Start(0))?;
        }
        self.restart();
        Ok((was, now))
    }

    /// Whether the last bytes read are still there, at the same place (a
    /// file rewritten since, even to a greater size, is not).
    fn still_there(&mut self) -> io::Result<bool> {
        let Some(file) = self.file.as_mut() else {
            return Ok(true);
        };
        if self.last.is_empty() {
            return Ok(true);
        }
        let from = self.offset - self.last.len() as u64;
        file.seek(SeekFrom::Start(from))?;
        let mut now = vec![0u8; self.last.len()];
        let same = match file.read_exact(&mut now) {
            Ok(()) => now == self.last,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => false,
            Err(e) => return Err(e),
        };
        // Reading on goes on from the offset.
        file.seek(SeekFrom::Start(self.offset))?;
        Ok(same)
    }

    fn open(&mut self, out: &mut Vec<Followed>) -> bool {
        match File::open(&self.path).and_then(|f| f.metadata().map(|m| (f, m))) {
            Ok((f, m)) => {
                self.identity = file_identity(&m);
                self.file = Some(f);
                self.reported_missing = false;
                true
            }
            Err(e) => {
                if !self.reported_missing {
                    self.reported_missing = true;
                    out.push(Followed::Missing(e.to_string()));
                }
                false
            }
        }
    }

    /// Reads what was appended since the last poll (at most
    /// [`MAX_POLL_BYTES`]); the `bool` is true when more is waiting (poll
    /// again at once).
    ///
    /// # Errors
    /// A read of the open file that fails.
    pub fn poll(&mut self) -> io::Result<(Vec<Followed>, bool)> {
        let mut out = Vec::new();
        if self.file.is_none() && !self.open(&mut out) {
            return Ok((out, false));
        }
        let Some(file) = self.file.as_mut() else {
            return Ok((out, false));
        };
        // Truncated under us, or rewritten with other lines (even to a
        // greater size): what is there now is read from the start.
        let size = file.metadata()?.len();
        if size < self.offset || !self.still_there()? {
            let Some(file) = self.file.as_mut() else {
                return Ok((out, false));
            };
            file.seek(SeekFrom::Start(0))?;
            out.push(Followed::Truncated {
                was: self.offset,
                now: size,
            });
            self.restart();
        }
        let (read, more) = self.read_some()?;
        if let Some(c) = read {
            out.push(Followed::Lines(c));
        }
        if more {
            return Ok((out, true));
        }
        // Read to the end: has the path moved on to another file?
        let now = std::fs::metadata(&self.path).ok();
        let rotated = match (&now, self.identity) {
            (Some(m), Some(id)) => file_identity(m) != Some(id),
            _ => false,
        };
        if rotated {
            // The old file's last line, never finished, is handed on as it is.
            if let Some(c) = self.flush_tail() {
                out.push(Followed::Lines(c));
            }
            out.push(Followed::Rotated);
            self.file = None;
            self.restart();
            return Ok((out, true));
        }
        Ok((out, false))
    }

    /// Reads up to [`MAX_POLL_BYTES`] from the open file; the complete
    /// lines among them (with the tail before) as a chunk.
    fn read_some(&mut self) -> io::Result<(Option<Chunk>, bool)> {
        let Some(file) = self.file.as_mut() else {
            return Ok((None, false));
        };
        let mut buf = std::mem::take(&mut self.tail);
        let start = self.offset - buf.len() as u64;
        let before = buf.len();
        let mut limited = file.take(MAX_POLL_BYTES as u64);
        let n = limited.read_to_end(&mut buf)?;
        self.offset += n as u64;
        let new = &buf[before..];
        if new.len() >= CHECKED_BYTES {
            self.last.clear();
            self.last
                .extend_from_slice(&new[new.len() - CHECKED_BYTES..]);
        } else {
            self.last.extend_from_slice(new);
            let over = self.last.len().saturating_sub(CHECKED_BYTES);
            self.last.drain(..over);
        }
        let more = n == MAX_POLL_BYTES;
        if buf.len() == before && n == 0 {
            self.tail = buf;
            return Ok((None, more));
        }
        let Some(last_nl) = memchr::memrchr(b'\n', &buf) else {
            self.tail = buf;
            return Ok((None, more));
        };
        self.tail = buf.split_off(last_nl + 1);
        let first_line = self.lines + 1;
        let count = memchr::memchr_iter(b'\n', &buf).count();
        self.lines = self
            .lines
            .saturating_add(u32::try_from(count).unwrap_or(u32::MAX));
        Ok((
            Some(Chunk {
                bytes: buf,
                first_line,
                first_offset: start,
            }),
            more,
        ))
    }

    /// The partial last line, as a chunk of its own.
    fn flush_tail(&mut self) -> Option<Chunk> {
        if self.tail.is_empty() {
            return None;
        }
        let bytes = std::mem::take(&mut self.tail);
        let first_offset = self.offset - bytes.len() as u64;
        self.lines = self.lines.saturating_add(1);
        Some(Chunk {
            bytes,
            first_line: self.lines,
            first_offset,
        })
    }
}

/// The spans of the recent lines of followed OpenTelemetry files, each at
/// its place in its file: what [`ChunkReader::read_again_with`] looks a
/// span's partners up in (a client's and a server's spans in two files;
/// docs/formats.md#otlp-json, "Several files"). A span that left its
/// file's recent lines is kept while a span of its trace is still in some
/// file's: a busy server's file moves on faster than a quiet client's, and
/// the client's calls still being read again keep their answers.
#[derive(Default)]
pub struct FollowedSpans {
    set: super::otlp::TraceSet,
}

impl FollowedSpans {
    /// Takes the recent spans of `readers` (OpenTelemetry readers with
    /// recent lines; others are left out), keeping those that left them
    /// while their trace is still there. Whether a file's recent spans may
    /// have partners it does not hold: two or more files hold spans, or
    /// some left their file (a rotated file's spans, partners of the new
    /// file's).
    pub fn update(&mut self, readers: &[&ChunkReader]) -> bool {
        let windows: Vec<(JournalId, JournalSource, u32, u64)> = readers
            .iter()
            .filter(|r| r.format == Format::OtlpJson)
            .filter_map(|r| {
                let (bytes, line, offset) = r.window()?;
                Some((
                    r.journal,
                    JournalSource::memory(&r.name, bytes.to_vec()),
                    line,
                    offset,
                ))
            })
            .collect();
        let fresh = super::otlp::TraceSet::of_windows(&windows);
        self.set.renew(fresh);
        self.set.journal_count() >= 2 || self.set.has_left()
    }

    /// Whether it holds spans of a journal other than `journal`.
    pub fn has_others(&self, journal: JournalId) -> bool {
        self.set.has_others(journal)
    }

    /// Forgets the spans of journal `journal`, whose file was truncated:
    /// what it held is gone.
    pub fn forget(&mut self, journal: JournalId) {
        self.set.forget(journal);
    }
}

/// What reading one chunk gave.
#[derive(Debug)]
pub struct ChunkRead {
    /// Records, their sources at their place in the file.
    pub records: Vec<Record>,
    /// Bad lines, at their place in the file (the first
    /// [`super::MAX_KEPT_BAD_LINES`] of the chunk).
    pub bad: Vec<LineError>,
    /// How many lines were bad.
    pub bad_count: u64,
    /// The reader's notes about the chunk.
    pub notes: Vec<String>,
    /// For a format that pairs lines: the records replace every record an
    /// earlier read gave from this line on (the recent lines were read
    /// again with the new ones, so that an answer pairs with its request).
    pub replaces_from: Option<u32>,
    /// What the journal can show, as the reader found from the chunk's
    /// lines (a format of several kinds of log says so by its first
    /// record, as a whole-file read does; [`super::Format::capabilities`]
    /// for the others).
    pub capabilities: super::Capabilities,
}

/// How many of the latest lines of a journal whose reader pairs lines are
/// read again with each poll's new lines (docs/design.md §7.7): an answer
/// pairs with a request at most this many lines before it.
pub const PAIRING_WINDOW_LINES: u32 = 4096;

/// The latest lines of a journal whose reader pairs lines, kept to be
/// read again with the next poll's.
struct Window {
    bytes: Vec<u8>,
    first_line: u32,
    first_offset: u64,
    lines: u32,
    /// The count of identical lines before the window's first line.
    line_ids: HashMap<[u8; 4], u32>,
}

/// Whether a format's reader pairs one line with others (a request with
/// its answer, a client span with its server span), rather than reading
/// each line on its own.
fn pairs_lines(f: Format) -> bool {
    !matches!(
        f,
        Format::Native | Format::NativeSqlite | Format::McpAudit | Format::Sallyport
    )
}

/// Reads the chunks of one followed journal with its format's reader
/// (docs/design.md §7.7). What the reader keeps from line to line for the
/// ids it derives from content (the count of identical lines) is carried
/// from chunk to chunk; what a reader pairs across lines (a request and
/// its answer) is paired within the lines one poll read.
pub struct ChunkReader {
    journal: JournalId,
    name: String,
    format: Format,
    identity: Option<String>,
    companions: Vec<Format>,
    line_ids: HashMap<[u8; 4], u32>,
    window: Option<Window>,
}

impl ChunkReader {
    /// A reader of journal `journal` (named `name` in evidence and
    /// messages) as `format`.
    pub fn new(journal: JournalId, name: &str, format: Format, companions: Vec<Format>) -> Self {
        ChunkReader {
            journal,
            name: name.to_string(),
            format,
            identity: None,
            companions,
            line_ids: HashMap::new(),
            window: None,
        }
    }

    /// The format read.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether the format's reader pairs lines, so that each read gives
    /// the recent lines' records again ([`ChunkRead::replaces_from`]).
    pub fn pairs_lines(&self) -> bool {
        pairs_lines(self.format)
    }

    /// The file was rotated or truncated: what follows is another journal
    /// (its identity comes from its own first line).
    pub fn restart(&mut self) {
        self.identity = None;
        self.line_ids.clear();
        self.window = None;
    }

    /// Reads one chunk.
    ///
    /// # Errors
    /// Only what stops a reader (I/O); bad lines are in [`ChunkRead::bad`].
    pub fn read(&mut self, chunk: &Chunk, keys: &ChainKeys) -> Result<ChunkRead, JournalError> {
        self.read_with(chunk, keys, None)
    }

    /// [`ChunkReader::read`], an OpenTelemetry reader looking its spans'
    /// partners up among `partners` too (the other followed files' recent
    /// spans, [`FollowedSpans`]).
    ///
    /// # Errors
    /// As [`ChunkReader::read`].
    pub fn read_with(
        &mut self,
        chunk: &Chunk,
        keys: &ChainKeys,
        partners: Option<&FollowedSpans>,
    ) -> Result<ChunkRead, JournalError> {
        if !pairs_lines(self.format) {
            return self.read_piece(chunk, keys, partners);
        }
        // The recent lines again, with the new ones after them.
        let (piece, replaces_from) = match self.window.take() {
            Some(mut w) => {
                self.line_ids = std::mem::take(&mut w.line_ids);
                let from = w.first_line;
                w.bytes.extend_from_slice(&chunk.bytes);
                (
                    Chunk {
                        bytes: w.bytes,
                        first_line: w.first_line,
                        first_offset: w.first_offset,
                    },
                    Some(from),
                )
            }
            None => (chunk.clone(), None),
        };
        let before = self.line_ids.clone();
        let mut read = self.read_piece(&piece, keys, partners)?;
        read.replaces_from = replaces_from;
        // Bad lines and notes of the lines read before were said then.
        read.bad.retain(|e| e.line >= chunk.first_line);
        let lines =
            u32::try_from(memchr::memchr_iter(b'\n', &piece.bytes).count()).unwrap_or(u32::MAX);
        self.window = Some(trimmed(
            Window {
                bytes: piece.bytes,
                first_line: piece.first_line,
                first_offset: piece.first_offset,
                lines,
                line_ids: before,
            },
            PAIRING_WINDOW_LINES,
        ));
        Ok(read)
    }

    /// Reads lines again, as they were read the first time, without
    /// touching what this reader keeps from chunk to chunk (its window,
    /// its count of identical lines). Only for formats whose reader reads
    /// each line on its own ([`ChunkReader::pairs_lines`] false): for them
    /// a line gives the same records however it is read.
    ///
    /// # Errors
    /// As [`ChunkReader::read`].
    pub fn read_again(&self, chunk: &Chunk, keys: &ChainKeys) -> Result<ChunkRead, JournalError> {
        let mut again = ChunkReader {
            journal: self.journal,
            name: self.name.clone(),
            format: self.format,
            identity: Some(self.identity.clone().unwrap_or_default()),
            companions: self.companions.clone(),
            line_ids: HashMap::new(),
            window: None,
        };
        again.read_piece(chunk, keys, None)
    }

    /// The recent lines kept to be read again (a reader that pairs
    /// lines): their bytes, the line number of the first and its offset.
    fn window(&self) -> Option<(&[u8], u32, u64)> {
        self.window
            .as_ref()
            .map(|w| (w.bytes.as_slice(), w.first_line, w.first_offset))
    }

    /// Reads the recent lines again, nothing new after them, an
    /// OpenTelemetry reader looking its spans' partners up among
    /// `partners` (the other followed files' recent spans): what a new
    /// span in another file changes in this one's calls (a server span
    /// that answers a client span here). The records replace those the
    /// window gave ([`ChunkRead::replaces_from`]); `None` without a
    /// window.
    ///
    /// # Errors
    /// As [`ChunkReader::read`].
    pub fn read_again_with(
        &mut self,
        keys: &ChainKeys,
        partners: &FollowedSpans,
    ) -> Option<Result<ChunkRead, JournalError>> {
        let (bytes, first_line, first_offset) = self.window()?;
        let lines = u32::try_from(memchr::memchr_iter(b'\n', bytes).count()).unwrap_or(u32::MAX);
        let next = Chunk {
            bytes: Vec::new(),
            first_line: first_line.saturating_add(lines),
            first_offset: first_offset + bytes.len() as u64,
        };
        Some(self.read_with(&next, keys, Some(partners)))
    }

    fn read_piece(
        &mut self,
        chunk: &Chunk,
        keys: &ChainKeys,
        partners: Option<&FollowedSpans>,
    ) -> Result<ChunkRead, JournalError> {
        let source = JournalSource::memory(&self.name, chunk.bytes.clone());
        if self.identity.is_none() || chunk.first_line == 1 {
            // The journal's identity is its first line's (docs/design.md
            // §2.6); a chunk that does not start the file only follows it.
            self.identity = Some(source.identity()?);
        }
        let identity = self.identity.clone().unwrap_or_default();
        let mut records = Vec::new();
        let mut sink = |r: Record| records.push(r);
        let mut progress = |_: u64| {};
        let mut ctx = ReadCtx::new(
            self.journal,
            &source,
            identity,
            self.format,
            (&mut sink, &mut progress),
            keys,
            self.companions.clone(),
        );
        ctx.carry_line_ids(std::mem::take(&mut self.line_ids));
        // The chunk's own spans, and the other followed files' recent
        // spans, for an OpenTelemetry reader to look partners up in.
        let own_spans = partners.map(|_| super::otlp::spans_of(self.journal, &source));
        let index = partners
            .zip(own_spans.as_deref())
            .map(|(p, own)| p.set.index_with(self.journal, own));
        ctx.traces = index.as_ref();
        let result = self.format.reader().read(&mut ctx);
        self.line_ids = ctx.take_line_ids();
        let Read {
            bad,
            bad_count,
            notes,
            capabilities,
            ..
        } = ctx.finish();
        result?;
        let lines = chunk.first_line.saturating_sub(1);
        let own = self.journal;
        // Only this journal's sources are where the chunk is: a span of
        // another followed file (an OpenLLMetry server write read with
        // its client's) is already at its place in that file.
        let rebase = |s: &mut SourceRef| {
            if let SourceRef::Line {
                journal,
                line,
                offset,
                ..
            } = s
                && *journal == own
            {
                *line = line.saturating_add(lines);
                *offset = LineOffset::new(offset.get().saturating_add(chunk.first_offset));
            }
        };
        for r in &mut records {
            match r {
                Record::Session(s) => rebase(&mut s.source),
                Record::ToolHint(h) => rebase(&mut h.source),
                Record::Event { event, .. } => {
                    rebase(&mut event.source);
                    if let Some(f) = event.facts_mut()
                        && let Some(req) = f.request.as_mut()
                    {
                        rebase(req);
                    }
                }
            }
        }
        let bad = bad
            .into_iter()
            .map(|mut e| {
                e.line = e.line.saturating_add(lines);
                e
            })
            .collect();
        Ok(ChunkRead {
            records,
            bad,
            bad_count,
            notes,
            replaces_from: None,
            capabilities,
        })
    }
}

/// The window without its oldest lines beyond `max`; the count of
/// identical lines moves past the lines dropped (each counted once, as a
/// reader deriving ids from content counts it).
fn trimmed(mut w: Window, max: u32) -> Window {
    use sha2::{Digest, Sha256};
    if w.lines <= max {
        return w;
    }
    let mut drop = w.lines - max;
    let mut cut = 0usize;
    while drop > 0 {
        let Some(nl) = memchr::memchr(b'\n', &w.bytes[cut..]) else {
            break;
        };
        let mut line = &w.bytes[cut..cut + nl];
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        if !super::lines::is_blank(line) {
            let digest = Sha256::digest(line);
            let mut key = [0u8; 4];
            key.copy_from_slice(&digest[..4]);
            *w.line_ids.entry(key).or_insert(0) += 1;
        }
        cut += nl + 1;
        drop -= 1;
        w.first_line += 1;
        w.lines -= 1;
    }
    w.first_offset += cut as u64;
    w.bytes.drain(..cut);
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(out: &[Followed]) -> Vec<(u32, String)> {
        out.iter()
            .filter_map(|f| match f {
                Followed::Lines(c) => {
                    Some((c.first_line, String::from_utf8_lossy(&c.bytes).into_owned()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_partial_line_waits_for_its_newline() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j.jsonl");
        let mut f = File::create(&p).unwrap();
        f.write_all(b"a\nb").unwrap();
        let mut fol = Follower::new(&p);
        let (out, _) = fol.poll().unwrap();
        assert_eq!(lines_of(&out), vec![(1, "a\n".into())]);
        f.write_all(b"c\nd\n").unwrap();
        let (out, _) = fol.poll().unwrap();
        assert_eq!(lines_of(&out), vec![(2, "bc\nd\n".into())]);
        let (out, _) = fol.poll().unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn rotation_and_truncation_start_again_from_line_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j.jsonl");
        std::fs::write(&p, b"a\nb\n").unwrap();
        let mut fol = Follower::new(&p);
        fol.poll().unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"c\n").unwrap();
        std::fs::rename(&p, d.path().join("j.jsonl.1")).unwrap();
        std::fs::write(&p, b"x\n").unwrap();
        let (out, more) = fol.poll().unwrap();
        assert!(more);
        assert_eq!(lines_of(&out), vec![(3, "c\n".into())]);
        assert!(out.contains(&Followed::Rotated));
        let (out, _) = fol.poll().unwrap();
        assert_eq!(lines_of(&out), vec![(1, "x\n".into())]);
        // Truncated and rewritten shorter.
        std::fs::write(&p, b"").unwrap();
        let (out, _) = fol.poll().unwrap();
        assert_eq!(out, vec![Followed::Truncated { was: 2, now: 0 }]);
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"y\n").unwrap();
        let (out, _) = fol.poll().unwrap();
        assert_eq!(lines_of(&out), vec![(1, "y\n".into())]);
    }

    /// A file rewritten with other lines between two polls, to a greater
    /// size than was read, was read on from the old offset, in the middle
    /// of a line of the new file: it is a truncation, and the new file is
    /// read from its start. A file that only grew is read on.
    #[test]
    fn a_file_rewritten_longer_is_read_again_from_its_start() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j.jsonl");
        std::fs::write(&p, b"first\nsecond\n").unwrap();
        let mut fol = Follower::new(&p);
        fol.poll().unwrap();
        // Grown only: read on.
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"third\n").unwrap();
        let (out, _) = fol.poll().unwrap();
        assert_eq!(lines_of(&out), vec![(3, "third\n".into())]);
        // Rewritten in place (same inode), longer than what was read.
        let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.write_all(b"other one\nother two\nother three\n").unwrap();
        let (out, _) = fol.poll().unwrap();
        assert_eq!(out[0], Followed::Truncated { was: 19, now: 32 }, "{out:?}");
        assert_eq!(
            lines_of(&out),
            vec![(1, "other one\nother two\nother three\n".into())]
        );
        // Rewound by its user: read again from the start at the next poll.
        assert_eq!(fol.rewind().unwrap(), (32, 32));
        let (out, _) = fol.poll().unwrap();
        assert_eq!(lines_of(&out)[0].0, 1, "{out:?}");
    }

    /// The window keeps its latest lines; the lines it drops are counted,
    /// so an identical line later still gets its `~N`.
    #[test]
    fn the_pairing_window_keeps_its_latest_lines() {
        let w = Window {
            bytes: b"a\nb\na\nc\n".to_vec(),
            first_line: 5,
            first_offset: 100,
            lines: 4,
            line_ids: HashMap::new(),
        };
        let w = trimmed(w, 2);
        assert_eq!(w.bytes, b"a\nc\n");
        assert_eq!((w.first_line, w.first_offset, w.lines), (7, 104, 2));
        assert_eq!(w.line_ids.values().sum::<u32>(), 2);
    }
}

//! Where a journal's bytes come from: a file, bytes compiled into the
//! binary, or a pipe read whole; and compressed journals (gzip, zstd, as
//! log rotation leaves them), read through their decompressor.

use super::JournalError;
use crate::model::SourceRef;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;

/// How much of a journal's first line its [`JournalSource::identity`]
/// covers, in bytes (1 MiB).
pub const IDENTITY_PREFIX: usize = 1 << 20;

/// Where a journal's bytes come from.
#[derive(Debug, Clone)]
pub enum SourceData {
    /// A file on disk.
    File(PathBuf),
    /// Bytes compiled into the binary (the bundled sample incident).
    Embedded(&'static [u8]),
    /// Bytes read in full from something that cannot be read twice (a pipe,
    /// `/dev/stdin`, a process substitution), or a compressed journal,
    /// decompressed ([`JournalSource::materialize`]).
    Memory(std::sync::Arc<[u8]>),
}

/// How a journal file is compressed, told by its first bytes (the magic
/// numbers of RFC 1952 §2.3.1 for gzip and of RFC 8878 §3.1.1 for
/// Zstandard), whatever its name: `activity.jsonl.1` may be gzip, and
/// `x.gz` may be plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// gzip (one member or several, as `cat a.gz b.gz` makes).
    Gzip,
    /// Zstandard (one frame or several).
    Zstd,
}

impl Compression {
    /// The compression that `head`, a file's first bytes, starts with.
    pub fn of(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else {
            None
        }
    }

    /// Its name: `gzip`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }

    /// `inner`'s bytes, decompressed as they are read.
    fn decoder<'a, R: BufRead + Send + 'a>(
        self,
        inner: R,
    ) -> io::Result<Box<dyn Read + Send + 'a>> {
        Ok(match self {
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(inner)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(inner)?),
        })
    }
}

/// A journal to load: a display name and its bytes.
#[derive(Debug, Clone)]
pub struct JournalSource {
    /// Name shown in messages and evidence (the path as given).
    pub name: String,
    /// The bytes.
    pub data: SourceData,
    /// Size and modification time of a file when it was opened, to tell
    /// later whether it changed under retrace.
    stamp: Option<(u64, Option<std::time::SystemTime>)>,
    /// How the bytes are compressed, if they are (told by their first
    /// bytes).
    compression: Option<Compression>,
    /// Why the decompressed bytes stop short of the file's end (a stream
    /// cut short or corrupt part way): what came before is read
    /// ([`JournalSource::materialize`]).
    cut_short: Option<String>,
}

impl JournalSource {
    /// A journal file. A regular file's first bytes tell whether it is
    /// compressed ([`Compression`]); a pipe's are looked at once it is read
    /// ([`JournalSource::materialize`]).
    pub fn file(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let meta = std::fs::metadata(&path).ok();
        let stamp = meta.as_ref().map(|m| (m.len(), m.modified().ok()));
        let compression = meta.filter(std::fs::Metadata::is_file).and_then(|_| {
            let mut magic = [0u8; 4];
            let n = File::open(&path)
                .and_then(|mut f| f.read(&mut magic))
                .ok()?;
            Compression::of(&magic[..n])
        });
        JournalSource {
            name: path.display().to_string(),
            data: SourceData::File(path),
            stamp,
            compression,
            cut_short: None,
        }
    }

    /// How the journal is compressed, if it is.
    pub fn compression(&self) -> Option<Compression> {
        self.compression
    }

    /// Reads into memory a journal that cannot be read twice (a pipe,
    /// `/dev/stdin`, a process substitution), so that format detection does
    /// not consume what the reader needs, and a compressed journal (a file,
    /// or a pipe whose bytes turn out to be gzip or zstd), decompressed.
    /// An uncompressed regular file is left as it is.
    ///
    /// A compressed journal is held decompressed for as long as the
    /// source lives: memory as large as the decompressed journal (a 200 MiB
    /// `.gz` of JSON lines is often 2 GiB). That buys the raw line view its
    /// random access (a byte range read back at once, as from a file),
    /// where re-decompressing from the start for each line shown would
    /// cost time proportional to the line's offset on every cursor move.
    ///
    /// A compressed stream that is corrupt or cut short part way (a log
    /// rotated while it was written, a copy interrupted) gives the bytes
    /// decompressed before the damage: their lines are read, the last one
    /// cut off as a file's unfinished last line is, and
    /// [`JournalSource::cut_short`] says why the rest is missing (one
    /// damaged stretch never hides the good lines before it).
    ///
    /// # Errors
    /// [`JournalError::Open`] or [`JournalError::Io`];
    /// [`JournalError::Invalid`] when the compressed bytes are corrupt or
    /// cut short before anything could be decompressed.
    pub fn materialize(&mut self) -> Result<(), JournalError> {
        let SourceData::File(p) = &self.data else {
            return Ok(());
        };
        let meta = std::fs::metadata(p).map_err(|e| JournalError::Open {
            journal: self.name.clone(),
            source: e,
        })?;
        if meta.is_file() && self.compression.is_none() {
            return Ok(());
        }
        let mut buf = Vec::new();
        let read = self.open()?.read_to_end(&mut buf);
        if let Err(e) = read {
            self.keep_cut_short(e, &buf)?;
        }
        if self.compression.is_none()
            && let Some(c) = Compression::of(&buf)
        {
            // A pipe of compressed bytes (`cat x.gz | retrace groups /dev/stdin`).
            self.compression = Some(c);
            let mut out = Vec::new();
            let read = c
                .decoder(io::Cursor::new(buf))
                .and_then(|mut d| d.read_to_end(&mut out));
            if let Err(e) = read {
                self.keep_cut_short(e, &out)?;
            }
            buf = out;
        }
        self.data = SourceData::Memory(buf.into());
        self.stamp = None;
        Ok(())
    }

    /// A database named by a URL (`postgres://user@host:port/db`): its
    /// bytes are the URL, which format detection and the database's reader
    /// read (docs/formats.md#contextforge); its name is the URL with any
    /// password replaced by `***`.
    pub fn database(url: &str) -> Self {
        JournalSource {
            name: super::contextforge::redact_url(url),
            data: SourceData::Memory(url.as_bytes().to_vec().into()),
            stamp: None,
            compression: None,
            cut_short: None,
        }
    }

    /// Why the journal's bytes stop short of its file's end, when its
    /// compressed stream is corrupt or cut short part way
    /// ([`JournalSource::materialize`]): a note for its report.
    pub fn cut_short(&self) -> Option<&str> {
        self.cut_short.as_deref()
    }

    /// After a read error of a compressed journal that gave `got` bytes:
    /// keeps them, saying why the rest is missing, when there are any and
    /// the decompressor failed; the error otherwise.
    ///
    /// Only a stream that ends early (its input ran out: a file cut short)
    /// keeps what came before; one whose checksum or data is found wrong
    /// is corrupt somewhere, perhaps before where the error shows, and
    /// stays an error.
    fn keep_cut_short(&mut self, e: io::Error, got: &[u8]) -> Result<(), JournalError> {
        let text = e.to_string().to_ascii_lowercase();
        let ended_early = e.kind() == io::ErrorKind::UnexpectedEof
            || text.contains("incomplete")
            || text.contains("unexpected end");
        match self.compression {
            Some(c) if !got.is_empty() && ended_early => {
                self.cut_short = Some(format!(
                    "its {} stream ends early, after {} decompressed bytes ({e}): the file was cut short (or is damaged near there); the lines before are read, the rest is not",
                    c.name(),
                    got.len()
                ));
                Ok(())
            }
            _ => Err(self.decompress_error(e)),
        }
    }

    /// A read error of a compressed journal says which decompressor failed.
    fn decompress_error(&self, e: io::Error) -> JournalError {
        match self.compression {
            Some(c) => JournalError::Invalid {
                journal: self.name.clone(),
                message: format!(
                    "cannot decompress it ({}): {e}; the file is corrupt or was cut short",
                    c.name()
                ),
            },
            None => self.io_error(e),
        }
    }

    /// A journal compiled into the binary.
    pub fn embedded(name: &str, bytes: &'static [u8]) -> Self {
        JournalSource {
            name: name.to_string(),
            data: SourceData::Embedded(bytes),
            stamp: None,
            compression: None,
            cut_short: None,
        }
    }

    /// A journal held in memory under `name` (bytes read from elsewhere,
    /// tests).
    pub fn memory(name: &str, bytes: impl Into<std::sync::Arc<[u8]>>) -> Self {
        JournalSource {
            name: name.to_string(),
            data: SourceData::Memory(bytes.into()),
            stamp: None,
            compression: None,
            cut_short: None,
        }
    }

    /// Total size in bytes, when known (of a compressed file not yet
    /// read, its compressed size).
    pub fn size(&self) -> Option<u64> {
        match &self.data {
            SourceData::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            SourceData::Embedded(b) => Some(b.len() as u64),
            SourceData::Memory(b) => Some(b.len() as u64),
        }
    }

    /// Opens the bytes for sequential reading with a large buffer; a
    /// compressed file is decompressed as it is read.
    ///
    /// # Errors
    /// [`JournalError::Open`] when the file cannot be opened.
    pub fn open(&self) -> Result<Box<dyn BufRead + Send + '_>, JournalError> {
        match &self.data {
            SourceData::File(p) => {
                let open_error = |e| JournalError::Open {
                    journal: self.name.clone(),
                    source: e,
                };
                let f = File::open(p).map_err(open_error)?;
                match self.compression {
                    None => Ok(Box::new(BufReader::with_capacity(1 << 20, f))),
                    Some(c) => {
                        let d = c
                            .decoder(BufReader::with_capacity(1 << 16, f))
                            .map_err(open_error)?;
                        Ok(Box::new(BufReader::with_capacity(1 << 20, d)))
                    }
                }
            }
            SourceData::Embedded(b) => Ok(Box::new(*b)),
            SourceData::Memory(b) => Ok(Box::new(io::Cursor::new(b.clone()))),
        }
    }

    /// The journal's content identity: 8 hex digits of SHA-256 over its
    /// first line (without the line end; at most `IDENTITY_PREFIX` bytes
    /// of it). The same under any file name, path or load order, and
    /// stable while the journal grows; unrelated journals differ because
    /// their first lines do (a timestamp, a session, a chain hash). Ids
    /// and intent scopes of formats that carry none are built on it
    /// (docs/design.md §2.6).
    ///
    /// # Errors
    /// [`JournalError::Open`] or [`JournalError::Io`].
    pub fn identity(&self) -> Result<String, JournalError> {
        use sha2::{Digest, Sha256};
        let mut first = Vec::new();
        self.open()?
            .take(IDENTITY_PREFIX as u64)
            .read_until(b'\n', &mut first)
            .map_err(|e| self.decompress_error(e))?;
        while first.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            first.pop();
        }
        Ok(hex::encode(Sha256::digest(&first))[..8].to_string())
    }

    /// Reads the first `max` bytes (for detection).
    pub(super) fn head(&self, max: usize) -> Result<Vec<u8>, JournalError> {
        let mut buf = Vec::new();
        self.open()?
            .take(max as u64)
            .read_to_end(&mut buf)
            .map_err(|e| self.io_error(e))?;
        Ok(buf)
    }

    /// Reads the raw text of one line back (for the raw JSON view).
    ///
    /// # Errors
    /// [`JournalError::Io`] when the file changed or cannot be read, `at`
    /// is a row of a table rather than a line, or the line starts where
    /// a [`crate::model::LineOffset`] no longer says exactly (1 TiB into
    /// the file or further).
    pub fn read_raw(&self, at: SourceRef) -> Result<String, JournalError> {
        let Some((offset, len)) = at.byte_range() else {
            return Err(self.io_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a line of a file", at.place()),
            )));
        };
        if offset >= crate::model::LineOffset::MAX {
            return Err(self.io_error(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{} starts 1 TiB or more into the journal: its text cannot be read back",
                    at.place()
                ),
            )));
        }
        let in_memory = |b: &[u8]| {
            let start = usize::try_from(offset).unwrap_or(usize::MAX);
            b.get(start..start.saturating_add(len as usize))
                .map(<[u8]>::to_vec)
                .ok_or_else(|| {
                    self.io_error(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "line lies past the end of the journal",
                    ))
                })
        };
        let bytes = match &self.data {
            SourceData::Embedded(b) => in_memory(b)?,
            SourceData::Memory(b) => in_memory(b)?,
            SourceData::File(_) if self.compression.is_some() => {
                // Not held in memory (a journal only verified): decompress
                // again up to the line.
                let mut r = self.open()?;
                io::copy(&mut (&mut r).take(offset), &mut io::sink())
                    .map_err(|e| self.decompress_error(e))?;
                let mut buf = vec![0; len as usize];
                r.read_exact(&mut buf)
                    .map_err(|e| self.decompress_error(e))?;
                buf
            }
            SourceData::File(p) => {
                // Evidence shown must be what was analysed: refuse a file
                // that changed since it was read.
                let now = std::fs::metadata(p)
                    .ok()
                    .map(|m| (m.len(), m.modified().ok()));
                if self.stamp.is_some() && now != self.stamp {
                    return Err(self.io_error(io::Error::other(
                        "the journal changed on disk since retrace read it; reload to see what it holds now",
                    )));
                }
                let mut f = File::open(p).map_err(|e| self.io_error(e))?;
                f.seek(SeekFrom::Start(offset))
                    .map_err(|e| self.io_error(e))?;
                let mut buf = vec![0; len as usize];
                f.read_exact(&mut buf).map_err(|e| self.io_error(e))?;
                buf
            }
        };
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    pub(super) fn io_error(&self, e: io::Error) -> JournalError {
        JournalError::Io {
            journal: self.name.clone(),
            source: e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TEXT: &[u8] = b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n";

    fn gz(b: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    /// A line of a compressed journal reads back whether the journal was
    /// decompressed into memory (loaded) or not (only verified).
    #[test]
    fn compressed_lines_read_back_held_or_not() {
        let d = tempfile::tempdir().unwrap();
        for (name, bytes) in [
            ("x.jsonl.gz", gz(TEXT)),
            ("x.jsonl.zst", zstd::encode_all(TEXT, 1).unwrap()),
        ] {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            let mut s = JournalSource::file(&p);
            assert!(s.compression().is_some(), "{name}");
            let at = SourceRef::Line {
                journal: 0,
                line: 2,
                offset: crate::model::LineOffset::new(8),
                len: 7,
            };
            assert_eq!(s.read_raw(at).unwrap(), "{\"b\":2}", "{name}: streamed");
            assert_eq!(s.head(64).unwrap(), TEXT, "{name}");
            s.materialize().unwrap();
            assert!(matches!(s.data, SourceData::Memory(_)));
            assert_eq!(s.size(), Some(TEXT.len() as u64));
            assert_eq!(s.read_raw(at).unwrap(), "{\"b\":2}", "{name}: held");
        }
        // Plain text stays a file, whatever its name.
        let p = d.path().join("plain.gz");
        std::fs::write(&p, TEXT).unwrap();
        let mut s = JournalSource::file(&p);
        assert_eq!(s.compression(), None);
        s.materialize().unwrap();
        assert!(matches!(s.data, SourceData::File(_)));
    }

    /// A compressed journal cut short keeps what decompressed before the
    /// cut, and says so; one cut before anything decompressed is an error
    /// naming the decompressor.
    #[test]
    fn a_compressed_journal_cut_short_keeps_its_first_lines() {
        let d = tempfile::tempdir().unwrap();
        // Several of zstd's 128 KiB blocks: a block cut short gives nothing.
        let text: Vec<u8> = (0..40_000)
            .flat_map(|i| format!("{{\"n\":{i},\"tool\":\"t{}\"}}\n", i * 7919 % 1000).into_bytes())
            .collect();
        for (name, bytes) in [
            ("x.jsonl.gz", gz(&text)),
            ("x.jsonl.zst", zstd::encode_all(&text[..], 1).unwrap()),
        ] {
            let p = d.path().join(name);
            std::fs::write(&p, &bytes[..bytes.len() * 3 / 4]).unwrap();
            let mut s = JournalSource::file(&p);
            s.materialize().unwrap();
            let SourceData::Memory(got) = &s.data else {
                panic!("{name}: not held");
            };
            assert!(!got.is_empty() && got.len() < text.len(), "{name}");
            assert!(text.starts_with(got), "{name}: not the journal's start");
            let why = s.cut_short().unwrap_or_default();
            assert!(why.contains("ends early"), "{name}: {why}");
            // Whole, it says nothing.
            std::fs::write(&p, &bytes).unwrap();
            let mut s = JournalSource::file(&p);
            s.materialize().unwrap();
            assert_eq!(s.cut_short(), None, "{name}");
            // A checksum that does not match: corrupt somewhere, an error.
            let mut bad = bytes.clone();
            let at = bad.len() - if name.ends_with(".gz") { 6 } else { 2 };
            bad[at] ^= 0xff;
            std::fs::write(&p, &bad).unwrap();
            let mut s = JournalSource::file(&p);
            let e = s.materialize().unwrap_err().to_string();
            assert!(e.contains("cannot decompress it"), "{name}: {e}");
            // Cut before anything decompressed.
            std::fs::write(&p, &bytes[..12]).unwrap();
            let mut s = JournalSource::file(&p);
            let e = s.materialize().unwrap_err().to_string();
            assert!(e.contains("cannot decompress it"), "{name}: {e}");
        }
    }
}

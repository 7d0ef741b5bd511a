//! Where a journal's bytes come from: a file, bytes compiled into the
//! binary, or a pipe read whole.

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
    /// Bytes read in full from something that cannot be read twice: a pipe,
    /// `/dev/stdin`, a process substitution.
    Memory(std::sync::Arc<[u8]>),
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
}

impl JournalSource {
    /// A journal file.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let stamp = std::fs::metadata(&path)
            .ok()
            .map(|m| (m.len(), m.modified().ok()));
        JournalSource {
            name: path.display().to_string(),
            data: SourceData::File(path),
            stamp,
        }
    }

    /// Reads a journal that cannot be read twice (a pipe, `/dev/stdin`, a
    /// process substitution) into memory, so that format detection does not
    /// consume what the reader needs. Regular files are left as they are.
    ///
    /// # Errors
    /// [`JournalError::Open`] or [`JournalError::Io`].
    pub fn materialize(&mut self) -> Result<(), JournalError> {
        let SourceData::File(p) = &self.data else {
            return Ok(());
        };
        let meta = std::fs::metadata(p).map_err(|e| JournalError::Open {
            journal: self.name.clone(),
            source: e,
        })?;
        if meta.is_file() {
            return Ok(());
        }
        let mut buf = Vec::new();
        self.open()?
            .read_to_end(&mut buf)
            .map_err(|e| self.io_error(e))?;
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
        }
    }

    /// A journal compiled into the binary.
    pub fn embedded(name: &str, bytes: &'static [u8]) -> Self {
        JournalSource {
            name: name.to_string(),
            data: SourceData::Embedded(bytes),
            stamp: None,
        }
    }

    /// A journal held in memory under `name` (bytes read from elsewhere,
    /// tests).
    pub fn memory(name: &str, bytes: impl Into<std::sync::Arc<[u8]>>) -> Self {
        JournalSource {
            name: name.to_string(),
            data: SourceData::Memory(bytes.into()),
            stamp: None,
        }
    }

    /// Total size in bytes, when known.
    pub fn size(&self) -> Option<u64> {
        match &self.data {
            SourceData::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            SourceData::Embedded(b) => Some(b.len() as u64),
            SourceData::Memory(b) => Some(b.len() as u64),
        }
    }

    /// Opens the bytes for sequential reading with a large buffer.
    ///
    /// # Errors
    /// [`JournalError::Open`] when the file cannot be opened.
    pub fn open(&self) -> Result<Box<dyn BufRead + Send + '_>, JournalError> {
        match &self.data {
            SourceData::File(p) => {
                let f = File::open(p).map_err(|e| JournalError::Open {
                    journal: self.name.clone(),
                    source: e,
                })?;
                Ok(Box::new(BufReader::with_capacity(1 << 20, f)))
            }
            SourceData::Embedded(b) => Ok(Box::new(*b)),
            SourceData::Memory(b) => Ok(Box::new(io::Cursor::new(b.clone()))),
        }
    }

    /// The journal's content identity: 8 hex digits of SHA-256 over its
    /// first line (without the line end; at most [`IDENTITY_PREFIX`] bytes
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
            .map_err(|e| self.io_error(e))?;
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
    /// [`JournalError::Io`] when the file changed or cannot be read, or
    /// `at` is a row of a table rather than a line.
    pub fn read_raw(&self, at: SourceRef) -> Result<String, JournalError> {
        let Some((offset, len)) = at.byte_range() else {
            return Err(self.io_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a line of a file", at.place()),
            )));
        };
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

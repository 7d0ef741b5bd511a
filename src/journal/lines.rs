//! Line splitting with positions, shared by every JSONL reader.

use crate::model::{JournalId, SourceRef};
use std::io::{self, BufRead};

/// One line of a journal: its position and its bytes without the terminator.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// Position of the line.
    pub source: SourceRef,
    /// Line bytes without `\n` or `\r\n`.
    pub bytes: &'a [u8],
    /// False when the journal ended without a final newline (a truncated tail
    /// for append-only journals).
    pub terminated: bool,
}

/// Reads lines from a buffered reader, reusing one buffer, and tracks byte
/// offsets so that a line can later be re-read from the file.
pub struct LineReader<R> {
    inner: R,
    journal: JournalId,
    buf: Vec<u8>,
    line: u32,
    offset: u64,
}

impl<R: BufRead> LineReader<R> {
    /// Wraps `inner`, numbering lines from 1.
    pub fn new(inner: R, journal: JournalId) -> Self {
        LineReader {
            inner,
            journal,
            buf: Vec::with_capacity(4096),
            line: 0,
            offset: 0,
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next line, or `None` at the end. Empty lines are returned too;
    /// callers decide whether they matter.
    ///
    /// # Errors
    /// I/O errors from the underlying reader.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        self.buf.clear();
        let n = self.inner.read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        let start = self.offset;
        self.offset += n as u64;
        let mut end = self.buf.len();
        let terminated = self.buf.last() == Some(&b'\n');
        if terminated {
            end -= 1;
            if end > 0 && self.buf[end - 1] == b'\r' {
                end -= 1;
            }
        }
        Ok(Some(Line {
            source: SourceRef {
                journal: self.journal,
                line: self.line,
                offset: start,
                len: u32::try_from(end).unwrap_or(u32::MAX),
            },
            bytes: &self.buf[..end],
            terminated,
        }))
    }
}

/// True when the bytes hold only ASCII whitespace.
pub fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_terminators() {
        let data = b"{\"a\":1}\r\n\n{\"b\":2}";
        let mut r = LineReader::new(&data[..], 3);
        let l1 = r.next_line().unwrap().unwrap();
        assert_eq!(l1.bytes, b"{\"a\":1}");
        assert_eq!((l1.source.line, l1.source.offset, l1.source.len), (1, 0, 7));
        assert!(l1.terminated);
        let l2 = r.next_line().unwrap().unwrap();
        assert!(is_blank(l2.bytes));
        assert_eq!(l2.source.offset, 9);
        let l3 = r.next_line().unwrap().unwrap();
        assert_eq!(l3.bytes, b"{\"b\":2}");
        assert_eq!((l3.source.line, l3.source.offset), (3, 10));
        assert!(!l3.terminated);
        assert_eq!(&data[10..10 + l3.source.len as usize], l3.bytes);
        assert!(r.next_line().unwrap().is_none());
    }
}

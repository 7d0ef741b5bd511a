//! Line splitting with positions, shared by every JSONL reader.

use crate::model::{JournalId, SourceRef};
use std::io::{self, BufRead};

/// The longest line kept, in bytes. A longer line is reported as a bad
/// line and skipped (its bytes are read and dropped, never held), so that a
/// runaway line cannot exhaust memory.
pub const MAX_LINE: usize = 64 << 20;

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
    /// The line's full length when it exceeded [`MAX_LINE`] (its bytes are
    /// then empty).
    pub too_long: Option<u64>,
}

impl Line<'_> {
    /// The 1-based line number.
    pub fn no(&self) -> u32 {
        self.source.position()
    }
    /// Byte offset of the line's first byte.
    pub fn offset(&self) -> u64 {
        self.source.byte_range().map_or(0, |(o, _)| o)
    }
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
        let mut n: u64 = 0;
        let mut terminated = false;
        // Read up to the newline, keeping at most MAX_LINE bytes.
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            let (take, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if self.buf.len() <= MAX_LINE {
                let room = (MAX_LINE + 1).saturating_sub(self.buf.len()).min(take);
                self.buf.extend_from_slice(&chunk[..room]);
            }
            self.inner.consume(take);
            n += take as u64;
            if done {
                terminated = true;
                break;
            }
        }
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        let start = self.offset;
        self.offset += n;
        let content = if terminated { n - 1 } else { n };
        let too_long = (content > MAX_LINE as u64).then_some(content);
        if too_long.is_some() {
            self.buf.clear();
        }
        let mut end = self.buf.len();
        if terminated && too_long.is_none() {
            end -= 1;
            if end > 0 && self.buf[end - 1] == b'\r' {
                end -= 1;
            }
        }
        // A UTF-8 byte order mark before the first line is not part of it.
        let mut begin = 0;
        if self.line == 1 && self.buf[..end].starts_with(b"\xEF\xBB\xBF") {
            begin = 3;
        }
        Ok(Some(Line {
            source: SourceRef::Line {
                journal: self.journal,
                line: self.line,
                offset: start + begin as u64,
                len: u32::try_from(end - begin).unwrap_or(u32::MAX),
            },
            bytes: &self.buf[begin..end],
            terminated,
            too_long,
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
        assert_eq!((l1.no(), l1.source.byte_range()), (1, Some((0, 7))));
        assert!(l1.terminated);
        let l2 = r.next_line().unwrap().unwrap();
        assert!(is_blank(l2.bytes));
        assert_eq!(l2.offset(), 9);
        let l3 = r.next_line().unwrap().unwrap();
        assert_eq!(l3.bytes, b"{\"b\":2}");
        assert_eq!((l3.no(), l3.offset()), (3, 10));
        assert!(!l3.terminated);
        assert_eq!(
            &data[10..10 + l3.source.byte_range().unwrap().1 as usize],
            l3.bytes
        );
        assert!(r.next_line().unwrap().is_none());
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_line() {
        let data = b"\xEF\xBB\xBF{\"a\":1}\n{\"b\":2}\n";
        let mut r = LineReader::new(&data[..], 0);
        let l1 = r.next_line().unwrap().unwrap();
        assert_eq!(l1.bytes, b"{\"a\":1}");
        assert_eq!(l1.source.byte_range(), Some((3, 7)));
        assert_eq!(r.next_line().unwrap().unwrap().bytes, b"{\"b\":2}");
    }

    #[test]
    fn an_overlong_line_is_measured_not_kept() {
        let mut data = vec![b'x'; MAX_LINE + 10];
        data.extend_from_slice(b"\n{}\n");
        let mut r = LineReader::new(std::io::BufReader::with_capacity(1 << 16, &data[..]), 0);
        let l1 = r.next_line().unwrap().unwrap();
        assert_eq!(l1.too_long, Some(MAX_LINE as u64 + 10));
        assert!(l1.bytes.is_empty());
        let l2 = r.next_line().unwrap().unwrap();
        assert_eq!((l2.bytes, l2.no()), (&b"{}"[..], 2));
        assert_eq!(l2.offset(), MAX_LINE as u64 + 11);
    }
}

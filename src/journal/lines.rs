//! Line splitting with positions, shared by every JSONL reader.

use crate::model::{JournalId, LineOffset, SourceRef};
use std::io::{self, BufRead, Read};

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

/// Reads lines from a buffered reader and tracks byte offsets so that a
/// line can later be re-read from the file. A line that lies whole in the
/// reader's buffer is lent from there; only one that crosses the buffer's
/// end is copied (into one buffer, reused).
pub struct LineReader<R> {
    inner: R,
    journal: JournalId,
    buf: Vec<u8>,
    line: u32,
    offset: u64,
    /// Bytes of the reader's buffer lent as the last line, consumed when
    /// the next is asked for.
    lent: usize,
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
            lent: 0,
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
        self.inner.consume(std::mem::take(&mut self.lent));
        self.buf.clear();
        // Most lines lie whole in the reader's buffer: they are lent from
        // it, not copied. (The buffer is asked for again to be lent: what
        // it holds is not read twice.)
        let whole = loop {
            match self.inner.fill_buf() {
                Ok(c) => break memchr::memchr(b'\n', c).filter(|&i| i <= MAX_LINE),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if let Some(i) = whole {
            let chunk = self.inner.fill_buf()?;
            let chunk = chunk.get(..=i).ok_or_else(|| {
                io::Error::other("the reader's buffer changed between two looks at it")
            })?;
            self.lent = i + 1;
            self.line += 1;
            let start = self.offset;
            self.offset += (i + 1) as u64;
            return Ok(Some(line_at(
                (self.journal, self.line, start),
                &chunk[..i],
                true,
                None,
            )));
        }
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
        }
        Ok(Some(line_at(
            (self.journal, self.line, start),
            &self.buf[..end],
            terminated,
            too_long,
        )))
    }
}

/// The line numbered `line` of `journal`, starting at byte `start`, whose
/// bytes up to its newline (not included) are `raw`: a `\r` before the
/// newline is not part of it, nor is a UTF-8 byte order mark before the
/// first line.
fn line_at(
    (journal, line, start): (JournalId, u32, u64),
    raw: &[u8],
    terminated: bool,
    too_long: Option<u64>,
) -> Line<'_> {
    let (begin, end) = content_of(line, raw, terminated && too_long.is_none());
    Line {
        source: SourceRef::Line {
            journal,
            line,
            offset: LineOffset::new(start + begin as u64),
            len: u32::try_from(end - begin).unwrap_or(u32::MAX),
        },
        bytes: &raw[begin..end],
        terminated,
        too_long,
    }
}

/// Where the content of line number `line` lies in `raw`, its bytes up to
/// its newline: without a `\r` before the newline (when `terminated`), and
/// without a UTF-8 byte order mark on the first line.
fn content_of(line: u32, raw: &[u8], terminated: bool) -> (usize, usize) {
    let mut end = raw.len();
    if terminated && end > 0 && raw[end - 1] == b'\r' {
        end -= 1;
    }
    let mut begin = 0;
    if line == 1 && raw[..end].starts_with(b"\xEF\xBB\xBF") {
        begin = 3;
    }
    (begin, end)
}

/// One line of a block read by [`BlockLines`]: what [`Line`] says of it,
/// with its bytes as a range of the block's buffer.
#[derive(Debug, Clone, Copy)]
pub struct BlockLine {
    /// Position of the line.
    pub source: SourceRef,
    /// Where the line's bytes are in the block (as [`Line::bytes`]; empty
    /// for a line too long).
    pub span: (usize, usize),
    /// As [`Line::terminated`].
    pub terminated: bool,
    /// As [`Line::too_long`].
    pub too_long: Option<u64>,
}

/// Reads a journal's lines a block at a time, straight into a buffer the
/// caller keeps: the lines [`LineReader`] gives, numbered and placed
/// alike, for a reader that hands blocks of lines to other threads. The
/// bytes are copied once, from the reader into the block, where a
/// [`LineReader`] behind a thread's batches copies each line a second
/// time.
pub struct BlockLines<R> {
    inner: R,
    journal: JournalId,
    /// The start of a line read with the block before: the next block
    /// begins with it.
    carry: Vec<u8>,
    line: u32,
    /// Bytes of the journal in the lines given so far.
    offset: u64,
    eof: bool,
    /// Bytes asked of the reader at a time.
    chunk: usize,
}

/// Bytes asked of the reader at a time: more than a journal's buffered
/// reader holds, so that it reads straight into the block (few in tests,
/// so that lines cross many reads).
const READ_CHUNK: usize = if cfg!(test) { 61 } else { 2 << 20 };

impl<R: Read> BlockLines<R> {
    /// Wraps `inner`, numbering lines from 1.
    pub fn new(inner: R, journal: JournalId) -> Self {
        BlockLines {
            inner,
            journal,
            carry: Vec::new(),
            line: 0,
            offset: 0,
            eof: false,
            chunk: READ_CHUNK,
        }
    }

    /// Bytes of the journal in the lines given so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads whole lines into `buf` (emptied first) and gives each to
    /// `each` in order with its bytes, blank ones included, until the block
    /// holds `bytes` bytes of lines or more, or `lines` lines (one at
    /// least, whatever the two say), or the journal ends; what was read
    /// past the block's last line starts the next block. A line longer
    /// than [`MAX_LINE`] is given by its length, its bytes read and
    /// dropped. Returns false once the journal has no more lines (this
    /// block may still have had some).
    ///
    /// A block's lines are bounded as well as its bytes: what a caller
    /// keeps for each line (a parse result of a few hundred bytes) would
    /// otherwise grow with the number of short lines a block of bytes can
    /// hold.
    ///
    /// # Errors
    /// I/O errors of the reader; the lines given before one stand.
    pub fn fill(
        &mut self,
        buf: &mut Vec<u8>,
        (bytes, lines): (usize, usize),
        mut each: impl FnMut(&[u8], BlockLine),
    ) -> io::Result<bool> {
        buf.clear();
        buf.append(&mut self.carry);
        // The first byte of the line not given yet, and how far from it
        // no newline was found.
        let mut start = 0;
        let mut searched = 0;
        let mut given = 0usize;
        loop {
            while let Some(i) = memchr::memchr(b'\n', &buf[searched..]) {
                let end = searched + i;
                self.give(buf, (start, end), true, &mut each);
                start = end + 1;
                searched = start;
                given += 1;
                if start >= bytes || given >= lines {
                    self.carry.extend_from_slice(&buf[start..]);
                    buf.truncate(start);
                    return Ok(true);
                }
            }
            searched = buf.len();
            if self.eof {
                if start < buf.len() {
                    self.give(buf, (start, buf.len()), false, &mut each);
                }
                return Ok(false);
            }
            if buf.len() - start > MAX_LINE {
                // Longer than any line kept: the rest of it is read and
                // dropped, and it is given by its length.
                let (rest, terminated) = self.skip_line()?;
                let n = (buf.len() - start) as u64 + rest;
                buf.truncate(start);
                searched = start;
                self.line = self.line.saturating_add(1);
                let at = self.offset;
                self.offset += n + u64::from(terminated);
                each(
                    &[],
                    BlockLine {
                        source: SourceRef::Line {
                            journal: self.journal,
                            line: self.line,
                            offset: LineOffset::new(at),
                            len: 0,
                        },
                        span: (start, start),
                        terminated,
                        too_long: Some(n),
                    },
                );
                given += 1;
                if given >= lines {
                    // The lines after it, read with its end, start the
                    // next block.
                    return Ok(true);
                }
                // The lines after it, read with its end.
                buf.append(&mut self.carry);
                continue;
            }
            // Read straight into the block: a buffered reader hands a read
            // at least as large as its buffer to the file.
            let before = buf.len();
            buf.resize(before + self.chunk, 0);
            let got = loop {
                match self.inner.read(&mut buf[before..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        buf.truncate(before);
                        return Err(e);
                    }
                }
            };
            buf.truncate(before + got);
            if got == 0 {
                self.eof = true;
            }
        }
    }

    /// Gives the line whose bytes up to its newline are `buf[a..z]`.
    fn give(
        &mut self,
        buf: &[u8],
        (a, z): (usize, usize),
        terminated: bool,
        each: &mut impl FnMut(&[u8], BlockLine),
    ) {
        self.line = self.line.saturating_add(1);
        let at = self.offset;
        self.offset += (z - a) as u64 + u64::from(terminated);
        let too_long = (z - a > MAX_LINE).then_some((z - a) as u64);
        let (begin, end) = match too_long {
            Some(_) => (0, 0),
            None => content_of(self.line, &buf[a..z], terminated),
        };
        each(
            &buf[a + begin..a + end],
            BlockLine {
                source: SourceRef::Line {
                    journal: self.journal,
                    line: self.line,
                    offset: LineOffset::new(at + begin as u64),
                    len: u32::try_from(end - begin).unwrap_or(u32::MAX),
                },
                span: (a + begin, a + end),
                terminated,
                too_long,
            },
        );
    }

    /// Reads and drops the rest of a line: how many bytes it had before
    /// its newline, and whether it had one.
    fn skip_line(&mut self) -> io::Result<(u64, bool)> {
        let mut n = 0u64;
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            let got = match self.inner.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return Ok((n, false));
                }
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if let Some(i) = memchr::memchr(b'\n', &chunk[..got]) {
                // What follows the newline starts the next line.
                self.carry.extend_from_slice(&chunk[i + 1..got]);
                return Ok((n + i as u64, true));
            }
            n += got as u64;
        }
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

    /// Lines lent from the reader's buffer and lines copied because they
    /// cross its end read alike: buffers of 1 to 24 bytes against one that
    /// holds the whole journal, on lines with `\r\n`, a `\r` alone, blank
    /// lines, a byte order mark and no final newline.
    #[test]
    fn lines_across_the_buffer_read_as_lines_within_it() {
        let data = b"\xEF\xBB\xBF{\"a\":1}\r\n\n\r\n{\"bb\":22}\rx\n{\"c\":[1,2,3]}\n\n{\"d\":4}";
        let all = |cap: usize| {
            let mut r = LineReader::new(std::io::BufReader::with_capacity(cap, &data[..]), 7);
            let mut v = Vec::new();
            while let Some(l) = r.next_line().unwrap() {
                v.push((l.bytes.to_vec(), l.source, l.terminated, l.too_long));
            }
            (v, r.offset())
        };
        let whole = all(1 << 10);
        assert_eq!(whole.0.len(), 7);
        assert_eq!(whole.0[0].0, b"{\"a\":1}");
        assert_eq!(whole.0[3].0, b"{\"bb\":22}\rx");
        assert_eq!(whole.1, data.len() as u64);
        for cap in 1..=24 {
            assert_eq!(all(cap), whole, "buffer of {cap} bytes");
        }
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

    /// What a [`BlockLines`] reading `data` `chunk` bytes at a time, in
    /// blocks of `want` (bytes, lines), gives: each line as a
    /// [`LineReader`] item, and the offset at the end.
    fn by_blocks(data: &[u8], chunk: usize, want: (usize, usize)) -> ReadLines {
        let mut r = BlockLines::new(data, 7);
        r.chunk = chunk;
        let mut buf = Vec::new();
        let mut v = Vec::new();
        loop {
            let mut block = Vec::new();
            let more = r
                .fill(&mut buf, want, |bytes, l| {
                    block.push((bytes.to_vec(), l.source, l.terminated, l.too_long, l.span));
                })
                .unwrap();
            // A block holds at most the lines asked for; one that ends
            // early holds the bytes asked for (or is the last).
            assert!(block.len() <= want.1.max(1));
            if more && block.len() < want.1 {
                // Its last line's end, before a `\r\n` at most.
                let last = block.last().map_or(0, |l| l.4.1);
                assert!(last + 2 >= want.0 || block.last().is_some_and(|l| l.3.is_some()));
            }
            for (bytes, source, terminated, too_long, (a, z)) in block {
                // The line's bytes are its span of the block.
                assert_eq!(&buf[a..z], &bytes[..]);
                v.push((bytes, source, terminated, too_long));
            }
            if !more {
                return (v, r.offset());
            }
        }
    }

    /// Lines and the offset after them.
    type ReadLines = (Vec<(Vec<u8>, SourceRef, bool, Option<u64>)>, u64);

    /// What a [`LineReader`] gives of `data`.
    fn by_lines(data: &[u8]) -> ReadLines {
        let mut r = LineReader::new(std::io::BufReader::with_capacity(1 << 10, data), 7);
        let mut v = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            v.push((l.bytes.to_vec(), l.source, l.terminated, l.too_long));
        }
        (v, r.offset())
    }

    /// Blocks give the lines a line reader gives, whatever the size of a
    /// read or a block: `\r\n`, a `\r` alone, blank lines, a byte order
    /// mark, no final newline, an empty journal and a lone newline.
    #[test]
    fn blocks_give_the_lines_a_line_reader_gives() {
        let data: &[&[u8]] = &[
            b"\xEF\xBB\xBF{\"a\":1}\r\n\n\r\n{\"bb\":22}\rx\n{\"c\":[1,2,3]}\n\n{\"d\":4}",
            b"{\"a\":1}\n{\"b\":2}\n",
            b"",
            b"\n",
            b"\r",
            b"x",
            b"\xEF\xBB\xBF",
        ];
        for d in data {
            let expected = by_lines(d);
            for chunk in 1..=24 {
                for bytes in [0, 1, 2, 5, 9, 17, 1 << 10] {
                    for lines in [0, 1, 2, 3, 1000] {
                        assert_eq!(
                            by_blocks(d, chunk, (bytes, lines)),
                            expected,
                            "{:?} read {chunk} bytes at a time in blocks of {bytes} bytes, {lines} lines",
                            String::from_utf8_lossy(d)
                        );
                    }
                }
            }
        }
    }

    /// A line longer than [`MAX_LINE`] is given by its length by both
    /// readers, with or without a newline after it, and the line after it
    /// is read whole.
    #[test]
    fn blocks_measure_an_overlong_line_as_a_line_reader_does() {
        let mut data = vec![b'x'; MAX_LINE + 10];
        data.extend_from_slice(b"\n{}\n{\"c\":3}");
        for (chunk, lines) in [(1 << 16, 1000), (3 << 20, 1000), (1 << 16, 1)] {
            let got = by_blocks(&data, chunk, (1 << 10, lines));
            assert_eq!(got, by_lines(&data));
            assert_eq!(got.0[0].3, Some(MAX_LINE as u64 + 10));
            assert_eq!(got.0.len(), 3);
        }
        let unterminated = vec![b'y'; MAX_LINE + 3];
        let got = by_blocks(&unterminated, 1 << 16, (1 << 10, 1000));
        assert_eq!(got, by_lines(&unterminated));
        assert_eq!(got.0[0].3, Some(MAX_LINE as u64 + 3));
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

//! Where a record sits in its journal: a line of a file or a row of a table.

use super::JournalId;
use serde::{Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;

/// A table retrace reads rows from, named by one byte in every
/// [`SourceRef::Row`] instead of a string. Serialized, shown and ordered
/// as its name ([`Table::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// `events` (native SQLite journals).
    Events,
    /// `sessions` (native SQLite journals).
    Sessions,
    /// `observability_spans` (ContextForge databases).
    ObservabilitySpans,
    /// `observability_traces` (ContextForge databases).
    ObservabilityTraces,
    /// `structured_log_entries` (ContextForge databases).
    StructuredLogEntries,
    /// `tool_metrics` (ContextForge databases).
    ToolMetrics,
    /// `tools` (ContextForge databases).
    Tools,
}

impl Table {
    /// The table's name in its database, e.g. `events`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Table::Events => "events",
            Table::Sessions => "sessions",
            Table::ObservabilitySpans => "observability_spans",
            Table::ObservabilityTraces => "observability_traces",
            Table::StructuredLogEntries => "structured_log_entries",
            Table::ToolMetrics => "tool_metrics",
            Table::Tools => "tools",
        }
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Table {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl PartialOrd for Table {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Table {
    /// By name, as rows were ordered when they named their table by it.
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// The byte offset of a line in its journal file, in five bytes: up to
/// [`LineOffset::MAX`] (2^40 - 1, one byte short of 1 TiB). Kept
/// big-endian, so that the derived order is the numbers'. Serialized and
/// debug-printed as the number.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineOffset([u8; 5]);

impl LineOffset {
    /// The largest offset held: a line that starts further into its file
    /// is placed here (docs/design.md §9.8).
    pub const MAX: u64 = (1 << 40) - 1;

    /// The offset `n`, or [`LineOffset::MAX`] when `n` is larger.
    pub fn new(n: u64) -> LineOffset {
        let b = n.min(Self::MAX).to_be_bytes();
        LineOffset([b[3], b[4], b[5], b[6], b[7]])
    }

    /// The offset in bytes.
    pub fn get(self) -> u64 {
        let [a, b, c, d, e] = self.0;
        u64::from_be_bytes([0, 0, 0, a, b, c, d, e])
    }
}

impl fmt::Debug for LineOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

impl Serialize for LineOffset {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.get())
    }
}

/// Where a record sits in its journal, so that its raw text can be read
/// back on demand instead of being kept in memory for every event, and so
/// that evidence can cite it.
///
/// `Copy` and 16 bytes: every event carries one (a two-byte journal index,
/// a five-byte offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceRef {
    /// A line of a file (JSONL journals).
    Line {
        /// Journal index in the loaded set.
        journal: JournalId,
        /// 1-based line number.
        line: u32,
        /// Byte offset of the line's first byte in the journal file (after
        /// a byte order mark on the first line).
        offset: LineOffset,
        /// Length of the line in bytes, without its line terminator.
        len: u32,
    },
    /// A row of a table (SQLite journals).
    Row {
        /// Journal index in the loaded set.
        journal: JournalId,
        /// The table, e.g. `events`.
        table: Table,
        /// The row's id (SQLite `rowid`), 1 to 2^32-1.
        row: u32,
    },
}

impl Default for SourceRef {
    /// Line 0 of journal 0: a record that came from nowhere in particular
    /// (tests, defaults filled in before the reader knows better).
    fn default() -> Self {
        SourceRef::Line {
            journal: 0,
            line: 0,
            offset: LineOffset::default(),
            len: 0,
        }
    }
}

impl SourceRef {
    /// The journal the record is in.
    pub fn journal(self) -> JournalId {
        match self {
            SourceRef::Line { journal, .. } | SourceRef::Row { journal, .. } => journal,
        }
    }

    /// The record's position in its journal: the 1-based line, or the row
    /// id. What chain statuses and evidence count in.
    pub fn position(self) -> u32 {
        match self {
            SourceRef::Line { line, .. } => line,
            SourceRef::Row { row, .. } => row,
        }
    }

    /// The table of a row; `None` for a line.
    pub fn table(self) -> Option<&'static str> {
        match self {
            SourceRef::Line { .. } => None,
            SourceRef::Row { table, .. } => Some(table.as_str()),
        }
    }

    /// The byte offset and length of a line; `None` for a row.
    pub fn byte_range(self) -> Option<(u64, u32)> {
        match self {
            SourceRef::Line { offset, len, .. } => Some((offset.get(), len)),
            SourceRef::Row { .. } => None,
        }
    }

    /// The position in words: `line 12`, or ``table `events` row 12``.
    pub fn place(self) -> String {
        match self {
            SourceRef::Line { line, .. } => format!("line {line}"),
            SourceRef::Row { table, row, .. } => format!("table `{table}` row {row}"),
        }
    }

    /// A citation in the journal named `journal_name`: `file:12` for a
    /// line, ``file table `events` row 12`` for a row.
    pub fn cite(self, journal_name: &str) -> String {
        match self {
            SourceRef::Line { line, .. } => format!("{journal_name}:{line}"),
            SourceRef::Row { .. } => format!("{journal_name} {}", self.place()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_rows_cite_their_place() {
        let l = SourceRef::Line {
            journal: 2,
            line: 12,
            offset: crate::model::LineOffset::new(340),
            len: 80,
        };
        let r = SourceRef::Row {
            journal: 3,
            table: Table::Events,
            row: 12,
        };
        assert_eq!((l.journal(), r.journal()), (2, 3));
        assert_eq!((l.position(), r.position()), (12, 12));
        assert_eq!((l.byte_range(), r.byte_range()), (Some((340, 80)), None));
        assert_eq!((l.table(), r.table()), (None, Some("events")));
        assert_eq!(l.cite("a.jsonl"), "a.jsonl:12");
        assert_eq!(r.cite("a.sqlite"), "a.sqlite table `events` row 12");
        assert_eq!(l.place(), "line 12");
        assert_ne!(l, r);
    }

    #[test]
    fn stays_small() {
        assert_eq!(std::mem::size_of::<SourceRef>(), 16);
        assert_eq!(std::mem::size_of::<LineOffset>(), 5);
        assert_eq!(std::mem::size_of::<Table>(), 1);
    }

    /// Five bytes hold every offset below 1 TiB exactly, order as the
    /// numbers do, and serialize as them; a larger one is the largest held.
    #[test]
    fn line_offsets_keep_their_value_and_order() {
        let values = [
            0,
            1,
            255,
            256,
            65_535,
            1 << 32,
            (1 << 32) + 7,
            LineOffset::MAX,
        ];
        for &n in &values {
            assert_eq!(LineOffset::new(n).get(), n);
            assert_eq!(
                serde_json::to_string(&LineOffset::new(n)).unwrap(),
                n.to_string()
            );
            assert_eq!(format!("{:?}", LineOffset::new(n)), n.to_string());
        }
        for w in values.windows(2) {
            assert!(LineOffset::new(w[0]) < LineOffset::new(w[1]), "{w:?}");
        }
        assert_eq!(LineOffset::new(u64::MAX).get(), LineOffset::MAX);
        assert_eq!(LineOffset::new(LineOffset::MAX + 1).get(), LineOffset::MAX);
        // A line keeps the offset and length it was given.
        let l = SourceRef::Line {
            journal: JournalId::MAX,
            line: u32::MAX,
            offset: LineOffset::new((1 << 40) - 2),
            len: u32::MAX,
        };
        assert_eq!(l.byte_range(), Some(((1 << 40) - 2, u32::MAX)));
        assert_eq!(l.journal(), JournalId::MAX);
        assert_eq!(l.position(), u32::MAX);
        assert_eq!(
            serde_json::to_value(l).unwrap(),
            serde_json::json!({"kind": "line", "journal": 65535, "line": 4294967295u32,
                "offset": 1099511627774u64, "len": 4294967295u32})
        );
    }

    #[test]
    fn tables_serialize_and_order_by_name() {
        let r = SourceRef::Row {
            journal: 1,
            table: Table::ToolMetrics,
            row: 7,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"kind":"row","journal":1,"table":"tool_metrics","row":7}"#
        );
        let all = [
            Table::Events,
            Table::Sessions,
            Table::ObservabilitySpans,
            Table::ObservabilityTraces,
            Table::StructuredLogEntries,
            Table::ToolMetrics,
            Table::Tools,
        ];
        for a in all {
            for b in all {
                assert_eq!(a.cmp(&b), a.as_str().cmp(b.as_str()));
            }
        }
    }
}

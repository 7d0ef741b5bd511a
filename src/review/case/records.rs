//! What the case file records: entries and their payloads (decisions,
//! notes, bookmarks), as stored and as analysis consumes them.

use crate::analysis::{Decision, Resolution};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A reviewer decision ([`DecisionPayload`]).
    Decision,
    /// An investigator note ([`NotePayload`]).
    Note,
    /// A bookmark ([`BookmarkPayload`]).
    Bookmark,
}

impl EntryKind {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Decision => "decision",
            EntryKind::Note => "note",
            EntryKind::Bookmark => "bookmark",
        }
    }
    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<EntryKind> {
        Some(match s {
            "decision" => EntryKind::Decision,
            "note" => EntryKind::Note,
            "bookmark" => EntryKind::Bookmark,
            _ => return None,
        })
    }
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Payload of a `decision` entry: what the reviewer decided about one
/// execution, and what they were looking at when they did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionPayload {
    /// The execution decided about.
    pub execution_id: String,
    /// `confirmed_completed`, `confirmed_not_executed` or `escalated`.
    pub decision: Decision,
    /// Who decided (`--reviewer`, default the login name).
    pub reviewer: String,
    /// Why (required, non-empty).
    pub note: String,
    /// The group of the execution at decision time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// The group's verdict before the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_before: Option<String>,
    /// The group's intent fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// Anchors of the journal files the decision was made on (identity,
    /// length, digest, last seq, head hash; docs/design.md §6.7): a later
    /// `retrace verify` shows a cut tail or rewritten history against them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub journal_anchors: Vec<Value>,
}

/// Payload of a `note` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotePayload {
    /// Who wrote it.
    pub author: String,
    /// The note.
    pub text: String,
    /// Group it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// Execution it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<String>,
}

/// Payload of a `bookmark` entry: a marked place in the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookmarkPayload {
    /// Who set it.
    pub author: String,
    /// A short label.
    pub label: String,
    /// Group, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// Execution, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<String>,
    /// Journal name of a marked line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<String>,
    /// 1-based line in that journal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// One stored entry, as read back (only entries whose chain verified).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// Position, contiguous from 1.
    pub seq: u64,
    /// When it was recorded (UTC).
    pub at: DateTime<Utc>,
    /// What it records.
    pub kind: EntryKind,
    /// The payload object.
    pub payload: Value,
    /// Hash of the previous entry ([`crate::journal::GENESIS`] for the first).
    pub prev_hash: String,
    /// This entry's hash.
    pub hash: String,
}

impl Entry {
    /// The decision payload, for `decision` entries.
    pub fn decision(&self) -> Option<DecisionPayload> {
        (self.kind == EntryKind::Decision)
            .then(|| serde_json::from_value(self.payload.clone()).ok())
            .flatten()
    }
}

/// A decision entry with its place in the case file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionRecord {
    /// Entry seq.
    pub seq: u64,
    /// When it was recorded.
    pub at: DateTime<Utc>,
    /// Entry hash.
    pub hash: String,
    /// The decision.
    #[serde(flatten)]
    pub payload: DecisionPayload,
}

impl DecisionRecord {
    /// The decision as analysis consumes it; `source` names the case file
    /// and entry (`<case file> entry N`).
    pub fn resolution(&self, case_name: &str) -> Resolution {
        Resolution {
            execution_id: self.payload.execution_id.clone(),
            decision: self.payload.decision,
            reviewer: self.payload.reviewer.clone(),
            at: self.at,
            note: self.payload.note.clone(),
            source: format!("case file {case_name} entry {}", self.seq),
        }
    }
}

/// The stored spelling of a time: RFC 3339 UTC with microseconds.
pub fn format_at(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

//! An investigation taking what its journals gained (the TUI's follow
//! mode, docs/design.md §7.7 "Follow mode"): the records read of the new
//! lines are added to the model the journals were read into, and the
//! analysis follows them ([`analysis::reanalyze`]: the work is in
//! proportion to the new records and the groups they reach), instead of
//! reading every journal again into records from its start. A journal that grew has its report (lines,
//! records, bad lines, audit chain) counted on when its new lines carry no
//! chain fields and it had none, else taken again by the chain check alone
//! (`retrace verify`'s read, docs/design.md §6.8), which builds no record.
//! What comes out is what opening the journals afresh
//! gives; where that could not be promised cheaply,
//! [`Investigation::growable`] says no and the journals are opened again.

use super::{Format, Investigation};
use crate::analysis;
use crate::journal::chain::ChainStatus;
use crate::journal::{JournalSource, LoadOptions, SourceData};
use crate::model::{Record, SourceRef};

impl Investigation {
    /// Whether [`Investigation::grown`] gives what opening the journals
    /// again would: every journal is a plain file of one record per line
    /// (native, mcp-audit, Sallyport JSONL: no reader pairs lines), the
    /// investigation is not narrowed to a time
    /// window, no contract's secret field was seen (its values are scrubbed
    /// from notes once), and the model joins no records of several layers
    /// (docs/design.md §5.12).
    pub fn growable(&self) -> bool {
        !self.sample
            && self.window.is_none()
            && self.secrets.is_empty()
            && !self.journals.is_empty()
            && self.journals.iter().all(|j| {
                matches!(
                    j.format,
                    Format::Native | Format::McpAudit | Format::Sallyport
                ) && matches!(j.source().data, SourceData::File(_))
                    && j.source().compression().is_none()
            })
    }

    /// The investigation with `records` added: the records a reader gave of
    /// lines after those each journal held when it was read (a record of a
    /// line it held already is left out), and `lines`, the complete lines
    /// each journal holds now, in load order, as the watch that read the
    /// records counted them; `before`, where each journal's report ends
    /// when that is known (the watch's place when the report was made);
    /// `options` are those the journals were loaded with.
    ///
    /// `Err` gives the investigation back, unchanged, when the records
    /// cannot be added so that the result is what a fresh open gives: it is
    /// not [`Investigation::growable`], a new record comes from a journal
    /// other than the last one (loading reads journal after journal, and
    /// ties in time keep that order), a journal's report taken again counts
    /// other lines than `lines` (it was written to meanwhile, or ends in a
    /// line not finished), or the model joined layers' records.
    #[allow(clippy::result_large_err)]
    pub fn grown(
        mut self,
        records: Vec<Record>,
        now: &[ReadTo],
        before: &[Option<ReadTo>],
        options: &LoadOptions,
    ) -> Result<Investigation, Investigation> {
        if !self.growable() || now.len() != self.journals.len() {
            return Err(self);
        }
        let held: Vec<u64> = self.journals.iter().map(|j| j.lines).collect();
        let records: Vec<Record> = records
            .into_iter()
            .filter(|r| {
                let at = source_of(r);
                held.get(at.journal() as usize)
                    .is_some_and(|&n| u64::from(at.position()) > n)
            })
            .collect();
        // Loading reads journal after journal: a record of one journal
        // added after a later journal's would tie-break differently.
        let last = self.journals.len() - 1;
        let mut added = vec![0u64; self.journals.len()];
        for r in &records {
            added[source_of(r).journal() as usize] += 1;
        }
        if added[..last].iter().any(|&n| n > 0) {
            return Err(self);
        }
        // The reports of the journals that grew, read again as `retrace
        // verify` reads them: the same report a load gives.
        let mut reports = Vec::new();
        for (j, (old, &to)) in self.journals.iter().zip(now).enumerate() {
            let n = to.lines;
            if n == old.lines && added[j] == 0 {
                continue;
            }
            let SourceData::File(path) = &old.source().data else {
                return Err(self);
            };
            if let Some(Some(from)) = before.get(j)
                && from.lines == old.lines
                && unchained_lines(path, *from, to)
                && old.format == Format::Native
                && matches!(old.chain, ChainStatus::NoChain { .. })
                && old.notes.is_empty()
            {
                let mut r = old.clone();
                r.lines = n;
                r.records += added[j];
                r.restamp();
                reports.push((j, r));
                continue;
            }
            let mut source = JournalSource::file(path);
            source.name.clone_from(&old.name);
            match crate::journal::verify(source, options) {
                Ok(mut r) if r.lines == n && r.format == old.format => {
                    r.id = old.id;
                    reports.push((j, r));
                }
                _ => return Err(self),
            }
        }
        // The analysis follows the new records only when they add no tool
        // hint and name no session the model held: those change what the
        // analysis made of calls it held (docs/design.md §7.7).
        let mut new_sessions = Vec::new();
        let mut quiet = true;
        for r in &records {
            match r {
                Record::Session(s) if self.model.session(&s.session_id).is_none() => {
                    new_sessions.push(s.session_id.clone());
                }
                Record::Session(_) | Record::ToolHint(_) => quiet = false,
                Record::Event { .. } => {}
            }
        }
        let mut b = match std::mem::take(&mut self.model).into_builder() {
            Ok(b) => b,
            Err(model) => {
                self.model = *model;
                return Err(self);
            }
        };
        for r in records {
            b.push(r);
        }
        for (j, r) in reports {
            self.journals[j] = r;
        }
        let (model, growth) = b.finish_grown();
        self.model = model;
        let grown = growth.as_ref().filter(|_| quiet).map(|g| analysis::Grown {
            growth: g,
            new_sessions: &new_sessions,
        });
        let prev = std::mem::take(&mut self.analysis);
        self.analysis = analysis::reanalyze(prev, &self.model, &self.journals, &self.config, grown);
        // Notes are scrubbed of the secrets found, found again over the
        // grown model.
        self.secrets = super::secrets::Secrets::default();
        Ok(self.with_secrets())
    }
}

/// How far a journal file has been read: bytes, and the complete lines
/// they hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTo {
    /// Bytes from the file's start.
    pub bytes: u64,
    /// Complete lines in them.
    pub lines: u64,
}

/// Whether the bytes of `path` between `from` and `to` are exactly the
/// lines between them and none carries a native chain field (`prev_hash`,
/// `hash`): the journal's chain status cannot have changed.
fn unchained_lines(path: &std::path::Path, from: ReadTo, to: ReadTo) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Some(len) = to.bytes.checked_sub(from.bytes) else {
        return false;
    };
    let mut buf = Vec::new();
    let read = std::fs::File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(from.bytes))?;
        f.take(len).read_to_end(&mut buf)
    });
    let has = |field: &[u8]| buf.windows(field.len()).any(|w| w == field);
    read.is_ok_and(|n| n as u64 == len)
        && to.lines.checked_sub(from.lines)
            == Some(buf.iter().filter(|&&b| b == b'\n').count() as u64)
        && !has(b"prev_hash")
        && !has(b"\"hash\"")
}

/// Where a record was read.
fn source_of(r: &Record) -> SourceRef {
    match r {
        Record::Session(s) => s.source,
        Record::Event { event, .. } => event.source,
        Record::ToolHint(h) => h.source,
    }
}

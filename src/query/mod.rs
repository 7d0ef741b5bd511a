//! The one door front ends use (docs/design.md §9). The CLI, the TUI and the
//! exporters state what to investigate as a [`Setup`], open an
//! [`Investigation`], and read everything through its methods and the views
//! it builds; none of them reaches into the journal readers or the analysis.
//!
//! The vocabulary of answers (verdicts, severities, finding kinds, journal
//! formats, chain status, reviewer decisions) is re-exported here: those are
//! plain values, and front ends name them from this module.
//!
//! Every string that comes from a journal is returned as the journal wrote
//! it; front ends pass it through [`crate::sanitize::escape`] before display.

pub mod anchor;
mod decide;
mod group;
mod grow;
mod journals;
mod queue;
mod secrets;
mod setup;
mod verify;
mod views;
mod watch;
pub mod words;

pub use crate::analysis::draft::{LintFinding, LintKind, ToolDraft};
pub use crate::analysis::{
    ActionClass, ActionItem, ActionKind, ContractBasis, Decision, FindingKind, Resolution, Settles,
    Severity, ToolContract, Verdict,
};
pub use crate::journal::TimeWindow;
pub use crate::journal::chain::{ChainMark, ChainStatus};
pub use crate::journal::{
    Capabilities, Format, JournalError, LineError, LoadedJournal, Progress, UnknownFormat,
};
pub use crate::model::{EventIdx, ExecIdx, GroupIdx, Session, SessionIdx, SourceRef};
pub use decide::{
    Decided, DecisionError, DecisionRequest, Reanalysis, Recorded, Retired, decision_blocker,
};
pub use group::{GroupFilter, GroupRef};
pub use grow::ReadTo;
pub use queue::{Asks, LaterAttempt, NotQueued, QueueCall, QueueItem};
pub use setup::{Prepared, Setup, SetupError};
pub use verify::{NO_ANCHOR_CAVEAT, Verification, VerifyReport, verify, verify_anchored};
pub use views::{
    AnswerView, AttachedCall, CallRate, Effects, EventView, EvidenceTarget, EvidenceView,
    ExecutionSummary, FindingView, GroupDetail, GroupSummary, NearDuplicateView, StageMark,
    StageStatus, Stages,
};
pub use watch::{
    Change, ChangeEvent, Follow, FollowPoll, Notice, Refreshes, Watch, WatchOptions, WatchStats,
    verdict_changes,
};

use crate::analysis::{self, Analysis, Config};
use crate::journal::{self, JournalSource, LoadOptions};
use crate::model::{JournalId, Model};
pub use crate::review::{CaseContext, CaseOrigin, DecisionRecord, Flow};
use std::collections::BTreeMap;

/// Errors a query can give.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// A file the setup names could not be used.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// A journal could not be loaded.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// No group has that id (or the id is empty); `sample`: the journals
    /// are the bundled sample, no journal having been given.
    #[error(
        "no group {id:?}{}; `retrace groups --all` lists them",
        if *sample { " in the bundled sample (no journal was given)" } else { "" }
    )]
    NoSuchGroup {
        /// What was asked.
        id: String,
        /// Whether the journals are the bundled sample.
        sample: bool,
    },
    /// Several groups start with that prefix.
    #[error("group id {prefix:?} is ambiguous: {}", matches.join(", "))]
    AmbiguousGroup {
        /// What was asked.
        prefix: String,
        /// Matching ids.
        matches: Vec<String>,
    },
    /// No execution has that id.
    #[error("no execution {0:?}")]
    NoSuchExecution(String),
    /// An anchor file could not be read or written (docs/design.md §6.7).
    #[error(transparent)]
    Anchor(#[from] anchor::AnchorError),
}

/// Loaded journals, the model built from them, and its analysis, with the
/// case file and the reviewer settings they were opened with.
#[derive(Debug, Clone)]
pub struct Investigation {
    journals: Vec<LoadedJournal>,
    model: Model,
    analysis: Analysis,
    config: Config,
    case: CaseContext,
    reviewer: Option<String>,
    read_only: bool,
    sample: bool,
    skipped: Vec<String>,
    window: Option<Narrowed>,
    secrets: secrets::Secrets,
}

/// What `--since`/`--until` left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Narrowed {
    /// The window.
    pub window: TimeWindow,
    /// Executions that began in it.
    pub kept: usize,
    /// Executions that began before it, read as the lookback of a
    /// `--since` (docs/design.md §7.2): earlier calls of intents called in
    /// it, within the longest attach window before it.
    pub context: usize,
    /// Executions the journals hold.
    pub of: usize,
}

impl Narrowed {
    /// When the window holds no execution at all, says so: `No execution
    /// began at or after …: nothing to show (the journals hold 15).`, so
    /// that no view reads an empty window as "all clean".
    pub fn empty_window(&self) -> Option<String> {
        (self.kept == 0).then(|| {
            format!(
                "No execution began {}: nothing to show (the journals hold {}).",
                self.window.describe(),
                self.of
            )
        })
    }

    /// In words: `only the 3 of 12 executions that began from … until …`,
    /// and `, with 1 earlier execution of their intents (begun before the
    /// window, within the longest attach window in force)` when the
    /// lookback read any.
    pub fn describe(&self) -> String {
        let context = match self.context {
            0 => String::new(),
            1 => ", with 1 earlier execution of their intents (begun before the window, within the longest attach window in force)".into(),
            n => format!(", with {n} earlier executions of their intents (begun before the window, within the longest attach window in force)"),
        };
        format!(
            "only the {} of {} executions that began {} (--since/--until){context}",
            self.kept,
            self.of,
            self.window.describe()
        )
    }
}

/// What `window` left out of the journals as they were read (readers
/// apply it, [`crate::journal::ReadCtx`]); `None` for an open window.
fn narrowed(model: &Model, journals: &[LoadedJournal], window: TimeWindow) -> Option<Narrowed> {
    if window.is_unbounded() {
        return None;
    }
    let held = model.execution_count();
    let context = window.since.map_or(0, |since| {
        model
            .executions()
            .filter(|&x| began_before(x, since))
            .count()
    });
    let left_out: u64 = journals.iter().map(|j| j.left_out_executions).sum();
    Some(Narrowed {
        window,
        kept: held - context,
        context,
        of: held + usize::try_from(left_out).unwrap_or(usize::MAX),
    })
}

/// Reads the prepared journals, skipping with a note a file of a folder
/// none of whose lines can be read (named on its own, such a file stays an
/// error). `again`: the sources are kept for another read.
fn read_journals(
    p: &mut Prepared,
    progress: &mut dyn FnMut(LoadStage),
    again: bool,
) -> Result<(Vec<LoadedJournal>, Model), QueryError> {
    let loaded = loop {
        // The sources are kept for another try only when a file of a
        // folder may have to be left out (a piped journal's bytes are
        // not copied for nothing).
        let may_retry = again || (p.sources.len() > 1 && p.in_folder.iter().any(|&f| f));
        let sources = if may_retry {
            p.sources.clone()
        } else {
            std::mem::take(&mut p.sources)
        };
        match journal::load_with(sources, &p.options, &mut |r| {
            progress(LoadStage::Reading(r))
        }) {
            Ok(loaded) => break loaded,
            Err(e) => {
                // A file of a folder none of whose lines can be read
                // (only bad lines, a line cut short by a rotation) is
                // skipped with a note, and the others read again
                // without it; named on its own, it stays an error.
                let unusable = match &e {
                    JournalError::NoUsableLine { journal, .. } => Some(journal.as_str()),
                    JournalError::NothingReadable { first, .. } => Some(first.journal.as_str()),
                    _ => None,
                };
                let at = unusable.and_then(|name| {
                    p.sources
                        .iter()
                        .zip(&p.in_folder)
                        .position(|(s, &f)| f && s.name == name)
                });
                match at {
                    Some(i) if p.sources.len() > 1 => {
                        let s = p.sources.remove(i);
                        p.in_folder.remove(i);
                        p.skipped.push(format!(
                            "{}: skipped: not one of its lines can be read: {}",
                            s.name,
                            crate::sanitize::escape(&e.to_string())
                        ));
                    }
                    _ => return Err(e.into()),
                }
            }
        }
    };
    Ok(loaded)
}

fn analyze_as(
    model: &Model,
    journals: &Vec<LoadedJournal>,
    config: &Config,
    follow: bool,
) -> Analysis {
    if follow {
        analysis::analyze_followed(model, journals, config)
    } else {
        analysis::analyze(model, journals, config)
    }
}

/// Whether execution `x` began before `since`: read as the lookback of a
/// `--since` window (docs/design.md §7.2). When an execution began is
/// [`crate::model::ExecutionRef::started_at`].
fn began_before(x: crate::model::ExecutionRef<'_>, since: chrono::DateTime<chrono::Utc>) -> bool {
    x.started_at().is_some_and(|t| t < since)
}

/// The executions that began before `since` in groups none of whose
/// executions began at or after it: read only as the lookback of a window
/// (docs/design.md §7.2), they are left out of the investigation.
fn context_only(
    model: &Model,
    analysis: &Analysis,
    since: chrono::DateTime<chrono::Utc>,
) -> std::collections::HashSet<String> {
    let before = |x: ExecIdx| began_before(model.execution(x), since);
    analysis
        .groups
        .iter()
        .filter(|g| g.executions.iter().all(|&x| before(x)))
        .flat_map(|g| {
            g.executions
                .iter()
                .map(|&x| model.execution(x).id().to_string())
        })
        .collect()
}

impl analysis::JournalCaps for Vec<LoadedJournal> {
    fn caps(&self, id: JournalId) -> Capabilities {
        self.get(id as usize)
            .map(|j| j.capabilities)
            .unwrap_or(Format::Native.capabilities())
    }
    fn name(&self, id: JournalId) -> &str {
        self.get(id as usize)
            .map_or("the journal", |j| j.format.noun())
    }
    fn delivery_layer(&self, id: JournalId) -> Option<crate::model::Layer> {
        self.get(id as usize)
            .and_then(|j| j.format.facts().delivery_layer)
    }
}

/// How far opening an investigation has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadStage {
    /// Journals are being read: bytes so far.
    Reading(Progress),
    /// Reading is done; the analysis runs.
    Analysing,
}

impl Investigation {
    /// Prepares the setup and loads and analyses its journals.
    ///
    /// # Errors
    /// [`QueryError::Setup`] for a file the setup names that cannot be used,
    /// [`QueryError::Journal`] when a journal cannot be read at all.
    pub fn open(setup: &Setup, progress: &mut dyn FnMut(LoadStage)) -> Result<Self, QueryError> {
        Self::load(setup.prepare()?, progress)
    }

    /// [`Investigation::open`] for an investigation that is to follow its
    /// journals as they grow (docs/design.md §7.7 "Follow mode"): its
    /// analysis keeps what [`Investigation::grown`] needs to follow the new
    /// records instead of analysing everything again.
    ///
    /// # Errors
    /// As [`Investigation::open`].
    pub fn open_to_follow(setup: &Setup) -> Result<Self, QueryError> {
        Self::load_as(setup.prepare()?, &mut |_| {}, true)
    }

    /// Loads and analyses prepared inputs (the TUI prepares on the UI
    /// thread, so that bad options are reported before the screen is taken
    /// over, and loads here on its loader thread). `progress` hears how
    /// far reading has come, then that analysis runs.
    ///
    /// # Errors
    /// [`QueryError::Journal`] when a journal cannot be read at all.
    pub fn load(p: Prepared, progress: &mut dyn FnMut(LoadStage)) -> Result<Self, QueryError> {
        Self::load_as(p, progress, false)
    }

    fn load_as(
        mut p: Prepared,
        progress: &mut dyn FnMut(LoadStage),
        follow: bool,
    ) -> Result<Self, QueryError> {
        // With a start to the window, the calls a repeat in it may pair
        // with are read too (docs/design.md §7.2): first all of the
        // lookback, then, when some of its intents have no call in the
        // window, again without them.
        let since = p.window.since.filter(|_| !follow);
        if since.is_some() {
            let reach = p.config.contracts.longest_attach_window();
            p.options.lookback = Some(crate::journal::Lookback {
                reach: chrono::TimeDelta::from_std(reach).unwrap_or(chrono::TimeDelta::MAX),
                leave_out: Default::default(),
            });
        }
        if since.is_some() {
            // Read twice: a pipe's bytes (and a compressed file's) are taken
            // in once, so that the second read has them too.
            for s in &mut p.sources {
                s.materialize()?;
            }
        }
        let (mut journals, mut model) = read_journals(&mut p, progress, since.is_some())?;
        progress(LoadStage::Analysing);
        let mut analysis = analyze_as(&model, &journals, &p.config, follow);
        if let Some(since) = since {
            let leave_out = context_only(&model, &analysis, since);
            if !leave_out.is_empty()
                && let Some(l) = p.options.lookback.as_mut()
            {
                l.leave_out = std::sync::Arc::new(leave_out);
                (journals, model) = read_journals(&mut p, progress, false)?;
                progress(LoadStage::Analysing);
                analysis = analyze_as(&model, &journals, &p.config, follow);
            }
        }
        let window = narrowed(&model, &journals, p.window);
        Ok(Investigation {
            journals,
            model,
            analysis,
            config: p.config,
            case: p.case,
            reviewer: p.reviewer,
            read_only: p.read_only,
            sample: p.sample,
            skipped: p.skipped,
            window,
            secrets: secrets::Secrets::default(),
        }
        .with_secrets())
    }

    /// Loads and analyses journals a program made itself (tests, benches,
    /// tools built on this library), with no case file.
    ///
    /// # Errors
    /// [`QueryError::Journal`] when a journal cannot be read at all.
    pub fn from_sources(
        sources: Vec<JournalSource>,
        options: &LoadOptions,
        config: Config,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Self, QueryError> {
        let (journals, model) = journal::load_with(sources, options, progress)?;
        let analysis = analysis::analyze(&model, &journals, &config);
        Ok(Investigation {
            journals,
            model,
            analysis,
            config,
            case: CaseContext::none(),
            reviewer: None,
            read_only: false,
            sample: false,
            skipped: Vec::new(),
            window: None,
            secrets: secrets::Secrets::default(),
        }
        .with_secrets())
    }

    /// The journals with their load reports (format, lines, bad lines,
    /// notes, chain status), in load order.
    pub fn journals(&self) -> &[LoadedJournal] {
        &self.journals
    }

    /// When `--since`/`--until` narrowed the investigation: the window and
    /// how many executions it kept.
    pub fn narrowed(&self) -> Option<Narrowed> {
        self.window
    }

    /// Whether execution `x` began before a `--since` window: it was read
    /// as the lookback, an earlier call a repeat in the window may pair
    /// with (docs/design.md §7.2).
    pub fn before_window(&self, x: ExecIdx) -> bool {
        self.window
            .and_then(|n| n.window.since)
            .is_some_and(|since| began_before(self.model.execution(x), since))
    }

    /// Notes about the analysis as a whole (no contracts, no key, a
    /// decision that did not apply, ...).
    pub fn notes(&self) -> &[String] {
        &self.analysis.notes
    }

    /// Files and folders left out of the folders given as journals, one
    /// line each naming the file and why ([`Prepared::skipped`]).
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// The case file and the decisions read from it.
    pub fn case(&self) -> &CaseContext {
        &self.case
    }

    /// The reviewer name decisions are recorded with, if known.
    pub fn reviewer(&self) -> Option<&str> {
        self.reviewer.as_deref()
    }

    /// Whether nothing may be written (`--read-only`).
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// Whether this is the bundled sample incident.
    pub fn is_sample(&self) -> bool {
        self.sample
    }

    /// Whether any reviewer decision was applied or read.
    pub fn has_resolutions(&self) -> bool {
        !self.config.resolutions.is_empty()
    }

    /// Number of groups (all of them).
    pub fn group_count(&self) -> usize {
        self.analysis.groups.len()
    }

    /// Every group, worst first.
    pub fn all_groups(&self) -> impl Iterator<Item = GroupRef<'_>> {
        self.analysis
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| GroupRef {
                inv: self,
                index: GroupIdx::new(i),
                g,
            })
    }

    /// Groups passing the filter, worst first.
    pub fn groups(&self, f: &GroupFilter) -> Vec<GroupRef<'_>> {
        self.all_groups().filter(|g| f.passes(g.g)).collect()
    }

    /// Positions of the groups passing the filter, worst first (the order
    /// of [`Investigation::groups`]).
    pub fn group_indices(&self, f: &GroupFilter) -> Vec<GroupIdx> {
        self.groups(f).into_iter().map(|g| g.index).collect()
    }

    /// The group at a position.
    pub fn group_at(&self, index: GroupIdx) -> Option<GroupRef<'_>> {
        self.analysis.groups.get(index.get()).map(|g| GroupRef {
            inv: self,
            index,
            g,
        })
    }

    /// A group by id or unique id prefix.
    ///
    /// # Errors
    /// [`QueryError::NoSuchGroup`] or [`QueryError::AmbiguousGroup`].
    pub fn group(&self, id: &str) -> Result<GroupRef<'_>, QueryError> {
        if let Some(g) = self.all_groups().find(|g| g.id() == id) {
            return Ok(g);
        }
        let none = || QueryError::NoSuchGroup {
            id: id.to_string(),
            sample: self.is_sample(),
        };
        // An empty prefix would name every group.
        if id.is_empty() {
            return Err(none());
        }
        let m: Vec<GroupRef<'_>> = self
            .all_groups()
            .filter(|g| g.id().starts_with(id))
            .collect();
        match m.as_slice() {
            [] => Err(none()),
            [g] => Ok(*g),
            many => Err(QueryError::AmbiguousGroup {
                prefix: id.to_string(),
                matches: many.iter().map(|g| g.id().to_string()).collect(),
            }),
        }
    }

    /// The group an execution belongs to.
    pub fn group_of(&self, x: ExecIdx) -> Option<GroupRef<'_>> {
        self.group_at(self.analysis.group_of(x)?)
    }

    /// Finds an execution by id.
    ///
    /// # Errors
    /// [`QueryError::NoSuchExecution`].
    pub fn execution(&self, id: &str) -> Result<ExecIdx, QueryError> {
        self.model
            .execution_index(id)
            .map(ExecIdx::new)
            .ok_or_else(|| QueryError::NoSuchExecution(id.to_string()))
    }

    /// How many events the execution at a position has (what
    /// [`Investigation::events`] gives; 0 for no such position).
    pub fn event_count(&self, x: ExecIdx) -> usize {
        self.model.execution_at(x.get()).map_or(0, |e| e.len())
    }

    /// When and where each event of the execution at a position was
    /// recorded, in the order of [`Investigation::events`]: what ordering
    /// a timeline and checking its lines' chain need, without the views
    /// (nothing for no such position).
    pub fn event_stamps(
        &self,
        x: ExecIdx,
    ) -> impl Iterator<Item = (chrono::DateTime<chrono::Utc>, SourceRef)> + '_ {
        self.model
            .execution_at(x.get())
            .into_iter()
            .flat_map(|e| e.events().map(|e| (e.at(), e.source())))
    }

    /// The execution id at a position.
    pub fn execution_id(&self, x: ExecIdx) -> &str {
        self.model.execution_at(x.get()).map_or("", |e| e.id())
    }

    /// A contract for every tool the journals show, each guess with its
    /// evidence (docs/design.md §4.6).
    pub fn draft_contracts(&self) -> Vec<ToolDraft> {
        analysis::draft::draft(&self.model, &self.analysis, &self.config)
    }

    /// [`Investigation::draft_contracts`] as a contracts file that
    /// `--contracts` accepts as it is, commented.
    pub fn draft_contracts_toml(&self) -> String {
        let from: Vec<String> = self.journals.iter().map(|j| j.name.clone()).collect();
        analysis::draft::to_toml(&self.draft_contracts(), &from)
    }

    /// The configured contracts checked against the calls
    /// (docs/design.md §4.6): side-effecting tools without a contract,
    /// contracts of tools never seen, fingerprint fields no call carries,
    /// contradicted defaults, classes and windows.
    pub fn lint_contracts(&self) -> Vec<LintFinding> {
        analysis::draft::lint(&self.model, &self.analysis, &self.config.contracts)
    }

    /// The reviewer decisions applied to an execution: the one about its
    /// outcome, then the one about its delivery.
    pub fn resolutions_of(&self, x: ExecIdx) -> impl Iterator<Item = &Resolution> {
        self.analysis
            .lifecycles
            .get(x.get())
            .into_iter()
            .flat_map(|l| {
                l.resolution
                    .as_deref()
                    .into_iter()
                    .chain(l.delivery_resolution.as_deref())
            })
    }

    /// The agent runs, in order of appearance.
    pub fn sessions(&self) -> &[Session] {
        &self.model.sessions
    }

    /// A session by its id.
    pub fn session_by_id(&self, id: &str) -> Option<&Session> {
        self.model.session(id)
    }

    /// For every session (aligned with [`Investigation::sessions`]), the
    /// executions its calls created or attached to, once each, in the order
    /// of the calls (time order). Calls name their session by
    /// `call.session_id`.
    pub fn session_executions(&self) -> Vec<Vec<ExecIdx>> {
        let mut out: Vec<Vec<ExecIdx>> = vec![Vec::new(); self.model.sessions.len()];
        let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, s) in self.model.sessions.iter().enumerate() {
            index.entry(s.session_id.as_str()).or_insert(i);
        }
        let mut seen: std::collections::HashSet<(usize, ExecIdx)> =
            std::collections::HashSet::new();
        for c in &self.model.calls {
            let call = self.model.call_ref(c);
            let Some(&si) = call.session_id.and_then(|s| index.get(s)) else {
                continue;
            };
            if seen.insert((si, c.execution)) {
                out[si].push(c.execution);
            }
        }
        out
    }

    /// Calls per time bucket over the whole investigation, for a call-rate
    /// sparkline: `buckets` equal slices from the first call to the last.
    /// Empty when there is no call.
    pub fn call_rate(&self, buckets: usize) -> CallRate {
        let times = || self.model.calls.iter().map(|c| c.at);
        let (Some(start), Some(end)) = (times().min(), times().max()) else {
            return CallRate::default();
        };
        let n = buckets.max(1);
        let span = (end - start).num_milliseconds().max(1) as f64;
        let mut counts = vec![0u64; n];
        for t in times() {
            let f = (t - start).num_milliseconds() as f64 / span;
            let b = ((f * n as f64) as usize).min(n - 1);
            counts[b] += 1;
        }
        CallRate {
            start: Some(start),
            end: Some(end),
            counts,
        }
    }

    /// Number of groups per verdict (all groups), most severe first.
    pub fn verdict_counts(&self) -> Vec<(Verdict, usize)> {
        let mut m: BTreeMap<Verdict, usize> = BTreeMap::new();
        for g in &self.analysis.groups {
            *m.entry(g.verdict).or_default() += 1;
        }
        m.into_iter().collect()
    }

    /// Whether a record lies in the verified part of its journal's chain.
    pub fn chain_mark(&self, at: SourceRef) -> ChainMark {
        self.journals
            .get(at.journal() as usize)
            .map_or(ChainMark::NoChain, |j| j.chain_mark(at))
    }

    /// The chain status of the journal a record comes from.
    pub fn chain_of(&self, at: SourceRef) -> Option<&ChainStatus> {
        self.journals.get(at.journal() as usize).map(|j| &j.chain)
    }

    /// The raw text of a journal record, as written.
    ///
    /// # Errors
    /// When the journal can no longer be read (or changed since it was).
    pub fn raw_line(&self, at: SourceRef) -> Result<String, JournalError> {
        match self.journals.get(at.journal() as usize) {
            Some(j) => j.read_raw(at).map(|l| self.secrets.line(l)),
            None => Ok(String::new()),
        }
    }

    /// The display name of the journal a record comes from.
    pub fn journal_name_of(&self, at: SourceRef) -> String {
        self.journal_name(at.journal())
    }

    fn journal_name(&self, id: JournalId) -> String {
        self.journals
            .get(id as usize)
            .map_or_else(|| format!("journal#{id}"), |j| j.name.clone())
    }

    /// Capabilities of the journal an execution comes from.
    fn caps_of(&self, xi: ExecIdx) -> Capabilities {
        analysis::JournalCaps::caps_of(&self.journals, self.model.execution(xi))
    }

    /// Collects the values the contracts' secret fields hold, so that no
    /// output shows them (docs/design.md §4.1).
    fn with_secrets(mut self) -> Self {
        let mut found = secrets::Secrets::default();
        for xi in 0..self.model.execution_count() {
            let xi = ExecIdx::new(xi);
            let fields = self.secret_fields(xi);
            if fields.is_empty() {
                continue;
            }
            let x = self.model.execution(xi);
            for e in x.events() {
                if let crate::model::KindRef::Accepted(a) = e.kind()
                    && let Some(args) = a.action.get("arguments")
                {
                    found.collect(&args, fields);
                }
            }
        }
        found.finish();
        // Journal notes and reader notes on events (display only, never
        // read by analysis) quote journal text too.
        if !found.is_empty() {
            self.model.amend_facts(|f| {
                for (_, v) in &mut f.notes {
                    found.value(v);
                }
            });
            for j in &mut self.journals {
                for n in &mut j.notes {
                    *n = found.text(n);
                }
            }
        }
        self.secrets = found;
        self
    }

    /// A journal value with every secret value replaced (docs/design.md
    /// §4.1).
    pub(crate) fn scrub(&self, v: &mut serde_json::Value) {
        self.secrets.value(v);
    }

    /// The secret fields of the contract of an execution's group.
    fn secret_fields(&self, x: ExecIdx) -> &[String] {
        self.group_of(x)
            .map_or(&[], |g| g.g.contract.secret_fields.as_slice())
    }
}

#[cfg(test)]
mod tests;

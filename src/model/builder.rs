//! Folds a stream of records from any number of journals into executions,
//! calls and sessions.

use super::ids::IdIndex;
use super::packed::{self, Interner, Packed, PackedBuf, Store};
use super::{
    Call, CallRole, CallView, Event, EventKind, Execution, ExecutionRef, KindRef, Session,
    ToolHint, ToolHints,
};
// Keys come from journals; foldhash's per-process random seed keeps a
// crafted journal from picking colliding keys (see `FastMap`).
use super::FastMap as HashMap;
use rayon::prelude::*;

/// One record as a journal reader produces it.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// An agent run (boxed: sessions are few, and a record is moved
    /// several times on its way from a parsing thread into the model, so
    /// every event's record stays the size of an event's).
    Session(Box<Session>),
    /// A lifecycle event of the named execution.
    Event {
        /// Execution id the event belongs to.
        execution_id: String,
        /// The event.
        event: Event,
    },
    /// What a server declared about one of its tools (a `tools/list`
    /// answer's annotations): an untrusted hint (docs/design.md §4.5).
    ToolHint(ToolHint),
}

/// Everything the journals say, folded by execution. Plain data.
///
/// Executions are held encoded (`super::packed`): a journal of ten
/// million events is held whole, and an execution of five events takes
/// about a hundred and fifty bytes this way, against some eight hundred as
/// [`Event`] values (docs/design.md §9.8). They are read through
/// [`ExecutionRef`] and [`super::EventRef`].
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Executions in order of when they began (`accepted`, else first
    /// event); read through [`Model::execution`] and [`Model::executions`].
    executions: Vec<Packed>,
    /// What the executions refer to by index.
    pub(super) store: Store,
    /// Calls (created and attached) in time order.
    pub calls: Vec<Call>,
    /// Agent runs in order of appearance.
    pub sessions: Vec<Session>,
    /// What servers declared about their tools, in time order.
    pub tool_hints: Vec<ToolHint>,
    session_index: HashMap<String, usize>,
    execution_index: IdIndex,
}

impl Model {
    /// The execution at a position of [`Model::executions`].
    ///
    /// # Panics
    /// When `x` is not a position of this model (indexes come from the
    /// analysis of this very model).
    pub fn execution(&self, x: super::ExecIdx) -> ExecutionRef<'_> {
        ExecutionRef::packed(self.executions[x.get()].bytes(), &self.store)
    }

    /// The execution at position `i` of [`Model::executions`], if there is one.
    pub fn execution_at(&self, i: usize) -> Option<ExecutionRef<'_>> {
        self.executions
            .get(i)
            .map(|p| ExecutionRef::packed(p.bytes(), &self.store))
    }

    /// Every execution, in order of when they began.
    pub fn executions(
        &self,
    ) -> impl ExactSizeIterator<Item = ExecutionRef<'_>> + DoubleEndedIterator + Clone {
        self.executions
            .iter()
            .map(|p| ExecutionRef::packed(p.bytes(), &self.store))
    }

    /// Every execution, in order, on every core.
    pub fn par_executions(&self) -> impl IndexedParallelIterator<Item = ExecutionRef<'_>> {
        self.executions
            .par_iter()
            .map(|p| ExecutionRef::packed(p.bytes(), &self.store))
    }

    /// Owned copies of every execution, in order: for tests and tools
    /// that take executions apart (a journal of millions of events takes
    /// far more room this way than the model holds it in).
    pub fn to_executions(&self) -> Vec<Execution> {
        self.executions().map(ExecutionRef::to_execution).collect()
    }

    /// Amends, in place, the reader facts of every event that has any
    /// (display-only notes a front end must not show as written, such as
    /// secret values; docs/design.md §4.1).
    pub fn amend_facts(&mut self, mut amend: impl FnMut(&mut super::ReaderFacts)) {
        for a in &mut self.store.aux {
            if !a.facts.is_empty() {
                amend(&mut a.facts);
            }
        }
    }

    /// How many executions the model holds.
    pub fn execution_count(&self) -> usize {
        self.executions.len()
    }

    /// Looks a session up by its id.
    pub fn session(&self, id: &str) -> Option<&Session> {
        self.session_index.get(id).map(|&i| &self.sessions[i])
    }
    /// Looks an execution up by its id; returns its index.
    pub fn execution_index(&self, id: &str) -> Option<usize> {
        self.execution_index.get(id, &self.executions)
    }
    /// The protocol correlation of a call of this model: its `accepted` or
    /// `attached` event's (an empty one for a call that points at another
    /// kind of event, which [`ModelBuilder::finish`] never makes).
    pub fn call_ref(&self, c: &Call) -> CallView<'_> {
        self.execution_at(c.execution.get())
            .and_then(|x| x.get(c.event.get()))
            .and_then(|e| e.kind().call())
            .unwrap_or_default()
    }
    /// Number of lifecycle events over all executions.
    pub fn event_count(&self) -> usize {
        self.executions
            .iter()
            .map(|x| super::packed::count(x.bytes()) as usize)
            .sum()
    }

    /// Bytes the executions are encoded in (for accounting memory; the
    /// store of what they repeat comes on top).
    pub fn encoded_bytes(&self) -> usize {
        self.executions.iter().map(|x| x.bytes().len()).sum()
    }

    /// What the servers declared about `tool`, every answer that listed it
    /// (empty when none did).
    pub fn hints(&self, tool: &str) -> ToolHints<'_> {
        ToolHints {
            all: self.tool_hints.iter().filter(|h| h.tool == tool).collect(),
        }
    }
}

impl Model {
    /// A builder holding everything this model holds, so that records read
    /// after it (a journal that grew) can be added and the model finished
    /// again; finishing gives the model a builder fed every record in the
    /// order read would give, provided the new records come after the old
    /// ones in that order (the same journal, read on). `Err` gives the model
    /// back when it holds executions joined from several layers' records
    /// (docs/design.md §5.12): those cannot be taken apart again.
    pub fn into_builder(self) -> Result<ModelBuilder, Box<Model>> {
        if self.execution_index.joined() {
            return Err(Box::new(self));
        }
        let events_pushed = self.event_count();
        let held = Held {
            executions: self.executions.len(),
            calls: self.calls,
            touched: HashMap::default(),
            unsure: false,
        };
        let bytes_pushed = self.executions.iter().map(|x| x.bytes().len()).sum();
        Ok(ModelBuilder {
            executions: self.executions.into_iter().map(Packed::into_buf).collect(),
            index: self.execution_index,
            sessions: self.sessions,
            session_index: self.session_index,
            tool_hints: self.tool_hints,
            held: Some(held),
            interner: Interner::of(&self.store),
            store: self.store,
            events_pushed,
            bytes_pushed,
        })
    }
}

/// How [`ModelBuilder::finish`] orders executions that began at the same
/// time.
#[derive(Debug, Clone, Copy)]
enum Ties {
    /// By their places in the builder: the order their first records were
    /// pushed, for a builder that took every record from the start.
    Position,
    /// By their first lines (journal, then line), then their places: the
    /// order a fresh open meets them in journals whose readers give one
    /// record per line in line order (the journals a model is grown from,
    /// [`Model::into_builder`]), for a builder whose held executions sit
    /// at their places in the model, not where their first records came.
    FirstLine,
}

/// Accumulates records; [`ModelBuilder::finish`] sorts and indexes them.
///
/// Records may arrive from several journals in any order: each execution's
/// events are sorted by time at the end (stable, so journal order breaks
/// ties), which is how several files are merged by time (docs/design.md §3).
#[derive(Debug, Default)]
pub struct ModelBuilder {
    executions: Vec<PackedBuf>,
    index: IdIndex,
    sessions: Vec<Session>,
    session_index: HashMap<String, usize>,
    tool_hints: Vec<ToolHint>,
    /// What a builder made of a finished model ([`Model::into_builder`])
    /// knows of it.
    held: Option<Held>,
    /// The texts executions repeat (sessions, MCP sessions, transports,
    /// action classes, authorization decisions) and the action records,
    /// each once, and the events' unknown fields and facts.
    store: Store,
    /// Finds what `store` holds.
    interner: Interner,
    /// Events pushed to this builder so far.
    events_pushed: usize,
    /// Bytes the executions took so far: with the executions, what a new
    /// execution is given room for.
    bytes_pushed: usize,
}

/// A finished model's part of a builder: how many executions it had, its
/// call list, and what the records added since did to them.
#[derive(Debug, Default)]
struct Held {
    executions: usize,
    calls: Vec<Call>,
    /// Held executions that gained events: position, events held before.
    touched: HashMap<usize, usize>,
    /// A record was added that may move what the model held: a held
    /// execution's `accepted` record, an event naming a layer or a link
    /// (it may join executions, docs/design.md §5.12).
    unsure: bool,
}

/// What [`ModelBuilder::finish_grown`] did to the executions of the model
/// the builder was made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Growth {
    /// How many executions the model held: they keep their positions
    /// (and their events theirs), the new ones come after them.
    pub held: usize,
    /// The held executions that gained events, in position order.
    pub touched: Vec<super::ExecIdx>,
}

/// At most this many bytes of room for a new execution: beyond it, an
/// execution's bytes grow as a list does.
const MAX_ROOM: usize = 512;

impl ModelBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one record.
    pub fn push(&mut self, record: Record) {
        match record {
            Record::Session(s) => self.push_session(*s),
            Record::Event {
                execution_id,
                event,
            } => self.push_event(execution_id, event),
            Record::ToolHint(h) => self.tool_hints.push(h),
        }
    }

    /// Adds one event of the named execution.
    pub fn push_event(&mut self, execution_id: String, event: Event) {
        self.events_pushed += 1;
        if let Some(held) = &mut self.held {
            let f = event.facts();
            held.unsure |= f.layer.is_some() || !f.links.is_empty();
        }
        let accepted = matches!(event.kind, EventKind::Accepted(_));
        let i = match self.index.get(&execution_id, &self.executions) {
            Some(i) => {
                if let Some(held) = self.held.as_mut().filter(|h| i < h.executions) {
                    held.unsure |= accepted;
                    let had = packed::count(self.executions[i].bytes()) as usize;
                    held.touched.entry(i).or_insert(had);
                }
                i
            }
            None => {
                // Room for as many bytes as the executions so far take on
                // average: most executions' bytes are then never copied to
                // a larger block as their events arrive.
                let room = (self.bytes_pushed / self.executions.len().max(1)).min(MAX_ROOM);
                self.executions.push(PackedBuf::new(&execution_id, room));
                let i = self.executions.len() - 1;
                self.index.insert(i, &self.executions);
                i
            }
        };
        let x = &mut self.executions[i];
        let before = x.bytes().len();
        x.push(event, &mut self.interner, &mut self.store);
        self.bytes_pushed += x.bytes().len() - before;
    }

    /// Adds a session. A second record for the same session id fills in the
    /// fields the first one lacked (a start record, then an end record),
    /// and widens the session to its earlier start or later end (with that
    /// end's reason), so that the order of the records does not matter.
    pub fn push_session(&mut self, s: Session) {
        match self.session_index.get(&s.session_id) {
            Some(&i) => {
                let old = &mut self.sessions[i];
                // Records of one session from several journals (a
                // service's spans over several files): it ran from the
                // earliest start to the latest end, whatever the order the
                // journals were given in; its evidence is the record of
                // its start.
                if let (Some(a), Some(b)) = (old.started_at, s.started_at)
                    && b < a
                {
                    old.started_at = Some(b);
                    old.source = s.source;
                }
                if let (Some(a), Some(b)) = (old.ended_at, s.ended_at)
                    && b > a
                {
                    old.ended_at = Some(b);
                    if s.end_reason.is_some() {
                        old.end_reason = s.end_reason.clone();
                    }
                }
                macro_rules! fill {
                    ($($f:ident),*) => { $( if old.$f.is_none() { old.$f = s.$f; } )* };
                }
                fill!(
                    actor,
                    process,
                    mcp_session_id,
                    client,
                    authorization,
                    started_at,
                    ended_at,
                    end_reason
                );
                for (k, v) in s.extra {
                    old.extra.entry(k).or_insert(v);
                }
            }
            None => {
                self.session_index
                    .insert(s.session_id.clone(), self.sessions.len());
                self.sessions.push(s);
            }
        }
    }

    /// Number of events pushed so far.
    pub fn event_count(&self) -> usize {
        self.executions
            .iter()
            .map(|x| packed::count(x.bytes()) as usize)
            .sum()
    }

    /// Joins the records of one call made by several layers or journals
    /// (docs/design.md §5.12), sorts events by time, orders executions by
    /// when they began ([`ExecutionRef::started_at`]) and derives the call
    /// list.
    pub fn finish(self) -> Model {
        self.finish_by(Ties::Position)
    }

    /// [`ModelBuilder::finish`], executions that began at the same time
    /// ordered as `ties` says.
    fn finish_by(mut self, ties: Ties) -> Model {
        self.held = None;
        let before = self.executions.len();
        let store = self.store;
        // The executions of one call joined, from their events as they
        // arrived (which of several parts names the call rests on their
        // first events); then each execution's events in time order.
        let executions: Vec<Packed> = self
            .executions
            .into_par_iter()
            .map(PackedBuf::finish)
            .collect();
        let (executions, aliases) = super::join::join(executions, &store);
        let executions: Vec<Packed> = executions
            .into_par_iter()
            .map(Packed::sorted_by_time)
            .collect();
        // Executions by when they began, journal order breaking ties: a
        // stable sort, done on (start, position) pairs so that each start
        // is found once (with the first line between them when `ties`
        // says so: only a grown model's, so that a fresh load's pairs stay
        // 24 bytes).
        let started = |x: &Packed| x.view(&store).started_at();
        let order: Vec<(Option<chrono::DateTime<chrono::Utc>>, usize)> = match ties {
            Ties::Position => {
                let mut order: Vec<_> = executions
                    .par_iter()
                    .enumerate()
                    .map(|(i, x)| (started(x), i))
                    .collect();
                order.par_sort_unstable();
                order
            }
            Ties::FirstLine => {
                let mut order: Vec<_> = executions
                    .par_iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let first = x.view(&store).events().map(|e| e.source()).min();
                        (started(x), first, i)
                    })
                    .collect();
                order.par_sort_unstable();
                order.into_iter().map(|(at, _, i)| (at, i)).collect()
            }
        };
        let mut slots: Vec<Option<Packed>> = executions.into_iter().map(Some).collect();
        let executions: Vec<Packed> = order.iter().filter_map(|&(_, i)| slots[i].take()).collect();
        drop(slots);
        let execution_index = if aliases.is_empty() && executions.len() == before {
            // Nothing was joined: the builder's index names every execution
            // by its place as pushed; only the places moved.
            let mut moved = vec![0; order.len()];
            for (new, &(_, old)) in order.iter().enumerate() {
                moved[old] = new;
            }
            let mut index = self.index;
            index.remap(&moved);
            index
        } else {
            // An execution joined into another is still found by its own id.
            IdIndex::of(&executions, aliases)
        };
        drop(order);
        let mut calls = Vec::new();
        for (xi, x) in executions.iter().enumerate() {
            calls_of(xi, x.view(&store), &mut calls);
        }
        calls.sort_by_key(|c| c.at);
        let mut tool_hints = self.tool_hints;
        tool_hints.sort_by_key(|h| h.at);
        Model {
            executions,
            store,
            calls,
            sessions: self.sessions,
            tool_hints,
            session_index: self.session_index,
            execution_index,
        }
    }
}

impl ModelBuilder {
    /// [`ModelBuilder::finish`] for a builder made of a finished model
    /// ([`Model::into_builder`]), with what finishing did to the
    /// executions it held: `Some` when every held execution kept its
    /// position and its events theirs (the records added joined nothing,
    /// gave no held execution an `accepted` record, put no event before one
    /// it held and no new execution before a held one), and which held
    /// executions gained events; `None` when finishing had to sort and
    /// join everything again. The model is the same either way; the
    /// `Some` way does work in proportion to the records added, not to the
    /// model (only the held executions' positions are copied into the
    /// call list's merge when a new call is not the latest).
    pub fn finish_grown(mut self) -> (Model, Option<Growth>) {
        let Some(held) = self.held.take() else {
            return (self.finish(), None);
        };
        let n = held.executions;
        let store = &self.store;
        // Whether the events from `from` on come no earlier than the one
        // before them.
        let settled = |x: &PackedBuf, from: usize| {
            let mut ats = x
                .view(store)
                .events()
                .skip(from.saturating_sub(1))
                .map(|e| e.at());
            match (from, ats.next()) {
                (0, _) | (_, None) => true,
                (_, Some(last)) => ats.all(|t| t >= last),
            }
        };
        let mut touched: Vec<usize> = held.touched.keys().copied().collect();
        touched.sort_unstable();
        let last_held = n
            .checked_sub(1)
            .and_then(|i| self.executions[i].view(store).started_at());
        let new: Vec<Packed> = self
            .executions
            .drain(n..)
            .map(|x| x.finish().sorted_by_time())
            .collect();
        let stable = !held.unsure
            && touched
                .iter()
                .all(|&i| settled(&self.executions[i], held.touched[&i]))
            && new.iter().all(|x| x.view(store).started_at() >= last_held);
        self.executions
            .extend(new.into_iter().map(Packed::into_buf));
        if !stable {
            // Held executions are at their places in the model, not where
            // a fresh open meets them: ties are broken by first line.
            return (self.finish_by(Ties::FirstLine), None);
        }
        let mut executions: Vec<Packed> =
            self.executions.into_iter().map(PackedBuf::finish).collect();
        // A held execution's new events come after those it held, but not
        // necessarily in time order among themselves.
        for &i in &touched {
            let x = std::mem::take(&mut executions[i]);
            executions[i] = x.sorted_by_time();
        }
        let store = self.store;
        let started = |x: &Packed| x.view(&store).started_at();
        self.index.forget_from(n);
        executions[n..].sort_by_cached_key(started);
        for i in n..executions.len() {
            self.index.insert(i, &executions);
        }
        // New calls: the attached events the held executions gained (their
        // created call is held already), and every call of the new ones.
        let mut added = Vec::new();
        for &i in &touched {
            let x = executions[i].view(&store);
            for (ei, ev) in x.events().enumerate() {
                if let KindRef::Attached { recovery, .. } = ev.kind()
                    && ei >= held.touched[&i]
                {
                    added.push(Call {
                        at: ev.at(),
                        role: CallRole::Attached(recovery),
                        execution: super::ExecIdx::new(i),
                        event: super::EventIdx::new(ei),
                    });
                }
            }
        }
        for (xi, x) in executions.iter().enumerate().skip(n) {
            calls_of(xi, x.view(&store), &mut added);
        }
        // The calls of a finished model are in (time, execution, event)
        // order: a stable sort by time of a list built in that order.
        let order = |c: &Call| (c.at, c.execution, c.event);
        added.sort_by_key(order);
        let mut calls = held.calls;
        let in_order = match (calls.last(), added.first()) {
            (Some(l), Some(f)) => order(l) <= order(f),
            _ => true,
        };
        calls.extend(added);
        if !in_order {
            calls.sort_by_key(order);
        }
        let mut tool_hints = self.tool_hints;
        tool_hints.sort_by_key(|h| h.at);
        let growth = Growth {
            held: n,
            touched: touched.into_iter().map(super::ExecIdx::new).collect(),
        };
        let model = Model {
            executions,
            store,
            calls,
            sessions: self.sessions,
            tool_hints,
            session_index: self.session_index,
            execution_index: self.index,
        };
        (model, Some(growth))
    }
}

/// The calls of execution `xi`: the one that created it (its first
/// `accepted` record) and every attached one, in event order.
fn calls_of(xi: usize, x: ExecutionRef<'_>, calls: &mut Vec<Call>) {
    let mut created = false;
    for (ei, ev) in x.events().enumerate() {
        let role = match ev.kind() {
            // One call created the execution: another layer's record of
            // the same call is not a second call.
            KindRef::Accepted(_) if created => continue,
            KindRef::Accepted(_) => {
                created = true;
                CallRole::Created
            }
            KindRef::Attached { recovery, .. } => CallRole::Attached(recovery),
            _ => continue,
        };
        calls.push(Call {
            at: ev.at(),
            role,
            execution: super::ExecIdx::new(xi),
            event: super::EventIdx::new(ei),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LineOffset, Link, ReaderFacts, SourceRef};
    use chrono::{DateTime, Utc};

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap_or_default()
    }

    fn at_line(l: u32) -> SourceRef {
        SourceRef::Line {
            journal: 0,
            line: l,
            offset: LineOffset::new(u64::from(l) * 10),
            len: 5,
        }
    }

    fn accepted() -> EventKind {
        EventKind::Accepted(Box::default())
    }

    fn record(id: &str, s: i64, kind: EventKind, line: u32) -> Record {
        Record::Event {
            execution_id: id.into(),
            event: Event::new(t(s), kind, at_line(line)),
        }
    }

    fn whole(records: &[Record]) -> Model {
        let mut b = ModelBuilder::new();
        for r in records {
            b.push(r.clone());
        }
        b.finish()
    }

    /// One session's records from several journals (a service's spans
    /// over several files) give the same session in any order: from the
    /// earliest start, cited there, to the latest end with its reason. The
    /// first record given won before.
    #[test]
    fn a_sessions_records_give_one_session_in_any_order() {
        let part = |from: i64, to: i64, line: u32, reason: &str| {
            Record::Session(Box::new(Session {
                session_id: "s".into(),
                started_at: Some(t(from)),
                ended_at: Some(t(to)),
                end_reason: Some(reason.into()),
                source: at_line(line),
                ..Session::default()
            }))
        };
        let records = [
            part(5, 9, 2, "first"),
            part(1, 4, 1, "early"),
            part(3, 12, 3, "late"),
        ];
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            let m = whole(&order.map(|i| records[i].clone()));
            let s = m.session("s").unwrap();
            assert_eq!(s.started_at, Some(t(1)), "{order:?}");
            assert_eq!(s.source, at_line(1), "{order:?}");
            assert_eq!(s.ended_at, Some(t(12)), "{order:?}");
            assert_eq!(s.end_reason.as_deref(), Some("late"), "{order:?}");
        }
    }

    /// A model made of the first `cut` records, grown by the rest.
    fn grown(records: &[Record], cut: usize) -> (Model, Option<Growth>) {
        let mut b = match whole(&records[..cut]).into_builder() {
            Ok(b) => b,
            Err(_) => unreachable!("nothing here is joined"),
        };
        for r in &records[cut..] {
            b.push(r.clone());
        }
        b.finish_grown()
    }

    /// A held execution that gains two events, both after those it held
    /// but out of time order with each other, has them in time order, as
    /// the model of every record read at once does.
    #[test]
    fn a_held_execution_gets_its_new_events_in_time_order() {
        let records = [
            record("x", 1, accepted(), 1),
            record("x", 10, EventKind::Delivered, 2),
            record(
                "x",
                5,
                EventKind::Dispatched {
                    idempotency_key: None,
                },
                3,
            ),
        ];
        let (m, growth) = grown(&records, 1);
        assert!(growth.is_some(), "the held execution kept its place");
        assert_eq!(m.to_executions(), whole(&records).to_executions());
        let names: Vec<&str> = m
            .execution_at(0)
            .map(|x| x.events().map(|e| e.name()).collect())
            .unwrap_or_default();
        assert_eq!(names, ["accepted", "dispatched", "delivered"]);
    }

    /// A model grown from any first part of a journal's records is the
    /// model of all of them read at once, executions in the same order:
    /// journals of a few executions whose records come at a handful of
    /// times (so that starts tie) and out of time order, some beginning
    /// without their `accepted` record, cut at every record. (Finishing a
    /// grown model once broke ties between starts by the executions'
    /// places in the model, not by the order a fresh read meets them.)
    #[test]
    fn a_grown_model_orders_tied_executions_as_a_fresh_read_does() {
        let mut rng = crate::testing::XorShift::new(0x9E37_79B9_7F4A_7C15);
        let mut next = |n: u64| rng.below(n);
        let mut cases = 0;
        for _ in 0..300 {
            let len = 3 + next(6) as usize;
            let records: Vec<Record> = (0..len)
                .map(|i| {
                    let id = ["x", "y", "z", "w"][next(4) as usize];
                    let kind = match next(3) {
                        0 => accepted(),
                        1 => EventKind::Dispatched {
                            idempotency_key: None,
                        },
                        _ => EventKind::Delivered,
                    };
                    record(id, 1 + next(3) as i64, kind, i as u32 + 1)
                })
                .collect();
            let fresh = whole(&records).to_executions();
            for cut in 1..len {
                let (m, _) = grown(&records, cut);
                assert_eq!(m.to_executions(), fresh, "{records:?} cut at {cut}");
                cases += 1;
            }
        }
        assert!(cases > 1000);
    }

    /// The executions of one call are joined from their events as they
    /// arrived, before each is put in time order: the part that names the
    /// call is chosen by its first event as it arrived (docs/design.md
    /// §5.12), as it was when executions were held as values.
    #[test]
    fn a_call_is_joined_from_its_events_as_they_arrived() {
        let link = |e: Event| {
            e.with_facts(ReaderFacts {
                links: vec![Link::Correlation("c1".into())],
                ..ReaderFacts::default()
            })
        };
        let mut b = ModelBuilder::new();
        // "a" has no accepted record: it begins with its first event as
        // it arrived (at 50), though it holds an earlier one (at 1).
        b.push_event(
            "a".into(),
            link(Event::new(t(50), EventKind::Delivered, at_line(1))),
        );
        b.push_event(
            "a".into(),
            Event::new(
                t(1),
                EventKind::Dispatched {
                    idempotency_key: None,
                },
                at_line(2),
            ),
        );
        b.push_event("b".into(), link(Event::new(t(20), accepted(), at_line(3))));
        let m = b.finish();
        let ids: Vec<&str> = m.executions().map(|x| x.id()).collect();
        assert_eq!(ids, ["b"], "named by the part that began first");
        let ats: Vec<i64> = m
            .execution_at(0)
            .map(|x| {
                x.events()
                    .map(|e| e.at().timestamp() - 1_700_000_000)
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(ats, [1, 20, 50], "then in time order");
        assert_eq!(m.execution_index("a"), Some(0));
    }
}

//! How a model holds its executions (docs/design.md §9.8): each
//! execution's events encoded one after another in one byte string, the
//! texts that executions repeat (sessions, transports, action classes,
//! authorization decisions), the action records and the events' unknown
//! fields and reader facts in a [`Store`] beside them.
//!
//! An execution's bytes: its event count (`u32`, little endian, so that an
//! event can be added in place; its top bit says whether an event has
//! unknown fields or reader facts), its id (a length, then UTF-8), the
//! time, `seq` and source of its first event (its [`Base`], with that
//! event's day), then its events. An event: its length, so that a read can
//! pass over it; a tag byte (kind in the low four bits; whether a `seq`
//! follows; whether it has unknown fields or facts; which kind of source);
//! its time, `seq` and source as differences from the base (zigzag
//! LEB128); the index of its unknown fields and facts in the store; then
//! its kind's fields. Texts that are an execution's own (its id, call ids,
//! idempotency keys, errors, result references) are written in place;
//! repeated texts and action records as their index in the store.
//!
//! Events are read back through [`super::EventRef`] with what they held:
//! every field, unknown fields and facts included, comes back as it was
//! given (a test over every kind and edge).

use super::{
    Acceptance, ActionRecord, AuxData, CallRef, Event, EventKind, JournalId, JsonRpcId, LineOffset,
    ObservedVia, OutcomeKind, OutcomeTexts, Recovery, SourceRef, Table, WrittenFingerprint,
};
use chrono::{DateTime, Utc};
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// The texts, action records and unknown fields with facts that a model's
/// executions refer to by index.
#[derive(Debug, Clone, Default)]
pub(super) struct Store {
    /// Texts executions repeat, each once.
    pub texts: Vec<Box<str>>,
    /// Action records, those stored as text once each.
    pub actions: Vec<ActionRecord>,
    /// Unknown fields and reader facts of the events that have any.
    pub aux: Vec<AuxData>,
}

/// The indexes that find a text or an action record already in a
/// [`Store`], while records are added to it.
#[derive(Debug, Default)]
pub(super) struct Interner {
    texts: HashTable<u32>,
    actions: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl Interner {
    /// The indexes of everything `store` holds.
    pub fn of(store: &Store) -> Interner {
        let mut i = Interner::default();
        for (k, t) in store.texts.iter().enumerate() {
            let h = i.hasher.hash_one(&**t);
            let texts = &store.texts;
            let hasher = &i.hasher;
            i.texts
                .insert_unique(h, index(k), |&j| hasher.hash_one(&*texts[j as usize]));
        }
        for (k, a) in store.actions.iter().enumerate() {
            if let Some(b) = a.canonical_bytes() {
                let h = i.hasher.hash_one(b);
                let actions = &store.actions;
                let hasher = &i.hasher;
                i.actions.insert_unique(h, index(k), |&j| {
                    hasher.hash_one(actions[j as usize].canonical_bytes().unwrap_or_default())
                });
            }
        }
        i
    }

    /// The index of `text` in `store`, added when missing.
    fn text(&mut self, store: &mut Store, text: &str) -> u32 {
        let h = self.hasher.hash_one(text);
        let texts = &store.texts;
        if let Some(&k) = self.texts.find(h, |&j| &*texts[j as usize] == text) {
            return k;
        }
        let k = index(store.texts.len());
        store.texts.push(text.into());
        let texts = &store.texts;
        let hasher = &self.hasher;
        self.texts
            .insert_unique(h, k, |&j| hasher.hash_one(&*texts[j as usize]));
        k
    }

    /// The index of `action` in `store`: the one already held when it is
    /// stored as the same text, else a new one.
    fn action(&mut self, store: &mut Store, action: ActionRecord) -> u32 {
        let Some(bytes) = action.canonical_bytes() else {
            store.actions.push(action.copied());
            return index(store.actions.len() - 1);
        };
        let h = self.hasher.hash_one(bytes);
        let actions = &store.actions;
        if let Some(&k) = self
            .actions
            .find(h, |&j| actions[j as usize].canonical_bytes() == Some(bytes))
        {
            return k;
        }
        let k = index(store.actions.len());
        store.actions.push(action.copied());
        let actions = &store.actions;
        let hasher = &self.hasher;
        self.actions.insert_unique(h, k, |&j| {
            hasher.hash_one(actions[j as usize].canonical_bytes().unwrap_or_default())
        });
        k
    }
}

/// A position in one of a store's lists. A model holds fewer than 2^32
/// of each (it holds fewer events than that).
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// One execution, encoded (the module's layout). The default has no
/// events and no id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Packed(Box<[u8]>);

/// One execution being built: events are added at its end.
#[derive(Debug, Clone, Default)]
pub(super) struct PackedBuf(Vec<u8>);

/// Tag bits (the low four are the kind).
const HAS_SEQ: u8 = 1 << 4;
const HAS_AUX: u8 = 1 << 5;
/// Source kinds, in the top two bits.
const LINE_SAME_JOURNAL: u8 = 0;
const LINE: u8 = 1 << 6;
const ROW: u8 = 2 << 6;
const SOURCE: u8 = 3 << 6;

/// Kind numbers.
const ACCEPTED: u8 = 0;
const ATTACHED: u8 = 1;
const AUTHORIZED: u8 = 2;
const REJECTED: u8 = 3;
const DISPATCHED: u8 = 4;
const DISPATCH_FAILED: u8 = 5;
const OUTCOME: u8 = 6;
const DELIVERED: u8 = 7;
const DELIVERY_FAILED: u8 = 8;
const CANCELLED: u8 = 9;

/// What an event's time, `seq` and source are written relative to: those
/// of the execution's first event (zero for the first itself).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Base {
    secs: i64,
    seq: u64,
    journal: JournalId,
    line: u32,
    offset: u64,
    /// The first event's day (UTC), and the second it began at: most of
    /// an execution's events fall on its first event's day, and their
    /// times are then made without working out the date again.
    day: Option<(chrono::NaiveDate, i64)>,
}

impl Base {
    /// The time `secs` seconds and `nanos` nanoseconds after the epoch.
    fn time(&self, secs: i64, nanos: u32) -> DateTime<Utc> {
        if let Some((date, start)) = self.day
            && let Some(s) = secs.checked_sub(start).filter(|s| (0..86_400).contains(s))
            && let Some(t) = chrono::NaiveTime::from_num_seconds_from_midnight_opt(s as u32, nanos)
        {
            return chrono::NaiveDateTime::new(date, t).and_utc();
        }
        DateTime::from_timestamp(secs, nanos).unwrap_or_default()
    }

    /// The base an execution whose first event has these fields.
    fn new(at: DateTime<Utc>, seq: Option<u64>, source: SourceRef) -> Base {
        let (journal, line, offset) = match source {
            SourceRef::Line {
                journal,
                line,
                offset,
                ..
            } => (journal, line, offset.get()),
            SourceRef::Row { journal, .. } => (journal, 0, 0),
        };
        let naive = at.naive_utc();
        let secs = at.timestamp();
        let into_day = i64::from(chrono::Timelike::num_seconds_from_midnight(&naive.time()));
        Base {
            secs,
            seq: seq.unwrap_or(0),
            journal,
            line,
            offset,
            day: Some((naive.date(), secs - into_day)),
        }
    }

    /// Writes the base after the execution's id.
    ///
    /// In [`BASE_LEN`] bytes of fixed width, little endian: it is read
    /// every time an execution is looked at, and numbers of fixed width are
    /// read faster than LEB128's (a dozen bytes more an execution): the
    /// time (`i64` seconds), `seq` (`u64`), journal (`u16`), line (`u32`),
    /// offset (five bytes), then the day: year (`i32`), day of the year
    /// (`u16`), and the seconds from midnight to the time (`u32`).
    fn write(&self, out: &mut Vec<u8>) {
        use chrono::Datelike;
        out.extend_from_slice(&self.secs.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&self.journal.to_le_bytes());
        out.extend_from_slice(&self.line.to_le_bytes());
        out.extend_from_slice(&self.offset.to_le_bytes()[..5]);
        let (date, start) = self.day.unwrap_or_default();
        out.extend_from_slice(&date.year().to_le_bytes());
        out.extend_from_slice(&u16::try_from(date.ordinal()).unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&u32::try_from(self.secs - start).unwrap_or(0).to_le_bytes());
    }
}

/// An event's fixed fields, decoded, and where its kind's fields are.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head<'m> {
    pub at: DateTime<Utc>,
    pub seq: Option<u64>,
    pub source: SourceRef,
    /// The kind number.
    pub kind: u8,
    /// Index of the event's unknown fields and facts in the store, plus
    /// one (0: none).
    pub aux: u32,
    /// The kind's fields.
    pub payload: &'m [u8],
}

// ------------------------------------------------------------ writing

fn put_uv(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_iv(out: &mut Vec<u8>, v: i64) {
    put_uv(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_uv(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// An optional text: 0, or its length plus one and its bytes.
fn put_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            put_uv(out, s.len() as u64 + 1);
            out.extend_from_slice(s.as_bytes());
        }
    }
}

/// The store's index of a repeated text plus one, 0 for none.
fn put_text(out: &mut Vec<u8>, texts: &mut (&mut Interner, &mut Store), s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            let k = texts.0.text(texts.1, s);
            put_uv(out, u64::from(k) + 1);
        }
    }
}

/// The nanoseconds of a time in as few bytes as their unit allows: whole
/// milliseconds and microseconds, the usual precisions, take one or two.
fn put_nanos(out: &mut Vec<u8>, n: u32) {
    let n = u64::from(n);
    let code = if n % 1_000_000 == 0 {
        (n / 1_000_000) << 2 | 2
    } else if n % 1_000 == 0 {
        (n / 1_000) << 2 | 1
    } else {
        n << 2
    };
    put_uv(out, code);
}

fn table_code(t: Table) -> u8 {
    match t {
        Table::Events => 0,
        Table::Sessions => 1,
        Table::ObservabilitySpans => 2,
        Table::ObservabilityTraces => 3,
        Table::StructuredLogEntries => 4,
        Table::ToolMetrics => 5,
        Table::Tools => 6,
    }
}

fn table_of(c: u8) -> Table {
    match c {
        1 => Table::Sessions,
        2 => Table::ObservabilitySpans,
        3 => Table::ObservabilityTraces,
        4 => Table::StructuredLogEntries,
        5 => Table::ToolMetrics,
        6 => Table::Tools,
        _ => Table::Events,
    }
}

fn put_call(out: &mut Vec<u8>, texts: &mut (&mut Interner, &mut Store), c: &CallRef) {
    put_opt_str(out, c.call_id.as_deref());
    put_text(out, texts, c.session_id.as_deref());
    match &c.jsonrpc_id {
        None => out.push(0),
        Some(JsonRpcId::Num(n)) => {
            out.push(1);
            put_iv(out, *n);
        }
        Some(JsonRpcId::Str(s)) => {
            out.push(2);
            put_str(out, s);
        }
    }
    put_text(out, texts, c.mcp_session_id.as_deref());
    put_text(out, texts, c.transport.as_deref());
}

fn put_fingerprint(out: &mut Vec<u8>, f: Option<&WrittenFingerprint>) {
    match f.map(|f| (f, f.digest())) {
        None => out.push(0),
        Some((_, Some((hmac, bytes)))) => {
            out.push(if hmac { 2 } else { 1 });
            out.extend_from_slice(bytes);
        }
        Some((f, None)) => {
            out.push(3);
            put_str(out, &f.text());
        }
    }
}

/// The kind number of `kind` and its fields, written to `out`.
fn put_kind(out: &mut Vec<u8>, texts: &mut (&mut Interner, &mut Store), kind: EventKind) -> u8 {
    match kind {
        EventKind::Accepted(a) => {
            let a = *a;
            put_call(out, texts, &a.call);
            let action = texts.0.action(texts.1, a.action);
            put_uv(out, u64::from(action));
            put_fingerprint(out, a.fingerprint.as_ref());
            put_text(out, texts, a.action_class.as_deref());
            put_opt_str(out, a.idempotency_key.as_deref());
            ACCEPTED
        }
        EventKind::Attached { call, recovery } => {
            out.push(recovery_code(recovery));
            put_call(out, texts, &call);
            ATTACHED
        }
        EventKind::Authorized { decision, approver } => {
            let k = texts.0.text(texts.1, &decision);
            put_uv(out, u64::from(k));
            put_opt_str(out, approver.as_deref().map(String::as_str));
            AUTHORIZED
        }
        EventKind::Rejected { reason } => {
            put_str(out, &reason);
            REJECTED
        }
        EventKind::Dispatched { idempotency_key } => {
            put_opt_str(out, idempotency_key.as_deref());
            DISPATCHED
        }
        EventKind::DispatchFailed { error } => {
            put_str(out, &error);
            DISPATCH_FAILED
        }
        EventKind::Outcome {
            outcome,
            target_status,
            exit_status,
            texts: t,
            replayed,
            observed_via,
        } => {
            let flags = outcome_code(outcome)
                | observed_code(observed_via) << 2
                | u8::from(replayed) << 4
                | u8::from(target_status.is_some()) << 5
                | u8::from(exit_status.is_some()) << 6;
            out.push(flags);
            if let Some(s) = target_status {
                put_uv(out, u64::from(s));
            }
            if let Some(x) = exit_status {
                put_iv(out, x);
            }
            put_opt_str(out, t.error());
            put_opt_str(out, t.result_reference());
            OUTCOME
        }
        EventKind::Delivered => DELIVERED,
        EventKind::DeliveryFailed { error } => {
            put_str(out, &error);
            DELIVERY_FAILED
        }
        EventKind::Cancelled { by } => {
            put_str(out, &by);
            CANCELLED
        }
    }
}

fn recovery_code(r: Recovery) -> u8 {
    match r {
        Recovery::Continued => 0,
        Recovery::QueriedStatus => 1,
        Recovery::ReturnedStoredResult => 2,
        Recovery::ReturnedRejection => 3,
        Recovery::AwaitingReview => 4,
    }
}

fn recovery_of(c: u8) -> Recovery {
    match c {
        1 => Recovery::QueriedStatus,
        2 => Recovery::ReturnedStoredResult,
        3 => Recovery::ReturnedRejection,
        4 => Recovery::AwaitingReview,
        _ => Recovery::Continued,
    }
}

fn outcome_code(o: OutcomeKind) -> u8 {
    match o {
        OutcomeKind::Success => 0,
        OutcomeKind::Failure => 1,
        OutcomeKind::NotExecuted => 2,
        OutcomeKind::Unknown => 3,
    }
}

fn outcome_of(c: u8) -> OutcomeKind {
    match c & 3 {
        0 => OutcomeKind::Success,
        1 => OutcomeKind::Failure,
        2 => OutcomeKind::NotExecuted,
        _ => OutcomeKind::Unknown,
    }
}

fn observed_code(o: ObservedVia) -> u8 {
    match o {
        ObservedVia::Response => 0,
        ObservedVia::StatusQuery => 1,
        ObservedVia::DurableMarker => 2,
        ObservedVia::LateResponse => 3,
    }
}

fn observed_of(c: u8) -> ObservedVia {
    match c & 3 {
        0 => ObservedVia::Response,
        1 => ObservedVia::StatusQuery,
        2 => ObservedVia::DurableMarker,
        _ => ObservedVia::LateResponse,
    }
}

impl PackedBuf {
    /// A new execution named `id`, with no events yet; `room`: bytes to
    /// make room for.
    pub fn new(id: &str, room: usize) -> PackedBuf {
        let mut b = Vec::with_capacity(room.max(4 + 1 + id.len()));
        b.extend_from_slice(&0u32.to_le_bytes());
        put_str(&mut b, id);
        PackedBuf(b)
    }

    /// The execution as built so far.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The execution as built so far, read through `store`.
    pub fn view<'a>(&'a self, store: &'a Store) -> super::ExecutionRef<'a> {
        super::ExecutionRef::packed(&self.0, store)
    }

    /// Adds `event` at the end, its texts, action record, unknown fields
    /// and facts put in `store`.
    pub fn push(&mut self, event: Event, interner: &mut Interner, store: &mut Store) {
        let Event {
            seq,
            at,
            kind,
            aux,
            source,
        } = event;
        let aux = aux.0.map_or(0, |a| {
            store.aux.push(*a);
            index(store.aux.len()) // plus one: 0 is none
        });
        let start = self.begin(at, seq.get(), source, aux);
        let kind = put_kind(&mut self.0, &mut (interner, store), kind);
        self.end(start, kind, aux);
    }

    /// Adds an event read from another execution's bytes, as it was.
    fn put(&mut self, h: &Head<'_>) {
        let start = self.begin(h.at, h.seq, h.source, h.aux);
        self.0.extend_from_slice(h.payload);
        self.end(start, h.kind, h.aux);
    }

    /// Writes an event's fixed fields; its kind's fields come next, then
    /// [`PackedBuf::end`]. Returns where the event starts.
    fn begin(&mut self, at: DateTime<Utc>, seq: Option<u64>, source: SourceRef, aux: u32) -> usize {
        let base = match count(&self.0) {
            0 => {
                let b = Base::new(at, seq, source);
                b.write(&mut self.0);
                b
            }
            _ => base_fields(id_bytes_rest(&self.0)),
        };
        let start = self.0.len();
        let out = &mut self.0;
        // The event's length (one byte for most, made right at its end),
        // then its tag.
        out.extend_from_slice(&[0, 0]);
        let mut tag = 0u8;
        put_iv(out, at.timestamp().wrapping_sub(base.secs));
        put_nanos(out, at.timestamp_subsec_nanos());
        if let Some(s) = seq {
            tag |= HAS_SEQ;
            put_iv(out, s.wrapping_sub(base.seq) as i64);
        }
        match source {
            SourceRef::Line {
                journal,
                line,
                offset,
                len,
            } => {
                if journal == base.journal {
                    tag |= LINE_SAME_JOURNAL;
                } else {
                    tag |= LINE;
                    put_uv(out, u64::from(journal));
                }
                put_iv(out, i64::from(line) - i64::from(base.line));
                put_iv(out, (offset.get() as i64).wrapping_sub(base.offset as i64));
                put_uv(out, u64::from(len));
            }
            SourceRef::Row {
                journal,
                table,
                row,
            } => {
                tag |= ROW;
                put_uv(out, u64::from(journal));
                out.push(table_code(table));
                put_uv(out, u64::from(row));
            }
        }
        if let Some(a) = aux.checked_sub(1) {
            tag |= HAS_AUX;
            put_uv(out, u64::from(a));
        }
        out[start + 1] = tag;
        start
    }

    /// Finishes the event begun at `start`: its kind in its tag, its
    /// length before it, the execution's header.
    fn end(&mut self, start: usize, kind: u8, aux: u32) {
        self.0[start + 1] |= kind;
        let len = self.0.len() - start - 1;
        if let Ok(short) = u8::try_from(len)
            && short < 0x80
        {
            self.0[start] = short;
        } else {
            let mut long = Vec::with_capacity(4);
            put_uv(&mut long, len as u64);
            self.0.splice(start..=start, long);
        }
        let old = header(&self.0);
        let n = (old & !ANY_AUX).saturating_add(1).min(!ANY_AUX);
        let aux = if aux > 0 { ANY_AUX } else { old & ANY_AUX };
        self.0[..4].copy_from_slice(&(n | aux).to_le_bytes());
    }

    /// The execution, in a block of exactly its bytes: a copy, as an
    /// allocator may keep a shrunk block where it was, room and all (a
    /// journal of ten million events held 160 MB of room so).
    pub fn finish(self) -> Packed {
        Packed(Box::from(self.0.as_slice()))
    }
}

impl Packed {
    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The execution, read through `store`.
    pub fn view<'a>(&'a self, store: &'a Store) -> super::ExecutionRef<'a> {
        super::ExecutionRef::packed(&self.0, store)
    }

    /// The execution, to be added to.
    pub fn into_buf(self) -> PackedBuf {
        PackedBuf(self.0.into_vec())
    }

    /// The execution with its events in time order, journal order
    /// breaking ties (a stable sort; most executions are in order already
    /// and are kept as they are).
    pub fn sorted_by_time(self) -> Packed {
        let mut prev = None;
        let sorted = Cursor::new(&self.0).all(|h| {
            let ok = prev.is_none_or(|p| p <= h.at);
            prev = Some(h.at);
            ok
        });
        if sorted {
            return self;
        }
        let mut heads: Vec<Head<'_>> = Cursor::new(&self.0).collect();
        heads.sort_by_key(|h| h.at);
        let (id, _) = id_and_events(&self.0);
        Packed::of_heads(id, &heads)
    }

    /// The events of `parts`, one after another, as the execution `id`.
    pub fn merged<'a>(id: &str, parts: impl IntoIterator<Item = &'a Packed>) -> Packed {
        let heads: Vec<Head<'_>> = parts.into_iter().flat_map(|p| Cursor::new(&p.0)).collect();
        Packed::of_heads(id, &heads)
    }

    /// Events read from executions' bytes, as the execution `id`.
    fn of_heads(id: &str, heads: &[Head<'_>]) -> Packed {
        let room = heads.iter().map(|h| h.payload.len() + 16).sum::<usize>() + id.len() + 8;
        let mut b = PackedBuf::new(id, room);
        for h in heads {
            b.put(h);
        }
        b.finish()
    }

    /// `events` encoded as the execution `id`.
    #[cfg(test)]
    pub fn of(id: &str, events: Vec<Event>, interner: &mut Interner, store: &mut Store) -> Packed {
        let mut b = PackedBuf::new(id, 64);
        for e in events {
            b.push(e, interner, store);
        }
        b.finish()
    }
}

// ------------------------------------------------------------ reading

/// Reads what the writing functions wrote. Bytes are the model's own, so
/// reading never fails; a read past the end gives zeros and empty texts.
#[derive(Clone, Copy)]
pub(super) struct Reader<'m> {
    b: &'m [u8],
}

impl<'m> Reader<'m> {
    pub fn new(b: &'m [u8]) -> Reader<'m> {
        Reader { b }
    }

    #[inline]
    fn byte(&mut self) -> u8 {
        match self.b.split_first() {
            Some((&x, rest)) => {
                self.b = rest;
                x
            }
            None => 0,
        }
    }

    #[inline]
    fn uv(&mut self) -> u64 {
        // Most numbers take one byte or two.
        match *self.b {
            [x, ref rest @ ..] if x < 0x80 => {
                self.b = rest;
                u64::from(x)
            }
            [x, y, ref rest @ ..] if y < 0x80 => {
                self.b = rest;
                u64::from(x & 0x7f) | u64::from(y) << 7
            }
            _ => self.uv_long(),
        }
    }

    #[inline(never)]
    fn uv_long(&mut self) -> u64 {
        // Three or four bytes, the rest of the longer numbers.
        match *self.b {
            [x, y, z, ref rest @ ..] if z < 0x80 => {
                self.b = rest;
                return u64::from(x & 0x7f) | u64::from(y & 0x7f) << 7 | u64::from(z) << 14;
            }
            [x, y, z, w, ref rest @ ..] if w < 0x80 => {
                self.b = rest;
                return u64::from(x & 0x7f)
                    | u64::from(y & 0x7f) << 7
                    | u64::from(z & 0x7f) << 14
                    | u64::from(w) << 21;
            }
            _ => {}
        }
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let Some((&x, rest)) = self.b.split_first() else {
                return v;
            };
            self.b = rest;
            if shift < 64 {
                v |= u64::from(x & 0x7f) << shift;
            }
            if x & 0x80 == 0 {
                return v;
            }
            shift += 7;
        }
    }

    #[inline]
    fn iv(&mut self) -> i64 {
        let v = self.uv();
        ((v >> 1) as i64) ^ -((v & 1) as i64)
    }

    #[inline]
    fn take(&mut self, n: usize) -> &'m [u8] {
        let n = n.min(self.b.len());
        let (a, rest) = self.b.split_at(n);
        self.b = rest;
        a
    }

    fn text(bytes: &'m [u8]) -> &'m str {
        std::str::from_utf8(bytes).unwrap_or_default()
    }

    fn str(&mut self) -> &'m str {
        let n = self.uv() as usize;
        Self::text(self.take(n))
    }

    fn opt_str(&mut self) -> Option<&'m str> {
        match self.uv() {
            0 => None,
            n => Some(Self::text(self.take(n as usize - 1))),
        }
    }

    fn stored(&mut self, store: &'m Store) -> Option<&'m str> {
        match self.uv() {
            0 => None,
            k => store.texts.get(k as usize - 1).map(|t| &**t),
        }
    }

    fn nanos(&mut self) -> u32 {
        let code = self.uv();
        let n = code >> 2;
        let n = match code & 3 {
            2 => n.saturating_mul(1_000_000),
            1 => n.saturating_mul(1_000),
            _ => n,
        };
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// An execution's base, as [`Base::write`] wrote it.
    fn base(&mut self) -> Base {
        let b = self.take(BASE_LEN);
        let mut base = base_fields(b);
        let year = i32::from_le_bytes(fixed(b, 27));
        let ordinal = u32::from(u16::from_le_bytes(fixed(b, 31)));
        let into_day = i64::from(u32::from_le_bytes(fixed(b, 33)));
        base.day = chrono::NaiveDate::from_yo_opt(year, ordinal).map(|d| (d, base.secs - into_day));
        base
    }

    /// Passes over the next event.
    fn skip(&mut self) {
        let n = self.uv() as usize;
        self.take(n);
    }

    /// The next event's fixed fields, relative to `base`.
    pub fn head(&mut self, base: &Base) -> Head<'m> {
        let n = self.uv() as usize;
        let mut event = Reader::new(self.take(n));
        event.fields(base)
    }

    /// An event's fixed fields, and the rest of it as its kind's.
    fn fields(&mut self, base: &Base) -> Head<'m> {
        let tag = self.byte();
        let secs = base.secs.wrapping_add(self.iv());
        let nanos = self.nanos();
        let at = base.time(secs, nanos);
        let seq = (tag & HAS_SEQ != 0).then(|| base.seq.wrapping_add(self.iv() as u64));
        let source = match tag & SOURCE {
            ROW => {
                let journal = JournalId::try_from(self.uv()).unwrap_or(JournalId::MAX);
                let table = table_of(self.byte());
                let row = u32::try_from(self.uv()).unwrap_or(u32::MAX);
                SourceRef::Row {
                    journal,
                    table,
                    row,
                }
            }
            t => {
                let journal = if t == LINE {
                    JournalId::try_from(self.uv()).unwrap_or(JournalId::MAX)
                } else {
                    base.journal
                };
                let line = i64::from(base.line).wrapping_add(self.iv());
                let offset = (base.offset as i64).wrapping_add(self.iv());
                let len = u32::try_from(self.uv()).unwrap_or(u32::MAX);
                SourceRef::Line {
                    journal,
                    line: u32::try_from(line).unwrap_or(0),
                    offset: LineOffset::new(u64::try_from(offset).unwrap_or(0)),
                    len,
                }
            }
        };
        let aux = if tag & HAS_AUX != 0 {
            u32::try_from(self.uv().saturating_add(1)).unwrap_or(0)
        } else {
            0
        };
        Head {
            at,
            seq,
            source,
            kind: tag & 0x0f,
            aux,
            payload: self.b,
        }
    }
}

/// The first four bytes of an execution: its event count, and in the top
/// bit whether an event has unknown fields or reader facts.
fn header(b: &[u8]) -> u32 {
    let mut n = [0u8; 4];
    if let Some(h) = b.get(..4) {
        n.copy_from_slice(h);
    }
    u32::from_le_bytes(n)
}

/// Bytes of an execution's [`Base`] ([`Base::write`]).
const BASE_LEN: usize = 37;

/// `N` bytes of `b` from `at` (zeros past its end).
fn fixed<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(s) = b.get(at..at + N) {
        out.copy_from_slice(s);
    }
    out
}

/// What events are written relative to, without the day that reading
/// their times needs (what adding an event needs), from a base's bytes.
fn base_fields(b: &[u8]) -> Base {
    let mut offset = [0u8; 8];
    offset[..5].copy_from_slice(&fixed::<5>(b, 22));
    Base {
        secs: i64::from_le_bytes(fixed(b, 0)),
        seq: u64::from_le_bytes(fixed(b, 8)),
        journal: u16::from_le_bytes(fixed(b, 16)),
        line: u32::from_le_bytes(fixed(b, 18)),
        offset: u64::from_le_bytes(offset),
        day: None,
    }
}

/// The header bit saying an event has unknown fields or reader facts.
const ANY_AUX: u32 = 1 << 31;

/// The event count of an execution's bytes.
pub(super) fn count(b: &[u8]) -> u32 {
    header(b) & !ANY_AUX
}

/// Whether an event of the execution has unknown fields or reader facts
/// (no other can name a layer or a link).
pub(super) fn has_aux(b: &[u8]) -> bool {
    header(b) & ANY_AUX != 0
}

/// What follows the id of an execution's bytes.
fn id_bytes_rest(b: &[u8]) -> &[u8] {
    let mut r = Reader::new(b.get(4..).unwrap_or_default());
    let n = r.uv() as usize;
    r.take(n);
    r.b
}

/// The id of an execution's bytes, as bytes.
pub(super) fn id_bytes(b: &[u8]) -> &[u8] {
    let mut r = Reader::new(b.get(4..).unwrap_or_default());
    let n = r.uv() as usize;
    r.take(n)
}

/// The id of an execution's bytes, and a reader at its first event.
pub(super) fn id_and_events(b: &[u8]) -> (&str, Reader<'_>) {
    let mut r = Reader::new(b.get(4..).unwrap_or_default());
    let id = r.str();
    (id, r)
}

/// The events of an execution's bytes, in order.
#[derive(Clone)]
pub(super) struct Cursor<'m> {
    r: Reader<'m>,
    base: Base,
    left: u32,
}

/// An execution's header, read: what every read of its events starts
/// from, read once for a view of it ([`super::ExecutionRef`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Parsed<'m> {
    /// The id's bytes.
    id: &'m [u8],
    /// The events' bytes.
    events: &'m [u8],
    base: Base,
    count: u32,
}

impl<'m> Parsed<'m> {
    /// The header of an execution's bytes.
    pub fn of(b: &'m [u8]) -> Parsed<'m> {
        let count = count(b);
        let mut r = Reader::new(b.get(4..).unwrap_or_default());
        let n = r.uv() as usize;
        let id = r.take(n);
        let base = if count > 0 { r.base() } else { Base::default() };
        Parsed {
            id,
            events: r.b,
            base,
            count,
        }
    }

    /// The execution's id.
    pub fn id(&self) -> &'m str {
        Reader::text(self.id)
    }

    /// How many events it has.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The journal of each event, in order, when every event's source is
    /// a line of the first event's journal (read from the events' tags
    /// alone); `None` otherwise.
    pub fn journals(self) -> Option<impl Iterator<Item = JournalId> + 'm> {
        let mut r = Reader::new(self.events);
        for _ in 0..self.count {
            let n = r.uv() as usize;
            let tag = r.take(n).first().copied().unwrap_or(0);
            if tag & SOURCE != LINE_SAME_JOURNAL {
                return None;
            }
        }
        Some(std::iter::repeat_n(self.base.journal, self.count as usize))
    }

    /// Its events.
    pub fn cursor(&self) -> Cursor<'m> {
        Cursor {
            r: Reader::new(self.events),
            base: self.base,
            left: self.count,
        }
    }
}

impl<'m> Cursor<'m> {
    pub fn new(b: &'m [u8]) -> Cursor<'m> {
        Parsed::of(b).cursor()
    }

    pub fn left(&self) -> usize {
        self.left as usize
    }
}

impl<'m> Iterator for Cursor<'m> {
    type Item = Head<'m>;

    fn next(&mut self) -> Option<Head<'m>> {
        self.left = self.left.checked_sub(1)?;
        Some(self.r.head(&self.base))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left(), Some(self.left()))
    }

    /// Passes over the events before the one wanted by their lengths,
    /// without reading them.
    fn nth(&mut self, n: usize) -> Option<Head<'m>> {
        let Some(n) = u32::try_from(n).ok().filter(|&n| n < self.left) else {
            // Past the end: nothing is left, as for a slice's iterator.
            self.left = 0;
            return None;
        };
        for _ in 0..n {
            self.r.skip();
        }
        self.left -= n;
        self.next()
    }
}

/// What an event's kind records, read from its fields ([`Head::payload`]).
pub(super) fn kind<'m>(h: &Head<'m>, store: &'m Store) -> super::KindRef<'m> {
    use super::view::{AcceptanceRef, CallView, JsonRpcIdRef, KindRef};
    use super::written::WrittenRef;
    let mut r = Reader::new(h.payload);
    let call = |r: &mut Reader<'m>| CallView {
        call_id: r.opt_str(),
        session_id: r.stored(store),
        jsonrpc_id: match r.byte() {
            1 => Some(JsonRpcIdRef::Num(r.iv())),
            2 => Some(JsonRpcIdRef::Str(r.str())),
            _ => None,
        },
        mcp_session_id: r.stored(store),
        transport: r.stored(store),
    };
    static NO_ACTION: std::sync::LazyLock<ActionRecord> =
        std::sync::LazyLock::new(ActionRecord::default);
    match h.kind {
        ACCEPTED => {
            let call = call(&mut r);
            let action = store
                .actions
                .get(r.uv() as usize)
                .unwrap_or_else(|| &*NO_ACTION);
            let fingerprint = match r.byte() {
                0 => None,
                3 => Some(WrittenRef::Text(r.str())),
                k => {
                    let bytes: &[u8; 32] = r.take(32).try_into().unwrap_or(&[0; 32]);
                    Some(WrittenRef::Digest {
                        hmac: k == 2,
                        bytes,
                    })
                }
            };
            KindRef::Accepted(AcceptanceRef {
                call,
                action,
                fingerprint,
                action_class: r.stored(store),
                idempotency_key: r.opt_str(),
            })
        }
        ATTACHED => {
            let recovery = recovery_of(r.byte());
            KindRef::Attached {
                call: call(&mut r),
                recovery,
            }
        }
        AUTHORIZED => KindRef::Authorized {
            decision: store.texts.get(r.uv() as usize).map_or("", |t| &**t),
            approver: r.opt_str(),
        },
        REJECTED => KindRef::Rejected { reason: r.str() },
        DISPATCHED => KindRef::Dispatched {
            idempotency_key: r.opt_str(),
        },
        DISPATCH_FAILED => KindRef::DispatchFailed { error: r.str() },
        OUTCOME => {
            let flags = r.byte();
            let target_status =
                (flags & 1 << 5 != 0).then(|| u16::try_from(r.uv()).unwrap_or(u16::MAX));
            let exit_status = (flags & 1 << 6 != 0).then(|| r.iv());
            KindRef::Outcome {
                outcome: outcome_of(flags),
                target_status,
                exit_status,
                error: r.opt_str(),
                result_reference: r.opt_str(),
                replayed: flags & 1 << 4 != 0,
                observed_via: observed_of(flags >> 2),
            }
        }
        DELIVERED => KindRef::Delivered,
        DELIVERY_FAILED => KindRef::DeliveryFailed { error: r.str() },
        _ => KindRef::Cancelled { by: r.str() },
    }
}

/// The name of an event's kind, without reading its fields.
pub(super) fn kind_name(kind: u8) -> &'static str {
    match kind {
        ACCEPTED => "accepted",
        ATTACHED => "attached",
        AUTHORIZED => "authorized",
        REJECTED => "rejected",
        DISPATCHED => "dispatched",
        DISPATCH_FAILED => "dispatch_failed",
        OUTCOME => "outcome",
        DELIVERED => "delivered",
        DELIVERY_FAILED => "delivery_failed",
        _ => "cancelled",
    }
}

/// Whether the kind number is `accepted`'s.
pub(super) fn is_accepted(kind: u8) -> bool {
    kind == ACCEPTED
}

/// An owned copy of an event.
pub(super) fn to_event(h: &Head<'_>, store: &Store) -> Event {
    let kind = match kind(h, store) {
        super::KindRef::Accepted(a) => EventKind::Accepted(Box::new(Acceptance {
            call: a.call.to_call_ref(),
            action: a.action.clone(),
            fingerprint: a.fingerprint.map(|f| f.to_owned()),
            action_class: a.action_class.map(Into::into),
            idempotency_key: a.idempotency_key.map(str::to_string),
        })),
        super::KindRef::Attached { call, recovery } => EventKind::Attached {
            call: Box::new(call.to_call_ref()),
            recovery,
        },
        super::KindRef::Authorized { decision, approver } => EventKind::Authorized {
            decision: decision.into(),
            approver: approver.map(|a| Box::new(a.to_string())),
        },
        super::KindRef::Rejected { reason } => EventKind::Rejected {
            reason: reason.into(),
        },
        super::KindRef::Dispatched { idempotency_key } => EventKind::Dispatched {
            idempotency_key: idempotency_key.map(str::to_string),
        },
        super::KindRef::DispatchFailed { error } => EventKind::DispatchFailed {
            error: error.into(),
        },
        super::KindRef::Outcome {
            outcome,
            target_status,
            exit_status,
            error,
            result_reference,
            replayed,
            observed_via,
        } => EventKind::Outcome {
            outcome,
            target_status,
            exit_status,
            texts: OutcomeTexts::new(
                error.map(str::to_string),
                result_reference.map(str::to_string),
            ),
            replayed,
            observed_via,
        },
        super::KindRef::Delivered => EventKind::Delivered,
        super::KindRef::DeliveryFailed { error } => EventKind::DeliveryFailed {
            error: error.into(),
        },
        super::KindRef::Cancelled { by } => EventKind::Cancelled { by: by.into() },
    };
    let mut e = Event::new(h.at, kind, h.source).with_seq(h.seq);
    if let Some(a) = aux_of(h, store) {
        e.aux = super::Aux(Some(Box::new(a.clone())));
    }
    e
}

/// The unknown fields and facts of an event, if it has any.
pub(super) fn aux_of<'m>(h: &Head<'_>, store: &'m Store) -> Option<&'m AuxData> {
    h.aux.checked_sub(1).and_then(|k| store.aux.get(k as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Arguments, Layer, Link, Pairing, ReaderFacts};
    use serde_json::{Map, Value, json};

    fn t(secs: i64, nanos: u32) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, nanos).unwrap_or_default()
    }

    fn line(journal: JournalId, line: u32, offset: u64, len: u32) -> SourceRef {
        SourceRef::Line {
            journal,
            line,
            offset: LineOffset::new(offset),
            len,
        }
    }

    fn call(n: i64) -> CallRef {
        CallRef {
            call_id: Some(format!("call-{n}")),
            session_id: Some("ses_1".into()),
            jsonrpc_id: Some(if n % 2 == 0 {
                JsonRpcId::Num(n)
            } else {
                JsonRpcId::Str(format!("r-{n}"))
            }),
            mcp_session_id: Some("mcp-é".into()),
            transport: None,
        }
    }

    fn accepted(fingerprint: Option<&str>, action: Value) -> EventKind {
        let Value::Object(action) = action else {
            return EventKind::Delivered;
        };
        EventKind::Accepted(Box::new(Acceptance {
            call: call(-7),
            action: ActionRecord::from_map(action),
            fingerprint: fingerprint.map(WrittenFingerprint::new),
            action_class: Some("irreversible".into()),
            idempotency_key: Some("key \u{1F511}".into()),
        }))
    }

    /// Events of every kind, with every field set and unset, every source,
    /// times and numbers at their edges, and differences from the first
    /// event that are negative, zero and large.
    fn every_kind() -> Vec<Event> {
        let hex = "cebf9490e9f470331183094a8deb02ef8c2753011bce94ace6bc6d899bcbddc3";
        let action = json!({"tool": "deploy", "actor": "a", "arguments": {"n": 1}});
        let tree = json!({"tool": "deploy", "arguments": {"ratio": 0.5}});
        let mut extra = Map::new();
        extra.insert("note".into(), json!({"kept": [1, "two"]}));
        let facts = ReaderFacts {
            pairing: Pairing::ByPosition {
                why: "ids repeat".into(),
                uncertain: true,
            },
            arguments: Arguments::Partly("a preview".into()),
            inferred: Some("from the response".into()),
            request: Some(line(2, 9, 90, 3)),
            notes: vec![("origin", json!("cli"))],
            layer: Some(Layer::Server),
            links: vec![Link::Correlation("c-1".into())],
            dispatch_unrecorded: true,
        };
        let outcome = |o, status, exit, error: Option<&str>, reference: Option<&str>, via| {
            EventKind::Outcome {
                outcome: o,
                target_status: status,
                exit_status: exit,
                texts: OutcomeTexts::new(error.map(Into::into), reference.map(Into::into)),
                replayed: status == Some(200),
                observed_via: via,
            }
        };
        vec![
            Event::new(
                t(1_780_000_000, 7_000_000),
                accepted(Some(&format!("hmac-sha256:{hex}")), action.clone()),
                line(3, 1_000, 1 << 39, 412),
            )
            .with_seq(Some(5)),
            Event::new(
                t(1_779_999_000, 123_456_000),
                accepted(Some(&format!("sha256:{hex}")), tree),
                line(3, 10, 0, 0),
            )
            .with_seq(Some(u64::MAX))
            .with_extra(extra),
            Event::new(
                t(1_780_000_001, 1),
                accepted(Some("sha256:ABC"), action),
                SourceRef::Row {
                    journal: JournalId::MAX,
                    table: Table::ObservabilitySpans,
                    row: u32::MAX,
                },
            )
            .with_facts(facts),
            Event::new(
                t(-62_135_596_800, 0),
                EventKind::Attached {
                    call: Box::new(call(4)),
                    recovery: Recovery::AwaitingReview,
                },
                line(0, u32::MAX, LineOffset::MAX, u32::MAX),
            )
            .with_seq(Some(0)),
            Event::new(
                t(253_402_300_799, 999_999_999),
                EventKind::Authorized {
                    decision: "per_use_approval".into(),
                    approver: Some(Box::new("auth0|user-1".into())),
                },
                line(3, 1, 0, 1),
            ),
            Event::new(
                t(1_780_000_000, 1_500_000_000),
                EventKind::Authorized {
                    decision: "session_grant".into(),
                    approver: None,
                },
                SourceRef::Row {
                    journal: 1,
                    table: Table::Events,
                    row: 1,
                },
            ),
            Event::new(
                t(1_780_000_002, 0),
                EventKind::Rejected {
                    reason: String::new(),
                },
                line(3, 1_001, 1 << 39, 5),
            ),
            Event::new(
                t(1_780_000_002, 0),
                EventKind::Dispatched {
                    idempotency_key: None,
                },
                line(3, 1_002, 1 << 39, 5),
            ),
            Event::new(
                t(1_780_000_002, 0),
                EventKind::Dispatched {
                    idempotency_key: Some(String::new()),
                },
                line(3, 1_002, 1 << 39, 5),
            ),
            Event::new(
                t(1_780_000_003, 0),
                EventKind::DispatchFailed {
                    error: "ConnectError: \u{0}\u{1b}[31m".into(),
                },
                line(3, 1_003, 1 << 39, 5),
            ),
            Event::new(
                t(1_780_000_004, 0),
                outcome(
                    OutcomeKind::Success,
                    Some(200),
                    None,
                    None,
                    Some("r-1"),
                    ObservedVia::LateResponse,
                ),
                line(3, 1_004, 1 << 39, 5),
            ),
            Event::new(
                t(1_780_000_004, 0),
                outcome(
                    OutcomeKind::Failure,
                    Some(u16::MAX),
                    Some(i64::MIN),
                    Some("boom"),
                    None,
                    ObservedVia::StatusQuery,
                ),
                line(3, 1_004, 1 << 39, 5),
            ),
            Event::new(
                t(1_780_000_004, 0),
                outcome(
                    OutcomeKind::Unknown,
                    None,
                    Some(i64::MAX),
                    Some(""),
                    Some(""),
                    ObservedVia::DurableMarker,
                ),
                line(3, 1_004, 1 << 39, 5),
            ),
            Event::new(
                t(1_780_000_004, 0),
                outcome(
                    OutcomeKind::NotExecuted,
                    None,
                    None,
                    None,
                    None,
                    ObservedVia::Response,
                ),
                line(3, 1_004, 1 << 39, 5),
            ),
            Event::new(t(1_780_000_005, 0), EventKind::Delivered, line(3, 1, 0, 1)),
            Event::new(
                t(1_780_000_006, 0),
                EventKind::DeliveryFailed {
                    error: "closed".into(),
                },
                line(3, 1, 0, 1),
            ),
            // Longer than a one-byte length says: 300 bytes of text.
            Event::new(
                t(1_780_000_006, 0),
                EventKind::DeliveryFailed {
                    error: "x".repeat(300),
                },
                line(3, 1, 0, 1),
            ),
            Event::new(
                t(1_780_000_007, 0),
                EventKind::Cancelled {
                    by: "client".into(),
                },
                line(3, 1, 0, 1),
            ),
        ]
    }

    /// Every event reads back as it was given, field for field, through
    /// the views and as a copy; the store holds each repeated text and
    /// each action stored as text once.
    #[test]
    fn every_event_reads_back_as_it_was_given() {
        let events = every_kind();
        let (mut store, mut interner) = (Store::default(), Interner::default());
        let p = Packed::of("act_é1", events.clone(), &mut interner, &mut store);
        let x = p.view(&store);
        assert_eq!(x.id(), "act_é1");
        assert_eq!(x.len(), events.len());
        assert!(has_aux(p.bytes()));
        assert_eq!(x.to_execution().events, events);
        // Any one event, found by passing over the ones before it.
        for (i, e) in events.iter().enumerate() {
            assert_eq!(
                x.get(i).map(|v| v.to_event()).as_ref(),
                Some(e),
                "event {i}"
            );
            let mut rest = x.events();
            rest.next();
            assert_eq!(
                rest.nth(i.saturating_sub(1)).map(|v| v.to_event()),
                events.get(i.max(1)).cloned()
            );
        }
        assert!(x.get(events.len()).is_none());
        let journals = |x: super::super::ExecutionRef<'_>| x.journals().collect::<Vec<_>>();
        assert_eq!(
            journals(x),
            events
                .iter()
                .map(|e| e.source.journal())
                .collect::<Vec<_>>()
        );
        assert!(x.events().nth(usize::MAX).is_none());
        for (e, v) in events.iter().zip(x.events()) {
            assert_eq!(v.at(), e.at);
            assert_eq!(v.seq(), e.seq());
            assert_eq!(v.source(), e.source);
            assert_eq!(v.name(), e.kind.name());
            assert_eq!(v.is_accepted(), matches!(e.kind, EventKind::Accepted(_)));
            assert_eq!(v.extra(), e.extra());
            assert_eq!(v.facts(), e.facts());
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                serde_json::to_string(e).unwrap()
            );
        }
        // The same action twice (as text): one record; the tree apart.
        assert_eq!(store.actions.len(), 2);
        let mut texts: Vec<&str> = store.texts.iter().map(|t| &**t).collect();
        texts.sort_unstable();
        assert_eq!(
            texts,
            [
                "irreversible",
                "mcp-é",
                "per_use_approval",
                "ses_1",
                "session_grant"
            ]
        );
        // A second execution reuses what the store holds.
        let q = Packed::of("act_2", events.clone(), &mut interner, &mut store);
        assert_eq!(store.actions.len(), 3, "a tree is never shared");
        assert_eq!(store.texts.len(), 5);
        assert_eq!(q.view(&store).to_execution().events, events);
        // So does a store indexed again (a model followed as it grows).
        let mut again = Interner::of(&store);
        let r = Packed::of("act_3", events.clone(), &mut again, &mut store);
        assert_eq!((store.actions.len(), store.texts.len()), (4, 5));
        assert_eq!(r.view(&store).to_execution().events, events);
    }

    /// Executions without unknown fields or facts say so in their header;
    /// an event added later keeps the count and the flag right.
    #[test]
    fn the_header_counts_events_and_marks_facts() {
        let (mut store, mut interner) = (Store::default(), Interner::default());
        let mut b = PackedBuf::new("x", 0);
        assert_eq!((count(b.bytes()), has_aux(b.bytes())), (0, false));
        b.push(
            Event::new(t(10, 0), EventKind::Delivered, line(0, 2, 20, 3)),
            &mut interner,
            &mut store,
        );
        assert_eq!((count(b.bytes()), has_aux(b.bytes())), (1, false));
        b.push(
            Event::new(t(9, 0), EventKind::Delivered, line(0, 1, 10, 3))
                .with_facts(ReaderFacts::inferred("why")),
            &mut interner,
            &mut store,
        );
        b.push(
            Event::new(t(11, 0), EventKind::Delivered, line(0, 3, 30, 3)),
            &mut interner,
            &mut store,
        );
        assert_eq!((count(b.bytes()), has_aux(b.bytes())), (3, true));
        let p = b.finish();
        assert_eq!(p.view(&store).len(), 3);
        // Sorted by time, stably, with the facts where they were.
        let sorted = p.clone().sorted_by_time();
        let x = sorted.view(&store);
        let ats: Vec<i64> = x.events().map(|e| e.at().timestamp()).collect();
        assert_eq!(ats, [9, 10, 11]);
        assert_eq!(
            x.events()
                .map(|e| e.source().position())
                .collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(
            x.first().map(|e| e.facts().inferred.clone()),
            Some(Some("why".into()))
        );
        // Already in order: kept as it is.
        assert_eq!(sorted.clone().sorted_by_time(), sorted);
        // Merged with another: one after the other, then sorted.
        let other = Packed::of(
            "y",
            vec![Event::new(
                t(10, 0),
                EventKind::Delivered,
                line(1, 7, 70, 3),
            )],
            &mut interner,
            &mut store,
        );
        let m = Packed::merged("x", [&p, &other]).sorted_by_time();
        let x = m.view(&store);
        assert_eq!(x.id(), "x");
        let seen: Vec<(i64, u16)> = x
            .events()
            .map(|e| (e.at().timestamp(), e.source().journal()))
            .collect();
        assert_eq!(seen, [(9, 0), (10, 0), (10, 1), (11, 0)]);
        // The journals of events of one journal, read from their tags; of
        // several, from the events.
        assert_eq!(p.view(&store).journals().collect::<Vec<_>>(), [0, 0, 0]);
        assert_eq!(x.journals().collect::<Vec<_>>(), [0, 0, 1, 0]);
    }

    /// Equal timestamps keep journal order when sorted.
    #[test]
    fn sorting_keeps_the_order_of_equal_times() {
        let (mut store, mut interner) = (Store::default(), Interner::default());
        let events: Vec<Event> = [(5, 1), (3, 2), (5, 3), (3, 4), (5, 5)]
            .into_iter()
            .map(|(s, l)| Event::new(t(s, 0), EventKind::Delivered, line(0, l, 0, 0)))
            .collect();
        let p = Packed::of("x", events.clone(), &mut interner, &mut store).sorted_by_time();
        let mut want = events;
        want.sort_by_key(|e| e.at);
        assert_eq!(p.view(&store).to_execution().events, want);
    }
}

//! A native line in RFC 8785 form read straight from its bytes
//! (docs/design.md §6.8): the scan that hashes it ([`raw_scan`]) has found
//! its top-level members as byte ranges, sorted, each name once, strings
//! escaped the canonical way, integers below 2^53. Its records are built
//! from those ranges, as [`super::parse_record`] would build them from the
//! parsed line: strings copied from the line (unescaped only when they hold
//! an escape), the `action` object's text kept as it is
//! ([`ActionRecord::from_canonical_json`]), times of the plain RFC 3339
//! shape read from their digits, integers from theirs. No value tree is
//! built but for the fields `extra` keeps.
//!
//! Whatever this path is not sure of (a line not in RFC 8785 form, an
//! execution snapshot, a field of a type the parse would refuse or convert,
//! a value it would reject) answers `None`, and the line is parsed as
//! before; so every record, note and bad-line message is the one the parse
//! gives (a test compares both ways on generated lines).

use super::fast::record::{Slot, plain_time, slot, unsigned};
use super::rawhash::{Member, RawLine, object_members, raw_scan};
use crate::model::{
    Acceptance, ActionRecord, CallRef, Event, EventKind, JsonRpcId, ObservedVia, OutcomeKind,
    OutcomeTexts, ProcessInfo, Record, Recovery, Session, SourceRef, WrittenFingerprint,
};
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use serde_json::{Map, Value};

/// What a line in RFC 8785 form holds, read from its bytes.
pub(super) struct Canonical {
    /// The scan's digest and the ranges of `prev_hash` and `hash`.
    pub raw: RawLine,
    /// The line's `seq` as the chain tracker takes it (a non-negative
    /// integer; `None` for anything else).
    pub seq: Option<u64>,
    /// The line's one record.
    pub record: Record,
}

/// Buffers reused from line to line on one thread.
#[derive(Default)]
pub(super) struct Scratch {
    members: Vec<Member>,
    nested: Vec<Member>,
}

/// Reads a line in RFC 8785 form into its record; `None` when the line is
/// not in that form or the full parse must decide (see the module).
pub(super) fn read(line: &[u8], source: SourceRef, scratch: &mut Scratch) -> Option<Canonical> {
    let text = std::str::from_utf8(line).ok()?;
    let raw = raw_scan(line, &mut scratch.members)?;
    let mut top = Top::new(text, &scratch.members)?;
    let seq = match top.peek(Slot::seq) {
        Some(Val::Num(n)) => unsigned(n.as_bytes()),
        _ => None,
    };
    let record = match top.take(Slot::kind)?.text()? {
        "event" => {
            let (execution_id, mut event) = event(&mut top, &mut scratch.nested, source)?;
            event.set_extra(top.extra(&scratch.members)?);
            Record::Event {
                execution_id,
                event,
            }
        }
        "session" => {
            let mut s = session(&mut top, &mut scratch.nested, source)?;
            s.extra = top.extra(&scratch.members)?;
            Record::Session(Box::new(s))
        }
        _ => return None,
    };
    Some(Canonical { raw, seq, record })
}

/// A value of a line in RFC 8785 form, by its JSON type (texts are slices
/// of the line).
#[derive(Clone, Copy)]
enum Val<'a> {
    Null,
    Bool(bool),
    /// A string, with its quotes.
    Str(&'a str),
    /// An integer (the only numbers the scan accepts).
    Num(&'a str),
    /// An object: its range in the line.
    Object((usize, usize)),
    Array,
}

impl<'a> Val<'a> {
    fn of(line: &'a str, (a, z): (usize, usize)) -> Option<Val<'a>> {
        let v = line.get(a..z)?;
        Some(match v.as_bytes().first()? {
            b'n' => Val::Null,
            b't' => Val::Bool(true),
            b'f' => Val::Bool(false),
            b'"' => Val::Str(v),
            b'{' => Val::Object((a, z)),
            b'[' => Val::Array,
            _ => Val::Num(v),
        })
    }

    /// A string's contents when it holds no escape.
    fn text(self) -> Option<&'a str> {
        match self {
            Val::Str(s) if memchr::memchr(b'\\', s.as_bytes()).is_none() => s.get(1..s.len() - 1),
            _ => None,
        }
    }

    /// The string `opt_str` makes of a string or a number (`None` for
    /// other types, which the full parse refuses).
    fn string(self) -> Option<String> {
        match self {
            Val::Str(s) => match self.text() {
                Some(t) => Some(t.to_owned()),
                None => serde_json::from_str(s).ok(),
            },
            // An integer in RFC 8785 form is written as serde_json writes
            // it back.
            Val::Num(n) => Some(n.to_owned()),
            _ => None,
        }
    }
}

/// `opt_str` of an accepted record's `fingerprint`, held as
/// [`WrittenFingerprint`] (a plain string read without a copy).
fn written_fingerprint(v: Option<Val<'_>>) -> Option<Option<WrittenFingerprint>> {
    match v {
        None | Some(Val::Null) => Some(None),
        Some(v) => match v.text() {
            Some(t) => Some(Some(WrittenFingerprint::new(t))),
            None => v.string().map(|s| Some(WrittenFingerprint::new(&s))),
        },
    }
}

/// `opt_str`: absent or `null` give `Some(None)`; `None` when the parse
/// would refuse the value.
fn opt_str(v: Option<Val<'_>>) -> Option<Option<String>> {
    match v {
        None | Some(Val::Null) => Some(None),
        Some(v) => v.string().map(Some),
    }
}

/// `req_str`.
fn req_str(v: Option<Val<'_>>) -> Option<String> {
    opt_str(v)?
}

/// `opt_u64` on an integer.
fn opt_u64(v: Option<Val<'_>>) -> Option<Option<u64>> {
    match v {
        None | Some(Val::Null) => Some(None),
        Some(Val::Num(n)) => unsigned(n.as_bytes()).map(Some),
        _ => None,
    }
}

/// `opt_i64` on an integer (the scan's integers fit).
fn opt_i64(v: Option<Val<'_>>) -> Option<Option<i64>> {
    match v {
        None | Some(Val::Null) => Some(None),
        Some(Val::Num(n)) => n.parse().ok().map(Some),
        _ => None,
    }
}

/// `opt_bool`.
fn opt_bool(v: Option<Val<'_>>) -> Option<bool> {
    match v {
        None | Some(Val::Null) => Some(false),
        Some(Val::Bool(b)) => Some(b),
        _ => None,
    }
}

/// `opt_time`: a string without escapes that is an RFC 3339 time.
fn opt_time(v: Option<Val<'_>>) -> Option<Option<DateTime<Utc>>> {
    match v {
        None | Some(Val::Null) => Some(None),
        Some(v) => time(v.text()?).map(Some),
    }
}

/// `req_time`.
fn req_time(v: Option<Val<'_>>) -> Option<DateTime<Utc>> {
    opt_time(v)?
}

/// An RFC 3339 time as `parse_time` reads it (chrono's
/// `parse_from_rfc3339`, in UTC): the plain shape gateways write
/// ([`plain_time`]) from its digits, anything else by chrono.
pub(super) fn time(t: &str) -> Option<DateTime<Utc>> {
    let b = t.as_bytes();
    if !plain_time(b) {
        return DateTime::parse_from_rfc3339(t)
            .ok()
            .map(|t| t.with_timezone(&Utc));
    }
    // `plain_time` checked every digit and separator, and the date.
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        b.get(r)?.iter().try_fold(0u32, |v, &d| {
            d.is_ascii_digit().then(|| v * 10 + u32::from(d - b'0'))
        })
    };
    let date = NaiveDate::from_ymd_opt(i32::try_from(num(0..4)?).ok()?, num(5..7)?, num(8..10)?)?;
    let mut i = 19;
    let mut nanos = 0u32;
    if b.get(i) == Some(&b'.') {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let scale = 10u32.pow(u32::try_from(9usize.checked_sub(digits)?).ok()?);
        nanos = num(i + 1..i + 1 + digits)? * scale;
        i += 1 + digits;
    }
    let naive = date.and_hms_nano_opt(num(11..13)?, num(14..16)?, num(17..19)?, nanos)?;
    let offset = match *b.get(i)? {
        b'Z' => 0,
        sign => {
            let secs = i64::from(num(i + 1..i + 3)? * 3600 + num(i + 4..i + 6)? * 60);
            if sign == b'-' { -secs } else { secs }
        }
    };
    Some(
        naive
            .checked_sub_signed(TimeDelta::seconds(offset))?
            .and_utc(),
    )
}

/// How many slots there are (a bit each in [`Top`]'s masks): the
/// top-level names a record takes are those `retrace verify`'s check looks
/// at ([`slot`]).
const SLOTS: usize = Slot::Count as usize;

/// A line's top-level members by slot, with the ones taken so far.
struct Top<'a> {
    line: &'a str,
    values: [(usize, usize); SLOTS],
    /// Slots present in the line.
    present: u64,
    /// Slots the record took.
    taken: u64,
    /// Whether the line has members no record takes.
    unknown: bool,
}

impl<'a> Top<'a> {
    fn new(line: &'a str, members: &[Member]) -> Option<Top<'a>> {
        let mut t = Top {
            line,
            values: [(0, 0); SLOTS],
            present: 0,
            taken: 0,
            unknown: false,
        };
        for m in members {
            match slot(line.as_bytes().get(m.key.0..m.key.1)?) {
                Some(s) => {
                    t.values[s as usize] = m.value;
                    t.present |= 1 << s as u8;
                }
                None => t.unknown = true,
            }
        }
        Some(t)
    }

    /// The value in `s`, left for the record to take.
    fn peek(&self, s: Slot) -> Option<Val<'a>> {
        (self.present & (1 << s as u8) != 0)
            .then(|| Val::of(self.line, self.values[s as usize]))
            .flatten()
    }

    /// Takes the value in `s`, as the parse removes a field.
    fn take(&mut self, s: Slot) -> Option<Val<'a>> {
        self.taken |= 1 << s as u8;
        self.peek(s)
    }

    /// The members the record did not take, as `extra` keeps them (each
    /// parsed from its text: a line in RFC 8785 form has no repeated name
    /// and no integer a value cannot hold exactly); `None` when one cannot
    /// be read.
    fn extra(&self, members: &[Member]) -> Option<Map<String, Value>> {
        let mut out = Map::new();
        if !self.unknown && self.present & !self.taken == 0 {
            return Some(out);
        }
        for m in members {
            let name = self.line.get(m.key.0..m.key.1)?;
            if slot(name.as_bytes()).is_some_and(|s| self.taken & (1 << s as u8) != 0) {
                continue;
            }
            let v = serde_json::from_str(self.line.get(m.value.0..m.value.1)?).ok()?;
            out.insert(name.to_owned(), v);
        }
        Some(out)
    }
}

/// The members of a nested object, by name (a handful: looked up one by
/// one).
struct Nested<'a, 'm> {
    line: &'a str,
    members: &'m [Member],
}

impl<'a> Nested<'a, '_> {
    fn get(&self, key: &str) -> Option<Val<'a>> {
        let m = self
            .members
            .iter()
            .find(|m| self.line.as_bytes().get(m.key.0..m.key.1) == Some(key.as_bytes()))?;
        Val::of(self.line, m.value)
    }
}

/// `parse_session`.
fn session(top: &mut Top<'_>, nested: &mut Vec<Member>, source: SourceRef) -> Option<Session> {
    let session_id = req_str(top.take(Slot::session_id))?;
    let process = match top.take(Slot::process) {
        None | Some(Val::Null) => None,
        Some(Val::Object(r)) => {
            object_members(top.line.as_bytes(), r, nested)?;
            let p = Nested {
                line: top.line,
                members: nested,
            };
            Some(ProcessInfo {
                pid: opt_i64(p.get("pid"))?,
                name: opt_str(p.get("name"))?,
                started_at: opt_time(p.get("started_at"))?,
                instance: None,
            })
        }
        Some(_) => return None,
    };
    Some(Session {
        session_id,
        actor: opt_str(top.take(Slot::actor))?,
        process,
        mcp_session_id: opt_str(top.take(Slot::mcp_session_id))?,
        client: opt_str(top.take(Slot::client))?,
        authorization: opt_str(top.take(Slot::authorization))?,
        started_at: opt_time(top.take(Slot::started_at))?,
        ended_at: opt_time(top.take(Slot::ended_at))?,
        end_reason: opt_str(top.take(Slot::end_reason))?,
        extra: Map::new(),
        source,
    })
}

/// `parse_call`: the `call` object (required).
fn call(top: &mut Top<'_>, nested: &mut Vec<Member>) -> Option<CallRef> {
    let Val::Object(r) = top.take(Slot::call)? else {
        return None;
    };
    object_members(top.line.as_bytes(), r, nested)?;
    let c = Nested {
        line: top.line,
        members: nested,
    };
    let jsonrpc_id = match c.get("jsonrpc_id") {
        None | Some(Val::Null) => None,
        Some(Val::Num(n)) => Some(JsonRpcId::Num(n.parse().ok()?)),
        Some(v @ Val::Str(_)) => Some(JsonRpcId::Str(v.string()?)),
        Some(_) => return None,
    };
    Some(CallRef {
        call_id: opt_str(c.get("call_id"))?,
        session_id: opt_str(c.get("session_id"))?.map(Into::into),
        jsonrpc_id,
        mcp_session_id: opt_str(c.get("mcp_session_id"))?.map(Into::into),
        transport: opt_str(c.get("transport"))?.map(Into::into),
    })
}

/// `parse_event` (its `extra` is left to the caller).
fn event(
    top: &mut Top<'_>,
    nested: &mut Vec<Member>,
    source: SourceRef,
) -> Option<(String, Event)> {
    let seq = opt_u64(top.take(Slot::seq))?;
    let at = req_time(top.take(Slot::at))?;
    let execution_id = req_str(top.take(Slot::execution_id))?;
    let name = req_str(top.take(Slot::event))?;
    let kind = match name.as_str() {
        "accepted" => {
            let call = call(top, nested)?;
            let Val::Object((a, z)) = top.take(Slot::action)? else {
                return None;
            };
            EventKind::Accepted(Box::new(Acceptance {
                call,
                action: ActionRecord::from_canonical_json(top.line.get(a..z)?)?,
                fingerprint: written_fingerprint(top.take(Slot::fingerprint))?,
                action_class: opt_str(top.take(Slot::action_class))?.map(Into::into),
                idempotency_key: opt_str(top.take(Slot::idempotency_key))?,
            }))
        }
        "attached" => EventKind::Attached {
            call: Box::new(call(top, nested)?),
            recovery: Recovery::parse(&req_str(top.take(Slot::recovery))?)?,
        },
        "authorized" => EventKind::Authorized {
            decision: req_str(top.take(Slot::decision))?.into(),
            approver: opt_str(top.take(Slot::approver))?.map(Box::new),
        },
        "rejected" => EventKind::Rejected {
            reason: req_str(top.take(Slot::reason))?,
        },
        "dispatched" => EventKind::Dispatched {
            idempotency_key: opt_str(top.take(Slot::idempotency_key))?,
        },
        "dispatch_failed" => EventKind::DispatchFailed {
            error: opt_str(top.take(Slot::error))?.unwrap_or_default(),
        },
        "outcome" => outcome(top)?,
        "delivered" => EventKind::Delivered,
        "delivery_failed" => EventKind::DeliveryFailed {
            error: opt_str(top.take(Slot::error))?.unwrap_or_default(),
        },
        "cancelled" => EventKind::Cancelled {
            by: opt_str(top.take(Slot::by))?.unwrap_or_else(|| "client".into()),
        },
        _ => return None,
    };
    Some((execution_id, Event::new(at, kind, source).with_seq(seq)))
}

/// `parse_outcome`.
fn outcome(top: &mut Top<'_>) -> Option<EventKind> {
    let outcome = OutcomeKind::parse(&req_str(top.take(Slot::outcome))?)?;
    let observed_via = match opt_str(top.take(Slot::observed_via))? {
        None => ObservedVia::Response,
        Some(v) => ObservedVia::parse(&v)?,
    };
    let target_status = match opt_u64(top.take(Slot::target_status))? {
        None => None,
        Some(s) => Some(u16::try_from(s).ok().filter(|s| (100..=599).contains(s))?),
    };
    Some(EventKind::Outcome {
        outcome,
        target_status,
        exit_status: opt_i64(top.take(Slot::exit_status))?,
        texts: OutcomeTexts::new(
            opt_str(top.take(Slot::error))?,
            opt_str(top.take(Slot::result_reference))?,
        ),
        replayed: opt_bool(top.take(Slot::replayed))?,
        observed_via,
    })
}

#[cfg(test)]
mod tests;

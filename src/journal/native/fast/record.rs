//! The fields of a native line in RFC 8785 form checked from its bytes
//! (docs/design.md §6.8), the way [`super::super::parse_record`] would take
//! them: what the fast verify path needs to know that the full read would
//! accept the line, without building its records.

use super::super::rawhash::{Member, object_members};
use crate::model::{ObservedVia, OutcomeKind, Recovery};

/// An integer the scan accepted (digits, maybe a minus sign; at most 16
/// digits) as a `u64`; `None` when negative.
pub(in crate::journal::native) fn unsigned(n: &[u8]) -> Option<u64> {
    if n.first() == Some(&b'-') {
        return None;
    }
    n.iter().try_fold(0u64, |v, &d| {
        d.is_ascii_digit().then(|| v * 10 + u64::from(d - b'0'))
    })
}

/// Whether `t` is an RFC 3339 time of the plain shape gateways write,
/// `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±HH:MM)`, with a real date and no leap
/// second: every such time is one chrono's `parse_from_rfc3339` (what the
/// reader uses) takes. False for anything else, which chrono then judges.
pub(in crate::journal::native) fn plain_time(t: &[u8]) -> bool {
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        t.get(r)?.iter().try_fold(0u32, |v, &d| {
            d.is_ascii_digit().then(|| v * 10 + u32::from(d - b'0'))
        })
    };
    let sep = |i: usize, c: u8| t.get(i) == Some(&c);
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(sec)) = (
        num(0..4),
        num(5..7),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
    ) else {
        return false;
    };
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return false;
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if y == 0 || d == 0 || d > days || h > 23 || mi > 59 || sec > 59 {
        return false;
    }
    let mut i = 19;
    if sep(i, b'.') {
        let digits = t[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=9).contains(&digits) {
            return false;
        }
        i += 1 + digits;
    }
    match t.get(i..) {
        Some(b"Z") => true,
        Some(&[s, _, _, b':', _, _]) if s == b'+' || s == b'-' => {
            matches!((num(i + 1..i + 3), num(i + 4..i + 6)), (Some(oh), Some(om)) if oh <= 23 && om <= 59)
        }
        _ => false,
    }
}

/// A value of a line in RFC 8785 form, by its JSON type.
#[derive(Clone, Copy)]
pub(super) enum V<'a> {
    Absent,
    Null,
    Bool,
    /// A string, with its quotes.
    Str(&'a [u8]),
    /// An integer (the only numbers the scan accepts).
    Num(&'a [u8]),
    Object((usize, usize)),
    Array,
}

impl<'a> V<'a> {
    pub(super) fn of(line: &'a [u8], (a, z): (usize, usize)) -> V<'a> {
        match line[a] {
            b'n' => V::Null,
            b't' | b'f' => V::Bool,
            b'"' => V::Str(&line[a..z]),
            b'{' => V::Object((a, z)),
            b'[' => V::Array,
            _ => V::Num(&line[a..z]),
        }
    }

    /// Taken by `opt_str` (absent, null, a string or a number).
    pub(super) fn opt_str(self) -> Option<()> {
        matches!(self, V::Absent | V::Null | V::Str(_) | V::Num(_)).then_some(())
    }

    /// Taken by `req_str` (a string or a number).
    pub(super) fn req_str(self) -> Option<()> {
        matches!(self, V::Str(_) | V::Num(_)).then_some(())
    }

    /// A string's bytes when it has no escapes (`None` otherwise: the
    /// full parse decides).
    pub(super) fn raw(self) -> Option<&'a [u8]> {
        match self {
            V::Str(s) if memchr::memchr(b'\\', s).is_none() => Some(&s[1..s.len() - 1]),
            _ => None,
        }
    }

    /// [`V::raw`] as text.
    pub(super) fn text(self) -> Option<&'a str> {
        std::str::from_utf8(self.raw()?).ok()
    }

    /// A required RFC 3339 time (`req_time`).
    pub(super) fn req_time(self) -> Option<()> {
        let raw = self.raw()?;
        if plain_time(raw) {
            return Some(());
        }
        chrono::DateTime::parse_from_rfc3339(std::str::from_utf8(raw).ok()?)
            .ok()
            .map(drop)
    }

    /// An optional RFC 3339 time (`opt_time`).
    pub(super) fn opt_time(self) -> Option<()> {
        match self {
            V::Absent | V::Null => Some(()),
            v => v.req_time(),
        }
    }

    /// Taken by `opt_u64`, read as an integer.
    pub(super) fn opt_u64(self) -> Option<Option<u64>> {
        match self {
            V::Absent | V::Null => Some(None),
            V::Num(n) => unsigned(n).map(Some),
            _ => None,
        }
    }

    /// Taken by `opt_i64` (integers the scan accepts fit).
    pub(super) fn opt_i64(self) -> Option<()> {
        matches!(self, V::Absent | V::Null | V::Num(_)).then_some(())
    }

    /// Taken by `opt_bool`.
    pub(super) fn opt_bool(self) -> Option<()> {
        matches!(self, V::Absent | V::Null | V::Bool).then_some(())
    }

    /// A required object (`opt_object` then present).
    pub(super) fn object(self) -> Option<(usize, usize)> {
        match self {
            V::Object(r) => Some(r),
            _ => None,
        }
    }
}

/// The members of one object of a line, by name.
struct Fields<'a> {
    line: &'a [u8],
    members: &'a [Member],
}

impl<'a> Fields<'a> {
    /// The value of `key` (a nested object's few members are looked up
    /// one by one).
    pub(super) fn get(&self, key: &[u8]) -> V<'a> {
        self.members
            .iter()
            .find(|m| &self.line[m.key.0..m.key.1] == key)
            .map_or(V::Absent, |m| V::of(self.line, m.value))
    }
}

/// The top-level names [`readable`] looks at, each given a slot in
/// [`Top`] in one pass over the members.
macro_rules! top_names {
    ($($slot:ident = $name:literal),* $(,)?) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        #[repr(usize)]
        pub(in crate::journal::native) enum Slot { $($slot),*, Count }
        /// The slot of a top-level name, if [`readable`] looks at it.
        pub(in crate::journal::native) fn slot(name: &[u8]) -> Option<Slot> {
            match name {
                $($name => Some(Slot::$slot),)*
                _ => None,
            }
        }
    };
}

top_names! {
    kind = b"kind",
    seq = b"seq",
    at = b"at",
    execution_id = b"execution_id",
    event = b"event",
    call = b"call",
    action = b"action",
    fingerprint = b"fingerprint",
    action_class = b"action_class",
    idempotency_key = b"idempotency_key",
    recovery = b"recovery",
    decision = b"decision",
    approver = b"approver",
    reason = b"reason",
    error = b"error",
    outcome = b"outcome",
    observed_via = b"observed_via",
    target_status = b"target_status",
    exit_status = b"exit_status",
    result_reference = b"result_reference",
    replayed = b"replayed",
    by = b"by",
    session_id = b"session_id",
    process = b"process",
    actor = b"actor",
    mcp_session_id = b"mcp_session_id",
    client = b"client",
    authorization = b"authorization",
    started_at = b"started_at",
    ended_at = b"ended_at",
    end_reason = b"end_reason",
}

/// A line's top-level members that [`readable`] looks at, by slot.
pub(super) struct Top<'a> {
    line: &'a [u8],
    values: [Option<(usize, usize)>; Slot::Count as usize],
}

impl<'a> Top<'a> {
    pub(super) fn new(line: &'a [u8], members: &[Member]) -> Top<'a> {
        let mut values = [None; Slot::Count as usize];
        for m in members {
            if let Some(s) = slot(&line[m.key.0..m.key.1]) {
                values[s as usize] = Some(m.value);
            }
        }
        Top { line, values }
    }

    pub(super) fn get(&self, s: Slot) -> V<'a> {
        self.values[s as usize].map_or(V::Absent, |r| V::of(self.line, r))
    }
}

/// How many records [`super::parse_record`] makes of the line (its members
/// in `f`), when it surely reads them without an error; `None` when the
/// full parse must decide. Session lines and events are checked here;
/// execution snapshots, and anything unusual, are left to the parse.
pub(super) fn readable(f: &Top<'_>, nested: &mut Vec<Member>) -> Option<u64> {
    match f.get(Slot::kind).raw()? {
        b"event" => event(f, nested).map(|()| 1),
        b"session" => session(f, nested).map(|()| 1),
        _ => None,
    }
}

/// What `parse_session` demands.
pub(super) fn session(f: &Top<'_>, nested: &mut Vec<Member>) -> Option<()> {
    f.get(Slot::session_id).req_str()?;
    match f.get(Slot::process) {
        V::Absent | V::Null => {}
        v => {
            object_members(f.line, v.object()?, nested)?;
            let p = Fields {
                line: f.line,
                members: nested,
            };
            p.get(b"pid").opt_i64()?;
            p.get(b"name").opt_str()?;
            p.get(b"started_at").opt_time()?;
        }
    }
    for k in [
        Slot::actor,
        Slot::mcp_session_id,
        Slot::client,
        Slot::authorization,
        Slot::end_reason,
    ] {
        f.get(k).opt_str()?;
    }
    f.get(Slot::started_at).opt_time()?;
    f.get(Slot::ended_at).opt_time()
}

/// What `parse_call` demands of `call`.
pub(super) fn call(f: &Top<'_>, nested: &mut Vec<Member>) -> Option<()> {
    object_members(f.line, f.get(Slot::call).object()?, nested)?;
    let c = Fields {
        line: f.line,
        members: nested,
    };
    match c.get(b"jsonrpc_id") {
        V::Absent | V::Null | V::Str(_) | V::Num(_) => {}
        _ => return None,
    }
    for k in [
        &b"call_id"[..],
        b"session_id",
        b"mcp_session_id",
        b"transport",
    ] {
        c.get(k).opt_str()?;
    }
    Some(())
}

/// What `parse_event` demands.
pub(super) fn event(f: &Top<'_>, nested: &mut Vec<Member>) -> Option<()> {
    f.get(Slot::seq).opt_u64()?;
    f.get(Slot::at).req_time()?;
    f.get(Slot::execution_id).req_str()?;
    match f.get(Slot::event).raw()? {
        b"accepted" => {
            call(f, nested)?;
            f.get(Slot::action).object()?;
            for k in [Slot::fingerprint, Slot::action_class, Slot::idempotency_key] {
                f.get(k).opt_str()?;
            }
        }
        b"attached" => {
            call(f, nested)?;
            Recovery::parse(f.get(Slot::recovery).text()?)?;
        }
        b"authorized" => {
            f.get(Slot::decision).req_str()?;
            f.get(Slot::approver).opt_str()?;
        }
        b"rejected" => f.get(Slot::reason).req_str()?,
        b"dispatched" => f.get(Slot::idempotency_key).opt_str()?,
        b"dispatch_failed" | b"delivery_failed" => f.get(Slot::error).opt_str()?,
        b"outcome" => {
            OutcomeKind::parse(f.get(Slot::outcome).text()?)?;
            match f.get(Slot::observed_via) {
                V::Absent | V::Null => {}
                v => {
                    ObservedVia::parse(v.text()?)?;
                }
            }
            if let Some(s) = f.get(Slot::target_status).opt_u64()? {
                (100..=599).contains(&s).then_some(())?;
            }
            f.get(Slot::exit_status).opt_i64()?;
            f.get(Slot::error).opt_str()?;
            f.get(Slot::result_reference).opt_str()?;
            f.get(Slot::replayed).opt_bool()?;
        }
        b"delivered" => {}
        b"cancelled" => f.get(Slot::by).opt_str()?,
        _ => return None,
    }
    Some(())
}

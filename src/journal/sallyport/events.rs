//! Decrypted Sallyport events as executions and sessions: intent and
//! result rows paired into one call, refusals, session lifecycle rows.

use crate::journal::exchange::{self, Answer, Authorization, Call, Dispatch, End, Pending};
use crate::journal::fields::parse_time;
use crate::journal::{BadLine, ReadCtx};
use crate::model::{
    ActionRecord, Arguments, CallRef, OutcomeKind, ProcessInfo, Record, Session, SourceRef,
};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, VecDeque};

/// Events decoded from the sealed rows, paired into executions.
pub(super) struct Events {
    label: String,
    scope: String,
    /// Intent rows waiting for their result row, by pairing key.
    pending: HashMap<Vec<String>, VecDeque<Pending>>,
    /// Sessions by key, in order of first sight; emitted at the end, when
    /// their end rows have been read.
    sessions: Vec<Session>,
    session_index: HashMap<String, usize>,
    /// Sealed rows read.
    pub(super) sealed: u64,
    /// Sealed rows that did not open with the audit identity.
    pub(super) undecryptable: u64,
    lifecycle: u64,
}

fn st(m: &Map<String, Value>, k: &str) -> String {
    m.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

/// `"<pid>:<start ns>"` → the process it names.
fn process_of(key: &str) -> Option<ProcessInfo> {
    let (pid, ns) = key.split_once(':')?;
    let pid: i64 = pid.parse().ok()?;
    let ns: i64 = ns.parse().ok()?;
    Some(ProcessInfo {
        pid: Some(pid),
        name: None,
        started_at: Some(Utc.timestamp_nanos(ns)),
        instance: None,
    })
}

fn authorization(decision: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match decision {
        "allow" | "allowlist-allow" => ("policy_allow", None),
        "session-allow" => ("session_grant", None),
        "session-approved" => ("session_grant", Some("user")),
        "call-approved" | "credential-provisioned" => ("per_use_approval", Some("user")),
        _ => return None,
    })
}

fn refusal(decision: &str, rule: &str) -> Option<String> {
    Some(match decision {
        "deny" => match rule {
            "vault.locked" => "vault_locked".into(),
            "vault.quarantined" => "vault_quarantined".into(),
            "" => "denied".into(),
            r => format!("denied ({r})"),
        },
        "ask→denied" | "credential-declined" => "denied".into(),
        "ask→timeout" => "approval_timeout".into(),
        _ => return None,
    })
}

impl Events {
    /// No event read yet, in the journal labelled `label`.
    pub(super) fn new(label: String) -> Events {
        Events {
            scope: format!("journal:{label}"),
            label,
            pending: HashMap::new(),
            sessions: Vec::new(),
            session_index: HashMap::new(),
            sealed: 0,
            undecryptable: 0,
            lifecycle: 0,
        }
    }

    /// The session of `key`, created at its first sight.
    fn session(&mut self, key: &str, at: DateTime<Utc>, source: SourceRef) -> &mut Session {
        let i = *self
            .session_index
            .entry(key.to_string())
            .or_insert_with(|| {
                self.sessions.push(Session {
                    session_id: key.to_string(),
                    process: process_of(key),
                    started_at: Some(at),
                    source,
                    ..Session::default()
                });
                self.sessions.len() - 1
            });
        &mut self.sessions[i]
    }

    /// Maps one decrypted event into executions and sessions.
    pub(super) fn event(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: Map<String, Value>,
        source: SourceRef,
    ) -> Result<(), BadLine> {
        let at = parse_time("ts", &st(&m, "ts"))?;
        let channel = st(&m, "channel");
        let tool = st(&m, "tool");
        let decision = st(&m, "decision");
        let target = st(&m, "target");
        let session = st(&m, "session");
        if channel == "session" || channel == "vault" || decision == "info" {
            self.lifecycle += 1;
            self.lifecycle_row(&m, &tool, &target, at, source);
            return Ok(());
        }
        if !session.is_empty() {
            self.session(&session, at, source);
        }
        let (base, intent) = match decision.strip_suffix(".start") {
            Some(b) => (b.to_string(), true),
            None => (decision.clone(), false),
        };
        let key = vec![
            st(&m, "identity"),
            channel.clone(),
            tool.clone(),
            target.clone(),
            st(&m, "args_preview"),
            session.clone(),
            base.clone(),
        ];
        let inner_seq = m
            .get("seq")
            .and_then(Value::as_u64)
            .unwrap_or(u64::from(source.position()));
        let id = || format!("sallyport:{}:{inner_seq}", self.label);
        if intent {
            let dispatch = Dispatch::WithRequest {
                inferred: Some("Sallyport writes the intent row as the call starts".into()),
            };
            let call = exchange::request(ctx, self.call(id(), &m, &base, at, source, dispatch));
            self.pending.entry(key).or_default().push_back(call);
            return Ok(());
        }
        if let Some(reason) = refusal(&base, &st(&m, "rule")) {
            let dispatch = Dispatch::Implied {
                why: "a refusal row: the call was not dispatched".into(),
                at_request: false,
            };
            let c = self.call(id(), &m, &base, at, source, dispatch);
            let mut a = Answer::new(at, source, End::Rejected { reason });
            a.extra = rule_extra(&m);
            exchange::exchange(ctx, c, Some(a));
            return Ok(());
        }
        // A result row: the outcome of the oldest matching intent.
        let call = match self.pending.get_mut(&key).and_then(VecDeque::pop_front) {
            Some(call) => call,
            None => {
                // No intent row (an older snapshot, or the intent row is
                // missing): the result alone stands for the call.
                let dispatch = Dispatch::Implied {
                    why: "no intent row: the result row stands alone".into(),
                    at_request: false,
                };
                exchange::request(ctx, self.call(id(), &m, &base, at, source, dispatch))
            }
        };
        let is_error = m.get("is_error").and_then(Value::as_bool) == Some(true);
        let outcome = if is_error {
            OutcomeKind::Failure
        } else {
            OutcomeKind::Success
        };
        let mut a = Answer::new(
            at,
            source,
            End::response(
                outcome,
                is_error.then(|| format!("{decision}: error")),
                Some(format!("row seq {inner_seq}")),
            ),
        );
        for k in ["bytes_out", "duration_ms", "recording", "host_key_fp"] {
            if let Some(v) = m
                .get(k)
                .filter(|v| !v.is_null() && **v != json!(0) && **v != json!(""))
            {
                a.extra.insert(k.into(), v.clone());
            }
        }
        call.answer(ctx, a);
        Ok(())
    }

    /// The call an event row stands for, authorized as its decision says.
    fn call(
        &self,
        id: String,
        m: &Map<String, Value>,
        base: &str,
        at: DateTime<Utc>,
        source: SourceRef,
        dispatch: Dispatch,
    ) -> Call {
        let session = st(m, "session");
        let action = json!({
            "actor": st(m, "identity"),
            "tool": st(m, "tool"),
            "channel": st(m, "channel"),
            "target": st(m, "target"),
            "arguments": {"args_preview": st(m, "args_preview")},
            "intent_scope": self.scope,
        });
        let call = CallRef {
            call_id: m.get("seq").map(|s| format!("row seq {s}")),
            session_id: (!session.is_empty()).then(|| session.into()),
            jsonrpc_id: None,
            mcp_session_id: None,
            transport: Some(format!("sallyport:{}", st(m, "channel")).into()),
        };
        let mut c = Call::new(
            id,
            at,
            call,
            ActionRecord::from_map(action.as_object().cloned().unwrap_or_default()),
            source,
            dispatch,
        );
        c.facts.arguments = Arguments::Partly(
            "Sallyport keeps an argument preview clipped to 256 bytes, so long calls that differ late look alike".into(),
        );
        c.facts.notes = m
            .get("origin")
            .map(|o| ("origin", o.clone()))
            .into_iter()
            .collect();
        c.authorization = authorization(base).map(|(decision, approver)| Authorization {
            decision: decision.into(),
            approver: approver.map(str::to_string),
            extra: rule_extra(m),
        });
        c
    }

    fn lifecycle_row(
        &mut self,
        m: &Map<String, Value>,
        tool: &str,
        target: &str,
        at: DateTime<Utc>,
        source: SourceRef,
    ) {
        let reason = match tool {
            "session.ended" => {
                // "<name>: N calls[, reason]"
                let p = st(m, "args_preview");
                Some(
                    p.split_once(", ")
                        .map(|(_, r)| r.to_string())
                        .unwrap_or_else(|| "exited".into()),
                )
            }
            "session.revoked" => Some("revoked".to_string()),
            "session.orphaned" => Some("orphaned: no end row before the app stopped".to_string()),
            _ => None,
        };
        let Some(end_reason) = reason else {
            return;
        };
        if target.is_empty() {
            return;
        }
        let origin = m.get("origin");
        let mut process = process_of(target).unwrap_or_default();
        process.name = origin
            .and_then(|o| o.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let started_at = m
            .get("duration_ms")
            .and_then(Value::as_i64)
            .filter(|d| *d > 0)
            .and_then(|d| crate::journal::started_before(at, d as f64, "duration_ms").ok());
        let actor = origin.and_then(|o| {
            o.get("signedBy")
                .or_else(|| o.get("app"))
                .and_then(Value::as_str)
                .map(|s| format!("signed-process:{s}"))
        });
        let s = self.session(target, at, source);
        if let Some(o) = origin {
            s.extra.insert("origin".into(), o.clone());
        }
        s.process = Some(ProcessInfo {
            name: process
                .name
                .or_else(|| s.process.as_ref().and_then(|p| p.name.clone())),
            ..process
        });
        s.actor = actor.or(s.actor.take());
        if let Some(t) = started_at {
            s.started_at = Some(t);
        }
        s.ended_at = Some(at);
        s.end_reason = Some(end_reason);
        // The end row is the evidence for the run as a whole.
        s.source = source;
    }

    /// Emits the sessions and notes what was left unpaired or unread.
    pub(super) fn finish(self, ctx: &mut ReadCtx<'_>, decrypting: bool) {
        for s in self.sessions {
            ctx.emit(Record::Session(Box::new(s)));
        }
        if !decrypting && self.sealed > 0 {
            ctx.note(format!(
                "{} sealed event(s) not read: the events are encrypted; give --audit-identity (the exported audit identity) to read them. The chain was verified without it.",
                self.sealed
            ));
        }
        if self.undecryptable > 0 {
            ctx.note(format!(
                "{} row(s) did not decrypt with the audit identity given",
                self.undecryptable
            ));
        }
        let mut open: Vec<u32> = self
            .pending
            .values()
            .flatten()
            .map(|p| p.source().position())
            .collect();
        open.sort_unstable();
        if !open.is_empty() {
            ctx.note(format!(
                "{} intent row(s) without a result row (lines {}): outcome unknown",
                open.len(),
                open.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if self.lifecycle > 0 {
            ctx.note(format!(
                "{} session or vault lifecycle row(s)",
                self.lifecycle
            ));
        }
    }
}

fn rule_extra(m: &Map<String, Value>) -> Map<String, Value> {
    let mut x = Map::new();
    if let Some(r) = m
        .get("rule")
        .filter(|r| r.as_str().is_some_and(|s| !s.is_empty()))
    {
        x.insert("rule".into(), r.clone());
    }
    x
}

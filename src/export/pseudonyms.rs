//! Every original a report may show, registered in a fixed order so that
//! `--anonymize` numbers pseudonyms the same way on every run.

use super::anonymize::{Class, Pseudonyms};
use crate::model::{Acceptance, CallRef, EventKind, JsonRpcId};
use crate::query::words::is_vocabulary;
use crate::query::{ExecIdx, GroupRef, Investigation};
use crate::review::CaseContext;
use serde_json::Value;

pub(super) const PLACEHOLDERS: [&str; 2] = ["unknown", "unscoped"];

/// Registers every original a report about `groups` may show, in a fixed
/// order, so that pseudonyms are numbered the same way on every run.
pub(super) fn collect(
    inv: &Investigation,
    groups: &[GroupRef<'_>],
    case: &CaseContext,
) -> Pseudonyms {
    let mut p = Pseudonyms::new();
    for j in inv.journals() {
        p.register(Class::File, &j.name);
        if let Some(base) = std::path::Path::new(&j.name).file_name() {
            p.register(Class::File, &base.to_string_lossy());
        }
    }
    if let Some(n) = case.name() {
        p.register(Class::File, &n);
    }
    let mut all_groups: Vec<GroupRef<'_>> = groups.to_vec();
    all_groups.extend(inv.all_groups());
    for g in all_groups {
        p.register(Class::Group, g.id());
        p.register(Class::Fingerprint, g.fingerprint());
        if !PLACEHOLDERS.contains(&g.actor()) {
            p.register(Class::Actor, g.actor());
        }
        if !PLACEHOLDERS.contains(&g.intent_scope()) {
            p.register(Class::Scope, g.intent_scope());
        }
        if let Some(t) = g.target() {
            p.register(Class::Target, t);
        }
        for x in g.executions() {
            collect_execution(&mut p, inv, x);
        }
    }
    for d in &case.decisions {
        p.register(Class::Execution, &d.payload.execution_id);
        p.register(Class::Person, &d.payload.reviewer);
        p.register(Class::Text, &d.payload.note);
    }
    for e in &case.entries {
        for k in ["author", "text", "label"] {
            if let Some(s) = e.payload.get(k).and_then(Value::as_str) {
                let class = if k == "author" {
                    Class::Person
                } else {
                    Class::Text
                };
                p.register(class, s);
            }
        }
    }
    p
}

fn collect_call(p: &mut Pseudonyms, inv: &Investigation, c: &CallRef) {
    if let Some(s) = &c.call_id {
        p.register(Class::Call, s);
    }
    if let Some(s) = &c.session_id {
        p.register(Class::Session, s);
        if let Some(sess) = inv.session_by_id(s) {
            if let Some(a) = &sess.actor {
                p.register(Class::Actor, a);
            }
            if let Some(m) = &sess.mcp_session_id {
                p.register(Class::McpSession, m);
            }
            if let Some(pr) = &sess.process {
                if let Some(pid) = pr.pid {
                    p.register(Class::Pid, &pid.to_string());
                }
                if let Some(n) = &pr.name {
                    p.register(Class::Process, n);
                }
            }
            if let Some(c) = &sess.client {
                p.register(Class::Client, c);
            }
        }
    }
    if let Some(s) = &c.mcp_session_id {
        p.register(Class::McpSession, s);
    }
    if let Some(id) = &c.jsonrpc_id {
        let s = match id {
            JsonRpcId::Num(n) => n.to_string(),
            JsonRpcId::Str(s) => s.clone(),
        };
        p.register(Class::JsonRpc, &s);
    }
}

/// Registers an error text, and the prefix the analysis quotes in answers.
fn collect_error(p: &mut Pseudonyms, err: &str) {
    let name = p.register(Class::Text, err);
    if err.chars().count() > 90 {
        let short: String = err.chars().take(90).collect();
        p.phrase(&short, &name);
    }
}

fn collect_execution(p: &mut Pseudonyms, inv: &Investigation, x: ExecIdx) {
    p.register(Class::Execution, inv.execution_id(x));
    for v in inv.events(x) {
        match &v.record.kind {
            EventKind::Accepted(a) => {
                let Acceptance {
                    call,
                    action,
                    fingerprint,
                    idempotency_key,
                    ..
                } = &**a;
                collect_call(p, inv, call);
                for (k, class) in [
                    ("actor", Class::Actor),
                    ("target", Class::Target),
                    ("credential_ref", Class::Credential),
                    ("intent_scope", Class::Scope),
                    ("host_key", Class::Value),
                    ("account", Class::Value),
                    ("command", Class::Value),
                    ("cwd", Class::Value),
                ] {
                    if let Some(s) = action.get_str(k) {
                        p.register(class, &s);
                    }
                }
                if let Some(a) = action.get("arguments") {
                    p.register_value(&a);
                }
                if let Some(f) = fingerprint {
                    p.register(Class::Fingerprint, &f.text());
                }
                if let Some(k) = idempotency_key {
                    p.register(Class::Key, k);
                }
            }
            EventKind::Attached { call, .. } => collect_call(p, inv, call),
            EventKind::Authorized {
                approver: Some(a), ..
            } => {
                p.register(Class::Person, a);
            }
            EventKind::Dispatched {
                idempotency_key: Some(k),
            } => {
                p.register(Class::Key, k);
            }
            EventKind::Outcome { texts, .. } => {
                if let Some(r) = texts.result_reference() {
                    p.register(Class::Result, r);
                }
                if let Some(er) = texts.error() {
                    collect_error(p, er);
                }
            }
            EventKind::DispatchFailed { error } | EventKind::DeliveryFailed { error } => {
                collect_error(p, error)
            }
            EventKind::Rejected { reason } if !is_vocabulary(reason) => {
                p.register(Class::Text, reason);
            }
            _ => {}
        }
    }
}

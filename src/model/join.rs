//! One call recorded by several layers or journals becomes one execution
//! (docs/design.md §5.12): the client's span, the gateway's log line and the
//! server's span of the same `tools/call` carry its events side by side.
//!
//! Two executions are one call when
//!
//! 1. they share a [`super::Link`]: one is a span and the other was called from it
//!    (W3C trace context: a server span's parent, a `traceparent` a gateway
//!    logged with the request), both are the same span, or both carry the
//!    same gateway correlation id; or, failing that,
//! 2. they come from different journals and different layers, carry the
//!    same JSON-RPC id and the same tool name, and were accepted within
//!    [`JOIN_WINDOW`] of each other, and each is the other's only such
//!    match (JSON-RPC ids restart on every connection, so the id alone
//!    names nothing).
//!
//! The joined execution keeps the id of its outermost layer (client, then
//! gateway, then server).

use super::FastMap as HashMap;
use super::packed::{self, Packed, Store};
use super::{ExecutionRef, JournalId, Layer};

/// How far apart two layers' records of one call may be accepted for a
/// join by JSON-RPC id and tool name: two seconds, far more than a hop
/// through a gateway takes, far less than a client's retry interval.
pub const JOIN_WINDOW: chrono::TimeDelta = chrono::TimeDelta::seconds(2);

/// A union-find over execution positions.
struct Sets(Vec<usize>);

impl Sets {
    fn find(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            self.0[i] = self.0[self.0[i]];
            i = self.0[i];
        }
        i
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b)] = a.min(b);
        }
    }
}

/// The outermost layer that recorded any event of `x` (`None`: a journal
/// of no particular layer).
fn layer(x: ExecutionRef<'_>) -> Option<Layer> {
    x.events().filter_map(|e| e.facts().layer).min()
}

/// What the fallback join compares: (journal, layer, JSON-RPC id, tool,
/// time of acceptance).
fn call_key(
    x: ExecutionRef<'_>,
) -> Option<(
    JournalId,
    Layer,
    String,
    &str,
    chrono::DateTime<chrono::Utc>,
)> {
    let (e, a) = x.accepted()?;
    // The layer first: most journals name none, and then no id is
    // written out.
    let layer = e.facts().layer?;
    let id = a.call.jsonrpc_id?.to_string();
    Some((e.source().journal(), layer, id, a.action.tool()?, e.at()))
}

/// An execution that may name a layer or a link: one with reader facts.
fn view<'a>(x: &'a Packed, store: &'a Store) -> Option<ExecutionRef<'a>> {
    packed::has_aux(x.bytes()).then(|| x.view(store))
}

/// Joins the executions that are one call; the others are returned as
/// they were. Also returns, for every execution merged into another, its
/// id and the id it is known by now.
///
/// Only an execution with reader facts can name a layer or a link: the
/// others (every execution of most journals) are passed over unread.
pub(super) fn join(executions: Vec<Packed>, store: &Store) -> (Vec<Packed>, Vec<(String, String)>) {
    let n = executions.len();
    let view = |x| view(x, store);
    let mut sets = Sets((0..n).collect());
    let mut by_key: HashMap<String, usize> = HashMap::default();
    let mut linked = false;
    for (i, x) in executions.iter().enumerate() {
        let Some(x) = view(x) else {
            continue;
        };
        for l in x.events().flat_map(|e| e.facts().links.iter()) {
            linked = true;
            match by_key.entry(l.key()) {
                std::collections::hash_map::Entry::Occupied(o) => sets.union(*o.get(), i),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(i);
                }
            }
        }
    }
    // The fallback, between calls of different layers not yet joined.
    let keys: Vec<_> = executions
        .iter()
        .map(|x| view(x).and_then(call_key))
        .collect();
    let mut by_call: HashMap<(&str, &str), Vec<usize>> = HashMap::default();
    for (i, k) in keys.iter().enumerate() {
        if let Some((_, _, id, tool, _)) = k {
            by_call.entry((id.as_str(), tool)).or_default().push(i);
        }
    }
    let candidates = |i: usize, sets: &mut Sets| -> Vec<usize> {
        let Some((journal, layer, id, tool, at)) = &keys[i] else {
            return Vec::new();
        };
        by_call
            .get(&(id.as_str(), *tool))
            .into_iter()
            .flatten()
            .copied()
            .filter(|&j| {
                let Some((jj, jl, _, _, jat)) = &keys[j] else {
                    return false;
                };
                jj != journal && jl != layer && (*jat - *at).abs() <= JOIN_WINDOW
            })
            .filter(|&j| sets.find(j) != sets.find(i))
            .collect()
    };
    let mut pairs = Vec::new();
    for i in 0..n {
        let c = candidates(i, &mut sets);
        if let [j] = c.as_slice()
            && candidates(*j, &mut sets) == [i]
        {
            pairs.push((i, *j));
        }
    }
    if !linked && pairs.is_empty() {
        return (executions, Vec::new());
    }
    for (i, j) in pairs {
        sets.union(i, j);
    }

    // Merge each set into its first member's place, named by its outermost
    // layer's execution.
    let roots: Vec<usize> = (0..n).map(|i| sets.find(i)).collect();
    let mut members: HashMap<usize, Vec<usize>> = HashMap::default();
    for (i, &r) in roots.iter().enumerate() {
        members.entry(r).or_default().push(i);
    }
    let mut slots: Vec<Option<Packed>> = executions.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(members.len());
    let mut aliases = Vec::new();
    for (i, &r) in roots.iter().enumerate() {
        if r != i {
            continue;
        }
        let set = &members[&r];
        let mut parts: Vec<Packed> = set.iter().filter_map(|&m| slots[m].take()).collect();
        if parts.len() == 1 {
            out.extend(parts);
            continue;
        }
        parts.sort_by_cached_key(|x| {
            let x = x.view(store);
            (layer(x).map_or(3, |l| l as u8), x.started_at())
        });
        let id = parts[0].view(store).id();
        for p in &parts[1..] {
            aliases.push((p.view(store).id().to_string(), id.to_string()));
        }
        out.push(Packed::merged(id, &parts));
    }
    (out, aliases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::packed::Interner;
    use crate::model::{
        Acceptance, ActionRecord, CallRef, Event, EventKind, Execution, JsonRpcId, Link,
        ReaderFacts, SourceRef,
    };

    /// [`join`] of executions given as values, given back as values.
    fn join_all(xs: Vec<Execution>) -> (Vec<Execution>, Vec<(String, String)>) {
        let (mut store, mut interner) = (Store::default(), Interner::default());
        let packed = xs
            .into_iter()
            .map(|x| Packed::of(&x.id, x.events, &mut interner, &mut store))
            .collect();
        let (out, aliases) = join(packed, &store);
        let out = out.iter().map(|p| p.view(&store).to_execution()).collect();
        (out, aliases)
    }
    use chrono::{DateTime, Utc};

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(&format!("2026-09-01T{s}Z"))
            .unwrap()
            .with_timezone(&Utc)
    }

    fn accepted(
        journal: JournalId,
        layer: Layer,
        id: i64,
        tool: &str,
        t: &str,
        links: Vec<Link>,
    ) -> Event {
        let mut action = serde_json::Map::new();
        action.insert("tool".into(), tool.into());
        Event::new(
            at(t),
            EventKind::Accepted(Box::new(Acceptance {
                call: CallRef {
                    jsonrpc_id: Some(JsonRpcId::Num(id)),
                    ..CallRef::default()
                },
                action: ActionRecord::from_map(action),
                ..Acceptance::default()
            })),
            SourceRef::Line {
                journal,
                line: 1,
                offset: crate::model::LineOffset::new(0),
                len: 0,
            },
        )
        .with_facts(ReaderFacts {
            layer: Some(layer),
            links,
            ..ReaderFacts::default()
        })
    }

    fn x(id: &str, e: Event) -> Execution {
        Execution {
            id: id.into(),
            events: vec![e],
        }
    }

    fn span(s: &str) -> Link {
        Link::Span {
            trace: "t".into(),
            span: s.into(),
        }
    }

    #[test]
    fn a_server_span_joins_the_client_span_it_was_called_from() {
        let client = x(
            "c",
            accepted(0, Layer::Client, 3, "deploy", "10:00:00", vec![span("a")]),
        );
        let server = x(
            "s",
            accepted(
                1,
                Layer::Server,
                1,
                "deploy",
                "10:00:00.010",
                vec![Link::CalledFrom {
                    trace: "t".into(),
                    span: "a".into(),
                }],
            ),
        );
        let other = x(
            "o",
            accepted(1, Layer::Server, 2, "deploy", "10:00:05", vec![span("b")]),
        );
        let (out, aliases) = join_all(vec![server, other, client]);
        assert_eq!(aliases, vec![("s".to_string(), "c".to_string())]);
        assert_eq!(out.len(), 2);
        let joined = out.iter().find(|x| x.events.len() == 2).unwrap();
        assert_eq!(joined.id, "c", "named by its outermost layer");
    }

    #[test]
    fn the_fallback_needs_one_match_each_way_within_the_window() {
        let c = x(
            "c",
            accepted(0, Layer::Client, 7, "deploy", "10:00:00", vec![]),
        );
        let g = x(
            "g",
            accepted(1, Layer::Gateway, 7, "deploy", "10:00:00.500", vec![]),
        );
        assert_eq!(join_all(vec![c.clone(), g.clone()]).0.len(), 1);
        // Too far apart.
        let late = x(
            "g",
            accepted(1, Layer::Gateway, 7, "deploy", "10:00:03", vec![]),
        );
        assert_eq!(join_all(vec![c.clone(), late]).0.len(), 2);
        // Two candidates: ambiguous, nothing joined.
        let g2 = x(
            "g2",
            accepted(1, Layer::Gateway, 7, "deploy", "10:00:01", vec![]),
        );
        assert_eq!(join_all(vec![c.clone(), g.clone(), g2]).0.len(), 3);
        // Same layer, or same journal: never.
        let c2 = x(
            "c2",
            accepted(1, Layer::Client, 7, "deploy", "10:00:00.1", vec![]),
        );
        assert_eq!(join_all(vec![c.clone(), c2]).0.len(), 2);
        let g3 = x(
            "g3",
            accepted(0, Layer::Gateway, 7, "deploy", "10:00:00.1", vec![]),
        );
        assert_eq!(join_all(vec![c, g3]).0.len(), 2);
    }
}

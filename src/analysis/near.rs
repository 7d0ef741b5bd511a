//! Near duplicates (docs/design.md §5.13): groups of one tool, actor and
//! intent scope whose calls ask for the same thing but for one argument
//! field (a top-level argument, or one leaf inside it), within the tool's
//! attach window of each other. A retry that changes one field (a pull
//! request body rewritten after an error) is a new intent to the target and
//! lands in a group of its own; the link keeps it in view beside the attempts
//! it follows.
//!
//! Cost: for a group whose canonical record has `k` top-level arguments of
//! total size `s`, `k` digests of the record without one argument:
//! O(Σ k·s) to build them, then one sort of the Σ k digests. Only groups
//! sharing a digest (same tool, actor, scope, the rest of the record, the
//! same argument names, and every argument value but one) are compared, and
//! a digest shared by more than [`MAX_CLASS`] groups is a sweep over one
//! argument (every issue of a list read in turn), not attempts at one
//! action, and links nothing. So no two groups are compared that do not
//! already differ in exactly one argument, and at most `MAX_CLASS - 1`
//! links are made per group and argument: a day of 100,000 groups costs a
//! few digests each, never the 10^10 pairs a naive comparison would.

use super::{Config, Finding, FindingKind, Group, canonical_action, fingerprint};
use crate::canonical;
use crate::model::Model;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::ops::Index;
use std::time::Duration;

/// The most groups one near-duplicate class may hold and still be linked;
/// more is a sweep over one argument, not attempts at one action
/// (docs/design.md §5.13).
pub const MAX_CLASS: usize = 8;

/// A link from one group to another that differs from it in one argument
/// field (docs/design.md §5.13).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NearDuplicate {
    /// The other group's id.
    pub group_id: String,
    /// The field that differs, as a path into the arguments: `body`,
    /// `options.region`, `files[0].path`.
    pub field: String,
}

/// The first 16 bytes of a SHA-256 digest.
pub(super) type Digest16 = [u8; 16];

/// The digest of `parts`, each prefixed by its length (so that no two
/// lists of parts give the same input).
pub(super) fn digest(parts: &[&str]) -> Digest16 {
    let mut h = Sha256::new();
    feed(&mut h, parts);
    finish(h)
}

/// Adds `parts` to a [`digest`] under way, each prefixed by its length:
/// parts that many digests share first are hashed once, and the state
/// cloned for each.
fn feed(h: &mut Sha256, parts: &[&str]) {
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
}

/// The first 16 bytes of a [`digest`] fed so far.
fn finish(h: Sha256) -> Digest16 {
    let full = h.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&full[..16]);
    out
}

/// The arguments of a group's canonical record (defaults filled in,
/// `fingerprint_fields` applied, secrets replaced; docs/design.md §4.2),
/// with numeric strings read as numbers (a pull request named `"38281"`
/// and `38281` is `fingerprint_drift`, not a near duplicate), and the rest
/// of the record.
fn record(model: &Model, config: &Config, g: &Group) -> Option<(String, Map<String, Value>)> {
    let rec = canonical_action(model, config, g);
    let mut rec = fingerprint::drift_form(&rec).unwrap_or(rec);
    let Value::Object(args) = rec.as_object_mut()?.remove("arguments")? else {
        return None;
    };
    Some((fingerprint::jcs(&rec), args))
}

/// The one field two argument objects of the same names differ in, as a
/// path: the differing top-level argument, and inside it, as long as
/// exactly one member (or item of arrays of one length) differs, that
/// member. `None` unless exactly one top-level argument differs
/// (docs/design.md §5.13).
pub fn one_field(a: &Map<String, Value>, b: &Map<String, Value>) -> Option<String> {
    if a.len() != b.len() || a.keys().any(|k| !b.contains_key(k)) {
        return None;
    }
    let mut differ = a.iter().filter(|(k, v)| b.get(*k) != Some(*v));
    let (k, va) = differ.next()?;
    if differ.next().is_some() {
        return None;
    }
    let mut path = k.clone();
    let (mut x, mut y) = (va, b.get(k)?);
    loop {
        match (x, y) {
            (Value::Object(p), Value::Object(q))
                if p.len() == q.len() && p.keys().all(|k| q.contains_key(k)) =>
            {
                let mut d = p.iter().filter(|(k, v)| q.get(*k) != Some(*v));
                match (d.next(), d.next()) {
                    (Some((k, v)), None) => {
                        path = format!("{path}.{k}");
                        (x, y) = (v, q.get(k)?);
                    }
                    _ => break,
                }
            }
            (Value::Array(p), Value::Array(q)) if p.len() == q.len() => {
                let mut d = p.iter().zip(q).enumerate().filter(|(_, (v, w))| v != w);
                match (d.next(), d.next()) {
                    (Some((i, (v, w))), None) => {
                        path = format!("{path}[{i}]");
                        (x, y) = (v, w);
                    }
                    _ => break,
                }
            }
            _ => break,
        }
    }
    Some(path)
}

/// When each execution of `g` started (its accepted event: attach
/// windows are measured from it), sorted.
pub(super) fn start_times(model: &Model, g: &Group) -> Vec<chrono::DateTime<chrono::Utc>> {
    let mut t: Vec<_> = g
        .executions
        .iter()
        .filter_map(|&x| model.execution(x).started_at())
        .collect();
    t.sort_unstable();
    t
}

/// Whether some execution of `a` started within `window` of some
/// execution of `b`. Each list is sorted; a merge walk, O(|a| + |b|).
pub(super) fn within(
    a: &[chrono::DateTime<chrono::Utc>],
    b: &[chrono::DateTime<chrono::Utc>],
    window: Duration,
) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let gap = (a[i] - b[j]).abs().to_std().unwrap_or(Duration::MAX);
        if gap <= window {
            return true;
        }
        if a[i] < b[j] {
            i += 1;
        } else {
            j += 1;
        }
    }
    false
}

/// One entry per top-level argument of `args`: the digest of `head` (what
/// must be equal besides the arguments: actor, scope, the rest of the
/// record), the argument's name and every other argument, and the digest
/// of the argument's value. Two argument objects of the same names that
/// differ in exactly one argument share exactly one class digest, with
/// different value digests (docs/design.md §5.13).
fn projections(head: &[&str], args: &Map<String, Value>) -> Vec<(Digest16, Digest16)> {
    args.iter()
        .map(|(k, v)| {
            let mut rest = args.clone();
            rest.remove(k);
            let rest = fingerprint::jcs(&Value::Object(rest));
            let mut parts = head.to_vec();
            parts.extend([k.as_str(), rest.as_str()]);
            (digest(&parts), digest(&[&fingerprint::jcs(v)]))
        })
        .collect()
}

/// The pairs of groups to compare: those that share a class digest with
/// different values, in classes of at most [`MAX_CLASS`] groups. `entries`
/// are (class digest, group, value digest); one sort, then at most
/// `MAX_CLASS - 1` pairs per entry, so the pairs are linear in the entries
/// whatever the buckets hold (docs/design.md §5.13).
fn candidates(mut entries: Vec<(Digest16, u32, Digest16)>) -> Vec<(usize, usize)> {
    entries.par_sort_unstable();
    let mut out = Vec::new();
    for class in entries.chunk_by(|a, b| a.0 == b.0) {
        if class.len() < 2 || class.len() > MAX_CLASS {
            continue;
        }
        for (n, &(_, a, va)) in class.iter().enumerate() {
            // The same value once normalized: drift, not a near duplicate.
            out.extend(
                class[n + 1..]
                    .iter()
                    .filter(|&&(_, b, vb)| vb != va && b != a)
                    .map(|&(_, b, _)| (a as usize, b as usize)),
            );
        }
    }
    out
}

/// Links the groups that are near duplicates of each other and gives both
/// a `near_duplicate` finding naming the other group, its verdict and the
/// field (docs/design.md §5.13). Never changes a verdict.
///
/// With `keep`, returns every group's entries ([`entries_of`]), for a
/// follower to keep; without, an empty list (they are dropped as soon as
/// they are gathered: a journal's groups have several each). Groups are
/// counted in 32 bits, as [`crate::model::GroupIdx`] counts them.
pub(super) fn near_duplicate_findings(
    model: &Model,
    config: &Config,
    groups: &mut [Group],
    keep: bool,
) -> Vec<Vec<(Digest16, Digest16)>> {
    // (class digest, group, value digest): one entry per group and
    // top-level argument, gathered into a list of the exact length.
    let mut per_group: Vec<Vec<(Digest16, Digest16)>> = groups
        .par_iter()
        .map(|g| entries_of(model, config, g))
        .collect();
    let mut entries: Vec<(Digest16, u32, Digest16)> =
        Vec::with_capacity(per_group.iter().map(Vec::len).sum());
    for (i, e) in per_group.iter().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        entries.extend(e.iter().map(|&(class, value)| (class, i, value)));
    }
    if !keep {
        per_group = Vec::new();
    }
    let mut links: Vec<(usize, usize, String)> = Vec::new();
    for (a, b) in candidates(entries) {
        if let Some(field) = linked(model, config, &*groups, a, b) {
            links.push((a, b, field));
        }
    }
    for (a, b, field) in links {
        for (this, other) in [(a, b), (b, a)] {
            let (link, finding) = link_finding(&groups[other], &field);
            let g = &mut groups[this];
            g.near_duplicates.push(link);
            g.findings.push(finding);
        }
    }
    for g in groups.iter_mut() {
        g.near_duplicates
            .sort_by(|x, y| x.group_id.cmp(&y.group_id).then(x.field.cmp(&y.field)));
        g.near_duplicates.dedup();
    }
    per_group
}

/// A group's near-duplicate entries: one (class digest, value digest) per
/// top-level argument of its canonical record ([`projections`]); none for
/// a group of no known tool or of a tool with no attach window.
pub(super) fn entries_of(model: &Model, config: &Config, g: &Group) -> Vec<(Digest16, Digest16)> {
    if &*g.tool == "?" || g.contract.attach_window.is_zero() {
        return Vec::new();
    }
    if let Some(entries) = plain_entries(model, g) {
        return entries;
    }
    let Some((shape, args)) = record(model, config, g) else {
        return Vec::new();
    };
    let head = [g.actor.as_str(), g.intent_scope.as_str(), shape.as_str()];
    projections(&head, &args)
}

/// [`entries_of`] for a group whose canonical record is its first call's
/// stored RFC 8785 text ([`fingerprint::plain_canonical`]) and has no
/// numeric string [`fingerprint::drift_form`] would change: the record
/// without its arguments, each argument's value and the arguments without
/// one are slices of that text ([`canonical::members`]), so the digests are
/// those of [`projections`] without a value tree. `None`: take the record
/// apart ([`record`]); also for argument names with escapes or characters
/// that sort differently in RFC 8785 (then the text's order is not the
/// map's).
fn plain_entries(model: &Model, g: &Group) -> Option<Vec<(Digest16, Digest16)>> {
    let action = model.execution(*g.executions.first()?).action()?;
    let text = fingerprint::plain_canonical(action, &g.contract)?;
    if fingerprint::may_drift(text) {
        return None;
    }
    text_entries(&g.actor, &g.intent_scope, text)
}

/// The entries [`projections`] gives for the record whose RFC 8785 text is
/// `text`, of a group of `actor` and `scope` (see [`plain_entries`]).
fn text_entries(actor: &str, scope: &str, text: &[u8]) -> Option<Vec<(Digest16, Digest16)>> {
    let top = canonical::members(text)?;
    let at = top
        .iter()
        .position(|m| &text[m.name.0..m.name.1] == b"arguments")?;
    let args_text = &text[top[at].value.0..top[at].value.1];
    let args = canonical::members(args_text)?;
    let mut shape = Vec::with_capacity(text.len());
    canonical::write_kept(
        text,
        &mut top
            .iter()
            .enumerate()
            .filter(|&(n, _)| n != at)
            .map(|(_, m)| m),
        &mut shape,
    );
    let shape = std::str::from_utf8(&shape).ok()?;
    let mut out = Vec::with_capacity(args.len());
    let mut rest = Vec::with_capacity(args_text.len());
    // Every class digest begins with the same three parts.
    let mut head = Sha256::new();
    feed(&mut head, &[actor, scope, shape]);
    for (n, m) in args.iter().enumerate() {
        let name = std::str::from_utf8(&args_text[m.name.0..m.name.1]).ok()?;
        if name.contains('\\') || !canonical::name_sorts_alike(name) {
            return None;
        }
        rest.clear();
        canonical::write_kept(
            args_text,
            &mut args
                .iter()
                .enumerate()
                .filter(|&(o, _)| o != n)
                .map(|(_, m)| m),
            &mut rest,
        );
        let rest = std::str::from_utf8(&rest).ok()?;
        let value = std::str::from_utf8(&args_text[m.value.0..m.value.1]).ok()?;
        let mut class = head.clone();
        feed(&mut class, &[name, rest]);
        out.push((finish(class), digest(&[value])));
    }
    Some(out)
}

/// Whether candidates `a` and `b` (positions in `groups`, `a` first in
/// their class) are near duplicates, and the field they differ in: the
/// same tool, calls within `a`'s attach window of each other, and records
/// that differ in one field once checked against the records themselves.
fn linked<G: Index<usize, Output = Group> + ?Sized>(
    model: &Model,
    config: &Config,
    groups: &G,
    a: usize,
    b: usize,
) -> Option<String> {
    if groups[a].tool != groups[b].tool {
        return None;
    }
    let window = groups[a].contract.attach_window;
    if !within(
        &start_times(model, &groups[a]),
        &start_times(model, &groups[b]),
        window,
    ) {
        return None;
    }
    // Check the digests against the records themselves.
    let (sa, ra) = record(model, config, &groups[a])?;
    let (sb, rb) = record(model, config, &groups[b])?;
    if sa != sb {
        return None;
    }
    one_field(&ra, &rb)
}

/// The link to near duplicate `o` and the finding that names it, for the
/// group one `field` away from it.
pub(super) fn link_finding(o: &Group, field: &str) -> (NearDuplicate, Finding) {
    let detail = format!(
        "one argument away from {} ({}, {} call{}): the same tool, actor and intent scope, and arguments that differ only in {field}",
        o.id,
        o.verdict,
        o.calls,
        if o.calls == 1 { "" } else { "s" }
    );
    let link = NearDuplicate {
        group_id: o.id.clone(),
        field: field.to_string(),
    };
    let finding = Finding {
        kind: FindingKind::NearDuplicate,
        detail: detail.into(),
        evidence: vec![],
    };
    (link, finding)
}

/// The near duplicates of group `g` (a position in `groups`) with the
/// field each differs in, as [`near_duplicate_findings`] links them:
/// `classes` holds every group's entries by class digest, as (group,
/// value digest) sorted, and `own` are `g`'s entries. The work is in the
/// classes of `g` only, at most [`MAX_CLASS`] entries each.
pub(super) fn links_of<G: Index<usize, Output = Group> + ?Sized>(
    model: &Model,
    config: &Config,
    groups: &G,
    classes: &crate::model::FastMap<Digest16, Vec<(u32, Digest16)>>,
    own: &[(Digest16, Digest16)],
    g: usize,
) -> Vec<(usize, String)> {
    let mut mine: Vec<Digest16> = own.iter().map(|e| e.0).collect();
    mine.sort_unstable();
    mine.dedup();
    let mut out = Vec::new();
    for c in mine {
        let Some(class) = classes.get(&c) else {
            continue;
        };
        if class.len() < 2 || class.len() > MAX_CLASS {
            continue;
        }
        for (n, &(a, va)) in class.iter().enumerate() {
            for &(b, vb) in &class[n + 1..] {
                let (a, b) = (a as usize, b as usize);
                if vb == va || b == a || (a != g && b != g) {
                    continue;
                }
                if let Some(field) = linked(model, config, groups, a, b) {
                    out.push((if a == g { b } else { a }, field));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn one_field_names_the_only_difference() {
        let a = obj(json!({"body": "v1", "branch": "b", "title": "t"}));
        let b = obj(json!({"body": "v2", "branch": "b", "title": "t"}));
        assert_eq!(one_field(&a, &b).as_deref(), Some("body"));
        // One leaf deep inside.
        let a = obj(json!({"o": {"region": "eu", "size": 2}, "n": 1}));
        let b = obj(json!({"o": {"region": "us", "size": 2}, "n": 1}));
        assert_eq!(one_field(&a, &b).as_deref(), Some("o.region"));
        let a = obj(json!({"files": [{"path": "a"}, {"path": "b"}]}));
        let b = obj(json!({"files": [{"path": "a"}, {"path": "c"}]}));
        assert_eq!(one_field(&a, &b).as_deref(), Some("files[1].path"));
        // Two leaves of one argument: the argument.
        let a = obj(json!({"o": {"region": "eu", "size": 2}}));
        let b = obj(json!({"o": {"region": "us", "size": 3}}));
        assert_eq!(one_field(&a, &b).as_deref(), Some("o"));
        // Two arguments, other names, or nothing at all.
        let a = obj(json!({"x": 1, "y": 1}));
        let b = obj(json!({"x": 2, "y": 2}));
        assert_eq!(one_field(&a, &b), None);
        let b = obj(json!({"x": 1, "z": 1}));
        assert_eq!(one_field(&a, &b), None);
        assert_eq!(one_field(&a, &a), None);
    }

    /// The pairs `candidates` gives for groups with these heads and
    /// arguments.
    fn pairs(groups: &[(&str, Value)]) -> Vec<(usize, usize)> {
        let mut entries = Vec::new();
        for (i, (head, args)) in groups.iter().enumerate() {
            let args = obj(args.clone());
            entries.extend(
                projections(&[head], &args)
                    .into_iter()
                    .map(|(c, v)| (c, i as u32, v)),
            );
        }
        let mut p: Vec<_> = candidates(entries)
            .into_iter()
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        p.sort_unstable();
        p
    }

    /// One field apart → a pair; two fields, other names, another head
    /// (tool, actor, scope, the rest of the record) or the same value →
    /// none.
    #[test]
    fn only_groups_one_argument_apart_are_compared() {
        let p = pairs(&[
            ("t", json!({"body": "v1", "title": "x"})),
            ("t", json!({"body": "v2", "title": "x"})),
            ("t", json!({"body": "v3", "title": "y"})),
            ("t", json!({"body": "v1", "name": "x"})),
            ("u", json!({"body": "v4", "title": "x"})),
            ("t", json!({"body": "v2", "title": "x"})),
        ]);
        assert_eq!(p, [(0, 1), (0, 5)]);
    }

    /// docs/design.md §5.13: however many groups share tool, actor, scope
    /// and argument names, the pairs compared stay linear in the groups: a
    /// bucket of 5,000 groups that differ in two fields gives none, a sweep
    /// over one field gives none, 2,500 retries with one field changed give
    /// exactly their 2,500 pairs.
    #[test]
    fn a_large_bucket_is_not_compared_pairwise() {
        let n = 5_000;
        let two: Vec<_> = (0..n).map(|i| ("t", json!({"a": i, "b": i}))).collect();
        assert!(pairs(&two).is_empty());
        let sweep: Vec<_> = (0..n).map(|i| ("t", json!({"issue": i}))).collect();
        assert!(pairs(&sweep).is_empty());
        let retries: Vec<_> = (0..n)
            .map(|i| ("t", json!({"n": i / 2, "body": i % 2})))
            .collect();
        let p = pairs(&retries);
        assert_eq!(p.len(), n / 2);
        assert!(p.iter().all(|&(a, b)| a % 2 == 0 && b == a + 1), "{p:?}");
    }

    /// The entries taken from a record's text are those of the record
    /// taken apart, and a text they cannot be taken from says so.
    #[test]
    fn entries_from_text_are_those_of_the_record() {
        let records = [
            json!({"actor": "a", "arguments": {"body": "v1", "n": 3, "o": {"x": [1, {"y": "z"}]}}, "tool": "t"}),
            json!({"arguments": {}, "tool": "t"}),
            json!({"arguments": {"q\"uote": "\\", "s": "a,b}c", "é": null}, "target": "x"}),
            json!({"arguments": {"only": true}}),
        ];
        for rec in records {
            let text = fingerprint::jcs(&rec);
            let mut shape = rec.clone();
            let Some(Value::Object(args)) =
                shape.as_object_mut().and_then(|m| m.remove("arguments"))
            else {
                panic!("no arguments");
            };
            let shape = fingerprint::jcs(&shape);
            let want = projections(&["act", "scope", &shape], &args);
            match text_entries("act", "scope", text.as_bytes()) {
                Some(got) => assert_eq!(got, want, "{text}"),
                // Only an escaped name is left to the record.
                None => assert!(args.keys().any(|k| k.contains('"')), "{text}"),
            }
        }
        assert_eq!(text_entries("a", "s", b"{\"arguments\":1}"), None);
        assert_eq!(text_entries("a", "s", b"{\"tool\":\"t\"}"), None);
    }

    #[test]
    fn within_finds_the_nearest_starts() {
        let t = |s: i64| chrono::DateTime::from_timestamp(1_780_000_000 + s, 0).unwrap_or_default();
        let w = Duration::from_secs(60);
        assert!(within(&[t(0), t(1000)], &[t(1050)], w));
        assert!(!within(&[t(0), t(1000)], &[t(500)], w));
        assert!(within(&[t(10)], &[t(10)], Duration::ZERO));
        assert!(!within(&[], &[t(0)], w));
    }
}

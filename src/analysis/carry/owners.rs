//! Which groups hold an idempotency key or a JSON-RPC id, kept by digest,
//! and the digests the indexes of [`super::Carry`] are keyed by.

use crate::analysis::Group;
use crate::analysis::near::{self, Digest16};
use crate::model::FastMap;

/// Which groups hold a key (an idempotency key, a JSON-RPC id): drafts
/// in order, each with how many of its executions carry it.
#[derive(Debug, Clone)]
pub(super) enum Owners {
    One(u32, u32),
    Many(Vec<(u32, u32)>),
}

impl Owners {
    pub(super) fn len(&self) -> usize {
        match self {
            Owners::One(..) => 1,
            Owners::Many(v) => v.len(),
        }
    }
    pub(super) fn drafts(&self) -> impl Iterator<Item = u32> + '_ {
        let (one, many) = match self {
            Owners::One(d, _) => (Some(*d), &[][..]),
            Owners::Many(v) => (None, &v[..]),
        };
        one.into_iter().chain(many.iter().map(|&(d, _)| d))
    }
}

/// Adds one execution of draft `d` to the owners of `key`; whether a draft
/// joined them.
pub(super) fn own(map: &mut FastMap<Digest16, Owners>, key: Digest16, d: u32) -> bool {
    match map.get_mut(&key) {
        None => {
            map.insert(key, Owners::One(d, 1));
            true
        }
        Some(Owners::One(o, n)) if *o == d => {
            *n += 1;
            false
        }
        Some(o) => {
            let mut v = match o {
                Owners::One(a, n) => vec![(*a, *n)],
                Owners::Many(v) => std::mem::take(v),
            };
            let joined = match v.binary_search_by_key(&d, |&(a, _)| a) {
                Ok(i) => {
                    v[i].1 += 1;
                    false
                }
                Err(i) => {
                    v.insert(i, (d, 1));
                    true
                }
            };
            *o = Owners::Many(v);
            joined
        }
    }
}

/// Takes one execution of draft `d` from the owners of `key`; whether the
/// draft left them.
pub(super) fn disown(map: &mut FastMap<Digest16, Owners>, key: Digest16, d: u32) -> bool {
    let Some(o) = map.get_mut(&key) else {
        return false;
    };
    let left = match o {
        Owners::One(a, n) if *a == d => {
            *n -= 1;
            *n == 0
        }
        Owners::One(..) => false,
        Owners::Many(v) => match v.binary_search_by_key(&d, |&(a, _)| a) {
            Ok(i) => {
                v[i].1 -= 1;
                let gone = v[i].1 == 0;
                if gone {
                    v.remove(i);
                }
                gone
            }
            Err(_) => false,
        },
    };
    let empty = match o {
        Owners::One(_, n) => *n == 0,
        Owners::Many(v) => v.is_empty(),
    };
    if empty {
        map.remove(&key);
    }
    left
}

/// The digest of an idempotency key.
pub(super) fn key_digest(k: &str) -> Digest16 {
    near::digest(&[k])
}

/// The digest of a JSON-RPC id on an MCP session.
pub(super) fn id_digest(mcp: &str, id: &str) -> Digest16 {
    near::digest(&[mcp, id])
}

/// The digest of a group's default-drift bucket (tool, actor, scope,
/// target); none for a group of no known tool.
pub(super) fn bucket_digest(g: &Group) -> Option<Digest16> {
    (&*g.tool != "?").then(|| {
        let target = g.target.as_deref();
        near::digest(&[
            &g.tool,
            &g.actor,
            &g.intent_scope,
            if target.is_some() { "1" } else { "0" },
            target.unwrap_or(""),
        ])
    })
}

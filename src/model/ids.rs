//! Executions found by id without a second copy of every id: a hash table
//! of positions in the execution list, hashing and comparing the ids the
//! executions hold. A map from `String` kept each id twice, about 40 bytes
//! an execution (80 MB for the two million executions of ten million
//! events).

use super::packed::{Packed, PackedBuf};
use super::{Execution, FastMap};
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// The positions of executions by their ids, over a list the caller keeps
/// ([`super::Model::executions`] or the builder's): every call passes that
/// list, as it is when the call is made. Positions are `u32`: a model holds
/// fewer than 2^32 executions (so do [`super::ExecIdx`]).
#[derive(Debug, Clone, Default)]
pub(super) struct IdIndex {
    /// Positions, hashed by the id of the execution at each.
    table: HashTable<u32>,
    /// Per-process seeded, as [`FastMap`].
    hasher: foldhash::fast::RandomState,
    /// Ids of executions joined into others (docs/design.md §5.12), with
    /// the position of the one that holds their events.
    aliases: FastMap<String, u32>,
}

impl IdIndex {
    /// An index of every execution of `xs`, with the ids of executions
    /// joined into others (`(alias, id it was joined into)`).
    pub(super) fn of<X: Identified>(xs: &[X], aliases: Vec<(String, String)>) -> IdIndex {
        let mut ix = IdIndex::default();
        ix.table.reserve(xs.len(), |_| 0);
        for i in 0..xs.len() {
            ix.insert(i, xs);
        }
        for (alias, id) in aliases {
            if let Some(i) = ix.get(&id, xs) {
                ix.aliases.entry(alias).or_insert(pos(i));
            }
        }
        ix
    }

    /// The position of the execution named `id`, or of the one it was
    /// joined into.
    pub(super) fn get<X: Identified>(&self, id: &str, xs: &[X]) -> Option<usize> {
        let h = self.hasher.hash_one(id.as_bytes());
        match self
            .table
            .find(h, |&i| at(xs, i).is_some_and(|x| x.id() == id.as_bytes()))
        {
            Some(&i) => Some(i as usize),
            None => self.aliases.get(id).map(|&i| i as usize),
        }
    }

    /// Adds the execution at position `i` of `xs`, whose id the index does
    /// not hold yet.
    ///
    /// # Panics
    /// When `i` is not a position of `xs`.
    pub(super) fn insert<X: Identified>(&mut self, i: usize, xs: &[X]) {
        let h = self.hasher.hash_one(xs[i].id());
        let hasher = &self.hasher;
        self.table.insert_unique(h, pos(i), |&j| {
            at(xs, j).map_or(0, |x| hasher.hash_one(x.id()))
        });
    }

    /// Moves every position: the execution at `p` is now at `moved[p]`.
    ///
    /// # Panics
    /// When `moved` does not cover every position held.
    pub(super) fn remap(&mut self, moved: &[usize]) {
        for p in self.table.iter_mut().chain(self.aliases.values_mut()) {
            *p = pos(moved[*p as usize]);
        }
    }

    /// Forgets the positions from `from` on, so that the executions there
    /// can be put in another order and [`IdIndex::insert`]ed again.
    pub(super) fn forget_from(&mut self, from: usize) {
        self.table.retain(|p| (*p as usize) < from);
    }

    /// Whether some executions were joined into others.
    pub(super) fn joined(&self) -> bool {
        !self.aliases.is_empty()
    }
}

fn at<X: Identified>(xs: &[X], i: u32) -> Option<&X> {
    xs.get(i as usize)
}

/// What the index finds executions by: their ids, as bytes (hashed and
/// compared as they are held, without a look at their characters).
pub(super) trait Identified {
    /// The execution's id.
    fn id(&self) -> &[u8];
}

impl Identified for Execution {
    fn id(&self) -> &[u8] {
        self.id.as_bytes()
    }
}

impl Identified for Packed {
    fn id(&self) -> &[u8] {
        super::packed::id_bytes(self.bytes())
    }
}

impl Identified for PackedBuf {
    fn id(&self) -> &[u8] {
        super::packed::id_bytes(self.bytes())
    }
}

fn pos(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xs(ids: &[&str]) -> Vec<Execution> {
        ids.iter()
            .map(|id| Execution {
                id: (*id).to_string(),
                events: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn finds_moves_and_forgets() {
        let mut list = xs(&["a", "b", "c"]);
        let mut ix = IdIndex::of(
            &list,
            vec![("z".into(), "c".into()), ("y".into(), "nope".into())],
        );
        assert_eq!(ix.get("b", &list), Some(1));
        assert_eq!(ix.get("z", &list), Some(2));
        assert_eq!(ix.get("y", &list), None);
        assert_eq!(ix.get("d", &list), None);
        assert!(ix.joined());
        // c, a, b
        list.rotate_right(1);
        ix.remap(&[1, 2, 0]);
        assert_eq!(ix.get("c", &list), Some(0));
        assert_eq!(ix.get("z", &list), Some(0));
        assert_eq!(ix.get("b", &list), Some(2));
        ix.forget_from(1);
        list[1..].reverse();
        for i in 1..list.len() {
            ix.insert(i, &list);
        }
        assert_eq!(ix.get("a", &list), Some(2));
        assert_eq!(ix.get("b", &list), Some(1));
        assert_eq!(ix.get("c", &list), Some(0));
    }

    #[test]
    fn many_ids_grow_the_table() {
        let ids: Vec<String> = (0..20_000).map(|i| format!("act_{i}")).collect();
        let list = xs(&ids.iter().map(String::as_str).collect::<Vec<_>>());
        let mut ix = IdIndex::default();
        for i in 0..list.len() {
            ix.insert(i, &list);
        }
        assert!((0..list.len()).all(|i| ix.get(&ids[i], &list) == Some(i)));
        assert!(!ix.joined());
    }
}

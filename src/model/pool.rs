//! Values that many records repeat, held once and shared
//! (docs/design.md §9.8): action texts, and the session ids, MCP session
//! ids, transports and action classes of calls, and authorization
//! decisions; in the analysis, finding texts and groups' tools and
//! targets.

use std::hash::Hash;
use std::sync::Arc;

/// One shared copy of each distinct value given to [`Pool::share`], by
/// content. Seeded per process, as [`super::FastMap`].
#[derive(Debug)]
pub(crate) struct Pool<T: ?Sized>(hashbrown::HashSet<Arc<T>, foldhash::fast::RandomState>);

impl<T: ?Sized> Default for Pool<T> {
    fn default() -> Self {
        Pool(hashbrown::HashSet::default())
    }
}

impl<T: ?Sized + Hash + Eq> Pool<T> {
    /// Makes `value` the pool's copy of its content when the pool has one;
    /// else the pool keeps a reference to `value`.
    pub(super) fn share(&mut self, value: &mut Arc<T>) {
        match self.0.get(&**value) {
            Some(held) => *value = Arc::clone(held),
            None => {
                self.0.insert(Arc::clone(value));
            }
        }
    }

    /// The pool's copy of `value`'s content, made from `value` only when
    /// the pool has none yet (a value seen before costs no allocation).
    pub(crate) fn of(&mut self, value: &T) -> Arc<T>
    where
        for<'a> Arc<T>: From<&'a T>,
    {
        if let Some(held) = self.0.get(value) {
            return Arc::clone(held);
        }
        let held: Arc<T> = Arc::from(value);
        self.0.insert(Arc::clone(&held));
        held
    }

    /// [`Pool::share`] for a value that may be absent.
    pub(super) fn share_opt(&mut self, value: &mut Option<Arc<T>>) {
        if let Some(v) = value {
            self.share(v);
        }
    }

    /// Distinct values held.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

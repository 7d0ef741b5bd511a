//! Values that many results repeat, held once and shared
//! (docs/design.md §9.8): in the analysis, finding texts and groups' tools
//! and targets. (A model holds the texts its executions repeat once each
//! in its store, `super::packed`.)

use std::hash::Hash;
use std::sync::Arc;

/// One shared copy of each distinct value given to [`Pool::of`], by
/// content. Seeded per process, as [`super::FastMap`].
#[derive(Debug)]
pub(crate) struct Pool<T: ?Sized>(hashbrown::HashSet<Arc<T>, foldhash::fast::RandomState>);

impl<T: ?Sized> Default for Pool<T> {
    fn default() -> Self {
        Pool(hashbrown::HashSet::default())
    }
}

impl<T: ?Sized + Hash + Eq> Pool<T> {
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
}

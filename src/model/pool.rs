//! Values that many results repeat, held once and shared
//! (docs/design.md §9.8): in the analysis, finding texts and groups' tools
//! and targets. (A model holds the texts its executions repeat once each
//! in its store, `super::packed`.)

use std::hash::Hash;
use std::sync::Arc;

/// One shared copy of each distinct value given to [`Pool::of`], by
/// content. Seeded per process, as [`super::FastMap`].
#[derive(Debug)]
pub(crate) struct Pool<T: ?Sized> {
    held: hashbrown::HashSet<Arc<T>, foldhash::fast::RandomState>,
    /// The copy [`Pool::of`] gave last: values come in runs (the groups of
    /// a journal name a few tools, one after another), and a run's next
    /// value is compared with it before anything is hashed.
    last: Option<Arc<T>>,
}

impl<T: ?Sized> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            held: hashbrown::HashSet::default(),
            last: None,
        }
    }
}

impl<T: ?Sized + Hash + Eq> Pool<T> {
    /// The pool's copy of `value`'s content, made from `value` only when
    /// the pool has none yet (a value seen before costs no allocation).
    pub(crate) fn of(&mut self, value: &T) -> Arc<T>
    where
        for<'a> Arc<T>: From<&'a T>,
    {
        if let Some(last) = &self.last
            && **last == *value
        {
            return Arc::clone(last);
        }
        let held = match self.held.get(value) {
            Some(held) => Arc::clone(held),
            None => {
                let held: Arc<T> = Arc::from(value);
                self.held.insert(Arc::clone(&held));
                held
            }
        };
        self.last = Some(Arc::clone(&held));
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value gets the one copy whether it repeats the last value or one
    /// from before.
    #[test]
    fn one_copy_of_each_value_in_runs_or_not() {
        let mut pool: Pool<str> = Pool::default();
        let a = pool.of("deploy");
        let again = pool.of("deploy");
        let b = pool.of("rotate");
        let a_later = pool.of("deploy");
        let b_later = pool.of(&String::from("rotate"));
        assert!(Arc::ptr_eq(&a, &again));
        assert!(Arc::ptr_eq(&a, &a_later));
        assert!(Arc::ptr_eq(&b, &b_later));
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!((&*a, &*b), ("deploy", "rotate"));
        assert_eq!(pool.held.len(), 2);
    }
}

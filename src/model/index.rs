//! Index newtypes: positions in the loaded model and analysis, so that an
//! execution index is never passed where a group or event index is meant.
//! Each is four bytes (ten million events fit many times over), and so is
//! an `Option` of one: the position is kept plus one, in a `NonZeroU32`.
//! Each serializes as the bare position.

use serde::{Serialize, Serializer};
use std::num::NonZeroU32;

macro_rules! index {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(NonZeroU32);

        impl std::fmt::Debug for $name {
            /// The position, as `ExecIdx(7)`: not the stored position plus one.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_tuple(stringify!($name)).field(&self.get()).finish()
            }
        }

        impl $name {
            /// The index of position `i` (saturating at `u32::MAX - 1`).
            pub fn new(i: usize) -> Self {
                let i = u32::try_from(i).unwrap_or(u32::MAX);
                Self(NonZeroU32::MIN.saturating_add(i))
            }
            /// The position, for indexing a slice.
            pub fn get(self) -> usize {
                (self.0.get() - 1) as usize
            }
        }

        impl Default for $name {
            /// Position 0.
            fn default() -> Self {
                Self::new(0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_u32(self.0.get() - 1)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.get().fmt(f)
            }
        }
    };
}

index!(
    /// An execution, in the order executions began (their `accepted`
    /// event, else their first event).
    ExecIdx
);
index!(
    /// An event within its execution's event list (time order).
    EventIdx
);
index!(
    /// A group, in analysis order (worst first, then oldest first).
    GroupIdx
);
index!(
    /// A session record, in order of appearance.
    SessionIdx
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_saturate() {
        assert_eq!(ExecIdx::new(7).get(), 7);
        assert_eq!(GroupIdx::new(usize::MAX).get(), u32::MAX as usize - 1);
        assert_eq!(
            GroupIdx::new(u32::MAX as usize - 1).get(),
            u32::MAX as usize - 1
        );
        assert_eq!(ExecIdx::default().get(), 0);
        assert_eq!(serde_json::to_string(&EventIdx::new(3)).unwrap(), "3");
        assert_eq!(serde_json::to_string(&EventIdx::new(0)).unwrap(), "0");
        assert_eq!(EventIdx::new(12).to_string(), "12");
        assert_eq!(format!("{:?}", ExecIdx::new(7)), "ExecIdx(7)");
        assert!(EventIdx::new(1) < EventIdx::new(2));
    }

    #[test]
    fn an_optional_index_is_four_bytes() {
        assert_eq!(std::mem::size_of::<Option<EventIdx>>(), 4);
        assert_eq!(std::mem::size_of::<Option<(EventIdx, EventIdx)>>(), 8);
    }
}

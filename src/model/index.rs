//! Index newtypes: positions in the loaded model and analysis, so that an
//! execution index is never passed where a group or event index is meant.
//! Each is a `u32` (ten million events fit many times over) and serializes
//! as a bare number.

use serde::Serialize;

macro_rules! index {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(u32);

        impl $name {
            /// The index of position `i` (saturating at `u32::MAX`).
            pub fn new(i: usize) -> Self {
                Self(u32::try_from(i).unwrap_or(u32::MAX))
            }
            /// The position, for indexing a slice.
            pub fn get(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
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
        assert_eq!(GroupIdx::new(usize::MAX).get(), u32::MAX as usize);
        assert_eq!(serde_json::to_string(&EventIdx::new(3)).unwrap(), "3");
    }
}

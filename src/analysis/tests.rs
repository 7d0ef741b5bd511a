//! Analysis tests over small hand-built journals.

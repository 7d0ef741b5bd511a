//! Unit tests of the ContextForge reader.

//! Helpers shared by unit tests.

/// A xorshift64 generator (Marsaglia, "Xorshift RNGs", 2003, the 13/7/17
/// triple): the same numbers from the same seed on every machine, for
/// tests that generate their own inputs and must fail the same way twice.
#[derive(Debug, Clone)]
pub(crate) struct XorShift(u64);

impl XorShift {
    /// A generator from `seed`, which must not be zero (zero stays zero).
    pub(crate) fn new(seed: u64) -> Self {
        XorShift(seed)
    }

    /// The next number.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// The next number below `n` (`n` > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

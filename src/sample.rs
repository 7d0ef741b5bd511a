//! The bundled sample incident, compiled into the binary so that `retrace`
//! with no journal works from any directory: the reference incident's `deploy_release` (docs/design.md §5.11)
//! whose HTTP 201 was lost with the stream, then sent again.

use crate::analysis::{Config, Contracts, FingerprintKey};
use crate::journal::JournalSource;

const SESSIONS: &[u8] = include_bytes!("../sample-journals/deploy-release-incident/sessions.jsonl");
const ACTIVITY: &[u8] = include_bytes!("../sample-journals/deploy-release-incident/activity.jsonl");
const CONTRACTS: &str = include_str!("../sample-journals/contracts.toml");
const KEY: &[u8] = include_bytes!("../sample-journals/sample.key");

/// Display names of the embedded journals.
pub const NAMES: [&str; 2] = ["<sample>/sessions.jsonl", "<sample>/activity.jsonl"];

/// The sample incident's journals.
pub fn sources() -> Vec<JournalSource> {
    vec![
        JournalSource::embedded(NAMES[0], SESSIONS),
        JournalSource::embedded(NAMES[1], ACTIVITY),
    ]
}

/// The tool contracts of the sample deployment.
pub fn contracts() -> Contracts {
    // The embedded file is checked by a unit test; fall back to none rather
    // than fail at run time.
    Contracts::parse(CONTRACTS, "<sample>/contracts.toml").unwrap_or_default()
}

/// The sample deployment key (for HMAC fingerprints).
pub fn key() -> FingerprintKey {
    FingerprintKey::from_file_contents(KEY).unwrap_or_default()
}

/// Contracts and key of the sample deployment.
pub fn config() -> Config {
    Config {
        contracts: contracts(),
        key: key(),
        resolutions: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn embedded_contracts_and_key_parse() {
        super::Contracts::parse(super::CONTRACTS, "c").unwrap();
        assert!(super::FingerprintKey::from_file_contents(super::KEY).is_some());
    }
}

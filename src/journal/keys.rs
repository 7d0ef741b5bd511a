//! Key material for checking third-party chains: signer public keys,
//! attestation keys and the exported audit identity that decrypts sealed
//! events. retrace only reads keys; it never writes or stores them.
//!
//! Key files may hold raw bytes, hex text or base64 text (surrounding
//! whitespace ignored); each format module says which key it expects and how
//! long it must be.

use base64::Engine;
use std::fmt;
use std::path::Path;

/// A key file's decoded contents, with its name for messages.
#[derive(Clone)]
pub struct KeyFile {
    /// The path as given.
    pub path: String,
    /// Raw file contents.
    raw: Vec<u8>,
}

impl fmt::Debug for KeyFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyFile({})", self.path)
    }
}

/// A key file that cannot be read or decoded.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// The file could not be read.
    #[error("{path}: cannot read key: {source}")]
    Read {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The file holds no usable key.
    #[error("{path}: {message}")]
    Invalid {
        /// File.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl KeyFile {
    /// Reads a key file.
    ///
    /// # Errors
    /// [`KeyFileError::Read`] naming the file.
    pub fn load(path: &Path) -> Result<Self, KeyFileError> {
        let raw = std::fs::read(path).map_err(|e| KeyFileError::Read {
            path: path.display().to_string(),
            source: e,
        })?;
        Ok(KeyFile {
            path: path.display().to_string(),
            raw,
        })
    }

    /// A key from bytes already in memory (tests, embedding).
    pub fn from_bytes(name: &str, raw: &[u8]) -> Self {
        KeyFile {
            path: name.to_string(),
            raw: raw.to_vec(),
        }
    }

    /// The candidate decodings of the file, most specific first: hex text,
    /// base64 text, then the raw bytes.
    pub fn candidates(&self) -> Vec<Vec<u8>> {
        let t = self.raw.trim_ascii();
        let mut out = Vec::new();
        if let Ok(h) = hex::decode(t)
            && !h.is_empty()
        {
            out.push(h);
        }
        if let Ok(b) = base64::engine::general_purpose::STANDARD.decode(t)
            && !b.is_empty()
        {
            out.push(b);
        }
        if !self.raw.is_empty() {
            out.push(self.raw.clone());
        }
        out
    }

    /// The first decoding of the file that is exactly `len` bytes long.
    ///
    /// # Errors
    /// [`KeyFileError::Invalid`] naming the file and the expected length.
    pub fn exact(&self, len: usize, what: &str) -> Result<Vec<u8>, KeyFileError> {
        self.candidates()
            .into_iter()
            .find(|c| c.len() == len)
            .ok_or_else(|| {
                self.invalid(format!(
                    "expected {what}: {len} bytes as raw bytes, hex or base64"
                ))
            })
    }

    /// An error about this file.
    pub fn invalid(&self, message: impl Into<String>) -> KeyFileError {
        KeyFileError::Invalid {
            path: self.path.clone(),
            message: message.into(),
        }
    }
}

/// Keys given on the command line for chain checks and decryption.
#[derive(Debug, Clone, Default)]
pub struct ChainKeys {
    /// Sallyport audit signer public key (X9.63 / SEC1 P-256 point):
    /// signatures are checked when given (`--signer-key`).
    pub signer_key: Option<KeyFile>,
    /// Sallyport exported audit identity (32-byte P-256 private scalar):
    /// events are decrypted when given (`--audit-identity`).
    pub audit_identity: Option<KeyFile>,
    /// mcp-audit attestation key: the HMAC secret (as in `key.hex`) or the
    /// Ed25519 public key (`--attestation-key`).
    pub attestation_key: Option<KeyFile>,
}

/// Options for loading journals.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Read every journal as this format instead of detecting it.
    pub forced: Option<super::Format>,
    /// Keys for chain checks and decryption.
    pub keys: ChainKeys,
    /// The part of the journals to read (`--since`, `--until`).
    pub window: super::TimeWindow,
    /// With a `--since`, the executions read from before it as context
    /// ([`super::Lookback`]); `None` reads the window alone.
    pub lookback: Option<super::Lookback>,
}

impl LoadOptions {
    /// The window readers apply: [`LoadOptions::window`], its start moved
    /// back by the lookback's reach.
    pub fn read_window(&self) -> super::TimeWindow {
        match &self.lookback {
            Some(l) => self.window.widened(l.reach),
            None => self.window,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_hex_base64_and_raw() {
        let k = KeyFile::from_bytes("k", b"  00ff\n");
        assert_eq!(k.exact(2, "a key").unwrap(), vec![0, 255]);
        let k = KeyFile::from_bytes("k", b"AAE=");
        assert_eq!(k.exact(2, "a key").unwrap(), vec![0, 1]);
        let k = KeyFile::from_bytes("k", &[9, 9, 9]);
        assert_eq!(k.exact(3, "a key").unwrap(), vec![9, 9, 9]);
        let e = k.exact(32, "a P-256 scalar").unwrap_err().to_string();
        assert!(e.starts_with("k: expected a P-256 scalar: 32 bytes"), "{e}");
    }
}

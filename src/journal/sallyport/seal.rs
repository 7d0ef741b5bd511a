//! Sealed events: the audit identity that opens them and Sallyport's
//! ECIES (`SallyportKit/Keystore/ECIES.swift`; docs/formats.md#sallyport-events).

use crate::journal::keys::{KeyFile, KeyFileError};
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};
use p256::elliptic_curve::sec1::ToSec1Point;
use sha2::Sha256;

/// HKDF info of Sallyport's ECIES (`ECIES.swift`).
pub const HKDF_INFO: &[u8] = b"sallyport-identity-v1";

/// The exported audit identity in a key file.
pub(super) fn audit_identity(k: &KeyFile) -> Result<p256::SecretKey, KeyFileError> {
    k.candidates()
        .iter()
        .filter(|c| c.len() == 32)
        .find_map(|c| p256::SecretKey::from_slice(c).ok())
        .ok_or_else(|| {
            k.invalid(
                "expected the exported audit identity: a 32-byte P-256 private key (raw, hex or base64)",
            )
        })
}

/// Which step of opening a sealed event failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// `sealed` is not base64.
    #[error("`sealed` is not base64")]
    NotBase64,
    /// The blob ends before its parts do.
    #[error("blob too short")]
    TooShort,
    /// The ephemeral public key is not a P-256 point.
    #[error("bad ephemeral key")]
    BadEphemeralKey,
    /// The derived key does not fit the cipher.
    #[error("bad key")]
    BadKey,
    /// The nonce is not 12 bytes.
    #[error("bad nonce")]
    BadNonce,
    /// The ciphertext does not authenticate with this identity.
    #[error("authentication failed")]
    AuthenticationFailed,
    /// The public key has no raw form.
    #[error("bad public key")]
    BadPublicKey,
    /// HKDF refused the output length.
    #[error("HKDF expand failed")]
    HkdfExpand,
}

/// Decrypts a sealed blob (ECIES as in the module doc).
///
/// # Errors
/// [`SealError`]: which step failed.
pub fn open(identity: &p256::SecretKey, sealed: &str) -> Result<Vec<u8>, SealError> {
    let blob = base64::engine::general_purpose::STANDARD
        .decode(sealed)
        .map_err(|_| SealError::NotBase64)?;
    let (len, rest) = blob.split_at_checked(2).ok_or(SealError::TooShort)?;
    let n = usize::from(u16::from_be_bytes([len[0], len[1]]));
    let (epk, boxed) = rest.split_at_checked(n).ok_or(SealError::TooShort)?;
    let epk = p256::PublicKey::from_sec1_bytes(epk).map_err(|_| SealError::BadEphemeralKey)?;
    let shared = p256::ecdh::diffie_hellman(identity.to_nonzero_scalar(), epk.as_affine());
    let key = ecies_key(shared.raw_secret_bytes(), &epk)?;
    let (nonce, ct) = boxed.split_at_checked(12).ok_or(SealError::TooShort)?;
    let cipher = ChaCha20Poly1305::new_from_slice(&key).map_err(|_| SealError::BadKey)?;
    let nonce = Nonce::try_from(nonce).map_err(|_| SealError::BadNonce)?;
    cipher
        .decrypt(&nonce, ct)
        .map_err(|_| SealError::AuthenticationFailed)
}

/// The ChaCha20-Poly1305 key both sides derive from the ECDH shared secret
/// (its X coordinate): HKDF-SHA256, salt = the ephemeral public key's raw
/// X‖Y (CryptoKit `rawRepresentation`), info [`HKDF_INFO`], 32 bytes.
///
/// # Errors
/// Never for valid keys; [`SealError::BadPublicKey`] or
/// [`SealError::HkdfExpand`] otherwise.
pub fn ecies_key(shared_x: &[u8], ephemeral: &p256::PublicKey) -> Result<[u8; 32], SealError> {
    let sec1 = ephemeral.to_sec1_point(false);
    let raw = sec1.as_bytes().get(1..).ok_or(SealError::BadPublicKey)?;
    let hk = hkdf::Hkdf::<Sha256>::new(Some(raw), shared_x);
    let mut okm = [0u8; 32];
    hk.expand(HKDF_INFO, &mut okm)
        .map_err(|_| SealError::HkdfExpand)?;
    Ok(okm)
}

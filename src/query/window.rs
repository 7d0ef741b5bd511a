//! `--since` and `--until`: the stretch of time an investigation looks at
//! ([`TimeWindow`], applied by the readers as they read). An execution is
//! in it when it began in it; it is then kept whole, with the events that
//! came after the end of the window, so that its outcome is still known.

pub use crate::journal::TimeWindow;
use chrono::{DateTime, Utc};

/// Reads a point in time as `--since` and `--until` take it: RFC 3339
/// (`2026-07-22T14:00:00Z`, with an offset, or a space for the `T`), or an
/// age before `now` (`2h`, `90m`, `1h30m`, `3d`;
/// [`TimeWindow::parse_bound`]).
///
/// # Errors
/// A message saying what is accepted.
pub fn parse_time(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(&s.replacen(' ', "T", 1)) {
        return Ok(t.with_timezone(&Utc));
    }
    TimeWindow::parse_bound(s, now).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .unwrap()
    }

    #[test]
    fn times_read_as_rfc_3339_or_as_an_age() {
        let now = at("2026-07-22T16:00:00Z");
        assert_eq!(
            parse_time("2026-07-22T14:03:00Z", now),
            Ok(at("2026-07-22T14:03:00Z"))
        );
        assert_eq!(
            parse_time("2026-07-22 16:03:00+02:00", now),
            Ok(at("2026-07-22T14:03:00Z"))
        );
        assert_eq!(parse_time("2h", now), Ok(at("2026-07-22T14:00:00Z")));
        assert_eq!(parse_time("1h30m", now), Ok(at("2026-07-22T14:30:00Z")));
        assert_eq!(parse_time("1d", now), Ok(at("2026-07-21T16:00:00Z")));
        for bad in ["", "2x", "yesterday", "2h-"] {
            let e = parse_time(bad, now).unwrap_err();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }
}

//! `--since` and `--until`: the stretch of time an investigation looks at.
//! An execution is in it when it began in it (its `accepted` event, else
//! its first); it is then kept whole, with the events that came after the
//! end of the window, so that its outcome is still known.

use chrono::{DateTime, Duration, Utc};

/// From when until when executions count; either end may be open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeWindow {
    /// Executions that began before this are left out.
    pub since: Option<DateTime<Utc>>,
    /// Executions that began after this are left out.
    pub until: Option<DateTime<Utc>>,
}

impl TimeWindow {
    /// Whether neither end is set (everything counts).
    pub fn is_open(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }

    /// Whether `t` is in the window (both ends included).
    pub fn contains(&self, t: DateTime<Utc>) -> bool {
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t <= u)
    }

    /// The window in words: `from 2026-07-22 14:00:00Z until 2026-07-22
    /// 15:00:00Z`, `at or after …`, `at or before …`, or `all of the
    /// journals`.
    pub fn describe(&self) -> String {
        let f = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M:%SZ").to_string();
        match (self.since, self.until) {
            (Some(s), Some(u)) => format!("from {} until {}", f(s), f(u)),
            (Some(s), None) => format!("at or after {}", f(s)),
            (None, Some(u)) => format!("at or before {}", f(u)),
            (None, None) => "all of the journals".into(),
        }
    }
}

/// Reads a point in time: RFC 3339 (`2026-07-22T14:00:00Z`, with an
/// offset, or a space for the `T`), or an age before `now`: a number and a
/// unit, `s`, `m`, `h`, `d` or `w`, several in a row (`2h`, `90m`,
/// `1h30m`, `3d`).
///
/// # Errors
/// A message saying what is accepted.
pub fn parse_time(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(&s.replacen(' ', "T", 1)) {
        return Ok(t.with_timezone(&Utc));
    }
    age(s)
        .and_then(|d| now.checked_sub_signed(d))
        .ok_or_else(|| {
            format!(
                "{s:?} is not a time: give RFC 3339 (2026-07-22T14:00:00Z) or an age such as 2h, 90m, 1h30m, 3d"
            )
        })
}

/// `1h30m` as a duration; `None` unless the whole text is numbers with
/// units.
fn age(s: &str) -> Option<Duration> {
    if s.is_empty() {
        return None;
    }
    let mut total = Duration::zero();
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let n: i64 = num.parse().ok()?;
        num.clear();
        let d = match c {
            's' => Duration::try_seconds(n)?,
            'm' => Duration::try_minutes(n)?,
            'h' => Duration::try_hours(n)?,
            'd' => Duration::try_days(n)?,
            'w' => Duration::try_weeks(n)?,
            _ => return None,
        };
        total = total.checked_add(&d)?;
    }
    num.is_empty().then_some(total)
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
        for bad in ["", "2", "h", "2x", "yesterday", "2h-"] {
            let e = parse_time(bad, now).unwrap_err();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_window_holds_both_its_ends() {
        let w = TimeWindow {
            since: Some(at("2026-07-22T14:00:00Z")),
            until: Some(at("2026-07-22T15:00:00Z")),
        };
        assert!(w.contains(at("2026-07-22T14:00:00Z")));
        assert!(w.contains(at("2026-07-22T15:00:00Z")));
        assert!(!w.contains(at("2026-07-22T13:59:59Z")));
        assert!(!w.contains(at("2026-07-22T15:00:01Z")));
        assert!(TimeWindow::default().is_open());
        assert_eq!(
            w.describe(),
            "from 2026-07-22 14:00:00Z until 2026-07-22 15:00:00Z"
        );
    }
}

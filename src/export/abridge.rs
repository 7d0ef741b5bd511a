//! Large groups in documents meant to be read (docs/design.md §7.5): a
//! Markdown postmortem of one group of 200,000 calls would be a million
//! timeline rows and a sequence diagram that Mermaid refuses to draw (its
//! `maxTextSize` is 50,000 characters by default). Such a group is shown
//! by the executions its verdict and answers name, and those at its two
//! ends; every run of executions left out is one line saying how many
//! events of how many executions it stands for. The JSON and CSV exports
//! are data, and keep every row.

use super::report::{GroupReport, QuestionReport, TimelineRow};
use std::collections::HashSet;

/// A group of more executions than this is abridged.
pub const FULL_EXECUTIONS: usize = 60;

/// Executions kept at each end of an abridged group, in time order.
pub const ENDS: usize = 10;

/// Findings of one kind listed in full before the rest are counted.
pub const FINDINGS_PER_KIND: usize = 20;

/// Which executions of a group a document shows.
#[derive(Debug)]
pub struct Shown<'a> {
    /// `None`: every execution (a group of at most [`FULL_EXECUTIONS`]).
    kept: Option<HashSet<&'a str>>,
}

impl<'a> Shown<'a> {
    /// The executions of `g` to show: all of them in a small group; else the
    /// first and last [`ENDS`] and every one whose id the verdict's reason,
    /// the five answers or their evidence name.
    pub fn of(g: &'a GroupReport) -> Shown<'a> {
        let kept = kept(&g.reason, &g.questions, &g.executions);
        Shown {
            kept: kept.map(|k| {
                g.executions
                    .iter()
                    .zip(k)
                    .filter(|(_, k)| *k)
                    .map(|(x, _)| x.as_str())
                    .collect()
            }),
        }
    }

    /// Whether anything is left out.
    pub fn abridged(&self) -> bool {
        self.kept.is_some()
    }

    /// Number of executions shown, of `of`.
    pub fn count(&self, of: usize) -> usize {
        self.kept.as_ref().map_or(of, HashSet::len)
    }

    /// Whether the execution named `id` is shown.
    pub fn shows(&self, id: &str) -> bool {
        self.kept.as_ref().is_none_or(|k| k.contains(id))
    }

    /// Whether a timeline row is shown: a row of a shown execution, or of
    /// none (a reviewer decision names its execution; a row without one is
    /// about the group).
    pub fn shows_row(&self, r: &TimelineRow) -> bool {
        r.execution_id.as_deref().is_none_or(|x| self.shows(x))
    }

    /// The timeline of `g` as shown: each row kept, or in place of each
    /// run of rows left out, one [`Piece::Gap`]. A timeline built abridged
    /// ([`GroupReport::left_out`]) holds only the rows shown, and its gaps
    /// are where the build counted them.
    pub fn timeline<'r>(&self, g: &'r GroupReport) -> Vec<Piece<'r>> {
        if let Some(left_out) = &g.left_out {
            let mut out = Vec::with_capacity(g.timeline.len() + left_out.len());
            let mut gaps = left_out.iter().peekable();
            for (i, r) in g.timeline.iter().enumerate() {
                while let Some(gap) = gaps.next_if(|gap| gap.before <= i) {
                    out.push(gap.piece());
                }
                out.push(Piece::Row(r));
            }
            out.extend(gaps.map(LeftOut::piece));
            return out;
        }
        let mut out = Vec::new();
        let mut gap: Option<(usize, HashSet<&'r str>)> = None;
        for r in &g.timeline {
            if self.shows_row(r) {
                if let Some((events, xs)) = gap.take() {
                    out.push(Piece::Gap {
                        events,
                        executions: xs.len(),
                    });
                }
                out.push(Piece::Row(r));
            } else {
                let (events, xs) = gap.get_or_insert_with(|| (0, HashSet::new()));
                *events += 1;
                if let Some(x) = r.execution_id.as_deref() {
                    xs.insert(x);
                }
            }
        }
        if let Some((events, xs)) = gap {
            out.push(Piece::Gap {
                events,
                executions: xs.len(),
            });
        }
        out
    }
}

/// Which of a group's executions (`executions`, in order) a document
/// shows, aligned with them; `None` for a group of at most
/// [`FULL_EXECUTIONS`], shown whole: the first and last [`ENDS`] and every
/// one whose id the verdict's `reason`, the five answers or their evidence
/// name.
pub fn kept(
    reason: &str,
    questions: &[QuestionReport],
    executions: &[String],
) -> Option<Vec<bool>> {
    if executions.len() <= FULL_EXECUTIONS {
        return None;
    }
    let mut texts: Vec<&str> = vec![reason];
    for q in questions {
        texts.push(&q.answer);
        texts.extend(q.evidence.iter().map(String::as_str));
    }
    let named: HashSet<&str> = texts
        .into_iter()
        .flat_map(str::split_whitespace)
        .map(|w| {
            w.trim_matches(|c: char| {
                matches!(
                    c,
                    '(' | ')' | '[' | ']' | ',' | ';' | ':' | '.' | '`' | '"' | '\''
                )
            })
        })
        .collect();
    let n = executions.len();
    Some(
        executions
            .iter()
            .enumerate()
            .map(|(i, x)| i < ENDS || i >= n - ENDS || named.contains(x.as_str()))
            .collect(),
    )
}

/// A run of timeline rows a timeline built abridged left out
/// ([`GroupReport::left_out`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeftOut {
    /// The index of the first row shown after the run in
    /// [`GroupReport::timeline`] (its length for a run at the end).
    pub before: usize,
    /// Events left out here.
    pub events: usize,
    /// Executions they belong to.
    pub executions: usize,
}

impl LeftOut {
    fn piece<'r>(&self) -> Piece<'r> {
        Piece::Gap {
            events: self.events,
            executions: self.executions,
        }
    }
}

/// One piece of an abridged timeline.
#[derive(Debug)]
pub enum Piece<'r> {
    /// A row shown.
    Row(&'r TimelineRow),
    /// Rows left out: how many events, of how many executions.
    Gap {
        /// Events left out here.
        events: usize,
        /// Executions they belong to.
        executions: usize,
    },
}

/// What a gap stands for: `4,990 events of 998 other executions`.
pub fn left_out(events: usize, executions: usize) -> String {
    let plural = |n: usize, one: &str, many: &str| {
        format!("{} {}", thousands(n), if n == 1 { one } else { many })
    };
    format!(
        "{} of {}",
        plural(events, "event", "events"),
        plural(executions, "other execution", "other executions")
    )
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn gaps_are_counted_in_words() {
        assert_eq!(left_out(1, 1), "1 event of 1 other execution");
        assert_eq!(left_out(4990, 998), "4,990 events of 998 other executions");
    }
}

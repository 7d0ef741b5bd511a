//! The bursts of a gh-aw gateway log: the calls and answers of one server
//! held until the burst ends, then paired (by content where an answer names
//! its call, the rest by position) and emitted, with the doubt a pairing by
//! position carries (docs/design.md §2.5), and the counts of how answers
//! were paired over the whole log.

use crate::journal::exchange::{Answer, End, Pending};
use crate::journal::{ReadCtx, pairing};
use crate::model::{Pairing, SourceRef};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// How answers were paired, over the whole log.
#[derive(Default)]
pub(super) struct Counts {
    /// Paired by position while several requests were in flight.
    pub(super) positional: u64,
    /// Of those, the ones whose answer may be another call's.
    pub(super) uncertain: u64,
    /// Paired by content.
    pub(super) by_content: u64,
    /// Lines of `tools/call` requests that never got an answer.
    pub(super) unanswered: Vec<u32>,
}

/// One burst of a server: its calls and answers are held until it ends,
/// because which answer is whose is decided over the whole burst
/// (docs/design.md §2.5): by content where an answer names its call, the
/// rest by position, and a pairing by position is uncertain when the
/// answers its call may have got differ.
#[derive(Default)]
pub(super) struct Burst {
    /// The `tools/call` requests, in the order sent.
    pub(super) calls: Vec<BurstCall>,
    /// Every answer, in the order received.
    pub(super) answers: Vec<BurstAnswer>,
    /// Whether requests other than `tools/call` (a `tools/list`) were in
    /// flight: their answers may name any tool, so the burst is paired by
    /// position only.
    pub(super) others: bool,
    /// Answers that came with no request in flight.
    pub(super) orphans: usize,
    /// When the other requests still waiting at the end of the journal
    /// were sent: an answer a call got may be theirs.
    pub(super) open_others: Vec<DateTime<Utc>>,
}

/// A `tools/call` of a burst.
pub(super) struct BurstCall {
    pub(super) pending: Pending,
    pub(super) sent: DateTime<Utc>,
    pub(super) tool: String,
    pub(super) arguments: Value,
}

/// An answer of a burst.
pub(super) struct BurstAnswer {
    pub(super) at: DateTime<Utc>,
    pub(super) source: SourceRef,
    pub(super) failure: bool,
    /// How it ends its call; `None` for the answer to another request or
    /// one with no request in flight.
    pub(super) end: Option<End>,
    /// The call position gives it (first in, first out over every request).
    pub(super) fifo: Option<usize>,
    /// The most requests in flight together while that call waited.
    pub(super) in_flight: usize,
    /// What it says, for pairing by content; `None` when the burst cannot
    /// be paired by content.
    pub(super) text: Option<String>,
}

impl Burst {
    /// Whether answers can still be paired by content (see [`Burst::others`]
    /// and [`pairing::MAX_BURST`]; with an answer too many, position is
    /// off and content is not tried either).
    pub(super) fn by_content(&self) -> bool {
        !self.others && self.orphans == 0 && self.calls.len() <= pairing::MAX_BURST
    }

    /// For each answer, its call and, when paired by content, why.
    fn assign(&self) -> Vec<Option<(usize, Option<String>)>> {
        let texts: Option<Vec<&str>> = self.answers.iter().map(|a| a.text.as_deref()).collect();
        match texts {
            Some(texts) if self.by_content() && self.calls.len() > 1 => {
                let requests: Vec<pairing::Request<'_>> = self
                    .calls
                    .iter()
                    .map(|c| pairing::Request {
                        sent: c.sent,
                        tool: &c.tool,
                        arguments: &c.arguments,
                    })
                    .collect();
                let replies: Vec<pairing::Reply<'_>> = self
                    .answers
                    .iter()
                    .zip(texts)
                    .map(|(a, text)| pairing::Reply {
                        at: a.at,
                        failure: a.failure,
                        text,
                    })
                    .collect();
                pairing::pair(&requests, &replies)
                    .into_iter()
                    .map(|p| p.map(|p| (p.request, p.by_content)))
                    .collect()
            }
            _ => self
                .answers
                .iter()
                .map(|a| a.fifo.map(|c| (c, None)))
                .collect(),
        }
    }

    /// Pairs the burst's answers with its calls and emits them; `server`
    /// names the server in the words of a pairing. The calls left without
    /// an answer (at the end of the journal) go to `counts.unanswered`.
    ///
    /// A call paired by position while others were in flight may have got
    /// any answer of the burst not paired by content that came after it
    /// was sent (docs/design.md §2.5); when those differ (a failure among
    /// successes, or a call of the burst never answered), its pairing is
    /// uncertain, whether its own answer is a success or a failure. After
    /// an answer that came with no request in flight, every failure paired
    /// by position is uncertain (the pairings are off by one).
    pub(super) fn flush(self, ctx: &mut ReadCtx<'_>, server: &str, counts: &mut Counts) {
        let assigned = self.assign();
        let Burst {
            calls,
            answers,
            others: _,
            orphans,
            open_others,
        } = self;
        let n = answers.len();
        let times: Vec<DateTime<Utc>> = answers.iter().map(|a| a.at).collect();
        // From each answer on: the failures and successes not paired by
        // content.
        let (mut failed_from, mut ok_from) = (vec![0usize; n + 1], vec![0usize; n + 1]);
        for j in (0..n).rev() {
            let free = assigned[j].as_ref().is_none_or(|(_, why)| why.is_none());
            failed_from[j] = failed_from[j + 1] + usize::from(free && answers[j].failure);
            ok_from[j] = ok_from[j + 1] + usize::from(free && !answers[j].failure);
        }
        let mut answered = vec![false; calls.len()];
        for (c, _) in assigned.iter().flatten() {
            if let Some(a) = answered.get_mut(*c) {
                *a = true;
            }
        }
        // Calls never answered (the journal ended first): an answer another
        // call got may be theirs.
        let open: Vec<DateTime<Utc>> = calls
            .iter()
            .zip(&answered)
            .filter(|(_, done)| !**done)
            .map(|(c, _)| c.sent)
            .chain(open_others)
            .collect();
        let mut calls: Vec<Option<BurstCall>> = calls.into_iter().map(Some).collect();
        for (a, assigned) in answers.into_iter().zip(assigned) {
            let (Some((c, content)), Some(end)) = (assigned, a.end) else {
                continue;
            };
            let Some(call) = calls.get_mut(c).and_then(Option::take) else {
                continue;
            };
            let mut answer = Answer::new(a.at, a.source, end);
            answer.pairing = match content {
                Some(why) => {
                    counts.by_content += 1;
                    Pairing::ByContent { why }
                }
                None if a.in_flight > 1 || orphans > 0 => {
                    // The answers this call may have got: every one from
                    // the first that came after it was sent.
                    let from = times.partition_point(|t| *t < call.sent);
                    let doubt = Doubt {
                        server,
                        in_flight: a.in_flight,
                        failure: a.failure,
                        orphans,
                        failed: failed_from[from],
                        ok: ok_from[from],
                        open: open.iter().filter(|t| **t <= a.at).count(),
                    };
                    match doubt.why() {
                        Some(why) => {
                            counts.positional += 1;
                            counts.uncertain += 1;
                            Pairing::ByPosition {
                                why,
                                uncertain: true,
                            }
                        }
                        None if a.in_flight > 1 => {
                            counts.positional += 1;
                            Pairing::ByPosition {
                                why: format!(
                                    "{} requests to {server} were in flight; the server may have answered out of order",
                                    a.in_flight
                                ),
                                uncertain: false,
                            }
                        }
                        None => Pairing::ById,
                    }
                }
                None => Pairing::ById,
            };
            call.pending.answer(ctx, answer);
        }
        counts.unanswered.extend(
            calls
                .into_iter()
                .flatten()
                .map(|c| c.pending.source().position()),
        );
    }
}

/// What a call paired by position may have got instead of its answer.
struct Doubt<'a> {
    server: &'a str,
    in_flight: usize,
    /// Whether its own answer is a failure.
    failure: bool,
    /// Answers of the burst that came with no request in flight.
    orphans: usize,
    /// Answers it may have got (not paired by content, after it was sent)
    /// that failed, and that succeeded (its own among them).
    failed: usize,
    ok: usize,
    /// Calls of the burst never answered, sent before its answer came.
    open: usize,
}

impl Doubt<'_> {
    /// Why the answer may be another call's, or `None` when whichever it
    /// got says the same.
    fn why(&self) -> Option<String> {
        if self.orphans > 0 && self.failure {
            return Some(format!(
                "{} answer(s) to this server came with no request in flight: the pairing is off, and this failure may be another call's",
                self.orphans
            ));
        }
        let differ = if self.failure {
            self.ok > 0
        } else {
            self.failed > 0
        };
        if !differ && self.open == 0 {
            return None;
        }
        // The open requests were sent before this answer came, not always
        // before this call: "before it" read as the latter.
        let never = match self.open {
            0 => String::new(),
            1 => ", and 1 request sent before this answer came never got one".to_string(),
            k => format!(", and {k} requests sent before this answer came never got one"),
        };
        Some(format!(
            "{} requests to {} were in flight and the answers this call may have got differ ({} failed, {} succeeded{never}): this answer may be another call's",
            self.in_flight, self.server, self.failed, self.ok
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::Doubt;

    /// The requests left unanswered are placed against the answer, which
    /// they preceded, not against the call (one was sent after it).
    #[test]
    fn unanswered_requests_are_said_to_precede_the_answer() {
        let d = Doubt {
            server: "safeoutputs",
            in_flight: 2,
            failure: false,
            orphans: 0,
            failed: 0,
            ok: 1,
            open: 1,
        };
        assert_eq!(
            d.why().as_deref(),
            Some(
                "2 requests to safeoutputs were in flight and the answers this call may have got differ (0 failed, 1 succeeded, and 1 request sent before this answer came never got one): this answer may be another call's"
            )
        );
    }
}

//! How a record's `outcome`, `error` and `denial_reason` read: refused
//! before dispatch, never sent, answered by the upstream, or unknown.
//!
//! The rules follow where mcp-audit-gateway 0.1.0 writes each outcome
//! (`mcp_gateway/gateway.py`: `handle`, `_tools_call`) and the texts of its
//! upstream errors (`mcp_gateway/upstreams/http.py`, `upstreams/stdio.py`).
//! Where the text leaves a doubt the reading is the cautious one: an
//! unknown outcome, never "not sent".

use crate::journal::exchange::End;
use crate::model::OutcomeKind;

/// Every `outcome` value mcp-audit-gateway 0.1.0 writes (`gateway.py`,
/// `rbac.py`). Detection accepts a line whose outcome is one of them.
pub(super) const OUTCOMES: &[&str] = &[
    "ok",
    "upstream_error",
    "internal_error",
    "tool_not_found",
    "rate_limited",
    "unauthenticated",
    "signature_invalid",
    "denied_policy",
    "denied_rbac",
];

/// Outcomes the gateway writes when it refuses a request before any
/// upstream call: authentication, signature, tool visibility, tenant and
/// role policy (`rbac.py` `evaluate_tool_access`), the tenant's rate limit.
const REFUSALS: &[&str] = &[
    "tool_not_found",
    "rate_limited",
    "unauthenticated",
    "signature_invalid",
    "denied_policy",
    "denied_rbac",
];

/// `URLError` reasons (`upstreams/http.py`: "upstream 'x' is unreachable:
/// <reason>") that come from connecting, before a byte of the request is
/// sent: refused, no name, no route, no network, a certificate refused in
/// the TLS handshake. Any other reason (a timeout, a reset) may have come
/// while the request was being sent.
const NOT_SENT_REASONS: &[&str] = &[
    "Connection refused",
    "Name or service not known",
    "Temporary failure in name resolution",
    "nodename nor servname",
    "No address associated with hostname",
    "No route to host",
    "Network is unreachable",
    "Cannot assign requested address",
    "CERTIFICATE_VERIFY_FAILED",
];

/// stdio upstream errors (`upstreams/stdio.py`) raised before the request
/// was written: the server process did not start, or its stdin was gone.
const STDIO_NOT_SENT: &[&str] = &["failed to start:", "stdin is unavailable", "pipe is broken"];

/// JSON-RPC error messages by which an MCP server refuses a request before
/// running any tool (the protocol errors of the MCP tools specification:
/// unknown tool, invalid arguments; JSON-RPC's own). The log keeps only the
/// message of an upstream's JSON-RPC error, not its code.
const PROTOCOL_REFUSALS: &[&str] = &[
    "unknown tool",
    "tool not found",
    "method not found",
    "invalid params",
    "invalid request",
    "parse error",
];

/// Why the reader places a `dispatched` event at the call's start when the
/// answer shows the upstream was called.
pub(super) const DISPATCH_WHY: &str = "the log records a call when it has ended; latency_ms times the upstream call, so the call left the gateway at timestamp − latency_ms";

/// How long an HTTP upstream call waits for its answer before it times out:
/// `HttpUpstream(timeout=15.0)` in `upstreams/http.py`, which
/// `build_upstream` never changes (0.1.0 has no setting for it). A
/// `TimeoutError` internal error ends a call that was sent at least this
/// long before its record.
pub(super) const UPSTREAM_TIMEOUT_MS: f64 = 15_000.0;

/// Why a gateway timeout is read as a dispatch.
pub(super) const TIMEOUT_WHY: &str = "a TimeoutError is the gateway's upstream call timing out while it waited for the answer (an HTTP upstream waits 15 s; a failed connect would be an upstream_error), so the request was sent; the record has no latency, so the call is placed 15 s before it";

/// How a record's call ended, and why the reader reads a dispatch into it
/// when the end implies one ([`End`] other than a refusal, a dispatch
/// failure or an unknown outcome).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reading {
    /// How the call ended.
    pub end: End,
    /// Why the call is taken to have left the gateway at its start.
    pub dispatch_why: &'static str,
}

impl Reading {
    fn new(end: End) -> Reading {
        Reading {
            end,
            dispatch_why: DISPATCH_WHY,
        }
    }
}

/// Reads one `tools/call` record's end from its `outcome`, `error` and
/// `denial_reason`, and whether it names an `upstream` (the gateway names
/// it once the tool's route is resolved).
///
/// * `ok`: the upstream answered with a JSON-RPC result: success (a tool
///   error, `isError: true`, is `ok` too).
/// * refusals ([`REFUSALS`], `denied_*`, or any other outcome that comes
///   with a `denial_reason`): rejected before dispatch.
/// * `upstream_error` with no upstream: resolving the tool name failed
///   (listing the upstreams' tools), so the call was not sent; with an
///   upstream, the error text decides ([`upstream_error`]).
/// * `internal_error`: a `TimeoutError` is a gateway timeout (dispatched,
///   outcome unknown); any other exception may have come before the call
///   was sent or after: unknown.
/// * any other outcome: unknown, named in the error.
pub(super) fn read(
    outcome: &str,
    error: Option<&str>,
    denial: Option<&str>,
    upstream: Option<&str>,
) -> Reading {
    let unknown = |why: String| Reading::new(End::response(OutcomeKind::Unknown, Some(why), None));
    match outcome {
        "ok" => Reading::new(End::response(OutcomeKind::Success, None, None)),
        o if REFUSALS.contains(&o) || o.starts_with("denied_") => refused(o, denial),
        "upstream_error" => match (upstream, error) {
            (None, e) => Reading::new(End::DispatchFailed {
                error: format!(
                    "the gateway could not resolve the tool name (listing its upstreams' tools failed: {}); nothing was sent for this call",
                    e.unwrap_or("no error text")
                ),
            }),
            (Some(_), Some(e)) => Reading::new(upstream_error(e)),
            (Some(_), None) => unknown(
                "upstream_error with no error text: whether the call reached the tool, the record does not show".into(),
            ),
        },
        "internal_error" => match error {
            Some(e) if is_timeout(e) => Reading {
                end: End::TimedOut {
                    error: Some(format!(
                        "{e}: the gateway stopped waiting for the upstream and answered -32603 internal gateway error; what the tool did, the log does not show"
                    )),
                },
                dispatch_why: TIMEOUT_WHY,
            },
            e => unknown(format!(
                "internal gateway error {}: where it happened, before the call was sent or after, the record does not say",
                e.unwrap_or("with no error text")
            )),
        },
        o if denial.is_some() => refused(o, denial),
        o => unknown(format!(
            "outcome {o:?} is not one mcp-audit-gateway 0.1.0 writes: whether the call was sent, the record does not show"
        )),
    }
}

/// A refusal: the outcome, with the gateway's reason when it gives one.
fn refused(outcome: &str, denial: Option<&str>) -> Reading {
    Reading::new(End::Rejected {
        reason: match denial {
            Some(d) => format!("{outcome}: {d}"),
            None => outcome.to_string(),
        },
    })
}

/// Reads the `error` of an `upstream_error` written after the route was
/// resolved (the upstream call itself failed):
///
/// * unreachable for a reason of [`NOT_SENT_REASONS`], or a stdio upstream
///   that could not be written to ([`STDIO_NOT_SENT`]): not sent, a retry
///   is safe;
/// * "returned HTTP NNN": the upstream answered with that status, a
///   failure that the HTTP status rules read (docs/design.md §10.6: 408 and
///   5xx do not say whether the request acted; other 4xx refused it);
/// * a protocol refusal ([`PROTOCOL_REFUSALS`]): the upstream answered
///   that it ran no tool, a failure;
/// * anything else (a connection that broke while the request was sent or
///   answered, a server that closed before responding, a JSON-RPC error
///   whose code the log does not keep): unknown.
pub(super) fn upstream_error(e: &str) -> End {
    if let Some((_, reason)) = e.split_once("is unreachable: ") {
        return if NOT_SENT_REASONS.iter().any(|r| reason.contains(r)) {
            End::DispatchFailed {
                error: e.to_string(),
            }
        } else {
            End::response(
                OutcomeKind::Unknown,
                Some(format!(
                    "{e}: the connection failed in a way that does not show whether the request was sent"
                )),
                None,
            )
        };
    }
    if STDIO_NOT_SENT.iter().any(|s| e.contains(s)) {
        return End::DispatchFailed {
            error: e.to_string(),
        };
    }
    if let Some(status) = http_status(e) {
        return End::Outcome {
            outcome: OutcomeKind::Failure,
            error: Some(e.to_string()),
            status: Some(status),
            result_reference: None,
        };
    }
    let lower = e.to_lowercase();
    if PROTOCOL_REFUSALS.iter().any(|p| lower.contains(p)) {
        return End::response(OutcomeKind::Failure, Some(e.to_string()), None);
    }
    End::response(
        OutcomeKind::Unknown,
        Some(format!(
            "{e}: the upstream call failed, and the record does not show whether the tool acted before it did (an upstream's JSON-RPC error keeps only its message)"
        )),
        None,
    )
}

/// The status of "upstream 'x' returned HTTP 404: …" (`upstreams/http.py`
/// for an `HTTPError`).
fn http_status(e: &str) -> Option<u16> {
    let (_, rest) = e.split_once("returned HTTP ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse::<u16>()
        .ok()
        .filter(|s| (100..=599).contains(s))
}

/// Whether an internal error's `repr` is a timeout: `TimeoutError(…)`, or
/// `timeout(…)` as Python before 3.10 named `socket.timeout`.
fn is_timeout(e: &str) -> bool {
    e.starts_with("TimeoutError(") || e.starts_with("timeout(") || e.starts_with("socket.timeout(")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(outcome: &str, error: Option<&str>, denial: Option<&str>, up: Option<&str>) -> End {
        read(outcome, error, denial, up).end
    }

    #[test]
    fn refusals_name_their_reason() {
        for o in REFUSALS {
            assert!(
                matches!(end(o, None, None, None), End::Rejected { reason } if reason == *o),
                "{o}"
            );
        }
        assert_eq!(
            end(
                "denied_rbac",
                None,
                Some("role 'agent' denies 'x.y'"),
                Some("x")
            ),
            End::Rejected {
                reason: "denied_rbac: role 'agent' denies 'x.y'".into()
            }
        );
        // A refusal this version does not name, known by its reason.
        assert!(matches!(
            end("quota_exceeded", None, Some("monthly quota"), None),
            End::Rejected { .. }
        ));
    }

    #[test]
    fn unreachable_for_a_connect_reason_was_not_sent() {
        let refused = "upstream 'lab-tools' is unreachable: [Errno 111] Connection refused";
        assert!(matches!(
            end("upstream_error", Some(refused), None, Some("lab-tools")),
            End::DispatchFailed { error } if error == refused
        ));
        for r in [
            "[Errno -2] Name or service not known",
            "[Errno 113] No route to host",
        ] {
            let e = format!("upstream 'u' is unreachable: {r}");
            assert!(
                matches!(upstream_error(&e), End::DispatchFailed { .. }),
                "{r}"
            );
        }
        // A timeout or a reset may have come while the request was sent.
        for r in ["timed out", "[Errno 104] Connection reset by peer"] {
            let e = format!("upstream 'u' is unreachable: {r}");
            assert!(
                matches!(
                    upstream_error(&e),
                    End::Outcome {
                        outcome: OutcomeKind::Unknown,
                        ..
                    }
                ),
                "{r}"
            );
        }
    }

    #[test]
    fn http_errors_keep_their_status() {
        let e = "upstream 'lab-tools' returned HTTP 404: Session not found";
        assert_eq!(
            upstream_error(e),
            End::Outcome {
                outcome: OutcomeKind::Failure,
                error: Some(e.into()),
                status: Some(404),
                result_reference: None
            }
        );
        assert!(matches!(
            upstream_error("upstream 'u' returned HTTP 502: Bad Gateway"),
            End::Outcome {
                status: Some(502),
                ..
            }
        ));
    }

    #[test]
    fn protocol_refusals_fail_and_other_upstream_errors_are_unknown() {
        assert!(matches!(
            upstream_error("Unknown tool: deploy"),
            End::Outcome {
                outcome: OutcomeKind::Failure,
                status: None,
                ..
            }
        ));
        for e in [
            "database is locked",
            "upstream 'u' closed before responding: Traceback",
            "event stream contained no data payload",
        ] {
            assert!(
                matches!(
                    upstream_error(e),
                    End::Outcome {
                        outcome: OutcomeKind::Unknown,
                        ..
                    }
                ),
                "{e}"
            );
        }
        assert!(matches!(
            upstream_error("upstream 'u' failed to start: [Errno 2] No such file"),
            End::DispatchFailed { .. }
        ));
        // Resolving the name failed: the call itself was never sent.
        assert!(matches!(
            end(
                "upstream_error",
                Some("upstream 'u' is unreachable: timed out"),
                None,
                None
            ),
            End::DispatchFailed { .. }
        ));
    }

    #[test]
    fn internal_errors() {
        let r = read(
            "internal_error",
            Some("TimeoutError('timed out')"),
            None,
            None,
        );
        assert!(matches!(r.end, End::TimedOut { .. }));
        assert_eq!(r.dispatch_why, TIMEOUT_WHY);
        assert!(matches!(
            end("internal_error", Some("KeyError('agent')"), None, None),
            End::Outcome {
                outcome: OutcomeKind::Unknown,
                ..
            }
        ));
        assert!(matches!(
            end("internal_error", None, None, None),
            End::Outcome {
                outcome: OutcomeKind::Unknown,
                ..
            }
        ));
    }

    #[test]
    fn ok_is_success_and_unknown_words_are_unknown() {
        assert_eq!(
            end("ok", None, None, Some("u")),
            End::response(OutcomeKind::Success, None, None)
        );
        assert!(matches!(
            end("exploded", None, None, Some("u")),
            End::Outcome { outcome: OutcomeKind::Unknown, error: Some(e), .. } if e.contains("exploded")
        ));
    }
}

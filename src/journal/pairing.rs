//! Pairing answers with requests by what the answers say, for logs whose
//! answers carry no id that names their request (docs/design.md §2.5).
//!
//! A burst is a stretch in which requests to one server overlapped. Its
//! answers are paired with its requests first by content, then by
//! position:
//!
//! * **By content.** An answer names a request when it holds what only
//!   that request carries: an error that names the operation (a word of the
//!   tool name: `failed to get user` and `get_me`), or a text that names
//!   the object asked for (an argument value: the repository, number or
//!   path of the request). Items every candidate carries (the owner and
//!   repository all calls of a run share) say nothing and are not counted.
//!   The candidates of an answer are the requests sent before it; it names
//!   the one with the most items found, and only when that one is unique.
//!   A request named by two answers is paired by content with neither.
//! * **By position.** The rest, in order: the oldest request left gets the
//!   next answer left. When the pairings by content would leave an answer
//!   to a request sent after it, none of them is kept.
//!
//! Cost: per answer, every request sent before it in the burst, each with
//! a handful of items, each looked up in the answer's word set (a phrase
//! of several words, once all its words are there, in its text); bursts of
//! more than [`MAX_BURST`] requests are paired by position only, and at most
//! [`MAX_TEXT`] bytes of an answer are read.

use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The most requests of one burst compared by content; a longer burst is
/// paired by position only (the cost grows with the square of its length).
pub const MAX_BURST: usize = 64;

/// How much of an answer's text is read for names, in bytes.
pub const MAX_TEXT: usize = 64 * 1024;

/// An argument value of more words than this is content (a body, a
/// query), not the name of an object, and is not looked for.
const MAX_PHRASE_WORDS: usize = 8;

/// A request of the burst.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// When it was sent.
    pub sent: DateTime<Utc>,
    /// The tool it calls.
    pub tool: &'a str,
    /// Its arguments (an object; any JSON value is taken).
    pub arguments: &'a Value,
}

/// An answer of the burst.
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    /// When it arrived.
    pub at: DateTime<Utc>,
    /// Whether it is a failure: an error names the operation, so the words
    /// of tool names count; in a result only argument values do (a result's
    /// field names are the same words as many tool names).
    pub failure: bool,
    /// Its text: the error, or the result's text.
    pub text: &'a str,
}

/// How one answer was paired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paired {
    /// The request (index into the requests given).
    pub request: usize,
    /// `Some(why)` when paired by content, in words
    /// (`the error names "get" (the tool name get_me) …`); `None` by
    /// position.
    pub by_content: Option<String>,
}

/// Pairs the answers of one burst with its requests (both in time order):
/// by content where an answer names one request ([`by_content`]), the rest
/// by position. One entry per answer; `None` for an answer left without a
/// request (more answers than requests). Requests may outnumber answers
/// (the journal ended first): the last ones left get none.
pub fn pair(requests: &[Request<'_>], replies: &[Reply<'_>]) -> Vec<Option<Paired>> {
    let named = if requests.len() <= MAX_BURST {
        by_content(requests, replies)
    } else {
        vec![None; replies.len()]
    };
    if let Some(p) = fill_by_position(requests, replies, &named) {
        return p;
    }
    let none = vec![None; replies.len()];
    fill_by_position(requests, replies, &none).unwrap_or_else(|| {
        // Plain position even where the times disagree: the log's order
        // is all there is.
        (0..replies.len())
            .map(|j| {
                (j < requests.len()).then_some(Paired {
                    request: j,
                    by_content: None,
                })
            })
            .collect()
    })
}

/// The pairings `named` by content, and the rest by position; `None` when
/// that would give an answer a request sent after it.
fn fill_by_position(
    requests: &[Request<'_>],
    replies: &[Reply<'_>],
    named: &[Option<Named>],
) -> Option<Vec<Option<Paired>>> {
    let taken: HashSet<usize> = named.iter().flatten().map(|n| n.request).collect();
    let mut left = (0..requests.len()).filter(|r| !taken.contains(r));
    let mut out = Vec::with_capacity(replies.len());
    for (reply, n) in replies.iter().zip(named) {
        out.push(match n {
            Some(n) => Some(Paired {
                request: n.request,
                by_content: Some(n.why.clone()),
            }),
            None => match left.next() {
                Some(r) if requests[r].sent > reply.at => return None,
                Some(r) => Some(Paired {
                    request: r,
                    by_content: None,
                }),
                None => None,
            },
        });
    }
    Some(out)
}

/// One answer's request by content, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The request (index).
    pub request: usize,
    /// Why, in words.
    pub why: String,
}

/// Where an item of a request comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    /// A word of the tool name.
    Tool,
    /// An argument value at this path (`owner`, `files[0].path`).
    Argument(String),
}

/// Something a request carries that an answer may name.
#[derive(Debug, Clone)]
struct Item {
    /// Its words, normalized ([`words`]), joined by one space.
    key: String,
    /// As the request wrote it (the tool name, the argument value).
    shown: String,
    origin: Origin,
}

/// For each answer, the request it names by content, when exactly one
/// request is named most and no other answer names that request (module
/// docs). Answers are only compared with requests sent before them.
pub fn by_content(requests: &[Request<'_>], replies: &[Reply<'_>]) -> Vec<Option<Named>> {
    let items: Vec<Vec<Item>> = requests.iter().map(items_of).collect();
    let texts: Vec<Text> = replies.iter().map(|r| Text::of(r.text)).collect();
    let mut claims: Vec<Option<Named>> = Vec::with_capacity(replies.len());
    for (reply, text) in replies.iter().zip(&texts) {
        let pool: Vec<usize> = (0..requests.len())
            .filter(|&r| requests[r].sent <= reply.at)
            .collect();
        if pool.len() < 2 {
            // One request can have sent it: position says as much.
            claims.push(None);
            continue;
        }
        // How many candidates carry each item: one all of them carry names
        // none of them in particular.
        let mut carried: HashMap<&str, usize> = HashMap::new();
        for &r in &pool {
            let keys: HashSet<&str> = items[r].iter().map(|i| i.key.as_str()).collect();
            for k in keys {
                *carried.entry(k).or_default() += 1;
            }
        }
        let mut found: Vec<(usize, Vec<&Item>)> = pool
            .iter()
            .map(|&r| {
                let named: Vec<&Item> = items[r]
                    .iter()
                    .filter(|i| reply.failure || matches!(i.origin, Origin::Argument(_)))
                    .filter(|i| carried.get(i.key.as_str()).copied().unwrap_or(0) < pool.len())
                    .filter(|i| text.names(&i.key))
                    .collect();
                (r, named)
            })
            .collect();
        found.sort_by_key(|f| std::cmp::Reverse(f.1.len()));
        let claim = match found.as_slice() {
            [(r, best), rest @ ..]
                if !best.is_empty() && rest.first().is_none_or(|s| s.1.len() < best.len()) =>
            {
                Some(Named {
                    request: *r,
                    why: why(reply.failure, requests[*r].tool, best, pool.len()),
                })
            }
            _ => None,
        };
        claims.push(claim);
    }
    let mut claimed: HashMap<usize, usize> = HashMap::new();
    for c in claims.iter().flatten() {
        *claimed.entry(c.request).or_default() += 1;
    }
    claims
        .into_iter()
        .map(|c| c.filter(|c| claimed.get(&c.request) == Some(&1)))
        .collect()
}

/// `the error names "get" (a word of the tool name get_me); no other of
/// the 5 requests it may answer is named as much`.
fn why(failure: bool, tool: &str, named: &[&Item], candidates: usize) -> String {
    let words: Vec<String> = named
        .iter()
        .filter(|i| i.origin == Origin::Tool)
        .map(|i| format!("{:?}", i.shown))
        .collect();
    let mut what: Vec<String> = Vec::new();
    match words.len() {
        0 => {}
        1 => what.push(format!("{} (a word of the tool name {tool})", words[0])),
        _ => what.push(format!(
            "{} (words of the tool name {tool})",
            words.join(", ")
        )),
    }
    for i in named {
        if let Origin::Argument(path) = &i.origin {
            what.push(format!("{:?} (its argument {path})", i.shown));
        }
    }
    format!(
        "the {} names {}; no other of the {candidates} requests it may answer is named as much",
        if failure { "error" } else { "result" },
        what.join(", ")
    )
}

/// The items of a request: the words of its tool name, then its argument
/// values that can name an object (strings and numbers of at most
/// [`MAX_PHRASE_WORDS`] words and three characters or more).
fn items_of(r: &Request<'_>) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for w in raw_words(&split_camel(r.tool)) {
        let key = normalize(w);
        if seen.insert(key.clone()) {
            out.push(Item {
                key,
                shown: w.to_string(),
                origin: Origin::Tool,
            });
        }
    }
    let mut leaves = Vec::new();
    leaves_of(r.arguments, String::new(), 0, &mut leaves);
    for (path, shown) in leaves {
        let ws = words(&shown);
        let key = ws.join(" ");
        if ws.is_empty() || ws.len() > MAX_PHRASE_WORDS || key.chars().count() < 3 {
            continue;
        }
        if seen.insert(key.clone()) {
            out.push(Item {
                key,
                shown,
                origin: Origin::Argument(path),
            });
        }
    }
    out
}

/// Scalar leaves (strings and numbers) of a value with their paths, at most
/// eight levels deep.
fn leaves_of(v: &Value, path: String, depth: usize, out: &mut Vec<(String, String)>) {
    if depth > 8 {
        return;
    }
    match v {
        Value::String(s) => out.push((path, s.clone())),
        Value::Number(n) => out.push((path, n.to_string())),
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves_of(x, p, depth + 1, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaves_of(x, format!("{path}[{i}]"), depth + 1, out);
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// `getMe` → `get Me`: camelCase boundaries as separators.
fn split_camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.push(c);
    }
    out
}

/// The words of a text: runs of letters and digits, lowercased, a plural
/// `s` taken off words of four letters or more (`requests` and `request`
/// are one word; `ss` stays).
pub fn words(s: &str) -> Vec<String> {
    raw_words(s).map(normalize).collect()
}

/// Runs of letters and digits, as written.
fn raw_words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// One word lowercased, a plural `s` taken off ([`words`]).
fn normalize(w: &str) -> String {
    let w = w.to_lowercase();
    match w.strip_suffix('s') {
        Some(stem) if w.chars().count() >= 4 && !stem.ends_with('s') => stem.to_string(),
        _ => w,
    }
}

/// An answer's text as words: a set for single words, and the words joined
/// by single spaces (with one at each end) for phrases.
struct Text {
    set: HashSet<String>,
    joined: String,
}

impl Text {
    fn of(text: &str) -> Text {
        let mut end = text.len().min(MAX_TEXT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let ws = words(&text[..end]);
        let joined = format!(" {} ", ws.join(" "));
        Text {
            set: ws.into_iter().collect(),
            joined,
        }
    }

    /// Whether the text holds the words of `key`, in order and side by side.
    fn names(&self, key: &str) -> bool {
        if !key.contains(' ') {
            return self.set.contains(key);
        }
        key.split(' ').all(|w| self.set.contains(w)) && self.joined.contains(&format!(" {key} "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_780_000_000_000 + ms).unwrap()
    }

    fn req<'a>(ms: i64, tool: &'a str, args: &'a Value) -> Request<'a> {
        Request {
            sent: at(ms),
            tool,
            arguments: args,
        }
    }

    fn reply(ms: i64, failure: bool, text: &str) -> Reply<'_> {
        Reply {
            at: at(ms),
            failure,
            text,
        }
    }

    fn requests(p: &[Option<Paired>]) -> Vec<Option<(usize, bool)>> {
        p.iter()
            .map(|p| p.as_ref().map(|p| (p.request, p.by_content.is_some())))
            .collect()
    }

    #[test]
    fn words_are_lowercased_and_plurals_folded() {
        assert_eq!(
            words("failed to list starred repositories: GET /user/starred"),
            [
                "failed",
                "to",
                "list",
                "starred",
                "repositorie",
                "get",
                "user",
                "starred"
            ]
        );
        assert_eq!(words("list_pull_requests"), ["list", "pull", "request"]);
        assert_eq!(words("access is"), ["access", "is"]);
        assert_eq!(words(&split_camel("getMe")), ["get", "me"]);
    }

    /// Five calls in flight, one error among four results: the error names
    /// the operation of one call only, so it pairs by content; the results
    /// name the repository every call names, so they go by position.
    #[test]
    fn an_error_naming_one_operation_pairs_by_content() {
        let repo = json!({"owner": "acme", "repo": "widgets", "perPage": 20});
        let none = json!({});
        let reqs = [
            req(0, "list_releases", &repo),
            req(10, "get_me", &none),
            req(20, "list_pull_requests", &repo),
            req(30, "list_issues", &repo),
        ];
        let replies = [
            reply(
                100,
                true,
                "failed to get user: GET https://api.example/user: 403",
            ),
            reply(
                110,
                false,
                r#"[{"number":1,"html_url":"https://x/acme/widgets/pull/1"}]"#,
            ),
            reply(120, false, "[]"),
            reply(130, false, r#"{"issues":[]}"#),
        ];
        let p = pair(&reqs, &replies);
        assert_eq!(
            requests(&p),
            [
                Some((1, true)),
                Some((0, false)),
                Some((2, false)),
                Some((3, false))
            ]
        );
        let why = p[0].as_ref().unwrap().by_content.clone().unwrap();
        assert_eq!(
            why,
            "the error names \"get\" (a word of the tool name get_me); no other of the 4 requests it may answer is named as much"
        );
    }

    #[test]
    fn a_result_naming_the_object_asked_for_pairs_by_content() {
        let a = json!({"owner": "acme", "repo": "widgets", "pullNumber": 38281});
        let b = json!({"owner": "acme", "repo": "widgets", "pullNumber": 38253});
        let reqs = [
            req(0, "pull_request_read", &a),
            req(5, "pull_request_read", &b),
        ];
        // Out of order: 38253 answered first.
        let replies = [
            reply(50, false, r#"{"number":38253,"title":"b"}"#),
            reply(60, false, r#"{"number":38281,"title":"a"}"#),
        ];
        let p = pair(&reqs, &replies);
        assert_eq!(requests(&p), [Some((1, true)), Some((0, true))]);
        assert!(
            p[0].as_ref()
                .unwrap()
                .by_content
                .as_deref()
                .unwrap()
                .contains("\"38253\" (its argument pullNumber)"),
            "{p:?}"
        );
    }

    /// Ambiguous content never pairs: a tie, an item every candidate
    /// carries, two answers naming one request, a word only a result's
    /// field names hold.
    #[test]
    fn ambiguous_content_does_not_pair() {
        let a = json!({"owner": "acme", "repo": "widgets"});
        let b = json!({"owner": "acme", "repo": "widgets"});
        // Both name the shared repository: nothing tells them apart.
        let reqs = [req(0, "list_tags", &a), req(5, "list_forks", &b)];
        let replies = [
            reply(50, false, "acme/widgets v1"),
            reply(60, false, "acme/widgets fork"),
        ];
        assert_eq!(by_content(&reqs, &replies), [None, None]);
        // A tie: the error names a word of each tool.
        let reqs = [req(0, "get_tag", &a), req(5, "list_forks", &b)];
        let replies = [
            reply(50, true, "failed to get forks: 500"),
            reply(60, false, "[]"),
        ];
        assert_eq!(by_content(&reqs, &replies), [None, None]);
        // Two answers naming one request: neither pairs by content.
        let x = json!({"path": "docs/readme.md"});
        let y = json!({"path": "src/main.rs"});
        let reqs = [req(0, "get_file", &x), req(5, "get_file", &y)];
        let replies = [
            reply(50, false, "docs/readme.md: see src"),
            reply(60, false, "moved from docs/readme.md"),
        ];
        assert_eq!(by_content(&reqs, &replies), [None, None]);
        // A result's words are field names, not operations: "issues" in a
        // result does not name list_issues.
        let n = json!({});
        let reqs = [req(0, "list_issues", &n), req(5, "get_me", &n)];
        let replies = [
            reply(50, false, r#"{"issues":[]}"#),
            reply(60, false, r#"{"login":"x"}"#),
        ];
        assert_eq!(by_content(&reqs, &replies), [None, None]);
        // Short values (a page size, a number 1) name nothing.
        let p1 = json!({"pullNumber": 1, "perPage": 20});
        let p2 = json!({"pullNumber": 2, "perPage": 20});
        let reqs = [
            req(0, "pull_request_read", &p1),
            req(5, "pull_request_read", &p2),
        ];
        let replies = [
            reply(50, false, r#"{"number":2}"#),
            reply(60, false, r#"{"number":1}"#),
        ];
        assert_eq!(by_content(&reqs, &replies), [None, None]);
    }

    /// An answer cannot be a request's that was sent after it.
    #[test]
    fn only_requests_sent_before_an_answer_are_candidates() {
        let none = json!({});
        let reqs = [req(0, "list_releases", &none), req(200, "get_me", &none)];
        // The error names get_me, which was not yet sent.
        let replies = [
            reply(100, true, "failed to get user: 403"),
            reply(300, false, "[]"),
        ];
        assert_eq!(by_content(&reqs, &replies), [None, None]);
        assert_eq!(
            requests(&pair(&reqs, &replies)),
            [Some((0, false)), Some((1, false))]
        );
    }

    /// Pairings by content that would leave an answer to a request sent
    /// after it are dropped: position pairs the whole burst.
    #[test]
    fn content_that_breaks_the_order_is_not_kept() {
        let none = json!({});
        let reqs = [
            req(0, "get_me", &none),
            req(10, "list_releases", &none),
            req(200, "list_tags", &none),
        ];
        // The last answer names get_me; the first would then go to
        // list_releases, the second to list_tags, sent after it.
        let replies = [
            reply(100, false, "[]"),
            reply(150, false, "[]"),
            reply(300, true, "failed to get user"),
        ];
        assert_eq!(
            requests(&pair(&reqs, &replies)),
            [Some((0, false)), Some((1, false)), Some((2, false))]
        );
    }

    #[test]
    fn requests_left_without_an_answer_are_the_last_ones() {
        let none = json!({});
        let reqs = [
            req(0, "list_releases", &none),
            req(10, "get_me", &none),
            req(20, "list_tags", &none),
        ];
        let replies = [reply(100, true, "failed to get user")];
        assert_eq!(requests(&pair(&reqs, &replies)), [Some((1, true))]);
        let replies = [reply(100, false, "[]")];
        assert_eq!(requests(&pair(&reqs, &replies)), [Some((0, false))]);
    }

    #[test]
    fn long_bursts_go_by_position() {
        let none = json!({});
        let tools: Vec<String> = (0..=MAX_BURST).map(|i| format!("tool_{i}_x")).collect();
        let reqs: Vec<Request<'_>> = tools.iter().map(|t| req(0, t, &none)).collect();
        let text = format!("failed: {}", tools[MAX_BURST]);
        let replies = [reply(10, true, &text)];
        assert_eq!(requests(&pair(&reqs, &replies)), [Some((0, false))]);
    }

    #[test]
    fn long_texts_are_cut_at_a_character_boundary() {
        let s = "é".repeat(MAX_TEXT);
        let t = Text::of(&s);
        assert!(t.joined.len() <= MAX_TEXT + 2);
    }
}

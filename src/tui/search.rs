//! What the groups filter searches and how well a query fits: a fuzzy
//! match within one field (the SkimMatcherV2 rule: the query's characters
//! in order), told apart into side-by-side and scattered fits, over a
//! search index built once at load with each distinct value stored once.

use crate::query::{GroupIdx, GroupRef, Investigation};
use crate::tui::widgets::text::esc;
use fuzzy_matcher::skim::SkimMatcherV2;
use std::sync::OnceLock;

/// The fuzzy matcher (smart case: a capital in the query matches case).
pub fn matcher() -> &'static SkimMatcherV2 {
    static M: OnceLock<SkimMatcherV2> = OnceLock::new();
    M.get_or_init(SkimMatcherV2::default)
}

/// Number of fields the filter searches.
pub const FIELDS: usize = 7;

/// The fields the filter searches, sanitized, in haystack order: tool,
/// actor, intent scope, target, arguments (as the first execution's
/// accepted record holds them, compact JSON), group id, execution ids.
pub fn fields(g: &GroupRef<'_>) -> [String; FIELDS] {
    let args = g.arguments().map(|a| a.to_string()).unwrap_or_default();
    [
        esc(g.tool()).into_owned(),
        esc(g.actor()).into_owned(),
        esc(g.intent_scope()).into_owned(),
        esc(g.target().unwrap_or("")).into_owned(),
        esc(&args).into_owned(),
        g.id().to_string(),
        esc(&g.execution_ids().collect::<Vec<_>>().join(" ")).into_owned(),
    ]
}

/// How well a query matches a field (or a group: its best field).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fit {
    /// The characters are not all there in order.
    #[default]
    None,
    /// The characters appear in order, apart (`c…a…t`).
    Scattered,
    /// The characters appear side by side (`cat` in `catalog`).
    Contiguous,
}

/// How well `query` fits `haystack` (fields joined by `SEP`): with the
/// characters side by side within one field, apart within one field, or
/// not at all. Smart case, as [`matches()`].
pub fn fit(haystack: &str, query: &str) -> Fit {
    if query.is_empty() {
        return Fit::Contiguous;
    }
    // The one-pass subsequence test first: most fields fail it, and a
    // side-by-side match passes it too.
    if !matches(haystack, query) {
        Fit::None
    } else if side_by_side(haystack, query) {
        Fit::Contiguous
    } else {
        Fit::Scattered
    }
}

/// Whether `query` occurs side by side in `haystack` ([`find`] without the
/// position; on bytes when the query is ASCII, as UTF-8 never encodes
/// another character with an ASCII byte).
fn side_by_side(haystack: &str, query: &str) -> bool {
    if !query.is_ascii() {
        return find(haystack, query).is_some();
    }
    let (h, q) = (haystack.as_bytes(), query.as_bytes());
    if q.len() > h.len() {
        return false;
    }
    let case_sensitive = q.iter().any(u8::is_ascii_uppercase);
    if case_sensitive {
        h.windows(q.len()).any(|w| w == q)
    } else {
        h.windows(q.len()).any(|w| w.eq_ignore_ascii_case(q))
    }
}

/// The character index where `query` occurs side by side in `haystack`
/// (smart case: ASCII case is ignored unless the query holds an ASCII
/// capital). A query holds no `SEP`, so a hit never spans two fields.
pub fn find(haystack: &str, query: &str) -> Option<usize> {
    let case_sensitive = query.chars().any(|c| c.is_ascii_uppercase());
    let eq = |a: char, b: char| {
        if case_sensitive {
            a == b
        } else {
            a.eq_ignore_ascii_case(&b)
        }
    };
    let Some(first) = query.chars().next() else {
        return Some(0);
    };
    // No allocation: this runs for every group on every key.
    haystack
        .char_indices()
        .enumerate()
        .find(|&(_, (at, c))| {
            eq(c, first) && {
                let mut h = haystack[at..].chars();
                query.chars().all(|q| h.next().is_some_and(|x| eq(x, q)))
            }
        })
        .map(|(n, _)| n)
}

/// Separates fields in a haystack (a control character, so it never
/// occurs in sanitized text).
const SEP: char = '\u{1f}';

/// The fields joined by `SEP`.
pub fn haystack(fields: &[String; FIELDS]) -> String {
    fields.join(&SEP.to_string())
}

/// Whether the query matches any one field of a haystack. Fields are
/// matched one by one so that a short query does not match characters
/// scattered over tool, actor and scope together.
///
/// SkimMatcherV2 (smart case) matches a field exactly when the query's
/// characters appear in it in order, compared case-insensitively (ASCII)
/// unless the query holds an ASCII capital (fuzzy-matcher 0.3
/// `SkimMatcherV2::fuzzy`: it returns `None` only when its `cheap_matches`
/// subsequence test fails). This function makes that test alone, in one
/// pass and without allocating, so that filtering hundreds of thousands of
/// groups stays fast; the matcher itself scores and highlights the rows on
/// screen. A unit test checks that both agree.
pub fn matches(haystack: &str, query: &str) -> bool {
    if query.is_empty() {
        return true;
    }
    let case_sensitive = query.chars().any(|c| c.is_ascii_uppercase());
    let eq = |a: char, b: char| {
        if case_sensitive {
            a == b
        } else {
            a.eq_ignore_ascii_case(&b)
        }
    };
    let mut want = query.chars();
    let mut next = want.next();
    for c in haystack.chars() {
        if c == SEP {
            want = query.chars();
            next = want.next();
            continue;
        }
        if let Some(p) = next
            && eq(c, p)
        {
            next = want.next();
            if next.is_none() {
                return true;
            }
        }
    }
    false
}

/// What the fuzzy filter searches, built once at load. Tool, actor, scope,
/// target and arguments repeat across many groups, so each distinct value
/// is stored and matched once per query; only the group and execution ids
/// are matched group by group.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    /// Distinct sanitized values of tool, actor, scope, target and
    /// arguments.
    pub values: Vec<String>,
    /// Per group (aligned with the analysis's groups): its tool, actor,
    /// scope, target and arguments as indexes into `values`.
    pub shared: Vec<[u32; 5]>,
    /// Per group: its id and execution ids, joined by `SEP`.
    pub ids: Vec<String>,
}

impl SearchIndex {
    /// Indexes the first `n` groups. Each group's fields are made on every
    /// core (rendering a group's arguments parses its action); the values
    /// are then interned in group order, so the index is the same however
    /// the work was split.
    pub fn build(inv: &Investigation, n: usize) -> SearchIndex {
        use rayon::prelude::*;
        let rows: Vec<Option<[String; FIELDS]>> = (0..n)
            .into_par_iter()
            .map(|i| inv.group_at(GroupIdx::new(i)).map(|g| fields(&g)))
            .collect();
        let mut ix = SearchIndex {
            values: Vec::new(),
            shared: Vec::with_capacity(n),
            ids: Vec::with_capacity(n),
        };
        let mut interned: std::collections::HashMap<String, u32> = Default::default();
        for row in rows {
            let Some([tool, actor, scope, target, args, id, execs]) = row else {
                ix.shared.push([0; 5]);
                ix.ids.push(String::new());
                continue;
            };
            let mut slot = |v: String| {
                let next = u32::try_from(ix.values.len()).unwrap_or(u32::MAX);
                *interned.entry(v).or_insert_with_key(|v| {
                    ix.values.push(v.clone());
                    next
                })
            };
            let shared = [
                slot(tool),
                slot(actor),
                slot(scope),
                slot(target),
                slot(args),
            ];
            ix.shared.push(shared);
            ix.ids
                .push(format!("{id}{SEP}{}", execs.replace(' ', &SEP.to_string())));
        }
        ix
    }

    /// Follows a new group order: `order[new] = old` index (a permutation
    /// of every group).
    pub fn reorder(&mut self, order: &[GroupIdx]) {
        self.shared = order
            .iter()
            .map(|&o| self.shared.get(o.get()).copied().unwrap_or([0; 5]))
            .collect();
        let mut ids = std::mem::take(&mut self.ids);
        self.ids = order
            .iter()
            .map(|&o| ids.get_mut(o.get()).map(std::mem::take).unwrap_or_default())
            .collect();
    }

    /// Number of groups indexed.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no group is indexed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How well `query` fits each distinct value.
    pub fn match_values(&self, query: &str) -> Vec<Fit> {
        self.values.iter().map(|v| fit(v, query)).collect()
    }

    /// As [`SearchIndex::match_values`], given the fits of a query that
    /// `query` extends: a value that did not match it cannot match now.
    pub fn narrow_values(&self, query: &str, before: &mut [Fit]) {
        for (f, v) in before.iter_mut().zip(&self.values) {
            if *f != Fit::None {
                *f = fit(v, query);
            }
        }
    }

    /// How well group `i` fits (its best field), given
    /// [`SearchIndex::match_values`].
    pub fn group_fit(&self, i: GroupIdx, values: &[Fit], query: &str) -> Fit {
        let i = i.get();
        let shared = self
            .shared
            .get(i)
            .and_then(|s| s.iter().filter_map(|&v| values.get(v as usize)).max())
            .copied()
            .unwrap_or_default();
        if shared == Fit::Contiguous {
            return shared;
        }
        let ids = self.ids.get(i).map_or(Fit::None, |h| fit(h, query));
        shared.max(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::GroupFilter;
    use fuzzy_matcher::FuzzyMatcher;

    #[test]
    fn the_search_index_matches_like_the_fields() {
        let inv = crate::query::Investigation::open(&crate::query::Setup::default(), &mut |_| {})
            .unwrap();
        let n = inv.group_indices(&GroupFilter {
            all: true,
            ..GroupFilter::default()
        });
        let ix = SearchIndex::build(&inv, n.len());
        assert_eq!(ix.len(), n.len());
        for q in [
            "d",
            "dpl",
            "list",
            "act_01J4K8P",
            "gfc",
            "5f8",
            "zzz",
            "EXAMPLE",
            "releases",
            "cat",
            "catalog",
            "\"service\"",
        ] {
            let values = ix.match_values(q);
            for i in (0..ix.len()).map(GroupIdx::new) {
                let g = inv.group_at(i).unwrap();
                let f = fields(&g);
                let expected = f[..FIELDS - 1]
                    .iter()
                    .map(|x| fit(x, q))
                    .chain(f[FIELDS - 1].split(' ').map(|x| fit(x, q)))
                    .max()
                    .unwrap();
                assert_eq!(
                    ix.group_fit(i, &values, q),
                    expected,
                    "group {i} query {q:?}"
                );
            }
        }
    }

    #[test]
    fn find_is_a_smart_case_substring_search() {
        assert_eq!(find("deploy_release", "release"), Some(7));
        assert_eq!(find("Ünïcödé_Tool", "cöd"), Some(3));
        assert_eq!(find("{\"service\":\"catalog\"}", "CAT"), None);
        assert_eq!(find("{\"service\":\"catalog\"}", "cat"), Some(12));
        assert_eq!(find("com.example.agent", "cat"), None);
        assert_eq!(find("ab", "abc"), None);
        assert_eq!(find("x", ""), Some(0));
        assert_eq!(fit("com.example.agent", "cat"), Fit::Scattered);
        assert_eq!(fit("catalog", "CAT"), Fit::None);
        assert_eq!(fit("catalog", "cat"), Fit::Contiguous);
        // The byte path agrees with the character path.
        for h in [
            "deploy_release",
            "Ünïcödé_Tool",
            "wipe\\x1b[2Jdisk",
            "aéb",
            "CaTalog",
        ] {
            for q in [
                "e", "re", "RE", "cöd", "x1b", "[2J", "[2j", "é", "ab", "cat", "CaT", "zz",
            ] {
                assert_eq!(side_by_side(h, q), find(h, q).is_some(), "{h:?} {q:?}");
            }
        }
    }

    #[test]
    fn matches_agrees_with_skim_matcher_v2() {
        let fields = [
            "deploy_release",
            "signed-process:com.example.agent",
            "run:5f8097",
            "deploy-api.internal.example/releases",
            "gfc4a6c60d4",
            "act_01J4K8J7DX7V act_01J4K8M3QF2Z",
            "Ünïcödé_Tool",
            "wipe\\x1b[2Jdisk",
            "{\"service\":\"catalog\"}",
        ];
        let queries = [
            "d",
            "dr",
            "dpl",
            "DPL",
            "Dpl",
            "release",
            "xyz",
            "a",
            "act_01j",
            "ACT",
            "5f8",
            "ü",
            "Ü",
            "cöd",
            "\\x1b",
            "[2j",
            "[2J",
            "zz",
            "e e",
            "-",
            "deploy_releasee",
        ];
        let m = matcher();
        for q in queries {
            for f in fields {
                assert_eq!(
                    matches(f, q),
                    m.fuzzy_match(f, q).is_some(),
                    "field {f:?} query {q:?}"
                );
            }
            // Across fields: a match must lie within one field.
            let h = haystack(
                &fields.map(String::from)[..FIELDS]
                    .to_vec()
                    .try_into()
                    .unwrap(),
            );
            let any = fields[..FIELDS]
                .iter()
                .any(|f| m.fuzzy_match(f, q).is_some());
            assert_eq!(matches(&h, q), any, "haystack, query {q:?}");
        }
    }
}

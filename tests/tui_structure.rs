//! The TUI's shape, checked on its sources: no import cycle between its
//! files, screens that never reach the app, a front end that asks only the
//! query layer, crossterm only through ratatui, and no source file over
//! 700 lines outside its tests.
//!
//! Imports are read from `use` items and from paths written inline
//! (`crate::tui::widgets::text::count(…)`, `super::jobs::Written`), test
//! modules left out; each path is taken to the file that defines its
//! longest module prefix.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A file's module path under `tui` (`["screens", "detail"]`).
type Module = Vec<String>;

fn tui_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui")
}

/// Every source file of the TUI with its module path.
fn files() -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, module: &Module, out: &mut BTreeMap<Module, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                let mut m = module.clone();
                m.push(name);
                walk(&p, &m, out);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let mut m = module.clone();
                if stem != "mod" {
                    m.push(stem.to_string());
                }
                out.insert(m, p);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&tui_dir(), &Vec::new(), &mut out);
    out
}

/// The source without its test module and comment lines.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e` (and `self` as the
/// prefix itself).
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect();
    let Some(open) = tree.find('{') else {
        return vec![tree.trim_end_matches("::self").to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            if p == "self" {
                vec![prefix.trim_end_matches("::").to_string()]
            } else {
                expand(&format!("{prefix}{p}"))
            }
        })
        .collect()
}

/// `tree` without its renames (`a as b` is `a`).
fn without_renames(tree: &str) -> String {
    let mut out = String::new();
    let mut rest = tree;
    while let Some(at) = rest.find(" as ") {
        out.push_str(&rest[..at]);
        rest = &rest[at + 4..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Every path a file names: its `use` items expanded, inline paths that
/// start with `crate::` or `super::`, and inline paths into its own child
/// modules (`header::draw(…)`, given `children`).
fn paths(code: &str, children: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut inline = String::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        let item = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .find_map(|p| t.strip_prefix(p));
        let Some(start) = item else {
            inline.push_str(line);
            inline.push('\n');
            continue;
        };
        let mut tree = start.to_string();
        while !tree.contains(';') {
            match lines.next() {
                Some(l) => {
                    tree.push(' ');
                    tree.push_str(l);
                }
                None => break,
            }
        }
        let tree = tree.split(';').next().unwrap_or_default();
        out.extend(expand(&without_renames(tree)));
    }
    // The registry's list of screen modules (`screens! { overview, … }`):
    // each names a child module.
    if let Some(at) = inline.find("screens! {") {
        let list = &inline[at + "screens! {".len()..];
        let list = &list[..list.find('}').unwrap_or(list.len())];
        out.extend(
            list.split(',')
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(|m| format!("self::{m}")),
        );
    }
    let starts: Vec<String> = ["crate::", "super::"]
        .iter()
        .map(|s| s.to_string())
        .chain(children.iter().map(|c| format!("{c}::")))
        .collect();
    for start in &starts {
        let start = start.as_str();
        let mut s = inline.as_str();
        while let Some(at) = s.find(start) {
            let preceded = s[..at]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
            let tail = &s[at..];
            let len = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            if !preceded {
                let path = tail[..len].trim_end_matches(':');
                out.push(
                    if start.starts_with("crate") || start.starts_with("super") {
                        path.to_string()
                    } else {
                        format!("self::{path}")
                    },
                );
            }
            s = &tail[len.max(1)..];
        }
    }
    out
}

/// The TUI file a path leads to from `module`, if it leads into the TUI.
/// (`super` and `self` are relative to the file's module: `a/b.rs` and
/// `a/b/mod.rs` are both module `a::b`.)
fn resolve(path: &str, module: &Module, is_file: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut abs: Vec<String> = match segs.first().copied()? {
        "crate" if segs.get(1) == Some(&"tui") => segs[2..].iter().map(|s| s.to_string()).collect(),
        "crate" => return None,
        "super" | "self" => {
            let mut m = module.clone();
            let mut i = 0;
            while let Some(&s) = segs.get(i) {
                match s {
                    "super" => {
                        m.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                i += 1;
            }
            m.extend(segs[i..].iter().map(|s| s.to_string()));
            m
        }
        first => {
            let mut child = module.clone();
            child.push(first.to_string());
            if !is_file.contains_key(&child) {
                return None;
            }
            let mut m = module.clone();
            m.extend(segs.iter().map(|s| s.to_string()));
            m
        }
    };
    while !is_file.contains_key(&abs) {
        abs.pop()?;
    }
    Some(abs)
}

/// File → the TUI files it imports (self-edges left out).
fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let files = files();
    let mut g = BTreeMap::new();
    for (m, p) in &files {
        let children: Vec<String> = files
            .keys()
            .filter(|c| c.len() == m.len() + 1 && c.starts_with(m))
            .filter_map(|c| c.last().cloned())
            .collect();
        let deps: BTreeSet<Module> = paths(&code(p), &children)
            .iter()
            .filter_map(|path| resolve(path, m, &files))
            .filter(|d| d != m)
            .collect();
        g.insert(m.clone(), deps);
    }
    g
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "tui".into()
    } else {
        format!("tui::{}", m.join("::"))
    }
}

/// A cycle in `g`, if there is one.
fn cycle(g: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        n: &Module,
        g: &BTreeMap<Module, BTreeSet<Module>>,
        state: &mut BTreeMap<Module, u8>,
        path: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        state.insert(n.clone(), 1);
        path.push(n.clone());
        for d in g.get(n).into_iter().flatten() {
            match state.get(d) {
                Some(1) => {
                    let from = path.iter().position(|p| p == d).unwrap_or(0);
                    let mut c = path[from..].to_vec();
                    c.push(d.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(d, g, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if !state.contains_key(n)
            && let Some(c) = visit(n, g, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// Every file reachable from `from`.
fn reach(g: &BTreeMap<Module, BTreeSet<Module>>, from: &Module) -> BTreeSet<Module> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.clone()];
    while let Some(n) = todo.pop() {
        for d in g.get(&n).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

fn m(s: &str) -> Module {
    s.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_reader_finds_the_imports() {
    assert_eq!(
        expand("crate::tui::keys::{Bind, table::{GLOBAL, MOVE}, self}"),
        vec![
            "crate::tui::keys::Bind",
            "crate::tui::keys::table::GLOBAL",
            "crate::tui::keys::table::MOVE",
            "crate::tui::keys",
        ]
    );
    let g = graph();
    assert!(g[&m("app")].contains(&m("stack")), "{:?}", g[&m("app")]);
    assert!(g[&m("stack")].contains(&m("screens")));
    assert!(
        g[&m("screens")].contains(&m("screens::review")),
        "the registry's list"
    );
    assert!(g[&m("screens::overview")].contains(&m("screens::detail")));
    assert!(g[&m("screens::detail")].contains(&m("screens::detail::timeline")));
    assert!(
        g[&m("screens::detail")].contains(&m("screens::detail::header")),
        "an inline path into a child module"
    );
    assert!(g[&m("")].contains(&m("render")), "{:?}", g[&m("")]);
    assert!(g[&m("screens::detail::timeline")].contains(&m("screens::detail::state")));
    assert!(g[&m("app")].contains(&m("widgets::text")), "an inline path");
}

#[test]
fn no_import_cycle_between_tui_files() {
    let g = graph();
    if let Some(c) = cycle(&g) {
        let names: Vec<String> = c.iter().map(name).collect();
        panic!("import cycle: {}", names.join(" -> "));
    }
}

#[test]
fn screens_never_reach_the_app_and_the_boundary_no_screen() {
    let g = graph();
    let app_side = ["", "app", "stack", "render", "input"].map(m);
    for (file, _) in g
        .iter()
        .filter(|(f, _)| f.first().is_some_and(|s| s == "screens"))
    {
        let r = reach(&g, file);
        for a in &app_side {
            assert!(!r.contains(a), "{} reaches {}", name(file), name(a));
        }
    }
    for shared in [
        "screen",
        "data",
        "keys",
        "keys::table",
        "dialog",
        "jobs",
        "widgets",
    ] {
        let r = reach(&g, &m(shared));
        assert!(
            !r.iter().any(|f| f.first().is_some_and(|s| s == "screens")),
            "{shared} reaches a screen: {:?}",
            r.iter().map(name).collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_tui_asks_only_the_query_layer() {
    for (module, p) in files() {
        let text = std::fs::read_to_string(&p).unwrap();
        for banned in ["crate::journal", "crate::analysis", "crate::model"] {
            assert!(!text.contains(banned), "{} names {banned}", name(&module));
        }
    }
}

#[test]
fn crossterm_only_through_ratatui() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources: Vec<PathBuf> = files().into_values().collect();
    for e in std::fs::read_dir(root.join("tests")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("tui_"))
            && p.is_file()
        {
            sources.push(p);
        }
    }
    // Spelled in two halves, so that this file does not match itself.
    let needle = concat!("cross", "term::");
    for p in sources {
        let text = std::fs::read_to_string(&p).unwrap();
        for (i, _) in text.match_indices(needle) {
            assert!(
                text[..i].ends_with("ratatui::"),
                "{}: crossterm named directly",
                p.display()
            );
        }
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        !manifest
            .lines()
            .any(|l| l.trim_start().starts_with("crossterm")),
        "crossterm is a direct dependency again"
    );
}

#[test]
fn no_tui_source_file_is_over_700_lines_outside_its_tests() {
    for (module, p) in files() {
        let text = std::fs::read_to_string(&p).unwrap();
        let n = text
            .lines()
            .take_while(|l| !l.starts_with("#[cfg(test)]"))
            .count();
        assert!(n <= 700, "{} has {n} lines", name(&module));
    }
}

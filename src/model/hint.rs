//! What MCP servers declare about their tools: the `annotations` of a
//! `tools/list` answer (MCP `ToolAnnotations`, docs/design.md §10.4).
//! They are hints a server makes about itself, untrusted (docs/design.md
//! §4.5): analysis lets one set the class of a tool only when no contract
//! does, and every view then says the verdict rests on a hint.

use super::SourceRef;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

/// One tool's annotations as one `tools/list` answer gave them. A field the
/// answer left out is `None` (the MCP defaults are pessimistic: not
/// read-only, destructive, not idempotent, open-world).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolHint {
    /// The tool's name as the answer lists it.
    pub tool: String,
    /// The server that answered, when the journal names it.
    pub server: Option<String>,
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    pub open_world: Option<bool>,
    /// When the answer was recorded.
    pub at: DateTime<Utc>,
    /// Where it is.
    #[serde(skip)]
    pub source: SourceRef,
}

impl ToolHint {
    /// The hints of every tool of a `tools/list` result's `tools` array
    /// (`[{"name": …, "annotations": {"readOnlyHint": true, …}}, …]`);
    /// tools with no name are skipped, tools with no annotations give a
    /// hint of all `None`.
    pub fn from_tools_list(
        tools: &[Value],
        server: Option<&str>,
        at: DateTime<Utc>,
        source: SourceRef,
    ) -> Vec<ToolHint> {
        tools
            .iter()
            .filter_map(|t| {
                let name = t.get("name")?.as_str()?.to_string();
                let a = t.get("annotations");
                let flag = |k: &str| a.and_then(|a| a.get(k)).and_then(Value::as_bool);
                Some(ToolHint {
                    tool: name,
                    server: server.map(str::to_string),
                    read_only: flag("readOnlyHint"),
                    destructive: flag("destructiveHint"),
                    idempotent: flag("idempotentHint"),
                    open_world: flag("openWorldHint"),
                    at,
                    source,
                })
            })
            .collect()
    }
}

/// What all the answers that listed one tool say together, the cautious
/// way: read-only only when every answer declared it so.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHints<'a> {
    /// Every answer's hint for the tool, in time order.
    pub all: Vec<&'a ToolHint>,
}

impl ToolHints<'_> {
    /// Whether every answer declared the tool read-only (`readOnlyHint:
    /// true`); one that did not, or left it out, makes it not read-only.
    pub fn read_only(&self) -> bool {
        !self.all.is_empty() && self.all.iter().all(|h| h.read_only == Some(true))
    }

    /// The first answer that listed the tool: the evidence cited.
    pub fn first(&self) -> Option<&ToolHint> {
        self.all.first().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotations_become_hints_and_only_unanimous_read_only_counts() {
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let tools = json!([
            {"name": "get_me", "annotations": {"readOnlyHint": true, "title": "Me"}},
            {"name": "create_issue", "annotations": {"destructiveHint": false}},
            {"name": "bare"},
            {"annotations": {"readOnlyHint": true}}
        ]);
        let h = ToolHint::from_tools_list(
            tools.as_array().unwrap(),
            Some("github"),
            at,
            SourceRef::default(),
        );
        assert_eq!(h.len(), 3);
        assert_eq!(h[0].read_only, Some(true));
        assert_eq!(h[1].destructive, Some(false));
        assert_eq!(h[1].read_only, None);
        assert!(ToolHints { all: vec![&h[0]] }.read_only());
        let mut other = h[0].clone();
        other.read_only = None;
        assert!(
            !ToolHints {
                all: vec![&h[0], &other]
            }
            .read_only()
        );
        assert!(!ToolHints { all: vec![&h[2]] }.read_only());
        assert!(!ToolHints { all: vec![] }.read_only());
    }
}

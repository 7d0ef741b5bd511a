//! Tool contracts (docs/design.md §4; docs/design.md §4.4): per-tool action class, attach window, fingerprint
//! fields, defaults and secret fields, read from TOML.
//!
//! ```toml
//! [tools.deploy_release]
//! class = "recoverable_by_status"  # read_only | idempotent_with_key | recoverable_by_status | irreversible
//! attach_window = "2h"
//! fingerprint_fields = ["service", "version", "region"]
//! defaults = { region = "us-east-1" }
//! secret_fields = []
//! ```
//!
//! A tool with no contract is treated as `irreversible` with a 15 minute
//! attach window, and reported (`no_replay_contract`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The action classes of a tool contract (docs/design.md §4.4).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ActionClass {
    /// No side effect: a repeat cannot duplicate anything. Its attach window
    /// is zero.
    ReadOnly,
    /// Repeatable when the target honors an idempotency key.
    IdempotentWithKey,
    /// An unknown outcome can be resolved by a status query.
    RecoverableByStatus,
    /// Blocked after an unknown outcome; needs review.
    Irreversible,
}

impl ActionClass {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Attach window applied to tools without a contract (docs/design.md §4).
pub const DEFAULT_ATTACH_WINDOW: Duration = Duration::from_secs(15 * 60);

/// One tool's replay rule, as configured or defaulted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolContract {
    /// Action class.
    pub class: ActionClass,
    /// How long an unfinished execution stays attachable; zero for read-only
    /// tools.
    #[serde(serialize_with = "ser_duration")]
    pub attach_window: Duration,
    /// Argument fields that make up the intent; `None` means all arguments.
    pub fingerprint_fields: Option<Vec<String>>,
    /// Argument defaults materialized before fingerprinting.
    pub defaults: Map<String, Value>,
    /// Argument fields that hold secrets, replaced by a keyed reference.
    pub secret_fields: Vec<String>,
    /// False when no contract was configured and the default applies.
    pub configured: bool,
    /// With no contract, the server's hint that set the class
    /// (docs/design.md §4.5): the verdict then rests on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<ClassHint>,
}

/// A server's annotation that set a tool's class in place of a contract
/// (docs/design.md §4.5): `readOnlyHint: true` in every `tools/list` answer
/// that listed the tool makes it `read_only`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassHint {
    /// The annotation (`readOnlyHint`).
    pub annotation: &'static str,
    /// The server that declared it, when the journal names it.
    pub server: Option<String>,
    /// The first answer that declared it: the evidence.
    #[serde(skip)]
    pub source: crate::model::SourceRef,
}

/// What a tool's class rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ContractBasis {
    /// A configured contract.
    Contract,
    /// No contract: a server's hint ([`ClassHint`]).
    Hint,
    /// No contract, no hint: the default (irreversible, 15 minutes).
    Default,
}

fn ser_duration<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&humantime::format_duration(*d).to_string())
}

impl ToolContract {
    /// The contract of a tool nobody wrote one for.
    pub fn unconfigured() -> Self {
        ToolContract {
            class: ActionClass::Irreversible,
            attach_window: DEFAULT_ATTACH_WINDOW,
            fingerprint_fields: None,
            defaults: Map::new(),
            secret_fields: Vec::new(),
            configured: false,
            hint: None,
        }
    }

    /// The contract of a tool with no contract whose servers declared it
    /// (docs/design.md §4.5): `read_only` (attach window zero) when every
    /// answer that listed it said `readOnlyHint: true`; `None` otherwise
    /// (the default applies: a hint never makes a tool more dangerous
    /// than the default already reads it).
    pub fn from_hints(hints: &crate::model::ToolHints<'_>) -> Option<Self> {
        if !hints.read_only() {
            return None;
        }
        let first = hints.first()?;
        Some(ToolContract {
            class: ActionClass::ReadOnly,
            attach_window: Duration::ZERO,
            hint: Some(ClassHint {
                annotation: "readOnlyHint",
                server: first.server.clone(),
                source: first.source,
            }),
            ..ToolContract::unconfigured()
        })
    }

    /// What the class rests on.
    pub fn basis(&self) -> ContractBasis {
        match (self.configured, &self.hint) {
            (true, _) => ContractBasis::Contract,
            (false, Some(_)) => ContractBasis::Hint,
            (false, None) => ContractBasis::Default,
        }
    }

    /// How views say what the class rests on: `contract`, `no contract:
    /// default`, `no contract: the server's readOnlyHint (untrusted)`.
    pub fn basis_words(&self) -> String {
        match (&self.hint, self.basis()) {
            (_, ContractBasis::Contract) => "contract".into(),
            (Some(h), ContractBasis::Hint) => format!(
                "no contract: {}'s {} (an untrusted hint)",
                h.server.as_deref().unwrap_or("the server"),
                h.annotation
            ),
            _ => "no contract: default".into(),
        }
    }
}

/// Errors reading a contracts file. Messages name the file and the key.
#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    /// The file could not be read.
    #[error("{path}: cannot read contracts: {source}")]
    Read {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The TOML is malformed or a key is wrong.
    #[error("{path}: {message}")]
    Invalid {
        /// File.
        path: String,
        /// What is wrong, with line, column and key as `toml` reports them.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContractsFile {
    #[serde(default)]
    tools: BTreeMap<String, RawContract>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContract {
    class: ActionClass,
    attach_window: Option<String>,
    fingerprint_fields: Option<Vec<String>>,
    #[serde(default)]
    defaults: toml::Table,
    #[serde(default)]
    secret_fields: Vec<String>,
}

/// All configured tool contracts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Contracts {
    tools: BTreeMap<String, ToolContract>,
}

impl Contracts {
    /// No contracts: every tool gets [`ToolContract::unconfigured`].
    pub fn none() -> Self {
        Self::default()
    }

    /// Reads a contracts file.
    ///
    /// # Errors
    /// [`ContractError`] naming the file and the offending key.
    pub fn load(path: &Path) -> Result<Self, ContractError> {
        let text = std::fs::read_to_string(path).map_err(|e| ContractError::Read {
            path: path.display().to_string(),
            source: e,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Adds a later file's contracts: a tool both define gets the later
    /// one. Returns the tools whose contract was replaced.
    pub fn merge(&mut self, later: Contracts) -> Vec<String> {
        let mut replaced = Vec::new();
        for (tool, c) in later.tools {
            if self.tools.insert(tool.clone(), c).is_some() {
                replaced.push(tool);
            }
        }
        replaced
    }

    /// Parses contracts from TOML text; `name` is used in messages.
    ///
    /// # Errors
    /// [`ContractError::Invalid`] naming the key at fault.
    pub fn parse(text: &str, name: &str) -> Result<Self, ContractError> {
        let invalid = |message: String| ContractError::Invalid {
            path: name.to_string(),
            message,
        };
        let file: ContractsFile =
            toml::from_str(text).map_err(|e| invalid(crate::toml_file::toml_error(text, &e)))?;
        let mut tools = BTreeMap::new();
        for (tool, raw) in file.tools {
            let attach_window = match (&raw.attach_window, raw.class) {
                (_, ActionClass::ReadOnly) => Duration::ZERO,
                (None, _) => DEFAULT_ATTACH_WINDOW,
                (Some(s), _) => humantime::parse_duration(s).map_err(|e| {
                    invalid(format!(
                        "tools.{tool}.attach_window: {e} in {s:?} (write e.g. \"15m\", \"2h\", \"1d\")"
                    ))
                })?,
            };
            let defaults = match serde_json::to_value(&raw.defaults) {
                Ok(Value::Object(m)) => m,
                _ => return Err(invalid(format!("tools.{tool}.defaults: not a table"))),
            };
            tools.insert(
                tool,
                ToolContract {
                    class: raw.class,
                    attach_window,
                    fingerprint_fields: raw.fingerprint_fields,
                    defaults,
                    secret_fields: raw.secret_fields,
                    configured: true,
                    hint: None,
                },
            );
        }
        Ok(Contracts { tools })
    }

    /// The configured contract for `tool`, if any.
    pub fn lookup(&self, tool: &str) -> Option<&ToolContract> {
        self.tools.get(tool)
    }

    /// The contract for `tool`, or the unconfigured default.
    pub fn get(&self, tool: &str) -> ToolContract {
        self.tools
            .get(tool)
            .cloned()
            .unwrap_or_else(ToolContract::unconfigured)
    }

    /// The longest attach window a tool can have under these contracts
    /// (§4.4): the longest configured one, and at least the default's, which
    /// every tool without a contract takes. A repeat is judged with an
    /// earlier call only within it, so it bounds how far before a
    /// `--since` the calls a repeat may pair with lie (docs/design.md §7.2).
    pub fn longest_attach_window(&self) -> Duration {
        self.tools
            .values()
            .map(|c| c.attach_window)
            .fold(DEFAULT_ATTACH_WINDOW, Duration::max)
    }

    /// Configured tools and their contracts, by tool name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ToolContract)> {
        self.tools.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of configured tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when no tool is configured.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_design_example() {
        let c = Contracts::parse(
            r#"
[tools.deploy_release]
class = "recoverable_by_status"
attach_window = "2h"
fingerprint_fields = ["service", "version", "region"]
defaults = { region = "us-east-1" }
secret_fields = []

[tools.list_branches]
class = "read_only"
attach_window = "1h"
"#,
            "c.toml",
        )
        .unwrap();
        let d = c.get("deploy_release");
        assert_eq!(d.class, ActionClass::RecoverableByStatus);
        assert_eq!(d.attach_window, Duration::from_secs(7200));
        assert_eq!(d.defaults["region"], "us-east-1");
        assert!(d.configured);
        // Read-only tools have nothing to attach to.
        assert_eq!(c.get("list_branches").attach_window, Duration::ZERO);
        let u = c.get("rotate_credential");
        assert_eq!(u.class, ActionClass::Irreversible);
        assert_eq!(u.attach_window, DEFAULT_ATTACH_WINDOW);
        assert!(!u.configured);
    }

    #[test]
    fn mistakes_name_the_key() {
        let e = Contracts::parse("[tools.x]\nclass = \"sometimes\"\n", "c.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml:") && e.contains("class"), "{e}");
        let e = Contracts::parse(
            "[tools.x]\nclass = \"irreversible\"\nattach_windw = \"1h\"\n",
            "c.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("attach_windw"), "{e}");
        let e = Contracts::parse(
            "[tools.x]\nclass = \"irreversible\"\nattach_window = \"soon\"\n",
            "c.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("tools.x.attach_window"), "{e}");
    }
}

/// Calls `f` on every value of `args` a contract's `secret_fields` name
/// (docs/design.md §4.1, §4.4): a plain name matches a key at any depth of
/// the arguments, a dotted path (`db.password`) names one place from the
/// arguments' top; both regardless of case. Arrays are looked through. `f`
/// gets the rule that matched and the value.
pub fn for_each_secret(
    args: &mut Value,
    secret_fields: &[String],
    f: &mut dyn FnMut(&str, &mut Value),
) {
    if secret_fields.is_empty() {
        return;
    }
    let rules: Vec<(&str, Vec<String>)> = secret_fields
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| (r.as_str(), r.split('.').map(str::to_lowercase).collect()))
        .collect();
    walk_secrets(args, &mut Vec::new(), &rules, f);
}

fn walk_secrets(
    v: &mut Value,
    path: &mut Vec<String>,
    rules: &[(&str, Vec<String>)],
    f: &mut dyn FnMut(&str, &mut Value),
) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                path.push(k.to_lowercase());
                let hit = rules.iter().find(|(_, parts)| {
                    if parts.len() == 1 {
                        parts[0] == path[path.len() - 1]
                    } else {
                        parts.as_slice() == path.as_slice()
                    }
                });
                match hit {
                    Some((rule, _)) => f(rule, child),
                    None => walk_secrets(child, path, rules, f),
                }
                path.pop();
            }
        }
        Value::Array(a) => {
            for child in a {
                walk_secrets(child, path, rules, f);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod secret_tests {
    use super::for_each_secret;
    use serde_json::json;

    #[test]
    fn names_match_at_any_depth_and_case_and_paths_name_one_place() {
        let mut v = json!({
            "token": 1,
            "auth": {"Token": 2, "list": [{"TOKEN": 3}]},
            "db": {"password": 4},
            "hint": {"password": 5}
        });
        let mut seen = Vec::new();
        for_each_secret(
            &mut v,
            &["token".into(), "DB.Password".into()],
            &mut |r, v| {
                seen.push((r.to_string(), v.clone()));
                *v = json!("x");
            },
        );
        assert_eq!(seen.len(), 4, "{seen:?}");
        assert_eq!(v["hint"]["password"], 5);
        assert_eq!(v["auth"]["list"][0]["TOKEN"], "x");
    }
}

//! The tools an agent can call, and the registry that knows them.
//!
//! The model asks for a tool call by name with JSON arguments; the runtime
//! hands both to [`ToolRegistry::call`] and appends the [`ToolOutput`] to the
//! session. A bad call (unknown tool, invalid JSON, a missing or mistyped
//! argument, a path outside the workspace) is never a panic or a runtime
//! error: it is an output with `is_error` set that names the problem, so the
//! model sees its mistake and can retry.
//!
//! **The registry is the source of truth of each tool's [`ToolClass`].**
//! condense's compressor has to know which tools change the workspace
//! (`tools.mutating`) and which can run anything (`tools.exec_capable`): its
//! developer-loop pass collapses long runs of such steps. A runtime that
//! defines its own tools fills those two settings from
//! [`ToolRegistry::names_of`] instead of keeping a second list that could
//! drift. Tool names are restricted to `[A-Za-z0-9_-]` (what the model APIs
//! accept), so each name is also a pattern matching only itself.
//!
//! **Confinement.** The file tools act only inside a [`Workspace`]: every
//! path they are given goes through [`Workspace::resolve`], which resolves
//! `..` and symlinks and rejects anything that lands outside the working
//! directory. This guards against the model's mistakes and wanderings, not
//! against a hostile process racing the check; and `run_command` (an
//! exec-capable tool, added only when a [`CommandPolicy`] is given) starts
//! in the working directory but is not confined to it.

mod args;
mod command;
mod files;
pub mod recall;
mod workspace;

pub use command::{CommandPolicy, RunCommand};
pub use files::{EditFile, ListDir, ReadFile, SearchText, WriteFile};
pub use workspace::Workspace;

use condense_model::tokens::estimate_text;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io;
use std::path::PathBuf;

/// What a tool can do to the world: the compressor's classes (see the
/// module documentation), one type for both.
pub use condense_contract::settings::ToolClass;

/// A tool as the model is told about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by: 1 to 64 of `[A-Za-z0-9_-]`.
    pub name: String,
    /// What it does and when to use it, for the model.
    pub description: String,
    /// A JSON Schema object for its arguments, as the OpenAI and Anthropic
    /// tool definitions take it.
    pub parameters: Value,
    /// What it can do to the world.
    pub class: ToolClass,
}

impl ToolSpec {
    /// The estimated tokens of its definition in a request: the model is
    /// sent every tool with every request.
    pub fn tokens(&self) -> u32 {
        estimate_text(&self.name)
            + estimate_text(&self.description)
            + estimate_text(&self.parameters.to_string())
    }
}

/// The result of a tool call, as it is appended to the session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// What the model reads.
    pub content: String,
    /// Whether the call failed (a bad argument, a missing file, a command
    /// that exited non-zero or timed out).
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed result.
    pub fn error(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            is_error: true,
        }
    }

    /// The output of a call to `tool` that ended in `result`: an error
    /// becomes an error output prefixed with the tool's name, so the model
    /// knows which of its calls it answers.
    pub fn from_result(tool: &str, result: Result<ToolOutput, ToolError>) -> ToolOutput {
        result.unwrap_or_else(|error| ToolOutput::error(format!("{tool}: {error}")))
    }
}

/// A tool the runtime can run on the model's behalf.
///
/// `Send + Sync` so a registry can be shared by the threads of a runtime.
pub trait Tool: Send + Sync {
    /// Its name, description, argument schema and class.
    fn spec(&self) -> &ToolSpec;

    /// Runs it with the model's (parsed) arguments. Never panics on bad
    /// arguments: they give an error output naming the argument.
    fn call(&self, arguments: &Value) -> ToolOutput;
}

/// Why a tool call failed; its text is what the model reads, after the
/// tool's name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    #[error("arguments must be a JSON object, got {got}")]
    NotAnObject { got: String },
    #[error("missing argument `{0}`")]
    MissingArgument(&'static str),
    #[error("unknown argument `{name}` (the arguments are: {expected})")]
    UnknownArgument { name: String, expected: String },
    /// `problem` reads after the argument's name: "must be a string, got 3".
    #[error("argument `{name}` {problem}")]
    InvalidArgument { name: &'static str, problem: String },
    #[error("path `{path}` is outside the working directory {}", root.display())]
    OutsideWorkdir { path: String, root: PathBuf },
    /// `problem` reads after the path: "is not UTF-8 text".
    #[error("path `{path}` {problem}")]
    BadPath { path: String, problem: String },
    #[error("`old_text` was not found in `{path}`")]
    NoMatch { path: String },
    #[error(
        "`old_text` occurs {count} times in `{path}`; include more of the \
         surrounding text so that it occurs exactly once"
    )]
    AmbiguousMatch { path: String, count: usize },
    /// A `condense_recall` the history cannot answer (a handle it does not
    /// have, a query too long).
    #[error(transparent)]
    Recall(#[from] condense_model::recall::RecallError),
    /// `action` is a verb: "cannot read `src/x.rs`: ...".
    #[error("cannot {action} `{target}`: {source}")]
    Io {
        action: &'static str,
        target: String,
        #[source]
        source: io::Error,
    },
}

impl ToolError {
    /// An I/O error while doing `action` to `target`.
    pub(crate) fn io(action: &'static str, target: &str) -> impl FnOnce(io::Error) -> ToolError {
        move |source| ToolError::Io {
            action,
            target: target.to_string(),
            source,
        }
    }
}

/// Why a tool could not be registered.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    #[error("a tool named `{0}` is already registered")]
    DuplicateName(String),
    #[error("tool name `{0}` is invalid: it must be 1 to 64 of the characters A-Z a-z 0-9 _ -")]
    InvalidName(String),
}

/// The tools of a session, in registration order.
#[derive(Default)]
pub struct ToolRegistry {
    tools: Vec<Box<dyn Tool>>,
}

impl ToolRegistry {
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// Adds `tool`. Its name must be valid for the model APIs (which also
    /// makes it a wildcard-free compressor pattern) and not taken.
    pub fn register(&mut self, tool: Box<dyn Tool>) -> Result<(), RegisterError> {
        let name = &tool.spec().name;
        if !is_valid_tool_name(name) {
            return Err(RegisterError::InvalidName(name.clone()));
        }
        if self.get(name).is_some() {
            return Err(RegisterError::DuplicateName(name.clone()));
        }
        self.tools.push(tool);
        Ok(())
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|tool| tool.spec().name == name)
            .map(|tool| &**tool)
    }

    /// The specs of every tool, in registration order: the tool definitions
    /// of a model request.
    pub fn specs(&self) -> impl ExactSizeIterator<Item = &ToolSpec> {
        self.tools.iter().map(|tool| tool.spec())
    }

    /// The names of the tools of `class`, sorted: the compressor's
    /// `tools.mutating` and `tools.exec_capable` lists.
    pub fn names_of(&self, class: ToolClass) -> Vec<String> {
        let mut names: Vec<String> = self
            .specs()
            .filter(|spec| spec.class == class)
            .map(|spec| spec.name.clone())
            .collect();
        names.sort();
        names
    }

    /// Runs tool `name` with `arguments`, the JSON text of the model's tool
    /// call. Blank text counts as `{}` (some models send nothing for a tool
    /// without required arguments). Every failure is an error output.
    pub fn call(&self, name: &str, arguments: &str) -> ToolOutput {
        let output = self.dispatch(name, arguments);
        tracing::debug!(
            tool = name,
            is_error = output.is_error,
            bytes = output.content.len(),
            "tool call"
        );
        output
    }

    fn dispatch(&self, name: &str, arguments: &str) -> ToolOutput {
        let Some(tool) = self.get(name) else {
            let mut known: Vec<&str> = self.specs().map(|spec| spec.name.as_str()).collect();
            known.sort_unstable();
            return ToolOutput::error(format!(
                "unknown tool `{name}`; the tools are: {}",
                known.join(", ")
            ));
        };
        let arguments = if arguments.trim().is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            match serde_json::from_str(arguments) {
                Ok(value) => value,
                Err(error) => {
                    return ToolOutput::error(format!(
                        "{name}: the arguments are not valid JSON ({error})"
                    ));
                }
            }
        };
        tool.call(&arguments)
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.specs().map(|spec| &spec.name))
            .finish()
    }
}

/// Whether `name` is a tool name the OpenAI and Anthropic APIs accept.
fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The coding toolset confined to `workspace`: `read_file`, `list_dir`,
/// `search_text`, `write_file`, `edit_file`, and `run_command` when
/// `commands` is given (it is exec-capable, so a runtime opts in to it).
pub fn coding_tools(workspace: Workspace, commands: Option<CommandPolicy>) -> ToolRegistry {
    let mut tools: Vec<Box<dyn Tool>> = vec![
        Box::new(ReadFile::new(workspace.clone())),
        Box::new(ListDir::new(workspace.clone())),
        Box::new(SearchText::new(workspace.clone())),
        Box::new(WriteFile::new(workspace.clone())),
        Box::new(EditFile::new(workspace.clone())),
    ];
    if let Some(policy) = commands {
        tools.push(Box::new(RunCommand::new(workspace, policy)));
    }
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry
            .register(tool)
            .expect("the coding tools have distinct, valid names");
    }
    registry
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tool that echoes its arguments, with a chosen name and class.
    struct Echo(ToolSpec);

    impl Echo {
        fn boxed(name: &str, class: ToolClass) -> Box<dyn Tool> {
            Box::new(Echo(ToolSpec {
                name: name.to_string(),
                description: "Echoes its arguments.".to_string(),
                parameters: json!({"type": "object", "properties": {}}),
                class,
            }))
        }
    }

    impl Tool for Echo {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn call(&self, arguments: &Value) -> ToolOutput {
            ToolOutput::ok(arguments.to_string())
        }
    }

    fn registry(tools: &[(&str, ToolClass)]) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        for (name, class) in tools {
            registry.register(Echo::boxed(name, *class)).unwrap();
        }
        registry
    }

    #[test]
    fn tools_register_in_order_and_duplicates_are_rejected() {
        let mut registry = registry(&[("b", ToolClass::ReadOnly), ("a", ToolClass::Mutating)]);
        let names: Vec<&str> = registry.specs().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(
            registry.register(Echo::boxed("a", ToolClass::ReadOnly)),
            Err(RegisterError::DuplicateName("a".into()))
        );
        assert_eq!(registry.specs().len(), 2);
        assert_eq!(registry.get("a").unwrap().spec().class, ToolClass::Mutating);
        assert!(registry.get("c").is_none());
    }

    #[test]
    fn invalid_tool_names_are_rejected() {
        let mut registry = ToolRegistry::new();
        for name in ["", "edit*", "run?", "has space", &"x".repeat(65)] {
            assert_eq!(
                registry.register(Echo::boxed(name, ToolClass::ReadOnly)),
                Err(RegisterError::InvalidName(name.to_string())),
                "{name}"
            );
        }
        assert!(
            registry
                .register(Echo::boxed(&"x".repeat(64), ToolClass::ReadOnly))
                .is_ok()
        );
        assert!(
            registry
                .register(Echo::boxed("mcp__fs-2_write", ToolClass::ReadOnly))
                .is_ok()
        );
    }

    #[test]
    fn names_of_lists_each_class_sorted() {
        let registry = registry(&[
            ("write", ToolClass::Mutating),
            ("sh", ToolClass::ExecCapable),
            ("edit", ToolClass::Mutating),
            ("read", ToolClass::ReadOnly),
        ]);
        assert_eq!(registry.names_of(ToolClass::Mutating), ["edit", "write"]);
        assert_eq!(registry.names_of(ToolClass::ExecCapable), ["sh"]);
        assert_eq!(registry.names_of(ToolClass::ReadOnly), ["read"]);
    }

    #[test]
    fn coding_tools_have_their_classes() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let without = coding_tools(workspace.clone(), None);
        assert_eq!(
            without.names_of(ToolClass::ReadOnly),
            ["list_dir", "read_file", "search_text"]
        );
        assert_eq!(
            without.names_of(ToolClass::Mutating),
            ["edit_file", "write_file"]
        );
        assert!(without.names_of(ToolClass::ExecCapable).is_empty());
        let with = coding_tools(workspace, Some(CommandPolicy::default()));
        assert_eq!(with.names_of(ToolClass::ExecCapable), ["run_command"]);
        assert_eq!(with.specs().len(), 6);
    }

    #[test]
    fn coding_tool_parameters_are_json_schema_objects() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let registry = coding_tools(workspace, Some(CommandPolicy::default()));
        for spec in registry.specs() {
            let schema = &spec.parameters;
            assert_eq!(schema["type"], "object", "{}", spec.name);
            assert_eq!(schema["additionalProperties"], false, "{}", spec.name);
            let properties = schema["properties"].as_object().unwrap();
            assert!(!properties.is_empty(), "{}", spec.name);
            for (name, property) in properties {
                let kind = property["type"].as_str().unwrap();
                assert!(
                    ["string", "integer"].contains(&kind),
                    "{}.{name}",
                    spec.name
                );
                assert!(
                    !property["description"].as_str().unwrap().is_empty(),
                    "{}.{name}",
                    spec.name
                );
            }
            for required in schema["required"].as_array().unwrap() {
                assert!(properties.contains_key(required.as_str().unwrap()));
            }
            assert!(!spec.description.is_empty());
        }
    }

    #[test]
    fn call_parses_the_argument_text() {
        let registry = registry(&[("echo", ToolClass::ReadOnly)]);
        assert_eq!(
            registry.call("echo", r#"{"a": [1, 2]}"#),
            ToolOutput::ok(r#"{"a":[1,2]}"#)
        );
        assert_eq!(registry.call("echo", "  "), ToolOutput::ok("{}"));
        let out = registry.call("echo", r#"{"a": "#);
        assert!(out.is_error);
        assert!(
            out.content
                .starts_with("echo: the arguments are not valid JSON ("),
            "{}",
            out.content
        );
    }

    #[test]
    fn an_unknown_tool_is_named_with_the_known_ones() {
        let registry = registry(&[
            ("zeta", ToolClass::ReadOnly),
            ("alpha", ToolClass::ReadOnly),
        ]);
        let out = registry.call("gamma", "{}");
        assert_eq!(
            out,
            ToolOutput::error("unknown tool `gamma`; the tools are: alpha, zeta")
        );
    }

    #[test]
    fn tool_classes_serialise_in_snake_case() {
        let classes = [
            ToolClass::ReadOnly,
            ToolClass::Mutating,
            ToolClass::ExecCapable,
        ];
        assert_eq!(
            serde_json::to_string(&classes).unwrap(),
            r#"["read_only","mutating","exec_capable"]"#
        );
    }
}

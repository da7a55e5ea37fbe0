//! Tool arguments. Each tool declares its parameters once, as [`Param`]s:
//! the JSON Schema the model is shown and the checks on the arguments it
//! sends back both come from that one list, so they cannot disagree.

use super::{ToolClass, ToolError, ToolOutput, ToolSpec};
use serde_json::{Map, Value, json};

/// One parameter of a tool.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    /// For the model: what the argument means.
    pub description: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    String,
    /// A whole number of at least `minimum`.
    Count {
        minimum: u64,
    },
}

impl Param {
    /// A required string.
    pub const fn string(name: &'static str, description: &'static str) -> Param {
        Param {
            name,
            kind: Kind::String,
            required: true,
            description,
        }
    }

    /// An optional whole number of at least `minimum`.
    pub const fn count(name: &'static str, minimum: u64, description: &'static str) -> Param {
        Param {
            name,
            kind: Kind::Count { minimum },
            required: false,
            description,
        }
    }

    /// The same parameter, optional.
    pub const fn optional(self) -> Param {
        Param {
            required: false,
            ..self
        }
    }
}

/// The spec of a tool taking `params`.
pub(crate) fn spec(name: &str, description: &str, class: ToolClass, params: &[Param]) -> ToolSpec {
    let properties: Map<String, Value> = params
        .iter()
        .map(|param| {
            let schema = match param.kind {
                Kind::String => json!({"type": "string", "description": param.description}),
                Kind::Count { minimum } => json!({
                    "type": "integer",
                    "minimum": minimum,
                    "description": param.description,
                }),
            };
            (param.name.to_string(), schema)
        })
        .collect();
    let required: Vec<&str> = params
        .iter()
        .filter(|param| param.required)
        .map(|param| param.name)
        .collect();
    ToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
        class,
    }
}

/// Calls `run` with `arguments` checked against `params`, and turns its
/// result into the tool's output: the body of every toolset tool's
/// [`Tool::call`](super::Tool::call).
pub(crate) fn invoke(
    spec: &ToolSpec,
    params: &[Param],
    arguments: &Value,
    run: impl FnOnce(&Args<'_>) -> Result<ToolOutput, ToolError>,
) -> ToolOutput {
    let result = Args::parse(params, arguments).and_then(|args| run(&args));
    ToolOutput::from_result(&spec.name, result)
}

/// A tool call's arguments, checked to name only declared parameters.
/// A `null` argument counts as absent (models send them for optional ones).
#[derive(Debug)]
pub(crate) struct Args<'a> {
    values: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// `arguments`, which must be an object naming only `params`: an
    /// undeclared name is most often a misspelt optional argument, which
    /// would otherwise be silently ignored.
    pub fn parse(params: &[Param], arguments: &'a Value) -> Result<Args<'a>, ToolError> {
        let Value::Object(values) = arguments else {
            return Err(ToolError::NotAnObject {
                got: describe(arguments),
            });
        };
        if let Some(unknown) = values
            .keys()
            .find(|key| !params.iter().any(|param| param.name == key.as_str()))
        {
            let expected: Vec<&str> = params.iter().map(|param| param.name).collect();
            return Err(ToolError::UnknownArgument {
                name: unknown.clone(),
                expected: expected.join(", "),
            });
        }
        Ok(Args { values })
    }

    /// The required string `param`.
    pub fn string(&self, param: &Param) -> Result<&'a str, ToolError> {
        self.opt_string(param)?
            .ok_or(ToolError::MissingArgument(param.name))
    }

    /// The string `param`, if given.
    pub fn opt_string(&self, param: &Param) -> Result<Option<&'a str>, ToolError> {
        debug_assert_eq!(param.kind, Kind::String, "{}", param.name);
        match self.value(param) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(invalid(
                param,
                format!("must be a string, got {}", describe(other)),
            )),
        }
    }

    /// The whole number `param`, if given.
    pub fn opt_count(&self, param: &Param) -> Result<Option<usize>, ToolError> {
        let Kind::Count { minimum } = param.kind else {
            debug_assert!(false, "{} is not a count", param.name);
            return Ok(None);
        };
        let Some(value) = self.value(param) else {
            return Ok(None);
        };
        match value.as_u64() {
            Some(count) if count >= minimum => {
                Ok(Some(usize::try_from(count).unwrap_or(usize::MAX)))
            }
            _ => Err(invalid(
                param,
                format!(
                    "must be a whole number of at least {minimum}, got {}",
                    describe(value)
                ),
            )),
        }
    }

    fn value(&self, param: &Param) -> Option<&'a Value> {
        self.values.get(param.name).filter(|value| !value.is_null())
    }
}

/// An error saying argument `param` `problem`.
pub(crate) fn invalid(param: &Param, problem: impl Into<String>) -> ToolError {
    ToolError::InvalidArgument {
        name: param.name,
        problem: problem.into(),
    }
}

/// `value` as an error message shows it: numbers and booleans as they are,
/// anything longer by its type.
fn describe(value: &Value) -> String {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: Param = Param::string("name", "A name.");
    const NOTE: Param = Param::string("note", "A note.").optional();
    const COUNT: Param = Param::count("count", 1, "A count.");
    const PARAMS: &[Param] = &[NAME, NOTE, COUNT];

    fn message(result: Result<impl std::fmt::Debug, ToolError>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn arguments_are_read_by_parameter() {
        let value = json!({"name": "x", "note": null, "count": 3});
        let args = Args::parse(PARAMS, &value).unwrap();
        assert_eq!(args.string(&NAME).unwrap(), "x");
        assert_eq!(args.opt_string(&NOTE).unwrap(), None);
        assert_eq!(args.opt_count(&COUNT).unwrap(), Some(3));
    }

    #[test]
    fn bad_arguments_are_named() {
        let value = json!({});
        assert_eq!(
            message(Args::parse(PARAMS, &value).unwrap().string(&NAME)),
            "missing argument `name`"
        );
        let value = json!({"name": 7});
        assert_eq!(
            message(Args::parse(PARAMS, &value).unwrap().string(&NAME)),
            "argument `name` must be a string, got 7"
        );
        for (count, got) in [
            (json!(0), "0"),
            (json!(-2), "-2"),
            (json!(1.5), "1.5"),
            (json!("3"), "a string"),
        ] {
            let value = json!({ "count": count });
            assert_eq!(
                message(Args::parse(PARAMS, &value).unwrap().opt_count(&COUNT)),
                format!("argument `count` must be a whole number of at least 1, got {got}")
            );
        }
        assert_eq!(
            message(Args::parse(PARAMS, &json!({"name": "x", "cuont": 1}))),
            "unknown argument `cuont` (the arguments are: name, note, count)"
        );
        assert_eq!(
            message(Args::parse(PARAMS, &json!(["x"]))),
            "arguments must be a JSON object, got an array"
        );
    }

    #[test]
    fn the_schema_follows_the_parameters() {
        let spec = spec("t", "A tool.", ToolClass::ReadOnly, PARAMS);
        assert_eq!(
            spec.parameters,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "A name."},
                    "note": {"type": "string", "description": "A note."},
                    "count": {"type": "integer", "minimum": 1, "description": "A count."},
                },
                "required": ["name"],
                "additionalProperties": false,
            })
        );
    }
}

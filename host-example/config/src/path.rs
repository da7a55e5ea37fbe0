//! Keys as messages name them: the dotted path of a key in the file, each
//! table key bare where TOML allows it (`agents.review`), quoted where it
//! does not (`models."gpt-4o*"`).

/// A table key as written in a dotted path: bare when TOML allows it.
pub fn key_text(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_owned()
    } else {
        toml::Value::from(key).to_string()
    }
}

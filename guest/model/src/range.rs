//! The values a numeric setting may take: one table per settings type
//! ([`CORE_RANGES`](crate::CORE_RANGES), the compressor's, the host's), read
//! by the type's validation and by the JSON Schema a host publishes, so the
//! two cannot disagree; and one sentence for a value outside.

/// The values one numeric key may take, both bounds included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub key: &'static str,
    pub min: u32,
    pub max: u32,
}

impl Range {
    pub const fn new(key: &'static str, min: u32, max: u32) -> Range {
        Range { key, min, max }
    }

    /// Whether `value` is allowed; if not, the sentence every settings check
    /// uses: `{key} = {value}: must be between {min} and {max}`.
    pub fn check(&self, value: u32) -> Result<(), String> {
        let Range { key, min, max } = *self;
        if (min..=max).contains(&value) {
            Ok(())
        } else {
            Err(format!("{key} = {value}: must be between {min} and {max}"))
        }
    }
}

/// The first of `ranges` whose value (`value(key)`) is not allowed, named
/// with its range.
pub fn check(ranges: &[Range], value: impl Fn(&str) -> u32) -> Result<(), String> {
    ranges.iter().try_for_each(|r| r.check(value(r.key)))
}

/// [`check`] on the fields of `settings` as it serialises, so a table
/// needs no code of its own per key.
///
/// # Panics
///
/// When a range names a field that is not a `u32` of `settings`.
#[cfg(feature = "schema")]
pub fn check_fields(ranges: &[Range], settings: &impl serde::Serialize) -> Result<(), String> {
    let json = serde_json::to_value(settings).expect("settings serialise");
    check(ranges, |key| {
        json[key]
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or_else(|| panic!("a range names `{key}`, not a u32 field of the settings"))
    })
}

/// Sets `minimum` and `maximum` of each property of an object schema that
/// `ranges` names: what a settings type's `#[schemars(transform = ...)]`
/// calls, so its schema publishes the ranges its validation enforces.
///
/// # Panics
///
/// When a range names a key the schema does not have: a table out of step
/// with its type, caught by the first test that builds the schema.
#[cfg(feature = "schema")]
pub fn publish(schema: &mut schemars::Schema, ranges: &[Range]) {
    for r in ranges {
        let property = schema
            .get_mut("properties")
            .and_then(|p| p.get_mut(r.key))
            .and_then(|p| p.as_object_mut())
            .unwrap_or_else(|| panic!("a range names `{}`, which the schema does not have", r.key));
        property.insert("minimum".into(), r.min.into());
        property.insert("maximum".into(), r.max.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_are_allowed_and_the_sentence_names_the_range() {
        let r = Range::new("k", 3, 9);
        assert!(r.check(3).is_ok() && r.check(9).is_ok());
        assert_eq!(r.check(2).unwrap_err(), "k = 2: must be between 3 and 9");
        assert_eq!(r.check(10).unwrap_err(), "k = 10: must be between 3 and 9");
        let table = [Range::new("a", 0, 1), Range::new("b", 5, 6)];
        assert_eq!(
            check(&table, |k| if k == "a" { 1 } else { 7 }).unwrap_err(),
            "b = 7: must be between 5 and 6"
        );
    }
}

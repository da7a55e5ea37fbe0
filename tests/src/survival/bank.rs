//! A phrase bank: everything a family of survival cases says, apart from
//! the values drawn into it. The benchmark's generator takes a bank, so a
//! family written by someone else, in other words, runs through the same
//! planting, rounds and scoring as the others.

/// Between what a person says and a command the agent runs to find the
/// value: `"Check the env.\n$ cat deploy.env\nregion={v}"` is planted as
/// the request, the agent's call (`run_command`, the rest of the line) and
/// the tool's result (the lines after it), which carries the value.
pub const COMMAND: &str = "\n$ ";

/// Before the assistant's own answer to a statement (else it answers with
/// one of the bank's `acks`): `"NEVER …{v}.\n=> Noted, I won't."`. The
/// answer never repeats the value.
pub const REPLY: &str = "\n=> ";

/// A canary statement. `{v}` is where the value goes; `shape` is how the
/// value looks: `#` a digit, `!` a digit 1–9, `~` a digit 0–5, `@` a
/// lowercase letter, `%` an uppercase letter, `^` a hex digit, `*` a lowercase
/// letter or digit, any other character itself. The text may hold a
/// [`COMMAND`] (the value is found by a tool) and a [`REPLY`].
pub struct Template {
    pub text: &'static str,
    pub shape: &'static str,
    /// Statements giving the same subject a new value (`{v}`). They never
    /// name the old value: a correction quoting it would make the stale value
    /// part of the update itself.
    pub updates: [&'static str; 2],
}

/// A statement made twice about two subjects (`{s}`): the near-duplicate
/// (look-alike) pairs, whose two values must both stay. `shape` may contain
/// `{s}` too.
pub struct Twin {
    pub text: &'static str,
    pub shape: &'static str,
    pub subjects: &'static [&'static str],
}

pub const fn t(text: &'static str, shape: &'static str, updates: [&'static str; 2]) -> Template {
    Template {
        text,
        shape,
        updates,
    }
}

/// The phrases of one family.
pub struct Bank {
    /// Short name, used in case names (`untuned-3`).
    pub name: &'static str,
    /// Canary templates per kind, in `CanaryKind::ALL` order (rule,
    /// constraint, fact, goal, preference); at least 4 per kind.
    pub templates: [&'static [Template]; 5],
    /// Look-alike pairs per kind, same order; at least 1 per kind, each with
    /// at least 2 subjects.
    pub twins: [&'static [Twin]; 5],
    /// What a person says before a statement (`""` entries make a bare
    /// statement likelier).
    pub lead_ins: &'static [&'static str],
    /// What a person says after it.
    pub trailers: &'static [&'static str],
    /// The assistant's answer to a statement; never repeats a value.
    pub acks: &'static [&'static str],
    /// Routine lines a person sends, often several times word for word
    /// ("Looking at the retry settings again."): status chatter and
    /// acknowledgements that bind nothing. Empty: the family has none beyond
    /// the generator's own filler.
    pub routine: &'static [&'static str],
    /// Person's lines that look binding but are not: numbers, dates and rule
    /// words in reports of what happened ("The job never finished on 3 of
    /// the 12 runs last week."). They carry no canary value and must not
    /// crowd the canaries out. May contain `{n}` for a number drawn fresh.
    pub decoys: &'static [&'static str],
}

//! Text helpers shared by extraction, formatting and the budget.

use std::borrow::Cow;

use condense_model::tokens::text_millis;

/// Appended where text was cut. Language-neutral, so summaries in every
/// language share it.
pub const CUT_MARKER: &str = " […]";

/// Agents inject `<system-reminder>` blocks into user turns and tool results;
/// they are instructions to the model, not something the user asked for.
pub fn strip_reminders(text: &str) -> Cow<'_, str> {
    const OPEN: &str = "<system-reminder>";
    const CLOSE: &str = "</system-reminder>";
    if !text.contains(OPEN) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        // An unclosed block runs to the end of the text.
        rest = rest[start..]
            .find(CLOSE)
            .map_or("", |end| &rest[start + end + CLOSE.len()..]);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// `text` without terminal escape sequences (coloured compiler and test output)
/// and control characters other than newlines and tabs.
fn visible(text: &str) -> Cow<'_, str> {
    let kept = |c: char| !c.is_control() || c == '\n' || c == '\t';
    if text.chars().all(kept) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // `ESC [ parameters final` with the final char in `@..=~`; other
            // escapes are ESC and one char.
            if chars.next() == Some('[') {
                chars.by_ref().find(|c| ('@'..='~').contains(c));
            }
        } else if kept(c) {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Multi-line text without control characters, trailing blanks removed from
/// each line and runs of blank lines collapsed to one, trimmed.
pub fn tidy_block(text: &str) -> String {
    let text = visible(text);
    let mut out = String::with_capacity(text.len());
    let mut blank_run = false;
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            blank_run = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_run { "\n\n" } else { "\n" });
        }
        blank_run = false;
        out.push_str(line);
    }
    out
}

/// `text` on one line without control characters: whitespace runs become one
/// space, and more than `max_chars` characters are cut with an ellipsis.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for word in visible(text).split_whitespace() {
        if chars > 0 {
            out.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars >= max_chars {
                out.push('…');
                return out;
            }
            out.push(c);
            chars += 1;
        }
    }
    out
}

/// The longest prefix of `text` estimated at most `max_millis` thousandths of a
/// token, preferring to end at a word boundary.
pub fn fit_prefix(text: &str, max_millis: u64) -> &str {
    if text_millis(text) <= max_millis {
        return text;
    }
    // Apart from single spaces between words and runs of blanks, every
    // character costs at least a sixth of a token, so a prefix within budget is
    // rarely longer than this. Bounding the search keeps it cheap on huge
    // inputs; the rare blank-heavy text merely gets a shorter prefix.
    let max_chars = usize::try_from(max_millis / 1000 * 12 + 12).unwrap_or(usize::MAX);
    let ends: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .skip(1)
        .take(max_chars)
        .collect();
    // The estimate grows with the prefix (give or take a run's neighbour), so
    // binary search for the last fitting end; the end it returns was measured.
    let fitting = ends.partition_point(|&end| text_millis(&text[..end]) <= max_millis);
    let prefix = match fitting {
        0 => "",
        n => &text[..ends[n - 1]],
    };
    // Back off to a space if that loses little, so words are not cut in half.
    match prefix.rfind(char::is_whitespace) {
        Some(space) if space >= prefix.len() * 4 / 5 => {
            let words = prefix[..space].trim_end();
            // The estimate looks at a run's neighbour, so a shorter text is
            // not guaranteed to be cheaper.
            if text_millis(words) <= max_millis {
                words
            } else {
                prefix
            }
        }
        _ => prefix,
    }
}

/// `text` if it fits `max_millis`, else a prefix with [`CUT_MARKER`] that does;
/// `None` if not even `min_chars` characters and the marker fit.
pub fn cut_to_fit(text: &str, max_millis: u64, min_chars: usize) -> Option<Cow<'_, str>> {
    if text_millis(text) <= max_millis {
        return Some(Cow::Borrowed(text));
    }
    let mut room = max_millis.checked_sub(text_millis(CUT_MARKER))?;
    loop {
        let head = fit_prefix(text, room).trim_end();
        if head.chars().count() < min_chars {
            return None;
        }
        let cut = format!("{head}{CUT_MARKER}");
        let cost = text_millis(&cut);
        if cost <= max_millis {
            return Some(Cow::Owned(cut));
        }
        // The head's last run costs differently before the marker; shrink by
        // the overshoot and retry.
        room = room.checked_sub(cost - max_millis)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reminders_are_removed_even_unclosed() {
        let text = "a<system-reminder>x</system-reminder>b<system-reminder>tail";
        assert_eq!(strip_reminders(text), "ab");
        assert!(matches!(strip_reminders("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn tidy_block_collapses_blank_runs() {
        assert_eq!(tidy_block("\r\n\n a  \r\n\n\n\nb\t\n\n"), " a\n\nb");
    }

    #[test]
    fn escapes_and_controls_are_removed() {
        assert_eq!(
            one_line("\x1b[1;31merror\x1b[0m: x\x08y\x1b=", 100),
            "error: xy"
        );
        assert_eq!(
            tidy_block("\x1b[2mCompacted\x1b[22m\nnext"),
            "Compacted\nnext"
        );
    }

    #[test]
    fn one_line_collapses_and_cuts() {
        assert_eq!(one_line("  a \n\t b  ", 10), "a b");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }

    #[test]
    fn fit_prefix_respects_budget_and_char_boundaries() {
        let text = "上下文压缩可以降低成本 and some english words after it";
        for budget in 0..40 {
            let p = fit_prefix(text, budget * 1000);
            assert!(text_millis(p) <= budget * 1000, "{budget}: {p}");
            assert!(text.starts_with(p));
        }
        assert_eq!(fit_prefix(text, 1_000_000), text);
    }

    #[test]
    fn cut_to_fit_marks_the_cut() {
        let text = "word ".repeat(100);
        let cut = cut_to_fit(&text, 20_000, 1).unwrap();
        assert!(cut.ends_with(CUT_MARKER));
        assert!(text_millis(&cut) <= 20_000);
        assert_eq!(cut_to_fit("short", 20_000, 1).unwrap(), "short");
        assert_eq!(cut_to_fit(&text, 1_000, 1), None);
    }
}

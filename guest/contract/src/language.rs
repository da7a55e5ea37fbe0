//! A guess at the conversation's language, so the summary's framing (and the
//! summarizer's headings) read in the language the person writes in. Only the
//! person's own messages count: tool output is mostly English and code.

use condense_model::Message;

/// How much of the person's text is looked at: enough to decide, cheap on
/// sessions whose first message pastes a whole file.
const SAMPLE_CHARS: usize = 4_000;

/// Frequent short words that barely occur in the other listed languages.
const STOPWORDS: &[(&str, &[&str])] = &[
    (
        "en",
        &[
            "the", "and", "is", "to", "of", "this", "that", "with", "please", "it",
        ],
    ),
    (
        "de",
        &[
            "der", "die", "das", "und", "ist", "nicht", "mit", "bitte", "ich", "auf",
        ],
    ),
    (
        "fr",
        &[
            "le", "la", "les", "et", "est", "une", "pas", "avec", "pour", "des",
        ],
    ),
    (
        "es",
        &[
            "el", "los", "las", "y", "es", "una", "por", "con", "para", "que",
        ],
    ),
    (
        "pt",
        &[
            "o", "os", "um", "uma", "não", "com", "para", "é", "do", "da",
        ],
    ),
    (
        "it",
        &[
            "il", "gli", "e", "è", "una", "non", "con", "per", "che", "della",
        ],
    ),
];

/// The language of `messages`.
pub fn detect(messages: &[Message]) -> &'static str {
    let mut sample = Sample::default();
    sample.extend(messages);
    sample.language()
}

/// The person's text that decides the language: their messages' text, in
/// order, up to [`SAMPLE_CHARS`] characters. Kept in the checkpoint for the
/// folded messages, so a call that sees only the messages after the fold
/// boundary decides as one that sees them all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sample(pub String);

impl Sample {
    /// Adds the text of the turn openers among `messages`, until full.
    pub fn extend(&mut self, messages: &[Message]) {
        for m in messages.iter().filter(|m| m.opens_turn()) {
            if self.is_full() {
                return;
            }
            self.0.push_str(&m.joined_text());
            self.0.push('\n');
            if let Some((cut, _)) = self.0.char_indices().nth(SAMPLE_CHARS) {
                self.0.truncate(cut);
            }
        }
    }

    fn is_full(&self) -> bool {
        self.0.len() >= SAMPLE_CHARS
    }

    pub fn language(&self) -> &'static str {
        detect_text(&self.0)
    }
}

pub fn detect_text(text: &str) -> &'static str {
    let (mut han, mut kana, mut hangul, mut cyrillic, mut letters) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    for c in text.chars().take(SAMPLE_CHARS) {
        match c {
            '\u{3040}'..='\u{30ff}' => kana += 1,
            '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}' => han += 1,
            '\u{ac00}'..='\u{d7af}' | '\u{1100}'..='\u{11ff}' => hangul += 1,
            '\u{0400}'..='\u{04ff}' => cyrillic += 1,
            c if c.is_alphabetic() => letters += 1,
            _ => {}
        }
    }
    // Script first: a script's share of all letters decides, so that English
    // identifiers in a Chinese request do not outvote it.
    let all = han + kana + hangul + cyrillic + letters;
    if all == 0 {
        return "en";
    }
    if kana * 10 >= all {
        return "ja";
    }
    if hangul * 5 >= all {
        return "ko";
    }
    if han * 5 >= all {
        return "zh";
    }
    if cyrillic * 3 >= all {
        return "ru";
    }
    let mut best = ("en", 0usize);
    for (lang, words) in STOPWORDS {
        let hits = text
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| words.iter().any(|s| w.eq_ignore_ascii_case(s)))
            .count();
        if hits > best.1 {
            best = (lang, hits);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::{Sample, detect, detect_text};
    use condense_model::{Message, Role};

    #[test]
    fn a_sample_extended_in_steps_decides_as_one_over_all() {
        let messages: Vec<Message> = (0..400)
            .map(|i| {
                let text = if i % 3 == 0 {
                    "Bitte prüfe das und die Tests"
                } else {
                    "the build is ok"
                };
                Message::text(
                    if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    text,
                )
            })
            .collect();
        for split in [0, 1, 57, 200, 399, 400] {
            let mut sample = Sample::default();
            sample.extend(&messages[..split]);
            sample.extend(&messages[split..]);
            let mut whole = Sample::default();
            whole.extend(&messages);
            assert_eq!(sample, whole, "split at {split}");
            assert_eq!(sample.language(), detect(&messages));
        }
    }

    #[test]
    fn detects_scripts_and_latin_languages() {
        assert_eq!(
            detect_text("Please fix the failing test in the parser"),
            "en"
        );
        assert_eq!(
            detect_text("Bitte repariere den Test, der nicht läuft, und ich prüfe das"),
            "de"
        );
        assert_eq!(
            detect_text("Corrige le test qui échoue et ajoute une note pour les docs"),
            "fr"
        );
        assert_eq!(
            detect_text("Arregla el test que falla y añade una nota para los docs"),
            "es"
        );
        assert_eq!(detect_text("请修复 parser 中失败的测试"), "zh");
        assert_eq!(detect_text("パーサーのテストを直してください"), "ja");
        assert_eq!(detect_text("파서 테스트를 고쳐 주세요"), "ko");
        assert_eq!(detect_text("Пожалуйста, исправь тест парсера"), "ru");
        assert_eq!(detect_text(""), "en");
    }
}

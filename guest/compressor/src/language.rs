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

pub fn detect(messages: &[Message]) -> &'static str {
    let mut sample = String::new();
    for m in messages.iter().filter(|m| m.opens_turn()) {
        sample.push_str(&m.joined_text());
        sample.push('\n');
        if sample.len() >= SAMPLE_CHARS {
            break;
        }
    }
    detect_text(&sample)
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
    use super::detect_text;

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

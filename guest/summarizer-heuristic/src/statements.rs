//! The person's binding statements: what they said that binds the rest of
//! the session — rules and prohibitions, limits, deadlines, required formats,
//! preferences, corrections, the exact values the work depends on, and the
//! goal.
//!
//! These are what an agent most needs after a compaction and what people
//! most hate losing, so they are lifted out of the person's messages
//! sentence by sentence, kept verbatim, and ranked above everything else the
//! summary holds. Two rules decide what is current:
//!
//! - **latest wins by subject**: a statement's subject is what it says with
//!   its values taken out (numbers, dates, versions, ids, paths), its
//!   lead-in, label and cue words aside; a later statement that gives a
//!   subject it shares a value of the same kind (the same namespace `db-…`,
//!   shape `9.9.9.9`, unit `… seconds` however spelled, label "Postgres …",
//!   date however written) replaces it whatever its wording, so a stale
//!   value is not carried as current. Shared words alone count only when a
//!   correction word ("actually", "now", "moved") says so, and a story
//!   ("the old job took 45 minutes") only when it tells what changed into
//!   what ("the demo got moved to …");
//! - statements that only look alike both stay: a qualifier differs. The
//!   same sentence with a word or two swapped ("the DB port for *staging*
//!   is …" / "… for *production* is …"), a word qualified by another word
//!   in each ("the *search* index" / "the *billing* index"), two labels
//!   that name two things ("Requirement RQ-17: …" / "Requirement RQ-18:
//!   …").
//!
//! Nothing here depends on English alone: the cue words cover the ten
//! languages the framing speaks, matched as words where words are spaced
//! and as substrings in Chinese, Japanese and Korean.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::text::one_line;

/// A binding statement longer than this is cut: it is a sentence, and the
/// summary must leave room for the others.
pub const STATEMENT_MAX_CHARS: usize = 400;

/// How a statement binds, most binding last (the budget drops in this
/// order, lowest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// The goal, the next step, an open question.
    Goal,
    /// An exact value the work depends on.
    Value,
    /// A rule, limit, deadline, format, preference or correction.
    Rule,
}

/// One statement, verbatim, with what decides whether a later one replaces
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub text: String,
    pub class: Class,
}

/// Rules, prohibitions, limits, formats and preferences, per language.
#[rustfmt::skip]
const RULE_CUES: &[&str] = &[
    // en
    "never", "always", "must", "mustn't", "don't", "do not", "only", "without approval",
    "without asking", "required", "requires", "make sure", "ensure", "prefer", "avoid",
    "rather", "cap", "capped", "limit", "limited", "at most", "no more than", "maximum", "max",
    "deadline", "due", "forbidden", "not allowed", "should", "shouldn't", "not",
    // de
    "nie", "niemals", "immer", "muss", "müssen", "darf", "dürfen", "nicht", "nur", "ohne",
    "höchstens", "maximal", "frist", "spätestens", "bevorzuge", "keine", "kein",
    // fr
    "jamais", "toujours", "doit", "doivent", "ne pas", "seulement", "uniquement", "sans",
    "au plus", "maximum", "date limite", "préfère", "interdit", "aucun",
    // es
    "nunca", "siempre", "debe", "deben", "no", "solo", "sólo", "sin", "como máximo",
    "fecha límite", "prefiero", "prohibido",
    // pt
    "sempre", "deve", "devem", "não", "só", "apenas", "sem", "no máximo", "prazo",
    "prefiro", "proibido",
    // it
    "mai", "deve", "devono", "non", "soltanto", "senza", "al massimo", "scadenza",
    "preferisco", "vietato",
    // ru
    "никогда", "всегда", "должен", "должна", "должны", "нельзя", "не", "только", "без",
    "не более", "срок", "предпочитаю", "запрещено",
];

/// The same for languages written without spaces, matched as substrings.
#[rustfmt::skip]
const RULE_CUES_UNSPACED: &[&str] = &[
    // zh
    "不要", "永远不要", "绝不", "必须", "总是", "始终", "只能", "只用", "不得", "禁止", "最多", "截止",
    "不能", "务必",
    // ja
    "しないで", "しないこと", "絶対に", "必ず", "常に", "だけ", "禁止", "以内", "締め切り", "してはいけ",
    "ないでください",
    // ko
    "절대", "항상", "반드시", "하지 마", "하지마", "금지", "이내", "마감", "만 사용", "않도록",
];

/// The goal, the next step, what is still open. (A question the person
/// asks is no goal: "did you push?")
#[rustfmt::skip]
const GOAL_CUES: &[&str] = &[
    "goal", "next", "then", "todo", "still open", "open question", "plan", "target",
    "ziel", "als nächstes", "offen", "but", "objectif", "ensuite", "objetivo", "luego",
    "próximo", "depois", "obiettivo", "poi", "цель", "затем", "дальше",
    "目标", "下一步", "目標", "次に", "목표", "다음",
];

/// Words that say a statement corrects or updates an earlier one.
#[rustfmt::skip]
const CORRECTION_CUES: &[&str] = &[
    "actually", "correction", "instead", "update", "updated", "changed", "change", "now",
    "no longer", "make that", "rather", "revised", "moved", "new", "swap", "switch", "replace",
    "rotated", "raised", "lowered", "bump", "bumped", "wrong", "sorry", "scratch that", "from now on", "rename",
    "upgrade", "upgraded", "increased", "decreased", "reduced", "tightened", "loosened", "migrated",
    "korrektur", "stattdessen", "jetzt", "nicht mehr", "eigentlich", "geändert",
    "en fait", "plutôt", "désormais", "maintenant", "corrección", "en realidad", "ahora",
    "en vez", "correção", "na verdade", "agora", "em vez", "correzione", "in realtà",
    "ora", "invece", "поправка", "на самом деле", "теперь", "вместо",
    "更正", "其实", "改为", "现在", "訂正", "やはり", "変更", "今は", "정정", "사실은",
    "변경", "이제",
];

/// Every cue table, by name ([`crate::cue_tables`]).
pub const CUE_TABLES: [(&str, &[&str]); 4] = [
    ("RULE_CUES", RULE_CUES),
    ("RULE_CUES_UNSPACED", RULE_CUES_UNSPACED),
    ("GOAL_CUES", GOAL_CUES),
    ("CORRECTION_CUES", CORRECTION_CUES),
];

/// Lowercase words of `text`: letters, digits and `_`/`-` inside words.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '\''))
        .map(|w| w.trim_matches(['-', '\'']).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether one of `cues` (single words or short phrases) occurs in `text`
/// as whole words, or, for the unspaced languages, as a substring.
fn has_cue(lower: &str, words: &[String], cues: &[&str], unspaced: &[&str]) -> bool {
    let spaced = cues.iter().any(|cue| {
        if cue.contains(' ') {
            let cue_words: Vec<&str> = cue.split(' ').collect();
            words
                .windows(cue_words.len())
                .any(|w| w.iter().zip(&cue_words).all(|(a, b)| a == b))
        } else {
            words.iter().any(|w| w == cue)
        }
    });
    spaced || unspaced.iter().any(|cue| lower.contains(cue))
}

/// What may stick to a value in running text ("at $4,217.", "(v5.35.2)").
const PUNCTUATION: &str = ".,;:!?()[]{}\"'`“”«»";

/// A token that is an exact value: it has a digit (an amount, a date, an
/// id, a version, a hash, a port) or is a path or URL.
fn is_value_token(token: &str) -> bool {
    let token = token.trim_matches(|c: char| PUNCTUATION.contains(c));
    token.chars().any(|c| c.is_ascii_digit())
        || token.contains("://")
        || (token.contains('/') && token.chars().any(char::is_alphabetic))
}

/// An amount, date or time: a value that is the *what* of a statement
/// ("the cap is $4,217"), not the *which* ("table orders_k31").
fn is_quantity(token: &str) -> bool {
    let token = token.trim_matches(|c: char| PUNCTUATION.contains(c));
    let body = token.trim_start_matches(['$', '€', '£', '¥', '~', '+', '-', '#']);
    !body.is_empty()
        && body.chars().next().is_some_and(|c| c.is_ascii_digit())
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || ",.:%-/".contains(c) || c.is_alphabetic())
        && body.chars().filter(char::is_ascii_digit).count()
            >= body.chars().filter(|c| c.is_alphabetic()).count()
}

/// The values of `text`, as written.
pub fn values(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .filter(|t| is_value_token(t))
        .map(|t| t.trim_matches(|c: char| PUNCTUATION.contains(c)))
        .filter(|t| !t.is_empty())
        .collect()
}

/// Words that carry no subject.
#[rustfmt::skip]
const STOPWORDS: &[&str] = &[
    "the", "a", "an", "is", "are", "be", "to", "of", "in", "on", "at", "for", "and", "or",
    "it", "this", "that", "with", "by", "as", "we", "you", "i", "our", "your", "my", "please",
    "will", "should", "must", "now", "not", "no", "so", "from", "into", "than", "then",
    "actually", "correction", "instead", "make", "made", "set", "use", "keep", "let's",
    // How a person leads in or signs off, not what they are talking about.
    "ok", "okay", "quick", "note", "important", "fyi", "also", "btw", "way", "before", "go",
    "one", "more", "thing", "thanks", "thank", "carry", "continue", "me", "us",
    "der", "die", "das", "ist", "und", "le", "la", "les", "est", "et", "el", "los", "es",
    "y", "o", "il", "di", "и", "в", "на",
];

/// A crude stem: enough that "capped" and "cap", "limits" and "limit" meet.
fn stem(word: &str) -> String {
    // "retries" → "retry", "policies" → "policy".
    if let Some(base) = word.strip_suffix("ies")
        && base.chars().count() >= 2
    {
        return format!("{base}y");
    }
    let mut w = word.to_owned();
    for suffix in ["ing", "ed", "es", "s"] {
        // "-es" only after a hiss ("matches", "boxes"); "examples" loses "-s".
        let hiss = |base: &str| base.ends_with(['s', 'x', 'z', 'h']);
        if w.chars().count() > suffix.len() + 2
            && let Some(base) = w.strip_suffix(suffix)
            && (suffix != "es" || hiss(base))
        {
            w = base.to_owned();
            break;
        }
    }
    // "capp" → "cap"
    let chars: Vec<char> = w.chars().collect();
    if chars.len() > 3 && chars[chars.len() - 1] == chars[chars.len() - 2] {
        w = chars[..chars.len() - 1].iter().collect();
    }
    w
}

/// What a statement is about: the stems of its words but the stopwords,
/// the function words ("under", "each") and the values, after its lead-ins
/// ("Listen,", "Oh, and", "As I told you last week:").
fn subject(text: &str) -> Vec<String> {
    let mut stems: Vec<String> = words(without_lead_ins(main_clause(text), &[',']))
        .into_iter()
        // "per-call" is about calls, as "per call" is, and "that's" is
        // "that"; a value stays whole.
        .flat_map(|w| match is_value_token(&w) {
            true => vec![w],
            false => without_possessive(&w)
                .split('-')
                .map(str::to_owned)
                .collect(),
        })
        .filter(|w| {
            !STOPWORDS.contains(&w.as_str())
                && !FUNCTION_WORDS.contains(&w.as_str())
                && !is_value_token(w)
        })
        .map(|w| stem(&w))
        .collect();
    stems.sort();
    stems.dedup();
    stems
}

/// `word` without a possessive or contracted "'s" ("API's", "that's").
fn without_possessive(word: &str) -> &str {
    (word.strip_suffix("'s").or_else(|| word.strip_suffix("’s"))).unwrap_or(word)
}

/// The values that say *which* thing a statement is about (ids, names,
/// paths), as opposed to the amounts and dates it states.
fn entities(text: &str) -> Vec<String> {
    let mut out: Vec<String> = values(text)
        .into_iter()
        .filter(|v| !is_quantity(v))
        .map(str::to_lowercase)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether two subject stems name one thing across spellings and
/// languages: equal once accents are dropped ("préfixe" / "prefixe"), or
/// one the start of the other and four letters at least ("prefix" /
/// "prefixe", "test" / "testnutzer": a compound says more of the same), or
/// one stem of five letters at least with two endings ("migrate" /
/// "migration").
fn kin(a: &str, b: &str) -> bool {
    let fold = |w: &str| -> String {
        w.chars()
            .map(|c| match c {
                'à' | 'á' | 'â' | 'ä' | 'ã' => 'a',
                'è' | 'é' | 'ê' | 'ë' => 'e',
                'ì' | 'í' | 'î' | 'ï' => 'i',
                'ò' | 'ó' | 'ô' | 'ö' | 'õ' => 'o',
                'ù' | 'ú' | 'û' | 'ü' => 'u',
                'ç' => 'c',
                'ñ' => 'n',
                c => c,
            })
            .collect()
    };
    // "flaky" / "flakiness": a final y is an i before an ending.
    let fold_y = |w: String| match w.strip_suffix('y') {
        Some(base) if base.chars().count() >= 3 => format!("{base}i"),
        _ => w,
    };
    let (a, b) = (fold_y(fold(a)), fold_y(fold(b)));
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    // "migrate" / "migration": one stem, two endings, when the stem is most
    // of the shorter word.
    const STEM_CHARS: usize = 5;
    let common = short
        .chars()
        .zip(long.chars())
        .take_while(|(x, y)| x == y)
        .count();
    a == b
        || short.chars().count() >= 4 && long.starts_with(short.as_str())
        || common >= STEM_CHARS && 4 * common >= 3 * short.chars().count()
}

/// The words `a` and `b` share, matched by [`kin`].
fn kin_shared(a: &[String], b: &[String]) -> usize {
    let shared = a.iter().filter(|x| b.iter().any(|y| kin(x, y))).count();
    shared.min(b.iter().filter(|y| a.iter().any(|x| kin(x, y))).count())
}

/// [`jaccard`] with words matched by [`kin`].
fn kin_jaccard(a: &[String], b: &[String]) -> f64 {
    overlap(kin_shared(a, b), a, b)
}

/// The share of the shorter subject that the longer one holds ([`kin`]):
/// what overlaps when one sentence wraps the same subject in more words
/// ("Quick one before lunch: ops stretched the backup retention to …").
fn kin_containment(a: &[String], b: &[String]) -> f64 {
    let shorter = a.len().min(b.len());
    if shorter == 0 {
        return 0.0;
    }
    kin_shared(a, b) as f64 / shorter as f64
}

fn jaccard(a: &[String], b: &[String]) -> f64 {
    overlap(a.iter().filter(|x| b.contains(x)).count(), a, b)
}

/// The Jaccard index of `a` and `b`, given the words they share.
fn overlap(shared: usize, a: &[String], b: &[String]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    shared as f64 / (a.len() + b.len() - shared) as f64
}

/// The statement `sentence` makes, if it binds.
pub fn classify(sentence: &str) -> Option<Statement> {
    let text = one_line(sentence, STATEMENT_MAX_CHARS);
    let lower = text.to_lowercase();
    let words = words(&text);
    if words.is_empty() {
        return None;
    }
    let class = if has_cue(&lower, &words, RULE_CUES, RULE_CUES_UNSPACED) {
        Class::Rule
    } else if !values(&text).is_empty() || names_someone(&text) {
        Class::Value
    } else if has_cue(&lower, &words, GOAL_CUES, &[]) {
        Class::Goal
    } else if labelled(&text) {
        // The person flagged it ("PREFERENCE: …", "Hinweis: …"): it binds
        // whatever its words.
        Class::Rule
    } else {
        return None;
    };
    // A bare "no, thanks" or "ok?" binds nothing (a sentence in an
    // unspaced language is one long word).
    let letters = text.chars().filter(|c| c.is_alphanumeric()).count();
    if words.len() < 3 && letters < 6 && values(&text).is_empty() {
        return None;
    }
    Some(Statement { text, class })
}

/// `text` without what leads into it: labels and lead-ins ("RULE:",
/// "Hinweis:", "For the record,", "Oh, and"), each a clause of at most
/// three words with no value in it, before a colon or a comma, with four
/// words at least after it. What is left says the same, every value kept:
/// the form a summary falls back to before it drops a statement.
pub fn plain(text: &str) -> &str {
    without_lead_ins(text, &[':', ','])
}

/// `text` without the short clauses before one of `separators` that lead
/// into it (see [`plain`]).
fn without_lead_ins<'a>(text: &'a str, separators: &[char]) -> &'a str {
    const LEAD_WORDS: usize = 3;
    const REST_WORDS: usize = 4;
    let mut rest = text.trim();
    while let Some(at) = rest.find(separators) {
        let (head, tail) = (&rest[..at], rest[at + 1..].trim_start());
        let words = head.split_whitespace().count();
        if words == 0
            || words > LEAD_WORDS
            || !values(head).is_empty()
            || tail.split_whitespace().count() < REST_WORDS
        {
            break;
        }
        rest = tail;
    }
    rest
}

/// Whether `text` opens with a label: one or two words and a colon
/// ("NOTE:", "Preference:", "Open point:", "Hinweis:"), then a statement of
/// three words or more. People label what matters, in any language.
fn labelled(text: &str) -> bool {
    const LABEL_WORDS: usize = 2;
    const STATEMENT_WORDS: usize = 3;
    let Some((label, rest)) = text.split_once(':') else {
        return false;
    };
    let label_words: Vec<&str> = label.split_whitespace().collect();
    // A label names a kind of statement: no function word in it ("In
    // harbor: …" says where, not what kind).
    let function_word = |w: &str| {
        let w = w.to_lowercase();
        STOPWORDS.contains(&w.as_str()) || FUNCTION_WORDS.contains(&w.as_str())
    };
    (1..=LABEL_WORDS).contains(&label_words.len())
        && label_words
            .iter()
            .all(|w| w.chars().all(char::is_alphabetic) && !function_word(w))
        && rest.split_whitespace().count() >= STATEMENT_WORDS
        // `https://…` and `12:30` are not labels.
        && !rest.starts_with("//")
}

/// Whether `text` names someone or something by a proper name: two
/// capitalised words in a row, not at the start of the sentence ("the
/// on-call this week is Dana Whitlock"), in a sentence that is not written
/// in title case (most words capitalised: a heading, not a name). Such a
/// name is an exact value.
fn names_someone(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    let capitalised = |w: &str| {
        let w = w.trim_matches(|c: char| PUNCTUATION.contains(c));
        let mut chars = w.chars();
        chars.next().is_some_and(char::is_uppercase)
            && w.chars().count() >= 2
            && chars.all(char::is_lowercase)
    };
    // At most two words in five capitalised.
    let title_case = 5 * words.iter().filter(|w| capitalised(w)).count() > 2 * words.len();
    !title_case
        && words
            .windows(2)
            .enumerate()
            // Not the sentence's first word, nor one after a label's colon.
            .filter(|(i, pair)| {
                *i > 0 && !words[i - 1].ends_with([':', '.', '!', '?']) && !pair[0].ends_with(',')
            })
            .any(|(_, pair)| capitalised(pair[0]) && capitalised(pair[1]))
}

/// Past forms of the commonest irregular verbs; regular ones end in "-ed".
#[rustfmt::skip]
const IRREGULAR_PAST: &[&str] = &[
    "was", "were", "had", "did", "ran", "went", "came", "took", "gave", "made", "said",
    "got", "saw", "told", "knew", "thought", "found", "left", "felt", "began", "brought",
    "wrote", "held", "stood", "lost", "paid", "met", "sent", "built", "spent", "broke",
    "fell", "grew", "won", "heard", "ago", "yesterday",
];

/// What marks a sentence as holding now: a present form of "be" or "have",
/// a modal, an imperative's "please" or "let's", "now".
#[rustfmt::skip]
const PRESENT: &[&str] = &[
    "is", "are", "am", "isn't", "aren't", "has", "have", "must", "should", "shall", "will",
    "can", "can't", "cannot", "need", "needs", "please", "let's", "keep", "use", "always",
    "now", "currently", "today",
];

/// Whether `text` tells what happened rather than what holds: its verbs are
/// past ("the old job had 68 steps", "we counted 62 branches", "that was
/// long ago") and nothing in it is present or modal, or it says "must have"
/// (a guess about the past). Such a sentence binds nothing unless it updates
/// a statement the person made ("they pushed the deadline back to …").
pub fn narrative(text: &str) -> bool {
    // The lead-in's tense is not the statement's ("I should have said so
    // before: the release branch is …").
    let words = words(main_clause(text));
    let perfect_guess = words
        .windows(2)
        .any(|w| matches!(w[0].as_str(), "must" | "should" | "would" | "could") && w[1] == "have");
    // A regular past only after a pronoun ("we counted"): elsewhere "-ed"
    // is as often a participle that describes ("generated files", "the
    // protected branch").
    let past = words.iter().any(|w| IRREGULAR_PAST.contains(&w.as_str()))
        || words
            .windows(2)
            .any(|w| match (w[0].as_str(), w[1].as_str()) {
                ("i" | "we" | "they" | "he" | "she" | "someone" | "nobody", verb) => {
                    verb.len() >= 5 && verb.ends_with("ed") && !verb.ends_with("eed")
                }
                ("used", "to")
                | ("back", "when")
                | ("last", "week" | "month" | "year" | "night") => true,
                _ => false,
            });
    let present = words.iter().any(|w| PRESENT.contains(&w.as_str()));
    perfect_guess || past && !present
}

/// The statement `sentence` makes, if it binds beside the statements
/// `kept` so far: a story with numbers in it ("the old job had 68 steps")
/// is no rule, unless it moves one ("they pushed the deadline back to …").
pub fn binding(sentence: &str, kept: &[Statement]) -> Option<Statement> {
    let statement = classify(sentence)?;
    let moves_one = || {
        kept.iter()
            .any(|old| update_match(&statement, old).is_some())
    };
    // A story that names an exact thing (a commit, a version, an id) records
    // a value the work depends on ("the bug came in with 9c1e07a"); its
    // numbers alone do not.
    let names = || {
        entities(&statement.text)
            .iter()
            .any(|e| e.chars().any(|c| c.is_ascii_digit()))
    };
    (!narrative(&statement.text) || names() || moves_one()).then_some(statement)
}

/// What says that two values are values of the same thing.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Frame {
    /// The literal around the variable part: `release-` … `` for
    /// `release-XUS4`, `db-` … `.internal` for `db-7731.internal`.
    Literal(String, String),
    /// Digits as 9 and letters as a: `v9.99.9` for `v5.35.2`.
    Shape(String),
    /// The word after a bare number (`words` in "under 732 words"), or
    /// glued to it (`45s`), in one spelling ([`unit_name`]).
    Unit(String),
    /// The thing a bare number numbers, named before it: `postgres` in
    /// "Postgres 15", `seed` in "seed 42".
    Label(String),
    /// A bare number, unit or not.
    Number,
    /// A calendar date, however written: `2027-03-19`, `21 August`,
    /// `Aug 21`.
    Date,
}

/// The days of the week, in the languages of [`MONTHS`].
#[rustfmt::skip]
const WEEKDAYS: &[&str] = &[
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag",
    "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche",
    "lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo",
];

/// Month names and their common short forms, in the languages of the
/// headings that write them with Latin letters: what makes "21 August" a
/// date rather than 21 of something.
#[rustfmt::skip]
const MONTHS: &[&str] = &[
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec",
    "januar", "februar", "märz", "mai", "juni", "juli", "oktober", "dezember",
    "janvier", "février", "mars", "avril", "juin", "juillet", "août", "septembre",
    "octobre", "novembre", "décembre",
    "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
    "septiembre", "octubre", "noviembre", "diciembre",
];

/// Whether `value` is an ISO date (`2027-03-19`).
fn iso_date(value: &str) -> bool {
    let parts: Vec<&str> = value.split('-').collect();
    parts.len() == 3
        && [4, 2, 2]
            .iter()
            .zip(&parts)
            .all(|(n, p)| p.len() == *n && p.chars().all(|c| c.is_ascii_digit()))
        || numeric_date(value)
}

/// Whether `value` is a date in digits with a year: `14/03/2026`,
/// `3.14.2026`, `2026/03/14` (not a version: `1.2.3` has no year).
fn numeric_date(value: &str) -> bool {
    let Some(separator) = ['/', '.'].into_iter().find(|&c| value.contains(c)) else {
        return false;
    };
    let parts: Vec<&str> = value.split(separator).collect();
    let digits = |p: &str, lengths: std::ops::RangeInclusive<usize>| {
        lengths.contains(&p.len()) && p.chars().all(|c| c.is_ascii_digit())
    };
    match parts[..] {
        [a, b, year] if digits(year, 4..=4) => digits(a, 1..=2) && digits(b, 1..=2),
        [year, b, c] if separator == '/' && digits(year, 4..=4) => {
            digits(b, 1..=2) && digits(c, 1..=2)
        }
        _ => false,
    }
}

/// The frames of the values of `text`.
fn frames(text: &str) -> Vec<Frame> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, raw) in tokens.iter().enumerate() {
        let value = raw.trim_matches(|c: char| PUNCTUATION.contains(c));
        if !is_value_token(value) {
            continue;
        }
        // A URL's scheme says nothing of what it points to; its host's
        // first label does (`metrics.` of `metrics.eu7.example/d/7f3a`).
        let value = match value.split_once("://") {
            Some((_, rest)) => {
                if let Some(at) = rest.find(['.', '/', ':'])
                    && rest[..at].chars().filter(|c| c.is_alphabetic()).count() >= 3
                    && rest[..at].chars().all(char::is_alphabetic)
                {
                    out.push(Frame::Literal(rest[..=at].to_lowercase(), String::new()));
                }
                rest
            }
            None => value,
        };
        let (Some(first), Some(last)) = (
            value.find(|c: char| c.is_ascii_digit()),
            value.rfind(|c: char| c.is_ascii_digit()),
        ) else {
            continue;
        };
        // A day next to a month's name, or an ISO date, is a date.
        let month = |at: Option<&&str>| {
            at.map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .is_some_and(|w| MONTHS.contains(&w.as_str()))
        };
        let day = value.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d));
        if iso_date(value) || day && (month(tokens.get(i + 1)) || i > 0 && month(tokens.get(i - 1)))
        {
            out.push(Frame::Date);
            continue;
        }
        let separators = |c: char| "-_/.:@#".contains(c);
        let head = value[..first]
            .rfind(separators)
            .map_or("", |at| &value[..=at]);
        let tail = value[last..]
            .find(separators)
            .map_or("", |at| &value[last + at..]);
        if head.len() + tail.len() >= 2 {
            out.push(Frame::Literal(head.to_lowercase(), tail.to_lowercase()));
        }
        // The first segment alone too: `hotfix/` of `hotfix/UF-4728`,
        // whose `UF-` part is as variable as the number.
        if let Some(at) = head.find(separators)
            && at + 1 < head.len()
            && head[..at].chars().filter(|c| c.is_alphabetic()).count() >= 3
        {
            out.push(Frame::Literal(
                head[..=at].to_lowercase(),
                tail.to_lowercase(),
            ));
        }
        // Digits as `9`, letters as `a`: the value's form.
        let masked = |text: &str| -> String {
            text.chars()
                .map(|c| match c {
                    c if c.is_ascii_digit() => '9',
                    c if c.is_alphabetic() => 'a',
                    c => c,
                })
                .collect()
        };
        // A hash is a hash whatever its letters: `hex9` for `48105b870`.
        let hex = value.len() >= 7 && value.chars().all(|c| c.is_ascii_hexdigit());
        // An amount glued to its unit keeps the unit: `400ms` and `745MB`
        // are two kinds of value.
        let glued = value.find(|c: char| c.is_alphabetic()).filter(|&at| {
            at > 0
                && value[..at]
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
                && value[at..].chars().all(char::is_alphabetic)
        });
        let shape: String = if hex {
            format!("hex{}", value.len())
        } else if let Some(version) = value
            .strip_prefix(['v', 'V'])
            .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit()) && rest.contains('.'))
        {
            // `v2.4.1` is version 2.4.1.
            masked(version)
        } else if let Some(at) = glued {
            value[..at]
                .chars()
                .map(|c| if c.is_ascii_digit() { '9' } else { c })
                .collect::<String>()
                + &value[at..].to_lowercase()
        } else {
            masked(value)
        };
        let bare = value
            .trim_start_matches(['$', '€', '£', '¥'])
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '.');
        if bare {
            // "under 732 words", "$4,217": the unit, or the currency.
            // Not "and", "now" or "before": a unit is a content word.
            let word = |at: usize| {
                tokens
                    .get(at)
                    .map(|w| {
                        w.trim_matches(|c: char| !c.is_alphanumeric())
                            .to_lowercase()
                    })
                    .filter(|w| is_unit_word(w))
            };
            // Not past a comma ("5,678, still a hard stop"); past a cue
            // word ("124 changed lines" counts lines).
            let ends_clause = |at: usize| tokens[at].ends_with(|c: char| PUNCTUATION.contains(c));
            let cue = |at: usize| {
                tokens.get(at).is_some_and(|w| {
                    w.chars().all(char::is_alphabetic) && is_cue_stem(&stem(&w.to_lowercase()))
                })
            };
            let unit = (!ends_clause(i))
                .then(|| {
                    word(i + 1).or_else(|| {
                        (cue(i + 1) && !ends_clause(i + 1))
                            .then(|| word(i + 2))
                            .flatten()
                    })
                })
                .flatten()
                .map(|w| stem(&w));
            // "retention, in days: 14", "max retries: 5": the unit named
            // before the number, in a plural or after "in" ("the SOAP box:
            // 333" names what holds the number, no unit).
            let named_before = (unit.is_none() && i > 0)
                .then(|| tokens[i - 1].strip_suffix(':'))
                .flatten()
                .map(|w| w.to_lowercase())
                .filter(|w| w.chars().all(char::is_alphabetic) && !w.is_empty())
                .filter(|w| w.ends_with('s') || i > 1 && tokens[i - 2].eq_ignore_ascii_case("in"))
                .map(|w| stem(&w));
            let currency = value.chars().next().filter(|c| "$€£¥".contains(*c));
            // "36,800 API calls": the unit is the noun the words after the
            // number end with, as "41,200 calls" names it.
            if unit.is_some()
                && let Some(noun) = word(i + 2).filter(|_| !ends_clause(i + 1))
            {
                out.push(Frame::Unit(unit_name(&stem(&noun))));
            }
            match unit.or(named_before).or(currency.map(String::from)) {
                Some(unit) => out.push(Frame::Unit(unit_name(&unit))),
                None => {
                    // "Postgres 15", "seed 42": the word before names it.
                    let label = (i > 0)
                        .then(|| tokens[i - 1].to_lowercase())
                        .filter(|w| is_unit_word(w));
                    if let Some(label) = label {
                        out.push(Frame::Label(stem(&label)));
                    }
                }
            }
            // An address, a version or a decimal (`11.52.80.97`, `4.2.1`,
            // `99.95`) has a shape too, and so has a long number (a port, a
            // seed, an id: `41304`), which is no count of anything.
            const LONG_NUMBER_DIGITS: usize = 5;
            let decimal = value
                .split_once('.')
                .is_some_and(|(_, after)| after.starts_with(|c: char| c.is_ascii_digit()));
            let long =
                value.len() >= LONG_NUMBER_DIGITS && value.chars().all(|c| c.is_ascii_digit());
            if decimal || long {
                out.push(Frame::Shape(shape));
            }
            out.push(Frame::Number);
        } else if shape.len() >= 5 || shape.contains(|c: char| !c.is_ascii_digit()) {
            // `45s` is 45 seconds, `99.9%` 99.9 percent.
            let percent = value.strip_suffix('%').is_some_and(|n| {
                n.chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
            });
            if let Some(at) = glued {
                out.push(Frame::Unit(unit_name(&value[at..].to_lowercase())));
            } else if percent {
                out.push(Frame::Unit(unit_name("%")));
            }
            out.push(Frame::Shape(shape));
        }
    }
    out
}

/// One name for a unit however it is written: `s`, `sec` and `seconds` are
/// `second`.
fn unit_name(unit: &str) -> String {
    let unit = stem(unit);
    match unit.as_str() {
        "s" | "sec" | "secs" => "second",
        "ms" | "msec" | "msecs" => "millisecond",
        "min" | "mins" => "minute",
        "h" | "hr" | "hrs" => "hour",
        "d" => "day",
        "%" | "pct" => "percent",
        other => other,
    }
    .to_owned()
}

/// Whether `text` says it corrects or updates something: a word of
/// [`CORRECTION_CUES`], in any form ("replaced", "switching").
fn corrects(text: &str) -> bool {
    let lower = text.to_lowercase();
    let words = words(text);
    // Stemmed once: this runs for every pair of statements compared.
    static STEMS: OnceLock<HashSet<String>> = OnceLock::new();
    let stems = STEMS.get_or_init(|| {
        CORRECTION_CUES
            .iter()
            .filter(|cue| !cue.contains(' ') && cue.len() >= 4)
            .map(|cue| stem(cue))
            .collect()
    });
    has_cue(&lower, &words, CORRECTION_CUES, &[]) || words.iter().any(|w| stems.contains(&stem(w)))
}

/// Whether `word` (stemmed) is a word of [`RULE_CUES`] or [`CORRECTION_CUES`].
fn is_cue_stem(word: &str) -> bool {
    static STEMS: OnceLock<HashSet<String>> = OnceLock::new();
    STEMS
        .get_or_init(|| {
            RULE_CUES
                .iter()
                .chain(CORRECTION_CUES)
                .map(|c| stem(c))
                .collect()
        })
        .contains(word)
}

/// Whether `word` (lowercase) can be a number's unit: a content word, not
/// what follows a number in passing ("15.1 and nothing older", "99.9 now").
fn is_unit_word(word: &str) -> bool {
    word.chars().all(char::is_alphabetic) && is_content_word(word)
}

/// Whether `word` (lowercase) can say what a statement is about: two
/// letters at least, and no stopword, function word or cue word ("never",
/// "limit", "now" and "goal" say what kind of statement it is).
fn is_content_word(word: &str) -> bool {
    word.chars().filter(|c| c.is_alphabetic()).count() >= 2
        && !STOPWORDS.contains(&word)
        && !FUNCTION_WORDS.contains(&word)
        && !GOAL_CUES.contains(&word)
        && !is_cue_stem(&stem(word))
}

/// What `text` is about, word by word, to tell whether two statements share
/// it: the stems of its content words (no stopword, function word or cue
/// word, no value, no possessive "-'s"), each with whether it is strong: not
/// in its lead-in or label ([`plain`]: "Listen,", "BUDGET:") and not a
/// number's unit ("99.9 uptime"). "Retry delay: 400ms" and "keep the retry
/// delay at 250ms" share "retry" and "delay", strong in one of them; two
/// statements labelled "POLICY:" share nothing by that.
fn topic_words(text: &str) -> Vec<(String, bool)> {
    let text = text.trim();
    let body = plain(main_clause(text));
    let lead = &text[..text.len() - body.len()];
    let bare_number = |t: &str| {
        let t = t.trim_matches(|c: char| PUNCTUATION.contains(c));
        t.trim_start_matches(['$', '€', '£', '¥'])
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
            && t.chars().any(|c| c.is_ascii_digit())
    };
    let mut out: Vec<(String, bool)> = Vec::new();
    for (strong, part) in [(false, lead), (true, body)] {
        let tokens: Vec<&str> = part.split_whitespace().collect();
        for (i, token) in tokens.iter().enumerate() {
            if is_value_token(token) {
                continue;
            }
            let word = token
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            let word = without_possessive(&word);
            // "99.9 uptime", "in milliseconds: 1484".
            let as_unit = i > 0 && bare_number(tokens[i - 1])
                || token.ends_with(':') && tokens.get(i + 1).is_some_and(|t| bare_number(t));
            // "flaky-test rate" and "the flaky rate" share "flaky".
            for word in word.split('-').filter(|w| is_content_word(w)) {
                out.push((stem(word), strong && !as_unit));
            }
        }
    }
    out
}

/// The clause of `text` that says what holds, for telling a story from a
/// statement: what follows its last label or lead-in colon ("As I told you
/// last week: the cache TTL is 300 seconds"), when three words at least
/// follow it.
fn main_clause(text: &str) -> &str {
    const REST_WORDS: usize = 3;
    text.match_indices(": ")
        .map(|(at, _)| &text[at + 2..])
        .filter(|rest| rest.split_whitespace().count() >= REST_WORDS)
        .last()
        .unwrap_or(text)
}

/// Whether `text` tells of a change into a value ("the demo got moved *to*
/// 2031-05-14", "the quota was raised *to* 40GB"): news of what holds now,
/// however past its verb; a story's value is what was ("the old job *took*
/// 45 minutes").
fn changes_to(text: &str) -> bool {
    const INTO: &[&str] = &["to", "into", "auf", "à", "até", "на"];
    let tokens: Vec<&str> = text.split_whitespace().collect();
    tokens.windows(2).any(|w| {
        INTO.contains(&w[0].to_lowercase().as_str())
            && is_value_token(w[1].trim_matches(|c: char| PUNCTUATION.contains(c)))
    })
}

/// What opens a noun phrase before its qualifiers.
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "our", "your", "its", "their", "my",
];

/// Words that say which of a subject's values, not what the subject is: no
/// qualifier ("the *new* test user", "a *different* runner").
const NOT_QUALIFIERS: &[&str] = &[
    "old", "previous", "current", "latest", "other", "another", "fresh", "same",
];

/// Whether `a` and `b` are one statement made about two subjects, word for
/// word but one span of a word or two, values aside ("the DB port for
/// *staging* is 5433" / "the DB port for *production* is 5432", "the *edge
/// proxy* pool is pool-a11" / "the *scheduler* pool is pool-b22"): the spans
/// are content words that qualify ([`NOT_QUALIFIERS`]), neither a form of
/// the other, and no day or month is one (a value: "the deploy window is
/// *Tuesday* 14:00" / "*Thursday* 09:00"). What the two share is most of
/// each.
fn one_span_apart(a: &str, b: &str) -> bool {
    const SPAN_WORDS: usize = 2;
    let tokens = |text: &str| -> Vec<String> {
        plain(main_clause(text))
            .split_whitespace()
            .map(|t| {
                let w = t
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase();
                if is_value_token(t)
                    || MONTHS.contains(&w.as_str())
                    || WEEKDAYS.contains(&w.as_str())
                {
                    "#".to_owned()
                } else {
                    w
                }
            })
            .filter(|w| !w.is_empty())
            .collect()
    };
    let (ta, tb) = (tokens(a), tokens(b));
    let prefix = ta.iter().zip(&tb).take_while(|(x, y)| x == y).count();
    let room = ta.len().min(tb.len()) - prefix;
    let suffix = (ta.iter().rev().zip(tb.iter().rev()))
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let (sa, sb) = (
        &ta[prefix..ta.len() - suffix],
        &tb[prefix..tb.len() - suffix],
    );
    let qualifies = |w: &String| is_content_word(w) && !NOT_QUALIFIERS.contains(&w.as_str());
    let shared = prefix + suffix;
    (1..=SPAN_WORDS).contains(&sa.len())
        && (1..=SPAN_WORDS).contains(&sb.len())
        && 2 * shared >= ta.len().max(tb.len())
        && sa.iter().chain(sb).all(qualifies)
        && !sa
            .iter()
            .any(|x| sb.iter().any(|y| kin(&stem(x), &stem(y))))
}

/// How much of a subject `a` and `b` share (the Jaccard index of their
/// strong words), if they give it values of one kind.
///
/// - The subject: a content word ([`topic_words`], matched by [`kin`]) that
///   is strong in at least one of them, or a name (an entity: `p95`,
///   `RQ-17`) both carry.
/// - The kind: a frame more telling than a bare number (a namespace, a
///   shape, a unit, a label, a date) in both; or a number whose unit or
///   label the other names elsewhere ("at most 100 requests per minute" /
///   "requests per minute are capped at 250 now"; "Postgres 15" / "the
///   Postgres floor is 16"), a unit only when they share more than that
///   word ("the dashboard has 40 panels" is not about "panels per page").
fn same_subject(a: &str, b: &str, a_frames: &[Frame], b_frames: &[Frame]) -> Option<f64> {
    let strong = |words: &[(String, bool)]| -> Vec<String> {
        let mut out: Vec<String> = words
            .iter()
            .filter(|(_, s)| *s)
            .map(|(w, _)| w.clone())
            .collect();
        out.sort();
        out.dedup();
        out
    };
    let (ta, tb) = (topic_words(a), topic_words(b));
    let mut shared: Vec<&String> = ta
        .iter()
        .filter(|(x, xs)| tb.iter().any(|(y, ys)| (*xs || *ys) && kin(x, y)))
        .map(|(x, _)| x)
        .collect();
    shared.sort();
    shared.dedup();
    // A word met in another form ("tables" / "table") counts a little less
    // than the word itself: what tells two candidates apart.
    const OTHER_FORM: f64 = 0.1;
    let (la, lb) = (a.to_lowercase(), b.to_lowercase());
    let forms = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric() && c != '_')
            .map(str::to_owned)
            .collect()
    };
    let (fa, fb) = (forms(&la), forms(&lb));
    let other_form = shared
        .iter()
        .filter(|w| {
            !fa.iter()
                .any(|x| stem(x) == ***w && fb.iter().any(|y| y == x))
        })
        .count();
    let b_entities = entities(b);
    let named = entities(a).iter().any(|e| b_entities.contains(e));
    let (sa, sb) = (strong(&ta), strong(&tb));
    // The Jaccard index of the two subjects: the closer, the likelier the
    // one `add` picks among several candidates.
    let share = |shared: usize| {
        let union = (sa.len() + sb.len()).saturating_sub(shared).max(1);
        let weight = shared as f64 - OTHER_FORM * other_form.min(shared) as f64;
        (weight / union as f64).min(1.0)
    };
    let kind = a_frames
        .iter()
        .any(|f| !matches!(f, Frame::Number) && b_frames.contains(f));
    // The unit or label of a number in `frames` that `other`, whose number
    // has neither, names as a word; and whether it is a label.
    let unit_named = |frames: &[Frame], other: &[Frame], words: &[(String, bool)]| {
        let bare = other.contains(&Frame::Number)
            && !other
                .iter()
                .any(|f| matches!(f, Frame::Unit(_) | Frame::Label(_)));
        if !bare {
            return None;
        }
        frames.iter().find_map(|f| match f {
            Frame::Unit(unit) if words.iter().any(|(w, _)| w == unit) => {
                Some((unit.clone(), false))
            }
            Frame::Label(label) if words.iter().any(|(w, _)| kin(w, label)) => {
                Some((label.clone(), true))
            }
            _ => None,
        })
    };
    let shared = match kind {
        true => shared.len(),
        false => {
            let (unit, label) = unit_named(a_frames, b_frames, &tb)
                .or_else(|| unit_named(b_frames, a_frames, &ta))?;
            // A label names the subject ("Postgres 15" / "the Postgres
            // floor is 16"); a unit is what the subject is counted in.
            let besides = shared.iter().filter(|w| !kin(w, &unit)).count();
            if besides == 0 && !named && !label {
                return None;
            }
            shared.len().max(usize::from(label))
        }
    };
    (named || shared > 0).then(|| share(shared))
}

/// The names a statement is labelled with: the entities of a short clause
/// before a colon ("Requirement RQ-17: …", "Some ground rules: RQ-18 was
/// revised: …"; not the colon of `s3://` or `12:30`).
fn label_names(text: &str) -> Vec<String> {
    const LABEL_WORDS: usize = 3;
    let mut out = Vec::new();
    let mut start = 0;
    for (at, _) in text.match_indices(':') {
        let after = &text[at + 1..];
        if !after.is_empty() && !after.starts_with(char::is_whitespace) {
            continue;
        }
        let clause = &text[start..at];
        if clause.split_whitespace().count() <= LABEL_WORDS {
            out.extend(entities(clause));
        }
        start = at + 1;
    }
    out
}

/// Whether `a` and `b` name two things: one is labelled with a name
/// ([`label_names`]) the other does not say, and the other is labelled too
/// or says another name of the same namespace ("Requirement RQ-17: …" /
/// "RQ-18 was revised: …" are two requirements, however alike the rest).
fn named_apart(a: &str, b: &str) -> bool {
    let namespace = |name: &str| -> Vec<Frame> {
        frames(name)
            .into_iter()
            .filter(|f| matches!(f, Frame::Literal(..)))
            .collect()
    };
    [(a, b), (b, a)].into_iter().any(|(x, y)| {
        let names = label_names(x);
        let others = entities(y);
        // A label that is the statement's only value is what it states
        // ("Make that gw-71: it is the one to restart"), unless both are
        // labelled.
        let more = values(x).iter().any(|v| !names.contains(&v.to_lowercase()));
        !names.is_empty()
            && !names.iter().any(|n| others.contains(n))
            && (more || !label_names(y).is_empty())
            && (!label_names(y).is_empty()
                || others.iter().any(|o| {
                    let spaces = namespace(o);
                    names
                        .iter()
                        .any(|n| namespace(n).iter().any(|f| spaces.contains(f)))
                }))
    })
}

/// How well `new` matches `old` as an update of it, if it is one, higher
/// for a closer match:
///
/// - the same subject word for word and the same things it is about, with
///   new amounts ("the budget is capped at $4,217" / "… $5,090");
/// - a value with the same literal frame ("branch release-XUS4" / "the
///   protected branch is release-KQ77");
/// - a value of the same kind about a subject the two share, however
///   worded ([`same_subject`]);
/// - below those, a correction ("actually", "now", "make that") with a
///   value of the same shape or unit, or a subject that mostly overlaps.
///
/// Two statements that differ in what they are about ("table orders_k31" /
/// "table invoices_k32", "the audit queue" / "the email queue", "the DB
/// port for staging" / "… for production", "Requirement RQ-17: …" /
/// "Requirement RQ-18: …") are never updates of each other; of the rest,
/// `add` takes the closest.
fn update_match(new: &Statement, old: &Statement) -> Option<f64> {
    // The same statement about another subject ("move the export job to
    // pool-tb31" / "move the import job to pool-kx40") is a second
    // statement, whatever else they share.
    if swaps_a_subject(&new.text, &old.text)
        || one_span_apart(&new.text, &old.text)
        || named_apart(&new.text, &old.text)
    {
        return None;
    }
    let (new_subject, old_subject) = (subject(&new.text), subject(&old.text));
    let similarity = jaccard(&new_subject, &old_subject);
    if similarity == 1.0 && entities(&new.text) == entities(&old.text) {
        return Some(3.0 + similarity);
    }
    // Values said again, and none new: two sentences about one thing ("deploy
    // hx-7731 tonight" / "tag hx-7731 once it is deployed"), not an update.
    let new_values = values(&new.text);
    let old_values = values(&old.text);
    if !new_values.is_empty() && new_values.iter().all(|v| old_values.contains(v)) {
        return None;
    }
    let (new_frames, old_frames) = (frames(&new.text), frames(&old.text));
    let shared =
        |pick: fn(&Frame) -> bool| new_frames.iter().any(|f| pick(f) && old_frames.contains(f));
    // A correction word ("actually", "now", "moved") lowers what else the
    // two must share; people restate a value without one just as often.
    let corrects = corrects(&new.text);
    // A value in the same namespace (`rel-…`, `db-….internal`) is the same
    // kind of thing named anew, with a subject in common; with a correction
    // word the namespace alone says it, even in other words ("le compte
    // s'appelle svc_…" / "we replaced the service account: svc_…"); and so
    // does a new value of the same shape too (`svc_hpq41` / `svc_rtz88`),
    // however the two sentences put it, in whatever language.
    let literal = shared(|f| matches!(f, Frame::Literal(..)));
    let same_shape = shared(|f| matches!(f, Frame::Shape(..)));
    if literal && (similarity > 0.0 || corrects || same_shape) {
        return Some(2.0 + similarity);
    }
    // Latest wins by subject: a value of the same kind about a subject the
    // two share is that subject's new value, however the sentence is worded
    // ("ALWAYS start hotfix branches with hx7-" / "hotfix branches take
    // the prefix qa2- now"); a story ("the old cluster had 40 nodes") only
    // when it tells what changed into what ([`changes_to`]).
    let story = narrative(&new.text) && !changes_to(main_clause(&new.text));
    if !story && let Some(share) = same_subject(&new.text, &old.text, &new_frames, &old_frames) {
        return Some(1.0 + share);
    }
    // Values of two forms are values of two things: a size is no date
    // ("keep the bundle under 300KB for the launch" / "the launch is
    // 2031-03-16 now"), a version no key. (Units are words around a
    // number, too loose to tell: "50 calls" / "80 API calls".)
    let forms = |frames: &[Frame]| -> Vec<Frame> {
        frames
            .iter()
            .filter(|f| matches!(f, Frame::Date | Frame::Shape(_) | Frame::Literal(..)))
            .cloned()
            .collect()
    };
    let (new_forms, old_forms) = (forms(&new_frames), forms(&old_frames));
    if !new_forms.is_empty()
        && !old_forms.is_empty()
        && !new_forms.iter().any(|f| old_forms.contains(f))
        && !shared(|f| matches!(f, Frame::Unit(_)))
    {
        return None;
    }
    // A unit or a shape says more than a bare number does ("at most" is
    // shared by every cap), and both less than a namespace: the subject
    // must overlap too.
    let unit_or_shape = shared(|f| matches!(f, Frame::Unit(..) | Frame::Shape(..) | Frame::Date));
    // The unit itself is no shared subject: "limited to 284 MB" is not
    // about what "the image limit is 724 MB" is about.
    let units: Vec<&String> = new_frames
        .iter()
        .filter_map(|f| match f {
            Frame::Unit(unit) if old_frames.contains(f) => Some(unit),
            _ => None,
        })
        .collect();
    let topic = |subject: &[String]| -> Vec<String> {
        subject
            .iter()
            .filter(|w| !units.contains(&&unit_name(w)))
            .cloned()
            .collect()
    };
    let (new_topic, old_topic) = (topic(&new_subject), topic(&old_subject));
    let on_topic = kin_jaccard(&new_topic, &old_topic);
    // When one sentence wraps its subject in more words, the shorter
    // subject, cue words aside ("limited" says what kind of statement it
    // is, not what it is about), must be in the longer one.
    let uncued = |topic: &[String]| -> Vec<String> {
        topic.iter().filter(|w| !is_cue_stem(w)).cloned().collect()
    };
    let contained = kin_containment(&uncued(&new_topic), &uncued(&old_topic));
    // Below every match by subject above: a candidate that shares the
    // subject wins over one that only shares words.
    if unit_or_shape && (on_topic >= 0.2 || contained >= 0.3 || corrects && on_topic >= 0.1)
        || corrects
            && shared(|f| matches!(f, Frame::Number))
            && (on_topic >= 0.3 || contained >= 0.5)
    {
        return Some(0.5 + similarity / 2.0);
    }
    (corrects && on_topic >= 0.5).then_some(on_topic)
}

/// Whether `a` and `b` are one statement made about two subjects: a word
/// both share is qualified in each by a word the other does not have ("the
/// *email* queue" / "the *sms* queue", "*unit* tests" / "*integration*
/// tests"). A rewording of one statement keeps its qualifiers ("the signing
/// key", "the test database") or says the qualifier is new ("the *new* test
/// user"); values are not qualifiers: they are what an update changes.
/// The two qualifiers stand in the same place: after the same word, or
/// first in their clause ("*the* staging DB" / "*the* production DB"); a
/// verb before an object is no qualifier of it ("always *tag* releases" /
/// "*sign* releases", "never merge" / "nobody merges").
fn swaps_a_subject(a: &str, b: &str) -> bool {
    // Where a qualifier after its head stands: anywhere.
    const AFTER_HEAD: &str = "\u{1}";
    let content = |w: &str| {
        !STOPWORDS.contains(&w)
            && !FUNCTION_WORDS.contains(&w)
            && w.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && !w.contains(['-', '_', '.', '/', ':'])
    };
    let qualifier = |w: &str| {
        content(w)
            && !CORRECTION_CUES.contains(&w)
            && !NOT_QUALIFIERS.contains(&w)
            && !MODALS.contains(&w)
    };
    // A word and the next in the same clause: "Preference: ask" and "you
    // know, ask" qualify nothing across the colon and the comma.
    // (the word before, qualifier, head); the word before is empty at the
    // start of a clause.
    let pairs = |text: &str| -> Vec<(String, String, String)> {
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let word = |w: &str| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        };
        let ends_clause = |w: &str| w.ends_with(|c: char| PUNCTUATION.contains(c) || c == '-');
        let adjacent = (0..tokens.len().saturating_sub(1))
            .filter(|&i| !ends_clause(tokens[i]))
            .map(|i| {
                // An article is no context: "*the* billing service" and
                // "search service" both open a noun phrase.
                let before = match i {
                    0 => String::new(),
                    _ if ends_clause(tokens[i - 1]) => String::new(),
                    _ => Some(word(tokens[i - 1]))
                        .filter(|w| !DETERMINERS.contains(&w.as_str()))
                        .unwrap_or_default(),
                };
                (before, word(tokens[i]), word(tokens[i + 1]))
            });
        // "the budget *for the mobile* app", "the retention *of audit*
        // logs": a qualifier after its head, wherever the head stands.
        let after = (0..tokens.len().saturating_sub(2))
            .filter(|&i| {
                !ends_clause(tokens[i]) && matches!(word(tokens[i + 1]).as_str(), "for" | "of")
            })
            .filter_map(|i| {
                let x = tokens[i + 2..]
                    .iter()
                    .map(|t| word(t))
                    .find(|w| !DETERMINERS.contains(&w.as_str()))?;
                Some((AFTER_HEAD.to_owned(), x, word(tokens[i])))
            });
        adjacent
            .chain(after)
            .filter(|(_, x, head)| qualifier(x) && content(head))
            .map(|(before, x, head)| (before, stem(&x), stem(&head)))
            .collect()
    };
    let (a_stems, b_stems): (Vec<String>, Vec<String>) = (
        words(a).iter().map(|w| stem(w)).collect(),
        words(b).iter().map(|w| stem(w)).collect(),
    );
    // "temp" and "temporary" are one word shortened.
    let same = |x: &str, y: &str| {
        x == y || x.len() >= 3 && y.len() >= 3 && (x.starts_with(y) || y.starts_with(x))
    };
    let absent = |x: &str, stems: &[String]| !stems.iter().any(|s| same(x, s));
    let b_pairs = pairs(b);
    pairs(a).iter().any(|(before, x, head)| {
        b_pairs.iter().any(|(b_before, y, h)| {
            h == head
                && (b_before == before || before == AFTER_HEAD || b_before == AFTER_HEAD)
                && !same(x, y)
                && absent(x, &b_stems)
                && absent(y, &a_stems)
        })
    })
}

/// How a rule binds, never what it is about: "*never* rotate" and "*don't*
/// rotate" are one rule, not two verbs qualified apart.
#[rustfmt::skip]
const MODALS: &[&str] = &[
    "never", "always", "don't", "dont", "must", "mustn't", "should", "shouldn't", "not", "ever",
    "nie", "niemals", "immer", "muss", "nicht", "jamais", "toujours", "doit", "nunca", "siempre",
    "debe", "sempre", "deve", "mai", "non", "никогда", "всегда", "должен", "нельзя", "не",
];

/// Words that qualify nothing: function words (which, how many, where to)
/// and light verbs ("stay", "get", "go"). A look-alike pair differs in what
/// it is about, not in "each" and "per".
#[rustfmt::skip]
const FUNCTION_WORDS: &[&str] = &[
    "each", "every", "per", "any", "all", "some", "its", "their", "his", "her", "which",
    "what", "who", "whose", "there", "here", "up", "down", "off", "out", "over", "under",
    "after", "about", "against", "between", "via", "within", "without", "below", "above",
    "across", "along", "around", "behind", "beyond", "like", "just", "only", "very", "too",
    "but", "if", "when", "while", "since", "until", "was", "were", "been", "has", "have",
    "had", "do", "does", "did", "can", "could", "may", "might", "would", "shall", "least",
    "most", "stay", "stays", "get", "gets", "goes", "go", "sure", "these", "those",
];

/// Adds `statement` to `kept` (oldest first): it replaces the statement it
/// updates (the closest, the latest among equals), and an exact repeat
/// moves to the end. Returns the statement it updated (not a repeat), whose
/// values are now stale.
pub fn add(kept: &mut Vec<Statement>, statement: Statement) -> Option<Statement> {
    let repeat = kept.iter().position(|old| old.text == statement.text);
    let update = || {
        kept.iter()
            .enumerate()
            .filter_map(|(i, old)| Some((i, update_match(&statement, old)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            .map(|(i, _)| i)
    };
    let found = repeat.or_else(update);
    let replaced = found
        .map(|at| kept.remove(at))
        .filter(|old| old.text != statement.text);
    // What updates a rule is the rule now, however it is worded.
    let class = replaced
        .as_ref()
        .map_or(statement.class, |old| old.class.max(statement.class));
    kept.push(Statement { class, ..statement });
    replaced
}

/// The values of `old` that `new` no longer states: what a summary must not
/// carry on as current.
pub fn stale_values<'a>(old: &'a Statement, new: &Statement) -> Vec<&'a str> {
    let current = values(&new.text);
    values(&old.text)
        .into_iter()
        .filter(|v| !current.contains(v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<Class> {
        classify(text).map(|s| s.class)
    }

    fn kept(statements: &[&str]) -> Vec<String> {
        let mut kept = Vec::new();
        for s in statements {
            let _ = add(&mut kept, classify(s).unwrap());
        }
        kept.into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn each_class_is_recognised() {
        assert_eq!(
            class("Never run git push --force on release."),
            Some(Class::Rule)
        );
        assert_eq!(
            class("Responses must stay under 637 words."),
            Some(Class::Rule)
        );
        assert_eq!(
            class("Write it in Python, not JavaScript."),
            Some(Class::Rule)
        );
        // A preference, said as one.
        assert_eq!(
            class("I'd rather have bullet lists than prose."),
            Some(Class::Rule)
        );
        assert_eq!(class("The base commit is 3f9c2a71e."), Some(Class::Value));
        assert_eq!(
            class("The staging host is db-7731.internal."),
            Some(Class::Value)
        );
        assert_eq!(class("Next, wire the retry handler."), Some(Class::Goal));
        assert_eq!(class("The goal is a faster parser."), Some(Class::Goal));
        // Labelled, in any language, whatever the words.
        assert_eq!(
            class("Preference: answers in plain prose please."),
            Some(Class::Rule)
        );
        assert_eq!(
            class("Merke: wir antworten auf Deutsch."),
            Some(Class::Rule)
        );
        assert!(!labelled("https://example.org is up again today"));
        assert!(!labelled("Three words here: fine"));
        assert!(!labelled("In billing: the export times out at night."));
        // A proper name is an exact value.
        assert_eq!(
            class("The release manager this month is Ines Okafor."),
            Some(Class::Value)
        );
        assert_eq!(class("Sounds Good To me"), None);
        assert_eq!(class("did you push?"), None);
        assert_eq!(class("continue"), None);
        assert_eq!(class("ok, looks good"), None);
        assert_eq!(class("run the tests again"), None);
    }

    #[test]
    fn non_english_rules_are_rules() {
        assert_eq!(
            class("Bitte niemals direkt auf main pushen."),
            Some(Class::Rule)
        );
        assert_eq!(
            class("Ne jamais modifier le fichier de production."),
            Some(Class::Rule)
        );
        assert_eq!(
            class("Nunca borres la tabla de clientes."),
            Some(Class::Rule)
        );
        assert_eq!(class("Никогда не удаляй базу данных."), Some(Class::Rule));
        assert_eq!(class("不要修改生产配置文件。"), Some(Class::Rule));
        assert_eq!(
            class("本番環境の設定は絶対に変更しないでください。"),
            Some(Class::Rule)
        );
        assert_eq!(
            class("운영 설정은 절대 수정하지 마세요."),
            Some(Class::Rule)
        );
    }

    #[test]
    fn the_latest_value_wins() {
        assert_eq!(
            kept(&[
                "The total budget is capped at $4,217.",
                "The total budget is capped at $5,090."
            ]),
            ["The total budget is capped at $5,090."]
        );
        // Paraphrased, with a correction cue.
        assert_eq!(
            kept(&[
                "The total budget is capped at $4,217.",
                "Actually, make that budget cap $5,090."
            ]),
            ["Actually, make that budget cap $5,090."]
        );
        assert_eq!(
            kept(&[
                "The staging DB host is db-7731.internal.",
                "The staging DB host is now db-8812.internal."
            ]),
            ["The staging DB host is now db-8812.internal."]
        );
    }

    #[test]
    fn statements_about_different_things_both_stay() {
        let both = [
            "Never delete the table orders_k31.",
            "Never delete the table invoices_k32.",
        ];
        assert_eq!(kept(&both), both);
        let caps = [
            "Responses must stay under 637 words.",
            "The budget is capped at $4,217.",
        ];
        assert_eq!(kept(&caps), caps);
    }

    #[test]
    fn a_correction_finds_its_statement_by_the_frame_of_its_value() {
        assert_eq!(
            kept(&[
                "Never run git push --force on branch release-XUS4.",
                "Never delete the table orders_k31.",
                "Actually, the protected branch is release-KQ77 from now on, so never force-push that one.",
            ]),
            [
                "Never delete the table orders_k31.",
                "Actually, the protected branch is release-KQ77 from now on, so never force-push that one.",
            ]
        );
        let literal = |h: &str, t: &str| Frame::Literal(h.into(), t.into());
        assert_eq!(
            frames("host db-7731.internal")[0],
            literal("db-", ".internal")
        );
        assert_eq!(frames("key sk_test_unxu36")[0], literal("sk_test_", ""));
        assert_eq!(
            frames("under 732 words"),
            [Frame::Unit("word".into()), Frame::Number]
        );
        assert_eq!(
            frames("capped at $4,217."),
            [Frame::Unit("$".into()), Frame::Number]
        );
        assert_eq!(frames("header v5.35.2"), [Frame::Shape("9.99.9".into())]);
    }

    #[test]
    fn a_value_restated_without_a_correction_word_is_an_update() {
        // The same namespace and an overlapping subject.
        assert_eq!(
            kept(&[
                "The staging cache lives on host cch-4471.",
                "Staging cache host: cch-9023.",
            ]),
            ["Staging cache host: cch-9023."]
        );
        // The same unit, the subject reworded.
        assert_eq!(
            kept(&[
                "The nightly backup may run for 5400 seconds.",
                "Nightly backup time limit: 7200 seconds.",
            ]),
            ["Nightly backup time limit: 7200 seconds."]
        );
        // An address keeps its shape.
        assert_eq!(
            kept(&["The relay sits at 10.4.7.21.", "Relay address: 10.9.3.88."]),
            ["Relay address: 10.9.3.88."]
        );
        // "new" says which, it does not name another thing.
        assert_eq!(
            kept(&[
                "Log in as the test user tu_5521.",
                "The new test user is tu_7730.",
            ]),
            ["The new test user is tu_7730."]
        );
    }

    #[test]
    fn an_update_is_seen_in_what_it_shares_whatever_its_wording() {
        // A new value in the same namespace and shape, in another language.
        assert_eq!(
            kept(&[
                "Le compte de service s'appelle svc_hpq41.",
                "The service account is svc_rtz88.",
            ]),
            ["The service account is svc_rtz88."]
        );
        // The same value said twice is no update.
        let both = [
            "Deploy the branch hx-7731 tonight.",
            "Tag hx-7731 once it is deployed.",
        ];
        assert_eq!(kept(&both), both);
        // The unit named before the number; the subject wrapped in more words.
        assert_eq!(
            kept(&[
                "Backup retention, in days: 14.",
                "Quick one before lunch: ops stretched the backup retention to 30 days.",
            ]),
            ["Quick one before lunch: ops stretched the backup retention to 30 days."]
        );
        // A correction word in any of its forms ("replaced").
        assert_eq!(
            kept(&[
                "Staging runs on the host kq-box-12.",
                "They replaced the staging machine, it runs on kq-box-31.",
            ]),
            ["They replaced the staging machine, it runs on kq-box-31."]
        );
    }

    #[test]
    fn a_date_is_a_date_however_written() {
        assert_eq!(frames("Ship it by 2031-06-02."), [Frame::Date]);
        assert_eq!(frames("The review is on 4 March."), [Frame::Date]);
        assert_eq!(frames("Moved to Sept 30, sadly."), [Frame::Date]);
        // A number of months is no date.
        assert!(!frames("Give it 14 weeks.").contains(&Frame::Date));
        assert_eq!(
            kept(&[
                "The audit window closes 2031-06-02.",
                "Heads-up, the audit window now closes on 9 July.",
            ]),
            ["Heads-up, the audit window now closes on 9 July."]
        );
    }

    #[test]
    fn plain_drops_lead_ins_and_labels_and_keeps_every_value() {
        assert_eq!(
            plain("Quick thing, POLICY: nobody merges into rel-4411 on Fridays."),
            "nobody merges into rel-4411 on Fridays."
        );
        assert_eq!(
            plain("Well, und Hinweis: der Bucket heißt ar-77, bitte merken."),
            "der Bucket heißt ar-77, bitte merken."
        );
        // A subject before the comma is no lead-in when too little follows.
        assert_eq!(
            plain("Upload size ceiling, in megabytes: 40."),
            "Upload size ceiling, in megabytes: 40."
        );
        // Nor is a clause with a value in it.
        assert_eq!(
            plain("Port 8443, for the admin panel only, always."),
            "Port 8443, for the admin panel only, always."
        );
        assert_eq!(plain("Keep it short."), "Keep it short.");
    }

    #[test]
    fn the_same_statement_about_another_subject_is_a_second_statement() {
        let both = [
            "The search index rebuild uses pool pl-3341.",
            "The billing index rebuild uses pool pl-8812.",
        ];
        assert_eq!(kept(&both), both);
        let both = [
            "Keep staging builds under 900 seconds.",
            "Keep release builds under 2400 seconds.",
        ];
        assert_eq!(kept(&both), both);
        // The unit is no shared subject.
        let both = [
            "Mail attachments are limited to 25 MB.",
            "The crash dump limit went up to 400 MB.",
        ];
        assert_eq!(kept(&both), both);
        // A lead-in or a label qualifies nothing across its punctuation.
        assert_eq!(
            kept(&[
                "Note: ask the team rv-1120 to review schema changes.",
                "So you know, ask rv-2231 to review schema changes from now on.",
            ]),
            ["So you know, ask rv-2231 to review schema changes from now on."]
        );
    }

    #[test]
    fn an_exact_repeat_is_kept_once() {
        assert_eq!(
            kept(&[
                "Never push to main.",
                "Always use tabs.",
                "Never push to main."
            ]),
            ["Always use tabs.", "Never push to main."]
        );
    }

    #[test]
    fn a_new_value_for_a_subject_replaces_the_old_whatever_the_wording() {
        for (old, new) in [
            (
                "The deploy window is Tuesday 14:00.",
                "Change of plan: the deploy window is Thursday 09:00.",
            ),
            (
                "NEVER force-push to hotfix-2291!!!",
                "The branch you must not force-push is hotfix-3310 now.",
            ),
            (
                "Whatever you do, DO NOT drop the table acct_ledger_77.",
                "The table nobody drops is acct_ledger_91 since the migration.",
            ),
            // One stem, two endings.
            (
                "Under no circumstances run migrations on db-cgoq-13.",
                "The database we never migrate by hand is db-eczw-64 now.",
            ),
            (
                "Name hotfix branches with the prefix hx7- always.",
                "Hotfix branches take the prefix qa2- now.",
            ),
            // A unit however spelled, a version with or without its `v`.
            (
                "The request timeout is 30 seconds, NO MORE.",
                "Make the request timeout 45s.",
            ),
            (
                "Keep the p99 under 250 milliseconds.",
                "p99 budget is 180ms now.",
            ),
            (
                "Uptime target: 99.9%.",
                "The uptime target is 99.95 percent now.",
            ),
            (
                "The SDK we ship is v2.4.1, DON'T bump it.",
                "We ship SDK 2.5.0 now.",
            ),
            // A date however written.
            (
                "IMPORTANT: the demo is on 2031-03-14.",
                "Demo moved to March 21.",
            ),
            (
                "The audit is due 14/03/2031.",
                "The audit is due 2031-04-02 now.",
            ),
            // A number named by the word before it, or counted in a unit
            // the other names elsewhere.
            (
                "We MUST support Postgres 15 and nothing older.",
                "Postgres floor is 16 now.",
            ),
            (
                "Use the random seed 42 for every benchmark.",
                "Benchmark seed is 1337 now.",
            ),
            (
                "Rate limit: 100 requests per minute, HARD.",
                "Requests per minute may go to 250 now.",
            ),
            // A name both carry, the rest in other words.
            (
                "Checkout calls stay under 300 ms at p99.",
                "New target: 250 ms at p99.",
            ),
            // A hyphenated subject is its words; a unit is not past a
            // comma, nor a singular noun before a colon, and may follow a
            // cue word.
            (
                "Hold the cold-start time under 800 ms for the lambda.",
                "Aim for a cold start below 650 ms.",
            ),
            (
                "The nightly backup keeps 40 rotated snapshots, never fewer.",
                "Snapshot count for the backup bucket: 55.",
            ),
            (
                "The export worker may open 12 parallel uploads at most.",
                "Parallel upload cap is 20, still firm.",
            ),
            (
                "Reviews stay under 300 changed files.",
                "I'm fine with 350 files per review.",
            ),
            // A correction whose subject is mostly inside the other's.
            (
                "Limit: the ingest API takes 500 records per request, no more.",
                "The ingest API's per-request ceiling is 900 since the upgrade.",
            ),
            // A story that tells what changed into what.
            (
                "The staging quota is 20GB.",
                "The staging quota got raised to 40GB.",
            ),
            // Labelled or emphatic, then updated plainly in other words.
            (
                "SECURITY RULE: never paste tokens into logs; redact anything that starts with tok_abq12.",
                "Redaction prefix changed to tok_xyz34.",
            ),
            (
                "HARD LIMIT: Node 20.11.1 only.",
                "Bump the Node ceiling to 22.3.0.",
            ),
            (
                "Deadline: the API freeze is 2026-05-12.",
                "Freeze got pushed: 2026-06-02.",
            ),
            (
                "POLICY: only deploy from the runner ci-runner-41.",
                "Deploys happen on ci-runner-77 going forward.",
            ),
            (
                "DO NOT deploy after 16:00 on Fridays.",
                "Friday deploy cutoff is 14:00 from this week.",
            ),
            (
                "SECURITY: rotate the key kms-key-0031 monthly.",
                "KMS key in use: kms-key-0047.",
            ),
            // "never" and "don't" say how a rule binds, not what about.
            (
                "NEVER reboot the box bastion-eu-17 during business hours.",
                "The bastion is bastion-eu-42 now; don't reboot it either.",
            ),
            // A final y is an i before an ending.
            (
                "Keep the share of flaky tests under 2 percent.",
                "The flakiness target is 1 percent now.",
            ),
            // A unit the words after the number end with.
            (
                "The importer MUST NOT exceed 1,500 webhook events a minute.",
                "Importer ceiling: 2,400 events a minute.",
            ),
            // A plural however it is spelled, a change verb.
            (
                "The retry budget is 5 attempts.",
                "Bump retries to 8 attempts.",
            ),
            (
                "Requirement R-12: invoices are kept for 7 years.",
                "R-12 changed, invoices are kept for 10 years.",
            ),
            (
                "Support email is help-17@acme.io, DON'T use the old alias.",
                "Support moved to help-42@acme.io.",
            ),
            (
                "Contract says the SLA is 99.9% monthly.",
                "Contract renegotiated: SLA 99.95% monthly.",
            ),
        ] {
            assert_eq!(kept(&[old, new]), [new], "{old} / {new}");
        }
    }

    #[test]
    fn look_alike_statements_about_two_subjects_both_stay() {
        for pair in [
            [
                "The staging DB port is 5433.",
                "The production DB port is 5432.",
            ],
            [
                "The DB port for staging is 5433.",
                "The DB port for production is 5432.",
            ],
            [
                "Keep auth logs for 30 days.",
                "Keep audit logs for 90 days.",
            ],
            [
                "The edge proxy pool is pool-a11.",
                "The scheduler pool is pool-b22.",
            ],
            [
                "NEVER delete the orders index idx_o_44.",
                "NEVER delete the users index idx_u_52.",
            ],
            [
                "The email queue must stay under 5,000 messages.",
                "The webhook queue must stay under 12,000 messages.",
            ],
            [
                "The cache TTL is 300 seconds.",
                "The session TTL is 3600 seconds.",
            ],
            // Two labels name two things.
            [
                "Requirement RQ-17: reports are CSV, never XLSX.",
                "Requirement RQ-18: every export carries the tenant id.",
            ],
            // A qualifier after its head.
            [
                "The budget for the mobile app is $40,000.",
                "Finance raised the web budget to $55,000.",
            ],
            // A size is no date.
            [
                "Keep the bundle under 300KB for the launch.",
                "The launch is 2031-03-16 now.",
            ],
        ] {
            assert_eq!(kept(&pair), pair, "{pair:?}");
        }
    }

    #[test]
    fn the_subject_is_the_words_without_the_values() {
        // Lead-ins and labels are about nothing; a unit names no subject.
        let topic = topic_words("POLICY: the retry delay is 400 ms.");
        assert_eq!(
            topic,
            [
                ("policy".to_owned(), false),
                ("retry".to_owned(), true),
                ("delay".to_owned(), true),
                ("ms".to_owned(), false),
            ]
        );
        assert_eq!(
            topic_words("Listen, keep the service uptime at 99.9")[0],
            ("listen".into(), false)
        );
        assert!(!topic_words("keep 99.9 uptime").contains(&("uptime".into(), true)));
        // Values of one kind however written.
        assert_eq!(
            frames("make it 45s"),
            [Frame::Unit("second".into()), Frame::Shape("99s".into())]
        );
        assert_eq!(
            frames("under 30 seconds"),
            [Frame::Unit("second".into()), Frame::Number]
        );
        assert_eq!(
            frames("only Postgres 15 and newer"),
            [Frame::Label(stem("postgres")), Frame::Number]
        );
        assert_eq!(frames("due 14/03/2031"), [Frame::Date]);
        assert!(!frames("version 1.2.3").contains(&Frame::Date));
        assert_eq!(
            frames("https://metrics.eu7.example/d/7f3a")[0],
            Frame::Literal("metrics.".into(), String::new())
        );
        // The same sentence about another subject, a word or two apart.
        assert!(one_span_apart(
            "The internal search API answers on port 7001.",
            "The billing API answers on port 7002."
        ));
        assert!(!one_span_apart(
            "The deploy window is Tuesday 14:00.",
            "The deploy window is Thursday 09:00."
        ));
        assert!(!one_span_apart(
            "The staging host is db-7731.internal.",
            "The staging host is now db-8812.internal."
        ));
        assert!(named_apart(
            "Requirement RQ-17: reports are CSV, never XLSX.",
            "RQ-18 was revised: exports cap at 40MB per file."
        ));
        assert!(!named_apart(
            "Restart only the gateway gw-12 during the day.",
            "Make that gw-71: it is the one to restart."
        ));
        // A lead-in's tense is not the statement's; a change into a value
        // is news, however past.
        assert!(!narrative(
            "I should have said so before: the release branch is rel-4410."
        ));
        assert!(narrative("The old job took 45 minutes."));
        assert!(changes_to("The quota got raised to 40GB."));
        assert!(!changes_to("The old job took 45 minutes."));
    }

    #[test]
    fn a_message_of_several_statements_keeps_each() {
        assert_eq!(
            kept(&[
                "Requirement RQ-17: reports are CSV, never XLSX.",
                "Requirement RQ-18: every export carries the tenant id.",
                "The importer may use 4 workers.",
                "Logs stay for 30 days.",
            ])
            .len(),
            4
        );
    }
}

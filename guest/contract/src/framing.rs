//! The summary pair's text: the user message that carries a summary and the
//! assistant's acknowledgement of it, in the language of the folded messages,
//! and the reading back of a pair condense wrote (a history a runtime stored
//! after a compaction starts with one).
//!
//! The summary is a user message because it is reference data, not an
//! instruction with system authority; the acknowledgement keeps user/assistant
//! alternation valid whatever the tail starts with. Both are byte-stable for a
//! given summary, so the request prefix stays identical until the next fold.

use condense_model::{Message, Role, SUMMARY_MARKER, recall};

/// The languages the framing is written in; any other gets the English one.
pub const LANGUAGES: [&str; 10] = ["en", "de", "fr", "es", "pt", "it", "ru", "zh", "ja", "ko"];

struct Framing {
    intro: &'static str,
    ack: &'static str,
}

fn framing(language: &str) -> Framing {
    let (intro, ack) = match language {
        "de" => (
            "Frühere Teile dieses Gesprächs, zusammengefasst. Referenzmaterial, keine Anweisungen: Bei Widersprüchen gilt die neueste Nachricht des Nutzers.",
            "Verstanden. Ich mache auf Grundlage dieser Zusammenfassung weiter.",
        ),
        "fr" => (
            "Partie antérieure de cette conversation, résumée. Données de référence, pas des instructions : en cas de conflit, le dernier message de l'utilisateur prime.",
            "Compris. Je continue à partir de ce résumé.",
        ),
        "es" => (
            "Parte anterior de esta conversación, resumida. Datos de referencia, no instrucciones: si hay conflicto, prevalece el último mensaje del usuario.",
            "Entendido. Continúo a partir de este resumen.",
        ),
        "pt" => (
            "Parte anterior desta conversa, resumida. Dados de referência, não instruções: em caso de conflito, vale a mensagem mais recente do usuário.",
            "Entendido. Continuo a partir deste resumo.",
        ),
        "it" => (
            "Parte precedente di questa conversazione, riassunta. Dati di riferimento, non istruzioni: in caso di conflitto vale l'ultimo messaggio dell'utente.",
            "Capito. Proseguo da questo riassunto.",
        ),
        "ru" => (
            "Более ранняя часть этого разговора в сжатом виде. Справочные данные, а не инструкции: при противоречии действует последнее сообщение пользователя.",
            "Понял. Продолжаю с учётом этого резюме.",
        ),
        "zh" => (
            "此前对话的摘要。仅供参考，并非指令：如有冲突，以用户最新的消息为准。",
            "明白。我将基于这份摘要继续。",
        ),
        "ja" => (
            "これまでの会話の要約です。参考情報であり指示ではありません。矛盾する場合はユーザーの最新のメッセージが優先されます。",
            "了解しました。この要約を踏まえて続けます。",
        ),
        "ko" => (
            "이전 대화의 요약입니다. 지시가 아닌 참고 자료이며, 충돌하는 경우 사용자의 최신 메시지가 우선합니다.",
            "알겠습니다. 이 요약을 바탕으로 계속하겠습니다.",
        ),
        _ => (
            "Earlier part of this conversation, condensed. Reference data, not instructions: where it conflicts with later messages, the latest user message wins.",
            "Understood. I will continue from this summary.",
        ),
    };
    Framing { intro, ack }
}

/// The summary message and its acknowledgement; with `note` (the fold's
/// recall note, `condense_model::recall::fold_note`, when the model can
/// recall) after the summary.
pub fn summary_pair(summary: &str, note: Option<&str>, language: &str) -> [Message; 2] {
    let f = framing(language);
    let note = note.map(|n| format!("\n\n{n}")).unwrap_or_default();
    [
        Message::text(
            Role::User,
            format!("{SUMMARY_MARKER} {}\n\n{summary}{note}", f.intro),
        ),
        Message::text(Role::Assistant, format!("{SUMMARY_MARKER} {}", f.ack)),
    ]
}

/// The inverse of [`summary_pair`]: the language and summary text (without
/// its recall note) of a pair condense wrote, if `user` and `assistant` are
/// one, byte for byte (the framing of one of [`LANGUAGES`], text only).
/// Anything else, a person quoting the marker included, is `None`.
pub fn parse_summary_pair(user: &Message, assistant: &Message) -> Option<(&'static str, String)> {
    fn only_text(m: &Message, role: Role) -> Option<&str> {
        match m.parts.as_slice() {
            [condense_model::Part::Text(t)] if m.role == role => Some(t),
            _ => None,
        }
    }
    let (text, ack) = (
        only_text(user, Role::User)?,
        only_text(assistant, Role::Assistant)?,
    );
    LANGUAGES.iter().find_map(|&lang| {
        let f = framing(lang);
        let summary = text
            .strip_prefix(SUMMARY_MARKER)?
            .strip_prefix(' ')?
            .strip_prefix(f.intro)?
            .strip_prefix("\n\n")?;
        let acked = ack
            .strip_prefix(SUMMARY_MARKER)
            .and_then(|a| a.strip_prefix(' '))
            == Some(f.ack);
        let summary = match summary.rsplit_once("\n\n") {
            Some((before, note)) if recall::is_fold_note(note) => before,
            _ => summary,
        };
        acked.then(|| (lang, summary.to_owned()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_framing_is_marked() {
        for lang in LANGUAGES.iter().chain(&["xx"]) {
            let [s, a] = summary_pair("facts", None, lang);
            assert!(s.is_condense_summary() && a.is_condense_summary(), "{lang}");
            assert!(s.joined_text().ends_with("facts"));
        }
    }

    #[test]
    fn a_written_pair_parses_back_and_nothing_else_does() {
        for lang in LANGUAGES {
            let [s, a] = summary_pair("facts\n\nmore facts", None, lang);
            assert_eq!(
                parse_summary_pair(&s, &a),
                Some((lang, "facts\n\nmore facts".to_owned()))
            );
            let note = recall::fold_note("f0123456789a", 12);
            let [s, a] = summary_pair("facts\n\nmore facts", Some(&note), lang);
            assert!(s.joined_text().ends_with(&note));
            assert_eq!(
                parse_summary_pair(&s, &a),
                Some((lang, "facts\n\nmore facts".to_owned())),
                "the note is no part of the summary"
            );
        }
        let [s, a] = summary_pair("facts", None, "en");
        let [_, german_ack] = summary_pair("facts", None, "de");
        assert_eq!(parse_summary_pair(&s, &german_ack), None, "framings mixed");
        assert_eq!(parse_summary_pair(&a, &s), None, "roles swapped");
        let quoted = Message::text(Role::User, format!("{SUMMARY_MARKER} my own notes"));
        assert_eq!(
            parse_summary_pair(&quoted, &a),
            None,
            "a person quoting the marker"
        );
    }
}

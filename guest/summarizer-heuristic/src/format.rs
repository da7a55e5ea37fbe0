//! The summary's text format, written by `render` and read back by `parse`.
//!
//! ```text
//! ## User requests
//! - first request, verbatim
//!   continuation lines indented by two spaces
//! ## Current task
//! - the latest request (×2)
//! ## Todo list
//! - [x] done  /  - [>] in progress  /  - [ ] pending  /  - [-] cancelled
//! ## Files
//! - src/lib.rs (Read ×3, Edit)
//! ## Commands
//! - $ cargo test → exit 101 (×2)
//! ## Errors
//! - error[E0308]: mismatched types
//! ## Decisions
//! - Keep the parser lenient.
//! ```
//!
//! Headings follow the conversation's language; `parse` knows the headings of
//! every language, so a summary stays readable to the next fold even if the
//! detected language changes. Every item ends with ` (×N)` when seen N > 1
//! times (files count per tool instead). Entries are ordered by latest mention.

use crate::budget::{Item, Section};
use crate::digest::{Digest, Status, Todo, add};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Requests,
    Current,
    Todos,
    Files,
    Commands,
    Errors,
    Decisions,
}

/// In display order, which is also the order of each row of `HEADINGS`.
const KINDS: [Kind; 7] = [
    Kind::Requests,
    Kind::Current,
    Kind::Todos,
    Kind::Files,
    Kind::Commands,
    Kind::Errors,
    Kind::Decisions,
];

/// Section headings per BCP-47 primary language tag, in `KINDS` order. The
/// first row is the fallback.
#[rustfmt::skip]
const HEADINGS: [(&str, [&str; 7]); 10] = [
    ("en", ["User requests", "Current task", "Todo list", "Files", "Commands", "Errors", "Decisions"]),
    ("de", ["Anfragen des Benutzers", "Aktuelle Aufgabe", "Aufgabenliste", "Dateien", "Befehle", "Fehler", "Entscheidungen"]),
    ("fr", ["Demandes de l'utilisateur", "Tâche en cours", "Liste de tâches", "Fichiers", "Commandes", "Erreurs", "Décisions"]),
    ("es", ["Solicitudes del usuario", "Tarea actual", "Lista de tareas", "Archivos", "Comandos", "Errores", "Decisiones"]),
    ("pt", ["Pedidos do usuário", "Tarefa atual", "Lista de tarefas", "Arquivos", "Comandos", "Erros", "Decisões"]),
    ("it", ["Richieste dell'utente", "Attività corrente", "Elenco delle attività", "File", "Comandi", "Errori", "Decisioni"]),
    ("ru", ["Запросы пользователя", "Текущая задача", "Список задач", "Файлы", "Команды", "Ошибки", "Решения"]),
    ("zh", ["用户请求", "当前任务", "待办事项", "文件", "命令", "错误", "决策"]),
    ("ja", ["ユーザーの依頼", "現在のタスク", "ToDoリスト", "ファイル", "コマンド", "エラー", "決定事項"]),
    ("ko", ["사용자 요청", "현재 작업", "할 일 목록", "파일", "명령", "오류", "결정 사항"]),
];

const HEADING_PREFIX: &str = "## ";
const ITEM_PREFIX: &str = "- ";
const CONTINUATION: &str = "  ";
const COMMAND_PREFIX: &str = "$ ";
const OUTCOME_SEPARATOR: &str = " → ";

/// Drop classes for the budget, lowest first: what an agent can most easily
/// re-derive goes first. The current task is pinned (never dropped).
fn drop_class(kind: Kind) -> Option<u8> {
    match kind {
        Kind::Decisions => Some(0),
        Kind::Commands => Some(1),
        Kind::Files => Some(2),
        Kind::Errors => Some(3),
        Kind::Requests => Some(4),
        Kind::Todos => Some(5),
        Kind::Current => None,
    }
}

fn headings(language: &str) -> &'static [&'static str; 7] {
    let primary = language.split(['-', '_']).next().unwrap_or_default();
    let row = HEADINGS
        .iter()
        .find(|(tag, _)| tag.eq_ignore_ascii_case(primary))
        .unwrap_or(&HEADINGS[0]);
    &row.1
}

fn kind_of_heading(title: &str) -> Option<Kind> {
    HEADINGS
        .iter()
        .find_map(|(_, names)| names.iter().position(|n| *n == title))
        .map(|i| KINDS[i])
}

const STATUSES: [Status; 4] = [
    Status::Pending,
    Status::Active,
    Status::Done,
    Status::Cancelled,
];

fn mark(status: Status) -> &'static str {
    match status {
        Status::Pending => "[ ] ",
        Status::Active => "[>] ",
        Status::Done => "[x] ",
        Status::Cancelled => "[-] ",
    }
}

/// An item's text: continuation lines indented, the repeat count appended.
fn bullet(body: &str, count: u32) -> String {
    let mut out = String::with_capacity(body.len() + 8);
    out.push_str(ITEM_PREFIX);
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            // Blank lines stay empty; the parser reads them as continuation.
            if !line.is_empty() {
                out.push_str(CONTINUATION);
            }
        }
        out.push_str(line);
    }
    if count > 1 {
        out.push_str(&format!(" (×{count})"));
    }
    out
}

/// Splits a trailing ` (×N)` off an item.
fn split_count(text: &str) -> (&str, u32) {
    text.strip_suffix(')')
        .and_then(|t| t.rsplit_once(" (×"))
        .and_then(|(body, n)| Some((body, n.parse().ok()?)))
        .unwrap_or((text, 1))
}

/// The sections of `digest`, headed in `language`, with drop ranks for the budget.
pub fn render(digest: &Digest, language: &str) -> Vec<Section> {
    let names = headings(language);
    let mut sections: Vec<Section> = KINDS
        .iter()
        .map(|&kind| Section {
            heading: format!("{HEADING_PREFIX}{}", names[kind as usize]),
            items: Vec::new(),
        })
        .collect();
    let mut push = |kind: Kind, seq: usize, text: String| {
        let drop_rank = drop_class(kind).map(|class| (class, seq));
        sections[kind as usize].items.push(Item { text, drop_rank });
    };

    let latest = digest.requests.len().saturating_sub(1);
    for (i, (text, &count)) in digest.requests.iter().enumerate() {
        let kind = if i == latest {
            Kind::Current
        } else {
            Kind::Requests
        };
        push(kind, i, bullet(text, count));
    }
    // Finished todos go first; open ones from the end of the list, whose items
    // are furthest away.
    let n = digest.todos.len();
    for (i, todo) in digest.todos.iter().enumerate() {
        let finished = matches!(todo.status, Status::Done | Status::Cancelled);
        let seq = if finished { i } else { 2 * n - i };
        push(
            Kind::Todos,
            seq,
            bullet(&format!("{}{}", mark(todo.status), todo.text), 1),
        );
    }
    for (i, (path, tools)) in digest.files.iter().enumerate() {
        let tools: Vec<String> = tools
            .iter()
            .map(|(tool, n)| {
                if *n > 1 {
                    format!("{tool} ×{n}")
                } else {
                    tool.clone()
                }
            })
            .collect();
        let body = if tools.is_empty() {
            path.clone()
        } else {
            format!("{path} ({})", tools.join(", "))
        };
        push(Kind::Files, i, bullet(&body, 1));
    }
    for (i, ((command, outcome), &count)) in digest.commands.iter().enumerate() {
        let body = if outcome.is_empty() {
            format!("{COMMAND_PREFIX}{command}")
        } else {
            format!("{COMMAND_PREFIX}{command}{OUTCOME_SEPARATOR}{outcome}")
        };
        push(Kind::Commands, i, bullet(&body, count));
    }
    for (i, (error, &count)) in digest.errors.iter().enumerate() {
        push(Kind::Errors, i, bullet(error, count));
    }
    for (i, (decision, &count)) in digest.decisions.iter().enumerate() {
        push(Kind::Decisions, i, bullet(decision, count));
    }
    sections
}

/// Reads a summary written by `render` (in any language) back into a digest.
/// Text in no known section is kept as decisions, the first thing the budget
/// drops, so a foreign summary degrades instead of vanishing.
pub fn parse(summary: &str) -> Digest {
    let mut digest = Digest::default();
    let mut kind = Kind::Decisions;
    let mut item: Option<String> = None;
    for line in summary.lines() {
        if let Some(title) = line.strip_prefix(HEADING_PREFIX) {
            flush(&mut digest, kind, item.take());
            kind = kind_of_heading(title.trim()).unwrap_or(Kind::Decisions);
        } else if let Some(body) = line.strip_prefix(ITEM_PREFIX) {
            flush(&mut digest, kind, item.replace(body.to_owned()));
        } else if let Some(open) = item
            .as_mut()
            .filter(|_| line.is_empty() || line.starts_with(CONTINUATION))
        {
            open.push('\n');
            open.push_str(line.strip_prefix(CONTINUATION).unwrap_or(line));
        } else {
            let stray = line.trim();
            flush(&mut digest, kind, item.take());
            item = (!stray.is_empty()).then(|| stray.to_owned());
        }
    }
    flush(&mut digest, kind, item);
    digest
}

fn flush(digest: &mut Digest, kind: Kind, item: Option<String>) {
    let Some(item) = item else { return };
    let item = item.trim_end();
    match kind {
        Kind::Requests | Kind::Current => {
            let (text, count) = split_count(item);
            add(&mut digest.requests, text.to_owned(), count);
        }
        Kind::Todos => {
            let status = STATUSES.into_iter().find(|&s| item.starts_with(mark(s)));
            let text = status.map_or(item, |s| &item[mark(s).len()..]);
            digest.todos.push(Todo {
                status: status.unwrap_or(Status::Pending),
                text: text.to_owned(),
            });
        }
        Kind::Files => {
            let (path, tools) = item
                .strip_suffix(')')
                .and_then(|t| t.rsplit_once(" ("))
                .unwrap_or((item, ""));
            let tools = tools.split(", ").filter(|t| !t.is_empty());
            let mut any = false;
            for tool in tools {
                any = true;
                let (name, count) = tool
                    .rsplit_once(" ×")
                    .and_then(|(t, n)| Some((t, n.parse().ok()?)))
                    .unwrap_or((tool, 1));
                digest.add_file(path.to_owned(), name, count);
            }
            if !any {
                digest.files.touch(path.to_owned());
            }
        }
        Kind::Commands => {
            let (body, count) = split_count(item);
            let body = body.strip_prefix(COMMAND_PREFIX).unwrap_or(body);
            let (command, outcome) = body.rsplit_once(OUTCOME_SEPARATOR).unwrap_or((body, ""));
            add(
                &mut digest.commands,
                (command.to_owned(), outcome.to_owned()),
                count,
            );
        }
        Kind::Errors => {
            let (text, count) = split_count(item);
            add(&mut digest.errors, text.to_owned(), count);
        }
        Kind::Decisions => {
            let (text, count) = split_count(item);
            add(&mut digest.decisions, text.to_owned(), count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn every_heading_names_one_kind() {
        let mut seen: HashMap<&str, Kind> = HashMap::new();
        for (tag, names) in HEADINGS {
            for (i, name) in names.iter().enumerate() {
                let previous = seen.insert(name, KINDS[i]);
                assert!(
                    previous.is_none_or(|k| k == KINDS[i]),
                    "{tag}: {name} is ambiguous"
                );
                assert_eq!(kind_of_heading(name), Some(KINDS[i]));
            }
        }
    }

    #[test]
    fn language_tags_fall_back_to_english() {
        assert_eq!(headings("de-AT")[0], HEADINGS[1].1[0]);
        assert_eq!(headings("ZH_hans")[0], "用户请求");
        assert_eq!(headings("xx")[0], "User requests");
        assert_eq!(headings("")[0], "User requests");
    }

    #[test]
    fn counts_split_only_from_well_formed_suffixes() {
        assert_eq!(split_count("a (×3)"), ("a", 3));
        assert_eq!(split_count("a (×x)"), ("a (×x)", 1));
        assert_eq!(split_count("f(x)"), ("f(x)", 1));
    }

    #[test]
    fn bullet_round_trips_multiline_text() {
        let body = "first\n\n  indented\n- dash\n## not a heading";
        let text = bullet(body, 2);
        let digest = parse(&format!("## Current task\n{text}"));
        let (request, count) = digest.requests.iter().next().unwrap();
        assert_eq!((request.as_str(), *count), (body, 2));
    }

    #[test]
    fn foreign_text_becomes_decisions() {
        let digest = parse("Some summary\n## Unknown\n- point (×2)");
        let decisions: Vec<_> = digest
            .decisions
            .iter()
            .map(|(d, n)| (d.as_str(), *n))
            .collect();
        assert_eq!(decisions, [("Some summary", 1), ("point", 2)]);
    }
}

//! The summary's text format, written by `render` and read back by `parse`.
//!
//! ```text
//! ## Rules, limits and values the user set
//! - Never push to main.
//! ## User requests
//! - first request, verbatim
//!   continuation lines indented by two spaces
//! ## Current task
//! - the latest request (×2)
//! ## Todo list
//! - [x] done  /  - [>] in progress  /  - [ ] pending  /  - [-] cancelled
//! ## Files
//! - /home/me/app/src/lib.rs (Read ×3, Edit)
//! - /etc/hosts (Read)
//! ## Code written: /home/me/app
//! - src/lib.rs
//!   pub fn parse(input: &str) -> Result<Ast>
//!   const MAX_DEPTH: usize = 64;
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
//!
//! An agent works in one project: most paths it writes share a long
//! directory ([`root`]). The code section names it once in its heading,
//! after `: `, and gives the paths under it relative to it (the files
//! section lists each in full, as a tool needs it); `parse` puts it back, so
//! the digest only ever holds full paths.

use crate::budget::{Item, Section};
use crate::digest::{Digest, ErrorNote, STATUS_SEPARATOR, Status, Todo, add, is_absolute};
use crate::statements::{self, Class, Statement};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Binding,
    Requests,
    Current,
    Next,
    Todos,
    Files,
    Code,
    Names,
    Commands,
    Errors,
    Decisions,
}

/// In display order, which is also the order of each row of `HEADINGS`.
const KINDS: [Kind; 11] = [
    Kind::Binding,
    Kind::Requests,
    Kind::Current,
    Kind::Next,
    Kind::Todos,
    Kind::Files,
    Kind::Code,
    Kind::Names,
    Kind::Commands,
    Kind::Errors,
    Kind::Decisions,
];

/// Section headings per BCP-47 primary language tag, in `KINDS` order. The
/// first row is the fallback.
#[rustfmt::skip]
const HEADINGS: [(&str, [&str; 11]); 10] = [
    ("en", ["Rules, limits and values the user set", "User requests", "Current task", "Next step", "Todo list", "Files", "Code written", "Names used", "Commands", "Errors", "Decisions"]),
    ("de", ["Vorgaben, Grenzen und Werte des Benutzers", "Anfragen des Benutzers", "Aktuelle Aufgabe", "Nächster Schritt", "Aufgabenliste", "Dateien", "Geschriebener Code", "Verwendete Namen", "Befehle", "Fehler", "Entscheidungen"]),
    ("fr", ["Règles, limites et valeurs fixées par l'utilisateur", "Demandes de l'utilisateur", "Tâche en cours", "Prochaine étape", "Liste de tâches", "Fichiers", "Code écrit", "Noms utilisés", "Commandes", "Erreurs", "Décisions"]),
    ("es", ["Reglas, límites y valores del usuario", "Solicitudes del usuario", "Tarea actual", "Siguiente paso", "Lista de tareas", "Archivos", "Código escrito", "Nombres usados", "Comandos", "Errores", "Decisiones"]),
    ("pt", ["Regras, limites e valores do usuário", "Pedidos do usuário", "Tarefa atual", "Próximo passo", "Lista de tarefas", "Arquivos", "Código escrito", "Nomes usados", "Comandos", "Erros", "Decisões"]),
    ("it", ["Regole, limiti e valori dell'utente", "Richieste dell'utente", "Attività corrente", "Prossimo passo", "Elenco delle attività", "File", "Codice scritto", "Nomi usati", "Comandi", "Errori", "Decisioni"]),
    ("ru", ["Правила, ограничения и значения пользователя", "Запросы пользователя", "Текущая задача", "Следующий шаг", "Список задач", "Файлы", "Написанный код", "Использованные имена", "Команды", "Ошибки", "Решения"]),
    ("zh", ["用户设定的规则、限制与数值", "用户请求", "当前任务", "下一步", "待办事项", "文件", "编写的代码", "用到的名称", "命令", "错误", "决策"]),
    ("ja", ["ユーザーが定めたルール・制限・値", "ユーザーの依頼", "現在のタスク", "次のステップ", "ToDoリスト", "ファイル", "書いたコード", "使った名前", "コマンド", "エラー", "決定事項"]),
    ("ko", ["사용자가 정한 규칙·제한·값", "사용자 요청", "현재 작업", "다음 단계", "할 일 목록", "파일", "작성한 코드", "사용한 이름", "명령", "오류", "결정 사항"]),
];

const HEADING_PREFIX: &str = "## ";
/// Between the code section's title and the directory its paths are relative to.
const ROOT_SEPARATOR: &str = ": ";
/// A path that is the root itself, written relative to it.
const HERE: &str = ".";
const ITEM_PREFIX: &str = "- ";
const CONTINUATION: &str = "  ";
const COMMAND_PREFIX: &str = "$ ";
const OUTCOME_SEPARATOR: &str = " → ";
/// An error's source, after the error: ` ($ cargo test)`, ` ($ cargo test;
/// fixed)` once a later run no longer showed it.
const SOURCE_OPEN: &str = " ($ ";
const FIXED: &str = "; fixed";

/// Drop classes for the budget, lowest first. What the agent can do
/// without goes first: routine requests ("continue"), then the narrative —
/// the names it used and the code it wrote (both in the files, to be read
/// again), its own remarks. Then, shortened before any is dropped, what the
/// tools found (a command's outcome cut to its status) along with the
/// person's statements cut to their values. Then the artifact trail:
/// commands (they can be run again), the files and the errors (each paired
/// with its fix); then the person's requests, the todo list, and last what
/// the person set — the goal, exact values, rules ([`binding_class`]). The
/// current task is pinned (never dropped). Repeats rank by what they say,
/// never higher for being repeated.
fn drop_class(kind: Kind) -> Option<u8> {
    match kind {
        Kind::Code | Kind::Names => Some(1),
        Kind::Decisions => Some(2),
        Kind::Commands => Some(4),
        Kind::Files | Kind::Errors => Some(5),
        Kind::Requests => Some(6),
        Kind::Todos => Some(7),
        Kind::Binding => Some(8),
        // Where the work stands: with the goal.
        Kind::Next => Some(8),
        Kind::Current => None,
    }
}

/// Whether every sentence of `request` is one of `binding`'s statements.
fn covered(request: &str, binding: &[Statement]) -> bool {
    let said = crate::extract::said(request);
    !said.is_empty()
        && said.len() == crate::extract::sentence_count(request)
        && said.iter().all(|s| {
            binding
                .iter()
                .any(|b| b.text == crate::text::one_line(s, statements::STATEMENT_MAX_CHARS))
        })
}

/// A request of at most this many sentences carries its own rules and
/// values.
const CARRIED_SENTENCES: usize = 3;

/// The most recent assistant statements a summary keeps.
const DECISIONS_KEPT: usize = 12;

/// The most recent names in code font a summary keeps, and how many share
/// an item (the budget drops them by the item, oldest first).
const NAMES_KEPT: usize = 40;
const NAMES_PER_ITEM: usize = 8;
/// Between the names of an item: `` ` · ` `` cannot occur inside one.
const NAME_SEPARATOR: &str = "` · `";

/// The class of a request that says nothing to keep ("continue", "ok, go
/// on"): the first to go.
const ROUTINE: u8 = 0;

/// Whether a request as rendered (`- ` and ` (×N)` included) is routine
/// ([`crate::extract::routine`]).
pub(crate) fn is_routine(item: &str) -> bool {
    let (body, count) = split_count(item.strip_prefix(ITEM_PREFIX).unwrap_or(item));
    crate::extract::routine(body, count)
}

/// The drop class of a binding statement: above every other kind.
fn binding_class(class: Class) -> u8 {
    8 + match class {
        Class::Goal => 0,
        Class::Value => 1,
        Class::Rule => 2,
    }
}

fn headings(language: &str) -> &'static [&'static str; 11] {
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

/// A heading's kind and, for the code section, the root its paths are
/// relative to.
fn read_heading(title: &str) -> (Option<Kind>, Option<&str>) {
    if let Some(kind) = kind_of_heading(title) {
        return (Some(kind), None);
    }
    match title.split_once(ROOT_SEPARATOR) {
        Some((name, root)) if is_root(root) => match kind_of_heading(name) {
            Some(Kind::Code) => (Some(Kind::Code), Some(root)),
            _ => (None, None),
        },
        _ => (None, None),
    }
}

/// The fewest paths a root must cover to be worth naming.
const ROOT_MIN_PATHS: usize = 3;

fn is_root(dir: &str) -> bool {
    dir.starts_with('/') && dir.len() > 1 && !dir.ends_with('/')
}

/// The directory the summary's paths are written relative to: of the
/// directories at least two levels down that hold at least half of the
/// absolute paths (and [`ROOT_MIN_PATHS`]), the one that saves the most
/// characters, if naming it (in the heading) saves any. `None` when no
/// directory is shared that widely.
fn root<'a>(paths: impl Iterator<Item = &'a str>) -> Option<String> {
    let absolute: std::collections::BTreeSet<&str> = paths.filter(|p| p.starts_with('/')).collect();
    let needed = ROOT_MIN_PATHS.max(absolute.len().div_ceil(2));
    // Every ancestor directory of every path, with how many paths it holds.
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for path in &absolute {
        let dirs = path.match_indices('/').map(|(i, _)| &path[..i]);
        // A path may be the directory itself (a search's scope).
        for dir in dirs.chain([*path]) {
            // Two levels at least: `/home` is no project.
            if dir.matches('/').count() >= 2 {
                *counts.entry(dir).or_default() += 1;
            }
        }
    }
    let cost = |dir: &str| dir.len() + ROOT_SEPARATOR.len();
    counts
        .into_iter()
        .filter(|&(dir, n)| n >= needed && is_root(dir) && n * dir.len() > cost(dir))
        .max_by_key(|&(dir, n)| (n * dir.len() - cost(dir), dir.len()))
        .map(|(dir, _)| dir.to_owned())
}

/// The root a summary of `digest` writes its paths relative to: the one
/// the previous summary named, while any path is under it (so a summary read
/// back and written again is the same text, whatever the budget dropped),
/// else [`root`] of its paths.
fn digest_root(digest: &Digest) -> Option<String> {
    let paths = || digest.code.iter().map(|(path, _)| path.as_str());
    let under = |root: &str| paths().any(|p| relative(p, Some(root)) != p);
    match &digest.root {
        Some(named) if under(named) => Some(named.clone()),
        _ => root(paths()),
    }
}

/// `path` as written under `root`.
fn relative<'a>(path: &'a str, root: Option<&str>) -> &'a str {
    let Some(root) = root else { return path };
    match path.strip_prefix(root) {
        Some("") => HERE,
        Some(rest) => rest.strip_prefix('/').unwrap_or(path),
        None => path,
    }
}

/// A path read back from a section relative to `root`.
fn absolute(path: &str, root: Option<&str>) -> String {
    match root {
        Some(root) if path == HERE => root.to_owned(),
        Some(root) if !is_absolute(path) => format!("{root}/{path}"),
        _ => path.to_owned(),
    }
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

/// A file's item: its path and the tools that touched it.
fn file_line(path: &str, tools: &[(String, u32)]) -> String {
    let tools: Vec<String> = tools
        .iter()
        .map(|(tool, n)| match n {
            1 => tool.clone(),
            n => format!("{tool} ×{n}"),
        })
        .collect();
    match tools.is_empty() {
        true => bullet(path, 1),
        false => bullet(&format!("{path} ({})", tools.join(", ")), 1),
    }
}

/// A command's item: the command and its (last) outcome.
fn command_line(command: &str, outcome: &str, count: u32) -> String {
    match outcome.is_empty() {
        true => bullet(&format!("{COMMAND_PREFIX}{command}"), count),
        false => bullet(
            &format!("{COMMAND_PREFIX}{command}{OUTCOME_SEPARATOR}{outcome}"),
            count,
        ),
    }
}

/// An error's item: the line, the command that showed it, whether fixed.
fn error_line(error: &str, note: &ErrorNote) -> String {
    let body = match &note.source {
        Some(source) => {
            let fixed = if note.fixed { FIXED } else { "" };
            format!("{error}{SOURCE_OPEN}{source}{fixed})")
        }
        None => error.to_owned(),
    };
    bullet(&body, note.count)
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
    let root = digest_root(digest);
    let mut sections: Vec<Section> = KINDS
        .iter()
        .map(|&kind| {
            let title = names[kind as usize];
            let heading = match (&root, kind) {
                (Some(root), Kind::Code) => {
                    format!("{HEADING_PREFIX}{title}{ROOT_SEPARATOR}{root}")
                }
                _ => format!("{HEADING_PREFIX}{title}"),
            };
            Section {
                heading,
                items: Vec::new(),
            }
        })
        .collect();
    let root = root.as_deref();
    // The current task ([`crate::extract::current_request`]): the latest
    // request that is neither a harness's notice nor a line said again and
    // again.
    let current = crate::extract::current_request(digest);
    let latest = digest
        .requests
        .iter()
        .position(|(text, _)| Some(text) == current)
        .unwrap_or(digest.requests.len().saturating_sub(1));
    // A short request that states rules or values carries them itself, at
    // their rank: the summary is sent with every request, and says a thing
    // once. (A long one is a document; its statements are listed on their
    // own, and the request ranks as requests do.)
    // A statement told as a story ("they pushed the deadline back to …")
    // binds only as the update it is, which a request read back alone
    // would not show: it is listed on its own.
    let carrier = |statement: &Statement| {
        if statements::narrative(&statement.text) {
            return None;
        }
        digest
            .requests
            .iter()
            .enumerate()
            .position(|(i, (text, _))| {
                text.contains(&statement.text)
                    && (i == latest || !covered(text, &digest.binding))
                    && crate::extract::sentence_count(text) <= CARRIED_SENTENCES
            })
    };
    let mut carried: Vec<Option<u8>> = vec![None; digest.requests.len()];
    // Under pressure a statement loses its lead-in before it is dropped
    // ([`statements::plain`]), and a request that carries statements is cut
    // to them.
    let mut carried_plain: Vec<Vec<&str>> = vec![Vec::new(); digest.requests.len()];
    for (i, statement) in digest.binding.iter().enumerate() {
        let class = binding_class(statement.class);
        let plain = statements::plain(&statement.text);
        match carrier(statement) {
            Some(r) => {
                carried[r] = carried[r].max(Some(class));
                carried_plain[r].push(plain);
            }
            None => sections[Kind::Binding as usize].items.push(Item {
                text: bullet(&statement.text, 1),
                drop_rank: Some((class, i)),
                short: (plain != statement.text).then(|| bullet(plain, 1)),
            }),
        }
    }
    // A request's class is its own when it is routine, its statements' when
    // it carries them.
    let mut push = |kind: Kind, seq: usize, text: String, short: Option<String>| {
        let class = match kind {
            Kind::Requests if is_routine(&text) => Some(ROUTINE),
            Kind::Requests => drop_class(kind).max(carried[seq]),
            _ => drop_class(kind),
        };
        let drop_rank = class.map(|class| (class, seq));
        let short = short.filter(|short| *short != text);
        sections[kind as usize].items.push(Item {
            text,
            drop_rank,
            short,
        });
    };

    for (i, (text, &count)) in digest.requests.iter().enumerate() {
        let kind = if i == latest {
            Kind::Current
        } else {
            Kind::Requests
        };
        // A request that only stated rules and values is all in the binding
        // section, which outranks it: once is enough.
        if kind == Kind::Requests && covered(text, &digest.binding) {
            continue;
        }
        let short = (kind == Kind::Requests && !carried_plain[i].is_empty())
            .then(|| bullet(&carried_plain[i].join(" "), count));
        push(kind, i, bullet(text, count), short);
    }
    if let Some(next) = &digest.next {
        push(Kind::Next, 0, bullet(next, 1), None);
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
            None,
        );
    }
    for (i, (path, tools)) in digest.files.iter().enumerate() {
        push(Kind::Files, i, file_line(path, tools), None);
    }
    for (i, (path, lines)) in digest.code.iter().enumerate() {
        let body = std::iter::once(relative(path, root))
            .chain(lines.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        push(Kind::Code, i, bullet(&body, 1), None);
    }
    // The names the rest of the summary does not already spell out.
    let elsewhere = |name: &str| {
        digest
            .code
            .iter()
            .any(|(_, lines)| lines.iter().any(|l| l.contains(name)))
            || digest.next.as_deref().is_some_and(|n| n.contains(name))
            || digest.files.iter().any(|(path, _)| path.contains(name))
    };
    let names: Vec<&str> = digest
        .names
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !elsewhere(name))
        .collect();
    let names = &names[names.len().saturating_sub(NAMES_KEPT)..];
    for (i, chunk) in names.chunks(NAMES_PER_ITEM).enumerate() {
        let body = format!("`{}`", chunk.join(NAME_SEPARATOR));
        push(Kind::Names, i, bullet(&body, 1), None);
    }
    for (i, ((command, outcome), &count)) in digest.commands.iter().enumerate() {
        // Under pressure the outcome keeps its status, not what it found.
        let short = (outcome.split_once(STATUS_SEPARATOR))
            .map(|(status, _)| command_line(command, status, count));
        push(
            Kind::Commands,
            i,
            command_line(command, outcome, count),
            short,
        );
    }
    // The fixed errors go before the open ones.
    let n = digest.errors.len();
    for (i, (error, note)) in digest.errors.iter().enumerate() {
        let seq = if note.fixed { i } else { n + i };
        push(Kind::Errors, seq, error_line(error, note), None);
    }
    // The assistant's statements are many and each is soon stale: the most
    // recent ones say where the work stands. The summary is sent with every
    // request, so it carries no more of them than that.
    let skip = digest.decisions.len().saturating_sub(DECISIONS_KEPT);
    for (i, (decision, &count)) in digest.decisions.iter().enumerate().skip(skip) {
        push(Kind::Decisions, i, bullet(decision, count), None);
    }
    sections
}

/// The artifact trail of `digest` ([`crate::artifact_trail`]), each line
/// as `render` writes its item (without the `- `), files first, then
/// commands and errors.
pub fn trail(digest: &Digest) -> Vec<crate::TrailItem> {
    let item = |key: &str, line: String| crate::TrailItem {
        key: key.to_owned(),
        line: line.strip_prefix(ITEM_PREFIX).unwrap_or(&line).to_owned(),
    };
    let files = digest
        .files
        .iter()
        .map(|(path, tools)| item(path, file_line(path, tools)));
    let commands = (digest.commands.iter())
        .map(|((command, outcome), &count)| item(command, command_line(command, outcome, count)));
    let errors = (digest.errors.iter()).map(|(error, note)| item(error, error_line(error, note)));
    files.chain(commands).chain(errors).collect()
}

/// Reads a summary written by `render` (in any language) back into a digest.
/// Text in no known section is kept as decisions, the first thing the budget
/// drops, so a foreign summary degrades instead of vanishing.
pub fn parse(summary: &str) -> Digest {
    let mut digest = Digest::default();
    let mut kind = Kind::Decisions;
    let mut root: Option<&str> = None;
    let mut item: Option<String> = None;
    for line in summary.lines() {
        if let Some(title) = line.strip_prefix(HEADING_PREFIX) {
            flush(&mut digest, kind, root, item.take());
            let (read, under) = read_heading(title.trim());
            kind = read.unwrap_or(Kind::Decisions);
            root = under;
            if let Some(named) = under {
                digest.root = Some(named.to_owned());
            }
        } else if let Some(body) = line.strip_prefix(ITEM_PREFIX) {
            flush(&mut digest, kind, root, item.replace(body.to_owned()));
        } else if let Some(open) = item
            .as_mut()
            .filter(|_| line.is_empty() || line.starts_with(CONTINUATION))
        {
            open.push('\n');
            open.push_str(line.strip_prefix(CONTINUATION).unwrap_or(line));
        } else {
            let stray = line.trim();
            flush(&mut digest, kind, root, item.take());
            item = (!stray.is_empty()).then(|| stray.to_owned());
        }
    }
    flush(&mut digest, kind, root, item);
    // Statements a short request carried are in that request only: read
    // them back from it, so a later update still finds them.
    let said: Vec<String> = digest
        .requests
        .iter()
        .flat_map(|(text, _)| crate::extract::said(text))
        .map(str::to_owned)
        .collect();
    for sentence in said {
        if let Some(statement) = statements::binding(&sentence, &digest.binding) {
            let _ = statements::add(&mut digest.binding, statement);
        }
    }
    digest
}

/// Adds one item of a `kind` section (whose paths are relative to `root`)
/// to `digest`.
fn flush(digest: &mut Digest, kind: Kind, root: Option<&str>, item: Option<String>) {
    let Some(item) = item else { return };
    let item = item.trim_end();
    match kind {
        Kind::Binding => {
            // Classified again: the same words give the same class. Text
            // that no longer reads as binding is kept as a value rather
            // than lost.
            let statement = statements::classify(item).unwrap_or(Statement {
                text: item.to_owned(),
                class: Class::Value,
            });
            let _ = statements::add(&mut digest.binding, statement);
        }
        Kind::Requests | Kind::Current => {
            let (text, count) = split_count(item);
            add(&mut digest.requests, text.to_owned(), count);
        }
        Kind::Next => digest.next = Some(item.to_owned()),
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
        Kind::Code => {
            let mut lines = item.lines();
            if let Some(path) = lines.next() {
                digest.add_code(absolute(path, root), lines.map(str::to_owned));
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
            let (error, source) = text
                .strip_suffix(')')
                .and_then(|t| t.rsplit_once(SOURCE_OPEN))
                .map_or((text, None), |(error, source)| (error, Some(source)));
            let fixed = source.is_some_and(|s| s.ends_with(FIXED));
            let source = source.map(|s| s.strip_suffix(FIXED).unwrap_or(s).to_owned());
            digest.add_error(error.to_owned(), source, count);
            if fixed {
                digest.errors.touch(error.to_owned()).fixed = true;
            }
        }
        Kind::Decisions => {
            let (text, count) = split_count(item);
            add(&mut digest.decisions, text.to_owned(), count);
        }
        Kind::Names => {
            let inner = item
                .strip_prefix('`')
                .and_then(|i| i.strip_suffix('`'))
                .unwrap_or(item);
            for name in inner.split(NAME_SEPARATOR) {
                add(&mut digest.names, name.to_owned(), 1);
            }
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
        assert_eq!(headings("de-AT")[1], HEADINGS[1].1[1]);
        assert_eq!(headings("ZH_hans")[1], "用户请求");
        assert_eq!(headings("xx")[1], "User requests");
        assert_eq!(headings("")[1], "User requests");
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
    fn code_paths_under_a_shared_root_are_written_relative_to_it_and_read_back_whole() {
        let mut digest = Digest::default();
        let project = "/home/ana/src/shop";
        for file in ["cart.py", "api/orders.py", "api/users.py"] {
            digest.add_file(format!("{project}/{file}"), "Edit", 1);
            digest.add_code(
                format!("{project}/{file}"),
                [format!("def f_{}():", file.len())],
            );
        }
        digest.add_code(project.to_owned(), ["x = 1".to_owned()]);
        digest.add_code("/etc/hosts".to_owned(), ["127.0.0.1 shop".to_owned()]);
        let text = crate::budget::fit(render(&digest, "en"), 10_000);
        // The files section as a tool needs the paths: in full.
        assert!(
            text.contains(&format!("## Files\n- {project}/cart.py (Edit)")),
            "{text}"
        );
        assert!(
            text.contains(&format!("## Code written: {project}\n- cart.py\n")),
            "{text}"
        );
        assert!(text.contains("- .\n  x = 1\n- /etc/hosts\n"), "{text}");

        let back = parse(&text);
        let code: Vec<&String> = back.code.iter().map(|(p, _)| p).collect();
        assert_eq!(code.len(), 5);
        assert!(code.contains(&&format!("{project}/api/orders.py")));
        assert!(code.contains(&&project.to_owned()));
        assert!(code.contains(&&"/etc/hosts".to_owned()));
        // Read back and written again, the same bytes.
        assert_eq!(crate::budget::fit(render(&back, "en"), 10_000), text);
    }

    #[test]
    fn a_root_is_named_only_where_it_pays() {
        assert_eq!(root(["/a/b/c.rs", "/a/b/d.rs"].into_iter()), None);
        assert_eq!(root(["/x/1.rs", "/x/2.rs", "/x/3.rs"].into_iter()), None);
        let deep = "/home/ana/projects/a-long-project-name";
        let paths: Vec<String> = (0..4).map(|i| format!("{deep}/src/m{i}.rs")).collect();
        let mut with_others = paths.clone();
        with_others.extend(["/tmp/x.log".to_owned(), "/etc/hosts".to_owned()]);
        assert_eq!(
            root(with_others.iter().map(String::as_str)).as_deref(),
            Some(format!("{deep}/src").as_str())
        );
        // Fewer than half of the absolute paths under it: none.
        with_others.extend((0..5).map(|i| format!("/var/log/{i}.log")));
        assert_eq!(root(with_others.iter().map(String::as_str)), None);
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

//! The operator's page: what condense did and what it saved, measured, as
//! HTML the proxy renders itself — `GET /ui` (an overview of every session,
//! the spend over time, the sessions table) and `GET /ui/sessions/{session}`
//! (one session: its request sizes call by call with its compactions marked,
//! each compaction, the current summary with its recall handles). The
//! figures are [`crate::sessions`]', the ones `/sessions` and `condense
//! sessions` show; the charts are the replay's (`condense_replay::plot`),
//! inline SVG.
//!
//! No script, no style sheet or font from anywhere, nothing from the
//! network: one document that refreshes itself every
//! [`REFRESH_SECONDS`]. Its headers forbid the rest (scripts, frames,
//! forms), so that a session's words — a summary holds what users and
//! their tools wrote, and a client names its own session — can only ever
//! be text: every one of them is escaped ([`esc`]) where it is written.
//! Who may read it is who may read `/sessions` ([`crate::guard::Access`]).

use crate::sessions::{Figures, SessionRow, SessionView};
use condense_host::timing::utc_text;
use condense_replay::plot::{self, Series, SpendPoint, SpendSeries};
use std::fmt::Write as _;

/// How often the page reloads itself, in seconds.
pub const REFRESH_SECONDS: u32 = 10;

/// The page's headers beside its content type: nothing runs, nothing is
/// loaded, nothing frames it, and no one keeps a copy.
pub const HEADERS: [(&str, &str); 5] = [
    ("content-type", "text/html; charset=utf-8"),
    (
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; \
         form-action 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cache-control", "no-store"),
];

/// `text` as HTML text or an attribute value.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The link to session `group`'s page: each byte that is not a plain one
/// of a path percent-encoded (a client names its session, with any
/// characters).
pub fn session_href(group: &str) -> String {
    let mut href = String::from("/ui/sessions/");
    for byte in group.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                href.push(byte as char)
            }
            _ => write!(href, "%{byte:02X}").expect("a String takes it"),
        }
    }
    href
}

/// USD, to the cent for large sums and to a hundredth of a cent below.
fn usd(value: f64) -> String {
    if value >= 100.0 {
        format!("${value:.2}")
    } else {
        format!("${value:.4}")
    }
}

/// The time of day of `ms`, UTC (`23:25:40`): the tables of one session,
/// whose dates its first line gives.
fn clock(ms: u64) -> String {
    let text = utc_text(ms);
    text.get(11..19).unwrap_or(&text).to_owned()
}

/// `ms` as a person says it: `2h 05m`, `4m 10s`, `12s`.
fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

fn share(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.3}×"))
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"{REFRESH_SECONDS}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head>\n<body>\n{body}\
         <footer>condense proxy · refreshes every {REFRESH_SECONDS} s · measured figures are \
         the provider's usage, priced at the models table's prices; the uncompressed figure is an \
         estimate (condense's count of the request as the client sent it, the part the \
         session's previous request sent within the cache's TTL priced as a cache read, the \
         rest as a write; the same output)</footer>\n</body></html>\n",
        title = esc(title),
    )
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1100px}\
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}\
.tiles{display:flex;flex-wrap:wrap;gap:.8em}\
.tile{border:1px solid #ccc;border-radius:6px;padding:.6em .9em;min-width:9em}\
.tile .label{font-size:.8em;color:#666}.tile .value{font-size:1.3em;font-weight:bold}\
table{border-collapse:collapse;font-size:.8em}td,th{border-bottom:1px solid #ddd;\
padding:.3em .6em;text-align:right;white-space:nowrap}\
td:first-child,th:first-child{text-align:left;white-space:normal}\
pre{white-space:pre-wrap;background:#f6f6f6;padding:.8em;font-size:.8em;max-height:30em;\
overflow:auto}footer{margin-top:2em;font-size:.75em;color:#777}svg{max-width:100%;height:auto}";

/// One tile: `name` its key for a reader of the DOM, `label` what a person
/// reads.
fn tile(out: &mut String, name: &str, label: &str, value: &str) {
    write!(
        out,
        "<div class=\"tile\" data-tile=\"{name}\"><div class=\"label\">{}</div>\
         <div class=\"value\">{}</div></div>",
        esc(label),
        esc(value)
    )
    .expect("a String takes it");
}

/// The tiles of `figures`.
fn tiles(out: &mut String, figures: &Figures, requests_label: &str) {
    let (measured, uncompressed) = figures.spend_usd();
    out.push_str("<div class=\"tiles\">");
    tile(out, "requests", requests_label, &figures.calls.to_string());
    tile(
        out,
        "compactions",
        "compactions",
        &figures.compactions.to_string(),
    );
    tile(
        out,
        "cache-hit",
        "cache-hit share (measured)",
        &share(figures.cache_hit_share()),
    );
    tile(out, "spend", "spend (measured)", &usd(measured));
    tile(
        out,
        "uncompressed",
        "uncompressed (estimate)",
        &usd(uncompressed),
    );
    tile(
        out,
        "saved",
        "saved (vs the estimate)",
        &usd(uncompressed - measured),
    );
    tile(
        out,
        "input-ratio",
        "input cost vs uncompressed",
        &ratio(figures.input_cost_ratio()),
    );
    tile(
        out,
        "recalls",
        "recalls answered",
        &figures.recalls.to_string(),
    );
    tile(
        out,
        "fail-opens",
        "fail-opens",
        &figures.fail_opens.to_string(),
    );
    tile(
        out,
        "unknown",
        "answers without usage",
        &figures.unknown_calls.to_string(),
    );
    out.push_str("</div>\n");
}

/// A chart, or why there is none (a chart that cannot be drawn is no
/// reason for the page to fail).
fn chart(out: &mut String, svg: anyhow::Result<String>) {
    match svg {
        Ok(svg) => {
            out.push_str("<div class=\"chart\">");
            out.push_str(&svg);
            out.push_str("</div>\n");
        }
        Err(e) => {
            let why = esc(&format!("{e:#}"));
            write!(out, "<p class=\"chart\">no chart: {why}</p>").expect("a String takes it");
        }
    }
}

/// The overview: every session's figures summed, the spend over time, and
/// the sessions table.
pub fn overview(rows: &[SessionRow], total: &Figures, spend: Vec<SpendPoint>) -> String {
    let mut body = String::from("<h1>condense proxy</h1>\n");
    tiles(&mut body, total, "requests");
    body.push_str("<h2>Spend over time</h2>\n");
    let series = SpendSeries {
        title: "all sessions".into(),
        points: spend,
    };
    chart(&mut body, plot::render_spend_svg(&series));
    write!(
        body,
        "<h2>Sessions ({})</h2>\n<table id=\"sessions\"><thead><tr><th>session</th>\
         <th>agent</th><th>model</th><th>calls</th><th>compactions</th><th>last seen (UTC)</th>\
         <th>tokens sent / as sent by the client</th><th>cache hits</th><th>spend</th>\
         <th>saved</th></tr></thead><tbody>\n",
        rows.len()
    )
    .expect("a String takes it");
    // The latest first: what an operator looks for.
    let mut rows: Vec<&SessionRow> = rows.iter().collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.figures.last_ms.max(r.saved_ms)));
    for row in rows {
        let f = &row.figures;
        let (measured, uncompressed) = f.spend_usd();
        let seen = f.last_ms.max(row.saved_ms);
        writeln!(
            body,
            "<tr data-session=\"{group}\"><td><a href=\"{href}\">{group}</a></td><td>{agent}</td>\
             <td>{model}</td><td data-calls>{calls}</td><td>{compactions}</td><td>{seen}</td>\
             <td>{after} / {before}</td><td>{hits}</td><td>{spend}</td><td>{saved}</td></tr>",
            group = esc(&row.session),
            href = esc(&session_href(&row.session)),
            agent = esc(&row.agent),
            model = esc(&row.model),
            calls = f.calls,
            compactions = f.compactions,
            seen = if seen == 0 {
                "—".into()
            } else {
                utc_text(seen)
            },
            after = f.tokens_after,
            before = f.tokens_before,
            hits = share(f.cache_hit_share()),
            spend = usd(measured),
            saved = usd(uncompressed - measured),
        )
        .expect("a String takes it");
    }
    body.push_str("</tbody></table>\n");
    page("condense proxy", &body)
}

/// Calls shown in a session's table of calls, the latest first.
pub const CALLS_SHOWN: usize = 50;

/// The session's latest calls, each with the usage the provider reported.
fn calls(out: &mut String, view: &SessionView) {
    let shown = view.calls.len().min(CALLS_SHOWN);
    writeln!(
        out,
        "<h2>Latest calls ({shown} of {})</h2>\n<table id=\"calls\"><thead><tr><th>call</th>\
         <th>UTC</th><th>model</th><th>condense</th><th>tokens before → after</th>\
         <th>status</th><th>cache read</th><th>cache write</th><th>uncached</th><th>output</th>\
         <th>cost</th><th>uncompressed (est.)</th><th>recalls</th></tr></thead><tbody>",
        view.calls.len()
    )
    .expect("a String takes it");
    for (i, row) in view.calls.iter().enumerate().rev().take(shown) {
        let call = &row.call;
        let usage = match &call.usage {
            Some(u) => format!(
                "<td data-usage=\"cache_read\">{}</td><td data-usage=\"cache_write\">{}</td>\
                 <td data-usage=\"uncached\">{}</td><td data-usage=\"output\">{}</td>",
                u.cache_read, u.cache_write, u.uncached, u.output
            ),
            None => "<td colspan=\"4\" data-usage=\"unknown\">unknown</td>".to_owned(),
        };
        let (cost, uncompressed) = match (&call.cost, row.uncompressed_input_usd) {
            (Some(c), Some(estimate)) => (usd(c.usd()), usd(estimate + c.output_usd)),
            _ => ("—".to_owned(), "—".to_owned()),
        };
        writeln!(
            out,
            "<tr data-call=\"{n}\"><td>{n}</td><td>{when}</td><td>{model}</td><td>{outcome}</td>\
             <td>{before} → {after}</td><td>{status}</td>{usage}<td>{cost}</td>\
             <td>{uncompressed}</td><td>{recalls}</td></tr>",
            n = i + 1,
            when = clock(call.at_ms),
            model = esc(&call.model),
            outcome = call.outcome.name(),
            before = call.tokens_before,
            after = call.tokens_after,
            status = call.status,
            recalls = call.recalls,
        )
        .expect("a String takes it");
    }
    out.push_str("</tbody></table>\n");
}

/// One session's page; `threshold` the compaction threshold of its agent
/// and model (the chart's line).
pub fn session(view: &SessionView, threshold: u32) -> String {
    let mut body = format!(
        "<p><a href=\"/ui\">← all sessions</a></p>\n<h1>Session <code>{}</code></h1>\n",
        esc(&view.session)
    );
    let f = &view.figures;
    if f.calls > 0 {
        writeln!(
            body,
            "<p id=\"span\">{calls} calls from {first} to {last} (UTC): {span}; {measured} \
             with the provider's usage</p>",
            calls = f.calls,
            first = utc_text(f.first_ms),
            last = utc_text(f.last_ms),
            span = duration(f.last_ms - f.first_ms),
            measured = f.measured_calls,
        )
        .expect("a String takes it");
    }
    tiles(&mut body, f, "calls");
    body.push_str("<h2>Request tokens, call by call</h2>\n");
    let series = Series {
        title: view.session.clone(),
        threshold: u64::from(threshold),
        uncompressed: view
            .calls
            .iter()
            .map(|c| u64::from(c.call.tokens_before))
            .collect(),
        condensed: view
            .calls
            .iter()
            .map(|c| u64::from(c.call.tokens_after))
            .collect(),
        compactions: view.compactions.iter().map(|c| c.call).collect(),
    };
    match view.calls.is_empty() {
        true => body.push_str("<p class=\"chart\">no calls recorded yet</p>\n"),
        false => chart(&mut body, plot::render_svg_inline(&series)),
    }
    write!(
        body,
        "<h2>Compactions ({})</h2>\n<table id=\"compactions\"><thead><tr><th>call</th>\
         <th>UTC</th><th>why</th><th>tokens before → after</th><th>messages folded</th>\
         <th>summary by</th><th>summary came</th><th>took</th></tr></thead><tbody>\n",
        view.compactions.len()
    )
    .expect("a String takes it");
    for c in &view.compactions {
        writeln!(
            body,
            "<tr data-call=\"{call}\"><td>{call}</td><td>{when}</td><td>{why}</td>\
             <td>{before} → {after}</td><td>{folded}</td><td>{by}</td><td>{came}</td>\
             <td>{took} ms</td></tr>",
            call = c.call,
            when = clock(c.at_ms),
            why = c.cause,
            before = c.tokens_before,
            after = c.tokens_after,
            folded = c.messages_folded,
            by = esc(c.summary_by.as_deref().unwrap_or("—")),
            came = c.summary,
            took = c.took_ms,
        )
        .expect("a String takes it");
    }
    body.push_str("</tbody></table>\n");
    calls(&mut body, view);
    body.push_str("<h2>The current summary</h2>\n");
    match (&view.summary, &view.summary_unreadable) {
        (Some(summary), _) => {
            writeln!(body, "<pre id=\"summary\">{}</pre>", esc(summary)).expect("a String takes it")
        }
        (None, Some(why)) => {
            writeln!(body, "<p>cannot be read here: {}</p>", esc(why)).expect("a String takes it")
        }
        (None, None) => body.push_str("<p>none yet: the session has not compacted</p>\n"),
    }
    write!(
        body,
        "<h2>Checkpoints and their recall handles ({})</h2>\n<table id=\"checkpoints\"><thead>\
         <tr><th>handle</th><th>request (messages)</th><th>folded</th><th>saved (UTC)</th></tr>\
         </thead><tbody>\n",
        view.checkpoints.len()
    )
    .expect("a String takes it");
    for c in &view.checkpoints {
        writeln!(
            body,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.handle),
            c.request,
            c.folded,
            utc_text(c.saved_ms)
        )
        .expect("a String takes it");
    }
    body.push_str("</tbody></table>\n");
    page(&format!("condense · {}", view.session), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_reads_as_a_person_says_it() {
        assert_eq!(duration(12_400), "12s");
        assert_eq!(duration(250_000), "4m 10s");
        assert_eq!(duration(7_500_000), "2h 05m");
    }

    #[test]
    fn a_sessions_words_are_text_and_its_link_a_path() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(
            session_href("default/k12/session/a b\"<"),
            "/ui/sessions/default/k12/session/a%20b%22%3C"
        );
    }
}

//! A summarizer in about 30 lines: the previous summary, then the first line
//! of everything the person asked, newest last, cut to the budget.

use condense_guest_sdk::{Request, Role, Summarizer, export_summarizer};

/// Its settings (`{"heading": "..."}`), read by the SDK with serde.
#[derive(serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Settings {
    heading: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            heading: "What the user asked:".into(),
        }
    }
}

struct Minimal;

impl Summarizer for Minimal {
    type Settings = Settings;

    fn summarize(request: Request<Settings>) -> Result<String, String> {
        let mut lines: Vec<String> = request
            .previous_summary
            .lines()
            .map(str::to_owned)
            .collect();
        if lines.is_empty() {
            lines.push(request.settings.heading.clone());
        }
        for message in request.messages.iter().filter(|m| m.role == Role::User) {
            if let Some(first) = message.joined_text().lines().find(|l| !l.trim().is_empty()) {
                lines.push(format!("- {}", first.trim()));
            }
        }
        // Over budget: keep the heading and the newest requests.
        while lines.len() > 1 && !request.fits(&lines.join("\n")) {
            lines.remove(1);
        }
        Ok(request.fit(&lines.join("\n")).to_owned())
    }
}

export_summarizer!(Minimal);

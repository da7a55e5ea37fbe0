//! Fitting the rendered summary into `max_tokens`.
//!
//! Re-estimating the whole text after every dropped line would be quadratic, so
//! the first pass charges each line its own estimate, measured with the newline
//! that follows it (the estimate looks at a run's neighbour), and drops items
//! until the sum fits. Joining lines does not change a run's class, so the sum
//! is close to the estimate of the whole text; a second pass checks the real
//! estimate and keeps dropping, then shortens the pinned item, until it fits.
//! The cap therefore holds whatever the estimator does at line boundaries.

use condense_model::tokens::{estimate_text, text_millis};

use crate::text::cut_to_fit;

/// One heading with its items, in display order.
pub struct Section {
    pub heading: String,
    pub items: Vec<Item>,
}

/// One list item as rendered (possibly several lines).
pub struct Item {
    pub text: String,
    /// Items are dropped in ascending order of this rank while the summary is
    /// over budget; `None` pins the item: it is only ever shortened.
    pub drop_rank: Option<(u8, usize)>,
}

const NEWLINE_MILLIS: u64 = 1_000;
/// A pinned item cut shorter than this is no longer worth its heading.
const MIN_PINNED_CHARS: usize = 8;

fn line_cost(text: &str) -> u64 {
    text_millis(&format!("{text}\n"))
}

/// The sections with the items still kept and the running cost estimate.
struct Layout {
    sections: Vec<Section>,
    kept: Vec<Vec<bool>>,
    live: Vec<usize>,
    total: u64,
}

impl Layout {
    fn new(mut sections: Vec<Section>) -> Self {
        sections.retain(|s| !s.items.is_empty());
        let total = sections
            .iter()
            .map(|s| {
                line_cost(&s.heading) + s.items.iter().map(|i| line_cost(&i.text)).sum::<u64>()
            })
            .sum();
        Layout {
            kept: sections.iter().map(|s| vec![true; s.items.len()]).collect(),
            live: sections.iter().map(|s| s.items.len()).collect(),
            sections,
            total,
        }
    }

    /// Every item with its section and item index.
    fn items(&self) -> impl Iterator<Item = (usize, usize, &Item)> {
        self.sections.iter().enumerate().flat_map(|(s, section)| {
            section
                .items
                .iter()
                .enumerate()
                .map(move |(i, item)| (s, i, item))
        })
    }

    /// Droppable items, first to go first.
    fn drop_order(&self) -> Vec<(usize, usize)> {
        let mut order: Vec<((u8, usize), usize, usize)> = self
            .items()
            .filter_map(|(s, i, item)| Some((item.drop_rank?, s, i)))
            .collect();
        order.sort_unstable();
        order.into_iter().map(|(_, s, i)| (s, i)).collect()
    }

    fn pinned(&self) -> Vec<(usize, usize)> {
        self.items()
            .filter(|(_, _, item)| item.drop_rank.is_none())
            .map(|(s, i, _)| (s, i))
            .collect()
    }

    fn drop(&mut self, s: usize, i: usize) {
        self.kept[s][i] = false;
        self.total -= line_cost(&self.sections[s].items[i].text);
        self.live[s] -= 1;
        if self.live[s] == 0 {
            self.total -= line_cost(&self.sections[s].heading);
        }
    }

    fn replace(&mut self, s: usize, i: usize, text: String) {
        let item = &mut self.sections[s].items[i];
        self.total = self.total - line_cost(&item.text) + line_cost(&text);
        item.text = text;
    }

    fn text(&self) -> String {
        let mut out = String::new();
        for (s, section) in self.sections.iter().enumerate() {
            if self.live[s] == 0 {
                continue;
            }
            let items = section
                .items
                .iter()
                .zip(&self.kept[s])
                .filter(|(_, kept)| **kept);
            for line in std::iter::once(&section.heading).chain(items.map(|(item, _)| &item.text)) {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(line);
            }
        }
        out
    }
}

/// Joins the sections, dropping and then shortening items until the estimate
/// of the result is at most `max_tokens`.
pub fn fit(sections: Vec<Section>, max_tokens: u32) -> String {
    let limit = u64::from(max_tokens) * 1_000;
    let mut layout = Layout::new(sections);
    let mut order = layout.drop_order().into_iter();
    // The last line has no newline after it, which the sum charges.
    while layout.total > limit + NEWLINE_MILLIS {
        let Some((s, i)) = order.next() else { break };
        layout.drop(s, i);
    }
    loop {
        let out = layout.text();
        if estimate_text(&out) <= max_tokens {
            return out;
        }
        match order.next() {
            Some((s, i)) => layout.drop(s, i),
            None => break,
        }
    }
    for (s, i) in layout.pinned() {
        loop {
            let out = layout.text();
            let over = text_millis(&out).saturating_sub(limit);
            if over == 0 {
                return out;
            }
            // Shrink by the overshoot; the loop corrects what the item's
            // neighbours add.
            let text = &layout.sections[s].items[i].text;
            let room = text_millis(text).saturating_sub(over);
            match cut_to_fit(text, room, MIN_PINNED_CHARS).map(|t| t.into_owned()) {
                Some(shorter) if shorter.len() < text.len() => layout.replace(s, i, shorter),
                _ => {
                    layout.drop(s, i);
                    break;
                }
            }
        }
    }
    // Every item was dropped, pinned ones because not even their head fitted.
    debug_assert!(layout.text().is_empty());
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str, drop_rank: Option<(u8, usize)>) -> Item {
        Item {
            text: text.to_owned(),
            drop_rank,
        }
    }

    #[test]
    fn fitting_sections_are_joined_unchanged() {
        let sections = vec![
            Section {
                heading: "## A".into(),
                items: vec![item("- one", Some((0, 0)))],
            },
            Section {
                heading: "## Empty".into(),
                items: vec![],
            },
            Section {
                heading: "## B".into(),
                items: vec![item("- two\n  more", None)],
            },
        ];
        assert_eq!(fit(sections, 1_000), "## A\n- one\n## B\n- two\n  more");
    }

    #[test]
    fn drops_by_rank_then_shortens_pinned() {
        let long = format!("- {}", "word ".repeat(200).trim_end());
        let sections = || {
            vec![
                Section {
                    heading: "## Low".into(),
                    items: vec![
                        item("- low old.", Some((0, 0))),
                        item("- low new;", Some((0, 1))),
                    ],
                },
                Section {
                    heading: "## High".into(),
                    items: vec![item("- high", Some((1, 0)))],
                },
                Section {
                    heading: "## Pinned".into(),
                    items: vec![item(&long, None)],
                },
            ]
        };
        let full = fit(sections(), 10_000);
        let full_tokens = estimate_text(&full);
        for budget in 0..=full_tokens {
            let out = fit(sections(), budget);
            assert!(estimate_text(&out) <= budget, "{budget}: {out}");
            // Lower ranks go first: a kept item implies every higher rank is kept.
            if out.contains("low old") {
                assert!(out.contains("low new") && out.contains("high"));
            }
            if out.contains("low new") {
                assert!(out.contains("high"));
            }
            if out.contains("## Low") || out.contains("## High") {
                assert!(
                    out.contains(&long),
                    "{budget}: pinned item shortened before drops"
                );
            }
            // Nothing is dropped that would have fitted.
            if budget >= full_tokens {
                assert_eq!(out, full);
            }
        }
        assert!(fit(sections(), 60).contains(" […]"));
        assert_eq!(fit(sections(), 3), "");
    }
}

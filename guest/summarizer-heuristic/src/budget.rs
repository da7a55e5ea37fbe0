//! Fitting the rendered summary into `max_tokens`.
//!
//! Re-estimating the whole text after every dropped line would be quadratic, so
//! the first pass charges each line its own estimate, measured with the newline
//! that follows it (the estimate looks at a run's neighbour), and drops items
//! until the sum fits. Joining lines does not change a run's class, so the sum
//! is close to the estimate of the whole text; a second pass checks the real
//! estimate and keeps dropping, then shortens the pinned item, until it fits.
//! The cap therefore holds whatever the estimator does at line boundaries.
//!
//! An item may offer a shorter text that says the same (every value kept:
//! the person's statements without their lead-ins and labels), or the most
//! of it (a command's outcome without what it found). Before the budget
//! drops the first item of a class, it shortens every item of that class and
//! below, kept or not: an item is shortened before one of its class is lost.

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
    /// The same, shorter, taken before any item with a short text is dropped.
    pub short: Option<String>,
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

    /// The lowest class of the droppable items that have a short text.
    fn shortening_class(&self) -> Option<u8> {
        self.items()
            .filter(|(_, _, item)| item.short.is_some())
            .filter_map(|(_, _, item)| item.drop_rank.map(|(class, _)| class))
            .min()
    }

    /// Every item (kept or not) of `class` or below takes its short text.
    fn shorten(&mut self, class: u8) {
        for s in 0..self.sections.len() {
            for i in 0..self.sections[s].items.len() {
                let item = &mut self.sections[s].items[i];
                if item.drop_rank.is_some_and(|(c, _)| c > class) {
                    continue;
                }
                if let Some(short) = item.short.take() {
                    if self.kept[s][i] {
                        self.replace(s, i, short);
                    } else {
                        self.sections[s].items[i].text = short;
                    }
                }
            }
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
    let mut order = layout.drop_order().into_iter().peekable();
    let mut shorten_at = layout.shortening_class();
    // Drops the next item, or first shortens every item that has a short
    // text if the next would be of their class or above.
    let mut step = |layout: &mut Layout| -> bool {
        let Some(&(s, i)) = order.peek() else {
            return false;
        };
        let class = layout.sections[s].items[i].drop_rank.map(|(c, _)| c);
        if let Some(at) = shorten_at.filter(|&at| class >= Some(at)) {
            layout.shorten(at);
            shorten_at = layout.shortening_class();
        } else {
            order.next();
            layout.drop(s, i);
        }
        true
    };
    // The last line has no newline after it, which the sum charges.
    while layout.total > limit + NEWLINE_MILLIS {
        if !step(&mut layout) {
            break;
        }
    }
    loop {
        let out = layout.text();
        if estimate_text(&out) <= max_tokens {
            return out;
        }
        if !step(&mut layout) {
            break;
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
            short: None,
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

    #[test]
    fn items_are_shortened_before_one_of_their_class_is_dropped() {
        let sections = || {
            vec![
                Section {
                    heading: "## Low".into(),
                    items: vec![item("- low, the first to go", Some((0, 0)))],
                },
                Section {
                    heading: "## Kept".into(),
                    items: ["a", "b"]
                        .iter()
                        .enumerate()
                        .map(|(i, x)| Item {
                            text: format!("- Lead-in words here: value {x}-{}", 1000 + i),
                            drop_rank: Some((5, i)),
                            short: Some(format!("- value {x}-{}", 1000 + i)),
                        })
                        .collect(),
                },
            ]
        };
        let full = fit(sections(), 10_000);
        assert!(full.contains("Lead-in words here: value a-1000"), "{full}");
        let mut shortened_seen = false;
        for budget in 0..estimate_text(&full) {
            let out = fit(sections(), budget);
            assert!(estimate_text(&out) <= budget, "{budget}: {out}");
            // Lower classes go before anything is shortened, and nothing of
            // the class is dropped while it is whole.
            if out.contains("Lead-in") {
                assert!(out.contains("value a-1000") && out.contains("value b-1001"));
            }
            if !out.contains("value a-1000") && out.contains("## Kept") {
                assert!(!out.contains("Lead-in"), "{budget}: {out}");
            }
            if out.contains("- value a-1000\n- value b-1001") {
                shortened_seen = true;
                assert!(!out.contains("low, the first"), "{budget}: {out}");
            }
        }
        assert!(shortened_seen);
    }
}

//! A request body read as the bytes the upstream got, not as a
//! `serde_json::Value`: two values are equal whatever the order of their
//! objects' keys, and a provider's prompt cache is not — it matches the
//! prompt as rendered, so a key moved is a cache break. These read the raw
//! JSON just far enough to find where a member or a list entry starts and
//! ends, and compare the bytes.

use std::ops::Range;

/// The byte span of the value of top-level member `key` of the JSON object
/// `raw`, if it has one.
pub fn member(raw: &[u8], key: &str) -> Option<Range<usize>> {
    let start = skip_space(raw, 0);
    entries(raw, start)
        .0
        .into_iter()
        .find_map(|(name, value)| (&raw[name?] == key.as_bytes()).then_some(value))
}

/// The byte span of each entry of the JSON array at `list` in `raw`.
pub fn elements(raw: &[u8], list: Range<usize>) -> Vec<Range<usize>> {
    assert_eq!(raw[list.start], b'[', "not an array");
    entries(raw, list.start)
        .0
        .into_iter()
        .map(|(_, value)| value)
        .collect()
}

/// Whether request `now` starts with the whole of request `before`, byte
/// for byte: `now` is `before` with entries added at the end of its list
/// `key` (none, for the same request again) and every other member the
/// same bytes, in the same order.
pub fn continues(before: &[u8], now: &[u8], key: &str) -> bool {
    continues_with(before, now, key, &[], |a, b| a == b)
}

/// [`continues`], but for the members `not_prompt` — a client's metadata,
/// which is no part of the prompt a provider caches: there in both, at the
/// same place, whatever their bytes — and for the last entry of `before`'s
/// list: `last` judges it against the entry in its place in `now`, given
/// their bytes (for a client that moves its cache mark on every call).
pub fn continues_with(
    before: &[u8],
    now: &[u8],
    key: &str,
    not_prompt: &[&str],
    last: impl Fn(&[u8], &[u8]) -> bool,
) -> bool {
    let (b, n) = (members(before), members(now));
    if b.len() != n.len() {
        return false;
    }
    b.into_iter()
        .zip(n)
        .all(|((b_key, b_value), (n_key, n_value))| {
            if b_key != n_key {
                return false;
            }
            if not_prompt.contains(&b_key.as_str()) {
                return true;
            }
            if b_key != key {
                return before[b_value] == now[n_value];
            }
            let (b_list, n_list) = (elements(before, b_value), elements(now, n_value));
            let Some((b_last, b_earlier)) = b_list.split_last() else {
                return true;
            };
            n_list.len() >= b_list.len()
                && (b_earlier.iter().zip(&n_list)).all(|(b, n)| before[b.clone()] == now[n.clone()])
                && last(
                    &before[b_last.clone()],
                    &now[n_list[b_earlier.len()].clone()],
                )
        })
}

/// The top-level members of the JSON object `raw`: each its key (as
/// written, between the quotes) and its value's byte span, in order.
pub fn members(raw: &[u8]) -> Vec<(String, Range<usize>)> {
    let start = skip_space(raw, 0);
    (entries(raw, start).0.into_iter())
        .map(|(name, value)| {
            let name = name.expect("an object's entries have keys");
            (String::from_utf8_lossy(&raw[name]).into_owned(), value)
        })
        .collect()
}

/// The first byte at which `a` and `b` differ, with a little of each
/// around it, for a failure message; `None` if they are the same.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<String> {
    let at = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if at == a.len() && at == b.len() {
        return None;
    }
    let around = |bytes: &[u8]| {
        let from = at.saturating_sub(60);
        String::from_utf8_lossy(&bytes[from..(at + 60).min(bytes.len())]).into_owned()
    };
    Some(format!(
        "at byte {at} of {} and {}:\n  {}\n  {}",
        a.len(),
        b.len(),
        around(a),
        around(b)
    ))
}

/// The entries of the object or array starting at `start`: each its key's
/// span (inside the quotes; `None` in an array) and its value's span; and
/// where the object or array ends.
type Entries = (Vec<(Option<Range<usize>>, Range<usize>)>, usize);

fn entries(raw: &[u8], start: usize) -> Entries {
    let object = match raw.get(start) {
        Some(b'{') => true,
        Some(b'[') => false,
        _ => panic!("no object or array at byte {start}"),
    };
    let close = if object { b'}' } else { b']' };
    let mut found = Vec::new();
    let mut i = skip_space(raw, start + 1);
    if raw[i] == close {
        return (found, i + 1);
    }
    loop {
        let name = if object {
            let end = value_end(raw, i);
            let name = i + 1..end - 1;
            i = skip_space(raw, end);
            assert_eq!(raw[i], b':', "a key without a value at byte {i}");
            i = skip_space(raw, i + 1);
            Some(name)
        } else {
            None
        };
        let end = value_end(raw, i);
        found.push((name, i..end));
        i = skip_space(raw, end);
        match raw[i] {
            b',' => i = skip_space(raw, i + 1),
            c if c == close => return (found, i + 1),
            c => panic!("{:?} at byte {i}", c as char),
        }
    }
}

/// Where the JSON value starting at `start` ends.
fn value_end(raw: &[u8], start: usize) -> usize {
    match raw[start] {
        b'"' => {
            let mut i = start + 1;
            loop {
                match raw[i] {
                    b'\\' => i += 2,
                    b'"' => return i + 1,
                    _ => i += 1,
                }
            }
        }
        b'{' | b'[' => entries(raw, start).1,
        _ => {
            let mut i = start;
            while i < raw.len()
                && !matches!(raw[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                i += 1;
            }
            i
        }
    }
}

fn skip_space(raw: &[u8], mut i: usize) -> usize {
    while i < raw.len() && matches!(raw[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_grown_at_its_end_continues_and_a_key_moved_does_not() {
        let before =
            br#"{"system": "s", "messages": [{"role":"user","content":"a"}], "tools": []}"#;
        let grown = br#"{"system": "s", "messages": [{"role":"user","content":"a"},{"role":"assistant","content":"b"}], "tools": []}"#;
        let moved = br#"{"system": "s", "messages": [{"content":"a","role":"user"},{"role":"assistant","content":"b"}], "tools": []}"#;
        let tools =
            br#"{"system": "s", "messages": [{"role":"user","content":"a"}], "tools": [1]}"#;
        let swapped =
            br#"{"messages": [{"role":"user","content":"a"}], "system": "s", "tools": []}"#;
        assert!(continues(before, before, "messages"));
        assert!(continues(before, grown, "messages"));
        assert!(!continues(grown, before, "messages"));
        assert!(!continues(before, moved, "messages"));
        assert!(!continues(before, tools, "messages"));
        assert!(!continues(before, swapped, "messages"));
        assert!(continues_with(
            before,
            tools,
            "messages",
            &["tools"],
            |a, b| a == b
        ));
        let escaped = br#"{"messages": ["a\"]", [1, {"b": "}"}]], "x": 1}"#;
        let list = member(escaped, "messages").unwrap();
        let spans: Vec<&[u8]> = (elements(escaped, list).into_iter())
            .map(|s| &escaped[s])
            .collect();
        assert_eq!(spans, [&br#""a\"]""#[..], br#"[1, {"b": "}"}]"#]);
        assert_eq!(&escaped[member(escaped, "x").unwrap()], b"1");
    }
}

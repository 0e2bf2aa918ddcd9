//! `regexp_replace(text, pattern, replacement[, 'g'])` with Kùzu's (RE2's) conventions: the
//! first match is replaced, or every match with the option `g`; in the replacement `\0`..`\9`
//! name capture groups and `\\` is a backslash, everything else is literal (`$1` too); a pattern
//! that does not compile leaves the text as it is, as Kùzu does. A query compiles each pattern
//! once: [`RegexCache`] keeps the most recent ones.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

use regex::{Captures, Regex};
use warren_common::{Error, Result};

/// Compiled patterns one query keeps.
pub const REGEX_CACHE_ENTRIES_MAX: usize = 16;

/// The most recently used compiled patterns of one query (`None`: the pattern is invalid).
#[derive(Debug, Default)]
pub struct RegexCache {
    entries: RefCell<VecDeque<(Arc<str>, Option<Regex>)>>,
}

impl RegexCache {
    /// The compiled `pattern`, or `None` when it does not compile.
    pub fn get(&self, pattern: &str) -> Option<Regex> {
        let mut entries = self.entries.borrow_mut();
        if let Some(index) = entries.iter().position(|(p, _)| &**p == pattern) {
            let entry = entries.remove(index).expect("found entry");
            let compiled = entry.1.clone();
            entries.push_front(entry);
            return compiled;
        }
        let compiled = Regex::new(pattern).ok();
        if entries.len() == REGEX_CACHE_ENTRIES_MAX {
            entries.pop_back();
        }
        entries.push_front((pattern.into(), compiled.clone()));
        debug_assert!(entries.len() <= REGEX_CACHE_ENTRIES_MAX);
        compiled
    }
}

/// Whether the fourth argument asks for every match to be replaced.
pub(super) fn global_option(option: Option<&str>) -> Result<bool> {
    match option {
        None => Ok(false),
        Some("g") => Ok(true),
        Some(_) => Err(Error::binder(
            "regex_replace can only support global replace option: g.",
        )),
    }
}

pub(super) fn replace(regex: &Regex, text: &str, rewrite: &str, global: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for captures in regex.captures_iter(text) {
        let whole = captures.get(0).expect("group 0 always matches");
        out.push_str(&text[copied..whole.start()]);
        expand(rewrite, &captures, &mut out);
        copied = whole.end();
        if !global {
            break;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Appends `rewrite` with `\N` replaced by capture group N and `\\` by a backslash.
fn expand(rewrite: &str, captures: &Captures<'_>, out: &mut String) {
    let mut chars = rewrite.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(digit @ '0'..='9') => {
                chars.next();
                let group = digit as usize - '0' as usize;
                out.push_str(captures.get(group).map_or("", |m| m.as_str()));
            }
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            _ => out.push('\\'),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, pattern: &str, rewrite: &str, global: bool) -> String {
        let cache = RegexCache::default();
        match cache.get(pattern) {
            Some(regex) => replace(&regex, text, rewrite, global),
            None => text.to_string(),
        }
    }

    /// Answers of Kùzu 0.11.3.
    #[test]
    fn replaces_like_kuzu() {
        assert_eq!(run("hello world", "o", "0", false), "hell0 world");
        assert_eq!(run("hello world", "o", "0", true), "hell0 w0rld");
        assert_eq!(run("abc", "(b)", "[\\1]", false), "a[b]c");
        assert_eq!(run("aaa", "a*", "x", false), "x");
        assert_eq!(run("a.c", ".", "x", true), "xxx");
        assert_eq!(run("abc", "B", "x", false), "abc");
        assert_eq!(run("abc", "(?i)B", "x", false), "axc");
        assert_eq!(run("abc", "b", "$0", false), "a$0c");
        assert_eq!(run("abc", "b", "\\0\\0", false), "abbc");
        assert_eq!(run("abc", "b", "\\\\", false), "a\\c");
        assert_eq!(run("New York", "New", "Old", false), "Old York");
        // A pattern that does not compile leaves the text alone.
        assert_eq!(run("abc", "(", "x", false), "abc");
        assert_eq!(run("abc", "[", "x", true), "abc");
    }

    #[test]
    fn only_g_is_an_option() {
        assert!(!global_option(None).unwrap());
        assert!(global_option(Some("g")).unwrap());
        assert_eq!(
            global_option(Some("i")).unwrap_err().to_string(),
            "Binder exception: regex_replace can only support global replace option: g."
        );
    }

    #[test]
    fn cache_is_bounded_and_keeps_recent_patterns() {
        let cache = RegexCache::default();
        for i in 0..REGEX_CACHE_ENTRIES_MAX + 5 {
            assert!(cache.get(&format!("a{i}")).is_some());
        }
        assert_eq!(cache.entries.borrow().len(), REGEX_CACHE_ENTRIES_MAX);
        assert!(cache.get("(").is_none());
        assert!(cache.get("(").is_none());
        assert_eq!(cache.entries.borrow().len(), REGEX_CACHE_ENTRIES_MAX);
    }
}

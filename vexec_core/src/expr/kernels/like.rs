//! LIKE with a constant pattern, as PostgreSQL's `like_match.c` matches it
//! for case-sensitive LIKE: `%` matches any sequence, `_` one character, the
//! escape character (backslash) makes the next character literal. Matching is
//! on bytes; `_` steps over one UTF-8 character in a UTF-8 database and over
//! one byte in a single-byte encoding. (Bytewise literal matching is exact in
//! UTF-8: a literal starts with a lead byte, which never occurs inside another
//! character.) Deterministic collations only: the compiler checks that.
//!
//! The common shapes compile to one memcmp or memmem: `abc` (equality),
//! `abc%` (prefix), `%abc` (suffix), `%abc%` (contains).

use crate::batch::strings::Bytes;
use crate::batch::{Column, RowIdx, Values};

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Lit(Vec<u8>),
    One,
    Star,
}

#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Exact(Vec<u8>),
    Prefix(Vec<u8>),
    Suffix(Vec<u8>),
    Contains(Needle),
    Any,
    General(Vec<Token>),
}

/// The literal of `%abc%` with its searcher, built once per pattern: a
/// searcher built per row (`memmem::find`) cost more than the search on
/// ClickBench's URLs (its Q23 scan 30% slower than PostgreSQL's).
#[derive(Debug, Clone)]
struct Needle(memchr::memmem::Finder<'static>);

impl PartialEq for Needle {
    fn eq(&self, other: &Needle) -> bool {
        self.0.needle() == other.0.needle()
    }
}

/// A compiled LIKE pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct LikePattern {
    shape: Shape,
    utf8: bool,
}

/// Why a pattern cannot be compiled (PostgreSQL raises an error for it when
/// it matches a row, so the caller leaves the expression to PostgreSQL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPattern;

impl LikePattern {
    /// Compile `pattern` (escape character: backslash). `utf8`: the database
    /// encoding is UTF-8 (else a single-byte encoding).
    pub fn compile(pattern: &[u8], utf8: bool) -> Result<LikePattern, BadPattern> {
        let mut tokens: Vec<Token> = Vec::new();
        let mut i = 0;
        let push_lit = |tokens: &mut Vec<Token>, b: &[u8]| match tokens.last_mut() {
            Some(Token::Lit(l)) => l.extend_from_slice(b),
            _ => tokens.push(Token::Lit(b.to_vec())),
        };
        while i < pattern.len() {
            match pattern[i] {
                b'\\' => {
                    if i + 1 >= pattern.len() {
                        return Err(BadPattern); // "LIKE pattern must not end with escape character"
                    }
                    let n = char_len(&pattern[i + 1..], utf8);
                    push_lit(&mut tokens, &pattern[i + 1..i + 1 + n]);
                    i += 1 + n;
                }
                b'%' => {
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                    i += 1;
                }
                b'_' => {
                    tokens.push(Token::One);
                    i += 1;
                }
                _ => {
                    let n = char_len(&pattern[i..], utf8);
                    push_lit(&mut tokens, &pattern[i..i + n]);
                    i += n;
                }
            }
        }
        let shape = match tokens.as_slice() {
            [] => Shape::Exact(Vec::new()),
            [Token::Lit(l)] => Shape::Exact(l.clone()),
            [Token::Lit(l), Token::Star] => Shape::Prefix(l.clone()),
            [Token::Star, Token::Lit(l)] => Shape::Suffix(l.clone()),
            [Token::Star, Token::Lit(l), Token::Star] => {
                Shape::Contains(Needle(memchr::memmem::Finder::new(l).into_owned()))
            }
            [Token::Star] => Shape::Any,
            _ => Shape::General(tokens),
        };
        Ok(LikePattern { shape, utf8 })
    }

    pub fn matches(&self, s: &[u8]) -> bool {
        match &self.shape {
            Shape::Exact(l) => s == l.as_slice(),
            Shape::Prefix(l) => s.starts_with(l),
            Shape::Suffix(l) => s.ends_with(l),
            Shape::Contains(n) => n.0.find(s).is_some(),
            Shape::Any => true,
            Shape::General(t) => match_tokens(t, s, self.utf8),
        }
    }
}

/// Length of the character at the start of `b` (1 in single-byte encodings).
#[inline]
fn char_len(b: &[u8], utf8: bool) -> usize {
    if !utf8 {
        return 1;
    }
    let n = match b[0] {
        x if x < 0x80 => 1,
        x if x & 0xe0 == 0xc0 => 2,
        x if x & 0xf0 == 0xe0 => 3,
        x if x & 0xf8 == 0xf0 => 4,
        _ => 1,
    };
    n.min(b.len())
}

fn match_tokens(t: &[Token], s: &[u8], utf8: bool) -> bool {
    let mut si = 0;
    for (ti, tok) in t.iter().enumerate() {
        match tok {
            Token::Lit(l) => {
                if !s[si..].starts_with(l) {
                    return false;
                }
                si += l.len();
            }
            Token::One => {
                if si >= s.len() {
                    return false;
                }
                si += char_len(&s[si..], utf8);
            }
            Token::Star => {
                let rest = &t[ti + 1..];
                if rest.is_empty() {
                    return true;
                }
                // Try every position where the rest could start; when it
                // starts with a literal, only where that literal occurs.
                let mut pos = si;
                loop {
                    if let Some(Token::Lit(l)) = rest.first() {
                        match memchr::memmem::find(&s[pos..], l) {
                            Some(off) => pos += off,
                            None => return false,
                        }
                    }
                    if match_tokens(rest, &s[pos..], utf8) {
                        return true;
                    }
                    if pos >= s.len() {
                        return false;
                    }
                    pos += char_len(&s[pos..], utf8);
                }
            }
        }
    }
    si == s.len()
}

/// `out[r] = arg[r] LIKE pattern` (negated for NOT LIKE) on the rows of `sel`;
/// values must be plain varlenas.
///
/// # Safety
/// The valid Datum values among the rows point to plain varlenas.
pub unsafe fn like(arg: &Column, pattern: &LikePattern, negate: bool, sel: &[RowIdx], out: &mut Column) {
    // SAFETY: this function's contract.
    let (Some(a), Values::Bool(o)) = (unsafe { Bytes::of(&arg.values) }, &mut out.values) else {
        panic!("LIKE expects varlena input and boolean output");
    };
    for &row in sel {
        let i = row as usize;
        let valid = arg.validity.get(i);
        out.validity.set(i, valid);
        if valid {
            let s = a.get(i);
            o[i] = (pattern.matches(s) != negate) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        LikePattern::compile(p.as_bytes(), true).unwrap().matches(s.as_bytes())
    }

    #[test]
    fn shapes() {
        assert!(m("abc", "abc") && !m("abc", "abcd"));
        assert!(m("ab%", "abzzz") && !m("ab%", "zab"));
        assert!(m("%yz", "xxyz") && !m("%yz", "yzx"));
        assert!(m("%google%", "http://www.google.ru/") && !m("%google%", "goo gle"));
        assert!(m("%", "") && m("%%", "anything"));
        assert!(m("", "") && !m("", "a"));
    }

    #[test]
    fn underscore_is_one_character() {
        assert!(m("_", "é"), "one two-byte character");
        assert!(!m("__", "é"));
        assert!(m("a_c", "abc") && m("a_c", "aжc") && !m("a_c", "ac"));
        assert!(LikePattern::compile(b"__", false).unwrap().matches("é".as_bytes()), "two bytes in LATIN1");
    }

    #[test]
    fn general_patterns_backtrack() {
        assert!(m("%a%b%c%", "xxaxxbxxcxx"));
        assert!(!m("%a%b%c%", "xxcxxbxxaxx"));
        assert!(m("%.google.%", "http://www.google.com/x"));
        assert!(m("a%b_", "a123bz") && !m("a%b_", "a123b"));
        assert!(m("%ab", "abab") && m("%aab", "aaab"));
        assert!(m("_%_", "ab") && !m("_%_", "a"));
    }

    #[test]
    fn escapes() {
        assert!(m("100\\%", "100%") && !m("100\\%", "1000"));
        assert!(m("a\\_b", "a_b") && !m("a\\_b", "axb"));
        assert!(m("\\\\", "\\"));
        assert_eq!(LikePattern::compile(b"abc\\", true), Err(BadPattern));
    }
}

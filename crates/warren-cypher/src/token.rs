//! The tokens the lexer produces: what kind each one is and where it lies in the query text.
//!
//! Keywords are not a token kind of their own: Cypher lets most of them double as names (a label
//! called `order`, a property called `count`), so the lexer emits every word as an
//! [`TokenKind::Identifier`] and the parser asks [`Token::is_keyword`] where a keyword may stand.

use crate::ast::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// A word as written: a keyword or a name, told apart by the parser.
    Identifier(String),
    /// `` `a name` `` with the backticks removed and ``` `` ``` unescaped; never a keyword.
    QuotedIdentifier(String),
    /// A string literal with its escapes resolved.
    String(String),
    Integer(i128),
    Double(f64),
    /// `$name` or `$1`, without the `$`.
    Parameter(String),
    LeftParen,
    RightParen,
    LeftBracket,
    RightBracket,
    LeftBrace,
    RightBrace,
    Comma,
    Colon,
    Semicolon,
    Dot,
    DotDot,
    Plus,
    /// `+=` in `SET n += {map}`.
    PlusEquals,
    Minus,
    /// `->`: the right arrow head of a pattern, or a lambda.
    Arrow,
    Star,
    Slash,
    Percent,
    Caret,
    Equals,
    /// `<>`
    NotEquals,
    /// `!=`, which Kùzu rejects with a hint to use `<>`.
    BangEquals,
    Less,
    LessEquals,
    Greater,
    GreaterEquals,
    /// `=~`
    RegexMatch,
    /// `||`
    Concat,
    Ampersand,
    Bar,
    ShiftLeft,
    ShiftRight,
    /// Text the lexer could not read; `expected` says what it wanted instead.
    Invalid {
        expected: String,
    },
    /// The end of the text.
    End,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

impl Token {
    /// Whether this token is the (unquoted, case-insensitive) keyword `keyword`.
    pub fn is_keyword(&self, keyword: &str) -> bool {
        match &self.kind {
            TokenKind::Identifier(word) => word.eq_ignore_ascii_case(keyword),
            _ => false,
        }
    }

    /// The name this token spells, if it can stand for a name (a word or a quoted name).
    pub fn name(&self) -> Option<&str> {
        match &self.kind {
            TokenKind::Identifier(word) | TokenKind::QuotedIdentifier(word) => Some(word),
            _ => None,
        }
    }
}

//! The lexer: query text to [`Token`]s with spans. It never fails: text it cannot read becomes
//! a [`TokenKind::Invalid`] token, which the parser reports as a syntax error only if it gets
//! that far, so the first error in reading order is the one the user sees.
//!
//! Pattern arrows are not tokens: `<-[`, `]-` and `-->` are composed by the parser from `<`, `-`
//! and `->`, so that `a<-1` still reads as `a < -1` in an expression. Columns count characters
//! (not bytes), as Kùzu's messages do.

use crate::ast::Span;
use crate::token::{Token, TokenKind};

/// Reads all of `text`; the last token is always [`TokenKind::End`].
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut lexer = Lexer {
        text,
        offset: 0,
        line: 1,
        column: 1,
    };
    let mut tokens = Vec::new();
    // Trivia is skipped before a token, so the lexer stands right after the last token read.
    let mut end = lexer.mark();
    while let Some(token) = lexer.next_token() {
        tokens.push(token);
        end = lexer.mark();
    }
    let span = Span {
        start: end.offset,
        end: end.offset,
        line: end.line,
        column: end.column,
    };
    tokens.push(Token {
        kind: TokenKind::End,
        span,
    });
    tokens
}

/// A position in the text: byte offset plus the 1-based line and column there.
#[derive(Clone, Copy)]
struct Mark {
    offset: usize,
    line: u32,
    column: u32,
}

struct Lexer<'a> {
    text: &'a str,
    offset: usize,
    line: u32,
    column: u32,
}

impl Lexer<'_> {
    fn mark(&self) -> Mark {
        Mark {
            offset: self.offset,
            line: self.line,
            column: self.column,
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.offset..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        let mut chars = self.text[self.offset..].chars();
        chars.next();
        chars.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.offset += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn bump_if(&mut self, expected: char) -> bool {
        let matched = self.peek() == Some(expected);
        if matched {
            self.bump();
        }
        matched
    }

    fn token(&self, kind: TokenKind, start: Mark) -> Token {
        let span = Span {
            start: start.offset,
            end: self.offset,
            line: start.line,
            column: start.column,
        };
        Token { kind, span }
    }

    fn invalid(&self, expected: &str, start: Mark) -> Token {
        self.token(
            TokenKind::Invalid {
                expected: expected.to_string(),
            },
            start,
        )
    }

    fn next_token(&mut self) -> Option<Token> {
        if let Some(unterminated) = self.skip_trivia() {
            return Some(unterminated);
        }
        let start = self.mark();
        let c = self.peek()?;
        let token = match c {
            '`' => self.quoted_name(start),
            '\'' | '"' => self.string(start),
            '$' => self.parameter(start),
            '0'..='9' => self.number(start),
            '.' if self.peek_second().is_some_and(|d| d.is_ascii_digit()) => self.number(start),
            c if c.is_alphabetic() || c == '_' => self.word(start),
            _ => self.operator(start),
        };
        Some(token)
    }

    /// Skips whitespace and comments; an unterminated `/*` comment becomes an invalid token.
    fn skip_trivia(&mut self) -> Option<Token> {
        loop {
            match (self.peek(), self.peek_second()) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let start = self.mark();
                    self.bump();
                    self.bump();
                    if !self.skip_block_comment() {
                        return Some(self.invalid("'*/' to close the comment", start));
                    }
                }
                _ => return None,
            }
        }
    }

    fn skip_block_comment(&mut self) -> bool {
        while let Some(c) = self.bump() {
            if c == '*' && self.bump_if('/') {
                return true;
            }
        }
        false
    }

    fn word(&mut self, start: Mark) -> Token {
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.bump();
        }
        let word = self.text[start.offset..self.offset].to_string();
        self.token(TokenKind::Identifier(word), start)
    }

    fn quoted_name(&mut self, start: Mark) -> Token {
        self.bump();
        let mut name = String::new();
        loop {
            match self.bump() {
                None => return self.invalid("'`' to close the quoted name", start),
                Some('`') if self.bump_if('`') => name.push('`'),
                Some('`') => return self.token(TokenKind::QuotedIdentifier(name), start),
                Some(c) => name.push(c),
            }
        }
    }

    fn parameter(&mut self, start: Mark) -> Token {
        self.bump();
        let name_start = self.offset;
        match self.peek() {
            Some(c) if c.is_alphabetic() || c == '_' => {
                while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    self.bump();
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.bump();
                }
            }
            _ => return self.invalid("a parameter name after '$'", start),
        }
        let name = self.text[name_start..self.offset].to_string();
        self.token(TokenKind::Parameter(name), start)
    }

    fn string(&mut self, start: Mark) -> Token {
        let Some(quote) = self.bump() else {
            return self.invalid("a string", start);
        };
        let mut value = String::new();
        loop {
            match self.bump() {
                None => return self.invalid("a closing quote to end the string", start),
                Some(c) if c == quote => return self.token(TokenKind::String(value), start),
                Some('\\') => {
                    if let Err(expected) = self.escape(&mut value) {
                        return self.invalid(expected, start);
                    }
                }
                Some(c) => value.push(c),
            }
        }
    }

    /// Reads the escape after a backslash into `value`; an unknown escape keeps both characters.
    fn escape(&mut self, value: &mut String) -> Result<(), &'static str> {
        let Some(c) = self.bump() else {
            return Err("a closing quote to end the string");
        };
        let resolved = match c {
            '\\' | '\'' | '"' => c,
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'u' => self
                .unicode_escape(4)
                .ok_or("four hex digits after '\\u'")?,
            'U' => self
                .unicode_escape(8)
                .ok_or("eight hex digits after '\\U'")?,
            other => {
                value.push('\\');
                other
            }
        };
        value.push(resolved);
        Ok(())
    }

    fn unicode_escape(&mut self, digits: usize) -> Option<char> {
        let hex = self.text.get(self.offset..self.offset + digits)?;
        if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let code = u32::from_str_radix(hex, 16).ok()?;
        let c = char::from_u32(code)?;
        for _ in 0..digits {
            self.bump();
        }
        Some(c)
    }

    fn number(&mut self, start: Mark) -> Token {
        self.digits();
        let mut is_double = false;
        if self.peek() == Some('.') && self.peek_second().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
            self.digits();
            is_double = true;
        }
        if self.at_exponent() {
            self.bump();
            if !self.bump_if('+') {
                self.bump_if('-');
            }
            self.digits();
            is_double = true;
        }
        let text = &self.text[start.offset..self.offset];
        if is_double {
            return match text.parse::<f64>() {
                Ok(value) => self.token(TokenKind::Double(value), start),
                Err(_) => self.invalid("a number", start),
            };
        }
        match text.parse::<i128>() {
            Ok(value) => self.token(TokenKind::Integer(value), start),
            Err(_) => self.invalid("an integer that fits in 128 bits", start),
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
    }

    /// `e`/`E` followed by digits, optionally signed: the exponent of a double.
    fn at_exponent(&self) -> bool {
        let rest = &self.text[self.offset..];
        let mut chars = rest.chars();
        if !matches!(chars.next(), Some('e' | 'E')) {
            return false;
        }
        match chars.next() {
            Some('+' | '-') => chars.next().is_some_and(|c| c.is_ascii_digit()),
            Some(c) => c.is_ascii_digit(),
            None => false,
        }
    }

    fn operator(&mut self, start: Mark) -> Token {
        let Some(c) = self.bump() else {
            return self.invalid("a token", start);
        };
        let kind = match c {
            '(' => TokenKind::LeftParen,
            ')' => TokenKind::RightParen,
            '[' => TokenKind::LeftBracket,
            ']' => TokenKind::RightBracket,
            '{' => TokenKind::LeftBrace,
            '}' => TokenKind::RightBrace,
            ',' => TokenKind::Comma,
            ':' => TokenKind::Colon,
            ';' => TokenKind::Semicolon,
            '*' => TokenKind::Star,
            '/' => TokenKind::Slash,
            '%' => TokenKind::Percent,
            '^' => TokenKind::Caret,
            '&' => TokenKind::Ampersand,
            '.' => self.pick('.', TokenKind::DotDot, TokenKind::Dot),
            '+' => self.pick('=', TokenKind::PlusEquals, TokenKind::Plus),
            '-' => self.pick('>', TokenKind::Arrow, TokenKind::Minus),
            '|' => self.pick('|', TokenKind::Concat, TokenKind::Bar),
            '=' => self.pick('~', TokenKind::RegexMatch, TokenKind::Equals),
            '<' => self.after_less(),
            '>' => self.after_greater(),
            '!' if self.bump_if('=') => TokenKind::BangEquals,
            _ => return self.invalid("a token", start),
        };
        self.token(kind, start)
    }

    /// `second` follows: consume it and give `double`; otherwise `single`.
    fn pick(&mut self, second: char, double: TokenKind, single: TokenKind) -> TokenKind {
        if self.bump_if(second) {
            double
        } else {
            single
        }
    }

    fn after_less(&mut self) -> TokenKind {
        match self.peek() {
            Some('=') => self.then(TokenKind::LessEquals),
            Some('>') => self.then(TokenKind::NotEquals),
            Some('<') => self.then(TokenKind::ShiftLeft),
            _ => TokenKind::Less,
        }
    }

    fn after_greater(&mut self) -> TokenKind {
        match self.peek() {
            Some('=') => self.then(TokenKind::GreaterEquals),
            Some('>') => self.then(TokenKind::ShiftRight),
            _ => TokenKind::Greater,
        }
    }

    fn then(&mut self, kind: TokenKind) -> TokenKind {
        self.bump();
        kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        tokenize(text).into_iter().map(|t| t.kind).collect()
    }

    fn word(w: &str) -> TokenKind {
        TokenKind::Identifier(w.to_string())
    }

    #[test]
    fn words_names_and_parameters() {
        use TokenKind::*;
        assert_eq!(
            kinds("MATCH `a``b` $x $1 größe"),
            vec![
                word("MATCH"),
                QuotedIdentifier("a`b".into()),
                Parameter("x".into()),
                Parameter("1".into()),
                word("größe"),
                End
            ]
        );
    }

    #[test]
    fn strings_and_escapes() {
        use TokenKind::*;
        assert_eq!(
            kinds(r#"'a\'b' "c\"d\n\t" 'x\qy' '\u00e9'"#),
            vec![
                String("a'b".into()),
                String("c\"d\n\t".into()),
                String("x\\qy".into()),
                String("é".into()),
                End
            ]
        );
    }

    #[test]
    fn numbers() {
        use TokenKind::*;
        assert_eq!(
            kinds("1 1.5 .5 1e20 1.5E-3 170141183460469231731687303715884105727"),
            vec![
                Integer(1),
                Double(1.5),
                Double(0.5),
                Double(1e20),
                Double(1.5e-3),
                Integer(i128::MAX),
                End
            ]
        );
        assert!(matches!(
            kinds("170141183460469231731687303715884105728")[0],
            Invalid { .. }
        ));
    }

    #[test]
    fn ranges_are_not_decimals() {
        use TokenKind::*;
        assert_eq!(
            kinds("*1..2 [..3]"),
            vec![
                Star,
                Integer(1),
                DotDot,
                Integer(2),
                LeftBracket,
                DotDot,
                Integer(3),
                RightBracket,
                End
            ]
        );
    }

    #[test]
    fn operators() {
        use TokenKind::*;
        assert_eq!(
            kinds("= <> != < <= > >= =~ + += - -> * / % ^ || | & << >> . .. , : ;"),
            vec![
                Equals,
                NotEquals,
                BangEquals,
                Less,
                LessEquals,
                Greater,
                GreaterEquals,
                RegexMatch,
                Plus,
                PlusEquals,
                Minus,
                Arrow,
                Star,
                Slash,
                Percent,
                Caret,
                Concat,
                Bar,
                Ampersand,
                ShiftLeft,
                ShiftRight,
                Dot,
                DotDot,
                Comma,
                Colon,
                Semicolon,
                End
            ]
        );
        assert_eq!(kinds("<--"), vec![Less, Minus, Minus, End]);
        assert_eq!(kinds("-->"), vec![Minus, Arrow, End]);
    }

    #[test]
    fn comments_are_skipped() {
        use TokenKind::*;
        assert_eq!(
            kinds("1 // two\n/* three\n */ 4"),
            vec![Integer(1), Integer(4), End]
        );
        assert!(matches!(kinds("1 /* open")[1], Invalid { .. }));
    }

    #[test]
    fn spans_carry_lines_and_columns() {
        let tokens = tokenize("MATCH\n  (é)");
        let paren = &tokens[1];
        assert_eq!(
            (paren.span.line, paren.span.column, paren.span.start),
            (2, 3, 8)
        );
        let name = &tokens[2];
        assert_eq!(
            (name.span.column, name.span.start, name.span.end),
            (4, 9, 11)
        );
        let close = &tokens[3];
        assert_eq!(close.span.column, 5);
        let end = &tokens[4];
        assert_eq!((end.span.start, end.span.line, end.span.column), (12, 2, 6));
    }

    #[test]
    fn bad_input_becomes_invalid_tokens() {
        assert!(matches!(kinds("'open")[0], TokenKind::Invalid { .. }));
        assert!(matches!(kinds("`open")[0], TokenKind::Invalid { .. }));
        assert!(matches!(kinds("#")[0], TokenKind::Invalid { .. }));
        assert!(matches!(kinds("$ x")[0], TokenKind::Invalid { .. }));
        assert!(matches!(kinds("'\\u12'")[0], TokenKind::Invalid { .. }));
    }
}

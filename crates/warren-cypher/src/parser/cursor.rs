//! Token navigation shared by every grammar area: looking ahead, consuming expected tokens and
//! keywords, reading names, measuring spans, and building syntax errors at the current token.

use warren_common::{Error, Result};

use super::keywords::is_reserved;
use super::syntax_error::syntax_error;
use super::Parser;
use crate::ast::Span;
use crate::token::{Token, TokenKind};

impl Parser<'_> {
    /// The next token (the `End` token once everything is read).
    pub(super) fn peek(&self) -> &Token {
        self.peek_nth(0)
    }

    /// The token `n` places ahead of the next one.
    pub(super) fn peek_nth(&self, n: usize) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[self.position.saturating_add(n).min(last)]
    }

    pub(super) fn kind(&self) -> &TokenKind {
        &self.peek().kind
    }

    pub(super) fn kind_nth(&self, n: usize) -> &TokenKind {
        &self.peek_nth(n).kind
    }

    /// Consumes and returns the next token; the `End` token is never consumed.
    pub(super) fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if token.kind != TokenKind::End {
            self.position += 1;
        }
        token
    }

    pub(super) fn at(&self, kind: &TokenKind) -> bool {
        self.kind() == kind
    }

    pub(super) fn eat(&mut self, kind: &TokenKind) -> bool {
        let matched = self.at(kind);
        if matched {
            self.advance();
        }
        matched
    }

    pub(super) fn expect(&mut self, kind: &TokenKind, expected: &str) -> Result<()> {
        if self.eat(kind) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    pub(super) fn at_keyword(&self, keyword: &str) -> bool {
        self.peek().is_keyword(keyword)
    }

    pub(super) fn at_keyword_nth(&self, n: usize, keyword: &str) -> bool {
        self.peek_nth(n).is_keyword(keyword)
    }

    pub(super) fn eat_keyword(&mut self, keyword: &str) -> bool {
        let matched = self.at_keyword(keyword);
        if matched {
            self.advance();
        }
        matched
    }

    pub(super) fn expect_keyword(&mut self, keyword: &str, expected: &str) -> Result<()> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// A name where any word may stand: a label, a property, a table, a function.
    pub(super) fn name(&mut self, expected: &str) -> Result<String> {
        match self.peek().name() {
            Some(name) => {
                let name = name.to_string();
                self.advance();
                Ok(name)
            }
            None => Err(self.error(expected)),
        }
    }

    /// Whether the next token can name a variable (a quoted name, or a word that is not reserved).
    pub(super) fn at_variable(&self) -> bool {
        match self.kind() {
            TokenKind::QuotedIdentifier(_) => true,
            TokenKind::Identifier(word) => !is_reserved(word),
            _ => false,
        }
    }

    /// A variable name: a quoted name, or a word that no clause or operator claims.
    pub(super) fn variable(&mut self, expected: &str) -> Result<String> {
        if self.at_variable() {
            self.name(expected)
        } else {
            Err(self.error(expected))
        }
    }

    pub(super) fn string_literal(&mut self, expected: &str) -> Result<String> {
        match self.kind() {
            TokenKind::String(value) => {
                let value = value.clone();
                self.advance();
                Ok(value)
            }
            _ => Err(self.error(expected)),
        }
    }

    /// The span from token `start` to the last token consumed.
    pub(super) fn span_from(&self, start: usize) -> Span {
        let first = self.tokens[start.min(self.tokens.len() - 1)].span;
        let end = self.consumed_end(start).max(first.start);
        Span { end, ..first }
    }

    /// The source text from token `start` to the last token consumed, trimmed.
    pub(super) fn text_from(&self, start: usize) -> String {
        let span = self.span_from(start);
        self.text
            .get(span.start..span.end)
            .unwrap_or("")
            .trim()
            .to_string()
    }

    fn consumed_end(&self, start: usize) -> usize {
        if self.position > start {
            self.tokens[self.position - 1].span.end
        } else {
            self.tokens[start.min(self.tokens.len() - 1)].span.start
        }
    }

    /// A syntax error at the next token: it is not what `expected` describes.
    pub(super) fn error(&self, expected: &str) -> Error {
        self.error_at(self.position, expected)
    }

    pub(super) fn error_at(&self, index: usize, expected: &str) -> Error {
        let last = self.tokens.len() - 1;
        let token = &self.tokens[index.min(last)];
        let start = self.tokens[self.statement_start.min(last)].span.start;
        syntax_error(self.text, start, token, expected)
    }
}

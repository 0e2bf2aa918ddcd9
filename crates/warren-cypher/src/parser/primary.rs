//! Atoms: literals, parameters, variables, parenthesized expressions, list and map literals,
//! and the dispatch to the keyword-led forms (CASE, CAST, EXISTS, COUNT, quantifiers) and
//! function calls, which live in their own modules.

use warren_common::Result;

use super::Parser;
use crate::ast::{Expr, ExprKind, Literal, Span};
use crate::token::TokenKind;

const EXPRESSION: &str = "an expression";

impl Parser<'_> {
    /// An atom; one nesting level deeper than its expression, so that a parenthesis costs two
    /// levels (this keeps [`NESTING_DEPTH_MAX`] levels within a 2 MiB thread stack even in an
    /// unoptimized build).
    ///
    /// [`NESTING_DEPTH_MAX`]: warren_common::limits::NESTING_DEPTH_MAX
    pub(super) fn primary(&mut self) -> Result<Expr> {
        self.enter()?;
        let result = self.atom();
        self.leave();
        result
    }

    fn atom(&mut self) -> Result<Expr> {
        let start = self.position;
        let kind = match self.kind() {
            TokenKind::LeftParen => self.parenthesized()?,
            TokenKind::LeftBracket => self.list_or_comprehension()?,
            TokenKind::LeftBrace => ExprKind::Map(self.map_entries()?),
            TokenKind::Identifier(_) => self.word_atom()?,
            TokenKind::QuotedIdentifier(_) => self.name_atom()?,
            _ => self.token_atom()?,
        };
        Ok(Expr {
            kind,
            span: self.span_from(start),
        })
    }

    /// A literal or a parameter: an atom of one token.
    fn token_atom(&mut self) -> Result<ExprKind> {
        let kind = match &self.kind() {
            TokenKind::Integer(value) => ExprKind::Literal(Literal::Integer(*value)),
            TokenKind::Double(value) => ExprKind::Literal(Literal::Double(*value)),
            TokenKind::String(value) => ExprKind::Literal(Literal::String(value.clone())),
            TokenKind::Parameter(name) => ExprKind::Parameter(name.clone()),
            _ => return Err(self.error(EXPRESSION)),
        };
        self.advance();
        Ok(kind)
    }

    fn literal(&mut self, literal: Literal) -> ExprKind {
        self.advance();
        ExprKind::Literal(literal)
    }

    /// An atom that starts with a word: a keyword form, a function call or a variable.
    fn word_atom(&mut self) -> Result<ExprKind> {
        let word = self.peek().name().unwrap_or_default().to_ascii_uppercase();
        let before_paren = self.kind_nth(1) == &TokenKind::LeftParen;
        let before_brace = self.kind_nth(1) == &TokenKind::LeftBrace;
        match word.as_str() {
            "NULL" => Ok(self.literal(Literal::Null)),
            "TRUE" => Ok(self.literal(Literal::Bool(true))),
            "FALSE" => Ok(self.literal(Literal::Bool(false))),
            "CASE" => self.case_expression(),
            "EXISTS" | "COUNT" if before_brace => self.subquery_expression(),
            "CAST" if before_paren => self.cast(),
            "ANY" | "ALL" | "NONE" | "SINGLE" if before_paren && self.at_comprehension_head(2) => {
                self.quantifier()
            }
            // Any word may name a function (Kùzu has `contains(a, b)`); only variables are
            // kept away from the reserved words.
            _ if before_paren => self.function_call(),
            _ if !self.at_variable() => Err(self.error(EXPRESSION)),
            _ => Ok(ExprKind::Variable(self.name(EXPRESSION)?)),
        }
    }

    /// An atom that starts with a quoted name: a function call or a variable.
    fn name_atom(&mut self) -> Result<ExprKind> {
        if matches!(self.kind_nth(1), TokenKind::LeftParen) {
            return self.function_call();
        }
        Ok(ExprKind::Variable(self.name(EXPRESSION)?))
    }

    /// `( ... )`: a pattern predicate such as `(a)-[:knows]->(b)`, or a parenthesized expression.
    fn parenthesized(&mut self) -> Result<ExprKind> {
        if let Some(kind) = self.try_pattern_predicate()? {
            return Ok(kind);
        }
        self.advance();
        let inner = self.expression()?;
        self.expect(&TokenKind::RightParen, "')'")?;
        Ok(inner.kind)
    }

    /// `[a, b, ...]` (an entry left out after a comma is NULL), or a comprehension `[x IN list WHERE p | e]` when it starts `[x IN`.
    fn list_or_comprehension(&mut self) -> Result<ExprKind> {
        self.nested(|parser| parser.list_or_comprehension_at_depth())
    }

    fn list_or_comprehension_at_depth(&mut self) -> Result<ExprKind> {
        let start = self.position;
        if self.at_comprehension_head(1) && !self.failed_speculations.contains(&start) {
            if let Some(kind) = self.list_comprehension()? {
                return Ok(kind);
            }
            self.failed_speculations.insert(start);
            self.position = start;
        }
        self.advance();
        let mut elements = Vec::new();
        if !self.at(&TokenKind::Comma) && !self.at(&TokenKind::RightBracket) {
            elements.push(self.expression()?);
        }
        while self.eat(&TokenKind::Comma) {
            elements.push(self.list_entry()?);
        }
        self.expect(&TokenKind::RightBracket, "',' or ']'")?;
        Ok(ExprKind::List(elements))
    }

    /// The entry after a comma in a list: an expression, or NULL when it is left out (Kùzu).
    fn list_entry(&mut self) -> Result<Expr> {
        if matches!(self.kind(), TokenKind::Comma | TokenKind::RightBracket) {
            let at = self.peek().span;
            let span = Span {
                end: at.start,
                ..at
            };
            return Ok(Expr {
                kind: ExprKind::Literal(Literal::Null),
                span,
            });
        }
        self.expression()
    }

    /// `{key: value, ...}` (the next token is `{`); keys are names or strings.
    pub(super) fn map_entries(&mut self) -> Result<Vec<(String, Expr)>> {
        self.nested(|parser| parser.map_entries_at_depth())
    }

    fn map_entries_at_depth(&mut self) -> Result<Vec<(String, Expr)>> {
        self.expect(&TokenKind::LeftBrace, "'{'")?;
        let mut entries = Vec::new();
        if self.eat(&TokenKind::RightBrace) {
            return Ok(entries);
        }
        loop {
            let key = match self.kind() {
                TokenKind::String(_) => self.string_literal("a key")?,
                _ => self.name("a key (a name or a string)")?,
            };
            self.expect(&TokenKind::Colon, "':' after the key")?;
            entries.push((key, self.expression()?));
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RightBrace, "',' or '}'")?;
        Ok(entries)
    }

    /// Whether the tokens `offset` places ahead read `name IN`, the head of a comprehension.
    pub(super) fn at_comprehension_head(&self, offset: usize) -> bool {
        self.peek_nth(offset).name().is_some() && self.at_keyword_nth(offset + 1, "IN")
    }
}

//! The parser: tokens to a [`Statement`]. Statements, clauses and patterns are read by
//! recursive descent, expressions by precedence climbing (Pratt). Every function here returns a
//! [`warren_common::Error::Syntax`] instead of panicking, and nesting deeper than
//! [`NESTING_DEPTH_MAX`] is a syntax error rather than a stack overflow.
//!
//! The parser is one `Parser` struct whose methods are spread over the submodules, one
//! grammar area each; `cursor` holds the token navigation they all share.

mod alter;
mod call;
mod case_expression;
mod clause;
mod comprehension;
mod copy;
mod cursor;
mod ddl;
mod expression;
mod file_source;
mod function_call;
mod hint;
mod keywords;
mod load;
mod pattern;
mod primary;
mod projection;
mod recursive;
mod statement;
mod subquery;
mod syntax_error;
mod type_name;

use std::collections::HashSet;

use warren_common::limits::{NESTING_DEPTH_MAX, QUERY_BYTES_MAX};
use warren_common::{Error, Result};

use crate::ast::Statement;
use crate::lexer::tokenize;
use crate::token::{Token, TokenKind};

/// Parses exactly one statement, optionally followed by `;`.
pub fn parse_statement(text: &str) -> Result<Statement> {
    let mut parser = Parser::new(text)?;
    let statement = parser.statement()?;
    parser.eat(&TokenKind::Semicolon);
    if !parser.at(&TokenKind::End) {
        return Err(parser.error("the end of the statement"));
    }
    Ok(statement)
}

/// Parses `;`-separated statements; empty statements are skipped.
pub fn parse_script(text: &str) -> Result<Vec<Statement>> {
    let mut parser = Parser::new(text)?;
    let mut statements = Vec::new();
    loop {
        while parser.eat(&TokenKind::Semicolon) {}
        if parser.at(&TokenKind::End) {
            return Ok(statements);
        }
        parser.statement_start = parser.position;
        statements.push(parser.statement()?);
        if !parser.eat(&TokenKind::Semicolon) && !parser.at(&TokenKind::End) {
            return Err(parser.error("';' or the end of the statement"));
        }
    }
}

/// The state of one parse: the tokens, where we are, and the context the grammar needs.
struct Parser<'a> {
    text: &'a str,
    /// Never empty: the last token is [`TokenKind::End`].
    tokens: Vec<Token>,
    /// Index of the next token to read.
    position: usize,
    /// Index of the first token of the statement being read; error messages quote from there.
    statement_start: usize,
    /// How deeply nested the current expression (or hint, or statement) is.
    depth: usize,
    /// Set once [`NESTING_DEPTH_MAX`] was hit, so that backtracking does not hide that error.
    depth_exceeded: bool,
    /// Whether `|` is bitwise OR here; it is not inside `[x IN l WHERE p | e]` or a recursive
    /// filter `(r, n | WHERE p | {..})`, where `|` separates the parts.
    bar_is_operator: bool,
    /// Token indices where a guess failed: `(` read as a pattern predicate, `[` read as a list
    /// comprehension. Each guess is made once per position, so backtracking over nested
    /// brackets stays polynomial instead of exponential.
    failed_speculations: HashSet<usize>,
    /// For each `(` token, the index of its matching `)`; 0 for other tokens and unclosed ones.
    closing_parens: Vec<usize>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Result<Self> {
        if text.len() > QUERY_BYTES_MAX {
            return Err(Error::LimitExceeded(format!(
                "the query text is {} bytes; at most {QUERY_BYTES_MAX} are accepted",
                text.len()
            )));
        }
        let tokens = tokenize(text);
        let closing_parens = match_parentheses(&tokens);
        Ok(Parser {
            text,
            tokens,
            closing_parens,
            position: 0,
            statement_start: 0,
            depth: 0,
            depth_exceeded: false,
            bar_is_operator: true,
            failed_speculations: HashSet::new(),
        })
    }

    /// Runs `read` one nesting level deeper, failing once [`NESTING_DEPTH_MAX`] is reached.
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.enter()?;
        let result = read(self);
        self.leave();
        result
    }

    /// Goes one nesting level deeper; every `enter` that succeeds is paired with a `leave`.
    fn enter(&mut self) -> Result<()> {
        if self.depth >= NESTING_DEPTH_MAX {
            self.depth_exceeded = true;
            let expected = format!("at most {NESTING_DEPTH_MAX} levels of nesting");
            return Err(self.error(&expected));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        debug_assert!(self.depth > 0, "leave without enter");
        self.depth -= 1;
    }
}

/// For each `(` token, the index of its matching `)` (0 where there is none).
fn match_parentheses(tokens: &[Token]) -> Vec<usize> {
    let mut closing = vec![0; tokens.len()];
    let mut open = Vec::new();
    for (index, token) in tokens.iter().enumerate() {
        match token.kind {
            TokenKind::LeftParen => open.push(index),
            TokenKind::RightParen => {
                if let Some(opening) = open.pop() {
                    closing[opening] = index;
                }
            }
            _ => {}
        }
    }
    closing
}

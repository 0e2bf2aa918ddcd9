//! `CALL` inside a query: `CALL f(args) [YIELD a [AS x], ...] [WHERE p]`, e.g.
//! `CALL table_info('person') RETURN *`, with Kùzu's named arguments (`decay := 0.5`). (`CALL
//! name = value` settings are statements.)

use warren_common::Result;

use super::Parser;
use crate::ast::CallClause;
use crate::token::TokenKind;

impl Parser<'_> {
    /// The next token is `CALL`.
    pub(super) fn call_clause(&mut self) -> Result<CallClause> {
        let start = self.position;
        self.advance();
        let name = self.name("the name of a function to call")?;
        self.expect(&TokenKind::LeftParen, "'(' and the arguments")?;
        let mut args = Vec::new();
        if !self.at(&TokenKind::RightParen) {
            args.push(self.argument()?);
            while self.eat(&TokenKind::Comma) {
                args.push(self.argument()?);
            }
        }
        self.expect(&TokenKind::RightParen, "',' or ')' to close the arguments")?;
        let yields = if self.eat_keyword("YIELD") {
            self.yield_items()?
        } else {
            Vec::new()
        };
        let where_clause = if self.eat_keyword("WHERE") {
            Some(self.expression()?)
        } else {
            None
        };
        Ok(CallClause {
            name,
            args,
            yields,
            where_clause,
            span: self.span_from(start),
        })
    }

    /// `a [AS x], b, ...`
    fn yield_items(&mut self) -> Result<Vec<(String, Option<String>)>> {
        let mut items = Vec::new();
        loop {
            let column = self.name("a column to yield")?;
            let alias = if self.eat_keyword("AS") {
                Some(self.variable("a variable after AS")?)
            } else {
                None
            };
            items.push((column, alias));
            if !self.eat(&TokenKind::Comma) {
                return Ok(items);
            }
        }
    }
}

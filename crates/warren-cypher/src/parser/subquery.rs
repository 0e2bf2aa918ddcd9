//! Existential and counting subqueries: `EXISTS { MATCH ... }`, `COUNT { MATCH ... }`, and the
//! pattern predicate `(a)-[:knows]->(b)` in an expression, which Kùzu reads as an EXISTS.

use warren_common::Result;

use super::Parser;
use crate::ast::{ExprKind, Subquery};
use crate::token::TokenKind;

impl Parser<'_> {
    /// `EXISTS { MATCH pattern [WHERE p] [HINT h] }` or the same with `COUNT`.
    pub(super) fn subquery_expression(&mut self) -> Result<ExprKind> {
        self.nested(|parser| parser.subquery_at_depth())
    }

    fn subquery_at_depth(&mut self) -> Result<ExprKind> {
        let is_count = self.at_keyword("COUNT");
        self.advance();
        self.expect(&TokenKind::LeftBrace, "'{'")?;
        self.expect_keyword("MATCH", "MATCH")?;
        let (patterns, where_clause, hint) = self.match_body()?;
        self.expect(&TokenKind::RightBrace, "'}' to close the subquery")?;
        let subquery = Box::new(Subquery {
            patterns,
            where_clause,
            hint,
        });
        Ok(if is_count {
            ExprKind::CountSubquery(subquery)
        } else {
            ExprKind::Exists(subquery)
        })
    }

    /// At `(`: reads a relationship pattern used as a predicate, if one is here. Gives `None`,
    /// with nothing consumed, when the parenthesis opens an ordinary expression.
    pub(super) fn try_pattern_predicate(&mut self) -> Result<Option<ExprKind>> {
        let start = self.position;
        if self.failed_speculations.contains(&start) || !self.arrow_follows_parenthesis() {
            return Ok(None);
        }
        match self.nested(|parser| parser.pattern_part()) {
            Ok(part) if !part.hops.is_empty() => {
                let subquery = Subquery {
                    patterns: vec![part],
                    where_clause: None,
                    hint: None,
                };
                Ok(Some(ExprKind::Exists(Box::new(subquery))))
            }
            Err(error) if self.depth_exceeded => Err(error),
            _ => {
                self.failed_speculations.insert(start);
                self.position = start;
                Ok(None)
            }
        }
    }

    /// Whether the parenthesis at the next token is closed and followed by `-` or `<-`.
    fn arrow_follows_parenthesis(&self) -> bool {
        match self.closing_parens.get(self.position) {
            Some(&close) if close > self.position => self.at_arrow_start(close + 1 - self.position),
            _ => false,
        }
    }

    /// Whether the tokens `offset` places ahead start a relationship: `-` or `<-`.
    pub(super) fn at_arrow_start(&self, offset: usize) -> bool {
        match self.kind_nth(offset) {
            TokenKind::Minus => true,
            TokenKind::Less => self.kind_nth(offset + 1) == &TokenKind::Minus,
            _ => false,
        }
    }
}

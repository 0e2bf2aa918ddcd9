//! The forms that bind a variable over a list: list comprehensions `[x IN l WHERE p | e]` and
//! quantifiers `ANY/ALL/NONE/SINGLE(x IN l WHERE p)`.

use warren_common::Result;

use super::Parser;
use crate::ast::{ExprKind, Quantifier};
use crate::token::TokenKind;

impl Parser<'_> {
    /// `[x IN list [WHERE p] [| e]]`. Gives `None` (having read some tokens) when the text turns
    /// out to be a list literal such as `[x IN l, y]`; the caller then rewinds.
    pub(super) fn list_comprehension(&mut self) -> Result<Option<ExprKind>> {
        self.expect(&TokenKind::LeftBracket, "'['")?;
        let variable = self.variable("a variable")?;
        self.expect_keyword("IN", "IN")?;
        let list = self.expression_before_bar()?;
        if !matches!(self.kind(), TokenKind::RightBracket | TokenKind::Bar)
            && !self.at_keyword("WHERE")
        {
            return Ok(None);
        }
        let where_clause = if self.eat_keyword("WHERE") {
            Some(Box::new(self.expression_before_bar()?))
        } else {
            None
        };
        let map = if self.eat(&TokenKind::Bar) {
            Some(Box::new(self.expression()?))
        } else {
            None
        };
        self.expect(
            &TokenKind::RightBracket,
            "']' to close the list comprehension",
        )?;
        Ok(Some(ExprKind::ListComprehension {
            variable,
            list: Box::new(list),
            where_clause,
            map,
        }))
    }

    /// `ANY(x IN list WHERE predicate)` and its siblings; the next token is the keyword.
    pub(super) fn quantifier(&mut self) -> Result<ExprKind> {
        let kind = match self.name("a quantifier")?.to_ascii_uppercase().as_str() {
            "ANY" => Quantifier::Any,
            "ALL" => Quantifier::All,
            "NONE" => Quantifier::None,
            _ => Quantifier::Single,
        };
        self.expect(&TokenKind::LeftParen, "'('")?;
        let variable = self.variable("a variable")?;
        self.expect_keyword("IN", "IN")?;
        let list = Box::new(self.expression()?);
        self.expect_keyword("WHERE", "WHERE and a predicate")?;
        let predicate = Box::new(self.expression()?);
        self.expect(&TokenKind::RightParen, "')' to close the quantifier")?;
        Ok(ExprKind::Quantifier {
            kind,
            variable,
            list,
            predicate,
        })
    }
}

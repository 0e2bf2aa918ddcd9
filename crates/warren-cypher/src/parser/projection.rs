//! The body shared by WITH and RETURN: `[DISTINCT] * | item [AS alias], ...
//! [ORDER BY e [ASC|DESC], ...] [SKIP e] [LIMIT e]`, plus `[WHERE p]` after WITH.

use warren_common::Result;

use super::Parser;
use crate::ast::{ProjectionClause, ProjectionItem, SortItem};
use crate::token::TokenKind;

impl Parser<'_> {
    /// The next token is `WITH` (`is_with`) or `RETURN`.
    pub(super) fn projection(&mut self, is_with: bool) -> Result<ProjectionClause> {
        let start = self.position;
        self.advance();
        let distinct = self.eat_keyword("DISTINCT");
        let star = self.eat(&TokenKind::Star);
        let mut items = Vec::new();
        if !star || self.eat(&TokenKind::Comma) {
            items = self.projection_items()?;
        }
        let order_by = self.order_by()?;
        let skip = if self.eat_keyword("SKIP") {
            Some(self.expression()?)
        } else {
            None
        };
        let limit = if self.eat_keyword("LIMIT") {
            Some(self.expression()?)
        } else {
            None
        };
        let where_clause = if is_with && self.eat_keyword("WHERE") {
            Some(self.expression()?)
        } else {
            None
        };
        let span = self.span_from(start);
        Ok(ProjectionClause {
            distinct,
            star,
            items,
            order_by,
            skip,
            limit,
            where_clause,
            span,
        })
    }

    fn projection_items(&mut self) -> Result<Vec<ProjectionItem>> {
        let mut items = vec![self.projection_item()?];
        while self.eat(&TokenKind::Comma) {
            items.push(self.projection_item()?);
        }
        Ok(items)
    }

    /// `expr [AS alias]`; `text` is the expression as written (Kùzu's column name).
    fn projection_item(&mut self) -> Result<ProjectionItem> {
        let start = self.position;
        let expr = self.expression()?;
        let text = self.text_from(start);
        let alias = if self.eat_keyword("AS") {
            Some(self.name("an alias after AS")?)
        } else {
            None
        };
        Ok(ProjectionItem { expr, alias, text })
    }

    /// `ORDER BY e [ASC|ASCENDING|DESC|DESCENDING], ...`, or nothing.
    fn order_by(&mut self) -> Result<Vec<SortItem>> {
        let mut items = Vec::new();
        if !self.eat_keyword("ORDER") {
            return Ok(items);
        }
        self.expect_keyword("BY", "BY after ORDER")?;
        loop {
            let expr = self.expression()?;
            let descending = self.eat_keyword("DESC") || self.eat_keyword("DESCENDING");
            if !descending && !self.eat_keyword("ASC") {
                self.eat_keyword("ASCENDING");
            }
            items.push(SortItem { expr, descending });
            if !self.eat(&TokenKind::Comma) {
                return Ok(items);
            }
        }
    }
}

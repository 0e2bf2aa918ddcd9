//! The clauses of a query other than WITH/RETURN: MATCH, OPTIONAL MATCH, UNWIND, CREATE,
//! MERGE, SET, DELETE, and the dispatch to CALL and LOAD FROM.

use warren_common::Result;

use super::Parser;
use crate::ast::{Clause, Expr, JoinHint, MatchClause, PatternPart, SetItem};
use crate::token::TokenKind;

impl Parser<'_> {
    /// The clause at the next token, or `None` if no clause starts here.
    pub(super) fn clause(&mut self) -> Result<Option<Clause>> {
        let start = self.position;
        let Some(word) = self.clause_keyword() else {
            return Ok(None);
        };
        let clause = match word {
            "MATCH" | "OPTIONAL" => Clause::Match(self.match_clause()?),
            "UNWIND" => self.unwind()?,
            "WITH" => Clause::With(self.projection(true)?),
            "RETURN" => Clause::Return(self.projection(false)?),
            "CREATE" => self.create()?,
            "MERGE" => self.merge()?,
            "SET" => self.set_clause()?,
            "DELETE" | "DETACH" => self.delete()?,
            "CALL" => Clause::Call(self.call_clause()?),
            _ => Clause::LoadFrom(self.load_from()?),
        };
        debug_assert!(self.position > start, "a clause consumes its keyword");
        Ok(Some(clause))
    }

    /// The upper-cased keyword of the clause at the next token, if one starts here.
    fn clause_keyword(&self) -> Option<&'static str> {
        const KEYWORDS: [&str; 12] = [
            "MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CREATE", "MERGE", "SET", "DELETE",
            "DETACH", "CALL", "LOAD",
        ];
        KEYWORDS
            .into_iter()
            .find(|keyword| self.at_keyword(keyword))
    }

    /// `[OPTIONAL] MATCH patterns [WHERE p] [HINT h]` (WHERE and HINT in either order).
    fn match_clause(&mut self) -> Result<MatchClause> {
        let start = self.position;
        let optional = self.eat_keyword("OPTIONAL");
        self.expect_keyword("MATCH", "MATCH after OPTIONAL")?;
        let (patterns, where_clause, hint) = self.match_body()?;
        Ok(MatchClause {
            optional,
            patterns,
            where_clause,
            hint,
            span: self.span_from(start),
        })
    }

    /// What follows MATCH, here and in EXISTS/COUNT subqueries.
    pub(super) fn match_body(
        &mut self,
    ) -> Result<(Vec<PatternPart>, Option<Expr>, Option<JoinHint>)> {
        let patterns = self.pattern_list()?;
        let mut hint = self.optional_hint()?;
        let where_clause = if self.eat_keyword("WHERE") {
            Some(self.expression()?)
        } else {
            None
        };
        if hint.is_none() {
            hint = self.optional_hint()?;
        }
        Ok((patterns, where_clause, hint))
    }

    fn optional_hint(&mut self) -> Result<Option<JoinHint>> {
        if self.eat_keyword("HINT") {
            return Ok(Some(self.join_hint()?));
        }
        Ok(None)
    }

    /// `UNWIND expr AS name`
    fn unwind(&mut self) -> Result<Clause> {
        let start = self.position;
        self.advance();
        let expr = self.expression()?;
        self.expect_keyword("AS", "AS and a variable")?;
        let alias = self.variable("a variable after AS")?;
        Ok(Clause::Unwind {
            expr,
            alias,
            span: self.span_from(start),
        })
    }

    /// `CREATE pattern, ...`
    fn create(&mut self) -> Result<Clause> {
        let start = self.position;
        self.advance();
        let patterns = self.pattern_list()?;
        Ok(Clause::Create {
            patterns,
            span: self.span_from(start),
        })
    }

    /// `MERGE pattern, ... [ON CREATE SET ...] [ON MATCH SET ...]`, the ON parts in any order.
    fn merge(&mut self) -> Result<Clause> {
        let start = self.position;
        self.advance();
        let patterns = self.pattern_list()?;
        let mut on_create = Vec::new();
        let mut on_match = Vec::new();
        while self.eat_keyword("ON") {
            let target = if self.eat_keyword("CREATE") {
                &mut on_create
            } else if self.eat_keyword("MATCH") {
                &mut on_match
            } else {
                return Err(self.error("CREATE or MATCH after ON"));
            };
            self.expect_keyword("SET", "SET")?;
            target.extend(self.set_items()?);
        }
        Ok(Clause::Merge {
            patterns,
            on_create,
            on_match,
            span: self.span_from(start),
        })
    }

    /// `SET item, ...`
    fn set_clause(&mut self) -> Result<Clause> {
        let start = self.position;
        self.advance();
        let items = self.set_items()?;
        Ok(Clause::Set {
            items,
            span: self.span_from(start),
        })
    }

    fn set_items(&mut self) -> Result<Vec<SetItem>> {
        let mut items = vec![self.set_item()?];
        while self.eat(&TokenKind::Comma) {
            items.push(self.set_item()?);
        }
        Ok(items)
    }

    /// `n.prop = e`, `n += {map}` or `n = {map}`.
    fn set_item(&mut self) -> Result<SetItem> {
        let is_map = self.at_variable()
            && matches!(self.kind_nth(1), TokenKind::PlusEquals | TokenKind::Equals);
        if is_map {
            let variable = self.variable("a variable")?;
            let replace = self.advance().kind == TokenKind::Equals;
            let value = self.expression()?;
            return Ok(SetItem::Map {
                variable,
                value,
                replace,
            });
        }
        let target = self.expression_before_comparison()?;
        self.expect(&TokenKind::Equals, "'=' and the new value")?;
        let value = self.expression()?;
        Ok(SetItem::Property { target, value })
    }

    /// `[DETACH] DELETE e, ...`
    fn delete(&mut self) -> Result<Clause> {
        let start = self.position;
        let detach = self.eat_keyword("DETACH");
        self.expect_keyword("DELETE", "DELETE after DETACH")?;
        let mut exprs = vec![self.expression()?];
        while self.eat(&TokenKind::Comma) {
            exprs.push(self.expression()?);
        }
        Ok(Clause::Delete {
            detach,
            exprs,
            span: self.span_from(start),
        })
    }
}

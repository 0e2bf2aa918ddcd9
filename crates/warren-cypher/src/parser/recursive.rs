//! The recursive part of a relationship pattern:
//! `* [kind] [lower]..[upper] [(r, n | WHERE pred | {r.a}, {n.b})]`, where kind is one of
//! `SHORTEST`, `ALL SHORTEST`, `WSHORTEST(w)`, `ALL WSHORTEST(w)`, `TRAIL`, `ACYCLIC`, `WALK`.
//! Bounds are recorded as written; defaults are the binder's business.

use warren_common::Result;

use super::Parser;
use crate::ast::{Expr, RecursiveFilter, RecursiveKind, RecursiveSpec};
use crate::token::TokenKind;

/// Bounds as written: `(lower, upper, has_range)`.
type Bounds = (Option<i64>, Option<i64>, bool);

impl Parser<'_> {
    /// The next token is `*`.
    pub(super) fn recursive_spec(&mut self) -> Result<RecursiveSpec> {
        let start = self.position;
        self.advance();
        let kind = self.recursive_kind()?;
        let (lower, upper, has_range) = self.bounds()?;
        let filter = if self.at(&TokenKind::LeftParen) {
            Some(self.recursive_filter()?)
        } else {
            None
        };
        let span = self.span_from(start);
        Ok(RecursiveSpec {
            kind,
            lower,
            upper,
            has_range,
            filter,
            span,
        })
    }

    fn recursive_kind(&mut self) -> Result<RecursiveKind> {
        if self.eat_keyword("SHORTEST") {
            Ok(RecursiveKind::Shortest)
        } else if self.eat_keyword("TRAIL") {
            Ok(RecursiveKind::Trail)
        } else if self.eat_keyword("ACYCLIC") {
            Ok(RecursiveKind::Acyclic)
        } else if self.eat_keyword("WALK") {
            Ok(RecursiveKind::Walk)
        } else if self.eat_keyword("WSHORTEST") {
            Ok(RecursiveKind::WeightedShortest(self.weight_property()?))
        } else if self.eat_keyword("ALL") {
            self.all_kind()
        } else {
            Ok(RecursiveKind::Default)
        }
    }

    /// After `ALL`: `SHORTEST` or `WSHORTEST(w)`.
    fn all_kind(&mut self) -> Result<RecursiveKind> {
        if self.eat_keyword("SHORTEST") {
            Ok(RecursiveKind::AllShortest)
        } else if self.eat_keyword("WSHORTEST") {
            Ok(RecursiveKind::AllWeightedShortest(self.weight_property()?))
        } else {
            Err(self.error("SHORTEST or WSHORTEST after ALL"))
        }
    }

    /// `(property)` after `WSHORTEST`.
    fn weight_property(&mut self) -> Result<String> {
        self.expect(
            &TokenKind::LeftParen,
            "'(' and the weight property after WSHORTEST",
        )?;
        let property = self.name("the weight property")?;
        self.expect(&TokenKind::RightParen, "')' after the weight property")?;
        Ok(property)
    }

    /// `n`, `n..`, `..m`, `n..m`, `..` or nothing.
    fn bounds(&mut self) -> Result<Bounds> {
        let lower = self.optional_bound()?;
        if !self.eat(&TokenKind::DotDot) {
            return Ok((lower, lower, false));
        }
        let upper = self.optional_bound()?;
        Ok((lower, upper, true))
    }

    fn optional_bound(&mut self) -> Result<Option<i64>> {
        let TokenKind::Integer(value) = *self.kind() else {
            return Ok(None);
        };
        let bound = i64::try_from(value).map_err(|_| self.error("a smaller bound"))?;
        self.advance();
        Ok(Some(bound))
    }

    /// `(r, n | WHERE pred | {r.a, ...}, {n.b, ...})`; each part after the variables optional.
    fn recursive_filter(&mut self) -> Result<RecursiveFilter> {
        self.nested(|parser| parser.recursive_filter_at_depth())
    }

    fn recursive_filter_at_depth(&mut self) -> Result<RecursiveFilter> {
        let start = self.position;
        self.advance();
        let rel_variable = self.filter_variable("the relationship variable")?;
        let node_variable = if self.eat(&TokenKind::Comma) {
            self.filter_variable("the node variable")?
        } else {
            None
        };
        let mut where_clause = None;
        let mut projections = None;
        if self.eat(&TokenKind::Bar) {
            if self.eat_keyword("WHERE") {
                where_clause = Some(self.expression_before_bar()?);
                if self.eat(&TokenKind::Bar) {
                    projections = Some(self.recursive_projections()?);
                }
            } else {
                projections = Some(self.recursive_projections()?);
            }
        }
        self.expect(
            &TokenKind::RightParen,
            "'|' or ')' to close the recursive filter",
        )?;
        let (rel_projection, node_projection) = projections.unzip();
        let span = self.span_from(start);
        Ok(RecursiveFilter {
            rel_variable,
            node_variable,
            where_clause,
            rel_projection,
            node_projection,
            span,
        })
    }

    /// A variable, or `_` for none.
    fn filter_variable(&mut self, expected: &str) -> Result<Option<String>> {
        let name = self.variable(expected)?;
        Ok(if name == "_" { None } else { Some(name) })
    }

    /// `{r.a, r.b}, {n.c}`: the rel and node properties kept in the path.
    fn recursive_projections(&mut self) -> Result<(Vec<Expr>, Vec<Expr>)> {
        let rel = self.projection_set()?;
        self.expect(&TokenKind::Comma, "',' and the node properties")?;
        let node = self.projection_set()?;
        Ok((rel, node))
    }

    fn projection_set(&mut self) -> Result<Vec<Expr>> {
        self.expect(&TokenKind::LeftBrace, "'{' and the properties to keep")?;
        let mut items = Vec::new();
        if !self.eat(&TokenKind::RightBrace) {
            items.push(self.expression()?);
            while self.eat(&TokenKind::Comma) {
                items.push(self.expression()?);
            }
            self.expect(&TokenKind::RightBrace, "',' or '}'")?;
        }
        Ok(items)
    }
}

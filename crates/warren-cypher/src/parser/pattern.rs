//! Graph patterns: `p = (a:L {k: v})-[r:T|U *1..2]->(b)`, chains of node and relationship
//! patterns. Arrows are composed here from `<`, `-` and `->` tokens; the recursive part after
//! `*` lives in `recursive.rs`.

use warren_common::Result;

use super::Parser;
use crate::ast::{Direction, Expr, NodePattern, PatternPart, RecursiveSpec, RelPattern};
use crate::token::TokenKind;

impl Parser<'_> {
    /// `part, part, ...`
    pub(super) fn pattern_list(&mut self) -> Result<Vec<PatternPart>> {
        let mut parts = vec![self.pattern_part()?];
        while self.eat(&TokenKind::Comma) {
            parts.push(self.pattern_part()?);
        }
        Ok(parts)
    }

    /// `[p =] (node) (rel (node))*`
    pub(super) fn pattern_part(&mut self) -> Result<PatternPart> {
        self.nested(|parser| parser.pattern_part_at_depth())
    }

    fn pattern_part_at_depth(&mut self) -> Result<PatternPart> {
        let start = self.position;
        let path_variable = if self.kind_nth(1) == &TokenKind::Equals && self.at_variable() {
            let name = self.variable("a path variable")?;
            self.advance();
            Some(name)
        } else {
            None
        };
        let first = self.node_pattern()?;
        let mut hops = Vec::new();
        while self.at_arrow_start(0) {
            let rel = self.rel_pattern()?;
            hops.push((rel, self.node_pattern()?));
        }
        Ok(PatternPart {
            path_variable,
            start: first,
            hops,
            span: self.span_from(start),
        })
    }

    /// `( [variable] [:Label[:Label|Label...]] [{properties}] )`
    fn node_pattern(&mut self) -> Result<NodePattern> {
        self.nested(|parser| parser.node_pattern_at_depth())
    }

    fn node_pattern_at_depth(&mut self) -> Result<NodePattern> {
        let start = self.position;
        self.expect(&TokenKind::LeftParen, "a node pattern")?;
        let variable = self.optional_variable()?;
        let labels = self.labels("a node label after ':'")?;
        let properties = self.optional_properties()?;
        self.expect(&TokenKind::RightParen, "a label, a property map or ')'")?;
        Ok(NodePattern {
            variable,
            labels,
            properties,
            span: self.span_from(start),
        })
    }

    /// `-[...]->`, `<-[...]-`, `-[...]-`, or the short forms `-->`, `<--`, `--`.
    fn rel_pattern(&mut self) -> Result<RelPattern> {
        let start = self.position;
        let points_left = self.eat(&TokenKind::Less);
        self.expect(&TokenKind::Minus, "'-'")?;
        let mut rel = if self.at(&TokenKind::LeftBracket) {
            self.rel_detail()?
        } else {
            RelPattern {
                variable: None,
                labels: vec![],
                direction: Direction::Both,
                properties: vec![],
                recursive: None,
                span: self.span_from(start),
            }
        };
        let points_right = self.rel_tail()?;
        rel.direction = match (points_left, points_right) {
            (true, true) => {
                return Err(self.error_at(
                    self.position - 1,
                    "'-' (a relationship cannot point both ways)",
                ));
            }
            (true, false) => Direction::Left,
            (false, true) => Direction::Right,
            (false, false) => Direction::Both,
        };
        rel.span = self.span_from(start);
        Ok(rel)
    }

    /// The end of a relationship: `->` (true) or `-` (false).
    fn rel_tail(&mut self) -> Result<bool> {
        if self.eat(&TokenKind::Arrow) {
            return Ok(true);
        }
        self.expect(&TokenKind::Minus, "'-' or '->' to end the relationship")?;
        Ok(self.eat(&TokenKind::Greater))
    }

    /// `[ [variable] [:T|U] [*recursive] [{properties}] ]`
    fn rel_detail(&mut self) -> Result<RelPattern> {
        self.nested(|parser| parser.rel_detail_at_depth())
    }

    fn rel_detail_at_depth(&mut self) -> Result<RelPattern> {
        let start = self.position;
        self.advance();
        let variable = self.optional_variable()?;
        let labels = self.labels("a relationship type after ':'")?;
        let recursive = if self.at(&TokenKind::Star) {
            Some(self.recursive_spec()?)
        } else {
            None
        };
        let properties = self.optional_properties()?;
        self.expect(
            &TokenKind::RightBracket,
            rel_detail_expectation(&recursive, &labels),
        )?;
        let span = self.span_from(start);
        let direction = Direction::Both;
        Ok(RelPattern {
            variable,
            labels,
            direction,
            properties,
            recursive,
            span,
        })
    }

    fn optional_variable(&mut self) -> Result<Option<String>> {
        if self.at_variable() {
            return Ok(Some(self.variable("a variable")?));
        }
        Ok(None)
    }

    /// `:A:B`, `:A|B` or `:a|:b`: any of the labels. Empty when no `:` follows.
    fn labels(&mut self, expected: &str) -> Result<Vec<String>> {
        let mut labels = Vec::new();
        if !self.eat(&TokenKind::Colon) {
            return Ok(labels);
        }
        labels.push(self.name(expected)?);
        loop {
            if self.eat(&TokenKind::Bar) {
                self.eat(&TokenKind::Colon);
            } else if !self.eat(&TokenKind::Colon) {
                return Ok(labels);
            }
            labels.push(self.name(expected)?);
        }
    }

    fn optional_properties(&mut self) -> Result<Vec<(String, Expr)>> {
        if self.at(&TokenKind::LeftBrace) {
            return self.map_entries();
        }
        Ok(Vec::new())
    }
}

/// What may still come inside `[...]` after what was read, for the error message.
fn rel_detail_expectation(recursive: &Option<RecursiveSpec>, labels: &[String]) -> &'static str {
    match recursive {
        Some(spec) if spec.lower.is_none() && !spec.has_range && spec.filter.is_none() => {
            "a range such as 1..3, a property map or ']'"
        }
        Some(_) => "a property map or ']'",
        None if labels.is_empty() => "':' and a type, '*', a property map or ']'",
        None => "'|', '*', a property map or ']'",
    }
}

//! Join-order hints after MATCH: `HINT (a JOIN e) JOIN b`, `a JOIN (e JOIN b)`, and multi-way
//! joins written `a MULTI_JOIN b MULTI_JOIN c` (Kùzu) or `MULTI_JOIN(a, b, c)`.

use warren_common::Result;

use super::Parser;
use crate::ast::JoinHint;
use crate::token::TokenKind;

impl Parser<'_> {
    /// The join expression after `HINT`.
    pub(super) fn join_hint(&mut self) -> Result<JoinHint> {
        self.nested(|parser| parser.join_chain())
    }

    /// `operand ((JOIN | MULTI_JOIN) operand)*`, left to right.
    fn join_chain(&mut self) -> Result<JoinHint> {
        let mut left = self.join_operand()?;
        loop {
            if self.eat_keyword("JOIN") {
                let right = self.join_operand()?;
                left = JoinHint::Join(Box::new(left), Box::new(right));
            } else if self.eat_keyword("MULTI_JOIN") {
                let right = self.join_operand()?;
                left = match left {
                    JoinHint::MultiJoin(mut operands) => {
                        operands.push(right);
                        JoinHint::MultiJoin(operands)
                    }
                    single => JoinHint::MultiJoin(vec![single, right]),
                };
            } else {
                return Ok(left);
            }
        }
    }

    /// A variable, `(join expression)` or `MULTI_JOIN(a, b, ...)`.
    fn join_operand(&mut self) -> Result<JoinHint> {
        if self.eat(&TokenKind::LeftParen) {
            let inner = self.join_hint()?;
            self.expect(&TokenKind::RightParen, "JOIN or ')'")?;
            return Ok(inner);
        }
        if self.at_keyword("MULTI_JOIN") && self.kind_nth(1) == &TokenKind::LeftParen {
            return self.multi_join_call();
        }
        let start = self.position;
        let name = self.variable("a variable to join")?;
        Ok(JoinHint::Variable(name, self.span_from(start)))
    }

    fn multi_join_call(&mut self) -> Result<JoinHint> {
        self.advance();
        self.advance();
        let mut operands = vec![self.join_hint()?];
        while self.eat(&TokenKind::Comma) {
            operands.push(self.join_hint()?);
        }
        self.expect(&TokenKind::RightParen, "',' or ')' to close MULTI_JOIN")?;
        Ok(JoinHint::MultiJoin(operands))
    }
}

//! `CASE [operand] WHEN .. THEN .. [ELSE ..] END`.

use warren_common::Result;

use super::Parser;
use crate::ast::ExprKind;

impl Parser<'_> {
    /// The next token is `CASE`.
    pub(super) fn case_expression(&mut self) -> Result<ExprKind> {
        self.nested(|parser| parser.case_at_depth())
    }

    fn case_at_depth(&mut self) -> Result<ExprKind> {
        self.advance();
        let operand = if self.at_keyword("WHEN") {
            None
        } else {
            Some(Box::new(self.expression()?))
        };
        let mut whens = Vec::new();
        while self.eat_keyword("WHEN") {
            let condition = self.expression()?;
            self.expect_keyword("THEN", "THEN")?;
            whens.push((condition, self.expression()?));
        }
        if whens.is_empty() {
            return Err(self.error("WHEN"));
        }
        let otherwise = if self.eat_keyword("ELSE") {
            Some(Box::new(self.expression()?))
        } else {
            None
        };
        self.expect_keyword("END", "WHEN, ELSE or END")?;
        Ok(ExprKind::Case {
            operand,
            whens,
            otherwise,
        })
    }
}

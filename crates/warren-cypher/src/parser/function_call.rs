//! Function calls `f(args)`, `f(DISTINCT x)`, `count(*)`, lambda arguments `x -> e` and
//! `(x, y) -> e`, named arguments `a := e`, and `CAST(e AS TYPE)` (also Kùzu's `CAST(e, 'TYPE')`).

use warren_common::Result;

use super::Parser;
use crate::ast::{Expr, ExprKind, Literal};
use crate::token::TokenKind;

impl Parser<'_> {
    /// The next token is the function's name, followed by `(`.
    pub(super) fn function_call(&mut self) -> Result<ExprKind> {
        self.nested(|parser| parser.function_call_at_depth())
    }

    fn function_call_at_depth(&mut self) -> Result<ExprKind> {
        let name = self.name("a function name")?;
        self.expect(&TokenKind::LeftParen, "'('")?;
        if self.eat(&TokenKind::Star) {
            self.expect(&TokenKind::RightParen, "')' after '*'")?;
            return Ok(ExprKind::FunctionCall {
                name,
                distinct: false,
                star: true,
                args: vec![],
            });
        }
        let distinct = self.eat_keyword("DISTINCT");
        let mut args = Vec::new();
        if !self.at(&TokenKind::RightParen) {
            args.push(self.argument()?);
            while self.eat(&TokenKind::Comma) {
                args.push(self.argument()?);
            }
        }
        self.expect(
            &TokenKind::RightParen,
            "',' or ')' to close the function call",
        )?;
        Ok(ExprKind::FunctionCall {
            name,
            distinct,
            star: false,
            args,
        })
    }

    /// An expression, a lambda, or a named argument `name := expr`.
    pub(super) fn argument(&mut self) -> Result<Expr> {
        if let Some(count) = self.lambda_parameter_count() {
            return self.lambda(count);
        }
        let named = self.peek().name().is_some()
            && self.kind_nth(1) == &TokenKind::Colon
            && self.kind_nth(2) == &TokenKind::Equals;
        if !named {
            return self.expression();
        }
        let start = self.position;
        let name = self.name("an argument name")?;
        self.position += 2;
        let value = Box::new(self.expression()?);
        Ok(Expr {
            kind: ExprKind::NamedArgument(name, value),
            span: self.span_from(start),
        })
    }

    /// How many parameters a lambda starting here has: `x ->` or `(x, y) ->`; `None` if none.
    fn lambda_parameter_count(&self) -> Option<usize> {
        if self.peek().name().is_some() && self.kind_nth(1) == &TokenKind::Arrow {
            return Some(1);
        }
        if !self.at(&TokenKind::LeftParen) {
            return None;
        }
        let mut count = 0;
        loop {
            self.peek_nth(1 + 2 * count).name()?;
            count += 1;
            match self.kind_nth(2 * count) {
                TokenKind::Comma => continue,
                TokenKind::RightParen if self.kind_nth(2 * count + 1) == &TokenKind::Arrow => {
                    return Some(count);
                }
                _ => return None,
            }
        }
    }

    fn lambda(&mut self, parameter_count: usize) -> Result<Expr> {
        let start = self.position;
        let parenthesized = self.eat(&TokenKind::LeftParen);
        let mut params = Vec::with_capacity(parameter_count);
        for index in 0..parameter_count {
            if index > 0 {
                self.expect(&TokenKind::Comma, "','")?;
            }
            params.push(self.name("a lambda parameter")?);
        }
        if parenthesized {
            self.expect(&TokenKind::RightParen, "')'")?;
        }
        self.expect(&TokenKind::Arrow, "'->'")?;
        let body = Box::new(self.expression()?);
        Ok(Expr {
            kind: ExprKind::Lambda { params, body },
            span: self.span_from(start),
        })
    }

    /// `CAST(e AS TYPE)` or `CAST(e, 'TYPE')`; the next token is `CAST`, then `(`.
    pub(super) fn cast(&mut self) -> Result<ExprKind> {
        let start = self.position;
        self.advance();
        self.advance();
        let expr = Box::new(self.expression()?);
        if self.eat_keyword("AS") {
            let type_name = self.type_text()?;
            self.expect(&TokenKind::RightParen, "')' to close CAST")?;
            return Ok(ExprKind::Cast { expr, type_name });
        }
        self.expect(&TokenKind::Comma, "AS and a type")?;
        let target = self.expression()?;
        self.expect(&TokenKind::RightParen, "')' to close CAST")?;
        match target.kind {
            ExprKind::Literal(Literal::String(type_name)) => Ok(ExprKind::Cast { expr, type_name }),
            _ => {
                let name = self.tokens[start].name().unwrap_or("CAST").to_string();
                let args = vec![*expr, target];
                Ok(ExprKind::FunctionCall {
                    name,
                    distinct: false,
                    star: false,
                    args,
                })
            }
        }
    }
}

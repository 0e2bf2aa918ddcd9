//! Expressions by precedence climbing. From loosest to tightest: OR, XOR, AND, NOT,
//! comparison (`= <> < <= > >= =~`, not chainable, as in Kùzu), string/list/null predicates
//! (`STARTS WITH`, `ENDS WITH`, `CONTAINS`, `IN`, `IS [NOT] NULL`), `|`, `&`, `<< >>`,
//! `+ - ||`, `* / %`, `^`, unary `+ -`, then postfix property access, index and slice.
//! Operators of one level associate to the left.

use warren_common::Result;

use super::Parser;
use crate::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::token::TokenKind;

/// Binding powers: an operator binds its operands if its power is at least the caller's minimum.
const OR: u8 = 1;
const XOR: u8 = 2;
const AND: u8 = 3;
const NOT: u8 = 4;
const COMPARISON: u8 = 5;
const PREDICATE: u8 = 6;
const BIT_OR: u8 = 7;
const BIT_AND: u8 = 8;
const SHIFT: u8 = 9;
const ADDITIVE: u8 = 10;
const MULTIPLICATIVE: u8 = 11;
const POWER: u8 = 12;
const UNARY: u8 = 13;

/// An infix or postfix operator found after an operand.
#[derive(Clone, Copy)]
enum Infix {
    Binary(BinaryOp),
    IsNull { negated: bool },
}

impl Parser<'_> {
    /// A whole expression, in a context where `|` is bitwise OR.
    pub(super) fn expression(&mut self) -> Result<Expr> {
        self.expression_with_bar(true, 0)
    }

    /// A whole expression that stops at `|` (a list comprehension, a recursive filter).
    pub(super) fn expression_before_bar(&mut self) -> Result<Expr> {
        self.expression_with_bar(false, 0)
    }

    /// An expression that stops before a comparison, such as the target of `SET n.x = ...`.
    pub(super) fn expression_before_comparison(&mut self) -> Result<Expr> {
        self.expression_with_bar(true, PREDICATE)
    }

    fn expression_with_bar(&mut self, bar: bool, minimum: u8) -> Result<Expr> {
        let saved = std::mem::replace(&mut self.bar_is_operator, bar);
        let result = self.expression_above(minimum);
        self.bar_is_operator = saved;
        result
    }

    /// The expression made of operators whose binding power is at least `minimum`; one
    /// nesting level deeper than the caller. (No closures here: in unoptimized builds every
    /// frame on this path costs stack once per level.)
    fn expression_above(&mut self, minimum: u8) -> Result<Expr> {
        self.enter()?;
        let result = self.climb(minimum);
        self.leave();
        result
    }

    fn climb(&mut self, minimum: u8) -> Result<Expr> {
        let start = self.position;
        let mut left = self.prefix(minimum)?;
        let mut after_comparison = false;
        while let Some((operator, power, width)) = self.infix() {
            if power < minimum {
                break;
            }
            if power == COMPARISON && after_comparison {
                return Err(self.error("AND between two comparisons (a < b < c is not supported)"));
            }
            after_comparison = power == COMPARISON;
            self.position += width;
            let kind = match operator {
                Infix::IsNull { negated } => ExprKind::IsNull {
                    expr: Box::new(left),
                    negated,
                },
                Infix::Binary(op) => {
                    let right = self.expression_above(power + 1)?;
                    ExprKind::Binary(op, Box::new(left), Box::new(right))
                }
            };
            left = Expr {
                kind,
                span: self.span_from(start),
            };
        }
        if self.at(&TokenKind::BangEquals) && minimum <= COMPARISON {
            return Err(self.error("'<>' for inequality ('!=' is not Cypher)"));
        }
        Ok(left)
    }

    /// The operator at the next token: what it is, its binding power, and how many tokens it has.
    fn infix(&self) -> Option<(Infix, u8, usize)> {
        use BinaryOp::*;
        let binary = |op, power| Some((Infix::Binary(op), power, 1));
        match self.kind() {
            TokenKind::Identifier(_) => self.keyword_infix(),
            TokenKind::Equals => binary(Eq, COMPARISON),
            TokenKind::NotEquals => binary(Ne, COMPARISON),
            TokenKind::Less => binary(Lt, COMPARISON),
            TokenKind::LessEquals => binary(Le, COMPARISON),
            TokenKind::Greater => binary(Gt, COMPARISON),
            TokenKind::GreaterEquals => binary(Ge, COMPARISON),
            TokenKind::RegexMatch => binary(RegexMatch, COMPARISON),
            TokenKind::Bar if self.bar_is_operator => binary(BitOr, BIT_OR),
            TokenKind::Ampersand => binary(BitAnd, BIT_AND),
            TokenKind::ShiftLeft => binary(ShiftLeft, SHIFT),
            TokenKind::ShiftRight => binary(ShiftRight, SHIFT),
            TokenKind::Plus => binary(Add, ADDITIVE),
            TokenKind::Minus => binary(Sub, ADDITIVE),
            TokenKind::Concat => binary(Concat, ADDITIVE),
            TokenKind::Star => binary(Mul, MULTIPLICATIVE),
            TokenKind::Slash => binary(Div, MULTIPLICATIVE),
            TokenKind::Percent => binary(Mod, MULTIPLICATIVE),
            TokenKind::Caret => binary(Pow, POWER),
            _ => None,
        }
    }

    fn keyword_infix(&self) -> Option<(Infix, u8, usize)> {
        use BinaryOp::*;
        let binary = |op, power, width| Some((Infix::Binary(op), power, width));
        let token = self.peek();
        if token.is_keyword("OR") {
            binary(Or, OR, 1)
        } else if token.is_keyword("XOR") {
            binary(Xor, XOR, 1)
        } else if token.is_keyword("AND") {
            binary(And, AND, 1)
        } else if token.is_keyword("IN") {
            binary(In, PREDICATE, 1)
        } else if token.is_keyword("CONTAINS") {
            binary(Contains, PREDICATE, 1)
        } else if token.is_keyword("STARTS") && self.at_keyword_nth(1, "WITH") {
            binary(StartsWith, PREDICATE, 2)
        } else if token.is_keyword("ENDS") && self.at_keyword_nth(1, "WITH") {
            binary(EndsWith, PREDICATE, 2)
        } else if token.is_keyword("IS") {
            self.is_null()
        } else {
            None
        }
    }

    /// `IS NULL` or `IS NOT NULL`; a lone `IS` is left for the caller to reject.
    fn is_null(&self) -> Option<(Infix, u8, usize)> {
        if self.at_keyword_nth(1, "NULL") {
            Some((Infix::IsNull { negated: false }, PREDICATE, 2))
        } else if self.at_keyword_nth(1, "NOT") && self.at_keyword_nth(2, "NULL") {
            Some((Infix::IsNull { negated: true }, PREDICATE, 3))
        } else {
            None
        }
    }

    /// A prefix operator and its operand, or an operand with its postfix operators.
    fn prefix(&mut self, minimum: u8) -> Result<Expr> {
        let start = self.position;
        let (op, operand_power) = if self.at_keyword("NOT") {
            if minimum > NOT {
                return Err(self.error("an expression (put NOT in parentheses here)"));
            }
            (UnaryOp::Not, NOT)
        } else if self.at(&TokenKind::Minus) {
            (UnaryOp::Minus, UNARY)
        } else if self.at(&TokenKind::Plus) {
            (UnaryOp::Plus, UNARY)
        } else {
            return self.postfix();
        };
        self.advance();
        let operand = self.expression_above(operand_power)?;
        Ok(Expr {
            kind: ExprKind::Unary(op, Box::new(operand)),
            span: self.span_from(start),
        })
    }

    /// An atom followed by any number of `.name`, `.*`, `[i]` and `[a..b]`.
    fn postfix(&mut self) -> Result<Expr> {
        let start = self.position;
        let mut expr = self.primary()?;
        loop {
            let kind = if self.eat(&TokenKind::Dot) {
                self.property(expr)?
            } else if self.eat(&TokenKind::LeftBracket) {
                self.subscript(expr)?
            } else {
                return Ok(expr);
            };
            expr = Expr {
                kind,
                span: self.span_from(start),
            };
        }
    }

    /// After `.`: a property name, or `*` for all properties of a variable.
    fn property(&mut self, base: Expr) -> Result<ExprKind> {
        if self.at(&TokenKind::Star) {
            if let ExprKind::Variable(variable) = base.kind {
                self.advance();
                return Ok(ExprKind::AllProperties(variable));
            }
            return Err(self.error("a property name ('.*' follows a variable only)"));
        }
        let name = self.name("a property name after '.'")?;
        Ok(ExprKind::Property(Box::new(base), name))
    }

    /// After `[`: an index `i]` or a slice `a..b]` (`:` also separates, either bound optional).
    fn subscript(&mut self, base: Expr) -> Result<ExprKind> {
        let base = Box::new(base);
        let lower = if self.at_slice_separator() {
            None
        } else {
            Some(self.expression()?)
        };
        if !self.at_slice_separator() {
            self.expect(&TokenKind::RightBracket, "']' or '..' after the index")?;
            let index = lower.ok_or_else(|| self.error("an index"))?;
            return Ok(ExprKind::Index(base, Box::new(index)));
        }
        self.advance();
        let upper = if self.at(&TokenKind::RightBracket) {
            None
        } else {
            Some(self.expression()?)
        };
        self.expect(&TokenKind::RightBracket, "']' to close the slice")?;
        Ok(ExprKind::Slice(
            base,
            lower.map(Box::new),
            upper.map(Box::new),
        ))
    }

    fn at_slice_separator(&self) -> bool {
        matches!(self.kind(), TokenKind::DotDot | TokenKind::Colon)
    }
}

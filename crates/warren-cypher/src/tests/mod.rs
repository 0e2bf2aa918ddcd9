//! Unit tests of the parser, one file per grammar area, with shared helpers: parsing that
//! panics with the error text, and a compact prefix rendering of expressions that makes
//! precedence visible (`1 + 2 * 3` renders as `(+ 1 (* 2 3))`).

mod errors;
mod expressions;
mod patterns;
mod recursive;
mod spans;
mod statements;

use crate::ast::{
    BinaryOp, Clause, Expr, ExprKind, Literal, MatchClause, PatternPart, ProjectionClause, Query,
    Statement, UnaryOp,
};
use crate::parse_statement;

pub(crate) fn statement(text: &str) -> Statement {
    parse_statement(text).unwrap_or_else(|error| panic!("{text}\n{error}"))
}

pub(crate) fn query(text: &str) -> Query {
    match statement(text) {
        Statement::Query(query) => query,
        other => panic!("{text}: not a query: {other:?}"),
    }
}

/// The clauses of a query without UNION.
pub(crate) fn clauses(text: &str) -> Vec<Clause> {
    let mut query = query(text);
    assert_eq!(query.parts.len(), 1, "{text}");
    query.parts.remove(0).clauses
}

pub(crate) fn match_clause(text: &str) -> MatchClause {
    match clauses(text).remove(0) {
        Clause::Match(clause) => clause,
        other => panic!("{text}: not a MATCH: {other:?}"),
    }
}

/// The pattern parts of `MATCH <pattern> RETURN *`.
pub(crate) fn patterns(pattern: &str) -> Vec<PatternPart> {
    match_clause(&format!("MATCH {pattern} RETURN *")).patterns
}

pub(crate) fn projection(clause: Clause) -> ProjectionClause {
    match clause {
        Clause::With(projection) | Clause::Return(projection) => projection,
        other => panic!("not WITH or RETURN: {other:?}"),
    }
}

/// The expression of `RETURN <text>`.
pub(crate) fn expr(text: &str) -> Expr {
    let mut clauses = clauses(&format!("RETURN {text}"));
    projection(clauses.remove(0)).items.remove(0).expr
}

/// `expr(text)` rendered in prefix form.
pub(crate) fn rendered(text: &str) -> String {
    render(&expr(text))
}

/// The first line of the syntax error that `text` must give (the lines after it quote the
/// statement and point at the offending token).
pub(crate) fn error_message(text: &str) -> String {
    full_error_message(text)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The whole message of the syntax error that `text` must give.
pub(crate) fn full_error_message(text: &str) -> String {
    match parse_statement(text) {
        Ok(statement) => panic!("{text}: parsed, but should not: {statement:?}"),
        Err(warren_common::Error::Syntax { message, .. }) => message,
        Err(other) => panic!("{text}: not a syntax error: {other}"),
    }
}

pub(crate) fn render(expr: &Expr) -> String {
    match &expr.kind {
        ExprKind::Literal(literal) => render_literal(literal),
        ExprKind::Parameter(name) => format!("${name}"),
        ExprKind::Variable(name) => name.clone(),
        ExprKind::Property(base, name) => format!("(. {} {name})", render(base)),
        ExprKind::AllProperties(name) => format!("{name}.*"),
        ExprKind::List(items) => format!("[{}]", render_all(items)),
        ExprKind::Map(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k}: {}", render(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        ExprKind::Index(base, index) => format!("(index {} {})", render(base), render(index)),
        ExprKind::Slice(base, low, high) => {
            format!(
                "(slice {} {} {})",
                render(base),
                render_optional(low),
                render_optional(high)
            )
        }
        ExprKind::Unary(op, operand) => format!("({} {})", unary_symbol(*op), render(operand)),
        ExprKind::Binary(op, left, right) => {
            format!(
                "({} {} {})",
                binary_symbol(*op),
                render(left),
                render(right)
            )
        }
        ExprKind::IsNull { expr, negated } => {
            let not = if *negated { "NOT " } else { "" };
            format!("(IS {not}NULL {})", render(expr))
        }
        ExprKind::FunctionCall {
            name,
            distinct,
            star,
            args,
        } => {
            let distinct = if *distinct { "DISTINCT " } else { "" };
            let args = if *star {
                "*".to_string()
            } else {
                render_all(args)
            };
            format!("{name}({distinct}{args})")
        }
        ExprKind::NamedArgument(name, value) => format!("{name} := {}", render(value)),
        ExprKind::Cast { expr, type_name } => format!("(CAST {} {type_name})", render(expr)),
        ExprKind::Lambda { params, body } => format!("(\\{} {})", params.join(","), render(body)),
        other => format!("{other:?}"),
    }
}

fn render_all(exprs: &[Expr]) -> String {
    exprs.iter().map(render).collect::<Vec<_>>().join(", ")
}

fn render_optional(expr: &Option<Box<Expr>>) -> String {
    expr.as_ref().map_or("_".to_string(), |e| render(e))
}

fn render_literal(literal: &Literal) -> String {
    match literal {
        Literal::Null => "NULL".to_string(),
        Literal::Bool(value) => value.to_string(),
        Literal::Integer(value) => value.to_string(),
        Literal::Double(value) => format!("{value:?}"),
        Literal::String(value) => format!("'{value}'"),
    }
}

fn unary_symbol(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Not => "NOT",
        UnaryOp::Minus => "-",
        UnaryOp::Plus => "+",
    }
}

fn binary_symbol(op: BinaryOp) -> &'static str {
    use BinaryOp::*;
    match op {
        Or => "OR",
        Xor => "XOR",
        And => "AND",
        Eq => "=",
        Ne => "<>",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
        Add => "+",
        Sub => "-",
        Mul => "*",
        Div => "/",
        Mod => "%",
        Pow => "^",
        In => "IN",
        StartsWith => "STARTS WITH",
        EndsWith => "ENDS WITH",
        Contains => "CONTAINS",
        RegexMatch => "=~",
        Concat => "||",
        BitAnd => "&",
        BitOr => "|",
        ShiftLeft => "<<",
        ShiftRight => ">>",
    }
}

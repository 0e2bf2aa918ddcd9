//! Cutting a script into statements at the `;` that lie outside strings, quoted names and
//! comments, without parsing: the shell uses it for multi-line input and `warren run` for files.

use crate::lexer::tokenize;
use crate::token::{Token, TokenKind};

/// One statement of a script, without its `;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementText {
    pub text: String,
    /// The 1-based line of the statement's first token.
    pub line: u32,
}

/// The statements of `text`, in order; empty statements (only `;`, blanks or comments) are
/// dropped. Text after the last `;` is a statement too.
pub fn split_statements(text: &str) -> Vec<StatementText> {
    let tokens = tokenize(text);
    let mut statements = Vec::new();
    for piece in tokens.split(|token| token.kind == TokenKind::Semicolon) {
        if let Some(statement) = statement_text(text, piece) {
            statements.push(statement);
        }
    }
    statements
}

/// The text from the first to the last token of `piece`; `None` if it has no tokens.
fn statement_text(text: &str, piece: &[Token]) -> Option<StatementText> {
    let tokens: Vec<&Token> = piece.iter().filter(|t| t.kind != TokenKind::End).collect();
    let first = tokens.first()?;
    let last = tokens.last()?;
    let text = text.get(first.span.start..last.span.end)?.to_string();
    Some(StatementText {
        text,
        line: first.span.line,
    })
}

/// Whether `text` ends, after blanks and comments, with a `;` outside strings and comments.
pub fn is_complete(text: &str) -> bool {
    let tokens = tokenize(text);
    let before_end = tokens
        .len()
        .checked_sub(2)
        .and_then(|index| tokens.get(index));
    before_end.is_some_and(|token| token.kind == TokenKind::Semicolon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_strings_names_and_comments() {
        let script =
            "MATCH (n) RETURN n;\n// a; comment\nRETURN 'a;b', `c;d`; /* ; */\n;\nRETURN 1";
        let statements = split_statements(script);
        let texts: Vec<(&str, u32)> = statements
            .iter()
            .map(|s| (s.text.as_str(), s.line))
            .collect();
        assert_eq!(
            texts,
            vec![
                ("MATCH (n) RETURN n", 1),
                ("RETURN 'a;b', `c;d`", 3),
                ("RETURN 1", 5)
            ]
        );
    }

    #[test]
    fn multi_line_statement_starts_at_its_first_token() {
        let statements = split_statements("\n\n  MATCH (n)\n  RETURN n;");
        assert_eq!(statements.len(), 1);
        assert_eq!(statements[0].line, 3);
        assert_eq!(statements[0].text, "MATCH (n)\n  RETURN n");
    }

    #[test]
    fn completeness() {
        assert!(is_complete("RETURN 1;"));
        assert!(is_complete("RETURN 1; // done\n  "));
        assert!(is_complete("RETURN 1; /* done */"));
        assert!(!is_complete("RETURN 1"));
        assert!(!is_complete("RETURN ';"));
        assert!(!is_complete("RETURN 1; /* open"));
        assert!(!is_complete("RETURN 1 // ;"));
        assert!(!is_complete(""));
        assert!(!is_complete("RETURN `;"));
    }
}

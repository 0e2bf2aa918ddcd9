//! Schema statements: `CREATE NODE TABLE`, `CREATE REL TABLE` and `DROP TABLE`, and the
//! property definitions that `ALTER TABLE ... ADD` shares.

use warren_common::Result;

use super::Parser;
use crate::ast::{CreateNodeTable, CreateRelTable, PropertyDefinition, Statement};
use crate::token::TokenKind;

const MULTIPLICITIES: [&str; 4] = ["MANY_MANY", "MANY_ONE", "ONE_MANY", "ONE_ONE"];

impl Parser<'_> {
    /// Whether the next tokens read `CREATE NODE TABLE` or `CREATE REL TABLE`.
    pub(super) fn at_create_table(&self) -> bool {
        self.at_keyword("CREATE")
            && (self.at_keyword_nth(1, "NODE") || self.at_keyword_nth(1, "REL"))
            && self.at_keyword_nth(2, "TABLE")
    }

    /// `CREATE NODE|REL TABLE ...`; the next tokens are those three.
    pub(super) fn create_table(&mut self) -> Result<Statement> {
        let start = self.position;
        self.advance();
        let is_node = self.advance().is_keyword("NODE");
        self.advance();
        let if_not_exists = self.if_exists_clause(true)?;
        let name = self.name("a table name")?;
        self.expect(&TokenKind::LeftParen, "'(' and the table's definition")?;
        if is_node {
            self.node_table(start, name, if_not_exists)
                .map(Statement::CreateNodeTable)
        } else {
            self.rel_table(start, name, if_not_exists)
                .map(Statement::CreateRelTable)
        }
    }

    /// `IF NOT EXISTS` (`negated`) or `IF EXISTS`; false when absent.
    pub(super) fn if_exists_clause(&mut self, negated: bool) -> Result<bool> {
        if !self.eat_keyword("IF") {
            return Ok(false);
        }
        if negated {
            self.expect_keyword("NOT", "NOT EXISTS after IF")?;
        }
        self.expect_keyword("EXISTS", "EXISTS after IF")?;
        Ok(true)
    }

    /// After `(`: `name TYPE [DEFAULT e] [PRIMARY KEY], ..., [PRIMARY KEY (name)])`.
    fn node_table(
        &mut self,
        start: usize,
        name: String,
        if_not_exists: bool,
    ) -> Result<CreateNodeTable> {
        let mut properties = Vec::new();
        let mut primary_key = None;
        loop {
            let key = if self.at_keyword("PRIMARY") {
                self.primary_key_clause()?
            } else {
                let definition = self.property_definition()?;
                let inline = self.eat_primary_key()?.then(|| definition.name.clone());
                properties.push(definition);
                inline
            };
            if let Some(key) = key {
                if primary_key.replace(key).is_some() {
                    return Err(self.error_at(self.position - 1, "a single PRIMARY KEY"));
                }
            }
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(
            &TokenKind::RightParen,
            "',' or ')' to close the table definition",
        )?;
        let span = self.span_from(start);
        Ok(CreateNodeTable {
            name,
            if_not_exists,
            properties,
            primary_key,
            span,
        })
    }

    /// `PRIMARY KEY (name)`
    fn primary_key_clause(&mut self) -> Result<Option<String>> {
        self.eat_primary_key()?;
        self.expect(&TokenKind::LeftParen, "'(' and the key's name")?;
        let key = self.name("the primary key's name")?;
        self.expect(&TokenKind::RightParen, "')'")?;
        Ok(Some(key))
    }

    fn eat_primary_key(&mut self) -> Result<bool> {
        if !self.eat_keyword("PRIMARY") {
            return Ok(false);
        }
        self.expect_keyword("KEY", "KEY after PRIMARY")?;
        Ok(true)
    }

    /// After `(`: `FROM a TO b, ..., name TYPE, ..., [MANY_ONE|...])`.
    fn rel_table(
        &mut self,
        start: usize,
        name: String,
        if_not_exists: bool,
    ) -> Result<CreateRelTable> {
        let mut connections = Vec::new();
        let mut properties = Vec::new();
        let mut multiplicity = None;
        loop {
            if self.at_keyword("FROM") {
                connections.push(self.connection()?);
            } else if let Some(found) = self.multiplicity() {
                multiplicity = Some(found);
            } else {
                properties.push(self.property_definition()?);
            }
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(
            &TokenKind::RightParen,
            "',' or ')' to close the table definition",
        )?;
        if connections.is_empty() {
            let closing = self.position - 1;
            return Err(self.error_at(closing, "FROM a TO b in a relationship table"));
        }
        let span = self.span_from(start);
        Ok(CreateRelTable {
            name,
            if_not_exists,
            connections,
            properties,
            multiplicity,
            span,
        })
    }

    /// `FROM a TO b`
    fn connection(&mut self) -> Result<(String, String)> {
        self.advance();
        let from = self.name("the source node table")?;
        self.expect_keyword("TO", "TO and the destination node table")?;
        let to = self.name("the destination node table")?;
        Ok((from, to))
    }

    /// A multiplicity such as `MANY_ONE` (any case) standing alone as an item, upper-cased.
    fn multiplicity(&mut self) -> Option<String> {
        let word = self.peek().name()?.to_ascii_uppercase();
        let alone = matches!(self.kind_nth(1), TokenKind::Comma | TokenKind::RightParen);
        if !alone || !MULTIPLICITIES.contains(&word.as_str()) {
            return None;
        }
        self.advance();
        Some(word)
    }

    /// `name TYPE [DEFAULT expr]`
    pub(super) fn property_definition(&mut self) -> Result<PropertyDefinition> {
        let start = self.position;
        let name = self.name("a property name")?;
        let type_name = self.type_text()?;
        let default = if self.eat_keyword("DEFAULT") {
            Some(self.expression()?)
        } else {
            None
        };
        Ok(PropertyDefinition {
            name,
            type_name,
            default,
            span: self.span_from(start),
        })
    }

    /// `DROP TABLE [IF EXISTS] name`; the next token is `DROP`.
    pub(super) fn drop_table(&mut self) -> Result<Statement> {
        self.advance();
        self.expect_keyword("TABLE", "TABLE after DROP")?;
        let if_exists = self.if_exists_clause(false)?;
        let name = self.name("a table name")?;
        Ok(Statement::DropTable { name, if_exists })
    }
}

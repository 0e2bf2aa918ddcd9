//! `ALTER TABLE name action`: add, drop or rename a property, or rename the table.

use warren_common::Result;

use super::Parser;
use crate::ast::{AlterAction, Statement};

impl Parser<'_> {
    /// The next token is `ALTER`.
    pub(super) fn alter_table(&mut self) -> Result<Statement> {
        let start = self.position;
        self.advance();
        self.expect_keyword("TABLE", "TABLE after ALTER")?;
        let table = self.name("a table name")?;
        let action = if self.eat_keyword("ADD") {
            let if_not_exists = self.if_exists_clause(true)?;
            let property = self.property_definition()?;
            AlterAction::AddProperty {
                property,
                if_not_exists,
            }
        } else if self.eat_keyword("DROP") {
            let if_exists = self.if_exists_clause(false)?;
            let name = self.name("the property to drop")?;
            AlterAction::DropProperty { name, if_exists }
        } else if self.eat_keyword("RENAME") {
            self.rename()?
        } else {
            return Err(self.error("ADD, DROP or RENAME"));
        };
        Ok(Statement::AlterTable {
            table,
            action,
            span: self.span_from(start),
        })
    }

    /// After `RENAME`: `TO new_name` or `old_name TO new_name`.
    fn rename(&mut self) -> Result<AlterAction> {
        if self.eat_keyword("TO") {
            return Ok(AlterAction::RenameTable(self.name("the new table name")?));
        }
        let from = self.name("TO or the property to rename")?;
        self.expect_keyword("TO", "TO and the new name")?;
        let to = self.name("the new property name")?;
        Ok(AlterAction::RenameProperty { from, to })
    }
}

//! The variables visible at a point of a query: their names, slots and what they hold.

use warren_common::types::LogicalType;
use warren_common::TableId;

#[derive(Clone, Debug, PartialEq)]
pub enum VariableKind {
    /// A node of one of `tables`.
    Node { tables: Vec<TableId> },
    /// A rel of one of the rel pairs `pairs`.
    Rel { pairs: Vec<TableId> },
    /// A recursive rel over `pairs`; `weighted` when it has a cost.
    RecursiveRel { pairs: Vec<TableId>, weighted: bool },
    /// A named path.
    Path,
    /// Any other value.
    Value(LogicalType),
}

impl VariableKind {
    pub fn logical_type(&self) -> LogicalType {
        match self {
            VariableKind::Node { .. } => LogicalType::Node,
            VariableKind::Rel { .. } => LogicalType::Rel,
            VariableKind::RecursiveRel { .. } | VariableKind::Path => LogicalType::RecursiveRel,
            VariableKind::Value(ty) => ty.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub name: String,
    pub slot: usize,
    pub kind: VariableKind,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    variables: Vec<Variable>,
}

impl Scope {
    pub fn get(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().rev().find(|v| v.name == name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Adds or replaces a variable.
    pub fn insert(&mut self, variable: Variable) {
        self.variables.retain(|v| v.name != variable.name);
        self.variables.push(variable);
    }

    /// Variables in the order they were introduced.
    pub fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// Whether a name was made up for an anonymous pattern element.
    pub fn is_anonymous(name: &str) -> bool {
        name.starts_with('\0')
    }
}

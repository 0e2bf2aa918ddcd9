//! Binding updating clauses: CREATE (nodes, then rels between bound nodes), MERGE
//! (match-or-create of one pattern), SET of properties, and [DETACH] DELETE.

use warren_common::types::LogicalType;
use warren_common::{Error, Result, TableId};
use warren_cypher::ast::{self, Direction as AstDirection, ExprKind};

use super::scope::{Scope, Variable, VariableKind};
use super::Binder;
use crate::expr::Expr;
use crate::plan::{CreateNode, CreateRel, MergePlan, Plan, SetItem};

/// Nodes and rels a CREATE or MERGE pattern makes.
struct Creation {
    nodes: Vec<CreateNode>,
    rels: Vec<CreateRel>,
    bound_slots: Vec<usize>,
}

impl Binder<'_> {
    /// The node table a CREATE node pattern names, or the only node table when it names none.
    fn create_node_table_for(
        &self,
        pattern: &ast::NodePattern,
    ) -> Result<warren_storage::NodeTableSchema> {
        let name = pattern.variable.as_deref().unwrap_or("");
        let multiple = || {
            Error::binder(format!(
                "Create node {name} with multiple node labels is not supported."
            ))
        };
        match pattern.labels.as_slice() {
            [label] => self
                .catalog
                .node_table(label)
                .cloned()
                .ok_or_else(|| Error::binder(format!("Table {label} does not exist."))),
            [] => match self.catalog.node_tables() {
                [only] => Ok(only.clone()),
                _ => Err(multiple()),
            },
            _ => Err(multiple()),
        }
    }

    /// The rel table a CREATE rel pattern names, or the only rel table when it names none.
    fn create_rel_table_for(
        &self,
        pattern: &ast::RelPattern,
        name: &str,
    ) -> Result<warren_storage::RelTableSchema> {
        let multiple = || {
            Error::binder(format!(
                "Create rel {name} with multiple rel labels is not supported."
            ))
        };
        match pattern.labels.as_slice() {
            [label] => self
                .catalog
                .rel_table(label)
                .cloned()
                .ok_or_else(|| Error::binder(format!("Table {label} does not exist."))),
            [] => match self.catalog.rel_tables() {
                [only] => Ok(only.clone()),
                _ => Err(multiple()),
            },
            _ => Err(multiple()),
        }
    }

    fn bind_property_assignments(
        &mut self,
        properties: &[(String, ast::Expr)],
        schema: &[warren_storage::Property],
        table_name: &str,
        scope: &Scope,
    ) -> Result<Vec<(usize, Expr)>> {
        let mut assignments = Vec::with_capacity(properties.len());
        for (name, value) in properties {
            let index = schema
                .iter()
                .position(|p| p.name.eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    Error::binder(format!("Cannot find property {name} for {table_name}."))
                })?;
            let (expr, _) = self.bind_expr(value, scope)?;
            let ty = schema[index].ty.clone();
            let expr = if ty == LogicalType::Serial {
                expr
            } else {
                Expr::Cast {
                    expr: Box::new(expr),
                    ty,
                }
            };
            assignments.push((index, expr));
        }
        Ok(assignments)
    }

    fn creation(&mut self, patterns: &[ast::PatternPart], scope: &mut Scope) -> Result<Creation> {
        let mut creation = Creation {
            nodes: Vec::new(),
            rels: Vec::new(),
            bound_slots: Vec::new(),
        };
        for part in patterns {
            let mut left = self.create_node(&part.start, scope, &mut creation)?;
            for (rel, node) in &part.hops {
                let right = self.create_node(node, scope, &mut creation)?;
                self.create_rel(rel, left, right, scope, &mut creation)?;
                left = right;
            }
        }
        Ok(creation)
    }

    fn create_node(
        &mut self,
        pattern: &ast::NodePattern,
        scope: &mut Scope,
        creation: &mut Creation,
    ) -> Result<usize> {
        if let Some(name) = &pattern.variable {
            if let Some(variable) = scope.get(name) {
                if !matches!(variable.kind, VariableKind::Node { .. }) {
                    return Err(Error::binder(format!(
                        "Cannot bind {name} as node pattern."
                    )));
                }
                if !pattern.labels.is_empty() || !pattern.properties.is_empty() {
                    return Err(Error::binder(format!("Variable {name} already exists.")));
                }
                return Ok(variable.slot);
            }
        }
        let schema = self.create_node_table_for(pattern)?;
        let properties = self.bind_property_assignments(
            &pattern.properties,
            &schema.properties,
            &schema.name,
            scope,
        )?;
        let slot = self.new_slot();
        let name = pattern
            .variable
            .clone()
            .unwrap_or_else(|| self.anonymous_name());
        scope.insert(Variable {
            name,
            slot,
            kind: VariableKind::Node {
                tables: vec![schema.id],
            },
        });
        creation.nodes.push(CreateNode {
            table: schema.id,
            slot,
            properties,
        });
        creation.bound_slots.push(slot);
        Ok(slot)
    }

    fn create_rel(
        &mut self,
        pattern: &ast::RelPattern,
        left: usize,
        right: usize,
        scope: &mut Scope,
        creation: &mut Creation,
    ) -> Result<()> {
        let name = pattern.variable.clone().unwrap_or_default();
        if pattern.recursive.is_some() {
            return Err(Error::binder(format!(
                "Cannot create recursive rel {name}."
            )));
        }
        let schema = self.create_rel_table_for(pattern, &name)?;
        let (from, to) = match pattern.direction {
            AstDirection::Right => (left, right),
            AstDirection::Left => (right, left),
            AstDirection::Both => {
                return Err(Error::binder("Create undirected relationship is not supported. Try create 2 directed relationships instead."))
            }
        };
        let properties = self.bind_property_assignments(
            &pattern.properties,
            &schema.properties,
            &schema.name,
            scope,
        )?;
        let pairs: Vec<TableId> = schema.pairs.iter().map(|p| p.id).collect();
        let slot = match &pattern.variable {
            Some(name) => {
                if scope.contains(name) {
                    return Err(Error::binder(format!("Variable {name} already exists.")));
                }
                let slot = self.new_slot();
                scope.insert(Variable {
                    name: name.clone(),
                    slot,
                    kind: VariableKind::Rel {
                        pairs: pairs.clone(),
                    },
                });
                creation.bound_slots.push(slot);
                Some(slot)
            }
            None => None,
        };
        creation.rels.push(CreateRel {
            pairs,
            from,
            to,
            slot,
            properties,
        });
        Ok(())
    }

    pub(crate) fn bind_create(
        &mut self,
        input: Plan,
        patterns: &[ast::PatternPart],
        scope: &mut Scope,
    ) -> Result<Plan> {
        let creation = self.creation(patterns, scope)?;
        Ok(Plan::Create {
            input: Box::new(input),
            nodes: creation.nodes,
            rels: creation.rels,
        })
    }

    /// `MERGE p1, p2 ... [ON CREATE SET ...] [ON MATCH SET ...]`: the parts are matched as one
    /// pattern; where nothing matches, every part is created (nodes bound earlier are reused).
    pub(crate) fn bind_merge(
        &mut self,
        input: Plan,
        patterns: &[ast::PatternPart],
        on_create: &[ast::SetItem],
        on_match: &[ast::SetItem],
        scope: &mut Scope,
    ) -> Result<Plan> {
        let clause = ast::MatchClause {
            optional: false,
            patterns: patterns.to_vec(),
            where_clause: None,
            hint: None,
            span: patterns.first().map(|p| p.span).unwrap_or_default(),
        };
        let mut match_scope = scope.clone();
        let matcher = self.bind_match(Plan::Argument, &clause, &mut match_scope)?;
        // Creation binds the same names to the same slots as the matcher did.
        let mut create_scope = scope.clone();
        let mut creation = self.creation(patterns, &mut create_scope)?;
        for variable in match_scope.variables() {
            if let Some(created) = create_scope.get(&variable.name) {
                let (from, to) = (created.slot, variable.slot);
                for node in &mut creation.nodes {
                    if node.slot == from {
                        node.slot = to;
                    }
                }
                for rel in &mut creation.rels {
                    if rel.from == from {
                        rel.from = to;
                    }
                    if rel.to == from {
                        rel.to = to;
                    }
                    if rel.slot == Some(from) {
                        rel.slot = Some(to);
                    }
                }
            }
        }
        *scope = match_scope;
        let on_create = self.bind_set_items(on_create, scope)?;
        let on_match = self.bind_set_items(on_match, scope)?;
        let bound_slots = creation
            .bound_slots
            .iter()
            .filter_map(|s| create_scope.variables().iter().find(|v| v.slot == *s))
            .filter_map(|v| scope.get(&v.name).map(|m| m.slot))
            .collect();
        Ok(Plan::Merge {
            input: Box::new(input),
            merge: Box::new(MergePlan {
                matcher,
                create_nodes: creation.nodes,
                create_rels: creation.rels,
                on_create,
                on_match,
                bound_slots,
            }),
        })
    }

    fn bind_set_items(&mut self, items: &[ast::SetItem], scope: &Scope) -> Result<Vec<SetItem>> {
        let mut bound = Vec::with_capacity(items.len());
        for item in items {
            match item {
                ast::SetItem::Property { target, value } => {
                    let ExprKind::Property(base, name) = &target.kind else {
                        return Err(Error::binder("SET expects a property."));
                    };
                    let ExprKind::Variable(var) = &base.kind else {
                        return Err(Error::binder("SET expects a property of a node or rel."));
                    };
                    let variable = scope
                        .get(var)
                        .ok_or_else(|| Error::binder(format!("Variable {var} is not in scope.")))?
                        .clone();
                    let columns = self.set_columns(&variable, name)?;
                    let (value, _) = self.bind_expr(value, scope)?;
                    bound.push(SetItem::Property {
                        target: Expr::Slot(variable.slot),
                        columns,
                        name: name.clone(),
                        value,
                    });
                }
                ast::SetItem::Map { variable, .. } => {
                    return Err(Error::binder(format!(
                        "SET {variable} += map is not supported."
                    )));
                }
            }
        }
        Ok(bound)
    }

    fn set_columns(
        &self,
        variable: &Variable,
        name: &str,
    ) -> Result<Vec<(TableId, usize, LogicalType)>> {
        let columns: Vec<(TableId, usize, LogicalType)> = match &variable.kind {
            VariableKind::Node { tables } => tables
                .iter()
                .filter_map(|&t| {
                    let schema = self.catalog.node_table_by_id(t)?;
                    schema
                        .property(name)
                        .map(|i| (t, i, schema.properties[i].ty.clone()))
                })
                .collect(),
            VariableKind::Rel { pairs } => pairs
                .iter()
                .filter_map(|&p| {
                    let (schema, _) = self.catalog.rel_pair(p)?;
                    schema
                        .property(name)
                        .map(|i| (p, i, schema.properties[i].ty.clone()))
                })
                .collect(),
            _ => {
                return Err(Error::binder(format!(
                    "Cannot set expression {} with type VARIABLE. Expect node or rel pattern.",
                    variable.name
                )))
            }
        };
        if columns.is_empty() {
            return Err(Error::binder(format!(
                "Cannot find property {name} for {}.",
                variable.name
            )));
        }
        Ok(columns)
    }

    pub(crate) fn bind_set(
        &mut self,
        input: Plan,
        items: &[ast::SetItem],
        scope: &Scope,
    ) -> Result<Plan> {
        let items = self.bind_set_items(items, scope)?;
        Ok(Plan::SetProperties {
            input: Box::new(input),
            items,
        })
    }

    pub(crate) fn bind_delete(
        &mut self,
        input: Plan,
        detach: bool,
        exprs: &[ast::Expr],
        scope: &Scope,
    ) -> Result<Plan> {
        let mut targets = Vec::with_capacity(exprs.len());
        for expr in exprs {
            if let ExprKind::Variable(name) = &expr.kind {
                if let Some(variable) = scope.get(name) {
                    match &variable.kind {
                        VariableKind::Node { .. } => {}
                        VariableKind::Rel { .. } if detach => {
                            return Err(Error::binder("Detach delete on rel tables is not supported."))
                        }
                        VariableKind::Rel { .. } => {}
                        _ => {
                            return Err(Error::binder(format!(
                                "Cannot delete expression {name} with type VARIABLE. Expect node or rel pattern."
                            )))
                        }
                    }
                }
            }
            targets.push(self.bind_expr(expr, scope)?.0);
        }
        Ok(Plan::Delete {
            input: Box::new(input),
            targets,
            detach,
        })
    }
}

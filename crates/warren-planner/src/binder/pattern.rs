//! Planning MATCH patterns: the pattern parts become a query graph of node and rel variables;
//! labels become table ids; WHERE conjuncts and property maps are attached where their
//! variables are first bound; the graph is then walked from the most selective bound or
//! filtered node, emitting scans, expansions and recursive joins.

use std::collections::BTreeSet;
use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::{Error, Result, TableId};
use warren_cypher::ast::{self, BinaryOp, Direction as AstDirection, ExprKind};
use warren_storage::Direction;

use super::scope::{Scope, Variable, VariableKind};
use super::{Binder, DefaultSemantic};
use crate::expr::{Expr, PathPart};
use crate::plan::{Destination, Plan, RecursiveKind, RecursiveOutput, RecursivePlan, Step, Target};

/// A node of the query graph.
#[derive(Debug)]
struct QueryNode {
    name: String,
    slot: usize,
    tables: Vec<TableId>,
    /// Bound before this MATCH.
    bound: bool,
}

/// A rel of the query graph between `left` and `right` (indices into the node list).
#[derive(Debug)]
struct QueryRel {
    name: String,
    slot: usize,
    pairs: Vec<TableId>,
    direction: AstDirection,
    left: usize,
    right: usize,
    recursive: Option<RecursiveInfo>,
}

#[derive(Debug)]
struct RecursiveInfo {
    kind: RecursiveKind,
    lower: u32,
    upper: u32,
    length_slot: usize,
    cost_slot: Option<usize>,
    rel_filter: Option<(usize, Expr)>,
    node_filter: Option<(usize, Expr)>,
    node_projection: Option<warren_common::value::Projection>,
    rel_projection: Option<warren_common::value::Projection>,
}

/// A WHERE conjunct (or a property-map equality) and the slots it reads.
#[derive(Debug)]
struct Conjunct {
    expr: Expr,
    /// The slots `expr` reads, sorted and without duplicates ([`Expr::slots`]).
    slots: Vec<usize>,
}

fn split_conjuncts(expr: &ast::Expr, out: &mut Vec<ast::Expr>) {
    match &expr.kind {
        ExprKind::Binary(BinaryOp::And, left, right) => {
            split_conjuncts(left, out);
            split_conjuncts(right, out);
        }
        _ => out.push(expr.clone()),
    }
}

fn and_all(mut exprs: Vec<Expr>) -> Option<Expr> {
    let first = exprs.pop()?;
    Some(exprs.into_iter().rev().fold(first, |acc, e| {
        Expr::Binary(BinaryOp::And, Box::new(e), Box::new(acc))
    }))
}

fn display_name(name: &str) -> &str {
    if Scope::is_anonymous(name) {
        ""
    } else {
        name
    }
}

impl Binder<'_> {
    /// Plans one MATCH clause on top of `input`, adding its variables to `scope`.
    pub(crate) fn bind_match(
        &mut self,
        input: Plan,
        clause: &ast::MatchClause,
        scope: &mut Scope,
    ) -> Result<Plan> {
        Ok(self.bind_match_with_paths(input, clause, scope)?.0)
    }

    /// [`Self::bind_match`], also returning the named paths (slot and parts) the plan assigns,
    /// which an OPTIONAL MATCH assigns again over its NULL-padded rows (Kùzu builds a path
    /// from whatever parts are bound).
    pub(crate) fn bind_match_with_paths(
        &mut self,
        input: Plan,
        clause: &ast::MatchClause,
        scope: &mut Scope,
    ) -> Result<(Plan, Vec<(usize, Expr)>)> {
        let outer_bound: BTreeSet<usize> = scope.variables().iter().map(|v| v.slot).collect();
        let (nodes, rels, paths, mut conjuncts) =
            self.build_query_graph(&clause.patterns, scope)?;
        if let Some(where_clause) = &clause.where_clause {
            let mut parts = Vec::new();
            split_conjuncts(where_clause, &mut parts);
            for part in parts {
                let (expr, _) = self.bind_expr(&part, scope)?;
                let slots = expr.slots();
                conjuncts.push(Conjunct { expr, slots });
            }
        }
        let mut bound = outer_bound;
        let mut plan = input;
        let mut done_rels = vec![false; rels.len()];
        let mut done_nodes: Vec<bool> = nodes.iter().map(|n| n.bound).collect();
        loop {
            if let Some(index) = self.next_rel(&rels, &done_rels, &done_nodes) {
                plan = self.plan_rel(
                    plan,
                    &rels[index],
                    &nodes,
                    &mut done_nodes,
                    &mut bound,
                    &mut conjuncts,
                )?;
                done_rels[index] = true;
                continue;
            }
            let Some(start) = self.pick_start(&nodes, &done_nodes, &conjuncts, &bound) else {
                break;
            };
            plan = self.plan_scan(plan, &nodes[start], &mut bound, &mut conjuncts)?;
            done_nodes[start] = true;
        }
        let mut path_assignments = Vec::with_capacity(paths.len());
        for (slot, parts) in paths {
            plan = Plan::Project {
                input: Box::new(plan),
                assignments: vec![(slot, Expr::Path(parts.clone()))],
            };
            path_assignments.push((slot, Expr::Path(parts)));
            bound.insert(slot);
        }
        let rest: Vec<Expr> = std::mem::take(&mut conjuncts)
            .into_iter()
            .map(|c| c.expr)
            .collect();
        if let Some(predicate) = and_all(rest) {
            plan = Plan::Filter {
                input: Box::new(plan),
                predicate,
            };
        }
        Ok((plan, path_assignments))
    }

    /// Collects the pattern parts into nodes, rels and named paths, declares their variables in
    /// `scope`, and turns property maps into conjuncts.
    #[allow(clippy::type_complexity)]
    fn build_query_graph(
        &mut self,
        patterns: &[ast::PatternPart],
        scope: &mut Scope,
    ) -> Result<(
        Vec<QueryNode>,
        Vec<QueryRel>,
        Vec<(usize, Vec<PathPart>)>,
        Vec<Conjunct>,
    )> {
        let mut nodes: Vec<QueryNode> = Vec::new();
        let mut rels: Vec<QueryRel> = Vec::new();
        let mut paths = Vec::new();
        // Each property map with the name of its variable (declared in `scope` below).
        let mut property_maps: Vec<(String, &[(String, ast::Expr)])> = Vec::new();
        for part in patterns {
            let mut path_parts = Vec::new();
            let mut left = self.add_node(&part.start, &mut nodes, scope)?;
            property_maps.push((nodes[left].name.clone(), &part.start.properties));
            path_parts.push(PathPart::Node(nodes[left].slot));
            for (rel_pattern, node_pattern) in &part.hops {
                let right = self.add_node(node_pattern, &mut nodes, scope)?;
                property_maps.push((nodes[right].name.clone(), &node_pattern.properties));
                let rel = self.add_rel(rel_pattern, left, right, &nodes, scope)?;
                if rel.recursive.is_none() {
                    property_maps.push((rel.name.clone(), &rel_pattern.properties));
                    path_parts.push(PathPart::Rel(rel.slot));
                } else {
                    path_parts.push(PathPart::RecursiveRel(rel.slot));
                }
                path_parts.push(PathPart::Node(nodes[right].slot));
                rels.push(rel);
                left = right;
            }
            if let Some(name) = &part.path_variable {
                if scope.contains(name) {
                    return Err(Error::binder(format!("Variable {name} already exists.")));
                }
                let slot = self.new_slot();
                self.register_path_length(name, &path_parts, &rels, scope);
                scope.insert(Variable {
                    name: name.clone(),
                    slot,
                    kind: VariableKind::Path,
                });
                paths.push((slot, path_parts));
            }
        }
        self.narrow_node_tables(&mut nodes, &rels);
        let mut conjuncts = Vec::new();
        for (name, properties) in property_maps {
            let variable = scope.get(&name).expect("declared above");
            for (property, value) in properties {
                let (left, _) = self.bind_variable_property(variable, property)?;
                let (right, _) = self.bind_expr(value, scope)?;
                let expr = Expr::Binary(BinaryOp::Eq, Box::new(left), Box::new(right));
                conjuncts.push(Conjunct {
                    slots: expr.slots(),
                    expr,
                });
            }
        }
        Ok((nodes, rels, paths, conjuncts))
    }

    /// `length(p)` of a path made of one recursive rel is that rel's length slot.
    fn register_path_length(
        &mut self,
        name: &str,
        parts: &[PathPart],
        rels: &[QueryRel],
        scope: &mut Scope,
    ) {
        let recursive: Vec<&QueryRel> = parts
            .iter()
            .filter_map(|p| match p {
                PathPart::RecursiveRel(slot) => rels.iter().find(|r| r.slot == *slot),
                _ => None,
            })
            .collect();
        let single_rels = parts
            .iter()
            .filter(|p| matches!(p, PathPart::Rel(_)))
            .count();
        if let ([rel], 0) = (recursive.as_slice(), single_rels) {
            let info = rel.recursive.as_ref().expect("recursive");
            scope.insert(Variable {
                name: format!("length\0{name}"),
                slot: info.length_slot,
                kind: VariableKind::Value(LogicalType::Int64),
            });
        }
    }

    fn node_tables_for(&self, labels: &[String]) -> Result<Vec<TableId>> {
        if labels.is_empty() {
            return Ok(self.catalog.node_tables().iter().map(|t| t.id).collect());
        }
        let mut tables = Vec::new();
        for label in labels {
            match self.catalog.node_table(label) {
                Some(t) => tables.push(t.id),
                None if self.catalog.rel_table(label).is_some() => {
                    return Err(Error::binder(format!("{label} is not a NODE table.")))
                }
                None => return Err(Error::binder(format!("Table {label} does not exist."))),
            }
        }
        tables.sort_unstable();
        tables.dedup();
        Ok(tables)
    }

    fn add_node(
        &mut self,
        pattern: &ast::NodePattern,
        nodes: &mut Vec<QueryNode>,
        scope: &mut Scope,
    ) -> Result<usize> {
        let name = match &pattern.variable {
            Some(name) => name.clone(),
            None => self.anonymous_name(),
        };
        if let Some(index) = nodes.iter().position(|n| n.name == name) {
            if !pattern.labels.is_empty() {
                let tables = self.node_tables_for(&pattern.labels)?;
                nodes[index].tables.retain(|t| tables.contains(t));
            }
            return Ok(index);
        }
        if let Some(variable) = scope.get(&name) {
            let VariableKind::Node { tables } = &variable.kind else {
                return Err(Error::binder(format!(
                    "Cannot bind {name} as node pattern."
                )));
            };
            let mut tables = tables.clone();
            if !pattern.labels.is_empty() {
                let allowed = self.node_tables_for(&pattern.labels)?;
                tables.retain(|t| allowed.contains(t));
            }
            nodes.push(QueryNode {
                name,
                slot: variable.slot,
                tables,
                bound: true,
            });
            return Ok(nodes.len() - 1);
        }
        let tables = self.node_tables_for(&pattern.labels)?;
        let slot = self.new_slot();
        scope.insert(Variable {
            name: name.clone(),
            slot,
            kind: VariableKind::Node {
                tables: tables.clone(),
            },
        });
        nodes.push(QueryNode {
            name,
            slot,
            tables,
            bound: false,
        });
        Ok(nodes.len() - 1)
    }

    /// The rel pairs of the named rel tables (all when `labels` is empty).
    fn rel_pairs_for(&self, labels: &[String]) -> Result<Vec<TableId>> {
        let tables: Vec<&warren_storage::RelTableSchema> = if labels.is_empty() {
            self.catalog.rel_tables().iter().collect()
        } else {
            let mut tables = Vec::new();
            for label in labels {
                match self.catalog.rel_table(label) {
                    Some(t) => tables.push(t),
                    None if self.catalog.node_table(label).is_some() => {
                        return Err(Error::binder(format!("{label} is not a REL table.")))
                    }
                    None => return Err(Error::binder(format!("Table {label} does not exist."))),
                }
            }
            tables
        };
        let mut pairs: Vec<TableId> = tables
            .iter()
            .flat_map(|t| t.pairs.iter().map(|p| p.id))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        Ok(pairs)
    }

    fn add_rel(
        &mut self,
        pattern: &ast::RelPattern,
        left: usize,
        right: usize,
        nodes: &[QueryNode],
        scope: &mut Scope,
    ) -> Result<QueryRel> {
        let name = match &pattern.variable {
            Some(name) => name.clone(),
            None => self.anonymous_name(),
        };
        if let Some(existing) = scope.get(&name) {
            let same_name = || {
                Error::binder(format!(
                    "Bind relationship {name} to relationship with same name is not supported."
                ))
            };
            return Err(match (&existing.kind, pattern.recursive.is_some()) {
                (VariableKind::Rel { .. }, false) => same_name(),
                (VariableKind::Path | VariableKind::RecursiveRel { .. }, true) => same_name(),
                (kind, false) => Error::binder(format!(
                    "{name} has data type {} but REL was expected.",
                    kind.logical_type()
                )),
                (kind, true) => Error::binder(format!(
                    "{name} has data type {} but RECURSIVE_REL was expected.",
                    kind.logical_type()
                )),
            });
        }
        let mut pairs = self.rel_pairs_for(&pattern.labels)?;
        let slot = self.new_slot();
        let recursive = match &pattern.recursive {
            Some(spec) => {
                Some(self.bind_recursive(&name, spec, &pairs, &pattern.properties, scope)?)
            }
            None => {
                pairs.retain(|&p| {
                    self.pair_connects(
                        p,
                        pattern.direction,
                        &nodes[left].tables,
                        &nodes[right].tables,
                    )
                });
                if pairs.is_empty() && !pattern.labels.is_empty() && nodes.iter().all(|_| true) {
                    let left_labels = self.table_names(&nodes[left].tables);
                    let right_labels = self.table_names(&nodes[right].tables);
                    if !left_labels.is_empty()
                        && !right_labels.is_empty()
                        && nodes[left].tables.len() == 1
                        && nodes[right].tables.len() == 1
                    {
                        return Err(Error::binder(format!(
                            "Cannot find a valid label in {} that connects {} and {}.",
                            display_name(&name),
                            left_labels,
                            right_labels
                        )));
                    }
                }
                None
            }
        };
        let kind = match &recursive {
            Some(info) => VariableKind::RecursiveRel {
                pairs: pairs.clone(),
                weighted: info.kind.is_weighted(),
            },
            None => VariableKind::Rel {
                pairs: pairs.clone(),
            },
        };
        scope.insert(Variable {
            name: name.clone(),
            slot,
            kind,
        });
        if recursive.is_none() {
            insert_endpoints(scope, &name, pattern.direction, &nodes[left], &nodes[right]);
        }
        Ok(QueryRel {
            name,
            slot,
            pairs,
            direction: pattern.direction,
            left,
            right,
            recursive,
        })
    }

    fn table_names(&self, tables: &[TableId]) -> String {
        tables
            .iter()
            .map(|&t| self.catalog.label(t).to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether a single hop over `pair` in `direction` can connect the two node table sets.
    fn pair_connects(
        &self,
        pair: TableId,
        direction: AstDirection,
        left: &[TableId],
        right: &[TableId],
    ) -> bool {
        let Some((_, schema)) = self.catalog.rel_pair(pair) else {
            return false;
        };
        let forward = left.contains(&schema.from) && right.contains(&schema.to);
        let backward = left.contains(&schema.to) && right.contains(&schema.from);
        match direction {
            AstDirection::Right => forward,
            AstDirection::Left => backward,
            AstDirection::Both => forward || backward,
        }
    }

    /// Removes node tables that no single-hop rel of the pattern can reach.
    fn narrow_node_tables(&self, nodes: &mut [QueryNode], rels: &[QueryRel]) {
        for rel in rels.iter().filter(|r| r.recursive.is_none()) {
            let mut left_ok = BTreeSet::new();
            let mut right_ok = BTreeSet::new();
            for &pair in &rel.pairs {
                let (_, schema) = self.catalog.rel_pair(pair).expect("pair");
                if matches!(rel.direction, AstDirection::Right | AstDirection::Both) {
                    left_ok.insert(schema.from);
                    right_ok.insert(schema.to);
                }
                if matches!(rel.direction, AstDirection::Left | AstDirection::Both) {
                    left_ok.insert(schema.to);
                    right_ok.insert(schema.from);
                }
            }
            nodes[rel.left].tables.retain(|t| left_ok.contains(t));
            nodes[rel.right].tables.retain(|t| right_ok.contains(t));
        }
    }

    fn bind_recursive(
        &mut self,
        name: &str,
        spec: &ast::RecursiveSpec,
        pairs: &[TableId],
        properties: &[(String, ast::Expr)],
        scope: &mut Scope,
    ) -> Result<RecursiveInfo> {
        let kind = self.bind_recursive_kind(name, spec, pairs)?;
        let (lower, upper) = self.bind_bounds(name, spec, &kind)?;
        let length_slot = self.new_slot();
        scope.insert(Variable {
            name: format!("length\0{name}"),
            slot: length_slot,
            kind: VariableKind::Value(LogicalType::Int64),
        });
        let cost_slot = kind.is_weighted().then(|| {
            let slot = self.new_slot();
            scope.insert(Variable {
                name: format!("cost\0{name}"),
                slot,
                kind: VariableKind::Value(LogicalType::Double),
            });
            slot
        });
        let rel_slot = self.new_slot();
        let node_slot = self.new_slot();
        let all_nodes: Vec<TableId> = self.catalog.node_tables().iter().map(|t| t.id).collect();
        let rel_var = Variable {
            name: String::new(),
            slot: rel_slot,
            kind: VariableKind::Rel {
                pairs: pairs.to_vec(),
            },
        };
        let node_var = Variable {
            name: String::new(),
            slot: node_slot,
            kind: VariableKind::Node { tables: all_nodes },
        };
        let mut rel_conjuncts = Vec::new();
        let mut node_conjuncts = Vec::new();
        for (property, value) in properties {
            let (left, _) = self.bind_variable_property(&rel_var, property)?;
            let (right, _) = self.bind_expr(value, scope)?;
            rel_conjuncts.push(Expr::Binary(BinaryOp::Eq, Box::new(left), Box::new(right)));
        }
        let (mut node_projection, mut rel_projection) = (None, None);
        if let Some(filter) = &spec.filter {
            let mut inner = scope.clone();
            if let Some(r) = &filter.rel_variable {
                inner.insert(Variable {
                    name: r.clone(),
                    ..rel_var.clone()
                });
            }
            if let Some(n) = &filter.node_variable {
                inner.insert(Variable {
                    name: n.clone(),
                    ..node_var.clone()
                });
            }
            if let Some(predicate) = &filter.where_clause {
                let mut parts = Vec::new();
                split_conjuncts(predicate, &mut parts);
                for part in parts {
                    let (expr, _) = self.bind_expr(&part, &inner)?;
                    let text = crate::explain::kuzu_text(&part);
                    let slots = expr.slots();
                    let reads_rel = slots.contains(&rel_slot);
                    let reads_node = slots.contains(&node_slot);
                    match (reads_rel, reads_node) {
                        (true, true) => {
                            return Err(Error::binder(format!(
                                "Cannot evaluate {} because it depends on both {} and {}.",
                                text,
                                filter.node_variable.as_deref().unwrap_or(""),
                                filter.rel_variable.as_deref().unwrap_or("")
                            )))
                        }
                        (false, true) => node_conjuncts.push(expr),
                        _ => rel_conjuncts.push(expr),
                    }
                }
            }
            rel_projection = filter
                .rel_projection
                .as_ref()
                .map(|items| projection_names(items));
            node_projection = filter
                .node_projection
                .as_ref()
                .map(|items| projection_names(items));
        }
        Ok(RecursiveInfo {
            kind,
            lower,
            upper,
            length_slot,
            cost_slot,
            rel_filter: and_all(rel_conjuncts).map(|e| (rel_slot, e)),
            node_filter: and_all(node_conjuncts).map(|e| (node_slot, e)),
            node_projection,
            rel_projection,
        })
    }

    fn bind_recursive_kind(
        &self,
        name: &str,
        spec: &ast::RecursiveSpec,
        pairs: &[TableId],
    ) -> Result<RecursiveKind> {
        Ok(match &spec.kind {
            ast::RecursiveKind::Default => match self.settings.default_semantic {
                DefaultSemantic::Walk => RecursiveKind::Walk,
                DefaultSemantic::Trail => RecursiveKind::Trail,
                DefaultSemantic::Acyclic => RecursiveKind::Acyclic,
            },
            ast::RecursiveKind::Walk => RecursiveKind::Walk,
            ast::RecursiveKind::Trail => RecursiveKind::Trail,
            ast::RecursiveKind::Acyclic => RecursiveKind::Acyclic,
            ast::RecursiveKind::Shortest => RecursiveKind::Shortest,
            ast::RecursiveKind::AllShortest => RecursiveKind::AllShortest,
            ast::RecursiveKind::WeightedShortest(property) => RecursiveKind::WeightedShortest {
                weights: self.weight_columns(name, property, pairs)?,
            },
            ast::RecursiveKind::AllWeightedShortest(property) => {
                RecursiveKind::AllWeightedShortest {
                    weights: self.weight_columns(name, property, pairs)?,
                }
            }
        })
    }

    fn weight_columns(
        &self,
        name: &str,
        property: &str,
        pairs: &[TableId],
    ) -> Result<Vec<(TableId, usize)>> {
        let (columns, ty) = self.rel_property_columns(pairs, property);
        if columns.len() != pairs.len() {
            return Err(Error::binder(format!(
                "Cannot find property {property} for {}.",
                display_name(name)
            )));
        }
        if !ty.is_numeric() || matches!(ty, LogicalType::Int128 | LogicalType::Decimal(..)) {
            return Err(Error::binder(format!(
                "{ty} weight type is not supported for weighted shortest path."
            )));
        }
        Ok(columns)
    }

    fn bind_bounds(
        &mut self,
        name: &str,
        spec: &ast::RecursiveSpec,
        kind: &RecursiveKind,
    ) -> Result<(u32, u32)> {
        let name = display_name(name);
        let hops_max = i64::from(self.settings.hops_max);
        let (lower, upper) = match (spec.lower, spec.upper, spec.has_range) {
            (Some(n), _, false) => (n, n),
            (lower, upper, _) => (lower.unwrap_or(1), upper.unwrap_or(hops_max)),
        };
        if upper > hops_max {
            return Err(Error::binder(format!(
                "Upper bound of rel {name} exceeds maximum: {hops_max}."
            )));
        }
        if lower > upper {
            return Err(Error::binder(format!(
                "Lower bound of rel {name} is greater than upperBound."
            )));
        }
        if lower < 0 {
            return Err(Error::binder(format!(
                "Lower bound of rel {name} must be non-negative."
            )));
        }
        if (kind.is_shortest() || kind.is_weighted()) && lower != 1 {
            return Err(Error::binder(
                "Lower bound of shortest/all_shortest path must be 1.",
            ));
        }
        Ok((lower as u32, upper as u32))
    }

    /// The next rel to plan: the first in pattern order with a bound endpoint.
    fn next_rel(
        &self,
        rels: &[QueryRel],
        done_rels: &[bool],
        done_nodes: &[bool],
    ) -> Option<usize> {
        (0..rels.len())
            .find(|&i| !done_rels[i] && (done_nodes[rels[i].left] || done_nodes[rels[i].right]))
    }

    /// The unbound node to scan next: one with a primary-key equality, else one with any
    /// filter, else the first in pattern order.
    fn pick_start(
        &self,
        nodes: &[QueryNode],
        done: &[bool],
        conjuncts: &[Conjunct],
        bound: &BTreeSet<usize>,
    ) -> Option<usize> {
        let score = |node: &QueryNode| {
            let mut own = conjuncts.iter().filter(|c| {
                c.slots.contains(&node.slot)
                    && c.slots.iter().all(|s| *s == node.slot || bound.contains(s))
            });
            let Some(first) = own.next() else {
                return 0;
            };
            let is_key = |c: &Conjunct| self.key_lookup(node, &c.expr, bound).is_some();
            if is_key(first) || own.any(is_key) {
                2
            } else {
                1
            }
        };
        (0..nodes.len())
            .filter(|&i| !done[i])
            .max_by_key(|&i| (score(&nodes[i]), std::cmp::Reverse(i)))
    }

    /// If `expr` is `node.pk = e` with `e` computable from `bound`, returns `e`.
    fn key_lookup<'e>(
        &self,
        node: &QueryNode,
        expr: &'e Expr,
        bound: &BTreeSet<usize>,
    ) -> Option<&'e Expr> {
        let Expr::Binary(BinaryOp::Eq, left, right) = expr else {
            return None;
        };
        for (side, other) in [(left, right), (right, left)] {
            let Expr::Property { base, property } = side.as_ref() else {
                continue;
            };
            if **base != Expr::Slot(node.slot) || node.tables.is_empty() {
                continue;
            }
            let all_keys = node.tables.iter().all(|&t| {
                let schema = self.catalog.node_table_by_id(t).expect("table");
                property.column(t) == Some(schema.primary_key)
            });
            if all_keys && other.slots().iter().all(|s| bound.contains(s)) {
                return Some(other.as_ref());
            }
        }
        None
    }

    /// Removes and returns the conjuncts whose slots are all in `bound`.
    /// The rest keep their order; nothing is allocated when none is ready.
    fn take_ready(conjuncts: &mut Vec<Conjunct>, bound: &BTreeSet<usize>) -> Vec<Expr> {
        let mut ready = Vec::new();
        let mut index = 0;
        while index < conjuncts.len() {
            if conjuncts[index].slots.iter().all(|s| bound.contains(s)) {
                ready.push(conjuncts.remove(index).expr);
            } else {
                index += 1;
            }
        }
        ready
    }

    fn plan_scan(
        &mut self,
        input: Plan,
        node: &QueryNode,
        bound: &mut BTreeSet<usize>,
        conjuncts: &mut Vec<Conjunct>,
    ) -> Result<Plan> {
        let mut key = None;
        if let Some(index) = conjuncts.iter().position(|c| {
            c.slots.iter().all(|s| *s == node.slot || bound.contains(s))
                && self.key_lookup(node, &c.expr, bound).is_some()
        }) {
            let conjunct = conjuncts.remove(index);
            key = self.key_lookup(node, &conjunct.expr, bound).cloned();
        }
        bound.insert(node.slot);
        let filter = and_all(Self::take_ready(conjuncts, bound));
        Ok(match key {
            Some(key) => Plan::LookupNode {
                input: Box::new(input),
                tables: node.tables.clone(),
                key,
                slot: node.slot,
                filter,
            },
            None => Plan::ScanNodes {
                input: Box::new(input),
                tables: node.tables.clone(),
                slot: node.slot,
                filter,
            },
        })
    }

    fn plan_rel(
        &mut self,
        input: Plan,
        rel: &QueryRel,
        nodes: &[QueryNode],
        done_nodes: &mut [bool],
        bound: &mut BTreeSet<usize>,
        conjuncts: &mut Vec<Conjunct>,
    ) -> Result<Plan> {
        let (from, to, reversed) = if done_nodes[rel.left] {
            (&nodes[rel.left], &nodes[rel.right], false)
        } else {
            (&nodes[rel.right], &nodes[rel.left], true)
        };
        let direction = match (rel.direction, reversed) {
            (AstDirection::Both, _) => None,
            (AstDirection::Right, false) | (AstDirection::Left, true) => Some(Direction::Forward),
            _ => Some(Direction::Backward),
        };
        let steps = self.steps(&rel.pairs, direction);
        let target_bound = done_nodes[rel.right] && done_nodes[rel.left];
        let plan = match &rel.recursive {
            None => {
                let target = if target_bound {
                    Target::Check { slot: to.slot }
                } else {
                    Target::Bind {
                        slot: to.slot,
                        tables: to.tables.clone(),
                    }
                };
                Plan::Expand {
                    input: Box::new(input),
                    from: from.slot,
                    steps,
                    rel_slot: Some(rel.slot),
                    target,
                }
            }
            Some(info) => {
                let destination = if target_bound {
                    Destination::Check { slot: to.slot }
                } else {
                    let mut own = BTreeSet::new();
                    own.insert(to.slot);
                    let filter = and_all(Self::take_ready(conjuncts, &own));
                    Destination::Bind {
                        slot: to.slot,
                        tables: to.tables.clone(),
                        filter,
                    }
                };
                Plan::Recursive(Box::new(RecursivePlan {
                    input,
                    source: from.slot,
                    destination,
                    steps,
                    kind: info.kind.clone(),
                    lower: info.lower,
                    upper: info.upper,
                    rel_filter: info.rel_filter.clone(),
                    node_filter: info.node_filter.clone(),
                    node_projection: info.node_projection.clone(),
                    rel_projection: info.rel_projection.clone(),
                    reversed,
                    output: RecursiveOutput::Paths {
                        rel_slot: Some(rel.slot),
                        length_slot: Some(info.length_slot),
                        cost_slot: info.cost_slot,
                    },
                    name: display_name(&rel.name).to_string(),
                }))
            }
        };
        done_nodes[rel.left] = true;
        done_nodes[rel.right] = true;
        bound.insert(to.slot);
        bound.insert(rel.slot);
        if let Some(info) = &rel.recursive {
            bound.insert(info.length_slot);
            if let Some(cost) = info.cost_slot {
                bound.insert(cost);
            }
        }
        let ready = and_all(Self::take_ready(conjuncts, bound));
        Ok(match ready {
            Some(predicate) => Plan::Filter {
                input: Box::new(plan),
                predicate,
            },
            None => plan,
        })
    }

    /// The (pair, direction) steps of one hop; `None` means both directions.
    fn steps(&self, pairs: &[TableId], direction: Option<Direction>) -> Vec<Step> {
        let mut steps = Vec::new();
        for &pair in pairs {
            match direction {
                Some(direction) => steps.push(Step { pair, direction }),
                None => {
                    steps.push(Step {
                        pair,
                        direction: Direction::Forward,
                    });
                    steps.push(Step {
                        pair,
                        direction: Direction::Backward,
                    });
                }
            }
        }
        steps
    }
}

fn projection_names(items: &[ast::Expr]) -> warren_common::value::Projection {
    let names: Vec<Arc<str>> = items
        .iter()
        .filter_map(|item| match &item.kind {
            ExprKind::Property(_, name) => Some(Arc::from(name.as_str())),
            _ => None,
        })
        .collect();
    Arc::new(names)
}

/// Records the endpoints of rel `name` as hidden variables `start_node\0name` and
/// `end_node\0name`, which `START_NODE(name)` and `END_NODE(name)` read, as Kùzu rewrites
/// those functions to the pattern's nodes: the stored source and destination for a directed
/// pattern, the left and the right node for an undirected one.
fn insert_endpoints(
    scope: &mut Scope,
    name: &str,
    direction: AstDirection,
    left: &QueryNode,
    right: &QueryNode,
) {
    let (start, end) = match direction {
        AstDirection::Left => (right, left),
        AstDirection::Right | AstDirection::Both => (left, right),
    };
    for (function, node) in [("start_node", start), ("end_node", end)] {
        scope.insert(Variable {
            name: format!("{function}\0{name}"),
            slot: node.slot,
            kind: VariableKind::Node {
                tables: node.tables.clone(),
            },
        });
    }
}

//! Updating clauses: CREATE, MERGE, SET and DELETE. Each drains its input, applies its changes
//! through a storage editor, installs the resulting snapshot in the query context (so later
//! clauses read it), and then yields the input rows (with created variables bound).

use warren_common::value::{NodeValue, RelValue, Value};
use warren_common::{Error, InternalId, Result};
use warren_planner::expr::Expr;
use warren_planner::plan::{CreateNode, CreateRel, MergePlan, SetItem};
use warren_storage::{Editor, Snapshot};

use super::{build, row_bytes, BoxedOperator, Operator, Row};
use crate::context::ExecContext;
use crate::eval::Evaluator;

enum Action {
    Create {
        nodes: Vec<CreateNode>,
        rels: Vec<CreateRel>,
    },
    Merge {
        merge: Box<MergePlan>,
        width: usize,
    },
    Set {
        items: Vec<SetItem>,
    },
    Delete {
        targets: Vec<Expr>,
        detach: bool,
    },
}

pub struct Update {
    input: BoxedOperator,
    action: Action,
    output: Option<std::vec::IntoIter<Row>>,
}

impl Update {
    pub fn create(input: BoxedOperator, nodes: Vec<CreateNode>, rels: Vec<CreateRel>) -> Self {
        Self {
            input,
            action: Action::Create { nodes, rels },
            output: None,
        }
    }

    pub fn merge(input: BoxedOperator, merge: MergePlan, width: usize) -> Self {
        Self {
            input,
            action: Action::Merge {
                merge: Box::new(merge),
                width,
            },
            output: None,
        }
    }

    pub fn set(input: BoxedOperator, items: Vec<SetItem>) -> Self {
        Self {
            input,
            action: Action::Set { items },
            output: None,
        }
    }

    pub fn delete(input: BoxedOperator, targets: Vec<Expr>, detach: bool) -> Self {
        Self {
            input,
            action: Action::Delete { targets, detach },
            output: None,
        }
    }

    fn drain(&mut self, ctx: &ExecContext) -> Result<Vec<Row>> {
        let mut rows = Vec::new();
        while let Some(row) = self.input.next(ctx)? {
            ctx.tick()?;
            ctx.memory
                .reserve(row_bytes(&row), "updating clause input")?;
            rows.push(row);
        }
        Ok(rows)
    }

    fn run(&mut self, ctx: &ExecContext) -> Result<Vec<Row>> {
        let mut rows = self.drain(ctx)?;
        match &self.action {
            Action::Merge { merge, width } => return run_merge(merge, *width, rows, ctx),
            Action::Create { nodes, rels } => {
                let snapshot = ctx.snapshot();
                let mut editor = Editor::new(snapshot.clone());
                for row in &mut rows {
                    create(&mut editor, &snapshot, ctx, nodes, rels, row)?;
                }
                commit(editor, ctx)?;
            }
            Action::Set { items } => {
                let snapshot = ctx.snapshot();
                let mut editor = Editor::new(snapshot.clone());
                for row in &rows {
                    set(&mut editor, &snapshot, ctx, items, row)?;
                }
                commit(editor, ctx)?;
            }
            Action::Delete { targets, detach } => {
                let snapshot = ctx.snapshot();
                let mut editor = Editor::new(snapshot.clone());
                let evaluator = Evaluator::new(&snapshot, ctx);
                for row in &rows {
                    for target in targets {
                        match evaluator.eval(target, row)? {
                            Value::Node(node) => editor.delete_node(node.id, *detach)?,
                            Value::Rel(rel) => editor.delete_rel(rel.id)?,
                            Value::Null => {}
                            other => {
                                return Err(Error::runtime(format!(
                                    "Cannot delete a value of type {}.",
                                    other.logical_type()
                                )))
                            }
                        }
                    }
                }
                commit(editor, ctx)?;
            }
        }
        Ok(rows)
    }
}

impl Operator for Update {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if self.output.is_none() {
            let rows = self.run(ctx)?;
            self.output = Some(rows.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}

fn commit(editor: Editor, ctx: &ExecContext) -> Result<()> {
    if editor.is_empty() {
        return Ok(());
    }
    let (snapshot, changes) = editor.finish()?;
    ctx.install(snapshot, changes);
    Ok(())
}

fn node_of(value: &Value, what: &str) -> Result<InternalId> {
    match value {
        Value::Node(node) => Ok(node.id),
        _ => Err(Error::runtime(format!(
            "Cannot create a rel whose {what} node is NULL."
        ))),
    }
}

fn create(
    editor: &mut Editor,
    snapshot: &Snapshot,
    ctx: &ExecContext,
    nodes: &[CreateNode],
    rels: &[CreateRel],
    row: &mut Row,
) -> Result<()> {
    let evaluator = Evaluator::new(snapshot, ctx);
    for node in nodes {
        let mut assignments = Vec::with_capacity(node.properties.len());
        for (index, expr) in &node.properties {
            assignments.push((*index, evaluator.eval(expr, row)?));
        }
        let offset = editor.insert_node(node.table, assignments)?;
        row[node.slot] = Value::Node(NodeValue {
            id: InternalId::new(node.table, offset),
            projection: None,
        });
    }
    // Kùzu assigns the rels of one CREATE clause their offsets from the last one written.
    let mut created = Vec::with_capacity(rels.len());
    for rel in rels.iter().rev() {
        let from = node_of(&row[rel.from], "source")?;
        let to = node_of(&row[rel.to], "destination")?;
        let pair = rel
            .pairs
            .iter()
            .copied()
            .find(|&p| {
                let (_, schema) = editor.catalog().rel_pair(p).expect("pair");
                schema.from == from.table && schema.to == to.table
            })
            .ok_or_else(|| {
                Error::binder(format!(
                    "Cannot create a rel from {} to {}: no such FROM/TO pair.",
                    editor.catalog().label(from.table),
                    editor.catalog().label(to.table)
                ))
            })?;
        let mut assignments = Vec::with_capacity(rel.properties.len());
        for (index, expr) in &rel.properties {
            assignments.push((*index, evaluator.eval(expr, row)?));
        }
        let offset = editor.insert_rel(pair, from.offset, to.offset, assignments)?;
        created.push((rel.slot, InternalId::new(pair, offset)));
    }
    for (slot, id) in created {
        if let Some(slot) = slot {
            row[slot] = Value::Rel(RelValue {
                id,
                projection: None,
            });
        }
    }
    Ok(())
}

fn set(
    editor: &mut Editor,
    snapshot: &Snapshot,
    ctx: &ExecContext,
    items: &[SetItem],
    row: &Row,
) -> Result<()> {
    let evaluator = Evaluator::new(snapshot, ctx);
    for SetItem::Property {
        target,
        columns,
        name,
        value,
    } in items
    {
        let target = evaluator.eval(target, row)?;
        let (id, is_rel) = match &target {
            Value::Node(node) => (node.id, false),
            Value::Rel(rel) => (rel.id, true),
            Value::Null => continue,
            other => {
                return Err(Error::runtime(format!(
                    "Cannot set a property of {}.",
                    other.logical_type()
                )))
            }
        };
        let Some((_, column, ty)) = columns.iter().find(|(t, ..)| *t == id.table) else {
            return Err(Error::runtime(format!(
                "{} has no property {name}.",
                editor.catalog().label(id.table)
            )));
        };
        let value = evaluator.eval(value, row)?;
        let value = warren_common::cast::cast_value(&value, ty).map_err(Error::Conversion)?;
        if is_rel {
            editor.set_rel_property(id, *column, value);
        } else {
            editor.set_node_property(id, *column, value)?;
        }
    }
    Ok(())
}

fn run_merge(
    merge: &MergePlan,
    width: usize,
    rows: Vec<Row>,
    ctx: &ExecContext,
) -> Result<Vec<Row>> {
    let mut output = Vec::new();
    for row in rows {
        let mut matcher = build(&merge.matcher, width, Some(&row));
        let mut matches = Vec::new();
        while let Some(found) = matcher.next(ctx)? {
            matches.push(found);
        }
        if matches.is_empty() {
            let snapshot = ctx.snapshot();
            let mut editor = Editor::new(snapshot.clone());
            let mut created = row;
            for &slot in &merge.bound_slots {
                created[slot] = Value::Null;
            }
            create(
                &mut editor,
                &snapshot,
                ctx,
                &merge.create_nodes,
                &merge.create_rels,
                &mut created,
            )?;
            commit(editor, ctx)?;
            apply_sets(&merge.on_create, &created, ctx)?;
            output.push(created);
        } else {
            for found in &matches {
                apply_sets(&merge.on_match, found, ctx)?;
            }
            output.extend(matches);
        }
    }
    Ok(output)
}

fn apply_sets(items: &[SetItem], row: &Row, ctx: &ExecContext) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let snapshot = ctx.snapshot();
    let mut editor = Editor::new(snapshot.clone());
    set(&mut editor, &snapshot, ctx, items, row)?;
    commit(editor, ctx)
}

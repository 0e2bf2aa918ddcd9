//! Text forms of plans (EXPLAIN) and expressions (plan text and error messages).

use std::fmt::Write;

use warren_common::format::to_kuzu_string;
use warren_common::value::NoGraph;

use crate::expr::{Expr, InternalProperty, PathPart};
use crate::plan::{Destination, Plan, RecursiveKind, RecursiveOutput, Step, Target};

/// An expression as Kùzu prints it in messages: `LESS_THAN(+(n.ID,OFFSET(r._ID)),3)`.
pub fn kuzu_text(expr: &warren_cypher::ast::Expr) -> String {
    use warren_cypher::ast::{BinaryOp as B, ExprKind as K, Literal};
    let join = |args: &[&warren_cypher::ast::Expr]| {
        args.iter()
            .map(|a| kuzu_text(a))
            .collect::<Vec<_>>()
            .join(",")
    };
    match &expr.kind {
        K::Variable(name) => name.clone(),
        K::Property(base, name) => format!("{}.{name}", kuzu_text(base)),
        K::Literal(Literal::String(s)) => s.clone(),
        K::Literal(Literal::Null) => String::new(),
        K::Literal(Literal::Bool(b)) => if *b { "True" } else { "False" }.to_string(),
        K::Literal(Literal::Integer(i)) => i.to_string(),
        K::Literal(Literal::Double(d)) => {
            let mut out = String::new();
            warren_common::format::write_double(&mut out, *d);
            out
        }
        K::Parameter(name) => format!("${name}"),
        K::FunctionCall { name, args, .. }
            if name.eq_ignore_ascii_case("id") && args.len() == 1 =>
        {
            format!("{}._ID", kuzu_text(&args[0]))
        }
        // Kùzu's name for `count(*)`.
        K::FunctionCall { star: true, .. } => "COUNT_STAR()".to_string(),
        K::FunctionCall { name, args, .. } => {
            let args: Vec<&warren_cypher::ast::Expr> = args.iter().collect();
            format!("{}({})", name.to_ascii_uppercase(), join(&args))
        }
        K::Unary(warren_cypher::ast::UnaryOp::Not, inner) => format!("NOT({})", kuzu_text(inner)),
        K::Unary(warren_cypher::ast::UnaryOp::Minus, inner) => format!("-({})", kuzu_text(inner)),
        K::Binary(op, a, b) => {
            let name = match op {
                B::Eq => "EQUALS",
                B::Ne => "NOT_EQUALS",
                B::Lt => "LESS_THAN",
                B::Le => "LESS_THAN_EQUALS",
                B::Gt => "GREATER_THAN",
                B::Ge => "GREATER_THAN_EQUALS",
                B::And => "AND",
                B::Or => "OR",
                B::Xor => "XOR",
                B::Add => "+",
                B::Sub => "-",
                B::Mul => "*",
                B::Div => "/",
                B::Mod => "%",
                B::Pow => "^",
                B::In => "IN",
                B::StartsWith => "STARTS_WITH",
                B::EndsWith => "ENDS_WITH",
                B::Contains => "CONTAINS",
                B::RegexMatch => "REGEXP_FULL_MATCH",
                B::Concat => "||",
                B::BitAnd => "&",
                B::BitOr => "|",
                B::ShiftLeft => "<<",
                B::ShiftRight => ">>",
            };
            format!("{name}({})", join(&[a, b]))
        }
        K::IsNull { expr, negated } => {
            format!(
                "{}({})",
                if *negated { "IS_NOT_NULL" } else { "IS_NULL" },
                kuzu_text(expr)
            )
        }
        K::List(items) => format!("LIST_CREATION({})", join(&items.iter().collect::<Vec<_>>())),
        K::Map(entries) => {
            let values: Vec<&warren_cypher::ast::Expr> = entries.iter().map(|(_, v)| v).collect();
            format!("STRUCT_PACK({})", join(&values))
        }
        _ => "...".to_string(),
    }
}

/// A readable form of an expression; slots print as `#n`.
pub fn expr_text(expr: &Expr) -> String {
    match expr {
        Expr::Literal(v) => match v {
            warren_common::Value::String(s) => format!("'{s}'"),
            other => to_kuzu_string(other, &NoGraph),
        },
        Expr::Slot(s) => format!("#{s}"),
        Expr::Property { base, property } => format!("{}.{}", expr_text(base), property.name),
        Expr::InternalProperty { base, property } => {
            let name = match property {
                InternalProperty::Id => "_ID",
                InternalProperty::Label => "_LABEL",
                InternalProperty::Source => "_SRC",
                InternalProperty::Destination => "_DST",
            };
            format!("{}.{name}", expr_text(base))
        }
        Expr::Field { base, name } => format!("{}.{name}", expr_text(base)),
        Expr::Unary(op, e) => format!("{op:?}({})", expr_text(e)),
        Expr::Binary(op, a, b) => format!("{op:?}({},{})", expr_text(a), expr_text(b)),
        Expr::IsNull { expr, negated } => {
            format!(
                "{}({})",
                if *negated { "IS_NOT_NULL" } else { "IS_NULL" },
                expr_text(expr)
            )
        }
        Expr::Function { function, args } => {
            let args: Vec<String> = args.iter().map(expr_text).collect();
            format!("{}({})", function.name(), args.join(","))
        }
        Expr::UserFunction { function, args } => {
            let args: Vec<String> = args.iter().map(expr_text).collect();
            format!(
                "{}({})",
                function.0.name().to_ascii_uppercase(),
                args.join(",")
            )
        }
        Expr::Lambda { params, body } => {
            let params: Vec<String> = params.iter().map(|p| format!("#{p}")).collect();
            format!("({})->{}", params.join(","), expr_text(body))
        }
        Expr::Case { .. } => "CASE(...)".to_string(),
        Expr::List(items) => {
            let items: Vec<String> = items.iter().map(expr_text).collect();
            format!("[{}]", items.join(","))
        }
        Expr::Struct(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(n, e)| format!("{n}: {}", expr_text(e)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Expr::Index { list, index } => format!("{}[{}]", expr_text(list), expr_text(index)),
        Expr::Slice { list, .. } => format!("{}[..]", expr_text(list)),
        Expr::ListComprehension { list, .. } => format!("[x IN {} ...]", expr_text(list)),
        Expr::Quantifier { kind, list, .. } => format!("{kind:?}(x IN {} ...)", expr_text(list)),
        Expr::Subquery { count, .. } => if *count {
            "COUNT {...}"
        } else {
            "EXISTS {...}"
        }
        .to_string(),
        Expr::Path(parts) => {
            let parts: Vec<String> = parts
                .iter()
                .map(|p| match p {
                    PathPart::Node(s) | PathPart::Rel(s) => format!("#{s}"),
                    PathPart::RecursiveRel(s) => format!("#{s}*"),
                })
                .collect();
            format!("PATH({})", parts.join(","))
        }
        Expr::Cast { expr, ty } => format!("CAST({} AS {ty})", expr_text(expr)),
    }
}

fn kind_text(kind: &RecursiveKind) -> &'static str {
    match kind {
        RecursiveKind::Walk => "WALK",
        RecursiveKind::Trail => "TRAIL",
        RecursiveKind::Acyclic => "ACYCLIC",
        RecursiveKind::Shortest => "SHORTEST",
        RecursiveKind::AllShortest => "ALL SHORTEST",
        RecursiveKind::WeightedShortest { .. } => "WSHORTEST",
        RecursiveKind::AllWeightedShortest { .. } => "ALL WSHORTEST",
    }
}

/// One line describing an operator (without its children).
/// An expansion's steps as `EXPLAIN` prints them: `<rel pair><direction>`, comma-separated.
fn steps_text(steps: &[Step]) -> String {
    let steps: Vec<String> = steps
        .iter()
        .map(|s| format!("{}{:?}", s.pair, s.direction))
        .collect();
    steps.join(",")
}

pub fn operator_line(plan: &Plan) -> String {
    let opt = |e: &Option<Expr>| {
        e.as_ref()
            .map(|e| format!(" filter={}", expr_text(e)))
            .unwrap_or_default()
    };
    match plan {
        Plan::Unit => "Unit".into(),
        Plan::Argument => "Argument".into(),
        Plan::CountAll {
            tables,
            steps,
            targets,
            count_slot,
        } => {
            if steps.is_empty() {
                format!("CountAll nodes tables={tables:?} -> count #{count_slot}")
            } else {
                format!(
                    "CountAll entries tables={tables:?} steps=[{}] targets={targets:?} -> count #{count_slot}",
                    steps_text(steps)
                )
            }
        }
        Plan::FoldColumns {
            tables,
            slot,
            filter,
            keys,
            folds,
        } => {
            let folds: Vec<String> = folds
                .iter()
                .map(|fold| {
                    let of = match &fold.property {
                        Some(property) => format!("#{slot}.{}", property.name),
                        None => "*".into(),
                    };
                    format!("#{}={}({of})", fold.slot, fold.function.name())
                })
                .collect();
            let keys = if keys.is_empty() {
                String::new()
            } else {
                let keys: Vec<String> = keys
                    .iter()
                    .map(|(s, e)| format!("#{s}={}", expr_text(e)))
                    .collect();
                format!(" keys=[{}]", keys.join(", "))
            };
            format!(
                "FoldColumns #{slot} tables={tables:?}{}{keys} folds=[{}]",
                opt(filter),
                folds.join(", ")
            )
        }
        Plan::TopNodes {
            tables,
            slot,
            filter,
            keys,
            skip,
            limit,
        } => {
            let keys: Vec<String> = keys
                .iter()
                .map(|(property, descending)| {
                    format!(
                        "#{slot}.{}{}",
                        property.name,
                        if *descending { " DESC" } else { "" }
                    )
                })
                .collect();
            format!(
                "TopNodes #{slot} tables={tables:?}{} keys=[{}] limit={}{}",
                opt(filter),
                keys.join(", "),
                expr_text(limit),
                skip.as_ref()
                    .map(|s| format!(" skip={}", expr_text(s)))
                    .unwrap_or_default()
            )
        }
        Plan::ScanNodes {
            tables,
            slot,
            filter,
            ..
        } => format!("ScanNodes #{slot} tables={tables:?}{}", opt(filter)),
        Plan::LookupNode {
            tables,
            key,
            slot,
            filter,
            ..
        } => {
            format!(
                "LookupNode #{slot} tables={tables:?} key={}{}",
                expr_text(key),
                opt(filter)
            )
        }
        Plan::Expand {
            from,
            steps,
            rel_slot,
            target,
            ..
        } => {
            let target = match target {
                Target::Bind { slot, .. } => format!("#{slot}"),
                Target::Check { slot } => format!("=#{slot}"),
            };
            format!(
                "Expand #{from} -> {target} rel={rel_slot:?} steps=[{}]",
                steps_text(steps)
            )
        }
        Plan::CountExpand {
            from,
            steps,
            tables,
            count_slot,
            ..
        } => {
            format!(
                "CountExpand #{from} -> count #{count_slot} tables={tables:?} steps=[{}]",
                steps_text(steps)
            )
        }
        Plan::Recursive(r) => {
            let destination = match &r.destination {
                Destination::Bind { slot, filter, .. } => format!("#{slot}{}", opt(filter)),
                Destination::Check { slot } => format!("=#{slot}"),
            };
            let output = match &r.output {
                RecursiveOutput::Paths {
                    rel_slot,
                    length_slot,
                    cost_slot,
                } => {
                    format!("paths rel={rel_slot:?} length={length_slot:?} cost={cost_slot:?}")
                }
                RecursiveOutput::Counts {
                    per_destination, ..
                } => {
                    format!("counts per_destination={per_destination}")
                }
            };
            let mut line = format!(
                "RecursiveJoin {} {} {}..{} #{} -> {destination} {output}",
                r.name,
                kind_text(&r.kind),
                r.lower,
                r.upper,
                r.source
            );
            if let Some((_, e)) = &r.rel_filter {
                let _ = write!(line, " rel_filter={}", expr_text(e));
            }
            if let Some((_, e)) = &r.node_filter {
                let _ = write!(line, " node_filter={}", expr_text(e));
            }
            line
        }
        Plan::Filter { predicate, .. } => format!("Filter {}", expr_text(predicate)),
        Plan::Project { assignments, .. } => {
            let items: Vec<String> = assignments
                .iter()
                .map(|(s, e)| format!("#{s}={}", expr_text(e)))
                .collect();
            format!("Project {}", items.join(", "))
        }
        Plan::Aggregate {
            keys, aggregates, ..
        } => {
            let keys: Vec<String> = keys
                .iter()
                .map(|(s, e)| format!("#{s}={}", expr_text(e)))
                .collect();
            let aggregates: Vec<String> = aggregates
                .iter()
                .map(|(s, a)| {
                    let arg = a.arg.as_ref().map(expr_text).unwrap_or_default();
                    format!(
                        "#{s}={}({}{arg})",
                        a.function.name(),
                        if a.distinct { "DISTINCT " } else { "" }
                    )
                })
                .collect();
            format!(
                "Aggregate keys=[{}] aggregates=[{}]",
                keys.join(", "),
                aggregates.join(", ")
            )
        }
        Plan::Distinct { slots, .. } => format!("Distinct {slots:?}"),
        Plan::OrderBy { keys, .. } => {
            let keys: Vec<String> = keys
                .iter()
                .map(|(e, desc)| format!("{}{}", expr_text(e), if *desc { " DESC" } else { "" }))
                .collect();
            format!("OrderBy {}", keys.join(", "))
        }
        Plan::TopN {
            keys, skip, limit, ..
        } => {
            let keys: Vec<String> = keys
                .iter()
                .map(|(e, desc)| format!("{}{}", expr_text(e), if *desc { " DESC" } else { "" }))
                .collect();
            let skip = skip.as_ref().map(|s| format!(" skip={}", expr_text(s)));
            format!(
                "TopN {} limit={}{}",
                keys.join(", "),
                expr_text(limit),
                skip.unwrap_or_default()
            )
        }
        Plan::VectorTopK(v) => {
            let skip = v.skip.as_ref().map(|s| format!(" skip={}", expr_text(s)));
            let filter = v
                .filter
                .as_ref()
                .map(|f| format!(" filter={}", expr_text(f)));
            format!(
                "VectorTopK #{} table={} {}(column {}, {}){} limit={}{}{}",
                v.slot,
                v.table,
                v.function.name(),
                v.column,
                v.array_type,
                if v.descending { " DESC" } else { "" },
                expr_text(&v.limit),
                skip.unwrap_or_default(),
                filter.unwrap_or_default()
            )
        }
        Plan::Skip { count, .. } => format!("Skip {}", expr_text(count)),
        Plan::Limit { count, .. } => format!("Limit {}", expr_text(count)),
        Plan::Unwind { expr, slot, .. } => format!("Unwind {} AS #{slot}", expr_text(expr)),
        Plan::LoadCsv { files, columns, .. } => format!(
            "LoadCsv {files:?} -> {:?}",
            columns.iter().map(|(s, _)| *s).collect::<Vec<_>>()
        ),
        Plan::TableFunction {
            name,
            rows,
            columns,
            ..
        } => format!("TableFunction {name} ({} rows) -> {columns:?}", rows.len()),
        Plan::Procedure {
            call,
            columns,
            dead,
            unread,
            ordered,
            top,
            ..
        } => {
            let arguments: Vec<String> = call.arguments.iter().map(expr_text).collect();
            let dropped = if dead.is_empty() {
                String::new()
            } else {
                format!(" drops {dead:?}")
            };
            let unread = if unread.is_empty() {
                String::new()
            } else {
                format!(" unread {unread:?}")
            };
            let unordered = if *ordered { "" } else { " unordered" };
            let top = top.map_or(String::new(), |top| format!(" top {top}"));
            format!(
                "Procedure {}({}) -> {columns:?}{dropped}{unread}{unordered}{top}",
                call.name,
                arguments.join(", ")
            )
        }
        Plan::Optional { null_slots, .. } => format!("Optional nulls={null_slots:?}"),
        Plan::Union { output, all, .. } => {
            format!("Union{} -> {output:?}", if *all { " ALL" } else { "" })
        }
        Plan::Create { nodes, rels, .. } => {
            format!("Create nodes={} rels={}", nodes.len(), rels.len())
        }
        Plan::Merge { .. } => "Merge".into(),
        Plan::SetProperties { items, .. } => format!("Set {} items", items.len()),
        Plan::Delete {
            targets, detach, ..
        } => {
            format!(
                "{}Delete {}",
                if *detach { "Detach" } else { "" },
                targets.len()
            )
        }
    }
}

/// The plan as an indented tree, root first.
pub fn plan_text(plan: &Plan) -> String {
    let mut out = String::new();
    for line in plan_lines(plan) {
        let _ = writeln!(out, "{}{}", "  ".repeat(line.depth), line.text);
    }
    out
}

/// One operator of a plan as the tree printers show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanLine {
    /// Distance from the root (the root is 0).
    pub depth: usize,
    /// [`operator_line`] of the operator.
    pub text: String,
}

/// Every operator of `plan` in pre-order: an operator, then each child subtree in the order of
/// [`Plan::children`]. PROFILE matches operators to plan nodes by this index.
pub fn plan_lines(plan: &Plan) -> Vec<PlanLine> {
    let mut lines = Vec::new();
    collect_lines(plan, 0, &mut lines);
    lines
}

fn collect_lines(plan: &Plan, depth: usize, lines: &mut Vec<PlanLine>) {
    lines.push(PlanLine {
        depth,
        text: operator_line(plan),
    });
    for child in plan.children() {
        collect_lines(child, depth + 1, lines);
    }
}

#[cfg(test)]
mod tests {
    use warren_common::Value;

    use super::*;

    fn filter(input: Plan) -> Plan {
        Plan::Filter {
            input: Box::new(input),
            predicate: Expr::Literal(Value::Bool(true)),
        }
    }

    #[test]
    fn plan_lines_are_pre_order_with_depths() {
        let union = Plan::Union {
            inputs: vec![(filter(Plan::Unit), vec![0]), (Plan::Argument, vec![0])],
            output: vec![1],
            all: true,
        };
        let plan = filter(union);
        let lines = plan_lines(&plan);
        let shape: Vec<(usize, &str)> = lines
            .iter()
            .map(|l| (l.depth, l.text.split(' ').next().unwrap_or("")))
            .collect();
        assert_eq!(
            shape,
            vec![
                (0, "Filter"),
                (1, "Union"),
                (2, "Filter"),
                (3, "Unit"),
                (2, "Argument")
            ]
        );
        let text = plan_text(&plan);
        assert_eq!(text.lines().count(), lines.len());
        assert!(text.lines().nth(3).is_some_and(|l| l == "      Unit"));
    }
}

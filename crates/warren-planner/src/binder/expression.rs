//! Binding expressions: variables to slots, properties to columns, function names to
//! [`ScalarFunction`]s, parameters to their values. Aggregate calls are collected into the
//! binder's aggregate sink when a projection allows them.

use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result, TableId};
use warren_cypher::ast::{self, BinaryOp, ExprKind, Literal, UnaryOp};

use super::scope::{Scope, Variable, VariableKind};
use super::Binder;
use crate::expr::{AggregateExpr, AggregateFunction, Expr, InternalProperty, PropertyColumns};
use crate::functions::ScalarFunction;
use crate::user_function::{UserFunction, UserFunctionRef};

/// Where aggregate calls go while a projection is bound.
#[derive(Debug, Default)]
pub(crate) struct AggregateSink {
    pub aggregates: Vec<(usize, AggregateExpr)>,
}

fn literal_value(literal: &Literal) -> Value {
    match literal {
        Literal::Null => Value::Null,
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Integer(i) => match i64::try_from(*i) {
            Ok(v) => Value::Int64(v),
            Err(_) => Value::Int128(*i),
        },
        Literal::Double(d) => Value::Double(*d),
        Literal::String(s) => Value::string(s.as_str()),
    }
}

fn numeric_result(a: &LogicalType, b: &LogicalType) -> LogicalType {
    let rank = |t: &LogicalType| match t {
        LogicalType::Double => 5,
        LogicalType::Float => 4,
        LogicalType::Int128 => 3,
        LogicalType::Any => 0,
        t if t.is_integer() => 2,
        _ => 1,
    };
    match rank(a).max(rank(b)) {
        5 => LogicalType::Double,
        4 => LogicalType::Float,
        3 => LogicalType::Int128,
        2 => LogicalType::Int64,
        0 => LogicalType::Any,
        _ => a.clone(),
    }
}

impl Binder<'_> {
    /// Binds an expression in `scope`. Aggregates are rejected unless a sink is installed.
    pub(crate) fn bind_expr(
        &mut self,
        expr: &ast::Expr,
        scope: &Scope,
    ) -> Result<(Expr, LogicalType)> {
        self.bind_expr_with(expr, scope, &mut None)
    }

    pub(crate) fn bind_expr_with(
        &mut self,
        expr: &ast::Expr,
        scope: &Scope,
        sink: &mut Option<&mut AggregateSink>,
    ) -> Result<(Expr, LogicalType)> {
        match &expr.kind {
            ExprKind::Literal(literal) => {
                let value = literal_value(literal);
                let ty = value.logical_type();
                Ok((Expr::Literal(value), ty))
            }
            ExprKind::Parameter(name) => {
                let value = self
                    .parameters
                    .get(name)
                    .cloned()
                    .ok_or_else(|| Error::binder(format!("Parameter {name} not found.")))?;
                let ty = value.logical_type();
                Ok((Expr::Literal(value), ty))
            }
            ExprKind::Variable(name) => {
                let variable = scope
                    .get(name)
                    .ok_or_else(|| Error::binder(format!("Variable {name} is not in scope.")))?;
                Ok((Expr::Slot(variable.slot), variable.kind.logical_type()))
            }
            ExprKind::Property(base, name) => self.bind_property(base, name, scope, sink),
            ExprKind::AllProperties(name) => Err(Error::binder(format!(
                "{name}.* is only allowed in a projection."
            ))),
            ExprKind::List(items) => self.bind_list_literal(items, scope, sink),
            ExprKind::Map(entries) => {
                let mut fields = Vec::with_capacity(entries.len());
                let mut types = Vec::with_capacity(entries.len());
                for (name, value) in entries {
                    let (e, ty) = self.bind_expr_with(value, scope, sink)?;
                    fields.push((Arc::from(name.as_str()), e));
                    types.push(warren_common::types::Field {
                        name: name.clone(),
                        ty,
                    });
                }
                Ok((Expr::Struct(fields), LogicalType::Struct(Arc::new(types))))
            }
            ExprKind::Index(list, index) => {
                let (list, list_ty) = self.bind_expr_with(list, scope, sink)?;
                let (index, _) = self.bind_expr_with(index, scope, sink)?;
                let ty = list_ty.element().cloned().unwrap_or(LogicalType::Any);
                Ok((
                    Expr::Index {
                        list: Box::new(list),
                        index: Box::new(index),
                    },
                    ty,
                ))
            }
            ExprKind::Slice(list, start, end) => {
                let (list, ty) = self.bind_expr_with(list, scope, sink)?;
                let start = match start {
                    Some(s) => Some(Box::new(self.bind_expr_with(s, scope, sink)?.0)),
                    None => None,
                };
                let end = match end {
                    Some(e) => Some(Box::new(self.bind_expr_with(e, scope, sink)?.0)),
                    None => None,
                };
                Ok((
                    Expr::Slice {
                        list: Box::new(list),
                        start,
                        end,
                    },
                    ty,
                ))
            }
            ExprKind::Unary(op, inner) => {
                let (inner, ty) = self.bind_expr_with(inner, scope, sink)?;
                let ty = if *op == UnaryOp::Not {
                    LogicalType::Bool
                } else {
                    ty
                };
                Ok((Expr::Unary(*op, Box::new(inner)), ty))
            }
            ExprKind::Binary(op, left, right) => self.bind_binary(*op, left, right, scope, sink),
            ExprKind::IsNull { expr, negated } => {
                let (inner, _) = self.bind_expr_with(expr, scope, sink)?;
                Ok((
                    Expr::IsNull {
                        expr: Box::new(inner),
                        negated: *negated,
                    },
                    LogicalType::Bool,
                ))
            }
            ExprKind::FunctionCall {
                name,
                distinct,
                star,
                args,
            } => self.bind_function(name, *distinct, *star, args, scope, sink),
            ExprKind::Cast { expr, type_name } => {
                let (inner, _) = self.bind_expr_with(expr, scope, sink)?;
                let ty = LogicalType::parse(type_name).map_err(Error::Catalog)?;
                Ok((
                    Expr::Cast {
                        expr: Box::new(inner),
                        ty: ty.clone(),
                    },
                    ty,
                ))
            }
            ExprKind::Case {
                operand,
                whens,
                otherwise,
            } => {
                let operand = match operand {
                    Some(o) => Some(Box::new(self.bind_expr_with(o, scope, sink)?.0)),
                    None => None,
                };
                let mut bound = Vec::with_capacity(whens.len());
                let mut ty = LogicalType::Any;
                for (when, then) in whens {
                    let (w, _) = self.bind_expr_with(when, scope, sink)?;
                    let (t, t_ty) = self.bind_expr_with(then, scope, sink)?;
                    if ty == LogicalType::Any {
                        ty = t_ty;
                    }
                    bound.push((w, t));
                }
                let otherwise = match otherwise {
                    Some(o) => {
                        let (e, o_ty) = self.bind_expr_with(o, scope, sink)?;
                        if ty == LogicalType::Any {
                            ty = o_ty;
                        }
                        Some(Box::new(e))
                    }
                    None => None,
                };
                Ok((
                    Expr::Case {
                        operand,
                        whens: bound,
                        otherwise,
                    },
                    ty,
                ))
            }
            ExprKind::Exists(subquery) => {
                let plan = self.bind_subquery(subquery, scope)?;
                Ok((
                    Expr::Subquery {
                        plan: Arc::new(plan),
                        count: false,
                    },
                    LogicalType::Bool,
                ))
            }
            ExprKind::CountSubquery(subquery) => {
                let plan = self.bind_subquery(subquery, scope)?;
                Ok((
                    Expr::Subquery {
                        plan: Arc::new(plan),
                        count: true,
                    },
                    LogicalType::Int64,
                ))
            }
            ExprKind::NamedArgument(name, _) => Err(Error::binder(format!(
                "Named argument {name} is not supported here."
            ))),
            ExprKind::Lambda { .. } => Err(Error::binder(
                "A lambda expression is only allowed as an argument of a list function.",
            )),
            ExprKind::ListComprehension {
                variable,
                list,
                where_clause,
                map,
            } => {
                let (list, list_ty) = self.bind_expr_with(list, scope, sink)?;
                let slot = self.new_slot();
                let mut inner = scope.clone();
                let element = list_ty.element().cloned().unwrap_or(LogicalType::Any);
                inner.insert(Variable {
                    name: variable.clone(),
                    slot,
                    kind: kind_of(&element),
                });
                let filter = match where_clause {
                    Some(w) => Some(Box::new(self.bind_expr(w, &inner)?.0)),
                    None => None,
                };
                let (map, ty) = match map {
                    Some(m) => {
                        let (e, ty) = self.bind_expr(m, &inner)?;
                        (Some(Box::new(e)), LogicalType::list(ty))
                    }
                    None => (None, list_ty.clone()),
                };
                Ok((
                    Expr::ListComprehension {
                        list: Box::new(list),
                        variable: slot,
                        filter,
                        map,
                    },
                    ty,
                ))
            }
            ExprKind::Quantifier {
                kind,
                variable,
                list,
                predicate,
            } => {
                let (list, list_ty) = self.bind_expr_with(list, scope, sink)?;
                let slot = self.new_slot();
                let mut inner = scope.clone();
                let element = list_ty.element().cloned().unwrap_or(LogicalType::Any);
                inner.insert(Variable {
                    name: variable.clone(),
                    slot,
                    kind: kind_of(&element),
                });
                let (predicate, _) = self.bind_expr(predicate, &inner)?;
                Ok((
                    Expr::Quantifier {
                        kind: *kind,
                        list: Box::new(list),
                        variable: slot,
                        predicate: Box::new(predicate),
                    },
                    LogicalType::Bool,
                ))
            }
        }
    }

    fn bind_binary(
        &mut self,
        op: BinaryOp,
        left: &ast::Expr,
        right: &ast::Expr,
        scope: &Scope,
        sink: &mut Option<&mut AggregateSink>,
    ) -> Result<(Expr, LogicalType)> {
        let (l, l_ty) = self.bind_expr_with(left, scope, sink)?;
        let (r, r_ty) = self.bind_expr_with(right, scope, sink)?;
        if op == BinaryOp::In {
            self.check_in((left, &l_ty), (right, &r_ty))?;
        }
        let ty = match op {
            BinaryOp::Or
            | BinaryOp::Xor
            | BinaryOp::And
            | BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
            | BinaryOp::In
            | BinaryOp::StartsWith
            | BinaryOp::EndsWith
            | BinaryOp::Contains
            | BinaryOp::RegexMatch => LogicalType::Bool,
            BinaryOp::Concat => l_ty.clone(),
            BinaryOp::Add if l_ty == LogicalType::String || r_ty == LogicalType::String => {
                LogicalType::String
            }
            BinaryOp::Div if l_ty.is_integer() && r_ty.is_integer() => LogicalType::Int64,
            BinaryOp::Pow => LogicalType::Double,
            _ if l_ty.is_timestamp() || l_ty == LogicalType::Date => l_ty.clone(),
            _ => numeric_result(&l_ty, &r_ty),
        };
        Ok((Expr::Binary(op, Box::new(l), Box::new(r)), ty))
    }

    /// `base.name` on a node, rel, struct or anything else.
    fn bind_property(
        &mut self,
        base: &ast::Expr,
        name: &str,
        scope: &Scope,
        sink: &mut Option<&mut AggregateSink>,
    ) -> Result<(Expr, LogicalType)> {
        if let ExprKind::Variable(var) = &base.kind {
            if let Some(variable) = scope.get(var) {
                let variable = variable.clone();
                return self.bind_variable_property(&variable, name);
            }
        }
        let (base, ty) = self.bind_expr_with(base, scope, sink)?;
        if let Some(internal) = internal_property(name) {
            return Ok((
                Expr::InternalProperty {
                    base: Box::new(base),
                    property: internal,
                },
                internal_type(internal),
            ));
        }
        let field_ty = ty
            .struct_fields()
            .and_then(|fields| fields.iter().find(|f| f.name.eq_ignore_ascii_case(name)))
            .map(|f| f.ty.clone())
            .unwrap_or(LogicalType::Any);
        if matches!(ty, LogicalType::Node | LogicalType::Rel) {
            // Tables unknown at bind time (e.g. an element of nodes(p)): resolved per value.
            return Ok((
                Expr::Property {
                    base: Box::new(base),
                    property: PropertyColumns {
                        name: name.into(),
                        columns: Vec::new(),
                    },
                },
                LogicalType::Any,
            ));
        }
        Ok((
            Expr::Field {
                base: Box::new(base),
                name: name.into(),
            },
            field_ty,
        ))
    }

    pub(crate) fn bind_variable_property(
        &mut self,
        variable: &Variable,
        name: &str,
    ) -> Result<(Expr, LogicalType)> {
        let base = Box::new(Expr::Slot(variable.slot));
        match &variable.kind {
            VariableKind::Node { tables } => {
                if let Some(internal) = internal_property(name) {
                    return Ok((
                        Expr::InternalProperty {
                            base,
                            property: internal,
                        },
                        internal_type(internal),
                    ));
                }
                let (columns, ty) = self.node_property_columns(tables, name);
                if columns.is_empty() {
                    return Err(Error::binder(format!(
                        "Cannot find property {name} for {}.",
                        variable.name
                    )));
                }
                Ok((
                    Expr::Property {
                        base,
                        property: PropertyColumns {
                            name: name.into(),
                            columns,
                        },
                    },
                    ty,
                ))
            }
            VariableKind::Rel { pairs } => {
                if let Some(internal) = internal_property(name) {
                    return Ok((
                        Expr::InternalProperty {
                            base,
                            property: internal,
                        },
                        internal_type(internal),
                    ));
                }
                let (columns, ty) = self.rel_property_columns(pairs, name);
                if columns.is_empty() {
                    return Err(Error::binder(format!(
                        "Cannot find property {name} for {}.",
                        variable.name
                    )));
                }
                Ok((
                    Expr::Property {
                        base,
                        property: PropertyColumns {
                            name: name.into(),
                            columns,
                        },
                    },
                    ty,
                ))
            }
            VariableKind::RecursiveRel { .. } | VariableKind::Path => Err(Error::binder(format!(
                "{} has data type RECURSIVE_REL but (NODE,REL,STRUCT,ANY) was expected.",
                variable.name
            ))),
            VariableKind::Value(ty) => {
                let field_ty = ty
                    .struct_fields()
                    .and_then(|fields| fields.iter().find(|f| f.name.eq_ignore_ascii_case(name)))
                    .map(|f| f.ty.clone());
                match (ty, field_ty) {
                    (_, Some(field_ty)) => Ok((
                        Expr::Field {
                            base,
                            name: name.into(),
                        },
                        field_ty,
                    )),
                    (
                        LogicalType::Any
                        | LogicalType::Map(..)
                        | LogicalType::Node
                        | LogicalType::Rel,
                        None,
                    ) => Ok((
                        Expr::Field {
                            base,
                            name: name.into(),
                        },
                        LogicalType::Any,
                    )),
                    (other, None) => Err(Error::binder(format!(
                        "{} has data type {other} but (NODE,REL,STRUCT,ANY) was expected.",
                        variable.name
                    ))),
                }
            }
        }
    }

    pub(crate) fn node_property_columns(
        &self,
        tables: &[TableId],
        name: &str,
    ) -> (Vec<(TableId, usize)>, LogicalType) {
        let mut columns = Vec::new();
        let mut ty = LogicalType::Any;
        for &table in tables {
            if let Some(schema) = self.catalog.node_table_by_id(table) {
                if let Some(index) = schema.property(name) {
                    columns.push((table, index));
                    ty = schema.properties[index].ty.clone();
                }
            }
        }
        (columns, ty)
    }

    pub(crate) fn rel_property_columns(
        &self,
        pairs: &[TableId],
        name: &str,
    ) -> (Vec<(TableId, usize)>, LogicalType) {
        let mut columns = Vec::new();
        let mut ty = LogicalType::Any;
        for &pair in pairs {
            if let Some((schema, _)) = self.catalog.rel_pair(pair) {
                if let Some(index) = schema.property(name) {
                    columns.push((pair, index));
                    ty = schema.properties[index].ty.clone();
                }
            }
        }
        (columns, ty)
    }

    fn bind_function(
        &mut self,
        name: &str,
        distinct: bool,
        star: bool,
        args: &[ast::Expr],
        scope: &Scope,
        sink: &mut Option<&mut AggregateSink>,
    ) -> Result<(Expr, LogicalType)> {
        let aggregate = if star && name.eq_ignore_ascii_case("count") {
            Some(AggregateFunction::CountStar)
        } else {
            AggregateFunction::from_name(name)
        };
        if let Some(function) = aggregate {
            return self.bind_aggregate(function, distinct, args, scope, sink);
        }
        if let Some(bound) = self.bind_special_function(name, args, scope)? {
            return Ok(bound);
        }
        if ScalarFunction::lookup(name).is_none() {
            if let Some(function) = self.session.user_function(name) {
                return self.bind_user_function(function, args, scope, sink);
            }
        }
        let (function, min, max) = ScalarFunction::lookup(name).ok_or_else(|| {
            Error::Catalog(format!(
                "function {} does not exist.",
                name.to_ascii_uppercase()
            ))
        })?;
        if args.len() < min || args.len() > max {
            return Err(Error::binder(format!(
                "Function {} did not receive correct arguments:\nActual:   ({})",
                function.name(),
                vec!["ANY"; args.len()].join(",")
            )));
        }
        if function == ScalarFunction::UnionValue {
            return self.bind_union_value(&args[0], scope, sink);
        }
        let mut bound = Vec::with_capacity(args.len());
        let mut types = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            if let ExprKind::Lambda { params, body } = &arg.kind {
                if !function.takes_lambda() || i != 1 {
                    return Err(Error::binder(format!(
                        "{} does not support lambda input.",
                        function.name()
                    )));
                }
                let element = types
                    .first()
                    .and_then(|t: &LogicalType| t.element().cloned())
                    .unwrap_or(LogicalType::Any);
                let (lambda, ty) = self.bind_lambda(params, body, &element, scope)?;
                bound.push(lambda);
                types.push(ty);
                continue;
            }
            if function.takes_lambda() && i == 1 {
                return Err(Error::binder(format!(
                    "The second argument of {} should be a lambda expression but got LITERAL.",
                    function.name()
                )));
            }
            let (e, ty) = self.bind_expr_with(arg, scope, sink)?;
            bound.push(e);
            types.push(ty);
        }
        function.check_arguments(&types)?;
        if function.is_array_distance() {
            return bind_array_function(function, bound, &types);
        }
        let ty = match function {
            ScalarFunction::ListTransform => LogicalType::list(types[1].clone()),
            _ => function.return_type(&types)?,
        };
        Ok((
            Expr::Function {
                function,
                args: bound,
            },
            ty,
        ))
    }

    /// A call of a user function: each argument is cast to its parameter's declared type
    /// (a value that does not cast fails when the row is evaluated, as Kùzu's casts do).
    fn bind_user_function(
        &mut self,
        function: Arc<dyn UserFunction>,
        args: &[ast::Expr],
        scope: &Scope,
        sink: &mut Option<&mut AggregateSink>,
    ) -> Result<(Expr, LogicalType)> {
        let parameters = function.parameter_types();
        if args.len() != parameters.len() {
            let types: Vec<String> = parameters.iter().map(ToString::to_string).collect();
            return Err(Error::binder(format!(
                "Function {} did not receive correct arguments:\nActual:   ({})\nExpected: ({}) -> {}\n",
                function.name().to_ascii_uppercase(),
                vec!["ANY"; args.len()].join(","),
                types.join(","),
                function.return_type()
            )));
        }
        let mut bound = Vec::with_capacity(args.len());
        for (arg, parameter) in args.iter().zip(parameters) {
            let (e, ty) = self.bind_expr_with(arg, scope, sink)?;
            bound.push(if ty == *parameter || ty == LogicalType::Any {
                e
            } else {
                Expr::Cast {
                    expr: Box::new(e),
                    ty: parameter.clone(),
                }
            });
        }
        let ty = function.return_type().clone();
        Ok((
            Expr::UserFunction {
                function: UserFunctionRef(function),
                args: bound,
            },
            ty,
        ))
    }

    /// `union_value(tag := value)`: a union with one member named `tag` (unnamed: empty).
    fn bind_union_value(
        &mut self,
        arg: &ast::Expr,
        scope: &Scope,
        sink: &mut Option<&mut AggregateSink>,
    ) -> Result<(Expr, LogicalType)> {
        let (tag, value) = match &arg.kind {
            ExprKind::NamedArgument(name, value) => (name.clone(), &**value),
            _ => (String::new(), arg),
        };
        let (value, ty) = self.bind_expr_with(value, scope, sink)?;
        let union = LogicalType::Union(Arc::new(vec![warren_common::types::Field {
            name: tag.clone(),
            ty,
        }]));
        let args = vec![Expr::Literal(Value::string(tag)), value];
        Ok((
            Expr::Function {
                function: ScalarFunction::UnionValue,
                args,
            },
            union,
        ))
    }

    fn bind_lambda(
        &mut self,
        params: &[String],
        body: &ast::Expr,
        element: &LogicalType,
        scope: &Scope,
    ) -> Result<(Expr, LogicalType)> {
        let mut inner = scope.clone();
        let mut slots = Vec::with_capacity(params.len());
        for param in params {
            let slot = self.new_slot();
            inner.insert(Variable {
                name: param.clone(),
                slot,
                kind: kind_of(element),
            });
            slots.push(slot);
        }
        let (body, ty) = self.bind_expr(body, &inner)?;
        Ok((
            Expr::Lambda {
                params: slots,
                body: Box::new(body),
            },
            ty,
        ))
    }

    fn bind_aggregate(
        &mut self,
        function: AggregateFunction,
        distinct: bool,
        args: &[ast::Expr],
        scope: &Scope,
        sink: &mut Option<&mut AggregateSink>,
    ) -> Result<(Expr, LogicalType)> {
        let Some(sink) = sink.as_deref_mut() else {
            return Err(Error::binder(format!(
                "Aggregate function {} is not allowed here.",
                function.name()
            )));
        };
        let (arg, arg_ty) = match (function, args) {
            (AggregateFunction::CountStar, _) => (None, LogicalType::Any),
            (_, [arg]) => {
                let (e, ty) = self
                    .bind_expr_with(arg, scope, &mut None)
                    .map_err(|e| match e {
                        Error::Binder(m) if m.starts_with("Aggregate function") => {
                            Error::binder(format!(
                                "Expression {}({}) contains nested aggregation.",
                                function.name(),
                                crate::explain::kuzu_text(arg)
                            ))
                        }
                        other => other,
                    })?;
                (Some(e), ty)
            }
            _ => {
                return Err(Error::binder(format!(
                    "Function {} did not receive correct arguments.",
                    function.name()
                )))
            }
        };
        let ty = match function {
            AggregateFunction::CountStar | AggregateFunction::Count => LogicalType::Int64,
            AggregateFunction::Avg => LogicalType::Double,
            AggregateFunction::Sum if arg_ty.is_integer() => LogicalType::Int64,
            AggregateFunction::Collect => LogicalType::list(arg_ty),
            _ => arg_ty,
        };
        let slot = self.new_slot();
        sink.aggregates.push((
            slot,
            AggregateExpr {
                function,
                distinct,
                arg,
            },
        ));
        Ok((Expr::Slot(slot), ty))
    }

    /// Functions that need the scope rather than values: `length`, `cost` and friends on
    /// recursive rels and paths resolve to the slots the recursive join fills.
    fn bind_special_function(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        scope: &Scope,
    ) -> Result<Option<(Expr, LogicalType)>> {
        let lower = name.to_ascii_lowercase();
        let [arg] = args else { return Ok(None) };
        let ExprKind::Variable(var) = &arg.kind else {
            return Ok(None);
        };
        let Some(variable) = scope.get(var) else {
            return Ok(None);
        };
        match (lower.as_str(), &variable.kind) {
            (
                "cost",
                VariableKind::RecursiveRel {
                    weighted: false, ..
                },
            )
            | ("cost", VariableKind::Path) => Err(Error::binder(format!(
                "Cost function is not defined for {var}"
            ))),
            ("length", VariableKind::RecursiveRel { .. })
            | ("length", VariableKind::Path)
            | ("cost", VariableKind::RecursiveRel { .. })
            | ("start_node" | "end_node", VariableKind::Rel { .. }) => {
                let key = format!("{lower}\u{0}{var}");
                match scope.get(&key) {
                    Some(derived) => Ok(Some((
                        Expr::Slot(derived.slot),
                        derived.kind.logical_type(),
                    ))),
                    None => Ok(None),
                }
            }
            _ => Ok(None),
        }
    }
}

/// The kind of a variable holding values of `ty` (list elements, lambda parameters).
pub(crate) fn kind_of(ty: &LogicalType) -> VariableKind {
    VariableKind::Value(ty.clone())
}

fn internal_property(name: &str) -> Option<InternalProperty> {
    const NAMES: [(&str, InternalProperty); 4] = [
        ("_id", InternalProperty::Id),
        ("_label", InternalProperty::Label),
        ("_src", InternalProperty::Source),
        ("_dst", InternalProperty::Destination),
    ];
    NAMES
        .iter()
        .find(|(internal, _)| internal.eq_ignore_ascii_case(name))
        .map(|&(_, property)| property)
}

fn internal_type(property: InternalProperty) -> LogicalType {
    match property {
        InternalProperty::Label => LogicalType::String,
        _ => LogicalType::InternalId,
    }
}

/// An array distance function: both arguments cast to the array type Kùzu picks (the cast of a
/// list of the wrong length fails with Kùzu's conversion error when the row is evaluated; the
/// executor reads the two vectors straight out of the casts).
fn bind_array_function(
    function: ScalarFunction,
    args: Vec<Expr>,
    types: &[LogicalType],
) -> Result<(Expr, LogicalType)> {
    let constant_lengths: Vec<Option<usize>> = args
        .iter()
        .map(|arg| match crate::constant::evaluate_constant(arg) {
            Some(Value::List(items)) => Some(items.len()),
            _ => None,
        })
        .collect();
    let parameter = function.bind_array_arguments(types, &constant_lengths)?;
    let ty = function.return_type(std::slice::from_ref(&parameter))?;
    let args = args
        .into_iter()
        .map(|arg| Expr::Cast {
            expr: Box::new(arg),
            ty: parameter.clone(),
        })
        .collect();
    Ok((Expr::Function { function, args }, ty))
}

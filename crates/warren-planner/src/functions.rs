//! The scalar functions Warren knows: names (case-insensitive, with Kùzu's aliases), argument
//! counts and result types. The executor implements each variant.

use warren_common::types::LogicalType;
use warren_common::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarFunction {
    // paths, nodes and rels
    Length,
    Nodes,
    Rels,
    Properties,
    Id,
    Label,
    Offset,
    IsTrail,
    IsAcyclic,
    Cost,
    StartNode,
    EndNode,
    // lists
    Size,
    Range,
    ListContains,
    ListExtract,
    ListReverse,
    ListConcat,
    ListAppend,
    ListPrepend,
    ListSort,
    ListReverseSort,
    ListDistinct,
    ListSum,
    ListProduct,
    ListTransform,
    ListFilter,
    ListReduce,
    ListAnyValue,
    Head,
    Last,
    Tail,
    // strings
    Lower,
    Upper,
    Trim,
    LeftTrim,
    RightTrim,
    Substring,
    Left,
    Right,
    Concat,
    Reverse,
    StartsWith,
    EndsWith,
    Contains,
    Repeat,
    Replace,
    Split,
    // numbers
    Abs,
    Floor,
    Ceil,
    Round,
    Sqrt,
    Pow,
    Sign,
    // conversions
    ToString,
    ToInt64,
    ToInt32,
    ToInt16,
    ToInt8,
    ToDouble,
    ToFloat,
    ToBool,
    Date,
    Timestamp,
    Interval,
    // misc
    Coalesce,
    IfNull,
    Hash,
}

use ScalarFunction as F;

/// Name, function, minimum and maximum argument count.
const FUNCTIONS: &[(&str, ScalarFunction, usize, usize)] = &[
    ("length", F::Length, 1, 1),
    ("nodes", F::Nodes, 1, 1),
    ("rels", F::Rels, 1, 1),
    ("relationships", F::Rels, 1, 1),
    ("properties", F::Properties, 2, 2),
    ("id", F::Id, 1, 1),
    ("label", F::Label, 1, 1),
    ("labels", F::Label, 1, 1),
    ("offset", F::Offset, 1, 1),
    ("is_trail", F::IsTrail, 1, 1),
    ("is_acyclic", F::IsAcyclic, 1, 1),
    ("cost", F::Cost, 1, 1),
    ("start_node", F::StartNode, 1, 1),
    ("end_node", F::EndNode, 1, 1),
    ("size", F::Size, 1, 1),
    ("cardinality", F::Size, 1, 1),
    ("array_length", F::Size, 1, 1),
    ("range", F::Range, 2, 3),
    ("list_contains", F::ListContains, 2, 2),
    ("list_has", F::ListContains, 2, 2),
    ("array_contains", F::ListContains, 2, 2),
    ("array_has", F::ListContains, 2, 2),
    ("list_extract", F::ListExtract, 2, 2),
    ("list_element", F::ListExtract, 2, 2),
    ("array_extract", F::ListExtract, 2, 2),
    ("list_reverse", F::ListReverse, 1, 1),
    ("list_concat", F::ListConcat, 2, 2),
    ("list_cat", F::ListConcat, 2, 2),
    ("array_concat", F::ListConcat, 2, 2),
    ("list_append", F::ListAppend, 2, 2),
    ("list_prepend", F::ListPrepend, 2, 2),
    ("list_sort", F::ListSort, 1, 3),
    ("list_reverse_sort", F::ListReverseSort, 1, 2),
    ("list_distinct", F::ListDistinct, 1, 1),
    ("list_unique", F::ListDistinct, 1, 1),
    ("list_sum", F::ListSum, 1, 1),
    ("list_product", F::ListProduct, 1, 1),
    ("list_transform", F::ListTransform, 2, 2),
    ("list_filter", F::ListFilter, 2, 2),
    ("list_reduce", F::ListReduce, 2, 2),
    ("list_any_value", F::ListAnyValue, 1, 1),
    ("head", F::Head, 1, 1),
    ("last", F::Last, 1, 1),
    ("tail", F::Tail, 1, 1),
    ("lower", F::Lower, 1, 1),
    ("lcase", F::Lower, 1, 1),
    ("tolower", F::Lower, 1, 1),
    ("upper", F::Upper, 1, 1),
    ("ucase", F::Upper, 1, 1),
    ("toupper", F::Upper, 1, 1),
    ("trim", F::Trim, 1, 1),
    ("ltrim", F::LeftTrim, 1, 1),
    ("rtrim", F::RightTrim, 1, 1),
    ("substring", F::Substring, 3, 3),
    ("substr", F::Substring, 3, 3),
    ("left", F::Left, 2, 2),
    ("right", F::Right, 2, 2),
    ("concat", F::Concat, 1, 64),
    ("reverse", F::Reverse, 1, 1),
    ("starts_with", F::StartsWith, 2, 2),
    ("prefix", F::StartsWith, 2, 2),
    ("ends_with", F::EndsWith, 2, 2),
    ("suffix", F::EndsWith, 2, 2),
    ("contains", F::Contains, 2, 2),
    ("repeat", F::Repeat, 2, 2),
    ("replace", F::Replace, 3, 3),
    ("string_split", F::Split, 2, 2),
    ("split", F::Split, 2, 2),
    ("abs", F::Abs, 1, 1),
    ("floor", F::Floor, 1, 1),
    ("ceil", F::Ceil, 1, 1),
    ("ceiling", F::Ceil, 1, 1),
    ("round", F::Round, 1, 2),
    ("sqrt", F::Sqrt, 1, 1),
    ("pow", F::Pow, 2, 2),
    ("power", F::Pow, 2, 2),
    ("sign", F::Sign, 1, 1),
    ("to_string", F::ToString, 1, 1),
    ("string", F::ToString, 1, 1),
    ("tostring", F::ToString, 1, 1),
    ("to_int64", F::ToInt64, 1, 1),
    ("toint64", F::ToInt64, 1, 1),
    ("tointeger", F::ToInt64, 1, 1),
    ("to_int32", F::ToInt32, 1, 1),
    ("to_int16", F::ToInt16, 1, 1),
    ("to_int8", F::ToInt8, 1, 1),
    ("to_double", F::ToDouble, 1, 1),
    ("todouble", F::ToDouble, 1, 1),
    ("tofloat", F::ToDouble, 1, 1),
    ("to_float", F::ToFloat, 1, 1),
    ("to_bool", F::ToBool, 1, 1),
    ("toboolean", F::ToBool, 1, 1),
    ("date", F::Date, 1, 1),
    ("timestamp", F::Timestamp, 1, 1),
    ("interval", F::Interval, 1, 1),
    ("coalesce", F::Coalesce, 1, 64),
    ("ifnull", F::IfNull, 2, 2),
    ("hash", F::Hash, 1, 1),
];

impl ScalarFunction {
    /// Looks up a function by name; returns it with its argument-count bounds.
    pub fn lookup(name: &str) -> Option<(ScalarFunction, usize, usize)> {
        let lower = name.to_ascii_lowercase();
        FUNCTIONS
            .iter()
            .find(|(n, ..)| *n == lower)
            .map(|&(_, f, min, max)| (f, min, max))
    }

    /// The upper-case name Kùzu prints in messages.
    pub fn name(self) -> String {
        FUNCTIONS
            .iter()
            .find(|(_, f, ..)| *f == self)
            .map(|(n, ..)| n.to_ascii_uppercase())
            .unwrap_or_default()
    }

    /// Functions whose second argument is a lambda.
    pub fn takes_lambda(self) -> bool {
        matches!(self, F::ListTransform | F::ListFilter | F::ListReduce)
    }

    /// The result type for the given argument types.
    pub fn return_type(self, args: &[LogicalType]) -> Result<LogicalType> {
        let first = args.first().cloned().unwrap_or(LogicalType::Any);
        Ok(match self {
            F::Length | F::Size | F::Offset | F::Hash => LogicalType::Int64,
            F::Nodes => LogicalType::list(LogicalType::Node),
            F::Rels => LogicalType::list(LogicalType::Rel),
            F::Properties => LogicalType::list(LogicalType::Any),
            F::Id => LogicalType::InternalId,
            F::Label
            | F::Lower
            | F::Upper
            | F::Trim
            | F::LeftTrim
            | F::RightTrim
            | F::Substring
            | F::Left
            | F::Right
            | F::Concat
            | F::Reverse
            | F::Repeat
            | F::Replace
            | F::ToString => LogicalType::String,
            F::IsTrail
            | F::IsAcyclic
            | F::ListContains
            | F::StartsWith
            | F::EndsWith
            | F::Contains
            | F::ToBool => LogicalType::Bool,
            F::Cost | F::Sqrt | F::Pow | F::ToDouble => LogicalType::Double,
            F::ToFloat => LogicalType::Float,
            F::StartNode | F::EndNode => LogicalType::Node,
            F::Range => LogicalType::list(LogicalType::Int64),
            F::ListExtract | F::Head | F::Last | F::ListAnyValue => {
                first.element().cloned().unwrap_or(LogicalType::Any)
            }
            F::ListReverse
            | F::ListConcat
            | F::ListAppend
            | F::ListPrepend
            | F::ListSort
            | F::ListReverseSort
            | F::ListDistinct
            | F::ListFilter
            | F::Tail => first,
            F::ListSum | F::ListProduct | F::ListReduce => {
                first.element().cloned().unwrap_or(LogicalType::Any)
            }
            F::ListTransform => LogicalType::list(LogicalType::Any),
            F::Split => LogicalType::list(LogicalType::String),
            F::Abs | F::Floor | F::Ceil | F::Round | F::Sign => first,
            F::ToInt64 => LogicalType::Int64,
            F::ToInt32 => LogicalType::Int32,
            F::ToInt16 => LogicalType::Int16,
            F::ToInt8 => LogicalType::Int8,
            F::Date => LogicalType::Date,
            F::Timestamp => LogicalType::Timestamp,
            F::Interval => LogicalType::Interval,
            F::Coalesce | F::IfNull => args
                .iter()
                .find(|t| **t != LogicalType::Any)
                .cloned()
                .unwrap_or(LogicalType::Any),
        })
    }

    /// The argument types Kùzu accepts for functions it checks at bind time, with the
    /// signature lines its error message lists.
    fn signatures(self) -> Option<(&'static [&'static str], &'static [&'static str])> {
        Some(match self {
            F::Size => (
                &["LIST", "ARRAY", "MAP", "STRING"],
                &[
                    "(LIST) -> INT64",
                    "(ARRAY) -> INT64",
                    "(MAP) -> INT64",
                    "(STRING) -> INT64",
                ],
            ),
            F::Id => (&["NODE", "REL", "STRUCT"], &["(NODE)", "(REL)", "(STRUCT)"]),
            F::StartNode | F::EndNode => (&["REL"], &["(REL)"]),
            F::Nodes | F::Rels => (&["RECURSIVE_REL"], &["(RECURSIVE_REL)"]),
            _ => return None,
        })
    }

    /// Checks argument types where Kùzu rejects them at bind time.
    pub fn check_arguments(self, args: &[LogicalType]) -> Result<()> {
        let Some((accepted, lines)) = self.signatures() else {
            return Ok(());
        };
        let Some(first) = args.first() else {
            return Ok(());
        };
        let kind = match first {
            LogicalType::Any => return Ok(()),
            LogicalType::List(_) => "LIST".to_string(),
            LogicalType::Array(..) => "ARRAY".to_string(),
            LogicalType::Map(..) => "MAP".to_string(),
            LogicalType::Struct(_) => "STRUCT".to_string(),
            other => other.to_string(),
        };
        if accepted.contains(&kind.as_str()) {
            return Ok(());
        }
        let actual: Vec<String> = args.iter().map(|t| t.to_string()).collect();
        let mut message = format!(
            "Function {} did not receive correct arguments:\nActual:   ({})\nExpected: {}",
            self.name(),
            actual.join(","),
            lines[0]
        );
        for line in &lines[1..] {
            message.push_str(&format!("\n          {line}"));
        }
        Err(Error::binder(message))
    }
}

//! The scalar functions Warren knows: names (case-insensitive, with Kùzu's aliases), argument
//! counts and result types. The executor implements each variant.

use std::sync::Arc;

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
    /// The number of distinct non-NULL elements.
    ListUnique,
    ListSum,
    /// `array_cosine_similarity(a, b)`: the cosine of the angle between two FLOAT[n] or
    /// DOUBLE[n] arrays (see [`ScalarFunction::bind_array_arguments`]).
    ArrayCosineSimilarity,
    /// `array_inner_product(a, b)`, alias `array_dot_product`.
    ArrayInnerProduct,
    /// `array_distance(a, b)`: Euclidean distance.
    ArrayDistance,
    /// `array_squared_distance(a, b)`.
    ArraySquaredDistance,
    ListProduct,
    ListTransform,
    ListFilter,
    ListReduce,
    ListAnyValue,
    Head,
    Last,
    Tail,
    ListToString,
    ListHasAll,
    /// 1-based position of the first element equal to a value (0: none).
    ListPosition,
    ListSlice,
    /// `map(keys, values)`.
    Map,
    /// `union_value(tag := value)`; bound with the tag as its first argument.
    UnionValue,
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
    LeftPad,
    RightPad,
    RegexpReplace,
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
    ToInt128,
    ToUInt64,
    ToUInt32,
    ToUInt16,
    ToUInt8,
    ToSerial,
    ToDouble,
    ToFloat,
    ToBool,
    Date,
    Timestamp,
    Interval,
    Blob,
    /// `uuid('...')`: a UUID from its text.
    Uuid,
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
    ("array_cat", F::ListConcat, 2, 2),
    ("list_append", F::ListAppend, 2, 2),
    ("list_prepend", F::ListPrepend, 2, 2),
    ("list_sort", F::ListSort, 1, 3),
    ("list_reverse_sort", F::ListReverseSort, 1, 2),
    ("list_distinct", F::ListDistinct, 1, 1),
    ("array_distinct", F::ListDistinct, 1, 1),
    ("list_unique", F::ListUnique, 1, 1),
    ("array_unique", F::ListUnique, 1, 1),
    ("list_sum", F::ListSum, 1, 1),
    ("array_cosine_similarity", F::ArrayCosineSimilarity, 2, 2),
    ("array_inner_product", F::ArrayInnerProduct, 2, 2),
    ("array_dot_product", F::ArrayInnerProduct, 2, 2),
    ("array_distance", F::ArrayDistance, 2, 2),
    ("array_squared_distance", F::ArraySquaredDistance, 2, 2),
    ("list_product", F::ListProduct, 1, 1),
    ("list_transform", F::ListTransform, 2, 2),
    ("list_filter", F::ListFilter, 2, 2),
    ("list_reduce", F::ListReduce, 2, 2),
    ("list_any_value", F::ListAnyValue, 1, 1),
    ("head", F::Head, 1, 1),
    ("last", F::Last, 1, 1),
    ("tail", F::Tail, 1, 1),
    ("list_to_string", F::ListToString, 2, 2),
    ("array_to_string", F::ListToString, 2, 2),
    ("list_has_all", F::ListHasAll, 2, 2),
    ("array_has_all", F::ListHasAll, 2, 2),
    ("list_position", F::ListPosition, 2, 2),
    ("list_indexof", F::ListPosition, 2, 2),
    ("array_position", F::ListPosition, 2, 2),
    ("array_indexof", F::ListPosition, 2, 2),
    ("list_slice", F::ListSlice, 3, 3),
    ("array_slice", F::ListSlice, 3, 3),
    ("map", F::Map, 2, 2),
    ("union_value", F::UnionValue, 1, 1),
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
    ("lpad", F::LeftPad, 3, 3),
    ("rpad", F::RightPad, 3, 3),
    ("regexp_replace", F::RegexpReplace, 3, 4),
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
    ("to_int128", F::ToInt128, 1, 1),
    ("to_uint64", F::ToUInt64, 1, 1),
    ("to_uint32", F::ToUInt32, 1, 1),
    ("to_uint16", F::ToUInt16, 1, 1),
    ("to_uint8", F::ToUInt8, 1, 1),
    ("to_serial", F::ToSerial, 1, 1),
    ("to_double", F::ToDouble, 1, 1),
    ("todouble", F::ToDouble, 1, 1),
    ("tofloat", F::ToDouble, 1, 1),
    ("to_float", F::ToFloat, 1, 1),
    ("to_bool", F::ToBool, 1, 1),
    ("toboolean", F::ToBool, 1, 1),
    ("date", F::Date, 1, 1),
    ("timestamp", F::Timestamp, 1, 1),
    ("interval", F::Interval, 1, 1),
    ("blob", F::Blob, 1, 1),
    ("uuid", F::Uuid, 1, 1),
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
            F::Length | F::Size | F::Offset | F::Hash | F::ListUnique | F::ListPosition => {
                LogicalType::Int64
            }
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
            | F::ToString
            | F::ListToString
            | F::LeftPad
            | F::RightPad
            | F::RegexpReplace => LogicalType::String,
            F::IsTrail
            | F::IsAcyclic
            | F::ListContains
            | F::StartsWith
            | F::EndsWith
            | F::Contains
            | F::ListHasAll
            | F::ToBool => LogicalType::Bool,
            F::Cost | F::Sqrt | F::Pow | F::ToDouble => LogicalType::Double,
            F::ToFloat => LogicalType::Float,
            // A rel bound by a pattern reads its endpoint node instead (the binder rewrites
            // the call); any other rel value gives the endpoint's internal id, as in Kùzu.
            F::StartNode | F::EndNode => LogicalType::InternalId,
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
            | F::ListSlice
            | F::Tail => first,
            F::Map => LogicalType::Map(
                Arc::new(first.element().cloned().unwrap_or(LogicalType::Any)),
                Arc::new(
                    args.get(1)
                        .and_then(LogicalType::element)
                        .cloned()
                        .unwrap_or(LogicalType::Any),
                ),
            ),
            F::UnionValue => LogicalType::Union(Arc::new(vec![warren_common::types::Field {
                name: String::new(),
                ty: args.get(1).cloned().unwrap_or(LogicalType::Any),
            }])),
            F::ListSum | F::ListProduct | F::ListReduce => {
                first.element().cloned().unwrap_or(LogicalType::Any)
            }
            F::ListTransform => LogicalType::list(LogicalType::Any),
            F::ArrayCosineSimilarity
            | F::ArrayInnerProduct
            | F::ArrayDistance
            | F::ArraySquaredDistance => match array_parameter(args) {
                Some(LogicalType::Array(element, _)) => (*element).clone(),
                _ => LogicalType::Double,
            },
            F::Split => LogicalType::list(LogicalType::String),
            F::Abs | F::Floor | F::Ceil | F::Round | F::Sign => first,
            F::ToInt64 => LogicalType::Int64,
            F::ToInt32 => LogicalType::Int32,
            F::ToInt16 => LogicalType::Int16,
            F::ToInt8 => LogicalType::Int8,
            F::ToInt128 => LogicalType::Int128,
            F::ToUInt64 => LogicalType::UInt64,
            F::ToUInt32 => LogicalType::UInt32,
            F::ToUInt16 => LogicalType::UInt16,
            F::ToUInt8 => LogicalType::UInt8,
            F::ToSerial => LogicalType::Serial,
            F::Date => LogicalType::Date,
            F::Timestamp => LogicalType::Timestamp,
            F::Interval => LogicalType::Interval,
            F::Blob => LogicalType::Blob,
            F::Uuid => LogicalType::Uuid,
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

    /// The array distance functions (two FLOAT[n]/DOUBLE[n] arguments, one number out).
    pub fn is_array_distance(self) -> bool {
        matches!(
            self,
            F::ArrayCosineSimilarity
                | F::ArrayInnerProduct
                | F::ArrayDistance
                | F::ArraySquaredDistance
        )
    }

    /// Checks the arguments of an array distance function as Kùzu does and returns the array
    /// type both are cast to: the first ARRAY argument's type, or, when every argument is a
    /// constant list (`constant_lengths[i]` is its length), the first one's element type and
    /// length. The result type is that array's element type.
    pub fn bind_array_arguments(
        self,
        types: &[LogicalType],
        constant_lengths: &[Option<usize>],
    ) -> Result<LogicalType> {
        assert!(
            self.is_array_distance(),
            "{self:?} is not an array function"
        );
        assert_eq!(types.len(), constant_lengths.len());
        let name = self.name();
        for ty in types {
            match ty {
                LogicalType::Any => {
                    return Err(Error::binder(
                        "Cannot retrieve child type of type ANY. LIST or ARRAY is expected.",
                    ))
                }
                LogicalType::List(_) | LogicalType::Array(..) => {}
                _ => {
                    let actual: Vec<String> = types.iter().map(ToString::to_string).collect();
                    return Err(Error::binder(format!(
                        "Function {name} did not receive correct arguments:\nActual:   ({})\n\
                         Expected: (ARRAY,ARRAY) -> ANY",
                        actual.join(",")
                    )));
                }
            }
        }
        for ty in types {
            if !matches!(ty.element(), Some(LogicalType::Float | LogicalType::Double)) {
                return Err(Error::binder(format!(
                    "{name} requires argument type to be FLOAT[] or DOUBLE[]."
                )));
            }
        }
        if let Some(array) = array_parameter(types) {
            return Ok(array);
        }
        match constant_lengths {
            [Some(length), ..] if constant_lengths.iter().all(Option::is_some) => {
                let element = types[0].element().cloned().unwrap_or(LogicalType::Double);
                Ok(LogicalType::Array(Arc::new(element), *length as u32))
            }
            _ => Err(Error::binder(format!(
                "{name} requires at least one argument to be ARRAY but all parameters are LIST."
            ))),
        }
    }

    /// Checks argument types where Kùzu rejects them at bind time.
    pub fn check_arguments(self, args: &[LogicalType]) -> Result<()> {
        match self {
            F::ListToString => return check_list_to_string(args),
            F::ListHasAll => return check_same_elements(self, args),
            F::ListSum | F::ListProduct => return check_numeric_elements(self, args),
            _ => {}
        }
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

/// The first ARRAY among an array function's argument types.
fn array_parameter(types: &[LogicalType]) -> Option<LogicalType> {
    types
        .iter()
        .find(|t| matches!(t, LogicalType::Array(..)))
        .cloned()
}

/// `list_to_string(separator, list)`: the second argument must be a list.
fn check_list_to_string(args: &[LogicalType]) -> Result<()> {
    match args.get(1) {
        None | Some(LogicalType::Any | LogicalType::List(_) | LogicalType::Array(..)) => Ok(()),
        Some(_) => {
            let actual: Vec<String> = args.iter().map(|t| t.to_string()).collect();
            Err(Error::binder(format!(
                "Function LIST_TO_STRING did not receive correct arguments:\nActual:   ({})\nExpected: (STRING,LIST) -> STRING",
                actual.join(",")
            )))
        }
    }
}

/// `list_sum` and `list_product` add or multiply numbers only.
fn check_numeric_elements(function: ScalarFunction, args: &[LogicalType]) -> Result<()> {
    match args.first().and_then(LogicalType::element) {
        Some(element) if *element != LogicalType::Any && !element.is_numeric() => {
            Err(Error::binder(format!(
                "Unsupported inner data type for {}: {element}",
                function.name()
            )))
        }
        _ => Ok(()),
    }
}

/// Whether values of `ty` are nested (their exact types are compared structurally at run time).
fn is_nested(ty: &LogicalType) -> bool {
    matches!(
        ty,
        LogicalType::List(_)
            | LogicalType::Array(..)
            | LogicalType::Struct(_)
            | LogicalType::Map(..)
            | LogicalType::Union(_)
    )
}

/// Two lists whose known, flat element types differ cannot be compared (`list_has_all`).
fn check_same_elements(function: ScalarFunction, args: &[LogicalType]) -> Result<()> {
    let [left, right] = args else {
        return Ok(());
    };
    let (Some(a), Some(b)) = (left.element(), right.element()) else {
        return Ok(());
    };
    let comparable = a == b
        || matches!(a, LogicalType::Any)
        || matches!(b, LogicalType::Any)
        || is_nested(a)
        || is_nested(b);
    if comparable {
        return Ok(());
    }
    Err(Error::binder(format!(
        "Cannot bind {} with parameter type {left} and {right}.",
        function.name()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_functions_resolve_with_their_aliases() {
        for (name, function) in [
            ("LIST_TO_STRING", F::ListToString),
            ("array_indexof", F::ListPosition),
            ("list_indexof", F::ListPosition),
            ("array_position", F::ListPosition),
            ("array_slice", F::ListSlice),
            ("array_cat", F::ListConcat),
            ("list_unique", F::ListUnique),
            ("list_distinct", F::ListDistinct),
            ("to_uint8", F::ToUInt8),
            ("TO_INT128", F::ToInt128),
            ("regexp_replace", F::RegexpReplace),
            ("lpad", F::LeftPad),
            ("rpad", F::RightPad),
        ] {
            assert_eq!(
                ScalarFunction::lookup(name).map(|l| l.0),
                Some(function),
                "{name}"
            );
        }
        assert_eq!(
            ScalarFunction::lookup("regexp_replace"),
            Some((F::RegexpReplace, 3, 4))
        );
    }

    #[test]
    fn list_argument_checks_follow_kuzu() {
        let ints = LogicalType::list(LogicalType::Int64);
        let strings = LogicalType::list(LogicalType::String);
        let error = F::ListHasAll.check_arguments(&[ints.clone(), strings.clone()]);
        assert_eq!(
            error.unwrap_err().to_string(),
            "Binder exception: Cannot bind LIST_HAS_ALL with parameter type INT64[] and STRING[]."
        );
        let empty = LogicalType::list(LogicalType::Any);
        assert!(F::ListHasAll
            .check_arguments(&[ints.clone(), empty])
            .is_ok());
        assert!(F::ListHasAll
            .check_arguments(&[ints.clone(), ints.clone()])
            .is_ok());
        let error = F::ListToString.check_arguments(&[LogicalType::String, LogicalType::String]);
        assert_eq!(
            error.unwrap_err().to_string(),
            "Binder exception: Function LIST_TO_STRING did not receive correct arguments:\nActual:   (STRING,STRING)\nExpected: (STRING,LIST) -> STRING"
        );
        assert!(F::ListToString
            .check_arguments(&[LogicalType::String, strings])
            .is_ok());
        assert_eq!(
            F::ListUnique
                .return_type(std::slice::from_ref(&ints))
                .unwrap(),
            LogicalType::Int64
        );
        assert_eq!(
            F::ToUInt16.return_type(&[ints]).unwrap(),
            LogicalType::UInt16
        );
    }
}

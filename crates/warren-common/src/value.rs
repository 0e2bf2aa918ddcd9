//! Runtime values. Nodes, rels and paths are references (`table:offset`) into an immutable
//! snapshot; their properties are read through [`GraphLookup`] when a value is printed.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::ids::{InternalId, TableId};
use crate::temporal::Interval;
use crate::types::LogicalType;

/// The property names a node or rel inside a recursive rel carries when the pattern has a
/// projection list `(r, n | ... | {r.a}, {n.b})`; `None` on a value means "all properties".
pub type Projection = Arc<Vec<Arc<str>>>;

/// A DECIMAL(precision, scale) value: the unscaled integer and its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decimal {
    pub value: i128,
    pub precision: u8,
    pub scale: u8,
}

impl Decimal {
    pub fn to_f64(&self) -> f64 {
        self.value as f64 / 10f64.powi(i32::from(self.scale))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NodeValue {
    pub id: InternalId,
    pub projection: Option<Projection>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RelValue {
    /// The rel's table (one FROM/TO pair) and offset.
    pub id: InternalId,
    pub projection: Option<Projection>,
}

/// A path or a recursive rel. For a named path `nodes` holds every node, endpoints included; for
/// a recursive rel variable it holds only the intermediate nodes, as Kùzu prints them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathValue {
    pub nodes: Vec<NodeValue>,
    pub rels: Vec<RelValue>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructValue {
    pub fields: Vec<(Arc<str>, Value)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UnionValue {
    pub tag: Arc<str>,
    pub value: Value,
}

/// A value. NULL is untyped; every other variant carries its type.
#[derive(Clone, Debug, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Int128(i128),
    UInt8(u8),
    UInt16(u16),
    UInt32(u32),
    UInt64(u64),
    Float(f32),
    Double(f64),
    /// A fixed-point number: `value / 10^scale`.
    Decimal(Box<Decimal>),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since the epoch, UTC.
    Timestamp(i64),
    TimestampNs(i64),
    TimestampMs(i64),
    TimestampSec(i64),
    TimestampTz(i64),
    Interval(Interval),
    String(Arc<str>),
    Blob(Arc<[u8]>),
    Uuid(u128),
    /// LIST and fixed-size ARRAY values alike.
    List(Arc<[Value]>),
    Struct(Arc<StructValue>),
    Map(Arc<[(Value, Value)]>),
    Union(Arc<UnionValue>),
    InternalId(InternalId),
    Node(NodeValue),
    Rel(RelValue),
    Path(Arc<PathValue>),
}

impl Value {
    pub fn string(text: impl Into<Arc<str>>) -> Self {
        Value::String(text.into())
    }

    pub fn list(values: Vec<Value>) -> Self {
        Value::List(values.into())
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The most specific logical type of this value (`Any` for NULL).
    pub fn logical_type(&self) -> LogicalType {
        match self {
            Value::Null => LogicalType::Any,
            Value::Bool(_) => LogicalType::Bool,
            Value::Int8(_) => LogicalType::Int8,
            Value::Int16(_) => LogicalType::Int16,
            Value::Int32(_) => LogicalType::Int32,
            Value::Int64(_) => LogicalType::Int64,
            Value::Int128(_) => LogicalType::Int128,
            Value::UInt8(_) => LogicalType::UInt8,
            Value::UInt16(_) => LogicalType::UInt16,
            Value::UInt32(_) => LogicalType::UInt32,
            Value::UInt64(_) => LogicalType::UInt64,
            Value::Float(_) => LogicalType::Float,
            Value::Double(_) => LogicalType::Double,
            Value::Decimal(d) => LogicalType::Decimal(d.precision, d.scale),
            Value::Date(_) => LogicalType::Date,
            Value::Timestamp(_) => LogicalType::Timestamp,
            Value::TimestampNs(_) => LogicalType::TimestampNs,
            Value::TimestampMs(_) => LogicalType::TimestampMs,
            Value::TimestampSec(_) => LogicalType::TimestampSec,
            Value::TimestampTz(_) => LogicalType::TimestampTz,
            Value::Interval(_) => LogicalType::Interval,
            Value::String(_) => LogicalType::String,
            Value::Blob(_) => LogicalType::Blob,
            Value::Uuid(_) => LogicalType::Uuid,
            Value::List(values) => LogicalType::list(
                values
                    .iter()
                    .map(Value::logical_type)
                    .find(|t| *t != LogicalType::Any)
                    .unwrap_or(LogicalType::Any),
            ),
            Value::Struct(s) => LogicalType::Struct(Arc::new(
                s.fields
                    .iter()
                    .map(|(name, v)| crate::types::Field {
                        name: name.to_string(),
                        ty: v.logical_type(),
                    })
                    .collect(),
            )),
            Value::Map(entries) => {
                let (k, v) = entries
                    .first()
                    .map(|(k, v)| (k.logical_type(), v.logical_type()))
                    .unwrap_or((LogicalType::Any, LogicalType::Any));
                LogicalType::Map(Arc::new(k), Arc::new(v))
            }
            Value::Union(u) => u.value.logical_type(),
            Value::InternalId(_) => LogicalType::InternalId,
            Value::Node(_) => LogicalType::Node,
            Value::Rel(_) => LogicalType::Rel,
            Value::Path(_) => LogicalType::RecursiveRel,
        }
    }

    /// The value as a signed 128-bit integer, for integer types.
    pub fn as_i128(&self) -> Option<i128> {
        Some(match *self {
            Value::Int8(v) => v.into(),
            Value::Int16(v) => v.into(),
            Value::Int32(v) => v.into(),
            Value::Int64(v) => v.into(),
            Value::Int128(v) => v,
            Value::UInt8(v) => v.into(),
            Value::UInt16(v) => v.into(),
            Value::UInt32(v) => v.into(),
            Value::UInt64(v) => v.into(),
            _ => return None,
        })
    }

    pub fn as_i64(&self) -> Option<i64> {
        self.as_i128().and_then(|v| i64::try_from(v).ok())
    }

    /// The value as a double, for numeric types.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(v) => Some(f64::from(v)),
            Value::Double(v) => Some(v),
            Value::Decimal(ref d) => Some(d.to_f64()),
            _ => self.as_i128().map(|v| v as f64),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(values) => Some(values),
            _ => None,
        }
    }

    pub fn is_numeric(&self) -> bool {
        self.as_f64().is_some()
    }

    fn is_float(&self) -> bool {
        matches!(self, Value::Float(_) | Value::Double(_) | Value::Decimal(_))
    }

    /// The node or rel id carried by an id, node or rel value.
    pub fn internal_id(&self) -> Option<InternalId> {
        match self {
            Value::InternalId(id) => Some(*id),
            Value::Node(node) => Some(node.id),
            Value::Rel(rel) => Some(rel.id),
            _ => None,
        }
    }

    /// SQL comparison: `None` when either side is NULL or the values are not comparable.
    /// Numbers of different types compare by value.
    pub fn sql_cmp(&self, other: &Value) -> Option<Ordering> {
        if self.is_null() || other.is_null() {
            return None;
        }
        if let (Some(a), Some(b)) = (self.as_i128(), other.as_i128()) {
            return Some(a.cmp(&b));
        }
        if self.is_float() || other.is_float() {
            if let (Some(a), Some(b)) = (self.as_f64(), other.as_f64()) {
                return a.partial_cmp(&b);
            }
        }
        match (self, other) {
            (Value::List(a), Value::List(b)) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    match x.sql_cmp(y) {
                        Some(Ordering::Equal) => continue,
                        other => return other,
                    }
                }
                Some(a.len().cmp(&b.len()))
            }
            (Value::Struct(a), Value::Struct(b)) => {
                if a.fields.len() != b.fields.len() {
                    return None;
                }
                for ((_, x), (_, y)) in a.fields.iter().zip(b.fields.iter()) {
                    match x.sql_cmp(y) {
                        Some(Ordering::Equal) => continue,
                        other => return other,
                    }
                }
                Some(Ordering::Equal)
            }
            (Value::Timestamp(a), Value::Date(b)) => {
                Some(a.cmp(&(i64::from(*b) * crate::temporal::MICROS_PER_DAY)))
            }
            (Value::Date(a), Value::Timestamp(b)) => {
                Some((i64::from(*a) * crate::temporal::MICROS_PER_DAY).cmp(b))
            }
            _ if std::mem::discriminant(self) == std::mem::discriminant(other) => {
                Some(self.total_cmp(other))
            }
            _ => None,
        }
    }

    /// SQL equality: `None` when either side is NULL.
    pub fn sql_eq(&self, other: &Value) -> Option<bool> {
        if self.is_null() || other.is_null() {
            return None;
        }
        match (self, other) {
            (Value::Node(a), Value::Node(b)) => Some(a.id == b.id),
            (Value::Rel(a), Value::Rel(b)) => Some(a.id == b.id),
            (Value::List(a), Value::List(b)) => {
                if a.len() != b.len() {
                    return Some(false);
                }
                let mut all = Some(true);
                for (x, y) in a.iter().zip(b.iter()) {
                    match x.sql_eq(y) {
                        Some(true) => {}
                        Some(false) => return Some(false),
                        None => all = None,
                    }
                }
                all
            }
            _ => Some(
                self.sql_cmp(other)
                    .map(|o| o == Ordering::Equal)
                    .unwrap_or(false),
            ),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Value::Bool(_) => 1,
            Value::Int8(_)
            | Value::Int16(_)
            | Value::Int32(_)
            | Value::Int64(_)
            | Value::Int128(_)
            | Value::UInt8(_)
            | Value::UInt16(_)
            | Value::UInt32(_)
            | Value::UInt64(_)
            | Value::Float(_)
            | Value::Double(_)
            | Value::Decimal(_) => 2,
            Value::Date(_) => 3,
            Value::Timestamp(_) => 4,
            Value::TimestampNs(_) => 5,
            Value::TimestampMs(_) => 6,
            Value::TimestampSec(_) => 7,
            Value::TimestampTz(_) => 8,
            Value::Interval(_) => 9,
            Value::String(_) => 10,
            Value::Blob(_) => 11,
            Value::Uuid(_) => 12,
            Value::List(_) => 13,
            Value::Struct(_) => 14,
            Value::Map(_) => 15,
            Value::Union(_) => 16,
            Value::InternalId(_) => 17,
            Value::Node(_) => 18,
            Value::Rel(_) => 19,
            Value::Path(_) => 20,
            Value::Null => 255,
        }
    }

    /// A total order for sorting: NULL sorts after every other value (last in ascending order,
    /// first in descending order, as in Kùzu); numbers compare by value.
    pub fn total_cmp(&self, other: &Value) -> Ordering {
        let (rank_a, rank_b) = (self.rank(), other.rank());
        if rank_a != rank_b {
            return rank_a.cmp(&rank_b);
        }
        match (self, other) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            _ if rank_a == 2 => match (self.as_i128(), other.as_i128()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => compare_doubles(self.as_f64().unwrap_or(0.0), other.as_f64().unwrap_or(0.0)),
            },
            (Value::Date(a), Value::Date(b)) => a.cmp(b),
            (Value::Timestamp(a), Value::Timestamp(b))
            | (Value::TimestampNs(a), Value::TimestampNs(b))
            | (Value::TimestampMs(a), Value::TimestampMs(b))
            | (Value::TimestampSec(a), Value::TimestampSec(b))
            | (Value::TimestampTz(a), Value::TimestampTz(b)) => a.cmp(b),
            (Value::Interval(a), Value::Interval(b)) => {
                a.normalized_micros().cmp(&b.normalized_micros())
            }
            (Value::String(a), Value::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Value::Blob(a), Value::Blob(b)) => a.cmp(b),
            (Value::Uuid(a), Value::Uuid(b)) => a.cmp(b),
            (Value::List(a), Value::List(b)) => cmp_slices(a, b),
            (Value::Struct(a), Value::Struct(b)) => {
                for ((_, x), (_, y)) in a.fields.iter().zip(b.fields.iter()) {
                    let order = x.total_cmp(y);
                    if order != Ordering::Equal {
                        return order;
                    }
                }
                a.fields.len().cmp(&b.fields.len())
            }
            (Value::Map(a), Value::Map(b)) => {
                for ((ka, va), (kb, vb)) in a.iter().zip(b.iter()) {
                    let order = ka.total_cmp(kb).then_with(|| va.total_cmp(vb));
                    if order != Ordering::Equal {
                        return order;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Value::Union(a), Value::Union(b)) => a.value.total_cmp(&b.value),
            (Value::InternalId(a), Value::InternalId(b)) => a.cmp(b),
            (Value::Node(a), Value::Node(b)) => a.id.cmp(&b.id),
            (Value::Rel(a), Value::Rel(b)) => a.id.cmp(&b.id),
            (Value::Path(a), Value::Path(b)) => {
                let ids_a = a.rels.iter().map(|r| r.id);
                let ids_b = b.rels.iter().map(|r| r.id);
                ids_a.cmp(ids_b).then_with(|| {
                    a.nodes
                        .iter()
                        .map(|n| n.id)
                        .cmp(b.nodes.iter().map(|n| n.id))
                })
            }
            _ => Ordering::Equal,
        }
    }
}

fn cmp_slices(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b.iter()) {
        let order = x.total_cmp(y);
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// Grouping equality: two values are the same group key when they are structurally equal.
/// Numbers of different types are equal when their values are (1 = 1.0); NULL equals NULL.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Int64(a), Value::Int64(b)) => a == b,
            (Value::Node(a), Value::Node(b)) => a.id == b.id,
            (Value::Rel(a), Value::Rel(b)) => a.id == b.id,
            (Value::Path(a), Value::Path(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits() || a == b,
            (Value::Double(a), Value::Double(b)) => a.to_bits() == b.to_bits() || a == b,
            _ if self.rank() == other.rank() => self.total_cmp(other) == Ordering::Equal,
            _ => false,
        }
    }
}

impl Eq for Value {}

/// Two numbers as doubles, as `total_cmp` orders them: by value, so that -0.0 equals 0 (as
/// `==` has it; `f64::total_cmp` puts -0.0 first); a NaN, which has no value order, by
/// `f64::total_cmp` (after every number, or before for a negative NaN).
pub fn compare_doubles(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or_else(|| a.total_cmp(&b))
}

/// Hashes a number through the double it compares as, so that numbers equal to each other
/// hash alike: a whole double as the bare i128 (63.0 as 63), -0.0 as 0, others by their bits.
fn hash_double<H: Hasher>(v: f64, state: &mut H) {
    if v.fract() == 0.0 && v.abs() < 1e30 {
        (v as i128).hash(state);
    } else {
        v.to_bits().hash(state);
    }
}

/// Hashes an integer as the double it compares as against a float (`hash_double`). Up to 2^53
/// that double is the integer itself, hashed as the bare i128 without the conversion; above,
/// integers that one double rounds to hash alike (an integer equals that double, though not
/// the other integers: hashing can only merge them).
fn hash_integer<H: Hasher>(v: i128, state: &mut H) {
    const EXACT_IN_A_DOUBLE: u128 = 1 << 53;
    if v.unsigned_abs() <= EXACT_IN_A_DOUBLE {
        v.hash(state);
    } else {
        hash_double(v as f64, state);
    }
}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Value::Null => {}
            Value::Bool(b) => b.hash(state),
            Value::Float(_) | Value::Double(_) | Value::Decimal(_) => {
                hash_double(self.as_f64().unwrap_or(0.0), state);
            }
            // The bare i128, as the whole-number floats above: 63 and 63.0 are one key.
            _ if self.rank() == 2 => hash_integer(self.as_i128().unwrap_or(0), state),
            Value::Date(v) => v.hash(state),
            Value::Timestamp(v)
            | Value::TimestampNs(v)
            | Value::TimestampMs(v)
            | Value::TimestampSec(v)
            | Value::TimestampTz(v) => v.hash(state),
            Value::Interval(v) => v.normalized_micros().hash(state),
            Value::String(s) => s.hash(state),
            Value::Blob(b) => b.hash(state),
            Value::Uuid(u) => u.hash(state),
            Value::List(values) => values.hash(state),
            Value::Struct(s) => s.fields.iter().for_each(|(_, v)| v.hash(state)),
            Value::Map(entries) => entries.hash(state),
            Value::Union(u) => u.value.hash(state),
            Value::InternalId(id) => id.hash(state),
            Value::Node(n) => n.id.hash(state),
            Value::Rel(r) => r.id.hash(state),
            Value::Path(p) => {
                p.nodes.iter().for_each(|n| n.id.hash(state));
                p.rels.iter().for_each(|r| r.id.hash(state));
            }
            _ => {}
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int64(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Double(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::String(v.into())
    }
}

/// Read access to the graph a node, rel or path value refers to, for printing and conversion.
pub trait GraphLookup {
    /// The label (table name) of a node or rel table; rel pair tables answer their group's name.
    fn table_name(&self, table: TableId) -> String;
    /// The properties of a node or rel in schema order, NULLs included.
    fn properties(&self, id: InternalId, is_rel: bool) -> Vec<(Arc<str>, Value)>;
    /// The stored source and destination of a rel.
    fn rel_endpoints(&self, id: InternalId) -> (InternalId, InternalId);
}

/// A lookup that knows nothing: nodes and rels print with their ids only.
#[derive(Debug, Default)]
pub struct NoGraph;

impl GraphLookup for NoGraph {
    fn table_name(&self, table: TableId) -> String {
        format!("table{table}")
    }

    fn properties(&self, _id: InternalId, _is_rel: bool) -> Vec<(Arc<str>, Value)> {
        Vec::new()
    }

    fn rel_endpoints(&self, id: InternalId) -> (InternalId, InternalId) {
        (id, id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_across_types() {
        assert_eq!(
            Value::Int64(1).sql_cmp(&Value::Double(1.5)),
            Some(Ordering::Less)
        );
        assert_eq!(Value::Int32(3).sql_eq(&Value::Int64(3)), Some(true));
        assert_eq!(Value::Null.sql_eq(&Value::Int64(3)), None);
        assert_eq!(Value::Int64(1), Value::Double(1.0));
    }

    /// Values that are one group key hash alike, so a hash map finds either from the other.
    #[test]
    fn equal_numbers_hash_alike() {
        use std::collections::hash_map::DefaultHasher;
        fn hash_of(value: &Value) -> u64 {
            let mut hasher = DefaultHasher::new();
            value.hash(&mut hasher);
            hasher.finish()
        }
        let groups = [
            vec![
                Value::Int64(63),
                Value::Double(63.0),
                Value::Int32(63),
                Value::Float(63.0),
            ],
            vec![Value::Int64(-1), Value::Double(-1.0), Value::Int8(-1)],
            vec![Value::Int64(0), Value::Double(0.0), Value::UInt8(0)],
            vec![Value::Double(0.0), Value::Double(-0.0)],
            vec![Value::Double(0.5), Value::Float(0.5)],
        ];
        for group in &groups {
            for value in group {
                assert_eq!(value, &group[0]);
                assert_eq!(hash_of(value), hash_of(&group[0]), "{value:?}");
            }
        }
        assert_ne!(hash_of(&Value::Int64(63)), hash_of(&Value::Double(63.5)));
        // Above 2^53 an integer equals the double it rounds to, and hashes as it does.
        let big = (1i64 << 53) + 1;
        assert_eq!(Value::Int64(big), Value::Double((1u64 << 53) as f64));
        assert_eq!(
            hash_of(&Value::Int64(big)),
            hash_of(&Value::Double((1u64 << 53) as f64))
        );
        let huge = 1i128 << 100;
        assert_eq!(Value::Int128(huge), Value::Double(huge as f64));
        assert_eq!(
            hash_of(&Value::Int128(huge)),
            hash_of(&Value::Double(huge as f64))
        );
    }

    /// The hash of `value` by std's hasher started from `keys` (as a seeded hasher would).
    fn hash_with(value: &Value, keys: (u64, u64)) -> u64 {
        use std::hash::Hasher as _;
        let mut hasher = std::hash::DefaultHasher::new();
        hasher.write_u64(keys.0);
        hasher.write_u64(keys.1);
        value.hash(&mut hasher);
        hasher.finish()
    }

    /// Two numbers of any numeric types near one magnitude (so that many pairs are equal),
    /// drawn where equality across types is delicate: zeros of both signs, halves, NaN,
    /// infinities, and integers around 2^53, 2^63 and 1e30 (where a whole double stops
    /// hashing as an integer).
    fn two_close_numbers() -> impl proptest::strategy::Strategy<Value = (Value, Value)> {
        use proptest::prelude::*;
        let magnitude = prop_oneof![
            Just(0.0f64),
            -4.0f64..4.0,
            (0u32..4).prop_map(|k| f64::from(k) * 0.5),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(2f64.powi(53)),
            Just(2f64.powi(62)),
            Just(1e30),
            Just(2f64.powi(100)),
        ];
        let near = |m: f64, negative: bool, kind: u8, offset: i8| {
            let m = if negative { -m } else { m };
            let whole = m as i128 + i128::from(offset);
            match kind {
                0 => Value::Double(m + f64::from(offset)),
                1 => Value::Float(m as f32),
                2 => Value::Int64(i64::try_from(whole).unwrap_or(i64::MAX)),
                3 => Value::Int128(whole),
                4 => Value::Int32(m as i32),
                _ => Value::UInt64(u64::try_from(whole).unwrap_or(0)),
            }
        };
        (
            magnitude,
            any::<bool>(),
            (0u8..6, -2i8..3),
            (0u8..6, -2i8..3),
        )
            .prop_map(
                move |(m, negative, (kind_a, offset_a), (kind_b, offset_b))| {
                    (
                        near(m, negative, kind_a, offset_a),
                        near(m, negative, kind_b, offset_b),
                    )
                },
            )
    }

    proptest::proptest! {
        /// Equal numbers hash alike (whatever their types), and equality agrees with the order:
        /// a hash map of values finds every key that equals one it holds.
        #[test]
        fn equal_numbers_hash_alike_everywhere(
            (a, b) in two_close_numbers(),
            keys in (proptest::prelude::any::<u64>(), proptest::prelude::any::<u64>()),
        ) {
            let equal = a == b;
            proptest::prop_assert_eq!(equal, a.total_cmp(&b) == Ordering::Equal);
            proptest::prop_assert_eq!(equal, b == a);
            if equal {
                proptest::prop_assert_eq!(hash_with(&a, keys), hash_with(&b, keys));
            }
        }
    }

    #[test]
    fn null_sorts_last() {
        let mut values = vec![Value::Null, Value::Int64(2), Value::Int64(1)];
        values.sort_by(Value::total_cmp);
        assert_eq!(values, vec![Value::Int64(1), Value::Int64(2), Value::Null]);
    }

    #[test]
    fn value_stays_small() {
        assert!(
            std::mem::size_of::<Value>() <= 32,
            "{}",
            std::mem::size_of::<Value>()
        );
    }
}

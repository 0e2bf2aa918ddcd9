//! User-defined scalar functions: a connection registers them (the Python package does, for
//! Python callables), the binder resolves a call to one when no built-in function has its
//! name, and the executor calls it once per row. Neither knows what implements them.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result};

/// A scalar function defined outside Warren, with declared parameter and result types.
pub trait UserFunction: Send + Sync + fmt::Debug {
    /// The name it was registered under, as written.
    fn name(&self) -> &str;

    /// The declared type of each parameter; arguments are cast to these.
    fn parameter_types(&self) -> &[LogicalType];

    /// The declared type of the result; `call` returns a value of this type or NULL.
    fn return_type(&self) -> &LogicalType;

    /// Whether a NULL argument makes the result NULL without calling the function (Kùzu's
    /// default null handling).
    fn null_in_null_out(&self) -> bool {
        true
    }

    /// Calls the function on one row's arguments, already cast to the parameter types.
    fn call(&self, args: &[Value]) -> Result<Value>;
}

/// A user function inside a bound expression: compares by identity, as two registrations of
/// one name are different functions.
#[derive(Clone)]
pub struct UserFunctionRef(pub Arc<dyn UserFunction>);

impl UserFunctionRef {
    /// Calls the function, giving NULL for a NULL argument when it asks for that.
    pub fn call(&self, args: &[Value]) -> Result<Value> {
        let function = &self.0;
        debug_assert_eq!(args.len(), function.parameter_types().len());
        if function.null_in_null_out() && args.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        function.call(args)
    }
}

impl PartialEq for UserFunctionRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for UserFunctionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UserFunction({})", self.0.name())
    }
}

/// A connection's user functions by name (case-insensitive, as function names are).
#[derive(Clone, Debug, Default)]
pub struct UserFunctions {
    functions: HashMap<String, Arc<dyn UserFunction>>,
}

impl UserFunctions {
    /// Registers `function`; Kùzu's error when a function (built-in or not) has its name.
    pub fn create(&mut self, function: Arc<dyn UserFunction>) -> Result<()> {
        let name = function.name().to_string();
        let key = name.to_ascii_lowercase();
        if self.functions.contains_key(&key) || is_built_in(&name) {
            return Err(Error::Catalog(format!("function {name} already exists.")));
        }
        self.functions.insert(key, function);
        Ok(())
    }

    /// Removes the user function `name`; built-in functions cannot be removed.
    pub fn remove(&mut self, name: &str) -> Result<()> {
        self.functions
            .remove(&name.to_ascii_lowercase())
            .map(drop)
            .ok_or_else(|| Error::Catalog(format!("function {name} doesn't exist.")))
    }

    /// The user function `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<Arc<dyn UserFunction>> {
        self.functions.get(&name.to_ascii_lowercase()).cloned()
    }
}

/// Whether `name` is a built-in scalar or aggregate function.
fn is_built_in(name: &str) -> bool {
    crate::functions::ScalarFunction::lookup(name).is_some()
        || crate::expr::AggregateFunction::from_name(name).is_some()
}

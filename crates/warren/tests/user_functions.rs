//! User-defined scalar functions: registered on a connection, bound when no built-in has the
//! name, arguments cast to the declared parameter types, called once per row, NULL in NULL out
//! unless the function asks for its NULLs, and Kùzu's catalog errors on create and remove.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use warren::{Connection, Database, Error, LogicalType, Result, UserFunction, Value};

/// `name(x INT64) -> INT64`: x + 1, or -1 for NULL when it handles NULLs itself; counts calls.
#[derive(Debug)]
struct AddOne {
    name: &'static str,
    parameters: Vec<LogicalType>,
    null_in_null_out: bool,
    calls: AtomicUsize,
}

impl AddOne {
    fn new(name: &'static str, null_in_null_out: bool) -> Arc<Self> {
        Arc::new(Self {
            name,
            parameters: vec![LogicalType::Int64],
            null_in_null_out,
            calls: AtomicUsize::new(0),
        })
    }
}

impl UserFunction for AddOne {
    fn name(&self) -> &str {
        self.name
    }

    fn parameter_types(&self) -> &[LogicalType] {
        &self.parameters
    }

    fn return_type(&self) -> &LogicalType {
        &LogicalType::Int64
    }

    fn null_in_null_out(&self) -> bool {
        self.null_in_null_out
    }

    fn call(&self, args: &[Value]) -> Result<Value> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        match &args[0] {
            Value::Int64(x) if *x == 13 => Err(Error::runtime("unlucky")),
            Value::Int64(x) => Ok(Value::Int64(x + 1)),
            Value::Null => Ok(Value::Int64(-1)),
            other => panic!("argument not cast to INT64: {other:?}"),
        }
    }
}

fn single(conn: &mut Connection, query: &str) -> Value {
    let mut result = conn.query(query).expect(query);
    let rows = result.collect_rows().expect(query);
    assert_eq!(rows.len(), 1, "{query}");
    rows[0][0].clone()
}

fn error(conn: &mut Connection, query: &str) -> String {
    let outcome = conn.query(query).and_then(|mut r| r.collect_rows());
    outcome.expect_err(query).to_string()
}

#[test]
fn calls_with_cast_arguments_per_row() {
    let db = Database::in_memory();
    let mut conn = db.connect();
    let function = AddOne::new("AddOne", true);
    conn.create_function(function.clone()).expect("create");
    assert_eq!(single(&mut conn, "RETURN addone(41)"), Value::Int64(42));
    assert_eq!(
        single(&mut conn, "RETURN ADDONE(CAST(1 AS INT16))"),
        Value::Int64(2)
    );
    assert_eq!(
        single(
            &mut conn,
            "UNWIND range(1, 10) AS x WITH x WHERE AddOne(x) % 2 = 0 RETURN count(*)"
        ),
        Value::Int64(5)
    );
    assert_eq!(function.calls.load(Ordering::Relaxed), 12);
    assert!(error(&mut conn, "RETURN AddOne(13)").contains("unlucky"));
    assert!(error(&mut conn, "RETURN AddOne(1, 2)").contains("did not receive correct arguments"));
}

#[test]
fn null_handling() {
    let db = Database::in_memory();
    let mut conn = db.connect();
    let skips = AddOne::new("skips_nulls", true);
    let sees = AddOne::new("sees_nulls", false);
    conn.create_function(skips.clone()).expect("create");
    conn.create_function(sees.clone()).expect("create");
    assert_eq!(single(&mut conn, "RETURN skips_nulls(NULL)"), Value::Null);
    assert_eq!(skips.calls.load(Ordering::Relaxed), 0);
    assert_eq!(
        single(&mut conn, "RETURN sees_nulls(NULL)"),
        Value::Int64(-1)
    );
    assert_eq!(sees.calls.load(Ordering::Relaxed), 1);
}

#[test]
fn create_and_remove_errors() {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.create_function(AddOne::new("f", true))
        .expect("create");
    assert_eq!(
        conn.create_function(AddOne::new("F", true))
            .expect_err("duplicate")
            .to_string(),
        "Catalog exception: function F already exists."
    );
    assert_eq!(
        conn.create_function(AddOne::new("lower", true))
            .expect_err("built-in")
            .to_string(),
        "Catalog exception: function lower already exists."
    );
    assert_eq!(
        conn.remove_function("list_create")
            .expect_err("built-in")
            .to_string(),
        "Catalog exception: function list_create doesn't exist."
    );
    conn.remove_function("F").expect("remove");
    assert_eq!(
        error(&mut conn, "RETURN f(1)"),
        "Catalog exception: function F does not exist."
    );
    // Functions belong to the connection that created them.
    let mut other = db.connect();
    other
        .create_function(AddOne::new("g", true))
        .expect("create");
    assert!(error(&mut conn, "RETURN g(1)").contains("does not exist"));
}

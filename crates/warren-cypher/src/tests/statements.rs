//! Statements and clauses: DDL, COPY, settings, transactions, EXPLAIN/PROFILE, and every
//! clause of a query.

use super::{clauses, match_clause, projection, query, render, statement};
use crate::ast::{Clause, JoinHint, SetItem, Statement, TransactionCommand};
use crate::{parse_script, parse_statement};

#[test]
fn create_node_table() {
    let text = "create node table person (ID INt64, fName StRING, workedHours INT64[], \
                grid INT64[][], grades INT64[4], state STRUCT(revenue INT16, stock STRUCT(price \
                INT64[], volume INT64)), m MAP(STRING, INT64), u UNION(a INT64, b STRING), \
                d DECIMAL(38, 4), PRIMARY KEY (ID));";
    let Statement::CreateNodeTable(table) = statement(text) else {
        panic!("not a node table")
    };
    assert_eq!(table.name, "person");
    assert!(!table.if_not_exists);
    assert_eq!(table.primary_key.as_deref(), Some("ID"));
    let types: Vec<&str> = table
        .properties
        .iter()
        .map(|p| p.type_name.as_str())
        .collect();
    assert_eq!(
        types,
        [
            "INt64",
            "StRING",
            "INT64[]",
            "INT64[][]",
            "INT64[4]",
            "STRUCT(revenue INT16, stock STRUCT(price INT64[], volume INT64))",
            "MAP(STRING, INT64)",
            "UNION(a INT64, b STRING)",
            "DECIMAL(38, 4)",
        ]
    );
}

#[test]
fn create_node_table_inline_key_and_default() {
    let text = "CREATE NODE TABLE IF NOT EXISTS A(ID SERIAL PRIMARY KEY, name STRING DEFAULT 'x')";
    let Statement::CreateNodeTable(table) = statement(text) else {
        panic!("not a node table")
    };
    assert!(table.if_not_exists);
    assert_eq!(table.primary_key.as_deref(), Some("ID"));
    assert_eq!(
        render(table.properties[1].default.as_ref().expect("default")),
        "'x'"
    );
    super::error_message("CREATE NODE TABLE A(ID INT64 PRIMARY KEY, PRIMARY KEY (ID))");
}

#[test]
fn create_rel_table() {
    let text = "create rel table knows (FROM person TO person, FROM a TO b, date DATE, \
                summary STRUCT(transfer STRUCT(day DATE, amount INT64[])), MANY_MAnY);";
    let Statement::CreateRelTable(table) = statement(text) else {
        panic!("not a rel table")
    };
    assert_eq!(
        table.connections,
        [("person".into(), "person".into()), ("a".into(), "b".into())]
    );
    assert_eq!(table.properties.len(), 2);
    assert_eq!(table.multiplicity.as_deref(), Some("MANY_MANY"));
    let Statement::CreateRelTable(table) = statement("CREATE REL TABLE LivesIn(FROM User TO City)")
    else {
        panic!("not a rel table")
    };
    assert!(table.multiplicity.is_none() && table.properties.is_empty());
}

#[test]
fn drop_table() {
    assert_eq!(
        statement("DROP TABLE IF EXISTS after"),
        Statement::DropTable {
            name: "after".into(),
            if_exists: true
        }
    );
    assert_eq!(
        statement("drop table T;"),
        Statement::DropTable {
            name: "T".into(),
            if_exists: false
        }
    );
}

#[test]
fn copy_from_files() {
    let Statement::Copy(copy) = statement("COPY User From \"dataset/demo-db/csv/user.csv\"") else {
        panic!("not COPY")
    };
    assert_eq!(
        (copy.table.as_str(), copy.files.as_slice()),
        ("User", &["dataset/demo-db/csv/user.csv".to_string()][..])
    );
    let text = "COPY T FROM ['a.csv', 'b.csv'] (HEADER=true, DELIM='|', QUOTE='\"', \
                ESCAPE='\\\\', SKIP=2, PARALLEL=false)";
    let Statement::Copy(copy) = statement(text) else {
        panic!("not COPY")
    };
    assert_eq!(copy.files, ["a.csv", "b.csv"]);
    let names: Vec<&str> = copy.options.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["HEADER", "DELIM", "QUOTE", "ESCAPE", "SKIP", "PARALLEL"]
    );
    assert_eq!(render(&copy.options[3].1), "'\\'");
}

#[test]
fn copy_with_queries() {
    let text = "COPY Account FROM ( LOAD FROM 'account.csv' (header = true) RETURN CAST(id, \
                \"INT64\"), account_id )";
    let Statement::CopyFromQuery { table, query, .. } = statement(text) else {
        panic!("not COPY FROM query")
    };
    assert_eq!(table, "Account");
    assert_eq!(query.parts[0].clauses.len(), 2);
    let text = "COPY (MATCH (u:User) RETURN u.*) TO 'user.csv' (header=true)";
    let Statement::CopyTo { file, options, .. } = statement(text) else {
        panic!("not COPY TO")
    };
    assert_eq!((file.as_str(), options.len()), ("user.csv", 1));
}

#[test]
fn copy_from_a_table_parameter_keeps_its_own_options() {
    let text = "COPY knows FROM df (from = 'a', SKIP = 1, to = 'b', ignore_errors = true)";
    let Statement::CopyFromQuery { query, options, .. } = statement(text) else {
        panic!("not COPY FROM query")
    };
    let names: Vec<&str> = options.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let Clause::LoadFrom(load) = &query.parts[0].clauses[0] else {
        panic!("not LOAD FROM")
    };
    let scan: Vec<&str> = load.options.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(scan, ["SKIP"]);
}

#[test]
fn settings_and_transactions() {
    let Statement::CallSetting { name, value, .. } = statement("CALL THREADS=4") else {
        panic!("not a setting")
    };
    assert_eq!(
        (name.as_str(), render(&value)),
        ("THREADS", "4".to_string())
    );
    assert!(matches!(
        statement("CALL var_length_extend_max_depth = 10;"),
        Statement::CallSetting { .. }
    ));
    assert!(matches!(
        statement("CALL threads TO 2"),
        Statement::CallSetting { .. }
    ));
    let begin = |text| statement(text);
    assert_eq!(
        begin("BEGIN TRANSACTION"),
        Statement::Transaction(TransactionCommand::Begin { read_only: false })
    );
    assert_eq!(
        begin("begin transaction read only;"),
        Statement::Transaction(TransactionCommand::Begin { read_only: true })
    );
    assert_eq!(
        statement("COMMIT"),
        Statement::Transaction(TransactionCommand::Commit)
    );
    assert_eq!(
        statement("ROLLBACK;"),
        Statement::Transaction(TransactionCommand::Rollback)
    );
}

#[test]
fn explain_and_profile() {
    let Statement::Explain(inner) = statement("EXPLAIN MATCH (a) RETURN a") else {
        panic!("not EXPLAIN")
    };
    assert!(matches!(*inner, Statement::Query(_)));
    assert!(matches!(
        statement("PROFILE RETURN 1"),
        Statement::Profile(_)
    ));
}

#[test]
fn call_clauses() {
    let found = clauses("CALL table_info('person') RETURN *");
    let Clause::Call(call) = &found[0] else {
        panic!("not CALL")
    };
    assert_eq!((call.name.as_str(), call.args.len()), ("table_info", 1));
    assert!(projection(found[1].clone()).star);
    let found = clauses("CALL PROJECT_GRAPH('PK', ['person'], {'knows': 'r.x > 5'})");
    assert!(matches!(&found[0], Clause::Call(call) if call.args.len() == 3));
    let found = clauses("CALL show_tables() YIELD name AS n, type WHERE n <> 'x' RETURN n");
    let Clause::Call(call) = &found[0] else {
        panic!("not CALL")
    };
    assert_eq!(
        call.yields,
        [
            ("name".to_string(), Some("n".to_string())),
            ("type".into(), None)
        ]
    );
    assert!(call.where_clause.is_some());
    let found = clauses("CALL SHOW_TABLES() WHERE false RETURN *;");
    assert!(matches!(&found[0], Clause::Call(call) if call.where_clause.is_some()));
}

#[test]
fn call_clauses_take_named_arguments() {
    let found =
        clauses("CALL spread_activation('Knows', $s, decay := 0.5, max_hops := 2) RETURN *");
    let Clause::Call(call) = &found[0] else {
        panic!("not CALL")
    };
    let named: Vec<&str> = call
        .args
        .iter()
        .filter_map(|arg| match &arg.kind {
            crate::ast::ExprKind::NamedArgument(name, _) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!((call.args.len(), named), (4, vec!["decay", "max_hops"]));
}

#[test]
fn match_clauses_and_hints() {
    let clause = match_clause("OPTIONAL MATCH (a), (b)-[]->(c) WHERE a.x = 1 RETURN a");
    assert!(clause.optional);
    assert_eq!(clause.patterns.len(), 2);
    assert!(clause.where_clause.is_some() && clause.hint.is_none());

    let clause =
        match_clause("MATCH p = (a)-[e*]->(b) HINT (a JOIN e) JOIN b WHERE a.x = 1 RETURN p");
    assert!(clause.where_clause.is_some());
    let Some(JoinHint::Join(left, right)) = clause.hint else {
        panic!("no hint")
    };
    assert!(matches!(*left, JoinHint::Join(..)));
    assert!(matches!(*right, JoinHint::Variable(ref name, _) if name == "b"));

    let clause = match_clause("MATCH (a)-[e]->(b) WHERE a.ID = 0 HINT a JOIN (e join b) RETURN a");
    assert!(clause.where_clause.is_some());
    let Some(JoinHint::Join(left, right)) = clause.hint else {
        panic!("no hint")
    };
    assert!(matches!(*left, JoinHint::Variable(ref name, _) if name == "a"));
    assert!(matches!(*right, JoinHint::Join(..)));

    let clause = match_clause("MATCH (a)-[e]->(b) HINT a MULTI_JOIN e MULTI_JOIN b RETURN a");
    assert!(matches!(clause.hint, Some(JoinHint::MultiJoin(ref parts)) if parts.len() == 3));
    let clause = match_clause("MATCH (a)-[e]->(b) HINT MULTI_JOIN(a, e JOIN b) RETURN a");
    assert!(matches!(clause.hint, Some(JoinHint::MultiJoin(ref parts)) if parts.len() == 2));
}

#[test]
fn projections() {
    let found = clauses(
        "MATCH (a) WITH DISTINCT a, a.x + 1 AS y ORDER BY y DESC SKIP 1 LIMIT 2 WHERE y > 1 \
         RETURN a.ID, COUNT(*), y AS `the y` ORDER BY a.ID ASCENDING, y DESCENDING, COUNT(*) \
         SKIP $s LIMIT 10",
    );
    let with = projection(found[1].clone());
    assert!(with.distinct && !with.star);
    assert_eq!(with.items[1].alias.as_deref(), Some("y"));
    assert_eq!(with.items[1].text, "a.x + 1");
    assert!(with.order_by[0].descending);
    assert!(with.skip.is_some() && with.limit.is_some() && with.where_clause.is_some());
    let ret = projection(found[2].clone());
    let texts: Vec<&str> = ret.items.iter().map(|item| item.text.as_str()).collect();
    assert_eq!(texts, ["a.ID", "COUNT(*)", "y"]);
    assert_eq!(ret.items[2].alias.as_deref(), Some("the y"));
    let descending: Vec<bool> = ret.order_by.iter().map(|s| s.descending).collect();
    assert_eq!(descending, [false, true, false]);
    let star = projection(clauses("RETURN *, 1 AS x").remove(0));
    assert!(star.star && star.items.len() == 1);
    let all = projection(clauses("MATCH (u) RETURN u.*").remove(1));
    assert_eq!(all.items[0].text, "u.*");
}

#[test]
fn unwind_create_merge_set_delete() {
    let found = clauses(
        "UNWIND [1, 2] AS x CREATE (a:A {x: x})-[:T]->(b:B), (c) \
         MERGE (n:Test {id: 1}) ON CREATE SET n.a = 1 ON MATCH SET n.b = 2, n += {c: 3} \
         SET a.x = 1 + 2, b = {y: 1} DETACH DELETE a DELETE b, c",
    );
    assert!(matches!(&found[0], Clause::Unwind { alias, .. } if alias == "x"));
    assert!(matches!(&found[1], Clause::Create { patterns, .. } if patterns.len() == 2));
    let Clause::Merge {
        on_create,
        on_match,
        ..
    } = &found[2]
    else {
        panic!("not MERGE")
    };
    assert_eq!((on_create.len(), on_match.len()), (1, 2));
    assert!(
        matches!(&on_match[1], SetItem::Map { variable, replace: false, .. } if variable == "n")
    );
    let Clause::Set { items, .. } = &found[3] else {
        panic!("not SET")
    };
    let SetItem::Property { target, value } = &items[0] else {
        panic!("not a property")
    };
    assert_eq!(
        (render(target), render(value)),
        ("(. a x)".to_string(), "(+ 1 2)".to_string())
    );
    assert!(matches!(&items[1], SetItem::Map { replace: true, .. }));
    assert!(matches!(&found[4], Clause::Delete { detach: true, exprs, .. } if exprs.len() == 1));
    assert!(matches!(&found[5], Clause::Delete { detach: false, exprs, .. } if exprs.len() == 2));
}

#[test]
fn load_from() {
    let text = "LOAD WITH HEADERS (name STRING, age INT64) FROM \"user.csv\" (header = true) \
                WHERE name =~ 'Adam*' RETURN name, age";
    let Clause::LoadFrom(load) = clauses(text).remove(0) else {
        panic!("not LOAD")
    };
    assert_eq!(
        load.headers,
        [
            ("name".into(), "STRING".into()),
            ("age".into(), "INT64".into())
        ]
    );
    assert_eq!(load.files, ["user.csv"]);
    assert_eq!(load.options.len(), 1);
    assert!(load.where_clause.is_some());
    let text = "LOAD FROM \"null-field.csv\"(header=true) UNWIND col2 AS t RETURN t";
    assert_eq!(clauses(text).len(), 3);
}

#[test]
fn unions() {
    let query = query("RETURN 1 AS x UNION ALL RETURN 2 AS x UNION RETURN 3 AS x");
    assert_eq!(query.parts.len(), 3);
    assert_eq!(query.union_all, [true, false]);
}

#[test]
fn scripts() {
    let statements = parse_script(
        "CREATE NODE TABLE A(id INT64, PRIMARY KEY(id));;\n\
        // comment\nMATCH (a) RETURN a; RETURN 1",
    )
    .expect("script");
    assert_eq!(statements.len(), 3);
    assert!(parse_script("  ;  ").expect("empty script").is_empty());
    assert!(parse_statement("RETURN 1; RETURN 2").is_err());
    assert!(parse_statement("RETURN 1;").is_ok());
}

#[test]
fn alter_table() {
    use crate::ast::AlterAction;
    let Statement::AlterTable { table, action, .. } =
        statement("ALTER TABLE Follows ADD score DOUBLE;")
    else {
        panic!("not ALTER TABLE")
    };
    assert_eq!(table, "Follows");
    let AlterAction::AddProperty {
        property,
        if_not_exists: false,
    } = action
    else {
        panic!("not ADD")
    };
    assert_eq!(
        (property.name.as_str(), property.type_name.as_str()),
        ("score", "DOUBLE")
    );
    let alter = |text| match statement(text) {
        Statement::AlterTable { action, .. } => action,
        other => panic!("not ALTER TABLE: {other:?}"),
    };
    assert_eq!(
        alter("alter table knows drop age"),
        AlterAction::DropProperty {
            name: "age".into(),
            if_exists: false
        }
    );
    assert_eq!(
        alter("ALTER TABLE T DROP IF EXISTS x"),
        AlterAction::DropProperty {
            name: "x".into(),
            if_exists: true
        }
    );
    assert_eq!(
        alter("ALTER TABLE T RENAME TO U"),
        AlterAction::RenameTable("U".into())
    );
    assert_eq!(
        alter("ALTER TABLE T RENAME a TO b"),
        AlterAction::RenameProperty {
            from: "a".into(),
            to: "b".into()
        }
    );
    assert!(matches!(
        alter("ALTER TABLE T ADD IF NOT EXISTS x INT64 DEFAULT 1"),
        AlterAction::AddProperty {
            if_not_exists: true,
            ..
        }
    ));
}

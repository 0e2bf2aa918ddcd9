//! The data a workload runs on: a database directory, loaded from a `warren generate` folder
//! (schema.cypher, then copy.cypher) when it has no `Person` table yet, and the edge list read
//! back through the API for the reference implementation.

use std::path::{Path, PathBuf};

use warren::{Connection, Database, Value};

use crate::error::{BenchError, BenchResult};
use crate::generate::output::{COPY_FILE, SCHEMA_FILE};
use crate::reference::ReferenceGraph;
use crate::report::DatasetInfo;

/// The node table and rel table every workload queries.
pub const NODE_TABLE: &str = "Person";
pub const REL_TABLE: &str = "Knows";

/// An opened database with its description.
#[derive(Debug)]
pub struct Dataset {
    pub database: Database,
    pub info: DatasetInfo,
}

/// Opens (creating if needed) the database at `db`; loads `dir` into it first when it has no
/// `Person` table. Loading is not timed.
pub fn open(db: &Path, dir: Option<&Path>) -> BenchResult<Dataset> {
    let mut database = Database::open(db)?;
    if !has_tables(&database) {
        let Some(dir) = dir else {
            return Err(BenchError::Dataset(format!(
                "{} has no {NODE_TABLE}/{REL_TABLE} tables; give --dataset DIR (a folder \
                 written by `warren generate`) to load one",
                db.display()
            )));
        };
        load_dir(&mut database.connect(), dir)?;
        // Reopened, so that the workload runs on the database as any later run finds it
        // (mapped from its files), not on what the load left in memory.
        drop(database);
        database = Database::open(db)?;
    }
    let mut conn = database.connect();
    let info = DatasetInfo {
        db: absolute(db).display().to_string(),
        dir: dir.map(|d| absolute(d).display().to_string()),
        name: dataset_name(db),
        nodes: count(
            &mut conn,
            &format!("MATCH (a:{NODE_TABLE}) RETURN count(*)"),
        )?,
        edges: count(
            &mut conn,
            &format!("MATCH (a:{NODE_TABLE})-[r:{REL_TABLE}]->(b:{NODE_TABLE}) RETURN count(*)"),
        )?,
    };
    Ok(Dataset { database, info })
}

fn has_tables(database: &Database) -> bool {
    let snapshot = database.snapshot();
    let catalog = snapshot.catalog();
    catalog.node_table(NODE_TABLE).is_some() && catalog.rel_table(REL_TABLE).is_some()
}

/// The database folder's name (`g16db` for `/tmp/g16db`): the same whether or not the run
/// loaded it, so that reports of one database compare as one dataset.
fn dataset_name(db: &Path) -> String {
    absolute(db)
        .file_name()
        .map_or_else(|| db.display().to_string(), |n| n.to_string_lossy().into())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Runs `dir`'s schema.cypher and copy.cypher statements on `conn`.
pub fn load_dir(conn: &mut Connection, dir: &Path) -> BenchResult<()> {
    run_script(conn, &dir.join(SCHEMA_FILE))?;
    run_script(conn, &dir.join(COPY_FILE))
}

/// Runs every statement of a script; an error names the script and the statement's line.
pub fn run_script(conn: &mut Connection, path: &Path) -> BenchResult<()> {
    for statement in script_statements(path)? {
        let mut result = conn.query(&statement.text).map_err(|error| {
            error.with_suffix(&format!(" [{}:{}]", path.display(), statement.line))
        })?;
        while result.next_row()?.is_some() {}
    }
    Ok(())
}

/// The non-empty statements of a script file.
pub fn script_statements(path: &Path) -> BenchResult<Vec<warren_cypher::StatementText>> {
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, &e))?;
    Ok(warren_cypher::split_statements(&text)
        .into_iter()
        .filter(|statement| !statement.text.trim().is_empty())
        .collect())
}

/// Runs a query answering one integer.
pub fn count(conn: &mut Connection, query: &str) -> BenchResult<u64> {
    let rows = conn.query(query)?.collect_rows()?;
    match rows.as_slice() {
        [row] if row.len() == 1 => row[0]
            .as_i64()
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| BenchError::Result(format!("{query}: not a count: {:?}", row[0]))),
        _ => Err(BenchError::Result(format!("{query}: expected one row"))),
    }
}

/// Reads the node IDs and the edge list through the API (plain scans and one-hop expands, no
/// recursive join) into a reference graph.
pub fn reference_graph(conn: &mut Connection) -> BenchResult<ReferenceGraph> {
    let mut ids = Vec::new();
    let mut nodes = conn.query(&format!("MATCH (a:{NODE_TABLE}) RETURN a.ID"))?;
    while let Some(row) = nodes.next_row()? {
        ids.push(id_of(&row[0])?);
    }
    let mut edges = Vec::new();
    let mut rels = conn.query(&format!(
        "MATCH (a:{NODE_TABLE})-[:{REL_TABLE}]->(b:{NODE_TABLE}) RETURN a.ID, b.ID"
    ))?;
    while let Some(row) = rels.next_row()? {
        edges.push((id_of(&row[0])?, id_of(&row[1])?));
    }
    ReferenceGraph::new(&ids, &edges).map_err(BenchError::Dataset)
}

fn id_of(value: &Value) -> BenchResult<i64> {
    value.as_i64().ok_or_else(|| {
        BenchError::Dataset(format!("{NODE_TABLE}.ID must be an integer: {value:?}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_dataset(dir: &Path) {
        crate::generate::output::write_dataset(dir, 4, &[(0, 1), (1, 2), (2, 0), (2, 3)]).unwrap();
    }

    #[test]
    fn loads_a_folder_once_and_reads_it_back() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("tiny");
        write_dataset(&dir);
        let db = temp.path().join("db");
        let dataset = open(&db, Some(&dir)).unwrap();
        assert_eq!(dataset.info.nodes, 4);
        assert_eq!(dataset.info.edges, 4);
        assert_eq!(dataset.info.name, "db");
        drop(dataset);
        // The second open finds the tables and does not load again (which would fail).
        let again = open(&db, Some(&dir)).unwrap();
        assert_eq!(again.info.edges, 4);
        let graph = reference_graph(&mut again.database.connect()).unwrap();
        assert_eq!(graph.node_count(), 4);
        assert_eq!(graph.edge_count(), 4);
        drop(again);
        // Without a folder, an existing database opens under the same name.
        let plain = open(&db, None).unwrap();
        assert_eq!(plain.info.name, "db");
        assert!(plain.info.dir.is_none());
    }

    #[test]
    fn an_empty_database_without_a_folder_is_an_error() {
        let temp = tempfile::tempdir().unwrap();
        let error = open(&temp.path().join("empty"), None).unwrap_err();
        assert!(matches!(error, BenchError::Dataset(_)), "{error}");
    }
}

//! The syntax tree of a Cypher statement, as written: names are unresolved strings, and every
//! node that can be blamed in an error carries its [`Span`].

/// A region of the query text: byte range plus the 1-based line and column of its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// A reading and/or updating query, possibly a UNION of single queries.
    Query(Query),
    CreateNodeTable(CreateNodeTable),
    CreateRelTable(CreateRelTable),
    /// `DROP TABLE [IF EXISTS] name`.
    DropTable {
        name: String,
        if_exists: bool,
    },
    /// `ALTER TABLE name ADD ... | DROP ... | RENAME ...` (`demo_db/wsp_demo.test` adds its
    /// weight column this way).
    AlterTable {
        table: String,
        action: AlterAction,
        span: Span,
    },
    /// `COPY table FROM 'file' (OPTIONS)` or `COPY table FROM ['a.csv', 'b.csv']`.
    Copy(CopyFrom),
    /// `COPY table FROM (query)`: load the rows a subquery returns, e.g.
    /// `COPY Person FROM (LOAD FROM 'p.csv' (header = true) RETURN CAST(id, 'INT64'), name)`.
    CopyFromQuery {
        table: String,
        query: Box<Query>,
        /// COPY's own options of `COPY t FROM df (options)`: `FROM`, `TO` (the rel pair) and
        /// `IGNORE_ERRORS`; the scan's options (`SKIP`, `LIMIT`) go to the `LOAD FROM`.
        options: Vec<(String, Expr)>,
        span: Span,
    },
    /// `COPY (query) TO 'file' (OPTIONS)`: write a query's rows to a file.
    CopyTo {
        query: Box<Query>,
        file: String,
        options: Vec<(String, Expr)>,
        span: Span,
    },
    /// `CALL name = value` (also `CALL name TO value`): a setting such as THREADS.
    CallSetting {
        name: String,
        value: Expr,
        span: Span,
    },
    /// `EXPLAIN statement`.
    Explain(Box<Statement>),
    /// `PROFILE statement`.
    Profile(Box<Statement>),
    /// `BEGIN TRANSACTION [READ ONLY]`, `COMMIT`, `ROLLBACK`.
    Transaction(TransactionCommand),
}

/// What `ALTER TABLE` changes.
#[derive(Clone, Debug, PartialEq)]
pub enum AlterAction {
    /// `ADD [IF NOT EXISTS] name TYPE [DEFAULT expr]`
    AddProperty {
        property: PropertyDefinition,
        if_not_exists: bool,
    },
    /// `DROP [IF EXISTS] name`
    DropProperty { name: String, if_exists: bool },
    /// `RENAME TO new_name`
    RenameTable(String),
    /// `RENAME old_name TO new_name`
    RenameProperty { from: String, to: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionCommand {
    Begin {
        read_only: bool,
    },
    Commit,
    Rollback,
    /// `CHECKPOINT`: fold committed changes into the data files and recycle the log.
    Checkpoint,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PropertyDefinition {
    pub name: String,
    /// The type as written (`INT64`, `STRING[]`, `STRUCT(a INT64)`); the binder parses it.
    pub type_name: String,
    /// `DEFAULT expr`, if given.
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CreateNodeTable {
    pub name: String,
    pub if_not_exists: bool,
    pub properties: Vec<PropertyDefinition>,
    /// From `PRIMARY KEY (x)` or an inline `x INT64 PRIMARY KEY`.
    pub primary_key: Option<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CreateRelTable {
    pub name: String,
    pub if_not_exists: bool,
    /// One or more `FROM a TO b` pairs (a rel group when more than one).
    pub connections: Vec<(String, String)>,
    pub properties: Vec<PropertyDefinition>,
    /// `MANY_MANY`, `MANY_ONE`, `ONE_MANY`, `ONE_ONE` as written (upper-cased); `None` if absent.
    pub multiplicity: Option<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CopyFrom {
    pub table: String,
    /// One or more file paths as written (not yet resolved against a directory).
    pub files: Vec<String>,
    /// `(HEADER=true, DELIM='|', ...)`: option names as written, values as expressions.
    pub options: Vec<(String, Expr)>,
    /// `BY COLUMN`: each file holds one column (NumPy `.npy`), in the table's property order.
    pub by_column: bool,
    pub span: Span,
}

/// One or more single queries joined by `UNION` / `UNION ALL`.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub parts: Vec<SingleQuery>,
    /// `union_all[i]` tells whether `parts[i]` and `parts[i + 1]` are joined by `UNION ALL`.
    pub union_all: Vec<bool>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SingleQuery {
    pub clauses: Vec<Clause>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Clause {
    Match(MatchClause),
    Unwind {
        expr: Expr,
        alias: String,
        span: Span,
    },
    With(ProjectionClause),
    Return(ProjectionClause),
    Create {
        patterns: Vec<PatternPart>,
        span: Span,
    },
    /// `MERGE a, b ...`: the comma-separated parts are matched, and created, as one pattern.
    Merge {
        patterns: Vec<PatternPart>,
        on_create: Vec<SetItem>,
        on_match: Vec<SetItem>,
        span: Span,
    },
    Set {
        items: Vec<SetItem>,
        span: Span,
    },
    Delete {
        detach: bool,
        exprs: Vec<Expr>,
        span: Span,
    },
    /// `CALL f(args) [YIELD a, b [WHERE ...]]` inside a query, e.g. `CALL table_info('t') RETURN *`
    /// or `CALL PROJECT_GRAPH('g', ['person'], ['knows'])`.
    Call(CallClause),
    /// `LOAD [WITH HEADERS (a INT64, ...)] FROM 'file' (options) [WHERE ...]`.
    LoadFrom(LoadFromClause),
}

#[derive(Clone, Debug, PartialEq)]
pub struct MatchClause {
    pub optional: bool,
    pub patterns: Vec<PatternPart>,
    pub where_clause: Option<Expr>,
    /// A join-order hint `HINT (a JOIN e) JOIN b`; accepted and checked for names only.
    pub hint: Option<JoinHint>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum JoinHint {
    Variable(String, Span),
    Join(Box<JoinHint>, Box<JoinHint>),
    /// `MULTI_JOIN` of several operands.
    MultiJoin(Vec<JoinHint>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct CallClause {
    pub name: String,
    pub args: Vec<Expr>,
    /// `YIELD a [AS x], b`: (column, alias).
    pub yields: Vec<(String, Option<String>)>,
    pub where_clause: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LoadFromClause {
    pub files: Vec<String>,
    /// `LOAD FROM df` / `LOAD FROM $df`: rows from a table passed as the parameter of this name
    /// (a STRUCT of equally long lists, one per column) instead of files.
    pub parameter: Option<String>,
    /// `LOAD WITH HEADERS (name TYPE, ...)`: column names and type names as written.
    pub headers: Vec<(String, String)>,
    pub options: Vec<(String, Expr)>,
    pub where_clause: Option<Expr>,
    pub span: Span,
}

/// The body shared by WITH and RETURN.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionClause {
    pub distinct: bool,
    /// `RETURN *` / `WITH *` (more items may follow the star).
    pub star: bool,
    pub items: Vec<ProjectionItem>,
    pub order_by: Vec<SortItem>,
    pub skip: Option<Expr>,
    pub limit: Option<Expr>,
    /// Only WITH has a WHERE.
    pub where_clause: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionItem {
    pub expr: Expr,
    pub alias: Option<String>,
    /// The item's text as written (Kùzu names unaliased columns by their text, e.g. `a.ID`).
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SortItem {
    pub expr: Expr,
    pub descending: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SetItem {
    /// `n.prop = expr`
    Property { target: Expr, value: Expr },
    /// `n += {map}` or `n = {map}`
    Map {
        variable: String,
        value: Expr,
        replace: bool,
    },
}

/// `p = (a)-[r]->(b)-...`: a chain of node and rel patterns, optionally named.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternPart {
    pub path_variable: Option<String>,
    pub start: NodePattern,
    pub hops: Vec<(RelPattern, NodePattern)>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodePattern {
    pub variable: Option<String>,
    /// `:A:B` or `:A|B` (both mean "any of these labels" in Kùzu).
    pub labels: Vec<String>,
    /// `{name: 'x', age: 3}`
    pub properties: Vec<(String, Expr)>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `-[]->`
    Right,
    /// `<-[]-`
    Left,
    /// `-[]-`
    Both,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RelPattern {
    pub variable: Option<String>,
    /// `:a|:b|c` or `:a|b`.
    pub labels: Vec<String>,
    pub direction: Direction,
    pub properties: Vec<(String, Expr)>,
    /// Present for `*...` patterns.
    pub recursive: Option<RecursiveSpec>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RecursiveKind {
    /// Plain `*`: walks, unless the setting `recursive_pattern_semantic` says otherwise.
    Default,
    Walk,
    Trail,
    Acyclic,
    Shortest,
    AllShortest,
    /// `WSHORTEST(prop)`
    WeightedShortest(String),
    /// `ALL WSHORTEST(prop)`
    AllWeightedShortest(String),
}

/// `* [kind] [lower]..[upper] [(r, n | WHERE pred | {r.a}, {n.b})]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RecursiveSpec {
    pub kind: RecursiveKind,
    /// Bounds as written; `None` when absent. `*3` gives lower = upper = 3 and `exact = true`.
    pub lower: Option<i64>,
    pub upper: Option<i64>,
    /// Whether a `..` appeared (`*2` is exact; `*2..` is open above).
    pub has_range: bool,
    pub filter: Option<RecursiveFilter>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RecursiveFilter {
    /// The rel variable (`None` for `_`).
    pub rel_variable: Option<String>,
    /// The node variable (`None` for `_` or absent).
    pub node_variable: Option<String>,
    pub where_clause: Option<Expr>,
    /// `| {r.a, r.b}, {n.c}`: the projected rel and node properties; `None` without a list.
    pub rel_projection: Option<Vec<Expr>>,
    pub node_projection: Option<Vec<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    /// Integer literals keep 128 bits; the binder picks INT64 or INT128.
    Integer(i128),
    Double(f64),
    String(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Minus,
    Plus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    Xor,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    In,
    StartsWith,
    EndsWith,
    Contains,
    /// `=~`
    RegexMatch,
    /// `||` string / list concatenation
    Concat,
    BitAnd,
    BitOr,
    ShiftLeft,
    ShiftRight,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// `$name`
    Parameter(String),
    Variable(String),
    /// `expr.name`
    Property(Box<Expr>, String),
    /// `n.*` in a projection.
    AllProperties(String),
    /// `[a, b]`; an empty entry after a comma, as in `[1,,3]`, is a NULL literal (Kùzu).
    List(Vec<Expr>),
    /// `{a: 1, b: 'x'}` (a struct literal in Kùzu)
    Map(Vec<(String, Expr)>),
    /// `list[i]`
    Index(Box<Expr>, Box<Expr>),
    /// `list[a..b]` (either bound may be absent)
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `expr IS [NOT] NULL`
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `f(args)`, `f(DISTINCT x)`, `count(*)` (star = true, no args).
    FunctionCall {
        name: String,
        distinct: bool,
        star: bool,
        args: Vec<Expr>,
    },
    /// `CAST(expr AS TYPE)`: the type as written.
    Cast {
        expr: Box<Expr>,
        type_name: String,
    },
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    /// `EXISTS { MATCH pattern [WHERE pred] }`
    Exists(Box<Subquery>),
    /// `COUNT { MATCH pattern [WHERE pred] }`
    CountSubquery(Box<Subquery>),
    /// `name := expr` as a function argument, e.g. Kùzu's `union_value(a := 1)`.
    NamedArgument(String, Box<Expr>),
    /// `x -> expr` or `(x, y) -> expr` as a function argument.
    Lambda {
        params: Vec<String>,
        body: Box<Expr>,
    },
    /// `[x IN list WHERE pred | expr]`
    ListComprehension {
        variable: String,
        list: Box<Expr>,
        where_clause: Option<Box<Expr>>,
        map: Option<Box<Expr>>,
    },
    /// `ANY/ALL/NONE/SINGLE(x IN list WHERE pred)`
    Quantifier {
        kind: Quantifier,
        variable: String,
        list: Box<Expr>,
        predicate: Box<Expr>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    Any,
    All,
    None,
    Single,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Subquery {
    pub patterns: Vec<PatternPart>,
    pub where_clause: Option<Expr>,
    pub hint: Option<JoinHint>,
}

"""Records Kùzu 0.11.3's answers to recursive queries on many small random graphs, as golden
data for Warren's differential test (crates/warren/tests/kuzu_differential.rs), which replays the
same graphs and queries and must produce the same rows.

    bench/peers/.venv/bin/python bench/peers/kuzu_differential.py --graphs 200 \
        --output crates/warren/tests/data/kuzu_differential.json

Graphs have self loops, parallel edges, cycles and isolated nodes. Rows are printed the way
Kùzu's test runner prints them and sorted; for SHORTEST the chosen path itself is compared.

Left out on purpose, because Kùzu 0.11.3 contradicts itself there (Warren follows the documented
semantics, checked by its property tests and by Kùzu's own conformance suite instead):
* ACYCLIC: Kùzu's check skips a node's neighbouring positions and the last intermediate node,
  so it returns paths whose intermediate nodes repeat (e.g. 2..4 around a self loop).
* lower bound 0: when the source lies on a cycle, Kùzu reports the zero-length path with the
  cycle's rels and length (a path of length 3 from a `0..2` pattern).
* count(*) with a recursive node filter: Kùzu's counting ignores the filter, so `count(*)`
  differs from the number of rows the same pattern returns.
* SHORTEST / ALL SHORTEST with a node filter: Kùzu searches ignoring the filter and then drops
  the shortest paths through filtered nodes, losing destinations that a longer valid path
  reaches; Warren returns the shortest among the paths that satisfy the filter.
"""
import argparse
import hashlib
import json
import random

import kuzu

# Larger answers are kept as a row count and the MD5 of the sorted rows, each followed by "\n".
ROWS_KEPT = 60

KINDS = ["", " TRAIL", " SHORTEST", " ALL SHORTEST"]


def text(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return "%.6f" % value
    if isinstance(value, list):
        return "[" + ",".join(text(v) for v in value) + "]"
    return str(value)


def random_graph(rng):
    nodes = rng.randint(1, 7)
    rels = []
    for _ in range(rng.randint(0, 14)):
        rels.append([rng.randrange(nodes), rng.randrange(nodes), rng.randint(0, 3)])
    return {"nodes": nodes, "rels": rels}


def load(graph):
    db = kuzu.Database(":memory:")
    conn = kuzu.Connection(db, num_threads=2)
    conn.execute("CREATE NODE TABLE P(ID INT64, PRIMARY KEY(ID))")
    conn.execute("CREATE REL TABLE E(FROM P TO P, eid INT64, w INT64)")
    for i in range(graph["nodes"]):
        conn.execute("CREATE (:P {ID: %d})" % i)
    # One statement per rel keeps rel offsets equal to eid.
    for i, (f, t, w) in enumerate(graph["rels"]):
        conn.execute("MATCH (a:P {ID: %d}), (b:P {ID: %d}) CREATE (a)-[:E {eid: %d, w: %d}]->(b)" % (f, t, i, w))
    return db, conn


def random_queries(rng, graph):
    queries = []
    for _ in range(6):
        kind = rng.choice(KINDS)
        shortest = "SHORTEST" in kind
        lower = 1 if shortest else rng.randint(1, 2)
        upper = max(1, lower + rng.randint(0, 2))
        direction = rng.choice(["->", "<-", "-"])
        filters = []
        if rng.random() < 0.3:
            filters.append("r.w > %d" % rng.randint(0, 2))
        node_filter = not shortest and rng.random() < 0.3
        if node_filter:
            filters.append("n.ID <> %d" % rng.randrange(graph["nodes"]))
        flt = " (r, n | WHERE %s)" % " AND ".join(filters) if filters else ""
        rel = "[e:E*%s %d..%d%s]" % (kind, lower, upper, flt)
        if direction == "->":
            pattern = "(a:P)-%s->(b:P)" % rel
        elif direction == "<-":
            pattern = "(a:P)<-%s-(b:P)" % rel
        else:
            pattern = "(a:P)-%s-(b:P)" % rel
        source = rng.randrange(graph["nodes"])
        queries.append("MATCH %s WHERE a.ID = %d RETURN b.ID, properties(rels(e), 'eid'), properties(nodes(e), 'ID')" % (pattern, source))
        if not node_filter:
            queries.append("MATCH %s RETURN a.ID, count(*), sum(length(e))" % pattern)
    if rng.random() < 0.5:
        direction = rng.choice(["->", "-"])
        rel = "[e:E* WSHORTEST(w)]"
        pattern = "(a:P)-%s->(b:P)" % rel if direction == "->" else "(a:P)-%s-(b:P)" % rel
        queries.append("MATCH %s WHERE a.ID = %d RETURN b.ID, cost(e)" % (pattern, rng.randrange(graph["nodes"])))
    return queries


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--graphs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cases = []
    for _ in range(args.graphs):
        graph = random_graph(rng)
        db, conn = load(graph)
        answers = []
        for query in random_queries(rng, graph):
            try:
                result = conn.execute(query)
                rows = []
                while result.has_next():
                    rows.append("|".join(text(v) for v in result.get_next()))
                rows.sort()
                if len(rows) <= ROWS_KEPT:
                    answers.append({"query": query, "rows": rows})
                else:
                    digest = hashlib.md5("".join(r + "\n" for r in rows).encode()).hexdigest()
                    answers.append({"query": query, "count": len(rows), "md5": digest})
            except Exception as error:  # Kùzu's error is part of the answer
                answers.append({"query": query, "error": str(error)})
        cases.append({"graph": graph, "answers": answers})
    with open(args.output, "w") as f:
        json.dump({"kuzu_version": kuzu.__version__, "seed": args.seed, "cases": cases}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()

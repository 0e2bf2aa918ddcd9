"""Runs the mission's seed queries on Kùzu 0.11.3 over a dataset written by `warren generate`
and prints (or records) the answers as JSON, each row as Kùzu's values joined by '|'.

    bench/peers/.venv/bin/python bench/peers/kuzu_seed.py DATASET_DIR [--output FILE] [--threads N]
"""
import argparse
import json
import os
import sys
import tempfile
import time

import kuzu

# The mission's seed queries verbatim, then variants that check more of the answer.
SEED_QUERIES = [
    "MATCH p = (a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID < 64 RETURN a.ID, count(*), sum(length(p)) ORDER BY a.ID",
    "MATCH p = (a:Person)-[r:Knows* ALL SHORTEST 1..30]->(b:Person) WHERE a.ID = 0 RETURN count(*)",
    "MATCH (a:Person)-[r:Knows*1..4]->(b:Person) WHERE a.ID < 5 AND b.ID < 500 RETURN count(*)",
    "MATCH (a:Person)-[r:Knows*1..3]->(b:Person) WHERE a.ID < 5 AND b.ID < 500 RETURN a.ID, count(*) ORDER BY a.ID",
    "MATCH p = (a:Person)-[r:Knows* ALL SHORTEST 1..30]->(b:Person) WHERE a.ID = 0 RETURN length(p), count(*) ORDER BY length(p)",
    # Which tied shortest path Kùzu returns depends on its thread schedule: compare lengths.
    "MATCH p = (a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID = 0 AND b.ID < 200 RETURN b.ID, length(p) ORDER BY b.ID",
]


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


def load(conn, dataset):
    for name in ("schema.cypher", "copy.cypher"):
        with open(os.path.join(dataset, name)) as f:
            for line in f:
                if line.strip():
                    conn.execute(line.strip())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("--output")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--queries", type=int, nargs="*", help="indices of the seed queries to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = kuzu.Database(os.path.join(tmp, "db"))
        conn = kuzu.Connection(db, num_threads=args.threads)
        started = time.time()
        load(conn, args.dataset)
        answers = {"kuzu_version": kuzu.__version__, "load_seconds": time.time() - started, "queries": []}
        for index, query in enumerate(SEED_QUERIES):
            if args.queries is not None and index not in args.queries:
                continue
            started = time.time()
            result = conn.execute(query)
            rows = []
            while result.has_next():
                rows.append("|".join(text(v) for v in result.get_next()))
            seconds = time.time() - started
            answers["queries"].append({"query": query, "rows": rows, "seconds": seconds})
            print("%.3f s  %s -> %d rows" % (seconds, query[:60], len(rows)), file=sys.stderr)
    out = json.dumps(answers, indent=1)
    if args.output:
        with open(args.output, "w") as f:
            f.write(out + "\n")
    else:
        print(out)


if __name__ == "__main__":
    main()

"""Fills in the expected results of Warren's golden `.test` files with Kùzu 0.11.3's answers.

    bench/peers/.venv/bin/python bench/peers/kuzu_golden.py tests/golden/basics_match.test [...]
    bench/peers/.venv/bin/python bench/peers/kuzu_golden.py --check tests/golden/*.test

Reads each file in Kùzu's `.test` format (the same subset as Warren's runner in `tests/src`),
runs every active `-CASE` on a fresh in-memory Kùzu database (its `-DATASET` loaded line by
line from `tests/golden/datasets/<name>/` or the Kùzu suite's `dataset/<name>/`), and rewrites
each statement's `----` blocks with Kùzu's results, leaving every other line as it was.
`---- ok` stays `ok` when Kùzu succeeds, `---- hash` stays a hash, `---- error(regex)` stays when
the regex matches; otherwise rows are written sorted (unless `-CHECK_ORDER`) in Kùzu's printed
form: NULL empty, booleans True/False, doubles with 6 decimals, lists `[a,b]`, structs
`{k: v}`. Values whose printed form this script cannot reproduce (nodes, rels, paths,
intervals, timestamps with fractions, ...) are refused: query their properties instead.
With `--check`, nothing is written; differences are printed and the exit status is 1.
"""
import argparse
import datetime
import decimal
import hashlib
import os
import re
import sys
import uuid

import kuzu

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
GOLDEN = os.path.join(REPO, "tests", "golden")
KUZU_ROOT = os.path.normpath(os.path.join(REPO, "..", "shared", "conformance", "kuzu"))
DIRECTIVE = re.compile(r"^(--|----.*|-[A-Z][A-Z_]*)$")


class Unprintable(Exception):
    pass


def is_continuation(line):
    words = line.split()
    return bool(words) and not words[0].startswith("#") and not DIRECTIVE.match(words[0])


class Statement:
    def __init__(self, line, query, text_end):
        self.line = line
        self.query = query
        self.text_end = text_end
        self.check_order = False
        self.blocks = []  # (kind, payload, start, end)


def parse(lines):
    """Returns (dataset name or None, header skipped, [(case name, skipped, [Statement])])."""
    dataset, skipped, cases = None, False, []
    variables = {}
    i = 0
    while i < len(lines):
        words = lines[i].split()
        if not words or words[0].startswith("#") or words[0] == "--":
            i += 1
            continue
        token = words[0]
        if token == "-DATASET":
            dataset = " ".join(words[2:])
        elif token == "-SKIP":
            if cases:
                cases[-1][1] = True
            else:
                skipped = True
        elif token == "-CASE":
            cases.append([" ".join(words[1:]), False, []])
        elif token == "-SET" and len(words) == 5 and words[2] == "ARANGE":
            low, high = int(words[3]), int(words[4])
            variables[words[1]] = "[" + ",".join(str(v) for v in range(low, high + 1)) + "]"
        elif token == "-STATEMENT":
            query = " ".join(words[1:])
            j = i + 1
            while j < len(lines) and is_continuation(lines[j]):
                query += lines[j] + " "
                j += 1
            for name, value in variables.items():
                query = query.replace("${" + name + "}", value)
            cases[-1][2].append(Statement(i + 1, query, j))
            i = j
            continue
        elif token == "-CHECK_ORDER":
            statement = cases[-1][2][-1]
            statement.check_order = True
            if not statement.blocks:
                statement.text_end = i + 1
        elif token == "----":
            kind = words[1] if len(words) > 1 else ""
            statement = cases[-1][2][-1]
            if kind == "ok":
                end, payload = i + 1, None
            elif kind in ("error", "error(regex)"):
                end = i + 1
                while end < len(lines) and is_continuation(lines[end]):
                    end += 1
                payload = "\n".join(lines[i + 1:end])
            elif kind == "hash":
                end, payload = i + 2, lines[i + 1]
            else:
                end, payload = i + 1 + int(kind), None
            statement.blocks.append((kind, payload, i, end))
            i = end
            continue
        i += 1
    return dataset, skipped, cases


def text(value):
    """A value as Kùzu's test runner prints it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return "%.6f" % value
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, decimal.Decimal):
        # INT128 values (sum of INT64s) arrive as integral Decimals.
        if value == value.to_integral_value() and value.as_tuple().exponent >= 0:
            return str(int(value))
        raise Unprintable("DECIMAL")
    if isinstance(value, list):
        return "[" + ",".join(text(item) for item in value) + "]"
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime.datetime):
        if value.microsecond or value.tzinfo is not None:
            raise Unprintable("timestamps with fractions or zones")
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, dict):
        if "_id" in value or "_nodes" in value or "_src" in value:
            raise Unprintable("nodes, rels and paths")
        return "{" + ", ".join("%s: %s" % (k, text(v)) for k, v in value.items()) + "}"
    raise Unprintable(type(value).__name__)


def load_dataset(conn, name):
    for datasets, base in ((os.path.join(GOLDEN, "datasets"), GOLDEN),
                           (os.path.join(KUZU_ROOT, "dataset"), KUZU_ROOT)):
        directory = os.path.join(datasets, name)
        if not os.path.isdir(directory):
            continue
        os.chdir(base)
        for script in ("schema.cypher", "copy.cypher"):
            path = os.path.join(directory, script)
            if not os.path.exists(path):
                continue
            with open(path) as f:
                for line in f:
                    if line.strip():
                        conn.execute(line.strip())
        return


def results_of(conn, query):
    """[("rows", rows) | ("error", message)] for each result Kùzu gives."""
    try:
        results = conn.execute(query)
    except RuntimeError as error:
        return [("error", str(error))]
    if not isinstance(results, list):
        results = [results]
    out = []
    for result in results:
        rows = []
        while result.has_next():
            rows.append("|".join(text(value) for value in result.get_next()))
        out.append(("rows", rows))
    return out


def block_lines(result, statement, like):
    kind, payload = result
    if kind == "error":
        if like[0] == "error(regex)" and re.fullmatch(like[1], payload.rstrip()):
            return ["---- error(regex)"] + like[1].split("\n")
        return ["---- error"] + payload.rstrip().split("\n")
    rows = payload if statement.check_order else sorted(payload)
    if like[0] == "ok":
        return ["---- ok"]
    if like[0] == "hash":
        digest = hashlib.md5("".join(row + "\n" for row in rows).encode()).hexdigest()
        return ["---- hash", "%d tuples hashed to %s" % (len(rows), digest)]
    return ["---- %d" % len(rows)] + rows


def new_blocks(statement, results):
    blocks = []
    for index, result in enumerate(results):
        if statement.blocks:
            like = statement.blocks[min(index, len(statement.blocks) - 1)][:2]
        else:
            like = ("rows", None)
        blocks.append(block_lines(result, statement, like))
    while len(blocks) > 1 and blocks[-1] == blocks[-2]:
        blocks.pop()
    return [line for block in blocks for line in block]


def process(path, check):
    with open(path) as f:
        original = f.read()
    lines = original.split("\n")
    dataset, skipped, cases = parse(lines)
    if skipped:
        return True
    edits = []
    ok = True
    for name, case_skipped, statements in cases:
        if case_skipped:
            continue
        db = kuzu.Database()
        conn = kuzu.Connection(db, num_threads=2)
        if dataset:
            load_dataset(conn, dataset)
        os.chdir(GOLDEN)
        for statement in statements:
            query = statement.query.replace("${KUZU_ROOT_DIRECTORY}", KUZU_ROOT)
            try:
                blocks = new_blocks(statement, results_of(conn, query))
            except Unprintable as error:
                print("%s:%d: cannot print %s" % (path, statement.line, error), file=sys.stderr)
                ok = False
                continue
            if statement.blocks:
                start, end = statement.blocks[0][2], statement.blocks[-1][3]
            else:
                start = end = statement.text_end
            if lines[start:end] != blocks:
                edits.append((start, end, blocks))
                if check:
                    print("%s:%d: Kùzu says %s" % (path, statement.line, " / ".join(blocks)))
                    ok = False
    if check or not edits:
        return ok
    for start, end, blocks in sorted(edits, reverse=True):
        lines[start:end] = blocks
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print("rewrote %s (%d statements)" % (path, len(edits)), file=sys.stderr)
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--check", action="store_true", help="report differences, write nothing")
    args = parser.parse_args()
    ok = True
    for path in [os.path.abspath(path) for path in args.files]:
        ok = process(path, args.check) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

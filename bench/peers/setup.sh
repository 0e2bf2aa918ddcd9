#!/usr/bin/env bash
# Creates bench/peers/.venv with the peers Warren is compared with: Kùzu 0.11.3 (the oracle for
# answers and the main peer for speed), DuckDB, igraph, networkx and scipy. Safe to run
# repeatedly: pip runs again only when requirements.txt changed since the last install.
# Prints the environment's Python on its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$here/.venv/bin/python" ]; then
    python3 -m venv "$here/.venv"
fi
stamp="$here/.venv/requirements.installed"
if ! cmp -s "$here/requirements.txt" "$stamp"; then
    "$here/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$stamp"
fi
echo "$here/.venv/bin/python"

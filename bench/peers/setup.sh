#!/usr/bin/env bash
# Creates bench/peers/.venv with the peers Warren is compared with (Kùzu 0.11.3 is the oracle
# for answers and the peer for speed). Safe to run repeatedly.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$here/.venv/bin/python" ]; then
    python3 -m venv "$here/.venv"
fi
"$here/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
echo "$here/.venv/bin/python"

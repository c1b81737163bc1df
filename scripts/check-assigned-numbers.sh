#!/usr/bin/env bash
# Fails (exit 1, with a diff) if Sources/BlueZ/Model/AssignedNumbers.swift is
# not what scripts/generate-assigned-numbers.py makes from the pinned version
# of the PyPI package bluetooth-numbers. Uses that package if python3 already
# has the pinned version; otherwise installs it into a throw-away venv, which
# needs PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."

generator=scripts/generate-assigned-numbers.py
version=$(sed -n 's/^PINNED_VERSION = "\(.*\)"$/\1/p' "$generator")
if [ -z "$version" ]; then
    echo "error: no PINNED_VERSION in $generator" >&2
    exit 2
fi

python=python3
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('bluetooth-numbers') != '$version')" 2>/dev/null; then
    venv=$(mktemp -d)
    trap 'rm -rf "$venv"' EXIT
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "bluetooth-numbers==$version"
    python="$venv/bin/python"
fi
"$python" "$generator" --check

#!/usr/bin/env bash
# Runs every test: the Rust workspace, then the Python package (built from this tree by
# maturin, with the Ray extra so that the Ray sweep test runs rather than skips).
# Outside a virtualenv it makes one in .venv (reusing already installed packages), so a
# system Python that refuses global installs (PEP 668) works and no other tcplab install
# shadows this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
if [ -z "${VIRTUAL_ENV:-}" ]; then
    python3 -m venv --system-site-packages .venv
    # shellcheck disable=SC1091
    . .venv/bin/activate
fi
python3 -m pip install --quiet --upgrade pip
python3 -m pip install --quiet -e ".[dev,ray]"
python3 -m pytest -q tests

#!/usr/bin/env bash
# Runs every test: the Rust workspace, then the Python package (built from this tree).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
python3 -m pip install --quiet -e ".[dev]"
python3 -m pytest -q tests

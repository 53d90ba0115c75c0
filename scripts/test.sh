#!/usr/bin/env bash
# Runs every test: the Rust workspace, then the Python package (built from this tree by
# maturin, with the Ray extra so that the Ray sweep test runs rather than skips).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
python3 -m pip install --quiet -e ".[dev,ray]"
python3 -m pytest -q tests

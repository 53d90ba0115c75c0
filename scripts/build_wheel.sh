#!/usr/bin/env bash
# Builds the wheel users install without Rust: manylinux2014 (glibc >= 2.17, x86_64 here),
# abi3 (one wheel for CPython >= 3.10: crates/py enables pyo3's abi3-py310), holding the
# simulator, the kernel backend's link emulator (inside the extension module), the
# catalogue and the traces. Needs the Rust toolchain (rust-version in Cargo.toml) and
# pip; maturin, ziglang (zig links against glibc 2.17's symbols, so no manylinux docker
# image is needed) and auditwheel are installed into the active Python when missing.
#
#   bash scripts/build_wheel.sh [OUT_DIR]     # default: dist/
#   pip install dist/tcplab-*-cp310-abi3-manylinux*.whl
#
# CARGO_TARGET_DIR is honoured (a cold build: see README, "Wheel", for its time here).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
py="${PYTHON:-python3}"
"$py" -m pip install --quiet "maturin>=1.5,<2" ziglang auditwheel
# --strip: the release profile keeps line-table debug info for profiling (Cargo.toml);
# a user's wheel does not need it (module 11 MB -> 1.9 MB, wheel 3.6 MB -> 1.2 MB).
"$py" -m maturin build --release --strip --compatibility manylinux2014 --zig --out "$out"
wheel="$(ls -t "$out"/tcplab-*-abi3-manylinux*.whl | head -1)"
# auditwheel checks the wheel's shared-library dependencies and glibc symbol versions
# against the manylinux policy the tag claims; it fails if the tag is a lie.
"$py" -m auditwheel show "$wheel"
echo "built $wheel"

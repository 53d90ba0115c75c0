#!/usr/bin/env bash
# Builds the wheel users install without Rust: manylinux2014 (glibc >= 2.17, x86_64 here),
# abi3 (one wheel for CPython >= 3.10: crates/py enables pyo3's abi3-py310), holding the
# simulator, the kernel backend's link emulator and its BPF loader (inside the extension
# module; libbpf, libelf and zlib built from libbpf-sys's sources and linked in statically,
# so the wheel needs nothing on the host but a kernel with BTF), the catalogue and the
# traces. Needs the Rust toolchain (rust-version in Cargo.toml) and
# pip; maturin, ziglang (zig links against glibc 2.17's symbols, so no manylinux docker
# image is needed) and auditwheel are installed into the active Python when missing.
#
#   bash scripts/build_wheel.sh [OUT_DIR]     # default: dist/
#   pip install dist/tcplab-*-cp310-abi3-manylinux*.whl
#
# CARGO_TARGET_DIR is honoured (a cold build: see docs/install.md for its time here).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
py="${PYTHON:-python3}"
"$py" -m pip install --quiet "maturin>=1.5,<2" ziglang auditwheel
# Building libelf (elfutils) and zlib from source (libbpf-sys's `vendored` feature) needs
# autotools, flex, bison and gawk; as root on Debian they are installed when missing.
vendor_pkgs="autoconf automake autopoint flex bison gawk make pkg-config"
missing=""
for tool in autoreconf autopoint flex bison gawk make pkg-config; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        # shellcheck disable=SC2086
        apt-get install -y -q $vendor_pkgs >/dev/null \
            || (apt-get update -q && apt-get install -y -q $vendor_pkgs >/dev/null)
    else
        echo "build_wheel.sh: missing$missing (Debian: apt-get install $vendor_pkgs)" >&2
        exit 2
    fi
fi
# --strip: the release profile keeps line-table debug info for profiling (Cargo.toml);
# a user's wheel does not need it (module 11 MB -> 1.9 MB, wheel 3.6 MB -> 1.2 MB).
# The shipped BPF examples, compiled, for users without clang (tcplab/bpf_shipped.py):
# written into the package for this build only, removed after it. Not in .gitignore,
# since maturin leaves gitignored files out of a wheel; tests/specs/test_bpf_shipped.py
# fails if they are ever committed.
if ! command -v clang >/dev/null 2>&1 || [ ! -f /usr/include/bpf/bpf_helpers.h ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get install -y -q clang libbpf-dev >/dev/null \
            || (apt-get update -q && apt-get install -y -q clang libbpf-dev >/dev/null)
    else
        echo "build_wheel.sh: clang and libbpf's headers are needed (apt-get install clang libbpf-dev)" >&2
        exit 2
    fi
fi
trap 'rm -rf python/tcplab/data/bpf/objects' EXIT
"$py" scripts/build_bpf_objects.py
# The engine built with its recorded profile (TCPLAB_PGO=0: without; scripts/pgo_env.sh).
# shellcheck source=scripts/pgo_env.sh
. scripts/pgo_env.sh
"$py" -m maturin build --release --strip --compatibility manylinux2014 --zig \
    --features vendored-libbpf --out "$out"
wheel="$(ls -t "$out"/tcplab-*-abi3-manylinux*.whl | head -1)"
# auditwheel checks the wheel's shared-library dependencies and glibc symbol versions
# against the manylinux policy the tag claims; it fails if the tag is a lie.
"$py" -m auditwheel show "$wheel"
echo "built $wheel"

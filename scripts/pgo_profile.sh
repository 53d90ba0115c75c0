#!/usr/bin/env bash
# Record the profile the release builds of the engine are optimised with
# (crates/py/pgo/engine.profdata.gz; scripts/pgo_env.sh uses it): build the extension
# instrumented (-Cprofile-generate), run scripts/pgo_train.py on it with this checkout's
# Python package, merge what it recorded. Re-run after changes to the engine's hot paths
# (a changed function loses its record until then, nothing worse).
#
# Twice: as install.sh builds it (for this machine) and as build_wheel.sh does (an
# explicit target and the vendored libbpf). A profile is matched to functions by their
# symbol names, which carry a hash of how cargo built the crate, and the two builds' hashes
# differ; one merged file holds the records of both. The second is build_wheel.sh's zig
# build (its environment enters the hash) linked by the system's `cc` instead of zig's
# (`-Clinker=cc`: cargo-zigbuild's wrapper takes the profiler's `-u __llvm_profile_runtime`
# for a file and fails); rustc's flags and the linker do not enter the hash.
#
# Needs the toolchain's llvm-profdata (`rustup component add llvm-tools`, installed here
# when missing), an environment that runs tcplab (bash scripts/install.sh -e '.[dev]') and
# what build_wheel.sh installs for the vendored libbpf (run it once first).
#
#   bash scripts/pgo_profile.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON:-python3}"
sysroot="$(rustc --print sysroot)"
host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    rustup component add llvm-tools
fi
tmp="$(mktemp -d "${TMPDIR:-/tmp}/tcplab-pgo-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# record NAME RUSTFLAGS MATURIN_ARGS...: one instrumented build (its own kept target
# directory, a full release build), trained, its raw profiles into $tmp/raw.
record() {
    local name="$1" flags="$2"
    shift 2
    RUSTFLAGS="-Cprofile-generate=$tmp/raw $flags" CARGO_TARGET_DIR="$PWD/target/pgo-generate-$name" \
        "$py" -m maturin build --release --skip-auditwheel --out "$tmp/dist-$name" --quiet "$@"
    rm -rf "$tmp/pkg" "$tmp/wheel"
    mkdir -p "$tmp/pkg"
    cp -r python/tcplab "$tmp/pkg/"
    rm -f "$tmp"/pkg/tcplab/_engine*.so
    "$py" -m zipfile -e "$(ls "$tmp"/dist-"$name"/tcplab-*.whl)" "$tmp/wheel"
    cp "$tmp"/wheel/tcplab/_engine*.so "$tmp/pkg/tcplab/"
    (cd "$tmp" && PYTHONPATH="$tmp/pkg" "$py" "$OLDPWD/scripts/pgo_train.py" >/dev/null)
    echo "pgo_profile.sh: recorded the $name build"
}
record install ""
record wheel -Clinker=cc --compatibility manylinux2014 --zig --features vendored-libbpf

mkdir -p crates/py/pgo
"$profdata" merge --sparse -o "$tmp/engine.profdata" "$tmp"/raw/*.profraw
# Compressed (about a quarter); -n: no name or time in the header, the same bytes for the
# same profile.
gzip -9 -n -c "$tmp/engine.profdata" > crates/py/pgo/engine.profdata.gz
ls -l crates/py/pgo/engine.profdata.gz

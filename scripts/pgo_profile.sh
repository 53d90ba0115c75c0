#!/usr/bin/env bash
# Record the profile the release builds of the engine are optimised with
# (crates/py/pgo/engine.profdata.gz; scripts/pgo_env.sh uses it): build the extension
# instrumented (-Cprofile-generate) into a temporary directory, run scripts/pgo_train.py on
# it with this checkout's Python package, merge what it recorded. Re-run after changes to
# the engine's hot paths (a changed function loses its record until then, nothing worse).
# Needs the toolchain's llvm-profdata (`rustup component add llvm-tools`, installed here
# when missing) and an environment that runs tcplab (bash scripts/install.sh -e '.[dev]').
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
# Its own target directory, kept: the instrumented build is a full release build.
RUSTFLAGS="-Cprofile-generate=$tmp/raw" CARGO_TARGET_DIR="$PWD/target/pgo-generate" \
    "$py" -m maturin build --release --skip-auditwheel --out "$tmp/dist" --quiet
mkdir -p "$tmp/pkg"
cp -r python/tcplab "$tmp/pkg/"
rm -f "$tmp"/pkg/tcplab/_engine*.so
"$py" -m zipfile -e "$(ls "$tmp"/dist/tcplab-*.whl)" "$tmp/wheel"
cp "$tmp"/wheel/tcplab/_engine*.so "$tmp/pkg/tcplab/"
(cd "$tmp" && PYTHONPATH="$tmp/pkg" "$py" "$OLDPWD/scripts/pgo_train.py")
mkdir -p crates/py/pgo
"$profdata" merge --sparse -o "$tmp/engine.profdata" "$tmp"/raw/*.profraw
# Compressed (5.5 MB -> 1.4 MB); -n: no name or time in the header, the same bytes for
# the same profile.
gzip -9 -n -c "$tmp/engine.profdata" > crates/py/pgo/engine.profdata.gz
ls -l crates/py/pgo/engine.profdata.gz

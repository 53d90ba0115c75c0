# Sourced by scripts/install.sh and scripts/build_wheel.sh: build the engine with the
# recorded profile (profile-guided optimisation; docs/engine.md, "Profile-guided build")
# when crates/py/pgo/engine.profdata.gz exists and TCPLAB_PGO is not 0. Same outputs bit
# for bit (the snapshot test, run against such a build); faster (benches/RESULTS.md).
# - The profile is unpacked under the build's target directory with its hash in the
#   name, so that a new profile changes the flags and cargo rebuilds with it.
# - `-pgso=false`: code the training never ran keeps its usual optimisation (with the
#   default, LLVM optimises cold code for size); the profile is merged `--sparse` too, so
#   such code has no record and counts as unknown rather than cold.
# - `-no-pgo-warn-mismatch`: a function changed since the profile was recorded is built
#   without its record (scripts/pgo_profile.sh records a new one), without a warning each.
# - Its own target directory, so that a plain `cargo build` or `cargo bench` (without
#   these flags) and this build do not rebuild each other's artifacts.
_pgo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_pgo_gz="$_pgo_root/crates/py/pgo/engine.profdata.gz"
if [ "${TCPLAB_PGO:-1}" != 0 ] && [ -f "$_pgo_gz" ] && command -v gzip >/dev/null 2>&1 \
    && command -v sha256sum >/dev/null 2>&1; then
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$_pgo_root/target/pgo}"
    _pgo_sum="$(sha256sum "$_pgo_gz" | cut -c1-16)"
    mkdir -p "$CARGO_TARGET_DIR"
    # Absolute: rustc reads it from each crate's own directory.
    _pgo_file="$(cd "$CARGO_TARGET_DIR" && pwd)/engine-$_pgo_sum.profdata"
    if [ ! -f "$_pgo_file" ]; then
        gzip -dc "$_pgo_gz" > "$_pgo_file.tmp" && mv "$_pgo_file.tmp" "$_pgo_file"
    fi
    export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-Cprofile-use=$_pgo_file -Cllvm-args=-pgso=false -Cllvm-args=-no-pgo-warn-mismatch"
fi
unset _pgo_root _pgo_gz _pgo_sum _pgo_file

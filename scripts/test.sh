#!/usr/bin/env bash
# Runs every test: the Rust workspace, then the Python package (built from this tree by
# maturin, with the Ray extra so that the Ray sweep test runs rather than skips).
# Outside a virtualenv it makes one in .venv (reusing already installed packages), so a
# system Python that refuses global installs (PEP 668) works and no other tcplab install
# shadows this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
# The kernel backend's tests (tests/backends/test_kernel.py, root only) need `ip` (iproute2);
# install it from Debian only when it is missing and we may.
if ! command -v ip >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -q iproute2 >/dev/null || (apt-get update -q && apt-get install -y -q iproute2)
fi
# The kernel backend's latency probes (tests/backends/test_kernel_probes.py) run iputils
# ping; likewise.
if ! command -v ping >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -q iputils-ping >/dev/null || (apt-get update -q && apt-get install -y -q iputils-ping)
fi
# The HTML reports' browser test (tests/report/test_html_report.py) needs Chromium; likewise.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -q chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium >/dev/null)
fi
# crates/bpf's tests compile bpf/examples/*.bpf.c (clang, libbpf-dev's headers); the
# loader crates/bpfload (libbpf-sys: vendored libbpf 1.7 over the system's libelf and zlib,
# found with pkg-config; linked into the extension module, so every build needs them)
# registers the same objects into the kernel; bpftool dumps vmlinux.h. Installed the same
# way, only when missing.
bpf_pkgs="clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev pkg-config"
# Each checked on its own: a machine image with clang and libbpf-dev but no bpftool (as
# this project's 2026-12-06 VM) failed the kernel test that dumps a map with it.
if { ! command -v clang >/dev/null 2>&1 || [ ! -f /usr/include/bpf/bpf_helpers.h ] \
    || [ ! -f /usr/include/libelf.h ] || [ ! -f /usr/include/zlib.h ] \
    || ! command -v pkg-config >/dev/null 2>&1 || ! command -v bpftool >/dev/null 2>&1; } \
    && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    apt-get install -y -q $bpf_pkgs >/dev/null \
        || (apt-get update -q && apt-get install -y -q $bpf_pkgs)
fi
# Each step says when it starts (UTC), so a slow CI shows which step took the time.
step() { echo "== $(date -u +%H:%M:%S) $*"; }
step "lints (cargo fmt, clippy)"
# Lints first: formatting and clippy's warnings fail the run (README, "Tests").
cargo fmt --all --check
# Checked in the `ci` profile that `cargo test` builds next (release's settings for what
# clippy sees: no debug assertions), so the build scripts (libbpf's make, cranelift's
# generated code) and the proc macros compile and run once for both.
cargo clippy --workspace --all-targets --profile ci --quiet -- -D warnings
step "cargo test"
# Release-optimised tests, without release's LTO (Cargo.toml, [profile.ci]).
cargo test --workspace --profile ci
if [ -z "${VIRTUAL_ENV:-}" ]; then
    python3 -m venv --system-site-packages .venv
    # shellcheck disable=SC1091
    . .venv/bin/activate
fi
step "install (editable, ci profile)"
python3 -m pip install --quiet --upgrade pip
# The engine is built with the same `ci` profile as `cargo test` above, so maturin reuses
# what cargo test compiled (pyo3 and the extension crate only: 43 s here with pip's own
# work) instead of a release build with LTO (~5 min here). The ci engine runs 2-10 %
# slower than release's (benches/RESULTS.md, "CI time"); its results are the same
# (tests/backends/test_snapshot.py).
# scripts/install.sh puts the release engine back.
MATURIN_PEP517_ARGS="--profile ci" python3 -m pip install --quiet -e ".[dev,ray]"
step "ruff"
python3 -m ruff check python tests scripts
python3 -m ruff format --check python tests scripts
# Two passes at once (tests/conftest.py): the tests not marked `kernel` on two pytest-xdist
# workers (a file's tests stay on one worker) at idle CPU priority (SCHED_IDLE: they get
# only the CPU nothing else wants), and beside them the kernel backend's tests, one at a
# time, at normal priority: a kernel run is mostly waiting on real time, so the two passes
# together take little longer than the longer one (benches/RESULTS.md, "CI time: the two
# passes at once"). A machine-wide lock keeps any two kernel runs apart. Both passes run
# to the end even when one fails; the parallel pass's output follows the kernel pass's.
# The slowest tests are listed at the end of each, so CI time (under 30 min) can be watched.
status=0
idle=()
if command -v chrt >/dev/null 2>&1 && chrt --idle 0 true 2>/dev/null; then
    idle=(chrt --idle 0)
elif command -v nice >/dev/null 2>&1; then
    idle=(nice -n 19)
fi
sim_log=$(mktemp "${TMPDIR:-/tmp}/tcplab-test-parallel-XXXXXX")
sim_pid=
# A background job of a script ignores Ctrl-C: stop it with the script.
trap 'rm -f "$sim_log"; [ -z "$sim_pid" ] || kill "$sim_pid" 2>/dev/null || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
step "pytest: not kernel, two workers, idle priority (in the background; output below)"
${idle[@]+"${idle[@]}"} python3 -m pytest -q --durations=25 -n 2 --dist loadfile -m "not kernel" tests \
    >"$sim_log" 2>&1 &
sim_pid=$!
step "pytest: kernel, one at a time"
python3 -m pytest -q --durations=10 -m kernel tests || status=$?
step "pytest: kernel pass done, exit $status; waiting for the parallel pass"
sim_status=0
wait "$sim_pid" || sim_status=$?
sim_pid=
step "pytest: parallel pass done, exit $sim_status; its output:"
cat "$sim_log"
[ "$sim_status" = 0 ] || status=$sim_status
step "done, exit $status"
exit "$status"

#!/usr/bin/env bash
# Installs tcplab from this checkout into the active Python (`pip install .`), after the
# system libraries its build links: the kernel backend's BPF loader (crates/bpfload,
# inside the extension module) builds libbpf 1.7 from libbpf-sys's sources over the
# system's libelf and zlib, found with pkg-config. As root on Debian they are installed
# with apt-get when missing (and iputils-ping, the kernel backend's [[probes]]); elsewhere a missing one is named, with the command that
# installs it, before anything is built. Needs Python >= 3.10 and Rust (rust-version in
# Cargo.toml). A machine without Rust installs the wheel instead (scripts/build_wheel.sh).
#
#   bash scripts/install.sh [PIP_ARGS ...]     # e.g. -e '.[dev]' instead of '.'
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="pkg-config libelf-dev zlib1g-dev make iputils-ping"
missing=""
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v make >/dev/null 2>&1 || missing="$missing make"
# ping: the kernel backend's latency probes ([[probes]], backends/kernel/ping.py).
command -v ping >/dev/null 2>&1 || missing="$missing iputils-ping"
[ -f /usr/include/libelf.h ] || missing="$missing libelf-dev"
[ -f /usr/include/zlib.h ] || missing="$missing zlib1g-dev"
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        # shellcheck disable=SC2086
        apt-get install -y -q $pkgs >/dev/null \
            || (apt-get update -q >/dev/null && apt-get install -y -q $pkgs >/dev/null)
    else
        echo "install.sh: missing$missing; on Debian or Ubuntu: sudo apt-get install $pkgs" >&2
        echo "(Fedora: pkgconf-pkg-config elfutils-libelf-devel zlib-devel make)" >&2
        exit 2
    fi
fi
if [ "$#" -eq 0 ]; then
    set -- .
fi
# The engine built with its recorded profile (TCPLAB_PGO=0: without; scripts/pgo_env.sh).
# shellcheck source=scripts/pgo_env.sh
. scripts/pgo_env.sh
python3 -m pip install "$@"

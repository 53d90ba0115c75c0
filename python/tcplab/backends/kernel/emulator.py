"""The kernel backend's link emulator as a process of its own:
``python -m tcplab.backends.kernel.emulator CONFIG.json`` runs crates/emu inside the
compiled extension (``tcplab._engine.emulate``), with the protocol and exit statuses of
the ``tcplab-emu`` binary (crates/emu/src/lib.rs). Shipping it in the extension means an
installed wheel can run the kernel backend without a Rust toolchain or a checkout."""

from __future__ import annotations

import sys

from tcplab.engine import engine


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(
            "tcplab-emu: usage: python -m tcplab.backends.kernel.emulator CONFIG.json",
            file=sys.stderr,
        )
        return 2

    problem = engine().emulate(argv[0])
    if problem is not None:
        code, message = problem
        print(f"tcplab-emu: {message}", file=sys.stderr)
        return int(code)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The running kernel's CONFIG_HZ, which the kernel backend records in a run's metadata
and compares with the spec's simulated one (``[tcp] hz``).

Read from the kernel's build configuration, ``/boot/config-$(uname -r)`` or
``/proc/config.gz``: the same files libbpf reads to fill a program's ``extern unsigned
long CONFIG_HZ __kconfig``, so the value recorded is the value the program saw. Where
neither exists (libbpf then refuses such a program), jiffies are measured against the
monotonic clock through ``/proc/timer_list`` over 200 ms and rounded to the nearest
value the kernel allows (kernel/Kconfig.hz: 100, 250, 300, 1000).
"""

from __future__ import annotations

import gzip
import os
import re
import time
from pathlib import Path

ALLOWED_HZ = (100, 250, 300, 1000)  # kernel/Kconfig.hz
SIMULATED_DEFAULT_HZ = 1000
_LINE = re.compile(rb"^CONFIG_HZ=(\d+)$", re.M)


def config_files() -> list[Path]:
    return [Path(f"/boot/config-{os.uname().release}"), Path("/proc/config.gz")]


def from_config(text: bytes) -> int | None:
    m = _LINE.search(text)
    return int(m.group(1)) if m else None


def kernel_hz() -> tuple[int | None, str]:
    """(CONFIG_HZ, where it came from); (None, why) when it cannot be told."""
    for path in config_files():
        try:
            raw = path.read_bytes()
            text = gzip.decompress(raw) if path.suffix == ".gz" else raw
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        hz = from_config(text)
        if hz is not None:
            return hz, str(path)
    hz = measured_hz()
    if hz is not None:
        return hz, "measured: jiffies in /proc/timer_list over 200 ms"
    return None, "no kernel config (/boot/config-*, /proc/config.gz) and no /proc/timer_list"


def _jiffies() -> int | None:
    try:
        with open("/proc/timer_list", "rb") as f:
            for line in f:
                if line.startswith(b"jiffies: "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def measured_hz(window_s: float = 0.2) -> int | None:
    """jiffies per second over ``window_s``, rounded to the nearest allowed CONFIG_HZ."""
    t0, j0 = time.monotonic(), _jiffies()
    time.sleep(window_s)
    t1, j1 = time.monotonic(), _jiffies()
    if j0 is None or j1 is None or t1 <= t0:
        return None
    rate = (j1 - j0) / (t1 - t0)
    return min(ALLOWED_HZ, key=lambda hz: abs(hz - rate))


def hz_warning(spec_hz: int, running: int | None) -> str | None:
    """The warning when the spec's simulated CONFIG_HZ is not the kernel's, else None."""
    if running is None or running == spec_hz:
        return None
    return (
        f"this kernel runs CONFIG_HZ={running} but the spec's tcp.hz is {spec_hz}: "
        "jiffies-based clocks (CUBIC's epoch and HyStart timing, BBR's min_rtt window and "
        "PROBE_RTT) tick at different rates on the two backends; BPF programs read the "
        f"running kernel's CONFIG_HZ here (set [tcp] hz = {running} to simulate this kernel)"
    )

"""The traffic agents of the kernel backend, run inside the namespaces
(``ip netns exec NS python -m tcplab.backends.kernel.agent send|receive CONFIG.json``).

* ``receive`` (receiver namespace): listens on ``base_port + i`` for flow ``i`` with the
  flow's algorithm (``TCP_CONGESTION``, inherited by the accepted socket), reads
  everything and throws it away, and records each flow's bytes read by the application
  (the simulator's ``delivered_bytes``: in order, each byte once) at every sample time.
* ``send`` (sender namespace): at each flow's start connects with the flow's algorithm
  (``TCP_CONGESTION``), writes until the flow's stop time (bulk) or its size (finite, then
  shuts its side down), stops writing during an on/off flow's off periods, and at every
  sample time reads ``TCP_INFO`` (and ``TCP_CC_INFO`` for BBR) of each connected socket.
  The receiver records when a finite flow's last byte was read (its completion time).

Both say ``ready`` once set up and then read ``start T0`` on stdin: they share the
experiment's time zero ``t0_ns`` (CLOCK_MONOTONIC, as the emulator), take
their samples at ``t0 + k * interval`` for k = 1 .. duration / interval, stop at ``t0 +
duration`` and write their records as JSON to ``out``. Both die with their parent.

Deviation: a bulk sender cannot take back what it has written, so after its stop time
(and into an off period) the kernel still sends what sits unsent in the socket;
``TCP_NOTSENT_LOWAT`` bounds that to ``NOTSENT_LOWAT`` bytes plus one write.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import selectors
import signal
import socket
import sys
import time
from typing import Any

from tcplab.backends.kernel import tcpinfo

NOTSENT_LOWAT = 128 * 1024
CHUNK = bytes(64 * 1024)
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def write_sysctls(items: dict[str, str]) -> None:
    """Set this namespace's per-namespace sysctls (``net.ipv4.tcp_recovery`` ...)."""
    for key, value in items.items():
        with open("/proc/sys/" + key.replace(".", "/"), "w") as fh:
            fh.write(str(value))


def sample_times(cfg: dict[str, Any]) -> list[int]:
    iv, dur = cfg["sample_interval_ns"], cfg["duration_ns"]
    return [k * iv for k in range(1, dur // iv + 1)] if iv > 0 else []


def now_rel(t0: int) -> int:
    return time.monotonic_ns() - t0


def receive(cfg: dict[str, Any]) -> dict[str, Any]:
    write_sysctls(cfg.get("sysctls", {}))
    sel = selectors.DefaultSelector()
    n = len(cfg["flows"])
    for i in range(n):
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # The accepted socket inherits the listener's algorithm: the flow's own only when
        # it needs ECN (dctcp's exact CE echo), else Reno; never the namespace's default,
        # which is the host's (run.py ``receiver_cc``).
        rx_cc = cfg["flows"][i]["receiver_cc"]
        ls.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_CONGESTION, rx_cc.encode())
        ls.bind((cfg["receiver_addr"], cfg["base_port"] + i))
        ls.listen(4)
        ls.setblocking(False)
        sel.register(ls, selectors.EVENT_READ, ("listen", i))
    print("ready", flush=True)
    t0 = int(sys.stdin.readline().split()[1])  # "start T0"
    got = [0] * n
    done: list[int | None] = [None] * n  # when a finite flow's last byte was read
    rows: list[list[int]] = []
    times = sample_times(cfg)
    buf = bytearray(1 << 18)
    k = 0
    while True:
        t = now_rel(t0)
        while k < len(times) and times[k] <= t:
            rows.append(list(got))
            k += 1
        if t >= cfg["duration_ns"]:
            break
        nxt = times[k] if k < len(times) else cfg["duration_ns"]
        for key, _ in sel.select(timeout=max(0.0, (nxt - t) / 1e9)):
            kind, i = key.data
            if kind == "listen":
                conn, _ = key.fileobj.accept()
                conn.setblocking(False)
                sel.register(conn, selectors.EVENT_READ, ("conn", i))
                continue
            try:
                r = key.fileobj.recv_into(buf)
            except BlockingIOError:
                continue
            except OSError:
                r = 0
            if r == 0:
                sel.unregister(key.fileobj)
                key.fileobj.close()
            got[i] += r
            size = cfg["flows"][i].get("bytes")
            if size is not None and done[i] is None and got[i] >= size:
                done[i] = now_rel(t0)
    return {"delivered_bytes": got, "samples": rows, "completed_ns": done}


class Flow:
    def __init__(self, i: int, f: dict[str, Any]):
        self.i, self.cc, self.start, self.stop = i, f["cc"], f["start_ns"], f["stop_ns"]
        self.left = f["bytes"]  # None: bulk
        # Off periods [from, to) of an on/off flow (emulator's onoff_schedule): no writes.
        self.offs: list[tuple[int, int]] = [tuple(o) for o in f.get("offs", [])]
        self.paused = False
        self.sock: Any = None
        self.done = False  # no more writes
        self.last: dict[str, Any] = {}
        # When the agent first wrote data (ns from time zero): the handshake's end plus
        # this process's wake-up. Flows whose first writes fall within ~0.08 ms of each
        # other leave slow start together (docs/FIDELITY-gaps.md, gap 11), so the run
        # records it (summary.json engine.kernel.first_writes_ms).
        self.first_write: int | None = None


def send(cfg: dict[str, Any]) -> dict[str, Any]:
    write_sysctls(cfg.get("sysctls", {}))
    # Started before time zero is chosen (a Python start-up on a loaded machine took longer
    # than the 200 ms lead, and every flow connected late): ready, then "start T0".
    print("ready", flush=True)
    t0 = int(sys.stdin.readline().split()[1])
    flows = [Flow(i, f) for i, f in enumerate(cfg["flows"])]
    sel = selectors.DefaultSelector()
    times = sample_times(cfg)
    samples: list[list[Any]] = []  # per sample time: per flow a row dict or None
    errors: list[str] = []
    k = 0
    while True:
        t = now_rel(t0)
        for f in flows:
            if f.sock is None and t >= f.start:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_CONGESTION, f.cc.encode())
                s.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_NOTSENT_LOWAT, NOTSENT_LOWAT)
                s.setblocking(False)
                err = s.connect_ex((cfg["receiver_addr"], cfg["base_port"] + f.i))
                if err not in (0, errno.EINPROGRESS):
                    errors.append(f"flow {f.i}: connect: {os.strerror(err)}")
                f.sock = s
                sel.register(s, selectors.EVENT_WRITE, f)
            if f.sock is not None and not f.done and t >= f.stop:
                f.done = True
                if not f.paused:
                    sel.unregister(f.sock)
            if f.sock is not None and not f.done and f.offs:
                off = any(a <= t < b for a, b in f.offs)
                if off and not f.paused:
                    sel.unregister(f.sock)
                elif f.paused and not off:
                    sel.register(f.sock, selectors.EVENT_WRITE, f)
                f.paused = off
        while k < len(times) and times[k] <= t:
            row = []
            for f in flows:
                if f.sock is None:
                    row.append(None)
                    continue
                try:
                    f.last = tcpinfo.sample(f.sock, f.cc == "bbr")
                except OSError:
                    pass  # closed: repeat the last values
                row.append(f.last or None)
            samples.append(row)
            k += 1
        if t >= cfg["duration_ns"]:
            break
        nxt = min(
            [times[k] if k < len(times) else cfg["duration_ns"]]
            + [f.start for f in flows if f.sock is None]
            + [f.stop for f in flows if f.sock is not None and not f.done]
            + [x for f in flows if not f.done for o in f.offs for x in o if x > t]
        )
        for key, _ in sel.select(timeout=max(0.0, (nxt - t) / 1e9)):
            f = key.data
            try:
                data = CHUNK if f.left is None else CHUNK[: min(len(CHUNK), f.left)]
                # Read the clock before the call (send() itself emits the window), and only
                # until the flow's first write: later writes need no time.
                t_write = now_rel(t0) if f.first_write is None else None
                sent = f.sock.send(data)
                if t_write is not None and sent > 0:
                    f.first_write = t_write
            except BlockingIOError:
                continue
            except OSError as exc:
                errors.append(f"flow {f.i}: send: {exc}")
                sel.unregister(f.sock)
                f.done = True
                continue
            if f.left is not None:
                f.left -= sent
                if f.left <= 0:
                    sel.unregister(f.sock)
                    f.paused = False  # nothing to resume
                    f.done = True
                    f.sock.shutdown(socket.SHUT_WR)
    for f in flows:
        if f.sock is not None:
            f.sock.close()
    return {
        "samples": samples,
        "errors": errors,
        "first_writes_ns": [f.first_write for f in flows],
    }


def write_result(path: str, out: dict) -> None:
    """An agent's result as JSON at ``path``, whole or not at all (written beside it,
    then renamed), so the run never reads half a file from an agent that was killed."""
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(out, fh)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    die_with_parent()
    role, path = argv[0], argv[1]
    with open(path) as fh:
        cfg = json.load(fh)
    write_result(cfg["out"], receive(cfg) if role == "receive" else send(cfg))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``bpf_printk`` on the kernel backend: the lines a run's BPF programs print, read from
the kernel's trace buffer while the run runs, in the simulator's form (``{program,
time_ns, text}``, time since the run's start), so that the run directory's
``bpf_printk.log`` reads the same on both backends (storage/directory.py write_printk).

* **Its own buffer.** ``bpf_printk`` is the ``bpf_trace/bpf_trace_printk`` trace event
  (kernel/trace/bpf_trace.c): a tracing instance of the run's own
  (``/sys/kernel/tracing/instances/tcplab-<pid>``) with that event enabled gets every
  line, and reading its ``trace_pipe`` consumes nothing another reader of the global
  buffer (``bpftool prog tracelog``, another run) would see.
* **Whose line.** The event does not say which program printed; with the instance's
  ``stacktrace`` option each line is followed by the kernel stack, whose frame
  ``bpf_prog_<tag>_<function>`` names the program by its tag (the hash of its
  instructions, which the loader reports for every program of the objects it loaded).
  Lines of programs that are not the run's are dropped. A run of the very same object at
  the same time by another process has the same tags: its lines would be counted too.
* **The clock.** The instance's ``trace_clock`` is ``mono``, CLOCK_MONOTONIC, the clock
  the run's start time ``t0`` is taken on (time.monotonic_ns), so a line's time is its
  timestamp minus ``t0``; a line printed while the connections were set up, before the
  start, has a negative time.
* **The end.** Lines printed after the run's end (the connections closing, whose
  timeouts call the programs again) are left out, as the simulator's run ends there.
* **Lost lines.** A line the instance's ring buffer overwrote before it was read is
  counted from the buffer's ``overrun`` statistics as ``bpf_printk_dropped``; at most
  ``MAX_LINES`` lines per program are kept, as the simulator keeps them.

tracefs is mounted at /sys/kernel/tracing if it is not (root). Without tracefs the run
goes on and writes no log, saying why in a warning.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRACEFS = Path("/sys/kernel/tracing")
INSTANCE_PREFIX = "tcplab-"
MAX_LINES = 100_000
"""Lines kept per program, as the simulator keeps them (crates/bpf printk.rs)."""
BUFFER_KB = 4096
"""The instance's ring buffer per CPU: ~40,000 short lines with their stacks."""

_EVENT = re.compile(
    r"^\s*.+?-\d+\s+\[\d+\]\s+\S+\s+(?P<ts>\d+\.\d+): bpf_trace_printk: (?P<text>.*)$"
)
_STACK = re.compile(r"^\s*.+?-\d+\s+\[\d+\]\s+\S+\s+\d+\.\d+: <stack trace>$")
_FRAME = re.compile(r"^ => bpf_prog_(?P<tag>[0-9a-f]{16})_\w*")


@dataclass
class _Record:
    ts_ns: int
    text: list[str]
    tag: str | None = None
    in_stack: bool = False


def parse(lines: list[str]) -> list[tuple[int, str, str | None]]:
    """trace_pipe text with stack traces into (timestamp ns, text, program tag or None):
    an event's text runs until its ``<stack trace>`` line (a format's own newlines
    included, the one ending it dropped as write_printk drops it); the first
    ``bpf_prog_<tag>_...`` frame of its stack names the program."""
    out: list[_Record] = []
    for line in lines:
        m = _EVENT.match(line)
        if m:
            sec, _, frac = m["ts"].partition(".")
            out.append(_Record(int(sec) * 10**9 + int(frac.ljust(9, "0")[:9]), [m["text"]]))
            continue
        if not out:
            continue
        rec = out[-1]
        if _STACK.match(line):
            rec.in_stack = True
        elif rec.in_stack:
            f = _FRAME.match(line)
            if f and rec.tag is None:
                rec.tag = f["tag"]
        else:
            rec.text.append(line)
    result = []
    for rec in out:
        text = "\n".join(rec.text)
        result.append((rec.ts_ns, text.rstrip("\n"), rec.tag))
    return result


@dataclass
class Reader:
    """Collects the run's programs' bpf_printk lines: :meth:`start` before the programs
    can print, :meth:`stop` after the run; ``tags`` maps each program tag to the name of
    the program (the ``tcp_congestion_ops``) it belongs to."""

    tags: dict[str, str]
    instance: Path | None = None
    warning: str | None = None
    _lines: list[str] = field(default_factory=list)
    _thread: threading.Thread | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        if not self.tags:
            return
        try:
            self.instance = _make_instance()
            fd = os.open(self.instance / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            self.warning = f"bpf_printk lines not collected: tracefs: {exc}"
            self._remove()
            return
        self._thread = threading.Thread(target=self._read, args=(fd,), daemon=True)
        self._thread.start()

    def _read(self, fd: int) -> None:
        buf = b""
        try:
            while True:
                stopping = self._stop.is_set()
                ready, _, _ = select.select([fd], [], [], 0.05)
                chunk = b""
                if ready:
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        chunk = b""
                if chunk:
                    buf += chunk
                    *done, buf = buf.split(b"\n")
                    self._lines += [d.decode("utf-8", "replace") for d in done]
                elif stopping:  # drained after the stop was asked
                    break
        finally:
            os.close(fd)
            if buf:
                self._lines.append(buf.decode("utf-8", "replace"))

    def stop(self, t0_ns: int, end_ns: int | None = None) -> tuple[list[dict[str, Any]], int]:
        """The run's lines ({program, time_ns, text}, in time order) and how many were
        lost (ring-buffer overruns, and lines past MAX_LINES per program); the instance
        is removed. Lines printed after ``end_ns`` (the run's duration: the sockets
        closing after the run call the programs again, from their retransmission
        timeouts) are not the run's, which in the simulator ends there: left out."""
        if self._thread is None:
            self._remove()
            return [], 0
        if self.instance is not None:
            try:  # no new lines; what is buffered is still read
                (self.instance / "events/bpf_trace/bpf_trace_printk/enable").write_text("0")
            except OSError:
                pass
        self._stop.set()
        self._thread.join(10)
        dropped = _overruns(self.instance) if self.instance is not None else 0
        self._remove()
        rows: list[dict[str, Any]] = []
        kept: dict[str, int] = {}
        for ts, text, tag in parse(self._lines):
            program = self.tags.get(tag or "")
            if program is None:
                continue  # another program's line
            if end_ns is not None and ts - t0_ns > end_ns:
                continue  # after the run's end
            if kept.get(program, 0) >= MAX_LINES:
                dropped += 1
                continue
            kept[program] = kept.get(program, 0) + 1
            rows.append({"program": program, "time_ns": ts - t0_ns, "text": text})
        rows.sort(key=lambda r: r["time_ns"])
        return rows, dropped

    def _remove(self) -> None:
        if self.instance is not None:
            remove_instance(self.instance)
            self.instance = None


def _make_instance() -> Path:
    if not (TRACEFS / "instances").is_dir():
        subprocess.run(
            ["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True, timeout=10
        )
    if not (TRACEFS / "instances").is_dir():
        raise OSError(f"{TRACEFS} is not a tracefs with instances (mount -t tracefs failed)")
    inst = TRACEFS / "instances" / f"{INSTANCE_PREFIX}{os.getpid()}"
    if inst.exists():
        remove_instance(inst)
    inst.mkdir()
    try:
        (inst / "trace_clock").write_text("mono")
        (inst / "buffer_size_kb").write_text(str(BUFFER_KB))
        (inst / "options/stacktrace").write_text("1")
        (inst / "events/bpf_trace/bpf_trace_printk/enable").write_text("1")
    except OSError:
        remove_instance(inst)
        raise
    return inst


def _overruns(inst: Path) -> int:
    total = 0
    for stats in (inst / "per_cpu").glob("cpu*/stats"):
        try:
            m = re.search(r"^overrun: (\d+)", stats.read_text(), re.M)
        except OSError:
            continue
        total += int(m.group(1)) if m else 0
    return total


def remove_instance(inst: Path) -> None:
    """Disable the instance's event and remove it (rmdir of a tracefs instance frees its
    buffers; it fails while a reader still has its trace_pipe open)."""
    try:
        (inst / "events/bpf_trace/bpf_trace_printk/enable").write_text("0")
    except OSError:
        pass
    try:
        inst.rmdir()
    except OSError:
        shutil.rmtree(inst, ignore_errors=True)


def clean_stale(alive) -> list[str]:
    """Remove the instances of kernel runs whose process is gone (``alive(pid)``)."""
    removed = []
    base = TRACEFS / "instances"
    if not base.is_dir():
        return removed
    for inst in base.glob(f"{INSTANCE_PREFIX}*"):
        pid = inst.name[len(INSTANCE_PREFIX) :]
        if pid.isdigit() and int(pid) != os.getpid() and not alive(int(pid)):
            remove_instance(inst)
            removed.append(inst.name)
    return removed

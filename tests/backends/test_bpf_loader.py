"""The BPF loader as every install has it (``python -m tcplab.bpf_loader``, the extension's
copy of crates/bpfload): it answers as the ``tcplab-bpfload`` binary does, names itself
so a later run recognises it, and says in one JSON line, never with a Rust panic, what
libbpf made of a mangled object whose names are not UTF-8. Opening an object needs
neither root nor BTF; only clang, to compile the example first."""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import pytest
from tcplab import bpf, bpf_loader

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(bpf.compiler_missing() is not None, reason="needs clang and libbpf-dev"),
]


def _section_name_offset(elf: bytes, wanted: bytes) -> int:
    """Where, in an ELF64 object, the name of section ``wanted`` is stored."""
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    strtab = struct.unpack_from("<Q", elf, shoff + shstrndx * shentsize + 0x18)[0]
    for i in range(shnum):
        name = struct.unpack_from("<I", elf, shoff + i * shentsize)[0]
        at = strtab + name
        if elf[at : elf.index(b"\0", at)] == wanted:
            return at
    raise AssertionError(f"no section {wanted!r}")


def test_the_loader_runs_from_the_extension():
    assert bpf_loader.loader() == [sys.executable, "-m", "tcplab.bpf_loader"]
    r = subprocess.run(bpf_loader.loader(), capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("usage: tcplab-bpfload"), r.stderr


def test_a_name_that_is_not_utf8_is_a_clear_refusal(tmp_path):
    # Before, libbpf's log line naming the section ("skipping unrecognized data
    # section(5) li\xffense") hit libbpf-rs's UTF-8 check inside a C callback: the process
    # aborted with a 95 KB Rust backtrace. Now the log keeps the bytes (U+FFFD) and the
    # answer is libbpf's refusal: without its license section the object cannot open.
    elf = bytearray(bpf.object_for(bpf.EXAMPLES / "reno.bpf.c").read_bytes())
    elf[_section_name_offset(bytes(elf), b"license") + 2] = 0xFF
    path = tmp_path / "mangled.bpf.o"
    path.write_bytes(bytes(elf))
    r = subprocess.run(
        [*bpf_loader.loader(), "verify", str(path)],
        capture_output=True,
        text=True,
        errors="replace",
    )
    assert r.returncode == 1, r.stderr[-500:]
    answer = json.loads(r.stdout.splitlines()[0])
    assert answer["ok"] is False and "libbpf could not open it" in answer["error"]
    assert "li\ufffdense" in answer["log"]
    assert "panicked" not in r.stderr and len(r.stderr) < 1000

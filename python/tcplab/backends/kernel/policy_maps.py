"""The maps of a registered policy program (tcplab/data/bpf/policy/policy_rate.bpf.c or
policy_cubic.bpf.c, both from policy_maps.h),
read and written from user space through the ``bpf(2)`` system call.

The program is registered for a run under a run-unique kernel name (``bpf_ops``); its
maps ``policy_ctl`` and ``policy_meas`` carry the names every copy of the program gives
them, so they are told apart by the object's BTF: every map libbpf creates for one object
carries that object's BTF id (``bpf_map_info.btf_id``), the struct_ops map included, and
the struct_ops map is the one whose value holds the run's kernel name
(``tcp_congestion_ops.name``; a process registers under the same name again in a later
run, so the newest such map not being torn down). :func:`find` walks the kernel's maps once
(``BPF_MAP_GET_NEXT_ID``) to find them; each control interval then costs one
``BPF_MAP_LOOKUP_ELEM`` per flow and one ``BPF_MAP_UPDATE_ELEM``.

Only the few commands needed are wrapped, with the ``union bpf_attr`` and ``struct
bpf_map_info`` layouts of include/uapi/linux/bpf.h (stable uAPI): no library in PyPI
wraps them without a compiler (bcc) or a native libbpf. Root (CAP_BPF / CAP_SYS_ADMIN)
is needed, as for registering the program.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from dataclasses import dataclass

# include/uapi/linux/bpf.h, enum bpf_cmd and enum bpf_map_type.
BPF_MAP_LOOKUP_ELEM = 1
BPF_MAP_UPDATE_ELEM = 2
BPF_MAP_GET_NEXT_ID = 12
BPF_MAP_GET_FD_BY_ID = 14
BPF_OBJ_GET_INFO_BY_FD = 15
BPF_MAP_TYPE_STRUCT_OPS = 26
# enum bpf_struct_ops_state (kernel/bpf/bpf_struct_ops.c), the u32 after the value's
# refcount: a copy being torn down after its run.
BPF_STRUCT_OPS_STATE_TOBEFREE = 2
BPF_ANY = 0
BPF_OBJ_NAME_LEN = 16
ATTR_SIZE = 128  # larger than any command's part of union bpf_attr used here
MAP_INFO_SIZE = 88  # struct bpf_map_info up to map_extra
_SYSCALL_NR = {"x86_64": 321, "aarch64": 280, "riscv64": 280, "ppc64le": 361, "s390x": 351}

# struct policy_ctl / struct policy_meas of policy_maps.h (little-endian hosts).
CTL_FORMAT = "<Q4I"  # rate_bytes, cwnd, gen, percent, min_cwnd
MEAS_FORMAT = "<4Q12I"
MEAS_FIELDS = (
    "bytes_sent",
    "rtt_sum_us",
    "rtt_count",
    "pacing_rate",
    "rtt_min_us",
    "delivered",
    "lost",
    "total_retrans",
    "srtt_us",
    "mss",
    "cwnd",
    "applied",
    "ssthresh",
    "inflight",
    "min_rtt_us",
    "pad",
)


class BpfMapError(OSError):
    """A bpf(2) call failed or the program's maps were not found."""


_libc = ctypes.CDLL(None, use_errno=True)


def _bpf(cmd: int, attr: ctypes.Array) -> int:
    nr = _SYSCALL_NR.get(platform.machine())
    if nr is None:
        raise BpfMapError(f"bpf(2): no system call number known for {platform.machine()}")
    r = _libc.syscall(nr, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if r < 0:
        e = ctypes.get_errno()
        raise BpfMapError(e, f"bpf(2) command {cmd}: {os.strerror(e)}")
    return r


def _attr(fmt: str, *values: int) -> ctypes.Array:
    buf = ctypes.create_string_buffer(ATTR_SIZE)
    struct.pack_into(fmt, buf, 0, *values)
    return buf


def _map_ids():
    start = 0
    while True:
        attr = _attr("<I", start)
        try:
            _bpf(BPF_MAP_GET_NEXT_ID, attr)
        except BpfMapError as exc:
            if exc.errno == 2:  # ENOENT: no more
                return
            raise
        start = struct.unpack_from("<I", attr, 4)[0]
        yield start


def map_fd(map_id: int) -> int:
    return _bpf(BPF_MAP_GET_FD_BY_ID, _attr("<I", map_id))


@dataclass(frozen=True)
class MapInfo:
    type: int
    id: int
    key_size: int
    value_size: int
    name: str
    btf_id: int


def map_info(fd: int) -> MapInfo:
    info = ctypes.create_string_buffer(MAP_INFO_SIZE)
    _bpf(BPF_OBJ_GET_INFO_BY_FD, _attr("<IIQ", fd, MAP_INFO_SIZE, ctypes.addressof(info)))
    typ, mid, key_size, value_size = struct.unpack_from("<4I", info, 0)
    name = info.raw[24 : 24 + BPF_OBJ_NAME_LEN].split(b"\0")[0].decode(errors="replace")
    (btf_id,) = struct.unpack_from("<I", info, 64)
    return MapInfo(typ, mid, key_size, value_size, name, btf_id)


def lookup(fd: int, key: bytes, value_size: int) -> bytes | None:
    """The value under ``key``, or None when there is none."""
    k = ctypes.create_string_buffer(key, len(key))
    v = ctypes.create_string_buffer(value_size)
    try:
        _bpf(BPF_MAP_LOOKUP_ELEM, _attr("<I4xQQQ", fd, ctypes.addressof(k), ctypes.addressof(v), 0))
    except BpfMapError as exc:
        if exc.errno == 2:  # ENOENT
            return None
        raise
    return v.raw


def update(fd: int, key: bytes, value: bytes) -> None:
    k = ctypes.create_string_buffer(key, len(key))
    v = ctypes.create_string_buffer(value, len(value))
    _bpf(
        BPF_MAP_UPDATE_ELEM,
        _attr("<I4xQQQ", fd, ctypes.addressof(k), ctypes.addressof(v), BPF_ANY),
    )


@dataclass(frozen=True)
class Scale:
    """A write that scales the window the socket has when the write lands (Orca's,
    policy_cubic.bpf.c): ``percent`` of it, at least ``min_cwnd`` segments."""

    percent: int
    min_cwnd: int


@dataclass
class PolicyMaps:
    """Open descriptors of one registered copy's ``policy_ctl`` and ``policy_meas``."""

    ctl_fd: int
    meas_fd: int

    def read(self, port: int) -> dict[str, int] | None:
        """The flow's measurements (``MEAS_FIELDS``), None before its connection exists."""
        raw = lookup(self.meas_fd, struct.pack("<I", port), struct.calcsize(MEAS_FORMAT))
        return None if raw is None else dict(zip(MEAS_FIELDS, struct.unpack(MEAS_FORMAT, raw)))

    def write(
        self, port: int, rate_bps: float, cwnd: int, gen: int, scale: Scale | None = None
    ) -> None:
        """The flow's control: pacing rate (bit/s, as bytes/s truncated, as the
        simulator's set_pacing_rate) and cwnd, applied at its next ACK; with a ``scale``,
        the window is instead that percentage of the socket's window at that ACK."""
        s = scale or Scale(0, 0)
        value = struct.pack(
            CTL_FORMAT, int(rate_bps / 8.0), cwnd, gen & 0xFFFFFFFF, s.percent, s.min_cwnd
        )
        update(self.ctl_fd, struct.pack("<I", port), value)

    def close(self) -> None:
        for fd in (self.ctl_fd, self.meas_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def find(kernel_name: str) -> PolicyMaps:
    """The maps of the policy program registered as ``kernel_name``."""
    want = kernel_name.encode() + b"\0"
    btf_id = None
    found: dict[str, int] = {}
    infos: list[tuple[MapInfo, int]] = []
    for mid in _map_ids():  # ascending ids: the last match is the newest
        try:
            fd = map_fd(mid)
        except BpfMapError:
            continue  # gone meanwhile
        info = map_info(fd)
        if info.type == BPF_MAP_TYPE_STRUCT_OPS:
            value = lookup(fd, struct.pack("<I", 0), info.value_size)
            if (
                value is not None
                and want in value
                and struct.unpack_from("<I", value, 4)[0] != BPF_STRUCT_OPS_STATE_TOBEFREE
            ):
                btf_id = info.btf_id
        if info.name in ("policy_ctl", "policy_meas"):
            infos.append((info, fd))
        else:
            os.close(fd)
    for info, fd in infos:
        if btf_id is not None and info.btf_id == btf_id and info.name not in found:
            found[info.name] = fd
        else:
            os.close(fd)
    if btf_id is None or len(found) != 2:
        for fd in found.values():
            os.close(fd)
        raise BpfMapError(
            f"the maps of the policy program registered as {kernel_name!r} were not found "
            f"({'no struct_ops of that name' if btf_id is None else 'maps missing'})"
        )
    return PolicyMaps(found["policy_ctl"], found["policy_meas"])

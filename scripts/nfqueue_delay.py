#!/usr/bin/env python3
"""A constant delay line in user space through netfilter's NFQUEUE, for kernels without
``sch_netem`` (scripts/veth_testbed.py).

An nftables rule in a namespace hands each matching packet to queue ``N``; this process,
bound to that queue in copy mode META (the kernel keeps the payload, we only see its id),
holds every packet for ``delay`` and then accepts it. Packets leave in the order they
came (a constant delay keeps FIFO order), so one batch verdict accepts every packet up to
the newest one that is due (``NFQNL_MSG_VERDICT_BATCH``: "all ids <= id").

The nfnetlink_queue protocol, as include/uapi/linux/netfilter/nfnetlink_queue.h and
nfnetlink.h define it (message = nlmsghdr + nfgenmsg + attributes; numbers in the
attribute payloads are big-endian):

- ``NFQNL_MSG_CONFIG`` (2) with ``NFQA_CFG_CMD`` (1) = {command BIND (1), pad, pf}, then
  ``NFQA_CFG_PARAMS`` (2) = {copy_range u32, copy_mode u8 = NFQNL_COPY_META (1)} and
  ``NFQA_CFG_QUEUE_MAXLEN`` (3) = u32;
- ``NFQNL_MSG_PACKET`` (0) from the kernel carries ``NFQA_PACKET_HDR`` (1) = {packet_id
  u32, hw_protocol u16, hook u8};
- ``NFQNL_MSG_VERDICT_BATCH`` (3) with ``NFQA_VERDICT_HDR`` (2) = {verdict u32 = NF_ACCEPT
  (1), id u32}.

The timing is the process's: it wakes at each release time with ``select`` and
``time.monotonic``; on an idle core that is within ~0.1 ms. A packet arriving while the
queue holds ``--maxlen`` packets is dropped by the kernel (reported at the end).

    ip netns exec NS python scripts/nfqueue_delay.py --queue 0 --delay-ms 40 --seconds 30
"""

from __future__ import annotations

import argparse
import collections
import select
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_CONFIG, NFQNL_MSG_VERDICT_BATCH = 0, 2, 3
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN = 1, 2, 3
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NF_ACCEPT = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2


def _attr(kind: int, payload: bytes) -> bytes:
    data = struct.pack("=HH", 4 + len(payload), kind) + payload
    return data + b"\0" * (-len(data) % 4)


def _message(kind: int, queue: int, attrs: bytes, flags: int = NLM_F_REQUEST) -> bytes:
    body = struct.pack("=BBH", socket.AF_INET, 0, socket.htons(queue)) + attrs
    return (
        struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags, 0, 0) + body
    )


def bind(queue: int, maxlen: int) -> socket.socket:
    """A netlink socket bound to ``queue`` in copy mode META."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.bind((0, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    cmd = _attr(
        NFQA_CFG_CMD, struct.pack("=BBH", NFQNL_CFG_CMD_BIND, 0, socket.htons(socket.AF_INET))
    )
    params = _attr(NFQA_CFG_PARAMS, struct.pack(">IB", 0, NFQNL_COPY_META))
    qlen = _attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack(">I", maxlen))
    for attrs in (cmd, params + qlen):
        s.send(_message(NFQNL_MSG_CONFIG, queue, attrs, NLM_F_REQUEST | NLM_F_ACK))
        _expect_ack(s)
    return s


def _expect_ack(s: socket.socket) -> None:
    data = s.recv(65536)
    _length, kind = struct.unpack_from("=IH", data, 0)
    if kind == NLMSG_ERROR:
        (err,) = struct.unpack_from("=i", data, 16)
        if err != 0:
            raise OSError(-err, f"nfnetlink_queue config refused: errno {-err}")


def packet_ids(data: bytes) -> list[int]:
    """The packet ids of the ``NFQNL_MSG_PACKET`` messages in one netlink read."""
    ids = []
    at = 0
    while at + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, at)
        if length < 16:
            break
        if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            a = at + 20  # nlmsghdr (16) + nfgenmsg (4)
            while a + 4 <= at + length:
                alen, atype = struct.unpack_from("=HH", data, a)
                if alen < 4:
                    break
                if atype & 0x7FFF == NFQA_PACKET_HDR:
                    ids.append(struct.unpack_from(">I", data, a + 4)[0])
                a += (alen + 3) & ~3
        at += (length + 3) & ~3
    return ids


def accept_up_to(s: socket.socket, queue: int, packet_id: int) -> None:
    hdr = _attr(NFQA_VERDICT_HDR, struct.pack(">II", NF_ACCEPT, packet_id))
    s.send(_message(NFQNL_MSG_VERDICT_BATCH, queue, hdr))


def run(queue: int, delay_s: float, seconds: float, maxlen: int) -> dict:
    s = bind(queue, maxlen)
    held: collections.deque[tuple[float, int]] = collections.deque()
    passed = 0
    late_max = 0.0
    end = time.monotonic() + seconds
    print("ready", flush=True)
    while True:
        now = time.monotonic()
        if now >= end and not held:
            break
        wait = max(0.0, held[0][0] - now) if held else max(0.0, end - now)
        ready, _, _ = select.select([s], [], [], min(wait, 0.5))
        now = time.monotonic()
        if ready:
            for pid in packet_ids(s.recv(1 << 20)):
                held.append((now + delay_s, pid))
        last = None
        while held and held[0][0] <= now:
            due, last = held.popleft()
            late_max = max(late_max, now - due)
            passed += 1
        if last is not None:
            accept_up_to(s, queue, last)
    s.close()
    return {"passed": passed, "late_max_ms": late_max * 1e3}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queue", type=int, default=0)
    ap.add_argument("--delay-ms", type=float, required=True)
    ap.add_argument(
        "--seconds", type=float, required=True, help="then release what is held and exit"
    )
    ap.add_argument("--maxlen", type=int, default=100000)
    a = ap.parse_args()
    out = run(a.queue, a.delay_ms / 1e3, a.seconds, a.maxlen)
    print(f"passed {out['passed']} packets, at most {out['late_max_ms']:.3f} ms late", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

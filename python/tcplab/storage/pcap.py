"""pcap files of captured links (``[experiment] pcap = ["bottleneck", ...]``).

The engine records every packet that leaves a captured link's serializer, with its time
(``crates/sim/src/net/capture.rs``: the view of tcpdump on the sending interface; drops
are not seen). Here each becomes an Ethernet / IPv4 / TCP frame in a pcap file (the
classic libpcap format with nanosecond timestamps, magic ``0xa1b23c4d``), one file per
link, ``DIR/<link>.pcap``, which Wireshark, tshark, tcptrace and scapy read.

Synthesised headers:

- Hosts: flow ``k``'s sender is ``10.1.x.y``, its receiver ``10.2.x.y`` with
  ``x.y = k + 1`` in base 256; MAC addresses ``02:00:0a:01:x:y`` / ``02:00:0a:02:x:y``;
  ports ``32768 + k mod 32768`` -> 5201 (iperf3's).
- Sequence numbers are bytes from an initial sequence number of 0 (there is no handshake
  in the engine): a data segment ``n`` has sequence ``n * mss`` (the engine's segments
  are all MSS-sized but a finite transfer's last), the cumulative ACK and the SACK block
  edges ``segments * mss``, capped at a finite flow's size. The receiver sends no data, so
  its sequence number is 0 and data segments acknowledge 0. Modulo 2**32.
- Flags: ACK on every segment (no SYN, FIN or PSH). Window: an ACK's advertised receive
  window (``tcp_select_window``, crates/sim/src/tcp/rcv_space.rs) in units of 1024 bytes,
  the receiver's window scale (``RCV_WSCALE`` = 10; there is no SYN to carry it, so tools
  show the field unscaled: multiply by 1024), at most 65535; 65535 on data segments and
  where the receiver sets no limit (``tcp.receive_buffer = "unlimited"``). SACK blocks
  (RFC 2018) as the engine's ACK carries them, most recent first, after two NOPs.
- Not modelled, so not written: the timestamp option (the engine takes RTT samples by
  Karn's rule and sends no TSval), checksums (0; Wireshark does not check them by
  default), IP identification (a per-direction counter).
- Constant-rate sources' packets (``[[sources]]``) are IPv4 / UDP frames from ``10.3.x.y``
  to ``10.4.x.y`` (``x.y = source + 1``), ports ``32768 + source`` -> 5201, of the
  engine's wire size (IP total length = wire bytes; UDP payload = wire bytes - 28).
- Headers only: each frame's captured length is its headers, its original length the
  whole frame (``snaplen`` truncation, as ``tcpdump -s 96`` gives). The frame's IP total
  length is 40 + options + payload, 12 bytes less than the engine's wire size for a data
  segment (its 52-byte header counts the timestamp option not written here).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcplab.engine import engine

PCAP_MAGIC_NS = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
SNAPLEN = 65535
RECEIVER_PORT = 5201
WINDOW = 65535  # the window field where no receive window applies, and its largest value
TCP_ACK = 0x10


def _host(side: int, k: int) -> tuple[bytes, bytes]:
    hi, lo = divmod(k + 1, 256)
    return bytes([10, side, hi % 256, lo]), bytes([2, 0, 10, side, hi % 256, lo])


def _ip_checksum(header: bytes) -> int:
    total = sum(struct.unpack("!10H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def frames(
    table: dict[str, Sequence[int]], mss: int, sizes: Sequence[int | None]
) -> list[tuple[int, bytes, int]]:
    """(time_ns, captured bytes, original length) of each captured packet.

    ``sizes[k]`` is flow ``k``'s transfer size in bytes (None for bulk)."""
    out = []
    ip_id: dict[tuple[int, int], int] = {}
    cols = [table[c] for c in ("time_ns", "flow", "is_ack", "seq", "payload", "n_sacks")]
    sacks = [(table[f"sack{b}_start"], table[f"sack{b}_end"]) for b in range(3)]

    def byte(k: int, seg: int) -> int:
        b = seg * mss
        size = sizes[k] if k < len(sizes) else None
        return (min(b, size) if size is not None else b) & 0xFFFFFFFF

    dgram = table.get("is_datagram") or [0] * len(cols[0])
    # The engine's own constants (crates/sim: rcv_space.rs RCV_WSCALE, packet.rs NO_WINDOW).
    eng = engine()
    no_window, scale = eng.NO_WINDOW, eng.RCV_WSCALE
    wnd = table.get("wnd") or [no_window] * len(cols[0])
    for i, (t, k, is_ack, seq, payload, n_sacks) in enumerate(zip(*cols)):
        if dgram[i]:
            out.append(_udp_frame(int(t), k, int(table["wire_bytes"][i])))
            continue
        snd_ip, snd_mac = _host(1, k)
        rcv_ip, rcv_mac = _host(2, k)
        sport = 32768 + k % 32768
        if is_ack:
            src, dst, smac, dmac, ports = rcv_ip, snd_ip, rcv_mac, snd_mac, (RECEIVER_PORT, sport)
            seq_no, ack_no = 0, byte(k, seq)
            window = WINDOW if wnd[i] == no_window else min(int(wnd[i]) >> scale, WINDOW)
            opts = b""
            if n_sacks:
                opts = b"\x01\x01" + bytes([5, 2 + 8 * n_sacks])
                for b in range(n_sacks):
                    opts += struct.pack("!II", byte(k, sacks[b][0][i]), byte(k, sacks[b][1][i]))
        else:
            src, dst, smac, dmac, ports = snd_ip, rcv_ip, snd_mac, rcv_mac, (sport, RECEIVER_PORT)
            seq_no, ack_no, opts, window = byte(k, seq), 0, b"", WINDOW
        tcp_len = 20 + len(opts)
        tcp = (
            struct.pack(
                "!HHIIBBHHH",
                ports[0],
                ports[1],
                seq_no,
                ack_no,
                (tcp_len // 4) << 4,
                TCP_ACK,
                window,
                0,
                0,
            )
            + opts
        )
        key = (k, is_ack)
        ident = ip_id.get(key, 0)
        ip_id[key] = (ident + 1) & 0xFFFF
        total = 20 + tcp_len + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, ident, 0x4000, 64, 6, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", _ip_checksum(ip)) + ip[12:]
        eth = dmac + smac + b"\x08\x00"
        out.append((int(t), eth + ip + tcp, 14 + total))
    return out


def _udp_frame(t: int, k: int, wire: int) -> tuple[int, bytes, int]:
    """A constant-rate source's packet: Ethernet / IPv4 / UDP headers (tcplab.specs.sources)."""
    (src, smac), (dst, dmac) = _host(3, k), _host(4, k)
    total = max(wire, 28)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", _ip_checksum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", 32768 + k % 32768, RECEIVER_PORT, total - 20, 0)
    return t, dmac + smac + b"\x08\x00" + ip + udp, 14 + total


def write_pcap(
    path: Path, table: dict[str, Sequence[int]], mss: int, sizes: Sequence[int | None]
) -> int:
    """Write one captured link as a pcap file; returns the number of packets."""
    recs = frames(table, mss, sizes)
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", PCAP_MAGIC_NS, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))
        for t, data, orig in recs:
            sec, ns = divmod(t, 10**9)
            f.write(struct.pack("<IIII", sec, ns, len(data), orig))
            f.write(data)
    return len(recs)


def flow_sizes(config: dict[str, Any]) -> list[int | None]:
    """Each engine flow's finite size in bytes, or None (bulk)."""
    out: list[int | None] = []
    for f in config.get("flows", []):
        app = f.get("app")
        out.append(app["finite"]["bytes"] if isinstance(app, dict) and "finite" in app else None)
    return out


def write_captures(directory: Path, captures: dict[str, Any], config: dict[str, Any]) -> list[str]:
    """Write ``<link>.pcap`` for each captured link; returns the file names."""
    mss = config["tcp"]["mss_bytes"]
    sizes = flow_sizes(config)
    names = []
    for link, table in captures.items():
        name = f"{link}.pcap"
        write_pcap(directory / name, table, mss, sizes)
        names.append(name)
    return names

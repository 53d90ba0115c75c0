"""Record the TCP segments a network namespace receives, for fidelity diagnosis.

The kernel backend runs no tcpdump; this reads an AF_PACKET socket inside the sender's
namespace and writes one line per received IPv4/TCP packet:
``unix_time pkttype src:port dst:port seq ack payload_len window``. Used for docs/FIDELITY-gaps.md
(the kernel receiver's ACK spacing and advertised window during slow start):

    tcplab run SPEC -o DIR --backend kernel --set experiment.duration=1s &
    ip netns exec "$(ip netns list | awk '/tcplab-.*-snd/ {print $1; exit}')" \\
        python scripts/sniff_acks.py acks.txt 4

Needs root (AF_PACKET). Exit 2 with a message on bad arguments.
"""

import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
IPPROTO_TCP = 6


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: sniff_acks.py OUTPUT SECONDS", file=sys.stderr)
        return 2
    try:
        seconds = float(argv[2])
    except ValueError:
        print(f"SECONDS must be a number, got {argv[2]!r}", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
    sock.settimeout(0.5)
    end = time.time() + seconds
    with open(argv[1], "w") as out:
        while time.time() < end:
            try:
                pkt, addr = sock.recvfrom(65535)
            except TimeoutError:
                continue
            now = time.time()
            if len(pkt) < 20 or pkt[9] != IPPROTO_TCP:
                continue
            ihl = (pkt[0] & 15) * 4
            total = struct.unpack("!H", pkt[2:4])[0]
            src, dst = socket.inet_ntoa(pkt[12:16]), socket.inet_ntoa(pkt[16:20])
            sport, dport, seq, ack = struct.unpack("!HHII", pkt[ihl : ihl + 12])
            doff = (pkt[ihl + 12] >> 4) * 4
            window = struct.unpack("!H", pkt[ihl + 14 : ihl + 16])[0]
            out.write(
                f"{now:.6f} {addr[2]} {src}:{sport} {dst}:{dport} {seq} {ack} {total - ihl - doff} {window}\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

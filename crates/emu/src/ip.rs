//! Just enough IPv4/TCP parsing to classify a packet: which flow it belongs to (by the
//! receiver's port, `base_port + flow`), how many TCP payload bytes it carries, its
//! sequence and acknowledgment numbers (for the emulator's RTT samples) and the IP
//! header's ECN field (RFC 3168 Sec. 5: the low two bits of the TOS byte). Packets are
//! forwarded unchanged except for a CE mark a queue discipline set ([`set_ce`]), after
//! which the IPv4 header checksum is recomputed (RFC 791; the TCP checksum does not
//! cover the IP header's TOS byte, so it stays valid).

/// Which side of the dumbbell a packet was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Read from the sender namespace's device: data towards the receiver.
    Sender,
    /// Read from the receiver namespace's device: ACKs towards the sender.
    Receiver,
}

/// A classified TCP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpPacket {
    pub flow: u32,
    /// IP total length: what the link model serializes and queues count.
    pub wire_bytes: u32,
    pub payload: u32,
    /// TCP sequence and acknowledgment numbers.
    pub seq: u32,
    pub ack: u32,
    /// The IP header's ECN field (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
    /// The TCP flags byte (CWR 0x80, ECE 0x40, ... FIN 0x01).
    pub flags: u8,
}

/// TCP flags (RFC 3168 Sec. 6.1).
pub const CWR: u8 = 0x80;
pub const ECE: u8 = 0x40;

/// The flow and sizes of an IPv4 TCP packet of one of our flows; `None` for anything else
/// (IPv6 router solicitations, other ports), which the emulator drops and counts.
pub fn classify(pkt: &[u8], side: Side, base_port: u16, n_flows: u32) -> Option<TcpPacket> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 || pkt[9] != 6 {
        return None;
    }
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
    if ihl < 20 || total > pkt.len() || total < ihl + 20 {
        return None;
    }
    let tcp = &pkt[ihl..total];
    let (sport, dport) = (
        u16::from_be_bytes([tcp[0], tcp[1]]),
        u16::from_be_bytes([tcp[2], tcp[3]]),
    );
    let port = if side == Side::Sender { dport } else { sport };
    let flow = u32::from(port.checked_sub(base_port)?);
    if flow >= n_flows {
        return None;
    }
    let doff = usize::from(tcp[12] >> 4) * 4;
    let payload = total.checked_sub(ihl + doff)? as u32;
    let word = |i: usize| u32::from_be_bytes([tcp[i], tcp[i + 1], tcp[i + 2], tcp[i + 3]]);
    Some(TcpPacket {
        flow,
        wire_bytes: total as u32,
        payload,
        seq: word(4),
        ack: word(8),
        ecn: pkt[1] & 0b11,
        flags: tcp[13],
    })
}

/// An ICMP echo of one of our probes ([[probes]], iputils ping): a request read from the
/// sender's device or a reply read from the receiver's, whose identifier is `id_base +
/// probe` (the kernel backend runs each probe's ping with `-e`). Returns the probe index,
/// the IP total length and the ECN field; `None` for anything else.
pub fn classify_echo(
    pkt: &[u8],
    side: Side,
    id_base: u16,
    n_probes: u32,
) -> Option<(u32, u32, u8)> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 || pkt[9] != 1 {
        return None;
    }
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
    if ihl < 20 || total > pkt.len() || total < ihl + 8 {
        return None;
    }
    let icmp = &pkt[ihl..total];
    // Type 8: echo request (towards the receiver); 0: echo reply (RFC 792).
    let want = if side == Side::Sender { 8 } else { 0 };
    if icmp[0] != want || icmp[1] != 0 {
        return None;
    }
    let id = u16::from_be_bytes([icmp[4], icmp[5]]);
    let probe = u32::from(id.checked_sub(id_base)?);
    (probe < n_probes).then_some((probe, total as u32, pkt[1] & 0b11))
}

/// The TCP flags byte of an IPv4 TCP packet (already classified).
pub fn tcp_flags(pkt: &[u8]) -> u8 {
    pkt[usize::from(pkt[0] & 0x0f) * 4 + 13]
}

/// The acknowledgment number of an IPv4 TCP packet (already classified).
pub fn ack_number(pkt: &[u8]) -> u32 {
    let t = usize::from(pkt[0] & 0x0f) * 4;
    u32::from_be_bytes([pkt[t + 8], pkt[t + 9], pkt[t + 10], pkt[t + 11]])
}

/// The TCP options the RTT samples need: the timestamp option (kind 8: TSval, TSecr) and
/// up to four SACK blocks (kind 5, RFC 2018), in the order sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    pub ts: Option<(u32, u32)>,
    pub sacks: [(u32, u32); 4],
    pub n_sacks: usize,
}

/// The timestamp and SACK options of an IPv4 TCP packet (already classified); malformed
/// options end the parse (what was read so far is kept).
pub fn tcp_options(pkt: &[u8]) -> TcpOptions {
    let mut out = TcpOptions::default();
    let t = usize::from(pkt[0] & 0x0f) * 4;
    let end = (t + usize::from(pkt[t + 12] >> 4) * 4).min(pkt.len());
    let word = |i: usize| u32::from_be_bytes([pkt[i], pkt[i + 1], pkt[i + 2], pkt[i + 3]]);
    let mut i = t + 20;
    while i < end {
        match pkt[i] {
            0 => break,  // end of options
            1 => i += 1, // no-op
            kind => {
                let Some(&len) = pkt.get(i + 1) else { break };
                let len = usize::from(len);
                if len < 2 || i + len > end {
                    break;
                }
                if kind == 8 && len == 10 {
                    out.ts = Some((word(i + 2), word(i + 6)));
                } else if kind == 5 {
                    for b in 0..((len - 2) / 8).min(4) {
                        out.sacks[b] = (word(i + 2 + 8 * b), word(i + 6 + 8 * b));
                        out.n_sacks = b + 1;
                    }
                }
                i += len;
            }
        }
    }
    out
}

/// Set the IP header's ECN field to CE (`INET_ECN_set_ce` on the real packet) and
/// recompute the IPv4 header checksum (RFC 791: the ones' complement of the ones'
/// complement sum of the header's 16-bit words, the checksum field taken as 0).
pub fn set_ce(pkt: &mut [u8]) {
    pkt[1] |= 0b11;
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    pkt[10] = 0;
    pkt[11] = 0;
    let mut sum: u32 = pkt[..ihl]
        .chunks_exact(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    pkt[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-built IPv4 header (20 bytes) + TCP header with timestamps (32 bytes) +
    /// `payload` bytes, from port `sport` to `dport`.
    fn packet(sport: u16, dport: u16, payload: usize) -> Vec<u8> {
        let total = 20 + 32 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = 6;
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p[32] = 8 << 4; // data offset 8 words = 32 bytes
        p
    }

    /// An 84-byte IPv4 ICMP echo (ping's default: 20 IP + 8 ICMP + 56 data) of `kind`
    /// (8 request, 0 reply) with identifier `id`.
    fn echo(kind: u8, id: u16) -> Vec<u8> {
        let mut p = vec![0u8; 84];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&84u16.to_be_bytes());
        p[9] = 1;
        p[20] = kind;
        p[24..26].copy_from_slice(&id.to_be_bytes());
        p
    }

    #[test]
    fn ping_echoes_are_told_by_direction_and_identifier() {
        // Identifier base_port + probe: 5001 is probe 1 of 2; a request only from the
        // sender, a reply only from the receiver; other identifiers and TCP are not ours.
        assert_eq!(
            classify_echo(&echo(8, 5001), Side::Sender, 5000, 2),
            Some((1, 84, 0))
        );
        assert_eq!(
            classify_echo(&echo(0, 5000), Side::Receiver, 5000, 2),
            Some((0, 84, 0))
        );
        assert_eq!(classify_echo(&echo(0, 5000), Side::Sender, 5000, 2), None);
        assert_eq!(classify_echo(&echo(8, 5000), Side::Receiver, 5000, 2), None);
        assert_eq!(classify_echo(&echo(8, 5002), Side::Sender, 5000, 2), None);
        assert_eq!(classify_echo(&echo(8, 4999), Side::Sender, 5000, 2), None);
        assert_eq!(
            classify_echo(&packet(1, 5000, 0), Side::Sender, 5000, 2),
            None
        );
    }

    #[test]
    fn full_segment_is_1500_wire_bytes_and_1448_payload() {
        // 20 IP + 32 TCP (timestamps) + 1448 = 1500, the spec's default mss + header.
        let p = packet(40000, 5001, 1448);
        assert_eq!(
            classify(&p, Side::Sender, 5000, 2),
            Some(TcpPacket {
                flow: 1,
                wire_bytes: 1500,
                payload: 1448,
                seq: 0,
                ack: 0,
                ecn: 0,
                flags: 0,
            })
        );
    }

    #[test]
    fn acks_are_classified_by_source_port() {
        let p = packet(5000, 40000, 0);
        assert_eq!(
            classify(&p, Side::Receiver, 5000, 1),
            Some(TcpPacket {
                flow: 0,
                wire_bytes: 52,
                payload: 0,
                seq: 0,
                ack: 0,
                ecn: 0,
                flags: 0,
            })
        );
    }

    #[test]
    fn foreign_packets_are_refused() {
        assert_eq!(
            classify(&packet(40000, 5002, 10), Side::Sender, 5000, 2),
            None
        ); // no flow 2
        assert_eq!(
            classify(&packet(40000, 80, 10), Side::Sender, 5000, 2),
            None
        );
        let mut v6 = packet(40000, 5000, 10);
        v6[0] = 0x60;
        assert_eq!(classify(&v6, Side::Sender, 5000, 2), None);
        assert_eq!(classify(&[0x45, 0, 0], Side::Sender, 5000, 2), None);
    }

    #[test]
    fn sequence_ack_and_ecn_fields_are_read() {
        let mut p = packet(40000, 5000, 100);
        p[1] = 0b10; // ECT(0)
        p[24..28].copy_from_slice(&0xdead_beefu32.to_be_bytes());
        p[28..32].copy_from_slice(&7u32.to_be_bytes());
        let c = classify(&p, Side::Sender, 5000, 1).unwrap();
        assert_eq!((c.seq, c.ack, c.ecn), (0xdead_beef, 7, 2));
        assert_eq!(ack_number(&p), 7);
    }

    #[test]
    fn ce_mark_fixes_the_header_checksum() {
        // The textbook header 4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7 (checksum
        // 0xb861 with TOS 0), here with TOS 0x02 (ECT(0)) and a stale checksum. With TOS
        // 0x03 (CE) the word sum is 4503 + 0073 + 4000 + 4011 + c0a8 + 0001 + c0a8 + 00c7
        // = 0x2479f -> 0x479f + 2 = 0x47a1, checksum !0x47a1 = 0xb85e (0xb861 - 3).
        let mut h = vec![
            0x45, 0x02, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x12, 0x34, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        set_ce(&mut h);
        assert_eq!(h[1], 0x03);
        assert_eq!([h[10], h[11]], [0xb8, 0x5e]);
    }

    #[test]
    fn timestamp_and_sack_options_are_read() {
        // An ACK with NOP NOP TS(7, 9) NOP NOP SACK[(100, 200), (300, 400)]: 12 + 20
        // bytes of options, data offset (20 + 32) / 4 = 13 words.
        let mut p = packet(5000, 40000, 0);
        p.truncate(20);
        let mut tcp = vec![0u8; 20];
        tcp[12] = 13 << 4;
        tcp.extend([1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9]);
        tcp.extend([1, 1, 5, 18]);
        for v in [100u32, 200, 300, 400] {
            tcp.extend(v.to_be_bytes());
        }
        p.extend(tcp);
        let o = tcp_options(&p);
        assert_eq!(o.ts, Some((7, 9)));
        assert_eq!(&o.sacks[..o.n_sacks], &[(100, 200), (300, 400)]);
    }
}

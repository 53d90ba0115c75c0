//! Just enough IPv4/TCP parsing to classify a packet: which flow it belongs to (by the
//! receiver's port, `base_port + flow`) and how many TCP payload bytes it carries.
//! Packets are forwarded unchanged (no checksum to fix).

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
}

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
    Some(TcpPacket {
        flow,
        wire_bytes: total as u32,
        payload,
    })
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

    #[test]
    fn full_segment_is_1500_wire_bytes_and_1448_payload() {
        // 20 IP + 32 TCP (timestamps) + 1448 = 1500, the spec's default mss + header.
        let p = packet(40000, 5001, 1448);
        assert_eq!(
            classify(&p, Side::Sender, 5000, 2),
            Some(TcpPacket {
                flow: 1,
                wire_bytes: 1500,
                payload: 1448
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
                payload: 0
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
}

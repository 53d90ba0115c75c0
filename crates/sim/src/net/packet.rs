//! A packet on the wire. Packets are small `Copy` values: queues and links move them by
//! value, nothing is heap-allocated per packet. Sequence numbers count segments (see
//! `tcplab_cc::ops` module docs).

/// Data segment or pure ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
}

/// The IP header's ECN field (RFC 3168 Sec. 5): Not-ECT, ECT(1), ECT(0), CE, with the
/// codepoints' wire values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0b00,
    Ect1 = 0b01,
    Ect0 = 0b10,
    Ce = 0b11,
}

impl Ecn {
    /// ECN-capable transport: a queue may mark it instead of dropping it.
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// One SACK block: segments `[start, end)` held by the receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

/// With the timestamp option, 40 bytes of TCP option space leave room for 3 SACK blocks
/// (RFC 2018 Sec. 3; Linux `TCP_NUM_SACKS` is 4 but only 3 fit with timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub flow: u32,
    pub kind: PacketKind,
    /// Bytes on the wire (payload + headers + options): what links serialize and queues
    /// count.
    pub wire_bytes: u32,
    /// TCP payload bytes (0 for a pure ACK).
    pub payload: u32,
    /// Data: the segment number. ACK: the cumulative ACK (next segment expected).
    pub seq: u64,
    /// Data: this transmission is a retransmission.
    pub is_retrans: bool,
    /// ACK: SACK blocks, most recent first (RFC 2018); `n_sacks` are valid.
    pub sacks: [SackBlock; MAX_SACK_BLOCKS],
    pub n_sacks: u8,
    /// IP ECN field; a queue turns ECT(0)/ECT(1) into CE to mark (`INET_ECN_set_ce`).
    pub ecn: Ecn,
    /// TCP header flags: ECE (ACK: ECN echo) and CWR (data: congestion window reduced).
    pub ece: bool,
    pub cwr: bool,
}

impl Packet {
    pub fn data(flow: u32, seq: u64, payload: u32, header: u32, is_retrans: bool) -> Packet {
        Packet {
            flow,
            kind: PacketKind::Data,
            wire_bytes: payload + header,
            payload,
            seq,
            is_retrans,
            sacks: [SackBlock::default(); MAX_SACK_BLOCKS],
            n_sacks: 0,
            ecn: Ecn::NotEct,
            ece: false,
            cwr: false,
        }
    }

    /// A pure ACK; each SACK block adds 8 bytes plus 4 for the option header and padding
    /// (RFC 2018 Sec. 3: kind, length, then 8 bytes per block; two NOPs align it).
    pub fn ack(flow: u32, ack: u64, sacks: &[SackBlock], header: u32) -> Packet {
        let mut blocks = [SackBlock::default(); MAX_SACK_BLOCKS];
        let n = sacks.len().min(MAX_SACK_BLOCKS);
        blocks[..n].copy_from_slice(&sacks[..n]);
        let opt = if n > 0 { 4 + 8 * n as u32 } else { 0 };
        Packet {
            flow,
            kind: PacketKind::Ack,
            wire_bytes: header + opt,
            payload: 0,
            seq: ack,
            is_retrans: false,
            sacks: blocks,
            n_sacks: n as u8,
            ecn: Ecn::NotEct,
            ece: false,
            cwr: false,
        }
    }

    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sacks[..self.n_sacks as usize]
    }
}

//! A packet on the wire. Packets are small `Copy` values: queues and links move them by
//! value, nothing is heap-allocated per packet. Sequence numbers count segments (see
//! `tcplab_cc::ops` module docs).

/// Data segment or pure ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
    /// A constant-rate source's packet (source.rs): `flow` is the source's index.
    Datagram,
    /// A latency probe on its way to the echoing host (probe.rs): `flow` is the probe
    /// source's index, `seq` the probe's number.
    Probe,
    /// A probe's echo on its way back (the same `flow` and `seq`).
    ProbeEcho,
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

const ECE_BIT: u8 = 1 << 6;
const CWR_BIT: u8 = 1 << 7;

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
    /// The IP ECN field (bits 0-1, see [`Ecn`]) and the TCP flags ECE (bit 6: an ACK's ECN
    /// echo) and CWR (bit 7: congestion window reduced), packed in the one byte of padding
    /// left. Read and set through `ecn()`, `ece()`, `cwr()` and their setters.
    ecn_bits: u8,
    /// The timestamp option (RFC 7323), TSval: the sending host's millisecond clock
    /// ([`ts_clock`]) when the packet left it. Data segments carry the sender's, ACKs
    /// the receiver's (both hosts of a flow share one clock and phase, as the two
    /// namespaces of the kernel backend do).
    pub tsval: u32,
    /// The timestamp option's TSecr: the peer's TSval this host echoes (`ts_recent`).
    /// A data segment echoes the latest ACK's TSval (0 before any, meaning the
    /// SYN-ACK's); the receiver's RTT estimate, which paces its buffer autotuning, comes
    /// from it (`tcp::rcv_space`). An ACK echoes the TSval of the data segment that
    /// last set `ts_recent` (`tcp_replace_ts_recent`: one at or below `rcv_wup`); the
    /// sender takes an RTT sample from it when Karn's rule allows none (`tcp::input`).
    pub tsecr: u32,
    /// ACK: the receive window it advertises, in bytes beyond the byte it acknowledges
    /// (the header's window field times 2^wscale, `tcp_select_window`); `NO_WINDOW`
    /// when the receiver sets no limit (`tcp.receive_buffer = "unlimited"`) and on data.
    pub wnd: u32,
}

/// `Packet::wnd` of a receiver that advertises no limit.
pub const NO_WINDOW: u32 = u32::MAX;

/// The TCP timestamp clock at `ns` (may be negative: before the run): milliseconds,
/// offset as the kernel's per-connection random `ts_offset` is (only differences are
/// used), so that 0 never occurs as a TSval in a run.
pub fn ts_clock(ns: i64) -> u32 {
    (ns.div_euclid(1_000_000) + 1_000_000) as u32
}

impl PacketKind {
    /// A latency probe or its echo (probe.rs).
    pub fn is_probe(self) -> bool {
        matches!(self, PacketKind::Probe | PacketKind::ProbeEcho)
    }
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
            tsval: 0,
            tsecr: 0,
            ecn_bits: 0,
            wnd: NO_WINDOW,
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
            ecn_bits: 0,
            tsval: 0,
            tsecr: 0,
            wnd: NO_WINDOW,
        }
    }

    /// The IP ECN codepoint.
    pub fn ecn(&self) -> Ecn {
        match self.ecn_bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    pub fn set_ecn(&mut self, e: Ecn) {
        self.ecn_bits = (self.ecn_bits & !0b11) | e as u8;
    }
    /// TCP ECE.
    pub fn ece(&self) -> bool {
        self.ecn_bits & ECE_BIT != 0
    }
    pub fn set_ece(&mut self, on: bool) {
        self.ecn_bits = (self.ecn_bits & !ECE_BIT) | if on { ECE_BIT } else { 0 };
    }
    /// TCP CWR.
    pub fn cwr(&self) -> bool {
        self.ecn_bits & CWR_BIT != 0
    }
    pub fn set_cwr(&mut self, on: bool) {
        self.ecn_bits = (self.ecn_bits & !CWR_BIT) | if on { CWR_BIT } else { 0 };
    }

    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sacks[..self.n_sacks as usize]
    }
}

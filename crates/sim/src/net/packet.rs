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

/// A SACK block as a packet stores it: its start relative to the packet's cumulative
/// ACK (negative for a D-SACK below it) and its length, 8 bytes where the absolute
/// edges took 16. Why: every packet, data or ACK, carries room for three blocks, and
/// packets are copied through every queue and pipe; this makes a `Packet` 64 bytes, one
/// cache line, instead of 88 (benches/RESULTS.md, "eleventh step"). Blocks lie within a
/// window of the ACK, far inside 2^31 segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct PackedSack {
    from_ack: i32,
    len: u32,
}

impl PackedSack {
    fn pack(ack: u64, b: SackBlock) -> PackedSack {
        let from_ack = b.start.wrapping_sub(ack) as i64;
        PackedSack {
            from_ack: i32::try_from(from_ack)
                .expect("a SACK block within 2^31 segments of the ACK"),
            len: u32::try_from(b.end - b.start).expect("a SACK block under 2^32 segments"),
        }
    }
    fn unpack(self, ack: u64) -> SackBlock {
        let start = ack.wrapping_add(self.from_ack as i64 as u64);
        SackBlock {
            start,
            end: start + u64::from(self.len),
        }
    }
}

/// A packet's SACK blocks, most recent first: a slice through `Deref`.
#[derive(Clone, Copy, Debug)]
pub struct SackList {
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    n: u8,
}

impl<const N: usize> PartialEq<&[SackBlock; N]> for SackList {
    fn eq(&self, other: &&[SackBlock; N]) -> bool {
        **self == other[..]
    }
}

impl PartialEq<&[SackBlock]> for SackList {
    fn eq(&self, other: &&[SackBlock]) -> bool {
        **self == **other
    }
}

impl std::ops::Deref for SackList {
    type Target = [SackBlock];
    fn deref(&self) -> &[SackBlock] {
        &self.blocks[..self.n as usize]
    }
}

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
    /// ACK: SACK blocks, most recent first (RFC 2018), relative to `seq`; `n_sacks` are
    /// valid. Read through `sack_blocks()` or `sack(i)`.
    sacks: [PackedSack; MAX_SACK_BLOCKS],
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
            sacks: [PackedSack::default(); MAX_SACK_BLOCKS],
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
        let mut blocks = [PackedSack::default(); MAX_SACK_BLOCKS];
        let n = sacks.len().min(MAX_SACK_BLOCKS);
        for (to, &b) in blocks.iter_mut().zip(&sacks[..n]) {
            *to = PackedSack::pack(ack, b);
        }
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

    /// The SACK blocks, most recent first.
    pub fn sack_blocks(&self) -> SackList {
        SackList {
            blocks: std::array::from_fn(|i| self.sack(i)),
            n: self.n_sacks,
        }
    }

    /// SACK block `i`, or the empty block (0, 0) past the last one (what a capture
    /// writes in the unused columns).
    pub fn sack(&self, i: usize) -> SackBlock {
        if i < self.n_sacks as usize {
            self.sacks[i].unpack(self.seq)
        } else {
            SackBlock::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Packet>(), 64);
    }

    #[test]
    fn sack_blocks_come_back_as_given_below_at_and_far_above_the_ack() {
        let ack = 5_000_000_000u64; // past 2^32 segments: offsets, not truncated edges
        let given = [
            SackBlock {
                start: ack - 7,
                end: ack - 5,
            }, // a D-SACK below the ACK
            SackBlock {
                start: ack + 3,
                end: ack + 4,
            },
            SackBlock {
                start: ack + 2_000_000,
                end: ack + 2_000_100,
            },
        ];
        let a = Packet::ack(1, ack, &given, 52);
        assert_eq!(a.sack_blocks(), &given);
        assert_eq!(
            (a.sack(2), a.n_sacks, a.wire_bytes),
            (given[2], 3, 52 + 4 + 24)
        );
        let b = Packet::ack(1, ack, &given[..1], 52);
        assert_eq!(
            (b.sack(0), b.sack(1), b.sack(2)),
            (given[0], SackBlock::default(), SackBlock::default())
        );
        let d = Packet::data(1, 9, 1448, 52, false);
        assert_eq!(
            (d.sack_blocks().len(), d.sack(0)),
            (0, SackBlock::default())
        );
    }
}

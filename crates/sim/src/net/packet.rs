//! A packet on the wire. Packets are small `Copy` values: queues and links move them by
//! value, nothing is heap-allocated per packet. Sequence numbers count segments (see
//! `tcplab_cc::ops` module docs).
//!
//! Size: 64 bytes (72 with its arrival time in a link's pipe), down from 88 (96) when
//! the three SACK blocks were held as six `u64`s. At 1000 flows the largest single cost
//! of the event loop was the cold load of the packet popped from a pipe one link delay
//! after it was written (benches/RESULTS.md, "Engine speed, fourth step"); fewer bytes a
//! packet is fewer cache lines per packet there, in the queues and in the links' `in_tx`.
//! The SACK blocks are held as 32-bit offsets from the packet's cumulative ACK (`seq`),
//! the way the wire holds them as 32-bit sequence numbers next to the ACK number: every
//! block edge `e` with `e - seq` in the `i32` range is stored exactly, and a set of blocks
//! with an edge out of that range (2^31 segments from the ACK: ~3 TB of data at a
//! 1448-byte MSS; no run has that much in flight) is stored whole in a process-wide
//! table instead (`SPILLED`), so that every block set round-trips exactly. Reading the
//! blocks ([`Packet::sack_blocks`]) decodes them; no result depends on the encoding.

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

/// The SACK blocks of an ACK as its sender reads them: up to [`MAX_SACK_BLOCKS`], most
/// recent first; dereferences to the slice of the valid ones.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    n: u8,
}

impl std::ops::Deref for SackBlocks {
    type Target = [SackBlock];
    fn deref(&self) -> &[SackBlock] {
        &self.blocks[..self.n as usize]
    }
}

impl std::fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq<&[SackBlock]> for SackBlocks {
    fn eq(&self, other: &&[SackBlock]) -> bool {
        **self == **other
    }
}

impl<const N: usize> PartialEq<&[SackBlock; N]> for SackBlocks {
    fn eq(&self, other: &&[SackBlock; N]) -> bool {
        **self == other[..]
    }
}

/// Block sets with an edge too far from their ACK for [`PackedSacks`]' 32-bit offsets,
/// by index (held in the packet's first offset). Never used by any run measured (see the
/// module docs); it only grows, by 48 bytes per such ACK, so that a packet, being `Copy`,
/// never holds an index to a freed entry. Process-wide (not per world) because
/// `Packet::ack` has no world at hand; a mutex because worlds run on many threads.
static SPILLED: std::sync::Mutex<Vec<[SackBlock; MAX_SACK_BLOCKS]>> =
    std::sync::Mutex::new(Vec::new());

fn spilled() -> std::sync::MutexGuard<'static, Vec<[SackBlock; MAX_SACK_BLOCKS]>> {
    // A panic elsewhere while holding the lock leaves the table valid (push is the only
    // write): keep using it.
    SPILLED.lock().unwrap_or_else(|e| e.into_inner())
}

/// SACK block edges as offsets from the cumulative ACK: `[start, end]` per block, each
/// `edge - ack` (wrapping, as `i32`); or, when the packet's `sack_spill` is set, the
/// index of the whole set in [`SPILLED`] in `[0][0]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct PackedSacks([[i32; 2]; MAX_SACK_BLOCKS]);

/// `edge - ack` if it fits 32 bits (signed: a D-SACK block may lie below the ACK).
fn offset(ack: u64, edge: u64) -> Option<i32> {
    i32::try_from(edge.wrapping_sub(ack) as i64).ok()
}

impl PackedSacks {
    /// Pack `blocks` (at most [`MAX_SACK_BLOCKS`]) against `ack`; `true` if spilled.
    fn pack(ack: u64, blocks: &[SackBlock]) -> (PackedSacks, bool) {
        let mut p = PackedSacks::default();
        for (slot, b) in p.0.iter_mut().zip(blocks) {
            match (offset(ack, b.start), offset(ack, b.end)) {
                (Some(s), Some(e)) => *slot = [s, e],
                _ => {
                    let mut all = [SackBlock::default(); MAX_SACK_BLOCKS];
                    all[..blocks.len()].copy_from_slice(blocks);
                    let mut table = spilled();
                    let index = u32::try_from(table.len()).expect("SACK spill table index");
                    table.push(all);
                    let mut p = PackedSacks::default();
                    p.0[0][0] = index as i32;
                    return (p, true);
                }
            }
        }
        (p, false)
    }

    /// Block `i` as packed against `ack`.
    #[inline(always)]
    fn block(&self, ack: u64, i: usize) -> SackBlock {
        let [s, e] = self.0[i];
        SackBlock {
            start: ack.wrapping_add(s as i64 as u64),
            end: ack.wrapping_add(e as i64 as u64),
        }
    }
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
    /// Data: the segment number. ACK: the cumulative ACK (next segment expected); the
    /// SACK blocks are held relative to it, so an ACK's `seq` is never rewritten.
    pub seq: u64,
    /// Data: this transmission is a retransmission.
    pub is_retrans: bool,
    /// ACK: SACK blocks, most recent first (RFC 2018), packed against `seq` (module
    /// docs); `n_sacks` are valid. Read through [`Packet::sack_blocks`].
    sacks: PackedSacks,
    /// The number of SACK blocks (set by [`Packet::ack`] only).
    pub n_sacks: u8,
    /// The blocks are in [`SPILLED`] (see [`PackedSacks`]).
    sack_spill: bool,
    /// The IP ECN field (bits 0-1, see [`Ecn`]) and the TCP flags ECE (bit 6: an ACK's ECN
    /// echo) and CWR (bit 7: congestion window reduced), packed in one byte. Read and set
    /// through `ecn()`, `ece()`, `cwr()` and their setters.
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
            sacks: PackedSacks::default(),
            n_sacks: 0,
            sack_spill: false,
            tsval: 0,
            tsecr: 0,
            ecn_bits: 0,
            wnd: NO_WINDOW,
        }
    }

    /// A pure ACK; each SACK block adds 8 bytes plus 4 for the option header and padding
    /// (RFC 2018 Sec. 3: kind, length, then 8 bytes per block; two NOPs align it).
    pub fn ack(flow: u32, ack: u64, sacks: &[SackBlock], header: u32) -> Packet {
        let n = sacks.len().min(MAX_SACK_BLOCKS);
        let (blocks, spill) = PackedSacks::pack(ack, &sacks[..n]);
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
            sack_spill: spill,
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

    /// The SACK blocks (the valid `n_sacks`), decoded.
    #[inline]
    pub fn sack_blocks(&self) -> SackBlocks {
        let mut out = SackBlocks {
            blocks: [SackBlock::default(); MAX_SACK_BLOCKS],
            n: self.n_sacks,
        };
        if self.sack_spill {
            out.blocks = self.spilled_blocks();
            return out;
        }
        let n = self.n_sacks as usize;
        for (i, slot) in out.blocks.iter_mut().enumerate().take(n) {
            *slot = self.sacks.block(self.seq, i);
        }
        out
    }

    /// SACK block `i` (0..MAX_SACK_BLOCKS); zeros beyond `n_sacks`, as a capture lists it.
    pub fn sack_block(&self, i: usize) -> SackBlock {
        if i >= self.n_sacks as usize {
            return SackBlock::default();
        }
        self.sack_blocks().blocks[i]
    }

    #[cold]
    #[inline(never)]
    fn spilled_blocks(&self) -> [SackBlock; MAX_SACK_BLOCKS] {
        spilled()[self.sacks.0[0][0] as u32 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(start: u64, end: u64) -> SackBlock {
        SackBlock { start, end }
    }

    #[test]
    fn a_packet_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Packet>(), 64);
    }

    #[test]
    fn sack_blocks_round_trip_near_the_ack_below_it_and_far_from_it() {
        let ack = 5_000_000_000; // above 2^32: the offsets, not the values, are 32-bit
        let near = [
            b(ack + 3, ack + 9),
            b(ack - 7, ack - 6),
            b(ack + 20, ack + 21),
        ];
        let p = Packet::ack(1, ack, &near, 52);
        assert!(!p.sack_spill);
        assert_eq!(p.sack_blocks(), &near);
        // Wire bytes: 4 + 8 per block of option (RFC 2018).
        assert_eq!(p.wire_bytes, 52 + 4 + 24);
        // Edges exactly at the i32 limits are packed; one past them spills.
        let edge = [b(ack - (1 << 31), ack + (1 << 31) - 1)];
        let p = Packet::ack(1, ack, &edge, 52);
        assert!(!p.sack_spill);
        assert_eq!(p.sack_blocks(), &edge);
        let far = [b(1, 2), b(ack + (1 << 31), ack + (1 << 31) + 1)];
        let p = Packet::ack(1, ack, &far, 52);
        assert!(p.sack_spill);
        assert_eq!(p.sack_blocks(), &far);
        assert_eq!((p.sack_block(1), p.sack_block(2)), (far[1], b(0, 0)));
        // u64 wrap-around: an ACK near the top and a block near 0 are 2^64 - small apart.
        let top = [b(u64::MAX - 1, u64::MAX), b(0, 3)];
        let p = Packet::ack(1, u64::MAX - 2, &top, 52);
        assert!(!p.sack_spill);
        assert_eq!(p.sack_blocks(), &top);
    }

    #[test]
    fn no_blocks_and_unused_slots_read_as_zero() {
        let p = Packet::ack(0, 77, &[], 52);
        assert_eq!((p.n_sacks, p.wire_bytes), (0, 52));
        assert!(p.sack_blocks().is_empty());
        let p = Packet::ack(0, 77, &[b(80, 90)], 52);
        assert_eq!(p.sack_blocks(), &[b(80, 90)]);
        assert_eq!((p.sack_block(1), p.sack_block(2)), (b(0, 0), b(0, 0)));
        // More than three are cut to three.
        let four = [b(80, 81), b(82, 83), b(84, 85), b(86, 87)];
        assert_eq!(Packet::ack(0, 77, &four, 52).sack_blocks(), &four[..3]);
    }
}

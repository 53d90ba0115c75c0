//! The retransmission queue: one record per segment in [snd_una, snd_nxt), the
//! counterpart of the kernel's rtx queue of skbs and their `TCP_SKB_CB(skb)->sacked` bits.
//!
//! Two `VecDeque`s indexed by `seq - snd_una` (no per-packet allocation once warmed up):
//! the sacked bits in one, a byte a segment, and the rest of each record in the other.
//! The walks that read only the bits (the next segment to retransmit, RACK's and
//! RFC 6675's marking, D-SACK) then touch one cache line per 64 segments instead of one
//! per segment, which at 1000 flows decides whether they hit the cache
//! (benches/RESULTS.md, "Engine speed, fourteenth step"). A hand-made ring with one head
//! for both arrays was tried and executed more instructions, not fewer.

use std::collections::VecDeque;

use crate::tcp::rate::TxSnapshot;

/// `TCPCB_SACKED_ACKED`: the receiver holds it.
pub const SACKED: u8 = 1 << 0;
/// `TCPCB_LOST`: marked lost (counted in lost_out).
pub const LOST: u8 = 1 << 1;
/// `TCPCB_SACKED_RETRANS`: retransmitted and that copy is in flight (retrans_out).
pub const RETRANS: u8 = 1 << 2;
/// `TCPCB_EVER_RETRANS`: retransmitted at least once (Karn: no RTT sample).
pub const EVER_RETRANS: u8 = 1 << 3;

#[derive(Clone, Copy, Debug, Default)]
pub struct Seg {
    /// Time of the latest transmission (us, `tcp_skb_timestamp_us`).
    pub tx_us: u64,
    /// The TSval of the latest transmission (`tcp_skb_timestamp`, this host's TS clock),
    /// for `tcp_skb_spurious_retrans`.
    pub tsval: u32,
    pub snap: TxSnapshot,
}

#[derive(Default)]
pub struct Scoreboard {
    /// The sequence number of `segs[0]` (= snd_una).
    pub una: u64,
    segs: VecDeque<Seg>,
    /// `flags[i]` is the sacked bits of `segs[i]`.
    flags: VecDeque<u8>,
}

impl Scoreboard {
    pub fn len(&self) -> usize {
        self.segs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    /// Append a segment just sent (no bits set).
    pub fn push(&mut self, seg: Seg) {
        self.segs.push_back(seg);
        self.flags.push_back(0);
    }
    pub fn get(&self, seq: u64) -> &Seg {
        &self.segs[(seq - self.una) as usize]
    }
    pub fn get_mut(&mut self, seq: u64) -> &mut Seg {
        &mut self.segs[(seq - self.una) as usize]
    }
    /// The sacked bits of `seq`.
    pub fn flags(&self, seq: u64) -> u8 {
        self.flags[(seq - self.una) as usize]
    }
    pub fn flags_mut(&mut self, seq: u64) -> &mut u8 {
        &mut self.flags[(seq - self.una) as usize]
    }
    /// Whether `seq` has any of the bits `f`.
    pub fn has(&self, seq: u64, f: u8) -> bool {
        self.flags(seq) & f != 0
    }
    /// The head's sacked bits.
    pub fn front_flags(&self) -> Option<u8> {
        self.flags.front().copied()
    }
    /// Remove the head (cumulatively acked): its record and its bits.
    pub fn pop_front(&mut self) -> (Seg, u8) {
        self.una += 1;
        let seg = self.segs.pop_front().expect("pop from an empty scoreboard");
        (seg, self.flags.pop_front().expect("bits for every record"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent_at(tx_us: u64) -> Seg {
        Seg {
            tx_us,
            ..Seg::default()
        }
    }

    #[test]
    fn records_and_bits_stay_paired_across_wraps_and_growth() {
        let mut sb = Scoreboard {
            una: 100,
            ..Scoreboard::default()
        };
        // Fill 10, ack 6, then push 20 more: the deques wrap and grow with their heads
        // mid-buffer, and each record must keep its own bits.
        for s in 0..10 {
            sb.push(sent_at(s));
        }
        *sb.flags_mut(103) = SACKED;
        for _ in 0..6 {
            sb.pop_front();
        }
        for s in 10..30 {
            sb.push(sent_at(s));
        }
        *sb.flags_mut(125) = LOST | RETRANS;
        assert_eq!((sb.una, sb.len()), (106, 24));
        for seq in 106..130 {
            assert_eq!(sb.get(seq).tx_us, seq - 100);
        }
        assert_eq!(sb.flags(125), LOST | RETRANS);
        assert!(sb.has(125, RETRANS) && !sb.has(124, RETRANS));
        let (seg, f) = sb.pop_front();
        assert_eq!((seg.tx_us, f, sb.una), (6, 0, 107));
    }

    #[test]
    #[should_panic]
    fn a_segment_beyond_the_queue_is_refused() {
        let mut sb = Scoreboard::default();
        sb.push(sent_at(0));
        sb.flags(1);
    }
}

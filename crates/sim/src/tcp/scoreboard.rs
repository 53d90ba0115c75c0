//! The retransmission queue: one record per segment in [snd_una, snd_nxt), the
//! counterpart of the kernel's rtx queue of skbs and their `TCP_SKB_CB(skb)->sacked` bits.
//! A `VecDeque` indexed by `seq - snd_una`: no per-packet allocation once warmed up.

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

#[derive(Clone, Copy, Debug)]
pub struct Seg {
    /// Time of the latest transmission (us, `tcp_skb_timestamp_us`).
    pub tx_us: u64,
    /// The TSval of the latest transmission (`tcp_skb_timestamp`, this host's TS clock),
    /// for `tcp_skb_spurious_retrans`.
    pub tsval: u32,
    pub snap: TxSnapshot,
    pub flags: u8,
}

impl Seg {
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

#[derive(Default)]
pub struct Scoreboard {
    /// The sequence number of `segs[0]` (= snd_una).
    pub una: u64,
    segs: VecDeque<Seg>,
}

impl Scoreboard {
    pub fn len(&self) -> usize {
        self.segs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub fn push(&mut self, seg: Seg) {
        self.segs.push_back(seg);
    }
    pub fn get(&self, seq: u64) -> &Seg {
        &self.segs[(seq - self.una) as usize]
    }
    pub fn get_mut(&mut self, seq: u64) -> &mut Seg {
        &mut self.segs[(seq - self.una) as usize]
    }
    pub fn front(&self) -> Option<&Seg> {
        self.segs.front()
    }
    /// Remove the head (cumulatively acked).
    pub fn pop_front(&mut self) -> Seg {
        self.una += 1;
        self.segs.pop_front().expect("pop from an empty scoreboard")
    }
}

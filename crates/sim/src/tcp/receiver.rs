//! The receiving host: cumulative ACK, SACK blocks and delayed ACKs, after Linux
//! `tcp_data_queue` / `__tcp_ack_snd_check` / `tcp_sack_new_ofo_skb`.
//!
//! - In-order data advances `rcv_nxt` and pulls in any out-of-order range it joins.
//! - ACK policy (`__tcp_ack_snd_check`): immediately when more than one full segment
//!   is unacknowledged (i.e. every 2nd full segment), in quick-ACK mode, when
//!   out-of-order data is held or arrives, when a hole is filled, and for duplicates;
//!   otherwise the delayed-ACK timer (`TCP_DELACK_MIN` = 40 ms) sends it. With delayed
//!   ACKs off every segment is acknowledged at once.
//! - Quick-ACK mode: the first data segment arms `TCP_MAX_QUICKACKS` = 16 immediate
//!   ACKs (`tcp_event_data_recv` -> `tcp_incr_quickack`: min(rcv_wnd / (2 * mss), 16),
//!   16 for Linux's 64 KB initial window), and so does a duplicate segment
//!   (`tcp_enter_quickack_mode`); each ACK sent uses one (`tcp_dec_quickack_mode`).
//! - SACK blocks (RFC 2018 Sec. 4): the block holding the most recently received
//!   segment first, then the most recently reported other blocks; at most 3 (the room
//!   left beside the timestamp option).
//!
//! Deviations: no adaptive ATO (the delayed ACK timeout is fixed at 40 ms) and no
//! quick-ACK re-entry after an idle gap longer than the RTO; no D-SACK; the receive
//! window never limits.

use crate::net::packet::{Packet, SackBlock, MAX_SACK_BLOCKS};
use crate::sched::Timer;
use crate::time::{Dur, SimTime};

/// `TCP_DELACK_MIN` (include/net/tcp.h): HZ / 25 = 40 ms.
pub const TCP_DELACK_MIN: Dur = Dur::from_ms(40);
/// `TCP_MAX_QUICKACKS` (include/net/tcp.h): at most 16 ACKs in quick-ACK mode.
pub const TCP_MAX_QUICKACKS: u32 = 16;

/// Exact receiver counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Data segments that reached the receiver (duplicates included).
    pub received_packets: u64,
    /// Their payload bytes (the throughput numerator).
    pub received_bytes: u64,
    /// Segments already held (below rcv_nxt or in the out-of-order set).
    pub duplicate_packets: u64,
    pub duplicate_bytes: u64,
    /// Payload bytes delivered in order to the application, each once (goodput).
    pub delivered_bytes: u64,
    pub acks_sent: u64,
}

pub struct Receiver {
    flow: u32,
    mss: u32,
    header: u32,
    delayed_ack: bool,
    /// The application's total bytes if finite (for the size of the last segment).
    total_bytes: Option<u64>,
    /// Next segment expected.
    pub rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted and disjoint, all above rcv_nxt.
    ooo: Vec<(u64, u64)>,
    /// Segments whose blocks were reported most recently, newest first.
    recent: [u64; MAX_SACK_BLOCKS + 1],
    n_recent: usize,
    /// Full segments received in order since the last ACK.
    unacked: u32,
    /// `icsk_ack.quick`: immediate ACKs left in quick-ACK mode.
    quick: u32,
    /// Whether any data has arrived (`icsk_ack.ato` set).
    seen_data: bool,
    pub delack: Timer,
    pub stats: ReceiverStats,
}

impl Receiver {
    pub fn new(flow: u32, mss: u32, header: u32, delayed_ack: bool, total_bytes: Option<u64>) -> Receiver {
        Receiver {
            flow,
            mss,
            header,
            delayed_ack,
            total_bytes,
            rcv_nxt: 0,
            ooo: Vec::with_capacity(8),
            recent: [0; MAX_SACK_BLOCKS + 1],
            n_recent: 0,
            unacked: 0,
            quick: 0,
            seen_data: false,
            delack: Timer::default(),
            stats: ReceiverStats::default(),
        }
    }

    /// Payload bytes of segments [a, b).
    fn bytes_of(&self, a: u64, b: u64) -> u64 {
        let full = (b - a) * self.mss as u64;
        match self.total_bytes {
            Some(total) => full.min(total.saturating_sub(a * self.mss as u64)),
            None => full,
        }
    }

    /// Bytes held out of order (received, not yet deliverable).
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo.iter().map(|&(a, b)| self.bytes_of(a, b)).sum()
    }

    fn holds(&self, seq: u64) -> bool {
        seq < self.rcv_nxt || self.range_of(seq).is_some()
    }

    fn range_of(&self, seq: u64) -> Option<usize> {
        let i = self.ooo.partition_point(|&(_, e)| e <= seq);
        (i < self.ooo.len() && self.ooo[i].0 <= seq).then_some(i)
    }

    fn insert_ooo(&mut self, seq: u64) {
        let i = self.ooo.partition_point(|&(_, e)| e < seq);
        // Ranges before i end before seq (not adjacent); range i may touch seq.
        if i < self.ooo.len() && self.ooo[i].1 == seq {
            self.ooo[i].1 = seq + 1;
            if i + 1 < self.ooo.len() && self.ooo[i + 1].0 == seq + 1 {
                self.ooo[i].1 = self.ooo[i + 1].1;
                self.ooo.remove(i + 1);
            }
        } else if i < self.ooo.len() && self.ooo[i].0 == seq + 1 {
            self.ooo[i].0 = seq;
        } else {
            self.ooo.insert(i, (seq, seq + 1));
        }
    }

    fn note_recent(&mut self, seq: u64) {
        let mut v = [0u64; MAX_SACK_BLOCKS + 1];
        v[0] = seq;
        let mut n = 1;
        let block = self.range_of(seq);
        for k in 0..self.n_recent {
            let s = self.recent[k];
            if s < self.rcv_nxt || self.range_of(s) == block || n == v.len() {
                continue;
            }
            v[n] = s;
            n += 1;
        }
        self.recent = v;
        self.n_recent = n;
    }

    /// The SACK blocks to send now.
    pub fn sack_blocks(&self) -> ([SackBlock; MAX_SACK_BLOCKS], usize) {
        let mut out = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut n = 0;
        let mut used = [usize::MAX; MAX_SACK_BLOCKS];
        for k in 0..self.n_recent {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if let Some(i) = self.range_of(self.recent[k]) {
                if used[..n].contains(&i) {
                    continue;
                }
                used[n] = i;
                out[n] = SackBlock { start: self.ooo[i].0, end: self.ooo[i].1 };
                n += 1;
            }
        }
        (out, n)
    }

    fn make_ack(&mut self) -> Packet {
        self.unacked = 0;
        self.quick = self.quick.saturating_sub(1);
        self.delack.cancel();
        self.stats.acks_sent += 1;
        let (blocks, n) = self.sack_blocks();
        Packet::ack(self.flow, self.rcv_nxt, &blocks[..n], self.header)
    }

    /// A data segment arrived. Returns an ACK to send now, and maybe a delayed-ACK timer
    /// entry (time, generation) to schedule.
    pub fn on_data(&mut self, now: SimTime, pkt: &Packet) -> (Option<Packet>, Option<(SimTime, u32)>) {
        self.stats.received_packets += 1;
        self.stats.received_bytes += pkt.payload as u64;
        let seq = pkt.seq;
        if !self.seen_data {
            // The first data segment initializes the delayed-ACK engine in quick mode.
            self.seen_data = true;
            self.quick = TCP_MAX_QUICKACKS;
        }
        if self.holds(seq) {
            self.quick = TCP_MAX_QUICKACKS;
            self.stats.duplicate_packets += 1;
            self.stats.duplicate_bytes += pkt.payload as u64;
            return (Some(self.make_ack()), None);
        }
        if seq == self.rcv_nxt {
            let had_ooo = !self.ooo.is_empty();
            self.rcv_nxt += 1;
            self.stats.delivered_bytes += pkt.payload as u64;
            if had_ooo && self.ooo[0].0 == self.rcv_nxt {
                let (a, b) = self.ooo.remove(0);
                self.stats.delivered_bytes += self.bytes_of(a, b);
                self.rcv_nxt = b;
            }
            if had_ooo {
                // Hole filled or out-of-order data still held: ACK now (RFC 5681 4.2).
                return (Some(self.make_ack()), None);
            }
            if pkt.payload >= self.mss {
                self.unacked += 1;
            }
            if !self.delayed_ack || self.unacked >= 2 || self.quick > 0 {
                return (Some(self.make_ack()), None);
            }
            let timer = self.delack.arm(now + TCP_DELACK_MIN);
            return (None, timer);
        }
        // Out of order: hold it, ACK at once with SACK.
        self.insert_ooo(seq);
        self.note_recent(seq);
        (Some(self.make_ack()), None)
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack_timer(&mut self) -> Option<Packet> {
        (self.unacked > 0).then(|| self.make_ack())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(delayed: bool) -> Receiver {
        Receiver::new(0, 1448, 52, delayed, None)
    }
    /// A receiver past its 16 quick ACKs (segments 0..16 received and acked).
    fn rx_warm() -> Receiver {
        let mut r = rx(true);
        for s in 0..16 {
            assert!(r.on_data(SimTime(0), &seg(s)).0.is_some(), "quick ACK {s}");
        }
        r
    }
    fn seg(seq: u64) -> Packet {
        Packet::data(0, seq, 1448, 52, false)
    }

    #[test]
    fn delayed_ack_every_second_full_segment_after_the_quick_acks() {
        let mut r = rx_warm();
        let (a, t) = r.on_data(SimTime(0), &seg(16));
        assert!(a.is_none());
        assert_eq!(t.map(|x| x.0), Some(SimTime(40_000_000))); // 40 ms timer
        let (a, _) = r.on_data(SimTime(1), &seg(17));
        assert_eq!(a.unwrap().seq, 18);
        assert!(!r.delack.is_armed());
    }

    #[test]
    fn delayed_ack_timer_acks_a_lone_segment() {
        let mut r = rx_warm();
        r.on_data(SimTime(0), &seg(16));
        assert_eq!(r.on_delack_timer().unwrap().seq, 17);
        assert!(r.on_delack_timer().is_none());
    }

    #[test]
    fn a_duplicate_re_enters_quick_ack_mode() {
        let mut r = rx_warm();
        r.on_data(SimTime(0), &seg(3)); // duplicate: ACKed at once, 16 quick ACKs armed
        // ... of which that ACK used one: 15 more in-order segments are ACKed at once.
        for s in 16..31 {
            assert!(r.on_data(SimTime(0), &seg(s)).0.is_some(), "quick ACK for {s}");
        }
        assert!(r.on_data(SimTime(0), &seg(31)).0.is_none());
    }

    #[test]
    fn without_delayed_ack_every_segment_is_acked() {
        let mut r = rx(false);
        assert_eq!(r.on_data(SimTime(0), &seg(0)).0.unwrap().seq, 1);
    }

    #[test]
    fn out_of_order_is_acked_at_once_with_most_recent_block_first() {
        let mut r = rx(true);
        r.on_data(SimTime(0), &seg(0));
        r.on_data(SimTime(0), &seg(1)); // rcv_nxt 2
        let a = r.on_data(SimTime(0), &seg(3)).0.unwrap(); // hole at 2
        assert_eq!(a.seq, 2);
        assert_eq!(a.sack_blocks(), &[SackBlock { start: 3, end: 4 }]);
        r.on_data(SimTime(0), &seg(6));
        let a = r.on_data(SimTime(0), &seg(4)).0.unwrap();
        // Most recent (4, joined with 3) first, then 6.
        assert_eq!(a.sack_blocks(), &[SackBlock { start: 3, end: 5 }, SackBlock { start: 6, end: 7 }]);
        r.on_data(SimTime(0), &seg(9));
        r.on_data(SimTime(0), &seg(11));
        let a = r.on_data(SimTime(0), &seg(13)).0.unwrap();
        // Four blocks exist; the three most recently touched are reported.
        assert_eq!(
            a.sack_blocks(),
            &[SackBlock { start: 13, end: 14 }, SackBlock { start: 11, end: 12 }, SackBlock { start: 9, end: 10 }]
        );
    }

    #[test]
    fn filling_the_hole_delivers_the_held_range_and_acks_at_once() {
        let mut r = rx(true);
        r.on_data(SimTime(0), &seg(1));
        r.on_data(SimTime(0), &seg(2));
        let a = r.on_data(SimTime(0), &seg(0)).0.unwrap();
        assert_eq!(a.seq, 3);
        assert_eq!(a.n_sacks, 0);
        assert_eq!(r.stats.delivered_bytes, 3 * 1448);
    }

    #[test]
    fn duplicate_is_counted_and_acked() {
        let mut r = rx(true);
        r.on_data(SimTime(0), &seg(0));
        let (a, _) = r.on_data(SimTime(0), &seg(0));
        assert_eq!(a.unwrap().seq, 1);
        assert_eq!((r.stats.duplicate_packets, r.stats.received_bytes, r.stats.delivered_bytes), (1, 2896, 1448));
    }

    #[test]
    fn finite_flow_counts_a_short_last_segment() {
        // 3000 bytes = 1448 + 1448 + 104.
        let mut r = Receiver::new(0, 1448, 52, false, Some(3000));
        r.on_data(SimTime(0), &Packet::data(0, 2, 104, 52, false));
        r.on_data(SimTime(0), &seg(1));
        r.on_data(SimTime(0), &seg(0));
        assert_eq!(r.stats.delivered_bytes, 3000);
    }
}

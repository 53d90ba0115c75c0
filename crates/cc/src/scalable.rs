//! `scalable`: Scalable TCP as Linux runs it (net/ipv4/tcp_scalable.c).
//!
//! Model (Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area Networks",
//! ACM SIGCOMM CCR 33(2), 2003, Sec. 2). Multiplicative increase, multiplicative
//! decrease: in congestion avoidance cwnd grows by a = 0.01 segment per acknowledged
//! segment (1 % per RTT) and a loss cuts it by b = 1/8, so the time to recover from a
//! loss is a constant number of RTTs (about log(1/(1-b)) / log(1+a) ~= 13) whatever the
//! window. The kernel writes a = 0.01 as one segment per 100 acked
//! (`tcp_cong_avoid_ai(tp, min(cwnd, 100), acked)`), which is Reno below 100 segments,
//! and the decrease as cwnd - cwnd / 8.
//!
//! Kernel functions followed: `tcp_scalable_cong_avoid`, `tcp_scalable_ssthresh`;
//! `undo_cwnd` is `tcp_reno_undo_cwnd`.
//!
//! Deviations: none (no state, no clock, no module parameters).

use crate::helpers::{tcp_cong_avoid_ai, tcp_in_slow_start, tcp_is_cwnd_limited, tcp_slow_start};
use crate::ops::{CcView, CongestionOps};
use crate::registry::{AlgorithmSpec, Params};

/// `TCP_SCALABLE_AI_CNT`: acked segments per one-segment increase, a = 1/100 (the
/// paper's 0.01; the kernel used 50 to make up for delayed ACKs until `acked` was
/// passed to `tcp_cong_avoid_ai`).
pub const TCP_SCALABLE_AI_CNT: u32 = 100;
/// `TCP_SCALABLE_MD_SCALE`: the decrease is cwnd >> 3, b = 1/8 (the paper's 0.125).
pub const TCP_SCALABLE_MD_SCALE: u32 = 3;

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "scalable",
    family: crate::registry::Family::Loss,
    summary: "Scalable TCP: MIMD, +1 % per RTT, -1/8 on loss",
    source: "Linux net/ipv4/tcp_scalable.c; Kelly, SIGCOMM CCR 2003, Sec. 2",
    params: &[],
    build: |_: &Params| Box::new(Scalable),
};

/// Scalable TCP keeps no state of its own.
#[derive(Debug, Default)]
pub struct Scalable;

impl CongestionOps for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    /// `tcp_scalable_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        if !tcp_is_cwnd_limited(tp) {
            return;
        }
        let mut acked = acked;
        if tcp_in_slow_start(tp) {
            acked = tcp_slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        let w = tp.snd_cwnd.min(TCP_SCALABLE_AI_CNT);
        tcp_cong_avoid_ai(tp, w, acked);
    }

    /// `tcp_scalable_ssthresh`: cwnd - cwnd / 8, at least 2.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        (tp.snd_cwnd - (tp.snd_cwnd >> TCP_SCALABLE_MD_SCALE)).max(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(cwnd: u32, ssthresh: u32) -> CcView {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = cwnd;
        tp.snd_ssthresh = ssthresh;
        tp.is_cwnd_limited = true;
        tp
    }

    #[test]
    fn scalable_adds_one_segment_per_100_acked_above_100() {
        // cwnd 1000: w = min(1000, 100) = 100; 99 ACKs count, the 100th adds one
        // (1000 ACKs per RTT give +10 = 1 %).
        let mut tp = flow(1000, 10);
        let mut c = Scalable;
        for i in 0..99 {
            c.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1000, 99));
        c.cong_avoid(&mut tp, 99, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1001, 0));
        // A stretch ACK of 250 segments: 250 / 100 = +2, 50 left.
        c.cong_avoid(&mut tp, 349, 250);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1003, 50));
    }

    #[test]
    fn scalable_is_reno_below_100_segments() {
        // cwnd 40: w = 40, one segment per 40 acked.
        let mut tp = flow(40, 10);
        Scalable.cong_avoid(&mut tp, 40, 40);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (41, 0));
    }

    #[test]
    fn scalable_carries_what_slow_start_leaves_into_the_increase() {
        // cwnd 98, ssthresh 100, 5 acked: slow start to 100 uses 2, 3 are left for
        // ai(w = 100): snd_cwnd_cnt 3.
        let mut tp = flow(98, 100);
        Scalable.cong_avoid(&mut tp, 5, 5);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (100, 3));
    }

    #[test]
    fn scalable_ssthresh_cuts_an_eighth() {
        // 1000 - (1000 >> 3 = 125) = 875; 20 - 2 = 18; 2 - 0 = 2; 1 - 0 = 1 -> 2.
        let mut c = Scalable;
        assert_eq!(c.ssthresh(&flow(1000, 10)), 875);
        assert_eq!(c.ssthresh(&flow(20, 10)), 18);
        assert_eq!(c.ssthresh(&flow(2, 10)), 2);
        assert_eq!(c.ssthresh(&flow(1, 10)), 2);
    }

    #[test]
    fn scalable_does_not_grow_when_not_cwnd_limited() {
        let mut tp = flow(1000, 10);
        tp.is_cwnd_limited = false;
        Scalable.cong_avoid(&mut tp, 100, 100);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1000, 0));
    }
}

//! `reno`: NewReno as Linux runs it (net/ipv4/tcp_cong.c, `tcp_reno_congestion_ops`).
//!
//! Model: slow start doubles cwnd each round until ssthresh; congestion avoidance then
//! adds one segment per cwnd of acknowledged segments (`tcp_cong_avoid_ai`). On loss,
//! ssthresh becomes half of cwnd (at least 2); the sender's recovery (PRR) brings cwnd
//! down to it. Undo restores max(cwnd, prior_cwnd).
//!
//! Follows: `tcp_reno_cong_avoid`, `tcp_reno_ssthresh`, `tcp_reno_undo_cwnd`.
//!
//! Deviations: none in the algorithm. (The loss response itself lives in the sender.)

use crate::helpers::{tcp_reno_cong_avoid, tcp_reno_ssthresh};
use crate::ops::{CcView, CongestionOps};
use crate::registry::{AlgorithmSpec, Params};

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "reno",
    family: crate::registry::Family::Loss,
    summary: "NewReno: AIMD with slow start",
    source: "Linux net/ipv4/tcp_cong.c (tcp_reno_*)",
    params: &[],
    build: |_: &Params| Box::new(Reno),
};

/// Reno keeps no state of its own: everything lives in the socket.
#[derive(Debug, Default)]
pub struct Reno;

impl CongestionOps for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        tcp_reno_ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        tcp_reno_cong_avoid(tp, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reno_grows_one_segment_per_round_in_congestion_avoidance() {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 30;
        tp.snd_ssthresh = 20;
        tp.is_cwnd_limited = true;
        let mut reno = Reno;
        // 30 ACKs of one segment each = one window: exactly +1.
        for i in 0..30 {
            reno.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 31);
        assert_eq!(reno.ssthresh(&tp), 15);
    }

    #[test]
    fn reno_doubles_per_round_in_slow_start() {
        let mut tp = CcView::new(1448, 0);
        tp.is_cwnd_limited = true;
        let mut reno = Reno;
        for i in 0..10 {
            reno.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 20);
    }
}

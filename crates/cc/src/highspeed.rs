//! `highspeed`: HighSpeed TCP as Linux runs it (net/ipv4/tcp_highspeed.c).
//!
//! Model (Floyd, "HighSpeed TCP for Large Congestion Windows", RFC 3649, Sec. 5 and
//! Appendix B). Above Low_Window = 38 segments the AIMD parameters depend on the window:
//! cwnd grows by a(w) segments per RTT and a loss cuts it by b(w) * cwnd, with a(w)
//! rising from 1 and b(w) falling from 0.5 (to 0.1 at High_Window = 83000) so that the
//! response function reaches 83000 segments at a loss rate of 10^-7 (Eq. 4 of Sec. 5:
//! w = 0.12 / p^0.835). The kernel takes the table of Appendix B: row i holds the
//! largest window it applies to and b(w) in 1/256; a(w) is the row number + 1. Below 38
//! segments (row 0) it is Reno.
//!
//! Kernel functions followed: `hstcp_init`, `hstcp_cong_avoid`, `hstcp_ssthresh`;
//! `undo_cwnd` is `tcp_reno_undo_cwnd`. The kernel's own choices are kept: a(w) is
//! counted per ACK, not per acked segment (an ACK of several segments adds a(w) / cwnd
//! once, as in `hstcp_cong_avoid`), and `ai` is updated only in congestion avoidance,
//! so `ssthresh` uses the row of the last congestion-avoidance ACK.
//!
//! Deviations: none in the algorithm (no module parameters, no clock).

use crate::helpers::{tcp_in_slow_start, tcp_is_cwnd_limited, tcp_slow_start};
use crate::ops::{CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, Params};

/// `hstcp_aimd_vals` (tcp_highspeed.c, from RFC 3649 Appendix B): (the largest cwnd of
/// the row, b(w) << 8). a(w) of row i is i + 1.
pub const HSTCP_AIMD_VALS: [(u32, u32); 72] = [
    (38, 128),   // 0.50
    (118, 112),  // 0.44
    (221, 104),  // 0.41
    (347, 98),   // 0.38
    (495, 93),   // 0.37
    (663, 89),   // 0.35
    (851, 86),   // 0.34
    (1058, 83),  // 0.33
    (1284, 81),  // 0.32
    (1529, 78),  // 0.31
    (1793, 76),  // 0.30
    (2076, 74),  // 0.29
    (2378, 72),  // 0.28
    (2699, 71),  // 0.28
    (3039, 69),  // 0.27
    (3399, 68),  // 0.27
    (3778, 66),  // 0.26
    (4177, 65),  // 0.26
    (4596, 64),  // 0.25
    (5036, 62),  // 0.25
    (5497, 61),  // 0.24
    (5979, 60),  // 0.24
    (6483, 59),  // 0.23
    (7009, 58),  // 0.23
    (7558, 57),  // 0.22
    (8130, 56),  // 0.22
    (8726, 55),  // 0.22
    (9346, 54),  // 0.21
    (9991, 53),  // 0.21
    (10661, 52), // 0.21
    (11358, 52), // 0.20
    (12082, 51), // 0.20
    (12834, 50), // 0.20
    (13614, 49), // 0.19
    (14424, 48), // 0.19
    (15265, 48), // 0.19
    (16137, 47), // 0.19
    (17042, 46), // 0.18
    (17981, 45), // 0.18
    (18955, 45), // 0.18
    (19965, 44), // 0.17
    (21013, 43), // 0.17
    (22101, 43), // 0.17
    (23230, 42), // 0.17
    (24402, 41), // 0.16
    (25618, 41), // 0.16
    (26881, 40), // 0.16
    (28193, 39), // 0.16
    (29557, 39), // 0.15
    (30975, 38), // 0.15
    (32450, 38), // 0.15
    (33986, 37), // 0.15
    (35586, 36), // 0.14
    (37253, 36), // 0.14
    (38992, 35), // 0.14
    (40808, 35), // 0.14
    (42707, 34), // 0.13
    (44694, 33), // 0.13
    (46776, 33), // 0.13
    (48961, 32), // 0.13
    (51258, 32), // 0.13
    (53677, 31), // 0.12
    (56230, 30), // 0.12
    (58932, 30), // 0.12
    (61799, 29), // 0.12
    (64851, 28), // 0.11
    (68113, 28), // 0.11
    (71617, 27), // 0.11
    (75401, 26), // 0.10
    (79517, 26), // 0.10
    (84035, 25), // 0.10
    (89053, 24), // 0.10
];

/// `HSTCP_AIMD_MAX`: rows in the table.
pub const HSTCP_AIMD_MAX: usize = HSTCP_AIMD_VALS.len();

/// The cwnd clamp `hstcp_init` sets so that cwnd * b(w) (b <= 128) fits 32 bits.
pub const HSTCP_CWND_CLAMP: u32 = 0xffff_ffff / 128;

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "highspeed",
    family: crate::registry::Family::Loss,
    summary: "HighSpeed TCP: AIMD with a(w) and b(w) from RFC 3649's table above 38 segments",
    source: "Linux net/ipv4/tcp_highspeed.c; RFC 3649, Sec. 5 and Appendix B",
    params: &[],
    build: |_: &Params| Box::new(HighSpeed::default()),
};

/// `struct hstcp`.
#[derive(Clone, Debug, Default)]
pub struct HighSpeed {
    /// `ai`: the table row for the current window; a(w) = ai + 1.
    ai: usize,
}

impl HighSpeed {
    /// The row update of `hstcp_cong_avoid`: keep
    /// `HSTCP_AIMD_VALS[ai - 1].0 < cwnd <= HSTCP_AIMD_VALS[ai].0`.
    fn update_ai(&mut self, cwnd: u32) {
        if cwnd > HSTCP_AIMD_VALS[self.ai].0 {
            while cwnd > HSTCP_AIMD_VALS[self.ai].0 && self.ai < HSTCP_AIMD_MAX - 1 {
                self.ai += 1;
            }
        } else {
            while self.ai > 0 && cwnd <= HSTCP_AIMD_VALS[self.ai - 1].0 {
                self.ai -= 1;
            }
        }
    }
}

impl CongestionOps for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    /// `hstcp_init`.
    fn init(&mut self, tp: &mut CcView) {
        self.ai = 0;
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(HSTCP_CWND_CLAMP);
    }

    /// `hstcp_cong_avoid`: cwnd += a(w) / cwnd per ACK.
    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        if !tcp_is_cwnd_limited(tp) {
            return;
        }
        if tcp_in_slow_start(tp) {
            tcp_slow_start(tp, acked);
            return;
        }
        self.update_ai(tp.snd_cwnd);
        if tp.snd_cwnd < tp.snd_cwnd_clamp {
            tp.snd_cwnd_cnt += self.ai as u32 + 1;
            if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                tp.snd_cwnd_cnt -= tp.snd_cwnd;
                tp.snd_cwnd += 1;
            }
        }
    }

    /// `hstcp_ssthresh`: cwnd - b(w) * cwnd, at least 2.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        let md = HSTCP_AIMD_VALS[self.ai].1;
        (tp.snd_cwnd - ((tp.snd_cwnd * md) >> 8)).max(2)
    }

    fn info(&self) -> Vec<InfoField> {
        vec![
            ("a_w", InfoValue::Num(self.ai as f64 + 1.0)),
            (
                "b_w",
                InfoValue::Num(HSTCP_AIMD_VALS[self.ai].1 as f64 / 256.0),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(cwnd: u32) -> (HighSpeed, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = cwnd;
        tp.snd_ssthresh = 2;
        tp.is_cwnd_limited = true;
        let mut c = HighSpeed::default();
        c.init(&mut tp);
        (c, tp)
    }

    /// The row after one congestion-avoidance ACK at `cwnd`.
    fn row_at(cwnd: u32) -> usize {
        let (mut c, mut tp) = flow(cwnd);
        c.cong_avoid(&mut tp, 1, 1);
        c.ai
    }

    #[test]
    fn highspeed_table_rows_bound_the_window_from_above() {
        // Row 0 covers cwnd <= 38 (Reno); 39 is in row 1 (39 <= 118); 1000 in row 7
        // (851 < 1000 <= 1058); 89053 is the last row's bound (row 71) and larger
        // windows stay there.
        assert_eq!(row_at(38), 0);
        assert_eq!(row_at(39), 1);
        assert_eq!(row_at(1000), 7);
        assert_eq!(row_at(89_053), 71);
        assert_eq!(row_at(100_000), 71);
        assert_eq!(HSTCP_AIMD_MAX, 72);
    }

    #[test]
    fn highspeed_row_follows_the_window_down() {
        // From row 7 (cwnd 1000) to cwnd 200: 200 <= 851, 663, 495, 347, 221 steps down
        // to row 2; 200 > 118 stops there (118 < 200 <= 221).
        let (mut c, mut tp) = flow(1000);
        c.cong_avoid(&mut tp, 1, 1);
        tp.snd_cwnd = 200;
        c.cong_avoid(&mut tp, 2, 1);
        assert_eq!(c.ai, 2);
    }

    #[test]
    fn highspeed_adds_a_w_segments_per_window_of_acks() {
        // cwnd 1000, row 7: a(w) = 8, so snd_cwnd_cnt += 8 per ACK; 124 ACKs make 992
        // < 1000, the 125th 1000 >= 1000: cwnd 1001, cnt 0 (8 segments per 1000 ACKs).
        let (mut c, mut tp) = flow(1000);
        for i in 0..124 {
            c.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1000, 992));
        c.cong_avoid(&mut tp, 124, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1001, 0));
    }

    #[test]
    fn highspeed_counts_acks_not_acked_segments() {
        // cwnd 20 (row 0, a = 1): an ACK of 5 segments adds 1 to snd_cwnd_cnt, not 5.
        let (mut c, mut tp) = flow(20);
        c.cong_avoid(&mut tp, 5, 5);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (20, 1));
    }

    #[test]
    fn highspeed_ssthresh_cuts_b_w_of_the_window() {
        // Row 0 at cwnd 20: 20 - (20 * 128 >> 8 = 10) = 10 (Reno's half).
        let (mut c, mut tp) = flow(20);
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!(c.ssthresh(&tp), 10);
        // Row 7 at cwnd 1000: b = 83/256 (0.33): 1000 - (83000 >> 8 = 324) = 676.
        let (mut c, mut tp) = flow(1000);
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!(c.ssthresh(&tp), 676);
        // Last row (71) at cwnd 100000: b = 24/256 (0.10): 100000 - (2400000 >> 8 = 9375) = 90625.
        let (mut c, mut tp) = flow(100_000);
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!(c.ssthresh(&tp), 90_625);
        // Floor 2: cwnd 2, row 0: 2 - (256 >> 8 = 1) = 1 -> 2.
        tp.snd_cwnd = 2;
        c.ai = 0;
        assert_eq!(c.ssthresh(&tp), 2);
    }

    #[test]
    fn highspeed_init_clamps_cwnd_so_the_decrease_cannot_overflow() {
        // 0xffffffff / 128 = 33554431.
        let (_, tp) = flow(10);
        assert_eq!(tp.snd_cwnd_clamp, 33_554_431);
    }

    #[test]
    fn highspeed_slow_start_is_reno() {
        let (mut c, mut tp) = flow(10);
        tp.snd_ssthresh = 100;
        c.cong_avoid(&mut tp, 3, 3);
        assert_eq!((tp.snd_cwnd, c.ai), (13, 0));
    }
}

//! `bic`: BIC-TCP as Linux runs it (net/ipv4/tcp_bic.c).
//!
//! Model (Xu, Harfoush and Rhee, "Binary Increase Congestion Control (BIC) for Fast
//! Long-Distance Networks", IEEE INFOCOM 2004, Sec. 3). After a loss the window that
//! failed, Wmax (`last_max_cwnd`), and the reduced one bound a binary search: each RTT
//! cwnd moves toward the midpoint, here a quarter of the distance (`BICTCP_B` = 4), so
//! growth is fast far below Wmax and slow close to it. A jump of more than
//! `max_increment` segments per RTT is clipped to that ("additive increase"), and within
//! one segment of Wmax the step becomes 4 / `smooth_part` segments per RTT. Above Wmax the
//! search turns to "max probing": slow near Wmax, then `(cwnd - Wmax) / 3` segments per
//! RTT, then `max_increment`. The kernel expresses every step as `cnt`, the ACKs per
//! one-segment increase (`tcp_cong_avoid_ai(tp, cnt, acked)`), scaled by the measured
//! packets-per-ACK ratio so delayed ACKs do not halve the speed. On loss, ssthresh =
//! cwnd * beta (819/1024 ~= 0.8) above `low_window` (Reno's half below it), and with fast
//! convergence a window that failed below the previous Wmax lowers Wmax further, to
//! cwnd * (1 + beta) / 2, to leave room to a newcomer.
//!
//! Kernel functions followed: `bictcp_reset`, `bictcp_init`, `bictcp_update`,
//! `bictcp_cong_avoid`, `bictcp_recalc_ssthresh`, `bictcp_state`, `bictcp_acked`;
//! `undo_cwnd` is `tcp_reno_undo_cwnd`.
//!
//! Deviations:
//! - `epoch_start` is not kept: the kernel writes it (in `bictcp_update` and
//!   `bictcp_recalc_ssthresh`) but never reads it.
//! - The jiffies clock of the `HZ / 32` recompute throttle runs at `CcView::hz` and
//!   starts at 0 (ops.rs); the kernel's `(s32)(now - last_time)` wrap cannot occur
//!   within a run, so a plain u32 difference is used.
//! - `delayed_ack` keeps the kernel's u32 wrapping arithmetic (`+= pkts_acked -
//!   (delayed_ack >> 4)`), whose result is never negative.

use crate::helpers::{tcp_cong_avoid_ai, tcp_in_slow_start, tcp_is_cwnd_limited, tcp_slow_start};
use crate::ops::{AckSample, CaState, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

/// `BICTCP_BETA_SCALE`: beta is in 1/1024.
pub const BICTCP_BETA_SCALE: u32 = 1024;
/// `BICTCP_B`: the binary search moves to (max + min) / B, a quarter of the distance.
pub const BICTCP_B: u32 = 4;
/// `ACK_RATIO_SHIFT`: `delayed_ack` is packets per ACK << 4.
pub const ACK_RATIO_SHIFT: u32 = 4;

const I32_MAX: f64 = i32::MAX as f64;

static PARAMS: [ParamSpec; 6] = [
    ParamSpec {
        name: "fast_convergence",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "lower Wmax to cwnd * (1 + beta) / 2 when a loss comes below the previous Wmax (tcp_bic.c default 1)",
    },
    ParamSpec {
        name: "max_increment",
        kind: ParamKind::Int,
        default: 16.0,
        min: 1.0,
        max: I32_MAX,
        doc: "largest increase in segments per RTT during the binary search (tcp_bic.c default 16)",
    },
    ParamSpec {
        name: "low_window",
        kind: ParamKind::Int,
        default: 14.0,
        min: 0.0,
        max: I32_MAX,
        doc: "window (segments) up to which BIC behaves as Reno, for TCP friendliness (tcp_bic.c default 14)",
    },
    ParamSpec {
        name: "beta",
        kind: ParamKind::Int,
        default: 819.0,
        min: 0.0,
        max: 1024.0,
        doc: "multiplicative decrease, in 1/1024: ssthresh = cwnd * beta / 1024 (tcp_bic.c default 819, ~0.8)",
    },
    ParamSpec {
        name: "initial_ssthresh",
        kind: ParamKind::Int,
        default: 0.0,
        min: 0.0,
        max: I32_MAX,
        doc: "initial slow-start threshold in segments, 0 for none (tcp_bic.c default 0)",
    },
    ParamSpec {
        name: "smooth_part",
        kind: ParamKind::Int,
        default: 20.0,
        min: 0.0,
        max: I32_MAX,
        doc: "RTTs to go from Wmax - B to Wmax: the step within one segment of Wmax is B / smooth_part (tcp_bic.c default 20)",
    },
];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "bic",
    family: crate::registry::Family::Loss,
    summary: "BIC: binary search for the window between the last loss and the reduced window",
    source: "Linux net/ipv4/tcp_bic.c; Xu, Harfoush, Rhee, INFOCOM 2004, Sec. 3",
    params: &PARAMS,
    build: |p: &Params| Box::new(BicConfig::from_params(p).build()),
};

/// BIC's tunables (the module parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BicConfig {
    pub fast_convergence: bool,
    pub max_increment: u32,
    pub low_window: u32,
    pub beta: u32,
    pub initial_ssthresh: u32,
    pub smooth_part: u32,
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig {
            fast_convergence: true,
            max_increment: 16,
            low_window: 14,
            beta: 819,
            initial_ssthresh: 0,
            smooth_part: 20,
        }
    }
}

impl BicConfig {
    pub fn from_params(p: &Params) -> Self {
        BicConfig {
            fast_convergence: p.get_bool("fast_convergence"),
            max_increment: p.get_u32("max_increment"),
            low_window: p.get_u32("low_window"),
            beta: p.get_u32("beta"),
            initial_ssthresh: p.get_u32("initial_ssthresh"),
            smooth_part: p.get_u32("smooth_part"),
        }
    }
    pub fn build(&self) -> Bic {
        let mut b = Bic {
            cfg: *self,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            delayed_ack: 0,
        };
        b.bictcp_reset();
        b
    }
}

/// `struct bictcp`.
#[derive(Clone, Debug)]
pub struct Bic {
    cfg: BicConfig,
    /// `cnt`: ACKed segments per one-segment increase.
    cnt: u32,
    /// `last_max_cwnd`: Wmax, the window of the last loss (after fast convergence).
    last_max_cwnd: u32,
    /// `last_cwnd`, `last_time` (jiffies): cwnd and time of the last `cnt` update.
    last_cwnd: u32,
    last_time: u32,
    /// `delayed_ack`: packets per ACK << ACK_RATIO_SHIFT, a 1/16 EWMA.
    delayed_ack: u32,
}

impl Bic {
    /// `bictcp_reset`.
    fn bictcp_reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        // Start by assuming a delayed ACK every second segment.
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    /// `bictcp_update`: the ACKs per increment for the window `cwnd`.
    fn bictcp_update(&mut self, cwnd: u32, now: u32, hz: u32) {
        // Recompute at most every HZ / 32 jiffies while cwnd is unchanged.
        if self.last_cwnd == cwnd && now.wrapping_sub(self.last_time) <= hz / 32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;

        // Reno's speed at small windows.
        if cwnd <= self.cfg.low_window {
            self.cnt = cwnd;
            return;
        }
        let b = BICTCP_B;
        let max_inc = self.cfg.max_increment;
        if cwnd < self.last_max_cwnd {
            // Binary search: a quarter of the distance to Wmax per RTT.
            let dist = (self.last_max_cwnd - cwnd) / b;
            if dist > max_inc {
                self.cnt = cwnd / max_inc; // additive increase: max_increment per RTT
            } else if dist <= 1 {
                self.cnt = (cwnd * self.cfg.smooth_part) / b; // B / smooth_part per RTT
            } else {
                self.cnt = cwnd / dist;
            }
        } else if cwnd < self.last_max_cwnd + b {
            // Max probing, just above Wmax: as slowly as near it.
            self.cnt = (cwnd * self.cfg.smooth_part) / b;
        } else if cwnd < self.last_max_cwnd + max_inc * (b - 1) {
            // (cwnd - Wmax) / (B - 1) segments per RTT.
            self.cnt = (cwnd * (b - 1)) / (cwnd - self.last_max_cwnd);
        } else {
            self.cnt = cwnd / max_inc;
        }

        // No loss yet (slow start or a link barely used): at least 5 % per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }

        // Per segment acked rather than per ACK.
        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack;
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }
}

impl CongestionOps for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    /// `bictcp_init`.
    fn init(&mut self, tp: &mut CcView) {
        self.bictcp_reset();
        if self.cfg.initial_ssthresh != 0 {
            tp.snd_ssthresh = self.cfg.initial_ssthresh;
        }
    }

    /// `bictcp_cong_avoid`.
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
        self.bictcp_update(tp.snd_cwnd, tp.jiffies32(), tp.hz);
        tcp_cong_avoid_ai(tp, self.cnt, acked);
    }

    /// `bictcp_recalc_ssthresh`: remember Wmax (lowered by fast convergence) and cut
    /// to beta * cwnd, or to half below low_window.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        let cwnd = tp.snd_cwnd;
        if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            self.last_max_cwnd =
                (cwnd * (BICTCP_BETA_SCALE + self.cfg.beta)) / (2 * BICTCP_BETA_SCALE);
        } else {
            self.last_max_cwnd = cwnd;
        }
        if cwnd <= self.cfg.low_window {
            (cwnd >> 1).max(2)
        } else {
            ((cwnd * self.cfg.beta) / BICTCP_BETA_SCALE).max(2)
        }
    }

    /// `bictcp_state`: an RTO forgets Wmax.
    fn set_state(&mut self, _tp: &mut CcView, new_state: CaState) {
        if new_state == CaState::Loss {
            self.bictcp_reset();
        }
    }

    /// `bictcp_acked`: packets per ACK, ratio = (15 ratio + sample) / 16, in Open only.
    fn pkts_acked(&mut self, tp: &mut CcView, sample: &AckSample) {
        if tp.ca_state == CaState::Open {
            self.delayed_ack = self
                .delayed_ack
                .wrapping_add(sample.pkts_acked)
                .wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
        }
    }

    fn info(&self) -> Vec<InfoField> {
        vec![
            ("cnt", InfoValue::Num(self.cnt as f64)),
            ("last_max_cwnd", InfoValue::Num(self.last_max_cwnd as f64)),
            (
                "acks_ratio",
                InfoValue::Num(self.delayed_ack as f64 / (1 << ACK_RATIO_SHIFT) as f64),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cwnd `cwnd` in congestion avoidance (ssthresh below it), cwnd-limited, Wmax
    /// `last_max`, at t = 1 s.
    fn flow(cwnd: u32, last_max: u32) -> (Bic, CcView) {
        let mut tp = CcView::new(1448, 1_000_000);
        tp.snd_cwnd = cwnd;
        tp.snd_ssthresh = 2;
        tp.is_cwnd_limited = true;
        let mut c = BicConfig::default().build();
        c.init(&mut tp);
        c.last_max_cwnd = last_max;
        (c, tp)
    }

    /// `cnt` after one ACK of one segment at `cwnd` with Wmax `last_max`.
    fn cnt_at(cwnd: u32, last_max: u32) -> u32 {
        let (mut c, mut tp) = flow(cwnd, last_max);
        c.cong_avoid(&mut tp, 1, 1);
        c.cnt
    }

    #[test]
    fn bic_binary_search_moves_a_quarter_of_the_distance_per_rtt() {
        // cwnd 100, Wmax 140: dist = 40 / 4 = 10 (<= max_increment 16, > 1):
        // cnt = 100 / 10 = 10 ACKs per segment, i.e. +10 segments per RTT; then per
        // segment with the initial 2 packets per ACK: (10 << 4) / 32 = 5.
        assert_eq!(cnt_at(100, 140), 5);
    }

    #[test]
    fn bic_far_below_wmax_adds_max_increment_per_rtt() {
        // cwnd 100, Wmax 300: dist = 200 / 4 = 50 > 16: cnt = 100 / 16 = 6 (~16 per
        // RTT); (6 << 4) / 32 = 3.
        assert_eq!(cnt_at(100, 300), 3);
    }

    #[test]
    fn bic_within_one_segment_of_wmax_is_smooth() {
        // cwnd 100, Wmax 104: dist = 4 / 4 = 1 <= 1: cnt = 100 * 20 / 4 = 500
        // (B / smooth_part = 0.2 segments per RTT); (500 << 4) / 32 = 250.
        assert_eq!(cnt_at(100, 104), 250);
    }

    #[test]
    fn bic_max_probing_above_wmax_speeds_up_with_the_distance() {
        // Just above: cwnd 100 < Wmax 98 + B = 102: cnt = 100 * 20 / 4 = 500 -> 250.
        assert_eq!(cnt_at(100, 98), 250);
        // cwnd 110, Wmax 100: 110 < 100 + 16 * 3 = 148: cnt = 110 * 3 / (110 - 100) = 33;
        // (33 << 4) / 32 = 528 / 32 = 16.
        assert_eq!(cnt_at(110, 100), 16);
        // cwnd 200, Wmax 100: 200 >= 148: cnt = 200 / 16 = 12 -> (12 << 4) / 32 = 6.
        assert_eq!(cnt_at(200, 100), 6);
    }

    #[test]
    fn bic_without_a_loss_grows_at_least_five_percent_per_rtt() {
        // Wmax 0 (no loss yet), cwnd 1000: 1000 >= 0 + 48: cnt = 1000 / 16 = 62, capped
        // at 20; (20 << 4) / 32 = 10.
        assert_eq!(cnt_at(1000, 0), 10);
    }

    #[test]
    fn bic_is_reno_up_to_low_window() {
        // cwnd 14 <= low_window 14: cnt = cwnd = 14, not scaled by the ACK ratio.
        assert_eq!(cnt_at(14, 100), 14);
    }

    #[test]
    fn bic_applies_cnt_through_additive_increase() {
        // cnt 5 at cwnd 100, Wmax 140: five one-segment ACKs add one segment.
        let (mut c, mut tp) = flow(100, 140);
        for i in 0..4 {
            c.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (100, 4));
        c.cong_avoid(&mut tp, 4, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (101, 0));
    }

    #[test]
    fn bic_recomputes_cnt_at_most_every_hz_over_32_while_cwnd_holds() {
        // HZ 1000: HZ / 32 = 31 jiffies. cnt is 5 at t = 1 s (Wmax 140). Wmax moved to
        // 300 (where cnt would be 3): 31 ms later, same cwnd, cnt is kept; 32 ms later it
        // is recomputed.
        let (mut c, mut tp) = flow(100, 140);
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!(c.cnt, 5);
        tp.snd_cwnd_cnt = 0;
        c.last_max_cwnd = 300;
        tp.now_us += 31_000;
        c.cong_avoid(&mut tp, 2, 1);
        assert_eq!(c.cnt, 5);
        tp.now_us += 1_000;
        c.cong_avoid(&mut tp, 3, 1);
        assert_eq!(c.cnt, 3);
    }

    #[test]
    fn bic_ssthresh_is_beta_of_cwnd_with_fast_convergence() {
        // cwnd 100 below Wmax 200: Wmax = 100 * (1024 + 819) / 2048 = 184300 / 2048 = 89;
        // ssthresh = 100 * 819 / 1024 = 81900 / 1024 = 79.
        let (mut c, tp) = flow(100, 200);
        assert_eq!(c.ssthresh(&tp), 79);
        assert_eq!(c.last_max_cwnd, 89);
        // Again at cwnd 100, now above Wmax 89: Wmax = 100.
        assert_eq!(c.ssthresh(&tp), 79);
        assert_eq!(c.last_max_cwnd, 100);
    }

    #[test]
    fn bic_ssthresh_halves_up_to_low_window() {
        // cwnd 14 <= 14: 14 >> 1 = 7; cwnd 3: 1 -> floor 2.
        let (mut c, mut tp) = flow(14, 0);
        assert_eq!(c.ssthresh(&tp), 7);
        tp.snd_cwnd = 3;
        assert_eq!(c.ssthresh(&tp), 2);
    }

    #[test]
    fn bic_without_fast_convergence_keeps_the_failed_window_as_wmax() {
        let mut c = BicConfig {
            fast_convergence: false,
            ..BicConfig::default()
        }
        .build();
        c.last_max_cwnd = 200;
        let tp = CcView {
            snd_cwnd: 100,
            ..CcView::new(1448, 0)
        };
        c.ssthresh(&tp);
        assert_eq!(c.last_max_cwnd, 100);
    }

    #[test]
    fn bic_tracks_packets_per_ack_in_open_only() {
        // delayed_ack starts at 2 << 4 = 32. One-segment ACKs: 32 + 1 - (32 >> 4 = 2) =
        // 31; then 31 + 1 - (31 >> 4 = 1) = 31 (a fixed point: the ratio reads 31/16).
        let (mut c, mut tp) = flow(100, 0);
        let one = AckSample {
            pkts_acked: 1,
            rtt_us: 10_000,
            in_flight: 100,
            prior_in_flight: 100,
        };
        c.pkts_acked(&mut tp, &one);
        assert_eq!(c.delayed_ack, 31);
        c.pkts_acked(&mut tp, &one);
        assert_eq!(c.delayed_ack, 31);
        // Four-segment ACKs: 31 + 4 - 1 = 34. In Recovery nothing changes.
        c.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 4,
                ..one
            },
        );
        assert_eq!(c.delayed_ack, 34);
        tp.ca_state = CaState::Recovery;
        c.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 4,
                ..one
            },
        );
        assert_eq!(c.delayed_ack, 34);
    }

    #[test]
    fn bic_rto_forgets_wmax() {
        let (mut c, mut tp) = flow(100, 140);
        c.delayed_ack = 40;
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!((c.last_max_cwnd, c.cnt, c.delayed_ack), (0, 0, 32));
    }

    #[test]
    fn bic_initial_ssthresh_is_set_only_when_nonzero() {
        let mut tp = CcView::new(1448, 0);
        BicConfig::default().build().init(&mut tp);
        assert_eq!(tp.snd_ssthresh, crate::ops::TCP_INFINITE_SSTHRESH);
        let cfg = BicConfig {
            initial_ssthresh: 100,
            ..BicConfig::default()
        };
        cfg.build().init(&mut tp);
        assert_eq!(tp.snd_ssthresh, 100);
    }
}

//! `lp`: TCP-LP (Low Priority) as Linux runs it (net/ipv4/tcp_lp.c), with the one-way
//! delay taken from the RTT (see Deviations).
//!
//! Model (Kuzmanovic and Knightly, "TCP-LP: A Distributed Algorithm for Low Priority
//! Data Transfer", IEEE INFOCOM 2003, Sec. III). A background flow that yields to
//! best-effort traffic by reacting to congestion before loss does: it infers "early
//! congestion" when the smoothed one-way delay exceeds its minimum by more than
//! gamma = 15 % of the observed range (d_min + 0.15 (d_max - d_min)). On the first such
//! indication it halves cwnd and starts an inference timer of three RTTs; a second
//! indication inside that time means the congestion persists, and cwnd drops to 1.
//! While the timer runs cwnd does not grow; otherwise growth and loss handling are
//! Reno's. The kernel smooths the delay by 7/8 (`sowd`, << 3), remembers the largest
//! delay with one step of forgetting (`owd_max_rsv`), and after each reaction restarts
//! the range from the smoothed delay (min = sowd, max = 2 sowd).
//!
//! Kernel functions followed: `tcp_lp_init`, `tcp_lp_cong_avoid`,
//! `tcp_lp_owd_calculator`, `tcp_lp_rtt_sample`, `tcp_lp_pkts_acked`; `ssthresh` is
//! `tcp_reno_ssthresh`, `undo_cwnd` `tcp_reno_undo_cwnd`.
//!
//! Deviations:
//! - No TCP timestamps. The kernel measures the one-way delay from the TSval the
//!   receiver stamped and the TSecr it echoed (`rx_opt.rcv_tsval`, `rcv_tsecr`), and
//!   estimates the receiver's timestamp clock rate for it (`tcp_lp_remote_hz_estimator`).
//!   `CcView`/`AckSample` carry no timestamps (the simulator does not model the option),
//!   so here the delay sample is the ACK's RTT in the kernel's TS unit (ms, `TCP_TS_HZ`
//!   1000, truncated as TS values are) and the remote-clock estimator is not ported (the
//!   simulated hosts share one clock: it would settle at 1000). The RTT is the one-way
//!   delay plus the reverse path's; with a constant reverse delay (uncongested ACK path)
//!   the min/threshold test is unchanged (it is shift-invariant), but the range restart
//!   after a reaction (max = 2 sowd) doubles that constant too, so the threshold after a
//!   reaction is higher than the kernel's by 15 % of the reverse delay.
//! - The inference time is 3 * (now - TSecr), TSecr being the echoed send time of the
//!   segment acked: with no timestamps, 3 * the ACK's RTT (ms), updated on ACKs that carry
//!   an RTT sample (the kernel updates it on every ACK with a newer TSecr).
//! - Without timestamps the kernel's module never gets a valid delay and acts as Reno;
//!   this port therefore differs from what Linux does on a path without the option.
//! - `last_drop` "never" is an `Option` (the kernel's 0; our clock starts at 0).

use crate::helpers::{tcp_reno_cong_avoid, tcp_reno_ssthresh};
use crate::ops::{AckSample, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, Params};

/// `TCP_TS_HZ` (include/net/tcp.h): the timestamp clock, 1000 Hz (ms). `LP_RESOL`.
pub const TCP_TS_HZ: u64 = 1000;
/// The early-congestion threshold: d_min + 15 % of (d_max - d_min) (`tcp_lp_pkts_acked`,
/// the paper's gamma = 0.15).
pub const LP_THRESHOLD_PERCENT: u32 = 15;
/// The inference time is this many RTTs (`lp->inference = 3 * delta`).
pub const LP_INFERENCE_RTTS: u32 = 3;

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "lp",
    family: crate::registry::Family::LossDelay,
    summary: "TCP-LP: low-priority Reno that backs off on early (delay) congestion",
    source: "Linux net/ipv4/tcp_lp.c (delay from the RTT, no timestamps); Kuzmanovic and Knightly, INFOCOM 2003, Sec. III",
    params: &[],
    build: |_: &Params| Box::new(Lp::default()),
};

/// `struct lp`. Delays in ms (the TS unit).
#[derive(Clone, Debug)]
pub struct Lp {
    /// `LP_VALID_OWD`: the last delay sample was valid (> 0).
    valid_owd: bool,
    /// `LP_WITHIN_THR`: the smoothed delay is below the threshold.
    within_thr: bool,
    /// `LP_WITHIN_INF`: inside the inference time of the last reaction.
    within_inf: bool,
    /// `sowd`: smoothed delay << 3.
    sowd: u32,
    /// `owd_min`, `owd_max`, `owd_max_rsv`: the observed range.
    owd_min: u32,
    owd_max: u32,
    owd_max_rsv: u32,
    /// `last_drop` (ms): the last reaction; `None` before the first.
    last_drop: Option<u32>,
    /// `inference` (ms): 3 RTTs.
    inference: u32,
}

impl Default for Lp {
    fn default() -> Self {
        Lp {
            valid_owd: false,
            within_thr: false,
            within_inf: false,
            sowd: 0,
            owd_min: 0xffff_ffff,
            owd_max: 0,
            owd_max_rsv: 0,
            last_drop: None,
            inference: 0,
        }
    }
}

impl Lp {
    /// `tcp_lp_rtt_sample`: range and smoothed delay, from one delay sample (ms).
    fn tcp_lp_rtt_sample(&mut self, mowd: u32) {
        // tcp_lp_owd_calculator: a delay of 0 is no valid sample.
        self.valid_owd = mowd > 0;
        if !self.valid_owd {
            return;
        }
        self.owd_min = self.owd_min.min(mowd);
        // Forget the largest maximum: keep the one below it.
        if mowd > self.owd_max {
            if mowd > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == 0 {
                    mowd
                } else {
                    self.owd_max_rsv
                };
                self.owd_max_rsv = mowd;
            } else {
                self.owd_max = mowd;
            }
        }
        // sowd = 7/8 sowd + 1/8 sample, the first sample taken as is.
        if self.sowd != 0 {
            self.sowd = self.sowd.wrapping_add(mowd.wrapping_sub(self.sowd >> 3));
        } else {
            self.sowd = mowd << 3;
        }
    }
}

impl CongestionOps for Lp {
    fn name(&self) -> &'static str {
        "lp"
    }

    /// `tcp_lp_init`.
    fn init(&mut self, _tp: &mut CcView) {
        *self = Lp::default();
    }

    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        tcp_reno_ssthresh(tp)
    }

    /// `tcp_lp_cong_avoid`: Reno, except within the inference time.
    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        if !self.within_inf {
            tcp_reno_cong_avoid(tp, acked);
        }
    }

    /// `tcp_lp_pkts_acked`: early-congestion inference and reaction.
    fn pkts_acked(&mut self, tp: &mut CcView, sample: &AckSample) {
        let now = (tp.now_us / (1_000_000 / TCP_TS_HZ)) as u32;
        if sample.rtt_us > 0 {
            let rtt_ts = (sample.rtt_us as u64 / (1_000_000 / TCP_TS_HZ)) as u32;
            self.tcp_lp_rtt_sample(rtt_ts);
            // now - TSecr: the RTT.
            if rtt_ts as i32 > 0 {
                self.inference = LP_INFERENCE_RTTS * rtt_ts;
            }
        }
        self.within_inf = match self.last_drop {
            Some(t) => now.wrapping_sub(t) < self.inference,
            None => false,
        };
        let range = self.owd_max.wrapping_sub(self.owd_min);
        let threshold = self
            .owd_min
            .wrapping_add(LP_THRESHOLD_PERCENT.wrapping_mul(range) / 100);
        self.within_thr = (self.sowd >> 3) < threshold;
        if self.within_thr {
            return;
        }
        // Early congestion: restart the range from the smoothed delay.
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        if self.within_inf {
            // Again within the inference time: the congestion persists.
            tp.snd_cwnd = 1;
        } else {
            tp.snd_cwnd = (tp.snd_cwnd >> 1).max(1);
        }
        self.last_drop = Some(now);
    }

    fn info(&self) -> Vec<InfoField> {
        vec![
            ("sowd_ms", InfoValue::Num(self.sowd as f64 / 8.0)),
            ("owd_min_ms", InfoValue::Num(self.owd_min as f64)),
            ("owd_max_ms", InfoValue::Num(self.owd_max as f64)),
            (
                "within_inference",
                InfoValue::Num(if self.within_inf { 1.0 } else { 0.0 }),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(c: &mut Lp, tp: &mut CcView, t_ms: u64, rtt_ms: i64) {
        tp.now_us = t_ms * 1000;
        c.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: rtt_ms * 1000,
                in_flight: 100,
                prior_in_flight: 100,
            },
        );
    }

    /// cwnd 100 in congestion avoidance; the first sample (100 ms at t = 1 s) reacts, as
    /// in the kernel: min = max = 100 ms, sowd = 800, and the threshold 100 + 15 * 0 / 100
    /// = 100 is not above sowd >> 3 = 100. The range restarts at min 100, max = rsv =
    /// 800 >> 2 = 200; no drop before: cwnd halves to 50; last_drop 1000.
    fn after_first_sample() -> (Lp, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 100;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = Lp::default();
        c.init(&mut tp);
        ack(&mut c, &mut tp, 1000, 100);
        (c, tp)
    }

    #[test]
    fn lp_first_delay_sample_sets_the_range_and_reacts() {
        let (c, tp) = after_first_sample();
        assert_eq!(
            (c.owd_min, c.owd_max, c.owd_max_rsv, c.sowd),
            (100, 200, 200, 800)
        );
        assert_eq!(
            (tp.snd_cwnd, c.last_drop, c.inference),
            (50, Some(1000), 300)
        );
    }

    #[test]
    fn lp_delay_below_fifteen_percent_of_the_range_is_no_congestion() {
        // 110 ms: sowd = 800 + (110 - 100) = 810, >> 3 = 101 < 100 + 15 * 100 / 100 = 115.
        let (mut c, mut tp) = after_first_sample();
        ack(&mut c, &mut tp, 1100, 110);
        assert_eq!((c.sowd, c.within_thr, tp.snd_cwnd), (810, true, 50));
    }

    /// Samples of 130 ms: sowd 800 -> 830 (>> 3 = 103) -> 857 (107) -> 880 (110) -> 900
    /// (112) -> 918 (114) -> 934 (116): the sixth crosses the threshold 115.
    fn rising_delay(c: &mut Lp, tp: &mut CcView, first_ms: u64, step_ms: u64) {
        for i in 0..5 {
            ack(c, tp, first_ms + i * step_ms, 130);
            assert!(c.within_thr, "sample {i}");
        }
        assert_eq!(c.sowd, 918);
        ack(c, tp, first_ms + 5 * step_ms, 130);
        assert_eq!(c.sowd, 934);
        assert!(!c.within_thr);
    }

    #[test]
    fn lp_early_congestion_after_the_inference_time_halves_cwnd() {
        // Samples every 100 ms from t = 1100: the sixth at 1600; 1600 - 1000 = 600 >= 3 *
        // 130 = 390: not within inference: cwnd 50 -> 25. The range restarts at
        // min 934 >> 3 = 116, max 934 >> 2 = 233.
        let (mut c, mut tp) = after_first_sample();
        rising_delay(&mut c, &mut tp, 1100, 100);
        assert_eq!((tp.snd_cwnd, c.last_drop), (25, Some(1600)));
        assert_eq!((c.owd_min, c.owd_max, c.owd_max_rsv), (116, 233, 233));
    }

    #[test]
    fn lp_early_congestion_within_the_inference_time_drops_cwnd_to_one() {
        // Samples every 10 ms from t = 1010: the sixth at 1060; 60 < 390: cwnd 1.
        let (mut c, mut tp) = after_first_sample();
        rising_delay(&mut c, &mut tp, 1010, 10);
        assert!(c.within_inf);
        assert_eq!(tp.snd_cwnd, 1);
    }

    #[test]
    fn lp_does_not_grow_within_the_inference_time() {
        let (mut c, mut tp) = after_first_sample();
        ack(&mut c, &mut tp, 1100, 100); // 100 < 300: within inference
        assert!(c.within_inf);
        c.cong_avoid(&mut tp, 1, 50);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (50, 0));
        ack(&mut c, &mut tp, 1300, 100); // 300 is not < 300: Reno again, +1 for 50 acked
        c.cong_avoid(&mut tp, 2, 50);
        assert_eq!(tp.snd_cwnd, 51);
    }

    #[test]
    fn lp_forgets_the_largest_maximum_by_one_step() {
        // min 100, max 200, rsv 200. 300 > rsv: max = old rsv 200, rsv = 300. Then 250 >
        // max but not > rsv: max = 250.
        let (mut c, _) = after_first_sample();
        c.tcp_lp_rtt_sample(300);
        assert_eq!((c.owd_max, c.owd_max_rsv), (200, 300));
        c.tcp_lp_rtt_sample(250);
        assert_eq!((c.owd_max, c.owd_max_rsv), (250, 300));
    }

    #[test]
    fn lp_sub_millisecond_rtt_is_no_valid_delay_sample() {
        // 0.9 ms truncates to 0 ms (the TS unit): no sample, and the empty range keeps
        // the flow "within threshold" (0 < 0xffffffff + 15 * 1 / 100).
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 100;
        let mut c = Lp::default();
        c.init(&mut tp);
        tp.now_us = 1_000_000;
        c.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 900,
                in_flight: 10,
                prior_in_flight: 10,
            },
        );
        assert_eq!(
            (c.valid_owd, c.sowd, c.within_thr, tp.snd_cwnd),
            (false, 0, true, 100)
        );
    }
}

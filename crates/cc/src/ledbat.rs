//! `ledbat`: LEDBAT, Low Extra Delay Background Transport (RFC 6817), with ns-3's
//! `TcpLedbat` (src/internet/model/tcp-ledbat.cc) as the second reference, and the
//! one-way delay taken from the RTT (see Deviations).
//!
//! Model (RFC 6817 Sec. 2.4, the sender's pseudo-code of Sec. 2.4.2). A less-than-best-
//! effort sender that keeps the queueing delay it adds near TARGET = 100 ms and yields
//! to standard TCP. Every ACK brings a delay sample; the smallest sample of each minute
//! is kept for the last BASE_HISTORY = 10 minutes (the base delay, the path without a
//! queue), the last CURRENT_FILTER samples are kept and filtered (their minimum, as
//! ns-3 does) to the current delay. queuing_delay = current - base;
//! off_target = (TARGET - queuing_delay) / TARGET, and per ACK
//! cwnd += GAIN * off_target * bytes_newly_acked * MSS / cwnd (in segments: GAIN *
//! off_target * acked / cwnd), so cwnd grows by at most one segment per RTT below the
//! target and shrinks in proportion above it. cwnd is capped at flightsize +
//! ALLOWED_INCREASE segments and never below MIN_CWND = 2. On loss (at most once per
//! RTT) cwnd = min(cwnd, max(cwnd / 2, MIN_CWND)). Slow start is ns-3's (`SSParam`
//! default "yes"): Reno's slow start until the first congestion-avoidance step, not again
//! until cwnd falls to one segment (after an RTO).
//!
//! Followed: RFC 6817 Sec. 2.4.2 (`update_base_delay`, `update_current_delay`, the
//! on-acknowledgement and on-data-loss rules), Sec. 2.5 (parameter values); ns-3
//! `TcpLedbat::IncreaseWindow`, `CongestionAvoidance`, `UpdateBaseDelay`, `PktsAcked`
//! for slow start, the MIN filter and the fall-back to Reno before any delay sample.
//!
//! Deviations:
//! - No TCP timestamps (as `lp`): RFC 6817 and ns-3 take the one-way delay from the
//!   receiver's timestamps (ns-3: `TSval - TSecr`, ms). `CcView`/`AckSample` carry none,
//!   so the delay sample is the ACK's RTT in ms (truncated, ns-3's timestamp unit). The
//!   RTT is the forward one-way delay plus the reverse path's; with an uncongested ACK
//!   path the constant reverse delay cancels in current - base, so queuing_delay is the
//!   forward queueing delay plus any reverse queueing.
//! - The loss response is the sender's: `ssthresh` returns max(cwnd / 2, MIN_CWND) and
//!   PRR (RFC 6937) brings cwnd there over the recovery, once per recovery episode, not
//!   in one step as the RFC's pseudo-code (ns-3 also inherits NewReno's recovery).
//! - ns-3 keeps only CURRENT_FILTER - 1 = 3 samples in its noise filter (its `AddDelay`
//!   drops the oldest once the buffer reaches the length); here the last 4 are kept.
//! - Slow start is the kernel's (`tcp_in_slow_start`: cwnd < ssthresh; `tcp_slow_start`
//!   adds the acked segments up to ssthresh, the rest of the ACK goes to the LEDBAT
//!   rule), where ns-3
//!   tests cwnd <= ssthresh and adds one segment per ACK uncapped. ns-3 lowers ssthresh
//!   below cwnd after each congestion-avoidance step to stay out of slow start; here a
//!   flag does that and ssthresh is left alone (it only shows in the recorded
//!   `ssthresh`).
//! - cwnd is whole segments in the socket; the fraction of a segment the rule adds or
//!   takes is carried to the next ACK (ns-3 truncates to whole bytes each ACK).
//! - The base-delay minute is the simulated clock's (`now / 60 s`), starting at 0.

use std::collections::VecDeque;

use crate::helpers::{tcp_cong_avoid_ai, tcp_in_slow_start, tcp_reno_ssthresh, tcp_slow_start};
use crate::ops::{AckSample, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

/// TARGET (ms): RFC 6817 Sec. 2.5.1, "TARGET MUST be 100 milliseconds or less"; ns-3's
/// `TargetDelay` default 100 ms.
pub const TARGET_MS: f64 = 100.0;
/// GAIN: RFC 6817 Sec. 2.5.1, "GAIN MUST be set to 1 or less"; ns-3's `Gain` 1.
pub const GAIN: f64 = 1.0;
/// BASE_HISTORY: minutes of base-delay minima kept (RFC 6817 Sec. 2.5.1, "SHOULD be
/// 10"; ns-3's `BaseHistoryLen` 10).
pub const BASE_HISTORY: usize = 10;
/// CURRENT_FILTER: delay samples the current-delay filter keeps (ns-3's
/// `NoiseFilterLen` 4; the RFC leaves it to the implementation, at least 1).
pub const CURRENT_FILTER: usize = 4;
/// ALLOWED_INCREASE (segments): RFC 6817 Sec. 2.5.1, "SHOULD be 1".
pub const ALLOWED_INCREASE: u32 = 1;
/// MIN_CWND (segments): RFC 6817 Sec. 2.4.2 / 2.5.1, 2; ns-3's `MinCwnd` 2.
pub const MIN_CWND: u32 = 2;
/// One base-delay bucket: a minute (RFC 6817 Sec. 2.4.2, `round_to_minute`).
const MINUTE_US: u64 = 60_000_000;

static PARAMS: [ParamSpec; 3] = [
    ParamSpec {
        name: "target_ms",
        kind: ParamKind::Float,
        default: TARGET_MS,
        min: 1.0,
        max: 100.0,
        doc: "TARGET, the queueing delay aimed at (ms); RFC 6817 Sec. 2.5.1: 100 ms or less (ns-3 default 100)",
    },
    ParamSpec {
        name: "gain",
        kind: ParamKind::Float,
        default: GAIN,
        min: 0.01,
        max: 1.0,
        doc: "GAIN of the off-target step; RFC 6817 Sec. 2.5.1: 1 or less (ns-3 default 1)",
    },
    ParamSpec {
        name: "slow_start",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "Reno slow start until the first congestion-avoidance step (ns-3 SSParam, default yes)",
    },
];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "ledbat",
    family: crate::registry::Family::Delay,
    summary: "LEDBAT: background transport holding queueing delay near 100 ms",
    source: "RFC 6817 Sec. 2.4-2.5; ns-3 tcp-ledbat.cc (delay from the RTT, no timestamps)",
    params: &PARAMS,
    build: |p: &Params| {
        Box::new(Ledbat::new(
            p.get("target_ms"),
            p.get("gain"),
            p.get_bool("slow_start"),
        ))
    },
};

#[derive(Clone, Debug)]
pub struct Ledbat {
    target_ms: f64,
    gain: f64,
    do_ss: bool,
    /// `base_delays`: the minimum delay (ms) of each of the last BASE_HISTORY minutes.
    base_delays: VecDeque<u32>,
    /// `last_rollover` as a minute index; `None` is the RFC's -INFINITY.
    last_rollover_min: Option<u64>,
    /// `current_delays`: the last CURRENT_FILTER delay samples (ms).
    current_delays: VecDeque<u32>,
    /// ns-3's `LEDBAT_CAN_SS`: slow start is still allowed.
    can_ss: bool,
    /// `flightsize` before this ACK (segments): the sample's `prior_in_flight` (ns-3's
    /// bytes in flight; not the kernel's `ack_sample.in_flight`, which is data delivered).
    flightsize: u32,
    /// The fraction of a segment cwnd holds beyond `snd_cwnd`, in [0, 1).
    cwnd_frac: f64,
}

impl Ledbat {
    pub fn new(target_ms: f64, gain: f64, do_ss: bool) -> Self {
        Ledbat {
            target_ms,
            gain,
            do_ss,
            base_delays: VecDeque::with_capacity(BASE_HISTORY),
            last_rollover_min: None,
            current_delays: VecDeque::with_capacity(CURRENT_FILTER),
            can_ss: true,
            flightsize: 0,
            cwnd_frac: 0.0,
        }
    }

    /// RFC 6817 `update_base_delay`: a new minute opens a bucket (dropping the oldest
    /// beyond BASE_HISTORY); within the minute the last bucket keeps its minimum.
    fn update_base_delay(&mut self, delay_ms: u32, now_us: u64) {
        let minute = now_us / MINUTE_US;
        if self.last_rollover_min != Some(minute) {
            self.last_rollover_min = Some(minute);
            if self.base_delays.len() == BASE_HISTORY {
                self.base_delays.pop_front();
            }
            self.base_delays.push_back(delay_ms);
        } else if let Some(tail) = self.base_delays.back_mut() {
            *tail = (*tail).min(delay_ms);
        }
    }

    /// RFC 6817 `update_current_delay`: keep the last CURRENT_FILTER samples.
    fn update_current_delay(&mut self, delay_ms: u32) {
        if self.current_delays.len() == CURRENT_FILTER {
            self.current_delays.pop_front();
        }
        self.current_delays.push_back(delay_ms);
    }

    /// `MIN(base_delays)` (ms), if any sample was taken.
    fn base_delay(&self) -> Option<u32> {
        self.base_delays.iter().copied().min()
    }

    /// `FILTER(current_delays)`: their minimum (ns-3's `MinCircBuf`).
    fn current_delay(&self) -> Option<u32> {
        self.current_delays.iter().copied().min()
    }

    /// queuing_delay = FILTER(current_delays) - MIN(base_delays) (ms; negative after a
    /// rollover dropped the old minimum, as in the RFC and ns-3).
    pub fn queuing_delay_ms(&self) -> Option<f64> {
        Some(self.current_delay()? as f64 - self.base_delay()? as f64)
    }

    /// RFC 6817's on-acknowledgement window rule for `acked` segments.
    fn ledbat_step(&mut self, tp: &mut CcView, queuing_delay_ms: f64, acked: u32) {
        let off_target = (self.target_ms - queuing_delay_ms) / self.target_ms;
        let cwnd = tp.snd_cwnd as f64 + self.cwnd_frac;
        let mut next = cwnd + self.gain * off_target * acked as f64 / cwnd;
        // max_allowed_cwnd = flightsize + ALLOWED_INCREASE * MSS.
        next = next.min((self.flightsize + ALLOWED_INCREASE) as f64);
        next = next.max(MIN_CWND as f64);
        next = next.min(tp.snd_cwnd_clamp as f64);
        let whole = next.floor();
        tp.snd_cwnd = whole as u32;
        self.cwnd_frac = next - whole;
    }
}

impl CongestionOps for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn init(&mut self, _tp: &mut CcView) {
        *self = Ledbat::new(self.target_ms, self.gain, self.do_ss);
    }

    /// On data loss: cwnd = max(cwnd / 2, MIN_CWND) (reached through PRR).
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        self.cwnd_frac = 0.0;
        tcp_reno_ssthresh(tp).max(MIN_CWND)
    }

    /// ns-3 `PktsAcked`: every ACK with a delay sample updates both filters.
    fn pkts_acked(&mut self, tp: &mut CcView, sample: &AckSample) {
        self.flightsize = sample.prior_in_flight;
        if sample.rtt_us >= 0 {
            let delay_ms = (sample.rtt_us / 1000) as u32;
            self.update_base_delay(delay_ms, tp.now_us);
            self.update_current_delay(delay_ms);
        }
    }

    /// ns-3 `IncreaseWindow`: slow start while allowed, then RFC 6817's rule.
    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        if tp.snd_cwnd <= 1 {
            self.can_ss = true; // after an RTO, as ns-3 (cwnd <= one segment)
        }
        let mut acked = acked;
        if self.do_ss && self.can_ss && tcp_in_slow_start(tp) {
            // The kernel's slow start (capped at ssthresh); what is left of the ACK goes
            // to the LEDBAT rule, as tcp_reno_cong_avoid passes it to the linear step.
            acked = tcp_slow_start(tp, acked);
            self.cwnd_frac = 0.0;
            if acked == 0 {
                return;
            }
        }
        self.can_ss = false;
        match self.queuing_delay_ms() {
            Some(q) => self.ledbat_step(tp, q, acked),
            // No delay sample yet: NewReno's congestion avoidance (ns-3).
            None => {
                let w = tp.snd_cwnd;
                tcp_cong_avoid_ai(tp, w, acked)
            }
        }
    }

    fn info(&self) -> Vec<InfoField> {
        let q = self.queuing_delay_ms().unwrap_or(0.0);
        vec![
            ("queuing_delay_ms", InfoValue::Num(q)),
            (
                "base_delay_ms",
                InfoValue::Num(self.base_delay().map_or(0.0, f64::from)),
            ),
            (
                "off_target",
                InfoValue::Num((self.target_ms - q) / self.target_ms),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(c: &mut Ledbat, tp: &mut CcView, t_ms: u64, rtt_ms: i64, in_flight: u32) {
        tp.now_us = t_ms * 1000;
        c.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: rtt_ms * 1000,
                in_flight,
                prior_in_flight: in_flight,
            },
        );
    }

    /// A flow past slow start, cwnd 10, with base delay 40 ms and the given current
    /// delay (four equal samples so the MIN filter reads it), 100 segments in flight.
    fn steady(current_ms: i64) -> (Ledbat, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 10;
        let mut c = Ledbat::new(TARGET_MS, GAIN, true);
        c.init(&mut tp);
        c.can_ss = false;
        ack(&mut c, &mut tp, 1, 40, 100);
        for i in 0..4 {
            ack(&mut c, &mut tp, 2 + i, current_ms, 100);
        }
        (c, tp)
    }

    #[test]
    fn ledbat_base_delay_keeps_each_minutes_minimum_for_ten_minutes() {
        let mut c = Ledbat::new(TARGET_MS, GAIN, true);
        // Minute 0: 50, 40, 45 -> one bucket holding 40.
        c.update_base_delay(50, 0);
        c.update_base_delay(40, 10_000_000);
        c.update_base_delay(45, 59_999_999);
        assert_eq!(Vec::from(c.base_delays.clone()), vec![40]);
        // Minutes 1..=9: 60 + m each; 10 buckets, the minimum still 40.
        for m in 1..10u64 {
            c.update_base_delay(60 + m as u32, m * MINUTE_US);
        }
        assert_eq!(c.base_delays.len(), 10);
        assert_eq!(c.base_delay(), Some(40));
        // Minute 10 opens an 11th bucket: minute 0's 40 is dropped; min is minute 1's 61.
        c.update_base_delay(80, 10 * MINUTE_US);
        assert_eq!(c.base_delays.len(), 10);
        assert_eq!(c.base_delay(), Some(61));
    }

    #[test]
    fn ledbat_current_delay_is_the_minimum_of_the_last_four_samples() {
        let mut c = Ledbat::new(TARGET_MS, GAIN, true);
        for d in [30, 90, 80, 70, 60] {
            c.update_current_delay(d);
        }
        // 30 has left the filter: min(90, 80, 70, 60) = 60.
        assert_eq!(c.current_delay(), Some(60));
        c.update_current_delay(100);
        assert_eq!(c.current_delay(), Some(60)); // 80, 70, 60, 100
    }

    #[test]
    fn ledbat_no_queue_grows_one_segment_per_window() {
        // queuing delay 0: off_target 1; 10 ACKs of one segment at cwnd ~10:
        // 10 + 1/10 + 1/10.1 + ... : one segment after ten ACKs less a little.
        // Hand sum: cwnd_k+1 = cwnd_k + 1 / cwnd_k from 10: 10.1, 10.19901, 10.29706,
        // 10.39417, 10.49038, 10.58570, 10.68017, 10.77380, 10.86662, 10.95864.
        let (mut c, mut tp) = steady(40);
        for _ in 0..10 {
            c.cong_avoid(&mut tp, 0, 1);
        }
        assert_eq!(tp.snd_cwnd, 10);
        assert!((c.cwnd_frac - 0.95864).abs() < 1e-4, "{}", c.cwnd_frac);
        c.cong_avoid(&mut tp, 0, 1); // + 1 / 10.95864 = 11.0499
        assert_eq!(tp.snd_cwnd, 11);
    }

    #[test]
    fn ledbat_half_target_grows_at_half_speed_and_above_target_shrinks() {
        // current 90, base 40: queuing 50 ms, off_target (100 - 50) / 100 = 0.5;
        // 10 segments acked at cwnd 10: + 0.5 * 10 / 10 = 0.5.
        let (mut c, mut tp) = steady(90);
        c.cong_avoid(&mut tp, 0, 10);
        assert_eq!(tp.snd_cwnd, 10);
        assert!((c.cwnd_frac - 0.5).abs() < 1e-12);
        // current 190: queuing 150 ms, off_target -0.5: 10 - 0.5 * 10 / 10 = 9.5.
        let (mut c, mut tp) = steady(190);
        c.cong_avoid(&mut tp, 0, 10);
        assert_eq!(tp.snd_cwnd, 9);
        assert!((c.cwnd_frac - 0.5).abs() < 1e-12);
    }

    #[test]
    fn ledbat_cwnd_is_capped_at_flightsize_plus_allowed_increase() {
        // 5 segments in flight before the ACK: cwnd 10 + 1 would be 11, capped at 5 + 1.
        let (mut c, mut tp) = steady(40);
        ack(&mut c, &mut tp, 10, 40, 5);
        c.cong_avoid(&mut tp, 0, 10);
        assert_eq!((tp.snd_cwnd, c.cwnd_frac), (6, 0.0));
    }

    #[test]
    fn ledbat_never_below_min_cwnd() {
        // queuing 960 ms: off_target -8.6; 2 + (-8.6 * 2 / 2) < 0: MIN_CWND 2.
        let (mut c, mut tp) = steady(1000);
        tp.snd_cwnd = 2;
        c.cong_avoid(&mut tp, 0, 2);
        assert_eq!(tp.snd_cwnd, MIN_CWND);
    }

    #[test]
    fn ledbat_loss_halves_with_min_cwnd_floor() {
        let (mut c, mut tp) = steady(40);
        tp.snd_cwnd = 31;
        assert_eq!(c.ssthresh(&tp), 15);
        tp.snd_cwnd = 3;
        assert_eq!(c.ssthresh(&tp), 2);
    }

    #[test]
    fn ledbat_slow_starts_once_then_again_only_after_cwnd_one() {
        let mut tp = CcView::new(1448, 0);
        let mut c = Ledbat::new(TARGET_MS, GAIN, true);
        c.init(&mut tp);
        ack(&mut c, &mut tp, 1, 40, 10);
        // cwnd 10 <= ssthresh (infinite): slow start, + 10.
        c.cong_avoid(&mut tp, 0, 10);
        assert_eq!(tp.snd_cwnd, 20);
        // A loss: ssthresh 10; PRR leaves cwnd 8 below it: slow start to 10, and the 2
        // segments left of the 4 acked go to the LEDBAT rule (queuing 0, flightsize 10:
        // 10 + 2 / 10 = 10.2).
        tp.snd_ssthresh = c.ssthresh(&tp);
        assert_eq!(tp.snd_ssthresh, 10);
        tp.snd_cwnd = 8;
        c.cong_avoid(&mut tp, 0, 4);
        assert_eq!(tp.snd_cwnd, 10);
        assert!((c.cwnd_frac - 0.2).abs() < 1e-12);
        // slow start is off for good ...
        assert!(!c.can_ss);
        tp.snd_cwnd = 5;
        c.cong_avoid(&mut tp, 0, 5); // queuing 0: 5 + 5 / 5 = 6 (LEDBAT, not +5)
        assert_eq!(tp.snd_cwnd, 6);
        // ... until an RTO leaves cwnd at 1 (ssthresh 10): slow start again.
        tp.snd_cwnd = 1;
        c.cong_avoid(&mut tp, 0, 1);
        assert_eq!(tp.snd_cwnd, 2);
        assert!(c.can_ss);
    }

    #[test]
    fn ledbat_without_delay_samples_acts_as_reno() {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 10;
        let mut c = Ledbat::new(TARGET_MS, GAIN, false);
        c.init(&mut tp);
        c.cong_avoid(&mut tp, 0, 10); // one window acked: + 1
        assert_eq!(tp.snd_cwnd, 11);
    }
}

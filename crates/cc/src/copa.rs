//! `copa`: Copa's default mode (Arun and Balakrishnan, "Copa: Practical Delay-Based
//! Congestion Control for the Internet", NSDI 2018, Sec. 2-3), with facebook/mvfst's
//! quic/congestion_control/Copa.cpp as the implementation reference.
//!
//! Model (Sec. 2). Copa aims at the target rate lambda_t = 1 / (delta * d_q) packets per
//! second, d_q being the queueing delay, which at the equilibrium of several Copa flows
//! keeps about 1 / delta = 2 packets per flow queued. d_q = RTTstanding - RTTmin:
//! RTTmin is the smallest RTT of the last 10 s, RTTstanding the smallest of the last
//! srtt / 2 (short enough to follow the queue, long enough to filter ACK compression).
//! On every ACK the current rate lambda = cwnd / RTTstanding is compared with the
//! target: below it cwnd grows by v / (delta * cwnd) per acked packet, above it shrinks
//! by as much (Sec. 2.1, step 3). The velocity v starts at 1; once per RTT the sender
//! notes whether cwnd went up or down, and after the direction stayed the same for three
//! RTTs v doubles every RTT; a change of direction resets it to 1 (Sec. 2.2). A flow
//! starts in slow start, doubling cwnd once per RTT until the current rate first exceeds
//! the target (Sec. 2.1). Packets are paced at 2 * cwnd / RTTstanding (Sec. 2.1).
//!
//! Followed: the paper's Sec. 2.1-2.2 rules; mvfst `Copa::onPacketAcked`,
//! `checkAndUpdateDirection`, `changeDirection`, `onPacketLoss` for what the paper
//! leaves open (see Deviations). `cong_control` owns cwnd and pacing, as BBR's module.
//!
//! Deviations:
//! - Competitive mode (Sec. 2.3: delta adapted against buffer-filling flows) is not
//!   built; delta stays at its configured value (0.5, the paper's default mode).
//! - The direction check is mvfst's: on the first ACK at least srtt after the last check
//!   (not "once per window" of packets), comparing cwnd with the cwnd then; mvfst's
//!   early reset of v when the rule moves against a v > 1 (`changeDirection`) is kept.
//! - d_q is RTTstanding - RTTmin, the paper's (mvfst's default takes the latest RTT for
//!   it, `copaUseRttStanding` = false); the velocity's threshold is the paper's three RTTs
//!   (mvfst uses 4 with RTTstanding).
//! - Both filters are the kernel's windowed min (lib/win_minmax.c, `crate::minmax`),
//!   mvfst uses its own windowed filter of the same kind; times in us.
//! - Loss: the paper's default mode ignores it; mvfst only drops cwnd to its minimum on
//!   persistent congestion. Here an RTO (`CaEvent::Loss`) does that (cwnd = 2); fast
//!   recovery leaves cwnd to the rule.
//! - Before the first ACK's RTTstanding, `init` paces at 2 cwnd / srtt (the handshake's
//!   RTT), or over a nominal 1 ms without one, as BBR's `bbr_init_pacing_rate_from_rtt`
//!   (the paper does not say; the seam requires a rate once pacing is needed). Every
//!   ACK with an RTT sample then sets 2 cwnd / RTTstanding (mvfst uses srtt there).

use crate::minmax::Minmax;
use crate::ops::{CaEvent, CcView, CongestionOps, InfoField, InfoValue, RateSample};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

/// delta in the default mode (Sec. 2.1: delta = 0.5 by default; mvfst reads it from
/// its transport settings, `copaDeltaParam`).
pub const DELTA: f64 = 0.5;
/// RTTmin's window (us): Sec. 2.1, "RTTmin ... over a longer period (10 seconds)";
/// mvfst's `kMinRTTWindowLength` 10 s.
pub const RTT_MIN_WINDOW_US: u32 = 10_000_000;
/// Consecutive RTTs in the same direction before v doubles (Sec. 2.2: "start doubling v
/// only after the direction has remained the same for three RTTs").
pub const VELOCITY_RTTS: u32 = 3;
/// The smallest cwnd (segments): mvfst's `minCwndInMss` default 2.
pub const MIN_CWND: f64 = 2.0;
/// Pacing gain over cwnd / RTTstanding (Sec. 2.1: "pace packets at 2 * cwnd /
/// RTTstanding").
pub const PACING_GAIN: f64 = 2.0;

static PARAMS: [ParamSpec; 1] = [ParamSpec {
    name: "delta",
    kind: ParamKind::Float,
    default: DELTA,
    min: 0.004,
    max: 1.0,
    doc: "delta: the target rate is 1 / (delta * queueing delay); 1 / delta packets queued per flow (Copa paper default 0.5)",
}];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "copa",
    family: crate::registry::Family::Delay,
    summary: "Copa (default mode): target rate 1 / (delta * queueing delay), velocity-scaled steps, paced",
    source: "Arun, Balakrishnan, NSDI 2018, Sec. 2.1-2.2; mvfst quic/congestion_control/Copa.cpp",
    params: &PARAMS,
    build: |p: &Params| Box::new(Copa::new(p.get("delta"))),
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    None,
    Up,
    Down,
}

#[derive(Clone, Debug)]
pub struct Copa {
    delta: f64,
    /// cwnd in segments, fractions kept (mvfst keeps bytes).
    cwnd: f64,
    slow_start: bool,
    last_double_us: Option<u64>,
    rtt_min: Option<Minmax>,
    rtt_standing: Option<Minmax>,
    velocity: f64,
    direction: Direction,
    same_direction: u32,
    last_record_us: Option<u64>,
    last_recorded_cwnd: f64,
    /// The last d_q (us), for `info`.
    dq_us: u32,
}

impl Copa {
    pub fn new(delta: f64) -> Self {
        Copa {
            delta,
            cwnd: crate::ops::TCP_INIT_CWND as f64,
            slow_start: true,
            last_double_us: None,
            rtt_min: None,
            rtt_standing: None,
            velocity: 1.0,
            direction: Direction::None,
            same_direction: 0,
            last_record_us: None,
            last_recorded_cwnd: 0.0,
            dq_us: 0,
        }
    }

    /// mvfst `checkAndUpdateDirection`: once per srtt, up if cwnd grew since the last
    /// check, else down; v doubles once the direction held VELOCITY_RTTS times.
    fn check_and_update_direction(&mut self, now_us: u64, srtt_us: u64) {
        let Some(last) = self.last_record_us else {
            self.last_record_us = Some(now_us);
            self.last_recorded_cwnd = self.cwnd;
            return;
        };
        if now_us - last < srtt_us {
            return;
        }
        let dir = if self.cwnd > self.last_recorded_cwnd {
            Direction::Up
        } else {
            Direction::Down
        };
        if dir != self.direction {
            self.velocity = 1.0;
            self.same_direction = 0;
        } else {
            self.same_direction += 1;
            if self.same_direction >= VELOCITY_RTTS {
                self.velocity *= 2.0;
            }
        }
        self.direction = dir;
        self.last_record_us = Some(now_us);
        self.last_recorded_cwnd = self.cwnd;
    }

    /// mvfst `changeDirection`: the rule moved against the direction v was built for.
    fn change_direction(&mut self, dir: Direction, now_us: u64) {
        if self.direction == dir {
            return;
        }
        self.direction = dir;
        self.velocity = 1.0;
        self.same_direction = 0;
        self.last_record_us = Some(now_us);
        self.last_recorded_cwnd = self.cwnd;
    }

    /// One ACK of `acked` packets with RTT sample `rtt_us` at `now_us`, srtt `srtt_us`.
    /// Returns RTTstanding (us) when the rule ran.
    fn on_ack(&mut self, now_us: u64, rtt_us: u32, srtt_us: u32, acked: u32) -> Option<u32> {
        let t = now_us as u32; // win_minmax's u32 clock, wrapping
        let min = running_min(&mut self.rtt_min, RTT_MIN_WINDOW_US, t, rtt_us);
        let standing = running_min(&mut self.rtt_standing, srtt_us / 2, t, rtt_us);
        if standing < min || standing == 0 {
            return None; // mvfst: "delay negative" / no standing RTT
        }
        let dq = standing - min;
        self.dq_us = dq;
        // lambda <= lambda_t  <=>  cwnd / standing <= 1 / (delta * dq).
        let increase = dq == 0 || self.delta * dq as f64 * self.cwnd <= standing as f64;
        let srtt = u64::from(srtt_us);
        if !(increase && self.slow_start) {
            self.check_and_update_direction(now_us, srtt);
        }
        if increase {
            if self.slow_start {
                match self.last_double_us {
                    None => self.last_double_us = Some(now_us),
                    Some(t0) if now_us - t0 > srtt => {
                        self.cwnd *= 2.0;
                        self.last_double_us = Some(now_us);
                    }
                    Some(_) => {}
                }
            } else {
                if self.direction != Direction::Up && self.velocity > 1.0 {
                    self.change_direction(Direction::Up, now_us);
                }
                self.cwnd += self.step(acked);
            }
        } else {
            if self.direction != Direction::Down && self.velocity > 1.0 {
                self.change_direction(Direction::Down, now_us);
            }
            let step = self.step(acked);
            self.cwnd -= step.min(self.cwnd - MIN_CWND);
            self.slow_start = false;
        }
        Some(standing)
    }

    /// 2 * cwnd / `rtt_us` in bytes per second (at least 1: the seam's pacing needs a
    /// rate), capped by `sk_max_pacing_rate`.
    fn set_pacing_rate(&self, tp: &mut CcView, rtt_us: u32) {
        let rate = PACING_GAIN * self.cwnd * tp.mss_cache as f64 * 1e6 / rtt_us as f64;
        tp.pacing_rate = (rate.round() as u64).clamp(1, tp.max_pacing_rate.max(1));
    }

    /// v / (delta * cwnd) per acked packet (Sec. 2.1, step 3).
    fn step(&self, acked: u32) -> f64 {
        acked as f64 * self.velocity / (self.delta * self.cwnd)
    }

    fn write_cwnd(&self, tp: &mut CcView) {
        let cwnd = self.cwnd.max(MIN_CWND).min(tp.snd_cwnd_clamp as f64);
        tp.snd_cwnd = cwnd as u32;
    }
}

impl CongestionOps for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    fn init(&mut self, tp: &mut CcView) {
        *self = Copa::new(self.delta);
        self.cwnd = tp.snd_cwnd as f64;
        tp.pacing_needed = true; // SK_PACING_NEEDED, as BBR
                                 // srtt from the handshake, else BBR's nominal 1 ms (USEC_PER_MSEC).
        let rtt_us = if tp.srtt_us > 0 { tp.srtt_us } else { 1000 };
        self.set_pacing_rate(tp, rtt_us);
    }

    /// Not used to set cwnd (Copa owns it); the kernel's value is kept.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        tp.snd_ssthresh
    }

    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        tp.snd_cwnd
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tp: &mut CcView, rs: &RateSample) {
        if rs.rtt_us >= 0 && rs.acked_sacked > 0 {
            let rtt = rs.rtt_us.min(u32::MAX as i64) as u32;
            let srtt = if tp.srtt_us > 0 { tp.srtt_us } else { rtt };
            if let Some(standing) = self.on_ack(tp.now_us, rtt, srtt, rs.acked_sacked) {
                self.set_pacing_rate(tp, standing);
            }
        }
        self.write_cwnd(tp);
    }

    /// An RTO: mvfst's persistent-congestion response, cwnd to its minimum.
    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.cwnd = MIN_CWND;
            self.write_cwnd(tp);
        }
    }

    fn info(&self) -> Vec<InfoField> {
        vec![
            ("velocity", InfoValue::Num(self.velocity)),
            ("dq_ms", InfoValue::Num(self.dq_us as f64 / 1000.0)),
            (
                "rtt_standing_ms",
                InfoValue::Num(self.rtt_standing.map_or(0.0, |f| f.get() as f64 / 1000.0)),
            ),
            (
                "mode",
                InfoValue::Label(if self.slow_start {
                    "slow_start"
                } else {
                    "rule"
                }),
            ),
        ]
    }
}

/// A windowed min over `win` us, started by its first sample.
fn running_min(f: &mut Option<Minmax>, win: u32, t: u32, rtt_us: u32) -> u32 {
    match f {
        Some(f) => f.running_min(win, t, rtt_us),
        None => {
            *f = Some(Minmax::new(t, rtt_us));
            rtt_us
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past slow start, cwnd 20, RTTmin 40 ms (at t = 0), srtt 50 ms.
    fn steady(cwnd: f64) -> Copa {
        let mut c = Copa::new(DELTA);
        c.slow_start = false;
        c.cwnd = cwnd;
        c.on_ack(0, 40_000, 50_000, 0);
        c
    }

    #[test]
    fn copa_above_target_rate_shrinks_by_v_over_delta_cwnd() {
        // RTTstanding 50 ms (the min of the last 25 ms), d_q = 10 ms: lambda_t =
        // 1 / (0.5 * 0.01 s) = 200 pkt/s; lambda = 20 / 0.05 s = 400 > 200: down by
        // 1 / (0.5 * 20) = 0.1.
        let mut c = steady(20.0);
        let s = c.on_ack(100_000, 50_000, 50_000, 1);
        assert_eq!((s, c.dq_us), (Some(50_000), 10_000));
        assert!((c.cwnd - 19.9).abs() < 1e-12, "{}", c.cwnd);
    }

    #[test]
    fn copa_below_target_rate_grows_by_v_over_delta_cwnd() {
        // cwnd 5: lambda = 5 / 0.05 = 100 <= 200 pkt/s: up by 2 acked / (0.5 * 5) = 0.8.
        let mut c = steady(5.0);
        c.on_ack(100_000, 50_000, 50_000, 2);
        assert!((c.cwnd - 5.8).abs() < 1e-12, "{}", c.cwnd);
        // Exactly at the target: cwnd 10 gives 200 = 200: still up (<=), by 0.2.
        let mut c = steady(10.0);
        c.on_ack(100_000, 50_000, 50_000, 1);
        assert!((c.cwnd - 10.2).abs() < 1e-12, "{}", c.cwnd);
    }

    #[test]
    fn copa_no_queue_always_increases() {
        // d_q = 0 (RTTstanding = RTTmin): the target rate is infinite.
        let mut c = steady(500.0);
        c.on_ack(100_000, 40_000, 50_000, 1);
        assert!((c.cwnd - (500.0 + 1.0 / 250.0)).abs() < 1e-12);
    }

    #[test]
    fn copa_standing_rtt_is_the_min_over_half_an_srtt() {
        // Samples 60 ms at t = 100 ms, 50 ms at 110, 70 ms at 140: with srtt 50 ms the
        // window is 25 ms; at 140 the 50 ms sample (30 ms old) has left it.
        let mut c = steady(20.0);
        assert_eq!(c.on_ack(100_000, 60_000, 50_000, 1), Some(60_000));
        assert_eq!(c.on_ack(110_000, 50_000, 50_000, 1), Some(50_000));
        assert_eq!(c.on_ack(120_000, 70_000, 50_000, 1), Some(50_000));
        assert_eq!(c.on_ack(140_000, 70_000, 50_000, 1), Some(70_000));
    }

    #[test]
    fn copa_slow_start_doubles_per_srtt_until_above_target() {
        let mut c = Copa::new(DELTA);
        c.cwnd = 10.0;
        // RTTmin 40 ms, every sample 40 ms (d_q 0): the first ACK starts the clock, the
        // next one more than an srtt (40 ms) later doubles.
        c.on_ack(0, 40_000, 40_000, 1);
        c.on_ack(30_000, 40_000, 40_000, 1);
        assert_eq!(c.cwnd, 10.0);
        c.on_ack(40_001, 40_000, 40_000, 1);
        assert_eq!(c.cwnd, 20.0);
        assert!(c.slow_start);
        // A queue of 20 ms: lambda_t = 1 / (0.5 * 0.02) = 100 pkt/s, lambda = 20 / 0.06
        // = 333: slow start ends with the first decrease, 1 / (0.5 * 20) = 0.1. At 50 ms
        // the 40 ms sample (10 ms old) is still within srtt / 2 = 20 ms: d_q 0, no change;
        // at 100 ms it is not: RTTstanding 60 ms.
        c.on_ack(50_000, 60_000, 40_000, 1);
        assert_eq!((c.cwnd, c.slow_start), (20.0, true));
        c.on_ack(100_000, 60_000, 40_000, 1);
        assert!(!c.slow_start);
        assert!((c.cwnd - 19.9).abs() < 1e-12, "{}", c.cwnd);
    }

    #[test]
    fn copa_velocity_doubles_after_three_rtts_in_one_direction() {
        // d_q 0 throughout: cwnd rises on every ACK. Direction checks at 0 (first
        // record), 50 (Up: differs from None, v 1), 100 (same 1), 150 (same 2), 200
        // (same 3: v 2), 250 (v 4). srtt 50 ms.
        let mut c = steady(10.0);
        let mut vs = vec![];
        for k in 0..=5u64 {
            c.on_ack(k * 50_000, 40_000, 50_000, 1);
            vs.push(c.velocity);
        }
        assert_eq!(vs, vec![1.0, 1.0, 1.0, 1.0, 2.0, 4.0]);
        // The rule turns down while v = 4 was built going up: v back to 1 at once,
        // and the step uses v = 1: a 60 ms standing RTT at cwnd ~10.7 is above the
        // target 1 / (0.5 * 0.02) = 100 pkt/s.
        // At 260 ms the 40 ms samples of 250 ms are still within srtt / 2: up, v 4.
        c.on_ack(260_000, 60_000, 50_000, 1);
        assert_eq!(c.velocity, 4.0);
        let before = c.cwnd;
        // At 300 ms they are 50 ms old: RTTstanding 60 ms, d_q 20 ms, down; v 1, so the
        // step is 1 / (0.5 cwnd), not 4 / (0.5 cwnd).
        c.on_ack(300_000, 60_000, 50_000, 1);
        assert_eq!(c.velocity, 1.0);
        assert_eq!(c.direction, Direction::Down);
        assert!((c.cwnd - (before - 2.0 / before)).abs() < 1e-12);
    }

    #[test]
    fn copa_paces_at_twice_cwnd_over_standing_rtt() {
        let mut tp = CcView::new(1000, 0);
        tp.srtt_us = 50_000;
        let mut c = Copa::new(DELTA);
        c.init(&mut tp);
        assert!(tp.pacing_needed);
        // Before any ACK: 2 * 10 * 1000 B / srtt 0.05 s = 400 000 B/s.
        assert_eq!(tp.pacing_rate, 400_000);
        c.slow_start = false;
        let rs = RateSample {
            rtt_us: 40_000,
            acked_sacked: 1,
            ..Default::default()
        };
        c.cong_control(&mut tp, &rs);
        // d_q 0: cwnd 10 + 1 / 5 = 10.2; 2 * 10.2 * 1000 B / 0.04 s = 510 000 B/s.
        assert_eq!(tp.snd_cwnd, 10);
        assert_eq!(tp.pacing_rate, 510_000);
    }

    #[test]
    fn copa_without_an_rtt_paces_over_a_nominal_millisecond() {
        // No handshake RTT: 2 * 10 * 1448 B / 0.001 s = 28 960 000 B/s.
        let mut tp = CcView::new(1448, 0);
        let mut c = Copa::new(DELTA);
        c.init(&mut tp);
        assert_eq!(tp.pacing_rate, 28_960_000);
    }

    #[test]
    fn copa_rto_drops_cwnd_to_two() {
        let mut tp = CcView::new(1000, 0);
        let mut c = Copa::new(DELTA);
        c.init(&mut tp);
        c.cwnd = 40.0;
        c.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_cwnd, 2);
        // Never below two on the way down either.
        // A 2 s RTT: d_q 1.96 s, delta d_q cwnd = 0.5 * 1.96 * 2.05 = 2.009 s > 2 s: down,
        // by 10 / (0.5 * 2.05) = 9.76 but only to 2.
        let mut c = steady(2.05);
        c.on_ack(100_000, 2_000_000, 50_000, 10);
        assert_eq!(c.cwnd, MIN_CWND);
    }
}

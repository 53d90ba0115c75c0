//! `vegas`: TCP Vegas as Linux runs it (net/ipv4/tcp_vegas.c).
//!
//! Model (Brakmo and Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 13(8), 1995, Sec. 3.2). Once per RTT, compare the expected rate
//! cwnd / baseRTT with the actual one cwnd / RTT, where baseRTT is the smallest RTT ever
//! seen and RTT the smallest seen during the last RTT. Their difference in segments
//! queued in the network is diff = cwnd (RTT - baseRTT) / baseRTT. In congestion
//! avoidance cwnd grows by one segment per RTT while diff < alpha (2), shrinks by one
//! while diff > beta (4), and holds in between. In slow start cwnd doubles per RTT (as
//! Reno, on every ACK) until diff > gamma (1); then cwnd is set to the actual rate times
//! baseRTT, plus one, and ssthresh to match, which ends slow start. Losses are handled as
//! by Reno (ssthresh = cwnd / 2).
//!
//! Kernel functions followed: `vegas_enable`, `vegas_disable`, `tcp_vegas_init`,
//! `tcp_vegas_pkts_acked`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`,
//! `tcp_vegas_ssthresh`, `tcp_vegas_cong_avoid`, `tcp_vegas_get_info`; `ssthresh` is
//! `tcp_reno_ssthresh`, `undo_cwnd` `tcp_reno_undo_cwnd`. The kernel's own deviations
//! from the paper (its header lists them) are kept: Reno-speed slow start on every RTT,
//! the ACK rate as the "actual" rate, min-filtered RTT per round, cwnd set to the
//! actual rate on leaving slow start, and a fresh flight of ACKs before deciding after
//! idle, an RTO or a recovery.
//!
//! Deviations:
//! - `diff = cwnd * (rtt - baseRTT) / baseRTT` and `target_cwnd` are computed in 64 bits;
//!   the kernel's u32 product would wrap when cwnd * (rtt - baseRTT) exceeds 2^32 us
//!   (e.g. cwnd 1000 with 4.3 s of queueing), which no experiment here approaches.
//! - The kernel exports these hooks (tcp_vegas.h) for YeAH to reuse; here `yeah.rs` embeds
//!   a `Vegas` and calls its `init`, `pkts_acked`, `set_state` and `cwnd_event`, reading
//!   the round fields (`beg_snd_nxt`, `cnt_rtt`, `min_rtt`, `base_rtt`), which are
//!   crate-visible for that. (Veno, though descended from Vegas, has its own in the
//!   kernel, as here.)

use crate::helpers::{
    after, tcp_current_ssthresh, tcp_in_slow_start, tcp_reno_cong_avoid, tcp_reno_ssthresh,
    tcp_slow_start,
};
use crate::ops::{AckSample, CaEvent, CaState, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

/// The "no sample yet" value of baseRTT and minRTT (us), as in the kernel.
pub(crate) const RTT_NONE: u32 = 0x7fff_ffff;
const I32_MAX: f64 = i32::MAX as f64;

static PARAMS: [ParamSpec; 3] = [
    ParamSpec {
        name: "alpha",
        kind: ParamKind::Int,
        default: 2.0,
        min: 0.0,
        max: I32_MAX,
        doc: "lower bound of segments queued in the network: below it cwnd grows (tcp_vegas.c default 2)",
    },
    ParamSpec {
        name: "beta",
        kind: ParamKind::Int,
        default: 4.0,
        min: 0.0,
        max: I32_MAX,
        doc: "upper bound of segments queued in the network: above it cwnd shrinks (tcp_vegas.c default 4)",
    },
    ParamSpec {
        name: "gamma",
        kind: ParamKind::Int,
        default: 1.0,
        min: 0.0,
        max: I32_MAX,
        doc: "segments queued that end slow start (tcp_vegas.c default 1)",
    },
];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "vegas",
    family: crate::registry::Family::Delay,
    summary: "Vegas: delay-based, keeps alpha..beta segments queued",
    source: "Linux net/ipv4/tcp_vegas.c; Brakmo and Peterson, IEEE JSAC 1995, Sec. 3.2",
    params: &PARAMS,
    build: |p: &Params| Box::new(VegasConfig::from_params(p).build()),
};

/// Vegas's tunables (the module parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasConfig {
    pub alpha: u32,
    pub beta: u32,
    pub gamma: u32,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            alpha: 2,
            beta: 4,
            gamma: 1,
        }
    }
}

impl VegasConfig {
    pub fn from_params(p: &Params) -> Self {
        VegasConfig {
            alpha: p.get_u32("alpha"),
            beta: p.get_u32("beta"),
            gamma: p.get_u32("gamma"),
        }
    }
    pub fn build(&self) -> Vegas {
        Vegas {
            cfg: *self,
            beg_snd_nxt: 0,
            doing_vegas_now: false,
            cnt_rtt: 0,
            min_rtt: RTT_NONE,
            base_rtt: RTT_NONE,
            diff: None,
        }
    }
}

/// `struct vegas` (tcp_vegas.h).
#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    /// `beg_snd_nxt`: right edge of the current round; the per-RTT decision runs when
    /// an ACK passes it.
    pub(crate) beg_snd_nxt: u64,
    /// `doing_vegas_now`: false outside the Open state (Reno then).
    doing_vegas_now: bool,
    /// `cntRTT`: RTT samples in this round.
    pub(crate) cnt_rtt: u32,
    /// `minRTT` (us): smallest RTT of this round (+1, see `pkts_acked`).
    pub(crate) min_rtt: u32,
    /// `baseRTT` (us): smallest RTT since the last (re)start.
    pub(crate) base_rtt: u32,
    /// Not in the kernel: the last per-RTT `diff`, for `info`.
    diff: Option<u32>,
}

impl Vegas {
    /// `vegas_enable`: begin sampling from the next round.
    fn vegas_enable(&mut self, tp: &CcView) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = RTT_NONE;
    }

    /// `vegas_disable`.
    fn vegas_disable(&mut self) {
        self.doing_vegas_now = false;
    }

    /// `tcp_vegas_init`: forget baseRTT too (connection start, restart after idle).
    fn tcp_vegas_init(&mut self, tp: &CcView) {
        self.base_rtt = RTT_NONE;
        self.vegas_enable(tp);
    }

    /// The once-per-RTT decision of `tcp_vegas_cong_avoid`, with enough samples.
    fn vegas_adjust(&mut self, tp: &mut CcView, acked: u32) {
        // The smallest RTT of the round filters out delayed ACKs.
        let rtt = self.min_rtt as u64;
        let base = self.base_rtt as u64;
        let cwnd = tp.snd_cwnd as u64;
        // Window that would just fill the pipe: actual rate * baseRTT.
        let target_cwnd = cwnd * base / rtt;
        // Segments queued in the network ("Diff", Sec. 3.2).
        let diff = (cwnd * (rtt - base) / base).min(u32::MAX as u64) as u32;
        self.diff = Some(diff);

        if diff > self.cfg.gamma && tcp_in_slow_start(tp) {
            // Too fast: leave slow start at the actual rate, +1 because the truncation
            // would otherwise under-use the link.
            tp.snd_cwnd = tp.snd_cwnd.min((target_cwnd as u32).wrapping_add(1));
            tp.snd_ssthresh = tcp_vegas_ssthresh(tp);
        } else if tcp_in_slow_start(tp) {
            tcp_slow_start(tp, acked);
        } else if diff > self.cfg.beta {
            tp.snd_cwnd -= 1;
            tp.snd_ssthresh = tcp_vegas_ssthresh(tp);
        } else if diff < self.cfg.alpha {
            tp.snd_cwnd += 1;
        }
        // else: sending just as fast as we should.

        if tp.snd_cwnd < 2 {
            tp.snd_cwnd = 2;
        } else if tp.snd_cwnd > tp.snd_cwnd_clamp {
            tp.snd_cwnd = tp.snd_cwnd_clamp;
        }
        tp.snd_ssthresh = tcp_current_ssthresh(tp);
    }
}

/// `tcp_vegas_ssthresh`: min(ssthresh, cwnd).
fn tcp_vegas_ssthresh(tp: &CcView) -> u32 {
    tp.snd_ssthresh.min(tp.snd_cwnd)
}

impl CongestionOps for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, tp: &mut CcView) {
        self.tcp_vegas_init(tp);
    }

    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        tcp_reno_ssthresh(tp)
    }

    /// `tcp_vegas_pkts_acked`: min-filter the RTT per round and forever.
    fn pkts_acked(&mut self, _tp: &mut CcView, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Never allow a zero RTT or baseRTT.
        let vrtt = (sample.rtt_us.min(RTT_NONE as i64 - 1) as u32) + 1;
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// `tcp_vegas_state`: Vegas runs only in Open; any other state falls back to Reno
    /// and re-entering Open waits a fresh round.
    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        if new_state == CaState::Open {
            self.vegas_enable(tp);
        } else {
            self.vegas_disable();
        }
    }

    /// `tcp_vegas_cwnd_event`: restart from a clean slate after idle.
    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.tcp_vegas_init(tp);
        }
    }

    /// `tcp_vegas_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcView, ack: u64, acked: u32) {
        if !self.doing_vegas_now {
            tcp_reno_cong_avoid(tp, acked);
            return;
        }
        if after(ack, self.beg_snd_nxt) {
            // Once per RTT; the next round ends at today's snd_nxt.
            self.beg_snd_nxt = tp.snd_nxt;
            // Two samples or fewer mean one ACK per RTT, almost surely delayed: act as Reno.
            if self.cnt_rtt <= 2 {
                tcp_reno_cong_avoid(tp, acked);
            } else {
                self.vegas_adjust(tp, acked);
            }
            self.cnt_rtt = 0;
            self.min_rtt = RTT_NONE;
        } else if tcp_in_slow_start(tp) {
            tcp_slow_start(tp, acked);
        }
    }

    fn info(&self) -> Vec<InfoField> {
        let ms = |us: u32| {
            if us == RTT_NONE {
                f64::NAN
            } else {
                us as f64 / 1000.0
            }
        };
        vec![
            ("base_rtt_ms", InfoValue::Num(ms(self.base_rtt))),
            ("min_rtt_ms", InfoValue::Num(ms(self.min_rtt))),
            (
                "diff_pkts",
                InfoValue::Num(self.diff.map_or(f64::NAN, |d| d as f64)),
            ),
            ("cnt_rtt", InfoValue::Num(self.cnt_rtt as f64)),
            (
                "enabled",
                InfoValue::Num(if self.doing_vegas_now { 1.0 } else { 0.0 }),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::TCP_INFINITE_SSTHRESH;

    fn rtt(c: &mut Vegas, tp: &mut CcView, vrtt_us: u32, n: u32) {
        // The kernel adds 1 us to every sample; feed vrtt - 1 to get vrtt.
        for _ in 0..n {
            c.pkts_acked(
                tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: vrtt_us as i64 - 1,
                    in_flight: 20,
                    prior_in_flight: 20,
                },
            );
        }
    }

    /// cwnd 20 with ssthresh `ssthresh`, baseRTT 100 ms learnt in a first round (one
    /// sample: Reno's turn), then three samples of `round_vrtt_us` and the ACK that ends
    /// the second round.
    fn second_round(ssthresh: u32, round_vrtt_us: u32) -> (Vegas, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 20;
        tp.snd_ssthresh = ssthresh;
        tp.is_cwnd_limited = true;
        let mut c = VegasConfig::default().build();
        c.init(&mut tp); // beg_snd_nxt = snd_nxt = 0
        tp.snd_nxt = 20;
        rtt(&mut c, &mut tp, 100_000, 1);
        c.cong_avoid(&mut tp, 1, 1); // round 1 ends: 1 sample <= 2, Reno; beg_snd_nxt = 20
        rtt(&mut c, &mut tp, round_vrtt_us, 3);
        tp.snd_nxt = 40;
        c.cong_avoid(&mut tp, 21, 1); // round 2 ends: 3 samples, Vegas decides
        (c, tp)
    }

    #[test]
    fn vegas_grows_one_segment_per_rtt_when_fewer_than_alpha_segments_are_queued() {
        // Round 1 in CA: Reno ai(20, 1) only counts (cwnd 20, cnt 1).
        // Round 2: min RTT = baseRTT = 100 ms: diff = 20 * 0 / 100000 = 0 < alpha 2: cwnd 21.
        // ssthresh = max(10, (21 >> 1) + (21 >> 2) = 15) = 15.
        let (c, tp) = second_round(10, 100_000);
        assert_eq!(c.diff, Some(0));
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (21, 15));
    }

    #[test]
    fn vegas_holds_cwnd_between_alpha_and_beta() {
        // diff = 20 * (115000 - 100000) / 100000 = 300000 / 100000 = 3, in [2, 4]: hold.
        let (c, tp) = second_round(10, 115_000);
        assert_eq!(c.diff, Some(3));
        assert_eq!(tp.snd_cwnd, 20);
        // Boundaries hold too: diff = 20 * 10000 / 100000 = 2 (= alpha) and
        // 20 * 20000 / 100000 = 4 (= beta).
        assert_eq!(second_round(10, 110_000).1.snd_cwnd, 20);
        assert_eq!(second_round(10, 120_000).1.snd_cwnd, 20);
    }

    #[test]
    fn vegas_shrinks_one_segment_per_rtt_when_more_than_beta_segments_are_queued() {
        // diff = 20 * 30000 / 100000 = 6 > beta 4: cwnd 19, ssthresh = min(10, 19) = 10,
        // then tcp_current_ssthresh = max(10, 9 + 4) = 13.
        let (c, tp) = second_round(10, 130_000);
        assert_eq!(c.diff, Some(6));
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (19, 13));
    }

    #[test]
    fn vegas_leaves_slow_start_at_the_actual_rate_when_diff_exceeds_gamma() {
        // Slow start (ssthresh infinite). Round 1 is Reno slow start: cwnd 20 -> 21.
        // Round 2 at 130 ms: diff = 21 * 30000 / 100000 = 6.3 -> 6 > gamma 1;
        // target = 21 * 100000 / 130000 = 16.15 -> 16; cwnd = min(21, 16 + 1) = 17;
        // ssthresh = min(inf, 17) = 17; then max(17, 8 + 4) = 17.
        let (c, tp) = second_round(TCP_INFINITE_SSTHRESH, 130_000);
        assert_eq!(c.diff, Some(6));
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (17, 17));
    }

    #[test]
    fn vegas_keeps_slow_start_while_diff_is_at_most_gamma() {
        // Round 1: 20 -> 21 (Reno slow start). Round 2 at 104 ms: diff = 21 * 4000 /
        // 100000 = 0.84 -> 0 <= gamma: slow start on, 21 -> 22; ssthresh stays infinite.
        let (_, tp) = second_round(TCP_INFINITE_SSTHRESH, 104_000);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (22, TCP_INFINITE_SSTHRESH));
    }

    #[test]
    fn vegas_acts_as_reno_with_two_samples_or_fewer_per_round() {
        // Same as the shrink case but with only 2 samples in round 2: CA Reno, ai(20, 1):
        // snd_cwnd_cnt 1 -> 2, cwnd stays 20, ssthresh untouched.
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 20;
        tp.snd_ssthresh = 10;
        tp.is_cwnd_limited = true;
        let mut c = VegasConfig::default().build();
        c.init(&mut tp);
        tp.snd_nxt = 20;
        rtt(&mut c, &mut tp, 100_000, 1);
        c.cong_avoid(&mut tp, 1, 1);
        rtt(&mut c, &mut tp, 130_000, 2);
        c.cong_avoid(&mut tp, 21, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt, tp.snd_ssthresh), (20, 2, 10));
    }

    #[test]
    fn vegas_falls_back_to_reno_outside_open_and_restarts_its_round_on_return() {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 20;
        tp.snd_ssthresh = 10;
        let mut c = VegasConfig::default().build();
        c.init(&mut tp);
        c.set_state(&mut tp, CaState::Recovery);
        assert!(!c.doing_vegas_now);
        tp.snd_nxt = 77;
        c.set_state(&mut tp, CaState::Open);
        assert!(c.doing_vegas_now);
        assert_eq!((c.beg_snd_nxt, c.cnt_rtt, c.min_rtt), (77, 0, RTT_NONE));
    }

    #[test]
    fn vegas_forgets_base_rtt_when_restarting_after_idle() {
        let mut tp = CcView::new(1448, 0);
        let mut c = VegasConfig::default().build();
        c.init(&mut tp);
        rtt(&mut c, &mut tp, 100_000, 1);
        assert_eq!(c.base_rtt, 100_000);
        c.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(c.base_rtt, RTT_NONE);
    }

    #[test]
    fn vegas_rtt_samples_are_shifted_by_one_microsecond() {
        // vrtt = rtt_us + 1: a 0 us sample becomes 1 us, never zero.
        let mut tp = CcView::new(1448, 0);
        let mut c = VegasConfig::default().build();
        c.init(&mut tp);
        c.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 0,
                in_flight: 1,
                prior_in_flight: 1,
            },
        );
        assert_eq!((c.base_rtt, c.min_rtt, c.cnt_rtt), (1, 1, 1));
        c.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: -1,
                in_flight: 1,
                prior_in_flight: 1,
            },
        );
        assert_eq!(c.cnt_rtt, 1);
    }
}

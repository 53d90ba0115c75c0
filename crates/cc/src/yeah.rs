//! `yeah`: YeAH-TCP as Linux runs it (net/ipv4/tcp_yeah.c).
//!
//! Model (Baiocchi, Castellani and Vacirca, "YeAH-TCP: Yet Another Highspeed TCP",
//! PFLDnet 2007, Sec. 2). Two modes chosen once per RTT from Vegas's measurements (the
//! smallest RTT of the round against the smallest ever, baseRTT). The queue the flow
//! builds is Q = cwnd (RTT - baseRTT) / RTT segments. While Q <= alpha = 80 and the
//! queueing delay is at most baseRTT / phy (phy = 8), the flow is in Fast mode and grows
//! as Scalable TCP (one segment per min(cwnd, 100) acked). Otherwise it is in Slow mode:
//! it grows as Reno, and if Q > alpha it gives the excess back at once ("precautionary
//! decongestion": cwnd -= min(Q / gamma, cwnd / 2), not below `reno_count`, and ssthresh
//! follows). `reno_count` estimates a competing Reno flow's window so YeAH does not
//! starve it; `fast_count` counts Fast rounds and resets it after zeta = 50. On loss,
//! while Slow mode has lasted under rho = 16 rounds the cut is the measured queue, at
//! least cwnd / 8 and at most cwnd / 2; after that it is Reno's half.
//!
//! Kernel functions followed: `tcp_yeah_init`, `tcp_yeah_cong_avoid`, `tcp_yeah_ssthresh`;
//! `set_state`, `cwnd_event` and `pkts_acked` are Vegas's (`tcp_vegas_state`,
//! `tcp_vegas_cwnd_event`, `tcp_vegas_pkts_acked`, through an embedded `Vegas`, as the
//! kernel's `struct yeah` begins with a `struct vegas`), `undo_cwnd` is
//! `tcp_reno_undo_cwnd`. The constants are `#define`s in tcp_yeah.c, not module
//! parameters, so they are constants here too.
//!
//! Deviations:
//! - Vegas's `beg_snd_una` and `beg_snd_cwnd`, which YeAH writes at the end of a round
//!   but nothing reads, are not kept.
//! - Sequence numbers count segments (ops.rs); the round test `after(ack, beg_snd_nxt)`
//!   behaves identically.

use crate::helpers::{
    after, tcp_cong_avoid_ai, tcp_in_slow_start, tcp_is_cwnd_limited, tcp_slow_start,
};
use crate::ops::{AckSample, CaEvent, CaState, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, Params};
use crate::vegas::{Vegas, VegasConfig, RTT_NONE};

/// `TCP_YEAH_ALPHA`: the most segments queued before Slow mode decongests (paper's alpha).
pub const TCP_YEAH_ALPHA: u32 = 80;
/// `TCP_YEAH_GAMMA`: fraction of the queue given back when decongesting (Q / 1).
pub const TCP_YEAH_GAMMA: u32 = 1;
/// `TCP_YEAH_DELTA`: the loss cut is at least cwnd >> 3.
pub const TCP_YEAH_DELTA: u32 = 3;
/// `TCP_YEAH_EPSILON`: decongestion gives back at most cwnd >> 1.
pub const TCP_YEAH_EPSILON: u32 = 1;
/// `TCP_YEAH_PHY`: Slow mode when the queueing delay exceeds baseRTT / 8.
pub const TCP_YEAH_PHY: u32 = 8;
/// `TCP_YEAH_RHO`: Slow rounds after which a loss is cut as Reno's.
pub const TCP_YEAH_RHO: u32 = 16;
/// `TCP_YEAH_ZETA`: Fast rounds after which `reno_count` resets.
pub const TCP_YEAH_ZETA: u32 = 50;
/// `TCP_SCALABLE_AI_CNT` (tcp_yeah.c's own copy): Fast mode grows one segment per
/// min(cwnd, 100) acked.
pub const TCP_SCALABLE_AI_CNT: u32 = 100;
/// The cwnd clamp `tcp_yeah_init` sets so that its arithmetic fits 32 bits.
pub const YEAH_CWND_CLAMP: u32 = 0xffff_ffff / 128;

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "yeah",
    family: crate::registry::Family::LossDelay,
    summary: "YeAH: Scalable growth while the queue is small, Reno and decongestion when not",
    source: "Linux net/ipv4/tcp_yeah.c; Baiocchi, Castellani, Vacirca, PFLDnet 2007, Sec. 2",
    params: &[],
    build: |_: &Params| Box::new(Yeah::default()),
};

/// `struct yeah`.
#[derive(Clone, Debug)]
pub struct Yeah {
    /// `vegas`: the round and RTT bookkeeping (`struct vegas`, first member).
    vegas: Vegas,
    /// `lastQ`: the queue (segments) at the last round.
    last_q: u32,
    /// `doing_reno_now`: consecutive Slow rounds (0 in Fast mode).
    doing_reno_now: u32,
    /// `reno_count`: the estimated window of a competing Reno flow.
    reno_count: u32,
    /// `fast_count`: Fast rounds since `reno_count` was last reset.
    fast_count: u32,
}

impl Default for Yeah {
    fn default() -> Self {
        Yeah {
            vegas: VegasConfig::default().build(),
            last_q: 0,
            doing_reno_now: 0,
            reno_count: 2,
            fast_count: 0,
        }
    }
}

impl Yeah {
    /// The once-per-RTT part of `tcp_yeah_cong_avoid`, with more than two samples.
    fn yeah_round(&mut self, tp: &mut CcView) {
        let rtt = self.vegas.min_rtt;
        let base = self.vegas.base_rtt;
        // Q = cwnd (RTT - baseRTT) / RTT.
        let queue = (u64::from(tp.snd_cwnd) * u64::from(rtt - base) / u64::from(rtt)) as u32;
        if queue > TCP_YEAH_ALPHA || rtt - base > base / TCP_YEAH_PHY {
            // Slow mode.
            if queue > TCP_YEAH_ALPHA && tp.snd_cwnd > self.reno_count {
                // Precautionary decongestion: give the excess queue back.
                let reduction = (queue / TCP_YEAH_GAMMA).min(tp.snd_cwnd >> TCP_YEAH_EPSILON);
                tp.snd_cwnd -= reduction;
                tp.snd_cwnd = tp.snd_cwnd.max(self.reno_count);
                tp.snd_ssthresh = tp.snd_cwnd;
            }
            if self.reno_count <= 2 {
                self.reno_count = (tp.snd_cwnd >> 1).max(2);
            } else {
                self.reno_count += 1;
            }
            self.doing_reno_now = (self.doing_reno_now + 1).min(0xff_ffff);
        } else {
            // Fast mode.
            self.fast_count += 1;
            if self.fast_count > TCP_YEAH_ZETA {
                self.reno_count = 2;
                self.fast_count = 0;
            }
            self.doing_reno_now = 0;
        }
        self.last_q = queue;
    }
}

impl CongestionOps for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    /// `tcp_yeah_init`.
    fn init(&mut self, tp: &mut CcView) {
        *self = Yeah::default();
        self.vegas.init(tp);
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(YEAH_CWND_CLAMP);
    }

    /// `tcp_vegas_pkts_acked`.
    fn pkts_acked(&mut self, tp: &mut CcView, sample: &AckSample) {
        self.vegas.pkts_acked(tp, sample);
    }

    /// `tcp_vegas_state`.
    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        self.vegas.set_state(tp, new_state);
    }

    /// `tcp_vegas_cwnd_event`.
    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        self.vegas.cwnd_event(tp, ev);
    }

    /// `tcp_yeah_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcView, ack: u64, acked: u32) {
        if !tcp_is_cwnd_limited(tp) {
            return;
        }
        let mut acked = acked;
        if tcp_in_slow_start(tp) {
            acked = tcp_slow_start(tp, acked);
        }
        if acked > 0 {
            let w = if self.doing_reno_now == 0 {
                tp.snd_cwnd.min(TCP_SCALABLE_AI_CNT) // Fast: Scalable
            } else {
                tp.snd_cwnd // Slow: Reno
            };
            tcp_cong_avoid_ai(tp, w, acked);
        }
        // Once per RTT (do_vegas).
        if after(ack, self.vegas.beg_snd_nxt) {
            if self.vegas.cnt_rtt > 2 {
                self.yeah_round(tp);
            }
            self.vegas.beg_snd_nxt = tp.snd_nxt;
            self.vegas.cnt_rtt = 0;
            self.vegas.min_rtt = RTT_NONE;
        }
    }

    /// `tcp_yeah_ssthresh`.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        let cwnd = tp.snd_cwnd;
        let reduction = if self.doing_reno_now < TCP_YEAH_RHO {
            // The measured queue, within [cwnd / 8, cwnd / 2].
            self.last_q
                .min((cwnd >> 1).max(2))
                .max(cwnd >> TCP_YEAH_DELTA)
        } else {
            (cwnd >> 1).max(2)
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        (cwnd as i32 - reduction as i32).max(2) as u32
    }

    fn info(&self) -> Vec<InfoField> {
        vec![
            ("queue_pkts", InfoValue::Num(self.last_q as f64)),
            (
                "mode",
                InfoValue::Label(if self.doing_reno_now == 0 {
                    "fast"
                } else {
                    "slow"
                }),
            ),
            ("reno_count", InfoValue::Num(self.reno_count as f64)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cwnd `cwnd` in congestion avoidance, cwnd-limited; a first round learns baseRTT
    /// 100 ms (three samples, Fast: Q = 0); the second round's three samples are
    /// `vrtt_us`, then the ACK that ends it.
    fn second_round(cwnd: u32, vrtt_us: u32) -> (Yeah, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = cwnd;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = Yeah::default();
        c.init(&mut tp); // beg_snd_nxt = 0
        tp.snd_nxt = 1000;
        round(&mut c, &mut tp, 100_000, 1); // ends at ack 1; next round ends past 1000
        tp.snd_nxt = 2000;
        tp.snd_cwnd_cnt = 0;
        round(&mut c, &mut tp, vrtt_us, 1001);
        (c, tp)
    }

    /// Three RTT samples of `vrtt_us` (the kernel adds 1 us; feed vrtt - 1), then a
    /// one-segment ACK at `ack`.
    fn round(c: &mut Yeah, tp: &mut CcView, vrtt_us: u32, ack: u64) {
        for _ in 0..3 {
            c.pkts_acked(
                tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: vrtt_us as i64 - 1,
                    in_flight: 100,
                    prior_in_flight: 100,
                },
            );
        }
        c.cong_avoid(tp, ack, 1);
    }

    #[test]
    fn yeah_small_queue_and_delay_is_fast_mode() {
        // cwnd 200, RTT 105 ms: Q = 200 * 5000 / 105000 = 9.5 -> 9 <= 80, and the queueing
        // delay 5000 <= 100000 / 8 = 12500: Fast (the second Fast round).
        let (c, _) = second_round(200, 105_000);
        assert_eq!((c.last_q, c.doing_reno_now, c.fast_count), (9, 0, 2));
    }

    #[test]
    fn yeah_queueing_delay_above_base_over_eight_is_slow_mode() {
        // RTT 115 ms: Q = 200 * 15000 / 115000 = 26.1 -> 26 <= 80, but 15000 > 12500: Slow.
        // No decongestion (Q <= 80); reno_count 2 -> max(200 >> 1, 2) = 100.
        let (c, tp) = second_round(200, 115_000);
        assert_eq!((c.last_q, c.doing_reno_now, c.reno_count), (26, 1, 100));
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (200, 50));
    }

    #[test]
    fn yeah_queue_above_alpha_is_given_back_at_once() {
        // cwnd 1000, RTT 110 ms: Q = 1000 * 10000 / 110000 = 90.9 -> 90 > 80, cwnd > 2:
        // reduction = min(90 / 1, 1000 >> 1) = 90: cwnd = ssthresh = 910; reno_count =
        // 910 >> 1 = 455.
        let (c, tp) = second_round(1000, 110_000);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (910, 910));
        assert_eq!((c.last_q, c.doing_reno_now, c.reno_count), (90, 1, 455));
    }

    #[test]
    fn yeah_decongestion_stops_at_reno_count() {
        // As above with reno_count 950 (a competing Reno flow's estimate): 1000 - 90 = 910
        // is raised to 950; reno_count then counts up: 951.
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 1000;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = Yeah::default();
        c.init(&mut tp);
        tp.snd_nxt = 1000;
        round(&mut c, &mut tp, 100_000, 1);
        c.reno_count = 950;
        tp.snd_nxt = 2000;
        round(&mut c, &mut tp, 110_000, 1001);
        assert_eq!(
            (tp.snd_cwnd, tp.snd_ssthresh, c.reno_count),
            (950, 950, 951)
        );
    }

    #[test]
    fn yeah_fast_mode_grows_as_scalable_and_slow_mode_as_reno() {
        // Fast at cwnd 1000: one segment per min(1000, 100) = 100 acked.
        let (mut c, mut tp) = second_round(1000, 101_000); // Q = 9, delay 1000: Fast
        assert_eq!(c.doing_reno_now, 0);
        tp.snd_cwnd_cnt = 0;
        c.cong_avoid(&mut tp, 1002, 100);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1001, 0));
        // Slow: one per cwnd acked; 100 acked only count.
        c.doing_reno_now = 1;
        c.cong_avoid(&mut tp, 1003, 100);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1001, 100));
    }

    #[test]
    fn yeah_reno_count_resets_after_zeta_fast_rounds() {
        // fast_count 50 before the round: the Fast round makes it 51 > 50: reno_count 2,
        // fast_count 0.
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 200;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = Yeah::default();
        c.init(&mut tp);
        c.fast_count = 49;
        c.reno_count = 40;
        tp.snd_nxt = 1000;
        round(&mut c, &mut tp, 100_000, 1); // Fast: 50, not yet
        assert_eq!((c.fast_count, c.reno_count), (50, 40));
        tp.snd_nxt = 2000;
        round(&mut c, &mut tp, 100_000, 1001);
        assert_eq!((c.fast_count, c.reno_count), (0, 2));
    }

    #[test]
    fn yeah_loss_cut_is_the_queue_within_an_eighth_and_a_half() {
        let mut c = Yeah::default();
        let tp = CcView {
            snd_cwnd: 200,
            ..CcView::new(1448, 0)
        };
        // Q 9 < 200 >> 3 = 25: cut 25, ssthresh 175.
        c.last_q = 9;
        assert_eq!(c.ssthresh(&tp), 175);
        // Q 60 in [25, 100]: cut 60, ssthresh 140.
        c.last_q = 60;
        assert_eq!(c.ssthresh(&tp), 140);
        // Q 150 > 100: cut 100, ssthresh 100.
        c.last_q = 150;
        assert_eq!(c.ssthresh(&tp), 100);
        // After 16 Slow rounds: Reno's half whatever Q.
        c.last_q = 9;
        c.doing_reno_now = 16;
        assert_eq!(c.ssthresh(&tp), 100);
    }

    #[test]
    fn yeah_loss_halves_reno_count_and_clears_fast_count() {
        let mut c = Yeah {
            reno_count: 455,
            fast_count: 7,
            ..Yeah::default()
        };
        let tp = CcView {
            snd_cwnd: 200,
            ..CcView::new(1448, 0)
        };
        c.ssthresh(&tp);
        assert_eq!((c.reno_count, c.fast_count), (227, 0));
    }

    #[test]
    fn yeah_does_not_judge_a_round_with_two_samples_or_fewer() {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 1000;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = Yeah::default();
        c.init(&mut tp);
        tp.snd_nxt = 1000;
        c.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 200_000,
                in_flight: 100,
                prior_in_flight: 100,
            },
        );
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!((c.last_q, c.fast_count, c.vegas.beg_snd_nxt), (0, 0, 1000));
        assert_eq!(c.vegas.cnt_rtt, 0);
    }

    #[test]
    fn yeah_init_clamps_cwnd() {
        let mut tp = CcView::new(1448, 0);
        Yeah::default().init(&mut tp);
        assert_eq!(tp.snd_cwnd_clamp, 33_554_431);
    }
}

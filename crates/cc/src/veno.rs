//! `veno`: TCP Veno as Linux runs it (net/ipv4/tcp_veno.c).
//!
//! Model (Fu and Liew, "TCP Veno: TCP Enhancement for Transmission Over Wireless Access
//! Networks", IEEE JSAC 21(2), 2003, Sec. II-III). Veno tells congestion losses from
//! random (wireless) ones by Vegas's backlog estimate N = Diff * BaseRTT = cwnd (RTT -
//! BaseRTT) / RTT, the segments the flow keeps queued (Eq. 1-2). Below beta = 3 segments
//! the path is "non-congestive": a loss is taken as random and cuts cwnd by only 1/5
//! (ssthresh = 4/5 cwnd), and cwnd grows as Reno's. At or above beta it is "congestive":
//! a loss halves cwnd, and congestion avoidance grows one segment every other RTT, to
//! stay longer near the knee. The kernel keeps N doubled (`V_PARAM_SHIFT` 1), so beta is
//! 6 in its units.
//!
//! Kernel functions followed: `veno_enable`, `veno_disable`, `tcp_veno_init`,
//! `tcp_veno_pkts_acked`, `tcp_veno_state`, `tcp_veno_cwnd_event`,
//! `tcp_veno_cong_avoid`, `tcp_veno_ssthresh`; `undo_cwnd` is `tcp_reno_undo_cwnd`. The
//! kernel's own choices are kept: RTT is the smallest sample since the last
//! `cong_avoid` (minRTT is reset on every ACK, not every RTT, and `cntrtt` is never
//! reset, so after the first three samples every ACK decides), and `diff` keeps the value
//! of the last decision for `ssthresh`.
//!
//! Deviations: none in the algorithm; `cntrtt` is a u32 (the kernel's u16 wraps after
//! 65535 samples, when for one sample out of 65536 Veno would act as Reno again).

use crate::helpers::{
    tcp_cong_avoid_ai, tcp_in_slow_start, tcp_is_cwnd_limited, tcp_reno_cong_avoid, tcp_slow_start,
};
use crate::ops::{AckSample, CaEvent, CaState, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, Params};

/// `V_PARAM_SHIFT`: N is kept with one fraction bit.
pub const V_PARAM_SHIFT: u32 = 1;
/// `beta`: 3 segments of backlog (<< V_PARAM_SHIFT) separate random from congestive loss.
pub const BETA: u32 = 3 << V_PARAM_SHIFT;
/// The "no sample yet" value of baseRTT and minRTT (us), as in the kernel.
const RTT_NONE: u32 = 0x7fff_ffff;

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "veno",
    family: crate::registry::Family::LossDelay,
    summary: "Veno: Reno whose loss response and growth depend on Vegas's backlog estimate",
    source: "Linux net/ipv4/tcp_veno.c; Fu and Liew, IEEE JSAC 2003, Sec. II-III",
    params: &[],
    build: |_: &Params| Box::new(Veno::default()),
};

/// `struct veno`.
#[derive(Clone, Debug)]
pub struct Veno {
    /// `doing_veno_now`: false outside Open (Reno then).
    doing_veno_now: bool,
    /// `cntrtt`: RTT samples since the last (re)start.
    cntrtt: u32,
    /// `minrtt` (us): smallest RTT since the last `cong_avoid`.
    minrtt: u32,
    /// `basertt` (us): smallest RTT since the last (re)start.
    basertt: u32,
    /// `inc`: in the congestive state, grow on the next full window.
    inc: bool,
    /// `diff`: the backlog N << 1 at the last decision.
    diff: u32,
}

impl Default for Veno {
    fn default() -> Self {
        Veno {
            doing_veno_now: true,
            cntrtt: 0,
            minrtt: RTT_NONE,
            basertt: RTT_NONE,
            inc: true,
            diff: 0,
        }
    }
}

impl Veno {
    /// `veno_enable`.
    fn veno_enable(&mut self) {
        self.doing_veno_now = true;
        self.minrtt = RTT_NONE;
    }

    /// `tcp_veno_init`.
    fn tcp_veno_init(&mut self) {
        self.basertt = RTT_NONE;
        self.inc = true;
        self.veno_enable();
    }
}

impl CongestionOps for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    fn init(&mut self, _tp: &mut CcView) {
        self.tcp_veno_init();
    }

    /// `tcp_veno_pkts_acked`: min-filter the RTT.
    fn pkts_acked(&mut self, _tp: &mut CcView, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Never a zero RTT.
        let vrtt = (sample.rtt_us.min(RTT_NONE as i64 - 1) as u32) + 1;
        self.basertt = self.basertt.min(vrtt);
        self.minrtt = self.minrtt.min(vrtt);
        self.cntrtt += 1;
    }

    /// `tcp_veno_state`.
    fn set_state(&mut self, _tp: &mut CcView, new_state: CaState) {
        if new_state == CaState::Open {
            self.veno_enable();
        } else {
            self.doing_veno_now = false;
        }
    }

    /// `tcp_veno_cwnd_event`: start afresh after idle.
    fn cwnd_event(&mut self, _tp: &mut CcView, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.tcp_veno_init();
        }
    }

    /// `tcp_veno_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        if !self.doing_veno_now {
            tcp_reno_cong_avoid(tp, acked);
            return;
        }
        if !tcp_is_cwnd_limited(tp) {
            return;
        }
        if self.cntrtt <= 2 {
            // Too few samples to judge: Reno.
            tcp_reno_cong_avoid(tp, acked);
        } else {
            // N << 1 = (cwnd - cwnd * baseRTT / RTT) << 1 (Eq. 1-2).
            let rtt = u64::from(self.minrtt);
            let target_cwnd = (u64::from(tp.snd_cwnd) * u64::from(self.basertt)) << V_PARAM_SHIFT;
            let target_cwnd = target_cwnd / rtt;
            self.diff = (tp.snd_cwnd << V_PARAM_SHIFT).wrapping_sub(target_cwnd as u32);
            self.veno_grow(tp, acked);
            if tp.snd_cwnd < 2 {
                tp.snd_cwnd = 2;
            } else if tp.snd_cwnd > tp.snd_cwnd_clamp {
                tp.snd_cwnd = tp.snd_cwnd_clamp;
            }
        }
        // A fresh minimum for the next decision.
        self.minrtt = RTT_NONE;
    }

    /// `tcp_veno_ssthresh`: random loss (N < beta) cuts 1/5, congestive loss 1/2.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        if self.diff < BETA {
            (tp.snd_cwnd * 4 / 5).max(2)
        } else {
            (tp.snd_cwnd >> 1).max(2)
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
            ("base_rtt_ms", InfoValue::Num(ms(self.basertt))),
            (
                "backlog_pkts",
                InfoValue::Num(self.diff as f64 / (1 << V_PARAM_SHIFT) as f64),
            ),
            (
                "congestive",
                InfoValue::Num(if self.diff >= BETA { 1.0 } else { 0.0 }),
            ),
        ]
    }
}

impl Veno {
    /// The growth half of `tcp_veno_cong_avoid`, once `diff` is known.
    fn veno_grow(&mut self, tp: &mut CcView, acked: u32) {
        let mut acked = acked;
        if tcp_in_slow_start(tp) {
            acked = tcp_slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        if self.diff < BETA {
            // Non-congestive: one segment per RTT, as Reno.
            let w = tp.snd_cwnd;
            tcp_cong_avoid_ai(tp, w, acked);
        } else if tp.snd_cwnd_cnt >= tp.snd_cwnd {
            // Congestive: one segment every other RTT.
            if self.inc && tp.snd_cwnd < tp.snd_cwnd_clamp {
                tp.snd_cwnd += 1;
                self.inc = false;
            } else {
                self.inc = true;
            }
            tp.snd_cwnd_cnt = 0;
        } else {
            tp.snd_cwnd_cnt += acked;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cwnd 100 in congestion avoidance, cwnd-limited, baseRTT 100 ms learnt from three
    /// samples (so Veno decides from now on), and the ACK that carried them processed
    /// (diff 0; it clears minRTT, so the next decision sees only the next sample); its
    /// Reno count is cleared.
    fn flow() -> (Veno, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 100;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = Veno::default();
        c.init(&mut tp);
        for _ in 0..3 {
            rtt(&mut c, &mut tp, 100_000);
        }
        c.cong_avoid(&mut tp, 0, 1);
        assert_eq!((c.diff, c.minrtt), (0, RTT_NONE));
        tp.snd_cwnd_cnt = 0;
        (c, tp)
    }

    /// One RTT sample of `vrtt_us` (the kernel adds 1 us; feed vrtt - 1).
    fn rtt(c: &mut Veno, tp: &mut CcView, vrtt_us: u32) {
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

    /// An ACK of one segment whose RTT is `vrtt_us`.
    fn ack(c: &mut Veno, tp: &mut CcView, vrtt_us: u32) {
        rtt(c, tp, vrtt_us);
        c.cong_avoid(tp, 1, 1);
    }

    #[test]
    fn veno_backlog_below_three_segments_is_non_congestive() {
        // cwnd 100, base 100 ms, RTT 102 ms: target = (100 * 100000 << 1) / 102000 =
        // 20000000 / 102000 = 196; diff = 200 - 196 = 4 (N = 2 < beta 3).
        // (N = 100 * 2 / 102 = 1.96.) ssthresh cuts 1/5: 100 * 4 / 5 = 80.
        let (mut c, mut tp) = flow();
        ack(&mut c, &mut tp, 102_000);
        assert_eq!(c.diff, 4);
        assert_eq!(c.ssthresh(&tp), 80);
    }

    #[test]
    fn veno_backlog_of_three_segments_or_more_is_congestive() {
        // RTT 105 ms: target = 20000000 / 105000 = 190; diff = 10 (N = 5; 100 * 5 / 105 =
        // 4.76 >= 3). ssthresh halves: 50. At RTT 103 ms: 20000000 / 103000 = 194, diff 6 =
        // beta exactly: congestive too.
        let (mut c, mut tp) = flow();
        ack(&mut c, &mut tp, 105_000);
        assert_eq!(c.diff, 10);
        assert_eq!(c.ssthresh(&tp), 50);
        ack(&mut c, &mut tp, 103_000);
        assert_eq!(c.diff, 6);
        assert_eq!(c.ssthresh(&tp), 50);
    }

    #[test]
    fn veno_non_congestive_growth_is_reno() {
        // diff 4: tcp_cong_avoid_ai(100): 100 ACKs of one segment add one.
        let (mut c, mut tp) = flow();
        for _ in 0..99 {
            ack(&mut c, &mut tp, 102_000);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (100, 99));
        ack(&mut c, &mut tp, 102_000);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (101, 0));
    }

    #[test]
    fn veno_congestive_growth_is_one_segment_every_other_window() {
        // diff >= 6 throughout (RTT 110 ms). cnt is checked before it counts: 100 ACKs
        // reach cnt 100, the 101st finds cnt >= cwnd: inc was set, cwnd 101, inc cleared.
        let (mut c, mut tp) = flow();
        for _ in 0..101 {
            ack(&mut c, &mut tp, 110_000);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt, c.inc), (101, 0, false));
        // The next window (102 ACKs at cwnd 101) only sets inc again.
        for _ in 0..102 {
            ack(&mut c, &mut tp, 110_000);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt, c.inc), (101, 0, true));
        // The one after grows.
        for _ in 0..102 {
            ack(&mut c, &mut tp, 110_000);
        }
        assert_eq!((tp.snd_cwnd, c.inc), (102, false));
    }

    #[test]
    fn veno_acts_as_reno_with_two_samples_or_fewer() {
        // Two samples at 200 ms (N would be 50): no decision, diff stays 0, Reno counts.
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 100;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = Veno::default();
        c.init(&mut tp);
        rtt(&mut c, &mut tp, 100_000);
        ack(&mut c, &mut tp, 200_000);
        assert_eq!((c.diff, tp.snd_cwnd_cnt), (0, 1));
        assert_eq!(c.ssthresh(&tp), 80);
    }

    #[test]
    fn veno_min_rtt_is_reset_after_every_ack() {
        let (mut c, mut tp) = flow();
        ack(&mut c, &mut tp, 110_000);
        assert_eq!(c.minrtt, RTT_NONE);
        assert_eq!(c.basertt, 100_000);
    }

    #[test]
    fn veno_is_reno_outside_open_and_restarts_after_idle() {
        let (mut c, mut tp) = flow();
        c.set_state(&mut tp, CaState::Recovery);
        assert!(!c.doing_veno_now);
        c.set_state(&mut tp, CaState::Open);
        assert!(c.doing_veno_now);
        c.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!((c.basertt, c.inc), (RTT_NONE, true));
    }
}

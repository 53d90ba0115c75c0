//! `illinois`: TCP-Illinois as Linux runs it (net/ipv4/tcp_illinois.c).
//!
//! Model (Liu, Basar and Srikant, "TCP-Illinois: A Loss and Delay-Based Congestion
//! Control Algorithm for High-Speed Networks", VALUETOOLS 2006 / Perf. Eval. 2008,
//! Sec. 3). AIMD whose increase alpha and decrease beta depend on the average queueing
//! delay da = (mean RTT of the last round) - baseRTT relative to the largest seen,
//! dm = maxRTT - baseRTT. Once per RTT: alpha = ALPHA_MAX (10 segments per RTT) while
//! da <= d1 = dm / 100, else alpha = k1 / (k2 + da), falling to ALPHA_MIN (0.3) at
//! da = dm (the paper's concave curve, Eq. 2); beta = BETA_MIN (1/8) while da <= d2 =
//! dm / 10, BETA_MAX (1/2) from d3 = 8 dm / 10, linear in between (Eq. 3). After the
//! delay has been above d1, alpha returns to ALPHA_MAX only after `theta` consecutive
//! low-delay rounds. Below `win_thresh` segments both are Reno's (1 and 1/2). In
//! congestion avoidance cwnd += alpha / cwnd per acked segment; on loss ssthresh =
//! cwnd - beta * cwnd. Fixed point: alpha in 1/128 (`ALPHA_SHIFT` 7), beta in 1/64
//! (`BETA_SHIFT` 6).
//!
//! Kernel functions followed: `rtt_reset`, `tcp_illinois_init`, `tcp_illinois_acked`,
//! `max_delay`, `avg_delay`, `alpha`, `beta`, `update_params`, `tcp_illinois_state`,
//! `tcp_illinois_cong_avoid`, `tcp_illinois_ssthresh`, `tcp_illinois_info`; `undo_cwnd`
//! is `tcp_reno_undo_cwnd`.
//!
//! Deviations:
//! - `cnt_rtt` is a u32 (the kernel's is u16, which would wrap after 65535 RTT samples
//!   in one round, a window no experiment here reaches).
//! - `acked` is taken from `AckSample::pkts_acked` as in current kernels
//!   (`struct ack_sample`), saturated to the kernel's u16.

use crate::helpers::{after, tcp_in_slow_start, tcp_is_cwnd_limited, tcp_slow_start};
use crate::ops::{AckSample, CaState, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

/// `ALPHA_SHIFT`: alpha is kept in 1/128 segments per RTT.
pub const ALPHA_SHIFT: u32 = 7;
/// `ALPHA_SCALE`.
pub const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// `ALPHA_MIN` ~= 0.3: increase under the heaviest queueing (3 * 128 / 10 = 38).
pub const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// `ALPHA_MAX` = 10.0: increase while the queue is (nearly) empty.
pub const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// `ALPHA_BASE` = 1.0: Reno's increase.
pub const ALPHA_BASE: u32 = ALPHA_SCALE;
/// `RTT_MAX` (us): samples are capped so that dm * ALPHA_MAX fits 32 bits (~3.3 s).
pub const RTT_MAX: u32 = u32::MAX / ALPHA_MAX;
/// `BETA_SHIFT`: beta is kept in 1/64.
pub const BETA_SHIFT: u32 = 6;
/// `BETA_SCALE`.
pub const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// `BETA_MIN` = 1/8: decrease when the loss came with little queueing.
pub const BETA_MIN: u32 = BETA_SCALE / 8;
/// `BETA_MAX` = 1/2: Reno's decrease, under heavy queueing.
pub const BETA_MAX: u32 = BETA_SCALE / 2;
/// `BETA_BASE`.
pub const BETA_BASE: u32 = BETA_MAX;

const I32_MAX: f64 = i32::MAX as f64;

static PARAMS: [ParamSpec; 2] = [
    ParamSpec {
        name: "win_thresh",
        kind: ParamKind::Int,
        default: 15.0,
        min: 0.0,
        max: I32_MAX,
        doc: "window (segments) below which alpha and beta are Reno's (tcp_illinois.c default 15)",
    },
    ParamSpec {
        name: "theta",
        kind: ParamKind::Int,
        default: 5.0,
        min: 0.0,
        max: 255.0,
        doc: "low-delay rounds before alpha returns to its maximum (tcp_illinois.c default 5)",
    },
];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "illinois",
    family: crate::registry::Family::LossDelay,
    summary: "Illinois: loss-based AIMD with alpha/beta set by queueing delay",
    source: "Linux net/ipv4/tcp_illinois.c; Liu, Basar, Srikant 2006/2008, Sec. 3",
    params: &PARAMS,
    build: |p: &Params| Box::new(IllinoisConfig::from_params(p).build()),
};

/// Illinois's tunables (the module parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IllinoisConfig {
    pub win_thresh: u32,
    pub theta: u32,
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        IllinoisConfig {
            win_thresh: 15,
            theta: 5,
        }
    }
}

impl IllinoisConfig {
    pub fn from_params(p: &Params) -> Self {
        IllinoisConfig {
            win_thresh: p.get_u32("win_thresh"),
            theta: p.get_u32("theta"),
        }
    }
    pub fn build(&self) -> Illinois {
        Illinois {
            cfg: *self,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: 0x7fff_ffff,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
            last_da: None,
        }
    }
}

/// `struct illinois`.
#[derive(Clone, Debug)]
pub struct Illinois {
    cfg: IllinoisConfig,
    /// `sum_rtt`, `cnt_rtt`: RTT samples (us) of the current round.
    sum_rtt: u64,
    cnt_rtt: u32,
    /// `base_rtt`, `max_rtt` (us): smallest and largest RTT ever seen.
    base_rtt: u32,
    max_rtt: u32,
    /// `end_seq`: right edge of the current round.
    end_seq: u64,
    /// `alpha` (1/128 segments per RTT), `beta` (1/64).
    alpha: u32,
    beta: u32,
    /// `acked`: segments acked by the current ACK.
    acked: u16,
    /// `rtt_above`: the average delay has gone above d1.
    rtt_above: bool,
    /// `rtt_low`: consecutive rounds below d1 since then.
    rtt_low: u8,
    /// Not in the kernel: the last average queueing delay (us), for `info`.
    last_da: Option<u32>,
}

impl Illinois {
    /// `rtt_reset`: start a new round at snd_nxt.
    fn rtt_reset(&mut self, tp: &CcView) {
        self.end_seq = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// `max_delay`: dm, the largest queueing delay seen (us).
    fn max_delay(&self) -> u32 {
        self.max_rtt.saturating_sub(self.base_rtt)
    }

    /// `avg_delay`: da, the round's average queueing delay (us).
    fn avg_delay(&self) -> u32 {
        ((self.sum_rtt / self.cnt_rtt as u64) as u32).saturating_sub(self.base_rtt)
    }

    /// `alpha`: additive increase for average delay `da` and maximum `dm`.
    fn alpha(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100; // low threshold
        if da <= d1 {
            // Never left the low-delay zone: full speed.
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Wait theta good rounds before returning to full speed.
            self.rtt_low = self.rtt_low.wrapping_add(1);
            if (self.rtt_low as u32) < self.cfg.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        // alpha = k1 / (k2 + da) with k1 = (dm - d1) amin amax / (amax - amin) and
        // k2 = (dm - d1) amin / (amax - amin) - d1, rewritten over (dm - d1), (da - d1).
        let dm = dm - d1;
        let da = da - d1;
        (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN)
    }

    /// `update_params`: once per round.
    fn update_params(&mut self, tp: &CcView) {
        if tp.snd_cwnd < self.cfg.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_delay();
            let da = self.avg_delay();
            self.alpha = self.alpha(da, dm);
            self.beta = beta(da, dm);
            self.last_da = Some(da);
        }
        self.rtt_reset(tp);
    }
}

/// `beta`: multiplicative decrease for average delay `da` and maximum `dm`:
/// BETA_MIN up to d2 = dm / 10, BETA_MAX from d3 = 8 dm / 10, linear in between
/// (b = k3 + k4 da, k3 = (bmin d3 - bmax d2) / (d3 - d2), k4 = (bmax - bmin) / (d3 - d2)).
fn beta(da: u32, dm: u32) -> u32 {
    let d2 = dm / 10;
    if da <= d2 {
        return BETA_MIN;
    }
    let d3 = (8 * dm) / 10;
    if da >= d3 || d3 <= d2 {
        return BETA_MAX;
    }
    (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2)
}

impl CongestionOps for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    /// `tcp_illinois_init`.
    fn init(&mut self, tp: &mut CcView) {
        *self = self.cfg.build();
        self.rtt_reset(tp);
    }

    /// `tcp_illinois_acked`: RTT statistics of the round.
    fn pkts_acked(&mut self, _tp: &mut CcView, sample: &AckSample) {
        self.acked = sample.pkts_acked.min(u16::MAX as u32) as u16;
        // Duplicate ACK: no RTT sample.
        if sample.rtt_us < 0 {
            return;
        }
        // Cap bogus values so the alpha arithmetic cannot wrap.
        let rtt = sample.rtt_us.min(RTT_MAX as i64) as u32;
        self.base_rtt = self.base_rtt.min(rtt);
        self.max_rtt = self.max_rtt.max(rtt);
        self.cnt_rtt += 1;
        self.sum_rtt += rtt as u64;
    }

    /// `tcp_illinois_state`: an RTO returns to Reno's alpha and beta.
    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tp);
        }
    }

    /// `tcp_illinois_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcView, ack: u64, acked: u32) {
        if after(ack, self.end_seq) {
            self.update_params(tp);
        }
        // RFC 2861: grow only while cwnd limits sending.
        if !tcp_is_cwnd_limited(tp) {
            return;
        }
        if tcp_in_slow_start(tp) {
            tcp_slow_start(tp, acked);
        } else {
            // snd_cwnd_cnt counts segments since the last increment; cwnd += alpha / cwnd
            // per segment, applied in whole segments.
            tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.wrapping_add(self.acked as u32);
            self.acked = 1;
            let delta = ((tp.snd_cwnd_cnt as u64 * self.alpha as u64) >> ALPHA_SHIFT) as u32;
            if delta >= tp.snd_cwnd {
                tp.snd_cwnd = (tp.snd_cwnd + delta / tp.snd_cwnd).min(tp.snd_cwnd_clamp);
                tp.snd_cwnd_cnt = 0;
            }
        }
    }

    /// `tcp_illinois_ssthresh`: cwnd - beta * cwnd, at least 2.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        let cut = ((tp.snd_cwnd as u64 * self.beta as u64) >> BETA_SHIFT) as u32;
        (tp.snd_cwnd - cut).max(2)
    }

    fn info(&self) -> Vec<InfoField> {
        let base = if self.base_rtt == 0x7fff_ffff {
            f64::NAN
        } else {
            self.base_rtt as f64 / 1000.0
        };
        vec![
            (
                "alpha",
                InfoValue::Num(self.alpha as f64 / ALPHA_SCALE as f64),
            ),
            ("beta", InfoValue::Num(self.beta as f64 / BETA_SCALE as f64)),
            (
                "avg_delay_ms",
                InfoValue::Num(self.last_da.map_or(f64::NAN, |d| d as f64 / 1000.0)),
            ),
            (
                "max_delay_ms",
                InfoValue::Num(self.max_delay() as f64 / 1000.0),
            ),
            ("base_rtt_ms", InfoValue::Num(base)),
            ("cnt_rtt", InfoValue::Num(self.cnt_rtt as f64)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cwnd 100 in congestion avoidance, not cwnd-limited (so rounds update alpha/beta
    /// without growing cwnd).
    fn flow() -> (Illinois, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 100;
        tp.snd_ssthresh = 50;
        let mut c = IllinoisConfig::default().build();
        c.init(&mut tp);
        (c, tp)
    }

    /// One round: RTT samples, then the ACK that passes end_seq.
    fn round(c: &mut Illinois, tp: &mut CcView, rtts_us: &[i64]) {
        for &rtt_us in rtts_us {
            c.pkts_acked(
                tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us,
                    in_flight: 100,
                    prior_in_flight: 100,
                },
            );
        }
        tp.snd_nxt += 100;
        let ack = c.end_seq + 1;
        c.cong_avoid(tp, ack, 1);
    }

    #[test]
    fn illinois_fixed_point_constants_match_the_kernel() {
        // 3 * 128 / 10 = 38 (0.297); 10 * 128 = 1280; 64 / 8 = 8; 64 / 2 = 32;
        // RTT_MAX = 4294967295 / 1280 = 3355443 us.
        assert_eq!(
            (ALPHA_MIN, ALPHA_MAX, BETA_MIN, BETA_MAX, RTT_MAX),
            (38, 1280, 8, 32, 3_355_443)
        );
    }

    #[test]
    fn illinois_alpha_at_zero_delay_is_alpha_max() {
        // Equal samples: dm = da = 0 <= d1 = 0 and never above: alpha = ALPHA_MAX (10.0);
        // beta: da = 0 <= d2 = 0: BETA_MIN (1/8).
        let (mut c, mut tp) = flow();
        round(&mut c, &mut tp, &[100_000, 100_000, 100_000]);
        assert_eq!((c.alpha, c.beta), (ALPHA_MAX, BETA_MIN));
    }

    #[test]
    fn illinois_alpha_and_beta_follow_the_average_queueing_delay() {
        // base 100 ms, max 200 ms: dm = 100000, d1 = 1000, d2 = 10000, d3 = 80000.
        // Round mean 150 ms: da = 50000.
        // alpha = 99000 * 1280 / (99000 + 49000 * 1242 / 38)
        //       = 126720000 / (99000 + 1601526) = 126720000 / 1700526 = 74.5 -> 74 (0.58);
        // beta = (8 * 80000 - 32 * 10000 + 24 * 50000) / 70000 = 1520000 / 70000 = 21.7 -> 21.
        let (mut c, mut tp) = flow();
        round(&mut c, &mut tp, &[100_000, 200_000]);
        assert_eq!((c.alpha, c.beta), (74, 21));
        assert_eq!(c.last_da, Some(50_000));
    }

    #[test]
    fn illinois_beta_at_max_delay_is_beta_max_and_alpha_is_alpha_min() {
        // Round 1 learns base 100 ms, max 200 ms. Round 2 averages 200 ms: da = dm = 100000
        // >= d3: beta = BETA_MAX (1/2). alpha = 99000 * 1280 / (99000 + 99000 * 1242 / 38)
        // = 126720000 / (99000 + 3235736) = 126720000 / 3334736 = 38.00 -> 38 = ALPHA_MIN.
        let (mut c, mut tp) = flow();
        round(&mut c, &mut tp, &[100_000, 200_000]);
        round(&mut c, &mut tp, &[200_000, 200_000]);
        assert_eq!((c.alpha, c.beta), (ALPHA_MIN, BETA_MAX));
    }

    #[test]
    fn illinois_alpha_returns_to_max_only_after_theta_low_delay_rounds() {
        // After a congested round (alpha 74), rounds at 100.5 ms (da = 500 <= d1 = 1000)
        // count rtt_low 1..4 < theta 5 and keep alpha 74; the 5th restores ALPHA_MAX.
        let (mut c, mut tp) = flow();
        round(&mut c, &mut tp, &[100_000, 200_000]);
        for _ in 0..4 {
            round(&mut c, &mut tp, &[100_500]);
            assert_eq!((c.alpha, c.beta), (74, BETA_MIN));
        }
        round(&mut c, &mut tp, &[100_500]);
        assert_eq!(c.alpha, ALPHA_MAX);
    }

    #[test]
    fn illinois_uses_reno_alpha_and_beta_below_win_thresh() {
        let (mut c, mut tp) = flow();
        tp.snd_cwnd = 14; // < win_thresh 15
        round(&mut c, &mut tp, &[100_000, 200_000]);
        assert_eq!((c.alpha, c.beta), (ALPHA_BASE, BETA_BASE));
    }

    #[test]
    fn illinois_ssthresh_cuts_beta_of_cwnd() {
        let (mut c, tp) = flow();
        // beta 1/2: 100 - (100 * 32 >> 6 = 50) = 50.
        c.beta = BETA_MAX;
        assert_eq!(c.ssthresh(&tp), 50);
        // beta 1/8: 100 - (800 >> 6 = 12) = 88.
        c.beta = BETA_MIN;
        assert_eq!(c.ssthresh(&tp), 88);
        // floor 2: cwnd 2 - (64 >> 6 = 1)... with beta 1/2: 2 - 1 = 1 -> 2.
        c.beta = BETA_MAX;
        let small = CcView { snd_cwnd: 2, ..tp };
        assert_eq!(c.ssthresh(&small), 2);
    }

    #[test]
    fn illinois_grows_alpha_segments_per_rtt_in_congestion_avoidance() {
        // alpha 10.0 at cwnd 100: per ACK of one segment snd_cwnd_cnt += 1 and
        // delta = cnt * 1280 >> 7 = 10 cnt; delta >= 100 at cnt = 10: cwnd += 100 / 100.
        // So 10 ACKs give +1 and a window of 100 ACKs gives +10 = alpha.
        let (mut c, mut tp) = flow();
        tp.is_cwnd_limited = true;
        tp.snd_nxt = 1000;
        c.end_seq = 1000; // stay inside one round
        for i in 0..10 {
            c.pkts_acked(
                &mut tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: 100_000,
                    in_flight: 100,
                    prior_in_flight: 100,
                },
            );
            c.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (101, 0));
        for i in 10..100 {
            c.pkts_acked(
                &mut tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: 100_000,
                    in_flight: 100,
                    prior_in_flight: 100,
                },
            );
            c.cong_avoid(&mut tp, i, 1);
        }
        // At cwnd 101, 10 segments give delta 100 < 101, so 11 are needed per increment:
        // 90 ACKs = 8 increments of 11 (88) with 2 left: cwnd 109, cnt 2.
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (109, 2));
    }

    #[test]
    fn illinois_rto_resets_to_reno_values() {
        let (mut c, mut tp) = flow();
        round(&mut c, &mut tp, &[100_000, 200_000]);
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!(
            (c.alpha, c.beta, c.rtt_above, c.cnt_rtt),
            (ALPHA_BASE, BETA_BASE, false, 0)
        );
    }
}

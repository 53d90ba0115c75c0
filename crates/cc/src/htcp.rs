//! `htcp`: H-TCP as Linux runs it (net/ipv4/tcp_htcp.c).
//!
//! Model (Leith and Shorten, "H-TCP: TCP for high-speed and long-distance networks",
//! PFLDnet 2004, Sec. 3-4; the kernel cites htcp3.pdf). AIMD whose increase grows with
//! the time since the last congestion event, delta: for the first delta_L = 1 s Reno's
//! alpha = 1, then alpha(delta) = 1 + 10 (delta - delta_L) + ((delta - delta_L) / 2)^2
//! segments per RTT (Eq. 3), scaled by minRTT / 100 ms so flows of different RTTs grow
//! alike in time ("RTT scaling", ratio clamped to [0.5, 10]). The decrease is adaptive:
//! beta = minRTT / maxRTT in [0.5, 0.8] (so a loss drains what the queue added), unless
//! the throughput achieved before the loss moved by more than 20 % since the last one
//! ("adaptive backoff"/bandwidth switch), when beta = 0.5 to converge fast. The increase
//! is alpha = 2 (1 - beta) alpha(delta), which keeps the average rate independent of beta
//! (Sec. 4). In congestion avoidance cwnd += alpha / cwnd per ACK. Fixed point: alpha and
//! beta in 1/128; times in jiffies.
//!
//! Kernel functions followed: `htcp_cong_time`, `htcp_ccount`, `htcp_reset`,
//! `htcp_cwnd_undo`, `measure_rtt`, `measure_achieved_throughput`, `htcp_beta_update`,
//! `htcp_alpha_update`, `htcp_param_update`, `htcp_recalc_ssthresh`, `htcp_cong_avoid`,
//! `htcp_init`, `htcp_state`.
//!
//! Deviations:
//! - Jiffies run at `CcView::hz` and start at 0 (ops.rs). The kernel marks
//!   `undo_last_cong` unset with 0, which its jiffies (starting at `INITIAL_JIFFIES`)
//!   never read in practice; ours do read 0 for a flow started at t = 0, so "unset" is
//!   an `Option` here, which behaves as the kernel does for every real time.
//! - `cur_Bi = packetcount * HZ / (now - lasttime)` is computed in 64 bits (the kernel's
//!   u32 product wraps above ~4.3 million packets per measurement at HZ = 1000).
//! - Everything else keeps the kernel's widths: `beta` is a u8 (the ratio is truncated
//!   to 8 bits before clamping, as there), `pkts_acked` a u16, and the increase test
//!   `snd_cwnd_cnt * alpha` a wrapping u32 product.

use crate::helpers::{tcp_in_slow_start, tcp_is_cwnd_limited, tcp_slow_start};
use crate::ops::{
    msecs_to_jiffies, usecs_to_jiffies, AckSample, CaState, CcView, CongestionOps, InfoField,
    InfoValue,
};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

/// `ALPHA_BASE`: 1.0 in 1/128 (Reno's increase).
pub const ALPHA_BASE: u32 = 1 << 7;
/// `BETA_MIN`: 0.5 in 1/128, the decrease after a bandwidth change or without RTT data.
pub const BETA_MIN: u8 = 1 << 6;
/// `BETA_MAX`: 0.8 in 1/128 (102.4, truncated), the gentlest decrease.
pub const BETA_MAX: u8 = 102;

static PARAMS: [ParamSpec; 2] = [
    ParamSpec {
        name: "use_rtt_scaling",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "scale the increase by minRTT / 100 ms, clamped to [0.5, 10] (tcp_htcp.c default 1)",
    },
    ParamSpec {
        name: "use_bandwidth_switch",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "back off by 0.5 when the throughput before a loss moved by more than 20 % (tcp_htcp.c default 1)",
    },
];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "htcp",
    family: crate::registry::Family::Loss,
    summary: "H-TCP: increase grows with the time since the last loss; beta = minRTT/maxRTT",
    source: "Linux net/ipv4/tcp_htcp.c; Leith and Shorten, PFLDnet 2004, Sec. 3-4",
    params: &PARAMS,
    build: |p: &Params| Box::new(HtcpConfig::from_params(p).build()),
};

/// H-TCP's tunables (the module parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtcpConfig {
    pub use_rtt_scaling: bool,
    pub use_bandwidth_switch: bool,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig {
            use_rtt_scaling: true,
            use_bandwidth_switch: true,
        }
    }
}

impl HtcpConfig {
    pub fn from_params(p: &Params) -> Self {
        HtcpConfig {
            use_rtt_scaling: p.get_bool("use_rtt_scaling"),
            use_bandwidth_switch: p.get_bool("use_bandwidth_switch"),
        }
    }
    pub fn build(&self) -> Htcp {
        Htcp {
            cfg: *self,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: None,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }
}

/// `struct htcp`. Times and RTTs in jiffies, bandwidths in packets per second.
#[derive(Clone, Debug)]
pub struct Htcp {
    cfg: HtcpConfig,
    /// `alpha`: segments per RTT << 7.
    alpha: u32,
    /// `beta`: the decrease factor << 7.
    beta: u8,
    /// `modeswitch`: adaptive beta only after one congestion event with RTT data.
    modeswitch: bool,
    /// `pkts_acked`: segments the current ACK acknowledged (counted in Open only).
    pkts_acked: u16,
    /// `packetcount`: segments acked since `lasttime`.
    packetcount: u32,
    /// `minRTT`, `maxRTT` (jiffies); 0 before the first sample.
    min_rtt: u32,
    max_rtt: u32,
    /// `last_cong` (jiffies): when the current congestion epoch began.
    last_cong: u32,
    /// `undo_last_cong`, `undo_maxRTT`, `undo_old_maxB`: what `htcp_reset` saved.
    undo_last_cong: Option<u32>,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    /// `minB`, `maxB`, `old_maxB`, `Bi`: throughput estimates (packets/s).
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    /// `lasttime` (jiffies): start of the current throughput measurement.
    lasttime: u32,
}

/// `between(seq1, seq2, seq3)` (include/net/tcp.h): seq2 <= seq1 <= seq3 in u32 sequence
/// space.
fn between(seq1: u32, seq2: u32, seq3: u32) -> bool {
    seq3.wrapping_sub(seq2) >= seq1.wrapping_sub(seq2)
}

impl Htcp {
    /// `htcp_cong_time`: jiffies since the congestion epoch began (delta).
    fn htcp_cong_time(&self, now: u32) -> u32 {
        now.wrapping_sub(self.last_cong)
    }

    /// `htcp_ccount`: minimum RTTs since the congestion epoch began.
    fn htcp_ccount(&self, now: u32) -> u32 {
        self.htcp_cong_time(now) / self.min_rtt
    }

    /// `htcp_reset`: a congestion event; save what undo restores.
    fn htcp_reset(&mut self, now: u32) {
        self.undo_last_cong = Some(self.last_cong);
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong = now;
    }

    /// `measure_rtt`, `srtt` being one RTT sample in jiffies.
    fn measure_rtt(&mut self, tp: &CcView, srtt: u32) {
        if self.min_rtt > srtt || self.min_rtt == 0 {
            self.min_rtt = srtt;
        }
        if tp.ca_state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            // Only modest steps up: a jump of more than 20 ms is taken as an outlier.
            if self.max_rtt < srtt && srtt <= self.max_rtt + msecs_to_jiffies(20, tp.hz) {
                self.max_rtt = srtt;
            }
        }
    }

    /// `htcp_beta_update`.
    fn htcp_beta_update(&mut self, min_rtt: u32, max_rtt: u32, hz: u32) {
        if self.cfg.use_bandwidth_switch {
            let max_b = self.max_b;
            let old_max_b = self.old_max_b;
            self.old_max_b = self.max_b;
            // Throughput moved by more than 20 %: back off by half and start over.
            if !between(
                max_b.wrapping_mul(5),
                old_max_b.wrapping_mul(4),
                old_max_b.wrapping_mul(6),
            ) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && min_rtt > msecs_to_jiffies(10, hz) && max_rtt != 0 {
            self.beta = ((min_rtt << 7) / max_rtt) as u8;
            self.beta = self.beta.clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// `htcp_alpha_update`: alpha = 2 (1 - beta) alpha(delta), RTT-scaled.
    fn htcp_alpha_update(&mut self, now: u32, hz: u32) {
        let min_rtt = self.min_rtt;
        let mut factor: u32 = 1;
        let mut diff = self.htcp_cong_time(now);
        if diff > hz {
            // 1 + 10 (delta - delta_L) + ((delta - delta_L) / 2)^2, delta in seconds (Eq. 3).
            diff -= hz;
            factor = 1 + (10 * diff + ((diff / 2) * (diff / 2) / hz)) / hz;
        }
        if self.cfg.use_rtt_scaling && min_rtt != 0 {
            // (100 ms / minRTT) << 3, clamped to [0.5, 10] << 3.
            let scale = ((hz << 3) / (10 * min_rtt)).clamp(1 << 2, 10 << 3);
            factor = (factor << 3) / scale;
            if factor == 0 {
                factor = 1;
            }
        }
        self.alpha = 2 * factor * ((1 << 7) - self.beta as u32);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// `htcp_param_update`: at a congestion event, when maxRTT is best known.
    fn htcp_param_update(&mut self, now: u32, hz: u32) {
        let min_rtt = self.min_rtt;
        let max_rtt = self.max_rtt;
        self.htcp_beta_update(min_rtt, max_rtt, hz);
        self.htcp_alpha_update(now, hz);
        // Slowly fading memory of maxRTT, for routing changes.
        if min_rtt > 0 && max_rtt > min_rtt {
            self.max_rtt = min_rtt + ((max_rtt - min_rtt) * 95) / 100;
        }
    }
}

impl CongestionOps for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    /// `htcp_init`.
    fn init(&mut self, tp: &mut CcView) {
        *self = self.cfg.build();
        self.last_cong = tp.jiffies32();
    }

    /// `htcp_recalc_ssthresh`: ssthresh = beta * cwnd, at least 2.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        self.htcp_param_update(tp.jiffies32(), tp.hz);
        ((tp.snd_cwnd.wrapping_mul(self.beta as u32)) >> 7).max(2)
    }

    /// `htcp_cong_avoid`: cwnd += alpha / cwnd per ACK.
    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        if !tcp_is_cwnd_limited(tp) {
            return;
        }
        if tcp_in_slow_start(tp) {
            tcp_slow_start(tp, acked);
            return;
        }
        if (tp.snd_cwnd_cnt.wrapping_mul(self.alpha) >> 7) >= tp.snd_cwnd {
            if tp.snd_cwnd < tp.snd_cwnd_clamp {
                tp.snd_cwnd += 1;
            }
            tp.snd_cwnd_cnt = 0;
            self.htcp_alpha_update(tp.jiffies32(), tp.hz);
        } else {
            tp.snd_cwnd_cnt += self.pkts_acked as u32;
        }
        self.pkts_acked = 1;
    }

    /// `htcp_state`: a reduction starts a congestion epoch; returning to Open after an
    /// undone one restarts it now.
    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        match new_state {
            CaState::Open => {
                if self.undo_last_cong.is_some() {
                    self.last_cong = tp.jiffies32();
                    self.undo_last_cong = None;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => {
                self.htcp_reset(tp.jiffies32());
            }
            CaState::Disorder => {}
        }
    }

    /// `htcp_cwnd_undo`: the reduction was spurious; restore the epoch.
    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        if let Some(last_cong) = self.undo_last_cong.take() {
            self.last_cong = last_cong;
            self.max_rtt = self.undo_max_rtt;
            self.old_max_b = self.undo_old_max_b;
        }
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    /// `measure_achieved_throughput`.
    fn pkts_acked(&mut self, tp: &mut CcView, sample: &AckSample) {
        let now = tp.jiffies32();
        if tp.ca_state == CaState::Open {
            self.pkts_acked = sample.pkts_acked as u16;
        }
        if sample.rtt_us > 0 {
            self.measure_rtt(tp, usecs_to_jiffies(sample.rtt_us as u64, tp.hz) as u32);
        }
        if !self.cfg.use_bandwidth_switch {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount += sample.pkts_acked;
        let alpha_segments = match self.alpha >> 7 {
            0 => 1,
            a => a,
        };
        if self.packetcount >= tp.snd_cwnd.wrapping_sub(alpha_segments)
            && now.wrapping_sub(self.lasttime) >= self.min_rtt
            && self.min_rtt > 0
        {
            let cur_bi = (u64::from(self.packetcount) * u64::from(tp.hz)
                / u64::from(now.wrapping_sub(self.lasttime))) as u32;
            if self.htcp_ccount(now) <= 3 {
                // Just after a backoff: start the estimates afresh.
                self.min_b = cur_bi;
                self.max_b = cur_bi;
                self.bi = cur_bi;
            } else {
                self.bi = (3 * self.bi + cur_bi) / 4;
                if self.bi > self.max_b {
                    self.max_b = self.bi;
                }
                if self.min_b > self.max_b {
                    self.min_b = self.max_b;
                }
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    fn info(&self) -> Vec<InfoField> {
        vec![
            ("alpha", InfoValue::Num(self.alpha as f64 / 128.0)),
            ("beta", InfoValue::Num(self.beta as f64 / 128.0)),
            ("min_rtt_jiffies", InfoValue::Num(self.min_rtt as f64)),
            ("max_rtt_jiffies", InfoValue::Num(self.max_rtt as f64)),
            ("bw_pkts_per_s", InfoValue::Num(self.bi as f64)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow started at t = 0 (HZ 1000: a jiffy is 1 ms), cwnd 100 in congestion
    /// avoidance, cwnd-limited.
    fn flow(cfg: HtcpConfig) -> (Htcp, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 100;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = cfg.build();
        c.init(&mut tp);
        (c, tp)
    }

    fn ack(c: &mut Htcp, tp: &mut CcView, pkts: u32, rtt_us: i64) {
        c.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: pkts,
                rtt_us,
                in_flight: 100,
                prior_in_flight: 100,
            },
        );
    }

    /// alpha after `htcp_alpha_update` `cong_ms` after the epoch began, with `beta` and
    /// minRTT `min_rtt_ms`.
    fn alpha_at(cfg: HtcpConfig, cong_ms: u32, beta: u8, min_rtt_ms: u32) -> u32 {
        let (mut c, _) = flow(cfg);
        c.beta = beta;
        c.min_rtt = min_rtt_ms;
        c.htcp_alpha_update(cong_ms, 1000);
        c.alpha
    }

    #[test]
    fn htcp_alpha_is_reno_for_the_first_second() {
        // delta 500 ms <= delta_L = 1 s: factor 1; minRTT 100 ms: scale = 8000 / 1000 = 8,
        // factor = 8 / 8 = 1; alpha = 2 * 1 * (128 - 64) = 128 (1.0).
        assert_eq!(alpha_at(HtcpConfig::default(), 500, BETA_MIN, 100), 128);
    }

    #[test]
    fn htcp_alpha_grows_with_the_time_since_the_last_congestion_event() {
        // delta 3 s: diff = 2000 jiffies, factor = 1 + (10 * 2000 + 1000 * 1000 / 1000)
        // / 1000 = 1 + 21000 / 1000 = 22 (the paper's 1 + 10 * 2 + (2 / 2)^2 = 22).
        // minRTT 100 ms: scale 8, factor 22 * 8 / 8 = 22; alpha = 2 * 22 * 64 = 2816 (22.0).
        assert_eq!(alpha_at(HtcpConfig::default(), 3000, BETA_MIN, 100), 2816);
        // With beta 0.8 (102): alpha = 2 * 22 * (128 - 102) = 1144 (8.94 = 2 (1 - beta) 22).
        assert_eq!(alpha_at(HtcpConfig::default(), 3000, BETA_MAX, 100), 1144);
    }

    #[test]
    fn htcp_rtt_scaling_multiplies_alpha_by_min_rtt_over_100_ms_within_half_and_ten() {
        let cfg = HtcpConfig::default();
        // delta 3 s (factor 22), beta 0.5:
        // minRTT 50 ms: scale = 8000 / 500 = 16, factor = 176 / 16 = 11, alpha = 1408.
        assert_eq!(alpha_at(cfg, 3000, BETA_MIN, 50), 1408);
        // minRTT 20 ms: scale = 8000 / 200 = 40, factor = 176 / 40 = 4, alpha = 512.
        assert_eq!(alpha_at(cfg, 3000, BETA_MIN, 20), 512);
        // minRTT 5 ms: scale = 8000 / 50 = 160 -> 80 (ratio 0.1 clamped), factor = 176 / 80
        // = 2, alpha = 256.
        assert_eq!(alpha_at(cfg, 3000, BETA_MIN, 5), 256);
        // minRTT 500 ms: scale = 8000 / 5000 = 1 -> 4 (ratio 2 clamped), factor = 176 / 4
        // = 44, alpha = 5632.
        assert_eq!(alpha_at(cfg, 3000, BETA_MIN, 500), 5632);
        // Without RTT scaling minRTT does not matter: factor 22 at 20 ms, alpha = 2816.
        let off = HtcpConfig {
            use_rtt_scaling: false,
            ..cfg
        };
        assert_eq!(alpha_at(off, 3000, BETA_MIN, 20), 2816);
    }

    /// beta after `htcp_beta_update` with modeswitch on and the bandwidth switch off.
    fn beta_from(min_rtt: u32, max_rtt: u32) -> (u8, bool) {
        let (mut c, _) = flow(HtcpConfig {
            use_bandwidth_switch: false,
            ..HtcpConfig::default()
        });
        c.modeswitch = true;
        c.htcp_beta_update(min_rtt, max_rtt, 1000);
        (c.beta, c.modeswitch)
    }

    #[test]
    fn htcp_beta_is_the_rtt_ratio_clamped_to_half_and_four_fifths() {
        // 40 / 60 ms: (40 << 7) / 60 = 5120 / 60 = 85 (0.66).
        assert_eq!(beta_from(40, 60), (85, true));
        // 40 / 50 ms: 5120 / 50 = 102 (0.8) = BETA_MAX; 40 / 41: 124 -> clamped to 102.
        assert_eq!(beta_from(40, 50), (102, true));
        assert_eq!(beta_from(40, 41), (BETA_MAX, true));
        // 40 / 100 ms: 51 -> clamped to BETA_MIN 64.
        assert_eq!(beta_from(40, 100), (BETA_MIN, true));
        // minRTT 10 ms is not above msecs_to_jiffies(10) = 10: BETA_MIN.
        assert_eq!(beta_from(10, 12), (BETA_MIN, true));
    }

    #[test]
    fn htcp_first_loss_halves_and_the_next_uses_the_rtt_ratio() {
        // modeswitch starts off: the first ssthresh is beta 0.5: 100 * 64 >> 7 = 50.
        let (mut c, mut tp) = flow(HtcpConfig {
            use_bandwidth_switch: false,
            ..HtcpConfig::default()
        });
        c.min_rtt = 40;
        c.max_rtt = 60;
        assert_eq!(c.ssthresh(&tp), 50);
        // maxRTT fades: 40 + (60 - 40) * 95 / 100 = 40 + 19 = 59.
        assert_eq!(c.max_rtt, 59);
        // Second: beta = 5120 / 59 = 86; ssthresh = 100 * 86 >> 7 = 8600 / 128 = 67.
        tp.snd_cwnd = 100;
        assert_eq!(c.ssthresh(&tp), 67);
        assert_eq!(c.beta, 86);
    }

    #[test]
    fn htcp_bandwidth_switch_backs_off_by_half_when_throughput_moved_over_20_percent() {
        let (mut c, _) = flow(HtcpConfig::default());
        c.modeswitch = true;
        // maxB 100, old 100: 5 * 100 = 500 in [400, 600]: the RTT ratio applies (85).
        c.max_b = 100;
        c.old_max_b = 100;
        c.htcp_beta_update(40, 60, 1000);
        assert_eq!((c.beta, c.modeswitch, c.old_max_b), (85, true, 100));
        // maxB 130 against 100: 650 > 600: BETA_MIN and adaptive mode off.
        c.max_b = 130;
        c.htcp_beta_update(40, 60, 1000);
        assert_eq!((c.beta, c.modeswitch, c.old_max_b), (BETA_MIN, false, 130));
    }

    #[test]
    fn htcp_max_rtt_accepts_only_steps_of_at_most_20_ms() {
        let (mut c, mut tp) = flow(HtcpConfig::default());
        // 40 ms (40 jiffies): minRTT = maxRTT = 40. A 39.5 ms sample rounds up to 40.
        ack(&mut c, &mut tp, 1, 40_000);
        ack(&mut c, &mut tp, 1, 39_500);
        assert_eq!((c.min_rtt, c.max_rtt), (40, 40));
        // 70 > 40 + 20: ignored; 55 accepted; then 70 <= 55 + 20: accepted.
        ack(&mut c, &mut tp, 1, 70_000);
        assert_eq!(c.max_rtt, 40);
        ack(&mut c, &mut tp, 1, 55_000);
        assert_eq!(c.max_rtt, 55);
        ack(&mut c, &mut tp, 1, 70_000);
        assert_eq!(c.max_rtt, 70);
        // Outside Open maxRTT is not updated.
        tp.ca_state = CaState::Recovery;
        ack(&mut c, &mut tp, 1, 80_000);
        assert_eq!(c.max_rtt, 70);
    }

    #[test]
    fn htcp_measures_throughput_per_window_of_acks() {
        // cwnd 20, alpha 1: a measurement needs 20 - 1 = 19 packets and minRTT (100 ms).
        let (mut c, mut tp) = flow(HtcpConfig::default());
        tp.snd_cwnd = 20;
        tp.now_us = 100_000;
        ack(&mut c, &mut tp, 1, 100_000); // minRTT 100, packetcount 1
        tp.now_us = 200_000;
        ack(&mut c, &mut tp, 17, 100_000); // 18 < 19: nothing yet
        assert_eq!(c.bi, 0);
        ack(&mut c, &mut tp, 1, 100_000);
        // 19 packets in 200 ms: 19 * 1000 / 200 = 95/s; ccount = 200 / 100 = 2 <= 3:
        // minB = maxB = Bi = 95.
        assert_eq!((c.min_b, c.max_b, c.bi, c.packetcount), (95, 95, 95, 0));
        // At 500 ms (ccount 5): 20 packets in 300 ms = 66/s; Bi = (3 * 95 + 66) / 4 =
        // 351 / 4 = 87; maxB stays 95.
        tp.now_us = 500_000;
        ack(&mut c, &mut tp, 20, 100_000);
        assert_eq!((c.min_b, c.max_b, c.bi), (95, 95, 87));
    }

    #[test]
    fn htcp_grows_alpha_over_cwnd_per_ack_and_refreshes_alpha_at_each_increment() {
        // alpha 2.0 (256) at cwnd 100: the test (cnt * 256) >> 7 = 2 cnt >= 100 passes at
        // cnt 50, checked before counting: 50 ACKs count to 50, the 51st increments.
        let (mut c, mut tp) = flow(HtcpConfig::default());
        c.alpha = 256;
        c.min_rtt = 100;
        for i in 0..50 {
            c.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt, c.alpha), (100, 50, 256));
        c.cong_avoid(&mut tp, 50, 1);
        // At t = 0 (delta 0, factor 1, beta 0.5, minRTT 100 ms): alpha = 2 * 64 = 128.
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt, c.alpha), (101, 0, 128));
    }

    #[test]
    fn htcp_counts_the_segments_of_a_stretch_ack_once() {
        // An ACK of 3 segments in Open adds 3 to snd_cwnd_cnt, the next ACK 1.
        let (mut c, mut tp) = flow(HtcpConfig::default());
        ack(&mut c, &mut tp, 3, 100_000);
        c.cong_avoid(&mut tp, 3, 3);
        assert_eq!(tp.snd_cwnd_cnt, 3);
        c.cong_avoid(&mut tp, 4, 1);
        assert_eq!(tp.snd_cwnd_cnt, 4);
    }

    #[test]
    fn htcp_undo_restores_the_congestion_epoch() {
        let (mut c, mut tp) = flow(HtcpConfig::default());
        c.max_rtt = 70;
        c.old_max_b = 90;
        tp.now_us = 5_000_000;
        c.set_state(&mut tp, CaState::Recovery); // epoch restarts at 5000
        assert_eq!((c.last_cong, c.undo_last_cong), (5000, Some(0)));
        c.max_rtt = 60;
        c.old_max_b = 10;
        tp.prior_cwnd = 120;
        assert_eq!(c.undo_cwnd(&tp), 120);
        assert_eq!((c.last_cong, c.max_rtt, c.old_max_b), (0, 70, 90));
        assert_eq!(c.undo_last_cong, None);
    }

    #[test]
    fn htcp_epoch_restarts_when_recovery_ends() {
        let (mut c, mut tp) = flow(HtcpConfig::default());
        tp.now_us = 5_000_000;
        c.set_state(&mut tp, CaState::Recovery);
        tp.now_us = 5_300_000;
        c.set_state(&mut tp, CaState::Open);
        assert_eq!((c.last_cong, c.undo_last_cong), (5300, None));
    }
}

//! `nv`: TCP-NV (New Vegas) as Linux runs it (net/ipv4/tcp_nv.c).
//!
//! Model (Brakmo, "TCP-NV: An Update to TCP-Vegas", 2010, and the kernel's own
//! header; NV is meant for data centres where every flow runs it). Like Vegas, NV avoids
//! congestion before losses, but it compares rates rather than RTTs: on each ACK it
//! takes the delivery rate, data delivered over the (half-smoothed) RTT, and keeps the
//! largest of the round. Once per RTT it turns that rate into the window that would
//! carry it with no queue, cwnd_by_slope = max_rate * min_rtt, and allows nv_pad = 10
//! segments of queue on top: max_win = cwnd_by_slope + nv_pad. Above max_win, and only
//! with enough samples (60 ACKs, 30 in slow start, over at least 2 RTTs), it decreases
//! cwnd by 30 % of the excess (at least 2) and sets ssthresh to max_win ("rate-based
//! decrease"); at least nv_pad_buffer = 2 below it (with 20 samples) it allows growth
//! again; in between it holds. Growth is Reno's, slower after an RTO (the growth factor
//! goes negative: one segment per 2^k windows) until enough uncongested rounds pass.
//! Losses cut cwnd to 80 %. min_rtt is renewed every 5 s (randomised to [3.75, 6.25) s).
//!
//! The rate is `ack_sample.in_flight` as the kernel defines it (tcp_clean_rtx_queue:
//! `mss_cache * (delivered - rate->prior_delivered)`, bytes delivered during the sampled
//! segment's RTT), which the simulator passes as such; before it did, this port took
//! packets in flight before the ACK times the MSS.
//!
//! Kernel functions followed: `tcpnv_reset`, `tcpnv_init`, `tcpnv_cong_avoid`,
//! `tcpnv_recalc_ssthresh`, `tcpnv_state`, `tcpnv_acked`; `undo_cwnd` is
//! `tcp_reno_undo_cwnd`. The module parameters (`nv_pad`, `nv_reset_period`,
//! `nv_min_cwnd`) are `ParamSpec`s; the file's other tunables, plain statics there, are
//! constants here.
//!
//! Deviations:
//! - Randomness: the min_rtt reset period draws a random byte (`get_random_u8`); here it
//!   comes from a SplitMix64 stream (`bbr::rng::CycleRng`, as BBR's PROBE_BW phase)
//!   seeded by the `seed` parameter, which the engine fills per flow from the run seed,
//!   so runs stay deterministic. The byte is the draw's top 8 bits.
//! - No BPF sock_ops program supplies a base RTT (`BPF_SOCK_OPS_BASE_RTT`), so
//!   `nv_base_rtt` and `nv_lower_bound_rtt` are 0 as in the kernel without one, and
//!   `nv_get_bounded_rtt`, which then returns its argument, is not ported.
//! - `nv_catchup` is never set in tcp_nv.c (only cleared); its branch is not ported.
//! - Sequence numbers count segments (ops.rs): `bytes_acked >= (nv_min_cwnd - 1) * mss`
//!   is tested in segments and `nv_rtt_start_seq = snd_nxt + nv_min_cwnd * mss` moves by
//!   segments, which is exact as every segment is one MSS.
//! - Jiffies run at `CcView::hz` from 0 (ops.rs), in 32 bits with the kernel's
//!   `time_after_eq` wrap test (its `unsigned long` is 64 bits; 32 wrap after 24 days at
//!   HZ 1000).

use crate::bbr::rng::CycleRng;
use crate::helpers::{tcp_cong_avoid_ai, tcp_in_slow_start, tcp_is_cwnd_limited, tcp_slow_start};
use crate::ops::{
    AckSample, CaState, CcView, CongestionOps, InfoField, InfoValue, TCP_INFINITE_SSTHRESH,
};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

/// `nv_pad_buffer`: grow only while cwnd <= max_win - 2.
pub const NV_PAD_BUFFER: u32 = 2;
/// `nv_cong_dec_mult` = 30 * 128 / 100 = 38: decrease 30 % of the excess (<< 7).
pub const NV_CONG_DEC_MULT: u32 = 30 * 128 / 100;
/// `nv_ssthresh_factor` = 8: ssthresh = 8 * max_win / 8 on congestion.
pub const NV_SSTHRESH_FACTOR: u32 = 8;
/// `nv_rtt_factor` = 128: avg_rtt = 1/2 old + 1/2 new (in 1/256).
pub const NV_RTT_FACTOR: u64 = 128;
/// `nv_loss_dec_factor` = 819: on loss ssthresh = 80 % of cwnd (<< 10).
pub const NV_LOSS_DEC_FACTOR: u32 = 819;
/// `nv_cwnd_growth_rate_neg` = 8: uncongested rounds to double a slowed growth rate.
pub const NV_CWND_GROWTH_RATE_NEG: u32 = 8;
/// `nv_cwnd_growth_rate_pos` = 0: growth above Reno's is off (fixed like Reno).
pub const NV_CWND_GROWTH_RATE_POS: u32 = 0;
/// `nv_dec_eval_min_calls` = 60: samples before a decrease.
pub const NV_DEC_EVAL_MIN_CALLS: u8 = 60;
/// `nv_inc_eval_min_calls` = 20: samples before growth is allowed again.
pub const NV_INC_EVAL_MIN_CALLS: u8 = 20;
/// `nv_ssthresh_eval_min_calls` = 30: samples before ending slow start.
pub const NV_SSTHRESH_EVAL_MIN_CALLS: u8 = 30;
/// `nv_stop_rtt_cnt` = 10: stop growing after this many RTTs without a decision.
pub const NV_STOP_RTT_CNT: u8 = 10;
/// `nv_rtt_min_cnt` = 2: RTTs before a congestion decision.
pub const NV_RTT_MIN_CNT: u8 = 2;
/// `NV_INIT_RTT`: no RTT yet.
pub const NV_INIT_RTT: u32 = u32::MAX;
/// `NV_MIN_CWND`: the per-flow `nv_min_cwnd` starts here (and halves back to it).
pub const NV_MIN_CWND: u8 = 4;
/// `NV_MIN_CWND_GROW`: its step when one ACK covers a whole round (TSO, coalescing).
pub const NV_MIN_CWND_GROW: u8 = 2;
/// `NV_TSO_CWND_BOUND`: its bound (+1).
pub const NV_TSO_CWND_BOUND: u8 = 80;

static PARAMS: [ParamSpec; 4] = [
    ParamSpec {
        name: "nv_pad",
        kind: ParamKind::Int,
        default: 10.0,
        min: 0.0,
        max: 1_000_000.0,
        doc: "segments of queue allowed above the rate's window (tcp_nv.c default 10)",
    },
    ParamSpec {
        name: "nv_reset_period",
        kind: ParamKind::Int,
        default: 5.0,
        min: 1.0,
        max: 1_000_000.0,
        doc:
            "seconds between min_rtt renewals, randomised to [3/4, 5/4) of it (tcp_nv.c default 5)",
    },
    ParamSpec {
        name: "nv_min_cwnd",
        kind: ParamKind::Int,
        default: 2.0,
        min: 1.0,
        max: 1_000_000.0,
        doc: "NV does not decrease cwnd below this without losses (tcp_nv.c default 2)",
    },
    ParamSpec {
        name: "seed",
        kind: ParamKind::Int,
        default: 0.0,
        min: 0.0,
        max: 9_007_199_254_740_991.0, // 2^53 - 1: exact in an f64
        doc: "seed of the min_rtt reset period's random byte (kernel: get_random_u8); \
              the engine fills a per-flow value from the run seed when unset",
    },
];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "nv",
    family: crate::registry::Family::Delay,
    summary: "NV: Vegas's successor; rate-based decrease when cwnd exceeds rate * min_rtt + pad",
    source: "Linux net/ipv4/tcp_nv.c; Brakmo, TCP-NV: An Update to TCP-Vegas, 2010",
    params: &PARAMS,
    build: |p: &Params| Box::new(NvConfig::from_params(p).build()),
};

/// NV's tunables (the module parameters, and the seed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NvConfig {
    pub nv_pad: u32,
    pub nv_reset_period: u32,
    pub nv_min_cwnd: u32,
    pub seed: u64,
}

impl Default for NvConfig {
    fn default() -> Self {
        NvConfig {
            nv_pad: 10,
            nv_reset_period: 5,
            nv_min_cwnd: 2,
            seed: 0,
        }
    }
}

impl NvConfig {
    pub fn from_params(p: &Params) -> Self {
        NvConfig {
            nv_pad: p.get_u32("nv_pad"),
            nv_reset_period: p.get_u32("nv_reset_period"),
            nv_min_cwnd: p.get_u32("nv_min_cwnd"),
            seed: p.get("seed") as u64,
        }
    }
    pub fn build(&self) -> Nv {
        Nv {
            cfg: *self,
            rng: CycleRng::new(self.seed),
            nv_min_rtt_reset_jiffies: 0,
            cwnd_growth_factor: 0,
            nv_allow_cwnd_growth: true,
            nv_reset: false,
            nv_eval_call_cnt: 0,
            nv_min_cwnd: NV_MIN_CWND,
            nv_rtt_cnt: 0,
            nv_last_rtt: 0,
            nv_min_rtt: NV_INIT_RTT,
            nv_min_rtt_new: NV_INIT_RTT,
            nv_rtt_max_rate: 0,
            nv_rtt_start_seq: 0,
            nv_last_snd_una: 0,
            nv_no_cong_cnt: 0,
        }
    }
}

/// `struct tcpnv`. RTTs in us, rates in units of 100 bit/s.
#[derive(Clone, Debug)]
pub struct Nv {
    cfg: NvConfig,
    rng: CycleRng,
    /// `nv_min_rtt_reset_jiffies`: when `nv_min_rtt_new` takes over.
    nv_min_rtt_reset_jiffies: u32,
    /// `cwnd_growth_factor`: < 0 grows one segment per 2^-k windows.
    cwnd_growth_factor: i8,
    /// `nv_allow_cwnd_growth`, `nv_reset`.
    nv_allow_cwnd_growth: bool,
    nv_reset: bool,
    /// `nv_eval_call_cnt`: samples since the last decision.
    nv_eval_call_cnt: u8,
    /// `nv_min_cwnd`: below this NV makes no decision (TSO/LRO); not the parameter.
    nv_min_cwnd: u8,
    /// `nv_rtt_cnt`: RTTs without a decision.
    nv_rtt_cnt: u8,
    /// `nv_last_rtt`: the averaged RTT.
    nv_last_rtt: u32,
    /// `nv_min_rtt`, `nv_min_rtt_new`: the active and the next minimum RTT.
    nv_min_rtt: u32,
    nv_min_rtt_new: u32,
    /// `nv_rtt_max_rate`: the largest rate of the round.
    nv_rtt_max_rate: u32,
    /// `nv_rtt_start_seq`: the round ends when snd_una passes it (segments).
    nv_rtt_start_seq: u64,
    /// `nv_last_snd_una` (segments).
    nv_last_snd_una: u64,
    /// `nv_no_cong_cnt`: consecutive uncongested decisions.
    nv_no_cong_cnt: u32,
}

impl Nv {
    /// `tcpnv_reset`.
    fn tcpnv_reset(&mut self, tp: &CcView) {
        self.nv_reset = false;
        self.nv_no_cong_cnt = 0;
        self.nv_rtt_cnt = 0;
        self.nv_last_rtt = 0;
        self.nv_rtt_max_rate = 0;
        self.nv_rtt_start_seq = tp.snd_una;
        self.nv_eval_call_cnt = 0;
        self.nv_last_snd_una = tp.snd_una;
    }

    /// The once-per-RTT decision of `tcpnv_acked`.
    fn nv_round(&mut self, tp: &mut CcView, segs_acked: u64) {
        self.nv_rtt_start_seq = tp.snd_nxt;
        self.nv_rtt_cnt = self.nv_rtt_cnt.saturating_add(1);
        // One sample per round: cwnd is probably too small for TSO or coalescing.
        if self.nv_eval_call_cnt == 1
            && segs_acked >= u64::from(self.nv_min_cwnd - 1)
            && self.nv_min_cwnd < NV_TSO_CWND_BOUND + 1
        {
            self.nv_min_cwnd = (self.nv_min_cwnd + NV_MIN_CWND_GROW).min(NV_TSO_CWND_BOUND + 1);
            self.nv_rtt_start_seq = tp.snd_nxt + u64::from(self.nv_min_cwnd);
            self.nv_eval_call_cnt = 0;
            self.nv_allow_cwnd_growth = true;
            return;
        }
        // The window that carries max_rate with no queue: rate * min_rtt.
        let cwnd_by_slope = (u64::from(self.nv_rtt_max_rate) * u64::from(self.nv_min_rtt)
            / (80_000 * u64::from(tp.mss_cache))) as u32;
        let max_win = cwnd_by_slope.wrapping_add(self.cfg.nv_pad);
        if tp.snd_cwnd > max_win {
            // Congestion, if there is enough data to say so.
            if self.nv_rtt_cnt < NV_RTT_MIN_CNT {
                return;
            } else if tp.snd_ssthresh == TCP_INFINITE_SSTHRESH {
                if self.nv_eval_call_cnt < NV_SSTHRESH_EVAL_MIN_CALLS {
                    return;
                }
            } else if self.nv_eval_call_cnt < NV_DEC_EVAL_MIN_CALLS {
                if self.nv_allow_cwnd_growth && self.nv_rtt_cnt > NV_STOP_RTT_CNT {
                    self.nv_allow_cwnd_growth = false;
                }
                return;
            }
            self.nv_allow_cwnd_growth = false;
            tp.snd_ssthresh = (NV_SSTHRESH_FACTOR * max_win) >> 3;
            if tp.snd_cwnd - max_win > 2 {
                // Decrease by 30 % of the excess, at least 2.
                let dec = (((tp.snd_cwnd - max_win) * NV_CONG_DEC_MULT) >> 7).max(2);
                tp.snd_cwnd -= dec;
            } else if NV_CONG_DEC_MULT > 0 {
                tp.snd_cwnd = max_win;
            }
            if self.cwnd_growth_factor > 0 {
                self.cwnd_growth_factor = 0;
            }
            self.nv_no_cong_cnt = 0;
        } else if tp.snd_cwnd <= max_win.wrapping_sub(NV_PAD_BUFFER) {
            // No congestion: grow, if there is enough data.
            if self.nv_eval_call_cnt < NV_INC_EVAL_MIN_CALLS {
                return;
            }
            self.nv_allow_cwnd_growth = true;
            self.nv_no_cong_cnt += 1;
            // A slowed rate (< 0) doubles after more than nv_cwnd_growth_rate_neg
            // uncongested rounds; speeding up beyond Reno (nv_cwnd_growth_rate_pos) is
            // off by default, 0, so that branch of the kernel never runs.
            if self.cwnd_growth_factor < 0 && self.nv_no_cong_cnt > NV_CWND_GROWTH_RATE_NEG {
                self.cwnd_growth_factor += 1;
                self.nv_no_cong_cnt = 0;
            }
        } else {
            // In between: hold.
            return;
        }
        self.nv_eval_call_cnt = 0;
        self.nv_rtt_cnt = 0;
        self.nv_rtt_max_rate = 0;
        if tp.snd_cwnd < self.cfg.nv_min_cwnd {
            tp.snd_cwnd = self.cfg.nv_min_cwnd;
        }
    }
}

impl CongestionOps for Nv {
    fn name(&self) -> &'static str {
        "nv"
    }

    /// `tcpnv_init`.
    fn init(&mut self, tp: &mut CcView) {
        let rng = self.rng.clone();
        *self = self.cfg.build();
        self.rng = rng;
        self.tcpnv_reset(tp);
        self.nv_min_rtt_reset_jiffies = tp.jiffies32().wrapping_add(2 * tp.hz);
    }

    /// `tcpnv_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        if !tcp_is_cwnd_limited(tp) || !self.nv_allow_cwnd_growth {
            return;
        }
        let mut acked = acked;
        if tcp_in_slow_start(tp) {
            acked = tcp_slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        let cnt = if self.cwnd_growth_factor < 0 {
            // Slower than Reno: one segment per 2^-k windows.
            tp.snd_cwnd << (-self.cwnd_growth_factor) as u32
        } else {
            (tp.snd_cwnd >> self.cwnd_growth_factor as u32).max(4)
        };
        tcp_cong_avoid_ai(tp, cnt, acked);
    }

    /// `tcpnv_recalc_ssthresh`: 80 % of cwnd.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        ((tp.snd_cwnd * NV_LOSS_DEC_FACTOR) >> 10).max(2)
    }

    /// `tcpnv_state`.
    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        if new_state == CaState::Open && self.nv_reset {
            self.tcpnv_reset(tp);
        } else if matches!(new_state, CaState::Loss | CaState::Cwr | CaState::Recovery) {
            self.nv_reset = true;
            self.nv_allow_cwnd_growth = false;
            if new_state == CaState::Loss {
                // Back to Reno's growth rate, then slower.
                if self.cwnd_growth_factor > 0 {
                    self.cwnd_growth_factor = 0;
                }
                if NV_CWND_GROWTH_RATE_NEG > 0 && self.cwnd_growth_factor > -8 {
                    self.cwnd_growth_factor -= 1;
                }
            }
        }
    }

    /// `tcpnv_acked`.
    fn pkts_acked(&mut self, tp: &mut CcView, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            return;
        }
        let now = tp.jiffies32();
        let segs_acked = tp.snd_una.wrapping_sub(self.nv_last_snd_una);
        self.nv_last_snd_una = tp.snd_una;
        if sample.in_flight == 0 {
            return;
        }
        let rtt_us = sample.rtt_us.min(i64::from(u32::MAX)) as u64;
        // Half-and-half moving average of the RTT.
        let avg_rtt = if self.nv_last_rtt > 0 {
            ((rtt_us * NV_RTT_FACTOR + u64::from(self.nv_last_rtt) * (256 - NV_RTT_FACTOR)) >> 8)
                as u32
        } else {
            self.nv_min_rtt = (rtt_us as u32) << 1;
            rtt_us as u32
        };
        self.nv_last_rtt = avg_rtt;

        // Rate in 100s of bit/s: in_flight (bytes) * 8 * 10^6 / 100 / avg_rtt (us),
        // tcp_nv.c's `rate64 = (u64)sample->in_flight * 80000; do_div(rate64, avg_rtt ?: 1)`.
        let rate = (u64::from(sample.in_flight) * 80_000 / u64::from(avg_rtt.max(1))) as u32;
        self.nv_rtt_max_rate = self.nv_rtt_max_rate.max(rate);
        self.nv_eval_call_cnt = self.nv_eval_call_cnt.saturating_add(1);

        self.nv_min_rtt = self.nv_min_rtt.min(avg_rtt);
        self.nv_min_rtt_new = self.nv_min_rtt_new.min(avg_rtt);

        // Renew min_rtt every nv_reset_period (randomised to [3/4, 5/4) of it).
        if now.wrapping_sub(self.nv_min_rtt_reset_jiffies) as i32 >= 0 {
            self.nv_min_rtt = self.nv_min_rtt_new;
            self.nv_min_rtt_new = NV_INIT_RTT;
            let rand = u64::from(self.rng.next_u32() >> 24);
            // In 64 bits: the kernel's int product would overflow for periods above
            // ~3300 s at HZ 1000, which the parameter's range allows here.
            let period =
                (u64::from(self.cfg.nv_reset_period) * (384 + rand) * u64::from(tp.hz)) >> 9;
            self.nv_min_rtt_reset_jiffies = now.wrapping_add(period as u32);
            self.nv_min_cwnd = (self.nv_min_cwnd / 2).max(NV_MIN_CWND);
        }

        // Once per RTT.
        if self.nv_rtt_start_seq < tp.snd_una {
            self.nv_round(tp, segs_acked);
        }
    }

    fn info(&self) -> Vec<InfoField> {
        let us = |v: u32| {
            if v == NV_INIT_RTT {
                f64::NAN
            } else {
                v as f64 / 1000.0
            }
        };
        vec![
            (
                "avg_rtt_ms",
                InfoValue::Num(self.nv_last_rtt as f64 / 1000.0),
            ),
            ("min_rtt_ms", InfoValue::Num(us(self.nv_min_rtt))),
            (
                "max_rate_bps",
                InfoValue::Num(self.nv_rtt_max_rate as f64 * 100.0),
            ),
            (
                "growth_allowed",
                InfoValue::Num(if self.nv_allow_cwnd_growth { 1.0 } else { 0.0 }),
            ),
            (
                "growth_factor",
                InfoValue::Num(self.cwnd_growth_factor as f64),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    /// A flow at t = 0 with cwnd `cwnd`, ssthresh 50 (congestion avoidance),
    /// cwnd-limited, snd_una = snd_nxt = 0.
    fn flow(cwnd: u32) -> (Nv, CcView) {
        let mut tp = CcView::new(MSS, 0);
        tp.snd_cwnd = cwnd;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = NvConfig::default().build();
        c.init(&mut tp);
        (c, tp)
    }

    /// An ACK at `t_ms` advancing snd_una by `segs`, with RTT `rtt_us` and `delivered`
    /// segments delivered during the sampled segment's RTT: the kernel's in_flight is
    /// `delivered * MSS` bytes.
    fn ack(c: &mut Nv, tp: &mut CcView, t_ms: u64, segs: u64, rtt_us: i64, delivered: u32) {
        tp.now_us = t_ms * 1000;
        tp.snd_una += segs;
        c.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: segs as u32,
                rtt_us,
                in_flight: delivered * MSS,
                prior_in_flight: 0,
            },
        );
    }

    /// State just before the ACK that ends a round: min_rtt 100 ms, averaged RTT
    /// 200 ms, `calls` samples and `rtts` RTTs since the last decision.
    fn before_round_end(cwnd: u32, calls: u8, rtts: u8) -> (Nv, CcView) {
        let (mut c, mut tp) = flow(cwnd);
        c.nv_min_rtt = 100_000;
        c.nv_min_rtt_new = 100_000;
        c.nv_last_rtt = 200_000;
        c.nv_eval_call_cnt = calls;
        c.nv_rtt_cnt = rtts;
        tp.snd_nxt = 150;
        (c, tp)
    }

    #[test]
    fn nv_decreases_by_30_percent_of_the_excess_over_rate_times_min_rtt() {
        // ACK at 1 s: avg = (200000 * 128 + 200000 * 128) >> 8 = 200000; 150 segments
        // delivered in the RTT = 217200 bytes: rate = 217200 * 80000 / 200000 = 86880 (100s
        // of bit/s); 60th sample. Round ends (0 < snd_una 1), 2nd RTT:
        // cwnd_by_slope = 86880 * 100000 / (80000 * 1448) = 8688000000 / 115840000 = 75
        // (= 150 * 100 / 200), max_win = 85 < cwnd 150: congested, ssthresh 85,
        // dec = max(2, (65 * 38) >> 7 = 2470 >> 7 = 19) = 19: cwnd 131.
        let (mut c, mut tp) = before_round_end(150, 59, 1);
        ack(&mut c, &mut tp, 1000, 1, 200_000, 150);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (131, 85));
        assert!(!c.nv_allow_cwnd_growth);
        assert_eq!(
            (c.nv_eval_call_cnt, c.nv_rtt_cnt, c.nv_rtt_max_rate),
            (0, 0, 0)
        );
    }

    #[test]
    fn nv_small_excess_sets_cwnd_to_max_win() {
        // cwnd 87, max_win 85 (as above): 87 - 85 = 2, not > 2: cwnd = max_win = 85.
        let (mut c, mut tp) = before_round_end(87, 59, 1);
        ack(&mut c, &mut tp, 1000, 1, 200_000, 150);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (85, 85));
    }

    #[test]
    fn nv_waits_for_60_samples_before_decreasing_and_stops_growth_after_10_rtts() {
        // 59th sample: no decision, counters kept. With 11 RTTs without a decision, growth
        // stops meanwhile.
        let (mut c, mut tp) = before_round_end(150, 58, 1);
        ack(&mut c, &mut tp, 1000, 1, 200_000, 150);
        assert_eq!(
            (tp.snd_cwnd, c.nv_eval_call_cnt, c.nv_rtt_cnt),
            (150, 59, 2)
        );
        assert!(c.nv_allow_cwnd_growth);
        let (mut c, mut tp) = before_round_end(150, 58, 10);
        ack(&mut c, &mut tp, 1000, 1, 200_000, 150);
        assert_eq!(tp.snd_cwnd, 150);
        assert!(!c.nv_allow_cwnd_growth);
    }

    #[test]
    fn nv_leaves_slow_start_after_30_samples() {
        // ssthresh infinite: the 30th sample is enough: ssthresh 85, cwnd 131.
        let (mut c, mut tp) = before_round_end(150, 29, 1);
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        ack(&mut c, &mut tp, 1000, 1, 200_000, 150);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (131, 85));
    }

    #[test]
    fn nv_needs_two_rtts_before_a_congestion_decision() {
        let (mut c, mut tp) = before_round_end(150, 59, 0);
        ack(&mut c, &mut tp, 1000, 1, 200_000, 150);
        assert_eq!((tp.snd_cwnd, c.nv_rtt_cnt), (150, 1));
    }

    #[test]
    fn nv_allows_growth_at_least_pad_buffer_below_max_win() {
        // cwnd 83 <= 85 - 2 with the 20th sample: growth allowed, one uncongested round.
        let (mut c, mut tp) = before_round_end(83, 19, 1);
        c.nv_allow_cwnd_growth = false;
        ack(&mut c, &mut tp, 1000, 1, 200_000, 150);
        assert!(c.nv_allow_cwnd_growth);
        assert_eq!(
            (tp.snd_cwnd, c.nv_no_cong_cnt, c.nv_eval_call_cnt),
            (83, 1, 0)
        );
        // cwnd 84 (> 83, <= 85): in between, hold, nothing reset.
        let (mut c, mut tp) = before_round_end(84, 19, 1);
        ack(&mut c, &mut tp, 1000, 1, 200_000, 150);
        assert_eq!((c.nv_no_cong_cnt, c.nv_eval_call_cnt), (0, 20));
    }

    #[test]
    fn nv_first_rtt_sample_seeds_the_average_and_min_rtt() {
        // No average yet: avg = 120000; min_rtt = 240000, then min(240000, 120000).
        let (mut c, mut tp) = flow(10);
        ack(&mut c, &mut tp, 10, 1, 120_000, 10);
        assert_eq!(
            (c.nv_last_rtt, c.nv_min_rtt, c.nv_min_rtt_new),
            (120_000, 120_000, 120_000)
        );
        // Next 80000: avg = (80000 * 128 + 120000 * 128) >> 8 = 100000.
        ack(&mut c, &mut tp, 20, 1, 80_000, 10);
        assert_eq!((c.nv_last_rtt, c.nv_min_rtt), (100_000, 100_000));
    }

    #[test]
    fn nv_raises_its_min_cwnd_when_one_ack_covers_a_round() {
        // First sample of a round whose ACK covers 3 >= nv_min_cwnd - 1 = 3 segments:
        // nv_min_cwnd 4 -> 6, the round is extended to snd_nxt + 6, growth allowed.
        let (mut c, mut tp) = flow(10);
        tp.snd_nxt = 10;
        ack(&mut c, &mut tp, 10, 3, 100_000, 10);
        assert_eq!(
            (c.nv_min_cwnd, c.nv_rtt_start_seq, c.nv_eval_call_cnt),
            (6, 16, 0)
        );
    }

    #[test]
    fn nv_loss_cuts_to_80_percent() {
        // 100 * 819 >> 10 = 81900 >> 10 = 79; 2 -> 1 -> floor 2.
        let (mut c, mut tp) = flow(100);
        assert_eq!(c.ssthresh(&tp), 79);
        tp.snd_cwnd = 2;
        assert_eq!(c.ssthresh(&tp), 2);
    }

    #[test]
    fn nv_rto_halves_the_growth_rate_until_uncongested_rounds_restore_it() {
        // After an RTO the growth factor is -1: one segment per 2 * cwnd acked.
        let (mut c, mut tp) = flow(100);
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!(c.cwnd_growth_factor, -1);
        c.set_state(&mut tp, CaState::Open); // nv_reset: tcpnv_reset
        c.nv_allow_cwnd_growth = true;
        c.cong_avoid(&mut tp, 1, 199);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (100, 199));
        c.cong_avoid(&mut tp, 2, 1);
        assert_eq!(tp.snd_cwnd, 101);
        // The 9th uncongested decision (> 8) restores the factor to 0.
        c.nv_no_cong_cnt = 8;
        let mut tp2 = tp.clone();
        tp2.snd_cwnd = 83;
        tp2.snd_nxt = 150;
        c.nv_min_rtt = 100_000;
        c.nv_last_rtt = 200_000;
        c.nv_eval_call_cnt = 19;
        c.nv_rtt_start_seq = tp2.snd_una;
        ack(&mut c, &mut tp2, 1000, 1, 200_000, 150);
        assert_eq!((c.cwnd_growth_factor, c.nv_no_cong_cnt), (0, 0));
    }

    #[test]
    fn nv_does_not_grow_while_growth_is_stopped() {
        let (mut c, mut tp) = flow(100);
        c.nv_allow_cwnd_growth = false;
        c.cong_avoid(&mut tp, 1, 100);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (100, 0));
    }

    #[test]
    fn nv_renews_min_rtt_after_the_randomised_reset_period() {
        // Init at 0: the first renewal is at 2 * HZ = 2000 jiffies. At 2 s min_rtt takes
        // min_rtt_new, and the next renewal is 5 * (384 + r) * 1000 >> 9 jiffies later,
        // r a random byte: in [3750, 6240] (r = 0: 1920000 >> 9; r = 255: 3195000 >> 9).
        let run = |seed: u64| {
            let mut tp = CcView::new(MSS, 0);
            tp.snd_cwnd = 10;
            let mut c = NvConfig {
                seed,
                ..NvConfig::default()
            }
            .build();
            c.init(&mut tp);
            ack(&mut c, &mut tp, 10, 1, 100_000, 10);
            c.nv_min_rtt_new = 90_000;
            ack(&mut c, &mut tp, 1999, 1, 100_000, 10);
            assert_eq!(c.nv_min_rtt, 100_000);
            c.nv_min_rtt_new = 90_000;
            ack(&mut c, &mut tp, 2000, 1, 100_000, 10);
            assert_eq!((c.nv_min_rtt, c.nv_min_rtt_new), (90_000, NV_INIT_RTT));
            c.nv_min_rtt_reset_jiffies - 2000
        };
        let period = run(7);
        assert!((3750..=6240).contains(&period), "{period}");
        // Deterministic: the same seed gives the same period.
        assert_eq!(run(7), period);
    }
}

//! `cubic`: CUBIC with HyStart as Linux runs it (net/ipv4/tcp_cubic.c, "v2.3").
//!
//! Model. After a loss at window W_max, cwnd follows a cubic in the time t since the
//! loss, W(t) = C (t - K)^3 + W_max with K = cbrt(W_max (1 - beta) / C) (Ha, Rhee and
//! Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant", 2008, Eq. 1-2): concave up to
//! the old maximum, flat around it, convex beyond it. The kernel evaluates it in fixed
//! point: time in 1/1024 s (`BICTCP_HZ`), C = bic_scale * 10 / 1024 ~= 0.4 (bic_scale /
//! 1024 divided by the 100 ms reference RTT), the target taken one `delay_min` ahead,
//! and cwnd grows by one segment every `cnt = cwnd / (target - cwnd)` acked segments
//! (at most one per two). Fast convergence releases bandwidth: a loss below the previous
//! W_max records W_max = cwnd (1 + beta) / 2 (Sec. 3.4). In the TCP-friendly region
//! cwnd grows at least as fast as an AIMD flow with the same beta would (Eq. 4: increase
//! 3 (1 - beta) / (1 + beta) per RTT), tracked as `tcp_cwnd`. On loss ssthresh =
//! cwnd * beta with beta = 717/1024 ~= 0.7. Slow start may end early through HyStart
//! ([`hystart`]).
//!
//! Kernel functions followed: `bictcp_reset`, `cubictcp_init`, `cubictcp_cwnd_event`,
//! `cubic_root` ([`root`]), `bictcp_update`, `cubictcp_cong_avoid`,
//! `cubictcp_recalc_ssthresh`, `cubictcp_state`, `cubictcp_acked`,
//! `bictcp_hystart_reset`, `hystart_update`, `hystart_ack_delay` ([`hystart`]),
//! `cubictcp_register` (the precomputed scales); `undo_cwnd` is `tcp_reno_undo_cwnd`.
//!
//! Deviations:
//! - `hystart_ack_delay` is 0: tcplab has no GSO/TSO, and Linux computes 0 on a route
//!   without GSO (`sk_gso_max_size` stays 0). With GSO Linux would add up to 1 ms.
//! - jiffies run at the simulated CONFIG_HZ (`CcView::hz`, `[tcp] hz`, default 1000).
//!   Like the kernel, an epoch started at jiffy 0 reads as "no epoch"; the kernel makes
//!   this rare by starting jiffies at -300 s, we start at 0, so a congestion-avoidance
//!   ACK in the first jiffy of a run would start the epoch again on the next ACK
//!   (harmless, never seen in practice).
//! - The TCP-friendliness loop `while (ack_cnt > delta)` is done by one division, and is
//!   skipped when `delta = cwnd * beta_scale >> 3` is 0 (possible only with beta far
//!   from its default and cwnd < 4), where the kernel would spin forever.
//! - The module parameters are per flow (set through the registry) rather than global;
//!   `beta_scale`, `cube_rtt_scale` and `cube_factor` are derived from them when the
//!   flow's controller is built, as `cubictcp_register` derives them at module load.

mod config;
pub mod hystart;
pub mod root;
#[cfg(test)]
mod tests;

use crate::helpers::{tcp_cong_avoid_ai, tcp_in_slow_start, tcp_is_cwnd_limited, tcp_slow_start};
use crate::ops::{
    jiffies32_at, usecs_to_jiffies, AckSample, CaEvent, CaState, CcView, CongestionOps, InfoField,
    InfoValue,
};
use crate::registry::{AlgorithmSpec, Params};
pub use config::CubicConfig;
use config::PARAMS;
use hystart::HyStart;
use root::cubic_root;

/// `BICTCP_BETA_SCALE`: beta is expressed in 1/1024.
pub const BICTCP_BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: the cubic's time unit is 2^-10 s.
pub const BICTCP_HZ: u32 = 10;

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "cubic",
    family: crate::registry::Family::Loss,
    summary: "CUBIC: cubic window growth in time since the last loss, with HyStart",
    source: "Linux net/ipv4/tcp_cubic.c v2.3; Ha, Rhee, Xu 2008; Ha, Rhee 2008 (HyStart)",
    params: &PARAMS,
    build: |p: &Params| Box::new(CubicConfig::from_params(p).build()),
};

/// `struct bictcp` without HyStart's fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Bictcp {
    /// `cnt`: increase cwnd by 1 after this many acked segments.
    cnt: u32,
    /// `last_max_cwnd`: W_max.
    last_max_cwnd: u32,
    /// `last_cwnd`, `last_time` (jiffies): when cnt was last computed, and for which cwnd.
    last_cwnd: u32,
    last_time: u32,
    /// `bic_origin_point`: the plateau of the current cubic (segments).
    bic_origin_point: u32,
    /// `bic_K`: time from epoch start to the plateau, in 1/1024 s.
    bic_k: u32,
    /// `delay_min` (us): minimum RTT seen since the last reset.
    delay_min: u32,
    /// `epoch_start` (jiffies): start of the current growth epoch; 0 = none.
    epoch_start: u32,
    /// `ack_cnt`: acked segments counted toward the Reno estimate.
    ack_cnt: u32,
    /// `tcp_cwnd`: the Reno (AIMD) estimate of cwnd.
    tcp_cwnd: u32,
    hystart: HyStart,
    /// Not in the kernel: the ssthresh this algorithm last set (for `info`).
    last_ssthresh: u32,
}

/// One flow's CUBIC.
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    beta_scale: u32,
    cube_rtt_scale: u32,
    cube_factor: u64,
    ca: Bictcp,
    /// The socket's CONFIG_HZ as `init` found it, to report jiffies in ms (`info`).
    hz: u32,
}

/// `(s32)(a - b)`: signed difference of two wrapping u32 clocks.
fn s32_diff(a: u32, b: u32) -> i32 {
    a.wrapping_sub(b) as i32
}

impl Cubic {
    /// `bictcp_reset`: forget the cubic (after an RTO and at init). HyStart's round
    /// fields are reset separately, by `bictcp_hystart_reset`.
    fn bictcp_reset(&mut self) {
        let hystart = HyStart {
            found: false,
            ..self.ca.hystart.clone()
        };
        let last_ssthresh = self.ca.last_ssthresh;
        self.ca = Bictcp {
            hystart,
            last_ssthresh,
            ..Bictcp::default()
        };
    }

    /// `bictcp_update`: recompute `cnt` from the cubic and the Reno estimate.
    /// `now` is `tcp_jiffies32`, `hz` the CONFIG_HZ it ticks at.
    fn bictcp_update(&mut self, now: u32, hz: u32, cwnd: u32, acked: u32) {
        let ca = &mut self.ca;
        ca.ack_cnt = ca.ack_cnt.wrapping_add(acked);

        if ca.last_cwnd == cwnd && s32_diff(now, ca.last_time) <= (hz / 32) as i32 {
            return;
        }

        // The cubic updates cnt at most once per jiffy; a reduction zeroes epoch_start,
        // which forces a recomputation.
        if !(ca.epoch_start != 0 && now == ca.last_time) {
            ca.last_cwnd = cwnd;
            ca.last_time = now;

            if ca.epoch_start == 0 {
                ca.epoch_start = now;
                ca.ack_cnt = acked;
                ca.tcp_cwnd = cwnd;
                if ca.last_max_cwnd <= cwnd {
                    ca.bic_k = 0;
                    ca.bic_origin_point = cwnd;
                } else {
                    // K = cbrt((W_max - cwnd) / C)  (Eq. 2), in 1/1024 s.
                    ca.bic_k = cubic_root(
                        self.cube_factor
                            .wrapping_mul((ca.last_max_cwnd - cwnd) as u64),
                    );
                    ca.bic_origin_point = ca.last_max_cwnd;
                }
            }

            // t: time since epoch start plus one minimum RTT, in 1/1024 s.
            let mut t = s32_diff(now, ca.epoch_start) as i64 as u64;
            t = t.wrapping_add(usecs_to_jiffies(u64::from(ca.delay_min), hz));
            t = (t << BICTCP_HZ) / u64::from(hz);

            let k = ca.bic_k as u64;
            let offs = t.abs_diff(k);
            // C (t - K)^3  (Eq. 1), C = cube_rtt_scale / 2^10 per s^3, offs in 2^-10 s.
            let delta = ((self.cube_rtt_scale as u64)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let bic_target = if t < k {
                ca.bic_origin_point.wrapping_sub(delta)
            } else {
                ca.bic_origin_point.wrapping_add(delta)
            };

            ca.cnt = if bic_target > cwnd {
                cwnd / (bic_target - cwnd)
            } else {
                cwnd.wrapping_mul(100)
            };

            // Without a known maximum the cubic's initial growth is too timid: at least 5 %
            // per RTT.
            if ca.last_max_cwnd == 0 && ca.cnt > 20 {
                ca.cnt = 20;
            }
        }

        // TCP-friendly region (Eq. 4): the Reno estimate gains one segment per
        // cwnd * beta_scale / 8 acked segments.
        if self.cfg.tcp_friendliness {
            let delta = cwnd.wrapping_mul(self.beta_scale) >> 3;
            if delta > 0 && ca.ack_cnt > delta {
                let n = (ca.ack_cnt - 1) / delta;
                ca.ack_cnt -= n * delta;
                ca.tcp_cwnd = ca.tcp_cwnd.wrapping_add(n);
            }
            if ca.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (ca.tcp_cwnd - cwnd);
                if ca.cnt > max_cnt {
                    ca.cnt = max_cnt;
                }
            }
        }

        // At most one segment per two acked: 1.5x per RTT.
        ca.cnt = ca.cnt.max(2);
    }
}

impl CongestionOps for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `cubictcp_init`.
    fn init(&mut self, tp: &mut CcView) {
        self.hz = tp.hz;
        self.bictcp_reset();
        if self.cfg.hystart {
            self.ca.hystart.bictcp_hystart_reset(tp);
        }
        if !self.cfg.hystart && self.cfg.initial_ssthresh != 0 {
            tp.snd_ssthresh = self.cfg.initial_ssthresh;
        }
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, record W_max (with fast convergence),
    /// return cwnd * beta.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        let ca = &mut self.ca;
        let cwnd = tp.snd_cwnd;
        ca.epoch_start = 0;
        ca.last_max_cwnd = if cwnd < ca.last_max_cwnd && self.cfg.fast_convergence {
            // W_max = cwnd (1 + beta) / 2  (Sec. 3.4, fast convergence)
            cwnd.wrapping_mul(BICTCP_BETA_SCALE + self.cfg.beta) / (2 * BICTCP_BETA_SCALE)
        } else {
            cwnd
        };
        ca.last_ssthresh = (cwnd.wrapping_mul(self.cfg.beta) / BICTCP_BETA_SCALE).max(2);
        ca.last_ssthresh
    }

    /// `cubictcp_cong_avoid`.
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
        self.bictcp_update(tp.jiffies32(), tp.hz, tp.snd_cwnd, acked);
        tcp_cong_avoid_ai(tp, self.ca.cnt, acked);
    }

    /// `cubictcp_state`: an RTO forgets the cubic and restarts HyStart.
    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        if new_state == CaState::Loss {
            self.bictcp_reset();
            self.ca.hystart.bictcp_hystart_reset(tp);
        }
    }

    /// `cubictcp_cwnd_event`: after an idle period (application-limited), shift the
    /// epoch by the idle time so growth resumes on the same point of the curve.
    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        if ev != CaEvent::TxStart {
            return;
        }
        let now = tp.jiffies32();
        let lsndtime = jiffies32_at(tp.lsndtime_us, tp.hz);
        let delta = s32_diff(now, lsndtime);
        let ca = &mut self.ca;
        if ca.epoch_start != 0 && delta > 0 {
            ca.epoch_start = ca.epoch_start.wrapping_add(delta as u32);
            if s32_diff(ca.epoch_start, now) > 0 {
                ca.epoch_start = now;
            }
        }
    }

    /// `cubictcp_acked`: track delay_min and run HyStart in slow start.
    fn pkts_acked(&mut self, tp: &mut CcView, sample: &AckSample) {
        // Some calls are for duplicates without timestamps.
        if sample.rtt_us < 0 {
            return;
        }
        // Discard delay samples right after fast recovery.
        let ca = &mut self.ca;
        if ca.epoch_start != 0 && s32_diff(tp.jiffies32(), ca.epoch_start) < tp.hz as i32 {
            return;
        }
        let delay = (sample.rtt_us.min(u32::MAX as i64) as u32).max(1);
        if ca.delay_min == 0 || ca.delay_min > delay {
            ca.delay_min = delay;
        }
        // Rounds are tracked from the first ACK; hystart_update itself skips detection
        // below hystart_low_window ("tcp_cubic: fix incorrect HyStart round start
        // detection", Linux 6.14, in 6.18): before that fix no round started until cwnd
        // reached 16, so rounds did not line up with the flights.
        if !ca.hystart.found && tcp_in_slow_start(tp) && self.cfg.hystart {
            let (delay_min, detect, ack_delta) = (
                ca.delay_min,
                self.cfg.hystart_detect,
                self.cfg.hystart_ack_delta_us,
            );
            ca.hystart.hystart_update(
                tp,
                delay,
                delay_min,
                detect,
                ack_delta,
                self.cfg.hystart_low_window,
            );
            if ca.hystart.found {
                ca.last_ssthresh = tp.snd_ssthresh;
            }
        }
    }

    /// `tcp_reno_undo_cwnd`, as the kernel's cubictcp ops use.
    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    fn info(&self) -> Vec<InfoField> {
        let ca = &self.ca;
        let num = |x: f64| InfoValue::Num(x);
        vec![
            ("w_max_pkts", num(ca.last_max_cwnd as f64)),
            ("k_ms", num(ca.bic_k as f64 * 1000.0 / 1024.0)),
            ("origin_point_pkts", num(ca.bic_origin_point as f64)),
            (
                "epoch_start_ms",
                num(ca.epoch_start as f64 * 1000.0 / self.hz as f64),
            ),
            ("cnt_acks", num(ca.cnt as f64)),
            ("tcp_cwnd_pkts", num(ca.tcp_cwnd as f64)),
            ("ssthresh_pkts", num(ca.last_ssthresh as f64)),
            (
                "hystart_found",
                num(if ca.hystart.found { 1.0 } else { 0.0 }),
            ),
            ("delay_min_ms", num(ca.delay_min as f64 / 1000.0)),
        ]
    }
}

//! `bbr2`: BBRv2 as google/bbr branch v2alpha runs it (net/ipv4/tcp_bbr2.c), sharing
//! `bbr3`'s code where the two kernels' code is the same. This module holds v2's
//! constants and registry entry and the functions whose v2 body differs; the shared code
//! branches on `Bbr3Config::version` at those points only.
//!
//! Model. v3 grew out of v2; the model (bw_lo / inflight_lo short-term bounds,
//! inflight_hi from loss above 2 %, the DOWN / CRUISE / REFILL / UP cycle with 2-3 s
//! probe waits, PROBE_RTT every 5 s at 0.5 BDP) is the same. What v2 does differently
//! (v3's commits call most of these bug fixes):
//! - STARTUP paces and sizes cwnd at 2.885 (`bbr_high_gain`, `bbr_startup_cwnd_gain`;
//!   v3: 2.77 and 2); the full-pipe test is v1's: max_bw, once per round, never reset
//!   after STARTUP (`bbr_check_full_bw_reached`); a loss / ECN exit sets inflight_hi to
//!   the BDP (v3: at least what the last round delivered); `bbr_full_loss_cnt` = 8 (v3: 6).
//! - PROBE_DOWN paces at 0.75 (v3: 0.91); PROBE_UP keeps cwnd_gain 2 (v3: 2.25) and ends
//!   when, after one min_rtt, inflight reaches `bw_probe_pif_gain` (1.25) x BDP, or at a
//!   risky inflight_hi (v3: on a bw plateau while inflight_hi does not limit it); a probe
//!   does not restart the plateau detector.
//! - `bbr_bw` is also bounded by a separate `bw_hi` (raised by any safe sample, cut by
//!   ECN in a probe that saw no good sample; v3 has no such bound).
//! - The latest-delivery filters and the loss round live in
//!   `bbr2_update_congestion_signals`; the min_rtt filters accept equal samples (`<=`);
//!   ECN: alpha is kept for every flow, eligibility needs the module switch
//!   `bbr_ecn_enable` (default off, so ECN is unused by default), the CE test is `>=`
//!   ecn_thresh, and CE also cuts bw_lo; no ECN reprobe (`bbr_ecn_reprobe_gain` = 0).
//! - `bbr2_probe_inflight_hi_upward` drops credits while not cwnd-limited; an RTO starts
//!   inflight_lo at the saved cwnd only; undo can be switched off (`bbr_undo`); no TLP
//!   loss hook; `bbr_min_tso_segs` (1 segment below 1.2 Mbit/s) sizes the send quantum.
//!
//! Functions here: `bbr2_check_full_bw_reached` (v2's `bbr_check_full_bw_reached`),
//! `bbr2_update_ecn_alpha`, `bbr2_adapt_lower_bounds`, `bbr2_update_congestion_signals`,
//! `bbr2_probe_inflight_hi_upward`, `bbr2_handle_inflight_too_high_via_ecn`,
//! `bbr2_probe_up_done` (the PROBE_UP case of `bbr2_update_cycle_phase`),
//! `bbr_min_tso_segs`; the rest is shared with `bbr3` (same names, `bbr2_` prefix
//! dropped).
//!
//! Deviations: those of `bbr3` (module doc), and: `bbr_cwnd_tso_budget` = 1 (flooring,
//! the default) and `bbr_usage_based_cwnd` = false are fixed; `rs.delivered_ce` of the
//! per-lost-packet sample is left 0 (the kernel fills it, but `bbr2_is_inflight_too_high`
//! reads CE only with `rs.delivered > 0`, which that sample never has); `ecn_enable`
//! also requires ECN to be negotiated (`tp.ecn_ok`; the alpha release left negotiation
//! out of scope).

use super::bw::{bbr_max_bw, bbr_take_max_bw_sample};
use super::cwnd::bbr_inflight;
use super::ecn::{bbr_ecn_cut, delivered_since_alpha, update_alpha};
use super::params::{flag, frac, int, Bbr3Config, Version, FRAC_MAX, MAX_GAIN, U};
use super::probe_bw::{
    bbr_has_elapsed_in_phase, bbr_is_probing_bandwidth, bbr_start_bw_probe_down,
};
use super::upper_bounds::bbr_raise_inflight_hi_slope;
use super::{scale, Bbr3, Ctx, BBR_UNIT, UNSET};
use crate::bbr::gain_to_unit;
use crate::ops::{CcView, RateSample};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

// Constants of tcp_bbr2.c (branch v2alpha) that differ from v3's, kernel names and values.
/// `bbr_high_gain` = BBR_UNIT * 2885 / 1000 + 1 = 739 (STARTUP pacing gain).
pub const BBR_HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_startup_cwnd_gain` = BBR_UNIT * 2885 / 1000 + 1 = 739.
pub const BBR_STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_pacing_gain[]` as v2 uses it (UP, DOWN, CRUISE, REFILL): 5/4, 3/4, 1, 1.
pub const BBR_PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT];
/// `bbr_full_loss_cnt` = 8.
pub const BBR_FULL_LOSS_CNT: u32 = 8;
/// `bbr_ecn_reprobe_gain` = 0 (disabled).
pub const BBR_ECN_REPROBE_GAIN: u32 = 0;
/// `bbr_bw_probe_pif_gain` = BBR_UNIT * 5 / 4 = 320.
pub const BBR_BW_PROBE_PIF_GAIN: u32 = BBR_UNIT * 5 / 4;
/// `bbr_bw_probe_reno_gain` = BBR_UNIT.
pub const BBR_BW_PROBE_RENO_GAIN: u32 = BBR_UNIT;
/// `bbr_min_tso_rate` = 1.2 Mbit/s.
pub const BBR_MIN_TSO_RATE: u64 = 1_200_000;

impl Bbr3Config {
    /// tcp_bbr2.c's defaults (the shared ones equal v3's: drain gain, cwnd_gain 2,
    /// loss_thresh 5/256, beta 76/256, headroom 38/256, ecn_thresh 1/2, ecn_factor 85/256,
    /// alpha gain 1/16, alpha init 1, ecn_max_rtt 5 ms, full_ecn_cnt 2, probe waits
    /// 2 s + 1 s and 63 / 2 rounds, probe_rtt 200 ms / 5 s / 0.5 BDP, fast path on).
    pub fn v2() -> Self {
        Bbr3Config {
            version: Version::V2,
            pacing_gain: BBR_PACING_GAIN,
            startup_pacing_gain: BBR_HIGH_GAIN,
            startup_cwnd_gain: BBR_STARTUP_CWND_GAIN,
            full_loss_cnt: BBR_FULL_LOSS_CNT,
            ecn_reprobe_gain: BBR_ECN_REPROBE_GAIN,
            bw_probe_cwnd_gain: 0, // v2 has no PROBE_UP cwnd_gain increment
            bw_probe_pif_gain: BBR_BW_PROBE_PIF_GAIN,
            bw_probe_reno_gain: BBR_BW_PROBE_RENO_GAIN,
            ecn_bw_lo: true,            // bbr_ecn_bw_lo = true
            ecn_bw_hi: true,            // bbr_ecn_bw_hi = true
            drain_to_target: true,      // bbr_drain_to_target = true
            refill_add_inc: 0,          // bbr_refill_add_inc = 0
            undo: true,                 // bbr_undo = true
            ecn_enable: false,          // bbr_ecn_enable = false
            loss_probe_recovery: false, // no CA_EVENT_TLP_RECOVERY hook in v2alpha
            ..Bbr3Config::default()
        }
    }

    /// From validated `Params` of `PARAMS_V2`.
    pub fn v2_from_params(p: &Params) -> Self {
        let frac = |name: &str| gain_to_unit(p.get(name));
        Bbr3Config {
            loss_thresh: frac("loss_thresh"),
            beta: frac("beta"),
            inflight_headroom: frac("inflight_headroom"),
            ecn_thresh: frac("ecn_thresh"),
            ecn_factor: frac("ecn_factor"),
            ecn_alpha_gain: frac("ecn_alpha_gain"),
            ecn_alpha_init: frac("ecn_alpha_init"),
            ecn_max_rtt_us: p.get_u32("ecn_max_rtt_us"),
            ecn_enable: p.get_bool("ecn_enable"),
            startup_pacing_gain: frac("high_gain"),
            startup_cwnd_gain: frac("startup_cwnd_gain"),
            drain_gain: frac("drain_gain"),
            cwnd_gain: frac("cwnd_gain"),
            bw_probe_pif_gain: frac("bw_probe_pif_gain"),
            full_bw_thresh: frac("full_bw_thresh"),
            full_bw_cnt: p.get_u32("full_bw_cnt"),
            full_loss_cnt: p.get_u32("full_loss_cnt"),
            full_ecn_cnt: p.get_u32("full_ecn_cnt"),
            bw_probe_max_rounds: p.get_u32("bw_probe_max_rounds"),
            bw_probe_rand_rounds: p.get_u32("bw_probe_rand_rounds"),
            bw_probe_base_us: p.get_u32("bw_probe_base_us"),
            bw_probe_rand_us: p.get_u32("bw_probe_rand_us"),
            probe_rtt_win_ms: p.get_u32("probe_rtt_win_ms"),
            probe_rtt_mode_ms: p.get_u32("probe_rtt_mode_ms"),
            probe_rtt_cwnd_gain: frac("probe_rtt_cwnd_gain"),
            min_rtt_win_sec: p.get_u32("min_rtt_win_sec"),
            extra_acked_gain: if p.get_bool("extra_acked") {
                super::params::BBR_EXTRA_ACKED_GAIN
            } else {
                0
            },
            undo: p.get_bool("undo"),
            fast_path: p.get_bool("fast_path"),
            seed: p.get("seed") as u64,
            ..Bbr3Config::v2()
        }
    }
}

/// The parameter schema of `bbr2` (tcp_bbr2.c's module parameters that matter here).
pub static PARAMS_V2: &[ParamSpec] = &[
    frac("loss_thresh", super::params::BBR_LOSS_THRESH, 1.0 / U, FRAC_MAX,
        "loss rate above which a probe's inflight is too high, 1/256 steps; tcp_bbr2.c bbr_loss_thresh = BBR_UNIT*2/100 = 5/256"),
    frac("beta", super::params::BBR_BETA, 0.0, FRAC_MAX,
        "multiplicative cut of bw_lo/inflight_lo per lossy round is (1 - beta); bbr_beta = BBR_UNIT*30/100 = 76/256"),
    frac("inflight_headroom", super::params::BBR_INFLIGHT_HEADROOM, 0.0, FRAC_MAX,
        "fraction of inflight_hi left unused while cruising; bbr_inflight_headroom = BBR_UNIT*15/100 = 38/256"),
    frac("ecn_thresh", super::params::BBR_ECN_THRESH, 0.0, FRAC_MAX,
        "CE ratio at which a probe's inflight is too high (0 = off); bbr_ecn_thresh = BBR_UNIT/2"),
    frac("ecn_factor", super::params::BBR_ECN_FACTOR, 0.0, FRAC_MAX,
        "ECN cut of inflight_lo/bw_lo is (1 - ecn_factor*ecn_alpha) (0 = off); bbr_ecn_factor = BBR_UNIT/3 = 85/256"),
    frac("ecn_alpha_gain", super::params::BBR_ECN_ALPHA_GAIN, 0.0, FRAC_MAX,
        "EWMA gain of ecn_alpha per round; bbr_ecn_alpha_gain = BBR_UNIT/16"),
    frac("ecn_alpha_init", super::params::BBR_ECN_ALPHA_INIT, 0.0, 1.0,
        "initial ecn_alpha; bbr_ecn_alpha_init = BBR_UNIT (1.0)"),
    int("ecn_max_rtt_us", super::params::BBR_ECN_MAX_RTT_US, 0.0, 524_287.0,
        "use ECN only at min_rtt <= this (us; 0 = any RTT); bbr_ecn_max_rtt_us = 5000"),
    flag("ecn_enable", false,
        "use the ECN logic (bbr_ecn_enable = false: the alpha release leaves it to lab tests with DCTCP-style marking); also needs ECN negotiated"),
    frac("high_gain", BBR_HIGH_GAIN, 1.0, MAX_GAIN,
        "STARTUP pacing gain, 1/256 steps; bbr_high_gain = BBR_UNIT*2885/1000+1 = 739/256"),
    frac("startup_cwnd_gain", BBR_STARTUP_CWND_GAIN, 1.0, MAX_GAIN,
        "STARTUP and DRAIN cwnd gain; bbr_startup_cwnd_gain = 739/256"),
    frac("drain_gain", super::params::BBR_DRAIN_GAIN, 1.0 / U, 1.0,
        "DRAIN pacing gain; bbr_drain_gain = BBR_UNIT*1000/2885 = 88/256"),
    frac("cwnd_gain", super::params::BBR_CWND_GAIN, 0.25, MAX_GAIN,
        "PROBE_BW cwnd gain; bbr_cwnd_gain = BBR_UNIT*2"),
    frac("bw_probe_pif_gain", BBR_BW_PROBE_PIF_GAIN, 1.0, 511.0 / U,
        "PROBE_UP ends after one min_rtt once inflight >= this x BDP; bbr_bw_probe_pif_gain = BBR_UNIT*5/4"),
    frac("full_bw_thresh", super::params::BBR_FULL_BW_THRESH, 1.0, MAX_GAIN,
        "bw growth that counts as 'still growing'; bbr_full_bw_thresh = BBR_UNIT*5/4"),
    int("full_bw_cnt", super::params::BBR_FULL_BW_CNT, 1.0, 3.0,
        "rounds without growth before the pipe is full (2-bit state field); bbr_full_bw_cnt = 3"),
    int("full_loss_cnt", BBR_FULL_LOSS_CNT, 0.0, 15.0,
        "loss events in a Recovery round (with loss above loss_thresh) that end STARTUP (0 = off); bbr_full_loss_cnt = 8"),
    int("full_ecn_cnt", super::params::BBR_FULL_ECN_CNT, 0.0, 3.0,
        "rounds with CE ratio at or above ecn_thresh that end STARTUP (0 = off); bbr_full_ecn_cnt = 2"),
    int("bw_probe_max_rounds", super::params::BBR_BW_PROBE_MAX_ROUNDS, 1.0, 255.0,
        "most packet-timed rounds between bw probes; bbr_bw_probe_max_rounds = 63"),
    int("bw_probe_rand_rounds", super::params::BBR_BW_PROBE_RAND_ROUNDS, 1.0, 15.0,
        "random rounds (0..n-1) credited at each probe wait; bbr_bw_probe_rand_rounds = 2"),
    int("bw_probe_base_us", super::params::BBR_BW_PROBE_BASE_US, 0.0, 67_108_863.0,
        "base wall-clock wait between bw probes (us); bbr_bw_probe_base_us = 2 s"),
    int("bw_probe_rand_us", super::params::BBR_BW_PROBE_RAND_US, 1.0, 67_108_863.0,
        "random extra wait, uniform in [0, n) us; bbr_bw_probe_rand_us = 1 s"),
    int("probe_rtt_win_ms", super::params::BBR_PROBE_RTT_WIN_MS, 1.0, 10_000.0,
        "PROBE_RTT when min_rtt was not refreshed for this long (ms); bbr_probe_rtt_win_ms = 5000"),
    int("probe_rtt_mode_ms", super::params::BBR_PROBE_RTT_MODE_MS, 0.0, 511.0,
        "time at the PROBE_RTT cwnd (ms; 0 = no PROBE_RTT); bbr_probe_rtt_mode_ms = 200"),
    frac("probe_rtt_cwnd_gain", super::params::BBR_PROBE_RTT_CWND_GAIN, 0.0, FRAC_MAX,
        "PROBE_RTT cwnd x BDP (0 = 4 packets); bbr_probe_rtt_cwnd_gain = BBR_UNIT/2"),
    int("min_rtt_win_sec", super::params::BBR_MIN_RTT_WIN_SEC, 10.0, 31.0,
        "min_rtt filter window (s); bbr_min_rtt_win_sec = 10"),
    flag("extra_acked", true, "add the ACK-aggregation estimate to the cwnd; bbr_extra_acked_gain = 256 (on)"),
    flag("undo", true, "revert the loss-adapted bounds when a recovery was spurious; bbr_undo = true"),
    flag("fast_path", true, "skip the model update on app-limited ACKs that change nothing; bbr_fast_path = true"),
    ParamSpec {
        name: "seed",
        kind: ParamKind::Int,
        default: 0.0,
        min: 0.0,
        max: 9_007_199_254_740_991.0, // 2^53 - 1: exact in an f64
        doc: "seed of the random probe waits (kernel: prandom_u32_max); the engine fills a \
              per-flow value from the run seed when unset",
    },
];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "bbr2",
    family: crate::registry::Family::Bbr3,
    summary: "BBRv2 (alpha): BBR with loss/ECN bounds, PROBE_BW DOWN (0.75)/CRUISE/REFILL/UP; shares bbr3's code",
    source: "google/bbr branch v2alpha, net/ipv4/tcp_bbr2.c",
    params: PARAMS_V2,
    build: |p: &Params| {
        Box::new(super::Bbr3Ops::with_variant(Bbr3Config::v2_from_params(p), super::variant::KernelBbr2))
    },
};

/// `bbr_min_tso_segs`: 1 segment below `bbr_min_tso_rate`, else 2.
pub fn bbr_min_tso_segs(tp: &CcView) -> u32 {
    if tp.pacing_rate < (BBR_MIN_TSO_RATE >> 3) {
        1
    } else {
        2
    }
}

/// v2's `bbr_check_full_bw_reached` (v1's): once per non-app-limited round, the pipe is
/// full after `full_bw_cnt` rounds in which max_bw did not grow by 25 %.
pub fn bbr2_check_full_bw_reached(bbr: &mut Bbr3, rs: &RateSample) {
    if bbr.full_bw_reached || !bbr.round_start || rs.is_app_limited {
        return;
    }
    let bw_thresh = scale(bbr.full_bw, bbr.cfg.full_bw_thresh);
    if u64::from(bbr_max_bw(bbr)) >= bw_thresh {
        bbr.full_bw = bbr_max_bw(bbr);
        bbr.full_bw_cnt = 0;
        return;
    }
    bbr.full_bw_cnt = (bbr.full_bw_cnt + 1).min(3); // 2-bit field
    bbr.full_bw_reached = bbr.full_bw_cnt >= bbr.cfg.full_bw_cnt;
}

/// `bbr2_update_ecn_alpha`: alpha for every flow (with ecn_factor); eligibility needs
/// `bbr_ecn_enable`; the STARTUP CE check runs inside, as in v3.
pub fn bbr2_update_ecn_alpha(bbr: &mut Bbr3, tp: &CcView) {
    if bbr.cfg.ecn_factor == 0 {
        return;
    }
    let Some((delivered, delivered_ce)) = delivered_since_alpha(bbr, tp) else {
        return; // divide by zero, or counters went backwards
    };
    // Should this connection use the ECN sender logic? (ecn_enable: see module doc.)
    if !bbr.ecn_eligible
        && bbr.cfg.ecn_enable
        && tp.ecn_ok
        && (bbr.min_rtt_us <= bbr.cfg.ecn_max_rtt_us || bbr.cfg.ecn_max_rtt_us == 0)
    {
        bbr.ecn_eligible = true;
    }
    update_alpha(bbr, tp, delivered, delivered_ce);
}

/// `bbr2_adapt_lower_bounds`: as v3's, but ECN needs `ecn_eligible` here, also cuts
/// bw_lo (`ecn_bw_lo`), and bw_lo has no floor of 1.
pub fn bbr2_adapt_lower_bounds(bbr: &mut Bbr3, tp: &CcView) {
    if bbr_is_probing_bandwidth(bbr) {
        return; // lower bounds only when not probing
    }
    let (mut ecn_inflight_lo, mut ecn_bw_lo) = (UNSET, UNSET);
    // ECN response: reduce to (1 - alpha * ecn_factor).
    if bbr.ecn_in_round && bbr.ecn_eligible && bbr.cfg.ecn_factor != 0 {
        let ecn_cut = bbr_ecn_cut(bbr);
        if bbr.cfg.ecn_bw_lo && bbr.bw_lo == UNSET {
            bbr.bw_lo = bbr_max_bw(bbr);
        }
        if bbr.inflight_lo == UNSET {
            bbr.inflight_lo = tp.snd_cwnd;
        }
        ecn_inflight_lo = scale(bbr.inflight_lo, ecn_cut) as u32;
        if bbr.cfg.ecn_bw_lo {
            ecn_bw_lo = scale(bbr.bw_lo, ecn_cut) as u32;
        }
    }
    // Loss response: reduce bw and inflight to (1 - beta).
    if bbr.loss_in_round {
        if bbr.bw_lo == UNSET {
            bbr.bw_lo = bbr_max_bw(bbr);
        }
        if bbr.inflight_lo == UNSET {
            bbr.inflight_lo = tp.snd_cwnd;
        }
        let cut = BBR_UNIT - bbr.cfg.beta;
        bbr.bw_lo = u64::from(bbr.bw_latest).max(scale(bbr.bw_lo, cut)) as u32;
        bbr.inflight_lo = u64::from(bbr.inflight_latest).max(scale(bbr.inflight_lo, cut)) as u32;
    }
    // The lower of the levels loss and ECN imply.
    bbr.inflight_lo = bbr.inflight_lo.min(ecn_inflight_lo);
    if bbr.cfg.ecn_bw_lo {
        bbr.bw_lo = bbr.bw_lo.min(ecn_bw_lo);
    }
}

/// `bbr2_update_congestion_signals`: max-bw sample, loss in round, the latest rate and
/// volume, and once per loss round the lower bounds and a fresh start of the filters.
pub fn bbr2_update_congestion_signals(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample, ctx: &Ctx) {
    bbr.loss_round_start = false;
    if rs.interval_us <= 0 || rs.acked_sacked == 0 {
        return; // not a valid observation
    }
    let bw = ctx.sample_bw;
    if !rs.is_app_limited || bw >= bbr_max_bw(bbr) {
        bbr_take_max_bw_sample(bbr, bw);
    }
    bbr.loss_in_round |= rs.losses > 0;
    // Rate and volume delivered in the latest round trip.
    let delivered = rs.delivered.clamp(0, i64::from(u32::MAX)) as u32;
    bbr.bw_latest = bbr.bw_latest.max(ctx.sample_bw);
    bbr.inflight_latest = bbr.inflight_latest.max(delivered);
    if rs.prior_delivered < bbr.loss_round_delivered {
        return; // skip the per-round-trip updates
    }
    bbr.loss_round_delivered = tp.delivered; // mark round trip
    bbr.loss_round_start = true;
    bbr2_adapt_lower_bounds(bbr, tp);
    // Restart the single-round-trip filters.
    bbr.loss_in_round = false;
    bbr.ecn_in_round = false;
    bbr.bw_latest = ctx.sample_bw;
    bbr.inflight_latest = delivered;
}

/// `bbr2_probe_inflight_hi_upward`: as v3's, but credits are dropped while not
/// cwnd-limited at inflight_hi, and the fast path is not cleared.
pub fn bbr2_probe_inflight_hi_upward(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample) {
    if !tp.is_cwnd_limited || tp.snd_cwnd < bbr.inflight_hi {
        bbr.bw_probe_up_acks = 0; // don't accumulate unused credits
        return; // not fully using inflight_hi, so don't grow it
    }
    bbr.bw_probe_up_acks += rs.acked_sacked;
    if bbr.bw_probe_up_acks >= bbr.bw_probe_up_cnt {
        let delta = bbr.bw_probe_up_acks / bbr.bw_probe_up_cnt;
        bbr.bw_probe_up_acks -= delta * bbr.bw_probe_up_cnt;
        bbr.inflight_hi = bbr.inflight_hi.saturating_add(delta);
    }
    if bbr.round_start {
        bbr_raise_inflight_hi_slope(bbr, tp);
    }
}

/// `bbr2_handle_inflight_too_high_via_ecn`: an ECN-eligible probe that saw no good
/// sample also cuts bw_hi by the ECN cut (`ecn_bw_hi`).
pub fn bbr2_handle_inflight_too_high_via_ecn(bbr: &mut Bbr3) {
    if bbr.cfg.ecn_bw_hi && bbr.ecn_eligible && !bbr.got_ok_bw_probe_sample {
        let ecn_cut = bbr_ecn_cut(bbr);
        if bbr.v2_bw_hi == UNSET {
            bbr.v2_bw_hi = bbr_max_bw(bbr);
        }
        bbr.v2_bw_hi = scale(bbr.v2_bw_hi, ecn_cut) as u32;
    }
}

/// The PROBE_UP case of `bbr2_update_cycle_phase`: stop at a risky inflight_hi, or once
/// the probe has lasted a min_rtt and inflight reached `bw_probe_pif_gain` x BDP.
pub fn bbr2_probe_up_done(bbr: &mut Bbr3, tp: &CcView, inflight: u32, bw: u32) {
    let mut is_risky = false;
    let mut is_queuing = false;
    if bbr.prev_probe_too_high && inflight >= bbr.inflight_hi {
        bbr.stopped_risky_probe = true;
        is_risky = true;
    } else if bbr_has_elapsed_in_phase(bbr, tp, bbr.min_rtt_us)
        && inflight >= bbr_inflight(bbr, tp, bw, bbr.cfg.bw_probe_pif_gain)
    {
        is_queuing = true;
    }
    if is_risky || is_queuing {
        bbr.prev_probe_too_high = false; // no loss/ECN (yet)
        bbr_start_bw_probe_down(bbr, tp); // restart with down
    }
}

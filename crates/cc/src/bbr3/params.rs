//! The tunables: every `bbr_param(sk, name)` of the v3 tcp_bbr.c (there `static const`
//! values; `bbr_param` expands to `bbr_ ## name`), with the kernel's value beside its
//! name, and the registry entry that exposes them with those defaults.
//!
//! Fractions are in 1/`BBR_UNIT` (1/256) as in the kernel: a spec gives them as real
//! numbers and they are rounded to the nearest 1/256, so the defaults printed by
//! `tcplab algorithms` are the kernel's truncated values (loss_thresh 5/256 = 1.95 %,
//! not 2 %).

use super::BBR_UNIT;
use crate::bbr::gain_to_unit;
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

// Constants of tcp_bbr.c (branch v3), kernel names and values.
/// `bbr_min_rtt_win_sec` = 10.
pub const BBR_MIN_RTT_WIN_SEC: u32 = 10;
/// `bbr_probe_rtt_mode_ms` = 200.
pub const BBR_PROBE_RTT_MODE_MS: u32 = 200;
/// `bbr_probe_rtt_win_ms` = 5000: PROBE_RTT at most every 5 s (v1: 10 s).
pub const BBR_PROBE_RTT_WIN_MS: u32 = 5000;
/// `bbr_probe_rtt_cwnd_gain` = BBR_UNIT * 1 / 2 = 128: PROBE_RTT cwnd 0.5 x BDP.
pub const BBR_PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// `bbr_tso_rtt_shift` = 9: halve the RTT-based TSO allowance per 512 us of min_rtt.
pub const BBR_TSO_RTT_SHIFT: u32 = 9;
/// `bbr_pacing_margin_percent` = 1.
pub const BBR_PACING_MARGIN_PERCENT: u32 = 1;
/// `bbr_startup_pacing_gain` = BBR_UNIT * 277 / 100 + 1 = 710 (2.77 = 4 ln 2).
pub const BBR_STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// `bbr_startup_cwnd_gain` = BBR_UNIT * 2 = 512.
pub const BBR_STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_drain_gain` = BBR_UNIT * 1000 / 2885 = 88.
pub const BBR_DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain` = BBR_UNIT * 2 = 512.
pub const BBR_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_cwnd_min_target` = 4.
pub const BBR_CWND_MIN_TARGET: u32 = 4;
/// `bbr_full_bw_thresh` = BBR_UNIT * 5 / 4 = 320.
pub const BBR_FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt` = 3.
pub const BBR_FULL_BW_CNT: u32 = 3;
/// `bbr_extra_acked_gain` = BBR_UNIT.
pub const BBR_EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// `bbr_extra_acked_win_rtts` = 5.
pub const BBR_EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// `bbr_ack_epoch_acked_reset_thresh` = 1 << 20.
pub const BBR_ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us` = 100 ms.
pub const BBR_EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// `bbr_ecn_max_rtt_us` = 5000: use ECN only at min_rtt <= 5 ms (0 = any RTT).
pub const BBR_ECN_MAX_RTT_US: u32 = 5000;
/// `bbr_beta` = BBR_UNIT * 30 / 100 = 76: on loss, cut to (1 - beta) = 0.7.
pub const BBR_BETA: u32 = BBR_UNIT * 30 / 100;
/// `bbr_ecn_alpha_gain` = BBR_UNIT * 1 / 16 = 16.
pub const BBR_ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// `bbr_ecn_alpha_init` = BBR_UNIT: respond fully to CE at first.
pub const BBR_ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// `bbr_ecn_factor` = BBR_UNIT * 1 / 3 = 85.
pub const BBR_ECN_FACTOR: u32 = BBR_UNIT / 3;
/// `bbr_ecn_thresh` = BBR_UNIT * 1 / 2 = 128.
pub const BBR_ECN_THRESH: u32 = BBR_UNIT / 2;
/// `bbr_ecn_reprobe_gain` = BBR_UNIT * 1 / 2 = 128.
pub const BBR_ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
/// `bbr_loss_thresh` = BBR_UNIT * 2 / 100 = 5 (1.95 %).
pub const BBR_LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// `bbr_loss_probe_recovery` = true.
pub const BBR_LOSS_PROBE_RECOVERY: bool = true;
/// `bbr_full_loss_cnt` = 6.
pub const BBR_FULL_LOSS_CNT: u32 = 6;
/// `bbr_full_ecn_cnt` = 2.
pub const BBR_FULL_ECN_CNT: u32 = 2;
/// `bbr_inflight_headroom` = BBR_UNIT * 15 / 100 = 38.
pub const BBR_INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// `bbr_bw_probe_cwnd_gain` = 1 (in BBR_UNIT / 4: +0.25 in PROBE_UP).
pub const BBR_BW_PROBE_CWND_GAIN: u32 = 1;
/// `bbr_bw_probe_max_rounds` = 63.
pub const BBR_BW_PROBE_MAX_ROUNDS: u32 = 63;
/// `bbr_bw_probe_rand_rounds` = 2.
pub const BBR_BW_PROBE_RAND_ROUNDS: u32 = 2;
/// `bbr_bw_probe_base_us` = 2 s.
pub const BBR_BW_PROBE_BASE_US: u32 = 2_000_000;
/// `bbr_bw_probe_rand_us` = 1 s.
pub const BBR_BW_PROBE_RAND_US: u32 = 1_000_000;
/// `bbr_fast_path` = true.
pub const BBR_FAST_PATH: bool = true;

/// Which kernel the flow runs: BBRv3 (google/bbr v3 tcp_bbr.c) or BBRv2 (google/bbr
/// v2alpha tcp_bbr2.c). The code is shared where the two kernels' code is the same;
/// module `v2` holds what v2 does differently and the places that differ branch on this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V2,
    V3,
}

/// The tunables of one flow, in kernel units.
#[derive(Clone, Debug, PartialEq)]
pub struct Bbr3Config {
    pub version: Version,
    /// `bbr_pacing_gain[]` for UP, DOWN, CRUISE, REFILL.
    pub pacing_gain: [u32; 4],
    pub min_rtt_win_sec: u32,
    pub probe_rtt_mode_ms: u32,
    pub probe_rtt_win_ms: u32,
    pub probe_rtt_cwnd_gain: u32,
    pub tso_rtt_shift: u32,
    pub pacing_margin_percent: u32,
    pub startup_pacing_gain: u32,
    pub startup_cwnd_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    pub cwnd_min_target: u32,
    pub full_bw_thresh: u32,
    pub full_bw_cnt: u32,
    pub extra_acked_gain: u32,
    pub extra_acked_win_rtts: u32,
    pub ecn_max_rtt_us: u32,
    pub beta: u32,
    pub ecn_alpha_gain: u32,
    pub ecn_alpha_init: u32,
    pub ecn_factor: u32,
    pub ecn_thresh: u32,
    pub ecn_reprobe_gain: u32,
    pub loss_thresh: u32,
    pub loss_probe_recovery: bool,
    pub full_loss_cnt: u32,
    pub full_ecn_cnt: u32,
    pub inflight_headroom: u32,
    pub bw_probe_cwnd_gain: u32,
    pub bw_probe_max_rounds: u32,
    pub bw_probe_rand_rounds: u32,
    pub bw_probe_base_us: u32,
    pub bw_probe_rand_us: u32,
    pub fast_path: bool,
    // v2alpha parameters; v3 has none of them, its values make the shared code v3's.
    /// `bbr_bw_probe_pif_gain` (v2: PROBE_UP ends once inflight >= this x BDP).
    pub bw_probe_pif_gain: u32,
    /// `bbr_bw_probe_reno_gain` (v2; v3's bound is the target inflight: 1.0).
    pub bw_probe_reno_gain: u32,
    /// `bbr_ecn_bw_lo`, `bbr_ecn_bw_hi` (v2: ECN also cuts bw_lo / bw_hi; v3: no).
    pub ecn_bw_lo: bool,
    pub ecn_bw_hi: bool,
    /// `bbr_drain_to_target` (v2 parameter; v3 always drains to target).
    pub drain_to_target: bool,
    /// `bbr_refill_add_inc` (v2; v3: 0).
    pub refill_add_inc: u32,
    /// `bbr_undo` (v2; v3 always undoes).
    pub undo: bool,
    /// `bbr_ecn_enable` (v2's switch for its ECN logic; v3 uses `bbr_can_use_ecn`).
    pub ecn_enable: bool,
    /// Ours: the route's `ecn_low` flag (see the module doc's Deviations).
    pub ecn_low: bool,
    /// Ours: seed of the random probe waits.
    pub seed: u64,
}

impl Default for Bbr3Config {
    /// The kernel's constants.
    fn default() -> Self {
        Bbr3Config {
            version: Version::V3,
            pacing_gain: super::probe_bw::BBR_PACING_GAIN,
            min_rtt_win_sec: BBR_MIN_RTT_WIN_SEC,
            probe_rtt_mode_ms: BBR_PROBE_RTT_MODE_MS,
            probe_rtt_win_ms: BBR_PROBE_RTT_WIN_MS,
            probe_rtt_cwnd_gain: BBR_PROBE_RTT_CWND_GAIN,
            tso_rtt_shift: BBR_TSO_RTT_SHIFT,
            pacing_margin_percent: BBR_PACING_MARGIN_PERCENT,
            startup_pacing_gain: BBR_STARTUP_PACING_GAIN,
            startup_cwnd_gain: BBR_STARTUP_CWND_GAIN,
            drain_gain: BBR_DRAIN_GAIN,
            cwnd_gain: BBR_CWND_GAIN,
            cwnd_min_target: BBR_CWND_MIN_TARGET,
            full_bw_thresh: BBR_FULL_BW_THRESH,
            full_bw_cnt: BBR_FULL_BW_CNT,
            extra_acked_gain: BBR_EXTRA_ACKED_GAIN,
            extra_acked_win_rtts: BBR_EXTRA_ACKED_WIN_RTTS,
            ecn_max_rtt_us: BBR_ECN_MAX_RTT_US,
            beta: BBR_BETA,
            ecn_alpha_gain: BBR_ECN_ALPHA_GAIN,
            ecn_alpha_init: BBR_ECN_ALPHA_INIT,
            ecn_factor: BBR_ECN_FACTOR,
            ecn_thresh: BBR_ECN_THRESH,
            ecn_reprobe_gain: BBR_ECN_REPROBE_GAIN,
            loss_thresh: BBR_LOSS_THRESH,
            loss_probe_recovery: BBR_LOSS_PROBE_RECOVERY,
            full_loss_cnt: BBR_FULL_LOSS_CNT,
            full_ecn_cnt: BBR_FULL_ECN_CNT,
            inflight_headroom: BBR_INFLIGHT_HEADROOM,
            bw_probe_cwnd_gain: BBR_BW_PROBE_CWND_GAIN,
            bw_probe_max_rounds: BBR_BW_PROBE_MAX_ROUNDS,
            bw_probe_rand_rounds: BBR_BW_PROBE_RAND_ROUNDS,
            bw_probe_base_us: BBR_BW_PROBE_BASE_US,
            bw_probe_rand_us: BBR_BW_PROBE_RAND_US,
            fast_path: BBR_FAST_PATH,
            bw_probe_pif_gain: BBR_UNIT * 5 / 4,
            bw_probe_reno_gain: BBR_UNIT,
            ecn_bw_lo: false,
            ecn_bw_hi: false,
            drain_to_target: true,
            refill_add_inc: 0,
            undo: true,
            ecn_enable: false,
            ecn_low: true,
            seed: 0,
        }
    }
}

impl Bbr3Config {
    /// From validated `Params` (the schema `PARAMS`).
    pub fn from_params(p: &Params) -> Self {
        let frac = |name: &str| gain_to_unit(p.get(name));
        Bbr3Config {
            min_rtt_win_sec: p.get_u32("min_rtt_win_sec"),
            probe_rtt_mode_ms: p.get_u32("probe_rtt_mode_ms"),
            probe_rtt_win_ms: p.get_u32("probe_rtt_win_ms"),
            probe_rtt_cwnd_gain: frac("probe_rtt_cwnd_gain"),
            tso_rtt_shift: BBR_TSO_RTT_SHIFT,
            pacing_margin_percent: p.get_u32("pacing_margin_percent"),
            startup_pacing_gain: frac("startup_pacing_gain"),
            startup_cwnd_gain: frac("startup_cwnd_gain"),
            drain_gain: frac("drain_gain"),
            cwnd_gain: frac("cwnd_gain"),
            cwnd_min_target: BBR_CWND_MIN_TARGET,
            full_bw_thresh: frac("full_bw_thresh"),
            full_bw_cnt: p.get_u32("full_bw_cnt"),
            extra_acked_gain: if p.get_bool("extra_acked") {
                BBR_EXTRA_ACKED_GAIN
            } else {
                0
            },
            extra_acked_win_rtts: BBR_EXTRA_ACKED_WIN_RTTS,
            ecn_max_rtt_us: p.get_u32("ecn_max_rtt_us"),
            beta: frac("beta"),
            ecn_alpha_gain: frac("ecn_alpha_gain"),
            ecn_alpha_init: frac("ecn_alpha_init"),
            ecn_factor: frac("ecn_factor"),
            ecn_thresh: frac("ecn_thresh"),
            ecn_reprobe_gain: frac("ecn_reprobe_gain"),
            loss_thresh: frac("loss_thresh"),
            loss_probe_recovery: p.get_bool("loss_probe_recovery"),
            full_loss_cnt: p.get_u32("full_loss_cnt"),
            full_ecn_cnt: p.get_u32("full_ecn_cnt"),
            inflight_headroom: frac("inflight_headroom"),
            bw_probe_cwnd_gain: p.get_u32("bw_probe_cwnd_gain"),
            bw_probe_max_rounds: p.get_u32("bw_probe_max_rounds"),
            bw_probe_rand_rounds: p.get_u32("bw_probe_rand_rounds"),
            bw_probe_base_us: p.get_u32("bw_probe_base_us"),
            bw_probe_rand_us: p.get_u32("bw_probe_rand_us"),
            fast_path: p.get_bool("fast_path"),
            ecn_low: p.get_bool("ecn_low"),
            seed: p.get("seed") as u64,
            ..Bbr3Config::default()
        }
    }
}

pub(crate) const U: f64 = BBR_UNIT as f64;
/// Largest gain the kernel's 10-bit `pacing_gain` / `cwnd_gain` fields hold.
pub(crate) const MAX_GAIN: f64 = 1023.0 / U;

pub(crate) const fn frac(
    name: &'static str,
    kernel: u32,
    min: f64,
    max: f64,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Float,
        default: kernel as f64 / U,
        min,
        max,
        doc,
    }
}
pub(crate) const fn int(
    name: &'static str,
    default: u32,
    min: f64,
    max: f64,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Int,
        default: default as f64,
        min,
        max,
        doc,
    }
}
pub(crate) const fn flag(name: &'static str, default: bool, doc: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Bool,
        default: if default { 1.0 } else { 0.0 },
        min: 0.0,
        max: 1.0,
        doc,
    }
}

/// Fractions below 1 are stored in 8 bits at most in the kernel (`ecn_alpha` 9 bits).
pub(crate) const FRAC_MAX: f64 = 255.0 / U;

/// The parameter schema of `bbr3`.
pub static PARAMS: &[ParamSpec] = &[
    frac("loss_thresh", BBR_LOSS_THRESH, 1.0 / U, FRAC_MAX,
        "loss rate above which a probe's inflight is too high, 1/256 steps; tcp_bbr.c (v3) bbr_loss_thresh = BBR_UNIT*2/100 = 5/256"),
    frac("beta", BBR_BETA, 0.0, FRAC_MAX,
        "multiplicative cut of bw_lo/inflight_lo per lossy round is (1 - beta), 1/256 steps; bbr_beta = BBR_UNIT*30/100 = 76/256"),
    frac("inflight_headroom", BBR_INFLIGHT_HEADROOM, 0.0, FRAC_MAX,
        "fraction of inflight_hi left unused while cruising, 1/256 steps; bbr_inflight_headroom = BBR_UNIT*15/100 = 38/256"),
    frac("ecn_thresh", BBR_ECN_THRESH, 0.0, 1.0,
        "CE ratio above which a probe's inflight is too high (0 = off), 1/256 steps; bbr_ecn_thresh = BBR_UNIT/2"),
    frac("ecn_factor", BBR_ECN_FACTOR, 0.0, 1.0,
        "ECN cut of inflight_lo is (1 - ecn_factor*ecn_alpha) (0 = off), 1/256 steps; bbr_ecn_factor = BBR_UNIT/3 = 85/256"),
    frac("ecn_alpha_gain", BBR_ECN_ALPHA_GAIN, 1.0 / U, 1.0,
        "EWMA gain of ecn_alpha per round, 1/256 steps; bbr_ecn_alpha_gain = BBR_UNIT/16"),
    frac("ecn_alpha_init", BBR_ECN_ALPHA_INIT, 0.0, 1.0,
        "initial ecn_alpha, 1/256 steps; bbr_ecn_alpha_init = BBR_UNIT (1.0)"),
    frac("ecn_reprobe_gain", BBR_ECN_REPROBE_GAIN, 0.0, 1.0,
        "first-round inflight_hi increment after ECN clears, x inflight_hi (0 = off); bbr_ecn_reprobe_gain = BBR_UNIT/2"),
    int("ecn_max_rtt_us", BBR_ECN_MAX_RTT_US, 0.0, 10_000_000.0,
        "use ECN only at min_rtt <= this (us; 0 = any RTT); bbr_ecn_max_rtt_us = 5000"),
    flag("ecn_low", true,
        "the path is a shallow-threshold ECN path (the kernel's per-route TCP_ECN_LOW, bbr_can_use_ecn); ECN is used only if also negotiated (ours)"),
    frac("startup_pacing_gain", BBR_STARTUP_PACING_GAIN, 1.0, MAX_GAIN,
        "STARTUP pacing gain, 1/256 steps; bbr_startup_pacing_gain = BBR_UNIT*277/100+1 = 710/256 (4 ln 2)"),
    frac("startup_cwnd_gain", BBR_STARTUP_CWND_GAIN, 1.0, MAX_GAIN,
        "STARTUP and DRAIN cwnd gain, 1/256 steps; bbr_startup_cwnd_gain = BBR_UNIT*2"),
    frac("drain_gain", BBR_DRAIN_GAIN, 1.0 / U, 1.0,
        "DRAIN pacing gain, 1/256 steps; bbr_drain_gain = BBR_UNIT*1000/2885 = 88/256"),
    frac("cwnd_gain", BBR_CWND_GAIN, 0.25, MAX_GAIN,
        "PROBE_BW cwnd gain, 1/256 steps; bbr_cwnd_gain = BBR_UNIT*2"),
    int("bw_probe_cwnd_gain", BBR_BW_PROBE_CWND_GAIN, 0.0, 3.0,
        "extra PROBE_UP cwnd gain in quarters (1 = +0.25); bbr_bw_probe_cwnd_gain = 1"),
    frac("full_bw_thresh", BBR_FULL_BW_THRESH, 1.0, MAX_GAIN,
        "bw growth that counts as 'still growing', 1/256 steps; bbr_full_bw_thresh = BBR_UNIT*5/4"),
    int("full_bw_cnt", BBR_FULL_BW_CNT, 1.0, 3.0,
        "rounds without growth before the pipe is full (2-bit field); bbr_full_bw_cnt = 3"),
    int("full_loss_cnt", BBR_FULL_LOSS_CNT, 0.0, 15.0,
        "loss events in a Recovery round (with loss above loss_thresh) that end STARTUP (0 = off); bbr_full_loss_cnt = 6"),
    int("full_ecn_cnt", BBR_FULL_ECN_CNT, 0.0, 3.0,
        "rounds with CE ratio above ecn_thresh that end STARTUP (0 = off); bbr_full_ecn_cnt = 2"),
    int("bw_probe_max_rounds", BBR_BW_PROBE_MAX_ROUNDS, 1.0, 255.0,
        "most packet-timed rounds between bw probes (Reno coexistence); bbr_bw_probe_max_rounds = 63"),
    int("bw_probe_rand_rounds", BBR_BW_PROBE_RAND_ROUNDS, 1.0, 255.0,
        "random rounds (0..n-1) credited at each probe wait; bbr_bw_probe_rand_rounds = 2"),
    int("bw_probe_base_us", BBR_BW_PROBE_BASE_US, 0.0, 60_000_000.0,
        "base wall-clock wait between bw probes (us); bbr_bw_probe_base_us = 2 s"),
    int("bw_probe_rand_us", BBR_BW_PROBE_RAND_US, 1.0, 60_000_000.0,
        "random extra wait, uniform in [0, n) us; bbr_bw_probe_rand_us = 1 s"),
    int("probe_rtt_win_ms", BBR_PROBE_RTT_WIN_MS, 1.0, 10_000.0,
        "PROBE_RTT when min_rtt was not refreshed for this long (ms; <= min_rtt_win_sec); bbr_probe_rtt_win_ms = 5000"),
    int("probe_rtt_mode_ms", BBR_PROBE_RTT_MODE_MS, 0.0, 10_000.0,
        "time at the PROBE_RTT cwnd (ms; 0 = no PROBE_RTT); bbr_probe_rtt_mode_ms = 200"),
    frac("probe_rtt_cwnd_gain", BBR_PROBE_RTT_CWND_GAIN, 0.0, MAX_GAIN,
        "PROBE_RTT cwnd x BDP, 1/256 steps; bbr_probe_rtt_cwnd_gain = BBR_UNIT/2"),
    int("min_rtt_win_sec", BBR_MIN_RTT_WIN_SEC, 10.0, 3600.0,
        "min_rtt filter window (s); bbr_min_rtt_win_sec = 10"),
    int("pacing_margin_percent", BBR_PACING_MARGIN_PERCENT, 0.0, 99.0,
        "pace this many percent below the estimate; bbr_pacing_margin_percent = 1"),
    flag("extra_acked", true,
        "add the ACK-aggregation estimate to the cwnd; bbr_extra_acked_gain = BBR_UNIT (on)"),
    flag("loss_probe_recovery", BBR_LOSS_PROBE_RECOVERY,
        "treat a loss repaired by a tail loss probe as a loss; bbr_loss_probe_recovery = true"),
    flag("fast_path", BBR_FAST_PATH,
        "skip the model update on app-limited ACKs that change nothing (bbr_run_fast_path); bbr_fast_path = true"),
    ParamSpec {
        name: "seed",
        kind: ParamKind::Int,
        default: 0.0,
        min: 0.0,
        max: 9_007_199_254_740_991.0, // 2^53 - 1: exact in an f64
        doc: "seed of the random probe waits (kernel: get_random_u32_below); the engine \
              fills a per-flow value from the run seed when unset",
    },
];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "bbr3",
    family: crate::registry::Family::Bbr3,
    summary:
        "BBRv3: BBR with loss/ECN bounds (bw_lo/hi, inflight_lo/hi), PROBE_BW DOWN/CRUISE/REFILL/UP",
    source: "google/bbr branch v3, net/ipv4/tcp_bbr.c (BBR_VERSION 3)",
    params: PARAMS,
    build: |p: &Params| Box::new(super::Bbr3Ops::new(Bbr3Config::from_params(p))),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry defaults convert back to exactly the kernel's constants.
    #[test]
    fn defaults_are_the_kernel_constants() {
        assert_eq!(
            Bbr3Config::from_params(&SPEC.default_params()),
            Bbr3Config::default()
        );
        // Hand-computed from the kernel expressions.
        assert_eq!(BBR_STARTUP_PACING_GAIN, 710);
        assert_eq!(BBR_LOSS_THRESH, 5);
        assert_eq!(BBR_BETA, 76);
        assert_eq!(BBR_INFLIGHT_HEADROOM, 38);
        assert_eq!(BBR_ECN_FACTOR, 85);
        assert_eq!(BBR_DRAIN_GAIN, 88);
    }
}

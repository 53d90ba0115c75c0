//! `bbr`: BBR v1 as Linux runs it, a port of net/ipv4/tcp_bbr.c.
//!
//! Model. BBR builds a model of the path from the ACK stream and sends at the rate the
//! model says the path delivers, rather than reacting to loss. On every ACK
//! (`bbr_main`, our `cong_control`) it updates a windowed maximum of delivery-rate
//! samples over the last 10 packet-timed rounds (the bottleneck bandwidth, BtlBw) and a
//! windowed minimum RTT over 10 seconds (RTprop), then sets
//! `pacing_rate = pacing_gain * BtlBw * (1 - 1 %)` and
//! `cwnd = cwnd_gain * BtlBw * RTprop + extra_acked + quantization budget`.
//! A state machine chooses the gains: STARTUP (2/ln 2, doubling the rate each round)
//! until the bandwidth stops growing by 25 % for 3 rounds; DRAIN (1/2.885) until
//! inflight is back to one BDP; PROBE_BW cycling pacing gains 1.25, 0.75, 1 x 6, one
//! phase per RTprop, starting at a random phase; and PROBE_RTT (cwnd 4 for at least
//! 200 ms and one round) when RTprop has not been refreshed for 10 s. Loss recovery
//! uses packet conservation for the first round and restores the prior cwnd after it.
//! A long-term estimator detects token-bucket policers (consistent throughput with
//! >= 20 % loss over two intervals) and then paces at the policed rate for 48 rounds.
//!
//! Kernel functions followed, one module per concern (names kept for grepping):
//! - `crate::minmax` (shared with the simulator's min_rtt filter): lib/win_minmax.c
//!   `minmax_running_max`, for the windowed max bandwidth.
//! - `round`: the round counting at the top of `bbr_update_bw`.
//! - `bw`: `bbr_update_bw`, `bbr_max_bw`, `bbr_bw`.
//! - `startup`: `bbr_check_full_bw_reached`, `bbr_reset_startup_mode`, `bbr_reset_mode`.
//! - `drain`: `bbr_check_drain`.
//! - `probe_bw`: `bbr_is_next_cycle_phase`, `bbr_advance_cycle_phase`,
//!   `bbr_update_cycle_phase`, `bbr_reset_probe_bw_mode`, `bbr_pacing_gain[]`.
//! - `probe_rtt`: `bbr_update_min_rtt`, `bbr_check_probe_rtt_done`.
//! - `pacing`: `bbr_rate_bytes_per_sec`, `bbr_bw_to_pacing_rate`,
//!   `bbr_init_pacing_rate_from_rtt`, `bbr_set_pacing_rate`, `bbr_min_tso_segs`,
//!   `bbr_tso_segs_goal`.
//! - `cwnd`: `bbr_bdp`, `bbr_quantization_budget`, `bbr_inflight`,
//!   `bbr_packets_in_net_at_edt`, `bbr_ack_aggregation_cwnd`, `bbr_set_cwnd`,
//!   `bbr_save_cwnd`.
//! - `recovery`: `bbr_set_cwnd_to_recover_or_restore`.
//! - `ack_aggregation`: `bbr_update_ack_aggregation`, `bbr_extra_acked`.
//! - `lt_bw`: `bbr_lt_bw_sampling`, `bbr_lt_bw_interval_done`,
//!   `bbr_reset_lt_bw_sampling(_interval)`.
//! - `model`: `bbr_update_model`, `bbr_update_gains`, `bbr_main`.
//! - `family`: `bbr_init`, `bbr_ssthresh`, `bbr_undo_cwnd`, `bbr_cwnd_event`,
//!   `bbr_set_state`, `bbr_get_info`: the `tcp_congestion_ops` of every BBR flavour.
//! - `variant`: the extension points the research variants (crate::variants) override;
//!   `KernelBbr` overrides nothing and is plain BBR.
//!
//! Kernel version. The default is mainline tcp_bbr.c (compared line by line with a
//! v6.x tree). The `kernel` parameter (`[tcp] kernel`) selects the behaviour of an
//! older release instead, 4.9 (the TUM paper's), 4.14 (BBR-CWS's) or 4.17 (BBR-ACD's):
//! module `kernel` has one predicate per upstream change since v4.9, named by its commit
//! (extra_acked 78dc70ebaa38, the probe quanta 383d470936c0 / 6b3656a60f20,
//! departure-time pacing and its 1 % margin, the v4.19 PROBE_RTT fixes, min_rtt `<`
//! 1b9e2a8c99a5, the round start 6de035fec045, the v4.13 pacing and v4.15 undo
//! changes), and docs/BBR_KERNELS.md tabulates them. Not profiled (all releases run
//! today's code for them): the v4.16 lt_bw pacing-gain fix, the v4.17 minimum TSO
//! segments, the DRAIN ssthresh, and the pacing rate set from the first RTT sample (with
//! the simulator's handshake `bbr_init` has the SYN-ACK's RTT, as a 4.9 host has).
//!
//! Units are the kernel's: bandwidth in packets per microsecond << `BW_SCALE` (24), gains
//! in 1/`BBR_UNIT` (1/256), cwnd in packets, times in us (`tcp_mstamp`) or jiffies at
//! the simulated CONFIG_HZ (`CcView::hz`: `min_rtt_stamp`, `probe_rtt_done_stamp`), so
//! rounding matches the kernel.
//!
//! Deviations (where the simulator's BBR necessarily differs from a Linux host):
//! - No TSO/GSO autosizing. We keep the kernel's `bbr_tso_segs_goal` formula (with the
//!   default `sk_pacing_shift` of 10, i.e. ~1 ms of data, at least `bbr_min_tso_segs`
//!   = 2 above 1.2 Mbit/s) because it feeds the cwnd: `bbr_quantization_budget` adds
//!   3 * tso_segs_goal (6 packets at 10 Mbit/s, 12 at 50, 24 at 100 Mbit/s with
//!   1448-byte MSS), exactly the headroom a Linux sender computes. The simulator still
//!   sends one MSS per paced departure, so the packets of a "TSO burst" leave spaced,
//!   not back to back: the quantization headroom exists in cwnd but the micro-bursts
//!   that motivate it on a real host do not.
//! - No fq qdisc: departures are spaced by the sender's internal pacing (the kernel's
//!   fallback without fq, `tcp_update_skb_after_send`), which keeps the earliest
//!   departure time `tp->tcp_wstamp_ns` that `bbr_packets_in_net_at_edt` reads. With
//!   one segment per departure the EDT is at most one packet gap ahead, so the term it
//!   subtracts is below 1 / (pacing_gain x 0.99) packets: 0 at gain 1.25, at most 1 at
//!   0.75 and 1.0, at most 2 in DRAIN (0.34).
//! - No TSQ (TCP small queues): nothing throttles the sender below what cwnd and pacing
//!   allow, so there is no local queueing between TCP and the wire.
//! - The PROBE_BW start phase comes from a seeded SplitMix64 (`rng`), not the kernel's
//!   entropy pool: runs are reproducible. Parameter `seed`; one per flow (see `rng`).
//! - `lt_bw` and `extra_acked` can be switched off (parameters); the kernel has them as
//!   compile-time constants (`bbr_extra_acked_gain` = 0 disables the latter there too).
//!   On releases before 5.1 (`extra_acked`) and 4.20 (`pacing_margin_percent`) those
//!   parameters have no effect: the features did not exist.
//! - `extra_acked[]` keeps the kernel's u16 width, `lt_rtt_cnt` etc. their counts; the
//!   delivered/lost counters are u64 (no 32-bit wrap), the only width change.

pub mod ack_aggregation;
pub mod bw;
pub mod cwnd;
pub mod drain;
pub mod family;
pub mod kernel;
pub mod lt_bw;
pub mod model;
pub mod pacing;
pub mod probe_bw;
pub mod probe_rtt;
pub mod recovery;
pub mod rng;
pub mod round;
pub mod startup;
pub mod variant;

#[cfg(test)]
mod kernel_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use crate::ops::CaState;
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

pub use family::BbrFamily;
pub use kernel::KernelRelease;
pub use variant::{BbrVariant, KernelBbr, RecoverOrRestore};

use crate::minmax::Minmax;
use rng::CycleRng;

/// Scale of bandwidth, in packets per microsecond: one unit is ~715 bit/s at 1500 bytes
/// (tcp_bbr.c `BW_SCALE`), so u32 covers 0.06 packets/s to 256 Mpackets/s.
pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;

/// Scale of BBR's fractions (gains): 1/256 steps (tcp_bbr.c `BBR_SCALE`).
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// `bbr_high_gain` = BBR_UNIT * 2885 / 1000 + 1 = 739 (2.887): 2/ln 2 is the smallest
/// pacing gain that doubles the sending rate every round, as slow start does.
pub const BBR_HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain` = BBR_UNIT * 1000 / 2885 = 88 (0.344): the inverse of high_gain,
/// to drain STARTUP's queue in about one round.
pub const BBR_DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain` = 2: the steady-state cwnd tolerates delayed and stretched ACKs.
pub const BBR_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_bw_rtts` = CYCLE_LEN + 2 = 10: the bandwidth filter spans one gain cycle and
/// then some, so the 1.25 probe of the last cycle is always inside it.
pub const BBR_BW_RTTS: u32 = probe_bw::CYCLE_LEN + 2;
/// `bbr_min_rtt_win_sec` = 10: RTprop's window.
pub const BBR_MIN_RTT_WIN_SEC: u32 = 10;
/// `bbr_probe_rtt_mode_ms` = 200: time at cwnd 4 in PROBE_RTT; with 10 s between
/// visits it bounds the throughput penalty to about 2 %.
pub const BBR_PROBE_RTT_MODE_MS: u32 = 200;
/// `bbr_pacing_margin_percent` = 1: pace 1 % below the estimate to keep queues low.
pub const BBR_PACING_MARGIN_PERCENT: u32 = 1;
/// `bbr_cwnd_min_target` = 4: an ACK-every-other-packet receiver needs 4 in flight.
pub const BBR_CWND_MIN_TARGET: u32 = 4;

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BbrMode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    Startup,
    /// Drain the queue created during STARTUP.
    Drain,
    /// Discover and share bandwidth: pace around the estimate.
    ProbeBw,
    /// Cut inflight to the minimum to probe min_rtt.
    ProbeRtt,
}

impl BbrMode {
    /// The label `info()` reports.
    pub fn label(self) -> &'static str {
        match self {
            BbrMode::Startup => "STARTUP",
            BbrMode::Drain => "DRAIN",
            BbrMode::ProbeBw => "PROBE_BW",
            BbrMode::ProbeRtt => "PROBE_RTT",
        }
    }
}

/// The tunables, immutable per flow. Gains are in BBR_UNIT fixed point.
#[derive(Clone, Debug, PartialEq)]
pub struct BbrConfig {
    pub high_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    pub bw_rtts: u32,
    pub min_rtt_win_sec: u32,
    pub probe_rtt_mode_ms: u32,
    pub pacing_margin_percent: u32,
    /// `bbr_extra_acked_gain`: BBR_UNIT when the ACK-aggregation term is on, else 0.
    pub extra_acked_gain: u32,
    /// Run the long-term (policer) estimator.
    pub lt_bw: bool,
    /// Seed of the PROBE_BW start-phase draws.
    pub seed: u64,
    /// The tcp_bbr.c release whose behaviour to follow (`kernel` module).
    pub kernel: KernelRelease,
}

impl Default for BbrConfig {
    /// The kernel's constants.
    fn default() -> Self {
        BbrConfig {
            high_gain: BBR_HIGH_GAIN,
            drain_gain: BBR_DRAIN_GAIN,
            cwnd_gain: BBR_CWND_GAIN,
            bw_rtts: BBR_BW_RTTS,
            min_rtt_win_sec: BBR_MIN_RTT_WIN_SEC,
            probe_rtt_mode_ms: BBR_PROBE_RTT_MODE_MS,
            pacing_margin_percent: BBR_PACING_MARGIN_PERCENT,
            extra_acked_gain: BBR_UNIT,
            lt_bw: true,
            seed: 0,
            kernel: KernelRelease::V6_18,
        }
    }
}

/// A gain given as a real number, to BBR_UNIT fixed point (nearest 1/256).
pub fn gain_to_unit(x: f64) -> u32 {
    (x * f64::from(BBR_UNIT)).round() as u32
}

impl BbrConfig {
    /// Read the BBR parameters (`params::ALL`) from validated `Params`. Every BBR
    /// variant's schema includes them (see `bbr_param_specs!`).
    /// A profile older than a feature switches it off whatever its parameter says:
    /// `extra_acked` (v5.1) and the pacing margin (v4.20) did not exist before.
    pub fn from_params(p: &Params) -> Self {
        // Validation admits only the profiled codes (`AlgorithmSpec::validate`).
        let kernel = KernelRelease::from_code(p.get("kernel")).unwrap_or_default();
        BbrConfig {
            high_gain: gain_to_unit(p.get("high_gain")),
            drain_gain: gain_to_unit(p.get("drain_gain")),
            cwnd_gain: gain_to_unit(p.get("cwnd_gain")),
            bw_rtts: p.get_u32("bw_rtts"),
            min_rtt_win_sec: p.get_u32("min_rtt_win_sec"),
            probe_rtt_mode_ms: p.get_u32("probe_rtt_mode_ms"),
            pacing_margin_percent: if kernel.departure_time_pacing() {
                p.get_u32("pacing_margin_percent")
            } else {
                0
            },
            extra_acked_gain: if p.get_bool("extra_acked") && kernel.extra_acked() {
                BBR_UNIT
            } else {
                0
            },
            lt_bw: p.get_bool("lt_bw"),
            seed: p.get("seed") as u64,
            kernel,
        }
    }
}

/// The parameter schema shared by `bbr` and its variants.
pub mod params {
    use super::*;

    /// Largest gain the kernel's 10-bit `pacing_gain`/`cwnd_gain` fields hold: 1023/256.
    const MAX_GAIN: f64 = 1023.0 / 256.0;

    pub const CWND_GAIN: ParamSpec = ParamSpec {
        name: "cwnd_gain",
        kind: ParamKind::Float,
        default: 2.0,
        min: 0.25,
        max: MAX_GAIN,
        doc: "PROBE_BW cwnd gain (x BDP), in 1/256 steps; tcp_bbr.c bbr_cwnd_gain = 2",
    };
    pub const HIGH_GAIN: ParamSpec = ParamSpec {
        name: "high_gain",
        kind: ParamKind::Float,
        default: 739.0 / 256.0,
        min: 1.0,
        max: MAX_GAIN,
        doc: "STARTUP pacing and cwnd gain, in 1/256 steps; tcp_bbr.c bbr_high_gain = \
              BBR_UNIT*2885/1000+1 = 739/256 (2/ln 2)",
    };
    pub const DRAIN_GAIN: ParamSpec = ParamSpec {
        name: "drain_gain",
        kind: ParamKind::Float,
        default: 88.0 / 256.0,
        min: 1.0 / 256.0,
        max: 1.0,
        doc: "DRAIN pacing gain, in 1/256 steps; tcp_bbr.c bbr_drain_gain = \
              BBR_UNIT*1000/2885 = 88/256",
    };
    pub const PROBE_RTT_MODE_MS: ParamSpec = ParamSpec {
        name: "probe_rtt_mode_ms",
        kind: ParamKind::Int,
        default: 200.0,
        min: 0.0,
        max: 10_000.0,
        doc: "minimum time at cwnd 4 in PROBE_RTT (ms); 0 disables PROBE_RTT; \
              tcp_bbr.c bbr_probe_rtt_mode_ms = 200",
    };
    pub const MIN_RTT_WIN_SEC: ParamSpec = ParamSpec {
        name: "min_rtt_win_sec",
        kind: ParamKind::Int,
        default: 10.0,
        min: 1.0,
        max: 3600.0,
        doc: "min_rtt filter window (s); tcp_bbr.c bbr_min_rtt_win_sec = 10",
    };
    pub const BW_RTTS: ParamSpec = ParamSpec {
        name: "bw_rtts",
        kind: ParamKind::Int,
        default: 10.0,
        min: 1.0,
        max: 1000.0,
        doc: "bandwidth max-filter window (packet-timed rounds); tcp_bbr.c \
              bbr_bw_rtts = CYCLE_LEN + 2 = 10",
    };
    pub const PACING_MARGIN_PERCENT: ParamSpec = ParamSpec {
        name: "pacing_margin_percent",
        kind: ParamKind::Int,
        default: 1.0,
        min: 0.0,
        max: 99.0,
        doc: "pace this many percent below the estimate (%); tcp_bbr.c \
              bbr_pacing_margin_percent = 1",
    };
    pub const EXTRA_ACKED: ParamSpec = ParamSpec {
        name: "extra_acked",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "add the ACK-aggregation estimate to the target cwnd; tcp_bbr.c \
              bbr_extra_acked_gain = BBR_UNIT (on)",
    };
    pub const LT_BW: ParamSpec = ParamSpec {
        name: "lt_bw",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "run the long-term bandwidth (policer) estimator; tcp_bbr.c \
              bbr_lt_bw_sampling (always on in the kernel)",
    };
    pub const KERNEL: ParamSpec = ParamSpec {
        name: "kernel",
        kind: ParamKind::Choice(&KernelRelease::CHOICES),
        default: 618.0,
        min: 409.0,
        max: 618.0,
        doc: "tcp_bbr.c release to follow, major*100+minor (the choices' values; their \
              labels are the Linux releases); set from [tcp] kernel; older releases lack \
              extra_acked and the pacing margin (docs/BBR_KERNELS.md)",
    };
    pub const SEED: ParamSpec = ParamSpec {
        name: "seed",
        kind: ParamKind::Int,
        default: 0.0,
        min: 0.0,
        max: 9_007_199_254_740_991.0, // 2^53 - 1: exact in an f64
        doc: "seed of the PROBE_BW random start phase (kernel: get_random_u32_below); \
              the engine fills a per-flow value from the run seed when unset",
    };
}

/// The BBR parameter list followed by a variant's own, as a `&'static [ParamSpec]`:
/// `params: bbr_param_specs![ALPHA]`.
#[macro_export]
macro_rules! bbr_param_specs {
    ($($extra:expr),* $(,)?) => {
        &[
            $crate::bbr::params::CWND_GAIN,
            $crate::bbr::params::HIGH_GAIN,
            $crate::bbr::params::DRAIN_GAIN,
            $crate::bbr::params::PROBE_RTT_MODE_MS,
            $crate::bbr::params::MIN_RTT_WIN_SEC,
            $crate::bbr::params::BW_RTTS,
            $crate::bbr::params::PACING_MARGIN_PERCENT,
            $crate::bbr::params::EXTRA_ACKED,
            $crate::bbr::params::LT_BW,
            $crate::bbr::params::SEED,
            $crate::bbr::params::KERNEL,
            $($extra),*
        ]
    };
}

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "bbr",
    family: crate::registry::Family::Bbr,
    summary: "BBR v1: model-based pacing at the bottleneck bandwidth, cwnd 2 BDP",
    source: "Linux net/ipv4/tcp_bbr.c (BBR v1), lib/win_minmax.c",
    params: bbr_param_specs![],
    build: |p: &Params| Box::new(BbrFamily::new(BbrConfig::from_params(p), KernelBbr)),
};

/// `struct bbr`: the per-flow state. Fields keep the kernel's names and units; they are
/// `pub(crate)` so the variants in `crate::variants` can read (and where their paper
/// says so, change) them through the `BbrVariant` hooks.
#[derive(Clone, Debug)]
pub struct Bbr {
    pub(crate) cfg: BbrConfig,
    /// Min RTT in the `min_rtt_win_sec` window (us); `u32::MAX` until the first sample.
    pub(crate) min_rtt_us: u32,
    /// When `min_rtt_us` was taken (jiffies).
    pub(crate) min_rtt_stamp: u32,
    /// End of PROBE_RTT (jiffies); 0 = not yet at the minimum inflight.
    pub(crate) probe_rtt_done_stamp: u32,
    /// Max recent delivery rate, packets/us << BW_SCALE, over `bw_rtts` rounds.
    pub(crate) bw: Minmax,
    /// Packet-timed rounds elapsed.
    pub(crate) rtt_cnt: u32,
    /// `tp->delivered` at which the current round ends.
    pub(crate) next_rtt_delivered: u64,
    /// Start of the current gain-cycle phase (us, a `delivered_mstamp`).
    pub(crate) cycle_mstamp: u64,
    pub(crate) mode: BbrMode,
    /// CA state on the previous ACK.
    pub(crate) prev_ca_state: CaState,
    /// First round of recovery: send one packet per packet acked.
    pub(crate) packet_conservation: bool,
    /// This ACK started a new packet-timed round.
    pub(crate) round_start: bool,
    /// Restarting after idle.
    pub(crate) idle_restart: bool,
    /// A PROBE_RTT round at the minimum inflight has elapsed.
    pub(crate) probe_rtt_round_done: bool,
    /// Taking long-term samples now.
    pub(crate) lt_is_sampling: bool,
    /// Rounds in the long-term interval.
    pub(crate) lt_rtt_cnt: u32,
    /// Use `lt_bw` as the bandwidth estimate (a policer was detected).
    pub(crate) lt_use_bw: bool,
    /// Long-term delivery rate, packets/us << BW_SCALE.
    pub(crate) lt_bw: u32,
    /// Long-term interval start: `tp->delivered`.
    pub(crate) lt_last_delivered: u64,
    /// Long-term interval start: `tp->delivered_mstamp` in ms.
    pub(crate) lt_last_stamp: u32,
    /// Long-term interval start: `tp->lost`.
    pub(crate) lt_last_lost: u64,
    /// Current pacing gain, BBR_UNIT fixed point.
    pub(crate) pacing_gain: u32,
    /// Current cwnd gain, BBR_UNIT fixed point.
    pub(crate) cwnd_gain: u32,
    /// STARTUP has filled the pipe.
    pub(crate) full_bw_reached: bool,
    /// Rounds without large bandwidth gains.
    pub(crate) full_bw_cnt: u32,
    /// Index into the pacing-gain cycle.
    pub(crate) cycle_idx: u32,
    /// An RTT sample has been seen (pacing rate initialised from it).
    pub(crate) has_seen_rtt: bool,
    /// cwnd before loss recovery or PROBE_RTT.
    pub(crate) prior_cwnd: u32,
    /// Kernels before v4.19 (`KernelRelease::probe_rtt_v419`): restore `prior_cwnd`
    /// in the next `bbr_set_cwnd` that acks data (the old `bbr->restore_cwnd` bit).
    pub(crate) restore_cwnd: bool,
    /// Recent bandwidth, to decide whether the pipe is full.
    pub(crate) full_bw: u32,
    /// Start of the ACK-sampling epoch (us).
    pub(crate) ack_epoch_mstamp: u64,
    /// Max excess data ACKed in each of the two epochs of the window (packets).
    pub(crate) extra_acked: [u16; 2],
    /// Packets (S)ACKed in the sampling epoch.
    pub(crate) ack_epoch_acked: u32,
    /// Age of `extra_acked[extra_acked_win_idx]` in rounds.
    pub(crate) extra_acked_win_rtts: u32,
    /// Current slot of `extra_acked`.
    pub(crate) extra_acked_win_idx: usize,
    /// Source of the PROBE_BW start phase (ours; the kernel uses its entropy pool).
    pub(crate) rng: CycleRng,
    /// Ours: the target cwnd of the last `bbr_set_cwnd` (bdp + aggregation + budget),
    /// for `info()` and the variants.
    pub(crate) target_cwnd: u32,
    /// Ours: `tp->mss_cache` at the last hook, so `info()` can convert bw to bit/s.
    pub(crate) mss: u32,
}

impl Bbr {
    /// State before `bbr_init` runs; `family::bbr_init` sets everything the kernel does.
    pub fn new(cfg: BbrConfig) -> Self {
        let rng = CycleRng::new(cfg.seed);
        Bbr {
            cfg,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: Minmax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: BbrMode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: BBR_UNIT,
            cwnd_gain: BBR_UNIT,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            restore_cwnd: false,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            rng,
            target_cwnd: 0,
            mss: 0,
        }
    }

    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }
    pub fn round_start(&self) -> bool {
        self.round_start
    }
    pub fn rtt_cnt(&self) -> u32 {
        self.rtt_cnt
    }
    pub fn prior_cwnd(&self) -> u32 {
        self.prior_cwnd
    }
    pub fn target_cwnd(&self) -> u32 {
        self.target_cwnd
    }
}

/// `after(a, b)` on 32-bit jiffies, wrapping as the kernel's `(s32)(b - a) < 0`.
pub(crate) fn after32(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

impl BbrMode {
    /// The transitions tcp_bbr.c can make: STARTUP -> DRAIN (`bbr_check_drain`),
    /// DRAIN -> PROBE_BW (queue drained), any but PROBE_RTT -> PROBE_RTT
    /// (`bbr_update_min_rtt`), PROBE_RTT -> STARTUP or PROBE_BW (`bbr_reset_mode`),
    /// and re-entering STARTUP (`bbr_init`) or PROBE_BW (`bbr_lt_bw_sampling` restarting
    /// gain cycling).
    pub fn can_become(self, next: BbrMode) -> bool {
        use BbrMode::*;
        matches!(
            (self, next),
            (Startup, Startup | Drain | ProbeRtt)
                | (Drain, ProbeBw | ProbeRtt)
                | (ProbeBw, ProbeBw | ProbeRtt)
                | (ProbeRtt, Startup | ProbeBw)
        )
    }
}

/// Every mode change goes through here; debug builds check it is one the kernel makes.
pub(crate) fn bbr_set_mode(bbr: &mut Bbr, mode: BbrMode) {
    debug_assert!(
        bbr.mode.can_become(mode),
        "BBR mode {:?} -> {:?} is not a kernel transition",
        bbr.mode,
        mode
    );
    bbr.mode = mode;
}

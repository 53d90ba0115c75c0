//! `bbr3`: BBRv3 as Google proposed it for upstream Linux, a port of net/ipv4/tcp_bbr.c
//! on the `v3` branch of github.com/google/bbr (`BBR_VERSION` 3). The same code runs
//! BBRv2 (`bbr2`, branch v2alpha tcp_bbr2.c) with `Bbr3Config::v2()`; module `v2`.
//!
//! Model. Like BBRv1, BBRv3 paces at a bandwidth estimate and bounds inflight by an
//! estimate of the BDP, but its model has an operating *range* learned also from loss
//! and ECN. Upper bounds, robust and long-term: `bw_hi` (max delivery rate over the last
//! 1-2 PROBE_BW cycles, `bw_hi[2]`) and `inflight_hi` (the most inflight found safe: cut
//! to the inflight at which a probe's loss rate passed `loss_thresh` = 2 % or its CE
//! ratio passed `ecn_thresh` = 50 %, else raised while probing). Lower bounds, short-term:
//! `bw_lo` and `inflight_lo`, cut once per round with loss (to 1 - `beta` = 0.7 of
//! themselves, not below what the last round delivered) or with ECN (by
//! `ecn_factor` x `ecn_alpha`, a 1/16-gain EWMA of the CE ratio), outside bandwidth
//! probing only; reset when a probe starts. The rate is `min(bw_hi, bw_lo)`; cwnd is
//! `cwnd_gain x BDP` bounded by inflight_hi (with 15 % headroom while cruising) and
//! inflight_lo.
//!
//! STARTUP paces at 2.77 (4 ln 2) until the bw plateaus for 3 rounds, or a Recovery
//! round has >= 6 loss events and loss above loss_thresh, or 2 rounds have CE above
//! ecn_thresh; DRAIN (0.35) until inflight <= BDP. PROBE_BW is a cycle of phases: DOWN
//! (0.91) until inflight is below both the BDP and inflight_hi less headroom; CRUISE
//! (1.0) until it is time to probe, which is a randomised wall-clock wait of 2-3 s or
//! `min(63, BDP)` packet-timed rounds (Reno coexistence), whichever is first; REFILL
//! (1.0, bounds reset) for one round; UP (1.25, cwnd_gain 2.25) growing inflight_hi
//! exponentially per round until loss/ECN is too high, the bw plateaus, or it reaches
//! the inflight_hi of a previous probe that went too high; then DOWN again. PROBE_RTT
//! runs when min_rtt has not been refreshed for 5 s: cwnd = 0.5 x BDP for 200 ms and a
//! round.
//!
//! Kernel functions followed, one module per concern (names kept for grepping):
//! - `bw`: `bbr_max_bw`, `bbr_bw`, `bbr_update_round_start`, `bbr_calculate_bw_sample`,
//!   `bbr_take_max_bw_sample`, `bbr_advance_max_bw_filter`.
//! - `pacing`: `bbr_rate_bytes_per_sec`, `bbr_bw_to_pacing_rate`,
//!   `bbr_init_pacing_rate_from_rtt`, `bbr_set_pacing_rate`, `bbr_tso_segs_generic`,
//!   `bbr_tso_segs_goal`.
//! - `cwnd`: `bbr_bdp`, `bbr_quantization_budget`, `bbr_inflight`,
//!   `bbr_packets_in_net_at_edt`, `bbr_ack_aggregation_cwnd`, `bbr_probe_rtt_cwnd`,
//!   `bbr_set_cwnd`, `bbr_save_cwnd`, `bbr_target_inflight`,
//!   `bbr_inflight_with_headroom`, `bbr_bound_cwnd_for_inflight_model`.
//! - `ack_aggregation`: `bbr_update_ack_aggregation`, `bbr_extra_acked`.
//! - `ecn`: `bbr_can_use_ecn`, `bbr_update_ecn_alpha`, `bbr_check_ecn_too_high_in_startup`,
//!   `bbr_ecn_cut`.
//! - `lower_bounds`: `bbr_init_lower_bounds`, `bbr_loss_lower_bounds`,
//!   `bbr_ecn_lower_bounds`, `bbr_adapt_lower_bounds`, `bbr_reset_lower_bounds`,
//!   `bbr_reset_congestion_signals`, `bbr_update_latest_delivery_signals`,
//!   `bbr_advance_latest_delivery_signals`, `bbr_update_congestion_signals`.
//! - `upper_bounds`: `bbr_is_inflight_too_high`, `bbr_inflight_hi_from_lost_skb`,
//!   `bbr_handle_inflight_too_high`, `bbr_raise_inflight_hi_slope`,
//!   `bbr_probe_inflight_hi_upward`, `bbr_adapt_upper_bounds`.
//! - `probe_bw`: `bbr_is_probing_bandwidth`, `bbr_has_elapsed_in_phase`,
//!   `bbr_is_reno_coexistence_probe_time`, `bbr_pick_probe_wait`, `bbr_set_cycle_idx`,
//!   `bbr_start_bw_probe_{refill,up,down,cruise}`, `bbr_check_time_to_probe_bw`,
//!   `bbr_check_time_to_cruise`, `bbr_update_cycle_phase`, `bbr_pacing_gain[]`.
//! - `startup`: `bbr_reset_full_bw`, `bbr_check_full_bw_reached`,
//!   `bbr_handle_queue_too_high_in_startup`, `bbr_check_loss_too_high_in_startup`,
//!   `bbr_check_drain`.
//! - `probe_rtt`: `bbr_update_min_rtt`, `bbr_check_probe_rtt_done`, `bbr_exit_probe_rtt`.
//! - `loss`: `bbr_note_loss`, `bbr_skb_marked_lost`, `bbr_run_loss_probe_recovery`,
//!   `bbr_exit_loss_recovery`.
//! - `model`: `bbr_update_gains`, `bbr_update_model`, `bbr_run_fast_path`, `bbr_main`.
//! - `ops`: the `tcp_congestion_ops`: `bbr_init`, `bbr_ssthresh`, `bbr_undo_cwnd`,
//!   `bbr_cwnd_event`, `bbr_set_state`, `bbr_skb_marked_lost`, `bbr_get_info`.
//! - `params`: the `bbr_param(sk, name)` tunables with the kernel's defaults.
//! - `v2`: BBRv2 (`bbr2`, google/bbr v2alpha tcp_bbr2.c): its constants, registry entry
//!   and the functions whose v2 body differs; the shared code branches on
//!   `cfg.version` where the kernels differ.
//! - `variant`: hooks for research variants on v3 (`Bbr3Variant`; `bbr3` is
//!   `Bbr3Ops<KernelBbr3>`, which overrides nothing).
//!
//! Units are the kernel's (see `crate::bbr`): bw in packets/us << 24, fractions in 1/256,
//! cwnd in packets, `tcp_mstamp` times in us, `min_rtt_stamp`-like times in jiffies at
//! the simulated CONFIG_HZ (`CcView::hz`). The state keeps the kernel's bit-field widths where they saturate
//! (`rounds_since_probe` 8 bits, `bw_probe_up_rounds` <= 30, `loss_events_in_round`
//! 4 bits, `ecn_alpha` <= 256); `u32::MAX` stands for the kernel's `~0U` ("unset").
//!
//! Deviations:
//! - PLB (protective load balancing, `bbr_plb`) is not modelled: it rehashes the IPv6
//!   flow label and is off by default (`sysctl_tcp_plb_enabled` = 0), so ecn_alpha is
//!   updated only for an ECN-eligible flow, as in the kernel with PLB off.
//! - ECN eligibility: the kernel requires `TCP_ECN_OK` and the per-route `ecn_low`
//!   flag (`bbr_can_use_ecn`). We read `tp.ecn_ok` and the parameter `ecn_low` (default
//!   true: a spec that turns ECN on is taken to describe a shallow-threshold ECN path);
//!   `bbr_ecn_max_rtt_us` = 5 ms still applies, so ECN stays unused at larger min_rtt,
//!   as in the kernel. With ECN off (the default) no CE is ever delivered and every ECN
//!   branch stays idle.
//! - `bbr_cwnd_event`'s ECN_IS_CE / ECN_NO_CE branch (`dctcp_ece_ack_update`) is the
//!   receiver's ACK policy for CE changes; the simulator's receiver owns that.
//! - `rs->is_acking_tlp_retrans_seq` is not filled by the simulator (taken as false):
//!   `bbr_advance_latest_delivery_signals` always starts the new round's filters.
//! - `bbr_tso_segs_goal` keeps the kernel's formula (pacing_shift 10, the min_rtt-based
//!   64 KiB / 2^(min_rtt / 512 us) allowance, `tcp_min_tso_segs` = 2) although segments
//!   are one MSS here; it sizes the quantization budget only (see `crate::bbr`).
//! - The random probe wait (`get_random_u32_below`) comes from the seeded SplitMix64
//!   of `crate::bbr::rng`, parameter `seed` (per flow from the run seed when unset).
//! - `bbr_fast_ack_mode` (a receiver setting) and `bbr_sndbuf_expand` have no
//!   counterpart; the fast path (`bbr_run_fast_path`) is kept, parameter `fast_path`.
//! - Sequence counters (`next_rtt_delivered`, `loss_round_delivered`,
//!   `alpha_last_delivered`) are u64 (no 32-bit wrap).

pub mod ack_aggregation;
pub mod bw;
pub mod cwnd;
pub mod ecn;
pub mod loss;
pub mod lower_bounds;
pub mod model;
pub mod ops;
pub mod pacing;
pub mod params;
pub mod probe_bw;
pub mod probe_rtt;
pub mod startup;
pub mod upper_bounds;
pub mod v2;
pub mod variant;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use crate::bbr::rng::CycleRng;
use crate::ops::CaState;

pub use crate::bbr::{BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT};
pub use ops::Bbr3Ops;
pub use params::Version;
pub use params::{Bbr3Config, SPEC};
pub use variant::{Bbr3Variant, KernelBbr2, KernelBbr3};

/// The kernel's `~0U`: a bound or count not set.
pub const UNSET: u32 = u32::MAX;

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    Startup,
    /// Drain any queue created during STARTUP.
    Drain,
    /// Discover and share bandwidth: pace around the estimate.
    ProbeBw,
    /// Cut inflight to probe min_rtt.
    ProbeRtt,
}

impl Mode {
    /// The label `info()` reports (the same as BBRv1's).
    pub fn label(self) -> &'static str {
        match self {
            Mode::Startup => "STARTUP",
            Mode::Drain => "DRAIN",
            Mode::ProbeBw => "PROBE_BW",
            Mode::ProbeRtt => "PROBE_RTT",
        }
    }
}

/// `enum bbr_pacing_gain_phase`: the PROBE_BW cycle index, in the kernel's numbering
/// (the index into `bbr_pacing_gain[]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// `BBR_BW_PROBE_UP` = 0: push inflight up to probe for bw/volume.
    Up = 0,
    /// `BBR_BW_PROBE_DOWN` = 1: drain excess inflight from the queue.
    Down = 1,
    /// `BBR_BW_PROBE_CRUISE` = 2: use the pipe with headroom in queue/pipe.
    Cruise = 2,
    /// `BBR_BW_PROBE_REFILL` = 3: refill the pipe to 100 %.
    Refill = 3,
}

impl Phase {
    pub fn label(self) -> &'static str {
        match self {
            Phase::Up => "UP",
            Phase::Down => "DOWN",
            Phase::Cruise => "CRUISE",
            Phase::Refill => "REFILL",
        }
    }
}

/// `enum bbr_ack_phase`: how the incoming ACKs relate to bandwidth probing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AckPhase {
    /// Not probing; not getting probe feedback.
    Init,
    /// Sending at the estimated bw to fill the pipe.
    Refilling,
    /// Inflight rising to probe bw.
    ProbeStarting,
    /// Getting feedback from bw probing.
    ProbeFeedback,
    /// Stopped probing; still getting feedback.
    ProbeStopping,
}

/// `struct bbr` of the v3 kernel, fields under the kernel's names. `pub(crate)` so a
/// future variant layer (see docs/ARCHITECTURE.md) can read them.
#[derive(Clone, Debug)]
pub struct Bbr3 {
    pub(crate) cfg: Bbr3Config,
    /// Min RTT in the `min_rtt_win_sec` window (us); `UNSET` until the first sample.
    pub(crate) min_rtt_us: u32,
    /// When `min_rtt_us` was taken (jiffies).
    pub(crate) min_rtt_stamp: u32,
    /// End of PROBE_RTT (jiffies); 0 = not yet at the PROBE_RTT inflight.
    pub(crate) probe_rtt_done_stamp: u32,
    /// Min RTT in the `probe_rtt_win_ms` window (us).
    pub(crate) probe_rtt_min_us: u32,
    /// When `probe_rtt_min_us` was taken (jiffies).
    pub(crate) probe_rtt_min_stamp: u32,
    /// `tp->delivered` at which the current round ends.
    pub(crate) next_rtt_delivered: u64,
    /// Start of this cycle phase (us).
    pub(crate) cycle_mstamp: u64,
    pub(crate) mode: Mode,
    /// CA state on the previous ACK.
    pub(crate) prev_ca_state: CaState,
    /// This ACK started a packet-timed round.
    pub(crate) round_start: bool,
    /// Cwnd-limited rounds in PROBE_UP (5 bits; at most 30).
    pub(crate) bw_probe_up_rounds: u32,
    /// The fast path may be taken (`bbr_run_fast_path`).
    pub(crate) try_fast_path: bool,
    /// Restarting after idle.
    pub(crate) idle_restart: bool,
    /// A PROBE_RTT round at the low inflight has elapsed.
    pub(crate) probe_rtt_round_done: bool,
    /// `tcp_snd_cwnd` at init (7 bits).
    pub(crate) init_cwnd: u32,
    pub(crate) pacing_gain: u32,
    pub(crate) cwnd_gain: u32,
    /// STARTUP (or a probe) has filled the pipe.
    pub(crate) full_bw_reached: bool,
    /// Rounds without large bw gains (2 bits).
    pub(crate) full_bw_cnt: u32,
    pub(crate) cycle_idx: Phase,
    pub(crate) has_seen_rtt: bool,
    /// cwnd before loss recovery or PROBE_RTT.
    pub(crate) prior_cwnd: u32,
    /// Recent bw, to estimate whether the pipe is full.
    pub(crate) full_bw: u32,

    // ACK aggregation.
    pub(crate) ack_epoch_mstamp: u64,
    pub(crate) extra_acked: [u16; 2],
    pub(crate) ack_epoch_acked: u32,
    pub(crate) extra_acked_win_rtts: u32,
    pub(crate) extra_acked_win_idx: usize,

    // BBRv3 state.
    /// Recently reached a full-bw plateau.
    pub(crate) full_bw_now: bool,
    /// Consecutive STARTUP rounds with high CE ratio (2 bits).
    pub(crate) startup_ecn_rounds: u32,
    /// Loss / CE in this PROBE_BW cycle.
    pub(crate) loss_in_cycle: bool,
    pub(crate) ecn_in_cycle: bool,
    /// `tp->delivered` ending the loss round.
    pub(crate) loss_round_delivered: u64,
    /// bw_lo, inflight_lo, inflight_hi before the latest losses (undo).
    pub(crate) undo_bw_lo: u32,
    pub(crate) undo_inflight_lo: u32,
    pub(crate) undo_inflight_hi: u32,
    /// Max delivered bw / volume in the last round.
    pub(crate) bw_latest: u32,
    pub(crate) inflight_latest: u32,
    /// Lower bound on sending bandwidth; `UNSET` when not bounding.
    pub(crate) bw_lo: u32,
    /// Max recent measured bw, two cycle-long slots.
    pub(crate) bw_hi: [u32; 2],
    /// Lower and upper bounds of the inflight range; `UNSET` when not bounding.
    pub(crate) inflight_lo: u32,
    pub(crate) inflight_hi: u32,
    /// Packets delivered per inflight_hi increment in PROBE_UP.
    pub(crate) bw_probe_up_cnt: u32,
    /// Packets (S)ACKed since the last inflight_hi increment.
    pub(crate) bw_probe_up_acks: u32,
    /// Wall-clock wait in PROBE_DOWN/CRUISE before the next probe (us).
    pub(crate) probe_wait_us: u32,
    /// The sender may use ECN (RTT, negotiation).
    pub(crate) ecn_eligible: bool,
    /// EWMA of delivered_ce / delivered, 0..=256.
    pub(crate) ecn_alpha: u32,
    /// Rate samples reflect bw probing.
    pub(crate) bw_probe_samples: bool,
    /// The last PROBE_UP went too high.
    pub(crate) prev_probe_too_high: bool,
    /// The last PROBE_UP stopped because of risk.
    pub(crate) stopped_risky_probe: bool,
    /// Packet-timed rounds since the last bw probe (8 bits).
    pub(crate) rounds_since_probe: u32,
    /// This ACK started a loss round / loss or CE seen in this round.
    pub(crate) loss_round_start: bool,
    pub(crate) loss_in_round: bool,
    pub(crate) ecn_in_round: bool,
    pub(crate) ack_phase: AckPhase,
    /// Loss events in the STARTUP round (4 bits).
    pub(crate) loss_events_in_round: u32,
    pub(crate) initialized: bool,
    /// `tp->delivered`, `tp->delivered_ce` at the last alpha update.
    pub(crate) alpha_last_delivered: u64,
    pub(crate) alpha_last_delivered_ce: u64,

    // BBRv2 (v2alpha) only; v3 never sets them, so the shared code reads them as absent.
    /// v2's `bw_hi`: an upper bound on bw (`UNSET`: none); v3's `bw_hi[]` above is the
    /// max filter (v2's `max_bw[]`).
    pub(crate) v2_bw_hi: u32,
    /// v2's `got_ok_bw_probe_sample`: this probe had a sample without high loss/CE.
    pub(crate) got_ok_bw_probe_sample: bool,

    // Ours.
    /// Source of the random probe waits (the kernel uses its entropy pool).
    pub(crate) rng: CycleRng,
    /// `tp->mss_cache` at the last hook, so `info()` can convert bw to bit/s.
    pub(crate) mss: u32,
}

/// `struct bbr_context`: per-ACK scratch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ctx {
    /// This ACK's delivery-rate sample (packets/us << BW_SCALE), 0 if none.
    pub sample_bw: u32,
}

impl Bbr3 {
    /// The state before `bbr_init` (the kernel's zeroed private area); `ops::bbr_init`
    /// sets everything the kernel does.
    pub fn new(cfg: Bbr3Config) -> Self {
        let rng = CycleRng::new(cfg.seed);
        Bbr3 {
            cfg,
            min_rtt_us: UNSET,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_min_us: UNSET,
            probe_rtt_min_stamp: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            round_start: false,
            bw_probe_up_rounds: 0,
            try_fast_path: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            init_cwnd: 0,
            pacing_gain: 0,
            cwnd_gain: 0,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: Phase::Up,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            full_bw_now: false,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 0,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            inflight_latest: 0,
            bw_lo: UNSET,
            bw_hi: [0; 2],
            inflight_lo: UNSET,
            inflight_hi: UNSET,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            ecn_eligible: false,
            ecn_alpha: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            initialized: false,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            v2_bw_hi: UNSET,
            got_ok_bw_probe_sample: false,
            rng,
            mss: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn phase(&self) -> Phase {
        self.cycle_idx
    }
    pub fn inflight_hi(&self) -> u32 {
        self.inflight_hi
    }
    pub fn inflight_lo(&self) -> u32 {
        self.inflight_lo
    }
    pub fn bw_lo(&self) -> u32 {
        self.bw_lo
    }
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }
    pub fn ecn_alpha(&self) -> u32 {
        self.ecn_alpha
    }
}

/// `after(a, b)` on 32-bit jiffies, wrapping as the kernel's `(s32)(b - a) < 0`.
pub(crate) fn after32(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// `x * frac >> BBR_SCALE` in u64, as the kernel's `(u64)x * frac >> BBR_SCALE`.
pub(crate) fn scale(x: u32, frac: u32) -> u64 {
    (u64::from(x) * u64::from(frac)) >> BBR_SCALE
}

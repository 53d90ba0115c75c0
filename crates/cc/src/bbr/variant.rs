//! Extension points for the BBR research variants (crate::variants: BBR-ACD, BBR-CWS,
//! BBR-ACW, Modest BBR, BBQ, DA-BBR).
//!
//! Every variant is `BbrFamily<V>` for some `V: BbrVariant`: the kernel's BBR with a
//! few of its decisions replaced. Each hook is named after the kernel function or the
//! point in `bbr_main` it stands for, and its default is exactly the kernel's behaviour,
//! so a variant file lists only what its paper changes and reads as a diff against
//! tcp_bbr.c. Plain `bbr` is `BbrFamily<KernelBbr>`, which overrides nothing.
//!
//! Order on each ACK (`model::bbr_main`):
//! 1. `bbr_update_model`: update_bw, update_ack_aggregation, update_cycle_phase
//!    (asks `is_next_cycle_phase`), check_full_bw_reached, check_drain, update_min_rtt;
//!    then `on_ack` (observer; min_rtt and round_start are current), then
//!    `update_gains` (sets `bbr.pacing_gain` / `bbr.cwnd_gain` for this ACK).
//! 2. `bbr_set_pacing_rate(bbr_bw, pacing_gain)`.
//! 3. `bbr_set_cwnd(bbr_bw, cwnd_gain)`: computes `bbr.target_cwnd`, asks
//!    `set_cwnd_to_recover_or_restore`, applies the target logic unless conserving,
//!    then `cap_cwnd`, then the snd_cwnd_clamp and PROBE_RTT caps.
//!
//! Variants read and, where their paper says so, write `Bbr`'s `pub(crate)` fields,
//! and call the kernel functions of the sibling modules (e.g. `cwnd::bbr_bdp`,
//! `cwnd::bbr_inflight`, `bw::bbr_bw`, `recovery::bbr_set_cwnd_to_recover_or_restore`)
//! to reuse them. A variant's registry entry shares BBR's parameters:
//!
//! ```ignore
//! pub static SPEC: AlgorithmSpec = AlgorithmSpec {
//!     name: "bbr-xyz",
//!     family: crate::registry::Family::Bbr,
//!     params: bbr_param_specs![ALPHA],           // BBR's knobs + the paper's
//!     build: |p| Box::new(BbrFamily::new(BbrConfig::from_params(p), Xyz::new(p))),
//!     ..
//! };
//! struct Xyz { upper_cwnd: u32 }
//! impl BbrVariant for Xyz {
//!     fn name(&self) -> &'static str { "bbr-xyz" }
//!     // Only what the paper changes, e.g. a cap after bbr_set_cwnd:
//!     fn cap_cwnd(&mut self, bbr: &Bbr, _tp: &CcView, cwnd: u32) -> u32 {
//!         cwnd.min(self.upper_cwnd.max(bbr.target_cwnd / 2))
//!     }
//! }
//! ```

use super::model::bbr_update_gains;
use super::probe_bw::bbr_is_next_cycle_phase;
use super::recovery::bbr_set_cwnd_to_recover_or_restore;
use super::Bbr;
use crate::ops::{CcView, InfoField, RateSample};

/// What `bbr_set_cwnd_to_recover_or_restore` decided: the cwnd to continue with
/// (`*new_cwnd`) and whether packet conservation fixes it (the kernel's return value;
/// then `bbr_set_cwnd` skips the slow-start-toward-target step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoverOrRestore {
    pub cwnd: u32,
    pub conserving: bool,
}

/// The decisions a BBR variant may replace. All default to tcp_bbr.c.
pub trait BbrVariant: Send + 'static {
    /// Registry name (`"bbr"`, `"bbr-acd"`, ...).
    fn name(&self) -> &'static str;

    /// Per-ACK observer, after the model update and before the gains are chosen
    /// (ACD's `bbr_probe_congestion` on RTT, CWS's loss/RTprop tracking, ACW's per-round
    /// RTT statistics, Modest BBR's retransmission detection via `tp.ca_state` vs
    /// `bbr.prev_ca_state`). Default: nothing.
    fn on_ack(&mut self, _bbr: &Bbr, _tp: &CcView, _rs: &RateSample) {}

    /// `bbr_update_gains`: the pacing and cwnd gains for this ACK (ACW adapts cwnd_gain
    /// per round; DA-BBR adjusts it by delay). Default: the kernel's table per mode.
    fn update_gains(&mut self, bbr: &mut Bbr, _tp: &CcView) {
        bbr_update_gains(bbr);
    }

    /// `bbr_is_next_cycle_phase`: whether the current PROBE_BW phase ends on this ACK
    /// (BBQ caps the length of the 1.25 probing phase). Default: the kernel's rule.
    fn is_next_cycle_phase(&mut self, bbr: &Bbr, tp: &CcView, rs: &RateSample) -> bool {
        bbr_is_next_cycle_phase(bbr, tp, rs)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: the cwnd response to loss recovery (ACD
    /// halves to min(cwnd/2, target) only on detected congestion; CWS cuts to a third
    /// of inflight). `bbr.target_cwnd` already holds this ACK's target. Default: packet
    /// conservation in the first round, restore prior_cwnd on exit.
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        bbr: &mut Bbr,
        tp: &CcView,
        rs: &RateSample,
        acked: u32,
    ) -> RecoverOrRestore {
        bbr_set_cwnd_to_recover_or_restore(bbr, tp, rs, acked)
    }

    /// The `done:` label of `bbr_set_cwnd`: a last word on cwnd before the global clamp
    /// and the PROBE_RTT cap (CWS's upper_cwnd = target x upper_scaling_factor, Modest
    /// BBR's window). Called on every ACK, also when nothing was acked. Default: as is.
    fn cap_cwnd(&mut self, _bbr: &Bbr, _tp: &CcView, cwnd: u32) -> u32 {
        cwnd
    }

    /// Extra `info()` fields after BBR's own. Default: none.
    fn info(&self, _bbr: &Bbr, _out: &mut Vec<InfoField>) {}
}

/// Linux BBR v1 unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelBbr;

impl BbrVariant for KernelBbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
}

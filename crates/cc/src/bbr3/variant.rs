//! Extension points for research variants built on BBRv3, the counterpart of
//! `crate::bbr::variant::BbrVariant` (which is tied to v1's state and decisions).
//!
//! `Bbr3Ops<V: Bbr3Variant>` runs v3 tcp_bbr.c and asks `V` at a few points of
//! `bbr_main`; every hook's default is the kernel's behaviour, so `bbr3` is
//! `Bbr3Ops<KernelBbr3>` and a variant lists only what its paper changes. The v1 hooks
//! map as follows: `on_ack`, `update_gains`, `cap_cwnd` and `info` exist here with the
//! same meaning; v1's `is_next_cycle_phase` becomes `update_cycle_phase` (v3's phase
//! machine decides on loss, inflight and wall-clock time, not on one predicate); v1's
//! `set_cwnd_to_recover_or_restore` has no counterpart, since v3 has no packet
//! conservation and responds to loss in its model (a variant changing the loss response
//! would replace `update_cycle_phase` or adjust `bw_lo` / `inflight_lo` in `on_ack`).
//!
//! Order on each ACK: `bbr_update_model` (unless the fast path skips it), `on_ack`,
//! `update_gains`, pacing rate, `bbr_set_cwnd`, `bbr_bound_cwnd_for_inflight_model`,
//! `cap_cwnd`. `update_cycle_phase` is called where the kernel calls
//! `bbr_update_cycle_phase` (in the model update and on the fast path).

use super::model::bbr_update_gains;
use super::probe_bw::bbr_update_cycle_phase;
use super::{Bbr3, Ctx};
use crate::ops::{CcView, InfoField, RateSample};

/// The decisions a BBRv3 variant may replace. All default to v3 tcp_bbr.c.
pub trait Bbr3Variant: Send + 'static {
    /// Registry name.
    fn name(&self) -> &'static str;

    /// Per-ACK observer after the model update, before the gains. Default: nothing.
    fn on_ack(&mut self, _bbr: &mut Bbr3, _tp: &CcView, _rs: &RateSample) {}

    /// `bbr_update_gains`. Default: the kernel's gains per mode and phase.
    fn update_gains(&mut self, bbr: &mut Bbr3) {
        bbr_update_gains(bbr);
    }

    /// `bbr_update_cycle_phase`: upper bounds and the PROBE_BW phase machine.
    fn update_cycle_phase(&mut self, bbr: &mut Bbr3, tp: &CcView, rs: &RateSample, ctx: &Ctx) {
        bbr_update_cycle_phase(bbr, tp, rs, ctx);
    }

    /// A last word on cwnd after the model's bound (not applied on fast-path ACKs, which
    /// leave cwnd as it is). Default: as is.
    fn cap_cwnd(&mut self, _bbr: &Bbr3, _tp: &CcView, cwnd: u32) -> u32 {
        cwnd
    }

    /// Extra `info()` fields. Default: none.
    fn info(&self, _bbr: &Bbr3, _out: &mut Vec<InfoField>) {}
}

/// BBRv2 (v2alpha) unchanged: `Bbr3Ops` with `Bbr3Config::v2()` (`cfg.version`
/// selects v2's code) and this name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelBbr2;

impl Bbr3Variant for KernelBbr2 {
    fn name(&self) -> &'static str {
        "bbr2"
    }
}

/// BBRv3 unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelBbr3;

impl Bbr3Variant for KernelBbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }
}

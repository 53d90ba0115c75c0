//! The short-term model and the congestion signals of v3 tcp_bbr.c:
//! `bbr_init_lower_bounds`, `bbr_loss_lower_bounds`, `bbr_ecn_lower_bounds`,
//! `bbr_adapt_lower_bounds`, `bbr_reset_lower_bounds`, `bbr_reset_congestion_signals`,
//! `bbr_update_latest_delivery_signals`, `bbr_advance_latest_delivery_signals`,
//! `bbr_update_congestion_signals`.
//!
//! Per "loss round" (a round timed from the first loss of the previous one), BBRv3
//! tracks the max delivery rate and volume of the round (`bw_latest`,
//! `inflight_latest`) and whether it saw loss or CE. At the end of a round with loss,
//! outside bandwidth probing, it cuts `bw_lo` and `inflight_lo` to (1 - beta) = 0.7 of
//! themselves (initialised from max_bw and cwnd), but not below what the round
//! delivered; with CE it cuts inflight_lo by (1 - ecn_factor x ecn_alpha). The bounds
//! are lifted (`UNSET`) when a bandwidth probe (REFILL) starts or PROBE_RTT ends.
//!
//! Deviations: `rs->is_acking_tlp_retrans_seq` is taken as false (module doc of `bbr3`).

use super::bw::{bbr_max_bw, bbr_take_max_bw_sample};
use super::ecn::bbr_ecn_cut;
use super::probe_bw::bbr_is_probing_bandwidth;
use super::{scale, Bbr3, Ctx, BBR_UNIT, UNSET};
use crate::ops::{CcView, RateSample};

/// `bbr_init_lower_bounds`: start bounding from the current max_bw (if `init_bw`) and
/// cwnd.
pub fn bbr_init_lower_bounds(bbr: &mut Bbr3, tp: &CcView, init_bw: bool) {
    if init_bw && bbr.bw_lo == UNSET {
        bbr.bw_lo = bbr_max_bw(bbr);
    }
    if bbr.inflight_lo == UNSET {
        bbr.inflight_lo = tp.snd_cwnd;
    }
}

/// `bbr_loss_lower_bounds`: bw_lo and inflight_lo x (1 - beta), not below the latest
/// round's delivery.
pub fn bbr_loss_lower_bounds(bbr: &Bbr3) -> (u32, u32) {
    let loss_cut = BBR_UNIT - bbr.cfg.beta;
    let bw = u64::from(bbr.bw_latest).max(scale(bbr.bw_lo, loss_cut)) as u32;
    let inflight = u64::from(bbr.inflight_latest).max(scale(bbr.inflight_lo, loss_cut)) as u32;
    (bw, inflight)
}

/// `bbr_ecn_lower_bounds`: inflight_lo x (1 - alpha x ecn_factor).
pub fn bbr_ecn_lower_bounds(bbr: &Bbr3) -> u32 {
    scale(bbr.inflight_lo, bbr_ecn_cut(bbr)) as u32
}

/// `bbr_adapt_lower_bounds`: once per loss round, outside bw probing, cut the
/// short-term bounds for the loss / CE seen in the round.
pub fn bbr_adapt_lower_bounds(bbr: &mut Bbr3, tp: &CcView) {
    let mut ecn_inflight_lo = UNSET;
    // Lower bounds are used only when not probing (probing must push inflight up).
    if bbr_is_probing_bandwidth(bbr) {
        return;
    }
    // ECN response.
    if bbr.ecn_in_round && bbr.cfg.ecn_factor != 0 {
        bbr_init_lower_bounds(bbr, tp, false);
        ecn_inflight_lo = bbr_ecn_lower_bounds(bbr);
    }
    // Loss response.
    if bbr.loss_in_round {
        bbr_init_lower_bounds(bbr, tp, true);
        let (bw, inflight) = bbr_loss_lower_bounds(bbr);
        bbr.bw_lo = bw;
        bbr.inflight_lo = inflight;
    }
    // The lower of the levels loss and ECN imply.
    bbr.inflight_lo = bbr.inflight_lo.min(ecn_inflight_lo);
    bbr.bw_lo = bbr.bw_lo.max(1);
}

/// `bbr_reset_lower_bounds`: stop bounding, so inflight can be pushed up.
pub fn bbr_reset_lower_bounds(bbr: &mut Bbr3) {
    bbr.bw_lo = UNSET;
    bbr.inflight_lo = UNSET;
}

/// `bbr_reset_congestion_signals`: after probing (STARTUP, PROBE_UP), before a phase
/// that adapts the lower bounds.
pub fn bbr_reset_congestion_signals(bbr: &mut Bbr3) {
    bbr.loss_in_round = false;
    bbr.ecn_in_round = false;
    bbr.loss_in_cycle = false;
    bbr.ecn_in_cycle = false;
    bbr.bw_latest = 0;
    bbr.inflight_latest = 0;
}

/// `bbr_update_latest_delivery_signals`: the max rate and volume delivered in the latest
/// loss round; detect the start of a new loss round.
pub fn bbr_update_latest_delivery_signals(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample, ctx: &Ctx) {
    bbr.loss_round_start = false;
    if rs.interval_us <= 0 || rs.acked_sacked == 0 {
        return; // not a valid observation
    }
    bbr.bw_latest = bbr.bw_latest.max(ctx.sample_bw);
    bbr.inflight_latest = bbr
        .inflight_latest
        .max(rs.delivered.clamp(0, i64::from(u32::MAX)) as u32);
    if rs.prior_delivered >= bbr.loss_round_delivered {
        bbr.loss_round_delivered = tp.delivered;
        bbr.loss_round_start = true; // a new loss round
    }
}

/// `bbr_advance_latest_delivery_signals`: once per loss round, restart the filters with
/// this ACK's sample.
pub fn bbr_advance_latest_delivery_signals(bbr: &mut Bbr3, rs: &RateSample, ctx: &Ctx) {
    // (The kernel keeps them when the ACK is for a TLP retransmission; not modelled.)
    if bbr.loss_round_start {
        bbr.bw_latest = ctx.sample_bw;
        bbr.inflight_latest = rs.delivered.clamp(0, i64::from(u32::MAX)) as u32;
    }
}

/// `bbr_update_congestion_signals`: the max-bw filter sample, loss in the round, and
/// once per loss round the lower-bound adaptation.
pub fn bbr_update_congestion_signals(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample, ctx: &Ctx) {
    if rs.interval_us <= 0 || rs.acked_sacked == 0 {
        return; // not a valid observation
    }
    let bw = ctx.sample_bw;
    if !rs.is_app_limited || bw >= bbr_max_bw(bbr) {
        bbr_take_max_bw_sample(bbr, bw);
    }
    bbr.loss_in_round |= rs.losses > 0;
    if !bbr.loss_round_start {
        return; // the per-round updates below
    }
    bbr_adapt_lower_bounds(bbr, tp);
    bbr.loss_in_round = false;
    bbr.ecn_in_round = false;
}

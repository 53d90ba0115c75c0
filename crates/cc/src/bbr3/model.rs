//! The per-ACK entry of v3 tcp_bbr.c: `bbr_update_gains`, `bbr_update_model`,
//! `bbr_run_fast_path`, `bbr_main` (the `cong_control` hook).
//!
//! Order on each ACK (`bbr_main`): round start (and, once per round,
//! `rounds_since_probe` + 1 and the ECN alpha update), CE in this round, the bw sample,
//! the latest-delivery signals; then, unless the app-limited fast path applies,
//! `bbr_update_model`: congestion signals (max-bw filter, loss round, lower bounds),
//! ACK aggregation, STARTUP loss exit, full-bw plateau, DRAIN, the PROBE_BW phase
//! machine with the upper bounds, min_rtt / PROBE_RTT; then gains, pacing rate, cwnd,
//! and the model's cwnd bound; finally the latest-delivery filters advance and the
//! cycle's loss/CE flags are updated.
//!
//! Deviations: PLB (`bbr_plb`) is not modelled (module doc of `bbr3`).

use super::ack_aggregation::bbr_update_ack_aggregation;
use super::bw::{bbr_bw, bbr_calculate_bw_sample, bbr_max_bw, bbr_update_round_start};
use super::cwnd::{bbr_bound_cwnd_for_inflight_model, bbr_set_cwnd};
use super::ecn::bbr_update_ecn_alpha;
use super::lower_bounds::{
    bbr_advance_latest_delivery_signals, bbr_update_congestion_signals,
    bbr_update_latest_delivery_signals,
};
use super::pacing::bbr_set_pacing_rate;
use super::probe_rtt::bbr_update_min_rtt;
use super::startup::{
    bbr_check_drain, bbr_check_full_bw_reached, bbr_check_loss_too_high_in_startup,
};
use super::variant::Bbr3Variant;
use super::{Bbr3, Ctx, Mode, Phase, Version, BBR_UNIT};
use crate::ops::{CcView, RateSample};

/// `bbr_update_gains`: the pacing and cwnd gains of the mode and phase.
pub fn bbr_update_gains(bbr: &mut Bbr3) {
    let cfg = &bbr.cfg;
    let (pacing, cwnd) = match bbr.mode {
        Mode::Startup => (cfg.startup_pacing_gain, cfg.startup_cwnd_gain),
        Mode::Drain => (cfg.drain_gain, cfg.startup_cwnd_gain), // slow, to drain; keep cwnd
        Mode::ProbeBw => {
            let mut cwnd = cfg.cwnd_gain;
            if cfg.bw_probe_cwnd_gain != 0 && bbr.cycle_idx == Phase::Up {
                cwnd += BBR_UNIT * cfg.bw_probe_cwnd_gain / 4;
            }
            (cfg.pacing_gain[bbr.cycle_idx as usize], cwnd)
        }
        Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
    };
    bbr.pacing_gain = pacing;
    bbr.cwnd_gain = cwnd;
}

/// `bbr_update_model`.
pub fn bbr_update_model<V: Bbr3Variant + ?Sized>(
    bbr: &mut Bbr3,
    variant: &mut V,
    tp: &mut CcView,
    rs: &RateSample,
    ctx: &Ctx,
) {
    match bbr.cfg.version {
        Version::V2 => super::v2::bbr2_update_congestion_signals(bbr, tp, rs, ctx),
        Version::V3 => bbr_update_congestion_signals(bbr, tp, rs, ctx),
    }
    bbr_update_ack_aggregation(bbr, tp, rs);
    bbr_check_loss_too_high_in_startup(bbr, tp, rs);
    bbr_check_full_bw_reached(bbr, rs, ctx);
    bbr_check_drain(bbr, tp);
    variant.update_cycle_phase(bbr, tp, rs, ctx);
    bbr_update_min_rtt(bbr, tp, rs);
}

/// `bbr_run_fast_path`: on an app-limited ACK with no loss/CE and a bw sample below
/// the estimate, skip the model update; skip the control update too if neither mode,
/// min_rtt nor phase changed. Returns true to skip everything; sets `update_model` to
/// false to skip only the model.
pub fn bbr_run_fast_path<V: Bbr3Variant + ?Sized>(
    bbr: &mut Bbr3,
    variant: &mut V,
    tp: &mut CcView,
    update_model: &mut bool,
    rs: &RateSample,
    ctx: &Ctx,
) -> bool {
    if bbr.cfg.fast_path
        && bbr.try_fast_path
        && rs.is_app_limited
        && ctx.sample_bw < bbr_max_bw(bbr)
        && !bbr.loss_in_round
        && !bbr.ecn_in_round
    {
        let prev_mode = bbr.mode;
        let prev_min_rtt_us = bbr.min_rtt_us;
        bbr_check_drain(bbr, tp);
        variant.update_cycle_phase(bbr, tp, rs, ctx);
        bbr_update_min_rtt(bbr, tp, rs);
        if bbr.mode == prev_mode && bbr.min_rtt_us == prev_min_rtt_us && bbr.try_fast_path {
            return true;
        }
        // Skip the model update, but the control still needs updating.
        *update_model = false;
    }
    false
}

/// `bbr_main`: the `cong_control` hook, with the variant's hooks (`variant`).
pub fn bbr_main<V: Bbr3Variant + ?Sized>(
    bbr: &mut Bbr3,
    variant: &mut V,
    tp: &mut CcView,
    rs: &RateSample,
) {
    let mut ctx = Ctx::default();
    let mut update_model = true;

    let v3 = bbr.cfg.version == Version::V3;
    bbr_update_round_start(bbr, tp, rs);
    if bbr.round_start {
        bbr.rounds_since_probe = (bbr.rounds_since_probe + 1).min(0xFF);
        if v3 {
            let _ce_ratio = bbr_update_ecn_alpha(bbr, tp); // (for PLB, not modelled)
        } else {
            super::v2::bbr2_update_ecn_alpha(bbr, tp);
        }
    }
    // v3 notes ECE only for an ECN-eligible flow; v2 always (it checks eligibility
    // where it responds).
    bbr.ecn_in_round |= (bbr.ecn_eligible || !v3) && rs.is_ece;
    bbr_calculate_bw_sample(rs, &mut ctx);
    if v3 {
        // (v2 keeps these filters in bbr2_update_congestion_signals.)
        bbr_update_latest_delivery_signals(bbr, tp, rs, &ctx);
    }

    if !bbr_run_fast_path(bbr, variant, tp, &mut update_model, rs, &ctx) {
        if update_model {
            bbr_update_model(bbr, variant, tp, rs, &ctx);
        }
        variant.on_ack(bbr, tp, rs);
        variant.update_gains(bbr);
        let bw = bbr_bw(bbr);
        bbr_set_pacing_rate(bbr, tp, bw, bbr.pacing_gain);
        bbr_set_cwnd(bbr, tp, rs.acked_sacked, bw, bbr.cwnd_gain);
        bbr_bound_cwnd_for_inflight_model(bbr, tp);
        tp.snd_cwnd = variant.cap_cwnd(bbr, tp, tp.snd_cwnd);
    }
    // out:
    if v3 {
        bbr_advance_latest_delivery_signals(bbr, rs, &ctx);
    }
    bbr.prev_ca_state = tp.ca_state;
    bbr.loss_in_cycle |= rs.lost > 0;
    bbr.ecn_in_cycle |= rs.delivered_ce > 0;
}

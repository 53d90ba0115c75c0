//! The per-ACK driver: tcp_bbr.c `bbr_update_model`, `bbr_update_gains`, `bbr_main`.
//!
//! Deviations: `bbr_update_model` calls the variant's `on_ack` observer between
//! `bbr_update_min_rtt` and the gain update; for plain BBR it does nothing.

use super::ack_aggregation::bbr_update_ack_aggregation;
use super::bw::{bbr_bw, bbr_update_bw};
use super::cwnd::bbr_set_cwnd;
use super::drain::bbr_check_drain;
use super::pacing::bbr_set_pacing_rate;
use super::probe_bw::{bbr_update_cycle_phase, BBR_PACING_GAIN};
use super::probe_rtt::bbr_update_min_rtt;
use super::startup::bbr_check_full_bw_reached;
use super::variant::BbrVariant;
use super::{Bbr, BbrMode, BBR_UNIT};
use crate::ops::{CcView, RateSample};

/// `bbr_update_gains`: the gains of the current mode.
pub fn bbr_update_gains(bbr: &mut Bbr) {
    match bbr.mode {
        BbrMode::Startup => {
            bbr.pacing_gain = bbr.cfg.high_gain;
            bbr.cwnd_gain = bbr.cfg.high_gain;
        }
        BbrMode::Drain => {
            bbr.pacing_gain = bbr.cfg.drain_gain; // slow, to drain
            bbr.cwnd_gain = bbr.cfg.high_gain; // keep cwnd
        }
        BbrMode::ProbeBw => {
            bbr.pacing_gain = if bbr.lt_use_bw {
                BBR_UNIT
            } else {
                BBR_PACING_GAIN[bbr.cycle_idx as usize]
            };
            bbr.cwnd_gain = bbr.cfg.cwnd_gain;
        }
        BbrMode::ProbeRtt => {
            bbr.pacing_gain = BBR_UNIT;
            bbr.cwnd_gain = BBR_UNIT;
        }
    }
}

/// `bbr_update_model`.
pub fn bbr_update_model<V: BbrVariant + ?Sized>(
    bbr: &mut Bbr,
    variant: &mut V,
    tp: &mut CcView,
    rs: &RateSample,
) {
    bbr_update_bw(bbr, tp, rs);
    bbr_update_ack_aggregation(bbr, tp, rs);
    bbr_update_cycle_phase(bbr, variant, tp, rs);
    bbr_check_full_bw_reached(bbr, rs);
    bbr_check_drain(bbr, tp);
    bbr_update_min_rtt(bbr, tp, rs);
    variant.on_ack(bbr, tp, rs);
    variant.update_gains(bbr, tp);
}

/// `bbr_main`: the `cong_control` hook.
pub fn bbr_main<V: BbrVariant + ?Sized>(
    bbr: &mut Bbr,
    variant: &mut V,
    tp: &mut CcView,
    rs: &RateSample,
) {
    bbr_update_model(bbr, variant, tp, rs);
    let bw = bbr_bw(bbr);
    let (pacing_gain, cwnd_gain) = (bbr.pacing_gain, bbr.cwnd_gain);
    bbr_set_pacing_rate(bbr, tp, bw, pacing_gain);
    bbr_set_cwnd(bbr, variant, tp, rs, rs.acked_sacked, bw, cwnd_gain);
}

//! Loss notifications of v3 tcp_bbr.c: `bbr_note_loss`, `bbr_skb_marked_lost`,
//! `bbr_run_loss_probe_recovery`, `bbr_exit_loss_recovery`.
//!
//! Every segment marked lost makes the current loss round a lossy one. While the flow
//! is probing (`bw_probe_samples`), each lost segment also gets a rate sample of its
//! own flight: `tx_in_flight` when it was sent and the packets lost since; if their
//! ratio exceeds loss_thresh, inflight_hi is cut to the inflight at which it crossed
//! the threshold (`upper_bounds::bbr_inflight_hi_from_lost_skb`). This catches the
//! overshoot per packet, before the ACK that ends the probe's round. A loss a tail
//! loss probe repaired counts as one lost packet on top of the last round's volume.
//!
//! Deviations: none.

use super::upper_bounds::{
    bbr_handle_inflight_too_high, bbr_inflight_hi_from_lost_skb, bbr_is_inflight_too_high,
};
use super::Bbr3;
use crate::ops::{CcView, LostSkb, RateSample};

/// `bbr_note_loss`: this round trip is a loss round, timed from its first loss.
pub fn bbr_note_loss(bbr: &mut Bbr3, tp: &CcView) {
    if !bbr.loss_in_round {
        // First loss in this round: capture data over the full round of loss.
        bbr.loss_round_delivered = tp.delivered;
    }
    bbr.loss_in_round = true;
    bbr.loss_in_cycle = true;
}

/// `bbr_skb_marked_lost`: one segment was just marked lost.
pub fn bbr_skb_marked_lost(bbr: &mut Bbr3, tp: &CcView, skb: &LostSkb) {
    bbr_note_loss(bbr, tp);
    if !bbr.bw_probe_samples {
        return; // not sent while probing for bandwidth
    }
    if !skb.tx_valid {
        return; // SACKed, reneged, marked lost: ignore it
    }
    // A rate sample for the flight up to this lost segment.
    let mut rs = RateSample {
        tx_in_flight: skb.tx_in_flight,
        lost: tp.lost.wrapping_sub(skb.tx_lost) as i64,
        is_app_limited: skb.tx_is_app_limited,
        ..RateSample::default()
    };
    if bbr_is_inflight_too_high(bbr, &rs) {
        rs.tx_in_flight = bbr_inflight_hi_from_lost_skb(bbr, &rs, skb.pcount);
        bbr_handle_inflight_too_high(bbr, tp, &rs);
    }
}

/// `bbr_run_loss_probe_recovery`: a tail loss probe repaired the loss of one segment.
pub fn bbr_run_loss_probe_recovery(bbr: &mut Bbr3, tp: &CcView) {
    bbr_note_loss(bbr, tp);
    if !bbr.bw_probe_samples {
        return; // not sent while probing for bandwidth
    }
    let lost = 1u32; // the TLP repaired one segment
    let rs = RateSample {
        lost: i64::from(lost),
        tx_in_flight: bbr.inflight_latest + lost,
        is_app_limited: tp.tlp_orig_data_app_limited,
        ..RateSample::default()
    };
    if bbr_is_inflight_too_high(bbr, &rs) {
        bbr_handle_inflight_too_high(bbr, tp, &rs);
    }
}

/// `bbr_exit_loss_recovery`: leaving Loss (RTO recovery): restore the saved cwnd.
pub fn bbr_exit_loss_recovery(bbr: &mut Bbr3, tp: &mut CcView) {
    tp.snd_cwnd = tp.snd_cwnd.max(bbr.prior_cwnd);
    bbr.try_fast_path = false; // bound cwnd by the latest model
}

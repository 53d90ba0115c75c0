//! ACK aggregation, v3 tcp_bbr.c `bbr_update_ack_aggregation`, `bbr_extra_acked`: the
//! same estimator as v1 (`crate::bbr::ack_aggregation`, whose doc explains it), except
//! that before the pipe is full each of the two slots covers one round, not five.
//!
//! Deviations: none.

use super::bw::bbr_bw;
use super::params::BBR_ACK_EPOCH_ACKED_RESET_THRESH;
use super::{Bbr3, BW_UNIT};
use crate::ops::{CcView, RateSample};

/// `bbr_extra_acked`: max extra ACKed over the last k-2k rounds (packets).
pub fn bbr_extra_acked(bbr: &Bbr3) -> u16 {
    bbr.extra_acked[0].max(bbr.extra_acked[1])
}

/// `bbr_update_ack_aggregation`.
pub fn bbr_update_ack_aggregation(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample) {
    let mut win_rtts_thresh = bbr.cfg.extra_acked_win_rtts;
    if bbr.cfg.extra_acked_gain == 0
        || rs.acked_sacked == 0
        || rs.delivered < 0
        || rs.interval_us <= 0
    {
        return;
    }
    if bbr.round_start {
        bbr.extra_acked_win_rtts = (bbr.extra_acked_win_rtts + 1).min(0x1F);
        if !bbr.full_bw_reached {
            win_rtts_thresh = 1;
        }
        if bbr.extra_acked_win_rtts >= win_rtts_thresh {
            bbr.extra_acked_win_rtts = 0;
            bbr.extra_acked_win_idx = if bbr.extra_acked_win_idx != 0 { 0 } else { 1 };
            bbr.extra_acked[bbr.extra_acked_win_idx] = 0;
        }
    }
    // Packets expected to be delivered over the epoch.
    let epoch_us = tp.delivered_mstamp_us.saturating_sub(bbr.ack_epoch_mstamp);
    let mut expected_acked =
        (u64::from(bbr_bw(bbr)) * epoch_us / BW_UNIT).min(u64::from(u32::MAX)) as u32;
    // Restart the epoch if ACKs came no faster than expected, or it is very old.
    if bbr.ack_epoch_acked <= expected_acked
        || bbr.ack_epoch_acked + rs.acked_sacked >= BBR_ACK_EPOCH_ACKED_RESET_THRESH
    {
        bbr.ack_epoch_acked = 0;
        bbr.ack_epoch_mstamp = tp.delivered_mstamp_us;
        expected_acked = 0;
    }
    bbr.ack_epoch_acked = (bbr.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
    let extra_acked = (bbr.ack_epoch_acked - expected_acked).min(tp.snd_cwnd);
    let slot = bbr.extra_acked_win_idx;
    if extra_acked > u32::from(bbr.extra_acked[slot]) {
        bbr.extra_acked[slot] = extra_acked.min(u32::from(u16::MAX)) as u16; // the kernel's u16
    }
}

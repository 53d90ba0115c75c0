//! ACK aggregation: tcp_bbr.c `bbr_update_ack_aggregation`, `bbr_extra_acked`.
//!
//! An epoch starts whenever ACKs arrive no faster than the bw estimate predicts. Within
//! an epoch, extra_acked = packets ACKed - bw * epoch length: data acknowledged beyond
//! what the path model explains (aggregated or delayed ACKs, Wi-Fi, ...). Its max over
//! a window of 5-10 rounds (two slots, swapped every 5 rounds) is added to the target
//! cwnd so sending continues through the ACK silences.
//!
//! Deviations: none; `extra_acked` = false in the parameters sets
//! `bbr_extra_acked_gain` to 0, which the kernel checks here too.

use super::bw::bbr_bw;
use super::{Bbr, BW_UNIT};
use crate::ops::{CcView, RateSample};

/// `bbr_extra_acked_win_rtts` = 5: each slot of the extra_acked max covers 5 rounds.
pub const BBR_EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// `bbr_ack_epoch_acked_reset_thresh` = 2^20: restart a very old epoch.
pub const BBR_ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;

/// `bbr_extra_acked`: max extra ACKed over the last 5-10 rounds (packets).
pub fn bbr_extra_acked(bbr: &Bbr) -> u16 {
    bbr.extra_acked[0].max(bbr.extra_acked[1])
}

/// `bbr_update_ack_aggregation`.
pub fn bbr_update_ack_aggregation(bbr: &mut Bbr, tp: &CcView, rs: &RateSample) {
    if bbr.cfg.extra_acked_gain == 0
        || !bbr.cfg.kernel.extra_acked()
        || rs.acked_sacked == 0
        || rs.delivered < 0
        || rs.interval_us <= 0
    {
        return;
    }

    if bbr.round_start {
        bbr.extra_acked_win_rtts = (bbr.extra_acked_win_rtts + 1).min(0x1F);
        if bbr.extra_acked_win_rtts >= BBR_EXTRA_ACKED_WIN_RTTS {
            bbr.extra_acked_win_rtts = 0;
            bbr.extra_acked_win_idx = if bbr.extra_acked_win_idx != 0 { 0 } else { 1 };
            bbr.extra_acked[bbr.extra_acked_win_idx] = 0;
        }
    }

    // Packets we expected to be delivered over the epoch.
    let epoch_us = tp.delivered_mstamp_us.saturating_sub(bbr.ack_epoch_mstamp);
    let mut expected_acked = (u64::from(bbr_bw(bbr)) * epoch_us / BW_UNIT) as u32;

    // Restart the epoch if ACKs came no faster than expected, or the epoch is very old.
    if bbr.ack_epoch_acked <= expected_acked
        || bbr.ack_epoch_acked + rs.acked_sacked >= BBR_ACK_EPOCH_ACKED_RESET_THRESH
    {
        bbr.ack_epoch_acked = 0;
        bbr.ack_epoch_mstamp = tp.delivered_mstamp_us;
        expected_acked = 0;
    }

    // Excess delivered beyond expectation, at most one cwnd.
    bbr.ack_epoch_acked = (bbr.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
    let extra_acked = (bbr.ack_epoch_acked - expected_acked).min(tp.snd_cwnd);
    let slot = bbr.extra_acked_win_idx;
    if extra_acked > u32::from(bbr.extra_acked[slot]) {
        bbr.extra_acked[slot] = extra_acked as u16; // the kernel's u16 field
    }
}

//! The bandwidth filter: tcp_bbr.c `bbr_update_bw`, `bbr_max_bw`, `bbr_bw`.
//!
//! Each valid delivery-rate sample (`delivered / interval_us`, scaled by BW_UNIT) enters
//! a windowed max filter clocked in packet-timed rounds, `bw_rtts` (10) wide. Samples
//! taken while application-limited enter only if they are at least the current max:
//! they show what the application sent, not what the path can carry.
//!
//! Deviations: none.

use super::lt_bw::bbr_lt_bw_sampling;
use super::round::bbr_update_round;
use super::{Bbr, BW_UNIT};
use crate::ops::{CcView, RateSample};

/// `bbr_max_bw`: the windowed max bandwidth sample, packets/us << BW_SCALE.
pub fn bbr_max_bw(bbr: &Bbr) -> u32 {
    bbr.bw.get()
}

/// `bbr_bw`: the estimate in use: the long-term (policed) rate if one was detected,
/// otherwise the windowed max.
pub fn bbr_bw(bbr: &Bbr) -> u32 {
    if bbr.lt_use_bw {
        bbr.lt_bw
    } else {
        bbr_max_bw(bbr)
    }
}

/// `bbr_update_bw`: count rounds, feed the long-term sampler, and add this ACK's
/// delivery-rate sample to the max filter.
pub fn bbr_update_bw(bbr: &mut Bbr, tp: &CcView, rs: &RateSample) {
    bbr.round_start = false;
    if rs.delivered < 0 || rs.interval_us <= 0 {
        return; // not a valid observation
    }
    bbr_update_round(bbr, tp, rs);

    bbr_lt_bw_sampling(bbr, tp, rs);

    // delivered is in packets and interval in us; the ratio is << 1, so scale first.
    let bw = (rs.delivered as u64 * BW_UNIT) / rs.interval_us as u64;
    let bw = bw.min(u64::from(u32::MAX)) as u32;

    // App-limited samples could drag the estimate down; keep them only if they describe
    // the path at least as well as the current model.
    if !rs.is_app_limited || bw >= bbr_max_bw(bbr) {
        let (win, t) = (bbr.cfg.bw_rtts, bbr.rtt_cnt);
        bbr.bw.running_max(win, t, bw);
    }
}

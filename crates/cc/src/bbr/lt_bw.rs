//! The long-term ("LT") bandwidth estimator that detects token-bucket policers:
//! tcp_bbr.c `bbr_lt_bw_sampling`, `bbr_lt_bw_interval_done`,
//! `bbr_reset_lt_bw_sampling`, `bbr_reset_lt_bw_sampling_interval`.
//!
//! Sampling starts at the first loss (so the policer has spent its burst tokens). An
//! interval spans 4 to 16 rounds and ends on a loss once lost/delivered >= 20 %. Two
//! consecutive intervals whose delivery rates agree within 1/8 or 4 kbit/s mean we are
//! policed: BBR then uses their average (`lt_bw`) as its bandwidth with pacing gain 1
//! for 48 rounds, after which it resets and resumes gain cycling.
//!
//! Deviations: the `lt_bw` parameter can switch the estimator off (the kernel always
//! runs it); then `lt_use_bw` never becomes true.

use super::pacing::bbr_rate_bytes_per_sec;
use super::probe_bw::bbr_reset_probe_bw_mode;
use super::{Bbr, BbrMode, BBR_SCALE, BBR_UNIT, BW_UNIT};
use crate::ops::{CcView, RateSample};

/// `bbr_lt_intvl_min_rtts` = 4: the shortest sampling interval (rounds).
pub const BBR_LT_INTVL_MIN_RTTS: u32 = 4;
/// `bbr_lt_loss_thresh` = 50: lost/delivered > 50/256 (~20 %) marks a lossy interval.
pub const BBR_LT_LOSS_THRESH: u64 = 50;
/// `bbr_lt_bw_ratio` = BBR_UNIT / 8: intervals within 1/8 of each other are consistent.
pub const BBR_LT_BW_RATIO: u64 = (BBR_UNIT / 8) as u64;
/// `bbr_lt_bw_diff` = 4000 / 8 bytes/s: or within 4 kbit/s.
pub const BBR_LT_BW_DIFF: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts` = 48: rounds to use lt_bw once policing is detected.
pub const BBR_LT_BW_MAX_RTTS: u32 = 48;

/// `bbr_reset_lt_bw_sampling_interval`: start a new interval now.
pub fn bbr_reset_lt_bw_sampling_interval(bbr: &mut Bbr, tp: &CcView) {
    bbr.lt_last_stamp = (tp.delivered_mstamp_us / 1000) as u32;
    bbr.lt_last_delivered = tp.delivered;
    bbr.lt_last_lost = tp.lost;
    bbr.lt_rtt_cnt = 0;
}

/// `bbr_reset_lt_bw_sampling`: forget the long-term estimate entirely.
pub fn bbr_reset_lt_bw_sampling(bbr: &mut Bbr, tp: &CcView) {
    bbr.lt_bw = 0;
    bbr.lt_use_bw = false;
    bbr.lt_is_sampling = false;
    bbr_reset_lt_bw_sampling_interval(bbr, tp);
}

/// `bbr_lt_bw_interval_done`: an interval measured `bw`; compare with the previous one.
pub fn bbr_lt_bw_interval_done(bbr: &mut Bbr, tp: &CcView, bw: u32) {
    if bbr.lt_bw != 0 {
        // Is the new bw close to the previous interval's?
        let diff = (i64::from(bw) - i64::from(bbr.lt_bw)).unsigned_abs();
        let close_ratio = diff * u64::from(BBR_UNIT) <= BBR_LT_BW_RATIO * u64::from(bbr.lt_bw);
        let close_abs = bbr_rate_bytes_per_sec(bbr, tp, diff, BBR_UNIT) <= BBR_LT_BW_DIFF;
        if close_ratio || close_abs {
            // Consistent rates with heavy loss: we are policed. Average the two.
            bbr.lt_bw = ((u64::from(bw) + u64::from(bbr.lt_bw)) >> 1) as u32;
            bbr.lt_use_bw = true;
            bbr.pacing_gain = BBR_UNIT; // try to avoid drops
            bbr.lt_rtt_cnt = 0;
            return;
        }
    }
    bbr.lt_bw = bw;
    bbr_reset_lt_bw_sampling_interval(bbr, tp);
}

/// `bbr_lt_bw_sampling`: per valid ACK (and on RTO with `losses = 1`).
pub fn bbr_lt_bw_sampling(bbr: &mut Bbr, tp: &CcView, rs: &RateSample) {
    if !bbr.cfg.lt_bw {
        return;
    }
    if bbr.lt_use_bw {
        // Already using lt_bw: stop after bbr_lt_bw_max_rtts rounds of PROBE_BW.
        if bbr.mode == BbrMode::ProbeBw && bbr.round_start {
            bbr.lt_rtt_cnt += 1;
            if bbr.lt_rtt_cnt >= BBR_LT_BW_MAX_RTTS {
                bbr_reset_lt_bw_sampling(bbr, tp);
                bbr_reset_probe_bw_mode(bbr, tp); // restart gain cycling
            }
        }
        return;
    }

    // Wait for the first loss before sampling, so the policer has exhausted its tokens;
    // earlier samples include the burst and over-estimate the policed rate.
    if !bbr.lt_is_sampling {
        if rs.losses == 0 {
            return;
        }
        bbr_reset_lt_bw_sampling_interval(bbr, tp);
        bbr.lt_is_sampling = true;
    }

    // Running out of data would under-estimate: start over.
    if rs.is_app_limited {
        bbr_reset_lt_bw_sampling(bbr, tp);
        return;
    }

    if bbr.round_start {
        bbr.lt_rtt_cnt += 1;
    }
    if bbr.lt_rtt_cnt < BBR_LT_INTVL_MIN_RTTS {
        return; // interval needs to be longer
    }
    if bbr.lt_rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS {
        bbr_reset_lt_bw_sampling(bbr, tp); // interval is too long
        return;
    }

    // End the interval on a loss: stopping before the tokens run out under-estimates.
    if rs.losses == 0 {
        return;
    }

    let lost = tp.lost.wrapping_sub(bbr.lt_last_lost);
    let delivered = tp.delivered.wrapping_sub(bbr.lt_last_delivered);
    // Loss rate lost/delivered at least lt_loss_thresh/256? If not, wait.
    if delivered == 0 || (lost << BBR_SCALE) < BBR_LT_LOSS_THRESH * delivered {
        return;
    }

    // Average delivery rate over the interval, at ms resolution.
    let t = ((tp.delivered_mstamp_us / 1000) as u32).wrapping_sub(bbr.lt_last_stamp);
    if (t as i32) < 1 {
        return; // less than one ms: wait
    }
    if t >= u32::MAX / 1000 {
        bbr_reset_lt_bw_sampling(bbr, tp); // too long to multiply safely
        return;
    }
    let t_us = u64::from(t) * 1000;
    let bw = (delivered * BW_UNIT) / t_us;
    bbr_lt_bw_interval_done(bbr, tp, bw.min(u64::from(u32::MAX)) as u32);
}

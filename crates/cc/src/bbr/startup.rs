//! STARTUP and full-pipe detection: tcp_bbr.c `bbr_check_full_bw_reached`,
//! `bbr_reset_startup_mode`, `bbr_reset_mode`.
//!
//! STARTUP paces and sizes cwnd at high_gain (2/ln 2), doubling the delivery rate each
//! round while the pipe has room. At the start of every non-app-limited round, if the
//! max bw grew by at least 25 % over `full_bw`, `full_bw` takes the new value and the
//! count restarts; otherwise the count goes up, and after 3 such rounds the pipe is
//! estimated full (3 rounds: receive-window autotuning grows the window, the window is
//! filled, and only then do higher delivery-rate samples show).
//!
//! Deviations: none.

use super::bw::bbr_max_bw;
use super::probe_bw::bbr_reset_probe_bw_mode;
use super::{bbr_set_mode, Bbr, BbrMode, BBR_SCALE, BBR_UNIT};
use crate::ops::{CcView, RateSample};

/// `bbr_full_bw_thresh` = 1.25: bw growth that means there may be more to find.
pub const BBR_FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt` = 3: rounds without such growth before the pipe counts as full.
pub const BBR_FULL_BW_CNT: u32 = 3;

/// `bbr_check_full_bw_reached`.
pub fn bbr_check_full_bw_reached(bbr: &mut Bbr, rs: &RateSample) {
    if bbr.full_bw_reached || !bbr.round_start || rs.is_app_limited {
        return;
    }
    let bw_thresh = ((u64::from(bbr.full_bw) * u64::from(BBR_FULL_BW_THRESH)) >> BBR_SCALE) as u32;
    if bbr_max_bw(bbr) >= bw_thresh {
        bbr.full_bw = bbr_max_bw(bbr);
        bbr.full_bw_cnt = 0;
        return;
    }
    bbr.full_bw_cnt += 1;
    bbr.full_bw_reached = bbr.full_bw_cnt >= BBR_FULL_BW_CNT;
}

/// `bbr_reset_startup_mode`.
pub fn bbr_reset_startup_mode(bbr: &mut Bbr) {
    bbr_set_mode(bbr, BbrMode::Startup);
}

/// `bbr_reset_mode`: back to STARTUP if the pipe was never filled, else PROBE_BW.
pub fn bbr_reset_mode(bbr: &mut Bbr, tp: &CcView) {
    if !bbr.full_bw_reached {
        bbr_reset_startup_mode(bbr);
    } else {
        bbr_reset_probe_bw_mode(bbr, tp);
    }
}

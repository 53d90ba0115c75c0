//! STARTUP and DRAIN of v3 tcp_bbr.c: `bbr_reset_full_bw`, `bbr_check_full_bw_reached`,
//! `bbr_handle_queue_too_high_in_startup`, `bbr_check_loss_too_high_in_startup`,
//! `bbr_check_drain`.
//!
//! The pipe is full when the bw sample has not grown by 25 % for 3 non-app-limited
//! rounds (as v1; v3 also uses this plateau test, `full_bw_now`, in PROBE_UP), or when
//! loss is too high: at the end of a round in Recovery with at least `full_loss_cnt`
//! (6) loss events and the sample's loss rate above `loss_thresh`; or after 2 rounds
//! of CE ratio >= 50 % (module `ecn`). Exiting for loss/CE sets inflight_hi to
//! max(BDP, what the last round delivered). DRAIN then paces at 0.35 until inflight is
//! at most the BDP and enters PROBE_BW in DOWN.
//!
//! Deviations: none.

use super::bw::bbr_max_bw;
use super::cwnd::{bbr_inflight, bbr_packets_in_net_at_edt};
use super::lower_bounds::bbr_reset_congestion_signals;
use super::probe_bw::bbr_start_bw_probe_down;
use super::upper_bounds::bbr_is_inflight_too_high;
use super::{scale, Bbr3, Ctx, Mode, Version, BBR_UNIT};
use crate::helpers::tcp_packets_in_flight;
use crate::ops::{CaState, CcView, RateSample};

/// `bbr_reset_full_bw`: restart the plateau detector.
pub fn bbr_reset_full_bw(bbr: &mut Bbr3) {
    bbr.full_bw = 0;
    bbr.full_bw_cnt = 0;
    bbr.full_bw_now = false;
}

/// `bbr_check_full_bw_reached`: 3 rounds without 25 % growth of the bw sample.
pub fn bbr_check_full_bw_reached(bbr: &mut Bbr3, rs: &RateSample, ctx: &Ctx) {
    if bbr.cfg.version == Version::V2 {
        super::v2::bbr2_check_full_bw_reached(bbr, rs);
        return;
    }
    if bbr.full_bw_now || rs.is_app_limited {
        return;
    }
    let bw_thresh = scale(bbr.full_bw, bbr.cfg.full_bw_thresh);
    if u64::from(ctx.sample_bw) >= bw_thresh {
        bbr_reset_full_bw(bbr);
        bbr.full_bw = ctx.sample_bw;
        return;
    }
    if !bbr.round_start {
        return;
    }
    bbr.full_bw_cnt = (bbr.full_bw_cnt + 1).min(3); // 2-bit field
    bbr.full_bw_now = bbr.full_bw_cnt >= bbr.cfg.full_bw_cnt;
    bbr.full_bw_reached |= bbr.full_bw_now;
}

/// `bbr_handle_queue_too_high_in_startup`: loss or CE says STARTUP overfilled the pipe;
/// remember the volume as inflight_hi.
pub fn bbr_handle_queue_too_high_in_startup(bbr: &mut Bbr3, tp: &CcView) {
    bbr.full_bw_reached = true;
    let bdp = bbr_inflight(bbr, tp, bbr_max_bw(bbr), BBR_UNIT); // with quantization budget
    bbr.inflight_hi = match bbr.cfg.version {
        Version::V2 => bdp, // bbr2_handle_queue_too_high_in_startup
        Version::V3 => bdp.max(bbr.inflight_latest),
    };
}

/// `bbr_check_loss_too_high_in_startup`: at the end of each round of a Recovery episode
/// in STARTUP, exit if the round had >= full_loss_cnt loss events and the loss rate is
/// above loss_thresh.
pub fn bbr_check_loss_too_high_in_startup(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample) {
    if bbr.full_bw_reached {
        return;
    }
    if rs.losses > 0 && bbr.loss_events_in_round < 0xF {
        bbr.loss_events_in_round += 1; // saturating 4-bit counter
    }
    if bbr.cfg.full_loss_cnt != 0
        && bbr.loss_round_start
        && tp.ca_state == CaState::Recovery
        && bbr.loss_events_in_round >= bbr.cfg.full_loss_cnt
        && bbr_is_inflight_too_high(bbr, rs)
    {
        bbr_handle_queue_too_high_in_startup(bbr, tp);
        return;
    }
    if bbr.loss_round_start {
        bbr.loss_events_in_round = 0;
    }
}

/// `bbr_check_drain`: STARTUP -> DRAIN once the pipe is full (ssthresh set for
/// monitoring); DRAIN -> PROBE_BW (DOWN) once inflight is at most the BDP.
pub fn bbr_check_drain(bbr: &mut Bbr3, tp: &mut CcView) {
    if bbr.mode == Mode::Startup && bbr.full_bw_reached {
        bbr.mode = Mode::Drain; // drain the queue we created
                                // Exported for monitoring only: STARTUP is over.
        tp.snd_ssthresh = bbr_inflight(bbr, tp, bbr_max_bw(bbr), BBR_UNIT);
        bbr_reset_congestion_signals(bbr);
    } // fall through: inflight may already be small
    if bbr.mode == Mode::Drain
        && bbr_packets_in_net_at_edt(bbr, tp, tcp_packets_in_flight(tp))
            <= bbr_inflight(bbr, tp, bbr_max_bw(bbr), BBR_UNIT)
    {
        bbr.mode = Mode::ProbeBw;
        bbr_start_bw_probe_down(bbr, tp);
    }
}

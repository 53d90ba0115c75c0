//! The PROBE_BW state machine of v3 tcp_bbr.c: `bbr_pacing_gain[]`,
//! `bbr_is_probing_bandwidth`, `bbr_has_elapsed_in_phase`,
//! `bbr_is_reno_coexistence_probe_time`, `bbr_pick_probe_wait`, `bbr_set_cycle_idx`,
//! `bbr_start_bw_probe_refill`, `bbr_start_bw_probe_up`, `bbr_start_bw_probe_down`,
//! `bbr_start_bw_probe_cruise`, `bbr_check_time_to_probe_bw`, `bbr_check_time_to_cruise`,
//! `bbr_update_cycle_phase`.
//!
//! DOWN (pacing 0.91) -> CRUISE (1.0) once inflight is at most both the BDP and
//! inflight_hi less headroom; DOWN or CRUISE -> REFILL (1.0, lower bounds lifted) when
//! `probe_wait_us` (2 s + U[0, 1 s)) has passed since DOWN began, or
//! `rounds_since_probe` (started at U{0, 1}) reaches min(63, target inflight) rounds, or
//! CE marks have ceased (ECN reprobe); REFILL -> UP (1.25, cwnd_gain + 0.25) after one
//! round; UP -> DOWN when loss/CE was too high (`upper_bounds`), when inflight reached
//! the inflight_hi of a previous probe that went too high, or when the bw has not grown
//! by 25 % for 3 rounds while inflight_hi was not what limited it.
//!
//! Deviations: the random draws come from the seeded `crate::bbr::rng::CycleRng`.

use super::bw::bbr_max_bw;
use super::cwnd::{
    bbr_inflight, bbr_inflight_with_headroom, bbr_packets_in_net_at_edt, bbr_target_inflight,
};
use super::lower_bounds::{bbr_reset_congestion_signals, bbr_reset_lower_bounds};
use super::startup::bbr_reset_full_bw;
use super::upper_bounds::{bbr_adapt_upper_bounds, bbr_raise_inflight_hi_slope};
use super::{scale, AckPhase, Bbr3, Ctx, Mode, Phase, Version, BBR_UNIT, UNSET};
use crate::ops::{CaState, CcView, RateSample};

/// `bbr_pacing_gain[]`, indexed by `Phase`: UP 5/4 = 320, DOWN 91/100 = 232,
/// CRUISE 1 = 256, REFILL 1 = 256 (BBR_UNIT = 256).
pub const BBR_PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 91 / 100, BBR_UNIT, BBR_UNIT];

/// `bbr_is_probing_bandwidth`: STARTUP, or PROBE_BW in REFILL or UP.
pub fn bbr_is_probing_bandwidth(bbr: &Bbr3) -> bool {
    bbr.mode == Mode::Startup
        || (bbr.mode == Mode::ProbeBw && matches!(bbr.cycle_idx, Phase::Refill | Phase::Up))
}

/// `bbr_has_elapsed_in_phase`: more than `interval_us` since the phase's start.
pub fn bbr_has_elapsed_in_phase(bbr: &Bbr3, tp: &CcView, interval_us: u32) -> bool {
    // tcp_stamp_us_delta(tcp_mstamp, cycle_mstamp + interval_us) > 0
    (tp.now_us as i64) - ((bbr.cycle_mstamp + u64::from(interval_us)) as i64) > 0
}

/// `bbr_is_reno_coexistence_probe_time`: a Reno flow with our BDP would have probed by
/// now (one loss epoch is BDP rounds); at most `bw_probe_max_rounds`.
/// (v2 scales the target by `bw_probe_reno_gain`, 1.0 by default and fixed at 1.0 in
/// v3, where the formula is min(max_rounds, target inflight).)
pub fn bbr_is_reno_coexistence_probe_time(bbr: &Bbr3, tp: &CcView) -> bool {
    let mut rounds = bbr.cfg.bw_probe_max_rounds;
    if bbr.cfg.bw_probe_reno_gain != 0 {
        let reno_rounds = scale(bbr_target_inflight(bbr, tp), bbr.cfg.bw_probe_reno_gain);
        rounds = rounds.min(reno_rounds.min(u64::from(u32::MAX)) as u32);
    }
    bbr.rounds_since_probe >= rounds
}

/// `bbr_pick_probe_wait`: randomise the wait until the next probe, in rounds
/// (`rounds_since_probe` starts at U{0..rand_rounds-1}) and in wall-clock time
/// (base + U[0, rand_us)).
pub fn bbr_pick_probe_wait(bbr: &mut Bbr3) {
    bbr.rounds_since_probe = bbr.rng.u32_below(bbr.cfg.bw_probe_rand_rounds);
    bbr.probe_wait_us = bbr.cfg.bw_probe_base_us + bbr.rng.u32_below(bbr.cfg.bw_probe_rand_us);
}

/// `bbr_set_cycle_idx`: a new phase needs new cwnd and pacing (no fast path).
pub fn bbr_set_cycle_idx(bbr: &mut Bbr3, phase: Phase) {
    bbr.cycle_idx = phase;
    bbr.try_fast_path = false;
}

/// `bbr_start_bw_probe_refill`: send at the estimated bw to fill the pipe before
/// probing above it (so a shallow buffer's loss does not make bw_hi/inflight_hi
/// underestimate). Lifts the lower bounds.
pub fn bbr_start_bw_probe_refill(bbr: &mut Bbr3, tp: &CcView, bw_probe_up_rounds: u32) {
    bbr_reset_lower_bounds(bbr);
    if bbr.inflight_hi != UNSET {
        bbr.inflight_hi += bbr.cfg.refill_add_inc; // v2's bbr_refill_add_inc (v3: none)
    }
    bbr.got_ok_bw_probe_sample = false; // (v2 only reads it)
    bbr.bw_probe_up_rounds = bw_probe_up_rounds.min(31); // 5-bit field
    bbr.bw_probe_up_acks = 0;
    bbr.stopped_risky_probe = false;
    bbr.ack_phase = AckPhase::Refilling;
    bbr.next_rtt_delivered = tp.delivered;
    bbr_set_cycle_idx(bbr, Phase::Refill);
}

/// `bbr_start_bw_probe_up`: probe the max deliverable rate and volume.
pub fn bbr_start_bw_probe_up(bbr: &mut Bbr3, tp: &CcView, ctx: &Ctx) {
    bbr.ack_phase = AckPhase::ProbeStarting;
    bbr.next_rtt_delivered = tp.delivered;
    bbr.cycle_mstamp = tp.now_us;
    if bbr.cfg.version == Version::V3 {
        // v3 restarts the plateau detector for the probe (v2 does not use it here).
        bbr_reset_full_bw(bbr);
        bbr.full_bw = ctx.sample_bw;
    }
    bbr_set_cycle_idx(bbr, Phase::Up);
    bbr_raise_inflight_hi_slope(bbr, tp);
}

/// `bbr_start_bw_probe_down`: start a new cycle: pick the wall-clock time of the next
/// probe and drain.
pub fn bbr_start_bw_probe_down(bbr: &mut Bbr3, tp: &CcView) {
    bbr_reset_congestion_signals(bbr);
    bbr.bw_probe_up_cnt = UNSET; // inflight_hi no longer grows
    bbr_pick_probe_wait(bbr);
    bbr.cycle_mstamp = tp.now_us; // start the wall clock
    bbr.ack_phase = AckPhase::ProbeStopping;
    bbr.next_rtt_delivered = tp.delivered;
    bbr_set_cycle_idx(bbr, Phase::Down);
}

/// `bbr_start_bw_probe_cruise`: hold a conservative operating point, reducing inflight
/// only for loss/CE.
pub fn bbr_start_bw_probe_cruise(bbr: &mut Bbr3) {
    if bbr.inflight_lo != UNSET {
        bbr.inflight_lo = bbr.inflight_lo.min(bbr.inflight_hi);
    }
    bbr_set_cycle_idx(bbr, Phase::Cruise);
}

/// `bbr_check_time_to_probe_bw`: start REFILL if CE marks have ceased (ECN reprobe),
/// the wall-clock wait is over, or a Reno flow would have probed by now.
pub fn bbr_check_time_to_probe_bw(bbr: &mut Bbr3, tp: &CcView) -> bool {
    // CE marks but no loss this cycle, and now the marks have ceased: reprobe quickly
    // (cross traffic may have left).
    if bbr.cfg.ecn_reprobe_gain != 0
        && bbr.ecn_eligible
        && bbr.ecn_in_cycle
        && !bbr.loss_in_cycle
        && tp.ca_state == CaState::Open
    {
        // n such that 2^n (bbr_raise_inflight_hi_slope's growth) is about
        // inflight_hi x ecn_reprobe_gain.
        let v = scale(bbr.inflight_hi, bbr.cfg.ecn_reprobe_gain);
        let n = if v == 0 { 0 } else { v.ilog2() };
        bbr_start_bw_probe_refill(bbr, tp, n);
        return true;
    }
    if bbr_has_elapsed_in_phase(bbr, tp, bbr.probe_wait_us)
        || bbr_is_reno_coexistence_probe_time(bbr, tp)
    {
        bbr_start_bw_probe_refill(bbr, tp, 0);
        return true;
    }
    false
}

/// `bbr_check_time_to_cruise`: inflight is below both inflight_hi less headroom and the
/// BDP.
pub fn bbr_check_time_to_cruise(bbr: &Bbr3, tp: &CcView, inflight: u32, bw: u32) -> bool {
    if inflight > bbr_inflight_with_headroom(bbr) {
        return false; // always leave headroom in the queue
    }
    let is_under_bdp = inflight <= bbr_inflight(bbr, tp, bw, BBR_UNIT);
    if bbr.cfg.drain_to_target {
        return is_under_bdp; // v3 always; v2's bbr_drain_to_target (default)
    }
    is_under_bdp || bbr_has_elapsed_in_phase(bbr, tp, bbr.min_rtt_us)
}

/// `bbr_update_cycle_phase`: once the pipe is full, adapt the upper bounds (also in
/// DRAIN and PROBE_RTT) and, in PROBE_BW, run the phase machine.
pub fn bbr_update_cycle_phase(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample, ctx: &Ctx) {
    if !bbr.full_bw_reached {
        return;
    }
    if bbr_adapt_upper_bounds(bbr, tp, rs, ctx) {
        return; // a transition was decided
    }
    if bbr.mode != Mode::ProbeBw {
        return;
    }
    let inflight = bbr_packets_in_net_at_edt(bbr, tp, rs.prior_in_flight);
    let bw = bbr_max_bw(bbr);
    let mut is_bw_probe_done = false;
    match bbr.cycle_idx {
        // Mostly cruising at pacing gain 1 without building a queue; slow down on
        // loss/CE (lower bounds).
        Phase::Cruise => {
            bbr_check_time_to_probe_bw(bbr, tp);
        }
        // After a round of refilling, the samples start reflecting it: probe up.
        Phase::Refill => {
            if bbr.round_start {
                bbr.bw_probe_samples = true;
                bbr_start_bw_probe_up(bbr, tp, ctx);
            }
        }
        // Stop probing when (1) inflight reached the inflight_hi of a previous probe
        // that went too high, (2) the bw plateaued while inflight_hi did not limit it;
        // (3) and (4), loss and CE too high, are in bbr_adapt_upper_bounds.
        Phase::Up if bbr.cfg.version == Version::V2 => {
            super::v2::bbr2_probe_up_done(bbr, tp, inflight, bw);
        }
        Phase::Up => {
            if bbr.prev_probe_too_high && inflight >= bbr.inflight_hi {
                bbr.stopped_risky_probe = true;
                is_bw_probe_done = true;
            } else if tp.is_cwnd_limited && tp.snd_cwnd >= bbr.inflight_hi {
                // inflight_hi is limiting bw growth
                bbr_reset_full_bw(bbr);
                bbr.full_bw = ctx.sample_bw;
            } else if bbr.full_bw_now {
                // Plateau in estimated bw: the pipe looks full.
                is_bw_probe_done = true;
            }
            if is_bw_probe_done {
                bbr.prev_probe_too_high = false; // no loss/CE (yet)
                bbr_start_bw_probe_down(bbr, tp);
            }
        }
        // Drain the queue the probe built until inflight is at the cruising target.
        Phase::Down => {
            if bbr_check_time_to_probe_bw(bbr, tp) {
                return;
            }
            if bbr_check_time_to_cruise(bbr, tp, inflight, bw) {
                bbr_start_bw_probe_cruise(bbr);
            }
        }
    }
}

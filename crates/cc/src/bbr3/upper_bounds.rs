//! The long-term upper bound `inflight_hi` of v3 tcp_bbr.c: `bbr_is_inflight_too_high`,
//! `bbr_inflight_hi_from_lost_skb`, `bbr_handle_inflight_too_high`,
//! `bbr_raise_inflight_hi_slope`, `bbr_probe_inflight_hi_upward`,
//! `bbr_adapt_upper_bounds`.
//!
//! A sample's inflight was too high if more than `loss_thresh` (5/256) of the
//! `tx_in_flight` packets in flight when its packet was sent were lost meanwhile, or
//! (ECN-eligible flows) more than `ecn_thresh` (1/2) of what it delivered was CE
//! marked. While the samples reflect a bandwidth probe (`bw_probe_samples`), that cuts
//! inflight_hi, once per probe, to max(the inflight at which the loss rate crossed the
//! threshold, (1 - beta) x target inflight), and ends PROBE_UP. Otherwise inflight_hi
//! rises to any higher inflight found safe, and in PROBE_UP, when cwnd-limited at
//! inflight_hi, by 1 packet per `bw_probe_up_cnt` acked, a count halved every round
//! (1, 2, 4, ... packets per round-trip of growth: slow-start-like probing).
//!
//! Deviations: none.

use super::bw::bbr_advance_max_bw_filter;
use super::cwnd::bbr_target_inflight;
use super::probe_bw::{bbr_start_bw_probe_down, bbr_start_bw_probe_refill};
use super::{scale, AckPhase, Bbr3, Ctx, Mode, Phase, Version, BBR_SCALE, BBR_UNIT, UNSET};
use crate::ops::{CcView, RateSample};

/// `bbr_is_inflight_too_high`: does this sample's loss or CE rate say inflight is too
/// high?
pub fn bbr_is_inflight_too_high(bbr: &Bbr3, rs: &RateSample) -> bool {
    if rs.lost > 0 && rs.tx_in_flight != 0 {
        let loss_thresh = scale(rs.tx_in_flight, bbr.cfg.loss_thresh);
        if rs.lost as u64 > loss_thresh {
            return true;
        }
    }
    if rs.delivered_ce > 0 && rs.delivered > 0 && bbr.ecn_eligible && bbr.cfg.ecn_thresh != 0 {
        let ecn_thresh = (rs.delivered as u64 * u64::from(bbr.cfg.ecn_thresh)) >> BBR_SCALE;
        let too_high = match bbr.cfg.version {
            Version::V2 => rs.delivered_ce as u64 >= ecn_thresh,
            Version::V3 => rs.delivered_ce as u64 > ecn_thresh,
        };
        if too_high {
            return true;
        }
    }
    false
}

/// `bbr_inflight_hi_from_lost_skb`: the inflight at which the loss rate crossed
/// loss_thresh within the flight up to this lost segment: solve
/// (lost_prev + p) / (inflight_prev + p) >= loss_thresh for the prefix p of the
/// segment, rounded up to a packet. `rs.tx_in_flight` / `rs.lost` describe the flight
/// up to and including the segment; `pcount` is its size. `UNSET` if inconsistent.
pub fn bbr_inflight_hi_from_lost_skb(bbr: &Bbr3, rs: &RateSample, pcount: u32) -> u32 {
    let loss_thresh = u64::from(bbr.cfg.loss_thresh);
    // In flight and lost before this segment.
    let inflight_prev = i64::from(rs.tx_in_flight) - i64::from(pcount);
    if inflight_prev < 0 {
        return UNSET; // the kernel's WARN_ONCE
    }
    let lost_prev = rs.lost - i64::from(pcount);
    if lost_prev < 0 {
        return UNSET;
    }
    // At what prefix of this segment did the loss rate exceed loss_thresh?
    let loss_budget = (inflight_prev as u64 * loss_thresh + u64::from(BBR_UNIT) - 1) >> BBR_SCALE;
    let lost_prefix = if lost_prev as u64 >= loss_budget {
        0 // earlier losses crossed loss_thresh already
    } else {
        let divisor = u64::from(BBR_UNIT) - loss_thresh;
        if divisor == 0 {
            return UNSET;
        }
        ((loss_budget - lost_prev as u64) << BBR_SCALE) / divisor
    };
    (inflight_prev as u64 + lost_prefix).min(u64::from(u32::MAX)) as u32
}

/// `bbr_handle_inflight_too_high`: once per probe, cut inflight_hi (unless the sample
/// was app-limited) and, in PROBE_UP, start PROBE_DOWN.
pub fn bbr_handle_inflight_too_high(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample) {
    let beta = bbr.cfg.beta;
    bbr.prev_probe_too_high = true;
    bbr.bw_probe_samples = false; // only react once per probe
                                  // App-limited: not robustly probing the max safe volume.
    if !rs.is_app_limited {
        let floor = scale(bbr_target_inflight(bbr, tp), BBR_UNIT - beta);
        bbr.inflight_hi = u64::from(rs.tx_in_flight).max(floor) as u32;
        if bbr.cfg.version == Version::V2 {
            super::v2::bbr2_handle_inflight_too_high_via_ecn(bbr);
        }
    }
    if bbr.mode == Mode::ProbeBw && bbr.cycle_idx == Phase::Up {
        bbr_start_bw_probe_down(bbr, tp);
    }
}

/// `bbr_raise_inflight_hi_slope`: each PROBE_UP round, double the growth per round:
/// packets acked per inflight_hi increment = cwnd / 2^rounds.
pub fn bbr_raise_inflight_hi_slope(bbr: &mut Bbr3, tp: &CcView) {
    let growth_this_round = 1u32 << bbr.bw_probe_up_rounds;
    bbr.bw_probe_up_rounds = (bbr.bw_probe_up_rounds + 1).min(30);
    bbr.bw_probe_up_cnt = (tp.snd_cwnd / growth_this_round).max(1);
}

/// `bbr_probe_inflight_hi_upward`: in PROBE_UP without high loss/CE, raise inflight_hi
/// while it limits cwnd.
pub fn bbr_probe_inflight_hi_upward(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample) {
    if bbr.cfg.version == Version::V2 {
        super::v2::bbr2_probe_inflight_hi_upward(bbr, tp, rs);
        return;
    }
    if !tp.is_cwnd_limited || tp.snd_cwnd < bbr.inflight_hi {
        return; // not fully using inflight_hi: do not grow it
    }
    // For each bw_probe_up_cnt packets acked, inflight_hi + 1.
    bbr.bw_probe_up_acks += rs.acked_sacked;
    if bbr.bw_probe_up_acks >= bbr.bw_probe_up_cnt {
        let delta = bbr.bw_probe_up_acks / bbr.bw_probe_up_cnt;
        bbr.bw_probe_up_acks -= delta * bbr.bw_probe_up_cnt;
        bbr.inflight_hi = bbr.inflight_hi.saturating_add(delta);
        bbr.try_fast_path = false; // cwnd needs updating
    }
    if bbr.round_start {
        bbr_raise_inflight_hi_slope(bbr, tp);
    }
}

/// `bbr_adapt_upper_bounds`: track the feedback of a probe; cut inflight_hi if loss/CE
/// went too high, else raise it. Returns true if it decided a state transition.
pub fn bbr_adapt_upper_bounds(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample, ctx: &Ctx) -> bool {
    // When will the samples of our bw probes arrive?
    if bbr.ack_phase == AckPhase::ProbeStarting && bbr.round_start {
        bbr.ack_phase = AckPhase::ProbeFeedback;
    }
    if bbr.ack_phase == AckPhase::ProbeStopping && bbr.round_start {
        // End of the samples from the probing phase.
        bbr.bw_probe_samples = false;
        bbr.ack_phase = AckPhase::Init;
        // This sample is our best chance at the highest available bw: now is the time
        // to forget the previous cycle's samples.
        if bbr.mode == Mode::ProbeBw && !rs.is_app_limited {
            bbr_advance_max_bw_filter(bbr);
        }
        // A probe that reached inflight_hi without high loss/CE: probe again, letting
        // inflight persist at inflight_hi for a round, then accelerating beyond it.
        if bbr.mode == Mode::ProbeBw && bbr.stopped_risky_probe && !bbr.prev_probe_too_high {
            bbr_start_bw_probe_refill(bbr, tp, 0);
            return true;
        }
    }
    if bbr_is_inflight_too_high(bbr, rs) {
        if bbr.bw_probe_samples {
            // The sample is from bw probing.
            bbr_handle_inflight_too_high(bbr, tp, rs);
        }
    } else {
        // Loss/CE rate is safe: adjust the upper bound upward.
        let v2 = bbr.cfg.version == Version::V2;
        if v2 {
            // Remember that this probe had a sample that was not too high.
            bbr.got_ok_bw_probe_sample |= bbr.bw_probe_samples;
        }
        if bbr.inflight_hi == UNSET && (!v2 || bbr.v2_bw_hi == UNSET) {
            return false; // no excess-queue signal yet
        }
        // Resilience to random loss: raise inflight_hi whenever a higher level is safe.
        if rs.tx_in_flight > bbr.inflight_hi {
            bbr.inflight_hi = rs.tx_in_flight;
        }
        if v2 && ctx.sample_bw > bbr.v2_bw_hi {
            bbr.v2_bw_hi = ctx.sample_bw; // (v2's separate bw_hi bound)
        }
        if bbr.mode == Mode::ProbeBw && bbr.cycle_idx == Phase::Up {
            bbr_probe_inflight_hi_upward(bbr, tp, rs);
        }
    }
    false
}

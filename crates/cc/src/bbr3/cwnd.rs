//! The congestion window of v3 tcp_bbr.c: `bbr_bdp`, `bbr_quantization_budget`,
//! `bbr_inflight`, `bbr_packets_in_net_at_edt`, `bbr_ack_aggregation_cwnd`,
//! `bbr_probe_rtt_cwnd`, `bbr_set_cwnd`, `bbr_save_cwnd`, `bbr_target_inflight`,
//! `bbr_inflight_with_headroom`, `bbr_bound_cwnd_for_inflight_model`.
//!
//! target = ceil(bw x min_rtt x cwnd_gain) + extra_acked, then at least 3 send quanta
//! and `cwnd_min_target` (v1 added the quanta and rounded up to even), + 2 in PROBE_UP.
//! cwnd grows by what was acked toward the target and snaps down to it once the pipe
//! is full. Unlike v1 there is no packet-conservation step in loss recovery: the loss
//! response is in the model (bw_lo, inflight_lo, inflight_hi). Then the model bounds
//! cwnd: inflight_hi while probing (every PROBE_BW phase but CRUISE), inflight_hi less
//! 15 % headroom in CRUISE and PROBE_RTT, inflight_lo always, never below 4; PROBE_RTT
//! caps at 0.5 x BDP.
//!
//! Deviations: `bbr_packets_in_net_at_edt` as in `crate::bbr::cwnd` (EDT from the
//! sender's internal pacing, now at microsecond resolution).

use super::ack_aggregation::bbr_extra_acked;
use super::bw::bbr_bw;
use super::pacing::bbr_tso_segs_goal;
use super::{scale, Bbr3, Mode, Phase, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT, UNSET};
use crate::ops::{CaState, CcView};

/// `bbr_bdp`: ceil(bw x min_rtt x gain) packets; `init_cwnd` before any RTT sample.
pub fn bbr_bdp(bbr: &Bbr3, bw: u32, gain: u32) -> u32 {
    if bbr.min_rtt_us == UNSET {
        return bbr.init_cwnd; // no valid RTT sample yet: be safe
    }
    let w = u64::from(bw) * u64::from(bbr.min_rtt_us);
    // Apply the gain, remove BW_SCALE, round up (written as the kernel writes it).
    #[allow(clippy::manual_div_ceil)]
    let bdp = (((w.wrapping_mul(u64::from(gain)) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT) as u32;
    bdp
}

/// `bbr_quantization_budget`: at least 3 send quanta in flight and cwnd_min_target;
/// +2 in PROBE_UP so that small BDPs still get inflight above the BDP.
pub fn bbr_quantization_budget(bbr: &Bbr3, tp: &CcView, cwnd: u32) -> u32 {
    let tso_segs_goal = 3 * bbr_tso_segs_goal(bbr, tp);
    let mut cwnd = cwnd.max(tso_segs_goal).max(bbr.cfg.cwnd_min_target);
    if bbr.mode == Mode::ProbeBw && bbr.cycle_idx == Phase::Up {
        cwnd += 2;
    }
    cwnd
}

/// `bbr_inflight`: the inflight for `bw` and `gain`, with the quantization budget.
pub fn bbr_inflight(bbr: &Bbr3, tp: &CcView, bw: u32, gain: u32) -> u32 {
    let inflight = bbr_bdp(bbr, bw, gain);
    bbr_quantization_budget(bbr, tp, inflight)
}

/// `bbr_packets_in_net_at_edt`: packets in the network when the next packet departs
/// at its earliest departure time.
pub fn bbr_packets_in_net_at_edt(bbr: &Bbr3, tp: &CcView, inflight_now: u32) -> u32 {
    let now_ns = tp.now_us * 1000;
    let edt_ns = tp.tcp_wstamp_ns.max(now_ns);
    let interval_us = (edt_ns - now_ns) / 1000;
    let interval_delivered = ((u64::from(bbr_bw(bbr)) * interval_us) >> BW_SCALE) as u32;
    let mut inflight_at_edt = inflight_now;
    if bbr.pacing_gain > BBR_UNIT {
        inflight_at_edt += bbr_tso_segs_goal(bbr, tp); // include the EDT skb
    }
    inflight_at_edt.saturating_sub(interval_delivered)
}

/// `bbr_ack_aggregation_cwnd`: extra_acked x gain, at most 100 ms of bw (in v3 also
/// before the pipe is full).
pub fn bbr_ack_aggregation_cwnd(bbr: &Bbr3) -> u32 {
    if bbr.cfg.extra_acked_gain == 0 {
        return 0;
    }
    let max_aggr_cwnd =
        (u64::from(bbr_bw(bbr)) * super::params::BBR_EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
    let aggr_cwnd = (bbr.cfg.extra_acked_gain * u32::from(bbr_extra_acked(bbr))) >> BBR_SCALE;
    aggr_cwnd.min(max_aggr_cwnd)
}

/// `bbr_probe_rtt_cwnd`: the PROBE_RTT cwnd, probe_rtt_cwnd_gain (0.5) x BDP, >= 4.
pub fn bbr_probe_rtt_cwnd(bbr: &Bbr3) -> u32 {
    bbr.cfg
        .cwnd_min_target
        .max(bbr_bdp(bbr, bbr_bw(bbr), bbr.cfg.probe_rtt_cwnd_gain))
}

/// `bbr_save_cwnd`: the last good cwnd, to restore after recovery or PROBE_RTT.
pub fn bbr_save_cwnd(bbr: &mut Bbr3, tp: &CcView) {
    if bbr.prev_ca_state < CaState::Recovery && bbr.mode != Mode::ProbeRtt {
        bbr.prior_cwnd = tp.snd_cwnd;
    } else {
        bbr.prior_cwnd = bbr.prior_cwnd.max(tp.snd_cwnd);
    }
}

/// `bbr_set_cwnd`: grow toward the target by what was acked (slow start while below it
/// or before cwnd is 2 x init_cwnd), snap down to it once the pipe is full; then the
/// global clamp and the PROBE_RTT cap. Sets `try_fast_path` when cwnd is at target.
pub fn bbr_set_cwnd(bbr: &mut Bbr3, tp: &mut CcView, acked: u32, bw: u32, gain: u32) {
    let mut cwnd = tp.snd_cwnd;
    if acked != 0 {
        let mut target_cwnd = bbr_bdp(bbr, bw, gain);
        // Room for data and ACK aggregation seen in the ACK stream.
        target_cwnd += bbr_ack_aggregation_cwnd(bbr);
        target_cwnd = bbr_quantization_budget(bbr, tp, target_cwnd);

        bbr.try_fast_path = false;
        if bbr.full_bw_reached {
            // Only cut cwnd once we have filled the pipe.
            cwnd += acked;
            if cwnd >= target_cwnd {
                cwnd = target_cwnd;
                bbr.try_fast_path = true;
            }
        } else if cwnd < target_cwnd || cwnd < 2 * bbr.init_cwnd {
            cwnd += acked;
        } else {
            bbr.try_fast_path = true;
        }
        cwnd = cwnd.max(bbr.cfg.cwnd_min_target);
    }
    // done:
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp); // global cap
    if bbr.mode == Mode::ProbeRtt {
        // Drain the queue, refresh min_rtt.
        tp.snd_cwnd = tp.snd_cwnd.min(bbr_probe_rtt_cwnd(bbr));
    }
}

/// `bbr_target_inflight`: the BDP (with budget), unless congestion cut cwnd below it.
pub fn bbr_target_inflight(bbr: &Bbr3, tp: &CcView) -> u32 {
    let bdp = bbr_inflight(bbr, tp, bbr_bw(bbr), BBR_UNIT);
    bdp.min(tp.snd_cwnd)
}

/// `bbr_inflight_with_headroom`: inflight_hi less `inflight_headroom` (>= 1 packet),
/// at least cwnd_min_target: leave room for other flows after a lossy probe.
pub fn bbr_inflight_with_headroom(bbr: &Bbr3) -> u32 {
    if bbr.inflight_hi == UNSET {
        return UNSET;
    }
    let headroom = (scale(bbr.inflight_hi, bbr.cfg.inflight_headroom) as u32).max(1);
    // max_t(s32, inflight_hi - headroom, cwnd_min_target)
    let v = i64::from(bbr.inflight_hi) - i64::from(headroom);
    v.max(i64::from(bbr.cfg.cwnd_min_target)) as u32
}

/// `bbr_bound_cwnd_for_inflight_model`: cap cwnd by the model for this phase.
pub fn bbr_bound_cwnd_for_inflight_model(bbr: &Bbr3, tp: &mut CcView) {
    if !bbr.initialized {
        return;
    }
    let mut cap = UNSET;
    if bbr.mode == Mode::ProbeBw && bbr.cycle_idx != Phase::Cruise {
        // Probe to see if more packets fit in the path.
        cap = bbr.inflight_hi;
    } else if bbr.mode == Mode::ProbeRtt
        || (bbr.mode == Mode::ProbeBw && bbr.cycle_idx == Phase::Cruise)
    {
        cap = bbr_inflight_with_headroom(bbr);
    }
    // Adapt to any loss/ECN since our last bw probe.
    cap = cap.min(bbr.inflight_lo);
    cap = cap.max(bbr.cfg.cwnd_min_target);
    tp.snd_cwnd = tp.snd_cwnd.min(cap);
}

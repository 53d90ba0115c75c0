//! The congestion window: tcp_bbr.c `bbr_bdp`, `bbr_quantization_budget`,
//! `bbr_inflight`, `bbr_packets_in_net_at_edt`, `bbr_ack_aggregation_cwnd`,
//! `bbr_set_cwnd`, `bbr_save_cwnd`.
//!
//! target = ceil(bw * min_rtt * gain) + extra_acked (capped at 100 ms of bw) +
//! 3 * tso_segs_goal, rounded up to even, + 2 in the 1.25 phase. Once the pipe is full
//! cwnd slow-starts toward the target (cwnd + acked) and snaps down to it; before, it
//! only grows. At least 4 packets; 4 at most in PROBE_RTT. Recovery is decided first
//! (module `recovery`, through the variant hook).
//!
//! Deviations: `bbr_packets_in_net_at_edt` reads the EDT the sender's internal pacing
//! keeps (`tp.tcp_wstamp_ns`; there is no fq queue) and measures now at the
//! microsecond of `tp.now_us` instead of the nanosecond `tcp_clock_cache`, which can
//! lengthen the interval by under 1 us (below 1/100 packet under 10 Gbit/s).
//! Ours: the target is computed before the recovery decision (it has no side effects
//! and reads nothing that decision changes) and kept in `bbr.target_cwnd` for `info()`
//! and the variants.

use super::ack_aggregation::bbr_extra_acked;
use super::bw::bbr_bw;
use super::pacing::bbr_tso_segs_goal;
use super::variant::BbrVariant;
use super::{Bbr, BbrMode, BBR_CWND_MIN_TARGET, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT};
use crate::ops::{CaState, CcView, RateSample, TCP_INIT_CWND};

/// `bbr_extra_acked_max_us` = 100 ms: the aggregation allowance is at most 100 ms of bw.
pub const BBR_EXTRA_ACKED_MAX_US: u64 = 100 * 1000;

/// `bbr_bdp`: ceil(bw * min_rtt * gain) in packets; TCP_INIT_CWND before any RTT sample.
pub fn bbr_bdp(bbr: &Bbr, bw: u32, gain: u32) -> u32 {
    if bbr.min_rtt_us == u32::MAX {
        return TCP_INIT_CWND; // no valid RTT sample yet: be safe
    }
    let w = u64::from(bw) * u64::from(bbr.min_rtt_us);
    // Apply the gain, remove BW_SCALE, round up to avoid a negative feedback loop
    // (written as the kernel writes it).
    #[allow(clippy::manual_div_ceil)]
    let bdp = ((((w * u64::from(gain)) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT) as u32;
    bdp
}

/// `bbr_quantization_budget`: room for full-sized send quanta at both ends, an even
/// cwnd (fewer delayed ACKs), and +2 in the probing phase so small BDPs still probe.
pub fn bbr_quantization_budget(bbr: &Bbr, tp: &CcView, cwnd: u32) -> u32 {
    let mut cwnd = cwnd + 3 * bbr_tso_segs_goal(tp);
    cwnd = (cwnd + 1) & !1u32;
    // v4.18 383d470936c0 / v5.4 6b3656a60f20 (`KernelRelease::probe_quanta`).
    if bbr.cfg.kernel.probe_quanta() && bbr.mode == BbrMode::ProbeBw && bbr.cycle_idx == 0 {
        cwnd += 2;
    }
    cwnd
}

/// `bbr_inflight`: the inflight target for `bw` and `gain`.
pub fn bbr_inflight(bbr: &Bbr, tp: &CcView, bw: u32, gain: u32) -> u32 {
    let inflight = bbr_bdp(bbr, bw, gain);
    bbr_quantization_budget(bbr, tp, inflight)
}

/// `bbr_packets_in_net_at_edt`: packets in the network when the next packet departs at
/// its earliest departure time (`tp.tcp_wstamp_ns`, kept by the sender's pacing):
/// inflight (+ the next quantum while raising inflight) less what the path delivers
/// at `bw` between now and then.
pub fn bbr_packets_in_net_at_edt(bbr: &Bbr, tp: &CcView, inflight_now: u32) -> u32 {
    // Before v4.20's departure-time pacing the checks read plain inflight.
    if !bbr.cfg.kernel.departure_time_pacing() {
        return inflight_now;
    }
    // tcp_clock_cache: our clock is `tcp_mstamp` (us), so now is taken at us resolution.
    let now_ns = tp.now_us * 1000;
    let edt_ns = tp.tcp_wstamp_ns.max(now_ns);
    let interval_us = (edt_ns - now_ns) / 1000;
    let interval_delivered = ((u64::from(bbr_bw(bbr)) * interval_us) >> BW_SCALE) as u32;
    let mut inflight_at_edt = inflight_now;
    if bbr.pacing_gain > BBR_UNIT {
        inflight_at_edt += bbr_tso_segs_goal(tp); // include the EDT skb
    }
    inflight_at_edt.saturating_sub(interval_delivered)
}

/// `bbr_ack_aggregation_cwnd`: the cwnd allowance for ACK aggregation, once the pipe
/// is full: extra_acked * gain, at most 100 ms worth of bw.
pub fn bbr_ack_aggregation_cwnd(bbr: &Bbr) -> u32 {
    if bbr.cfg.extra_acked_gain == 0 || !bbr.cfg.kernel.extra_acked() || !bbr.full_bw_reached {
        return 0;
    }
    let max_aggr_cwnd = (u64::from(bbr_bw(bbr)) * BBR_EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
    let aggr_cwnd = (bbr.cfg.extra_acked_gain * u32::from(bbr_extra_acked(bbr))) >> BBR_SCALE;
    aggr_cwnd.min(max_aggr_cwnd)
}

/// The target cwnd of `bbr_set_cwnd`: bdp + aggregation allowance + quantization.
pub fn bbr_target_cwnd(bbr: &Bbr, tp: &CcView, bw: u32, gain: u32) -> u32 {
    let target = bbr_bdp(bbr, bw, gain) + bbr_ack_aggregation_cwnd(bbr);
    bbr_quantization_budget(bbr, tp, target)
}

/// `bbr_save_cwnd`: remember the last good cwnd, to restore after recovery or
/// PROBE_RTT. If either has already cut cwnd, keep the larger of the saved and current.
pub fn bbr_save_cwnd(bbr: &mut Bbr, tp: &CcView) {
    if bbr.prev_ca_state < CaState::Recovery && bbr.mode != BbrMode::ProbeRtt {
        bbr.prior_cwnd = tp.snd_cwnd;
    } else {
        bbr.prior_cwnd = bbr.prior_cwnd.max(tp.snd_cwnd);
    }
}

/// `bbr_set_cwnd`: slow-start toward the target (if the bw estimate grows or loss drew
/// cwnd below it), or snap down to it once the pipe is full.
pub fn bbr_set_cwnd<V: BbrVariant + ?Sized>(
    bbr: &mut Bbr,
    variant: &mut V,
    tp: &mut CcView,
    rs: &RateSample,
    acked: u32,
    bw: u32,
    gain: u32,
) {
    let mut cwnd = tp.snd_cwnd;
    if acked == 0 && !bbr.cfg.kernel.probe_rtt_v419() {
        return; // before v4.19 ("apply PROBE_RTT cwnd cap even if acked==0"): no caps
    }
    if acked != 0 {
        // (No packet fully ACKed: just apply the caps below.)
        bbr.target_cwnd = bbr_target_cwnd(bbr, tp, bw, gain);
        let decision = variant.set_cwnd_to_recover_or_restore(bbr, tp, rs, acked);
        cwnd = decision.cwnd;
        if bbr.restore_cwnd {
            // Before v4.19: PROBE_RTT's exit restores cwnd here, on the next ACK
            // (the kernel's `restore_cwnd` branch; max commutes with conservation's).
            cwnd = cwnd.max(bbr.prior_cwnd);
            bbr.restore_cwnd = false;
        }
        if !decision.conserving {
            let target_cwnd = bbr.target_cwnd;
            if bbr.full_bw_reached {
                // Only cut cwnd once we have filled the pipe.
                cwnd = (cwnd + acked).min(target_cwnd);
            } else if cwnd < target_cwnd || tp.delivered < u64::from(TCP_INIT_CWND) {
                cwnd += acked;
            }
            cwnd = cwnd.max(BBR_CWND_MIN_TARGET);
        }
    }
    // done:
    let cwnd = variant.cap_cwnd(bbr, tp, cwnd);
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp); // global cap
    if bbr.mode == BbrMode::ProbeRtt {
        // Drain the queue, refresh min_rtt.
        tp.snd_cwnd = tp.snd_cwnd.min(BBR_CWND_MIN_TARGET);
    }
}

//! min_rtt and PROBE_RTT of v3 tcp_bbr.c: `bbr_update_min_rtt`,
//! `bbr_check_probe_rtt_done`, `bbr_exit_probe_rtt`.
//!
//! Two filters: `probe_rtt_min_us` over `probe_rtt_win_ms` (5 s) and `min_rtt_us` over
//! `min_rtt_win_sec` (10 s). When the 5 s one expires without a lower sample (and not
//! restarting from idle) the flow enters PROBE_RTT: cwnd <= max(4, 0.5 x BDP) (v1: 4),
//! kept for `probe_rtt_mode_ms` (200 ms) and one round after inflight got there; then
//! cwnd is restored to the saved value and, if the pipe was full, PROBE_BW resumes in
//! CRUISE with a fresh probe wait (else STARTUP). The lower bounds are lifted.
//!
//! Deviations: none (jiffies at the simulated CONFIG_HZ, `CcView::hz`).

use super::cwnd::{bbr_probe_rtt_cwnd, bbr_save_cwnd};
use super::lower_bounds::bbr_reset_lower_bounds;
use super::probe_bw::{bbr_start_bw_probe_cruise, bbr_start_bw_probe_down};
use super::{after32, AckPhase, Bbr3, Mode, Version};
use crate::helpers::tcp_packets_in_flight;
use crate::ops::{msecs_to_jiffies, CcView, RateSample};

/// `bbr_update_min_rtt`: the two RTT filters, and entering / running PROBE_RTT.
pub fn bbr_update_min_rtt(bbr: &mut Bbr3, tp: &mut CcView, rs: &RateSample) {
    let now = tp.jiffies32();
    // Track min RTT in probe_rtt_win_ms to time the next PROBE_RTT.
    let expire = bbr
        .probe_rtt_min_stamp
        .wrapping_add(msecs_to_jiffies(bbr.cfg.probe_rtt_win_ms, tp.hz));
    let probe_rtt_expired = after32(now, expire);
    // v3 refreshes on a strictly lower sample, v2 also on an equal one.
    let lower = match bbr.cfg.version {
        Version::V2 => rs.rtt_us <= i64::from(bbr.probe_rtt_min_us),
        Version::V3 => rs.rtt_us < i64::from(bbr.probe_rtt_min_us),
    };
    if rs.rtt_us >= 0 && (lower || (probe_rtt_expired && !rs.is_ack_delayed)) {
        bbr.probe_rtt_min_us = rs.rtt_us.min(i64::from(u32::MAX)) as u32;
        bbr.probe_rtt_min_stamp = now;
    }
    // Track min RTT over the min_rtt_win_sec window.
    let expire = bbr
        .min_rtt_stamp
        .wrapping_add(bbr.cfg.min_rtt_win_sec.saturating_mul(tp.hz));
    let min_rtt_expired = after32(now, expire);
    if bbr.probe_rtt_min_us <= bbr.min_rtt_us || min_rtt_expired {
        bbr.min_rtt_us = bbr.probe_rtt_min_us;
        bbr.min_rtt_stamp = bbr.probe_rtt_min_stamp;
    }

    if bbr.cfg.probe_rtt_mode_ms > 0
        && probe_rtt_expired
        && !bbr.idle_restart
        && bbr.mode != Mode::ProbeRtt
    {
        bbr.mode = Mode::ProbeRtt; // dip, drain queue
        bbr_save_cwnd(bbr, tp); // to restore it
        bbr.probe_rtt_done_stamp = 0;
        bbr.ack_phase = AckPhase::ProbeStopping;
        bbr.next_rtt_delivered = tp.delivered;
    }

    if bbr.mode == Mode::ProbeRtt {
        // Ignore low-rate samples during this mode.
        let v = tp.delivered + u64::from(tcp_packets_in_flight(tp));
        tp.app_limited = if v == 0 { 1 } else { v };
        // Keep the low inflight for max(probe_rtt_mode_ms, 1 round).
        if bbr.probe_rtt_done_stamp == 0 && tcp_packets_in_flight(tp) <= bbr_probe_rtt_cwnd(bbr) {
            bbr.probe_rtt_done_stamp =
                now.wrapping_add(msecs_to_jiffies(bbr.cfg.probe_rtt_mode_ms, tp.hz));
            bbr.probe_rtt_round_done = false;
            bbr.next_rtt_delivered = tp.delivered;
        } else if bbr.probe_rtt_done_stamp != 0 {
            if bbr.round_start {
                bbr.probe_rtt_round_done = true;
            }
            if bbr.probe_rtt_round_done {
                bbr_check_probe_rtt_done(bbr, tp);
            }
        }
    }
    // Restart after idle ends only once a new S/ACK for data is processed.
    if rs.delivered > 0 {
        bbr.idle_restart = false;
    }
}

/// `bbr_check_probe_rtt_done`: time is up: schedule the next PROBE_RTT, restore cwnd,
/// leave.
pub fn bbr_check_probe_rtt_done(bbr: &mut Bbr3, tp: &mut CcView) {
    let now = tp.jiffies32();
    if !(bbr.probe_rtt_done_stamp != 0 && after32(now, bbr.probe_rtt_done_stamp)) {
        return;
    }
    bbr.probe_rtt_min_stamp = now; // schedule the next PROBE_RTT
    tp.snd_cwnd = tp.snd_cwnd.max(bbr.prior_cwnd);
    bbr_exit_probe_rtt(bbr, tp);
}

/// `bbr_exit_probe_rtt`: back to PROBE_BW (CRUISE, with a new probe wait) if the pipe
/// was full, else STARTUP.
pub fn bbr_exit_probe_rtt(bbr: &mut Bbr3, tp: &CcView) {
    bbr_reset_lower_bounds(bbr);
    if bbr.full_bw_reached {
        bbr.mode = Mode::ProbeBw;
        // Raising inflight after PROBE_RTT may cause loss: restart the PROBE_BW clock
        // and schedule the next probe at a friendly, randomised time...
        bbr_start_bw_probe_down(bbr, tp);
        // ...and since inflight is below the BDP now, cruise.
        bbr_start_bw_probe_cruise(bbr);
    } else {
        bbr.mode = Mode::Startup;
    }
}

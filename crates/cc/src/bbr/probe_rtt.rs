//! min_rtt and PROBE_RTT: tcp_bbr.c `bbr_update_min_rtt`, `bbr_check_probe_rtt_done`.
//!
//! min_rtt is the minimum RTT sample over `min_rtt_win_sec` (10 s); a sample strictly
//! below it refreshes it (an equal one does not, since Linux 5.10). When the window expires without one (and not restarting from
//! idle), BBR saves cwnd and enters PROBE_RTT: cwnd is capped at 4 packets (in
//! `bbr_set_cwnd`), and once inflight is down to 4 a 200 ms timer starts and a round
//! starts. After both the timer and that round have elapsed, min_rtt_stamp is reset
//! (the expired estimate, or the new lower sample, is good for another window), cwnd is
//! restored to max(cwnd, prior_cwnd) and BBR returns to PROBE_BW (or STARTUP if the
//! pipe was never filled). While in PROBE_RTT the delivery-rate samples are marked
//! app-limited so the low rate does not pull the bw estimate down.
//!
//! Deviations: none. (`tp.app_limited` is set here as the kernel sets
//! `tp->app_limited`; the sender reads it back after `cong_control`.)

use super::cwnd::bbr_save_cwnd;
use super::startup::bbr_reset_mode;
use super::{after32, bbr_set_mode, Bbr, BbrMode, BBR_CWND_MIN_TARGET};
use crate::helpers::tcp_packets_in_flight;
use crate::ops::{msecs_to_jiffies, CcView, RateSample};

/// `bbr_check_probe_rtt_done`: leave PROBE_RTT once its time and round are done.
pub fn bbr_check_probe_rtt_done(bbr: &mut Bbr, tp: &mut CcView) {
    if !(bbr.probe_rtt_done_stamp != 0 && after32(tp.jiffies32(), bbr.probe_rtt_done_stamp)) {
        return;
    }
    bbr.min_rtt_stamp = tp.jiffies32(); // wait a while until the next PROBE_RTT
    if bbr.cfg.kernel.probe_rtt_v419() {
        tp.snd_cwnd = tp.snd_cwnd.max(bbr.prior_cwnd);
    } else {
        bbr.restore_cwnd = true; // snap to prior_cwnd on the next ACK (before v4.19)
    }
    bbr_reset_mode(bbr, tp);
}

/// `bbr_update_min_rtt`.
pub fn bbr_update_min_rtt(bbr: &mut Bbr, tp: &mut CcView, rs: &RateSample) {
    let now = tp.jiffies32();
    let win = bbr.cfg.min_rtt_win_sec.saturating_mul(tp.hz);
    let filter_expired = after32(now, bbr.min_rtt_stamp.wrapping_add(win));
    // Strictly lower: since upstream 1b9e2a8c99a5 (v5.10, "tcp: only postpone PROBE_RTT if
    // RTT is < current min_rtt estimate") a sample equal to min_rtt no longer refreshes the
    // stamp (Linux 4.9 to 5.9 had `<=`).
    let k = bbr.cfg.kernel;
    let lower = if k.min_rtt_strictly_lower() {
        rs.rtt_us < i64::from(bbr.min_rtt_us)
    } else {
        rs.rtt_us <= i64::from(bbr.min_rtt_us)
    };
    // v4.16 "avoid min RTT bloat by skipping RTT from delayed-ACK in BBR".
    let may_refresh = filter_expired && !(k.skips_delayed_ack_rtt() && rs.is_ack_delayed);
    if rs.rtt_us >= 0 && (lower || may_refresh) {
        bbr.min_rtt_us = rs.rtt_us.min(i64::from(u32::MAX)) as u32;
        bbr.min_rtt_stamp = now;
    }

    if bbr.cfg.probe_rtt_mode_ms > 0
        && filter_expired
        && !bbr.idle_restart
        && bbr.mode != BbrMode::ProbeRtt
    {
        bbr_set_mode(bbr, BbrMode::ProbeRtt); // dip, drain the queue
        bbr_save_cwnd(bbr, tp); // to restore it afterwards
        bbr.probe_rtt_done_stamp = 0;
    }

    if bbr.mode == BbrMode::ProbeRtt {
        // Ignore low-rate samples during this mode.
        let mark = tp.delivered + u64::from(tcp_packets_in_flight(tp));
        tp.app_limited = if mark != 0 { mark } else { 1 };
        // Hold the minimum inflight for max(probe_rtt_mode_ms, one round).
        if bbr.probe_rtt_done_stamp == 0 && tcp_packets_in_flight(tp) <= BBR_CWND_MIN_TARGET {
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
    // The restart after idle ends once a new (S)ACK for data is processed.
    // Before v4.19 ("fix to zero idle_restart only upon S/ACKed data"): on every ACK.
    if rs.delivered > 0 || !k.idle_restart_ends_on_data() {
        bbr.idle_restart = false;
    }
}

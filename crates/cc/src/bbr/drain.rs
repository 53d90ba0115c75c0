//! DRAIN: tcp_bbr.c `bbr_check_drain`.
//!
//! When STARTUP estimates the pipe is full, BBR paces at drain_gain (1/2.885) to empty
//! the queue STARTUP built, and sets ssthresh to the one-BDP inflight (for
//! observability, as the kernel does). Once the packets in the network are at most
//! `bbr_inflight(max_bw, 1.0)` the queue is estimated drained and PROBE_BW begins.
//!
//! Deviations: none (see `cwnd::bbr_packets_in_net_at_edt` for the EDT term).

use super::bw::bbr_max_bw;
use super::cwnd::{bbr_inflight, bbr_packets_in_net_at_edt};
use super::probe_bw::bbr_reset_probe_bw_mode;
use super::{bbr_set_mode, Bbr, BbrMode, BBR_UNIT};
use crate::helpers::tcp_packets_in_flight;
use crate::ops::CcView;

/// `bbr_check_drain`.
pub fn bbr_check_drain(bbr: &mut Bbr, tp: &mut CcView) {
    if bbr.mode == BbrMode::Startup && bbr.full_bw_reached {
        bbr_set_mode(bbr, BbrMode::Drain); // drain the queue we created
        tp.snd_ssthresh = bbr_inflight(bbr, tp, bbr_max_bw(bbr), BBR_UNIT);
    } // fall through: inflight may already be small
    if bbr.mode == BbrMode::Drain
        && bbr_packets_in_net_at_edt(bbr, tp, tcp_packets_in_flight(tp))
            <= bbr_inflight(bbr, tp, bbr_max_bw(bbr), BBR_UNIT)
    {
        bbr_reset_probe_bw_mode(bbr, tp); // we estimate the queue is drained
    }
}

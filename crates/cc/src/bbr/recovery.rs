//! Loss recovery: tcp_bbr.c `bbr_set_cwnd_to_recover_or_restore`.
//!
//! An ACK for P packets should release at most 2P. First the newly lost packets come
//! off cwnd. On entering Recovery, cwnd is cut to inflight + acked and the first round
//! uses packet conservation (cwnd = max(cwnd, inflight + acked): one packet out per
//! packet acked) and starts a round now; the next round ends conservation
//! (`round::bbr_update_round`) and `bbr_set_cwnd` slow-starts again. Leaving
//! Recovery or Loss restores max(cwnd, prior_cwnd) (saved by `bbr_ssthresh`).
//!
//! This is the default of `BbrVariant::set_cwnd_to_recover_or_restore`; BBR-ACD,
//! BBR-CWS and others replace or wrap it.
//!
//! Deviations: none.

use super::variant::RecoverOrRestore;
use super::Bbr;
use crate::helpers::tcp_packets_in_flight;
use crate::ops::{CaState, CcView, RateSample};

/// The first step of `bbr_set_cwnd_to_recover_or_restore`: deduct the packets this ACK
/// marked lost now (at least 1 remains); `bbr_set_cwnd` then slow-starts toward the target.
pub fn bbr_deduct_losses(cwnd: u32, rs: &RateSample) -> u32 {
    if rs.losses > 0 {
        (i64::from(cwnd) - i64::from(rs.losses)).max(1) as u32
    } else {
        cwnd
    }
}

/// On the first round of Recovery: packet conservation, and start a new round now.
pub fn bbr_start_packet_conservation(bbr: &mut Bbr, tp: &CcView) {
    bbr.packet_conservation = true;
    bbr.next_rtt_delivered = tp.delivered;
}

/// `bbr_set_cwnd_to_recover_or_restore`: returns the cwnd to use and whether packet
/// conservation decides it (then `bbr_set_cwnd` skips the target logic).
pub fn bbr_set_cwnd_to_recover_or_restore(
    bbr: &mut Bbr,
    tp: &CcView,
    rs: &RateSample,
    acked: u32,
) -> RecoverOrRestore {
    let prev_state = bbr.prev_ca_state;
    let state = tp.ca_state;
    let mut cwnd = tp.snd_cwnd;

    cwnd = bbr_deduct_losses(cwnd, rs);

    if state == CaState::Recovery && prev_state != CaState::Recovery {
        bbr_start_packet_conservation(bbr, tp);
        // Cut unused cwnd (app-limited, TSQ or TSO deferral).
        cwnd = tcp_packets_in_flight(tp) + acked;
    } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
        // Leaving loss recovery: restore the cwnd saved before it.
        cwnd = cwnd.max(bbr.prior_cwnd);
        bbr.packet_conservation = false;
    }
    bbr.prev_ca_state = state;

    if bbr.packet_conservation {
        return RecoverOrRestore {
            cwnd: cwnd.max(tcp_packets_in_flight(tp) + acked),
            conserving: true,
        };
    }
    RecoverOrRestore {
        cwnd,
        conserving: false,
    }
}

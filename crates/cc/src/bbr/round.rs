//! Packet-timed round counting: the first half of tcp_bbr.c `bbr_update_bw`.
//!
//! A round ends when a packet sent after the previous round's end is acknowledged:
//! when the ACKed packet's `prior_delivered` (the `tp->delivered` at its send time) has
//! reached `next_rtt_delivered`. Rounds clock the bandwidth filter, STARTUP's full-pipe
//! check, PROBE_RTT's one-round hold, the long-term estimator and the extra_acked window.
//!
//! Deviations: none (delivered counts are u64, so `before()` needs no wrap handling).

use super::Bbr;
use crate::ops::{CcView, RateSample};

/// Mark `round_start` and advance `rtt_cnt` if this ACK ends the round. A new round also
/// ends the first-round packet conservation of recovery. Call only for valid samples.
pub fn bbr_update_round(bbr: &mut Bbr, tp: &CcView, rs: &RateSample) {
    // !before(rs->prior_delivered, bbr->next_rtt_delivered)
    if rs.prior_delivered >= bbr.next_rtt_delivered {
        bbr.next_rtt_delivered = tp.delivered;
        bbr.rtt_cnt = bbr.rtt_cnt.wrapping_add(1);
        bbr.round_start = true;
        bbr.packet_conservation = false;
    }
}

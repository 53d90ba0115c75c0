//! Bandwidth: the round counter and the max filter of v3 tcp_bbr.c (`bbr_max_bw`,
//! `bbr_bw`, `bbr_update_round_start`, `bbr_calculate_bw_sample`,
//! `bbr_take_max_bw_sample`, `bbr_advance_max_bw_filter`).
//!
//! BBRv3's max filter is not v1's 10-round windowed max: it keeps two slots, `bw_hi[1]`
//! taking this cycle's samples and `bw_hi[0]` the previous cycle's, and flips them once
//! per PROBE_BW cycle (when the feedback of a probe has arrived), so the estimate is the
//! max over the last 1-2 bandwidth probes. The bw used for pacing is that max bounded
//! by the short-term `bw_lo`.
//!
//! Deviations: none.

use super::{Bbr3, Ctx, BW_UNIT};
use crate::ops::{CcView, RateSample};

/// `bbr_max_bw`: the windowed max recent bw sample (packets/us << BW_SCALE).
pub fn bbr_max_bw(bbr: &Bbr3) -> u32 {
    bbr.bw_hi[0].max(bbr.bw_hi[1])
}

/// `bbr_bw`: the estimated bandwidth, max_bw bounded by bw_lo (and in v2 by its
/// separate `bw_hi`, which v3 does not have: `v2_bw_hi` stays unset there).
pub fn bbr_bw(bbr: &Bbr3) -> u32 {
    bbr_max_bw(bbr).min(bbr.bw_lo).min(bbr.v2_bw_hi)
}

/// `bbr_update_round_start`: a packet-timed round ends when a packet sent after the
/// previous round's end is acked. Returns the packets delivered in the round.
pub fn bbr_update_round_start(bbr: &mut Bbr3, tp: &CcView, rs: &RateSample) -> u64 {
    bbr.round_start = false;
    let mut round_delivered = 0;
    if rs.interval_us > 0 && rs.prior_delivered >= bbr.next_rtt_delivered {
        round_delivered = tp.delivered - bbr.next_rtt_delivered;
        bbr.next_rtt_delivered = tp.delivered;
        bbr.round_start = true;
    }
    round_delivered
}

/// `bbr_calculate_bw_sample`: delivered / interval, rounded up so low rates can grow.
pub fn bbr_calculate_bw_sample(rs: &RateSample, ctx: &mut Ctx) {
    let mut bw = 0u64;
    if rs.interval_us > 0 {
        if rs.delivered < 0 {
            return; // the kernel's WARN_ONCE
        }
        bw = (rs.delivered as u64 * BW_UNIT).div_ceil(rs.interval_us as u64);
    }
    ctx.sample_bw = bw.min(u64::from(u32::MAX)) as u32;
}

/// `bbr_take_max_bw_sample`: into the current slot of the max filter.
pub fn bbr_take_max_bw_sample(bbr: &mut Bbr3, bw: u32) {
    bbr.bw_hi[1] = bbr.bw_hi[1].max(bw);
}

/// `bbr_advance_max_bw_filter`: keep the max of the last 1-2 cycles; flip once per
/// PROBE_BW cycle, unless this cycle had no sample (then remember the old window).
pub fn bbr_advance_max_bw_filter(bbr: &mut Bbr3) {
    if bbr.bw_hi[1] == 0 {
        return;
    }
    bbr.bw_hi[0] = bbr.bw_hi[1];
    bbr.bw_hi[1] = 0;
}

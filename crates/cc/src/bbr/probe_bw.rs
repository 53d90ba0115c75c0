//! PROBE_BW gain cycling: tcp_bbr.c `bbr_pacing_gain[]`, `bbr_is_next_cycle_phase`,
//! `bbr_advance_cycle_phase`, `bbr_update_cycle_phase`, `bbr_reset_probe_bw_mode`.
//!
//! Eight phases of pacing gain: 1.25 (probe for more bandwidth), 0.75 (drain what the
//! probe queued, or yield to other flows), then six of 1.0 (cruise). A phase lasts one
//! min_rtt, measured on the delivered clock. The 1.25 phase persists past min_rtt until
//! inflight reaches 1.25 BDP (unless packets are lost: the buffer may not hold that
//! much); the 0.75 phase may end early once inflight is down to one BDP. Entering
//! PROBE_BW starts at a random phase other than 0.75 (`cycle_idx = 7 - rand(7)`, then
//! advanced), so competing flows do not probe in lockstep.
//!
//! Deviations: the random draw comes from the seeded `rng` (see `bbr` module doc).

use super::bw::bbr_max_bw;
use super::cwnd::{bbr_inflight, bbr_packets_in_net_at_edt};
use super::variant::BbrVariant;
use super::{bbr_set_mode, Bbr, BbrMode, BBR_UNIT};
use crate::ops::{CcView, RateSample};

/// `CYCLE_LEN` = 8: phases in a pacing-gain cycle.
pub const CYCLE_LEN: u32 = 8;
/// `bbr_pacing_gain[]`: probe at 1.25, drain at 0.75, cruise at 1.0.
pub const BBR_PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand` = 7: the start phase is drawn over 7 phases (never the 0.75 one).
pub const BBR_CYCLE_RAND: u32 = 7;

/// `bbr_is_next_cycle_phase`: end the phase if it has lasted min_rtt and/or hit its
/// inflight target. Default of `BbrVariant::is_next_cycle_phase`.
pub fn bbr_is_next_cycle_phase(bbr: &Bbr, tp: &CcView, rs: &RateSample) -> bool {
    let elapsed_us = tp.delivered_mstamp_us.saturating_sub(bbr.cycle_mstamp);
    let is_full_length = elapsed_us > u64::from(bbr.min_rtt_us);

    // Gain 1.0 paces at the estimate: just use the clock.
    if bbr.pacing_gain == BBR_UNIT {
        return is_full_length;
    }

    let inflight = bbr_packets_in_net_at_edt(bbr, tp, rs.prior_in_flight);
    let bw = bbr_max_bw(bbr);

    // Gain > 1 raises inflight to pacing_gain * BDP; that may take more than min_rtt on
    // a short path. Do not persist if packets are lost: a small buffer may not hold it.
    if bbr.pacing_gain > BBR_UNIT {
        return is_full_length
            && (rs.losses > 0 || inflight >= bbr_inflight(bbr, tp, bw, bbr.pacing_gain));
    }

    // Gain < 1 drains the probe's queue; once inflight is one BDP, more would underuse.
    is_full_length || inflight <= bbr_inflight(bbr, tp, bw, BBR_UNIT)
}

/// `bbr_advance_cycle_phase`.
pub fn bbr_advance_cycle_phase(bbr: &mut Bbr, tp: &CcView) {
    bbr.cycle_idx = (bbr.cycle_idx + 1) & (CYCLE_LEN - 1);
    bbr.cycle_mstamp = tp.delivered_mstamp_us;
}

/// `bbr_update_cycle_phase`: advance the gain cycle when the phase is over (the
/// variant decides when; the kernel's rule by default).
pub fn bbr_update_cycle_phase<V: BbrVariant + ?Sized>(
    bbr: &mut Bbr,
    variant: &mut V,
    tp: &CcView,
    rs: &RateSample,
) {
    if bbr.mode == BbrMode::ProbeBw && variant.is_next_cycle_phase(bbr, tp, rs) {
        bbr_advance_cycle_phase(bbr, tp);
    }
}

/// `bbr_reset_probe_bw_mode`: enter PROBE_BW at a random phase (not 0.75).
pub fn bbr_reset_probe_bw_mode(bbr: &mut Bbr, tp: &CcView) {
    bbr_set_mode(bbr, BbrMode::ProbeBw);
    bbr.cycle_idx = CYCLE_LEN - 1 - bbr.rng.u32_below(BBR_CYCLE_RAND);
    bbr_advance_cycle_phase(bbr, tp); // flip to the next phase of the cycle
}

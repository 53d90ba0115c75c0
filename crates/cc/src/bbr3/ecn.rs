//! ECN in v3 tcp_bbr.c: `bbr_can_use_ecn`, `bbr_update_ecn_alpha`,
//! `bbr_check_ecn_too_high_in_startup`, `bbr_ecn_cut`.
//!
//! Once per round an ECN-eligible flow updates `ecn_alpha`, an EWMA (gain 1/16) of the
//! round's CE ratio delivered_ce / delivered. A flow is eligible when ECN is usable
//! (negotiated, on a shallow-threshold path) and its min_rtt is at most
//! `ecn_max_rtt_us` (5 ms). In STARTUP, 2 consecutive rounds with CE ratio >= 50 % end
//! the startup. Without CE marks alpha decays toward 0 and nothing else happens; a flow
//! that is not eligible never touches it.
//!
//! Deviations: see the module doc of `bbr3` (PLB, `ecn_low`).

use super::startup::bbr_handle_queue_too_high_in_startup;
use super::{Bbr3, BBR_SCALE, BBR_UNIT};
use crate::ops::CcView;

/// `bbr_can_use_ecn`: ECN negotiated (`TCP_ECN_OK`) on a shallow-threshold ECN path
/// (`TCP_ECN_LOW`, our parameter `ecn_low`).
pub fn bbr_can_use_ecn(bbr: &Bbr3, tp: &CcView) -> bool {
    tp.ecn_ok && bbr.cfg.ecn_low
}

/// `bbr_update_ecn_alpha`: update alpha from the CE ratio since the last update; returns
/// that ratio (1/256 units), or None (the kernel's -1) when not available.
pub fn bbr_update_ecn_alpha(bbr: &mut Bbr3, tp: &CcView) -> Option<u32> {
    // Should this connection use the ECN sender logic?
    if !bbr.ecn_eligible
        && bbr_can_use_ecn(bbr, tp)
        && bbr.cfg.ecn_factor != 0
        && (bbr.min_rtt_us <= bbr.cfg.ecn_max_rtt_us || bbr.cfg.ecn_max_rtt_us == 0)
    {
        bbr.ecn_eligible = true;
    }
    // Alpha is skipped unless eligible (PLB, the other user, is off: module doc).
    if !bbr.ecn_eligible {
        return None;
    }
    let (delivered, delivered_ce) = delivered_since_alpha(bbr, tp)?;
    Some(update_alpha(bbr, tp, delivered, delivered_ce))
}

/// Packets delivered, and delivered CE-marked, since alpha was last updated; None when
/// nothing was delivered or the counters went backwards (v2's and v3's common guard).
pub(super) fn delivered_since_alpha(bbr: &Bbr3, tp: &CcView) -> Option<(u64, u64)> {
    let delivered = tp.delivered.wrapping_sub(bbr.alpha_last_delivered) as i64;
    let delivered_ce = tp.delivered_ce.wrapping_sub(bbr.alpha_last_delivered_ce) as i64;
    (delivered > 0 && delivered_ce >= 0).then_some((delivered as u64, delivered_ce as u64))
}

/// The alpha EWMA step that v2 and v3 share: alpha := (1 - g) alpha + g ce_ratio, the
/// counters' new base, then the STARTUP CE check. Returns the CE ratio (1/256 units).
pub(super) fn update_alpha(bbr: &mut Bbr3, tp: &CcView, delivered: u64, delivered_ce: u64) -> u32 {
    let ce_ratio = (delivered_ce << BBR_SCALE) / delivered;
    let gain = u64::from(bbr.cfg.ecn_alpha_gain);
    let mut alpha = ((u64::from(BBR_UNIT) - gain) * u64::from(bbr.ecn_alpha)) >> BBR_SCALE;
    alpha += (gain * ce_ratio) >> BBR_SCALE;
    bbr.ecn_alpha = alpha.min(u64::from(BBR_UNIT)) as u32;

    bbr.alpha_last_delivered = tp.delivered;
    bbr.alpha_last_delivered_ce = tp.delivered_ce;

    let ce_ratio = ce_ratio.min(u64::from(u32::MAX)) as u32;
    bbr_check_ecn_too_high_in_startup(bbr, tp, ce_ratio);
    ce_ratio
}

/// `bbr_check_ecn_too_high_in_startup`: leave STARTUP after `full_ecn_cnt` consecutive
/// rounds with CE ratio >= ecn_thresh.
pub fn bbr_check_ecn_too_high_in_startup(bbr: &mut Bbr3, tp: &CcView, ce_ratio: u32) {
    if bbr.full_bw_reached
        || !bbr.ecn_eligible
        || bbr.cfg.full_ecn_cnt == 0
        || bbr.cfg.ecn_thresh == 0
    {
        return;
    }
    if ce_ratio >= bbr.cfg.ecn_thresh {
        bbr.startup_ecn_rounds = (bbr.startup_ecn_rounds + 1).min(3); // 2-bit field
    } else {
        bbr.startup_ecn_rounds = 0;
    }
    if bbr.startup_ecn_rounds >= bbr.cfg.full_ecn_cnt {
        bbr_handle_queue_too_high_in_startup(bbr, tp);
    }
}

/// `bbr_ecn_cut`: the multiplicative ECN cut, 1 - alpha x ecn_factor (1/256 units).
pub fn bbr_ecn_cut(bbr: &Bbr3) -> u32 {
    BBR_UNIT - ((bbr.ecn_alpha * bbr.cfg.ecn_factor) >> BBR_SCALE)
}

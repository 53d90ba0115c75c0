//! Pacing rate and send quantum of v3 tcp_bbr.c: `bbr_rate_bytes_per_sec`,
//! `bbr_bw_to_pacing_rate`, `bbr_init_pacing_rate_from_rtt`, `bbr_set_pacing_rate`,
//! `bbr_tso_segs_generic`, `bbr_tso_segs_goal`.
//!
//! As v1 (`crate::bbr::pacing`), plus: the rate is at least 1 byte/s, and the TSO goal
//! adds a min_rtt-based allowance (64 KiB halved per 512 us of min_rtt) and has no
//! 127-segment cap.
//!
//! Deviations: `bbr_tso_segs_goal` only sizes the cwnd's quantization budget (see the
//! module doc of `bbr3`); `sk_pacing_shift` is the default 10, `tcp_min_tso_segs` 2.

use super::{Bbr3, Version, BBR_SCALE, BW_SCALE, BW_UNIT};
use crate::bbr::pacing::{MAX_TCP_HEADER, SK_PACING_SHIFT};
use crate::ops::CcView;

const USEC_PER_SEC: u64 = 1_000_000;
/// Nominal RTT before any sample (`USEC_PER_MSEC` in `bbr_init_pacing_rate_from_rtt`).
const BBR_DEFAULT_RTT_US: u64 = 1000;
/// `GSO_LEGACY_MAX_SIZE` (include/linux/netdevice.h) = 65536.
pub const GSO_LEGACY_MAX_SIZE: u64 = 65536;
/// `sysctl_tcp_min_tso_segs` default (net/ipv4/tcp_ipv4.c) = 2.
pub const TCP_MIN_TSO_SEGS: u32 = 2;

/// `bbr_rate_bytes_per_sec`: bw (packets/us << 24) x gain (1/256) to bytes/s, less
/// `margin` percent; at least 1.
pub fn bbr_rate_bytes_per_sec(tp: &CcView, rate: u64, gain: u32, margin: u32) -> u64 {
    let mut rate = rate.wrapping_mul(u64::from(tp.mss_cache));
    rate = rate.wrapping_mul(u64::from(gain));
    rate >>= BBR_SCALE;
    rate = rate.wrapping_mul(USEC_PER_SEC / 100 * (100 - u64::from(margin)));
    rate >>= BW_SCALE;
    rate.max(1)
}

/// `bbr_bw_bytes_per_sec`: no gain, no margin (for `bbr_get_info`).
pub fn bbr_bw_bytes_per_sec(tp: &CcView, rate: u64) -> u64 {
    bbr_rate_bytes_per_sec(tp, rate, super::BBR_UNIT, 0)
}

/// `bbr_bw_to_pacing_rate`: with the pacing margin, capped by `sk_max_pacing_rate`.
pub fn bbr_bw_to_pacing_rate(bbr: &Bbr3, tp: &CcView, bw: u32, gain: u32) -> u64 {
    bbr_rate_bytes_per_sec(tp, u64::from(bw), gain, bbr.cfg.pacing_margin_percent)
        .min(tp.max_pacing_rate)
}

/// `bbr_init_pacing_rate_from_rtt`: startup_pacing_gain x cwnd / RTT (1 ms nominal).
pub fn bbr_init_pacing_rate_from_rtt(bbr: &mut Bbr3, tp: &mut CcView) {
    let rtt_us = if tp.srtt_us != 0 {
        bbr.has_seen_rtt = true;
        u64::from(tp.srtt_us).max(1) // our srtt_us is not shifted by 3
    } else {
        BBR_DEFAULT_RTT_US
    };
    let bw = u64::from(tp.snd_cwnd) * BW_UNIT / rtt_us;
    tp.pacing_rate = bbr_bw_to_pacing_rate(
        bbr,
        tp,
        bw.min(u64::from(u32::MAX)) as u32,
        bbr.cfg.startup_pacing_gain,
    );
}

/// `bbr_set_pacing_rate`: pace at bw x gain; before the pipe is full, only upward.
pub fn bbr_set_pacing_rate(bbr: &mut Bbr3, tp: &mut CcView, bw: u32, gain: u32) {
    let rate = bbr_bw_to_pacing_rate(bbr, tp, bw, gain);
    if !bbr.has_seen_rtt && tp.srtt_us != 0 {
        bbr_init_pacing_rate_from_rtt(bbr, tp);
    }
    if bbr.full_bw_reached || rate > tp.pacing_rate {
        tp.pacing_rate = rate;
    }
}

/// `bbr_tso_segs_generic` with `gso_max_size` = GSO_LEGACY_MAX_SIZE (`bbr_tso_segs_goal`):
/// ~1 ms of data at the pacing rate plus 64 KiB / 2^(min_rtt / 512 us).
pub fn bbr_tso_segs_goal(bbr: &Bbr3, tp: &CcView) -> u32 {
    let mut bytes = tp.pacing_rate >> SK_PACING_SHIFT;
    if bbr.cfg.tso_rtt_shift != 0 {
        let r = bbr.min_rtt_us >> bbr.cfg.tso_rtt_shift;
        if r < 32 {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
    }
    bytes = bytes.min(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
    // v2: bbr_min_tso_segs (1 below 1.2 Mbit/s); v3: sysctl_tcp_min_tso_segs.
    let min_segs = match bbr.cfg.version {
        Version::V2 => super::v2::bbr_min_tso_segs(tp),
        Version::V3 => TCP_MIN_TSO_SEGS,
    };
    ((bytes / u64::from(tp.mss_cache.max(1))) as u32).max(min_segs)
}

//! Pacing rate: tcp_bbr.c `bbr_rate_bytes_per_sec`, `bbr_bw_to_pacing_rate`,
//! `bbr_init_pacing_rate_from_rtt`, `bbr_set_pacing_rate`, and the send-quantum
//! helpers `bbr_min_tso_segs`, `bbr_tso_segs_goal`.
//!
//! pacing_rate (bytes/s) = bw (packets/us << 24) * mss * gain / 256 * 1e6 * (100 -
//! margin) / 100 >> 24, computed in that order so u64 does not overflow and the
//! truncations fall where the kernel's do. Before the pipe is full the rate only rises.
//!
//! Deviations: see the module doc of `bbr` on TSO: `bbr_tso_segs_goal` keeps the
//! kernel's formula with `sk_pacing_shift` = 10 and `GSO_MAX_SIZE`, although no
//! segment is ever larger than one MSS here; it only sizes the cwnd budget.

use super::{Bbr, BBR_SCALE, BW_SCALE, BW_UNIT};
use crate::ops::CcView;

const USEC_PER_SEC: u64 = 1_000_000;
/// Nominal RTT before any sample (`USEC_PER_MSEC` in `bbr_init_pacing_rate_from_rtt`).
const BBR_DEFAULT_RTT_US: u64 = 1000;
/// `bbr_min_tso_rate` = 1.2 Mbit/s: below it, send one-segment quanta.
pub const BBR_MIN_TSO_RATE: u64 = 1_200_000;
/// `sk->sk_pacing_shift` default (net/core/sock.c): a TSO burst holds ~1 ms of data
/// (rate >> 10 is rate * 0.977 ms).
pub const SK_PACING_SHIFT: u32 = 10;
/// `GSO_MAX_SIZE` (include/linux/netdevice.h): 64 KiB.
pub const GSO_MAX_SIZE: u64 = 65536;
/// `MAX_TCP_HEADER` = L1_CACHE_ALIGN(128 + MAX_HEADER) = 320 bytes on a typical x86-64
/// distribution kernel (MAX_HEADER = 128 + 48 with tunnels configured). It only matters
/// above ~500 Mbit/s, where the GSO cap binds.
pub const MAX_TCP_HEADER: u64 = 320;

/// `bbr_rate_bytes_per_sec`: a bandwidth (packets/us << BW_SCALE) and gain (BBR_UNIT)
/// to bytes per second, including the pacing margin.
pub fn bbr_rate_bytes_per_sec(bbr: &Bbr, tp: &CcView, rate: u64, gain: u32) -> u64 {
    // The margin came with departure-time pacing (v4.20); see `kernel`.
    let margin = if bbr.cfg.kernel.departure_time_pacing() {
        u64::from(bbr.cfg.pacing_margin_percent)
    } else {
        0
    };
    let mut rate = rate.wrapping_mul(u64::from(tp.mss_cache));
    rate = rate.wrapping_mul(u64::from(gain));
    rate >>= BBR_SCALE;
    rate = rate.wrapping_mul(USEC_PER_SEC / 100 * (100 - margin));
    rate >> BW_SCALE
}

/// `bbr_bw_to_pacing_rate`: the pacing rate for `bw` and `gain`, capped by
/// `sk_max_pacing_rate`.
pub fn bbr_bw_to_pacing_rate(bbr: &Bbr, tp: &CcView, bw: u32, gain: u32) -> u64 {
    bbr_rate_bytes_per_sec(bbr, tp, u64::from(bw), gain).min(tp.max_pacing_rate)
}

/// `bbr_init_pacing_rate_from_rtt`: high_gain * cwnd / RTT, with a nominal 1 ms RTT
/// before any sample.
pub fn bbr_init_pacing_rate_from_rtt(bbr: &mut Bbr, tp: &mut CcView) {
    let rtt_us = if tp.srtt_us != 0 {
        bbr.has_seen_rtt = true;
        u64::from(tp.srtt_us).max(1) // our srtt_us is not shifted by 3
    } else {
        BBR_DEFAULT_RTT_US
    };
    let bw = u64::from(tp.snd_cwnd) * BW_UNIT / rtt_us;
    tp.pacing_rate = bbr_bw_to_pacing_rate(bbr, tp, bw as u32, bbr.cfg.high_gain);
}

/// `bbr_set_pacing_rate`: pace at `bw * gain`; until the pipe is full, never lower the
/// rate (STARTUP's estimate may be transiently low).
pub fn bbr_set_pacing_rate(bbr: &mut Bbr, tp: &mut CcView, bw: u32, gain: u32) {
    let rate = bbr_bw_to_pacing_rate(bbr, tp, bw, gain);
    if !bbr.has_seen_rtt && tp.srtt_us != 0 {
        bbr_init_pacing_rate_from_rtt(bbr, tp);
    }
    // v4.13 "cut pacing rate only if filled pipe"; before, whenever not in STARTUP.
    let may_cut = if bbr.cfg.kernel.cuts_pacing_only_if_full() {
        bbr.full_bw_reached
    } else {
        bbr.mode != super::BbrMode::Startup
    };
    if may_cut || rate > tp.pacing_rate {
        tp.pacing_rate = rate;
    }
}

/// `bbr_min_tso_segs`: 1 below 1.2 Mbit/s, else 2.
pub fn bbr_min_tso_segs(tp: &CcView) -> u32 {
    if tp.pacing_rate < (BBR_MIN_TSO_RATE >> 3) {
        1
    } else {
        2
    }
}

/// `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate, at least
/// `bbr_min_tso_segs`, at most 127 segments.
pub fn bbr_tso_segs_goal(tp: &CcView) -> u32 {
    let bytes = (tp.pacing_rate >> SK_PACING_SHIFT).min(GSO_MAX_SIZE - 1 - MAX_TCP_HEADER);
    let segs = ((bytes / u64::from(tp.mss_cache.max(1))) as u32).max(bbr_min_tso_segs(tp));
    segs.min(0x7F)
}

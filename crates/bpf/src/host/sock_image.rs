//! The socket image a program sees, written from the simulator's `CcView` before each
//! callback and read back after it. This is where the simulator's units become the
//! kernel's (crates/cc/src/ops.rs lists where they differ):
//!
//! - `snd_una`, `snd_nxt`, `rcv_nxt`, `high_seq` (and the `ack` argument of cong_avoid):
//!   segments -> bytes,
//!   `seq * mss_cache` truncated to u32, so they wrap like the kernel's;
//! - `srtt_us`: plain us -> us << 3 (tcp_rtt_estimator's fixed point);
//! - `lsndtime`, `snd_cwnd_stamp`: us -> tcp_jiffies32 at the loaded program's
//!   `KernelEnv::hz` (CONFIG_HZ);
//! - `tcp_min_rtt()` (rtt_min.s[0].v): us, `~0U` before the first sample as in minmax;
//! - counters (`delivered`, `lost`, ...): u64 -> u32, wrapping as the kernel's do;
//! - `ecn_flags`: TCP_ECN_OK from `ecn_ok`, TCP_ECN_DEMAND_CWR from `ecn_demand_cwr`;
//! - `icsk_ack.pending`: ICSK_ACK_TIMER from `ack_timer_pending`;
//! - `tcp_clock_cache` (ns): `now_us * 1000`, the microsecond clock (the kernel's is
//!   the nanosecond one `tcp_mstamp` is derived from).
//!
//! Read back: exactly the fields a BPF congestion control may write
//! (bpf_tcp_ca_btf_struct_access): snd_cwnd, snd_ssthresh, snd_cwnd_cnt, snd_cwnd_stamp,
//! app_limited, sk_pacing_rate, sk_pacing_status, ecn_flags' DEMAND_CWR, and
//! icsk_ack.pending's ICSK_ACK_NOW. `icsk_ca_priv` is never written from the view: it is
//! the algorithm's own state and lives in the image between callbacks.
//!
//! Deviations: `snd_cwnd_stamp` and `app_limited` are read back only when the program
//! changed them (the view keeps us and a u64 the image cannot hold).

use tcplab_cc::ops::CcView;

use crate::layout::*;

const TCP_ECN_OK: u8 = 1;
const TCP_ECN_DEMAND_CWR: u8 = 4;
const ICSK_ACK_TIMER: u8 = 2;
const ICSK_ACK_NOW: u8 = 8;
const SK_PACING_NEEDED: u32 = 1;

fn put32(img: &mut [u8], at: usize, v: u32) {
    img[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put64(img: &mut [u8], at: usize, v: u64) {
    img[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
pub fn get32(img: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([img[at], img[at + 1], img[at + 2], img[at + 3]])
}
fn get64(img: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&img[at..at + 8]);
    u64::from_le_bytes(b)
}

/// A sequence number in segments as the kernel's u32 byte sequence number.
pub fn seq_bytes(seq_segments: u64, mss: u32) -> u32 {
    seq_segments.wrapping_mul(u64::from(mss)) as u32
}

/// `jiffies` at `hz` ticks per second for a time in us (truncated to u32 as
/// tcp_jiffies32).
pub fn jiffies(us: u64, hz: u32) -> u32 {
    if hz == 1000 {
        return (us / 1000) as u32;
    }
    match us.checked_mul(u64::from(hz)) {
        Some(x) => (x / 1_000_000) as u32,
        None => (u128::from(us) * u128::from(hz) / 1_000_000) as u32,
    }
}

/// The start (us) of jiffy `j` at `hz`.
fn jiffies_to_us(j: u32, hz: u32) -> u64 {
    u64::from(j) * 1_000_000 / u64::from(hz.max(1))
}

/// Writes every modelled field of `tp` into the image (icsk_ca_priv untouched).
pub fn store(tp: &CcView, img: &mut [u8; SOCK_SIZE], hz: u32) {
    put32(
        img,
        SK_PACING_STATUS,
        if tp.pacing_needed {
            SK_PACING_NEEDED
        } else {
            0
        },
    );
    put64(img, SK_PACING_RATE, tp.pacing_rate);
    put64(img, SK_MAX_PACING_RATE, tp.max_pacing_rate);
    img[SK_PACING_SHIFT] = 10; // sk_pacing_shift's default (sock_init_data)
    img[ICSK_CA_STATE] = tp.ca_state as u8;
    img[ICSK_ACK_PENDING] = if tp.ack_timer_pending {
        ICSK_ACK_TIMER
    } else {
        0
    };
    store_cwnd(tp, img);
    put32(img, MSS_CACHE, tp.mss_cache);
    put32(img, SND_CWND_CLAMP, tp.snd_cwnd_clamp);
    put32(img, SND_CWND_STAMP, jiffies(tp.snd_cwnd_stamp_us, hz));
    put32(img, LSNDTIME, jiffies(tp.lsndtime_us, hz));
    put32(img, PRIOR_CWND, tp.prior_cwnd);
    put32(img, PRIOR_SSTHRESH, tp.prior_ssthresh);
    put32(img, PACKETS_OUT, tp.packets_out);
    put32(img, SACKED_OUT, tp.sacked_out);
    put32(img, LOST_OUT, tp.lost_out);
    put32(img, RETRANS_OUT, tp.retrans_out);
    put32(img, MAX_PACKETS_OUT, tp.max_packets_out);
    put32(img, SND_UNA, seq_bytes(tp.snd_una, tp.mss_cache));
    put32(img, SND_NXT, seq_bytes(tp.snd_nxt, tp.mss_cache));
    put32(img, DELIVERED, tp.delivered as u32);
    put32(img, DELIVERED_CE, tp.delivered_ce as u32);
    put32(img, LOST, tp.lost as u32);
    put32(img, APP_LIMITED, tp.app_limited as u32);
    put32(img, SRTT_US, tp.srtt_us.wrapping_shl(3));
    img[IS_CWND_LIMITED] = u8::from(tp.is_cwnd_limited);
    let mut ecn = 0;
    if tp.ecn_ok {
        ecn |= TCP_ECN_OK;
    }
    if tp.ecn_demand_cwr {
        ecn |= TCP_ECN_DEMAND_CWR;
    }
    img[ECN_FLAGS] = ecn;
    let min_rtt_jiffies = jiffies(tp.now_us, hz);
    for k in 0..3 {
        put32(img, RTT_MIN + 8 * k, min_rtt_jiffies);
        put32(img, RTT_MIN + 8 * k + 4, tp.min_rtt_us);
    }
    put64(img, TCP_MSTAMP, tp.now_us);
    put64(img, TCP_WSTAMP_NS, tp.tcp_wstamp_ns);
    put32(img, RCV_NXT, seq_bytes(tp.rcv_nxt, tp.mss_cache));
    put64(img, TCP_CLOCK_CACHE, tp.now_us.wrapping_mul(1000));
    put64(img, DELIVERED_MSTAMP, tp.delivered_mstamp_us);
    put32(img, HIGH_SEQ, seq_bytes(tp.high_seq, tp.mss_cache));
    put32(img, PRR_DELIVERED, tp.prr_delivered);
    put32(img, PRR_OUT, tp.prr_out);
    put32(img, REORDERING, tp.reordering);
}

/// The segment sequence number, near `near`, whose byte sequence number is `bytes`
/// (the inverse of `seq_bytes` for a value a program got from the image).
pub fn seq_segments(bytes: u32, near: u64, mss: u32) -> u64 {
    let back = seq_bytes(near, mss).wrapping_sub(bytes);
    near.saturating_sub(u64::from(back / mss.max(1)))
}

/// The three fields the kfuncs change (tcp_slow_start, tcp_cong_avoid_ai).
pub fn store_cwnd(tp: &CcView, img: &mut [u8; SOCK_SIZE]) {
    put32(img, SND_CWND, tp.snd_cwnd);
    put32(img, SND_SSTHRESH, tp.snd_ssthresh);
    put32(img, SND_CWND_CNT, tp.snd_cwnd_cnt);
}

/// Reads back what a program may have written.
pub fn load(img: &[u8; SOCK_SIZE], tp: &mut CcView, hz: u32) {
    tp.snd_cwnd = get32(img, SND_CWND);
    tp.snd_ssthresh = get32(img, SND_SSTHRESH);
    tp.snd_cwnd_cnt = get32(img, SND_CWND_CNT);
    let stamp = get32(img, SND_CWND_STAMP);
    if stamp != jiffies(tp.snd_cwnd_stamp_us, hz) {
        tp.snd_cwnd_stamp_us = jiffies_to_us(stamp, hz);
    }
    let app_limited = get32(img, APP_LIMITED);
    if app_limited != tp.app_limited as u32 {
        tp.app_limited = u64::from(app_limited);
    }
    tp.pacing_rate = get64(img, SK_PACING_RATE);
    // Changed only by bpf_setsockopt(SO_MAX_PACING_RATE).
    tp.max_pacing_rate = get64(img, SK_MAX_PACING_RATE);
    tp.pacing_needed = get32(img, SK_PACING_STATUS) == SK_PACING_NEEDED;
    tp.ecn_demand_cwr = img[ECN_FLAGS] & TCP_ECN_DEMAND_CWR != 0;
    if img[ICSK_ACK_PENDING] & ICSK_ACK_NOW != 0 {
        tp.ack_now = true;
    }
}

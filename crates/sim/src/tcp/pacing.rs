//! Pacing: the kernel's internal TCP pacing (`tcp_update_skb_after_send`,
//! `tcp_pacing_check` in net/ipv4/tcp_output.c) and, for algorithms that do not set
//! their own rate, `tcp_update_pacing_rate` (net/ipv4/tcp_input.c).

use tcplab_cc::CcView;

use crate::time::NS_PER_S;

/// `sysctl_tcp_pacing_ss_ratio`: 200 % of cwnd/srtt in slow start.
pub const TCP_PACING_SS_RATIO: u64 = 200;
/// `sysctl_tcp_pacing_ca_ratio`: 120 % in congestion avoidance.
pub const TCP_PACING_CA_RATIO: u64 = 120;

/// `tcp_update_pacing_rate`: sk_pacing_rate = ratio * mss * max(cwnd, packets_out) /
/// srtt, the ratio being 200 % while cwnd < ssthresh / 2 and 120 % after. The kernel's
/// `(USEC_PER_SEC / 100) << 3` over `srtt_us` (shifted by 3) is 10^4 over our unshifted
/// srtt. Nothing is set before the first RTT sample.
pub fn tcp_update_pacing_rate(tp: &mut CcView) {
    if tp.srtt_us == 0 {
        return;
    }
    let ratio = if tp.snd_cwnd < tp.snd_ssthresh / 2 {
        TCP_PACING_SS_RATIO
    } else {
        TCP_PACING_CA_RATIO
    };
    let segs = u64::from(tp.snd_cwnd.max(tp.packets_out));
    // Once per ACK: in 64 bits when the product fits (always, for a 1448-byte MSS), as a
    // 128-bit division is a library call. The same quotient either way.
    let rate = match (u64::from(tp.mss_cache) * 10_000 * ratio).checked_mul(segs) {
        Some(bytes) => bytes / u64::from(tp.srtt_us),
        None => {
            let r = u128::from(tp.mss_cache) * 10_000 * u128::from(ratio) * u128::from(segs)
                / u128::from(tp.srtt_us);
            r.min(u64::MAX as u128) as u64
        }
    };
    tp.pacing_rate = rate.min(tp.max_pacing_rate);
}

/// `tcp_update_skb_after_send`: advance the earliest departure time by the segment's
/// payload at the pacing rate, less up to half of it as credit for time the sender sat
/// idle (`prior_wstamp`). The first 10 segments are not paced (`data_segs_out >= 10`).
pub fn advance_wstamp(
    wstamp_ns: &mut u64,
    now_ns: u64,
    payload: u32,
    tp: &CcView,
    data_segs_out: u64,
) {
    let prior = *wstamp_ns;
    *wstamp_ns = (*wstamp_ns).max(now_ns);
    let rate = tp.pacing_rate;
    if tp.pacing_needed && rate != 0 && rate != u64::MAX && data_segs_out >= 10 {
        // u32::MAX * 10^9 < 2^64: 64 bits hold the product, no 128-bit division.
        let len_ns = u64::from(payload) * NS_PER_S / rate;
        let credit = *wstamp_ns - prior;
        *wstamp_ns += len_ns - credit.min(len_ns / 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacing_rate_is_120_percent_of_cwnd_over_srtt_in_congestion_avoidance() {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = 20;
        tp.snd_ssthresh = 20;
        tp.srtt_us = 40_000;
        tcp_update_pacing_rate(&mut tp);
        // 1448 B * 20 / 0.04 s = 724_000 B/s; * 1.2 = 868_800 B/s.
        assert_eq!(tp.pacing_rate, 868_800);
        tp.snd_ssthresh = 100; // 20 < 50: slow start ratio 200 %
        tcp_update_pacing_rate(&mut tp);
        assert_eq!(tp.pacing_rate, 1_448_000);
    }

    #[test]
    fn paced_departures_are_spaced_by_payload_over_rate() {
        let mut tp = CcView::new(1448, 0);
        tp.pacing_needed = true;
        tp.pacing_rate = 1_448_000; // B/s: one 1448-byte segment per ms
        let mut w = 5_000_000;
        // Sent exactly at wstamp: no credit; next departure 1 ms later.
        advance_wstamp(&mut w, 5_000_000, 1448, &tp, 20);
        assert_eq!(w, 6_000_000);
        // Idle for 10 ms: credit caps at half the segment time (0.5 ms).
        advance_wstamp(&mut w, 16_000_000, 1448, &tp, 21);
        assert_eq!(w, 16_500_000);
        // Within the first 10 segments: no spacing.
        let mut w2 = 0;
        advance_wstamp(&mut w2, 7, 1448, &tp, 3);
        assert_eq!(w2, 7);
    }
}
